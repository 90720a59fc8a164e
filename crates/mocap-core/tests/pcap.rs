//! Capture files in every layout the reader claims: link types, pcap µs/ns,
//! pcapng resolutions and interfaces, IPv4/IPv6, fragments, damaged files;
//! and our writer read back by us and by the pcap-file crate.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

mod fixtures;

use std::io::Cursor;
use std::net::SocketAddr;
use std::time::Duration;

use mocap_core::pcap::{
    CaptureError, CaptureReader, Datagrams, DefragLimits, PcapNgWriter, ReadErrorKind, link,
};
use mocap_testutil::Rng;

const T0: Duration = Duration::new(1_764_450_000, 123_456_000);

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A datagram to put in captures: (capture time, src, dst, payload).
type Dgram = (Duration, SocketAddr, SocketAddr, Vec<u8>);

fn sample(n: usize) -> Vec<Dgram> {
    let payloads = [
        fixtures::SEED.to_vec(),
        fixtures::T34400_FRAM.to_vec(),
        b"/VMC/Ext/OK\0,i\0\0\0\0\0\x01".to_vec(),
        (0..4500u32).map(|i| (i % 251) as u8).collect(),
    ];
    (0..n)
        .map(|i| {
            (
                T0 + Duration::from_micros(16_667 * i as u64),
                addr("192.168.1.20:50012"),
                addr("192.168.1.10:12351"),
                payloads[i % payloads.len()].clone(),
            )
        })
        .collect()
}

/// Ethernet frames for these datagrams, written by our writer (optionally fragmented).
fn ethernet_frames(ds: &[Dgram], mtu: Option<usize>) -> Vec<(Duration, Vec<u8>)> {
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    if let Some(m) = mtu {
        w = w.fragment(m);
    }
    for (ts, s, d, p) in ds {
        w.write(*ts, *s, *d, p).unwrap();
    }
    let bytes = w.into_inner();
    let mut r = CaptureReader::new(Cursor::new(bytes)).unwrap();
    let mut out = Vec::new();
    while let Some(rec) = r.next_packet() {
        let rec = rec.unwrap();
        out.push((rec.ts, rec.data.to_vec()));
    }
    out
}

/// Re-frames an Ethernet frame for another link type.
fn reframe(link: u32, eth: &[u8]) -> Vec<u8> {
    let ethertype = [eth[12], eth[13]];
    let ip = &eth[14..];
    let v6 = ethertype == [0x86, 0xdd];
    let mut f = Vec::new();
    match link {
        link::LINKTYPE_ETHERNET => f.extend_from_slice(eth),
        link::LINKTYPE_LINUX_SLL => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0]);
            f.extend_from_slice(&ethertype);
            f.extend_from_slice(ip);
        }
        link::LINKTYPE_LINUX_SLL2 => {
            f.extend_from_slice(&ethertype);
            f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 1, 4, 6, 1, 2, 3, 4, 5, 6, 0, 0]);
            f.extend_from_slice(ip);
        }
        // macOS values: AF_INET 2, AF_INET6 30, host (little-endian) order.
        link::LINKTYPE_NULL => {
            f.extend_from_slice(&(if v6 { 30u32 } else { 2 }).to_le_bytes());
            f.extend_from_slice(ip);
        }
        link::LINKTYPE_LOOP => {
            f.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes());
            f.extend_from_slice(ip);
        }
        _ => f.extend_from_slice(ip),
    }
    f
}

fn vlan(eth: &[u8], tags: &[[u8; 2]]) -> Vec<u8> {
    let mut f = eth[..12].to_vec();
    for (i, tci) in tags.iter().enumerate() {
        f.extend_from_slice(if i == 0 && tags.len() > 1 {
            &[0x88, 0xa8]
        } else {
            &[0x81, 0x00]
        });
        f.extend_from_slice(tci);
    }
    f.extend_from_slice(&eth[12..]);
    f
}

