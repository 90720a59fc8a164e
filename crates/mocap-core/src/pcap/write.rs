//! Writing datagrams to pcapng as Ethernet frames that Wireshark, tshark and
//! tcpreplay open: valid IPv4/IPv6 and UDP headers, lengths and checksums.

use std::io::{self, Write};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use super::link::LINKTYPE_ETHERNET;

/// The largest UDP payload an IPv4 datagram can carry.
pub const MAX_UDP_PAYLOAD_V4: usize = 65_507;
/// The largest UDP payload an IPv6 datagram (without jumbograms) can carry.
pub const MAX_UDP_PAYLOAD_V6: usize = 65_527;

const ETHERTYPE_IPV4: [u8; 2] = [0x08, 0x00];
const ETHERTYPE_IPV6: [u8; 2] = [0x86, 0xdd];
const IPPROTO_UDP: u8 = 17;
const IPV6_FRAGMENT: u8 = 44;

/// Writes a pcapng file with one Ethernet interface and nanosecond timestamps.
pub struct PcapNgWriter<W: Write> {
    w: W,
    frame: Vec<u8>,
    ident: u32,
    fragment_mtu: Option<usize>,
}

impl<W: Write> PcapNgWriter<W> {
    /// Writes the section header and the interface description.
    ///
    /// # Errors
    /// Write errors.
    pub fn new(mut w: W) -> io::Result<Self> {
        // Section header: little-endian, version 1.0, unknown section length.
        let mut shb = Vec::with_capacity(28);
        shb.extend_from_slice(&0x0A0D_0D0Au32.to_le_bytes());
        shb.extend_from_slice(&28u32.to_le_bytes());
        shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        shb.extend_from_slice(&28u32.to_le_bytes());
        w.write_all(&shb)?;
        // Interface: Ethernet, snaplen 262144 (tcpdump's), if_tsresol = 9 (ns).
        let mut idb = Vec::with_capacity(32);
        idb.extend_from_slice(&1u32.to_le_bytes());
        idb.extend_from_slice(&32u32.to_le_bytes());
        idb.extend_from_slice(&u16::try_from(LINKTYPE_ETHERNET).unwrap_or(1).to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&262_144u32.to_le_bytes());
        idb.extend_from_slice(&9u16.to_le_bytes());
        idb.extend_from_slice(&1u16.to_le_bytes());
        idb.extend_from_slice(&[9, 0, 0, 0]);
        idb.extend_from_slice(&[0, 0, 0, 0]);
        idb.extend_from_slice(&32u32.to_le_bytes());
        w.write_all(&idb)?;
        Ok(Self {
            w,
            frame: Vec::with_capacity(2048),
            ident: 1,
            fragment_mtu: None,
        })
    }

    /// Splits IP datagrams larger than `mtu` into fragments, as a real link
    /// would. By default datagrams are written whole, as a loopback capture shows them.
    #[must_use]
    pub fn fragment(mut self, mtu: usize) -> Self {
        self.fragment_mtu = Some(mtu.max(68));
        self
    }

