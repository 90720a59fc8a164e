//! Borrowed views of packets written the canonical way, and a bundle writer
//! that reuses one buffer: what a relay needs to filter and rename messages
//! without building owned values (issue 40).
//!
//! Only the canonical encoding every VMC and VRChat sender writes is taken
//! (a message or one flat bundle of messages; zero padding; element sizes a
//! multiple of four; the type tags `i f s b h d t c r m T F N I`; nothing left
//! over). Those bytes are exactly what [`PacketRepr::emit`](super::PacketRepr::emit)
//! writes for their decoded packet, so forwarding a view's bytes is the same
//! as decoding and re-encoding. Anything else is `None`, which is not a
//! refusal: the caller takes the general path ([`decode`](super::decode)),
//! which decodes it or says why not.

use super::check::BUNDLE_TAG;
use super::{EncodeError, EncodeErrorKind};

/// A bundle's tag and timetag.
const BUNDLE_HEADER: usize = 16;

/// One canonically encoded message, borrowed from a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageView<'a> {
    bytes: &'a [u8],
    address: &'a str,
    /// The first argument when it is a string: its text, and where its
    /// padded bytes start and end in `bytes`.
    first: Option<(&'a str, usize, usize)>,
}

impl<'a> MessageView<'a> {
    /// Views one message; `None` when it is not canonically encoded.
    pub fn parse(bytes: &'a [u8]) -> Option<Self> {
        let (address, at) = padded_str(bytes, 0)?;
        if !address.starts_with('/') {
            return None;
        }
        let (tags, mut at) = padded_str(bytes, at)?;
        let tags = tags.strip_prefix(',')?.as_bytes();
        let mut first = None;
        for (i, &tag) in tags.iter().enumerate() {
            let width = match tag {
                b'i' | b'f' | b'r' | b'm' => 4,
                b'c' => {
                    let code = u32::from_be_bytes(*bytes.get(at..)?.first_chunk::<4>()?);
                    char::from_u32(code)?;
                    4
                }
                b'h' | b'd' | b't' => 8,
                b's' => {
                    let (text, next) = padded_str(bytes, at)?;
                    if i == 0 {
                        first = Some((text, at, next));
                    }
                    next - at
                }
                b'b' => {
                    let size = u32::from_be_bytes(*bytes.get(at..)?.first_chunk::<4>()?);
                    let size = usize::try_from(size).ok()?;
                    let end = at.checked_add(4)?.checked_add(size)?;
                    let next = end.checked_add(3)? & !3;
                    if bytes.get(end..next)?.iter().any(|&b| b != 0) {
                        return None;
                    }
                    next - at
                }
                b'T' | b'F' | b'N' | b'I' => 0,
                // Arrays, symbols and unknown tags: the general path.
                _ => return None,
            };
            at = at.checked_add(width)?;
            if at > bytes.len() {
                return None;
            }
        }
        (at == bytes.len()).then_some(Self {
            bytes,
            address,
            first,
        })
    }

    /// The message's bytes, as they came.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Its address.
    pub fn address(&self) -> &'a str {
        self.address
    }

    /// Its first argument, when that is a string (a VMC bone or expression name).
    pub fn first_string(&self) -> Option<&'a str> {
        self.first.map(|(s, _, _)| s)
    }

    /// Appends the message with its first (string) argument replaced by
    /// `text`; as it came when the first argument is not a string.
    ///
    /// # Errors
    /// [`EncodeErrorKind::NulInString`] when `text` holds a NUL; `out` is
    /// unchanged then.
    pub fn emit_with_first(&self, text: &str, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let Some((_, start, end)) = self.first else {
            out.extend_from_slice(self.bytes);
            return Ok(());
        };
        if text.contains('\0') {
            return Err(EncodeError {
                kind: EncodeErrorKind::NulInString,
                address: self.address.to_owned(),
            });
        }
        out.extend_from_slice(self.bytes.get(..start).unwrap_or_default());
        push_padded(out, text.as_bytes());
        out.extend_from_slice(self.bytes.get(end..).unwrap_or_default());
        Ok(())
    }
}