/// A classic pcap file.
fn pcap_file(link: u32, nanos: bool, big: bool, frames: &[(Duration, Vec<u8>)]) -> Vec<u8> {
    let u32b = |v: u32| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let u16b = |v: u16| {
        if big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        }
    };
    let mut f = Vec::new();
    f.extend_from_slice(&u32b(if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
    f.extend_from_slice(&u16b(2));
    f.extend_from_slice(&u16b(4));
    f.extend_from_slice(&[0; 8]);
    f.extend_from_slice(&u32b(262_144));
    f.extend_from_slice(&u32b(link));
    for (ts, data) in frames {
        let frac = if nanos {
            ts.subsec_nanos()
        } else {
            ts.subsec_micros()
        };
        f.extend_from_slice(&u32b(ts.as_secs() as u32));
        f.extend_from_slice(&u32b(frac));
        f.extend_from_slice(&u32b(data.len() as u32));
        f.extend_from_slice(&u32b(data.len() as u32));
        f.extend_from_slice(data);
    }
    f
}

/// pcapng blocks, little-endian.
struct Ng(Vec<u8>);

impl Ng {
    fn new() -> Self {
        let mut me = Self(Vec::new());
        let mut body = 0x1A2B_3C4Du32.to_le_bytes().to_vec();
        body.extend_from_slice(&[1, 0, 0, 0]);
        body.extend_from_slice(&(-1i64).to_le_bytes());
        me.block(0x0A0D_0D0A, &body);
        me
    }
    fn block(&mut self, ty: u32, body: &[u8]) {
        let padded = body.len().next_multiple_of(4);
        let total = (12 + padded) as u32;
        self.0.extend_from_slice(&ty.to_le_bytes());
        self.0.extend_from_slice(&total.to_le_bytes());
        self.0.extend_from_slice(body);
        self.0.resize(self.0.len() + padded - body.len(), 0);
        self.0.extend_from_slice(&total.to_le_bytes());
    }
    /// An interface with `if_tsresol` (None: default µs) and `if_tsoffset`.
    fn interface(&mut self, link: u16, tsresol: Option<u8>, tsoffset: Option<i64>) {
        let mut b = link.to_le_bytes().to_vec();
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&0u32.to_le_bytes());
        if let Some(r) = tsresol {
            b.extend_from_slice(&[9, 0, 1, 0, r, 0, 0, 0]);
        }
        if let Some(o) = tsoffset {
            b.extend_from_slice(&[14, 0, 8, 0]);
            b.extend_from_slice(&o.to_le_bytes());
        }
        b.extend_from_slice(&[0, 0, 0, 0]);
        self.block(1, &b);
    }
    fn packet(&mut self, iface: u32, units: u64, data: &[u8]) {
        let mut b = iface.to_le_bytes().to_vec();
        b.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
        b.extend_from_slice(&(units as u32).to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(data);
        b.resize(b.len().next_multiple_of(4), 0);
        self.block(6, &b);
    }
}

/// Every datagram of a capture, the stats, and the error that ended it (if any).
fn read_all(
    bytes: &[u8],
) -> (
    Vec<Dgram>,
    mocap_core::pcap::CaptureStats,
    Option<CaptureError>,
) {
    let mut d = match Datagrams::new(Cursor::new(bytes)) {
        Ok(d) => d,
        Err(e) => return (Vec::new(), Default::default(), Some(CaptureError::Read(e))),
    };
    let mut out = Vec::new();
    let mut err = None;
    while let Some(r) = d.next_datagram() {
        match r {
            Ok(c) => out.push((c.ts, c.src, c.dst, c.payload.to_vec())),
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    (out, d.stats(), err)
}

fn round_ts(ds: &[Dgram], micros: bool) -> Vec<Dgram> {
    ds.iter()
        .map(|(t, s, d, p)| {
            let t = if micros {
                Duration::from_micros(t.as_micros() as u64)
            } else {
                *t
            };
            (t, *s, *d, p.clone())
        })
        .collect()
}

#[test]
fn every_link_type_in_pcap_us_ns_both_byte_orders() {
    let ds = sample(8);
    let eth = ethernet_frames(&ds, None);
    for link in link::SUPPORTED_LINK_TYPES {
        let frames: Vec<_> = eth.iter().map(|(t, f)| (*t, reframe(link, f))).collect();
        for (nanos, big) in [(false, false), (true, false), (false, true), (true, true)] {
            let file = pcap_file(link, nanos, big, &frames);
            let (got, stats, err) = read_all(&file);
            assert!(err.is_none(), "link {link}: {err:?}");
            assert_eq!(
                got,
                round_ts(&ds, !nanos),
                "link {link} nanos {nanos} big {big}"
            );
            assert_eq!(stats.datagrams, 8);
        }
    }
}

#[test]
fn linux_sll_from_loopback_and_tunnels() {
    // `tcpdump -i any -y LINUX_SLL` on lo writes ARPHRD 772; tun is 65534.
    let ds = sample(3);
    let eth = ethernet_frames(&ds, None);
    for arphrd in [772u16, 65534, 778] {
        let frames: Vec<_> = eth
            .iter()
            .map(|(t, f)| {
                let mut sll = vec![0, 0];
                sll.extend_from_slice(&arphrd.to_be_bytes());
                sll.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x08, 0x00]);
                sll.extend_from_slice(&f[14..]);
                (*t, sll)
            })
            .collect();
        let (got, _, err) = read_all(&pcap_file(113, false, false, &frames));
        assert!(err.is_none());
        assert_eq!(got, round_ts(&ds, true), "arphrd {arphrd}");
    }
}

#[test]
fn vlan_and_qinq_tags() {
    let ds = sample(4);
    let frames: Vec<_> = ethernet_frames(&ds, None)
        .into_iter()
        .enumerate()
        .map(|(i, (t, f))| {
            (
                t,
                if i % 2 == 0 {
                    vlan(&f, &[[0, 7]])
                } else {
                    vlan(&f, &[[0, 100], [0, 7]])
                },
            )
        })
        .collect();
    let (got, _, err) = read_all(&pcap_file(1, true, false, &frames));
    assert!(err.is_none());
    assert_eq!(got, ds);
}

#[test]
fn ipv6_on_ethernet_null_sll2_and_raw() {
    let ds: Vec<Dgram> = sample(4)
        .into_iter()
        .map(|(t, _, _, p)| (t, addr("[fe80::1]:5000"), addr("[2001:db8::2]:39539"), p))
        .collect();
    let eth = ethernet_frames(&ds, None);
    for link in [1, 0, 276, 229] {
        let frames: Vec<_> = eth.iter().map(|(t, f)| (*t, reframe(link, f))).collect();
        let (got, _, err) = read_all(&pcap_file(link, true, false, &frames));
        assert!(err.is_none(), "{link}: {err:?}");
        assert_eq!(got, ds, "link {link}");
    }
}

#[test]
fn pcapng_resolutions_offsets_and_several_interfaces() {
    let ds = sample(6);
    let eth = ethernet_frames(&ds, None);
    let mut ng = Ng::new();
    ng.interface(1, None, None); // µs
    ng.interface(101, Some(9), Some(-3600)); // ns, one hour back
    ng.interface(1, Some(0x80 | 20), None); // 2^-20 s
    for (i, (ts, f)) in eth.iter().enumerate() {
        match i % 3 {
            0 => ng.packet(0, ts.as_micros() as u64, f),
            1 => ng.packet(
                1,
                (*ts + Duration::from_secs(3600)).as_nanos() as u64,
                &f[14..],
            ),
            _ => {
                let units = (ts.as_nanos() << 20) / 1_000_000_000;
                ng.packet(2, units as u64, f);
            }
        }
    }
    let (got, stats, err) = read_all(&ng.0);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), 6);
    for (i, (g, want)) in got.iter().zip(&ds).enumerate() {
        assert_eq!(g.3, want.3);
        let diff = g.0.abs_diff(want.0);
        // 2^-20 s units are within a microsecond; the others are exact.
        // Interface 1 (ns) is exact; µs and 2^-20 s units are within a microsecond.
        let tol = if i % 3 == 1 {
            Duration::ZERO
        } else {
            Duration::from_micros(1)
        };
        assert!(diff <= tol, "packet {i}: {:?} vs {:?}", g.0, want.0);
    }
    assert_eq!(stats.packets, 6);
}

