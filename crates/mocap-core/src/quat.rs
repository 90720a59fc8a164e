//! Quaternion arithmetic shared by the bridges and the DLP3D conversions:
//! (x, y, z, w) order, scalar last, in f64 (callers widen their f32 wire
//! values so long chains of products stay accurate).
//!
//! ```
//! use mocap_core::quat;
//!
//! let h = std::f64::consts::FRAC_PI_4; // half of 90°
//! let about_y = [0.0, h.sin(), 0.0, h.cos()]; // x, y, z, w
//! let [x, y, z] = quat::rotate(about_y, [1.0, 0.0, 0.0]);
//! assert!((x - 0.0).abs() < 1e-12 && (y - 0.0).abs() < 1e-12 && (z + 1.0).abs() < 1e-12);
//! let twice = quat::mul(about_y, about_y); // 180°
//! assert!((quat::dot(twice, [0.0, 1.0, 0.0, 0.0]).abs() - 1.0).abs() < 1e-12);
//! ```

/// Hamilton product `a · b`, which applies `b` first.
pub fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

/// `v` rotated by the unit quaternion `q` (q · v · q⁻¹).
pub fn rotate(q: [f64; 4], [x, y, z]: [f64; 3]) -> [f64; 3] {
    let [qx, qy, qz, qw] = q;
    let [x, y, z, _] = mul(mul(q, [x, y, z, 0.0]), [-qx, -qy, -qz, qw]);
    [x, y, z]
}

/// `q` scaled to unit length; a zero or non-finite quaternion (damaged
/// input) gives the identity.
pub fn normalise(q: [f64; 4]) -> [f64; 4] {
    checked_normalise(q).unwrap_or([0.0, 0.0, 0.0, 1.0])
}

/// `q` scaled to unit length, or `None` when it is (nearly) zero or not
/// finite and so names no rotation.
pub fn checked_normalise(q: [f64; 4]) -> Option<[f64; 4]> {
    let n = dot(q, q).sqrt();
    (n > 1e-12 && n.is_finite()).then(|| q.map(|v| v / n))
}

/// The 4-D dot product: cos of half the angle between two unit rotations.
pub fn dot(a: [f64; 4], b: [f64; 4]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// Spherical interpolation from `a` to `b` by `t` along the arc between
/// them as given (callers put `b` in `a`'s hemisphere for the short way).
pub fn slerp(a: [f64; 4], b: [f64; 4], t: f64) -> [f64; 4] {
    let theta = dot(a, b).clamp(-1.0, 1.0).acos();
    let s = theta.sin();
    let (wa, wb) = if theta < 1e-9 {
        (1.0 - t, t)
    } else {
        (((1.0 - t) * theta).sin() / s, (t * theta).sin() / s)
    };
    let mut out = a;
    for (o, b) in out.iter_mut().zip(b) {
        *o = wa * *o + wb * b;
    }
    normalise(out)
}

/// Spherical interpolation along the shorter arc (`b` taken in `a`'s
/// hemisphere, so q and −q interpolate alike); nearly parallel rotations
/// are interpolated linearly, then normalised.
pub fn slerp_short(a: [f64; 4], b: [f64; 4], t: f64) -> [f64; 4] {
    let (b, d) = if dot(a, b) < 0.0 {
        (b.map(|v| -v), -dot(a, b))
    } else {
        (b, dot(a, b))
    };
    if d > 0.9995 {
        let mut out = a;
        for (o, b) in out.iter_mut().zip(b) {
            *o = (1.0 - t) * *o + t * b;
        }
        return normalise(out);
    }
    slerp(a, b, t)
}

/// An f32 quaternion widened for arithmetic.
pub fn wide(q: [f32; 4]) -> [f64; 4] {
    q.map(f64::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_rotations_and_normalising() {
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let z90 = [0.0, 0.0, s, s];
        // Two quarter turns about Z are a half turn; x goes to y.
        let z180 = mul(z90, z90);
        assert!((z180[2] - 1.0).abs() < 1e-12 && z180[3].abs() < 1e-12);
        let r = rotate(z90, [1.0, 0.0, 0.0]);
        assert!((r[0]).abs() < 1e-12 && (r[1] - 1.0).abs() < 1e-12);
        assert_eq!(normalise([0.0, 0.0, 0.0, 2.0]), [0.0, 0.0, 0.0, 1.0]);
        for bad in [[0.0; 4], [f64::NAN; 4], [f64::INFINITY, 0.0, 0.0, 0.0]] {
            assert_eq!(normalise(bad), [0.0, 0.0, 0.0, 1.0]);
        }
    }
}
