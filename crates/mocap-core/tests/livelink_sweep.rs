//! No-panic sweeps over the Live Link Face decoder: every prefix and every
//! byte flip of face and no-face packets, then seeded random mutations
//! (1,000,000 by default; `LIVELINK_SWEEP_MUTATIONS` overrides). A pass means
//! no input panicked and every accepted input re-encodes to itself.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::livelink::{self, Body, PacketRepr};
use mocap_testutil::Rng;

fn seeds() -> Vec<Vec<u8>> {
    let face = PacketRepr {
        device: "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F".into(),
        subject: "Someone's iPhone".into(),
        frame: 1_096_414,
        subframe: 0.255_237_58,
        rate: [60, 1],
        values: Some((0..61).map(|i| i as f32 / 61.0).collect()),
    };
    let noface = PacketRepr {
        values: None,
        ..face.clone()
    };
    vec![face.to_bytes(), noface.to_bytes()]
}

/// Parses and touches everything a tool would. Returns whether it decoded.
fn exercise(bytes: &[u8]) -> bool {
    let Ok(p) = livelink::parse(bytes) else {
        return false;
    };
    let _ = (p.device(), p.subject(), p.time.seconds(), p.warnings());
    if let Body::Face(f) = &p.body {
        assert_eq!(f.values().count(), f.count());
        let _ = (f.head(), f.left_eye(), f.right_eye(), f.extra().count());
        assert!(f.blendshapes().count() <= 52);
    }
    // What we accept, we can write back; reading that gives the same bytes
    // (the original may differ only by non-UTF-8 text or trailing bytes).
    let again = PacketRepr::parse(&p).to_bytes();
    let p2 = livelink::parse(&again).expect("re-encoded packet decodes");
    assert_eq!(PacketRepr::parse(&p2).to_bytes(), again);
    if p.warnings().is_empty() {
        assert_eq!(
            again, bytes,
            "a packet without warnings re-encodes to itself"
        );
    }
    true
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if at < v.len() => v[at] = rng.next() as u8,
            1 if at < v.len() => v[at] ^= 1 << rng.below(8),
            2 => v.insert(at, rng.next() as u8),
            3 if at < v.len() => {
                v.remove(at);
            }
            4 => v.truncate(at),
            // Lengths and counts are where parsers die: extreme or off-by-a-few.
            5 if at + 4 <= v.len() => {
                let old = i32::from_be_bytes(v[at..at + 4].try_into().unwrap());
                let new = match rng.below(4) {
                    0 => i32::MAX,
                    1 => -1,
                    2 => old.wrapping_add(rng.below(9) as i32).wrapping_sub(4),
                    _ => rng.next() as i32,
                };
                v[at..at + 4].copy_from_slice(&new.to_be_bytes());
            }
            _ => {}
        }
    }
    v
}

#[test]
fn every_prefix_and_flip() {
    for s in seeds() {
        let decoded = (0..=s.len()).filter(|&n| exercise(&s[..n])).count();
        // The face packet decodes whole and as a no-face packet cut after
        // its frame time; the no-face packet only whole.
        assert!(decoded >= 1);
        for i in 0..s.len() {
            for bit in 0..8 {
                let mut m = s.clone();
                m[i] ^= 1 << bit;
                exercise(&m);
            }
        }
    }
}

#[test]
fn seeded_mutations() {
    let n: usize = std::env::var("LIVELINK_SWEEP_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let seeds = seeds();
    let mut rng = Rng(0x0001_1111_face);
    let (mut ok, mut refused) = (0u64, 0u64);
    for _ in 0..n {
        let base = &seeds[rng.below(seeds.len())];
        if exercise(&mutate(&mut rng, base)) {
            ok += 1;
        } else {
            refused += 1;
        }
    }
    // The mutations reach both sides: packets that decode and ones refused.
    if n >= 1000 {
        assert!(ok > 0 && refused > 0, "ok {ok}, refused {refused}");
    }
}
