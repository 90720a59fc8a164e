//! What an input file holds, told from its first bytes (no I/O): a capture
//! ([`pcap`](crate::pcap)), one of the text layouts of
//! [`textcap`](crate::textcap), a raw datagram, or something no tool reads
//! as it is (a compressed file, an archive, UTF-16 text), with what to do.
//!
//! ```
//! use mocap_core::filekind::{FileKind, sniff};
//!
//! assert_eq!(sniff(b"# one datagram\n48656c6c6f\n"), FileKind::HexLines);
//! assert_eq!(sniff(b"# Notes\nSee the manual.\n"), FileKind::Text { line: 2 });
//! let FileKind::Foreign { advice, .. } = sniff(b"\x1f\x8b\x08\x00") else { panic!() };
//! assert_eq!(advice, "gunzip it first");
//! ```

use crate::textcap::MOCOPI_PACKETS_MAGIC;

/// What a file's first bytes say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A pcap file (any byte order, µs or ns).
    Pcap,
    /// A pcapng file.
    PcapNg,
    /// A mocopi packet capture (`.mocopipackets`).
    MocopiPackets,
    /// Hex lines, one datagram a line; also a file with nothing in it yet
    /// but blank and `#` lines (nothing says otherwise).
    HexLines,
    /// Text whose first content line (1-based) is not hex: one datagram a
    /// line for a text protocol (iFacialMocap), else no capture at all.
    Text {
        /// The first line that is not blank, a comment or hex.
        line: usize,
    },
    /// Binary that is none of the above: one raw datagram, as far as can be told.
    Binary,
    /// A format no tool reads as it is.
    Foreign {
        /// What it is, e.g. `gzip-compressed`.
        what: &'static str,
        /// What to do, e.g. `gunzip it first`.
        advice: &'static str,
    },
}

/// Magic numbers of the formats a capture is often wrapped in, and the advice.
const FOREIGN: &[(&[u8], &str, &str)] = &[
    (b"\x1f\x8b", "gzip-compressed", "gunzip it first"),
    (
        b"\x28\xb5\x2f\xfd",
        "zstd-compressed",
        "decompress it first (zstd -d)",
    ),
    (
        b"\xfd7zXZ\x00",
        "xz-compressed",
        "decompress it first (xz -d)",
    ),
    (b"BZh", "bzip2-compressed", "decompress it first (bunzip2)"),
    (b"PK\x03\x04", "a zip archive", "unzip it first"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract it first"),
    (
        b"\xff\xfe",
        "UTF-16 text",
        "save it as UTF-8 (PowerShell: Out-File -Encoding utf8)",
    ),
    (
        b"\xfe\xff",
        "UTF-16 text",
        "save it as UTF-8 (PowerShell: Out-File -Encoding utf8)",
    ),
];

/// How many bytes (after a byte-order mark) decide between text and binary.
const TEXT_PROBE: usize = 512;

/// The UTF-8 byte-order mark Windows editors put at the start of text.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Tells what `head` (a file's first bytes, any length; 64 KiB is plenty)
/// is. Never panics.
#[must_use]
pub fn sniff(head: &[u8]) -> FileKind {
    match head.first_chunk::<4>() {
        Some([0xd4, 0xc3, 0xb2, 0xa1] | [0xa1, 0xb2, 0xc3, 0xd4]) => return FileKind::Pcap,
        Some([0x4d, 0x3c, 0xb2, 0xa1] | [0xa1, 0xb2, 0x3c, 0x4d]) => return FileKind::Pcap,
        Some([0x0a, 0x0d, 0x0d, 0x0a]) => return FileKind::PcapNg,
        _ => {}
    }
    if let Some(&(_, what, advice)) = FOREIGN.iter().find(|(m, ..)| head.starts_with(m)) {
        return FileKind::Foreign { what, advice };
    }
    let body = head.strip_prefix(UTF8_BOM).unwrap_or(head);
    // Judged on the start only: a long hex file may carry a stray byte in
    // a later comment, and a binary datagram shows itself early.
    let probe = body.get(..TEXT_PROBE).unwrap_or(body);
    match text_of(probe) {
        Some(text) => text_kind(text),
        None => FileKind::Binary,
    }
}

/// `head` as text: UTF-8 (a character cut at the end of the head is
/// fine) without control characters other than tab, CR, LF and form feed.
fn text_of(head: &[u8]) -> Option<&str> {
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // Cut inside the last character: the part before it is the text.
        Err(e) if e.error_len().is_none() => head
            .get(..e.valid_up_to())
            .and_then(|h| std::str::from_utf8(h).ok())?,
        Err(_) => return None,
    };
    text.chars()
        .all(|c| !c.is_control() || matches!(c, '\t' | '\r' | '\n' | '\x0c'))
        .then_some(text)
}

