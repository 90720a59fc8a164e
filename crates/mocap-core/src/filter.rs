//! The 1€ filter (Casiez, Roussel & Vogel, "1€ Filter: A Simple Speed-based
//! Low-pass Filter for Noisy Input in Interactive Systems", CHI 2012): a
//! first-order low-pass whose cutoff rises with the signal's speed, so a
//! still pose is smooth and a fast move keeps up. Pure: samples and their
//! timestamps in, filtered values out; no clock is read.
//!
//! ```
//! use mocap_core::filter::{Params, Scalar};
//!
//! let mut f = Scalar::new(Params::BLEND, 60.0);
//! let noisy = [0.0, 0.02, -0.01, 0.015, -0.02, 0.01];
//! let out: Vec<f64> = noisy.iter().map(|&x| f.filter(x, None)).collect();
//! // Held still, jitter is damped.
//! assert!(out[1..].iter().all(|y| y.abs() < 0.02));
//! ```
//!
//! Per sample, with Te the sampling period (re-estimated from timestamps):
//! `alpha(fc) = 1 / (1 + tau / Te)`, `tau = 1 / (2π fc)`; the speed
//! `dx = (x − x̂_prev) / Te` is low-passed at `dcutoff`, the cutoff is
//! `fc = min_cutoff + beta·|d̂x|`, and `x̂ = x̂_prev + alpha(fc)·(x − x̂_prev)`.
//! The first sample passes through. Like the authors' current reference
//! implementation (PyPI `OneEuroFilter`), the speed is taken against the last
//! *filtered* value, and a timestamp that does not advance keeps the previous
//! period.
//!
//! No sample leaves a filter stuck. A sample that is not finite is dropped
//! (the last output repeats), and a period so short that its rate is not
//! finite keeps the previous rate. A jump so large, or so fast, that the
//! speed overflows restarts the filter at the new sample, as if it were the
//! first. Before this rule, an infinite speed turned into a NaN that stayed
//! in the state for good, and the filter froze at its last output.
//!
//! [`Rotation`] applies the same rule on the unit sphere: the speed is the
//! angle between the incoming rotation and the last output, divided by Te,
//! the step is a slerp from the last output, and each input is first moved
//! into the last output's hemisphere, so `q` and `−q` filter alike and the
//! output never flips sign. [`Vector`] drives one cutoff from the length of a
//! position's velocity.

use std::f64::consts::PI;

use crate::quat::{dot, normalise, slerp};

/// The three knobs of a 1€ filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Cutoff at rest, Hz: lower is smoother (and laggier) when still.
    pub min_cutoff: f64,
    /// How much the cutoff rises per unit of speed (per rad/s for
    /// rotations, per m/s for positions, per unit/s for weights).
    pub beta: f64,
    /// Cutoff of the speed estimate, Hz.
    pub dcutoff: f64,
}

impl Params {
    /// For 60 fps bone rotations: at rest (0.5° of noise) fc ≈ 2 Hz, which
    /// cuts frame-to-frame jitter about 7×; at 90°/s fc ≥ 5.2 Hz, a lag
    /// under two frames (a first-order low-pass lags 1/(2π fc) on a ramp).
    pub const ROTATION: Self = Self {
        min_cutoff: 0.5,
        beta: 3.0,
        dcutoff: 1.0,
    };
    /// For positions in metres at 60 fps: 1 m/s lifts the cutoff to 5.5 Hz.
    pub const POSITION: Self = Self {
        min_cutoff: 0.5,
        beta: 5.0,
        dcutoff: 1.0,
    };
    /// For blendshape weights (0..1): a jaw closing at 2/s lifts the cutoff
    /// to 11 Hz (under a frame of lag at 60 fps); at rest it stays near 1 Hz.
    pub const BLEND: Self = Self {
        min_cutoff: 1.0,
        beta: 5.0,
        dcutoff: 1.0,
    };
}

