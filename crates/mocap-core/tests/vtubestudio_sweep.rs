//! No-panic sweeps over the VTube Studio decoder: every prefix and every
//! byte flip of a request and of a frame of tracking data, then seeded
//! random mutations of the whole capture (50,000 by default: each is read five times;
//! `VTUBESTUDIO_SWEEP_MUTATIONS` overrides). Only the request has an
//! encoder: a request that decodes with values the encoder takes is written
//! again and reads back the same.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::time::Duration;

use mocap_core::protocol::{NoView, Protocol};
use mocap_core::vtubestudio::{self, MAX_BLENDSHAPES, Packet};
use mocap_testutil::{Rng, sweep};

fn capture() -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads("vtubestudio/phone-60fps.pcap")
}

/// Parses and touches everything a tool would. Returns whether it decoded.
fn exercise(bytes: &[u8]) -> bool {
    let _ = Protocol::VTubeStudio.sniff(bytes);
    let stamp = Protocol::VTubeStudio.decode(bytes, &mut NoView);
    assert_eq!(stamp, Protocol::VTubeStudio.stamp(bytes));
    let _ = Protocol::VTubeStudio.spec().face.map(|f| f(bytes));
    let Ok(p) = vtubestudio::parse(bytes) else {
        return false;
    };
    for w in p.warnings() {
        assert!(w.offset <= bytes.len(), "{w}");
        let _ = w.to_string();
    }
    match p {
        Packet::Data(t) => assert!(t.blendshapes.len() <= MAX_BLENDSHAPES),
        Packet::Request(r) => {
            let Some(time) = r.time.and_then(|t| Duration::try_from_secs_f64(t).ok()) else {
                return true;
            };
            let name = r.sent_by.as_deref().unwrap_or("");
            if let Ok(again) = vtubestudio::request(time, name, &r.ports) {
                let Ok(Packet::Request(back)) = vtubestudio::parse(&again) else {
                    panic!("{}", String::from_utf8_lossy(&again));
                };
                assert_eq!((back.sent_by, back.ports), (r.sent_by, r.ports));
                assert_eq!(back.time, Some(time.as_secs_f64()));
                assert_eq!(back.warnings, []);
            }
        }
    }
    true
}

#[test]
fn every_prefix_and_flip() {
    let capture = capture();
    let request = &capture[0];
    let data = &capture[1];
    assert!(matches!(
        vtubestudio::parse(request),
        Ok(Packet::Request(_))
    ));
    assert!(matches!(vtubestudio::parse(data), Ok(Packet::Data(_))));
    for s in [request, data] {
        // Only the whole text (and the text less nothing) decodes.
        let decoded = (0..=s.len()).filter(|&n| exercise(&s[..n])).count();
        assert_eq!(decoded, 1);
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
    let n = sweep::rounds("VTUBESTUDIO_SWEEP_MUTATIONS", 50_000);
    sweep::decoded(&capture(), Rng(0x0002_1412_f00d), n, exercise);
}
