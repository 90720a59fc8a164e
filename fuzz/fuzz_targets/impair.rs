//! `pcap-replay --impair`: `ImpairSpec` read from any text, then
//! `pcap::Impair` deciding the fate of a stream of datagrams at any
//! deadlines.
//!
//! Input: the spec text up to the first 0xff byte, then one `u16` per
//! datagram, its deadline in ms after the previous one. What is accepted is
//! in range; two runs of one spec decide alike; every fate is consistent
//! (a dropped datagram is not sent, delays stay within the jitter, deadlines
//! never go back, a hold is always released); bursts drop whole runs; a key
//! at 0 % never acts and at 100 % always does. Then the datagrams are sent
//! in the order a replayer sends them, and a receiver's duplicates and
//! reordered, counted from their definitions, equal the counters, and it
//! gets every datagram that was not dropped.
#![no_main]

use std::collections::BTreeSet;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::pcap::{Fate, Impair, ImpairSpec};

fuzz_target!(|data: &[u8]| {
    let (text, rest) = match data.iter().position(|&b| b == 0xff) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(spec) = String::from_utf8_lossy(text).parse::<ImpairSpec>() else { return };
    for p in [spec.loss, spec.dup, spec.reorder] {
        assert!((0.0..=1.0).contains(&p), "{spec:?}");
    }
    if let Some((n, p)) = spec.burst {
        assert!(n >= 1 && (0.0..=1.0).contains(&p), "{spec:?}");
    }
    assert!(spec.jitter <= Duration::from_secs(10), "{spec:?}");

    let dues: Vec<Duration> = rest
        .chunks_exact(2)
        .scan(Duration::ZERO, |t, c| {
            *t += Duration::from_millis(u64::from(u16::from_le_bytes([c[0], c[1]])));
            Some(*t)
        })
        .collect();
    let mut a = Impair::new(spec);
    let mut b = Impair::new(spec);
    let fates: Vec<Fate> = dues.iter().map(|&d| a.offer(d)).collect();
    let again: Vec<Fate> = dues.iter().map(|&d| b.offer(d)).collect();
    assert_eq!(fates, again, "one spec, two runs");

    let mut last_due = Duration::ZERO;
    let mut pending = false;
    for (f, &due) in fates.iter().zip(&dues) {
        if f.dropped {
            assert!(f.copies == 0 && !f.hold && !f.release && f.delay.is_zero(), "{f:?}");
            continue;
        }
        assert!(!f.burst && (f.copies == 1 || f.copies == 2), "{f:?}");
        assert!(f.delay <= spec.jitter, "{f:?} beyond {:?}", spec.jitter);
        assert_eq!(f.due, (due + f.delay).max(last_due), "{f:?}");
        last_due = f.due;
        assert!(!(f.hold && f.release), "{f:?}");
        assert_eq!(f.release, pending, "a release exactly when a datagram is held: {f:?}");
        pending = if f.release { false } else { f.hold };
    }
    assert_eq!(a.holding(), pending);

    let c = a.counters();
    let count = |p: fn(&Fate) -> bool| fates.iter().filter(|f| p(f)).count() as u64;
    assert_eq!(c.dropped, count(|f| f.dropped));
    assert_eq!(c.duplicated, count(|f| f.copies == 2));
    assert_eq!(c.reordered, count(|f| f.release));
    assert_eq!(c.delayed, count(|f| !f.delay.is_zero()));
    assert_eq!(c.seed, spec.seed);

    // 0 % never acts; 100 % always does.
    let no_burst = spec.burst.is_none_or(|(_, p)| p == 0.0);
    if spec.loss == 0.0 && no_burst {
        assert_eq!(c.dropped, 0);
    }
    if spec.loss == 1.0 || spec.burst.is_some_and(|(_, p)| p == 1.0) {
        assert_eq!(c.dropped, fates.len() as u64);
    }
    if spec.dup == 0.0 {
        assert_eq!(c.duplicated, 0);
    }
    if spec.dup == 1.0 {
        assert_eq!(c.duplicated, fates.len() as u64 - c.dropped);
    }
    if spec.reorder == 0.0 {
        assert!(fates.iter().all(|f| !f.hold));
    }
    if spec.jitter.is_zero() {
        assert_eq!(c.delayed, 0);
    }
    // A burst drops runs of n: a run of burst drops is a whole number of
    // bursts, but for the last, which the input may cut short.
    if let Some((n, _)) = spec.burst {
        let mut runs = Vec::new();
        let mut run = 0u64;
        for f in &fates {
            if f.burst {
                run += 1;
            } else if run > 0 {
                runs.push(run);
                run = 0;
            }
        }
        for r in runs {
            assert_eq!(r % u64::from(n), 0, "a burst run of {r} with bursts of {n}");
        }
    }

    // Sent as a replayer sends: a held datagram right after the next one
    // sent, or last.
    let mut wire = Vec::new();
    let mut held = None;
    for (i, f) in fates.iter().enumerate() {
        if f.dropped {
            continue;
        }
        if f.hold {
            held = Some((i, f.copies));
            continue;
        }
        wire.extend(std::iter::repeat_n(i, usize::from(f.copies)));
        if f.release
            && let Some((h, copies)) = held.take()
        {
            wire.extend(std::iter::repeat_n(h, usize::from(copies)));
        }
    }
    if let Some((h, copies)) = held {
        wire.extend(std::iter::repeat_n(h, usize::from(copies)));
    }
    let mut seen = BTreeSet::new();
    let (mut dups, mut late, mut newest) = (0u64, 0u64, None::<usize>);
    for &i in &wire {
        if !seen.insert(i) {
            dups += 1;
        } else if newest.is_some_and(|n| i < n) {
            late += 1;
        }
        newest = newest.max(Some(i));
    }
    assert_eq!(dups, c.duplicated, "duplicates a receiver counts");
    assert_eq!(late, c.reordered, "reordered a receiver counts");
    assert_eq!(seen.len() as u64, fates.len() as u64 - c.dropped, "every datagram not dropped arrives");
});
