//! Health per performer and protocol, with the health module's meanings
//! (lost, duplicates, reordered, restarts, rate, jitter) for the protocols
//! that number their frames (mocopi's `fnum`, Live Link Face's frame count),
//! and datagram counts and rate for the others; plus link delay.

use std::collections::BTreeSet;
use std::fmt;
use std::net::SocketAddr;

use mocap_cli::senders::{Senders, pair};
use mocap_cli::streams::{self, StreamCounts};
use mocap_core::health::Health;
use mocap_core::protocol::{Protocol, Stamp};
use serde::Serialize;

use crate::delay::{Percentiles, Recent};
use crate::key;

/// Distinct senders remembered per stream (the count stops growing there).
const MAX_STREAM_SENDERS: usize = 64;

/// One performer's stream of one protocol.
#[derive(Debug, Default)]
struct Stream {
    datagrams: u64,
    bytes: u64,
    stale: u64,
    oversize: u64,
    senders: BTreeSet<Option<SocketAddr>>,
    /// The newest arrival (Unix seconds).
    last: f64,
    /// Its silence has been told ([`Streams::fell_silent`]).
    told_silent: bool,
    health: Health,
    one_way: Recent,
}

/// A stream is live, never evicted for a newcomer, while it sends: three
/// datagrams or more, the newest within [`LIVE_S`] of `now`.
fn is_live(s: &Stream, now: f64) -> bool {
    s.datagrams >= 3 && now - s.last < LIVE_S
}

/// How recently a live stream was heard from, in seconds.
pub(crate) const LIVE_S: f64 = 1.0;
/// After this long without a datagram a live stream is said to have
/// stopped, and reads as stopped (rate 0) in records.
pub(crate) const SILENT_S: f64 = 1.0;

/// Every stream seen, by (performer, protocol); round trips by performer.
/// Looked up by borrowed names: only a new stream copies them. Past
/// [`mocap_cli::senders::MAX_SENDERS`] streams a new one takes the place of
/// the least recently heard one that is not live ([`is_live`]): a publisher
/// flooding made-up performer names cannot grow memory nor push out a
/// performer who is sending, and one who comes after the flood is tracked.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    map: Senders<Stream, (String, String)>,
    rtt: Senders<Recent, String>,
}

impl Streams {
    /// Counts one datagram of `performer`'s `protocol` stream from `sender`,
    /// arriving at `arrival` (Unix seconds), into its health. When the
    /// stream's silence was told, how long it lasted (seconds): say it is
    /// back.
    pub(crate) fn datagram(
        &mut self,
        performer: &str,
        protocol: &str,
        sender: Option<SocketAddr>,
        payload: &[u8],
        arrival: f64,
    ) -> Option<f64> {
        // Past the bound a new stream takes the place of the one heard from
        // least recently that is not live; with every one live it is only
        // counted (`untracked`).
        let (s, _) =
            self.map
                .get_or_insert_sparing(pair(&(performer, protocol)), Stream::default, |s| {
                    is_live(s, arrival)
                })?;
        let back = std::mem::take(&mut s.told_silent).then_some(arrival - s.last);
        s.datagrams += 1;
        s.last = arrival;
        s.bytes += payload.len() as u64;
        if s.senders.len() < MAX_STREAM_SENDERS {
            s.senders.insert(sender);
        }
        health(
            &mut s.health,
            key::protocol_named(protocol),
            payload,
            arrival,
        );
        back
    }

    /// The streams that were live and have had nothing for [`SILENT_S`] at
    /// `now`, each once until it sends again: `(performer, protocol,
    /// seconds since its last datagram)`.
    pub(crate) fn fell_silent(&mut self, now: f64) -> Vec<(String, String, f64)> {
        let mut out = Vec::new();
        for ((performer, protocol), s) in self.map.iter_mut() {
            if !s.told_silent && s.datagrams >= 3 && now - s.last >= SILENT_S {
                s.told_silent = true;
                out.push((performer.clone(), protocol.clone(), now - s.last));
            }
        }
        out
    }

    /// A one-way age (arrival minus capture) of a sample of this stream.
    pub(crate) fn one_way(&mut self, performer: &str, protocol: &str, ms: f64) {
        if let Some(s) = self.map.get_mut(pair(&(performer, protocol))) {
            s.one_way.push(ms);
        }
    }

    /// A sample of this stream larger than --max-size.
    pub(crate) fn oversize(&mut self, performer: &str, protocol: &str) {
        if let Some(s) = self.map.get_mut(pair(&(performer, protocol))) {
            s.oversize += 1;
        }
    }

    /// A sample of this stream that was too late to send on.
    pub(crate) fn stale(&mut self, performer: &str, protocol: &str) {
        if let Some(s) = self.map.get_mut(pair(&(performer, protocol))) {
            s.stale += 1;
        }
    }

