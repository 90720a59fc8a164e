//! Why an OpenSeeFace datagram was refused (kind, offset, field), and the
//! warnings of one that was decoded.

use std::fmt;

use crate::wire;

/// The fields of a datagram, named in errors and warnings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// A whole 1785-byte face.
    Face,
    /// The sender's clock.
    Time,
    /// The camera width and height.
    Resolution,
    /// The right and left eye openness.
    EyeOpen,
    /// The 3D fit's success byte.
    Success,
    /// The 14 features.
    Features,
}

impl Field {
    /// The field's name as records and the dissector print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Face => "face",
            Self::Time => "time",
            Self::Resolution => "resolution",
            Self::EyeOpen => "eye_open",
            Self::Success => "success",
            Self::Features => "features",
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

/// Result of OpenSeeFace decoding.
pub type Result<T> = std::result::Result<T, Error>;

/// The reasons a datagram is refused. Messages are lowercase fragments with numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The datagram has no bytes.
    Empty,
    /// The last face is cut short (or bytes follow the last whole face).
    Truncated {
        /// Bytes a face needs.
        need: usize,
        /// Bytes left.
        have: usize,
    },
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => write!(f, "empty datagram"),
            Self::Truncated { need, have } => wire::Truncated { need, have }.fmt(f),
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
    /// The clock is NaN, infinite or before 1970.
    Time,
    /// The width or height is not a whole number of pixels from 1 to 65536.
    Resolution,
    /// An eye openness is outside 0 to 1, or NaN.
    EyeOpen,
    /// The success byte is neither 0 nor 1.
    Success(u8),
    /// A feature is NaN or infinite.
    NonFinite {
        /// Its index among the features.
        index: usize,
    },
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Time => write!(f, "clock is not a time"),
            Self::Resolution => write!(f, "resolution is not whole pixels from 1 to 65536"),
            Self::EyeOpen => write!(f, "eye openness is outside 0 to 1"),
            Self::Success(b) => write!(f, "success byte {b} (expected 0 or 1)"),
            Self::NonFinite { index } => write!(f, "feature {index} is not finite"),
        }
    }
}
