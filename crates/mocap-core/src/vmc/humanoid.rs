//! A VMC stream as BVH frames: the humanoid the stream shows, with no avatar
//! file. Pure — messages and arrival times in (`handle_*(now, input)`),
//! joints and frame values out ([`Recorder::poll_frame`]); the tools own the
//! file ([`crate::bvh`] makes the text).
//!
//! - Skeleton: `Root` (from `/VMC/Ext/Root/Pos`, identity when the sender has
//!   none) and the HumanBodyBones present in the first frame that has `Hips`,
//!   each under its nearest present humanoid ancestor (Unity's optional
//!   bones — UpperChest, Neck, Shoulders, Toes, Eyes, Jaw, fingers — may be
//!   missing). Offsets are that frame's local positions.
//! - A frame is what arrives up to the sender's frame end: `T` if it sends
//!   `T`, else OK, else Blend/Apply (the strongest it has sent, as the mixer
//!   ranks them — the reference sender puts Root/Pos after Apply). The first
//!   frame teaches which one, so it is not recorded. A bone a frame lacks
//!   holds its last value.
//! - Axes: Unity's left-handed Y-up frame mirrored on X into BVH's
//!   right-handed one ([`unity_to_bvh_pos`], [`unity_to_bvh_rot`], the
//!   inverse of the mocopi bridge's), metres × 100 = centimetres.
//! - Frame time: the sender's `T` span over the frames when it sends `T`,
//!   else the arrival span, divided by the frame intervals — so a take lasts
//!   as long as the stream did even when datagrams were lost (VMC has no frame
//!   numbers to hold lost frames by).

use std::time::Duration;

use crate::bvh::Joint;

use super::{HUMAN_BODY_BONES, Message, bone_index};

/// BVH units per VMC metre.
pub const CENTIMETRES: f64 = 100.0;

/// A Unity (left-handed) position as BVH (right-handed): X mirrored.
pub fn unity_to_bvh_pos([x, y, z]: [f32; 3]) -> [f64; 3] {
    [-f64::from(x), f64::from(y), f64::from(z)]
}

/// A Unity rotation `[x, y, z, w]` as BVH: mirrored on X, which negates the
/// axis parts along Y and Z (written as `[-x, y, z, -w]`, the same rotation).
pub fn unity_to_bvh_rot([x, y, z, w]: [f32; 4]) -> [f64; 4] {
    [-f64::from(x), f64::from(y), f64::from(z), -f64::from(w)]
}