/// A string at `at`: its text and where the next part starts (after the NUL
/// and zero padding to four bytes).
fn padded_str(bytes: &[u8], at: usize) -> Option<(&str, usize)> {
    let rest = bytes.get(at..)?;
    let nul = rest.iter().position(|&b| b == 0)?;
    let end = at + nul;
    let next = (end + 4) & !3;
    if bytes.get(end..next)?.iter().any(|&b| b != 0) {
        return None;
    }
    Some((std::str::from_utf8(bytes.get(at..end)?).ok()?, next))
}

fn push_padded(out: &mut Vec<u8>, text: &[u8]) {
    out.extend_from_slice(text);
    // A NUL, then zeros up to a multiple of four.
    let padded = (text.len() + 4) & !3;
    out.resize(out.len() + padded - text.len(), 0);
}

/// A datagram that is one canonically encoded message, or one flat bundle of
/// them (no nested bundle), every message checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flat<'a> {
    bytes: &'a [u8],
    bundle: bool,
}

impl<'a> Flat<'a> {
    /// Views a datagram; `None` when it is not canonically encoded or
    /// nests bundles (then decode it the general way).
    pub fn parse(bytes: &'a [u8]) -> Option<Self> {
        let bundle = bytes.starts_with(BUNDLE_TAG);
        if bundle && bytes.len() < BUNDLE_HEADER {
            return None;
        }
        let flat = Self { bytes, bundle };
        let mut elements = flat.elements();
        for element in &mut elements {
            MessageView::parse(element?)?;
        }
        Some(flat)
    }

    /// A bundle, rather than a single message.
    pub fn is_bundle(&self) -> bool {
        self.bundle
    }

    /// Its messages, in wire order.
    pub fn messages(&self) -> impl Iterator<Item = MessageView<'a>> + use<'a> {
        // Checked by `parse`: every element is a message; `map_while` keeps
        // the walk total all the same.
        self.elements()
            .map_while(|e| e.and_then(MessageView::parse))
    }

    fn elements(&self) -> Elements<'a> {
        if self.bundle {
            Elements {
                rest: self.bytes.get(BUNDLE_HEADER..).unwrap_or_default(),
                single: None,
            }
        } else {
            Elements {
                rest: &[],
                single: Some(self.bytes),
            }
        }
    }
}

/// A flat bundle's elements; `Some(None)` for one that is not a
/// canonically sized message (the walk stops there).
struct Elements<'a> {
    rest: &'a [u8],
    single: Option<&'a [u8]>,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Option<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(one) = self.single.take() {
            return Some(Some(one));
        }
        if self.rest.is_empty() {
            return None;
        }
        let element = (|| {
            let (size, tail) = self.rest.split_first_chunk::<4>()?;
            let size = usize::try_from(i32::from_be_bytes(*size)).ok()?;
            if size % 4 != 0 || size > tail.len() {
                return None;
            }
            let (element, tail) = tail.split_at(size);
            if element.starts_with(BUNDLE_TAG) {
                return None;
            }
            self.rest = tail;
            Some(element)
        })();
        if element.is_none() {
            self.rest = &[];
        }
        Some(element)
    }
}

/// Writes messages, in order, into bundles of at most `max` bytes (a message
/// larger than that goes in a bundle of its own) with the "immediately"
/// timetag, in one buffer kept from bundle to bundle: no allocation once it
/// has grown to the largest bundle.
#[derive(Debug)]
pub struct BundleWriter {
    buf: Vec<u8>,
    max: usize,
    messages: usize,
}

impl BundleWriter {
    /// Bundles of at most `max` bytes.
    pub fn new(max: usize) -> Self {
        Self {
            buf: Vec::with_capacity(max.max(BUNDLE_HEADER)),
            max,
            messages: 0,
        }
    }

