//! Datagrams written as text, read one line at a time (no I/O here).
//!
//! ```
//! use mocap_core::textcap;
//!
//! let lines = textcap::decode_all("# two datagrams\n48656c6c6f\n00ff\n");
//! let payloads: Vec<Vec<u8>> = lines.into_iter().map(|l| l.map(|d| d.payload)).collect::<Result<_, _>>()?;
//! assert_eq!(payloads, [b"Hello".to_vec(), vec![0x00, 0xff]]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Two layouts are understood, told apart by the first non-blank line:
//!
//! - **Hex lines**: one datagram per line as hex digits; spaces are ignored,
//!   as are colons, blank lines and lines starting with `#`. `xxd -p -c0
//!   file.bin` and `tshark -T fields -e data.data` write this.
//! - **mocopi packet capture** (`.mocopipackets`, first line
//!   `!mocopi-packet-capture 1`): `key value` header lines, then per datagram a
//!   `d <receive-seconds> <length>` line followed by hex lines that start with
//!   two spaces and may carry an ASCII gutter after `|`.

use std::collections::VecDeque;
use std::fmt;

use crate::MAX_DATAGRAM;

/// First line of a mocopi packet capture.
pub const MOCOPI_PACKETS_MAGIC: &str = "!mocopi-packet-capture 1";

/// One datagram read from text.
#[derive(Clone, Debug, PartialEq)]
pub struct TextDatagram {
    /// Receive time in seconds, where the layout records it.
    pub arrival: Option<f64>,
    /// The datagram's bytes.
    pub payload: Vec<u8>,
    /// Line on which the datagram started (1-based).
    pub line: usize,
}

/// A line that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// 0-based character column of the fault, where one is known.
    pub column: Option<usize>,
    /// What is wrong.
    pub kind: LineErrorKind,
}

/// What is wrong with a line of a text capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineErrorKind {
    /// A character that is not a hex digit (nor a space or colon).
    NotHex(char),
    /// An odd number of hex digits.
    OddDigits,
    /// More hex than one datagram can hold.
    TooMuchHex {
        /// Bytes the line describes.
        bytes: usize,
    },
    /// A line too long to read at all ([`TextDecoder::skip_line`]).
    LineTooLong {
        /// Bytes read of it before giving up.
        bytes: usize,
    },
    /// A `d` line that is not `d <seconds> <length>`.
    BadDatagramLine,
    /// A declared length more than one datagram can hold.
    DeclaredTooLong {
        /// The declared length.
        len: usize,
    },
    /// Hex bytes with no `d` line before them.
    HexOutsideDatagram,
    /// Fewer bytes than declared before the next `d` line or the end.
    Short {
        /// Declared length.
        declared: usize,
        /// Bytes that came.
        got: usize,
        /// Whether the input ended (rather than the next datagram began).
        at_end: bool,
    },
    /// More bytes than declared.
    Long {
        /// Declared length.
        declared: usize,
        /// Bytes that came.
        got: usize,
    },
}

impl fmt::Display for LineErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::NotHex(ch) => write!(f, "{ch:?} is not a hex digit"),
            Self::OddDigits => write!(f, "odd number of hex digits"),
            Self::TooMuchHex { bytes } => write!(
                f,
                "{bytes} bytes of hex is more than one datagram can hold ({MAX_DATAGRAM})"
            ),
            Self::LineTooLong { bytes } => {
                write!(
                    f,
                    "line of {bytes} bytes or more is too long for one datagram"
                )
            }
            Self::BadDatagramLine => write!(f, "expected `d <seconds> <length>`"),
            Self::DeclaredTooLong { len } => write!(
                f,
                "declared length {len} is more than one datagram can hold ({MAX_DATAGRAM})"
            ),
            Self::HexOutsideDatagram => write!(f, "hex bytes outside a datagram"),
            Self::Short {
                declared,
                got,
                at_end: true,
            } => write!(
                f,
                "datagram declared {declared} bytes but the input ended after {got}"
            ),
            Self::Short { declared, got, .. } => write!(
                f,
                "datagram is {} bytes short of its declared length",
                declared.saturating_sub(got)
            ),
            Self::Long { declared, got } => {
                write!(f, "datagram declared {declared} bytes but holds {got}")
            }
        }
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(c) = self.column {
            write!(f, ", column {}", c + 1)?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for LineError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Unknown,
    Hex,
    Packets,
    /// Each line is a datagram's text as is (text protocols such as iFacialMocap).
    Literal,
}

