//! The pure model behind both outputs: streams keyed by (listen address,
//! sender, protocol), each datagram recognised by content through
//! [`mocap_core::protocol`], with rate over the last second, jitter, the
//! health module's loss/duplicate/reorder/restart counts, age, errors,
//! bytes per second and the newest contents. Time is passed in (`now`,
//! since the run began); nothing here reads a clock or a socket.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use mocap_core::health::{FrameEvent, Health, HealthReport};
use mocap_core::protocol::{self, Protocol};
use serde::Serialize;

use crate::content::{Content, Decoded};
use crate::window::Window;

/// After this long without a datagram a row is marked stale.
pub(crate) const STALE: Duration = Duration::from_secs(1);
/// After this long a row has gone quiet.
pub(crate) const QUIET: Duration = Duration::from_secs(5);
/// Most streams kept; past it the one heard from least recently goes.
pub(crate) const MAX_STREAMS: usize = 256;
/// Arrivals a stream's window keeps (a 20 kHz flood for a second and more).
const STREAM_WINDOW: usize = 32_768;
/// Leading bytes of an unknown datagram shown in hex.
pub(crate) const UNKNOWN_HEAD: usize = 16;

/// What a stream speaks: a protocol of the registry, or bytes none claims.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Known(Protocol),
    Unknown,
}

impl Ord for Kind {
    /// The registry's order, unknown last.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for Kind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Kind {
    fn rank(self) -> usize {
        match self {
            Self::Known(p) => Protocol::ALL
                .iter()
                .position(|q| *q == p)
                .unwrap_or(Protocol::ALL.len()),
            Self::Unknown => Protocol::ALL.len() + 1,
        }
    }

    /// The `protocol` field: the registry's key, or `unknown`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Self::Known(p) => p.key(),
            Self::Unknown => "unknown",
        }
    }

    /// The name people know it by.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Known(p) => p.name(),
            Self::Unknown => "unknown",
        }
    }
}

/// A stream's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key {
    /// The address it arrived on (its destination in a capture).
    pub(crate) listen: Option<SocketAddr>,
    /// Who sent it.
    pub(crate) sender: Option<SocketAddr>,
    pub(crate) kind: Kind,
}

/// How recently a stream was heard from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Liveness {
    /// Within [`STALE`].
    Live,
    /// Between [`STALE`] and [`QUIET`].
    Stale,
    /// [`QUIET`] or longer.
    Quiet,
}

impl Liveness {
    fn of(age: Duration) -> Self {
        if age >= QUIET {
            Self::Quiet
        } else if age >= STALE {
            Self::Stale
        } else {
            Self::Live
        }
    }
}

/// One stream's counters and contents.
#[derive(Clone, Debug)]
pub(crate) struct Stream {
    pub(crate) datagrams: u64,
    pub(crate) frames: u64,
    pub(crate) errors: u64,
    pub(crate) bytes: u64,
    last: Duration,
    /// Datagrams (and their bytes) over the last second.
    window: Window,
    /// Frames over the last second.
    frame_window: Window,
    /// Numbered frames (mocopi, Live Link Face): the health module's
    /// counts, one per numbered sequence (Live Link Face subject).
    health: Vec<Health>,
    /// The newest datagram's size and first bytes (unknown streams).
    last_size: usize,
    head: Vec<u8>,
    pub(crate) content: Content,
}

impl Stream {
    /// The newest datagram's size.
    pub(crate) fn last_size(&self) -> usize {
        self.last_size
    }

    /// The newest datagram's first bytes (unknown streams only).
    pub(crate) fn head(&self) -> &[u8] {
        &self.head
    }

    fn new(now: Duration) -> Self {
        Self {
            datagrams: 0,
            frames: 0,
            errors: 0,
            bytes: 0,
            last: now,
            window: Window::new(STREAM_WINDOW),
            frame_window: Window::new(STREAM_WINDOW),
            health: Vec::new(),
            last_size: 0,
            head: Vec::new(),
            content: Content::default(),
        }
    }
}

