//! UDP datagrams out of a capture file: records → link layer → IP → reassembly → UDP.

use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;

use super::defrag::{Defrag, DefragLimits};
use super::file::{CaptureReader, FileFormat, ReadError};
use super::link::{self, Layer, UnknownLinkType};

/// One UDP datagram from a capture, borrowed until the next call.
#[derive(Clone, Copy, Debug)]
pub struct Captured<'a> {
    /// Capture time since the Unix epoch (for a reassembled datagram: its last fragment's).
    pub ts: Duration,
    /// UDP source.
    pub src: SocketAddr,
    /// UDP destination.
    pub dst: SocketAddr,
    /// The UDP payload.
    pub payload: &'a [u8],
}

/// What reading a capture met along the way. Its `Display` is the line
/// the tools' summaries print; serialised (feature `serde`), `packets` is
/// named `records`, as the tools' JSON summaries name it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CaptureStats {
    /// Records read.
    #[cfg_attr(feature = "serde", serde(rename = "records"))]
    pub packets: u64,
    /// UDP datagrams delivered (whole or reassembled).
    pub datagrams: u64,
    /// Records that were not UDP (other IP protocols, ARP, …), skipped.
    pub non_udp: u64,
    /// IP fragments seen.
    pub fragments: u64,
    /// Datagrams rebuilt from fragments.
    pub reassembled: u64,
    /// Fragments thrown away (incomplete at timeout or end, over the memory caps, invalid).
    pub dropped: u64,
    /// Records cut by the snaplen or whose lengths disagree, skipped.
    pub truncated: u64,
    /// pcapng Simple Packet Blocks, which carry no timestamp (given the previous one).
    pub untimed: u64,
    /// pcapng packets on an interface of a link type this reader does not know, skipped.
    pub unsupported_link: u64,
}

impl std::fmt::Display for CaptureStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "capture: {} records, {} UDP datagrams, {} non-UDP, {} fragments ({} datagrams reassembled, {} dropped), {} truncated",
            self.packets,
            self.datagrams,
            self.non_udp,
            self.fragments,
            self.reassembled,
            self.dropped,
            self.truncated
        )
    }
}

/// Why reading stopped early.
#[derive(Debug)]
#[non_exhaustive]
pub enum CaptureError {
    /// The file is damaged or unreadable at this point.
    Read(ReadError),
    /// A packet of a link type this reader does not know.
    Link(UnknownLinkType),
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read(e) => e.fmt(f),
            Self::Link(e) => e.fmt(f),
        }
    }
}

/// Transparent: `Display` is the inner error's, so `source()` is the inner
/// error's source too (the chain never prints one message twice).
impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Read(e) => e.source(),
            Self::Link(e) => e.source(),
        }
    }
}

/// The UDP datagrams of a pcap or pcapng stream, read with constant memory.
pub struct Datagrams<R> {
    reader: CaptureReader<R>,
    defrag: Defrag,
    buf: Vec<u8>,
    stats: CaptureStats,
    done: bool,
}

impl<R: Read> Datagrams<R> {
    /// Opens a capture stream with the default reassembly limits.
    ///
    /// # Errors
    /// An unreadable header or an unknown magic number.
    pub fn new(inner: R) -> Result<Self, ReadError> {
        Self::with_limits(inner, DefragLimits::default())
    }

    /// Opens a capture stream with these reassembly limits.
    ///
    /// # Errors
    /// An unreadable header or an unknown magic number.
    pub fn with_limits(inner: R, limits: DefragLimits) -> Result<Self, ReadError> {
        Ok(Self {
            reader: CaptureReader::new(inner)?,
            defrag: Defrag::new(limits),
            buf: Vec::with_capacity(2048),
            stats: CaptureStats::default(),
            done: false,
        })
    }

    /// The record reader (format and link type).
    pub fn reader(&self) -> &CaptureReader<R> {
        &self.reader
    }

    /// Counters so far.
    pub fn stats(&self) -> CaptureStats {
        let d = self.defrag.stats();
        CaptureStats {
            fragments: d.fragments,
            reassembled: d.reassembled,
            dropped: d.dropped,
            ..self.stats
        }
    }

    /// The next UDP datagram; `None` at the end. After an error, nothing more.
    pub fn next_datagram(&mut self) -> Option<Result<Captured<'_>, CaptureError>> {
        if self.done {
            return None;
        }
        // Read before the loop: a record borrows the reader.
        let pcapng = self.reader.format() == FileFormat::PcapNg;
        let meta = loop {
            let record = match self.reader.next_packet() {
                None => {
                    self.defrag.finish();
                    self.done = true;
                    return None;
                }
                Some(Err(e)) => {
                    self.defrag.finish();
                    self.done = true;
                    return Some(Err(CaptureError::Read(e)));
                }
                Some(Ok(r)) => r,
            };
            self.stats.packets += 1;
            if record.no_timestamp {
                self.stats.untimed += 1;
            }
            let cut = u64::from(record.orig_len) > record.data.len() as u64;
            match link::decode(record.link, record.data) {
                // In pcapng one interface of an unknown kind spoils only its own packets.
                Err(_) if pcapng => {
                    self.stats.unsupported_link += 1;
                }
                Err(e) => {
                    self.defrag.finish();
                    self.done = true;
                    return Some(Err(CaptureError::Link(e)));
                }
                Ok(Layer::Udp { src, dst, payload }) => {
                    self.buf.clear();
                    self.buf.extend_from_slice(payload);
                    break (record.ts, src, dst);
                }
                Ok(Layer::Fragment(f)) => {
                    let ts = record.ts;
                    self.defrag.handle_fragment(ts, &f);
                    if let Some(whole) = self.defrag.poll_datagram() {
                        if f.protocol != 17 {
                            self.stats.non_udp += 1;
                            continue;
                        }
                        match link::udp(f.src, f.dst, &whole) {
                            Layer::Udp { src, dst, payload } => {
                                self.buf.clear();
                                self.buf.extend_from_slice(payload);
                                break (ts, src, dst);
                            }
                            _ => self.stats.truncated += 1,
                        }
                    }
                }
                Ok(Layer::Truncated) => self.stats.truncated += 1,
                Ok(Layer::Other) if cut => self.stats.truncated += 1,
                Ok(Layer::Other) => self.stats.non_udp += 1,
            }
        };
        self.stats.datagrams += 1;
        let (ts, src, dst) = meta;
        Some(Ok(Captured {
            ts,
            src,
            dst,
            payload: &self.buf,
        }))
    }
}