    /// Writes one UDP datagram.
    ///
    /// # Errors
    /// Write errors, and payloads too large for one IP datagram
    /// ([`io::ErrorKind::InvalidInput`]).
    pub fn write(
        &mut self,
        ts: Duration,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &[u8],
    ) -> io::Result<()> {
        let (src, dst) = same_family(src, dst);
        let udp = udp_segment(src, dst, payload)?;
        self.ident = self.ident.wrapping_add(1);
        let mtu = self.fragment_mtu.unwrap_or(usize::MAX);
        let ident = self.ident;
        match (src.ip(), dst.ip()) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let per = (mtu.saturating_sub(20) / 8 * 8).max(8);
                if udp.len() <= mtu.saturating_sub(20) {
                    self.frame_v4(ts, s.octets(), d.octets(), &udp, 0, false, ident)?;
                } else {
                    for (i, part) in udp.chunks(per).enumerate() {
                        let offset = i * per;
                        let more = offset + part.len() < udp.len();
                        self.frame_v4(ts, s.octets(), d.octets(), part, offset, more, ident)?;
                    }
                }
            }
            (s, d) => {
                let (s, d) = (v6(s), v6(d));
                let per = (mtu.saturating_sub(48) / 8 * 8).max(8);
                if udp.len() <= mtu.saturating_sub(40) {
                    self.frame_v6(ts, s, d, &udp, None)?;
                } else {
                    for (i, part) in udp.chunks(per).enumerate() {
                        let offset = i * per;
                        let more = offset + part.len() < udp.len();
                        self.frame_v6(ts, s, d, part, Some((offset, more, ident)))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Flushes the underlying writer.
    ///
    /// # Errors
    /// Write errors.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.w
    }

    #[expect(clippy::too_many_arguments, reason = "one IPv4 header's fields")]
    fn frame_v4(
        &mut self,
        ts: Duration,
        src: [u8; 4],
        dst: [u8; 4],
        body: &[u8],
        offset: usize,
        more: bool,
        ident: u32,
    ) -> io::Result<()> {
        let f = &mut self.frame;
        f.clear();
        ethernet(f, ETHERTYPE_IPV4);
        let start = f.len();
        let total = u16::try_from(20 + body.len()).map_err(|_| too_big())?;
        let frag =
            u16::try_from(offset / 8).map_err(|_| too_big())? | if more { 0x2000 } else { 0 };
        f.extend_from_slice(&[0x45, 0]);
        f.extend_from_slice(&total.to_be_bytes());
        f.extend_from_slice(&u16::try_from(ident & 0xffff).unwrap_or(0).to_be_bytes());
        f.extend_from_slice(&frag.to_be_bytes());
        f.extend_from_slice(&[64, IPPROTO_UDP, 0, 0]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        let sum = checksum(f.get(start..).unwrap_or_default(), 0);
        if let Some(slot) = f.get_mut(start + 10..start + 12) {
            slot.copy_from_slice(&sum.to_be_bytes());
        }
        f.extend_from_slice(body);
        self.epb(ts)
    }

    fn frame_v6(
        &mut self,
        ts: Duration,
        src: Ipv6Addr,
        dst: Ipv6Addr,
        body: &[u8],
        fragment: Option<(usize, bool, u32)>,
    ) -> io::Result<()> {
        let f = &mut self.frame;
        f.clear();
        ethernet(f, ETHERTYPE_IPV6);
        let ext = if fragment.is_some() { 8 } else { 0 };
        let plen = u16::try_from(body.len() + ext).map_err(|_| too_big())?;
        f.extend_from_slice(&[0x60, 0, 0, 0]);
        f.extend_from_slice(&plen.to_be_bytes());
        let next = if fragment.is_some() {
            IPV6_FRAGMENT
        } else {
            IPPROTO_UDP
        };
        f.extend_from_slice(&[next, 64]);
        f.extend_from_slice(&src.octets());
        f.extend_from_slice(&dst.octets());
        if let Some((offset, more, ident)) = fragment {
            let off = u16::try_from(offset / 8).map_err(|_| too_big())? << 3 | u16::from(more);
            f.extend_from_slice(&[IPPROTO_UDP, 0]);
            f.extend_from_slice(&off.to_be_bytes());
            f.extend_from_slice(&ident.to_be_bytes());
        }
        f.extend_from_slice(body);
        self.epb(ts)
    }

    fn epb(&mut self, ts: Duration) -> io::Result<()> {
        let caplen = self.frame.len();
        let padded = caplen.next_multiple_of(4);
        let total = u32::try_from(32 + padded).map_err(|_| too_big())?;
        let nanos = u64::try_from(ts.as_nanos()).unwrap_or(u64::MAX);
        let caplen32 = u32::try_from(caplen).map_err(|_| too_big())?;
        let mut head = [0u8; 28];
        for (slot, v) in head.chunks_exact_mut(4).zip([
            6u32,
            total,
            0,
            u32::try_from(nanos >> 32).unwrap_or(0),
            u32::try_from(nanos & 0xffff_ffff).unwrap_or(0),
            caplen32,
            caplen32,
        ]) {
            slot.copy_from_slice(&v.to_le_bytes());
        }
        self.w.write_all(&head)?;
        self.w.write_all(&self.frame)?;
        self.w
            .write_all([0u8; 3].get(..padded - caplen).unwrap_or_default())?;
        self.w.write_all(&total.to_le_bytes())
    }
}

fn ethernet(f: &mut Vec<u8>, ethertype: [u8; 2]) {
    // Locally administered placeholder MACs; loopback captures carry zeros.
    f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    f.extend_from_slice(&ethertype);
}

fn v6(ip: IpAddr) -> Ipv6Addr {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    }
}

fn same_family(src: SocketAddr, dst: SocketAddr) -> (SocketAddr, SocketAddr) {
    if src.is_ipv4() == dst.is_ipv4() {
        (src, dst)
    } else {
        (
            SocketAddr::new(IpAddr::V6(v6(src.ip())), src.port()),
            SocketAddr::new(IpAddr::V6(v6(dst.ip())), dst.port()),
        )
    }
}

fn too_big() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "datagram too large for one IP packet",
    )
}

