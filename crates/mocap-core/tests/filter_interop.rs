//! Conformance: our scalar 1€ filter against the paper authors' reference
//! implementation (PyPI `OneEuroFilter`), on a noisy signal with jittered
//! timestamps and a few parameter sets, to 1e-9. Needs python3 with
//! OneEuroFilter (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::io::Write as _;
use std::process::{Command, Stdio};

use mocap_core::filter::{Params, Scalar};
use mocap_testutil::Rng;

#[test]
#[ignore = "needs python3 + OneEuroFilter: scripts/test-all.sh"]
fn scalar_matches_the_reference_implementation() {
    let mut rng = Rng(17);
    let mut unit = || (rng.next() % 1_000_000) as f64 / 1_000_000.0 - 0.5;
    // Timestamps from 1 s (the reference treats a timestamp of 0 as absent),
    // at about 60 Hz with jitter; a still stretch, a sweep, a step.
    let mut t = 1.0;
    let mut samples = Vec::new();
    for k in 0..600 {
        t += (1.0 + 0.3 * unit()) / 60.0;
        let signal = match k {
            0..=199 => 0.2,
            200..=399 => (f64::from(k) * 0.05).sin() * 3.0,
            _ => 5.0,
        };
        samples.push((t, signal + 0.05 * unit()));
    }
    let sets = [
        Params {
            min_cutoff: 1.0,
            beta: 0.0,
            dcutoff: 1.0,
        },
        Params::ROTATION,
        Params {
            min_cutoff: 0.3,
            beta: 0.7,
            dcutoff: 2.5,
        },
    ];
    let mut input = String::new();
    for p in sets {
        input.push_str(&format!("{} {} {}\n", p.min_cutoff, p.beta, p.dcutoff));
    }
    input.push_str("--\n");
    for (t, x) in &samples {
        input.push_str(&format!("{t:?} {x:?}\n"));
    }
    let script = "\
import sys
from OneEuroFilter import OneEuroFilter
text = sys.stdin.read().split('--\\n')
sets = [tuple(map(float, l.split())) for l in text[0].splitlines()]
samples = [tuple(map(float, l.split())) for l in text[1].splitlines()]
for mc, beta, dc in sets:
    f = OneEuroFilter(60.0, mincutoff=mc, beta=beta, dcutoff=dc)
    print(' '.join(repr(f(x, t)) for t, x in samples))
";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "is OneEuroFilter installed? (pip install OneEuroFilter)"
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), sets.len());
    for (p, line) in sets.iter().zip(lines) {
        let theirs: Vec<f64> = line.split(' ').map(|v| v.parse().unwrap()).collect();
        assert_eq!(theirs.len(), samples.len());
        let mut f = Scalar::new(*p, 60.0);
        for (k, ((t, x), want)) in samples.iter().zip(theirs).enumerate() {
            let got = f.filter(*x, Some(*t));
            assert!(
                (got - want).abs() <= 1e-9,
                "{p:?} sample {k}: {got} vs {want}"
            );
        }
    }
}
