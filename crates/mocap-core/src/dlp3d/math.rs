//! Rotations as DLP3D sends them (row-major 3×3, column-vector convention:
//! v' = R·v), the Blender → parent-relative conversion of its server, the
//! Blender → Babylon root translation, and resampling to the stream's fixed
//! frame rate.

#![allow(
    clippy::indexing_slicing,
    reason = "fixed-size matrices indexed by loop counters below their size; never wire data"
)]

use crate::quat::normalise;

/// A 4×4 matrix, row-major, column-vector convention (Blender's `Matrix`).
pub type Mat4 = [[f64; 4]; 4];

/// A rotation matrix, row-major: r00 r01 r02 r10 … r22.
pub type Mat3 = [f32; 9];

/// The identity rotation.
pub const IDENTITY3: Mat3 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

/// The identity 4×4.
pub const IDENTITY4: Mat4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// The rotation matrix of a quaternion (x, y, z, w); normalised first, a
/// zero or non-finite quaternion gives the identity.
pub fn quat_to_mat(q: [f32; 4]) -> Mat3 {
    let [r0, r1, r2] = crate::quat::to_mat3(q.map(f64::from));
    [
        r0[0], r0[1], r0[2], r1[0], r1[1], r1[2], r2[0], r2[1], r2[2],
    ]
    .map(|v| v as f32)
}

/// The quaternion (x, y, z, w, with w ≥ 0) of a rotation matrix.
pub fn mat_to_quat(m: &Mat3) -> [f32; 4] {
    let [m00, m01, m02, m10, m11, m12, m20, m21, m22] = m.map(f64::from);
    let trace = m00 + m11 + m22;
    // Shepperd: divide by the largest of the four candidates for stability.
    let q = if trace > 0.0 {
        let s = (trace + 1.0).sqrt() * 2.0;
        [(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4.0]
    } else if m00 > m11 && m00 > m22 {
        let s = (1.0 + m00 - m11 - m22).sqrt() * 2.0;
        [s / 4.0, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s]
    } else if m11 > m22 {
        let s = (1.0 + m11 - m00 - m22).sqrt() * 2.0;
        [(m01 + m10) / s, s / 4.0, (m12 + m21) / s, (m02 - m20) / s]
    } else {
        let s = (1.0 + m22 - m00 - m11).sqrt() * 2.0;
        [(m02 + m20) / s, (m12 + m21) / s, s / 4.0, (m10 - m01) / s]
    };
    let q = normalise(q);
    let q = if q[3] < 0.0 { q.map(|v| -v) } else { q };
    q.map(|v| v as f32)
}

/// A rotation close to an almost-orthonormal matrix: Gram–Schmidt on the
/// first two columns, the third their cross product, so the result is proper.
/// (Not the least-squares nearest rotation, which would spread the error over
/// all three axes; for the small drift of interpolation the two agree.) A
/// degenerate matrix (a zero or repeated column) gives the identity.
pub fn orthonormalise(m: &Mat3) -> Mat3 {
    let m = m.map(f64::from);
    let col = |c: usize| [m[c], m[3 + c], m[6 + c]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let unit = |a: [f64; 3]| {
        let n = dot(a, a).sqrt();
        if n > 0.0 { a.map(|v| v / n) } else { a }
    };
    let x = unit(col(0));
    let y0 = col(1);
    let d = dot(x, y0);
    let y = unit([y0[0] - d * x[0], y0[1] - d * x[1], y0[2] - d * x[2]]);
    if dot(x, x) < 0.5 || dot(y, y) < 0.5 || !(dot(x, x) + dot(y, y)).is_finite() {
        return IDENTITY3;
    }
    let z = [
        x[1] * y[2] - x[2] * y[1],
        x[2] * y[0] - x[0] * y[2],
        x[0] * y[1] - x[1] * y[0],
    ];
    [x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]].map(|v| v as f32)
}

fn mul4(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut out = [[0.0; 4]; 4];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// Inverse of an affine 4×4 (last row 0 0 0 1); `None` when singular.
pub fn invert_affine(m: &Mat4) -> Option<Mat4> {
    let [a, b, c] = [m[0], m[1], m[2]];
    let det = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
        + a[2] * (b[0] * c[1] - b[1] * c[0]);
    if det.abs() < 1e-12 || !det.is_finite() {
        return None;
    }
    let inv = [
        [
            (b[1] * c[2] - b[2] * c[1]) / det,
            (a[2] * c[1] - a[1] * c[2]) / det,
            (a[1] * b[2] - a[2] * b[1]) / det,
        ],
        [
            (b[2] * c[0] - b[0] * c[2]) / det,
            (a[0] * c[2] - a[2] * c[0]) / det,
            (a[2] * b[0] - a[0] * b[2]) / det,
        ],
        [
            (b[0] * c[1] - b[1] * c[0]) / det,
            (a[1] * c[0] - a[0] * c[1]) / det,
            (a[0] * b[1] - a[1] * b[0]) / det,
        ],
    ];
    let t = [a[3], b[3], c[3]];
    let mut out = IDENTITY4;
    for i in 0..3 {
        for j in 0..3 {
            out[i][j] = inv[i][j];
        }
        out[i][3] = -(0..3).map(|k| inv[i][k] * t[k]).sum::<f64>();
    }
    Some(out)
}

/// DLP3D's parent-relative rotation of a Blender pose bone:
/// inverse(parent rest `matrix_local`) · `matrix_local` · `matrix_basis`
/// (root: `matrix_local` · `matrix_basis`), rotation part only,
/// re-orthonormalised (rest matrices may carry scale). A singular parent is
/// treated as the identity.
pub fn parent_relative(
    parent_local: Option<&Mat4>,
    matrix_local: &Mat4,
    matrix_basis: &Mat4,
) -> Mat3 {
    let pose = mul4(matrix_local, matrix_basis);
    let m = match parent_local.and_then(invert_affine) {
        Some(inv) => mul4(&inv, &pose),
        None => pose,
    };
    let r = [
        m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2],
    ];
    orthonormalise(&r.map(|v| v as f32))
}

/// A Blender root position (metres, right-handed, Z up) in Babylon's units
/// and axes as DLP3D writes it: ×100, Y and Z swapped, the new Z negated.
pub fn blender_to_babylon([x, y, z]: [f32; 3]) -> [f32; 3] {
    [x * 100.0, z * 100.0, -y * 100.0]
}

/// A Unity/VMC position (metres, left-handed, Y up) in Babylon's units:
/// both are left-handed and Y-up, so only the ×100 scale applies.
pub fn unity_to_babylon(p: [f32; 3]) -> [f32; 3] {
    p.map(|v| v * 100.0)
}

/// Spherical interpolation of unit quaternions, along the shorter arc
/// ([`crate::quat::slerp_short`], computed wide).
pub fn slerp(a: [f32; 4], b: [f32; 4], t: f32) -> [f32; 4] {
    crate::quat::slerp_short(crate::quat::wide(a), crate::quat::wide(b), f64::from(t))
        .map(|v| v as f32)
}

fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a + (b - a) * t
}

