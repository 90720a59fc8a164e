//! Why an SMF datagram was refused (kind, offset, tag), and the warnings of
//! one that was decoded.

use std::fmt;

use super::Tag;
use crate::wire;

/// Errors and warnings name the chunk at fault by its tag.
impl wire::Field for Tag {
    type ErrorKind = ErrorKind;
    type WarningKind = WarningKind;

    fn name(&self) -> Option<&dyn fmt::Display> {
        Some(self)
    }
}

/// Why a datagram could not be decoded, where (the byte offset of the chunk
/// header, or of the byte, at fault), and in which chunk: for errors about a
/// missing or malformed child, its parent; `None` at the top level.
pub type Error = wire::Error<Option<Tag>>;

/// A value that decodes but is odd: the packet is still decoded and used, and
/// the warning says what and where (for a bone, the offset of its list:
/// `btrs` or `bons`).
pub type Warning = wire::Warning<Tag>;

/// Result of SMF decoding.
pub type Result<T> = std::result::Result<T, Error>;

/// The reasons a datagram is refused. Messages are lowercase fragments with numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The datagram has no bytes.
    Empty,
    /// Fewer than the 8 bytes of a chunk header remain.
    TruncatedHeader {
        /// Bytes left where a header should start.
        have: usize,
    },
    /// A chunk's length runs past the end of its parent.
    Overrun {
        /// Declared payload length.
        len: u32,
        /// Payload bytes actually left in the parent.
        have: usize,
    },
    /// A value chunk's width disagrees with its type.
    BadWidth {
        /// Width the type needs.
        expected: usize,
        /// Width on the wire.
        actual: usize,
    },
    /// A required chunk is absent from its parent.
    Missing(Tag),
    /// A chunk that may appear once appears again.
    Duplicate,
    /// `ftyp` is not `sony motion format`.
    FormatType,
    /// `vrsn` names a version this decoder does not know.
    Version(u8),
    /// More than one of `fram`, `skdf`, `sndt` at the top level.
    SeveralPayloads,
    /// None of `fram`, `skdf`, `sndt` at the top level.
    NoPayload,
}

/// The odd values a decoded packet can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// A clock (`time`, `uttm`) below zero.
    NegativeClock,
    /// A clock that is NaN or infinite.
    NonFiniteClock,
    /// A bone's rotation or position holds NaN or an infinity.
    NonFiniteBone {
        /// The bone's id.
        bone: u16,
    },
    /// A bone's rotation is not a unit quaternion (|q| off 1 by more than
    /// [`UNIT_TOLERANCE`](super::UNIT_TOLERANCE)).
    NonUnitRotation {
        /// The bone's id.
        bone: u16,
    },
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NegativeClock => write!(f, "clock value is negative"),
            Self::NonFiniteClock => write!(f, "clock value is not finite"),
            Self::NonFiniteBone { bone } => write!(f, "bone {bone} has a non-finite value"),
            Self::NonUnitRotation { bone } => {
                write!(f, "bone {bone} rotation is not a unit quaternion")
            }
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => write!(f, "empty datagram"),
            Self::TruncatedHeader { have } => {
                write!(f, "truncated chunk header: need 8 bytes, have {have}")
            }
            Self::Overrun { len, have } => {
                write!(
                    f,
                    "chunk length {len} overruns its parent: {have} bytes left"
                )
            }
            Self::BadWidth { expected, actual } => {
                write!(
                    f,
                    "bad value width: expected {expected} bytes, got {actual}"
                )
            }
            Self::Missing(tag) => write!(f, "missing `{tag}` chunk"),
            Self::Duplicate => write!(f, "duplicate chunk"),
            Self::FormatType => write!(f, "format type is not \"sony motion format\""),
            Self::Version(v) => write!(f, "unsupported format version {v} (known: 1)"),
            Self::SeveralPayloads => {
                write!(f, "more than one payload chunk (fram, skdf, sndt)")
            }
            Self::NoPayload => write!(f, "no payload chunk (fram, skdf or sndt)"),
        }
    }
}
