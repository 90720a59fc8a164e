//! Bridges from tracker protocols into VMC. Pure: frames in, VMC messages out
//! (ARKit faces from iFacialMocap and Live Link Face; mocopi body retargeting).
//! See `docs/bridges.md`.

mod body;
mod face;

pub use body::{
    ANIMU_SPHERE_MAPPING, BodyBridge, BodyOptions, Mapping, MappingError, MappingTable, Retarget,
    SONY_MAPPING, SkeletonEvent, default_parents, parse_mapping, pos_to_unity, rot_to_unity,
};
pub use face::{
    AngleUnit, BlendCase, FaceBridge, FaceOptions, FacePose, HeadAxes, OnLost, arkit_to_unity,
    euler_to_quat,
};
