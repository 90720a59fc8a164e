//! A checked read cursor over a datagram: fields in wire order, each read
//! either hands out its bytes (borrowed, never copied beyond a number) or a
//! located [`Error`]; no read panics, whatever the bytes.

use std::fmt;

use super::{Error, Field};

/// Fewer bytes left than a read needs: the one fault a [`Cursor`] finds by
/// itself. A protocol that reads with a cursor says how it names it
/// (`impl From<Truncated> for ErrorKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Truncated {
    /// Bytes the read needs.
    pub need: usize,
    /// Bytes left.
    pub have: usize,
}

impl fmt::Display for Truncated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "truncated: need {} bytes, have {}", self.need, self.have)
    }
}

/// The unread rest of a datagram and the offset of its first byte.
///
/// Reads take the field they read, so that a datagram cut short is refused
/// with the offset where the field starts, the field, and
/// [`Truncated`] `{ need, have }`. A refused read leaves the cursor where it
/// was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub struct Cursor<'a> {
    rest: &'a [u8],
    offset: usize,
}

/// Readers of one fixed-width number each, in both byte orders.
macro_rules! numbers {
    ($($name:ident: $t:ty = $from:ident, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            ///
            /// # Errors
            /// [`Truncated`] when fewer bytes are left.
            #[inline]
            pub fn $name<F: Field>(&mut self, field: F) -> Result<$t, Error<F>>
            where
                F::ErrorKind: From<Truncated>,
            {
                self.array(field).map(<$t>::$from)
            }
        )*
    };
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of a datagram.
    pub fn new(datagram: &'a [u8]) -> Self {
        Self::at(datagram, 0)
    }

    /// A cursor over `bytes`, which start at `offset` in their datagram (a
    /// chunk's payload, say), so errors name offsets in the datagram.
    pub fn at(bytes: &'a [u8], offset: usize) -> Self {
        Self {
            rest: bytes,
            offset,
        }
    }

    /// Offset in the datagram of the next byte to read.
    #[inline]
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Bytes left.
    #[inline]
    pub fn len(&self) -> usize {
        self.rest.len()
    }

    /// Whether every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// Everything left, which is then read.
    pub fn rest(&mut self) -> &'a [u8] {
        let rest = self.rest;
        self.advance(rest.len(), &[]);
        rest
    }

    /// The next `n` bytes.
    ///
    /// # Errors
    /// [`Truncated`] when fewer are left.
    #[inline]
    pub fn bytes<F: Field>(&mut self, n: usize, field: F) -> Result<&'a [u8], Error<F>>
    where
        F::ErrorKind: From<Truncated>,
    {
        let Some((head, tail)) = self.rest.split_at_checked(n) else {
            return Err(self.short(n, field));
        };
        self.advance(n, tail);
        Ok(head)
    }

    /// The next `n` bytes as a cursor of their own (a fixed-size block, a
    /// length-prefixed part), its offsets still the datagram's.
    ///
    /// # Errors
    /// [`Truncated`] when fewer are left.
    #[inline]
    pub fn take<F: Field>(&mut self, n: usize, field: F) -> Result<Self, Error<F>>
    where
        F::ErrorKind: From<Truncated>,
    {
        let at = self.offset;
        self.bytes(n, field).map(|b| Self::at(b, at))
    }

    /// The next `N` bytes, copied out.
    ///
    /// # Errors
    /// [`Truncated`] when fewer are left.
    #[inline]
    pub fn array<const N: usize, F: Field>(&mut self, field: F) -> Result<[u8; N], Error<F>>
    where
        F::ErrorKind: From<Truncated>,
    {
        let Some((head, tail)) = self.rest.split_first_chunk::<N>() else {
            return Err(self.short(N, field));
        };
        self.advance(N, tail);
        Ok(*head)
    }

    /// The next byte.
    ///
    /// # Errors
    /// [`Truncated`] when none is left.
    #[inline]
    pub fn u8<F: Field>(&mut self, field: F) -> Result<u8, Error<F>>
    where
        F::ErrorKind: From<Truncated>,
    {
        self.array(field).map(|[b]| b)
    }

    numbers! {
        u16_le: u16 = from_le_bytes, "The next two bytes as a little-endian `u16`.";
        u16_be: u16 = from_be_bytes, "The next two bytes as a big-endian `u16`.";
        u32_le: u32 = from_le_bytes, "The next four bytes as a little-endian `u32`.";
        u32_be: u32 = from_be_bytes, "The next four bytes as a big-endian `u32`.";
        i32_le: i32 = from_le_bytes, "The next four bytes as a little-endian `i32`.";
        i32_be: i32 = from_be_bytes, "The next four bytes as a big-endian `i32`.";
        f32_le: f32 = from_le_bytes, "The next four bytes as a little-endian `f32`.";
        f32_be: f32 = from_be_bytes, "The next four bytes as a big-endian `f32`.";
    }

    #[inline]
    fn advance(&mut self, n: usize, tail: &'a [u8]) {
        self.rest = tail;
        // A cursor made `at` an offset near the end of `usize` stops there
        // rather than wrap.
        self.offset = self.offset.saturating_add(n);
    }

    #[cold]
    fn short<F: Field>(&self, need: usize, field: F) -> Error<F>
    where
        F::ErrorKind: From<Truncated>,
    {
        let have = self.rest.len();
        Error::new(self.offset, field, Truncated { need, have }.into())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Part {
        A,
        B,
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Kind {
        Short(Truncated),
    }

    impl From<Truncated> for Kind {
        fn from(t: Truncated) -> Self {
            Self::Short(t)
        }
    }

    impl fmt::Display for Kind {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let Self::Short(t) = self;
            t.fmt(f)
        }
    }

    impl Field for Part {
        type ErrorKind = Kind;
        type WarningKind = Kind;

        fn name(&self) -> Option<&dyn fmt::Display> {
            None
        }
    }

    fn short(offset: usize, field: Part, need: usize, have: usize) -> Error<Part> {
        Error::new(offset, field, Kind::Short(Truncated { need, have }))
    }

    #[test]
    fn reads_in_wire_order_and_counts_the_offset() {
        let mut bytes = vec![7u8];
        bytes.extend(0x0102u16.to_le_bytes());
        bytes.extend(0x0304u16.to_be_bytes());
        bytes.extend(0x0506_0708u32.to_le_bytes());
        bytes.extend(0x090a_0b0cu32.to_be_bytes());
        bytes.extend((-2i32).to_le_bytes());
        bytes.extend((-3i32).to_be_bytes());
        bytes.extend(1.5f32.to_le_bytes());
        bytes.extend((-0.25f32).to_be_bytes());
        bytes.extend(b"tail");
        let mut c = Cursor::new(&bytes);
        assert_eq!(c.u8(Part::A), Ok(7));
        assert_eq!(c.u16_le(Part::A), Ok(0x0102));
        assert_eq!(c.u16_be(Part::A), Ok(0x0304));
        assert_eq!(c.u32_le(Part::A), Ok(0x0506_0708));
        assert_eq!(c.u32_be(Part::A), Ok(0x090a_0b0c));
        assert_eq!(c.i32_le(Part::A), Ok(-2));
        assert_eq!(c.i32_be(Part::A), Ok(-3));
        assert_eq!(c.f32_le(Part::A), Ok(1.5));
        assert_eq!(c.f32_be(Part::A), Ok(-0.25));
        assert_eq!(c.offset(), 29);
        assert_eq!(c.len(), 4);
        assert_eq!(c.bytes(1, Part::B), Ok(&b"t"[..]));
        assert_eq!(c.rest(), b"ail");
        assert!(c.is_empty());
        assert_eq!(c.offset(), bytes.len());
        assert_eq!(c.rest(), b"");
    }

    #[test]
    fn a_short_read_names_where_the_field_starts_and_moves_nothing() {
        let mut c = Cursor::at(&[1, 2, 3], 40);
        assert_eq!(c.u8(Part::A), Ok(1));
        assert_eq!(c.u32_be(Part::B), Err(short(41, Part::B, 4, 2)));
        assert_eq!(c.bytes(3, Part::A), Err(short(41, Part::A, 3, 2)));
        assert_eq!(c.array::<3, _>(Part::A), Err(short(41, Part::A, 3, 2)));
        assert_eq!((c.offset(), c.len()), (41, 2));
        assert_eq!(c.u16_le(Part::A), Ok(0x0302));
        assert_eq!(c.u8(Part::A), Err(short(43, Part::A, 1, 0)));
        // Reading nothing always succeeds, even at the end.
        assert_eq!(c.bytes(0, Part::A), Ok(&[][..]));
    }

    #[test]
    fn a_block_taken_keeps_the_datagram_offsets() {
        let bytes = [9, 0, 0, 0, 5, 0xff, 0xee];
        let mut c = Cursor::new(&bytes);
        c.u8(Part::A).unwrap();
        let mut block = c.take(4, Part::A).unwrap();
        assert_eq!(c.offset(), 5);
        assert_eq!(block.offset(), 1);
        assert_eq!(block.u16_be(Part::B), Ok(0));
        assert_eq!(block.u8(Part::B), Ok(0));
        assert_eq!(block.u16_be(Part::B), Err(short(4, Part::B, 2, 1)));
        assert_eq!(c.take(3, Part::A), Err(short(5, Part::A, 3, 2)));
        assert_eq!(c.offset(), 5);
    }

    #[test]
    fn a_short_read_says_what_it_needed() {
        let e = Cursor::at(&[1], 7).u32_le(Part::A).unwrap_err();
        assert_eq!(e.kind.to_string(), "truncated: need 4 bytes, have 1");
        assert_eq!(e.to_string(), "truncated: need 4 bytes, have 1 at offset 7");
    }

    #[test]
    fn offsets_near_the_end_of_usize_saturate() {
        let mut c = Cursor::at(&[1, 2, 3, 4], usize::MAX - 1);
        assert_eq!(c.u32_le(Part::A), Ok(0x0403_0201));
        assert_eq!(c.offset(), usize::MAX);
        assert!(c.is_empty());
    }

    /// Any sequence of reads over any bytes: no panic, and the offset and
    /// the bytes left always add up to where the bytes end.
    #[test]
    fn no_panic_and_offsets_add_up_on_any_reads() {
        let mut rng = mocap_testutil::Rng(59);
        for _ in 0..20_000 {
            let bytes: Vec<u8> = (0..rng.below(24)).map(|_| rng.next() as u8).collect();
            let start = rng.below(1000);
            let end = start + bytes.len();
            let mut c = Cursor::at(&bytes, start);
            for _ in 0..rng.below(12) {
                let before = (c.offset(), c.len());
                let n = rng.below(10);
                let ok = match rng.below(13) {
                    0 => c.u8(Part::A).is_ok(),
                    1 => c.u16_le(Part::A).is_ok(),
                    2 => c.u16_be(Part::A).is_ok(),
                    3 => c.u32_le(Part::A).is_ok(),
                    4 => c.u32_be(Part::A).is_ok(),
                    5 => c.i32_le(Part::A).is_ok(),
                    6 => c.i32_be(Part::A).is_ok(),
                    7 => c.f32_le(Part::A).is_ok(),
                    8 => c.f32_be(Part::A).is_ok(),
                    9 => c.bytes(n, Part::A).is_ok(),
                    10 => c.array::<5, _>(Part::A).is_ok(),
                    11 => match c.take(n, Part::A) {
                        Ok(mut inner) => {
                            assert_eq!(inner.offset() + inner.len(), c.offset());
                            inner.u16_be(Part::B).ok();
                            true
                        }
                        Err(e) => {
                            assert_eq!((e.offset, e.field), (c.offset(), Part::A));
                            false
                        }
                    },
                    _ => {
                        let _ = c.rest();
                        true
                    }
                };
                assert_eq!(c.offset() + c.len(), end);
                if !ok {
                    assert_eq!((c.offset(), c.len()), before, "a refused read moved");
                }
            }
        }
    }
}