/// One input pose: per-joint rotations (x, y, z, w), the root position,
/// blendshape weights, all in the stream's joint and blendshape order.
#[derive(Clone, Debug, PartialEq)]
pub struct Pose {
    /// Joint rotations, parent-relative.
    pub rotations: Vec<[f32; 4]>,
    /// Root translation, stream units.
    pub root: [f32; 3],
    /// Blendshape weights.
    pub weights: Vec<f32>,
}

impl Pose {
    /// The pose `t` of the way from `self` to `next`: rotations slerped,
    /// position and weights lerped. Missing entries hold `self`'s.
    pub fn interpolate(&self, next: &Self, t: f32) -> Self {
        Self {
            rotations: self
                .rotations
                .iter()
                .enumerate()
                .map(|(i, a)| next.rotations.get(i).map_or(*a, |b| slerp(*a, *b, t)))
                .collect(),
            root: [0, 1, 2].map(|i| lerp(self.root[i], next.root[i], t)),
            weights: self
                .weights
                .iter()
                .enumerate()
                .map(|(i, a)| next.weights.get(i).map_or(*a, |b| lerp(*a, *b, t)))
                .collect(),
        }
    }

    /// Appends this pose as one motion frame (matrices, root, zero metadata).
    pub fn push_motion_frame(&self, out: &mut Vec<f32>) {
        for q in &self.rotations {
            out.extend_from_slice(&quat_to_mat(*q));
        }
        out.extend_from_slice(&self.root);
        out.extend_from_slice(&[0.0; 3]);
    }
}

/// Largest time, in seconds, a [`Resampler`] takes (about 31 years).
pub const MAX_TIME: f64 = 1e9;

/// Turns poses at any times into poses on a fixed-rate grid, interpolating
/// between the two inputs around each grid time. Pure: times are given.
#[derive(Clone, Debug)]
pub struct Resampler {
    period: f64,
    /// A gap longer than this restarts the grid instead of interpolating
    /// across it.
    max_gap: f64,
    last: Option<(f64, Pose)>,
    /// Next grid time.
    next: f64,
}

