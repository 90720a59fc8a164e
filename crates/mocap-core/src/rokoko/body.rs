//! A Rokoko actor's segments as a humanoid [`BodyPose`]: Studio's world
//! rotations, each relative to Studio's T-pose of its segment, turned into
//! the local rotations of a humanoid whose rest pose is the T-pose with
//! every bone at identity (a normalised VRM, what VMC carries).
//!
//! Rokoko's Unity plugin sets a bone's world rotation to
//! `W · inverse(T) · R` ([`t_pose`] is `T`, Studio's rotation of that
//! segment in its T-pose; `R` the model's own rest rotation relative to its
//! hips, identity for a normalised humanoid). So the humanoid's world
//! rotation of a bone is `M = W · inverse(T)`, and its local rotation is
//! `inverse(M(parent)) · M(bone)`, the parent being the nearest humanoid
//! ancestor the frame has (Studio's `chest` is UpperChest, as the plugin
//! maps it: Chest is never sent, so UpperChest hangs from Spine). Studio's
//! frame is Unity's (the plugin applies the values as they come): no axis
//! change. Positions: Hips at its segment's world position (the plugin's
//! choice without its hip-height fit, which needs the model); every other
//! bone at its segment's offset from the parent's, carried into the
//! parent's frame (`inverse(M(parent))` applied to the difference).

use crate::bridge::{BodyPose, BodyReader, BonePose, HUMANOID_BONES};
use crate::quat::{checked_normalise, mul, rotate};
use crate::vmc::bone_index;
use crate::vmc::humanoid::humanoid_parent;

use super::{Actor, Item};

/// Studio's segment names and the humanoid bones they drive, as Rokoko's
/// Unity plugin maps them (`RokokoHelper.GetBoneFrame`). `leftToeEnd`,
/// `rightToeEnd` and the fingertips drive none.
pub const SEGMENTS: [(&str, &str); 51] = [
    ("hip", "Hips"),
    ("spine", "Spine"),
    ("chest", "UpperChest"),
    ("neck", "Neck"),
    ("head", "Head"),
    ("leftShoulder", "LeftShoulder"),
    ("leftUpperArm", "LeftUpperArm"),
    ("leftLowerArm", "LeftLowerArm"),
    ("leftHand", "LeftHand"),
    ("rightShoulder", "RightShoulder"),
    ("rightUpperArm", "RightUpperArm"),
    ("rightLowerArm", "RightLowerArm"),
    ("rightHand", "RightHand"),
    ("leftUpLeg", "LeftUpperLeg"),
    ("leftLeg", "LeftLowerLeg"),
    ("leftFoot", "LeftFoot"),
    ("leftToe", "LeftToes"),
    ("rightUpLeg", "RightUpperLeg"),
    ("rightLeg", "RightLowerLeg"),
    ("rightFoot", "RightFoot"),
    ("rightToe", "RightToes"),
    ("leftThumbProximal", "LeftThumbProximal"),
    ("leftThumbMedial", "LeftThumbIntermediate"),
    ("leftThumbDistal", "LeftThumbDistal"),
    ("leftIndexProximal", "LeftIndexProximal"),
    ("leftIndexMedial", "LeftIndexIntermediate"),
    ("leftIndexDistal", "LeftIndexDistal"),
    ("leftMiddleProximal", "LeftMiddleProximal"),
    ("leftMiddleMedial", "LeftMiddleIntermediate"),
    ("leftMiddleDistal", "LeftMiddleDistal"),
    ("leftRingProximal", "LeftRingProximal"),
    ("leftRingMedial", "LeftRingIntermediate"),
    ("leftRingDistal", "LeftRingDistal"),
    ("leftLittleProximal", "LeftLittleProximal"),
    ("leftLittleMedial", "LeftLittleIntermediate"),
    ("leftLittleDistal", "LeftLittleDistal"),
    ("rightThumbProximal", "RightThumbProximal"),
    ("rightThumbMedial", "RightThumbIntermediate"),
    ("rightThumbDistal", "RightThumbDistal"),
    ("rightIndexProximal", "RightIndexProximal"),
    ("rightIndexMedial", "RightIndexIntermediate"),
    ("rightIndexDistal", "RightIndexDistal"),
    ("rightMiddleProximal", "RightMiddleProximal"),
    ("rightMiddleMedial", "RightMiddleIntermediate"),
    ("rightMiddleDistal", "RightMiddleDistal"),
    ("rightRingProximal", "RightRingProximal"),
    ("rightRingMedial", "RightRingIntermediate"),
    ("rightRingDistal", "RightRingDistal"),
    ("rightLittleProximal", "RightLittleProximal"),
    ("rightLittleMedial", "RightLittleIntermediate"),
    ("rightLittleDistal", "RightLittleDistal"),
];

/// The humanoid bone a Studio segment drives.
pub fn humanoid_of(segment: &str) -> Option<&'static str> {
    SEGMENTS
        .iter()
        .find(|(s, _)| *s == segment)
        .map(|(_, h)| *h)
}

