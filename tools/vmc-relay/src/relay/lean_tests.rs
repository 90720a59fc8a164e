//! The filtering path (issue 40): destinations with address and bone
//! filters, renames and `--flatten` get a canonical packet's bytes without
//! it being decoded, and nothing is allocated per datagram once running.
//! Driven through the run loop on loopback with the datagrams of the bundled
//! VMC capture. This test binary's global allocator is `allocation-counter`'s.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mocap_cli::prelude::*;
use mocap_core::osc::{self, Pattern};
use mocap_core::vmc::{Rename, Rules};

use super::{Destination, Relay, listening_on_loopback, prepare};

fn bound() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s
}

/// Bodies without the head, expressions renamed, bundled; and only the
/// hips, every message on its own.
fn rules() -> [Rules; 2] {
    [
        Rules {
            only: vec![Pattern::new("/VMC/Ext/{Bone,Blend}/*").unwrap()],
            drop_bones: vec!["Head".into()],
            rename: Some(Rename::Vrm0ToVrm1),
            ..Rules::default()
        },
        Rules {
            bones: Some(vec!["Hips".into()]),
            flatten: true,
            ..Rules::default()
        },
    ]
}

fn relay_to(sinks: &[UdpSocket]) -> (Relay, mocap_cli::source::Source, SocketAddr) {
    let opts = listening_on_loopback(
        sinks
            .iter()
            .zip(rules())
            .map(|(s, rules)| Destination {
                addr: s.local_addr().unwrap(),
                rules,
                trackers: None,
            })
            .collect(),
    );
    let prepared = prepare(opts).unwrap();
    assert!(!prepared.batched);
    assert!(prepared.relay.dests.iter().all(|d| d.lean.is_some()));
    let to = prepared.source.socket().unwrap().local_addr().unwrap();
    (prepared.relay, prepared.source, to)
}

/// Every datagram waiting at a sink, as the messages it holds.
fn drain(sink: &UdpSocket) -> Vec<(bool, Vec<osc::Message>)> {
    sink.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut buf = [0u8; 65_536];
    let mut out = Vec::new();
    while let Ok(n) = sink.recv(&mut buf) {
        let p = osc::decode(&buf[..n]).unwrap();
        let bundle = matches!(p, osc::PacketRepr::Bundle { .. });
        out.push((bundle, p.messages().into_iter().cloned().collect()));
    }
    out
}

#[test]
fn filtering_allocates_nothing_per_datagram_and_forwards_what_the_rules_keep() {
    let boxed = allocation_counter::measure(|| {
        std::hint::black_box(Box::new(1u32));
    });
    assert_eq!(
        boxed.count_total, 1,
        "the counting allocator is not installed"
    );

    let capture = mocap_testutil::capture_payloads("vmc/body-60hz.pcapng");
    let sinks = [bound(), bound()];
    let (mut relay, mut source, to) = relay_to(&sinks);
    let sender = bound();
    let mut forward = |relay: &mut Relay, datagrams: &[Vec<u8>]| {
        for d in datagrams {
            sender.send_to(d, to).unwrap();
            let stop = StopArgs {
                count: Some(1),
                duration: Some(Duration::from_secs(5)),
            };
            let stopped = mocap_cli::source::run(&mut source, &stop, None, relay).unwrap();
            assert_eq!(stopped, Stopped::Count, "a datagram went missing");
        }
    };
    let mut got: [Vec<(bool, Vec<osc::Message>)>; 2] = [Vec::new(), Vec::new()];
    let collect = |got: &mut [Vec<_>; 2]| {
        for (g, s) in got.iter_mut().zip(&sinks) {
            g.extend(drain(s));
        }
    };

    // Warm-up: the sender known, every address seen, the buffers grown.
    let (warm, rest) = capture.split_at(64);
    forward(&mut relay, warm);
    collect(&mut got);
    let mut steady = allocation_counter::AllocationInfo::default();
    let mut sent = warm.len();
    for round in rest.chunks(40).take(6) {
        steady += allocation_counter::measure(|| forward(&mut relay, round));
        sent += round.len();
        collect(&mut got);
    }
    assert_eq!(
        (steady.count_total, steady.bytes_total),
        (0, 0),
        "allocations while filtering {} datagrams: {steady:?}",
        sent - warm.len()
    );

    // What arrived is what the rules keep, as the rules say to send it.
    let [bundled, flat] = &got;
    let bone = |m: &osc::Message| match m.args.first() {
        Some(osc::Arg::String(n)) if m.address == "/VMC/Ext/Bone/Pos" => Some(n.clone()),
        _ => None,
    };
    let bones: Vec<String> = bundled
        .iter()
        .flat_map(|(_, ms)| ms)
        .filter_map(bone)
        .collect();
    assert!(
        bones.len() > 100 && !bones.iter().any(|b| b == "Head"),
        "{} bones",
        bones.len()
    );
    assert!(bundled.iter().all(|(b, _)| *b));
    assert!(bundled.iter().flat_map(|(_, ms)| ms).all(
        |m| m.address.starts_with("/VMC/Ext/Bone/") || m.address.starts_with("/VMC/Ext/Blend/")
    ));
    assert!(flat.iter().all(|(b, ms)| !b && ms.len() == 1));
    let hips = flat
        .iter()
        .flat_map(|(_, ms)| ms)
        .filter_map(bone)
        .collect::<Vec<_>>();
    assert!(!hips.is_empty() && hips.iter().all(|b| b == "Hips"));
    assert!(
        flat.iter()
            .flat_map(|(_, ms)| ms)
            .any(|m| bone(m).is_none()),
        "other messages pass"
    );
    // The counts agree with what the sinks got.
    for (d, g) in relay.dests.iter().zip(&got) {
        assert_eq!(d.link.record().sent, g.len() as u64);
        let messages: usize = g.iter().map(|(_, ms)| ms.len()).sum();
        assert_eq!(d.stats.messages, messages as u64);
        assert!(d.stats.filtered > 0);
    }
    assert_eq!(
        relay.sources.values().map(|s| s.datagrams).sum::<u64>(),
        sent as u64
    );
}
