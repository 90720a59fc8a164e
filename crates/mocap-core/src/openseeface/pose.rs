//! An OpenSeeFace face as the face bridge's [`FacePose`]: the head from
//! its quaternion, in Unity's frame; the eyes and mouth as VRM 0.x preset
//! expressions. OpenSeeFace sends no ARKit blendshapes, so none are set.
//!
//! The head, our reading of `facetracker.py`'s fit (see
//! `docs/openseeface.md`): the tracker fits a face model (x the person's
//! right, y up, z out of the face) to landmarks given as (picture row,
//! column), and packs the quaternion of the fit's camera-to-model rotation
//! (the inverse of the head's pose). Squarely facing the camera it packs
//! ±(−√½, √½, 0, 0). We send the head's turn away from that rest in Unity's
//! axes: +X the camera picture's right, +Y up, +Z away from the camera: the
//! frame the ARKit bridges reach by flipping ARKit's Z, so a person turning
//! the same way before either app turns the avatar the same way.
//!
//! OpenSeeFace's own Unity receiver (`OpenSeeIKTarget.cs`) swaps and
//! negates the raw quaternion to (−y, −x, z, w) and multiplies on the right
//! by the inverse of that at calibration time; its Y axis then points down
//! the picture and its Z towards the camera. Calibrated squarely facing the
//! camera, it gives our rotation with Y and Z negated: its mirrored motion
//! is ours, and `--head-axes x,-y,-z` gives its default.

use std::f64::consts::FRAC_1_SQRT_2;

use super::Face;
use crate::bridge::FacePose;
use crate::quat;
use crate::vmc::VRM0_PRESETS;

/// Eye openness at or below which a blink is full, and at or above which
/// there is none: the defaults of OpenSeeFace's example VRM driver
/// (`OpenSeeVRMDriver.cs`), since the tracker's openness seldom reaches 0
/// or 1.
const EYE_SHUT: f32 = 0.2;
/// See [`EYE_SHUT`].
const EYE_OPEN: f32 = 0.55;

/// The inverse of the (−y, −x, z, w) swap of the rest quaternion.
const REST_INVERSE: [f64; 4] = [FRAC_1_SQRT_2, -FRAC_1_SQRT_2, 0.0, 0.0];

impl From<&Face<'_>> for FacePose {
    /// The face's head when its 3D fit succeeded; `Blink_L`, `Blink_R`
    /// from the eye openness; `A`, `I`, `U` from `mouth_open` and
    /// `mouth_wide`. A failed fit is a frame without tracking.
    fn from(f: &Face<'_>) -> Self {
        let mut pose = Self {
            tracking: Some(f.success()),
            head_rotation: f.success().then(|| unity_head(f.quaternion())).flatten(),
            ..Self::default()
        };
        let [right, left] = f.eyes_open();
        let feature = |name: &str| {
            f.features()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v)
                .filter(|v| v.is_finite())
        };
        let mouth = feature("mouth_open").zip(feature("mouth_wide"));
        let values = [
            ("Blink_L", blink(left)),
            ("Blink_R", blink(right)),
            ("A", mouth.map(|(open, wide)| vowels(open, wide)[0])),
            ("I", mouth.map(|(open, wide)| vowels(open, wide)[1])),
            ("U", mouth.map(|(open, wide)| vowels(open, wide)[2])),
        ];
        for (name, v) in values {
            if let Some(i) = VRM0_PRESETS.iter().position(|n| *n == name)
                && let Some(slot) = pose.expressions.get_mut(i)
            {
                *slot = v;
            }
        }
        pose
    }
}

/// The head's turn from squarely facing the camera, in Unity's frame
/// (module docs); `None` for a quaternion that names no rotation.
pub fn unity_head(raw: [f32; 4]) -> Option<[f32; 4]> {
    let [x, y, z, w] = quat::checked_normalise(quat::wide(raw))?;
    let [x, y, z, w] = quat::mul([-y, -x, z, w], REST_INVERSE);
    #[allow(clippy::cast_possible_truncation, reason = "back to the wire's f32")]
    Some([x, -y, -z, w].map(|v| v as f32))
}

/// Blink 0 (open) to 1 (shut) from openness, linear between the
/// thresholds.
fn blink(open: f32) -> Option<f32> {
    open.is_finite()
        .then(|| ((EYE_OPEN - open) / (EYE_OPEN - EYE_SHUT)).clamp(0.0, 1.0))
}

