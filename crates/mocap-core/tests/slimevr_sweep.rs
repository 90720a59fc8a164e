//! No-panic sweeps over the SlimeVR decoder: every prefix and every byte
//! flip of a handshake, a bundle, the server's answer and a sensor
//! acknowledgement, then seeded random mutations of the whole capture
//! (200,000 by default; `SLIMEVR_SWEEP_MUTATIONS` overrides). There is no
//! encoder, so no round trip: a pass means no input panicked and what
//! decodes holds together (the stamp alone agrees with the decode's, a
//! bundle's packets are as many as it says).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::protocol::{NoView, Protocol};
use mocap_core::slimevr::{self, Message};
use mocap_testutil::{Rng, sweep};

fn capture() -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads("slimevr/tracker-100hz.pcap")
}

/// Parses and touches everything a tool would. Returns whether it decoded.
fn exercise(bytes: &[u8]) -> bool {
    let _ = Protocol::SlimeVr.sniff(bytes);
    assert_eq!(
        Protocol::SlimeVr.stamp(bytes),
        Protocol::SlimeVr.decode(bytes, &mut NoView)
    );
    let Ok(p) = slimevr::parse(bytes) else {
        return false;
    };
    let _ = (
        p.kind(),
        p.warnings(),
        p.message.name(),
        p.message.is_known(),
    );
    if let Message::Bundle(b) = p.message {
        assert_eq!(b.messages().count(), b.len());
        assert!(b.messages().all(|m| !matches!(m, Message::Bundle(_))));
    }
    true
}

#[test]
fn every_prefix_and_flip() {
    let capture = capture();
    let pick = |len: usize| capture.iter().find(|d| d.len() == len).unwrap();
    // Handshake, answer, bundle, acknowledgement.
    for s in [pick(130), pick(64), pick(62), pick(6)] {
        let decoded = (0..=s.len()).filter(|&n| exercise(&s[..n])).count();
        assert!(decoded >= 1, "{s:?}");
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
    let n = sweep::rounds("SLIMEVR_SWEEP_MUTATIONS", 200_000);
    sweep::decoded(&capture(), Rng(0x0000_6969_51de), n, exercise);
}
