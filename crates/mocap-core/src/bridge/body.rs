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
//!
//! [`BodyBridge`] is the stateful part: it waits for a skeleton packet, keeps
//! its parent table and rest offsets, and turns each frame into one VMC frame
//! (Root/Pos, Bone/Pos per humanoid bone, OK, T).

use crate::quat::{mul, normalise, rotate, wide};
use crate::smf::{BONE_COUNT, BONES, Body, Frame, Skeleton, bone_id, parse};
use crate::vmc::{HUMAN_BODY_BONES, Message};

use super::pose::{BodyPose, BodyReader, BonePose};

/// Humanoid bone → mocopi joint id.
pub type Mapping = [(&'static str, usize); 22];

/// A mapping of any length (from `--mapping FILE`).
pub type MappingTable = Vec<(&'static str, usize)>;

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
    pub fn new(mapping: &[(&'static str, usize)], parents: &[i16; BONE_COUNT]) -> Self {
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

    /// The humanoid bones it gives, in the mapping's order.
    pub fn names(&self) -> Vec<&'static str> {
        self.bones.iter().map(|(name, _, _)| *name).collect()
    }

    /// Humanoid local rotations in Unity's frame from mocopi's local
    /// rotations (wire frame, x y z w), one per mapped bone.
    pub fn rotations(&self, local: &[[f32; 4]; BONE_COUNT]) -> Vec<(&'static str, [f32; 4])> {
        self.pose(local, &[[0.0; 3]; BONE_COUNT])
            .into_iter()
            .map(|(name, _, rot)| (name, rot))
            .collect()
    }

    /// Humanoid local poses in Unity's frame: (bone, position, rotation).
    /// The position is the bone's offset from its humanoid parent, i.e. the
    /// offsets of the skipped joints carried through their rotations, so the
    /// retargeted skeleton keeps mocopi's geometry; for Hips it is the root
    /// joint's absolute position.
    pub fn pose(
        &self,
        rot: &[[f32; 4]; BONE_COUNT],
        pos: &[[f32; 3]; BONE_COUNT],
    ) -> Vec<(&'static str, [f32; 3], [f32; 4])> {
        self.bones
            .iter()
            .map(|(name, _, chain)| {
                let mut q = [0.0, 0.0, 0.0, 1.0];
                let mut p = [0.0f64; 3];
                for j in chain {
                    let offset = pos.get(*j).copied().unwrap_or([0.0; 3]).map(f64::from);
                    let r = rotate(q, offset);
                    for (a, b) in p.iter_mut().zip(r) {
                        *a += b;
                    }
                    q = mul(
                        q,
                        wide(rot.get(*j).copied().unwrap_or([0.0, 0.0, 0.0, 1.0])),
                    );
                }
                let q = normalise(q);
                (
                    *name,
                    pos_to_unity(p.map(|v| v as f32)),
                    rot_to_unity(q.map(|v| v as f32)),
                )
            })
            .collect()
    }
}

/// The parent table of Sony's published skeleton.
pub fn default_parents() -> [i16; BONE_COUNT] {
    BONES.map(|b| b.parent)
}

/// Reads a mapping file: a JSON object from HumanBodyBones names to mocopi
/// joints, each given by name (`"torso_3"`) or id (`3`), e.g.
/// `{"Hips": "root", "Spine": 3, "Head": "head"}`. Bones left out are not
/// sent; their joints compose into their mapped descendants.
///
/// # Errors
/// Not JSON, not an object, an unknown bone or joint, an empty mapping.
pub fn parse_mapping(text: &str) -> Result<MappingTable, MappingError> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| MappingError::NotJson(e.into()))?;
    let object = value.as_object().ok_or(MappingError::NotAnObject)?;
    let mut out = Vec::new();
    for (bone, joint) in object {
        let name = HUMAN_BODY_BONES
            .iter()
            .find(|b| **b == bone.as_str())
            .ok_or_else(|| MappingError::UnknownBone(bone.clone()))?;
        let id = match joint {
            serde_json::Value::String(j) => bone_id(j).map(usize::from),
            serde_json::Value::Number(n) => n
                .as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n < BONE_COUNT),
            _ => None,
        }
        .ok_or_else(|| MappingError::UnknownJoint {
            bone: bone.clone(),
            joint: joint.to_string(),
        })?;
        out.push((*name, id));
    }
    if out.is_empty() {
        return Err(MappingError::Empty);
    }
    // HumanBodyBones order, Hips first, as senders write bones.
    out.sort_by_key(|(b, _)| crate::vmc::bone_index(b));
    Ok(out)
}

/// A mapping file that cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum MappingError {
    /// The text is not JSON.
    NotJson(crate::json::JsonError),
    /// The JSON is not an object.
    NotAnObject,
    /// A key that is not a HumanBodyBones name.
    UnknownBone(String),
    /// A value that names no mocopi joint (as JSON text).
    UnknownJoint {
        /// The bone it was given for.
        bone: String,
        /// The value.
        joint: String,
    },
    /// No bones at all.
    Empty,
}