/// `[f(a0, b0), f(a1, b1), …]`, without indexing.
fn zip<const N: usize>(a: [f64; N], b: [f64; N], f: impl Fn(f64, f64) -> f64) -> [f64; N] {
    let mut out = a;
    for (o, b) in out.iter_mut().zip(b) {
        *o = f(*o, b);
    }
    out
}

fn alpha(cutoff: f64, rate: f64) -> f64 {
    let tau = 1.0 / (2.0 * PI * cutoff.max(1e-9));
    let te = 1.0 / rate;
    1.0 / (1.0 + tau / te)
}

/// Sampling rate bookkeeping shared by the variants: the rate given at the
/// start, replaced by 1 / (t − t_prev) whenever a timestamp advances.
#[derive(Clone, Copy, Debug)]
struct Clock {
    rate: f64,
    last: Option<f64>,
}

impl Clock {
    fn new(rate: f64) -> Self {
        Self {
            rate: if rate.is_finite() && rate > 0.0 {
                rate
            } else {
                60.0
            },
            last: None,
        }
    }

    fn tick(&mut self, t: Option<f64>) -> f64 {
        if let Some(t) = t.filter(|t| t.is_finite()) {
            if let Some(last) = self.last
                && t > last
            {
                let rate = 1.0 / (t - last);
                if rate.is_finite() {
                    self.rate = rate;
                }
            }
            self.last = Some(t);
        }
        self.rate
    }
}

/// The scalar 1€ filter.
#[derive(Clone, Copy, Debug)]
pub struct Scalar {
    params: Params,
    clock: Clock,
    x: Option<f64>,
    /// The low-passed speed (0 until a second sample).
    dx: f64,
}

impl Scalar {
    /// A filter expecting samples at `rate` Hz until timestamps say otherwise.
    pub fn new(params: Params, rate: f64) -> Self {
        Self {
            params,
            clock: Clock::new(rate),
            x: None,
            dx: 0.0,
        }
    }

    /// Filters `x` sampled at `t` seconds (`None`: at the current rate).
    pub fn filter(&mut self, x: f64, t: Option<f64>) -> f64 {
        let rate = self.clock.tick(t);
        if !x.is_finite() {
            return self.x.unwrap_or(x);
        }
        let p = self.params;
        let Some(prev) = self.x else {
            (self.x, self.dx) = (Some(x), 0.0);
            return x;
        };
        let speed = (x - prev) * rate;
        let dx = self.dx + alpha(p.dcutoff, rate) * (speed - self.dx);
        let out = prev + alpha(p.min_cutoff + p.beta * dx.abs(), rate) * (x - prev);
        if dx.is_finite() && out.is_finite() {
            (self.x, self.dx) = (Some(out), dx);
            out
        } else {
            (self.x, self.dx) = (Some(x), 0.0);
            x
        }
    }
}

/// The 1€ filter for a position (or any vector): one cutoff from the speed.
#[derive(Clone, Copy, Debug)]
pub struct Vector {
    params: Params,
    clock: Clock,
    x: Option<[f64; 3]>,
    /// The low-passed velocity (0 until a second sample).
    dx: [f64; 3],
}

impl Vector {
    /// A filter expecting samples at `rate` Hz until timestamps say otherwise.
    pub fn new(params: Params, rate: f64) -> Self {
        Self {
            params,
            clock: Clock::new(rate),
            x: None,
            dx: [0.0; 3],
        }
    }