    /// Adds the message `write` appends to the buffer it is given; a bundle
    /// this message does not fit in goes to `send` first.
    ///
    /// # Errors
    /// What `write` returns; the message is left out then.
    pub fn push<E>(
        &mut self,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
        send: &mut impl FnMut(&[u8]),
    ) -> Result<(), E> {
        if self.messages == 0 {
            self.buf.clear();
            self.buf.extend_from_slice(BUNDLE_TAG);
            self.buf.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
        }
        let start = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        if let Err(e) = write(&mut self.buf) {
            self.buf.truncate(start);
            return Err(e);
        }
        let len = self.buf.len() - start - 4;
        // OSC sizes are i32; a message that long cannot come from a datagram.
        let size = i32::try_from(len).unwrap_or(i32::MAX).to_be_bytes();
        if let Some(field) = self.buf.get_mut(start..start + 4) {
            field.copy_from_slice(&size);
        }
        if self.messages > 0 && start + 4 + len > self.max {
            send(self.buf.get(..start).unwrap_or_default());
            self.buf.copy_within(start.., BUNDLE_HEADER);
            self.buf.truncate(BUNDLE_HEADER + 4 + len);
            self.messages = 1;
        } else {
            self.messages += 1;
        }
        Ok(())
    }

    /// Sends the bundle being written, if it holds a message.
    pub fn finish(&mut self, send: &mut impl FnMut(&[u8])) {
        if self.messages > 0 {
            send(&self.buf);
        }
        self.messages = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Arg, Message, PacketRepr, decode};
    use super::*;

    fn msg(address: &str, args: Vec<Arg>) -> Vec<u8> {
        super::super::message(&Message::new(address, args)).unwrap()
    }

    fn every_tag() -> Vec<Arg> {
        vec![
            Arg::String("Hips".into()),
            Arg::Int(-3),
            Arg::Float(0.25),
            Arg::Blob(vec![1, 2, 3]),
            Arg::Long(1 << 40),
            Arg::Double(-1.5),
            Arg::Time(7, 9),
            Arg::Char('é'),
            Arg::Color([1, 2, 3, 4]),
            Arg::Midi([5, 6, 7, 8]),
            Arg::Bool(true),
            Arg::Bool(false),
            Arg::Nil,
            Arg::Inf,
            Arg::String(String::new()),
        ]
    }

    #[test]
    fn a_message_of_every_tag_is_viewed_as_written() {
        let bytes = msg("/VMC/Ext/Bone/Pos", every_tag());
        let v = MessageView::parse(&bytes).unwrap();
        assert_eq!(v.address(), "/VMC/Ext/Bone/Pos");
        assert_eq!(v.first_string(), Some("Hips"));
        assert_eq!(v.bytes(), &bytes[..]);
        let mut out = Vec::new();
        v.emit_with_first("LeftUpperLeg", &mut out).unwrap();
        let mut args = every_tag();
        args[0] = Arg::String("LeftUpperLeg".into());
        assert_eq!(out, msg("/VMC/Ext/Bone/Pos", args));
        assert!(v.emit_with_first("a\0b", &mut out).is_err());
    }

