//! An iFacialMocap frame as the face bridge's [`FacePose`].

use super::Frame;
use crate::bridge::FacePose;

impl From<&Frame<'_>> for FacePose {
    /// iFacialMocap sends percent and degrees.
    fn from(f: &Frame<'_>) -> Self {
        Self {
            tracking: f.tracking,
            blendshapes: f.blendshapes.map(|v| v.map(|v| v as f32 / 100.0)),
            head: f.head.map(|h| h.rot),
            left_eye: f.left_eye,
            right_eye: f.right_eye,
            ..Self::default()
        }
    }
}
