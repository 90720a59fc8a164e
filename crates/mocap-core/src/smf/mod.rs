//! Sony mocopi's UDP stream, the "Sony Motion Format" (SMF).
//!
//! Every datagram is a tree of chunks (Sony calls them boxes):
//!
//! | bytes | field |
//! |---|---|
//! | 4 | payload length, `u32` little-endian (header not counted) |
//! | 4 | tag, four ASCII letters |
//! | length | payload: children for a container tag, else a value |
//!
//! A datagram is `head` (`ftyp` = `sony motion format`, `vrsn` = 1), `sndf`
//! (`ipad` decimal-packed IPv4 `u64`, `rcvp` `u16`), then one payload: `fram`
//! (`fnum` `u32`, `time` `f32`, optional `uttm` `f64`, optional `tmcd` 6 bytes,
//! `btrs` of `btdt` = `bnid` + `tran`), `skdf` (`bons` of `bndt` = `bnid`,
//! `pbid` `i16`, `tran`) or `sndt` (sensor data, kept raw). `tran` is seven
//! little-endian `f32`: rotation x, y, z, w, then position x, y, z. Frames
//! have been 1575, 1591 and 1605 bytes as apps added `uttm` and `tmcd`, so the
//! decoder walks by tag and never by offset. See `docs/smf.md`.
//!
//! # No-panic contract
//! [`parse`] never panics, whatever the bytes. It returns a [`Packet`] whose
//! accessors cannot fail, or an [`Error`] naming the byte offset, the chunk
//! and the reason. Unknown chunks are skipped and counted, never fatal.
//!
//! ```
//! use mocap_core::smf::{self, BodyRepr, Bone, FrameRepr, PacketRepr, Sender};
//!
//! let repr = PacketRepr {
//!     sender: Some(Sender { ipad: 172_020_010_007, rcvp: smf::DEFAULT_PORT }),
//!     body: BodyRepr::Frame(FrameRepr {
//!         fnum: 7,
//!         time: 0.5,
//!         uttm: None,
//!         timecode: None,
//!         bones: vec![Bone { id: 0, rot: [0.0, 0.0, 0.0, 1.0], pos: [0.0, 0.9, 0.0] }],
//!     }),
//! };
//! let bytes = repr.to_bytes();
//! let packet = smf::parse(&bytes)?;
//! assert_eq!(packet.frame().map(|f| f.fnum), Some(7));
//! assert_eq!(packet.sender.and_then(|s| s.ip()), Some("172.20.10.7".parse()?));
//! assert_eq!(PacketRepr::parse(&packet), repr);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod bones;
mod chunk;
mod error;
mod packet;
mod repr;
mod spec;
mod tag;

pub use bones::{BONE_COUNT, BONES, BoneInfo, bone_id, bone_info, bone_name};
pub use chunk::{Chunk, Chunks, HEADER_LEN};
pub use error::{Error, ErrorKind, Result, Warning, WarningKind};

/// How far |q| may be from 1 before a rotation is reported as not unit:
/// float32 quaternions from real senders are within about 1e-6.
pub const UNIT_TOLERANCE: f32 = 1e-3;
pub use packet::{
    Body, Bone, BoneDef, Bones, FORMAT_TYPE, Frame, Packet, Sender, Sensor, Skeleton, Timecode,
    VERSION, pack_ipv4, parse, unpack_ipv4,
};
pub use repr::{BodyRepr, FrameRepr, PacketRepr};
pub use spec::SPEC;
pub use tag::Tag;

/// UDP port the mocopi app sends to unless told otherwise.
pub const DEFAULT_PORT: u16 = 12351;
