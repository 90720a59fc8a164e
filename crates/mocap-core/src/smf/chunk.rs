//! SMF's tag-length-value chunks, walked without copying.

use super::{Error, ErrorKind, Result, Tag};

/// Length of a chunk header: `u32` little-endian payload length, then the tag.
pub const HEADER_LEN: usize = 8;

/// One length-tag-value chunk, borrowed from the datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The chunk's name.
    pub tag: Tag,
    /// Offset of the chunk header within the datagram.
    pub offset: usize,
    /// The payload (children, for a container).
    pub value: &'a [u8],
}

impl<'a> Chunk<'a> {
    /// Offset of the payload within the datagram.
    pub fn value_offset(&self) -> usize {
        self.offset + HEADER_LEN
    }

    /// The children of this chunk, read as a container.
    pub fn children(&self) -> Chunks<'a> {
        Chunks::new(self.value, self.value_offset(), Some(self.tag))
    }

    /// The payload as an array of exactly `N` bytes.
    ///
    /// # Errors
    /// [`ErrorKind::BadWidth`] when the payload is not `N` bytes long.
    pub fn fixed<const N: usize>(&self) -> Result<[u8; N]> {
        <[u8; N]>::try_from(self.value).map_err(|_| {
            self.error(ErrorKind::BadWidth {
                expected: N,
                actual: self.value.len(),
            })
        })
    }

    /// An error located at this chunk.
    pub fn error(&self, kind: ErrorKind) -> Error {
        Error::new(self.offset, Some(self.tag), kind)
    }
}

/// Iterates over sibling chunks. After the first error it yields nothing more,
/// so a caller that stops at `Err` has seen every chunk that could be read.
#[derive(Clone, Debug)]
pub struct Chunks<'a> {
    rest: &'a [u8],
    offset: usize,
    parent: Option<Tag>,
}

impl<'a> Chunks<'a> {
    /// Chunks of `buf`, whose first byte sits at `offset` in the datagram,
    /// inside the container `parent` (`None` at the top level).
    pub fn new(buf: &'a [u8], offset: usize, parent: Option<Tag>) -> Self {
        Self {
            rest: buf,
            offset,
            parent,
        }
    }

    /// The top-level chunks of a whole datagram.
    pub fn top(datagram: &'a [u8]) -> Self {
        Self::new(datagram, 0, None)
    }
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Result<Chunk<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let at = self.offset;
        let Some((head, rest)) = self.rest.split_first_chunk::<HEADER_LEN>() else {
            let have = self.rest.len();
            self.rest = &[];
            return Some(Err(Error::new(
                at,
                self.parent,
                ErrorKind::TruncatedHeader { have },
            )));
        };
        let [l0, l1, l2, l3, t0, t1, t2, t3] = *head;
        let len = u32::from_le_bytes([l0, l1, l2, l3]);
        let tag = Tag([t0, t1, t2, t3]);
        let Some((value, rest)) = usize::try_from(len)
            .ok()
            .and_then(|n| rest.split_at_checked(n))
        else {
            let have = rest.len();
            self.rest = &[];
            return Some(Err(Error::new(
                at,
                Some(tag),
                ErrorKind::Overrun { len, have },
            )));
        };
        self.rest = rest;
        self.offset = at + HEADER_LEN + value.len();
        Some(Ok(Chunk {
            tag,
            offset: at,
            value,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(tag: &[u8; 4], value: &[u8]) -> Vec<u8> {
        let mut v = (value.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(tag);
        v.extend_from_slice(value);
        v
    }

    #[test]
    fn walks_siblings_with_offsets() {
        let mut buf = chunk(b"aaaa", &[1, 2]);
        buf.extend(chunk(b"bbbb", &[]));
        let got: Vec<_> = Chunks::top(&buf).collect::<Result<_>>().unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[0].tag, got[0].offset, got[0].value),
            (Tag(*b"aaaa"), 0, &[1u8, 2][..])
        );
        assert_eq!((got[1].tag, got[1].offset), (Tag(*b"bbbb"), 10));
    }

    #[test]
    fn truncated_header_names_offset_and_parent() {
        let mut buf = chunk(b"aaaa", &[]);
        buf.extend_from_slice(&[1, 2, 3]);
        let mut it = Chunks::new(&buf, 100, Some(Tag::FRAM));
        assert!(it.next().unwrap().is_ok());
        let err = it.next().unwrap().unwrap_err();
        assert_eq!(err.offset, 108);
        assert_eq!(err.field, Some(Tag::FRAM));
        assert_eq!(err.kind, ErrorKind::TruncatedHeader { have: 3 });
        assert!(it.next().is_none());
    }

    #[test]
    fn overrun_is_reported_with_the_chunk_tag() {
        let mut buf = chunk(b"fnum", &[0; 4]);
        buf.truncate(10);
        let err = Chunks::top(&buf).next().unwrap().unwrap_err();
        assert_eq!(err.field, Some(Tag::FNUM));
        assert_eq!(err.kind, ErrorKind::Overrun { len: 4, have: 2 });
    }

    #[test]
    fn huge_length_does_not_overflow() {
        let mut buf = u32::MAX.to_le_bytes().to_vec();
        buf.extend_from_slice(b"fram");
        let err = Chunks::top(&buf).next().unwrap().unwrap_err();
        assert_eq!(
            err.kind,
            ErrorKind::Overrun {
                len: u32::MAX,
                have: 0
            }
        );
    }
}
