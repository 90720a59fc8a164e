//! Why a datagram is not an iFacialMocap frame or command, and the fields of
//! a frame that were skipped: [`wire`]'s located error and warning. The
//! messages keep iFacialMocap's own wording (the offset inside the
//! sentence, a skipped field quoted), which ifm-handshake prints in its
//! records.

use std::fmt;

use super::MAX_FRAME;
use crate::wire;

/// What an iFacialMocap refusal is about: the datagram as a whole (its
/// offset says from where).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Whole;

/// A field of a frame as received (`mouthSmile_L-12`), which a warning
/// quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a>(pub &'a str);

/// A field that was skipped: its offset in the frame, the field as
/// received, and why.
pub type Warning<'a> = wire::Warning<Entry<'a>>;

/// Why a datagram is not a frame (or a command), and where.
pub type Error = wire::Error<Whole>;

/// Why a field was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarningKind {
    /// Text after the last block (`leftEye#…`).
    JunkAfterLastBlock,
    /// Neither `name-value`, `name&value` nor a known block.
    NotAnEntry,
    /// The value is not an integer.
    BadValue,
    /// A block with the wrong number of values (or values that are not numbers).
    BadBlock {
        /// Values the block needs.
        expected: usize,
    },
    /// The same key twice; the later value is kept.
    Duplicate,
}

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::JunkAfterLastBlock => write!(f, "junk after the last block"),
            Self::NotAnEntry => write!(f, "not a name-value entry"),
            Self::BadValue => write!(f, "value is not an integer"),
            Self::BadBlock { expected } => write!(f, "block needs {expected} numbers"),
            Self::Duplicate => write!(f, "duplicate key, later value kept"),
        }
    }
}

impl wire::Field for Entry<'_> {
    type ErrorKind = ErrorKind;
    type WarningKind = WarningKind;

    fn name(&self) -> Option<&dyn fmt::Display> {
        None
    }

    fn fmt_warning(w: &Warning<'_>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}: {:?}", w.kind, w.offset, w.field.0)
    }
}

/// The reasons a datagram is not a frame (or a command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No bytes.
    Empty,
    /// Bytes that are not UTF-8 (from the offset).
    NotUtf8,
    /// A command string (ours looped back, or another PC's).
    Command,
    /// Larger than [`MAX_FRAME`].
    TooLong {
        /// Its length.
        len: usize,
    },
    /// No blendshape entry and no block: nothing of a frame.
    NoFrameData,
    /// Text that is none of the commands ([`Command::parse`](super::Command::parse)).
    NotACommand,
}

impl From<ErrorKind> for Error {
    /// The datagram as a whole is at fault.
    fn from(kind: ErrorKind) -> Self {
        Self::new(0, Whole, kind)
    }
}

impl Error {
    /// Bytes that are not UTF-8 from `offset`.
    pub(crate) fn not_utf8(offset: usize) -> Self {
        Self::new(offset, Whole, ErrorKind::NotUtf8)
    }
}

impl wire::Field for Whole {
    type ErrorKind = ErrorKind;
    type WarningKind = WarningKind;

    fn name(&self) -> Option<&dyn fmt::Display> {
        None
    }

    /// Only text that is not UTF-8 has a place worth saying; the other
    /// refusals are of the datagram as a whole.
    fn fmt_error(e: &Error, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match e.kind {
            ErrorKind::NotUtf8 => write!(f, "{} at byte {}", e.kind, e.offset),
            _ => write!(f, "{}", e.kind),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "empty datagram"),
            Self::NotUtf8 => write!(f, "not UTF-8"),
            Self::Command => write!(f, "a command string, not a frame"),
            Self::TooLong { len } => {
                write!(f, "{len} bytes is longer than any frame ({MAX_FRAME})")
            }
            Self::NoFrameData => write!(f, "no blendshape or head/eye block"),
            Self::NotACommand => write!(f, "not an iFacialMocap or Facemotion3d command"),
        }
    }
}
