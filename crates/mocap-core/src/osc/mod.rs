//! OSC 1.0 packets, through `rosc`, guarded against what `rosc` gets wrong.
//!
//! An OSC packet is a message (address string, type-tag string, arguments;
//! every part padded to 4 bytes; numbers big-endian) or a bundle (`#bundle\0`,
//! an 8-byte timetag, then elements each prefixed by an `i32` size). Bundles
//! nest. [`parse`] checks a datagram's framing without recursion and returns
//! a [`Packet`] view: bundle nesting deeper than [`MAX_DEPTH`] and nested
//! arrays in type tags are refused (`rosc` recurses once per level and
//! overflows the stack, aborting the process, on deep input), as are element
//! sizes that run past their bundle. [`PacketRepr::parse`] decodes a view into
//! the owned tree, refusing bytes left over after the packet (`rosc` accepts
//! a truncated bundle silently); [`PacketRepr::emit`] writes one back and
//! refuses what OSC cannot carry (a NUL inside a string, a size past `i32`).
//! `rosc` types stay inside this module.
//!
//! ```
//! use mocap_core::osc::{self, Arg, Message, PacketRepr};
//!
//! let m = Message::new("/VMC/Ext/Blend/Val", vec![Arg::String("A".into()), Arg::Float(0.5)]);
//! let bytes = osc::bundle(&[m.clone(), Message::new("/VMC/Ext/Blend/Apply", vec![])])?;
//! let packet = osc::parse(&bytes)?;
//! assert!(packet.is_bundle());
//! let repr = PacketRepr::parse(&packet)?;
//! assert_eq!(repr.messages()[0], &m);
//! assert_eq!(repr.to_bytes()?, bytes);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod check;
mod pattern;
mod view;

use std::fmt;

use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};

pub use pattern::{Pattern, PatternError};
pub use view::{BundleWriter, Flat, MessageView};

/// Deepest bundle nesting accepted (the reference sender nests one level).
pub const MAX_DEPTH: usize = 8;

/// One OSC argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// `i`
    Int(i32),
    /// `f`
    Float(f32),
    /// `s`
    String(String),
    /// `b`
    Blob(Vec<u8>),
    /// `h`
    Long(i64),
    /// `d`
    Double(f64),
    /// `T` / `F`
    Bool(bool),
    /// `N`
    Nil,
    /// `I`
    Inf,
    /// `t`: seconds and fraction since 1900.
    Time(u32, u32),
    /// `c`
    Char(char),
    /// `r`: red, green, blue, alpha.
    Color([u8; 4]),
    /// `m`: port, status, data1, data2.
    Midi([u8; 4]),
    /// `[` … `]`
    Array(Vec<Self>),
}

/// One OSC message.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// The address, e.g. `/VMC/Ext/Bone/Pos`.
    pub address: String,
    /// The arguments.
    pub args: Vec<Arg>,
}

impl Message {
    /// A message.
    pub fn new(address: impl Into<String>, args: Vec<Arg>) -> Self {
        Self {
            address: address.into(),
            args,
        }
    }
}

/// A datagram whose framing has been checked: bundle sizes stay inside their
/// bundle, nesting stays within [`MAX_DEPTH`]. Borrowed; decode it with
/// [`PacketRepr::parse`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<'a> {
    bytes: &'a [u8],
}

impl<'a> Packet<'a> {
    /// The whole datagram.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// A bundle (`#bundle\0`), rather than a single message.
    pub fn is_bundle(&self) -> bool {
        self.bytes.starts_with(check::BUNDLE_TAG)
    }
}

/// Checks one datagram's framing without recursion. Never panics.
///
/// # Errors
/// [`ErrorKind::TooDeep`] or [`ErrorKind::BadSize`].
pub fn parse(bytes: &[u8]) -> Result<Packet<'_>, Error> {
    check::structure(bytes)?;
    Ok(Packet { bytes })
}

