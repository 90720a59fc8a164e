//! No-panic sweeps over the SMF decoder: every prefix and every single-byte
//! flip of every fixture, then seeded random mutations (1,000,000 by default;
//! `SMF_SWEEP_MUTATIONS` overrides). A pass means no input panicked and every
//! accepted input re-encodes consistently.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

mod fixtures;

use fixtures::{TEXTS, all as fixtures};
use mocap_core::smf;
use mocap_core::textcap;
use mocap_testutil::Rng;

/// Parses and touches everything a tool would. Returns whether it decoded.
fn exercise(bytes: &[u8]) -> bool {
    let Ok(p) = smf::parse(bytes) else {
        return false;
    };
    let _ = p.unknown_chunks();
    let repr = smf::PacketRepr::parse(&p);
    match &p.body {
        smf::Body::Frame(f) => assert_eq!(f.bones().count(), f.bone_count()),
        smf::Body::Skeleton(s) => assert_eq!(s.bones().count(), s.bone_count()),
        smf::Body::Sensor(s) => {
            let _ = s.children().count();
        }
    }
    // What we accept, we can write back, and reading that gives the same bytes.
    let again = repr.to_bytes();
    assert_eq!(again.len(), repr.buffer_len());
    let p2 = smf::parse(&again).expect("re-encoded packet decodes");
    assert_eq!(smf::PacketRepr::parse(&p2).to_bytes(), again);
    true
}

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 if at < v.len() => v[at] = rng.next() as u8,
            1 if at < v.len() => v[at] ^= 1 << rng.below(8),
            2 => v.insert(at, rng.next() as u8),
            3 if at < v.len() => {
                v.remove(at);
            }
            4 => v.truncate(at),
            // Lengths are where parsers die: write an extreme or off-by-a-few one.
            5 if at + 4 <= v.len() => {
                let old = u32::from_le_bytes(v[at..at + 4].try_into().unwrap());
                let new = match rng.below(4) {
                    0 => u32::MAX,
                    1 => 0,
                    2 => old.wrapping_add(rng.below(9) as u32).wrapping_sub(4),
                    _ => rng.next() as u32,
                };
                v[at..at + 4].copy_from_slice(&new.to_le_bytes());
            }
            6 if at + 8 <= v.len() => {
                // Duplicate a random slice elsewhere (repeated chunks, splices).
                let len = rng.below(64).min(v.len() - at);
                let piece = v[at..at + len].to_vec();
                let to = rng.below(v.len() + 1);
                v.splice(to..to, piece);
            }
            _ => {}
        }
    }
    v
}

#[test]
fn every_prefix_of_every_fixture() {
    for f in fixtures() {
        for n in 0..=f.len() {
            exercise(&f[..n]);
        }
        // The whole of a good datagram decodes; no strict prefix of one does,
        // because children must fill their parents exactly.
        if exercise(&f) {
            assert!((0..f.len()).all(|n| smf::parse(&f[..n]).is_err()));
        }
    }
}

#[test]
fn every_single_byte_flip_of_every_fixture() {
    for f in fixtures() {
        let mut v = f.clone();
        for i in 0..v.len() {
            v[i] ^= 0xff;
            exercise(&v);
            v[i] ^= 0xff;
        }
    }
}

#[test]
fn seeded_random_mutations() {
    let count: usize = std::env::var("SMF_SWEEP_MUTATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let all = fixtures();
    let mut rng = Rng(0x6d6f_636f_7069_0001);
    let mut accepted = 0usize;
    for _ in 0..count {
        let base = &all[rng.below(all.len())];
        if exercise(&mutate(&mut rng, base)) {
            accepted += 1;
        }
    }
    // The sweep must reach past the first checks, not only feed garbage.
    assert!(
        count < 1000 || accepted > count / 100,
        "only {accepted} of {count} decoded"
    );
    println!("{count} mutations, {accepted} decoded");
}

#[test]
fn text_capture_reader_survives_mutations() {
    let mut rng = Rng(0x7465_7874_0000_0001);
    for _ in 0..20_000 {
        let t = TEXTS[rng.below(TEXTS.len())].as_bytes();
        let m = mutate(&mut rng, &t[..t.len().min(600)]);
        let text = String::from_utf8_lossy(&m);
        for d in textcap::decode_all(&text).into_iter().flatten() {
            exercise(&d.payload);
        }
    }
}
