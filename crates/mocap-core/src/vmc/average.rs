//! Averaging rotations, positions and weights from several senders.
//!
//! A quaternion and its negation are the same rotation, so averaging
//! components is wrong: two nearly equal poses with opposite signs cancel to
//! nonsense, and the sum is not unit length. Markley et al. ("Averaging
//! Quaternions", 2007) take the eigenvector of the largest eigenvalue of
//! M = Σ wᵢ qᵢ qᵢᵀ, which needs no sign alignment and minimises the weighted
//! squared distance between rotation matrices. The hemisphere-aligned,
//! normalised weighted sum (nlerp) is a cheap first-order approximation for
//! nearby samples. Pure: no clocks, no sockets.

/// How rotations are averaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Markley's eigenvector method (default).
    Markley,
    /// Signs aligned to a reference, weighted sum, normalised.
    Nlerp,
    /// Per-component weighted mean, as seed 003 does (for comparison only: wrong).
    Naive,
}

type Q = [f64; 4];

use crate::quat::{checked_normalise as normalise, wide as to64};

fn dot(a: &Q, b: &Q) -> f64 {
    crate::quat::dot(*a, *b)
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "f64 accumulation, f32 on the wire"
)]
fn to32(q: Q) -> [f32; 4] {
    q.map(|v| v as f32)
}

/// The weighted average of unit quaternions `(x, y, z, w)`.
///
/// `previous` (the last output for this bone) sets the output's sign, so a
/// stream does not flip between q and −q, and is the reference for nlerp.
/// Samples with non-positive or non-finite weight, or not finite, are
/// ignored; `None` when nothing usable remains. The result is unit length.
pub fn average_rotation(
    samples: &[([f32; 4], f64)],
    method: Method,
    previous: Option<[f32; 4]>,
) -> Option<[f32; 4]> {
    let usable: Vec<(Q, f64)> = samples
        .iter()
        .filter(|(q, w)| w.is_finite() && *w > 0.0 && q.iter().all(|v| v.is_finite()))
        .filter_map(|(q, w)| normalise(to64(*q)).map(|q| (q, *w)))
        .collect();
    let first = usable.first()?.0;
    let reference = previous.and_then(|p| normalise(to64(p))).unwrap_or(first);
    let out = match method {
        Method::Naive => {
            let mut s = [0.0; 4];
            for (q, w) in &usable {
                for (acc, v) in s.iter_mut().zip(q) {
                    *acc += w * v;
                }
            }
            normalise(s)?
        }
        Method::Nlerp => nlerp(&usable, &reference)?,
        Method::Markley => markley(&usable, &reference)?,
    };
    // Keep the sign continuous with the previous output (naive keeps its own).
    let out = if method != Method::Naive && dot(&out, &reference) < 0.0 {
        out.map(|v| -v)
    } else {
        out
    };
    Some(to32(out))
}

fn nlerp(samples: &[(Q, f64)], reference: &Q) -> Option<Q> {
    let mut s = [0.0; 4];
    for (q, w) in samples {
        let sign = if dot(q, reference) < 0.0 { -1.0 } else { 1.0 };
        for (acc, v) in s.iter_mut().zip(q) {
            *acc += sign * w * v;
        }
    }
    normalise(s).or(Some(*reference))
}

/// Dominant eigenvector of M = Σ w q qᵀ by power iteration, started from the
/// nlerp estimate (already close, so it converges in a few steps). M is
/// positive semi-definite, so the dominant eigenvalue is the largest one.
fn markley(samples: &[(Q, f64)], reference: &Q) -> Option<Q> {
    let mut m = [[0.0f64; 4]; 4];
    for (q, w) in samples {
        for (row, qi) in m.iter_mut().zip(q) {
            for (cell, qj) in row.iter_mut().zip(q) {
                *cell += w * qi * qj;
            }
        }
    }
    let mut v = nlerp(samples, reference)?;
    for _ in 0..64 {
        let mut next = [0.0; 4];
        for (out, row) in next.iter_mut().zip(&m) {
            *out = dot(row, &v);
        }
        let Some(next) = normalise(next) else { break };
        let change = 1.0 - dot(&next, &v).abs();
        v = next;
        if change < 1e-15 {
            break;
        }
    }
    Some(v)
}