#[test]
fn non_udp_and_snaplen_cut_packets_are_counted_and_skipped() {
    let ds = sample(3);
    let mut eth = ethernet_frames(&ds, None);
    // An ARP frame, and a TCP-protocol copy of the first packet.
    let mut arp = eth[0].1[..12].to_vec();
    arp.extend_from_slice(&[0x08, 0x06]);
    arp.extend_from_slice(&[0; 28]);
    let mut tcp = eth[2].1.clone();
    tcp[14 + 9] = 6;
    // The second datagram cut by a 200-byte snaplen.
    let mut frames = vec![eth[0].clone(), (eth[1].0, arp), (eth[1].0, tcp)];
    let cut = eth.remove(1);
    let mut file = pcap_file(1, false, false, &frames[..0]);
    let mut add = |ts: Duration, data: &[u8], orig: usize| {
        file.extend_from_slice(&(ts.as_secs() as u32).to_le_bytes());
        file.extend_from_slice(&ts.subsec_micros().to_le_bytes());
        file.extend_from_slice(&(data.len() as u32).to_le_bytes());
        file.extend_from_slice(&(orig as u32).to_le_bytes());
        file.extend_from_slice(data);
    };
    frames.push(eth[1].clone());
    add(frames[0].0, &frames[0].1, frames[0].1.len());
    add(cut.0, &cut.1[..200], cut.1.len());
    for (t, f) in &frames[1..] {
        add(*t, f, f.len());
    }
    let (got, stats, err) = read_all(&file);
    assert!(err.is_none());
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].3, ds[2].3);
    assert_eq!((stats.truncated, stats.non_udp, stats.packets), (1, 2, 5));
}

