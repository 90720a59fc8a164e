//! What every binary protocol module shares, written once: where a refusal
//! or an odd value is ([`Error`], [`Warning`]: byte offset and field) and a
//! checked read cursor ([`Cursor`]).
//!
//! A protocol names its fields in a small type of its own and says what its
//! refusals and warnings are (an `ErrorKind` and a `WarningKind` whose
//! `Display` is a lowercase fragment with numbers); [`Field`] ties the three
//! together, and `pub type Error = wire::Error<Field>;` is its error. Every
//! tool, record and dissector then reads the same `offset`, `field` and
//! `kind`, printed the same way: ``<kind> at offset <n> in `<field>` ``.
//! The kinds stay the protocol's own: their words are what the tools' records
//! and the Wireshark dissectors print, and they differ (a Live Link string
//! "does not fit", an SMF chunk "overruns its parent").
//!
//! A whole protocol of a count and that many big-endian floats:
//!
//! ```
//! use std::fmt;
//! use mocap_core::wire::{self, Cursor, Truncated};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Eq)]
//! enum Field { Count, Values }
//!
//! impl fmt::Display for Field {
//!     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
//!         f.write_str(match self { Self::Count => "count", Self::Values => "values" })
//!     }
//! }
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Eq)]
//! enum ErrorKind { Truncated(Truncated) }
//!
//! impl From<Truncated> for ErrorKind {
//!     fn from(t: Truncated) -> Self {
//!         Self::Truncated(t)
//!     }
//! }
//!
//! impl fmt::Display for ErrorKind {
//!     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
//!         let Self::Truncated(t) = self;
//!         t.fmt(f)
//!     }
//! }
//!
//! impl wire::Field for Field {
//!     type ErrorKind = ErrorKind;
//!     type WarningKind = ErrorKind; // this one has no warnings
//!     fn name(&self) -> Option<&dyn fmt::Display> {
//!         Some(self)
//!     }
//! }
//!
//! type Error = wire::Error<Field>;
//!
//! fn parse(datagram: &[u8]) -> Result<Vec<f32>, Error> {
//!     let mut c = Cursor::new(datagram);
//!     let count = c.u8(Field::Count)?;
//!     (0..count).map(|_| c.f32_be(Field::Values)).collect()
//! }
//!
//! assert_eq!(parse(&[1, 0x3f, 0x80, 0, 0]), Ok(vec![1.0]));
//! let e = parse(&[2, 0x3f, 0x80, 0, 0, 0x40]).unwrap_err();
//! assert_eq!(e.to_string(), "truncated: need 4 bytes, have 1 at offset 5 in `values`");
//! ```

mod cursor;

use std::fmt;

pub use cursor::{Cursor, Truncated};

/// The part of a datagram an error or warning names: a protocol's own small
/// `enum Field` (or its chunk tag), and what its refusals and odd values are.
pub trait Field: Copy + fmt::Debug {
    /// Why a datagram is refused.
    type ErrorKind: fmt::Display + fmt::Debug;
    /// What is odd in a datagram that still decodes.
    type WarningKind: fmt::Display + fmt::Debug;

    /// The name messages print between backticks after the offset; `None`
    /// for the datagram as a whole.
    fn name(&self) -> Option<&dyn fmt::Display>;

    /// Writes `e` as a message. The default is the one wording (offset,
    /// then the field's name); a protocol whose messages predate this module
    /// and are printed in records (iFacialMocap's) keeps its own here.
    fn fmt_error(e: &Error<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result
    where
        Self: Sized,
    {
        located(f, &e.kind, e.offset, &e.field)
    }

    /// Writes `w` as a message, as [`Field::fmt_error`] does for errors.
    fn fmt_warning(w: &Warning<Self>, f: &mut fmt::Formatter<'_>) -> fmt::Result
    where
        Self: Sized,
    {
        located(f, &w.kind, w.offset, &w.field)
    }
}

/// A field that may be absent: `None` names the datagram as a whole (an SMF
/// error about a chunk missing at the top level).
impl<F: Field> Field for Option<F> {
    type ErrorKind = F::ErrorKind;
    type WarningKind = F::WarningKind;

    fn name(&self) -> Option<&dyn fmt::Display> {
        self.as_ref().and_then(Field::name)
    }
}

/// Why a datagram could not be decoded, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Error<F: Field> {
    /// Byte offset in the datagram of the field at fault.
    pub offset: usize,
    /// The field at fault.
    pub field: F,
    /// What is wrong.
    pub kind: F::ErrorKind,
}

impl<F: Field> Error<F> {
    /// A refusal of `field`, which starts at `offset`.
    pub fn new(offset: usize, field: F, kind: F::ErrorKind) -> Self {
        Self {
            offset,
            field,
            kind,
        }
    }
}

impl<F: Field> fmt::Display for Error<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        F::fmt_error(self, f)
    }
}

impl<F: Field> std::error::Error for Error<F> {}

/// A value that decodes but is odd: the datagram is still decoded and used,
/// and the warning says what and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Warning<F: Field> {
    /// Byte offset in the datagram of the field at fault.
    pub offset: usize,
    /// The field at fault.
    pub field: F,
    /// What is odd.
    pub kind: F::WarningKind,
}

impl<F: Field> Warning<F> {
    /// An odd value in `field`, which starts at `offset`.
    pub fn new(offset: usize, field: F, kind: F::WarningKind) -> Self {
        Self {
            offset,
            field,
            kind,
        }
    }
}

impl<F: Field> fmt::Display for Warning<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        F::fmt_warning(self, f)
    }
}

/// `<kind> at offset <n>`, then `` in `<field>` `` when the field has a name:
/// the one wording of errors and warnings, which the dissectors repeat.
fn located(
    f: &mut fmt::Formatter<'_>,
    kind: &dyn fmt::Display,
    offset: usize,
    field: &impl Field,
) -> fmt::Result {
    write!(f, "{kind} at offset {offset}")?;
    match field.name() {
        Some(name) => write!(f, " in `{name}`"),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A protocol of two fields, as a module would write it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Part {
        Head,
        Anywhere,
    }

    impl fmt::Display for Part {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("head")
        }
    }

    impl Field for Part {
        type ErrorKind = &'static str;
        type WarningKind = &'static str;

        fn name(&self) -> Option<&dyn fmt::Display> {
            match self {
                Self::Head => Some(self),
                Self::Anywhere => None,
            }
        }
    }

    #[test]
    fn offset_then_the_field_when_it_has_a_name() {
        let e = Error::new(12, Part::Head, "bad");
        assert_eq!(e.to_string(), "bad at offset 12 in `head`");
        assert_eq!(
            Error::new(0, Part::Anywhere, "empty").to_string(),
            "empty at offset 0"
        );
        assert_eq!(
            Warning::new(3, Part::Head, "odd").to_string(),
            "odd at offset 3 in `head`"
        );
        assert_eq!(
            Error::new(5, None::<Part>, "missing").to_string(),
            "missing at offset 5"
        );
        assert_eq!(
            Error::new(5, Some(Part::Head), "short").to_string(),
            "short at offset 5 in `head`"
        );
        // It goes through `?` into a Box<dyn Error>.
        let boxed: Box<dyn std::error::Error> = Box::new(e);
        assert_eq!(boxed.to_string(), "bad at offset 12 in `head`");
    }
}