    /// A probe round trip to `performer`'s publisher; `true` for the first
    /// one of that performer.
    pub(crate) fn round_trip(&mut self, performer: &str, ms: f64) -> bool {
        if let Some(r) = self.rtt.get_mut(performer) {
            r.push(ms);
            false
        } else if let Some(r) = self.rtt.try_insert_with(performer, Recent::default) {
            r.push(ms);
            true
        } else {
            false
        }
    }

    /// Datagrams of streams past the bound, counted only.
    pub(crate) fn untracked(&self) -> u64 {
        self.map.overflow()
    }

    /// One record per stream at `now` (Unix seconds).
    pub(crate) fn records(&self, now: f64) -> Vec<StreamRecord> {
        self.map
            .iter()
            .map(|((performer, protocol), s)| {
                let h = s.health.report().rounded();
                let since = now - s.last;
                let silent = (since >= SILENT_S && s.datagrams > 0)
                    .then(|| mocap_cli::output::round3(since));
                StreamRecord {
                    protocol: protocol.clone().into(),
                    from: Performer {
                        performer: performer.clone(),
                        senders: s.senders.len(),
                    },
                    // The rate since the stream began is no rate for a
                    // stream that stopped.
                    rate_hz: if silent.is_some() { Some(0.0) } else { h.fps },
                    jitter_ms: h.jitter_ms,
                    counts: StreamCounts::new(
                        s.datagrams,
                        h.frames,
                        h.errors,
                        s.health.is_numbered().then_some(&h),
                    ),
                    own: Linked {
                        bytes: s.bytes,
                        stale: s.stale,
                        oversize: s.oversize,
                        silent_s: silent,
                        one_way_ms: s.one_way.percentiles(),
                        rtt_ms: self.rtt.get(performer).and_then(Recent::percentiles),
                    },
                }
            })
            .collect()
    }
}

/// Counts a datagram into `h` as the registry's decode stamps it; a
/// datagram of no known protocol is a frame without a number.
fn health(h: &mut Health, protocol: Option<Protocol>, payload: &[u8], arrival: f64) {
    // Health takes time as a Duration from any fixed origin: Unix time here.
    let arrival = std::time::Duration::try_from_secs_f64(arrival).ok();
    let stamp = protocol.map_or(Stamp::Unnumbered { ends_frame: false }, |p| {
        p.stamp(payload)
    });
    h.stamp(stamp, arrival);
}

/// One stream in `stats` and `summary` records: mocap-top's record type
/// (its counters count alike), from a performer.
pub(crate) type StreamRecord = streams::StreamRecord<Performer, Linked>;

/// Whose stream it is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Performer {
    pub(crate) performer: String,
    pub(crate) senders: usize,
}

/// What the link adds: bytes carried, samples dropped as stale, delays.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Linked {
    pub(crate) bytes: u64,
    /// Samples not sent on: older than --max-lag when they arrived.
    pub(crate) stale: u64,
    /// Samples not sent on: larger than --max-size.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) oversize: u64,
    /// Seconds since its last datagram, once that is a second or more (the
    /// stream has stopped; `rate_hz` is then 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) silent_s: Option<f64>,
    /// Arrival minus capture time (Zenoh timestamp): meaningful where the
    /// two clocks agree (one machine, NTP on both).
    pub(crate) one_way_ms: Option<Percentiles>,
    /// Round trip of the periodic probe to this performer's publisher.
    pub(crate) rtt_ms: Option<Percentiles>,
}

#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A stream as a line of the human summary.
pub(crate) struct Line<'a>(pub(crate) &'a StreamRecord);

impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        write!(
            f,
            "{}/{}: {} datagrams",
            r.from.performer, r.protocol, r.counts.datagrams
        )?;
        match (r.own.silent_s, r.rate_hz) {
            (Some(s), _) => write!(f, ", nothing for {s:.1} s")?,
            (None, Some(hz)) => write!(f, ", {hz:.1}/s")?,
            (None, None) => {}
        }
        write!(
            f,
            ", lost {}, duplicates {}, reordered {}, restarts {}",
            r.counts.lost, r.counts.duplicates, r.counts.reordered, r.counts.restarts
        )?;
        if r.own.stale > 0 {
            write!(f, ", stale {}", r.own.stale)?;
        }
        if r.own.oversize > 0 {
            write!(f, ", over --max-size {}", r.own.oversize)?;
        }
        if let Some(p) = r.own.one_way_ms {
            write!(f, ", one-way p50 {:.2} ms p99 {:.2} ms", p.p50, p.p99)?;
        }
        if let Some(p) = r.own.rtt_ms {
            write!(f, ", round trip p50 {:.2} ms p99 {:.2} ms", p.p50, p.p99)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mocopi_frames_are_checked_by_their_numbers_and_vmc_counted() {
        let seed = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../captures/mocopi/seed-frame-1575.bin"
        ))
        .unwrap();
        let mut s = Streams::default();
        let src: Option<SocketAddr> = Some("192.0.2.1:5000".parse().unwrap());
        // The same frame twice: one frame, one duplicate.
        s.datagram("alice", "mocopi", src, &seed, 1.0);
        s.datagram("alice", "mocopi", src, &seed, 1.1);
        s.datagram("bob", "vmc", None, b"#bundle\0", 1.0);
        s.one_way("alice", "mocopi", 0.5);
        s.round_trip("alice", 2.0);
        let r = s.records(0.0);
        assert_eq!(r.len(), 2);
        let a = &r[0];
        assert_eq!(
            (a.from.performer.as_str(), &*a.protocol),
            ("alice", "mocopi")
        );
        assert_eq!(
            (
                a.counts.datagrams,
                a.counts.frames,
                a.counts.duplicates,
                a.from.senders
            ),
            (2, 2, 1, 1)
        );
        assert_eq!(a.own.one_way_ms.unwrap().p50, 0.5);
        assert_eq!(a.own.rtt_ms.unwrap().p99, 2.0);
        assert_eq!((r[1].counts.datagrams, r[1].counts.lost), (1, 0));
        assert!(Line(a).to_string().starts_with("alice/mocopi: 2 datagrams"));
    }

    /// Issue 58: during an outage the status line kept printing
    /// "alice/mocopi: 302 datagrams, 60.1/s" while nothing arrived. A
    /// stream that stops is said once, a second after its last datagram;
    /// it reads as stopped (rate 0, for how long) until it sends again,
    /// which is said with the gap.
    #[test]
    fn a_stream_that_stops_is_said_once_and_reads_as_stopped() {
        let mut s = Streams::default();
        for i in 0..60 {
            let t = 100.0 + f64::from(i) / 60.0;
            assert_eq!(s.datagram("alice", "vmc", None, b"x", t), None);
        }
        let last = 100.0 + 59.0 / 60.0;
        assert!(s.fell_silent(last + 0.9).is_empty());
        let told = s.fell_silent(last + 1.2);
        assert_eq!(told.len(), 1);
        assert_eq!((told[0].0.as_str(), told[0].1.as_str()), ("alice", "vmc"));
        assert!(s.fell_silent(last + 5.0).is_empty(), "told once");
        let r = &s.records(last + 3.0)[0];
        assert_eq!((r.rate_hz, r.own.silent_s), (Some(0.0), Some(3.0)));
        assert!(
            Line(r).to_string().contains("nothing for 3.0 s"),
            "{}",
            Line(r)
        );
        let gap = s.datagram("alice", "vmc", None, b"x", last + 6.0).unwrap();
        assert!((gap - 6.0).abs() < 1e-9);
        let r = &s.records(last + 6.01)[0];
        assert_eq!(r.own.silent_s, None);
        assert_ne!(r.rate_hz, Some(0.0));
        // A one-shot stranger's silence is not news.
        s.datagram("mallory", "vmc", None, b"x", last + 6.0);
        assert!(s.fell_silent(last + 9.0).iter().all(|t| t.0 != "mallory"));
    }

    /// Issue 58: past 256 streams a new one was only counted, so a
    /// performer who joined after a flood of made-up names was never shown.
    /// Now strangers make room for her, and she for nobody while she sends.
    #[test]
    fn streams_are_bounded_and_a_live_performer_is_never_pushed_out() {
        let max = mocap_cli::senders::MAX_SENDERS;
        let mut s = Streams::default();
        let mut t = 0.0;
        for i in 0..max + 10 {
            t += 0.001;
            s.datagram(&format!("p{i}"), "vmc", None, b"x", t);
        }
        assert_eq!(s.records(t).len(), max);
        assert_eq!(s.untracked(), 0);
        // Alice joins after the flood and keeps sending among 2000 more
        // one-shot names, eight between two of her datagrams.
        for i in 0..2000 {
            t += 0.002;
            if i % 8 == 0 {
                s.datagram("alice", "mocopi", None, b"x", t);
            }
            s.datagram(&format!("q{i}"), "vmc", None, b"x", t);
        }
        let records = s.records(t);
        let alice = records
            .iter()
            .find(|r| r.from.performer == "alice")
            .expect("alice is tracked");
        assert_eq!(alice.counts.datagrams, 250);
        assert_eq!(records.len(), max);
        // A table full of live streams refuses a newcomer, and counts it.
        let mut full = Streams::default();
        for _ in 0..3 {
            for i in 0..max {
                full.datagram(&format!("p{i}"), "vmc", None, b"x", 1.0);
            }
        }
        full.datagram("late", "vmc", None, b"x", 1.1);
        assert_eq!(full.untracked(), 1);
    }
}