    #[test]
    fn what_is_not_canonical_goes_the_general_way() {
        let good = msg("/a", vec![Arg::String("x".into()), Arg::Float(1.0)]);
        assert!(MessageView::parse(&good).is_some());
        // Non-zero padding after the address.
        let mut bad = good.clone();
        bad[3] = b'!';
        assert!(MessageView::parse(&bad).is_none());
        // A byte left over, and one missing.
        let mut long = good.clone();
        long.extend_from_slice(&[0; 4]);
        assert!(MessageView::parse(&long).is_none());
        assert!(MessageView::parse(&good[..good.len() - 1]).is_none());
        // No leading slash, no type tags, an array, an unknown tag.
        assert!(MessageView::parse(b"a\0\0\0,\0\0\0").is_none());
        assert!(MessageView::parse(b"/a\0\0").is_none());
        assert!(MessageView::parse(&msg("/a", vec![Arg::Array(vec![Arg::Int(1)])])).is_none());
        assert!(MessageView::parse(b"/a\0\0,S\0\0x\0\0\0").is_none());
        // A bundle inside a bundle.
        let inner = super::super::bundle(&[Message::new("/a", vec![])]).unwrap();
        let nested = PacketRepr::Bundle {
            timetag: (0, 1),
            content: vec![decode(&inner).unwrap()],
        }
        .to_bytes()
        .unwrap();
        assert!(decode(&nested).is_ok());
        assert!(Flat::parse(&nested).is_none());
    }

    #[test]
    fn a_flat_bundle_lists_its_messages() {
        let ms = [
            Message::new(
                "/VMC/Ext/Blend/Val",
                vec![Arg::String("A".into()), Arg::Float(0.5)],
            ),
            Message::new("/VMC/Ext/Blend/Apply", vec![]),
        ];
        let bytes = super::super::bundle(&ms).unwrap();
        let flat = Flat::parse(&bytes).unwrap();
        assert!(flat.is_bundle());
        let got: Vec<&str> = flat.messages().map(|m| m.address()).collect();
        assert_eq!(got, ["/VMC/Ext/Blend/Val", "/VMC/Ext/Blend/Apply"]);
        let empty = super::super::bundle(&[]).unwrap();
        assert_eq!(Flat::parse(&empty).unwrap().messages().count(), 0);
        let one = msg("/a", vec![]);
        let flat = Flat::parse(&one).unwrap();
        assert!(!flat.is_bundle());
        assert_eq!(flat.messages().next().unwrap().bytes(), &one[..]);
        // A size past the end.
        let mut cut = bytes.clone();
        cut.truncate(bytes.len() - 4);
        assert!(Flat::parse(&cut).is_none());
    }

    #[test]
    fn the_bundle_writer_splits_where_max_says() {
        let m: Vec<Vec<u8>> = (0..5)
            .map(|i| msg(&format!("/m{i}"), vec![Arg::Int(i)]))
            .collect();
        // Each message is 12 bytes, 16 with its size: two fit in 16 + 32.
        let mut w = BundleWriter::new(48);
        let mut sent = Vec::new();
        let mut send = |b: &[u8]| sent.push(b.to_vec());
        for one in &m {
            w.push::<()>(
                |out| {
                    out.extend_from_slice(one);
                    Ok(())
                },
                &mut send,
            )
            .unwrap();
        }
        w.finish(&mut send);
        assert_eq!(sent.len(), 3);
        let back: Vec<Vec<u8>> = sent
            .iter()
            .flat_map(|b| {
                Flat::parse(b)
                    .unwrap()
                    .messages()
                    .map(|v| v.bytes().to_vec())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(back, m);
        assert!(sent.iter().all(|b| b.len() <= 48));
        // A failed write leaves the bundle as it was.
        let mut w = BundleWriter::new(48);
        let mut sent = Vec::new();
        let mut send = |b: &[u8]| sent.push(b.to_vec());
        w.push::<()>(
            |out| {
                out.extend_from_slice(&m[0]);
                Ok(())
            },
            &mut send,
        )
        .unwrap();
        assert!(
            w.push(
                |out| {
                    out.push(9);
                    Err(())
                },
                &mut send
            )
            .is_err()
        );
        w.finish(&mut send);
        assert_eq!(
            sent,
            [super::super::bundle(&[decode_message(&m[0])]).unwrap()]
        );
    }

    fn decode_message(bytes: &[u8]) -> Message {
        match decode(bytes).unwrap() {
            PacketRepr::Message(m) => m,
            PacketRepr::Bundle { .. } => panic!("a bundle"),
        }
    }
}
