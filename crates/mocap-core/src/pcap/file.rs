//! Streaming reader for pcap and pcapng files.

use std::fmt;
use std::io::{self, BufReader, Read};
use std::time::Duration;

/// Largest record or block we accept; a bigger length means a corrupt file.
/// (A 65,535-byte snaplen packet with pcapng framing is well below this.)
pub const MAX_PACKET: usize = 1 << 20;

const PCAPNG_SHB: u32 = 0x0A0D_0D0A;
const PCAPNG_BYTE_ORDER: u32 = 0x1A2B_3C4D;
const PCAPNG_IDB: u32 = 1;
const PCAPNG_PB: u32 = 2;
const PCAPNG_SPB: u32 = 3;
const PCAPNG_EPB: u32 = 6;
const OPT_END: u16 = 0;
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_TSOFFSET: u16 = 14;

/// Which file format and variant was detected from the magic number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    /// Classic pcap.
    Pcap {
        /// Timestamps in nanoseconds (magic `a1b23c4d`) rather than microseconds.
        nanos: bool,
    },
    /// pcapng.
    PcapNg,
}

/// One captured link-layer packet (a pcap record or a pcapng packet block), borrowed until the next call.
#[derive(Clone, Copy, Debug)]
pub struct CapturedPacket<'a> {
    /// Capture time since the Unix epoch.
    pub ts: Duration,
    /// Link type of the interface (LINKTYPE_* number).
    pub link: u32,
    /// Captured bytes (possibly cut by the snaplen).
    pub data: &'a [u8],
    /// Length of the packet on the wire.
    pub orig_len: u32,
    /// Byte offset of the record or block in the file.
    pub offset: u64,
    /// pcapng: the record had no timestamp (Simple Packet Block); `ts` repeats the previous one.
    pub no_timestamp: bool,
}

/// Why a capture file could not be read further.
#[derive(Debug)]
#[non_exhaustive]
pub struct ReadError {
    /// Byte offset in the file where the fault was found.
    pub offset: u64,
    /// What is wrong.
    pub kind: ReadErrorKind,
}

/// The reasons reading stops.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// The operating system failed to read.
    Io(io::Error),
    /// The file does not start with a pcap or pcapng magic number.
    NotACapture([u8; 4]),
    /// The file ends in the middle of a header, record or block.
    Truncated {
        /// Bytes the record needed.
        need: usize,
        /// Bytes that were left.
        have: usize,
    },
    /// A record or block length that cannot be right.
    BadLength(u64),
    /// The trailing length of a pcapng block differs from its leading length.
    LengthMismatch {
        /// Leading length.
        head: u32,
        /// Trailing length.
        tail: u32,
    },
    /// A pcapng section header with an unknown byte-order magic.
    BadByteOrder(u32),
    /// A pcapng packet refers to an interface that was not described.
    UnknownInterface(u32),
    /// pcapng packet data before any section header.
    NoSection,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            // The OS's reason is the source, not repeated here.
            ReadErrorKind::Io(_) => f.write_str("read error")?,
            ReadErrorKind::NotACapture(m) => write!(
                f,
                "not a pcap or pcapng file (starts with {:02x}{:02x}{:02x}{:02x})",
                m[0], m[1], m[2], m[3]
            )?,
            ReadErrorKind::Truncated { need, have } => {
                write!(
                    f,
                    "file is truncated: a record needs {need} bytes, {have} are left"
                )?;
            }
            ReadErrorKind::BadLength(n) => write!(f, "corrupt record or block length {n}")?,
            ReadErrorKind::LengthMismatch { head, tail } => {
                write!(
                    f,
                    "corrupt pcapng block: length {head} at its start, {tail} at its end"
                )?;
            }
            ReadErrorKind::BadByteOrder(m) => {
                write!(
                    f,
                    "corrupt pcapng section header: byte-order magic {m:#010x}"
                )?;
            }
            ReadErrorKind::UnknownInterface(i) => {
                write!(f, "pcapng packet on undescribed interface {i}")?;
            }
            ReadErrorKind::NoSection => write!(f, "pcapng block before any section header")?,
        }
        write!(f, " at byte {}", self.offset)
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ReadErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Interface {
    link: u32,
    /// Timestamp units: `true` = powers of two.
    resol_pow2: bool,
    resol_exp: u8,
    offset_s: i64,
}

