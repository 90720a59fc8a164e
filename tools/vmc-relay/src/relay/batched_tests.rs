//! The batched raw path, driven through the run loop over loopback. Issue
//! 40: it allocates nothing per datagram once running. This test binary's
//! global allocator is `allocation-counter`'s, which counts the allocations
//! of the thread measured (the relay runs on the test's thread).

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mocap_cli::net::batch::SendHeaders;
use mocap_cli::prelude::*;
use mocap_core::vmc::Rules;

use super::batched::{Feed, Forward};
use super::{Destination, Relay, listening_on_loopback, prepare};
use mocap_cli::senders::MAX_SENDERS;

const LEN: usize = 64;
const SINKS: usize = 4;

fn bound() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s
}

/// A datagram that names its sender and its place in the stream.
fn datagram(sender: usize, seq: usize) -> [u8; LEN] {
    let mut d = [0xA5; LEN];
    d[0] = sender as u8;
    d[1..3].copy_from_slice(&(seq as u16).to_be_bytes());
    d
}

/// Runs the relay's batched path (the feed, the handler, the run loop)
/// until `n` datagrams went through (a lost one ends it by `--duration`,
/// failing the test); the send headers are made once, as a run makes them.
fn forward(relay: &mut Relay, feed: &mut Feed, headers: &mut SendHeaders, n: u64) {
    let budget = StopArgs {
        count: Some(n),
        duration: None,
    }
    .budget();
    let stopped =
        Forward::new(relay, headers, budget).run(feed, Some(Duration::from_secs(5)), None);
    assert_eq!(stopped.unwrap(), Stopped::Count, "datagrams went missing");
}

#[test]
fn steady_state_forwarding_allocates_nothing_per_datagram() {
    // The counter is in place: a measured allocation is seen.
    let boxed = allocation_counter::measure(|| {
        std::hint::black_box(Box::new(1u32));
    });
    assert_eq!(
        boxed.count_total, 1,
        "the counting allocator is not installed"
    );

    let sinks: Vec<UdpSocket> = (0..SINKS).map(|_| bound()).collect();
    let (mut relay, mut feed, to) = relay_to(&sinks);
    let mut headers = SendHeaders::default();
    let senders = [bound(), bound()];
    let mut seq = 0;
    let send = |sender: usize, seq: &mut usize| {
        senders[sender]
            .send_to(&datagram(sender, *seq), to)
            .unwrap();
        *seq += 1;
    };
    // Every destination got every datagram so far, in order. Read between
    // rounds: a sink's default buffer holds a few hundred datagrams.
    let mut checked = 0;
    let mut check = |upto: usize| {
        let mut buf = [0u8; 2 * LEN];
        for sink in &sinks {
            for want in checked..upto {
                let n = sink.recv(&mut buf).unwrap();
                assert_eq!(n, LEN);
                assert_eq!(usize::from(u16::from_be_bytes([buf[1], buf[2]])), want);
            }
        }
        checked = upto;
    };

    // Warm-up: both senders are known and every buffer is in place.
    for i in 0..64 {
        send(i % 2, &mut seq);
    }
    forward(&mut relay, &mut feed, &mut headers, 64);
    check(seq);

    let mut steady = allocation_counter::AllocationInfo::default();
    for _ in 0..3 {
        steady += allocation_counter::measure(|| {
            // A datagram at a time (a batch of one: a stream at a few
            // thousand a second), the senders taking turns.
            for i in 0..100 {
                send(i % 2, &mut seq);
                forward(&mut relay, &mut feed, &mut headers, 1);
            }
        });
        check(seq);
        steady += allocation_counter::measure(|| {
            // A burst: full batches and a partial one, senders interleaved.
            for i in 0..100 {
                send(usize::from(i % 3 == 0), &mut seq);
            }
            forward(&mut relay, &mut feed, &mut headers, 100);
        });
        check(seq);
    }
    assert_eq!(
        (steady.count_total, steady.bytes_total),
        (0, 0),
        "allocations while forwarding 600 datagrams: {steady:?}"
    );

    // Each sender's own count: 32 + 3 x (50 + 66) and 32 + 3 x (50 + 34).
    let count = |sender: &UdpSocket| {
        let src = Some(sender.local_addr().unwrap());
        relay.sources.get(&src).map(|s| (s.datagrams, s.bytes))
    };
    assert_eq!(count(&senders[0]), Some((380, 380 * LEN as u64)));
    assert_eq!(count(&senders[1]), Some((284, 284 * LEN as u64)));
    assert_eq!(relay.sources.len(), 2);
    for d in &relay.dests {
        assert_eq!(d.stats.bytes, (seq * LEN) as u64, "bytes per destination");
        assert_eq!(d.link.record().sent, seq as u64);
    }
}

/// A relay listening on loopback, forwarding raw to `sinks`: the relay,
/// its batched feed and its address.
fn relay_to(sinks: &[UdpSocket]) -> (Relay, Feed, SocketAddr) {
    let opts = listening_on_loopback(
        sinks
            .iter()
            .map(|s| Destination {
                addr: s.local_addr().unwrap(),
                rules: Rules::default(),
                trackers: None,
            })
            .collect(),
    );
    let prepared = prepare(opts).unwrap();
    assert!(prepared.batched, "raw destinations take the batched path");
    let socket = prepared.source.socket().unwrap();
    let to = socket.local_addr().unwrap();
    (prepared.relay, Feed::new(socket), to)
}

/// Counts per sender are added up as a stream goes (not per datagram);
/// with a crowd of one-shot senders among a performer's stream, the
/// stalest are still evicted past 256 and every datagram stays counted.
#[test]
fn senders_are_counted_and_evicted_in_the_batched_path() {
    let sink = bound();
    let (mut relay, mut feed, to) = relay_to(std::slice::from_ref(&sink));
    let mut headers = SendHeaders::default();
    let performer = bound();
    let strangers: Vec<UdpSocket> = (0..300).map(|_| bound()).collect();
    for (i, s) in strangers.iter().enumerate() {
        performer.send_to(&datagram(0, 2 * i), to).unwrap();
        performer.send_to(&datagram(0, 2 * i + 1), to).unwrap();
        s.send_to(&datagram(1, i), to).unwrap();
    }
    forward(&mut relay, &mut feed, &mut headers, 900);
    let sources = &relay.sources;
    assert_eq!(sources.len(), MAX_SENDERS);
    assert_eq!(sources.evicted_senders(), 301 - MAX_SENDERS as u64);
    let mine = sources.get(&Some(performer.local_addr().unwrap()));
    assert_eq!(mine.map(|s| s.datagrams), Some(600), "the performer stays");
    let total = sources.values().map(|s| s.datagrams).sum::<u64>()
        + sources.evicted().map_or(0, |s| s.datagrams);
    assert_eq!(total, 900);
}
