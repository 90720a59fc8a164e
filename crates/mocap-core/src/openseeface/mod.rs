//! OpenSeeFace's face tracking stream (`facetracker.py` to a game engine or
//! VSeeFace), UDP port 11573.
//!
//! A datagram is one camera frame: the faces tracked in it, each a block of
//! 1785 bytes, back to back, little-endian (the tracker packs in its
//! machine's order; every platform it runs on is little-endian). A face:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | `f64` the sender's clock, seconds since 1970 |
//! | 4 | `i32` face id |
//! | 8 | `f32` camera width, height (pixels) |
//! | 8 | `f32` right, left eye openness (1 open, 0 shut) |
//! | 1 | `u8` 1 when the 3D fit succeeded, else 0 |
//! | 4 | `f32` the 3D fit's error |
//! | 16 | `f32` head rotation quaternion x, y, z, w |
//! | 12 | `f32` head Euler angles x, y, z (degrees) |
//! | 12 | `f32` head translation x, y, z |
//! | 272 | 68 `f32` landmark confidences |
//! | 544 | 68 landmarks, `f32` pixel column then row |
//! | 840 | 70 3D points, `f32` x, y, z (the 68 landmarks, then both eyeballs' centres; zeros when the fit failed) |
//! | 56 | 14 `f32` features ([`FEATURES`]) |
//!
//! The tracker sends nothing while it sees no face, and a frame of 37 faces
//! or more does not fit a UDP datagram. Frames are not numbered. See
//! `docs/openseeface.md`.
//!
//! # No-panic contract
//! [`parse`] never panics, whatever the bytes. It refuses only a datagram
//! that is not whole faces (empty, or its last face cut), with an [`Error`]
//! naming the offset of the cut face. Odd values (a success byte other than
//! 0 or 1, a clock or resolution that is no time or size, an eye openness
//! outside 0–1, a feature that is not finite) are [`Warning`]s on a packet
//! that still decodes.
//!
//! ```
//! use mocap_core::openseeface::{self, FACE_LEN};
//!
//! let mut face = vec![0u8; FACE_LEN];
//! face[..8].copy_from_slice(&1_765_000_000.5f64.to_le_bytes());
//! face[12..16].copy_from_slice(&640f32.to_le_bytes());
//! face[16..20].copy_from_slice(&480f32.to_le_bytes());
//! face[20..24].copy_from_slice(&0.25f32.to_le_bytes()); // right eye
//! let packet = openseeface::parse(&face)?;
//! let first = packet.faces().next().unwrap();
//! assert_eq!(first.time(), 1_765_000_000.5);
//! assert_eq!(first.resolution(), [640.0, 480.0]);
//! assert_eq!(first.eyes_open(), [0.25, 0.0]);
//! assert!(!first.success());
//! assert!(openseeface::parse(&face[..100]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod packet;
mod pose;
mod spec;

pub use error::{Error, ErrorKind, Field, Result, Warning, WarningKind};
pub use packet::{Face, Packet, parse};
pub use pose::unity_head;
pub use spec::SPEC;

/// UDP port the tracker sends to unless told otherwise (`--port`).
pub const DEFAULT_PORT: u16 = 11573;
/// Bytes of one face.
pub const FACE_LEN: usize = 1785;
/// 2D landmarks of a face (the 68-point scheme).
pub const LANDMARKS: usize = 68;
/// 3D points of a face: the landmarks, then the right and left eyeballs.
pub const POINTS_3D: usize = 70;

/// The features in wire order, named as the tracker names them: eye
/// openness, eyebrow steepness, up/down and quirk, mouth corner up/down and
/// in/out, mouth open and wide. Each is −1 to 1 around the median the
/// tracker has seen on this face so far, smoothed: not a calibrated
/// blendshape.
pub const FEATURES: [&str; 14] = [
    "eye_l",
    "eye_r",
    "eyebrow_steepness_l",
    "eyebrow_updown_l",
    "eyebrow_quirk_l",
    "eyebrow_steepness_r",
    "eyebrow_updown_r",
    "eyebrow_quirk_r",
    "mouth_corner_updown_l",
    "mouth_corner_inout_l",
    "mouth_corner_updown_r",
    "mouth_corner_inout_r",
    "mouth_open",
    "mouth_wide",
];