#[derive(Debug)]
struct Pending {
    arrival: f64,
    len: usize,
    payload: Vec<u8>,
    line: usize,
}

/// Turns lines into datagrams. Feed every line to [`push_line`](Self::push_line)
/// and drain [`pop`](Self::pop) after each; call [`finish`](Self::finish) once
/// at the end of input and drain again.
#[derive(Debug)]
pub struct TextDecoder {
    mode: Mode,
    line_no: usize,
    pending: Option<Pending>,
    ready: VecDeque<LineResult>,
}

impl Default for TextDecoder {
    fn default() -> Self {
        Self::new()
    }
}

/// What a line produced.
pub type LineResult = Result<TextDatagram, LineError>;

impl TextDecoder {
    /// A decoder that has seen no line.
    pub fn new() -> Self {
        Self {
            mode: Mode::Unknown,
            line_no: 0,
            pending: None,
            ready: VecDeque::new(),
        }
    }

    /// A decoder that takes each non-empty line as the text of one datagram
    /// (for text protocols, whose captures are one frame per line).
    pub fn literal() -> Self {
        Self {
            mode: Mode::Literal,
            ..Self::new()
        }
    }

    /// Whether the input turned out to be a mocopi packet capture.
    pub fn is_mocopi_packets(&self) -> bool {
        self.mode == Mode::Packets
    }

    /// Reads one line (without its newline).
    pub fn push_line(&mut self, line: &str) {
        if let Some(r) = self.line(line) {
            self.ready.push_back(r);
        }
    }

    /// Counts a line the caller could not read (too long for any datagram:
    /// `bytes` read of it), as an error; a datagram it was part of is dropped.
    pub fn skip_line(&mut self, bytes: usize) {
        self.line_no += 1;
        self.pending = None;
        let e = self.error(None, LineErrorKind::LineTooLong { bytes });
        self.ready.push_back(Err(e));
    }

    /// The next complete datagram or error, in input order.
    pub fn pop(&mut self) -> Option<LineResult> {
        self.ready.pop_front()
    }

    /// Ends the input: a datagram cut short by the end of the file becomes an error.
    pub fn finish(&mut self) {
        if let Some(p) = self.pending.take() {
            self.ready.push_back(Err(LineError {
                line: p.line,
                column: None,
                kind: LineErrorKind::Short {
                    declared: p.len,
                    got: p.payload.len(),
                    at_end: true,
                },
            }));
        }
    }

    fn line(&mut self, line: &str) -> Option<LineResult> {
        self.line_no += 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if self.mode == Mode::Unknown {
            if line.trim().is_empty() {
                return None;
            }
            if line.trim_end() == MOCOPI_PACKETS_MAGIC {
                self.mode = Mode::Packets;
                return None;
            }
            self.mode = Mode::Hex;
        }
        match self.mode {
            Mode::Packets => self.packets_line(line),
            Mode::Literal => (!line.is_empty()).then(|| {
                Ok(TextDatagram {
                    arrival: None,
                    payload: line.as_bytes().to_vec(),
                    line: self.line_no,
                })
            }),
            _ => self.hex_line(line),
        }
    }

