//! Stream health (`health::Health`): loss, duplicates, reordering, restarts,
//! rates and jitter from frame numbers and clocks.
//!
//! The first byte picks the mode. In the model mode, frame numbers stay
//! within 600 of the first one (no jump is large enough for a restart; a
//! run of `RESYNC_RUN` consecutive numbers behind the newest is one, and
//! ends the comparison, as random numbers rarely make one) and the
//! counters are checked against a model written here from the definitions:
//! a frame number seen before is a duplicate; a new one below the newest is
//! reordered; lost is the numbers between the first and the newest never
//! received. In the free mode frame numbers and clocks are any bits and
//! arrivals any `Duration`: the counters must agree with the events `frame` returned, and
//! every rate is finite and not negative. In the clock mode (frames that
//! carry only a clock, `Health::clocked`) clocks are any `Duration`: the
//! counters agree with the events, lost never exceeds what the gaps added,
//! and every rate is finite and not negative.
#![no_main]

use std::collections::BTreeSet;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::health::{FrameEvent, Health, UNNUMBERED, sender_clock};

const BASE: u32 = 1_000_000;

fn model(data: &[u8]) {
    let mut h = Health::new();
    let mut seen = BTreeSet::new();
    let (mut first, mut newest) = (None::<u32>, 0u32);
    let (mut dups, mut late) = (0u64, 0u64);
    for (i, c) in data.chunks_exact(2).enumerate() {
        let fnum = BASE + u32::from(u16::from_le_bytes([c[0], c[1]])) % 600;
        let t = i as f64 / 60.0;
        if let FrameEvent::Resync { .. } = h.frame(fnum, sender_clock(t), Some(Duration::from_secs_f64(t + 0.01))) {
            return;
        }
        if !seen.insert(fnum) {
            dups += 1;
        } else if first.is_some() && fnum < newest {
            late += 1;
        }
        first.get_or_insert(fnum);
        newest = newest.max(fnum);
    }
    let r = h.report();
    assert_eq!(r.frames, (data.len() / 2) as u64);
    assert_eq!(r.restarts, 0);
    assert_eq!(r.duplicates, dups, "duplicates");
    assert_eq!(r.reordered, late, "reordered");
    if let Some(first) = first {
        let got = seen.range(first..=newest).count() as u64;
        assert_eq!(r.lost, u64::from(newest - first) + 1 - got, "lost");
    }
}

fn free(data: &[u8]) {
    let mut h = Health::new();
    let (mut dups, mut late, mut restarts, mut frames) = (0u64, 0u64, 0u64, 0u64);
    for c in data.chunks_exact(20) {
        let fnum = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let clock = f64::from_le_bytes(c[4..12].try_into().unwrap());
        // Any arrival a Duration can hold: seconds and nanoseconds as bits.
        let secs = u64::from_le_bytes(c[12..20].try_into().unwrap());
        let at = Duration::new(secs, u32::from_le_bytes(c[0..4].try_into().unwrap()) % 1_000_000_000);
        let arrival = (c[0] & 1 == 0).then_some(at);
        match h.frame(fnum, sender_clock(clock), arrival) {
            FrameEvent::Duplicate => dups += 1,
            FrameEvent::Late => late += 1,
            FrameEvent::Restart => restarts += 1,
            FrameEvent::Resync { duplicates, late: l } => {
                restarts += 1;
                dups -= u64::from(duplicates);
                late -= u64::from(l);
            }
            FrameEvent::Unnumbered => assert_eq!(fnum, UNNUMBERED),
            _ => {}
        }
        frames += 1;
        let r = h.report();
        assert_eq!((r.frames, r.duplicates, r.reordered, r.restarts), (frames, dups, late, restarts));
        for v in [r.fps, r.sender_fps, r.jitter_ms].into_iter().flatten() {
            assert!(v.is_finite() && v >= 0.0, "a rate of {v}");
        }
    }
}

fn clocked(data: &[u8]) {
    let mut h = Health::new();
    let (mut dups, mut late, mut restarts, mut frames, mut added) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for c in data.chunks_exact(16) {
        let clock = Duration::new(
            u64::from_le_bytes(c[0..8].try_into().unwrap()) >> (c[8] % 64),
            u32::from_le_bytes(c[8..12].try_into().unwrap()) % 1_000_000_000,
        );
        let at = Duration::from_nanos(u64::from(u32::from_le_bytes(c[12..16].try_into().unwrap())));
        match h.clocked(clock, (c[15] & 1 == 0).then_some(at)) {
            FrameEvent::Duplicate => dups += 1,
            FrameEvent::Late => late += 1,
            FrameEvent::Restart => restarts += 1,
            FrameEvent::InOrder { lost } => added += u64::from(lost),
            _ => {}
        }
        frames += 1;
        let r = h.report();
        assert_eq!((r.frames, r.duplicates, r.reordered, r.restarts), (frames, dups, late, restarts));
        assert!(r.lost <= added, "lost {} of {added} added", r.lost);
        for v in [r.fps, r.sender_fps, r.jitter_ms].into_iter().flatten() {
            assert!(v.is_finite() && v >= 0.0, "a rate of {v}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    match data.split_first() {
        Some((m, rest)) if m % 3 == 0 => model(rest),
        Some((m, rest)) if m % 3 == 1 => free(rest),
        Some((_, rest)) => clocked(rest),
        None => {}
    }
});