/// Each HumanBodyBones' humanoid parent (by name), `None` for Hips.
const PARENTS: [(&str, &str); 54] = [
    ("LeftUpperLeg", "Hips"),
    ("RightUpperLeg", "Hips"),
    ("LeftLowerLeg", "LeftUpperLeg"),
    ("RightLowerLeg", "RightUpperLeg"),
    ("LeftFoot", "LeftLowerLeg"),
    ("RightFoot", "RightLowerLeg"),
    ("Spine", "Hips"),
    ("Chest", "Spine"),
    ("Neck", "UpperChest"),
    ("Head", "Neck"),
    ("LeftShoulder", "UpperChest"),
    ("RightShoulder", "UpperChest"),
    ("LeftUpperArm", "LeftShoulder"),
    ("RightUpperArm", "RightShoulder"),
    ("LeftLowerArm", "LeftUpperArm"),
    ("RightLowerArm", "RightUpperArm"),
    ("LeftHand", "LeftLowerArm"),
    ("RightHand", "RightLowerArm"),
    ("LeftToes", "LeftFoot"),
    ("RightToes", "RightFoot"),
    ("LeftEye", "Head"),
    ("RightEye", "Head"),
    ("Jaw", "Head"),
    ("LeftThumbProximal", "LeftHand"),
    ("LeftThumbIntermediate", "LeftThumbProximal"),
    ("LeftThumbDistal", "LeftThumbIntermediate"),
    ("LeftIndexProximal", "LeftHand"),
    ("LeftIndexIntermediate", "LeftIndexProximal"),
    ("LeftIndexDistal", "LeftIndexIntermediate"),
    ("LeftMiddleProximal", "LeftHand"),
    ("LeftMiddleIntermediate", "LeftMiddleProximal"),
    ("LeftMiddleDistal", "LeftMiddleIntermediate"),
    ("LeftRingProximal", "LeftHand"),
    ("LeftRingIntermediate", "LeftRingProximal"),
    ("LeftRingDistal", "LeftRingIntermediate"),
    ("LeftLittleProximal", "LeftHand"),
    ("LeftLittleIntermediate", "LeftLittleProximal"),
    ("LeftLittleDistal", "LeftLittleIntermediate"),
    ("RightThumbProximal", "RightHand"),
    ("RightThumbIntermediate", "RightThumbProximal"),
    ("RightThumbDistal", "RightThumbIntermediate"),
    ("RightIndexProximal", "RightHand"),
    ("RightIndexIntermediate", "RightIndexProximal"),
    ("RightIndexDistal", "RightIndexIntermediate"),
    ("RightMiddleProximal", "RightHand"),
    ("RightMiddleIntermediate", "RightMiddleProximal"),
    ("RightMiddleDistal", "RightMiddleIntermediate"),
    ("RightRingProximal", "RightHand"),
    ("RightRingIntermediate", "RightRingProximal"),
    ("RightRingDistal", "RightRingIntermediate"),
    ("RightLittleProximal", "RightHand"),
    ("RightLittleIntermediate", "RightLittleProximal"),
    ("RightLittleDistal", "RightLittleIntermediate"),
    ("UpperChest", "Chest"),
];

/// The humanoid parent of a HumanBodyBones index (`None` for Hips).
pub fn humanoid_parent(bone: usize) -> Option<usize> {
    let name = HUMAN_BODY_BONES.get(bone)?;
    let (_, parent) = PARENTS.iter().find(|(b, _)| b == name)?;
    bone_index(parent)
}

/// One bone's latest local pose, as on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pose {
    pos: [f32; 3],
    rot: [f32; 4],
}

const ROOT_NAME: &str = "Root";

/// Turns one sender's VMC messages into BVH frames.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    bones: Vec<Option<Pose>>,
    root: Option<Pose>,
    /// A bone arrived since the last frame ended.
    pending: bool,
    /// The strongest frame end seen (3 T, 2 OK, 1 Apply), and what it was
    /// when the open frame's first bone came.
    closer: u8,
    closer_at_open: u8,
    /// Joint 0 is `Root`; joint `i > 0` is this HumanBodyBones index.
    layout: Option<Vec<usize>>,
    /// The sender's first and last `T` since the skeleton, and how many.
    times: Option<(f64, f64, u64)>,
    /// Arrival of the first and last recorded frame.
    first: Option<f64>,
    last: Option<f64>,
    frames: u64,
    skipped: u64,
    /// A frame completed and not yet polled. One at most: a frame is the
    /// bones' latest values, so the next frame's messages overwrite it.
    ready: bool,
}

impl Recorder {
    /// A recorder waiting for its first frame with `Hips`.
    pub fn new() -> Self {
        Self {
            bones: vec![None; HUMAN_BODY_BONES.len()],
            ..Self::default()
        }
    }

    /// Takes one message that arrived at `now` (any origin, the same for
    /// every call). When it completes a frame, [`Self::poll_frame`] writes it.
    pub fn handle_message(&mut self, now: Duration, m: &Message) {
        let rank = m.end_rank();
        self.absorb(m);
        self.closer = self.closer.max(rank);
        if rank == 0 || rank < self.closer || !self.pending {
            return;
        }
        if self.closer_at_open < self.closer {
            // The first frame, or a sender that just began sending a
            // stronger end: where this frame ended is not known for sure.
            self.pending = false;
            self.skipped += 1;
            return;
        }
        self.end(now);
    }

