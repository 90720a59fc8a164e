//! The golden files (`tests/golden/*.jsonl`, checked by
//! `cli.rs::golden_json_for_every_capture`) are our own output once reviewed,
//! so on their own they only say "nothing changed". Here they meet an
//! independent oracle, in the normal suite: a chunk walk written from
//! docs/smf.md alone, over datagrams taken from the captures with the
//! `pcap-file` crate and header arithmetic of our own (not `mocap_core`'s
//! reader or parser). Every frame and skeleton record must carry exactly the
//! sender address, capture time, frame number and bones (id, parent,
//! rotation, position) this walk finds, in the same order. (The Lua
//! dissector is a second independent decoder: wireshark.rs compares the same
//! golden files with it where tshark is installed.)

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddrV4};

use pcap_file::DataLink;
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use serde_json::Value;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden");

/// One UDP datagram of a capture: source, capture time, payload.
struct Udp {
    src: Option<SocketAddrV4>,
    ts_us: Option<u128>,
    payload: Vec<u8>,
}

/// The IPv4 packet inside one captured frame, by link type.
fn ip_of(link: DataLink, frame: &[u8]) -> Option<&[u8]> {
    match link {
        DataLink::ETHERNET => {
            // Destination, source, EtherType (one 802.1Q tag allowed).
            let (ty, at) = match u16::from_be_bytes([frame[12], frame[13]]) {
                0x8100 => (u16::from_be_bytes([frame[16], frame[17]]), 18),
                t => (t, 14),
            };
            (ty == 0x0800).then(|| &frame[at..])
        }
        // Linux cooked v2: protocol first, 20 bytes of header.
        DataLink::LINUX_SLL2 => {
            (u16::from_be_bytes([frame[0], frame[1]]) == 0x0800).then(|| &frame[20..])
        }
        // Linux cooked v1: protocol at 14, 16 bytes of header.
        DataLink::LINUX_SLL => {
            (u16::from_be_bytes([frame[14], frame[15]]) == 0x0800).then(|| &frame[16..])
        }
        DataLink::RAW | DataLink::IPV4 => Some(frame),
        DataLink::NULL => {
            (u32::from_le_bytes(frame[..4].try_into().unwrap()) == 2).then(|| &frame[4..])
        }
        other => panic!("link type {other:?} not handled by the oracle"),
    }
}

/// A UDP datagram in an unfragmented IPv4 packet; `None` for anything else.
fn udp_of(ip: &[u8]) -> Option<(SocketAddrV4, &[u8])> {
    if ip[0] >> 4 != 4 || ip[9] != 17 {
        return None;
    }
    let flags_offset = u16::from_be_bytes([ip[6], ip[7]]);
    assert_eq!(
        flags_offset & 0x3fff,
        0,
        "fragmented capture: not for this oracle"
    );
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
    let udp = &ip[ihl..total];
    let src = SocketAddrV4::new(
        Ipv4Addr::new(ip[12], ip[13], ip[14], ip[15]),
        u16::from_be_bytes([udp[0], udp[1]]),
    );
    let len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    Some((src, &udp[8..len]))
}

fn datagrams(capture: &str) -> Vec<Udp> {
    let path = format!("{ROOT}/captures/mocopi/{capture}");
    let mut out = Vec::new();
    let mut push = |link: DataLink, ts: std::time::Duration, data: &[u8]| {
        if let Some((src, payload)) = ip_of(link, data).and_then(udp_of) {
            out.push(Udp {
                src: Some(src),
                // Nearest microsecond, as docs/jsonl.md specifies.
                ts_us: Some((ts.as_nanos() + 500) / 1000),
                payload: payload.to_vec(),
            });
        }
    };
    if capture.ends_with(".pcapng") {
        let mut r = PcapNgReader::new(File::open(&path).unwrap()).unwrap();
        let mut links = Vec::new();
        while let Some(block) = r.next_block() {
            match block.unwrap().0 {
                Block::InterfaceDescription(idb) => links.push(idb.linktype),
                Block::EnhancedPacket(epb) => {
                    let link = links[epb.interface_id as usize];
                    push(link, epb.timestamp, &epb.data);
                }
                _ => {}
            }
        }
    } else if capture.ends_with(".pcap") {
        let mut r = PcapReader::new(File::open(&path).unwrap()).unwrap();
        let link = r.header().datalink;
        while let Some(p) = r.next_packet() {
            let p = p.unwrap();
            push(link, p.timestamp(), p.data());
        }
    } else {
        // A raw datagram file: one datagram, no address, no time.
        out.push(Udp {
            src: None,
            ts_us: None,
            payload: std::fs::read(&path).unwrap(),
        });
    }
    out
}

