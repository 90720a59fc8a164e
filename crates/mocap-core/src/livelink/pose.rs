//! A Live Link Face packet as the face bridge's [`FacePose`].

use super::{Angles, Face};
use crate::bridge::FacePose;

/// How Live Link Face's head and eye angles are read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AngleUnit {
    /// Radians, as Unreal reads them.
    #[default]
    Radians,
    /// Degrees (some third-party senders).
    Degrees,
}

impl FacePose {
    /// A Live Link Face packet: blendshapes as sent, yaw/pitch/roll
    /// rearranged to pitch, yaw, roll in degrees. A no-face packet (`None`)
    /// is a frame without tracking.
    pub fn from_livelink(face: Option<&Face<'_>>, unit: AngleUnit) -> Self {
        let Some(face) = face else {
            return Self {
                tracking: Some(false),
                ..Self::default()
            };
        };
        let mut blendshapes = [None; 52];
        for (slot, v) in blendshapes.iter_mut().zip(face.values()) {
            *slot = Some(v);
        }
        let deg = |a: Angles| {
            [a.pitch, a.yaw, a.roll].map(|v| match unit {
                AngleUnit::Radians => v.to_degrees(),
                AngleUnit::Degrees => v,
            })
        };
        Self {
            tracking: Some(true),
            blendshapes,
            head: face.head().map(deg),
            left_eye: face.left_eye().map(deg),
            right_eye: face.right_eye().map(deg),
            ..Self::default()
        }
    }
}
