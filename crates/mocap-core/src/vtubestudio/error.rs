//! Why a VTube Studio datagram was refused (kind, offset, field), and the
//! warnings of one that was decoded.

use std::fmt;

use crate::json::JsonErrorKind;
use crate::wire;

/// The members of a datagram, named as the JSON names them; `Datagram` is
/// the whole of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// The datagram as a whole.
    Datagram,
    /// A request's `messageType`.
    MessageType,
    /// A request's `time`, seconds.
    Time,
    /// A request's `sentBy`.
    SentBy,
    /// A request's `ports`.
    Ports,
    /// The data's `Timestamp`, Unix milliseconds.
    Timestamp,
    /// The data's `Hotkey`.
    Hotkey,
    /// The data's `FaceFound`.
    FaceFound,
    /// The data's head `Rotation`.
    Rotation,
    /// The data's head `Position`.
    Position,
    /// The data's `EyeLeft`.
    EyeLeft,
    /// The data's `EyeRight`.
    EyeRight,
    /// The data's `BlendShapes`.
    BlendShapes,
}

impl Field {
    /// The member's name in the JSON (`None` for the datagram).
    pub fn key(self) -> Option<&'static str> {
        Some(match self {
            Self::Datagram => return None,
            Self::MessageType => "messageType",
            Self::Time => "time",
            Self::SentBy => "sentBy",
            Self::Ports => "ports",
            Self::Timestamp => "Timestamp",
            Self::Hotkey => "Hotkey",
            Self::FaceFound => "FaceFound",
            Self::Rotation => "Rotation",
            Self::Position => "Position",
            Self::EyeLeft => "EyeLeft",
            Self::EyeRight => "EyeRight",
            Self::BlendShapes => "BlendShapes",
        })
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key().unwrap_or("datagram"))
    }
}

impl wire::Field for Field {
    type ErrorKind = ErrorKind;
    type WarningKind = WarningKind;

    fn name(&self) -> Option<&dyn fmt::Display> {
        self.key().is_some().then_some(self as &dyn fmt::Display)
    }
}

/// Why a datagram could not be decoded, and where.
pub type Error = wire::Error<Field>;

/// A value that decodes but is odd: the datagram is still decoded and used.
pub type Warning = wire::Warning<Field>;

/// Result of VTube Studio decoding.
pub type Result<T> = std::result::Result<T, Error>;

/// The reasons a datagram is refused. Messages are lowercase fragments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Longer than a UDP datagram can be.
    TooLong(usize),
    /// Not JSON text (the offset is where reading stopped).
    Json(JsonErrorKind),
    /// JSON, but not an object.
    NotAnObject,
    /// A `messageType` other than the tracking data request: another
    /// program's JSON.
    OtherMessage,
    /// An object with none of the tracking data's members.
    NoTrackingData,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooLong(n) => write!(f, "{n} bytes, longer than a datagram"),
            Self::Json(JsonErrorKind::Eof) => write!(f, "JSON that ends early"),
            Self::Json(_) => write!(f, "not JSON"),
            Self::NotAnObject => write!(f, "JSON that is not an object"),
            Self::OtherMessage => write!(f, "not a tracking data request"),
            Self::NoTrackingData => write!(f, "an object without tracking data"),
        }
    }
}

/// The odd values a decoded datagram can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// A documented member is absent.
    Missing,
    /// A member is not of its type (`expected` says which).
    Type {
        /// What it should be: "an integer", "a number", "a boolean", …
        expected: &'static str,
    },
    /// A request's `time` outside 0.5 to 10 seconds (the app's range).
    TimeRange,
    /// A request's `sentBy` outside 1 to 64 characters.
    SentByLength(usize),
    /// A request without ports, or with more than 32.
    PortCount(usize),
    /// Listed ports that are not whole numbers from 1 to 65535: how many,
    /// and the index of the first (one warning for them all).
    Ports {
        /// How many.
        count: usize,
        /// The index of the first.
        first: usize,
    },
    /// A `Timestamp` before 1970.
    Timestamp,
    /// A `Hotkey` other than -1 (none) or 1 to 8.
    Hotkey(i64),
    /// A blendshape entry that is not `{"k": name, "v": number}` (its index).
    Entry(usize),
    /// More blendshapes than are kept ([`super::MAX_BLENDSHAPES`]): the rest
    /// are left out.
    TooManyBlendShapes(usize),
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Missing => write!(f, "missing"),
            Self::Type { expected } => write!(f, "not {expected}"),
            Self::TimeRange => write!(f, "time outside 0.5 to 10 s"),
            Self::SentByLength(n) => write!(f, "{n} characters (expected 1 to 64)"),
            Self::PortCount(n) => write!(f, "{n} ports (expected 1 to 32)"),
            Self::Ports { count: 1, first } => write!(f, "port {first} is not a port number"),
            Self::Ports { count, first } => {
                write!(
                    f,
                    "{count} ports are not port numbers, the first at {first}"
                )
            }
            Self::Timestamp => write!(f, "timestamp before 1970"),
            Self::Hotkey(h) => write!(f, "hotkey {h} (expected -1 or 1 to 8)"),
            Self::Entry(i) => write!(f, "blendshape {i} is not a name and a number"),
            Self::TooManyBlendShapes(n) => write!(
                f,
                "{n} blendshapes, the first {} kept",
                super::MAX_BLENDSHAPES
            ),
        }
    }
}