    /// Takes a whole frame (a mixer's output): one frame whatever ends it.
    pub fn handle_frame(&mut self, now: Duration, frame: &[Message]) {
        for m in frame {
            self.absorb(m);
        }
        self.end(now);
    }

    /// The frame the last `handle_*` completed, once: its positions
    /// (centimetres) and `[x, y, z, w]` rotations by joint index, in BVH
    /// axes. `false` (the vectors untouched) when no frame is ready.
    pub fn poll_frame(
        &mut self,
        positions: &mut Vec<[f64; 3]>,
        rotations: &mut Vec<[f64; 4]>,
    ) -> bool {
        std::mem::take(&mut self.ready) && self.frame(positions, rotations)
    }

    /// Keeps what a message says; true when it ends a frame.
    fn absorb(&mut self, m: &Message) -> bool {
        match m {
            Message::BonePos { name, pos, rot } => {
                self.bone(name, *pos, *rot);
                false
            }
            Message::RootPos { pos, rot, .. } => {
                self.root = Some(Pose {
                    pos: *pos,
                    rot: *rot,
                });
                false
            }
            Message::Time(t) => {
                // T may come after the message that ended the frame (OK
                // first): its rate, not its frame, is what counts.
                let t = f64::from(*t);
                if self.layout.is_some() && t.is_finite() {
                    let (first, _, n) = self.times.unwrap_or((t, t, 0));
                    self.times = Some((first, t, n + 1));
                }
                true
            }
            m => m.ends_frame(),
        }
    }

    /// Takes one `Bone/Pos` by name (for callers that decode borrowed names).
    pub fn bone(&mut self, name: &str, pos: [f32; 3], rot: [f32; 4]) {
        if let Some(slot) = bone_index(name).and_then(|i| self.bones.get_mut(i)) {
            *slot = Some(Pose { pos, rot });
            if !self.pending {
                self.closer_at_open = self.closer;
            }
            self.pending = true;
        }
    }

    fn end(&mut self, now: Duration) {
        let now = now.as_secs_f64();
        if !std::mem::take(&mut self.pending) {
            return;
        }
        if self.layout.is_none() {
            if self.bones.first().is_none_or(Option::is_none) {
                self.skipped += 1;
                return; // no Hips yet: nothing to hang a skeleton on
            }
            self.layout = Some(self.present_bones());
        }
        self.first.get_or_insert(now);
        self.last = Some(now);
        self.frames += 1;
        self.ready = true;
    }

    /// Present bones, depth first from Hips: parents before children.
    fn present_bones(&self) -> Vec<usize> {
        let mut order = Vec::new();
        let mut stack = vec![0usize];
        while let Some(b) = stack.pop() {
            order.push(b);
            let mut kids: Vec<usize> = (0..self.bones.len())
                .filter(|&c| {
                    self.bones.get(c).is_some_and(Option::is_some)
                        && self.present_parent(c) == Some(b)
                })
                .collect();
            kids.reverse();
            stack.extend(kids);
        }
        order
    }

    /// The nearest humanoid ancestor the sender sends.
    fn present_parent(&self, bone: usize) -> Option<usize> {
        let mut p = humanoid_parent(bone)?;
        loop {
            if self.bones.get(p).is_some_and(Option::is_some) {
                return Some(p);
            }
            p = humanoid_parent(p)?;
        }
    }