    fn hex_line(&mut self, line: &str) -> Option<LineResult> {
        let body = line.trim();
        if body.is_empty() || body.starts_with('#') {
            return None;
        }
        let digits = body.bytes().filter(u8::is_ascii_hexdigit).count();
        if digits / 2 > MAX_DATAGRAM {
            return Some(Err(
                self.error(None, LineErrorKind::TooMuchHex { bytes: digits / 2 })
            ));
        }
        let mut payload = Vec::with_capacity(body.len() / 2);
        Some(match decode_hex_into(line, &mut payload) {
            Ok(()) => Ok(TextDatagram {
                arrival: None,
                payload,
                line: self.line_no,
            }),
            Err((column, kind)) => Err(self.error(Some(column), kind)),
        })
    }

    fn packets_line(&mut self, line: &str) -> Option<LineResult> {
        if let Some(rest) = line.strip_prefix("d ") {
            if let Some(p) = self.pending.take() {
                self.ready.push_back(Err(LineError {
                    line: p.line,
                    column: None,
                    kind: LineErrorKind::Short {
                        declared: p.len,
                        got: p.payload.len(),
                        at_end: false,
                    },
                }));
            }
            let mut fields = rest.split_whitespace();
            let arrival = fields.next().and_then(|s| s.parse::<f64>().ok());
            let len = fields.next().and_then(|s| s.parse::<usize>().ok());
            let (Some(arrival), Some(len)) = (arrival, len) else {
                return Some(Err(self.error(None, LineErrorKind::BadDatagramLine)));
            };
            if len > MAX_DATAGRAM {
                return Some(Err(self.error(None, LineErrorKind::DeclaredTooLong { len })));
            }
            let pending = Pending {
                arrival,
                len,
                payload: Vec::with_capacity(len),
                line: self.line_no,
            };
            if len == 0 {
                return Some(Ok(TextDatagram {
                    arrival: Some(arrival),
                    payload: Vec::new(),
                    line: self.line_no,
                }));
            }
            self.pending = Some(pending);
            return None;
        }
        if !line.starts_with("  ") {
            // Header lines (`sender …`, `listen …`) and blank lines carry no bytes.
            return None;
        }
        let hex = line.split('|').next().unwrap_or_default();
        let line_no = self.line_no;
        let Some(p) = self.pending.as_mut() else {
            return Some(Err(self.error(None, LineErrorKind::HexOutsideDatagram)));
        };
        if let Err((column, kind)) = decode_hex_into(hex, &mut p.payload) {
            self.pending = None;
            return Some(Err(LineError {
                line: line_no,
                column: Some(column),
                kind,
            }));
        }
        if p.payload.len() < p.len {
            return None;
        }
        let p = self.pending.take()?;
        if p.payload.len() > p.len {
            return Some(Err(LineError {
                line: line_no,
                column: None,
                kind: LineErrorKind::Long {
                    declared: p.len,
                    got: p.payload.len(),
                },
            }));
        }
        Some(Ok(TextDatagram {
            arrival: Some(p.arrival),
            payload: p.payload,
            line: p.line,
        }))
    }

    fn error(&self, column: Option<usize>, kind: LineErrorKind) -> LineError {
        LineError {
            line: self.line_no,
            column,
            kind,
        }
    }
}

/// Appends the bytes of a hex string to `out`, skipping whitespace and colons.
///
/// # Errors
/// The column (0-based, in characters' byte offsets) and kind of the first
/// character that is not a hex digit, or of an odd number of digits.
pub fn decode_hex_into(text: &str, out: &mut Vec<u8>) -> Result<(), (usize, LineErrorKind)> {
    let mut high: Option<(usize, u8)> = None;
    for (col, ch) in text.char_indices() {
        // Spaces and colons separate bytes in `xxd`, `tshark` and Wireshark's "copy as hex".
        if ch.is_whitespace() || ch == ':' {
            continue;
        }
        let Some(nibble) = ch.to_digit(16).and_then(|d| u8::try_from(d).ok()) else {
            return Err((col, LineErrorKind::NotHex(ch)));
        };
        match high.take() {
            None => high = Some((col, nibble)),
            Some((_, h)) => out.push(h << 4 | nibble),
        }
    }
    match high {
        Some((col, _)) => Err((col, LineErrorKind::OddDigits)),
        None => Ok(()),
    }
}