/// One row of the table and one `top.stream` record: everything a person or
/// a script reads about a stream at `now`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Row {
    #[serde(skip)]
    pub(crate) key: Key,
    pub(crate) protocol: &'static str,
    pub(crate) listen: Option<SocketAddr>,
    pub(crate) sender: Option<SocketAddr>,
    /// Frames per second over the last second, duplicates left out
    /// (datagrams, for unknown bytes and OSC without VMC's frame ends).
    pub(crate) rate_hz: f64,
    pub(crate) datagrams: u64,
    pub(crate) frames: u64,
    pub(crate) lost: u64,
    pub(crate) duplicates: u64,
    pub(crate) reordered: u64,
    pub(crate) restarts: u64,
    pub(crate) errors: u64,
    pub(crate) age_ms: u64,
    pub(crate) bytes_per_s: f64,
    /// Datagrams per second over the last second.
    pub(crate) datagrams_per_s: f64,
    /// Jitter in ms: RFC 3550's against the sender's clock for numbered
    /// frames, else the mean deviation of arrival gaps over the last second.
    pub(crate) jitter_ms: Option<f64>,
    pub(crate) state: Liveness,
    /// Another sender is sending to the same listen address (not quiet).
    pub(crate) shared: bool,
    /// Unknown streams: the newest datagram's size and first bytes in hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) head_hex: Option<String>,
}

/// Every stream seen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Top {
    streams: BTreeMap<Key, Stream>,
    /// Streams dropped to keep within [`MAX_STREAMS`].
    pub(crate) evicted: u64,
    /// Datagrams taken in.
    pub(crate) datagrams: u64,
}

impl Top {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Takes in one datagram that arrived at `now` on `listen` from `sender`.
    pub(crate) fn handle_datagram(
        &mut self,
        now: Duration,
        listen: Option<SocketAddr>,
        sender: Option<SocketAddr>,
        payload: &[u8],
    ) -> Key {
        self.datagrams += 1;
        let kind = protocol::recognise(payload).map_or(Kind::Unknown, |(p, _)| Kind::Known(p));
        let key = Key {
            listen,
            sender,
            kind,
        };
        if !self.streams.contains_key(&key) && self.streams.len() >= MAX_STREAMS {
            self.evict();
        }
        let s = self.streams.entry(key).or_insert_with(|| Stream::new(now));
        s.datagrams += 1;
        s.bytes += payload.len() as u64;
        s.last = now.max(s.last);
        s.window.push(now, payload.len());
        s.last_size = payload.len();
        if kind == Kind::Unknown {
            s.head.clear();
            s.head
                .extend_from_slice(payload.get(..UNKNOWN_HEAD).unwrap_or(payload));
            return key;
        }
        let Kind::Known(p) = kind else { return key };
        match s.content.take(p, payload, now) {
            Decoded::Numbered(fnum, clock, part) => {
                s.frames += 1;
                if s.health.len() <= part {
                    s.health.resize_with(part + 1, Health::new);
                }
                let event = s
                    .health
                    .get_mut(part)
                    .map(|h| h.frame(fnum, clock, Some(now)));
                // A copy of a frame is traffic, not motion: counted in
                // `duplicates` and bytes/s, left out of the frame rate.
                if event != Some(FrameEvent::Duplicate) {
                    s.frame_window.push(now, 0);
                }
            }
            Decoded::Frame => {
                s.frames += 1;
                s.frame_window.push(now, 0);
            }
            Decoded::Other => {}
            Decoded::Error => s.errors += 1,
        }
        key
    }

    fn evict(&mut self) {
        let oldest = self
            .streams
            .iter()
            .min_by_key(|(_, s)| s.last)
            .map(|(k, _)| *k);
        if let Some(k) = oldest {
            self.streams.remove(&k);
            self.evicted += 1;
        }
    }

    /// Lets the windows forget what is older than a second (memory only;
    /// rows read the same either way).
    pub(crate) fn forget(&mut self, now: Duration) {
        for s in self.streams.values_mut() {
            s.window.forget(now);
            s.frame_window.forget(now);
        }
    }

