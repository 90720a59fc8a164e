//! mocopi's 27 joints retargeted onto Unity HumanBodyBones, in Unity's
//! coordinates, for VMC.
//!
//! A humanoid bone takes the local rotation of its mocopi joint composed,
//! root-first, with those of every unmapped joint between it and the nearest
//! mapped ancestor, so each mapped bone ends with the same world orientation
//! as its joint. Coordinates: mocopi is right-handed (+Y up, +Z forward, +X
//! the performer's left); Unity mirrors X: position (x, y, z) → (−x, y, z),
//! rotation (x, y, z, w) → (−x, y, z, −w). A mirror maps products to products,
//! so composing before or after converting gives the same result.

use super::quat_mul as mul;
use crate::smf::{BONE_COUNT, BONES};

/// Humanoid bone → mocopi joint id.
pub type Mapping = [(&'static str, usize); 22];

/// Sony's Unity plugin: Spine torso_3, Chest torso_5, UpperChest torso_6, Neck neck_1.
pub const SONY_MAPPING: Mapping = limbs("Spine", 3, "Chest", 5, "UpperChest", 6, 8);

/// The animu-sphere VRM mapping: Spine torso_2, Chest torso_4, UpperChest torso_7.
pub const ANIMU_SPHERE_MAPPING: Mapping = limbs("Spine", 2, "Chest", 4, "UpperChest", 7, 8);

const fn limbs(
    spine: &'static str,
    s: usize,
    chest: &'static str,
    c: usize,
    upper: &'static str,
    u: usize,
    neck: usize,
) -> Mapping {
    [
        ("Hips", 0),
        (spine, s),
        (chest, c),
        (upper, u),
        ("Neck", neck),
        ("Head", 10),
        ("LeftShoulder", 11),
        ("LeftUpperArm", 12),
        ("LeftLowerArm", 13),
        ("LeftHand", 14),
        ("RightShoulder", 15),
        ("RightUpperArm", 16),
        ("RightLowerArm", 17),
        ("RightHand", 18),
        ("LeftUpperLeg", 19),
        ("LeftLowerLeg", 20),
        ("LeftFoot", 21),
        ("LeftToes", 22),
        ("RightUpperLeg", 23),
        ("RightLowerLeg", 24),
        ("RightFoot", 25),
        ("RightToes", 26),
    ]
}

/// A mocopi position in Unity's frame.
pub fn pos_to_unity([x, y, z]: [f32; 3]) -> [f32; 3] {
    [-x, y, z]
}

/// A mocopi rotation (x, y, z, w) in Unity's frame.
pub fn rot_to_unity([x, y, z, w]: [f32; 4]) -> [f32; 4] {
    [-x, y, z, -w]
}

fn wide(q: [f32; 4]) -> [f64; 4] {
    q.map(f64::from)
}

/// Retargets with a mapping over a skeleton's parent table.
#[derive(Clone, Debug)]
pub struct Retarget {
    /// (humanoid bone, joint, the joints whose rotations compose into it, root-first).
    bones: Vec<(&'static str, usize, Vec<usize>)>,
}

impl Retarget {
    /// `parents[j]` is joint j's parent (−1 or out of range for the root), as
    /// the skeleton packet gives it. A humanoid name given twice keeps its
    /// first entry. An unmapped joint shared by several mapped children (as
    /// torso_7 is by Neck and both shoulders) is composed into each of them.
    pub fn new(mapping: &Mapping, parents: &[i16; BONE_COUNT]) -> Self {
        let mut seen: Vec<&str> = Vec::new();
        let mapped: Vec<usize> = mapping.iter().map(|(_, j)| *j).collect();
        let mut bones = Vec::new();
        for (name, joint) in mapping {
            if seen.contains(name) || *joint >= BONE_COUNT {
                continue;
            }
            seen.push(name);
            // Walk up to the nearest mapped ancestor; bounded so a cyclic
            // parent table cannot loop.
            let mut chain = vec![*joint];
            let mut j = *joint;
            for _ in 0..BONE_COUNT {
                let Some(p) = parents
                    .get(j)
                    .and_then(|p| usize::try_from(*p).ok())
                    .filter(|p| *p < BONE_COUNT)
                else {
                    break;
                };
                if mapped.contains(&p) {
                    break;
                }
                chain.push(p);
                j = p;
            }
            chain.reverse();
            bones.push((*name, *joint, chain));
        }
        Self { bones }
    }

    /// Humanoid local rotations in Unity's frame from mocopi's local
    /// rotations (wire frame, x y z w), one per mapped bone.
    pub fn rotations(&self, local: &[[f32; 4]; BONE_COUNT]) -> Vec<(&'static str, [f32; 4])> {
        self.bones
            .iter()
            .map(|(name, _, chain)| {
                let q = chain.iter().fold([0.0, 0.0, 0.0, 1.0], |acc, j| {
                    mul(
                        acc,
                        wide(local.get(*j).copied().unwrap_or([0.0, 0.0, 0.0, 1.0])),
                    )
                });
                let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
                let q = if n > 0.0 {
                    q.map(|v| v / n)
                } else {
                    [0.0, 0.0, 0.0, 1.0]
                };
                (*name, rot_to_unity(q.map(|v| v as f32)))
            })
            .collect()
    }
}

/// The parent table of Sony's published skeleton.
pub fn default_parents() -> [i16; BONE_COUNT] {
    BONES.map(|b| b.parent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    const ID: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

    fn about(axis: [f32; 3], deg: f32) -> [f32; 4] {
        let (s, c) = (deg.to_radians() / 2.0).sin_cos();
        [axis[0] * s, axis[1] * s, axis[2] * s, c]
    }

    /// Same rotation (q or −q) to `eps`.
    fn same(a: [f32; 4], b: [f32; 4], eps: f32) -> bool {
        let d: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        (d.abs() - 1.0).abs() < eps
    }

    fn sony() -> Retarget {
        Retarget::new(&SONY_MAPPING, &default_parents())
    }

    #[test]
    fn rest_pose_gives_identity_everywhere() {
        let out = sony().rotations(&[ID; BONE_COUNT]);
        assert_eq!(out.len(), 22);
        assert!(out.iter().all(|(_, q)| same(*q, ID, 1e-7)));
    }

    #[test]
    fn one_joint_moves_one_bone_and_left_stays_left() {
        let mut pose = [ID; BONE_COUNT];
        pose[12] = about([0.0, 0.0, 1.0], 80.0); // l_up_arm raised
        let out = sony().rotations(&pose);
        let moved: Vec<&str> = out
            .iter()
            .filter(|(_, q)| !same(*q, ID, 1e-7))
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(moved, ["LeftUpperArm"]);
    }

    #[test]
    fn unmapped_torso_joints_compose_into_the_next_mapped_bone() {
        let mut pose = [ID; BONE_COUNT];
        pose[1] = about([1.0, 0.0, 0.0], 10.0);
        pose[2] = about([0.0, 1.0, 0.0], 20.0);
        pose[3] = about([0.0, 0.0, 1.0], 30.0);
        pose[7] = about([1.0, 0.0, 0.0], 40.0);
        pose[9] = about([0.0, 1.0, 0.0], 50.0);
        let out = sony().rotations(&pose);
        let get = |n: &str| out.iter().find(|(b, _)| *b == n).map(|(_, q)| *q).unwrap();
        // Spine = torso_1 · torso_2 · torso_3, by hand, then mirrored.
        let spine = mul(mul(wide(pose[1]), wide(pose[2])), wide(pose[3]));
        assert!(same(
            get("Spine"),
            rot_to_unity(spine.map(|v| v as f32)),
            1e-6
        ));
        // Neck = torso_7 · neck_1 (identity); Head = neck_2 · head (identity).
        assert!(same(get("Neck"), rot_to_unity(pose[7]), 1e-6));
        assert!(same(get("Head"), rot_to_unity(pose[9]), 1e-6));
        // The shoulders hang off torso_7 too: it belongs in their rotations
        // as well, or their world orientation would lose it.
        assert!(same(get("LeftShoulder"), rot_to_unity(pose[7]), 1e-6));
        assert!(same(get("RightShoulder"), rot_to_unity(pose[7]), 1e-6));
    }

    /// World rotation of mocopi joint `j` by forward kinematics.
    fn world(local: &[[f32; 4]; BONE_COUNT], j: usize) -> [f64; 4] {
        let mut chain = vec![j];
        let mut k = j;
        while let Ok(p) = usize::try_from(BONES[k].parent) {
            chain.push(p);
            k = p;
        }
        chain
            .iter()
            .rev()
            .fold([0.0, 0.0, 0.0, 1.0], |acc, i| mul(acc, wide(local[*i])))
    }

    #[test]
    fn world_rotations_match_for_random_poses() {
        let mut rng = Rng(0x0b0d_1e55);
        let mut unit = || (rng.next() as f64 / u64::MAX as f64) * 2.0 - 1.0;
        for mapping in [SONY_MAPPING, ANIMU_SPHERE_MAPPING] {
            let r = Retarget::new(&mapping, &default_parents());
            for _ in 0..200 {
                let mut pose = [ID; BONE_COUNT];
                for q in &mut pose {
                    let v = [unit(), unit(), unit(), unit()];
                    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
                    *q = v.map(|x| (x / n) as f32);
                }
                let out = r.rotations(&pose);
                // Humanoid FK: each bone's parent is its nearest mapped ancestor.
                for (name, joint) in &mapping {
                    let mut q = [0.0, 0.0, 0.0, 1.0];
                    let mut chain = vec![*joint];
                    let mut k = *joint;
                    while let Ok(p) = usize::try_from(BONES[k].parent) {
                        if mapping.iter().any(|(_, j)| *j == p) {
                            chain.push(p);
                        }
                        k = p;
                    }
                    for j in chain.iter().rev() {
                        let b = mapping
                            .iter()
                            .find(|(_, m)| m == j)
                            .map(|(b, _)| *b)
                            .unwrap();
                        let local = out.iter().find(|(n, _)| *n == b).map(|(_, q)| *q).unwrap();
                        q = mul(q, wide(local));
                    }
                    let expect = rot_to_unity(world(&pose, *joint).map(|v| v as f32));
                    assert!(same(q.map(|v| v as f32), expect, 1e-5), "{name}");
                }
            }
        }
    }

    #[test]
    fn handedness_conversion_round_trips() {
        let q = [0.1, -0.2, 0.3, 0.927_362];
        assert_eq!(rot_to_unity(rot_to_unity(q)), q);
        assert_eq!(pos_to_unity(pos_to_unity([1.0, 2.0, 3.0])), [1.0, 2.0, 3.0]);
        // A turn to the performer's left (+X) about Y stays a turn about Y.
        let yaw = rot_to_unity(about([0.0, 1.0, 0.0], 30.0));
        assert!(same(yaw, about([0.0, -1.0, 0.0], 30.0), 1e-6));
    }
}
