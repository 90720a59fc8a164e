//! Epic's Live Link Face app (iPhone ARKit face capture), UDP port 11111.
//!
//! A datagram is one face frame, big-endian, walked by its length fields:
//!
//! | bytes | field |
//! |---|---|
//! | 1 | packet version, 6 |
//! | 4 + L1 | `i32` length, then the device id (UTF-8; a UUID in practice) |
//! | 4 + L2 | `i32` length, then the subject name (UTF-8; the phone's name) |
//! | 16 | frame time: `i32` frame, `f32` subframe, `i32` rate numerator, `i32` denominator |
//! | 1 + 4·N | `u8` count N (61), then N `f32` values |
//!
//! Values 0–51 are ARKit's 52 blendshapes in Apple's order ([`BLENDSHAPES`]),
//! 52–54 head yaw, pitch, roll, 55–57 the left eye's and 58–60 the right
//! eye's. A datagram that ends right after the frame time is a **no-face**
//! packet (the app sends them while it has lost the face): a [`Body::NoFace`],
//! not an error. See `docs/livelink.md`.
//!
//! # No-panic contract
//! [`parse`] never panics, whatever the bytes. It refuses only what cannot be
//! walked — another version, a length past the end, a count whose values do
//! not fit — with an [`Error`] naming the byte offset and the field. Odd
//! values (text that is not UTF-8, a count other than 61, NaN, a zero rate,
//! bytes after the values) are [`Warning`]s on a packet that still decodes.
//!
//! ```
//! use mocap_core::livelink::{self, Body, PacketRepr};
//!
//! let mut values = vec![0.0f32; livelink::VALUE_COUNT];
//! values[17] = 0.25; // JawOpen
//! let repr = PacketRepr {
//!     device: "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F".into(),
//!     subject: "Someone's iPhone".into(),
//!     frame: 1_096_414,
//!     subframe: 0.5,
//!     rate: [60, 1],
//!     values: Some(values),
//! };
//! let bytes = repr.to_bytes();
//! let packet = livelink::parse(&bytes)?;
//! assert_eq!(packet.subject(), "Someone's iPhone");
//! let Body::Face(face) = &packet.body else { unreachable!() };
//! assert_eq!(face.blendshape(17), Some(0.25));
//! assert_eq!(PacketRepr::parse(&packet), repr);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod packet;
mod pose;
mod repr;
mod spec;

pub use error::{Error, ErrorKind, Field, Result, Warning, WarningKind};
pub use packet::{Angles, Body, Face, FrameTime, Packet, parse};
pub use pose::AngleUnit;
pub use repr::PacketRepr;
pub use spec::SPEC;

/// UDP port the app sends to unless its target says otherwise.
pub const DEFAULT_PORT: u16 = 11111;
/// The packet version this decoder reads.
pub const VERSION: u8 = 6;
/// Values in a face packet: 52 blendshapes, then head, left eye, right eye.
pub const VALUE_COUNT: usize = 61;
/// Index of head yaw among the values; pitch and roll follow, then the eyes.
pub const HEAD: usize = 52;
/// Index of the left eye's yaw.
pub const LEFT_EYE: usize = 55;
/// Index of the right eye's yaw.
pub const RIGHT_EYE: usize = 58;

/// The 52 blendshapes as Live Link (and Unreal) names them, in wire order:
/// ARKit's names capitalised, in the same order as [`crate::ifm::ARKIT`].
pub const BLENDSHAPES: [&str; 52] = [
    "EyeBlinkLeft",
    "EyeLookDownLeft",
    "EyeLookInLeft",
    "EyeLookOutLeft",
    "EyeLookUpLeft",
    "EyeSquintLeft",
    "EyeWideLeft",
    "EyeBlinkRight",
    "EyeLookDownRight",
    "EyeLookInRight",
    "EyeLookOutRight",
    "EyeLookUpRight",
    "EyeSquintRight",
    "EyeWideRight",
    "JawForward",
    "JawLeft",
    "JawRight",
    "JawOpen",
    "MouthClose",
    "MouthFunnel",
    "MouthPucker",
    "MouthLeft",
    "MouthRight",
    "MouthSmileLeft",
    "MouthSmileRight",
    "MouthFrownLeft",
    "MouthFrownRight",
    "MouthDimpleLeft",
    "MouthDimpleRight",
    "MouthStretchLeft",
    "MouthStretchRight",
    "MouthRollLower",
    "MouthRollUpper",
    "MouthShrugLower",
    "MouthShrugUpper",
    "MouthPressLeft",
    "MouthPressRight",
    "MouthLowerDownLeft",
    "MouthLowerDownRight",
    "MouthUpperUpLeft",
    "MouthUpperUpRight",
    "BrowDownLeft",
    "BrowDownRight",
    "BrowInnerUp",
    "BrowOuterUpLeft",
    "BrowOuterUpRight",
    "CheekPuff",
    "CheekSquintLeft",
    "CheekSquintRight",
    "NoseSneerLeft",
    "NoseSneerRight",
    "TongueOut",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_arkit_capitalised_in_the_same_order() {
        for (ours, arkit) in BLENDSHAPES.iter().zip(crate::ifm::ARKIT) {
            let mut c = arkit.chars();
            let cap: String = c
                .next()
                .map(|f| f.to_ascii_uppercase())
                .into_iter()
                .chain(c)
                .collect();
            assert_eq!(*ours, cap);
        }
    }
}
