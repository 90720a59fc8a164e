//! Mutation sweeps over real datagrams: the no-panic and round-trip tests of
//! every decoder share this loop and one mutator ([`Rng::mutate`]), so what
//! makes one sweep stronger makes them all stronger.

use std::fmt::Debug;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::Rng;

/// Edits per mutant, at most: more and a mutant is mostly noise the first
/// check refuses; fewer and two faults never meet.
pub const EDITS: u64 = 4;

/// `default`, or the count in the environment variable `var`, for a longer
/// sweep by hand (`SMF_SWEEP_MUTATIONS=100000000 cargo test …`).
#[must_use]
pub fn rounds(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Hands `each` `rounds` mutants: each a copy of one of `seeds`, picked at
/// random, with one to [`EDITS`] edits of [`Rng::mutate`]. The same `rng`
/// gives the same mutants, and a panic in `each` first prints the round and
/// the mutant's bytes, so a failure can be replayed alone.
///
/// # Panics
/// When `seeds` is empty, or when `each` panics.
pub fn mutants<S: AsRef<[u8]>>(
    seeds: &[S],
    mut rng: Rng,
    rounds: usize,
    mut each: impl FnMut(&[u8]),
) {
    assert!(!seeds.is_empty(), "a sweep needs a seed");
    for round in 0..rounds {
        let mut d = seeds[rng.below(seeds.len())].as_ref().to_vec();
        rng.mutate(&mut d, EDITS);
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| each(&d))) {
            eprintln!(
                "sweep round {round} panicked on {} bytes: {d:02x?}",
                d.len()
            );
            resume_unwind(panic);
        }
    }
}

/// [`mutants`] through `decode`, which says whether the mutant decoded:
/// how many did and how many were refused, and a check (past 1000 rounds)
/// that the mutations reached both sides.
///
/// # Panics
/// As [`mutants`]; or when every mutant decoded, or none did.
pub fn decoded<S: AsRef<[u8]>>(
    seeds: &[S],
    rng: Rng,
    rounds: usize,
    mut decode: impl FnMut(&[u8]) -> bool,
) -> (u64, u64) {
    let (mut ok, mut refused) = (0u64, 0u64);
    mutants(seeds, rng, rounds, |m| {
        if decode(m) {
            ok += 1;
        } else {
            refused += 1;
        }
    });
    if rounds >= 1000 {
        assert!(ok > 0 && refused > 0, "ok {ok}, refused {refused}");
    }
    (ok, refused)
}

/// What a decoder accepts, its encoder writes, and those bytes decode and
/// encode to themselves: `bytes` → `decode` → `encode` → `decode` →
/// `encode` gives the first encoding again. Encodings are compared, not
/// decoded values, because a NaN never equals itself. Returns the first
/// encoding, or `None` when `bytes` does not decode.
///
/// # Panics
/// When the encoding does not decode, or encodes to other bytes.
pub fn round_trip<R, E: Debug>(
    bytes: &[u8],
    decode: impl Fn(&[u8]) -> Result<R, E>,
    encode: impl Fn(&R) -> Vec<u8>,
) -> Option<Vec<u8>> {
    let first = encode(&decode(bytes).ok()?);
    let again = decode(&first)
        .unwrap_or_else(|e| panic!("the encoding of {bytes:02x?} does not decode: {e:?}"));
    assert_eq!(
        encode(&again),
        first,
        "the encoding of {bytes:02x?} encodes to other bytes"
    );
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_rng_gives_the_same_mutants_and_they_differ_from_the_seeds() {
        let seeds = [b"#bundle\0 sixteen bytes".to_vec(), vec![7; 40]];
        let run = || {
            let mut all = Vec::new();
            mutants(&seeds, Rng(5), 2000, |d| all.push(d.to_vec()));
            all
        };
        let all = run();
        assert_eq!(all.len(), 2000);
        assert_eq!(all, run());
        let changed = all.iter().filter(|d| !seeds.contains(d)).count();
        assert!(changed > 1800, "{changed} of 2000 differ from a seed");
        // Every kind of edit shows: shorter, longer, the same length.
        assert!(all.iter().any(|d| d.len() < 22) && all.iter().any(|d| d.len() > 40));
        assert!(all.iter().any(|d| d.len() == 40 && d != &seeds[1]));
    }

    #[test]
    #[should_panic(expected = "boom")]
    fn a_panic_in_the_check_fails_the_sweep() {
        mutants(&[[1u8, 2, 3]], Rng(1), 100, |d| {
            assert!(d.len() < 3, "boom")
        });
    }

    /// A toy codec: a length byte and that many bytes; trailing bytes are
    /// ignored, so the first encoding may differ from the input.
    fn decode(b: &[u8]) -> Result<Vec<u8>, &'static str> {
        let (&n, rest) = b.split_first().ok_or("empty")?;
        rest.get(..usize::from(n))
            .map(<[u8]>::to_vec)
            .ok_or("short")
    }

    #[test]
    fn round_trip_holds_for_a_true_codec_and_fails_for_a_lossy_one() {
        let encode = |v: &Vec<u8>| [&[v.len() as u8][..], v].concat();
        assert_eq!(
            round_trip(&[2, 9, 9, 5], decode, encode),
            Some(vec![2, 9, 9])
        );
        assert_eq!(round_trip(&[4, 1], decode, encode), None);
        // An encoder that drops a byte every time it writes never settles.
        let lossy = |v: &Vec<u8>| [&[v.len() as u8 - 1][..], v].concat();
        let r = catch_unwind(|| round_trip(&[2, 9, 9], decode, lossy));
        assert!(r.is_err());
    }
}
