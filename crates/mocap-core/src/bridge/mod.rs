//! Bridges from tracker protocols into VMC. Pure: frames in, VMC messages out
//! (ARKit faces from iFacialMocap and Live Link Face; mocopi body retargeting),
//! and the face and body poses every protocol's registry row gives them.
//! See `docs/bridges.md`.
//!
//! ```
//! use mocap_core::bridge::{FaceBridge, FaceOptions, FacePose};
//! use mocap_core::ifm::arkit_index;
//! use mocap_core::vmc::Message;
//!
//! let mut pose = FacePose::default();
//! pose.blendshapes[arkit_index("jawOpen").unwrap()] = Some(0.75);
//! let messages = FaceBridge::new(FaceOptions::default()).pose(&pose);
//! // ARKit's own spelling, as perfect-sync models name their clips.
//! assert!(messages.contains(&Message::BlendVal { name: "jawOpen".into(), value: 0.75 }));
//! assert!(messages.contains(&Message::BlendApply));
//! ```

mod body;
mod face;
mod pose;

pub(crate) use body::MocopiBody;
pub use body::{
    ANIMU_SPHERE_MAPPING, BodyBridge, BodyOptions, Mapping, MappingError, MappingTable, Retarget,
    SONY_MAPPING, SkeletonEvent, default_parents, parse_mapping, pos_to_unity, rot_to_unity,
};
pub use face::{
    BlendCase, FaceBridge, FaceOptions, FacePose, HeadAxes, HeadAxesError, OnLost, arkit_to_unity,
    euler_to_quat,
};
pub use pose::{BodyOf, BodyPose, BodyReader, BonePose, HUMANOID_BONES};
