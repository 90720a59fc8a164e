//! No-panic sweeps over the OpenSeeFace decoder: every prefix and every
//! byte flip of a one-face and a two-face datagram, then seeded random
//! mutations of the whole capture (200,000 by default;
//! `OPENSEEFACE_SWEEP_MUTATIONS` overrides). There is no encoder, so no
//! round trip: a pass means no input panicked and what decodes holds
//! together (whole faces, every array its length).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::openseeface::{self, FACE_LEN};
use mocap_core::protocol::{NoView, Protocol};
use mocap_testutil::{Rng, sweep};

fn capture() -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads("openseeface/face-32fps.pcap")
}

/// Parses and touches everything a tool would. Returns whether it decoded.
fn exercise(bytes: &[u8]) -> bool {
    let _ = Protocol::OpenSeeFace.sniff(bytes);
    let _ = Protocol::OpenSeeFace.decode(bytes, &mut NoView);
    let _ = Protocol::OpenSeeFace.spec().face.map(|f| f(bytes));
    let Ok(p) = openseeface::parse(bytes) else {
        return false;
    };
    assert_eq!(p.len() * FACE_LEN, bytes.len());
    let _ = p.warnings();
    for f in p.faces() {
        let _ = (f.time(), f.id(), f.resolution(), f.eyes_open(), f.success());
        let _ = (f.fit_error(), f.quaternion(), f.euler(), f.translation());
        assert_eq!(f.confidences().count(), 68);
        assert_eq!(f.landmarks().count(), 68);
        assert_eq!(f.points_3d().count(), 70);
        assert_eq!(f.features().count(), 14);
    }
    true
}

#[test]
fn every_prefix_and_flip() {
    let capture = capture();
    let one = &capture[0];
    let two = &capture[12];
    assert_eq!((one.len(), two.len()), (FACE_LEN, 2 * FACE_LEN));
    for s in [one, two] {
        let decoded = (0..=s.len()).filter(|&n| exercise(&s[..n])).count();
        // Each whole face boundary decodes, nothing in between.
        assert_eq!(decoded, s.len() / FACE_LEN);
        for i in 0..s.len() {
            for bit in 0..8 {
                let mut m = s.clone();
                m[i] ^= 1 << bit;
                // Every length is still whole faces: a flip never refuses.
                assert!(exercise(&m));
            }
        }
    }
}

#[test]
fn seeded_mutations() {
    let n = sweep::rounds("OPENSEEFACE_SWEEP_MUTATIONS", 200_000);
    sweep::decoded(&capture(), Rng(0x0001_1573_face), n, exercise);
}