/// A chunk: tag and payload, `None` where the length runs past the end.
fn chunks(mut b: &[u8]) -> Option<Vec<([u8; 4], &[u8])>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        if b.len() < 8 {
            return None;
        }
        let len = u32::from_le_bytes(b[..4].try_into().unwrap()) as usize;
        let tag: [u8; 4] = b[4..8].try_into().unwrap();
        let body = b.get(8..8 + len)?;
        out.push((tag, body));
        b = &b[8 + len..];
    }
    Some(out)
}

fn child<'a>(of: &[([u8; 4], &'a [u8])], tag: &[u8; 4]) -> Option<&'a [u8]> {
    of.iter().find(|(t, _)| t == tag).map(|(_, b)| *b)
}

fn f32s(b: &[u8]) -> Vec<f64> {
    b.chunks_exact(4)
        .map(|c| f64::from(f32::from_le_bytes(c.try_into().unwrap())))
        .collect()
}

/// What the walk finds in a datagram: kind, sender IP (from `ipad`), frame
/// number, and bones as (id, parent, the seven `tran` floats).
struct Walked {
    kind: &'static str,
    sender_ip: Option<String>,
    fnum: Option<u32>,
    bones: Vec<(u16, Option<i16>, Vec<f64>)>,
}

fn walk(datagram: &[u8]) -> Option<Walked> {
    let top = chunks(datagram)?;
    let sender_ip = child(&top, b"sndf")
        .and_then(chunks)
        .and_then(|s| child(&s, b"ipad").map(<[u8]>::to_vec))
        .and_then(|b| {
            // a·10⁹ + b·10⁶ + c·10³ + d; a value no address packs to is none.
            let n = u64::from_le_bytes(b[..8].try_into().unwrap());
            let part = |k: u32| (n / 1000u64.pow(k)) % 1000;
            (n < 1_000_000_000_000 && (0..4).all(|k| part(k) <= 255))
                .then(|| format!("{}.{}.{}.{}", part(3), part(2), part(1), part(0)))
        });
    let bone = |b: &[u8], with_parent: bool| -> Option<(u16, Option<i16>, Vec<f64>)> {
        let c = chunks(b)?;
        let id = u16::from_le_bytes(child(&c, b"bnid")?.try_into().ok()?);
        let parent = if with_parent {
            Some(i16::from_le_bytes(child(&c, b"pbid")?.try_into().ok()?))
        } else {
            None
        };
        Some((id, parent, f32s(child(&c, b"tran")?)))
    };
    if let Some(fram) = child(&top, b"fram") {
        let f = chunks(fram)?;
        let fnum = u32::from_le_bytes(child(&f, b"fnum")?.try_into().ok()?);
        let bones = chunks(child(&f, b"btrs")?)?
            .iter()
            .map(|(_, b)| bone(b, false))
            .collect::<Option<Vec<_>>>()?;
        return Some(Walked {
            kind: "mocopi.frame",
            sender_ip,
            fnum: Some(fnum),
            bones,
        });
    }
    if let Some(skdf) = child(&top, b"skdf") {
        let s = chunks(skdf)?;
        let bones = chunks(child(&s, b"bons")?)?
            .iter()
            .map(|(_, b)| bone(b, true))
            .collect::<Option<Vec<_>>>()?;
        return Some(Walked {
            kind: "mocopi.skeleton",
            sender_ip,
            fnum: None,
            bones,
        });
    }
    None
}