/// Studio's world rotation `[x, y, z, w]` of the segment driving a humanoid
/// bone when the suit is in its T-pose (the Unity plugin's `SmartsuitTPose`,
/// which writes √½ as 0.707 and the thumbs' rotations to three decimals:
/// here exact where the value is, the thumbs normalised).
pub fn t_pose(bone: &str) -> Option<[f64; 4]> {
    const S: f64 = std::f64::consts::FRAC_1_SQRT_2;
    const H: f64 = 0.5;
    // cos and sin of 22.5°, times √½: the thumbs' outer joints.
    const C: f64 = 0.653_281_482_438_188_3;
    const D: f64 = 0.270_598_050_073_098_5;
    let left_finger = [-H, -H, H, -H];
    let right_finger = [H, -H, H, H];
    Some(match bone {
        "Hips" => [0.0, 0.0, 0.0, 1.0],
        "Spine" | "Chest" | "UpperChest" | "Neck" | "Head" => [0.0, 0.0, 1.0, 0.0],
        "LeftUpperLeg" | "LeftLowerLeg" => [0.0, S, 0.0, S],
        "RightUpperLeg" | "RightLowerLeg" => [0.0, -S, 0.0, S],
        "LeftFoot" | "LeftToes" => [0.0, S, -S, 0.0],
        "RightFoot" | "RightToes" => [0.0, -S, S, 0.0],
        "LeftShoulder" => [0.0, 0.0, S, -S],
        "RightShoulder" => [0.0, 0.0, S, S],
        "LeftUpperArm" | "LeftLowerArm" | "LeftHand" => left_finger,
        "RightUpperArm" | "RightLowerArm" | "RightHand" => right_finger,
        "LeftThumbProximal" => checked_normalise([-0.561, -0.701, 0.430, -0.092])?,
        "RightThumbProximal" => checked_normalise([0.561, -0.701, 0.430, 0.092])?,
        "LeftThumbIntermediate" | "LeftThumbDistal" => [-C, -C, D, -D],
        "RightThumbIntermediate" | "RightThumbDistal" => [C, -C, D, D],
        b if b.starts_with("Left") && is_finger(b) => left_finger,
        b if b.starts_with("Right") && is_finger(b) => right_finger,
        _ => return None,
    })
}

fn is_finger(bone: &str) -> bool {
    ["Index", "Middle", "Ring", "Little"]
        .iter()
        .any(|f| bone.contains(f))
}

fn inverse([x, y, z, w]: [f64; 4]) -> [f64; 4] {
    [-x, -y, -z, w]
}

/// The actor's body as humanoid bones: every mapped segment with a
/// rotation that is one (not zero, finite), converted as the module says.
/// `None` when no segment maps.
pub fn pose(actor: &Actor) -> Option<BodyPose> {
    // The humanoid's world rotation and Studio's world position per bone.
    let mut world: [Option<([f64; 4], [f64; 3])>; HUMANOID_BONES] = [None; HUMANOID_BONES];
    for Item {
        name,
        position,
        rotation,
    } in &actor.body
    {
        let Some(bone) = humanoid_of(name) else {
            continue;
        };
        let (Some(i), Some(t), Some(w)) =
            (bone_index(bone), t_pose(bone), checked_normalise(*rotation))
        else {
            continue;
        };
        if position.iter().all(|v| v.is_finite())
            && let Some(slot) = world.get_mut(i)
        {
            *slot = Some((mul(w, inverse(t)), *position));
        }
    }
    let mut out = BodyPose::default();
    for (i, slot) in out.bones.iter_mut().enumerate() {
        let Some(Some((m, p))) = world.get(i).copied() else {
            continue;
        };
        let mut parent = humanoid_parent(i);
        while let Some(at) = parent
            && world.get(at).copied().flatten().is_none()
        {
            parent = humanoid_parent(at);
        }
        let (rot, pos) = match parent.and_then(|at| world.get(at).copied().flatten()) {
            Some((pm, pp)) => {
                let back = inverse(pm);
                (
                    mul(back, m),
                    rotate(back, [p[0] - pp[0], p[1] - pp[1], p[2] - pp[2]]),
                )
            }
            None => (m, p),
        };
        *slot = Some(BonePose {
            pos: pos.map(f32s),
            rot: rot.map(f32s),
        });
    }
    (!out.is_empty()).then_some(out)
}

#[expect(
    clippy::cast_possible_truncation,
    reason = "poses are f32 on the wire to VMC"
)]
fn f32s(v: f64) -> f32 {
    v as f32
}

/// Rokoko's [`BodyReader`]: each datagram is a whole frame; its first actor
/// with a body (`hasBody` or `hasGloves`; a frame without `meta` counts as
/// having one) is the sender's body.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RokokoBody;

impl RokokoBody {
    pub(super) fn boxed() -> Box<dyn BodyReader> {
        Box::new(Self)
    }
}

impl BodyReader for RokokoBody {
    fn datagram(&mut self, datagram: &[u8]) -> Option<BodyPose> {
        let frame = super::parse(datagram).ok()?;
        frame
            .actors
            .iter()
            .filter(|a| a.meta.has_body.unwrap_or(true) || a.meta.has_gloves.unwrap_or(false))
            .find_map(pose)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vmc::HUMAN_BODY_BONES;

    #[test]
    fn every_segment_names_a_humanoid_bone_with_a_t_pose() {
        for (segment, bone) in SEGMENTS {
            assert!(bone_index(bone).is_some(), "{segment} → {bone}");
            let t = t_pose(bone).unwrap();
            let n: f64 = t.iter().map(|v| v * v).sum();
            assert!((n - 1.0).abs() < 1e-12, "{bone}: {n}");
        }
        assert_eq!(t_pose("Chest"), t_pose("UpperChest"));
        assert_eq!(t_pose("Jaw"), None);
        assert!(HUMAN_BODY_BONES.contains(&"UpperChest"));
    }
}
