//! Bridges from tracker protocols into VMC. Pure: frames in, VMC messages out.
//! See `docs/bridges.md`.

mod face;

pub use face::{
    BlendCase, FaceBridge, FaceOptions, HeadAxes, OnLost, arkit_to_unity, euler_to_quat,
};