    /// The skeleton, fixed by the first frame with `Hips` (`None` before it).
    pub fn joints(&self) -> Option<Vec<Joint>> {
        let layout = self.layout.as_ref()?;
        let mut joints = vec![Joint {
            name: ROOT_NAME.to_owned(),
            parent: None,
            offset: [0.0; 3],
        }];
        for &b in layout {
            let parent = match self.present_parent(b) {
                Some(p) => layout.iter().position(|&l| l == p).map(|i| i + 1),
                None => Some(0),
            };
            let pos = self
                .bones
                .get(b)
                .copied()
                .flatten()
                .map_or([0.0; 3], |p| p.pos);
            joints.push(Joint {
                name: HUMAN_BODY_BONES
                    .get(b)
                    .copied()
                    .unwrap_or("Bone")
                    .to_owned(),
                parent,
                offset: unity_to_bvh_pos(pos).map(|v| v * CENTIMETRES),
            });
        }
        Some(joints)
    }

    /// Writes the current pose as [`Self::poll_frame`] does; `false` before
    /// the skeleton.
    fn frame(&self, positions: &mut Vec<[f64; 3]>, rotations: &mut Vec<[f64; 4]>) -> bool {
        let Some(layout) = &self.layout else {
            return false;
        };
        positions.clear();
        rotations.clear();
        let root = self.root.unwrap_or(Pose {
            pos: [0.0; 3],
            rot: [0.0, 0.0, 0.0, 1.0],
        });
        for pose in std::iter::once(Some(root))
            .chain(layout.iter().map(|&b| self.bones.get(b).copied().flatten()))
        {
            let pose = pose.unwrap_or(Pose {
                pos: [0.0; 3],
                rot: [0.0, 0.0, 0.0, 1.0],
            });
            positions.push(unity_to_bvh_pos(pose.pos).map(|v| v * CENTIMETRES));
            rotations.push(unity_to_bvh_rot(pose.rot));
        }
        true
    }

    /// Frames completed since the skeleton was fixed.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Frames not recorded: before any `Hips`, and the first (see above).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Seconds per frame over the take: from the sender's `T` when it sent
    /// one per frame and it advanced, else from arrival times.
    pub fn frame_time(&self) -> Option<f64> {
        if let Some((t0, t1, n)) = self.times
            && n >= 2
            && n + 1 >= self.frames
            && t1 > t0
        {
            return Some((t1 - t0) / (n - 1) as f64);
        }
        let (a0, a1) = (self.first?, self.last?);
        let intervals = self.frames.checked_sub(1).filter(|n| *n > 0)? as f64;
        let span = a1 - a0;
        (span > 0.0).then_some(span / intervals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quat;

    fn bone(name: &str, pos: [f32; 3], rot: [f32; 4]) -> Message {
        Message::BonePos {
            name: name.into(),
            pos,
            rot,
        }
    }

    const ID: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

    /// Feeds one message; whether it completed a frame (polled, dropped).
    fn message(r: &mut Recorder, now: Duration, m: &Message) -> bool {
        r.handle_message(now, m);
        r.poll_frame(&mut Vec::new(), &mut Vec::new())
    }

    /// Feeds a whole frame; whether it made one (polled, dropped).
    fn whole(r: &mut Recorder, now: Duration, frame: &[Message]) -> bool {
        r.handle_frame(now, frame);
        r.poll_frame(&mut Vec::new(), &mut Vec::new())
    }

    #[test]
    fn every_bone_but_hips_has_a_humanoid_parent() {
        assert_eq!(humanoid_parent(0), None);
        for (b, name) in HUMAN_BODY_BONES.iter().enumerate().skip(1) {
            let p = humanoid_parent(b).expect(name);
            // Following parents always reaches Hips.
            let mut at = p;
            for _ in 0..10 {
                if at == 0 {
                    break;
                }
                at = humanoid_parent(at).unwrap();
            }
            assert_eq!(at, 0, "{name}");
        }
    }

    #[test]
    fn skeleton_from_the_first_frame_with_hips_and_missing_bones_skipped() {
        let mut r = Recorder::new();
        // A frame without Hips is not recorded.
        message(&mut r, Duration::ZERO, &bone("Head", [0.0, 0.1, 0.0], ID));
        assert!(!message(&mut r, Duration::ZERO, &Message::Time(1.0)));
        assert_eq!(r.skipped(), 1);
        assert!(r.joints().is_none());
        // No UpperChest and no Neck: Head and the shoulder hang off Chest.
        message(
            &mut r,
            Duration::from_secs_f64(0.1),
            &bone("Hips", [0.0, 0.9, 0.0], ID),
        );
        message(
            &mut r,
            Duration::from_secs_f64(0.1),
            &bone("Spine", [0.0, 0.1, 0.0], ID),
        );
        message(
            &mut r,
            Duration::from_secs_f64(0.1),
            &bone("Chest", [0.0, 0.15, 0.01], ID),
        );
        message(
            &mut r,
            Duration::from_secs_f64(0.1),
            &bone("LeftShoulder", [-0.02, 0.1, 0.0], ID),
        );
        message(
            &mut r,
            Duration::from_secs_f64(0.1),
            &bone("Jaw", [0.0, 0.0, 0.0], ID),
        );
        // An unknown name is ignored.
        message(
            &mut r,
            Duration::from_secs_f64(0.1),
            &bone("Tail", [0.0, 0.0, 0.0], ID),
        );
        assert!(message(
            &mut r,
            Duration::from_secs_f64(0.1),
            &Message::Time(1.1)
        ));
        let joints = r.joints().unwrap();
        let names: Vec<&str> = joints.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Root",
                "Hips",
                "Spine",
                "Chest",
                "Head",
                "Jaw",
                "LeftShoulder"
            ]
        );
        let parent = |n: &str| {
            let j = &joints[names.iter().position(|x| *x == n).unwrap()];
            j.parent.map(|p| names[p])
        };
        assert_eq!(parent("Root"), None);
        assert_eq!(parent("Hips"), Some("Root"));
        assert_eq!(parent("Head"), Some("Chest"));
        assert_eq!(parent("Jaw"), Some("Head"));
        assert_eq!(parent("LeftShoulder"), Some("Chest"));
        // Offsets in centimetres with X mirrored.
        assert_eq!(
            joints[6].offset,
            [f64::from(0.02f32) * 100.0, f64::from(0.1f32) * 100.0, 0.0]
        );
        assert!(bvh_header_ok(&joints));
    }

