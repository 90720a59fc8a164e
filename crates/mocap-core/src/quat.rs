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

/// The order Euler rotations compose in, named as the product is written:
/// `Xyz` is `qx · qy · qz` (Z applied first). The formats this crate speaks
/// each fix one: ARKit head angles `Xyz`, BVH channels `Zxy`, Unity's
/// `Quaternion.Euler` `Yxz`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EulerOrder {
    /// `qx · qy · qz`.
    Xyz,
    /// `qz · qx · qy`.
    Zxy,
    /// `qy · qx · qz`.
    Yxz,
}

/// The quaternion of Euler angles `[x, y, z]` in degrees (about X, Y and Z,
/// whatever the order), composed in `order`.
pub fn from_euler(order: EulerOrder, [x, y, z]: [f64; 3]) -> [f64; 4] {
    let half = |d: f64| (d.to_radians() / 2.0).sin_cos();
    let ((sx, cx), (sy, cy), (sz, cz)) = (half(x), half(y), half(z));
    let (qx, qy, qz) = ([sx, 0.0, 0.0, cx], [0.0, sy, 0.0, cy], [0.0, 0.0, sz, cz]);
    match order {
        EulerOrder::Xyz => mul(mul(qx, qy), qz),
        EulerOrder::Zxy => mul(mul(qz, qx), qy),
        EulerOrder::Yxz => mul(mul(qy, qx), qz),
    }
}

/// The rotation matrix (rows; it maps column vectors) of `q`, normalised
/// first: a zero or non-finite quaternion gives the identity.
pub fn to_mat3(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [x, y, z, w] = normalise(q);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - z * w),
            2.0 * (x * z + y * w),
        ],
        [
            2.0 * (x * y + z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - x * w),
        ],
        [
            2.0 * (x * z - y * w),
            2.0 * (y * z + x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

/// The f32 facade for wire values: [`from_euler`] on f32 degrees, rounded
/// back to f32 once at the end.
pub fn from_euler_f32(order: EulerOrder, degrees: [f32; 3]) -> [f32; 4] {
    from_euler(order, degrees.map(f64::from)).map(|v| v as f32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 4], b: [f64; 4]) -> bool {
        // q and −q are the same rotation.
        dot(a, b).abs() > 1.0 - 1e-12
    }

    #[test]
    fn euler_orders_compose_as_named() {
        let (x, y, z) = (30.0, -50.0, 75.0);
        let ax = from_euler(EulerOrder::Xyz, [x, 0.0, 0.0]);
        let ay = from_euler(EulerOrder::Xyz, [0.0, y, 0.0]);
        let az = from_euler(EulerOrder::Xyz, [0.0, 0.0, z]);
        // A single axis is the same whatever the order.
        for order in [EulerOrder::Xyz, EulerOrder::Zxy, EulerOrder::Yxz] {
            assert!(close(from_euler(order, [0.0, y, 0.0]), ay));
        }
        let xyz = from_euler(EulerOrder::Xyz, [x, y, z]);
        let zxy = from_euler(EulerOrder::Zxy, [x, y, z]);
        let yxz = from_euler(EulerOrder::Yxz, [x, y, z]);
        assert!(close(xyz, mul(mul(ax, ay), az)));
        assert!(close(zxy, mul(mul(az, ax), ay)));
        assert!(close(yxz, mul(mul(ay, ax), az)));
        assert!(!close(xyz, zxy) && !close(zxy, yxz));
        // 90° about X takes +Y to +Z (right-handed).
        let r = rotate(
            from_euler(EulerOrder::Xyz, [90.0, 0.0, 0.0]),
            [0.0, 1.0, 0.0],
        );
        assert!((r[2] - 1.0).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn the_matrix_rotates_as_the_quaternion_does() {
        let q = from_euler(EulerOrder::Zxy, [10.0, 20.0, 30.0]);
        let m = to_mat3(q);
        for v in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, -0.2, 0.9]] {
            let want = rotate(q, v);
            for (row, w) in m.iter().zip(want) {
                let got = row[0] * v[0] + row[1] * v[1] + row[2] * v[2];
                assert!((got - w).abs() < 1e-12);
            }
        }
        assert_eq!(to_mat3([0.0; 4])[1], [0.0, 1.0, 0.0]);
        assert_eq!(to_mat3([f64::NAN; 4])[2], [0.0, 0.0, 1.0]);
    }

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
