//! Forward kinematics down Unity's humanoid tree: bones' local poses (VMC's
//! `Bone/Pos`, a [`BodyPose`]) in, world poses out. The tracker solver and
//! the stick figure ([`crate::figure`]) both take their world poses from
//! here.
//!
//! World poses start at the root (`/VMC/Ext/Root/Pos`; identity when the
//! sender has none). A bone the sender never sent is skipped: its children
//! hang off the nearest sent ancestor ([`super::humanoid::humanoid_parent`]),
//! as if it were identity with no offset. A pose with non-finite values or
//! a zero quaternion is not taken, so the bone keeps what it had.

use super::humanoid::humanoid_parent;
use super::{HUMAN_BODY_BONES, bone_index};
use crate::bridge::{BodyPose, BonePose};
use crate::quat::{checked_normalise, mul, normalise, rotate};

const BONES: usize = HUMAN_BODY_BONES.len();
/// Longer than any humanoid chain (a finger's is 10 with Hips).
const MAX_CHAIN: usize = 16;

/// The bones' local poses by `HumanBodyBones` index, and the root.
#[derive(Clone, Debug)]
pub struct Skeleton {
    bones: [Option<Pose>; BONES],
    parents: [Option<usize>; BONES],
    root: Option<Pose>,
}

impl Default for Skeleton {
    fn default() -> Self {
        let mut parents = [None; BONES];
        for (b, p) in parents.iter_mut().enumerate() {
            *p = humanoid_parent(b);
        }
        Self {
            bones: [None; BONES],
            parents,
            root: None,
        }
    }
}

impl Skeleton {
    /// A skeleton with no bones yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The bones and root of one body frame.
    #[must_use]
    pub fn of(body: &BodyPose) -> Self {
        let mut s = Self::new();
        for (i, b) in body.bones.iter().enumerate() {
            if let Some(BonePose { pos, rot }) = b {
                s.set(i, *pos, *rot);
            }
        }
        if let Some(BonePose { pos, rot }) = body.root {
            s.set_root(pos, rot);
        }
        s
    }

    /// Sets a bone's local pose by `HumanBodyBones` index; `false` (and
    /// nothing set) for an index that is not a bone or a pose that is not
    /// one.
    pub fn set(&mut self, bone: usize, pos: [f32; 3], rot: [f32; 4]) -> bool {
        match (self.bones.get_mut(bone), checked_pose(pos, rot)) {
            (Some(slot), Some(p)) => {
                *slot = Some(p);
                true
            }
            _ => false,
        }
    }

    /// Sets a bone by its `HumanBodyBones` name, as [`Self::set`].
    pub fn set_named(&mut self, name: &str, pos: [f32; 3], rot: [f32; 4]) -> bool {
        bone_index(name).is_some_and(|i| self.set(i, pos, rot))
    }

    /// Sets the root; a pose that is not one is not taken.
    pub fn set_root(&mut self, pos: [f32; 3], rot: [f32; 4]) {
        if let Some(p) = checked_pose(pos, rot) {
            self.root = Some(p);
        }
    }

    /// A bone's local pose, when sent.
    #[must_use]
    pub fn local(&self, bone: usize) -> Option<Pose> {
        self.bones.get(bone).copied().flatten()
    }

    /// The nearest sent ancestor of a bone (its parent in the picture).
    #[must_use]
    pub fn parent(&self, bone: usize) -> Option<usize> {
        let mut at = self.parents.get(bone).copied().flatten();
        // Bounded even if the parent table had a cycle.
        for _ in 0..BONES {
            let b = at?;
            if self.local(b).is_some() {
                return Some(b);
            }
            at = self.parents.get(b).copied().flatten();
        }
        None
    }

    /// A sent bone's world pose.
    #[must_use]
    pub fn world(&self, bone: usize) -> Option<Pose> {
        let (chain, n) = self.chain(bone)?;
        let mut w = self.root.unwrap_or(Pose::IDENTITY);
        for b in chain.iter().take(n).rev() {
            w = w.then(self.local(*b)?);
        }
        w.rot = normalise(w.rot);
        Some(w)
    }