/// `A`, `I`, `U` from the mouth features: how open the mouth is (0 to 1)
/// shared out by its width, wider than usual towards `I`, narrower
/// (rounded) towards `U`, the rest `A`. Their sum is the opening, so a
/// closed mouth says nothing however wide.
fn vowels(open: f32, wide: f32) -> [f32; 3] {
    let open = open.clamp(0.0, 1.0);
    let wide = wide.clamp(-1.0, 1.0);
    [
        open * (1.0 - wide.abs()),
        open * wide.max(0.0),
        open * (-wide).max(0.0),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;
    use crate::bridge::{arkit_to_unity, euler_to_quat};
    use crate::openseeface::{FACE_LEN, parse};

    const A: f32 = std::f32::consts::FRAC_1_SQRT_2;

    fn same_rotation(a: [f32; 4], b: [f32; 4]) -> bool {
        let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        (d.abs() - 1.0).abs() < 1e-5
    }

    /// A face as the tracker packs it: a 640×480 camera, the fit as given.
    fn face(success: bool, q: [f32; 4], eyes: [f32; 2], mouth: [f32; 2]) -> Vec<u8> {
        let mut f = vec![0u8; FACE_LEN];
        f[..8].copy_from_slice(&1_765_000_000.0f64.to_le_bytes());
        f[12..16].copy_from_slice(&640f32.to_le_bytes());
        f[16..20].copy_from_slice(&480f32.to_le_bytes());
        f[20..24].copy_from_slice(&eyes[0].to_le_bytes());
        f[24..28].copy_from_slice(&eyes[1].to_le_bytes());
        f[28] = u8::from(success);
        for (i, v) in q.iter().enumerate() {
            f[33 + 4 * i..37 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        f[FACE_LEN - 8..FACE_LEN - 4].copy_from_slice(&mouth[0].to_le_bytes());
        f[FACE_LEN - 4..].copy_from_slice(&mouth[1].to_le_bytes());
        f
    }

    /// Known turns of 30°, each written as the tracker packs it: its fit
    /// R = rest · H (H the turn in the model's axes, rest the model-to-
    /// (row, column, depth) rotation facing the camera), packed as the
    /// quaternion of Rᵀ. By hand, with c, s = cos 15°, sin 15°.
    #[test]
    fn known_head_turns_reach_unity_as_the_arkit_bridge_sends_them() {
        let (c, s) = (15f32.to_radians().cos(), 15f32.to_radians().sin());
        // Facing the camera: no turn.
        assert!(same_rotation(
            unity_head([-A, A, 0.0, 0.0]).unwrap(),
            [0.0, 0.0, 0.0, 1.0]
        ));
        // Turned to the person's own left: −30° about Unity's +Y.
        let left = unity_head([-A * c, A * c, A * s, -A * s]).unwrap();
        assert!(same_rotation(left, [0.0, -s, 0.0, c]), "{left:?}");
        // Chin down: −30° about +X.
        let down = unity_head([-A * c, A * c, -A * s, -A * s]).unwrap();
        assert!(same_rotation(down, [-s, 0.0, 0.0, c]), "{down:?}");
        // Head tilted to the person's own left: −30° about +Z.
        let tilt = unity_head([A * (s - c), A * (s + c), 0.0, 0.0]).unwrap();
        assert!(same_rotation(tilt, [0.0, 0.0, -s, c]), "{tilt:?}");
        // The same turns from an ARKit app (yaw to the face's own left,
        // pitch down, roll to its own right are positive there).
        let arkit = |deg| arkit_to_unity(euler_to_quat(deg));
        assert!(same_rotation(left, arkit([0.0, 30.0, 0.0])));
        assert!(same_rotation(down, arkit([30.0, 0.0, 0.0])));
        assert!(same_rotation(tilt, arkit([0.0, 0.0, -30.0])));
        // The sign the tracker picks does not matter; no rotation is none.
        assert!(same_rotation(
            unity_head([A * c, -A * c, -A * s, A * s]).unwrap(),
            left
        ));
        assert_eq!(unity_head([0.0; 4]), None);
        assert_eq!(unity_head([f32::NAN, 0.0, 0.0, 1.0]), None);
    }

    /// Every turn on a 30° grid, by quaternion algebra instead of by hand:
    /// the tracker packs (rest · h)⁻¹; the head's turn is rest · h · rest⁻¹
    /// in the camera's (row, column, depth) axes, and Unity's axes are
    /// (column, −row, depth): a −90° turn about depth.
    #[test]
    fn every_turn_reaches_unity_as_the_turn_in_unitys_axes() {
        let a = FRAC_1_SQRT_2;
        let conj = |[x, y, z, w]: [f64; 4]| [-x, -y, -z, w];
        let rest = [a, -a, 0.0, 0.0];
        // The model's right, up and out of the face onto the camera's
        // −column, −row and −depth: facing the camera.
        let near = |p: [f64; 3], q: [f64; 3]| p.iter().zip(q).all(|(x, y)| (x - y).abs() < 1e-12);
        assert!(near(quat::rotate(rest, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0]));
        assert!(near(quat::rotate(rest, [0.0, 1.0, 0.0]), [-1.0, 0.0, 0.0]));
        assert!(near(quat::rotate(rest, [0.0, 0.0, 1.0]), [0.0, 0.0, -1.0]));
        let unity = [0.0, 0.0, -a, a];
        assert!(near(quat::rotate(unity, [0.0, 1.0, 0.0]), [1.0, 0.0, 0.0]));
        assert!(near(quat::rotate(unity, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0]));
        let grid = [-60.0, -30.0, 0.0, 30.0, 60.0];
        for x in grid {
            for y in grid {
                for z in grid {
                    let h = quat::from_euler(quat::EulerOrder::Xyz, [x, y, z]);
                    let packed = conj(quat::mul(rest, h));
                    let turn = quat::mul(quat::mul(rest, h), conj(rest));
                    let want = quat::mul(quat::mul(unity, turn), conj(unity));
                    #[allow(clippy::cast_possible_truncation, reason = "the wire's f32")]
                    let got = unity_head(packed.map(|v| v as f32)).unwrap();
                    #[allow(clippy::cast_possible_truncation, reason = "the wire's f32")]
                    let want = want.map(|v| v as f32);
                    assert!(same_rotation(got, want), "{x} {y} {z}: {got:?} {want:?}");
                }
            }
        }
    }

    #[test]
    fn eyes_and_mouth_become_vrm_presets() {
        let at = |name| VRM0_PRESETS.iter().position(|n| *n == name).unwrap();
        // Right eye half open, left shut; mouth 0.8 open, wider than usual by 0.25.
        let bytes = face(true, [-A, A, 0.0, 0.0], [0.375, 0.1], [0.8, 0.25]);
        let p = FacePose::from(&parse(&bytes).unwrap().faces().next().unwrap());
        assert_eq!(p.tracking, Some(true));
        assert!(same_rotation(
            p.head_rotation.unwrap(),
            [0.0, 0.0, 0.0, 1.0]
        ));
        let e = p.expressions;
        assert_eq!(e[at("Blink_L")], Some(1.0));
        assert!((e[at("Blink_R")].unwrap() - 0.5).abs() < 1e-6);
        assert!((e[at("A")].unwrap() - 0.6).abs() < 1e-6);
        assert!((e[at("I")].unwrap() - 0.2).abs() < 1e-6);
        assert_eq!(e[at("U")], Some(0.0));
        let set: Vec<&str> = VRM0_PRESETS
            .iter()
            .zip(e)
            .filter_map(|(n, v)| v.map(|_| *n))
            .collect();
        assert_eq!(set, ["A", "I", "U", "Blink_L", "Blink_R"]);
        assert!(p.blendshapes.iter().all(Option::is_none));
        assert_eq!(p.head, None);

        // Eyes wide open; a rounded mouth (narrower than usual); then a
        // closed one, however wide; a failed fit: no head, not tracked.
        let bytes = face(false, [-A, A, 0.0, 0.0], [0.9, 0.55], [0.5, -2.0]);
        let p = FacePose::from(&parse(&bytes).unwrap().faces().next().unwrap());
        assert_eq!((p.tracking, p.head_rotation), (Some(false), None));
        let e = p.expressions;
        assert_eq!((e[at("Blink_L")], e[at("Blink_R")]), (Some(0.0), Some(0.0)));
        assert_eq!(
            (e[at("A")], e[at("I")], e[at("U")]),
            (Some(0.0), Some(0.0), Some(0.5))
        );
        assert_eq!(vowels(-0.3, 0.9), [0.0, 0.0, 0.0]);
        // A feature that is no number sets no vowel.
        let bytes = face(true, [-A, A, 0.0, 0.0], [f32::NAN, 1.0], [f32::NAN, 0.0]);
        let p = FacePose::from(&parse(&bytes).unwrap().faces().next().unwrap());
        assert_eq!(
            (p.expressions[at("Blink_L")], p.expressions[at("A")]),
            (Some(0.0), None)
        );
        assert_eq!(p.expressions[at("Blink_R")], None);
    }
}