impl Interface {
    fn timestamp(&self, units: u64) -> Duration {
        let base = if self.resol_pow2 {
            let exp = u32::from(self.resol_exp.min(63));
            let secs = units >> exp;
            let frac = u128::from(units & ((1u64 << exp) - 1));
            let nanos = (frac * 1_000_000_000) >> exp;
            Duration::new(secs, u32::try_from(nanos).unwrap_or(0))
        } else {
            let exp = u32::from(self.resol_exp.min(19));
            let div = 10u64.pow(exp);
            let secs = units / div;
            let frac = u128::from(units % div);
            let nanos = frac * 1_000_000_000 / u128::from(div);
            Duration::new(secs, u32::try_from(nanos).unwrap_or(0))
        };
        let off = Duration::from_secs(self.offset_s.unsigned_abs());
        if self.offset_s >= 0 {
            base.saturating_add(off)
        } else {
            base.saturating_sub(off)
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    Little,
    Big,
}

impl Order {
    fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Self::Little => u16::from_le_bytes(b),
            Self::Big => u16::from_be_bytes(b),
        }
    }
    fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Self::Little => u32::from_le_bytes(b),
            Self::Big => u32::from_be_bytes(b),
        }
    }

    /// `N` consecutive 32-bit fields (missing bytes read as zero; callers
    /// pass slices of at least `4 * N` bytes).
    fn u32s<const N: usize>(self, bytes: &[u8]) -> [u32; N] {
        let mut out = [0u32; N];
        for (o, w) in out.iter_mut().zip(bytes.chunks_exact(4)) {
            if let Ok(w) = <[u8; 4]>::try_from(w) {
                *o = self.u32(w);
            }
        }
        out
    }
}

/// Reads records from a pcap or pcapng stream with constant memory.
///
/// After an error the reader yields nothing more; every record before the
/// fault has been delivered.
pub struct CaptureReader<R> {
    r: BufReader<R>,
    format: FileFormat,
    order: Order,
    /// Classic pcap: the link type from the file header.
    pcap_link: u32,
    interfaces: Vec<Interface>,
    in_section: bool,
    buf: Vec<u8>,
    offset: u64,
    last_ts: Duration,
    done: bool,
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header and detects the format.
    ///
    /// # Errors
    /// I/O errors, a file too short for a header, or an unknown magic number.
    pub fn new(inner: R) -> Result<Self, ReadError> {
        let mut r = BufReader::with_capacity(256 * 1024, inner);
        let mut magic = [0u8; 4];
        let got = read_full(&mut r, &mut magic).map_err(|e| io_error(0, e))?;
        if got < 4 {
            return Err(ReadError {
                offset: 0,
                kind: ReadErrorKind::Truncated { need: 4, have: got },
            });
        }
        let mut me = Self {
            r,
            format: FileFormat::PcapNg,
            order: Order::Little,
            pcap_link: 0,
            interfaces: Vec::new(),
            in_section: false,
            buf: Vec::new(),
            offset: 4,
            last_ts: Duration::ZERO,
            done: false,
        };
        let (order, nanos) = match magic {
            [0xd4, 0xc3, 0xb2, 0xa1] => (Order::Little, false),
            [0xa1, 0xb2, 0xc3, 0xd4] => (Order::Big, false),
            [0x4d, 0x3c, 0xb2, 0xa1] => (Order::Little, true),
            [0xa1, 0xb2, 0x3c, 0x4d] => (Order::Big, true),
            [0x0a, 0x0d, 0x0d, 0x0a] => {
                me.read_section_header()?;
                return Ok(me);
            }
            other => {
                return Err(ReadError {
                    offset: 0,
                    kind: ReadErrorKind::NotACapture(other),
                });
            }
        };
        me.format = FileFormat::Pcap { nanos };
        me.order = order;
        let rest: [u8; 20] = me.read_array()?;
        let [.., l0, l1, l2, l3] = rest;
        // The top bits of the link-type field carry FCS information.
        me.pcap_link = order.u32([l0, l1, l2, l3]) & 0x0FFF_FFFF;
        Ok(me)
    }