    /// Filters `x` sampled at `t` seconds (`None`: at the current rate).
    pub fn filter(&mut self, x: [f64; 3], t: Option<f64>) -> [f64; 3] {
        let rate = self.clock.tick(t);
        let p = self.params;
        let Some(prev) = self.x.filter(|_| x.iter().all(|v| v.is_finite())) else {
            if x.iter().all(|v| v.is_finite()) {
                (self.x, self.dx) = (Some(x), [0.0; 3]);
            }
            return self.x.unwrap_or(x);
        };
        let speed = zip(x, prev, |x, p| (x - p) * rate);
        let ad = alpha(p.dcutoff, rate);
        let dx = zip(self.dx, speed, |d, s| d + ad * (s - d));
        let norm = dx.iter().map(|v| v * v).sum::<f64>().sqrt();
        let a = alpha(p.min_cutoff + p.beta * norm, rate);
        let out = zip(prev, x, |p, x| p + a * (x - p));
        if dx.iter().chain(&out).all(|v| v.is_finite()) {
            (self.x, self.dx) = (Some(out), dx);
            out
        } else {
            (self.x, self.dx) = (Some(x), [0.0; 3]);
            x
        }
    }
}

/// The 1€ filter for a rotation (unit quaternion `[x, y, z, w]`), stepping on
/// the sphere.
#[derive(Clone, Copy, Debug)]
pub struct Rotation {
    params: Params,
    clock: Clock,
    q: Option<[f64; 4]>,
    /// The low-passed angular speed (0 until a second sample).
    speed: f64,
}

impl Rotation {
    /// A filter expecting samples at `rate` Hz until timestamps say otherwise.
    pub fn new(params: Params, rate: f64) -> Self {
        Self {
            params,
            clock: Clock::new(rate),
            q: None,
            speed: 0.0,
        }
    }

