//! Capture files: pcap and pcapng in, UDP datagrams out; pcapng recording;
//! replay scheduling.
//!
//! ```
//! use std::io::Cursor;
//! use std::time::Duration;
//! use mocap_core::pcap::{Datagrams, PcapNgWriter};
//!
//! let (phone, pc) = ("192.168.1.20:50012".parse()?, "192.168.1.10:12351".parse()?);
//! let mut w = PcapNgWriter::new(Vec::new())?;
//! w.write(Duration::from_secs(1), phone, pc, b"first")?;
//! w.write(Duration::from_millis(1016), phone, pc, b"second")?;
//! let file = w.into_inner();
//!
//! let mut d = Datagrams::new(Cursor::new(file))?;
//! let mut payloads = Vec::new();
//! while let Some(c) = d.next_datagram() {
//!     let c = c?;
//!     assert_eq!((c.src, c.dst), (phone, pc));
//!     payloads.push(c.payload.to_vec());
//! }
//! assert_eq!(payloads, [b"first".to_vec(), b"second".to_vec()]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - [`CaptureReader`] streams link-layer records from pcap (µs or ns) and
//!   pcapng (any `if_tsresol`, `if_tsoffset`, several interfaces and
//!   sections), detected by magic, with constant memory. It never panics; a
//!   damaged file yields every record before the fault, then an error with
//!   its byte offset.
//! - [`link::decode`] reads Ethernet (with VLAN tags), Linux SLL and SLL2,
//!   NULL/LOOP and raw IP down to UDP (headers through `etherparse`).
//! - [`Defrag`] reassembles IPv4 and IPv6 fragments in any order, with
//!   duplicates, under caps on bytes and datagrams held and a timeout in
//!   capture time.
//! - [`Datagrams`] strings these together; [`PcapNgWriter`] writes datagrams
//!   back as Ethernet/IP/UDP frames with valid checksums.
//! - [`Schedule`] computes replay deadlines without touching a clock;
//!   [`Impair`] decides seeded loss, bursts, duplicates, reordering and
//!   jitter; [`Renumber`] carries frame numbers on across the passes of a
//!   looped replay.

mod datagrams;
mod defrag;
mod file;
mod impair;
pub mod link;
mod renumber;
mod replay;
mod write;

pub use datagrams::{CaptureError, CaptureStats, Captured, Datagrams};
pub use defrag::{Defrag, DefragLimits, DefragStats};
pub use file::{CaptureReader, CapturedPacket, FileFormat, MAX_PACKET, ReadError, ReadErrorKind};
pub use impair::{Fate, Impair, ImpairCounters, ImpairError, ImpairSpec};
pub use renumber::{MAX_STREAMS, Renumber, RenumberCounters, Renumbered};
pub use replay::{MAX_DEADLINE, Pace, Schedule};
pub use write::{MAX_UDP_PAYLOAD_V4, MAX_UDP_PAYLOAD_V6, PcapNgWriter, checksum};