    fn bvh_header_ok(joints: &[Joint]) -> bool {
        crate::bvh::header(joints, 1.0 / 60.0).is_ok()
    }

    #[test]
    fn one_frame_per_bone_batch_whatever_ends_it() {
        let mut r = Recorder::new();
        let mut frames = 0;
        for k in 0..3 {
            message(
                &mut r,
                Duration::from_secs_f64(f64::from(k)),
                &bone("Hips", [0.0, 0.9, 0.0], ID),
            );
            // Apply, OK and T all end frames; only the first after bones counts.
            for m in [
                Message::BlendApply,
                Message::Available {
                    loaded: 1,
                    calibration: None,
                    tracking: None,
                },
                Message::Time(k as f32),
            ] {
                frames += usize::from(message(&mut r, Duration::from_secs_f64(f64::from(k)), &m));
            }
        }
        // The first frame only teaches that T ends them.
        assert_eq!((frames, r.frames(), r.skipped()), (2, 2, 1));
        // A mixed frame is one frame, with or without an ending message.
        let hips = bone("Hips", [0.0, 0.9, 0.0], ID);
        assert!(whole(
            &mut r,
            Duration::from_secs_f64(4.0),
            &[hips.clone(), Message::BlendApply, Message::Time(9.0)]
        ));
        assert!(whole(
            &mut r,
            Duration::from_secs_f64(5.0),
            std::slice::from_ref(&hips)
        ));
        assert!(
            !whole(&mut r, Duration::from_secs_f64(6.0), &[Message::BlendApply]),
            "no bones, no frame"
        );
        assert_eq!(r.frames(), 4);
    }