/// A decoded packet, owned: a message or a bundle of packets.
#[derive(Clone, Debug, PartialEq)]
pub enum PacketRepr {
    /// A single message.
    Message(Message),
    /// A bundle and its timetag.
    Bundle {
        /// Seconds and fraction since 1900; (0, 1) means "immediately".
        timetag: (u32, u32),
        /// Messages and nested bundles, in order.
        content: Vec<Self>,
    },
}

impl PacketRepr {
    /// Decodes a checked view.
    ///
    /// # Errors
    /// [`ErrorKind::Malformed`] for a part that does not decode,
    /// [`ErrorKind::Trailing`] for bytes after the packet.
    pub fn parse(packet: &Packet<'_>) -> Result<Self, Error> {
        let (rest, p) = rosc::decoder::decode_udp(packet.bytes)
            .map_err(|e| Error::at(ErrorKind::Malformed(Malformed::from_rosc(&e)), 0))?;
        if !rest.is_empty() {
            let count = rest.len();
            return Err(Error::at(
                ErrorKind::Trailing { count },
                packet.bytes.len().saturating_sub(count),
            ));
        }
        Ok(from_rosc(p))
    }

    /// Every message, depth first, in wire order.
    pub fn messages(&self) -> Vec<&Message> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            match p {
                Self::Message(m) => out.push(m),
                Self::Bundle { content, .. } => stack.extend(content.iter().rev()),
            }
        }
        out
    }

    /// Appends the packet's bytes to `out`; on error `out` is left as it was.
    ///
    /// # Errors
    /// [`EncodeError`] for what OSC cannot carry.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        check_encodable(self, 0)?;
        let start = out.len();
        match rosc::encoder::encode_into(&to_rosc(self), out) {
            Ok(_) => Ok(()),
            Err(never) => {
                out.truncate(start);
                match never {}
            }
        }
    }

    /// The packet's bytes.
    ///
    /// # Errors
    /// As [`emit`](Self::emit).
    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::new();
        self.emit(&mut out)?;
        Ok(out)
    }
}

/// Why a packet cannot be written as OSC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeErrorKind {
    /// A NUL inside the address: OSC strings end at the first NUL.
    NulInAddress,
    /// A NUL inside a string argument.
    NulInString,
    /// A blob, string or bundle element longer than an OSC size (`i32`) holds.
    TooLong,
    /// Bundles or arrays nested deeper than [`MAX_DEPTH`]: a reader would refuse them.
    TooDeep,
}

/// A packet that cannot be written: what, and in which message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EncodeError {
    /// What cannot be written.
    pub kind: EncodeErrorKind,
    /// The address of the message it is in (empty for a bundle).
    pub address: String,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            EncodeErrorKind::NulInAddress => "a NUL inside the address",
            EncodeErrorKind::NulInString => "a NUL inside a string argument",
            EncodeErrorKind::TooLong => "a part longer than an OSC size holds",
            EncodeErrorKind::TooDeep => "nesting deeper than a reader accepts",
        };
        write!(f, "cannot write OSC: {what}")?;
        if !self.address.is_empty() {
            write!(f, " in message {:?}", self.address)?;
        }
        Ok(())
    }
}

impl std::error::Error for EncodeError {}

fn check_encodable(p: &PacketRepr, depth: usize) -> Result<(), EncodeError> {
    let err = |kind, address: &str| EncodeError {
        kind,
        address: address.to_owned(),
    };
    match p {
        PacketRepr::Message(m) => {
            if m.address.contains('\0') {
                return Err(err(EncodeErrorKind::NulInAddress, &m.address));
            }
            if m.address.len() > MAX_SIZE {
                return Err(err(EncodeErrorKind::TooLong, ""));
            }
            // Arrays nest; walk them without recursion.
            let mut stack: Vec<(&[Arg], usize)> = vec![(&m.args, 0)];
            while let Some((args, level)) = stack.pop() {
                for a in args {
                    match a {
                        Arg::String(s) if s.contains('\0') => {
                            return Err(err(EncodeErrorKind::NulInString, &m.address));
                        }
                        Arg::String(s) if s.len() > MAX_SIZE => {
                            return Err(err(EncodeErrorKind::TooLong, &m.address));
                        }
                        Arg::Blob(b) if b.len() > MAX_SIZE => {
                            return Err(err(EncodeErrorKind::TooLong, &m.address));
                        }
                        Arg::Array(inner) => {
                            if level >= MAX_DEPTH {
                                return Err(err(EncodeErrorKind::TooDeep, &m.address));
                            }
                            stack.push((inner, level + 1));
                        }
                        _ => {}
                    }
                }
            }
        }
        PacketRepr::Bundle { content, .. } => {
            if depth >= MAX_DEPTH {
                return Err(err(EncodeErrorKind::TooDeep, ""));
            }
            for c in content {
                check_encodable(c, depth + 1)?;
            }
        }
    }
    Ok(())
}