    /// A sent bone's position in the rest pose (every rotation identity,
    /// as a normalised humanoid such as a VRM 0.x model stands), relative
    /// to Hips' parent: the sum of the local offsets down its chain.
    #[must_use]
    pub fn rest(&self, bone: usize) -> Option<[f64; 3]> {
        let (chain, n) = self.chain(bone)?;
        let mut at = [0.0; 3];
        for p in chain.iter().take(n).filter_map(|b| self.local(*b)) {
            for (a, v) in at.iter_mut().zip(p.pos) {
                *a += v;
            }
        }
        Some(at)
    }

    /// The sent bones from `bone` up to Hips (child first), and how many.
    fn chain(&self, bone: usize) -> Option<([usize; MAX_CHAIN], usize)> {
        self.local(bone)?;
        let mut chain = [0; MAX_CHAIN];
        let mut n = 0;
        let mut at = Some(bone);
        for _ in 0..BONES {
            let Some(b) = at else { break };
            if self.local(b).is_some() {
                *chain.get_mut(n)? = b;
                n += 1;
            }
            at = self.parents.get(b).copied().flatten();
        }
        Some((chain, n))
    }
}

/// A world pose: position in metres and rotation `[x, y, z, w]`, Unity's axes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position.
    pub pos: [f64; 3],
    /// Rotation, a unit quaternion.
    pub rot: [f64; 4],
}

impl Pose {
    /// No translation, no rotation.
    pub const IDENTITY: Self = Self {
        pos: [0.0; 3],
        rot: [0.0, 0.0, 0.0, 1.0],
    };

    /// Every value is finite.
    pub fn is_finite(&self) -> bool {
        self.pos.iter().chain(&self.rot).all(|v| v.is_finite())
    }

    /// Every value is finite as the f32 the wire carries (the encoders skip
    /// a pose that is not).
    pub fn fits_f32(&self) -> bool {
        self.pos
            .iter()
            .chain(&self.rot)
            .all(|v| (*v as f32).is_finite())
    }

    /// `local` expressed in this pose's frame.
    pub(crate) fn then(self, local: Self) -> Self {
        let [x, y, z] = rotate(self.rot, local.pos);
        let [px, py, pz] = self.pos;
        Self {
            pos: [px + x, py + y, pz + z],
            rot: mul(self.rot, local.rot),
        }
    }
}

/// A wire pose widened, or `None` when it cannot be a pose.
fn checked_pose(pos: [f32; 3], rot: [f32; 4]) -> Option<Pose> {
    let pos = pos.map(f64::from);
    if !pos.iter().all(|v| v.is_finite()) {
        return None;
    }
    Some(Pose {
        pos,
        rot: checked_normalise(rot.map(f64::from))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

    #[test]
    fn children_of_an_unsent_bone_hang_off_its_sent_ancestor() {
        let mut s = Skeleton::new();
        assert!(s.set_named("Hips", [0.0, 1.0, 0.0], ID));
        assert!(s.set_named("Chest", [0.0, 0.2, 0.0], ID));
        // Spine (Chest's parent) is not sent: Chest sits on Hips.
        assert_eq!(s.parent(bone_index("Chest").unwrap()), Some(0));
        let chest = s.world(bone_index("Chest").unwrap()).unwrap();
        assert!((chest.pos[1] - 1.2).abs() < 1e-6, "{chest:?}");
        // A quarter turn about Y at the root turns the offset too.
        let h = std::f32::consts::FRAC_1_SQRT_2;
        s.set_root([1.0, 0.0, 0.0], [0.0, h, 0.0, h]);
        assert!(s.set_named("LeftUpperLeg", [-0.1, 0.0, 0.0], ID));
        let leg = s.world(bone_index("LeftUpperLeg").unwrap()).unwrap();
        assert!(
            (leg.pos[0] - 1.0).abs() < 1e-6 && (leg.pos[2] - 0.1).abs() < 1e-6,
            "{leg:?}"
        );
    }

    #[test]
    fn poses_that_are_not_poses_are_not_taken() {
        let mut s = Skeleton::new();
        assert!(!s.set_named("Hips", [f32::NAN, 0.0, 0.0], ID));
        assert!(!s.set_named("Hips", [0.0; 3], [0.0; 4]));
        assert!(!s.set_named("hips", [0.0; 3], ID));
        assert!(!s.set(HUMAN_BODY_BONES.len(), [0.0; 3], ID));
        assert_eq!(s.world(0), None);
        assert_eq!(s.parent(0), None);
    }
}