impl std::fmt::Display for MappingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotJson(e) => write!(f, "{e}"),
            Self::NotAnObject => {
                f.write_str("expected a JSON object of HumanBodyBones name → mocopi joint")
            }
            Self::UnknownBone(b) => write!(f, "{b:?} is not a HumanBodyBones name"),
            Self::UnknownJoint { bone, joint } => write!(
                f,
                "{bone}: {joint} is not a mocopi joint (a name like \"torso_3\" or an id 0–26)"
            ),
            Self::Empty => f.write_str("the mapping is empty"),
        }
    }
}

/// A cause is shown by `Display`, so it is not returned again by
/// `source()` (an error chain would print it twice).
impl std::error::Error for MappingError {}

/// What a skeleton packet did to the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkeletonEvent {
    /// The first skeleton: frames are sent from now on.
    First,
    /// A different hierarchy or rest pose: the retargeting was rebuilt.
    Changed,
    /// The same skeleton again (the app repeats it every few seconds).
    Same,
}

/// How the body bridge maps and places the avatar.
#[derive(Clone, Debug)]
pub struct BodyOptions {
    /// Humanoid bone → mocopi joint.
    pub mapping: MappingTable,
    /// Hips follow the root joint's position; otherwise they stay at the
    /// skeleton's rest position (the avatar turns and bends in place).
    pub root_motion: bool,
}

impl Default for BodyOptions {
    fn default() -> Self {
        Self {
            mapping: SONY_MAPPING.to_vec(),
            root_motion: true,
        }
    }
}

/// mocopi packets in, VMC frames out.
#[derive(Clone, Debug)]
pub struct BodyBridge {
    opts: BodyOptions,
    skeleton: Option<([i16; BONE_COUNT], [[f32; 3]; BONE_COUNT])>,
    retarget: Option<Retarget>,
}

impl BodyBridge {
    /// A bridge that waits for a skeleton.
    pub fn new(opts: BodyOptions) -> Self {
        Self {
            opts,
            skeleton: None,
            retarget: None,
        }
    }

    /// Whether a skeleton has arrived (frames are dropped until then).
    pub fn has_skeleton(&self) -> bool {
        self.retarget.is_some()
    }

    /// Takes in a skeleton packet. Joints it does not define keep Sony's
    /// published parent and a zero rest offset.
    pub fn skeleton(&mut self, s: &Skeleton<'_>) -> SkeletonEvent {
        let mut parents = default_parents();
        let mut rest = [[0.0f32; 3]; BONE_COUNT];
        for b in s.bones() {
            let i = usize::from(b.id);
            if let (Some(p), Some(r)) = (parents.get_mut(i), rest.get_mut(i)) {
                *p = b.parent;
                *r = b.pos;
            }
        }
        let event = match &self.skeleton {
            None => SkeletonEvent::First,
            Some(old) if *old == (parents, rest) => return SkeletonEvent::Same,
            Some(_) => SkeletonEvent::Changed,
        };
        self.retarget = Some(Retarget::new(&self.opts.mapping, &parents));
        self.skeleton = Some((parents, rest));
        event
    }

    /// One frame as VMC messages: Root/Pos (at the origin: the motion is on
    /// Hips), Bone/Pos for every mapped bone in the mapping's order, OK, and
    /// T = `time` seconds. `None` until a skeleton has arrived.
    pub fn frame(&self, f: &Frame<'_>, time: f32) -> Option<Vec<Message>> {
        let pose = self.pose(f)?;
        let order = self.retarget.as_ref().map(Retarget::names)?;
        Some(pose.to_vmc(Some(&order), time))
    }

