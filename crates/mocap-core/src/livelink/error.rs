//! Why a Live Link Face datagram was refused (kind, offset, field), and the
//! warnings of one that was decoded.

use std::fmt;

use crate::wire;

/// The fields of a datagram, named in errors and warnings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// The packet version byte.
    Version,
    /// The device id's length or bytes.
    Device,
    /// The subject name's length or bytes.
    Subject,
    /// The 16-byte frame time block.
    FrameTime,
    /// The value count and the values.
    Values,
}

impl Field {
    /// The field's name as records and the dissector print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Version => "version",
            Self::Device => "device",
            Self::Subject => "subject",
            Self::FrameTime => "frame_time",
            Self::Values => "values",
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl wire::Field for Field {
    type ErrorKind = ErrorKind;
    type WarningKind = WarningKind;

    fn name(&self) -> Option<&dyn fmt::Display> {
        Some(self)
    }
}

/// Why a datagram could not be decoded, and where.
pub type Error = wire::Error<Field>;

/// A value that decodes but is odd: the packet is still decoded and used.
pub type Warning = wire::Warning<Field>;

/// Result of Live Link Face decoding.
pub type Result<T> = std::result::Result<T, Error>;

/// The reasons a datagram is refused. Messages are lowercase fragments with numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The datagram has no bytes.
    Empty,
    /// The version byte names a layout this decoder does not know.
    Version(u8),
    /// The datagram ends inside a field.
    Truncated {
        /// Bytes the field needs.
        need: usize,
        /// Bytes left.
        have: usize,
    },
    /// A string's length is negative or runs past the end of the datagram.
    Length {
        /// The length on the wire.
        len: i32,
        /// Bytes left after the length.
        have: usize,
    },
    /// The value count says more values than the datagram holds.
    Count {
        /// The count on the wire.
        count: u8,
        /// Bytes left after the count.
        have: usize,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => write!(f, "empty datagram"),
            Self::Version(v) => write!(f, "unsupported packet version {v} (known: 6)"),
            Self::Truncated { need, have } => wire::Truncated { need, have }.fmt(f),
            Self::Length { len, have } => {
                write!(f, "string length {len} does not fit: {have} bytes left")
            }
            Self::Count { count, have } => write!(
                f,
                "{count} values need {} bytes, {have} left",
                usize::from(count) * 4
            ),
        }
    }
}

impl From<wire::Truncated> for ErrorKind {
    fn from(t: wire::Truncated) -> Self {
        Self::Truncated {
            need: t.need,
            have: t.have,
        }
    }
}

/// The odd values a decoded packet can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// The device id or subject is not UTF-8 (shown with replacement characters).
    NotUtf8,
    /// A count other than 61: the values present are decoded by position.
    Count(u8),
    /// A value is NaN or infinite.
    NonFinite {
        /// Its index among the values.
        index: usize,
    },
    /// The frame rate's numerator or denominator is not positive.
    Rate,
    /// The subframe is NaN or infinite.
    Subframe,
    /// Bytes after the last value.
    Trailing {
        /// How many.
        len: usize,
    },
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NotUtf8 => write!(f, "not UTF-8"),
            Self::Count(n) => write!(f, "{n} values (expected 61)"),
            Self::NonFinite { index } => write!(f, "value {index} is not finite"),
            Self::Rate => write!(f, "frame rate is not positive"),
            Self::Subframe => write!(f, "subframe is not finite"),
            Self::Trailing { len } => write!(f, "{len} bytes after the values"),
        }
    }
}