impl Resampler {
    /// A resampler to `fps` frames per second.
    pub fn new(fps: f64) -> Self {
        Self {
            period: 1.0 / fps.max(1e-3),
            max_gap: 1.0,
            last: None,
            next: 0.0,
        }
    }

    /// Takes a pose at time `t` (seconds) and returns the grid poses now
    /// known, oldest first. A time slightly before the last is ignored; one
    /// more than a second before it (a restarted sender clock) restarts the grid.
    /// Times outside ±[`MAX_TIME`] (or not finite) are ignored: the grid's
    /// step must stay representable.
    pub fn push(&mut self, t: f64, pose: Pose) -> Vec<Pose> {
        let mut out = Vec::new();
        if !(-MAX_TIME..=MAX_TIME).contains(&t) {
            return out;
        }
        // A gap of at most max_gap holds at most this many grid times.
        let most = (self.max_gap / self.period).ceil() as usize + 2;
        match &self.last {
            // A small step back is a reordered input; a big one a restarted clock.
            Some((prev_t, _)) if t < *prev_t && *prev_t - t <= self.max_gap => return out,
            Some((prev_t, prev)) if (0.0..=self.max_gap).contains(&(t - prev_t)) => {
                let span = t - prev_t;
                while self.next <= t && out.len() < most {
                    let f = if span > 0.0 {
                        ((self.next - prev_t) / span).clamp(0.0, 1.0)
                    } else {
                        1.0
                    };
                    out.push(prev.interpolate(&pose, f as f32));
                    self.next += self.period;
                }
            }
            _ => {
                out.push(pose.clone());
                self.next = t + self.period;
            }
        }
        self.last = Some((t, pose));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mocap_testutil::Rng;

    fn close(a: &[f32], b: &[f32], eps: f32) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= eps)
    }

    fn rot4(m: Mat3, t: [f64; 3]) -> Mat4 {
        let m = m.map(f64::from);
        [
            [m[0], m[1], m[2], t[0]],
            [m[3], m[4], m[5], t[1]],
            [m[6], m[7], m[8], t[2]],
            [0.0, 0.0, 0.0, 1.0],
        ]
    }

    fn about(axis: [f32; 3], deg: f32) -> [f32; 4] {
        let (s, c) = (deg.to_radians() / 2.0).sin_cos();
        [axis[0] * s, axis[1] * s, axis[2] * s, c]
    }

    #[test]
    fn identity_rest_and_basis_give_identity() {
        assert_eq!(parent_relative(None, &IDENTITY4, &IDENTITY4), IDENTITY3);
        assert_eq!(
            parent_relative(Some(&IDENTITY4), &IDENTITY4, &IDENTITY4),
            IDENTITY3
        );
    }

    /// A parent resting at Rx(90°) 1 m up, a child resting at Rx(90°)·Rz(90°)
    /// and posed by Rz(30°): parent-relative = Rx(90°)ᵀ·Rx(90°)·Rz(90°)·Rz(30°)
    /// = Rz(120°); the root alone is Rx(90°)·Rz(30°). Both written out by hand.
    #[test]
    fn known_blender_rest_and_pose_pair() {
        let rx90 = [1.0, 0.0, 0.0, 0.0, 0.0, -1.0, 0.0, 1.0, 0.0];
        let (s, c) = (0.5f32, 0.866_025_4f32);
        let rz30 = [c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0];
        let parent = rot4(rx90, [0.0, 0.0, 1.0]);
        // Rx(90)·Rz(90) by hand.
        let rxrz = [0.0, -1.0, 0.0, 0.0, 0.0, -1.0, 1.0, 0.0, 0.0];
        let child = rot4(rxrz, [0.0, 0.2, 1.0]);
        let basis = rot4(rz30, [0.0; 3]);
        let rz120 = [-0.5, -c, 0.0, c, -0.5, 0.0, 0.0, 0.0, 1.0];
        assert!(close(
            &parent_relative(Some(&parent), &child, &basis),
            &rz120,
            1e-6
        ));
        let root = [c, -s, 0.0, 0.0, 0.0, -1.0, s, c, 0.0];
        assert!(close(&parent_relative(None, &parent, &basis), &root, 1e-6));
        // Scale in a rest matrix does not leak into the rotation.
        let mut scaled = parent;
        for row in scaled.iter_mut().take(3) {
            for v in row.iter_mut().take(3) {
                *v *= 2.0;
            }
        }
        assert!(close(&parent_relative(None, &scaled, &basis), &root, 1e-6));
    }

    #[test]
    fn blender_root_translation_to_babylon() {
        assert_eq!(blender_to_babylon([1.0, 2.0, 3.0]), [100.0, 300.0, -200.0]);
        // Blender's up (+Z) is Babylon's up (+Y); Blender's forward (−Y) is Babylon's +Z.
        assert_eq!(blender_to_babylon([0.0, -0.5, 1.7]), [0.0, 170.0, 50.0]);
        assert_eq!(unity_to_babylon([0.1, 1.0, -0.2]), [10.0, 100.0, -20.0]);
    }

    #[test]
    fn quaternions_and_matrices_round_trip() {
        let mut rng = Rng(0x9a7);
        let mut unit = || (rng.next() as f64 / u64::MAX as f64 * 2.0 - 1.0) as f32;
        for _ in 0..1000 {
            let q = [unit(), unit(), unit(), unit()];
            let n = q.iter().map(|v| v * v).sum::<f32>().sqrt();
            let q = q.map(|v| v / n);
            let m = quat_to_mat(q);
            let back = mat_to_quat(&m);
            let d: f32 = q.iter().zip(back).map(|(a, b)| a * b).sum();
            assert!((d.abs() - 1.0).abs() < 1e-5, "{q:?} {back:?}");
            // Orthonormal with determinant +1.
            assert!(close(&orthonormalise(&m), &m, 1e-5));
        }
        for degenerate in [
            [0.0; 9],
            [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
            [f32::NAN; 9],
        ] {
            assert_eq!(orthonormalise(&degenerate), IDENTITY3);
        }
        // Rz(90°): x → y.
        let m = quat_to_mat(about([0.0, 0.0, 1.0], 90.0));
        assert!(close(
            &m,
            &[0.0, -1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0],
            1e-6
        ));
    }

    fn pose(deg: f32, x: f32, w: f32) -> Pose {
        Pose {
            rotations: vec![about([0.0, 1.0, 0.0], deg)],
            root: [x, 0.0, 0.0],
            weights: vec![w],
        }
    }

    fn angle(p: &Pose) -> f32 {
        let [_, y, _, w] = p.rotations[0];
        2.0 * y.atan2(w).to_degrees()
    }

    #[test]
    fn resampling_60_to_30_keeps_every_other_frame() {
        let mut r = Resampler::new(30.0);
        let mut out = Vec::new();
        for k in 0..=60 {
            out.extend(r.push(
                f64::from(k) / 60.0,
                pose(k as f32, k as f32, k as f32 / 60.0),
            ));
        }
        assert_eq!(out.len(), 31);
        for (j, p) in out.iter().enumerate() {
            let k = 2.0 * j as f32;
            assert!((angle(p) - k).abs() < 1e-3, "{j}: {}", angle(p));
            assert!((p.root[0] - k).abs() < 1e-3);
            assert!((p.weights[0] - k / 60.0).abs() < 1e-5);
        }
    }

    #[test]
    fn resampling_50_to_30_interpolates_between_inputs() {
        // 60°/s about Y and 1 m/s: output frame j at j/30 s has 2j° and j/30 m.
        let mut r = Resampler::new(30.0);
        let mut out = Vec::new();
        for k in 0..=50 {
            let t = f64::from(k) / 50.0;
            out.extend(r.push(t, pose(60.0 * t as f32, t as f32, t as f32)));
        }
        assert_eq!(out.len(), 31);
        for (j, p) in out.iter().enumerate() {
            assert!(
                (angle(p) - 2.0 * j as f32).abs() < 1e-3,
                "{j}: {}",
                angle(p)
            );
            assert!((p.root[0] - j as f32 / 30.0).abs() < 1e-5);
            // Matrices from the slerped quaternions stay orthonormal.
            let m = quat_to_mat(p.rotations[0]);
            assert!(close(&orthonormalise(&m), &m, 1e-6));
        }
        // Time going backwards yields nothing; a long gap restarts the grid.
        assert!(r.push(0.5, pose(0.0, 0.0, 0.0)).is_empty());
        assert_eq!(r.push(5.0, pose(0.0, 0.0, 0.0)).len(), 1);
        assert_eq!(
            r.push(0.0, pose(0.0, 0.0, 0.0)).len(),
            1,
            "a restarted clock"
        );
    }

    #[test]
    fn slerp_takes_the_short_way() {
        let a = about([0.0, 0.0, 1.0], 10.0);
        let b = about([0.0, 0.0, 1.0], 50.0).map(|v| -v);
        let m = slerp(a, b, 0.5);
        let d: f32 = m
            .iter()
            .zip(about([0.0, 0.0, 1.0], 30.0))
            .map(|(x, y)| x * y)
            .sum();
        assert!((d.abs() - 1.0).abs() < 1e-6);
    }
}
