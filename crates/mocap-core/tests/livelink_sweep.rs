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
use mocap_testutil::{Rng, sweep};

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
    let again = sweep::round_trip(
        bytes,
        |b| livelink::parse(b).map(|p| PacketRepr::parse(&p)),
        PacketRepr::to_bytes,
    )
    .expect("it decoded once");
    if p.warnings().is_empty() {
        assert_eq!(
            again, bytes,
            "a packet without warnings re-encodes to itself"
        );
    }
    true
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
    let n = sweep::rounds("LIVELINK_SWEEP_MUTATIONS", 1_000_000);
    // The mutations reach both sides: packets that decode and ones refused.
    sweep::decoded(&seeds(), Rng(0x0001_1111_face), n, exercise);
}
