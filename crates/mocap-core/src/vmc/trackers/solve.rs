//! Forward kinematics ([`crate::vmc::fk`]): one sender's VMC frames as
//! world poses of the tracker slots, scaled to the user's height.

use super::super::Message;
use super::super::fk::Skeleton;
use super::{HEAD, HEAD_TO_ANKLE, HIPS, LEFT_FOOT, Pose, RIGHT_FOOT, SLOTS, Slot};

/// A rest-pose Head-to-foot span below this (metres) is not a body; the
/// height waits for a better frame.
const MIN_SPAN: f64 = 0.05;

/// One frame's trackers, by [`Slot::index`], and the Head bone.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Trackers {
    /// Each slot's pose; `None` when the sender has not sent its bone.
    pub slots: [Option<Pose>; SLOTS],
    /// The Head bone's pose, for VRChat's head reference.
    pub head: Option<Pose>,
}

impl Trackers {
    /// The pose of `slot`.
    pub fn get(&self, slot: Slot) -> Option<Pose> {
        self.slots.get(slot.index()).copied().flatten()
    }
}

/// Turns one sender's VMC frames into tracker poses, holding each bone's
/// last pose between frames.
#[derive(Clone, Debug)]
pub struct TrackerSolver {
    skeleton: Skeleton,
    height: Option<f64>,
    avatar_height: Option<f64>,
}

impl Default for TrackerSolver {
    fn default() -> Self {
        Self::new(None)
    }
}

impl TrackerSolver {
    /// A solver with no bones yet. With `height` (the user's standing
    /// height in metres) positions are scaled by it over the avatar's
    /// height, and nothing is solved until that is measured; a height that
    /// is not a positive finite number is ignored (unscaled).
    pub fn new(height: Option<f32>) -> Self {
        Self {
            skeleton: Skeleton::new(),
            height: height.map(f64::from).filter(|h| h.is_finite() && *h > 0.0),
            avatar_height: None,
        }
    }

    /// Takes one frame and solves it: [`Self::push`] each message, then
    /// [`Self::trackers`].
    pub fn solve(&mut self, frame: &[Message]) -> Option<Trackers> {
        for m in frame {
            self.push(m);
        }
        self.trackers()
    }

    /// Takes one message: `Bone/Pos` and `Root/Pos` count, others are ignored.
    pub fn push(&mut self, m: &Message) {
        match m {
            Message::BonePos { name, pos, rot } => self.bone(name, *pos, *rot),
            Message::RootPos { pos, rot, .. } => self.skeleton.set_root(*pos, *rot),
            _ => {}
        }
    }

    /// Takes one `Bone/Pos` by name (for callers that decode borrowed names).
    pub fn bone(&mut self, name: &str, pos: [f32; 3], rot: [f32; 4]) {
        self.skeleton.set_named(name, pos, rot);
    }

    /// The trackers of the bones held now. `None` before Hips has come, or
    /// with a height before the avatar's has been measured. A slot whose
    /// pose is not finite (extreme input) is left out.
    pub fn trackers(&mut self) -> Option<Trackers> {
        self.skeleton.local(HIPS)?;
        let scale = self.scale_now()?;
        let scaled = |p: Pose| {
            let p = Pose {
                pos: p.pos.map(|v| v * scale),
                rot: p.rot,
            };
            p.is_finite().then_some(p)
        };
        let mut out = Trackers {
            head: self.world(HEAD).and_then(scaled),
            ..Trackers::default()
        };
        for (slot, pose) in Slot::ALL.iter().zip(out.slots.iter_mut()) {
            let (bone, fallback) = slot.bones();
            *pose = self
                .world(bone)
                .or_else(|| fallback.and_then(|b| self.world(b)))
                .and_then(scaled);
        }
        Some(out)
    }

    /// The avatar's standing height as measured (metres), once it is.
    pub fn avatar_height(&self) -> Option<f64> {
        self.avatar_height
    }

    /// The factor applied to positions: 1 without a height, `None` until the
    /// avatar's height is measured.
    pub fn scale(&self) -> Option<f64> {
        match self.height {
            None => Some(1.0),
            Some(h) => self.avatar_height.map(|a| h / a),
        }
    }

    /// [`Self::scale`], measuring the avatar first if it can now be.
    fn scale_now(&mut self) -> Option<f64> {
        if self.height.is_some() && self.avatar_height.is_none() {
            self.avatar_height = self.measure();
        }
        self.scale()
    }

    /// Head above the lower foot with every rotation identity (the rest pose
    /// of a normalised humanoid, as VRM 0.x models are), made a standing
    /// height by [`HEAD_TO_ANKLE`].
    fn measure(&self) -> Option<f64> {
        let head = self.rest(HEAD)?;
        let foot = self.rest(LEFT_FOOT)?.min(self.rest(RIGHT_FOOT)?);
        let span = head - foot;
        (span.is_finite() && span > MIN_SPAN).then_some(span / HEAD_TO_ANKLE)
    }

    /// A bone's height in the rest pose, relative to Hips' parent.
    fn rest(&self, bone: usize) -> Option<f64> {
        let [_, y, _] = self.skeleton.rest(bone)?;
        Some(y)
    }

    /// A sent bone's world pose.
    fn world(&self, bone: usize) -> Option<Pose> {
        self.skeleton.world(bone)
    }
}
