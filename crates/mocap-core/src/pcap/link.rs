//! Link layers of captured packets, down to the IP packet and its UDP payload.

use std::net::{IpAddr, SocketAddr};

use etherparse::{EtherType, IpNumber, Ipv6ExtensionSlice, NetSlice, SlicedPacket, err};

/// BSD loopback: 4-byte address family in the capturing host's byte order.
pub const LINKTYPE_NULL: u32 = 0;
/// Ethernet II, with any 802.1Q / QinQ tags.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// Raw IP (v4 or v6, told apart by the version nibble).
pub const LINKTYPE_RAW: u32 = 101;
/// OpenBSD loopback: 4-byte address family in network byte order.
pub const LINKTYPE_LOOP: u32 = 108;
/// Linux cooked capture v1 (`tcpdump -i any` before 4.99).
pub const LINKTYPE_LINUX_SLL: u32 = 113;
/// Raw IPv4.
pub const LINKTYPE_IPV4: u32 = 228;
/// Raw IPv6.
pub const LINKTYPE_IPV6: u32 = 229;
/// Linux cooked capture v2 (`tcpdump -i any` since 4.99).
pub const LINKTYPE_LINUX_SLL2: u32 = 276;

/// Every link type this module reads.
pub const SUPPORTED_LINK_TYPES: [u32; 8] = [
    LINKTYPE_NULL,
    LINKTYPE_ETHERNET,
    LINKTYPE_RAW,
    LINKTYPE_LOOP,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_IPV4,
    LINKTYPE_IPV6,
    LINKTYPE_LINUX_SLL2,
];

const SLL_HEADER: usize = 16;
const SLL2_HEADER: usize = 20;

/// What one captured packet holds, as far as UDP is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer<'a> {
    /// A whole UDP datagram.
    Udp {
        /// Source address and port.
        src: SocketAddr,
        /// Destination address and port.
        dst: SocketAddr,
        /// The UDP payload.
        payload: &'a [u8],
    },
    /// One fragment of an IP datagram.
    Fragment(Fragment<'a>),
    /// An IP packet that is not UDP, or a non-IP frame.
    Other,
    /// The capture cut the packet short (snaplen) or its lengths disagree.
    Truncated,
}

/// One fragment of an IPv4 or IPv6 datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fragment<'a> {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Protocol of the reassembled payload.
    pub protocol: u8,
    /// Identification (IPv4: 16 bits; IPv6: 32 bits).
    pub id: u32,
    /// Byte offset of this fragment in the reassembled payload.
    pub offset: usize,
    /// More fragments follow.
    pub more: bool,
    /// This fragment's bytes.
    pub data: &'a [u8],
}

/// A link type this module does not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownLinkType(pub u32);

impl std::fmt::Display for UnknownLinkType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unsupported link type {} (supported: 0 NULL, 1 Ethernet, 101 RAW, 108 LOOP, 113 Linux SLL, 228 IPv4, 229 IPv6, 276 Linux SLL2)",
            self.0
        )
    }
}

impl std::error::Error for UnknownLinkType {}

/// Reads the link, IP and UDP headers of one captured packet.
///
/// # Errors
/// [`UnknownLinkType`] for link types outside [`SUPPORTED_LINK_TYPES`].
pub fn decode(link: u32, data: &[u8]) -> Result<Layer<'_>, UnknownLinkType> {
    let sliced = match link {
        LINKTYPE_ETHERNET => SlicedPacket::from_ethernet(data),
        // By hand: etherparse only takes SLL v1 from Ethernet-type interfaces,
        // and loopback (772), tun and GRE captures are exactly the other kinds.
        LINKTYPE_LINUX_SLL => match (data.get(14..16), data.get(SLL_HEADER..)) {
            (Some(&[p0, p1]), Some(payload)) => {
                SlicedPacket::from_ether_type(EtherType(u16::from_be_bytes([p0, p1])), payload)
            }
            _ => return Ok(Layer::Truncated),
        },
        LINKTYPE_LINUX_SLL2 => {
            let Some((head, rest)) = data.split_first_chunk::<2>() else {
                return Ok(Layer::Truncated);
            };
            match rest.get(SLL2_HEADER - 2..) {
                Some(payload) => {
                    SlicedPacket::from_ether_type(EtherType(u16::from_be_bytes(*head)), payload)
                }
                None => return Ok(Layer::Truncated),
            }
        }
        // The address family only repeats what the IP version nibble says.
        LINKTYPE_NULL | LINKTYPE_LOOP => match data.get(4..) {
            Some(ip) => SlicedPacket::from_ip(ip),
            None => return Ok(Layer::Truncated),
        },
        LINKTYPE_RAW | LINKTYPE_IPV4 | LINKTYPE_IPV6 => SlicedPacket::from_ip(data),
        other => return Err(UnknownLinkType(other)),
    };
    let sliced = match sliced {
        Ok(s) => s,
        Err(err::packet::SliceError::Len(_)) => return Ok(Layer::Truncated),
        Err(_) => return Ok(Layer::Other),
    };
    Ok(classify(&sliced))
}

fn classify<'a>(p: &SlicedPacket<'a>) -> Layer<'a> {
    let (src, dst, payload, fragment) = match &p.net {
        Some(NetSlice::Ipv4(v4)) => {
            let h = v4.header();
            let frag = v4.is_payload_fragmented().then(|| {
                (
                    u32::from(h.identification()),
                    usize::from(h.fragments_offset().value()) * 8,
                    h.more_fragments(),
                )
            });
            (
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                v4.payload(),
                frag,
            )
        }
        Some(NetSlice::Ipv6(v6)) => {
            let h = v6.header();
            let frag = if v6.is_payload_fragmented() {
                v6.extensions().clone().into_iter().find_map(|e| match e {
                    Ipv6ExtensionSlice::Fragment(f) => Some((
                        f.identification(),
                        usize::from(f.fragment_offset().value()) * 8,
                        f.more_fragments(),
                    )),
                    _ => None,
                })
            } else {
                None
            };
            (
                IpAddr::V6(h.source_addr()),
                IpAddr::V6(h.destination_addr()),
                v6.payload(),
                frag,
            )
        }
        _ => return Layer::Other,
    };
    if let Some((id, offset, more)) = fragment {
        return Layer::Fragment(Fragment {
            src,
            dst,
            protocol: payload.ip_number.0,
            id,
            offset,
            more,
            data: payload.payload,
        });
    }
    if payload.ip_number != IpNumber::UDP {
        return Layer::Other;
    }
    udp(src, dst, payload.payload)
}

/// Reads a UDP header and payload (from a whole packet or a reassembled datagram).
pub fn udp(src: IpAddr, dst: IpAddr, segment: &[u8]) -> Layer<'_> {
    let Some((head, rest)) = segment.split_first_chunk::<8>() else {
        return Layer::Truncated;
    };
    let [s0, s1, d0, d1, l0, l1, _, _] = *head;
    let len = usize::from(u16::from_be_bytes([l0, l1]));
    // A length of 0 is legal only for IPv6 jumbograms; take the rest then.
    let payload = if len == 0 {
        Some(rest)
    } else {
        len.checked_sub(8).and_then(|n| rest.get(..n))
    };
    match payload {
        Some(payload) => Layer::Udp {
            src: SocketAddr::new(src, u16::from_be_bytes([s0, s1])),
            dst: SocketAddr::new(dst, u16::from_be_bytes([d0, d1])),
            payload,
        },
        None => Layer::Truncated,
    }
}