    /// The detected format.
    pub fn format(&self) -> FileFormat {
        self.format
    }

    /// Classic pcap: the file's link type. pcapng: the link type of interface 0, if described.
    pub fn link_type(&self) -> Option<u32> {
        match self.format {
            FileFormat::Pcap { .. } => Some(self.pcap_link),
            FileFormat::PcapNg => self.interfaces.first().map(|i| i.link),
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next packet, `None` at the end of the file.
    pub fn next_packet(&mut self) -> Option<Result<CapturedPacket<'_>, ReadError>> {
        if self.done {
            return None;
        }
        let step = match self.format {
            FileFormat::Pcap { nanos } => self.pcap_record(nanos),
            FileFormat::PcapNg => self.pcapng_packet(),
        };
        match step {
            Ok(Some(meta)) => {
                let data = self
                    .buf
                    .get(meta.data_start..meta.data_end)
                    .unwrap_or_default();
                Some(Ok(CapturedPacket {
                    ts: meta.ts,
                    link: meta.link,
                    data,
                    orig_len: meta.orig_len,
                    offset: meta.offset,
                    no_timestamp: meta.no_timestamp,
                }))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    fn pcap_record(&mut self, nanos: bool) -> Result<Option<Meta>, ReadError> {
        let at = self.offset;
        let Some(head) = self.read_array_or_eof::<16>()? else {
            return Ok(None);
        };
        let o = self.order;
        let [secs, frac, caplen, orig_len] = o.u32s::<4>(&head);
        let len = usize::try_from(caplen).unwrap_or(usize::MAX);
        if len > MAX_PACKET {
            return Err(ReadError {
                offset: at,
                kind: ReadErrorKind::BadLength(u64::from(caplen)),
            });
        }
        self.read_into_buf(len, at)?;
        let nanos = if nanos {
            frac
        } else {
            frac.saturating_mul(1000)
        };
        let ts = Duration::from_secs(u64::from(secs)) + Duration::from_nanos(u64::from(nanos));
        self.last_ts = ts;
        Ok(Some(Meta {
            ts,
            link: self.pcap_link,
            data_start: 0,
            data_end: len,
            orig_len,
            offset: at,
            no_timestamp: false,
        }))
    }

    /// Reads blocks until a packet block; state blocks update the interfaces.
    fn pcapng_packet(&mut self) -> Result<Option<Meta>, ReadError> {
        loop {
            let at = self.offset;
            let Some(head) = self.read_array_or_eof::<8>()? else {
                return Ok(None);
            };
            let [t0, t1, t2, t3, l0, l1, l2, l3] = head;
            let raw_type = [t0, t1, t2, t3];
            if u32::from_le_bytes(raw_type) == PCAPNG_SHB {
                self.section_after_type(at, [l0, l1, l2, l3])?;
                continue;
            }
            if !self.in_section {
                return Err(ReadError {
                    offset: at,
                    kind: ReadErrorKind::NoSection,
                });
            }
            let o = self.order;
            let block_type = o.u32(raw_type);
            let total = o.u32([l0, l1, l2, l3]);
            let body_len = self.block_body(at, total)?;
            let body = self.buf.get(..body_len).unwrap_or_default();
            match block_type {
                PCAPNG_IDB => {
                    let iface = parse_idb(body, o).ok_or_else(|| bad_len(at, total))?;
                    self.interfaces.push(iface);
                }
                PCAPNG_EPB | PCAPNG_PB => {
                    let meta = self.packet_block(body, block_type, at, total)?;
                    self.last_ts = meta.ts;
                    return Ok(Some(meta));
                }
                PCAPNG_SPB => {
                    let (orig, data_len) = match body.split_first_chunk::<4>() {
                        Some((l, rest)) => (o.u32(*l), rest.len()),
                        None => return Err(bad_len(at, total)),
                    };
                    let iface = *self.interface(0, at)?;
                    let cap = usize::try_from(orig).map_or(data_len, |n| n.min(data_len));
                    return Ok(Some(Meta {
                        ts: self.last_ts,
                        link: iface.link,
                        data_start: 4,
                        data_end: 4 + cap,
                        orig_len: orig,
                        offset: at,
                        no_timestamp: true,
                    }));
                }
                // Statistics, name resolution, custom and unknown blocks carry no packets.
                _ => {}
            }
        }
    }

    fn packet_block(
        &self,
        body: &[u8],
        block_type: u32,
        at: u64,
        total: u32,
    ) -> Result<Meta, ReadError> {
        let o = self.order;
        let fixed = body.first_chunk::<20>().ok_or_else(|| bad_len(at, total))?;
        let [first, high, low, caplen, orig_len] = o.u32s::<5>(fixed);
        // The obsolete Packet Block has a 16-bit interface id (then a drop count).
        let iface_id = if block_type == PCAPNG_PB {
            fixed.first_chunk::<2>().map_or(0, |b| u32::from(o.u16(*b)))
        } else {
            first
        };
        let units = (u64::from(high) << 32) | u64::from(low);
        let caplen = usize::try_from(caplen).unwrap_or(usize::MAX);
        if caplen > body.len() - 20 {
            return Err(bad_len(at, total));
        }
        let iface = *self.interface(iface_id, at)?;
        let ts = iface.timestamp(units);
        Ok(Meta {
            ts,
            link: iface.link,
            data_start: 20,
            data_end: 20 + caplen,
            orig_len,
            offset: at,
            no_timestamp: false,
        })
    }

    fn interface(&self, id: u32, at: u64) -> Result<&Interface, ReadError> {
        usize::try_from(id)
            .ok()
            .and_then(|i| self.interfaces.get(i))
            .ok_or(ReadError {
                offset: at,
                kind: ReadErrorKind::UnknownInterface(id),
            })
    }

    fn read_section_header(&mut self) -> Result<(), ReadError> {
        let len: [u8; 4] = self.read_array()?;
        self.section_after_type(0, len)
    }

    /// Reads a section header block whose type field was already consumed.
    fn section_after_type(&mut self, at: u64, raw_len: [u8; 4]) -> Result<(), ReadError> {
        let magic: [u8; 4] = self.read_array()?;
        self.order = if u32::from_le_bytes(magic) == PCAPNG_BYTE_ORDER {
            Order::Little
        } else if u32::from_be_bytes(magic) == PCAPNG_BYTE_ORDER {
            Order::Big
        } else {
            return Err(ReadError {
                offset: at + 8,
                kind: ReadErrorKind::BadByteOrder(u32::from_le_bytes(magic)),
            });
        };
        let total = self.order.u32(raw_len);
        // Type, length and byte-order magic are read; version, section
        // length, options and the trailing length remain.
        self.block_rest(at, total, 12, 28)?;
        self.interfaces.clear();
        self.in_section = true;
        Ok(())
    }

    /// Reads the rest of a block of `total` bytes into `buf`, checks the
    /// trailing length, and returns the body length.
    fn block_body(&mut self, at: u64, total: u32) -> Result<usize, ReadError> {
        self.block_rest(at, total, 8, 12)?;
        Ok(usize::try_from(total).unwrap_or(usize::MAX) - 12)
    }

    /// Reads what is left of a block whose first `read` bytes were consumed,
    /// after checking its length (at least `min`, a multiple of 4, under the
    /// cap), and checks that the trailing length repeats it.
    fn block_rest(
        &mut self,
        at: u64,
        total: u32,
        read: usize,
        min: usize,
    ) -> Result<(), ReadError> {
        let total_usize = usize::try_from(total).unwrap_or(usize::MAX);
        if total_usize < min || !total_usize.is_multiple_of(4) || total_usize > MAX_PACKET {
            return Err(bad_len(at, total));
        }
        self.read_into_buf(total_usize - read, at)?;
        let tail = self
            .buf
            .last_chunk::<4>()
            .map(|t| self.order.u32(*t))
            .unwrap_or_default();
        if tail != total {
            return Err(ReadError {
                offset: at,
                kind: ReadErrorKind::LengthMismatch { head: total, tail },
            });
        }
        Ok(())
    }

    fn read_into_buf(&mut self, len: usize, record_at: u64) -> Result<(), ReadError> {
        self.buf.resize(len, 0);
        let got = read_full(&mut self.r, &mut self.buf).map_err(|e| io_error(self.offset, e))?;
        self.offset += got as u64;
        if got < len {
            return Err(ReadError {
                offset: record_at,
                kind: ReadErrorKind::Truncated {
                    need: len,
                    have: got,
                },
            });
        }
        Ok(())
    }

    fn read_array<const N: usize>(&mut self) -> Result<[u8; N], ReadError> {
        let at = self.offset;
        match self.read_array_or_eof::<N>()? {
            Some(a) => Ok(a),
            None => Err(ReadError {
                offset: at,
                kind: ReadErrorKind::Truncated { need: N, have: 0 },
            }),
        }
    }

    /// `None` on a clean end of file at this point; an error if it ends partway.
    fn read_array_or_eof<const N: usize>(&mut self) -> Result<Option<[u8; N]>, ReadError> {
        let at = self.offset;
        let mut a = [0u8; N];
        let got = read_full(&mut self.r, &mut a).map_err(|e| io_error(at, e))?;
        self.offset += got as u64;
        match got {
            0 => Ok(None),
            n if n == N => Ok(Some(a)),
            have => Err(ReadError {
                offset: at,
                kind: ReadErrorKind::Truncated { need: N, have },
            }),
        }
    }
}

struct Meta {
    ts: Duration,
    link: u32,
    data_start: usize,
    data_end: usize,
    orig_len: u32,
    offset: u64,
    no_timestamp: bool,
}

fn bad_len(at: u64, total: u32) -> ReadError {
    ReadError {
        offset: at,
        kind: ReadErrorKind::BadLength(u64::from(total)),
    }
}

fn io_error(offset: u64, e: io::Error) -> ReadError {
    ReadError {
        offset,
        kind: ReadErrorKind::Io(e),
    }
}

fn parse_idb(body: &[u8], o: Order) -> Option<Interface> {
    let (fixed, mut opts) = body.split_first_chunk::<8>()?;
    let [k0, k1, ..] = *fixed;
    let mut iface = Interface {
        link: u32::from(o.u16([k0, k1])),
        resol_pow2: false,
        resol_exp: 6,
        offset_s: 0,
    };
    while let Some((head, rest)) = opts.split_first_chunk::<4>() {
        let [c0, c1, n0, n1] = *head;
        let code = o.u16([c0, c1]);
        let len = usize::from(o.u16([n0, n1]));
        if code == OPT_END {
            break;
        }
        let value = rest.get(..len)?;
        match code {
            OPT_IF_TSRESOL => {
                let &r = value.first()?;
                iface.resol_pow2 = r & 0x80 != 0;
                iface.resol_exp = r & 0x7f;
            }
            OPT_IF_TSOFFSET => {
                let v = value.first_chunk::<8>()?;
                iface.offset_s = match o {
                    Order::Little => i64::from_le_bytes(*v),
                    Order::Big => i64::from_be_bytes(*v),
                };
            }
            _ => {}
        }
        opts = rest.get(len.next_multiple_of(4)..).unwrap_or_default();
    }
    Some(iface)
}

/// Fills `buf` as far as the stream allows; returns how many bytes were read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while let Some(rest) = buf.get_mut(got..) {
        if rest.is_empty() {
            break;
        }
        match r.read(rest) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
