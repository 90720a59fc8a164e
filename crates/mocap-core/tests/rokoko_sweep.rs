//! No-panic sweeps over the Rokoko Studio decoder: every prefix and every
//! byte flip of a plain and of an LZ4 datagram, then seeded random
//! mutations of the whole capture (20,000 by default: each is read five
//! times; `ROKOKO_SWEEP_MUTATIONS` overrides). Decode only: no encoder, so
//! no round trip.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::protocol::{NoView, Protocol};
use mocap_core::rokoko::{self, MAX_ACTORS, MAX_FACE, MAX_PROPS, MAX_SEGMENTS};
use mocap_testutil::{Rng, sweep};

fn capture() -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads("rokoko/studio-60fps.pcap")
}

/// Parses and touches everything a tool would. Returns whether it decoded.
fn exercise(bytes: &[u8]) -> bool {
    let p = Protocol::Rokoko;
    let _ = p.sniff(bytes);
    let stamp = p.decode(bytes, &mut NoView);
    assert_eq!(stamp, p.stamp(bytes));
    let _ = p.spec().face.map(|f| f(bytes));
    let _ = p.spec().body.map(|b| b().datagram(bytes));
    let Ok(f) = rokoko::parse(bytes) else {
        return false;
    };
    for w in &f.warnings {
        let _ = w.to_string();
    }
    assert!(f.actors.len() <= MAX_ACTORS && f.props.len() <= MAX_PROPS);
    for a in &f.actors {
        assert!(a.body.len() <= MAX_SEGMENTS && a.face.len() <= MAX_FACE);
        if let Some(pose) = rokoko::pose(a) {
            for (_, b) in pose.named() {
                assert!(b.rot.iter().chain(&b.pos).all(|v| v.is_finite()), "{b:?}");
            }
        }
    }
    true
}

#[test]
fn every_prefix_and_flip() {
    let capture = capture();
    let plain = &capture[0];
    let packed = &capture[100];
    assert!(!rokoko::parse(plain).unwrap().compressed);
    assert!(rokoko::parse(packed).unwrap().compressed);
    // Only the whole text decodes (a JSON object ends at its last brace).
    let decoded = (0..=plain.len()).filter(|&n| exercise(&plain[..n])).count();
    assert_eq!(decoded, 1);
    // An LZ4 frame decodes from where its last block ends (its end mark
    // and checksum are optional to the decoder).
    let decoded = (0..=packed.len())
        .filter(|&n| exercise(&packed[..n]))
        .count();
    assert!((1..=5).contains(&decoded), "{decoded}");
    for s in [plain, packed] {
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
    let n = sweep::rounds("ROKOKO_SWEEP_MUTATIONS", 20_000);
    sweep::decoded(&capture(), Rng(0x0001_4043_f00d), n, exercise);
}
