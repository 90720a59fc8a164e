//! A VMC body stream as full-body trackers: VRChat's OSC trackers and
//! SteamVR virtual trackers through Virtual Motion Tracker (VMT). Pure —
//! messages in, poses and datagrams out; the tools own the sockets and the
//! send rate.
//!
//! ```
//! use mocap_core::osc;
//! use mocap_core::vmc::{MAX_BUNDLE, Message};
//! use mocap_core::vmc::trackers::{Slot, TrackerSolver, VrchatOptions, vrchat_datagrams};
//!
//! let bone = |name: &str, pos: [f32; 3]| Message::BonePos {
//!     name: name.into(),
//!     pos,
//!     rot: [0.0, 0.0, 0.0, 1.0],
//! };
//! let frame = [
//!     bone("Hips", [0.0, 0.9, 0.0]),
//!     bone("LeftUpperLeg", [-0.1, -0.05, 0.0]),
//!     bone("LeftLowerLeg", [0.0, -0.4, 0.0]),
//!     bone("LeftFoot", [0.0, -0.4, 0.0]),
//! ];
//! let mut solver = TrackerSolver::new(None);
//! let trackers = solver.solve(&frame).expect("the frame has Hips");
//! let foot = trackers.get(Slot::LeftFoot).expect("the frame has the left leg");
//! assert!((foot.pos[1] - 0.05).abs() < 1e-6 && (foot.pos[0] + 0.1).abs() < 1e-6);
//!
//! // Hips, left knee and left foot: one bundle, position then rotation each.
//! let datagrams = vrchat_datagrams(&trackers, &VrchatOptions::default(), MAX_BUNDLE);
//! let packet = osc::decode(&datagrams[0])?;
//! let addresses: Vec<&str> = packet.messages().iter().map(|m| m.address.as_str()).collect();
//! assert_eq!(addresses[..2], ["/tracking/trackers/1/position", "/tracking/trackers/1/rotation"]);
//! assert_eq!(addresses.len(), 6);
//! # Ok::<(), osc::Error>(())
//! ```
//!
//! - Solver ([`TrackerSolver`]): `/VMC/Ext/Bone/Pos` poses are local to the
//!   humanoid parent; world poses come from forward kinematics
//!   ([`super::fk`], which the stick figure shares) down the
//!   HumanBodyBones tree from `/VMC/Ext/Root/Pos` (identity when the sender
//!   has none; its MR scale and offset are ignored). A bone the sender never
//!   sent is skipped: its children hang off the nearest sent ancestor
//!   ([`super::humanoid::humanoid_parent`]), as if it were identity with no
//!   offset. A bone a frame lacks holds its last pose; a pose with non-finite
//!   values or a zero quaternion is dropped, so the bone holds.
//! - Trackers ([`Slot`]) take SlimeVR's numbering, which VRChat apps follow:
//!   1 hips, 2/3 feet, 4/5 knees (LowerLeg's head), 6 chest (Chest, else
//!   UpperChest), 7/8 elbows (LowerArm's head). A tracker sits at its bone's
//!   head with the bone's world rotation, in Unity's left-handed axes, metres.
//! - Height ([`TrackerSolver::new`]): VRChat's space is the user's real one
//!   (1.0 = 1 m), so positions are scaled by the user's height over the
//!   avatar's, measured once, from the rest pose of the first frame that has
//!   Hips, Head and both feet (see [`HEAD_TO_ANKLE`]).
//! - VRChat ([`vrchat_datagrams`]): `/tracking/trackers/N/position` (x, y, z
//!   metres) and `/rotation` (Unity Euler degrees, [`unity_euler`]), and the
//!   optional head reference `/tracking/trackers/head/…`.
//! - VMT ([`vmt_datagrams`]): `/VMT/Room/Unity` with index, enable 1,
//!   time offset 0, position and quaternion.
//!
//! Both encoders write one bundle per frame (more only past the size limit,
//! as [`super::frame_datagrams`] splits), through [`super::pack`]. See
//! `docs/trackers.md`.
//!
//! Its parts, a file each: slot numbering and `--trackers` selections
//! (`slot.rs`), the solver over [`super::fk`] (`solve.rs`), Unity Euler
//! angles (`euler.rs`), the VRChat and VMT encoders (`encode.rs`).

use super::HUMAN_BODY_BONES;

mod encode;
mod euler;
mod slot;
mod solve;
#[cfg(test)]
mod tests;

pub use super::fk::Pose;
pub use encode::{
    VmtOptions, VrchatOptions, vmt_datagrams, vmt_messages, vrchat_datagrams, vrchat_messages,
};
pub use euler::{unity_euler, unity_quat};
pub use slot::{Selection, SelectionError, Slot};
pub use solve::{TrackerSolver, Trackers};

/// How many tracker slots VRChat takes.
pub const SLOTS: usize = 8;

/// Port VRChat listens on for OSC input (trackers among it).
pub const VRCHAT_PORT: u16 = 9000;
/// Port the VMT driver (inside SteamVR) listens on.
pub const VMT_PORT: u16 = 39570;

/// The avatar's Head-to-ankle height as a fraction of its standing height:
/// the Head bone sits near chin level (0.870 of stature) and the ankle 0.039
/// above the floor, in Drillis and Contini's body-segment proportions. It
/// turns the skeleton's Head-to-Foot span into a height comparable with the
/// user's, so an avatar of the user's own size is not rescaled.
pub const HEAD_TO_ANKLE: f64 = 0.83;

/// VMT's highest device index.
pub const VMT_MAX_INDEX: u8 = 57;

/// The highest VMT base index that leaves room for all eight slots.
pub const VMT_MAX_BASE: u8 = VMT_MAX_INDEX - (SLOTS as u8 - 1);

const HIPS: usize = 0;
const LEFT_LOWER_LEG: usize = 3;
const RIGHT_LOWER_LEG: usize = 4;
const LEFT_FOOT: usize = 5;
const RIGHT_FOOT: usize = 6;
const CHEST: usize = 8;
const HEAD: usize = 10;
const LEFT_LOWER_ARM: usize = 15;
const RIGHT_LOWER_ARM: usize = 16;
const UPPER_CHEST: usize = 54;
