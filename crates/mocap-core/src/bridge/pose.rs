//! One body frame as every body bridge and picture reads it, whatever
//! protocol sent it: Unity's humanoid bones in Unity's frame, as VMC carries
//! them. A protocol with bodies gives a [`BodyReader`] in its registry row
//! ([`crate::protocol::Spec::body`]); the reader keeps what its protocol
//! spreads over datagrams (mocopi's skeleton, VMC's frame split over
//! bundles) so callers hand it datagrams and get whole frames.

use crate::vmc::{HUMAN_BODY_BONES, Message};

/// How many humanoid bones a [`BodyPose`] has room for.
pub const HUMANOID_BONES: usize = HUMAN_BODY_BONES.len();

/// A bone's local position (its offset from its parent; for Hips, where the
/// body is) and local rotation `[x, y, z, w]`, in Unity's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BonePose {
    /// Local position in metres.
    pub pos: [f32; 3],
    /// Local rotation.
    pub rot: [f32; 4],
}

/// One body frame: the root transform and the humanoid bones the sender
/// gave, by [`HUMAN_BODY_BONES`] index (`None` for those it did not).
#[derive(Clone, Debug, PartialEq)]
pub struct BodyPose {
    /// The avatar's root (VMC's `/VMC/Ext/Root/Pos`), when sent.
    pub root: Option<BonePose>,
    /// The bones by `HumanBodyBones` value.
    pub bones: [Option<BonePose>; HUMANOID_BONES],
}

impl Default for BodyPose {
    fn default() -> Self {
        Self {
            root: None,
            bones: [None; HUMANOID_BONES],
        }
    }
}

impl BodyPose {
    /// Sets a bone by its `HumanBodyBones` name; `false` (and nothing set)
    /// for a name that is not one.
    pub fn set(&mut self, name: &str, pose: BonePose) -> bool {
        match crate::vmc::bone_index(name).and_then(|i| self.bones.get_mut(i)) {
            Some(slot) => {
                *slot = Some(pose);
                true
            }
            None => false,
        }
    }

    /// The bone of a `HumanBodyBones` name.
    #[must_use]
    pub fn bone(&self, name: &str) -> Option<BonePose> {
        crate::vmc::bone_index(name).and_then(|i| self.bones.get(i).copied().flatten())
    }

    /// The bones the frame has, with their names, in `HumanBodyBones` order.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, BonePose)> + '_ {
        HUMAN_BODY_BONES
            .iter()
            .zip(&self.bones)
            .filter_map(|(name, b)| b.map(|b| (*name, b)))
    }

    /// Whether it carries no bone.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.bones.iter().all(Option::is_none)
    }

    /// The frame as VMC messages: Root/Pos when it has a root, Bone/Pos per
    /// bone in `HumanBodyBones` order (or in `order`'s, bones not in it
    /// left out, when given), then OK (loaded, calibrated, tracking) and
    /// the time, as a calibrated VirtualMotionCapture sends a frame, so
    /// receivers that gate on OK move the avatar.
    #[must_use]
    pub fn to_vmc(&self, order: Option<&[&'static str]>, time: f32) -> Vec<Message> {
        let mut out = Vec::with_capacity(HUMANOID_BONES + 3);
        if let Some(r) = self.root {
            out.push(Message::RootPos {
                name: "root".into(),
                pos: r.pos,
                rot: r.rot,
                mr: None,
            });
        }
        let bone = |name: &'static str, b: BonePose| Message::BonePos {
            name: name.into(),
            pos: b.pos,
            rot: b.rot,
        };
        match order {
            Some(names) => out.extend(
                names
                    .iter()
                    .filter_map(|n| self.bone(n).map(|b| bone(n, b))),
            ),
            None => out.extend(self.named().map(|(n, b)| bone(n, b))),
        }
        out.push(Message::Available {
            loaded: 1,
            calibration: Some((3, 0)),
            tracking: Some(1),
        });
        out.push(Message::Time(time));
        out
    }
}

/// A protocol's body frames from its datagrams, one sender's stream at a
/// time (a caller keeps one reader per sender).
pub trait BodyReader: Send {
    /// Takes one datagram; the body frame it completes, if it does.
    /// Datagrams that do not decode, or carry no body, give `None`.
    fn datagram(&mut self, datagram: &[u8]) -> Option<BodyPose>;
}

/// Makes a protocol's [`BodyReader`] (a registry row's `body`).
pub type BodyOf = fn() -> Box<dyn BodyReader>;

#[cfg(test)]
mod tests {
    use super::*;

    const B: BonePose = BonePose {
        pos: [0.0, 1.0, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
    };

    #[test]
    fn bones_are_set_by_humanoid_name_only() {
        let mut p = BodyPose::default();
        assert!(p.is_empty());
        assert!(p.set("Hips", B));
        assert!(!p.set("hips", B), "names are case-sensitive, as Unity's");
        assert!(!p.set("torso_3", B));
        assert_eq!(p.bone("Hips"), Some(B));
        assert_eq!(p.named().map(|(n, _)| n).collect::<Vec<_>>(), ["Hips"]);
    }

    #[test]
    fn vmc_frame_is_root_bones_ok_time() {
        let mut p = BodyPose::default();
        p.set("Head", B);
        p.set("Hips", B);
        let m = p.to_vmc(None, 2.5);
        assert_eq!(m.len(), 4, "{m:?}");
        assert!(matches!(&m[0], Message::BonePos { name, .. } if name == "Hips"));
        assert!(matches!(&m[1], Message::BonePos { name, .. } if name == "Head"));
        assert_eq!(m[3], Message::Time(2.5));
        p.root = Some(B);
        let m = p.to_vmc(Some(&["Head", "Spine"]), 0.0);
        assert!(matches!(&m[0], Message::RootPos { .. }));
        assert!(matches!(&m[1], Message::BonePos { name, .. } if name == "Head"));
        assert_eq!(m.len(), 4, "Spine is not in the frame: {m:?}");
    }
}