    /// One row per stream, in a stable order (listen address, protocol,
    /// sender), so a screen keeps its layout as numbers change.
    pub(crate) fn rows(&self, now: Duration) -> Vec<Row> {
        let mut rows: Vec<Row> = self.streams.iter().map(|(k, s)| row(*k, s, now)).collect();
        rows.sort_by(|a, b| {
            (
                a.key.listen.map(|l| l.port()),
                a.key.listen,
                a.key.kind,
                a.key.sender,
            )
                .cmp(&(
                    b.key.listen.map(|l| l.port()),
                    b.key.listen,
                    b.key.kind,
                    b.key.sender,
                ))
        });
        // Two senders into one address: the classic "avatar twitches".
        let live: Vec<(Option<SocketAddr>, Option<SocketAddr>)> = rows
            .iter()
            .filter(|r| r.state != Liveness::Quiet)
            .map(|r| (r.key.listen, r.key.sender))
            .collect();
        for r in &mut rows {
            r.shared = r.state != Liveness::Quiet
                && live
                    .iter()
                    .any(|(l, s)| *l == r.key.listen && *s != r.key.sender);
        }
        rows
    }

    /// The stream behind `key`.
    pub(crate) fn stream(&self, key: &Key) -> Option<&Stream> {
        self.streams.get(key)
    }

    /// How many streams there are.
    pub(crate) fn len(&self) -> usize {
        self.streams.len()
    }
}

fn row(key: Key, s: &Stream, now: Duration) -> Row {
    let age = now.saturating_sub(s.last);
    let mut h = HealthReport::default();
    for part in &s.health {
        h.merge(&part.report());
    }
    // + 0.0: an empty sum is -0.0, which reads oddly in a record.
    let round = |x: f64| (x * 1000.0).round() / 1000.0 + 0.0;
    let unknown = key.kind == Kind::Unknown;
    Row {
        key,
        protocol: key.kind.key(),
        listen: key.listen,
        sender: key.sender,
        rate_hz: round(if unknown {
            s.window.rate(now)
        } else {
            s.frame_window.rate(now)
        }),
        datagrams: s.datagrams,
        frames: s.frames,
        lost: h.lost,
        duplicates: h.duplicates,
        reordered: h.reordered,
        restarts: h.restarts,
        errors: s.errors,
        age_ms: u64::try_from(age.as_millis()).unwrap_or(u64::MAX),
        bytes_per_s: round(s.window.bytes_per_s(now)),
        datagrams_per_s: round(s.window.rate(now)),
        jitter_ms: h
            .jitter_ms
            .or_else(|| {
                if unknown {
                    s.window.spread_ms(now)
                } else {
                    s.frame_window.spread_ms(now)
                }
            })
            .map(round),
        state: Liveness::of(age),
        shared: false,
        size: unknown.then_some(s.last_size),
        head_hex: unknown.then(|| hex_head(&s.head)),
    }
}

