//! Bridges from tracker protocols into VMC. Pure: frames in, VMC messages out
//! (iFacialMocap face; mocopi body retargeting).
//! See `docs/bridges.md`.

mod body;
mod face;

pub use body::{
    ANIMU_SPHERE_MAPPING, BodyBridge, BodyOptions, Mapping, MappingError, MappingTable, Retarget,
    SONY_MAPPING, SkeletonEvent, default_parents, parse_mapping, pos_to_unity, rot_to_unity,
};
pub use face::{
    BlendCase, FaceBridge, FaceOptions, HeadAxes, OnLost, arkit_to_unity, euler_to_quat,
};