#[test]
fn fragments_in_order_reversed_and_duplicated() {
    let ds = sample(8);
    let frags = ethernet_frames(&ds, Some(1500));
    // 1575 and 1591 become 2 fragments, 4500 becomes 4; the OSC one stays whole.
    assert_eq!(frags.len(), 2 + 2 + 1 + 4 + 2 + 2 + 1 + 4);
    let whole = round_ts(&ds, false);
    for variant in 0..3 {
        let mut frames = frags.clone();
        match variant {
            1 => {
                // Each datagram's fragments reversed, keeping datagram order.
                let mut out = Vec::new();
                let mut i = 0;
                for n in [2, 2, 1, 4, 2, 2, 1, 4] {
                    let mut group = frames[i..i + n].to_vec();
                    group.reverse();
                    out.extend(group);
                    i += n;
                }
                frames = out;
            }
            2 => {
                frames = frames.iter().flat_map(|f| [f.clone(), f.clone()]).collect();
            }
            _ => {}
        }
        let (got, stats, err) = read_all(&pcap_file(1, true, false, &frames));
        assert!(err.is_none(), "{variant}: {err:?}");
        let payloads: Vec<_> = got.iter().map(|g| g.3.clone()).collect();
        let want: Vec<_> = whole.iter().map(|g| g.3.clone()).collect();
        if variant == 2 {
            // A duplicated whole datagram is delivered twice, as the wire carried
            // it twice; duplicated fragments complete their datagram once, and
            // the copy of the last fragment that comes after completion starts
            // a datagram that never completes and is dropped at the end.
            let mut want2 = Vec::new();
            for w in &want {
                want2.push(w.clone());
                if w.len() < 100 {
                    want2.push(w.clone());
                }
            }
            assert_eq!(payloads, want2);
            assert_eq!(stats.reassembled, 6);
            assert_eq!(stats.dropped, 6);
        } else {
            assert_eq!(payloads, want, "variant {variant}");
            assert_eq!(stats.reassembled, 6);
            assert_eq!(stats.fragments, 16);
            assert_eq!(stats.dropped, 0);
        }
    }
}

#[test]
fn ipv6_fragments() {
    let ds: Vec<Dgram> = sample(4)
        .into_iter()
        .map(|(t, _, _, p)| {
            (
                t,
                addr("[2001:db8::1]:5000"),
                addr("[2001:db8::2]:39539"),
                p,
            )
        })
        .collect();
    let mut frames = ethernet_frames(&ds, Some(1500));
    frames.reverse();
    let (got, stats, err) = read_all(&pcap_file(1, true, false, &frames));
    assert!(err.is_none(), "{err:?}");
    let mut want: Vec<_> = ds.iter().map(|d| d.3.clone()).collect();
    want.reverse();
    assert_eq!(got.iter().map(|g| g.3.clone()).collect::<Vec<_>>(), want);
    assert_eq!(stats.reassembled, 3);
    assert!(got.iter().all(|g| g.1 == addr("[2001:db8::1]:5000")));
}