    #[test]
    fn frame_values_mirror_x_and_hold_missing_bones() {
        let mut r = Recorder::new();
        let a = 0.3f32;
        // 0.6 rad about Unity's Y: in a mirror on X it turns the other way.
        let q = [0.0, a.sin(), 0.0, a.cos()];
        // The reference sender's order: bones, Apply, then Root/Pos, OK, T.
        // The first frame teaches that T ends frames, so the root of a frame
        // belongs to it.
        message(&mut r, Duration::ZERO, &bone("Hips", [0.0; 3], ID));
        assert!(!message(&mut r, Duration::ZERO, &Message::BlendApply));
        assert!(!message(&mut r, Duration::ZERO, &Message::Time(0.0)));
        message(&mut r, Duration::ZERO, &bone("Hips", [0.5, 0.9, 0.25], q));
        message(&mut r, Duration::ZERO, &bone("Spine", [0.0, 0.1, 0.0], ID));
        assert!(!message(&mut r, Duration::ZERO, &Message::BlendApply));
        message(
            &mut r,
            Duration::ZERO,
            &Message::RootPos {
                name: "root".into(),
                pos: [1.0, 0.0, 2.0],
                rot: ID,
                mr: None,
            },
        );
        r.handle_message(Duration::ZERO, &Message::Time(0.0));
        let (mut p, mut q_out) = (Vec::new(), Vec::new());
        assert!(r.poll_frame(&mut p, &mut q_out));
        // Once: polled, the frame is out.
        assert!(!r.poll_frame(&mut p, &mut q_out));
        assert_eq!(p[0], [-100.0, 0.0, 200.0]);
        assert_eq!(p[1], [-50.0, f64::from(0.9f32) * 100.0, 25.0]);
        // A vector along +X (right in Unity) turned by q, then mirrored, equals
        // the mirrored vector turned by the converted rotation.
        let unity = quat::rotate(quat::wide(q), [1.0, 0.0, 0.0]);
        let bvh = quat::rotate(q_out[1], [-1.0, 0.0, 0.0]);
        for k in 0..3 {
            let want = if k == 0 { -unity[0] } else { unity[k] };
            assert!((bvh[k] - want).abs() < 1e-6, "{bvh:?} vs {unity:?}");
        }
        // Next frame without Spine: Spine holds.
        message(
            &mut r,
            Duration::from_secs_f64(1.0 / 60.0),
            &bone("Hips", [0.0, 0.9, 0.0], ID),
        );
        r.handle_message(
            Duration::from_secs_f64(1.0 / 60.0),
            &Message::Time(1.0 / 60.0),
        );
        assert!(r.poll_frame(&mut p, &mut q_out));
        assert_eq!(p[2], [0.0, f64::from(0.1f32) * 100.0, 0.0]);
    }

    #[test]
    fn frame_time_from_sender_time_else_arrival() {
        let mut r = Recorder::new();
        for k in 0..=60u32 {
            message(
                &mut r,
                Duration::from_secs_f64(f64::from(k) * 0.1),
                &bone("Hips", [0.0; 3], ID),
            );
            message(
                &mut r,
                Duration::from_secs_f64(f64::from(k) * 0.1),
                &Message::Time(10.0 + k as f32 / 30.0),
            );
        }
        assert!((r.frame_time().unwrap() - 1.0 / 30.0).abs() < 1e-6);
        let mut r = Recorder::new();
        for k in 0..=60u32 {
            message(
                &mut r,
                Duration::from_secs_f64(f64::from(k) / 50.0),
                &bone("Hips", [0.0; 3], ID),
            );
            message(
                &mut r,
                Duration::from_secs_f64(f64::from(k) / 50.0),
                &Message::BlendApply,
            );
        }
        assert!((r.frame_time().unwrap() - 0.02).abs() < 1e-9);
        assert_eq!(Recorder::new().frame_time(), None);
    }
}
