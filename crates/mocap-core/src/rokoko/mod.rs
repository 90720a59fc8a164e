//! Rokoko Studio Live: Rokoko Studio streams its scene (suit actors with
//! body and face, props) to a plugin over UDP, one datagram per frame, as
//! JSON text ("JSON v3"), LZ4-compressed when the stream's compression is
//! on.
//!
//! Studio sends to the port its Live target names ([`DEFAULT_PORT`] by
//! default). A datagram is either the JSON text itself or one LZ4 *frame*
//! (magic `04 22 4D 18`) holding it. The object has `version`, `fps` and
//! `scene`: `timestamp` (seconds on Studio's clock), `actors` (each with
//! `name`, `meta` {`hasBody`, `hasFace`, `hasGloves`…}, `dimensions`,
//! `body`: named segments, each `{"position":{x,y,z},"rotation":{x,y,z,w}}`,
//! world pose in Unity's frame, and `face`: the 52 ARKit blendshapes by
//! name, in percent 0 to 100) and `props` (named, with position and
//! rotation). The body's rotations are the suit's segments in the world,
//! each relative to Studio's own T-pose of that segment; the `body` module turns them
//! into humanoid local rotations. See `docs/rokoko.md`.
//!
//! # No-panic contract
//! [`parse`] never panics, whatever the bytes; an LZ4 frame inflates to at
//! most [`MAX_INFLATED`] bytes, and a frame keeps at most [`MAX_ACTORS`]
//! actors, [`MAX_SEGMENTS`] segments and [`MAX_FACE`] face values each, and
//! [`MAX_PROPS`] props. It refuses only what is not a Studio frame (not
//! JSON or LZ4, not an object, no `scene`), with an [`Error`] at a byte
//! offset (in the inflated text for an LZ4 datagram). Odd values are
//! [`Warning`]s on a frame that still decodes.
//!
//! ```
//! use mocap_core::rokoko::parse;
//!
//! let frame = br#"{"version":3,"fps":60,"scene":{"timestamp":12.5,"actors":[
//!     {"name":"Ann","meta":{"hasBody":true,"hasFace":true},
//!      "body":{"hip":{"position":{"x":0,"y":1,"z":0},"rotation":{"x":0,"y":0,"z":0,"w":1}}},
//!      "face":{"faceId":"f","jawOpen":25}}],"props":[]}}"#;
//! let f = parse(frame)?;
//! assert_eq!(f.timestamp, Some(12.5));
//! assert_eq!(f.actors[0].name.as_deref(), Some("Ann"));
//! assert_eq!(f.actors[0].body[0].name, "hip");
//! assert_eq!(f.actors[0].face, [("jawOpen".to_owned(), 25.0)]);
//! assert!(f.warnings.is_empty());
//! assert!(parse(&frame[..40]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod body;
mod error;
mod packet;
mod spec;

pub use body::{SEGMENTS, humanoid_of, pose, t_pose};
pub use error::{Error, ErrorKind, Field, Result, Warning, WarningKind};
pub use packet::{Actor, Frame, Item, Meta, inflate, parse};
pub use spec::SPEC;

/// UDP port Studio's Live targets send to by default.
pub const DEFAULT_PORT: u16 = 14043;
/// An LZ4 frame's magic number, as its first four bytes.
pub const LZ4_MAGIC: [u8; 4] = [0x04, 0x22, 0x4D, 0x18];
/// The most an LZ4 datagram inflates to: a frame of one actor with gloves
/// is about 12 KB, so 1 MiB leaves room for a studio of them while a small
/// datagram cannot make the reader hold more.
pub const MAX_INFLATED: usize = 1 << 20;
/// Actors kept of one frame; the rest are left out, with a warning.
pub const MAX_ACTORS: usize = 16;
/// Segments kept of one actor (Studio names 63 with gloves).
pub const MAX_SEGMENTS: usize = 96;
/// Face values kept of one actor (Studio sends the 52 ARKit blendshapes).
pub const MAX_FACE: usize = 96;
/// Props kept of one frame.
pub const MAX_PROPS: usize = 32;
