//! Issue 40: forwarding raw allocates nothing per datagram once running.
//! This test binary's global allocator is `allocation-counter`'s, which
//! counts the allocations of the thread measured; the relay is driven on
//! that thread, through the run loop, over loopback.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mocap_cli::net::batch::SendHeaders;
use mocap_cli::{Format, Input, LogArgs, StopArgs, Stopped, WriteArgs, drive};
use mocap_core::vmc::Rules;

use super::batched::{Feed, Forward};
use super::{Destination, Options, Relay, prepare};

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
    let mut forward = Forward {
        relay,
        headers,
        count: StopArgs {
            count: Some(n),
            duration: None,
        }
        .budget(),
    };
    let stopped = drive(feed, Some(Duration::from_secs(5)), None, &mut forward);
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
    let opts = Options {
        input: Input::Listen("127.0.0.1:0".parse().unwrap()),
        record: WriteArgs::default(),
        destinations: sinks
            .iter()
            .map(|s| Destination {
                addr: s.local_addr().unwrap(),
                rules: Rules::default(),
                trackers: None,
            })
            .collect(),
        allow: mocap_cli::AllowArgs::default(),
        max_pps: None,
        dump: false,
        format: Format::Human,
        stop: StopArgs::default(),
        log: LogArgs {
            quiet: true,
            ..LogArgs::default()
        },
        topspeed: false,
        bvh: None,
    };
    let mut prepared = prepare(opts).unwrap();
    assert!(prepared.batched, "raw destinations take the batched path");
    let socket = prepared.source.socket().unwrap();
    let to: SocketAddr = socket.local_addr().unwrap();
    let mut feed = Feed::new(socket);
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
    forward(&mut prepared.relay, &mut feed, &mut headers, 64);
    check(seq);

    let relay = &mut prepared.relay;
    let mut steady = allocation_counter::AllocationInfo::default();
    for _ in 0..3 {
        steady += allocation_counter::measure(|| {
            // A datagram at a time (a batch of one: a stream at a few
            // thousand a second), the senders taking turns.
            for i in 0..100 {
                send(i % 2, &mut seq);
                forward(relay, &mut feed, &mut headers, 1);
            }
        });
        check(seq);
        steady += allocation_counter::measure(|| {
            // A burst: full batches and a partial one, senders interleaved.
            for i in 0..100 {
                send(usize::from(i % 3 == 0), &mut seq);
            }
            forward(relay, &mut feed, &mut headers, 100);
        });
        check(seq);
    }
    assert_eq!(
        (steady.count_total, steady.bytes_total),
        (0, 0),
        "allocations while forwarding 600 datagrams: {steady:?}"
    );

    let sources = &prepared.relay.sources;
    assert_eq!(sources.len(), 2);
    assert_eq!(
        sources.values().map(|s| s.datagrams).sum::<u64>(),
        seq as u64
    );
    assert!(
        prepared
            .relay
            .dests
            .iter()
            .all(|d| d.stats.bytes == (seq * LEN) as u64),
        "bytes counted per destination"
    );
}