    /// Filters rotation `q` sampled at `t` seconds (`None`: at the current
    /// rate). The output is unit length and in the previous output's
    /// hemisphere; a zero or non-finite input repeats the last output.
    pub fn filter(&mut self, q: [f64; 4], t: Option<f64>) -> [f64; 4] {
        let rate = self.clock.tick(t);
        let p = self.params;
        let n = dot(q, q);
        if !(n.is_finite() && n > 1e-24) {
            return self.q.unwrap_or([0.0, 0.0, 0.0, 1.0]);
        }
        let q = normalise(q);
        let Some(prev) = self.q else {
            (self.q, self.speed) = (Some(q), 0.0);
            return q;
        };
        // q and −q are one rotation: take the one nearer the last output.
        let q = if dot(q, prev) < 0.0 { q.map(|v| -v) } else { q };
        let angle = 2.0 * dot(q, prev).clamp(-1.0, 1.0).acos();
        let speed = angle * rate;
        let s = self.speed + alpha(p.dcutoff, rate) * (speed - self.speed);
        if !s.is_finite() {
            (self.q, self.speed) = (Some(q), 0.0);
            return q;
        }
        self.speed = s;
        let out = slerp(prev, q, alpha(p.min_cutoff + p.beta * s, rate));
        self.q = Some(out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quat::mul;
    use mocap_testutil::Rng;

    const RATE: f64 = 60.0;

    /// A Gaussian-ish sample (sum of uniforms) with unit variance.
    fn noise(rng: &mut Rng) -> f64 {
        (0..12)
            .map(|_| (rng.next() % 1_000_000) as f64 / 1_000_000.0)
            .sum::<f64>()
            - 6.0
    }

    fn about_z(deg: f64) -> [f64; 4] {
        let h = deg.to_radians() / 2.0;
        [0.0, 0.0, h.sin(), h.cos()]
    }

    fn angle_between(a: [f64; 4], b: [f64; 4]) -> f64 {
        2.0 * dot(a, b).abs().clamp(0.0, 1.0).acos().to_degrees()
    }

    /// A rotation about a random axis by `deg` degrees.
    fn jitter(rng: &mut Rng, deg: f64) -> [f64; 4] {
        let axis = normalise([noise(rng), noise(rng), noise(rng), 0.0]);
        let h = (deg * noise(rng)).to_radians() / 2.0;
        [
            axis[0] * h.sin(),
            axis[1] * h.sin(),
            axis[2] * h.sin(),
            h.cos(),
        ]
    }

    #[test]
    fn scalar_follows_the_formulas_by_hand() {
        let p = Params {
            min_cutoff: 1.0,
            beta: 0.5,
            dcutoff: 2.0,
        };
        let mut f = Scalar::new(p, 100.0);
        assert_eq!(f.filter(3.0, Some(1.0)), 3.0, "the first sample passes");
        // Second sample 0.02 s later: rate 50 Hz.
        let rate: f64 = 50.0;
        let speed = (5.0 - 3.0) * rate;
        let ad = 1.0 / (1.0 + (1.0 / (2.0 * PI * 2.0)) * rate);
        let dx = 0.0 + ad * (speed - 0.0);
        let fc = 1.0 + 0.5 * dx.abs();
        let a = 1.0 / (1.0 + (1.0 / (2.0 * PI * fc)) * rate);
        let want = 3.0 + a * (5.0 - 3.0);
        assert!((f.filter(5.0, Some(1.02)) - want).abs() < 1e-12);
        // A timestamp that does not advance keeps the 50 Hz period.
        let before = f;
        let mut g = before;
        assert_eq!(f.filter(4.0, Some(1.02)), g.filter(4.0, None));
        assert!(f.filter(f64::NAN, None).is_finite());
    }

    #[test]
    fn rotation_output_is_unit_continuous_and_sign_blind() {
        let mut rng = Rng(3);
        let mut a = Rotation::new(Params::ROTATION, RATE);
        let mut b = Rotation::new(Params::ROTATION, RATE);
        let mut last: Option<[f64; 4]> = None;
        for k in 0..600 {
            let t = f64::from(k) / RATE;
            let q = mul(about_z(170.0 * (t * 2.0).sin()), jitter(&mut rng, 0.5));
            let neg = q.map(|v| -v);
            // Flip the sign of the input at random: it must not matter.
            let input = if rng.next().is_multiple_of(2) { q } else { neg };
            let out = a.filter(input, Some(t));
            let out_neg = b.filter(if input == q { neg } else { q }, Some(t));
            assert!((dot(out, out).sqrt() - 1.0).abs() < 1e-12, "unit");
            assert!(dot(out, out_neg).abs() > 1.0 - 1e-12, "q and -q alike");
            if let Some(l) = last {
                assert!(dot(out, l) > 0.0, "no sign flip at frame {k}");
            }
            last = Some(out);
        }
    }

    #[test]
    fn at_rest_frame_to_frame_jitter_falls_at_least_five_times() {
        let mut rng = Rng(11);
        let base = about_z(30.0);
        let mut f = Rotation::new(Params::ROTATION, RATE);
        let (mut raw_prev, mut out_prev) = (None, None);
        let (mut raw_sum, mut out_sum) = (0.0, 0.0);
        for k in 0..1200 {
            let t = f64::from(k) / RATE;
            let q = mul(base, jitter(&mut rng, 0.5));
            let out = f.filter(q, Some(t));
            if k >= 120
                && let (Some(r), Some(o)) = (raw_prev, out_prev)
            {
                raw_sum += angle_between(q, r);
                out_sum += angle_between(out, o);
            }
            raw_prev = Some(q);
            out_prev = Some(out);
        }
        let ratio = raw_sum / out_sum;
        assert!(ratio >= 5.0, "jitter fell only {ratio:.2}x");
    }

    #[test]
    fn a_90_degree_per_second_turn_lags_at_most_two_frames() {
        let mut f = Rotation::new(Params::ROTATION, RATE);
        let speed = 90.0; // degrees per second
        let mut worst: f64 = 0.0;
        for k in 0..240 {
            let t = f64::from(k) / RATE;
            let out = f.filter(about_z(speed * t), Some(t));
            if k >= 60 {
                // Lag in frames: how far behind the input the output is.
                let behind = angle_between(out, about_z(speed * t));
                worst = worst.max(behind / (speed / RATE));
            }
        }
        assert!(worst <= 2.0, "lags {worst:.2} frames");
        assert!(
            worst > 0.1,
            "a filter that does nothing passes too: {worst}"
        );
    }

    #[test]
    fn vector_is_smooth_at_rest_and_keeps_up_with_a_move() {
        let mut rng = Rng(5);
        let mut f = Vector::new(Params::POSITION, RATE);
        let (mut raw, mut out) = (0.0, 0.0);
        let mut prev: Option<([f64; 3], [f64; 3])> = None;
        for k in 0..600 {
            let t = f64::from(k) / RATE;
            let x = [0.001 * noise(&mut rng), 1.0, 0.0];
            let y = f.filter(x, Some(t));
            if let Some((px, py)) = prev
                && k > 60
            {
                raw += (x[0] - px[0]).abs();
                out += (y[0] - py[0]).abs();
            }
            prev = Some((x, y));
        }
        assert!(raw / out >= 5.0, "{}", raw / out);
        // 1 m/s along z: within 2 frames of the input.
        let mut f = Vector::new(Params::POSITION, RATE);
        for k in 0..120 {
            let t = f64::from(k) / RATE;
            let y = f.filter([0.0, 0.0, t], Some(t));
            if k > 30 {
                assert!(t - y[2] <= 2.0 / RATE, "frame {k}: {}", t - y[2]);
            }
        }
    }

    /// Ten seconds of a steady signal at 60 fps after `bad` samples: where
    /// each filter ends up. At the slowest default cutoff (0.5 Hz) an error
    /// shrinks to 0.95^600 ≈ 1e-13 of where it started.
    fn after<T: Copy>(bad: &[(T, f64)], steady: T, mut f: impl FnMut(T, Option<f64>) -> T) -> T {
        for &(x, t) in bad {
            f(x, Some(t));
        }
        let mut y = steady;
        for k in 0..600 {
            y = f(steady, Some(f64::from(k) / RATE));
        }
        y
    }

    /// Found by the `smooth` fuzz target (its input is in
    /// fuzz/regressions/smooth): a sample 1.9e185 away, 1.6e-305 s after
    /// the last, overflowed the speed. The infinite speed became a NaN that
    /// stayed, and every later output was the one before it. The same freeze
    /// came from one NaN or infinite weight, which a VMC sender can send
    /// (`--smooth` then froze that blendshape until restart), and from two
    /// timestamps a subnormal apart (an infinite rate).
    #[test]
    fn no_sample_leaves_a_filter_frozen() {
        let scalar_cases: [&[(f64, f64)]; 4] = [
            &[(0.0, 0.0), (f64::NAN, 0.1)],
            &[(0.0, 0.0), (f64::INFINITY, 0.1)],
            &[(0.0, 0.0), (1.9e185, 1.6e-305)],
            &[(0.0, 0.0), (0.0, 5e-324), (0.0, 0.1)],
        ];
        for bad in scalar_cases {
            let mut f = Scalar::new(Params::BLEND, RATE);
            let y = after(bad, 0.5, |x, t| f.filter(x, t));
            assert!((y - 0.5).abs() < 1e-9, "{bad:?}: {y}");
        }
        let vector_cases: [&[([f64; 3], f64)]; 2] = [
            &[([0.0; 3], 0.0), ([1.9e185, 0.0, 0.0], 1.6e-305)],
            &[([-1e308; 3], 0.0), ([1e308; 3], 0.1)],
        ];
        for bad in vector_cases {
            let mut f = Vector::new(Params::POSITION, RATE);
            let y = after(bad, [0.1, 0.9, -0.2], |x, t| f.filter(x, t));
            assert!(
                (y[0] - 0.1).abs() + (y[1] - 0.9).abs() + (y[2] + 0.2).abs() < 1e-9,
                "{bad:?}: {y:?}"
            );
        }
        let id = [0.0, 0.0, 0.0, 1.0];
        let mut f = Rotation::new(Params::ROTATION, RATE);
        let target = about_z(30.0);
        let y = after(&[(id, 0.0), (id, 5e-324)], target, |q, t| f.filter(q, t));
        assert!(angle_between(y, target) < 1e-6, "{y:?}");
    }
}
