//! Why a SlimeVR datagram was refused (kind, offset, field), and the
//! warnings of one that was decoded.

use std::fmt;

use crate::wire;

/// The parts of a datagram, named in errors and warnings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// The packet type (four bytes; one in a compact bundle).
    Type,
    /// The packet number.
    Number,
    /// A bundle's length of one packet.
    Length,
    /// The fields of a packet, by the packet's name ([`super::Message::name`]).
    Body(&'static str),
}

impl Field {
    /// The field's name as records and the dissector print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Type => "type",
            Self::Number => "number",
            Self::Length => "length",
            Self::Body(name) => name,
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

/// Result of SlimeVR decoding.
pub type Result<T> = std::result::Result<T, Error>;

/// The reasons a datagram is refused. Messages are lowercase fragments with numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The datagram has no bytes.
    Empty,
    /// A field is cut short.
    Truncated {
        /// Bytes the field needs.
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
    /// Bytes follow the packet's last field.
    Trailing {
        /// How many.
        bytes: usize,
    },
    /// A bundle holds a packet of no bytes (the server skips it).
    EmptyInBundle,
    /// The battery level is not a fraction from 0 to 1 (a percentage sent
    /// where the firmware sends a fraction, or no number).
    BatteryLevel,
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Trailing { bytes } => write!(f, "{bytes} bytes after the last field"),
            Self::EmptyInBundle => write!(f, "empty packet in a bundle"),
            Self::BatteryLevel => write!(f, "battery level is not a fraction from 0 to 1"),
        }
    }
}