    /// One frame as a [`BodyPose`]: the root at the origin (the motion is
    /// on Hips) and every mapped bone. `None` until a skeleton has arrived.
    /// Joints missing from the frame keep their rest offset and an identity
    /// rotation.
    pub fn pose(&self, f: &Frame<'_>) -> Option<BodyPose> {
        let (retarget, (_, rest)) = self.retarget.as_ref().zip(self.skeleton.as_ref())?;
        let mut rot = [[0.0, 0.0, 0.0, 1.0]; BONE_COUNT];
        let mut pos = *rest;
        for b in f.bones() {
            let i = usize::from(b.id);
            if let (Some(r), Some(p)) = (rot.get_mut(i), pos.get_mut(i)) {
                *r = b.rot;
                *p = b.pos;
            }
        }
        if !self.opts.root_motion
            && let (Some(p), Some(r)) = (pos.get_mut(0), rest.first())
        {
            *p = *r;
        }
        let mut out = BodyPose {
            root: Some(BonePose {
                pos: [0.0; 3],
                rot: [0.0, 0.0, 0.0, 1.0],
            }),
            ..BodyPose::default()
        };
        for (name, pos, rot) in retarget.pose(&rot, &pos) {
            out.set(name, BonePose { pos, rot });
        }
        Some(out)
    }
}

/// mocopi's [`BodyReader`]: skeleton packets rebuild the retargeting (Sony's
/// mapping, root motion on), frames come out as poses.
#[derive(Clone, Debug)]
pub(crate) struct MocopiBody(BodyBridge);

impl MocopiBody {
    pub(crate) fn boxed() -> Box<dyn BodyReader> {
        Box::new(Self(BodyBridge::new(BodyOptions::default())))
    }
}

impl BodyReader for MocopiBody {
    fn datagram(&mut self, datagram: &[u8]) -> Option<BodyPose> {
        let packet = parse(datagram).ok()?;
        match &packet.body {
            Body::Skeleton(s) => {
                self.0.skeleton(s);
                None
            }
            Body::Frame(f) => self.0.pose(f),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mocap_testutil::Rng;

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

    const SEED: &[u8] = include_bytes!("../../../../captures/mocopi/seed-frame-1575.bin");
    const SKDF: &[u8] = include_bytes!("../../../../captures/mocopi/t-34400/sample_skdf.bin");

    fn frame_of(bytes: &[u8]) -> Frame<'_> {
        match parse(bytes).unwrap().body {
            Body::Frame(f) => f,
            other => panic!("not a frame: {}", other.kind()),
        }
    }

    fn skeleton_of(bytes: &[u8]) -> Skeleton<'_> {
        match parse(bytes).unwrap().body {
            Body::Skeleton(s) => s,
            other => panic!("not a skeleton: {}", other.kind()),
        }
    }