/// The UDP header and payload, with the checksum over the pseudo-header.
fn udp_segment(src: SocketAddr, dst: SocketAddr, payload: &[u8]) -> io::Result<Vec<u8>> {
    let max = if src.is_ipv4() {
        MAX_UDP_PAYLOAD_V4
    } else {
        MAX_UDP_PAYLOAD_V6
    };
    if payload.len() > max {
        return Err(too_big());
    }
    let len = u16::try_from(payload.len() + 8).map_err(|_| too_big())?;
    let mut seg = Vec::with_capacity(payload.len() + 8);
    seg.extend_from_slice(&src.port().to_be_bytes());
    seg.extend_from_slice(&dst.port().to_be_bytes());
    seg.extend_from_slice(&len.to_be_bytes());
    seg.extend_from_slice(&[0, 0]);
    seg.extend_from_slice(payload);
    let mut pseudo = Vec::with_capacity(40);
    match (src.ip(), dst.ip()) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            pseudo.extend_from_slice(&s.octets());
            pseudo.extend_from_slice(&d.octets());
            pseudo.extend_from_slice(&[0, IPPROTO_UDP]);
            pseudo.extend_from_slice(&len.to_be_bytes());
        }
        (s, d) => {
            pseudo.extend_from_slice(&v6(s).octets());
            pseudo.extend_from_slice(&v6(d).octets());
            pseudo.extend_from_slice(&u32::from(len).to_be_bytes());
            pseudo.extend_from_slice(&[0, 0, 0, IPPROTO_UDP]);
        }
    }
    let sum = checksum(&seg, sum_words(&pseudo, 0));
    // Zero means "no checksum" in UDP; an all-ones result is sent instead.
    let sum = if sum == 0 { 0xffff } else { sum };
    if let Some(slot) = seg.get_mut(6..8) {
        slot.copy_from_slice(&sum.to_be_bytes());
    }
    Ok(seg)
}

fn sum_words(data: &[u8], mut acc: u32) -> u32 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        if let Ok(w) = <[u8; 2]>::try_from(w) {
            acc += u32::from(u16::from_be_bytes(w));
        }
    }
    if let [last] = words.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

/// The Internet checksum (RFC 1071) of `data`, starting from a partial sum.
pub fn checksum(data: &[u8], start: u32) -> u16 {
    let mut acc = u64::from(sum_words(data, start));
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !u16::try_from(acc).unwrap_or(0)
}
