//! OSC 1.0 packets, through `rosc`, guarded against what `rosc` gets wrong.
//!
//! An OSC packet is a message (address string, type-tag string, arguments;
//! every part padded to 4 bytes; numbers big-endian) or a bundle (`#bundle\0`,
//! an 8-byte timetag, then elements each prefixed by an `i32` size). Bundles
//! nest. Before bytes reach `rosc`, [`decode`] checks their structure without
//! recursion: bundle nesting deeper than [`MAX_DEPTH`] and nested arrays in
//! type tags are refused (`rosc` recurses once per level and overflows the
//! stack, aborting the process, on deep input), and bytes left over after the
//! packet are an error (`rosc` accepts a truncated bundle silently). `rosc`
//! types stay inside this module.
//!
//! ```
//! use mocap_core::osc::{self, Arg, Message};
//!
//! let m = Message::new("/VMC/Ext/Blend/Val", vec![Arg::String("A".into()), Arg::Float(0.5)]);
//! let bytes = osc::bundle(&[m.clone(), Message::new("/VMC/Ext/Blend/Apply", vec![])]);
//! let packet = osc::decode(&bytes)?;
//! assert_eq!(packet.messages()[0], &m);
//! # Ok::<(), osc::Error>(())
//! ```

mod check;
mod pattern;

use std::fmt;

use rosc::{OscBundle, OscMessage, OscPacket, OscTime, OscType};

pub use pattern::{Pattern, PatternError};

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

/// A decoded packet.
#[derive(Clone, Debug, PartialEq)]
pub enum Packet {
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

impl Packet {
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
}

/// Why bytes are not an OSC packet.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// Bundles nested deeper than [`MAX_DEPTH`], or arrays nested as deep.
    TooDeep {
        /// Byte offset of the element that went too deep.
        offset: usize,
    },
    /// A bundle element's size runs past its bundle, or is negative.
    BadSize {
        /// Byte offset of the size field.
        offset: usize,
    },
    /// Bytes after a complete packet.
    Trailing {
        /// How many.
        count: usize,
    },
    /// The structure checks passed but the packet does not decode.
    Malformed(Malformed),
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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooDeep { offset } => {
                write!(f, "nesting deeper than {MAX_DEPTH} levels at byte {offset}")
            }
            Self::BadSize { offset } => {
                write!(f, "bundle element size out of range at byte {offset}")
            }
            Self::Trailing { count } => write!(f, "{count} bytes after the end of the packet"),
            Self::Malformed(why) => write!(f, "not OSC: {why}"),
        }
    }
}

impl std::error::Error for Error {}

/// Decodes one datagram. Never panics, never recurses deeper than [`MAX_DEPTH`].
///
/// # Errors
/// [`Error`] for bytes that are not exactly one OSC packet.
pub fn decode(bytes: &[u8]) -> Result<Packet, Error> {
    check::structure(bytes)?;
    let (rest, packet) =
        rosc::decoder::decode_udp(bytes).map_err(|e| Error::Malformed(Malformed::from_rosc(&e)))?;
    if !rest.is_empty() {
        return Err(Error::Trailing { count: rest.len() });
    }
    Ok(from_rosc(packet))
}

/// Encodes a packet.
pub fn encode(packet: &Packet) -> Vec<u8> {
    // rosc only fails to encode what it cannot represent (e.g. an address
    // without a leading slash is still written); an empty vector is the
    // honest result of such a packet.
    rosc::encoder::encode(&to_rosc(packet)).unwrap_or_default()
}

/// A bundle with the "immediately" timetag holding these messages.
pub fn bundle(messages: &[Message]) -> Vec<u8> {
    encode(&Packet::Bundle {
        timetag: (0, 1),
        content: messages.iter().cloned().map(Packet::Message).collect(),
    })
}

/// One message on its own.
pub fn message(m: &Message) -> Vec<u8> {
    encode(&Packet::Message(m.clone()))
}

fn from_rosc(p: OscPacket) -> Packet {
    match p {
        OscPacket::Message(m) => Packet::Message(Message {
            address: m.addr,
            args: m.args.into_iter().map(arg_from).collect(),
        }),
        OscPacket::Bundle(b) => Packet::Bundle {
            timetag: (b.timetag.seconds, b.timetag.fractional),
            content: b.content.into_iter().map(from_rosc).collect(),
        },
    }
}

fn to_rosc(p: &Packet) -> OscPacket {
    match p {
        Packet::Message(m) => OscPacket::Message(OscMessage {
            addr: m.address.clone(),
            args: m.args.iter().map(arg_to).collect(),
        }),
        Packet::Bundle { timetag, content } => OscPacket::Bundle(OscBundle {
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