/// Bytes as spaced hex pairs (`2f 56 4d 43`).
pub(crate) fn hex_head(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mocap_core::osc::{self, Arg, Message};
    use mocap_core::pcap::Datagrams;

    const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

    fn capture(path: &str) -> Vec<Vec<u8>> {
        let file = std::fs::File::open(format!("{CAPTURES}/{path}")).unwrap();
        let mut d = Datagrams::new(file).unwrap();
        let mut out = Vec::new();
        while let Some(c) = d.next_datagram() {
            out.push(c.unwrap().payload.to_vec());
        }
        out
    }

    fn addr(s: &str) -> Option<SocketAddr> {
        Some(s.parse().unwrap())
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// `n` datagrams at `hz` from `t0`.
    fn play(top: &mut Top, datagrams: &[Vec<u8>], t0: f64, hz: f64, listen: &str, sender: &str) {
        for (i, d) in datagrams.iter().enumerate() {
            top.handle_datagram(secs(t0 + i as f64 / hz), addr(listen), addr(sender), d);
        }
    }

    #[test]
    fn rate_age_and_liveness_follow_now() {
        let mocopi = capture("mocopi/wave-60hz.pcapng");
        let n = mocopi.len().min(120);
        assert!(n >= 61, "{n}");
        let mut top = Top::new();
        play(
            &mut top,
            &mocopi[..n],
            0.0,
            60.0,
            "0.0.0.0:12351",
            "10.0.0.5:50000",
        );
        let end = (n - 1) as f64 / 60.0;
        let rows = top.rows(secs(end));
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.protocol, "mocopi");
        assert!((r.rate_hz - 60.0).abs() <= 1.0, "{}", r.rate_hz);
        let frames = mocopi[..n]
            .iter()
            .filter(|d| mocap_core::smf::parse(d).unwrap().frame().is_some())
            .count();
        assert!(frames >= n - 2, "{frames}");
        assert_eq!(
            (r.datagrams, r.frames, r.errors),
            (n as u64, frames as u64, 0)
        );
        assert_eq!(r.age_ms, 0);
        assert_eq!(r.state, Liveness::Live);
        // The datagrams of the last second, 59 or 60 of them.
        let last: f64 = mocopi[n - 60..n].iter().map(|d| d.len() as f64).sum();
        let size = mocopi[n - 1].len() as f64;
        assert!(
            (r.bytes_per_s - last).abs() <= size,
            "{} {last}",
            r.bytes_per_s
        );
        // The rate is not cumulative: it falls to 0 once the sender stops.
        let r = &top.rows(secs(end + 1.5))[0];
        assert_eq!((r.rate_hz, r.age_ms, r.state), (0.0, 1500, Liveness::Stale));
        assert_eq!(top.rows(secs(end + 5.0))[0].state, Liveness::Quiet);
        assert_eq!(top.rows(secs(end + 0.999))[0].state, Liveness::Live);
    }

    #[test]
    fn health_counts_come_from_the_health_module() {
        // The frame-loss capture: gaps, a duplicate and a restart.
        let d = capture("mocopi/mocopi-frame-loss.pcapng");
        let mut top = Top::new();
        play(&mut top, &d, 0.0, 60.0, "0.0.0.0:12351", "10.0.0.5:50000");
        let mut expected = Health::new();
        for (i, p) in d.iter().enumerate() {
            if let Ok(p) = mocap_core::smf::parse(p)
                && let Some(f) = p.frame()
            {
                let clock = f.uttm.unwrap_or_else(|| f64::from(f.time));
                expected.frame(
                    f.fnum,
                    clock,
                    Some(Duration::from_secs_f64(i as f64 / 60.0)),
                );
            }
        }
        let want = expected.report();
        assert!(want.lost + want.duplicates + want.restarts > 0, "{want:?}");
        let r = &top.rows(secs(d.len() as f64 / 60.0))[0];
        assert_eq!(
            (r.lost, r.duplicates, r.reordered, r.restarts, r.frames),
            (
                want.lost,
                want.duplicates,
                want.reordered,
                want.restarts,
                want.frames
            )
        );
    }

    #[test]
    fn live_link_subjects_of_one_sender_keep_their_own_sequence() {
        // Two phones through one address for the first second; Zoe's has a
        // gap of three frames and one duplicate (docs/livelink.md).
        let d = capture("livelink/face-60fps.pcapng");
        let mut top = Top::new();
        play(&mut top, &d, 0.0, 60.0, "0.0.0.0:11111", "10.0.0.5:1");
        let r = &top.rows(secs(1.0))[0];
        assert_eq!((r.lost, r.duplicates, r.restarts), (3, 1, 0));
    }

    #[test]
    fn two_senders_on_one_port_are_two_rows_and_flagged() {
        let blend = osc::message(&Message::new(
            "/VMC/Ext/Blend/Val",
            vec![Arg::String("Joy".into()), Arg::Float(0.5)],
        ))
        .unwrap();
        let mut top = Top::new();
        let d = vec![blend; 30];
        play(&mut top, &d, 0.0, 60.0, "0.0.0.0:39539", "10.0.0.5:1000");
        play(&mut top, &d, 0.0, 60.0, "0.0.0.0:39539", "10.0.0.6:1000");
        // A third sender on another port is not sharing.
        play(&mut top, &d, 0.0, 60.0, "0.0.0.0:39540", "10.0.0.7:1000");
        let rows = top.rows(secs(0.5));
        assert_eq!(rows.len(), 3);
        let flags: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.listen.unwrap().port(),
                    r.sender.unwrap().ip().to_string(),
                    r.shared,
                )
            })
            .collect();
        assert_eq!(
            flags,
            [
                (39539, "10.0.0.5".into(), true),
                (39539, "10.0.0.6".into(), true),
                (39540, "10.0.0.7".into(), false),
            ]
        );
        // Once one has gone quiet, the other is alone again.
        play(&mut top, &d, 10.0, 60.0, "0.0.0.0:39539", "10.0.0.5:1000");
        let rows = top.rows(secs(10.5));
        assert!(rows.iter().all(|r| !r.shared), "{rows:?}");
    }

    #[test]
    fn unknown_bytes_are_a_stream_with_size_and_hex() {
        let mut top = Top::new();
        let junk = b"\x00\x01\x02hello, this is not mocap at all".to_vec();
        top.handle_datagram(secs(1.0), addr("0.0.0.0:9000"), addr("10.0.0.9:5"), &junk);
        let rows = top.rows(secs(1.0));
        let r = &rows[0];
        assert_eq!(r.protocol, "unknown");
        assert_eq!(r.size, Some(junk.len()));
        assert_eq!(
            r.head_hex.as_deref(),
            Some("00 01 02 68 65 6c 6c 6f 2c 20 74 68 69 73 20 69")
        );
        assert_eq!((r.frames, r.errors), (0, 0));
        let json = serde_json::to_value(r).unwrap();
        assert_eq!(json["protocol"], "unknown");
        assert_eq!(json["size"], junk.len());
    }

    #[test]
    fn one_sender_two_protocols_are_two_streams_and_bad_frames_are_errors() {
        let mut top = Top::new();
        let live = capture("livelink/face-60fps.pcapng");
        let ifm = capture("ifacialmocap/face-60fps.pcapng");
        let (l, s) = ("0.0.0.0:11111", "10.0.0.5:7000");
        play(&mut top, &live[..10], 0.0, 60.0, l, s);
        play(&mut top, &ifm[..10], 0.0, 60.0, l, s);
        // Cut mocopi: sniffed as mocopi, does not decode.
        let mocopi = capture("mocopi/wave-60hz.pcapng");
        let cut = mocopi[0][..40].to_vec();
        top.handle_datagram(secs(0.2), addr(l), addr(s), &cut);
        let rows = top.rows(secs(0.2));
        let got: Vec<_> = rows
            .iter()
            .map(|r| (r.protocol, r.datagrams, r.frames, r.errors))
            .collect();
        assert_eq!(
            got,
            [
                ("mocopi", 1, 0, 1),
                ("ifacialmocap", 10, 10, 0),
                ("livelink", 10, 10, 0)
            ]
        );
        assert!(rows.iter().all(|r| !r.shared), "one sender is not two");
    }

    #[test]
    fn a_vmc_frame_split_over_datagrams_counts_once() {
        // mocopi-dump --vmc's frames of wave-60hz: 240 frames, 3 datagrams each.
        let vmc = capture("vmc/body-60hz.pcapng");
        assert_eq!(vmc.len(), 720);
        let mut top = Top::new();
        play(&mut top, &vmc, 0.0, 180.0, "0.0.0.0:39539", "10.0.0.5:1");
        let r = &top.rows(secs(3.99))[0];
        // The first frame's two leading datagrams count as frames: until
        // the first OK/T the sender's frame marks are not known.
        assert_eq!((r.protocol, r.datagrams, r.frames), ("vmc", 720, 242));
        assert!((r.rate_hz - 60.0).abs() <= 1.0, "{}", r.rate_hz);
        assert!(
            (r.datagrams_per_s - 180.0).abs() <= 1.0,
            "{}",
            r.datagrams_per_s
        );
        let k = r.key;
        let c = &top.stream(&k).unwrap().content;
        assert!(
            c.bones.iter().any(|b| b.name == "Hips"),
            "{:?}",
            c.bones.len()
        );
        assert!(c.addresses.iter().any(|a| a.key == "/VMC/Ext/OK"));
    }

    #[test]
    fn streams_are_bounded() {
        let mut top = Top::new();
        let m = osc::message(&Message::new("/x", vec![])).unwrap();
        for i in 0..(MAX_STREAMS as u16 + 10) {
            let sender = SocketAddr::from(([10, 0, 0, 1], 1000 + i));
            top.handle_datagram(secs(f64::from(i)), addr("0.0.0.0:9"), Some(sender), &m);
        }
        assert_eq!(top.len(), MAX_STREAMS);
        assert_eq!(top.evicted, 10);
        // The least recent went.
        let rows = top.rows(secs(1000.0));
        assert!(rows.iter().all(|r| r.sender.unwrap().port() >= 1010));
    }

    #[test]
    fn drill_down_holds_bones_faces_addresses_and_slots() {
        let mut top = Top::new();
        let mocopi = capture("mocopi/wave-60hz.pcapng");
        let first_frame = mocopi
            .iter()
            .find(|d| mocap_core::smf::parse(d).unwrap().frame().is_some())
            .unwrap();
        let k = top.handle_datagram(
            secs(0.0),
            addr("0.0.0.0:12351"),
            addr("10.0.0.5:1"),
            first_frame,
        );
        let s = top.stream(&k).unwrap();
        assert_eq!(s.content.bones.len(), 27);
        assert_eq!(s.content.bones[0].name, "root");
        let frame = mocap_core::smf::parse(first_frame).unwrap();
        let b0 = frame.frame().unwrap().bones().next().unwrap();
        assert_eq!(s.content.bones[0].pos, b0.pos);

        let live = capture("livelink/face-60fps.pcapng");
        let k = top.handle_datagram(
            secs(0.0),
            addr("0.0.0.0:11111"),
            addr("10.0.0.5:2"),
            &live[0],
        );
        let c = &top.stream(&k).unwrap().content;
        assert_eq!(c.face.len(), 52);
        assert_eq!(c.face[17].0, "JawOpen");
        let p = mocap_core::livelink::parse(&live[0]).unwrap();
        assert_eq!(c.face[17].1, p.face().unwrap().blendshape(17).unwrap());
        assert_eq!(c.angles.len(), 3);

        let ifm = capture("ifacialmocap/face-60fps.pcapng");
        let k = top.handle_datagram(
            secs(0.0),
            addr("0.0.0.0:49983"),
            addr("10.0.0.5:3"),
            &ifm[0],
        );
        let c = &top.stream(&k).unwrap().content;
        let f = mocap_core::ifm::parse(&ifm[0]).unwrap();
        let jaw = mocap_core::ifm::arkit_index("jawOpen").unwrap();
        let want = f.blendshapes[jaw].unwrap() as f32 / 100.0;
        assert_eq!(c.face.iter().find(|(n, _)| n == "jawOpen").unwrap().1, want);

        // VMC: bones, blendshapes, and every address in the list, odd ones too.
        let vmc = osc::bundle(&[
            Message::new(
                "/VMC/Ext/Bone/Pos",
                vec![
                    Arg::String("Head".into()),
                    Arg::Float(0.0),
                    Arg::Float(0.1),
                    Arg::Float(0.0),
                    Arg::Float(0.0),
                    Arg::Float(0.0),
                    Arg::Float(0.0),
                    Arg::Float(1.0),
                ],
            ),
            Message::new(
                "/VMC/Ext/Blend/Val",
                vec![Arg::String("A".into()), Arg::Float(0.25)],
            ),
            Message::new("/VMC/Ext/Blend/Apply", vec![]),
            Message::new("/my/own/thing", vec![Arg::Int(7)]),
        ])
        .unwrap();
        let mut k = None;
        for i in 0..10 {
            k = Some(top.handle_datagram(
                secs(f64::from(i) / 10.0),
                addr("0.0.0.0:39539"),
                addr("10.0.0.5:4"),
                &vmc,
            ));
        }
        let c = &top.stream(&k.unwrap()).unwrap().content;
        assert_eq!(c.bones.len(), 1);
        assert_eq!(
            (c.bones[0].name.as_str(), c.bones[0].pos),
            ("Head", [0.0, 0.1, 0.0])
        );
        assert_eq!(c.face, [("A".to_string(), 0.25)]);
        let keys: Vec<_> = c
            .addresses
            .iter()
            .map(|a| (a.key.as_str(), a.count))
            .collect();
        assert_eq!(
            keys,
            [
                ("/VMC/Ext/Bone/Pos Head", 10),
                ("/VMC/Ext/Blend/Val A", 10),
                ("/VMC/Ext/Blend/Apply", 10),
                ("/my/own/thing", 10)
            ]
        );
        assert_eq!(c.addresses[3].value(), "7");
        assert!((c.addresses[3].rate(secs(0.9)) - 10.0).abs() < 0.5);

        // VRChat trackers: slot positions and rotations.
        let vrc = osc::bundle(&[
            Message::new(
                "/tracking/trackers/1/position",
                vec![Arg::Float(0.0), Arg::Float(0.9), Arg::Float(0.1)],
            ),
            Message::new(
                "/tracking/trackers/1/rotation",
                vec![Arg::Float(0.0), Arg::Float(90.0), Arg::Float(0.0)],
            ),
        ])
        .unwrap();
        let k = top.handle_datagram(secs(0.0), addr("0.0.0.0:9000"), addr("10.0.0.5:5"), &vrc);
        assert_eq!(k.kind, Kind::Known(Protocol::Vrchat));
        let c = &top.stream(&k).unwrap().content;
        assert_eq!(c.slots.len(), 1);
        assert_eq!(c.slots[0].pos, Some([0.0, 0.9, 0.1]));
        assert_eq!(c.slots[0].rot, Some([0.0, 90.0, 0.0]));
        // VMT: index, enable, time offset, position, rotation.
        let vmt = osc::message(&Message::new(
            "/VMT/Room/Unity",
            vec![
                Arg::Int(3),
                Arg::Int(1),
                Arg::Float(0.0),
                Arg::Float(1.0),
                Arg::Float(2.0),
                Arg::Float(3.0),
                Arg::Float(0.0),
                Arg::Float(0.0),
                Arg::Float(0.0),
                Arg::Float(1.0),
            ],
        ))
        .unwrap();
        let k = top.handle_datagram(secs(0.0), addr("0.0.0.0:39570"), addr("10.0.0.5:6"), &vmt);
        assert_eq!(k.kind, Kind::Known(Protocol::Vmt));
        let c = &top.stream(&k).unwrap().content;
        assert_eq!(
            (c.slots[0].name.as_str(), c.slots[0].pos),
            ("3", Some([1.0, 2.0, 3.0]))
        );
    }

    #[test]
    fn no_panic_on_any_bytes() {
        let seeds = [
            capture("mocopi/wave-60hz.pcapng").swap_remove(0),
            capture("livelink/face-60fps.pcapng").swap_remove(0),
            capture("ifacialmocap/face-60fps.pcapng").swap_remove(0),
            b"#bundle\0\0\0\0\0\0\0\0\x01\0\0\0\x10/VMC/Ext/OK\0,i\0\0\0\0\0\x01".to_vec(),
        ];
        let mut rng = mocap_testutil::Rng(7);
        let mut top = Top::new();
        for seed in &seeds {
            for i in 0..5_000u32 {
                let mut d = seed.clone();
                for _ in 0..=rng.below(4) {
                    match rng.below(3) {
                        0 if !d.is_empty() => {
                            let j = rng.below(d.len());
                            d[j] = rng.next().to_le_bytes()[0];
                        }
                        1 => d.truncate(rng.below(d.len() + 1)),
                        _ => d.push(rng.next().to_le_bytes()[0]),
                    }
                }
                top.handle_datagram(secs(f64::from(i) / 1000.0), None, None, &d);
            }
        }
        assert!(!top.rows(secs(10.0)).is_empty());
    }
}