/// Reads every datagram of a text capture held in memory.
pub fn decode_all(text: &str) -> Vec<LineResult> {
    let mut d = TextDecoder::new();
    let mut out = Vec::new();
    for l in text.lines() {
        d.push_line(l);
        out.extend(std::iter::from_fn(|| d.pop()));
    }
    d.finish();
    out.extend(std::iter::from_fn(|| d.pop()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_lines_with_comments_and_spaces() {
        let got = decode_all("# two datagrams\n0a0B ff\n\n  12:34\n");
        let got: Vec<_> = got.into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(got[0].payload, [0x0a, 0x0b, 0xff]);
        assert_eq!(got[0].line, 2);
        assert_eq!(got[1].payload, [0x12, 0x34]);
        assert_eq!(got[1].arrival, None);
    }

    #[test]
    fn bad_hex_line_is_an_error_and_later_lines_still_decode() {
        let got = decode_all("0a\n0g\n0b\nabc\n");
        assert_eq!(got[0].as_ref().unwrap().payload, [0x0a]);
        let e = got[1].as_ref().unwrap_err();
        assert_eq!((e.line, e.column), (2, Some(1)));
        assert_eq!(got[2].as_ref().unwrap().payload, [0x0b]);
        assert_eq!(got[3].as_ref().unwrap_err().kind, LineErrorKind::OddDigits);
        assert_eq!(e.kind, LineErrorKind::NotHex('g'));
        assert_eq!(e.to_string(), "line 2, column 2: 'g' is not a hex digit");
    }

    #[test]
    fn oversized_datagrams_are_refused() {
        let long = "ab".repeat(MAX_DATAGRAM + 1);
        let got = decode_all(&format!("{long}\n0a\n"));
        assert_eq!(
            got[0].as_ref().unwrap_err().kind,
            LineErrorKind::TooMuchHex {
                bytes: MAX_DATAGRAM + 1
            }
        );
        assert_eq!(got[1].as_ref().unwrap().payload, [0x0a]);
        let got = decode_all("!mocopi-packet-capture 1\nd 0 70000\n  00\n");
        let e = got[0].as_ref().unwrap_err();
        assert_eq!(e.kind, LineErrorKind::DeclaredTooLong { len: 70000 });
        assert!(e.to_string().contains("declared length 70000"), "{e}");
    }

    #[test]
    fn mocopi_packets_layout() {
        let text = "!mocopi-packet-capture 1\nsender x\n\nd 0.000000 0\n\nd 0.5 5\n  01 02 03 04  |....|\n  05  |.|\n";
        let got: Vec<_> = decode_all(text).into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), 2);
        assert!(got[0].payload.is_empty());
        assert_eq!(got[1].arrival, Some(0.5));
        assert_eq!(got[1].payload, [1, 2, 3, 4, 5]);
        assert_eq!(got[1].line, 6);
    }

    #[test]
    fn mocopi_packets_length_mismatch_is_reported() {
        let got =
            decode_all("!mocopi-packet-capture 1\nd 0 4\n  01 02\nd 1 1\n  01 02\nd 2 3\n  01\n");
        let e = got[0].as_ref().unwrap_err();
        assert!(e.to_string().contains("2 bytes short"), "{e}");
        assert_eq!(e.line, 2);
        let long = got[1].as_ref().unwrap_err();
        assert_eq!(
            long.kind,
            LineErrorKind::Long {
                declared: 1,
                got: 2
            }
        );
        assert!(long.to_string().contains("holds 2"));
        let cut = got[2].as_ref().unwrap_err();
        assert!(cut.to_string().contains("ended after 1"), "{cut}");
    }
}
