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
use mocap_testutil::{Rng, sweep};

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
    assert_eq!(repr.to_bytes().len(), repr.buffer_len());
    // What we accept, we can write back, and reading that gives the same bytes.
    sweep::round_trip(
        bytes,
        |b| smf::parse(b).map(|p| smf::PacketRepr::parse(&p)),
        smf::PacketRepr::to_bytes,
    );
    true
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
    let count = sweep::rounds("SMF_SWEEP_MUTATIONS", 1_000_000);
    let mut accepted = 0usize;
    sweep::mutants(&fixtures(), Rng(0x6d6f_636f_7069_0001), count, |m| {
        accepted += usize::from(exercise(m));
    });
    // The sweep must reach past the first checks, not only feed garbage.
    assert!(
        count < 1000 || accepted > count / 100,
        "only {accepted} of {count} decoded"
    );
    println!("{count} mutations, {accepted} decoded");
}

#[test]
fn text_capture_reader_survives_mutations() {
    let heads: Vec<&[u8]> = TEXTS
        .iter()
        .map(|t| &t.as_bytes()[..t.len().min(600)])
        .collect();
    sweep::mutants(&heads, Rng(0x7465_7874_0000_0001), 20_000, |m| {
        let text = String::from_utf8_lossy(m);
        for d in textcap::decode_all(&text).into_iter().flatten() {
            exercise(&d.payload);
        }
    });
}