/// Largest part an OSC size field (`i32`) describes, less room for its padding.
const MAX_SIZE: usize = i32::MAX as usize - 8;

/// Why bytes are not an OSC packet, and where: [`crate::wire`]'s located
/// error. The offset is of the part at fault (0 when the decoder does not
/// say: [`ErrorKind::Malformed`]).
pub type Error = crate::wire::Error<Whole>;

/// What an OSC refusal is about: the whole packet (its offset says where
/// in it). The messages keep OSC's own wording, which the tools print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Whole;

/// The reasons bytes are not an OSC packet.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bundles nested deeper than [`MAX_DEPTH`], or arrays nested as deep
    /// (at the element, or the type tags, that went too deep).
    TooDeep,
    /// A bundle element's size runs past its bundle, or is negative (at the
    /// size field).
    BadSize,
    /// Bytes after a complete packet (at the first of them).
    Trailing {
        /// How many.
        count: usize,
    },
    /// The structure checks passed but the packet does not decode.
    Malformed(Malformed),
}

impl Error {
    pub(crate) fn at(kind: ErrorKind, offset: usize) -> Self {
        Self::new(offset, Whole, kind)
    }
}

/// What part of a packet did not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MalformedKind {
    /// An address or address pattern.
    Address,
    /// A string that is not terminated, padded or UTF-8.
    Text,
    /// A message (its type tags).
    Message,
    /// An argument of a type tag.
    Argument,
    /// A bundle's header or element.
    Bundle,
    /// The packet itself (too short, unknown start).
    Packet,
}

/// A packet that does not decode: the part, and the decoder's words (its
/// error type stays out of the API).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    /// The part that did not decode.
    pub kind: MalformedKind,
    why: String,
}

impl Malformed {
    fn from_rosc(e: &rosc::OscError) -> Self {
        use rosc::OscError as R;
        let kind = match e {
            R::BadAddress(_) | R::BadAddressPattern(_) | R::RegexError(_) | R::BadChar(_) => {
                MalformedKind::Address
            }
            R::StringError(_) | R::BadString(_) => MalformedKind::Text,
            R::BadMessage(_) => MalformedKind::Message,
            R::BadArg(_) | R::Unimplemented => MalformedKind::Argument,
            R::BadBundle(_) => MalformedKind::Bundle,
            R::BadPacket(_) | R::ReadError(_) => MalformedKind::Packet,
        };
        Self {
            kind,
            why: e.to_string(),
        }
    }
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why)
    }
}

impl crate::wire::Field for Whole {
    type ErrorKind = ErrorKind;
    // OSC has no odd-but-decoded values.
    type WarningKind = ErrorKind;

    fn name(&self) -> Option<&dyn fmt::Display> {
        None
    }

    fn fmt_error(e: &Error, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &e.kind {
            ErrorKind::TooDeep | ErrorKind::BadSize => write!(f, "{} at byte {}", e.kind, e.offset),
            _ => write!(f, "{}", e.kind),
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooDeep => write!(f, "nesting deeper than {MAX_DEPTH} levels"),
            Self::BadSize => write!(f, "bundle element size out of range"),
            Self::Trailing { count } => write!(f, "{count} bytes after the end of the packet"),
            Self::Malformed(why) => write!(f, "not OSC: {why}"),
        }
    }
}

