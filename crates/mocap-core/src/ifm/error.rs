//! Why a datagram is not an iFacialMocap frame or command (kind, offset), and
//! the fields of a frame that were skipped.

use std::fmt;

use super::MAX_FRAME;

/// A field that was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warning<'a> {
    /// Byte offset of the field in the frame.
    pub offset: usize,
    /// The field as received.
    pub field: &'a str,
    /// Why it was skipped.
    pub kind: WarningKind,
}

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

impl fmt::Display for Warning<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}: {:?}", self.kind, self.offset, self.field)
    }
}

/// Why a datagram is not a frame (or a command), and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Error {
    /// What is wrong.
    pub kind: ErrorKind,
    /// Byte offset of the fault (0 when the datagram as a whole is at fault).
    pub offset: usize,
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
        Self { kind, offset: 0 }
    }
}

impl Error {
    /// Bytes that are not UTF-8 from `offset`.
    pub(crate) fn not_utf8(offset: usize) -> Self {
        Self {
            kind: ErrorKind::NotUtf8,
            offset,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::Empty => write!(f, "empty datagram"),
            ErrorKind::NotUtf8 => write!(f, "not UTF-8 at byte {}", self.offset),
            ErrorKind::Command => write!(f, "a command string, not a frame"),
            ErrorKind::TooLong { len } => {
                write!(f, "{len} bytes is longer than any frame ({MAX_FRAME})")
            }
            ErrorKind::NoFrameData => write!(f, "no blendshape or head/eye block"),
            ErrorKind::NotACommand => write!(f, "not an iFacialMocap or Facemotion3d command"),
        }
    }
}

impl std::error::Error for Error {}
