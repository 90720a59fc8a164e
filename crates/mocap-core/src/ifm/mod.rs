//! iFacialMocap and Facemotion3d face streams (legacy text protocol, v1/v2).
//!
//! The PC sends a command string to the phone's UDP port 49983 (Facemotion3d:
//! 49993); the phone then streams one text frame per datagram to the PC's UDP
//! 49983 at 60 fps, or connects to PC TCP 49986 and sends frames ending in
//! `___iFacialMocap`. A frame:
//!
//! ```text
//! trackingStatus-1|eyeBlink_L-7|…|jawOpen-12|hapihapi-0|=head#rx,ry,rz,px,py,pz|rightEye#rx,ry,rz|leftEye#rx,ry,rz|
//! ```
//!
//! v2 (and Facemotion3d) write `name&value`, so values may be negative.
//! Keys come in any order, and not always 52 of them. See `docs/ifacialmocap.md`.
//!
//! # No-panic contract
//! [`parse`] never panics; it returns a [`Frame`] (with [`Warning`]s for
//! fields it skipped) or an [`Error`].
//!
//! ```
//! use mocap_core::ifm::{self, FrameRepr, Head};
//!
//! let repr = FrameRepr {
//!     tracking: Some(true),
//!     blendshapes: vec![("eyeBlinkLeft".into(), 7), ("jawOpen".into(), -12)],
//!     extra: vec![("hapihapi".into(), 0)],
//!     head: Some(Head { rot: [1.5, -2.0, 0.25], pos: [0.0, 0.01, -0.4] }),
//!     right_eye: Some([6.0, 2.4, 0.3]),
//!     left_eye: Some([6.0, -1.7, -0.2]),
//! };
//! let bytes = repr.to_bytes(ifm::Version::V2);
//! assert!(bytes.starts_with(b"trackingStatus&1|eyeBlink_L&7|jawOpen&-12|"));
//! let frame = ifm::parse(&bytes)?;
//! assert_eq!(FrameRepr::parse(&frame), repr);
//! # Ok::<(), ifm::Error>(())
//! ```

mod bake;
mod command;
mod error;
mod frame;
pub mod handshake;
mod names;
mod pose;
mod spec;
mod stream;

pub use bake::{BakeError, RECORDING_FPS, parse_recording, write_recording};
pub use command::{
    Command, FM_PHONE_PORT, PC_BAKE_PORT, PC_TCP_PORT, PC_UDP_PORT, PHONE_PORT, TERMINATOR,
    Version, is_command,
};
pub use error::{Entry, Error, ErrorKind, Warning, WarningKind, Whole};
pub use frame::{Frame, FrameRepr, Head, parse, parse_str};
pub use names::{ARKIT, arkit_index, wire_name};
pub use spec::SPEC;
pub use stream::Splitter;

/// Largest frame we read (real frames are about 1 KB).
pub const MAX_FRAME: usize = 64 * 1024;
