//! Why a Rokoko Studio datagram was refused (kind, offset, field), and the
//! warnings of one that was decoded.

use std::fmt;

use crate::json::JsonErrorKind;
use crate::wire;

/// The members of a frame, named as the JSON names them; `Datagram` is the
/// whole of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Field {
    /// The datagram as a whole (for an LZ4 datagram: its frame).
    Datagram,
    /// `version`.
    Version,
    /// `fps`.
    Fps,
    /// `scene`.
    Scene,
    /// `scene.timestamp`, seconds.
    Timestamp,
    /// `scene.actors`.
    Actors,
    /// `scene.props`.
    Props,
    /// An actor's or prop's `name`.
    Name,
    /// An actor's `meta`.
    Meta,
    /// An actor's `body`.
    Body,
    /// An actor's `face`.
    Face,
}

impl Field {
    /// The member's name in the JSON (`None` for the datagram).
    pub fn key(self) -> Option<&'static str> {
        Some(match self {
            Self::Datagram => return None,
            Self::Version => "version",
            Self::Fps => "fps",
            Self::Scene => "scene",
            Self::Timestamp => "timestamp",
            Self::Actors => "actors",
            Self::Props => "props",
            Self::Name => "name",
            Self::Meta => "meta",
            Self::Body => "body",
            Self::Face => "face",
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

/// A value that decodes but is odd: the frame is still decoded and used.
pub type Warning = wire::Warning<Field>;

/// Result of Rokoko decoding.
pub type Result<T> = std::result::Result<T, Error>;

/// The reasons a datagram is refused. Messages are lowercase fragments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Longer than a UDP datagram can be.
    TooLong(usize),
    /// An LZ4 frame that does not inflate (cut or damaged).
    Lz4,
    /// An LZ4 frame declaring 4 MiB blocks: more than is ever inflated
    /// ([`super::MAX_INFLATED`]); Studio's frames use 64 KiB blocks.
    Lz4BlockSize,
    /// An LZ4 frame inflating past [`super::MAX_INFLATED`].
    Inflated,
    /// Not JSON text (the offset is where reading stopped).
    Json(JsonErrorKind),
    /// JSON, but not an object.
    NotAnObject,
    /// An object without a `scene` object: not a JSON v3 frame (JSON v2,
    /// Studio's older layout, has none).
    NoScene,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::TooLong(n) => write!(f, "{n} bytes, longer than a datagram"),
            Self::Lz4 => write!(f, "an LZ4 frame that does not inflate"),
            Self::Lz4BlockSize => write!(f, "an LZ4 frame of 4 MiB blocks"),
            Self::Inflated => write!(
                f,
                "an LZ4 frame inflating past {} bytes",
                super::MAX_INFLATED
            ),
            Self::Json(JsonErrorKind::Eof) => write!(f, "JSON that ends early"),
            Self::Json(_) => write!(f, "not JSON"),
            Self::NotAnObject => write!(f, "JSON that is not an object"),
            Self::NoScene => write!(f, "an object without a scene"),
        }
    }
}

/// The odd values a decoded frame can carry; `actor` is the index in
/// `scene.actors`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// A documented member is absent.
    Missing,
    /// A member is not of its type (`expected` says which).
    Type {
        /// What it should be: "a number", "a list", …
        expected: &'static str,
    },
    /// A `timestamp` that is not a time (negative or not finite).
    Timestamp,
    /// More actors, props, segments or face values than are kept: how many
    /// were sent (the first ones are kept).
    TooMany(usize),
    /// An actor that is not an object.
    Actor(usize),
    /// A segment or prop that is not `{position{x,y,z}, rotation{x,y,z,w}}`:
    /// the actor (0 for a prop), and its index.
    Pose {
        /// The actor's index.
        actor: usize,
        /// The segment's (or prop's) index.
        index: usize,
    },
    /// A face value that is not a number: the actor and its index.
    FaceValue {
        /// The actor's index.
        actor: usize,
        /// The value's index in the face object.
        index: usize,
    },
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Missing => write!(f, "missing"),
            Self::Type { expected } => write!(f, "not {expected}"),
            Self::Timestamp => write!(f, "timestamp that is not a time"),
            Self::TooMany(n) => write!(f, "{n} sent, more than are kept"),
            Self::Actor(i) => write!(f, "actor {i} is not an object"),
            Self::Pose { actor, index } => write!(
                f,
                "item {index} of actor {actor} is not a position and a rotation"
            ),
            Self::FaceValue { actor, index } => {
                write!(f, "face value {index} of actor {actor} is not a number")
            }
        }
    }
}