fn golden(capture: &str) -> Vec<Value> {
    let path = format!("{GOLDEN}/{}.jsonl", capture.replace('/', "__"));
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A JSON number as the f64 it names (the golden files keep wire values exact).
fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn check(capture: &str) -> usize {
    let records = golden(capture);
    let decoded: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "mocopi.frame" || r["type"] == "mocopi.skeleton")
        .collect();
    let walked: Vec<(Udp, Walked)> = datagrams(capture)
        .into_iter()
        .filter_map(|d| walk(&d.payload).map(|w| (d, w)))
        .collect();
    assert_eq!(walked.len(), decoded.len(), "{capture}: decoded datagrams");
    for (k, ((d, w), rec)) in walked.iter().zip(&decoded).enumerate() {
        let at = format!("{capture} #{k}");
        assert_eq!(rec["type"], w.kind, "{at}");
        if let Some(src) = d.src {
            assert_eq!(rec["src"], src.to_string(), "{at}");
        }
        if let Some(ts) = d.ts_us {
            assert_eq!(rec["ts_us"].as_u64().map(u128::from), Some(ts), "{at}");
        }
        assert_eq!(rec["sender_ip"].as_str(), w.sender_ip.as_deref(), "{at}");
        if let Some(fnum) = w.fnum {
            assert_eq!(rec["fnum"], fnum, "{at}");
        }
        let bones = rec["bones"].as_array().unwrap();
        assert_eq!(bones.len(), w.bones.len(), "{at}: bones");
        for (b, (id, parent, tran)) in bones.iter().zip(&w.bones) {
            assert_eq!(b["id"], *id, "{at}");
            if let Some(p) = parent {
                assert_eq!(b["parent"], *p, "{at} bone {id}");
            }
            let got: Vec<f64> = b["rot"]
                .as_array()
                .unwrap()
                .iter()
                .chain(b["pos"].as_array().unwrap())
                .map(num)
                .collect();
            // Bit for bit, signs of zero included.
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&got),
                bits(tran),
                "{at} bone {id}: {got:?} vs {tran:?}"
            );
        }
    }
    walked.len()
}

#[test]
fn golden_files_agree_with_an_independent_chunk_walk() {
    let mut n = 0;
    // Every golden capture that is not IP-fragmented (the walk does not
    // reassemble) and not deliberately malformed (the walk has no warnings
    // or error reasons to compare; the Lua dissector checks those).
    for capture in [
        "mocopi-sizes.pcapng",
        "mocopi-frame-loss.pcapng",
        "tcpdump-lo-ethernet.pcap",
        "tcpdump-any-sll2.pcap",
        "recorded-by-mocopi-dump.pcapng",
        "seed-frame-1575.bin",
    ] {
        n += check(capture);
    }
    assert_eq!(n, 8 * 5 + 1, "every frame and skeleton of the six captures");
}

#[test]
fn fragmented_captures_carry_what_their_unfragmented_twins_carry() {
    // The walk cannot reassemble; the fragmented captures hold the same
    // datagrams as mocopi-sizes.pcapng and tcpdump-lo-ethernet.pcap, so their
    // golden records must equal those, field for field, but for where and
    // when they were captured.
    let strip = |v: Vec<Value>| -> Vec<Value> {
        v.into_iter()
            .filter(|r| r["type"] != "summary")
            .map(|mut r| {
                let o = r.as_object_mut().unwrap();
                o.remove("src");
                o.remove("ts_us");
                r
            })
            .collect()
    };
    for (fragmented, whole) in [
        ("mocopi-sizes-fragmented.pcapng", "mocopi-sizes.pcapng"),
        (
            "tcpdump-lo-mtu1500-fragmented.pcap",
            "tcpdump-lo-ethernet.pcap",
        ),
    ] {
        let a = strip(golden(fragmented));
        let b = strip(golden(whole));
        assert!(!a.is_empty());
        assert_eq!(a, b, "{fragmented} vs {whole}");
    }
    // And the oracle refuses to read them rather than misread them.
    let refused = std::panic::catch_unwind(|| datagrams("mocopi-sizes-fragmented.pcapng"));
    assert!(refused.is_err());
}