fn text_kind(text: &str) -> FileKind {
    for (i, line) in text.lines().enumerate() {
        let body = line.trim();
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if body == MOCOPI_PACKETS_MAGIC {
            return FileKind::MocopiPackets;
        }
        // Separators as `textcap::decode_hex_into` skips them; a line cut
        // at the end of the head may have an odd number of digits.
        return if body
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c.is_whitespace() || c == ':')
        {
            FileKind::HexLines
        } else {
            FileKind::Text { line: i + 1 }
        };
    }
    FileKind::HexLines
}

impl FileKind {
    /// What the tools read from a file: the sentence an error about a file
    /// in no known format ends with.
    pub const EXPECTED: &'static str = "expected a pcap or pcapng capture, a .mocopipackets \
                                        capture, hex lines (one datagram a line) or one raw \
                                        datagram (.bin)";
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

    fn file(path: &str) -> Vec<u8> {
        std::fs::read(format!("{CAPTURES}/{path}")).unwrap()
    }

    #[test]
    fn the_repositorys_captures() {
        assert_eq!(sniff(&file("mocopi/wave-60hz.pcapng")), FileKind::PcapNg);
        assert_eq!(
            sniff(&file("mocopi/tcpdump-lo-ethernet.pcap")),
            FileKind::Pcap
        );
        assert_eq!(
            sniff(&file("mocopi/animu-sphere/arms-lowered-60hz.mocopipackets")),
            FileKind::MocopiPackets
        );
        assert_eq!(sniff(&file("mocopi/seed-frame-1575.bin")), FileKind::Binary);
        assert_eq!(
            sniff(&file("mocopi/t-34400/sample_skdf.bin")),
            FileKind::Binary
        );
        let readme =
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
        // Its first line is `# mocap-tools`, a comment to hex lines.
        assert!(
            matches!(sniff(&readme), FileKind::Text { line: 3 }),
            "{:?}",
            sniff(&readme)
        );
    }

    #[test]
    fn text_layouts() {
        assert_eq!(sniff(b""), FileKind::HexLines);
        assert_eq!(sniff(b"\n# only a comment\n"), FileKind::HexLines);
        assert_eq!(sniff(b"\xEF\xBB\xBF00ff\r\n"), FileKind::HexLines);
        assert_eq!(sniff(b"aa:bb:cc\n0"), FileKind::HexLines, "a cut last line");
        assert_eq!(
            sniff(format!("\n{MOCOPI_PACKETS_MAGIC}\nd 1.0 2\n  00 01\n").as_bytes()),
            FileKind::MocopiPackets
        );
        assert_eq!(
            sniff(b"trackingStatus-1|mouthSmile_R-0|=head#1,2,3\n"),
            FileKind::Text { line: 1 }
        );
        let mut long = "ab".repeat(400).into_bytes();
        long.extend_from_slice(b"\n# caf\xe9\n");
        assert_eq!(sniff(&long), FileKind::HexLines, "judged on the start");
        // Non-ASCII text is text, also when the head cuts a character.
        assert_eq!(
            sniff("# Überblick\nnotes →".as_bytes()),
            FileKind::Text { line: 2 }
        );
        let cut = "xy\u{2192}".as_bytes();
        assert_eq!(sniff(&cut[..cut.len() - 1]), FileKind::Text { line: 1 });
    }

    #[test]
    fn wrappers_are_named_with_advice() {
        // The first bytes of `gzip` of an empty file.
        let gz = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00";
        assert_eq!(
            sniff(gz),
            FileKind::Foreign {
                what: "gzip-compressed",
                advice: "gunzip it first"
            }
        );
        for (head, what) in [
            (&b"PK\x03\x04rest"[..], "a zip archive"),
            (b"\xff\xfe#\x000\x00", "UTF-16 text"),
            (b"\x28\xb5\x2f\xfd\x00", "zstd-compressed"),
        ] {
            assert!(matches!(sniff(head), FileKind::Foreign { what: w, .. } if w == what));
        }
        // A control character makes it binary: a datagram, not text.
        assert_eq!(
            sniff(b"/VMC/Ext/OK\x00\x00\x00\x00,i\x00\x00"),
            FileKind::Binary
        );
    }

    #[test]
    fn no_panic_on_any_head() {
        // Mostly bytes that reach the text rules (digits, line ends,
        // comments, a UTF-8 lead byte), the rest anything.
        const BYTES: [u8; 8] = [b'0', b'a', b'\n', b'#', b' ', b'z', 0xC3, 0x1f];
        let mut rng = mocap_testutil::Rng(7);
        for n in 0..20_000usize {
            let head: Vec<u8> = (0..n % 64)
                .map(|_| match BYTES.get(rng.below(BYTES.len() + 1)) {
                    Some(&b) => b,
                    None => rng.next().to_le_bytes()[0],
                })
                .collect();
            let _ = sniff(&head);
        }
    }
}