#[test]
fn fragment_flood_is_dropped_under_the_cap() {
    let real = sample(4);
    let real_frames = ethernet_frames(&real[3..4], Some(1500));
    // 5000 first fragments of datagrams that never complete, then a real one.
    let flood_src: Vec<Dgram> = (0..5000)
        .map(|i| {
            (
                T0,
                addr("10.9.9.9:1"),
                addr("10.0.0.1:2"),
                vec![i as u8; 3000],
            )
        })
        .collect();
    let flood: Vec<_> = ethernet_frames(&flood_src, Some(1500))
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0)
        .map(|(_, f)| f)
        .collect();
    let mut frames = flood;
    frames.extend(real_frames);
    let file = pcap_file(1, true, false, &frames);
    let limits = DefragLimits {
        max_bytes: 256 * 1024,
        max_datagrams: 64,
        timeout: Duration::from_secs(5),
    };
    let mut d = Datagrams::with_limits(Cursor::new(&file), limits).unwrap();
    let mut got = Vec::new();
    while let Some(r) = d.next_datagram() {
        got.push(r.unwrap().payload.to_vec());
    }
    assert_eq!(got, [real[3].3.clone()]);
    let s = d.stats();
    assert!(s.dropped >= 5000 - 64, "{s:?}");
    assert_eq!(s.reassembled, 1);
}

#[test]
fn truncated_files_deliver_everything_before_the_cut() {
    let ds = sample(5);
    let eth = ethernet_frames(&ds, None);
    // Where each file's header ends and each record ends, from the builders
    // (not from the reader under test).
    let pcap = pcap_file(1, false, false, &eth);
    let pcap_ends: Vec<usize> = (0..=eth.len())
        .map(|k| pcap_file(1, false, false, &eth[..k]).len())
        .collect();
    let mut ng = Ng::new();
    // A section header alone is a whole (empty) pcapng file.
    let shb_end = ng.0.len();
    ng.interface(1, Some(9), None);
    let mut ng_ends = vec![ng.0.len()];
    for (t, f) in &eth {
        ng.packet(0, t.as_nanos() as u64, f);
        ng_ends.push(ng.0.len());
    }
    for (bytes, ends) in [(pcap, pcap_ends), (ng.0, ng_ends)] {
        assert_eq!(ends.last(), Some(&bytes.len()));
        for cut in 0..=bytes.len() {
            let (got, _, err) = read_all(&bytes[..cut]);
            if cut < ends[0] {
                // Not even the file header: nothing to read, and a cut inside
                // a header block says so.
                assert!(got.is_empty(), "cut {cut}");
                if cut != shb_end || ends[0] == shb_end {
                    assert!(err.is_some(), "cut {cut}: a cut header must be reported");
                }
                continue;
            }
            // Exactly the records that end at or before the cut, intact and
            // in order.
            let whole = ends[1..].iter().filter(|&&e| e <= cut).count();
            assert_eq!(got.len(), whole, "cut {cut}");
            for (g, w) in got.iter().zip(&ds) {
                assert_eq!((g.1, g.2, &g.3), (w.1, w.2, &w.3), "cut {cut}");
            }
            // A cut inside a record is reported; one between records is a
            // shorter capture, read to its end without complaint.
            if ends.contains(&cut) {
                assert!(err.is_none(), "cut {cut} on a boundary: {err:?}");
            } else {
                assert!(err.is_some(), "cut {cut} inside a record went unreported");
            }
        }
    }
}

#[test]
fn corrupt_pcapng_block_is_an_error_with_its_offset() {
    let ds = sample(3);
    let eth = ethernet_frames(&ds, None);
    let mut ng = Ng::new();
    ng.interface(1, None, None);
    for (t, f) in &eth {
        ng.packet(0, t.as_micros() as u64, f);
    }
    let mut bytes = ng.0.clone();
    // Break the trailing length of the third packet block.
    let third_end = bytes.len() - 4;
    bytes[third_end] ^= 0xff;
    let (got, _, err) = read_all(&bytes);
    assert_eq!(got.len(), 2);
    match err {
        Some(CaptureError::Read(e)) => {
            assert!(
                matches!(e.kind, ReadErrorKind::LengthMismatch { .. }),
                "{e}"
            );
            assert!(e.to_string().contains("at byte"));
        }
        other => panic!("{other:?}"),
    }
    // A packet on an interface that was never described.
    let mut ng = Ng::new();
    ng.interface(1, None, None);
    ng.packet(3, 0, &eth[0].1);
    let (_, _, err) = read_all(&ng.0);
    assert!(err.unwrap().to_string().contains("undescribed interface 3"));
}

#[test]
fn unknown_link_type_names_its_number() {
    let eth = ethernet_frames(&sample(1), None);
    let (_, _, err) = read_all(&pcap_file(147, false, false, &eth));
    let msg = err.unwrap().to_string();
    assert!(msg.contains("unsupported link type 147"), "{msg}");
    let (_, _, err) = read_all(b"GIF89a....................");
    assert!(
        err.unwrap()
            .to_string()
            .contains("not a pcap or pcapng file")
    );
}