/// Decodes one datagram: [`parse`], then [`PacketRepr::parse`]. Never
/// panics, never recurses deeper than [`MAX_DEPTH`].
///
/// # Errors
/// [`Error`] for bytes that are not exactly one OSC packet.
pub fn decode(bytes: &[u8]) -> Result<PacketRepr, Error> {
    PacketRepr::parse(&parse(bytes)?)
}

/// A bundle with the "immediately" timetag holding these messages.
///
/// # Errors
/// [`EncodeError`] for a message OSC cannot carry.
pub fn bundle(messages: &[Message]) -> Result<Vec<u8>, EncodeError> {
    PacketRepr::Bundle {
        timetag: (0, 1),
        content: messages.iter().cloned().map(PacketRepr::Message).collect(),
    }
    .to_bytes()
}

/// One message on its own.
///
/// # Errors
/// [`EncodeError`] for a message OSC cannot carry.
pub fn message(m: &Message) -> Result<Vec<u8>, EncodeError> {
    PacketRepr::Message(m.clone()).to_bytes()
}

fn from_rosc(p: OscPacket) -> PacketRepr {
    match p {
        OscPacket::Message(m) => PacketRepr::Message(Message {
            address: m.addr,
            args: m.args.into_iter().map(arg_from).collect(),
        }),
        OscPacket::Bundle(b) => PacketRepr::Bundle {
            timetag: (b.timetag.seconds, b.timetag.fractional),
            content: b.content.into_iter().map(from_rosc).collect(),
        },
    }
}

fn to_rosc(p: &PacketRepr) -> OscPacket {
    match p {
        PacketRepr::Message(m) => OscPacket::Message(OscMessage {
            addr: m.address.clone(),
            args: m.args.iter().map(arg_to).collect(),
        }),
        PacketRepr::Bundle { timetag, content } => OscPacket::Bundle(OscBundle {
            timetag: OscTime {
                seconds: timetag.0,
                fractional: timetag.1,
            },
            content: content.iter().map(to_rosc).collect(),
        }),
    }
}

fn arg_from(a: OscType) -> Arg {
    match a {
        OscType::Int(v) => Arg::Int(v),
        OscType::Float(v) => Arg::Float(v),
        OscType::String(v) => Arg::String(v),
        OscType::Blob(v) => Arg::Blob(v),
        OscType::Time(t) => Arg::Time(t.seconds, t.fractional),
        OscType::Long(v) => Arg::Long(v),
        OscType::Double(v) => Arg::Double(v),
        OscType::Char(c) => Arg::Char(c),
        OscType::Color(c) => Arg::Color([c.red, c.green, c.blue, c.alpha]),
        OscType::Midi(m) => Arg::Midi([m.port, m.status, m.data1, m.data2]),
        OscType::Bool(b) => Arg::Bool(b),
        OscType::Array(a) => Arg::Array(a.content.into_iter().map(arg_from).collect()),
        OscType::Nil => Arg::Nil,
        OscType::Inf => Arg::Inf,
    }
}

fn arg_to(a: &Arg) -> OscType {
    match a {
        Arg::Int(v) => OscType::Int(*v),
        Arg::Float(v) => OscType::Float(*v),
        Arg::String(v) => OscType::String(v.clone()),
        Arg::Blob(v) => OscType::Blob(v.clone()),
        Arg::Long(v) => OscType::Long(*v),
        Arg::Double(v) => OscType::Double(*v),
        Arg::Bool(v) => OscType::Bool(*v),
        Arg::Nil => OscType::Nil,
        Arg::Inf => OscType::Inf,
        Arg::Time(s, f) => OscType::Time(OscTime {
            seconds: *s,
            fractional: *f,
        }),
        Arg::Char(c) => OscType::Char(*c),
        Arg::Color([r, g, b, a]) => OscType::Color(rosc::OscColor {
            red: *r,
            green: *g,
            blue: *b,
            alpha: *a,
        }),
        Arg::Midi([p, s, d1, d2]) => OscType::Midi(rosc::OscMidiMessage {
            port: *p,
            status: *s,
            data1: *d1,
            data2: *d2,
        }),
        Arg::Array(v) => OscType::Array(rosc::OscArray {
            content: v.iter().map(arg_to).collect(),
        }),
    }
}