/// The weighted mean of vectors (positions, or blendshape weights as `[v]`).
pub fn average_linear<const N: usize>(samples: &[([f32; N], f64)]) -> Option<[f32; N]> {
    let mut s = [0.0f64; N];
    let mut total = 0.0;
    for (v, w) in samples {
        if !(w.is_finite() && *w > 0.0 && v.iter().all(|x| x.is_finite())) {
            continue;
        }
        for (acc, x) in s.iter_mut().zip(v) {
            *acc += w * f64::from(*x);
        }
        total += w;
    }
    #[expect(
        clippy::cast_possible_truncation,
        reason = "f64 accumulation, f32 on the wire"
    )]
    (total > 0.0).then(|| s.map(|x| (x / total) as f32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn axis_angle(axis: [f64; 3], deg: f64) -> [f32; 4] {
        let h = deg.to_radians() / 2.0;
        let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
        to32([
            axis[0] / n * h.sin(),
            axis[1] / n * h.sin(),
            axis[2] / n * h.sin(),
            h.cos(),
        ])
    }

    fn same_rotation(a: [f32; 4], b: [f32; 4]) -> bool {
        dot(&to64(a), &to64(b)).abs() > 1.0 - 1e-6
    }

    fn unit(q: [f32; 4]) -> bool {
        (dot(&to64(q), &to64(q)) - 1.0).abs() < 1e-6
    }

    const ALL: [Method; 3] = [Method::Markley, Method::Nlerp, Method::Naive];

    #[test]
    fn identical_inputs_give_the_same_rotation() {
        let q = axis_angle([0.3, 1.0, -0.2], 40.0);
        for m in ALL {
            let out = average_rotation(&[(q, 1.0), (q, 2.0), (q, 0.5)], m, None).unwrap();
            assert!(same_rotation(out, q), "{m:?}");
            assert!(unit(out));
        }
    }

    #[test]
    fn q_and_minus_q_are_one_rotation_except_for_the_naive_mean() {
        let q = axis_angle([0.0, 1.0, 0.0], 30.0);
        let neg = q.map(|v| -v);
        for m in [Method::Markley, Method::Nlerp] {
            let out = average_rotation(&[(q, 1.0), (neg, 1.0)], m, None).unwrap();
            assert!(same_rotation(out, q), "{m:?}");
        }
        // Components cancel exactly: nothing meaningful comes out.
        assert_eq!(
            average_rotation(&[(q, 1.0), (neg, 1.0)], Method::Naive, None),
            None
        );
        // With unequal weights the naive mean is the right rotation only by luck of signs.
        let near = axis_angle([0.0, 1.0, 0.0], 32.0).map(|v| -v);
        let naive = average_rotation(&[(q, 1.0), (near, 1.1)], Method::Naive, None).unwrap();
        let good = average_rotation(&[(q, 1.0), (near, 1.1)], Method::Markley, None).unwrap();
        assert!(same_rotation(good, axis_angle([0.0, 1.0, 0.0], 31.0476)));
        assert!(!same_rotation(naive, good));
    }

    #[test]
    fn plus_and_minus_theta_average_to_identity() {
        for m in [Method::Markley, Method::Nlerp] {
            let out = average_rotation(
                &[
                    (axis_angle([1.0, 0.0, 0.0], 50.0), 1.0),
                    (axis_angle([1.0, 0.0, 0.0], -50.0), 1.0),
                ],
                m,
                None,
            )
            .unwrap();
            assert!(same_rotation(out, [0.0, 0.0, 0.0, 1.0]), "{m:?} {out:?}");
        }
    }

    #[test]
    fn weights_pull_towards_the_heavier_sample() {
        let a = axis_angle([0.0, 0.0, 1.0], 0.0);
        let b = axis_angle([0.0, 0.0, 1.0], 60.0);
        let out = average_rotation(&[(a, 1.0), (b, 2.0)], Method::Markley, None).unwrap();
        // About one axis, the Markley mean of 0 and 60 degrees at 1:2 is
        // atan2(2 sin 60, 1 + 2 cos 60) = 40.89 degrees.
        let want = (2.0 * 60f64.to_radians().sin())
            .atan2(1.0 + 2.0 * 60f64.to_radians().cos())
            .to_degrees();
        assert!(
            same_rotation(out, axis_angle([0.0, 0.0, 1.0], want)),
            "{out:?} vs {want}"
        );
    }

    #[test]
    fn three_sources_by_hand() {
        // Three rotations about Y by 10, 20, 60 degrees, equal weights. About
        // one axis the Markley mean is the angle of Σ (cos θᵢ, sin θᵢ):
        // atan2(sin10+sin20+sin60, cos10+cos20+cos60) = 29.68 degrees.
        let qs: Vec<_> = [10.0, 20.0, 60.0]
            .iter()
            .map(|d| (axis_angle([0.0, 1.0, 0.0], *d), 1.0))
            .collect();
        let (s, c) = [10f64, 20.0, 60.0].iter().fold((0.0, 0.0), |(s, c), d| {
            (s + d.to_radians().sin(), c + d.to_radians().cos())
        });
        let want = s.atan2(c).to_degrees();
        assert!((want - 29.68).abs() < 0.01);
        let out = average_rotation(&qs, Method::Markley, None).unwrap();
        assert!(
            same_rotation(out, axis_angle([0.0, 1.0, 0.0], want)),
            "{out:?}"
        );
        let nl = average_rotation(&qs, Method::Nlerp, None).unwrap();
        assert!(unit(nl));
    }

    #[test]
    fn sign_follows_the_previous_output() {
        let q = axis_angle([1.0, 1.0, 0.0], 20.0);
        let prev = q.map(|v| -v);
        for m in [Method::Markley, Method::Nlerp] {
            let out = average_rotation(&[(q, 1.0)], m, Some(prev)).unwrap();
            assert!(
                out.iter().zip(&prev).all(|(a, b)| (a - b).abs() < 1e-6),
                "{m:?}"
            );
        }
    }

    #[test]
    fn unusable_samples_are_ignored() {
        let q = axis_angle([0.0, 1.0, 0.0], 10.0);
        assert_eq!(average_rotation(&[], Method::Markley, None), None);
        assert_eq!(
            average_rotation(&[([0.0; 4], 1.0)], Method::Markley, None),
            None
        );
        let out = average_rotation(
            &[
                (q, 1.0),
                ([f32::NAN, 0.0, 0.0, 1.0], 1.0),
                (q.map(|v| -v), 0.0),
                (q, f64::NAN),
            ],
            Method::Markley,
            None,
        )
        .unwrap();
        assert!(same_rotation(out, q));
    }

    #[test]
    fn linear_means() {
        assert_eq!(
            average_linear(&[([0.0, 2.0, 4.0], 1.0), ([2.0, 2.0, 0.0], 3.0)]),
            Some([1.5, 2.0, 1.0])
        );
        assert_eq!(average_linear(&[([0.5], 1.0), ([1.0], 1.0)]), Some([0.75]));
        assert_eq!(average_linear::<1>(&[]), None);
    }

    #[test]
    fn always_unit_length_on_random_inputs() {
        let mut s = 0x1234_5678_u64;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 20001) as f32 / 10000.0 - 1.0
        };
        for _ in 0..2000 {
            let samples: Vec<([f32; 4], f64)> = (0..3)
                .map(|_| ([rnd(), rnd(), rnd(), rnd()], f64::from(rnd().abs()) + 0.1))
                .collect();
            for m in ALL {
                if let Some(q) = average_rotation(&samples, m, None) {
                    assert!(unit(q), "{m:?} {q:?}");
                }
            }
        }
    }
}
