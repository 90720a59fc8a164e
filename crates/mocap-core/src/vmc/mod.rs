//! The VMC protocol (Virtual Motion Capture): OSC over UDP carrying a humanoid
//! avatar's pose and expressions.
//!
//! ```
//! use mocap_core::vmc::{self, Message};
//!
//! let frame = vec![
//!     Message::BonePos { name: "Head".into(), pos: [0.0, 0.09, 0.0], rot: [0.0, 0.0, 0.0, 1.0] },
//!     Message::BlendVal { name: "Joy".into(), value: 0.5 },
//!     Message::BlendApply,
//!     Message::Time(1.25),
//! ];
//! let datagrams = vmc::frame_datagrams(&frame, vmc::MAX_BUNDLE)?;
//! let mut got = Vec::new();
//! for d in &datagrams {
//!     for m in vmc::decode(d)? {
//!         got.push(m?);
//!     }
//! }
//! assert!(got.contains(&Message::BlendVal { name: "Joy".into(), value: 0.5 }));
//! assert_eq!(got.len(), frame.len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A Performer sends to a Marionette on UDP 39539 (Assistants to a Performer
//! on 39540): `/VMC/Ext/Root/Pos`, one `/VMC/Ext/Bone/Pos` per
//! HumanBodyBones name (local pose, Unity's left-handed frame, metres,
//! quaternion x y z w), `/VMC/Ext/Blend/Val` staged until
//! `/VMC/Ext/Blend/Apply`, then `/VMC/Ext/OK` and `/VMC/Ext/T`. Senders
//! bundle frames (nested bundles occur) with the "immediately" timetag.
//! Unknown addresses and extra arguments are ignored; too few or mistyped
//! arguments make a typed [`Error`]. See `docs/vmc.md`. A body stream turns
//! into VRChat and SteamVR (VMT) trackers in [`trackers`].

mod average;
mod encode;
mod fast;
pub mod fk;
pub mod humanoid;
mod message;
mod mix;
mod names;
mod route;
mod smooth;
mod spec;
mod tracker_stream;
pub mod trackers;

pub use average::{Method, average_linear, average_rotation};
pub use encode::{MAX_BUNDLE, frame_datagrams, pack};
pub use fast::Element;
pub use message::{Device, Error, ErrorKind, Message, tag};
pub use mix::{
    MAX_FRAME_BYTES, MAX_FRAME_MESSAGES, MAX_WINDOW_FRAMES, MIN_PERIOD, MixConfig, MixSchedule,
    Mixer, SourceCounters,
};
pub use names::{
    HUMAN_BODY_BONES, MAX_NAME_LEN, VRM0_PRESETS, VRM0_TO_VRM1, VRM1_PRESETS, bone_index,
    vrm0_to_vrm1, vrm1_to_vrm0,
};
pub use route::{Forwarded, Lean, Limiter, Rename, Rules};
pub use smooth::{MAX_NAMES, SmoothOptions, Smoother};
pub use spec::{SPEC, VMT_SPEC, VRCHAT_SPEC};
pub use tracker_stream::{TrackerCounters, TrackerFormat, TrackerOptions, TrackerStream};

/// Port a Marionette (receiver of full motion) listens on.
pub const MARIONETTE_PORT: u16 = 39539;
/// Port a Performer listens on for Assistants.
pub const PERFORMER_PORT: u16 = 39540;

/// The addresses that end a frame: the reference sender splits a frame
/// over several datagrams and writes both, OK then the time, in the last.
pub const FRAME_ENDS: [&str; 2] = ["/VMC/Ext/OK", "/VMC/Ext/T"];

/// [`decode`] with bone names borrowed from `bytes` (for hot paths that
/// take bones by name without keeping the `String`): the same messages.
///
/// # Errors
/// As [`decode`].
pub fn decode_borrowed(bytes: &[u8]) -> Result<Vec<Element<'_>>, crate::osc::Error> {
    if let Some(elements) = fast::decode_borrowed(bytes) {
        return Ok(elements);
    }
    let packet = crate::osc::decode(bytes)?;
    Ok(packet
        .messages()
        .into_iter()
        .map(|m| Element::Other(Message::from_osc(m)))
        .collect())
}

/// Decodes a datagram into typed VMC messages, in wire order (bundles flattened).
///
/// # Errors
/// [`crate::osc::Error`] when the datagram is not OSC; per-message typing
/// errors are returned in place, so one bad message does not hide the rest.
pub fn decode(bytes: &[u8]) -> Result<Vec<Result<Message, Error>>, crate::osc::Error> {
    if let Some(messages) = fast::decode(bytes) {
        return Ok(messages);
    }
    let packet = crate::osc::decode(bytes)?;
    Ok(packet
        .messages()
        .into_iter()
        .map(Message::from_osc)
        .collect())
}