#[test]
fn an_unknown_interface_in_pcapng_spoils_only_its_packets() {
    let ds = sample(4);
    let eth = ethernet_frames(&ds, None);
    let mut ng = Ng::new();
    ng.interface(1, None, None);
    ng.interface(147, None, None);
    for (t, f) in &eth {
        ng.packet(0, t.as_micros() as u64, f);
        ng.packet(1, t.as_micros() as u64, b"user-defined link layer");
    }
    let (got, stats, err) = read_all(&ng.0);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), 4);
    assert_eq!(stats.unsupported_link, 4);
}

#[test]
fn simple_packet_blocks_take_the_previous_timestamp() {
    let ds = sample(2);
    let eth = ethernet_frames(&ds, None);
    let mut ng = Ng::new();
    ng.interface(1, None, None);
    ng.packet(0, ds[0].0.as_micros() as u64, &eth[0].1);
    let mut spb = (eth[1].1.len() as u32).to_le_bytes().to_vec();
    spb.extend_from_slice(&eth[1].1);
    ng.block(3, &spb);
    let (got, stats, err) = read_all(&ng.0);
    assert!(err.is_none());
    assert_eq!(got[1].3, ds[1].3);
    assert_eq!(got[1].0, got[0].0);
    assert_eq!(stats.untimed, 1);
}

#[test]
fn writer_round_trip_ours_and_pcap_file_crate() {
    let ds = sample(12);
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    for (ts, s, d, p) in &ds {
        w.write(*ts, *s, *d, p).unwrap();
    }
    let bytes = w.into_inner();
    let (got, stats, err) = read_all(&bytes);
    assert!(err.is_none());
    assert_eq!(got, ds);
    assert_eq!(stats.datagrams, 12);

    // An independent reader agrees on blocks, timestamps and frames, and the
    // IPv4 and UDP checksums verify.
    let mut r = pcap_file::pcapng::PcapNgReader::new(Cursor::new(&bytes)).unwrap();
    let mut n = 0;
    while let Some(block) = r.next_block() {
        let (block, _) = block.unwrap();
        if let pcap_file::pcapng::Block::EnhancedPacket(epb) = block {
            let (ts, _, _, payload) = &ds[n];
            assert_eq!(epb.timestamp, *ts);
            let p = etherparse::SlicedPacket::from_ethernet(&epb.data).unwrap();
            let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else {
                panic!()
            };
            let h = ip.header().to_header();
            assert_eq!(h.header_checksum, h.calc_header_checksum());
            let Some(etherparse::TransportSlice::Udp(udp)) = &p.transport else {
                panic!()
            };
            let want = udp
                .to_header()
                .calc_checksum_ipv4(&h, udp.payload())
                .unwrap();
            assert_eq!(udp.checksum(), want);
            assert_eq!(udp.payload(), &payload[..]);
            n += 1;
        }
    }
    assert_eq!(n, 12);
}

