//! VTube Studio's phone protocol: the iPhone/Android app tracks the face and
//! sends it to the PCs that ask, over UDP, as JSON text.
//!
//! A PC sends the phone (UDP port [`DEFAULT_PORT`], where the app listens
//! once "3rd Party PC Clients" is on) a request,
//! `{"messageType":"iOSTrackingDataRequest","time":T,"sentBy":NAME,"ports":[…]}`:
//! send for `T` seconds (0.5 to 10) to these ports of my address. It repeats
//! the request while it wants data ([`RESEND`], [`REQUEST_TIME`]). The phone
//! then sends one datagram per tracked frame (60 a second, typically) from a
//! port of its own to each listed port: an object of `Timestamp` (Unix
//! milliseconds), `Hotkey` (the on-screen hotkey pressed, 1 to 8, or -1),
//! `FaceFound`, `Rotation` and `Position` of the head, `EyeLeft` and
//! `EyeRight` (each `{"x","y","z"}`, degrees for rotations) and
//! `BlendShapes`, a list of `{"k": name, "v": value}` with the 52 ARKit
//! blendshapes. There is no data port of its own: the PC names its ports.
//! See `docs/vtubestudio.md`.
//!
//! # No-panic contract
//! [`parse`] never panics, whatever the bytes, and keeps at most
//! [`MAX_BLENDSHAPES`] blendshapes. It refuses only what is not one of the
//! two shapes (not JSON, not an object, another `messageType`, an object
//! with none of the tracking data's members), with an [`Error`] at a byte
//! offset. Odd values (a member absent or not of its type, a `time` out of
//! range, too many ports) are [`Warning`]s on a packet that still decodes.
//!
//! ```
//! use mocap_core::vtubestudio::{Packet, parse};
//!
//! let frame = br#"{"Timestamp":1765000000000,"Hotkey":-1,"FaceFound":true,
//!     "Rotation":{"x":-10.0,"y":5.5,"z":-2.25},"Position":{"x":0.5,"y":-1.25,"z":30.0},
//!     "BlendShapes":[{"k":"JawOpen","v":0.25}],
//!     "EyeLeft":{"x":1.5,"y":0.0,"z":0.0},"EyeRight":{"x":1.5,"y":0.0,"z":0.0}}"#;
//! let Packet::Data(t) = parse(frame)? else { unreachable!() };
//! assert_eq!(t.timestamp, Some(1_765_000_000_000));
//! assert_eq!(t.blendshapes, [("JawOpen".to_owned(), 0.25)]);
//! assert_eq!(t.rotation, Some([-10.0, 5.5, -2.25]));
//! assert!(t.warnings.is_empty());
//! assert!(parse(&frame[..40]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod packet;
mod request;
mod spec;

pub use error::{Error, ErrorKind, Field, Result, Warning, WarningKind};
pub use packet::{Packet, Request, TrackingData, parse};
pub use request::{
    MAX_PORTS, MAX_SENT_BY, MAX_TIME, MIN_TIME, REQUEST_TIME, RESEND, RequestError, SENT_BY,
    request,
};
pub use spec::SPEC;

/// UDP port the phone app listens on for requests.
pub const DEFAULT_PORT: u16 = 21412;
/// The request's `messageType`.
pub const REQUEST_TYPE: &str = "iOSTrackingDataRequest";
/// Blendshapes kept of one frame: the app sends 52; a longer list is cut
/// here, with a warning.
pub const MAX_BLENDSHAPES: usize = 256;