    fn bone<'m>(out: &'m [Message], name: &str) -> (&'m [f32; 3], &'m [f32; 4]) {
        out.iter()
            .find_map(|m| match m {
                Message::BonePos { name: n, pos, rot } if n == name => Some((pos, rot)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {name}"))
    }

    fn close3(a: &[f32; 3], b: [f32; 3]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 2e-6)
    }

    /// The seed frame (fnum 4977) against values computed by hand from its
    /// decoded bones, with rotation matrices for the offsets (an independent
    /// route from the quaternion sandwich the bridge uses).
    #[test]
    fn seed_frame_matches_hand_computed_values() {
        let mut bridge = BodyBridge::new(BodyOptions::default());
        let seed = frame_of(SEED);
        assert!(bridge.frame(&seed, 0.0).is_none(), "sent before a skeleton");
        assert_eq!(bridge.skeleton(&skeleton_of(SKDF)), SkeletonEvent::First);
        let out = bridge.frame(&seed, 1.5).unwrap();
        // Hips: the root joint mirrored, at its absolute position.
        let (p, q) = bone(&out, "Hips");
        assert!(close3(p, [0.523_354_2, 0.717_374_6, -0.746_616]));
        assert!(same(
            *q,
            [0.204_347_4, 0.098_602_7, 0.062_336_9, -0.971_922_7],
            1e-6
        ));
        // Spine = torso_1 · torso_2 · torso_3; its offset carries torso_1/2's.
        let (p, q) = bone(&out, "Spine");
        assert!(close3(p, [-0.003_869_1, 0.158_729_8, 0.019_302_5]));
        assert!(same(
            *q,
            [-0.162_761_2, -0.016_873_8, -0.028_176_1, -0.986_118_7],
            1e-6
        ));
        // Neck = torso_7 · neck_1; Head = neck_2 · head.
        let (p, q) = bone(&out, "Neck");
        assert!(close3(p, [0.000_034_5, 0.148_937_5, 0.022_309_7]));
        assert!(same(
            *q,
            [-0.041_985_6, 0.042_259_7, 0.013_650_9, -0.998_130_7],
            1e-6
        ));
        let (p, q) = bone(&out, "Head");
        assert!(close3(p, [0.001_077_8, 0.093_724_4, 0.011_454_2]));
        assert!(same(
            *q,
            [-0.034_226_4, 0.033_835_5, 0.030_612_7, -0.998_372],
            1e-6
        ));
        // l_up_arm alone, mirrored: the performer's left arm stays left.
        let (p, q) = bone(&out, "LeftUpperArm");
        assert!(close3(p, [-0.125_803, 0.031_555_9, -0.031_742_5]));
        assert!(same(
            *q,
            [-0.105_545_5, -0.490_017_5, -0.523_749, -0.688_788_8],
            1e-6
        ));
        // Frame shape: Root/Pos first, 22 bones, OK and T last.
        assert!(matches!(out.first(), Some(Message::RootPos { .. })));
        assert_eq!(
            out.iter()
                .filter(|m| matches!(m, Message::BonePos { .. }))
                .count(),
            22
        );
        assert!(matches!(
            out.get(out.len() - 2),
            Some(Message::Available { loaded: 1, .. })
        ));
        assert_eq!(out.last(), Some(&Message::Time(1.5)));
    }

    #[test]
    fn no_root_motion_pins_hips_at_the_rest_position() {
        let mut bridge = BodyBridge::new(BodyOptions {
            root_motion: false,
            ..BodyOptions::default()
        });
        let skel = skeleton_of(SKDF);
        bridge.skeleton(&skel);
        let rest = skel.bones().find(|b| b.id == 0).unwrap().pos;
        let out = bridge.frame(&frame_of(SEED), 0.0).unwrap();
        let (p, q) = bone(&out, "Hips");
        assert_eq!(*p, pos_to_unity(rest));
        // The rotation still follows the performer.
        assert!(!same(*q, ID, 1e-3));
    }

    #[test]
    fn skeleton_repeats_are_quiet_and_changes_rebuild() {
        let mut bridge = BodyBridge::new(BodyOptions::default());
        assert!(!bridge.has_skeleton());
        assert_eq!(bridge.skeleton(&skeleton_of(SKDF)), SkeletonEvent::First);
        assert_eq!(bridge.skeleton(&skeleton_of(SKDF)), SkeletonEvent::Same);
        // A re-parented joint (torso_7 hanging off torso_5) is a new skeleton,
        // and Neck's rotation then composes torso_7 only (torso_6 is mapped).
        let mut repr = crate::smf::PacketRepr::parse(&parse(SKDF).unwrap());
        if let crate::smf::BodyRepr::Skeleton(bones) = &mut repr.body {
            bones.iter_mut().find(|b| b.id == 7).unwrap().parent = 5;
        } else {
            panic!("not a skeleton");
        }
        let bytes = repr.to_bytes();
        assert_eq!(
            bridge.skeleton(&skeleton_of(&bytes)),
            SkeletonEvent::Changed
        );
        assert!(bridge.has_skeleton());
    }

    #[test]
    fn world_positions_match_for_random_poses() {
        let mut rng = Rng(0x5eed_b0d1);
        let mut unit = || (rng.next() as f64 / u64::MAX as f64) * 2.0 - 1.0;
        let r = sony();
        for _ in 0..100 {
            let mut rot = [ID; BONE_COUNT];
            let mut pos = [[0.0f32; 3]; BONE_COUNT];
            for (q, p) in rot.iter_mut().zip(&mut pos) {
                let v = [unit(), unit(), unit(), unit()];
                let n = v.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
                *q = v.map(|x| (x / n) as f32);
                *p = [unit() as f32, unit() as f32, unit() as f32];
            }
            let out = r.pose(&rot, &pos);
            // World position of mocopi joint j and of humanoid bone b by FK.
            let world = |j: usize| {
                let mut chain = vec![j];
                let mut k = j;
                while let Ok(p) = usize::try_from(BONES[k].parent) {
                    chain.push(p);
                    k = p;
                }
                let (mut q, mut p) = ([0.0, 0.0, 0.0, 1.0], [0.0f64; 3]);
                for i in chain.iter().rev() {
                    let o = rotate(q, pos[*i].map(f64::from));
                    p = [p[0] + o[0], p[1] + o[1], p[2] + o[2]];
                    q = mul(q, wide(rot[*i]));
                }
                p
            };
            for (name, joint) in &SONY_MAPPING {
                let mut chain = vec![*joint];
                let mut k = *joint;
                while let Ok(p) = usize::try_from(BONES[k].parent) {
                    if SONY_MAPPING.iter().any(|(_, j)| *j == p) {
                        chain.push(p);
                    }
                    k = p;
                }
                let (mut q, mut p) = ([0.0, 0.0, 0.0, 1.0], [0.0f64; 3]);
                for j in chain.iter().rev() {
                    let b = SONY_MAPPING.iter().find(|(_, m)| m == j).unwrap().0;
                    let (_, lp, lq) = out.iter().find(|(n, _, _)| *n == b).unwrap();
                    let o = rotate(q, lp.map(f64::from));
                    p = [p[0] + o[0], p[1] + o[1], p[2] + o[2]];
                    q = mul(q, wide(*lq));
                }
                let expect = pos_to_unity(world(*joint).map(|v| v as f32));
                let got = p.map(|v| v as f32);
                assert!(
                    got.iter().zip(expect).all(|(a, b)| (a - b).abs() < 1e-4),
                    "{name}: {got:?} vs {expect:?}"
                );
            }
        }
    }

    #[test]
    fn mapping_files_parse_by_name_or_id_and_refuse_nonsense() {
        let m = parse_mapping(r#"{"Hips": "root", "Spine": 3, "Head": "head"}"#).unwrap();
        assert_eq!(m, [("Hips", 0), ("Spine", 3), ("Head", 10)]);
        let kind = |text: &str| match parse_mapping(text) {
            Ok(_) => "ok".to_owned(),
            Err(MappingError::NotJson(_)) => "json".to_owned(),
            Err(MappingError::UnknownJoint { bone, joint }) => format!("joint {bone} {joint}"),
            Err(e) => e.to_string(),
        };
        for (bad, want) in [
            (
                "[1, 2]",
                "expected a JSON object of HumanBodyBones name → mocopi joint",
            ),
            ("{}", "the mapping is empty"),
            (r#"{"Hip": 0}"#, "\"Hip\" is not a HumanBodyBones name"),
            (r#"{"Hips": "toes"}"#, "joint Hips \"toes\""),
            (r#"{"Hips": 27}"#, "joint Hips 27"),
            (r#"{"Hips": -1}"#, "joint Hips -1"),
            (r#"{"Hips": 1.5}"#, "joint Hips 1.5"),
            ("not json", "json"),
        ] {
            assert_eq!(kind(bad), want, "{bad}");
        }
        // The built-in tables read back from their JSON form.
        let json = serde_json::Value::Object(
            SONY_MAPPING
                .iter()
                .map(|(b, j)| ((*b).to_owned(), serde_json::json!(BONES[*j].name)))
                .collect(),
        );
        let mut back = parse_mapping(&json.to_string()).unwrap();
        let mut want = SONY_MAPPING.to_vec();
        back.sort_unstable();
        want.sort_unstable();
        assert_eq!(back, want);
    }

    /// Damaged skeletons and frames (every byte flipped, every prefix) that
    /// still parse go through the bridge without a panic and give unit
    /// rotations or nothing.
    #[test]
    fn damaged_packets_never_panic_the_bridge() {
        let mut bridge = BodyBridge::new(BodyOptions::default());
        bridge.skeleton(&skeleton_of(SKDF));
        for base in [SKDF, SEED] {
            for i in 0..=base.len() {
                let mut variants = vec![base[..i].to_vec()];
                if let Some(b) = base.get(i) {
                    for bit in [0x01, 0x80, 0xff] {
                        let mut v = base.to_vec();
                        v[i] = b ^ bit;
                        variants.push(v);
                    }
                }
                for v in variants {
                    let Ok(p) = parse(&v) else { continue };
                    match p.body {
                        Body::Skeleton(s) => {
                            bridge.skeleton(&s);
                        }
                        Body::Frame(f) => {
                            for m in bridge.frame(&f, 0.0).unwrap() {
                                if let Message::BonePos { rot, .. } = m {
                                    let n: f32 = rot.iter().map(|v| v * v).sum();
                                    assert!((n - 1.0).abs() < 1e-4, "{rot:?}");
                                }
                            }
                        }
                        Body::Sensor(_) => {}
                    }
                }
            }
        }
    }
}