#[test]
fn writer_refuses_oversized_datagrams() {
    let mut w = PcapNgWriter::new(Vec::new()).unwrap();
    let big = vec![0u8; 70_000];
    let e = w
        .write(T0, addr("1.2.3.4:1"), addr("1.2.3.5:2"), &big)
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn tshark_reads_our_file() {
    let out = std::process::Command::new("tshark")
        .arg("--version")
        .output()
        .expect("tshark runs (scripts/test-all.sh installs Debian's tshark)");
    assert!(out.status.success());
    let ds = sample(9);
    let dir = std::env::temp_dir().join(format!("mocap-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ours.pcapng");
    let mut w = PcapNgWriter::new(std::fs::File::create(&path).unwrap())
        .unwrap()
        .fragment(1500);
    for (ts, s, d, p) in &ds {
        w.write(*ts, *s, *d, p).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let out = std::process::Command::new("tshark")
        .args(["-n", "-r"])
        .arg(&path)
        .args([
            "-o",
            "udp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
        ])
        .args([
            "-Y",
            "udp",
            "-T",
            "fields",
            "-e",
            "udp.length",
            "-e",
            "udp.checksum.status",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<_> = stdout.lines().collect();
    assert_eq!(lines.len(), 9, "{stdout}");
    for (line, (_, _, _, p)) in lines.iter().zip(&ds) {
        let mut f = line.split('\t');
        assert_eq!(f.next().unwrap(), (p.len() + 8).to_string());
        // 1 = "Good" in tshark's checksum status (0 bad, 2 unverified).
        assert_eq!(f.next().unwrap(), "1", "{line}");
    }
    assert!(!stderr.to_lowercase().contains("warn"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where each record of a classic pcap file ends, walked apart from the reader.
fn record_ends(f: &[u8]) -> Vec<usize> {
    let big = f[..4] == [0xa1, 0xb2, 0xc3, 0xd4] || f[..4] == [0xa1, 0xb2, 0x3c, 0x4d];
    let u32_at = |at: usize| {
        let b: [u8; 4] = f[at..at + 4].try_into().unwrap();
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    let mut ends = Vec::new();
    let mut at = 24;
    while at + 16 <= f.len() {
        at += 16 + u32_at(at + 8) as usize;
        ends.push(at);
    }
    assert_eq!(at, f.len(), "the walk ends at the end of the file");
    ends
}

/// A file cut anywhere yields every datagram whose records all came before
/// the cut, in order, and nothing else; a cut inside a record is reported.
#[test]
fn a_cut_file_yields_every_datagram_before_the_cut() {
    let ds = sample(6);
    let eth = ethernet_frames(&ds, Some(1500));
    // Datagram i's frames all carry its timestamp; after frame k, this many
    // datagrams have all their fragments.
    let last_frame: Vec<usize> = ds
        .iter()
        .map(|d| eth.iter().rposition(|(t, _)| *t == d.0).unwrap())
        .collect();
    assert!(eth.len() > ds.len(), "some datagrams are fragmented");
    let complete_after: Vec<usize> = (0..eth.len())
        .map(|k| last_frame.iter().filter(|&&l| l <= k).count())
        .collect();
    let sll2: Vec<_> = eth.iter().map(|(t, f)| (*t, reframe(276, f))).collect();
    for f in [
        pcap_file(1, true, false, &eth),
        pcap_file(276, false, true, &sll2),
    ] {
        let ends = record_ends(&f);
        assert_eq!(ends.len(), eth.len());
        for n in 24..=f.len() {
            let want = ends
                .iter()
                .rposition(|&e| e <= n)
                .map_or(0, |k| complete_after[k]);
            let (got, _, err) = read_all(&f[..n]);
            let payloads: Vec<&Vec<u8>> = got.iter().map(|d| &d.3).collect();
            let expected: Vec<&Vec<u8>> = ds[..want].iter().map(|d| &d.3).collect();
            assert_eq!(payloads, expected, "cut at {n} of {}", f.len());
            if n > 24 && !ends.contains(&n) {
                assert!(err.is_some(), "a cut inside a record at {n} is reported");
            }
        }
    }
}

#[test]
fn no_panic_on_damaged_files() {
    let ds = sample(6);
    let eth = ethernet_frames(&ds, Some(1500));
    let mut files = vec![
        pcap_file(1, true, false, &eth),
        pcap_file(276, false, true, &eth),
    ];
    let mut ng = Ng::new();
    ng.interface(1, Some(9), Some(5));
    ng.interface(101, Some(0x80 | 10), None);
    for (i, (t, f)) in eth.iter().enumerate() {
        ng.packet(
            (i % 2) as u32,
            t.as_nanos() as u64,
            if i % 2 == 0 { f } else { &f[14..] },
        );
    }
    files.push(ng.0);
    for f in &files {
        for n in 0..f.len() {
            read_all(&f[..n]);
        }
        let mut v = f.clone();
        for i in 0..v.len() {
            v[i] ^= 0xff;
            read_all(&v);
            v[i] ^= 0xff;
        }
    }
    let mut rng = Rng(42);
    for _ in 0..20_000 {
        let mut v = files[(rng.next() % 3) as usize].clone();
        for _ in 0..1 + rng.next() % 4 {
            let at = (rng.next() % v.len() as u64) as usize;
            match rng.next() % 3 {
                0 => v[at] = rng.next() as u8,
                1 => v.truncate(at.max(1)),
                _ => {
                    if at + 4 <= v.len() {
                        v[at..at + 4].copy_from_slice(&(rng.next() as u32 % 70_000).to_le_bytes());
                    }
                }
            }
        }
        read_all(&v);
    }
}
