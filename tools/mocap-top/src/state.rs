//! The pure model behind both outputs: streams keyed by (listen address,
//! sender, protocol), each datagram recognised by content through
//! [`mocap_core::protocol`], with rate over the last second, jitter, the
//! health module's loss/duplicate/reorder/restart counts, age, errors,
//! bytes per second and the newest contents; and the default ports that
//! could not be listened on ([`Taken`]). Time is passed in (`now`, since the
//! run began); nothing here reads a clock or a socket.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use mocap_cli::streams::{StreamCounts, StreamRecord};
use mocap_core::health::{FrameEvent, FrameMarks, Health, HealthReport};
use mocap_core::protocol::{self, Protocol, Stamp};
use serde::Serialize;

use crate::content::{Content, FactValue};
use crate::window::{History, Window};

/// After this long without a datagram a row is marked stale.
pub(crate) const STALE: Duration = Duration::from_secs(1);
/// After this long a row has gone quiet.
pub(crate) const QUIET: Duration = Duration::from_secs(5);
/// Arrivals of all streams the header's rate keeps (a 60 kHz flood for a
/// second).
const ALL_WINDOW: usize = 65_536;
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
    /// A row's member of the stream's frames (a Rokoko actor), from 1 in
    /// the order seen; 0 for the stream itself (what it is stored under).
    pub(crate) member: u16,
}

impl Key {
    /// The stream's own key (without a member).
    fn stream(self) -> Self {
        Self { member: 0, ..self }
    }
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
    /// When the current run of datagrams began (the first after a gap of
    /// [`STALE`] or more): two senders are live at once only when their
    /// runs overlap.
    since: Duration,
    /// Datagrams (and their bytes) over the last second.
    window: Window,
    /// Frames over the last second.
    frame_window: Window,
    /// The rate's last minute, a count a second (what RATE counts).
    history: History,
    /// Numbered frames (mocopi, Live Link Face): the health module's
    /// counts, one per numbered sequence (Live Link Face subject).
    health: Vec<Health>,
    /// Which unnumbered datagrams are frames (VMC marks its ends).
    marks: FrameMarks,
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
            since: now,
            window: Window::new(STREAM_WINDOW),
            frame_window: Window::new(STREAM_WINDOW),
            history: History::default(),
            health: Vec::new(),
            marks: FrameMarks::default(),
            last_size: 0,
            head: Vec::new(),
            content: Content::default(),
        }
    }
}

/// One row of the table and one `top.stream` record: everything a person or
/// a script reads about a stream at `now` (mocap-link's streams are the same
/// record type). Its rate is frames per second over the last second,
/// duplicates left out (datagrams, for unknown bytes and OSC without VMC's
/// frame ends), always given; its jitter is RFC 3550's against the sender's
/// clock for numbered frames, else the mean deviation of arrival gaps over
/// the last second.
pub(crate) type Row = StreamRecord<Where, Seen>;

/// Where a stream of mocap-top comes from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Where {
    #[serde(skip)]
    pub(crate) key: Key,
    pub(crate) listen: Option<SocketAddr>,
    pub(crate) sender: Option<SocketAddr>,
    /// The member of the sender's frames the row is of (a Rokoko actor's
    /// name): each has a row of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) actor: Option<String>,
}

/// What mocap-top sees of a stream beyond its rate and counts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Seen {
    pub(crate) age_ms: u64,
    pub(crate) bytes_per_s: f64,
    /// Datagrams per second over the last second.
    pub(crate) datagrams_per_s: f64,
    pub(crate) state: Liveness,
    /// Another sender is sending to the same listen address at the same
    /// time (both live, their runs of datagrams overlapping).
    pub(crate) shared: bool,
    /// Bone rotations received that were not unit quaternions, and a bone
    /// whose newest rotation is not one.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) non_unit_rotations: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) non_unit_bone: Option<String>,
    /// Unknown streams: the newest datagram's size and first bytes in hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) head_hex: Option<String>,
    /// What the device says of itself, newest value each: a tracker's
    /// board, firmware, battery level (0 to 1, as sent), signal in dBm.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "as_map")]
    pub(crate) device: Vec<(&'static str, FactValue)>,
    /// Tracker slots (SlimeVR sensors, VRChat trackers) with their update
    /// rates: a sensor's rotation rate.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) slots: Vec<SlotRate>,
    /// The rate of each whole second of the last minute, oldest first
    /// (the sparklines; not a record field).
    #[serde(skip)]
    pub(crate) history: Vec<u32>,
}

/// A tracker slot's updates per second.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct SlotRate {
    pub(crate) name: String,
    pub(crate) rate_hz: f64,
}

fn as_map<S: serde::Serializer>(
    facts: &[(&'static str, FactValue)],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_map(facts.iter().map(|(k, v)| (k, v)))
}

/// Every stream seen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Top {
    streams: BTreeMap<Key, Stream>,
    /// Streams dropped to keep within [`MAX_STREAMS`].
    pub(crate) evicted: u64,
    /// Datagrams taken in.
    pub(crate) datagrams: u64,
    /// Streams removed after being quiet for the expiry time, or cleared.
    pub(crate) expired: u64,
    /// Every datagram's arrival, whichever stream (kept or not) it was of.
    all: Option<Window>,
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
        self.all
            .get_or_insert_with(|| Window::new(ALL_WINDOW))
            .push(now, payload.len());
        let kind = protocol::recognise(payload).map_or(Kind::Unknown, |(p, _)| Kind::Known(p));
        let key = Key {
            listen,
            sender,
            kind,
            member: 0,
        };
        if !self.streams.contains_key(&key) && self.streams.len() >= MAX_STREAMS {
            self.evict();
        }
        let s = self.streams.entry(key).or_insert_with(|| Stream::new(now));
        s.datagrams += 1;
        s.bytes += payload.len() as u64;
        if now.saturating_sub(s.last) >= STALE {
            s.since = now;
        }
        s.last = now.max(s.last);
        s.window.push(now, payload.len());
        s.last_size = payload.len();
        if kind == Kind::Unknown {
            s.history.push(now);
            s.head.clear();
            s.head
                .extend_from_slice(payload.get(..UNKNOWN_HEAD).unwrap_or(payload));
            return key;
        }
        let Kind::Known(p) = kind else { return key };
        match s.content.take(p, payload, now) {
            stamp @ (Stamp::Numbered { part, .. } | Stamp::Clocked { part, .. }) => {
                s.frames += 1;
                let part = s.content.part_index(part);
                if s.health.len() <= part {
                    s.health.resize_with(part + 1, Health::new);
                }
                let event = s
                    .health
                    .get_mut(part)
                    .and_then(|h| h.stamp(stamp, Some(now)));
                // A copy of a frame is traffic, not motion: counted in
                // `duplicates` and bytes/s, left out of the frame rate.
                if event != Some(FrameEvent::Duplicate) {
                    s.frame_window.push(now, 0);
                    s.history.push(now);
                }
            }
            Stamp::Unnumbered { ends_frame } => {
                if s.marks.is_frame(ends_frame) {
                    s.frames += 1;
                    s.frame_window.push(now, 0);
                    s.history.push(now);
                }
            }
            Stamp::Skeleton | Stamp::Sensor => {}
            Stamp::Handshake => s.health.iter_mut().for_each(Health::handshake),
            Stamp::Error => s.errors += 1,
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
        if let Some(all) = &mut self.all {
            all.forget(now);
        }
    }

    /// Removes the streams not heard from for `after` or longer.
    pub(crate) fn expire(&mut self, now: Duration, after: Duration) {
        let before = self.streams.len();
        self.streams
            .retain(|_, s| now.saturating_sub(s.last) < after);
        self.expired += (before - self.streams.len()) as u64;
    }

    /// Removes the quiet streams (the `c` key).
    pub(crate) fn clear_quiet(&mut self, now: Duration) {
        self.expire(now, QUIET);
    }

    /// Datagrams per second over the last second, of every stream: those
    /// evicted past [`MAX_STREAMS`] too.
    pub(crate) fn datagrams_per_s(&self, now: Duration) -> f64 {
        self.all.as_ref().map_or(0.0, |w| w.rate(now))
    }

    /// One row per stream: the ones not yet quiet first, then the quiet
    /// ones, each part in a stable order (listen port, address, protocol,
    /// sender), so a screen keeps its layout as numbers change and a live
    /// performer is not buried under quiet strangers.
    pub(crate) fn rows(&self, now: Duration) -> Vec<Row> {
        let mut rows: Vec<Row> = self
            .streams
            .iter()
            .flat_map(|(k, s)| rows_of(*k, s, now))
            .collect();
        let order = |r: &Row| {
            (
                r.own.state == Liveness::Quiet,
                r.from.key.listen.map(|l| l.port()),
                r.from.key.listen,
                r.from.key.kind,
                r.from.key.sender,
                r.from.key.member,
            )
        };
        rows.sort_by_key(order);
        // Two senders into one address at once: the classic "avatar
        // twitches". One app restarting on a new source port is not two:
        // the old run ended before the new one began.
        let live: Vec<(Key, Duration, Duration)> = self
            .streams
            .iter()
            .filter(|(_, s)| Liveness::of(now.saturating_sub(s.last)) == Liveness::Live)
            .map(|(k, s)| (*k, s.since, s.last))
            .collect();
        for r in &mut rows {
            let Some((_, since, last)) = live.iter().find(|(k, ..)| *k == r.from.key.stream())
            else {
                continue;
            };
            r.own.shared = live.iter().any(|(k, s, l)| {
                k.listen == r.from.key.listen
                    && k.sender != r.from.key.sender
                    && s <= last
                    && since <= l
            });
        }
        rows
    }

    /// The stream behind `key`.
    pub(crate) fn stream(&self, key: &Key) -> Option<&Stream> {
        self.streams.get(&key.stream())
    }

    /// How many streams there are.
    pub(crate) fn len(&self) -> usize {
        self.streams.len()
    }
}

/// A stream's rows: one, or one per member of its frames (Rokoko actors),
/// each with the frames it was in, its own rate and age, and the sender's
/// datagrams, health (members share their frames' clock) and errors.
fn rows_of(key: Key, s: &Stream, now: Duration) -> Vec<Row> {
    let whole = row(key, s, now);
    if s.content.members.is_empty() {
        return vec![whole];
    }
    let round = |x: f64| (x * 1000.0).round() / 1000.0 + 0.0;
    (1..)
        .zip(&s.content.members)
        .map(|(i, m)| {
            let age = now.saturating_sub(m.last);
            let mut r = whole.clone();
            r.from.key.member = i;
            r.from.actor = Some(m.name.clone());
            r.rate_hz = Some(round(m.window.rate(now)));
            r.counts.frames = m.frames;
            r.own.age_ms = u64::try_from(age.as_millis()).unwrap_or(u64::MAX);
            r.own.state = Liveness::of(age);
            r.own.datagrams_per_s = r.rate_hz.unwrap_or_default();
            r.own.history = m.history.samples(now);
            r
        })
        .collect()
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
        protocol: key.kind.key().into(),
        from: Where {
            key,
            listen: key.listen,
            sender: key.sender,
            actor: None,
        },
        rate_hz: Some(round(if unknown {
            s.window.rate(now)
        } else {
            s.frame_window.rate(now)
        })),
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
        counts: StreamCounts::new(
            s.datagrams,
            s.frames,
            s.errors,
            (!s.health.is_empty()).then_some(&h),
        ),
        own: Seen {
            age_ms: u64::try_from(age.as_millis()).unwrap_or(u64::MAX),
            bytes_per_s: round(s.window.bytes_per_s(now)),
            datagrams_per_s: round(s.window.rate(now)),
            state: Liveness::of(age),
            shared: false,
            non_unit_rotations: s.content.non_unit,
            non_unit_bone: (s.content.non_unit > 0)
                .then(|| s.content.bones.iter().find(|b| !b.unit()))
                .flatten()
                .map(|b| b.name.clone()),
            size: unknown.then_some(s.last_size),
            head_hex: unknown.then(|| hex_head(&s.head)),
            device: s.content.device.clone(),
            slots: s
                .content
                .slots
                .iter()
                .map(|slot| SlotRate {
                    name: slot.name.clone(),
                    rate_hz: round(slot.rate(now)),
                })
                .collect(),
            history: s.history.samples(now),
        },
    }
}

#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether `row` has `filter` (lower case) in its protocol, port, sender or
/// actor: the `/` key. An empty filter matches every row.
pub(crate) fn matches(row: &Row, filter: &str) -> bool {
    if filter.is_empty() {
        return true;
    }
    let has = |text: &str| text.to_lowercase().contains(filter);
    has(row.from.key.kind.key())
        || has(row.from.key.kind.name())
        || row.from.listen.is_some_and(|l| has(&l.to_string()))
        || row.from.sender.is_some_and(|s| has(&s.to_string()))
        || row.from.actor.as_deref().is_some_and(has)
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

/// A port of the defaults that could not be listened on.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Taken {
    pub(crate) listen: SocketAddr,
    pub(crate) protocol: &'static str,
    pub(crate) reason: String,
    /// The program holding the port, as the OS says (`NAME (pid N)`), or
    /// `unknown`; only when the port is in use.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) program: Option<String>,
}

impl Taken {
    /// What it means and how to watch that port anyway.
    pub(crate) fn advice(&self) -> String {
        let port = self.listen.port();
        let program = self
            .program
            .as_ref()
            .map_or_else(String::new, |p| format!(" ({p})"));
        format!(
            "{} port {port} not watched: {}{program}; to watch it anyway, move that program to \
             another port and run `mocap-top -l {port} --to 127.0.0.1:OTHER`, or capture it: \
             `tcpdump -i any -U -w - udp port {port} 2>/dev/null | mocap-top -r -`",
            self.protocol, self.reason
        )
    }
}

/// A SlimeVR tracker on 10.0.0.51:4210 to 0.0.0.0:6969, for tests: its
/// handshake (board 9, MCU 2, firmware 0.6.3) at 0 s, sensor 0 at 100 Hz
/// and sensor 1 at 50 Hz up to 2 s, battery (3.9 V, 0.87) at 1.5 s and
/// signal (-58 dBm) at 1.6 s.
#[cfg(test)]
pub(crate) fn slimevr_tracker(top: &mut Top) {
    let secs = Duration::from_secs_f64;
    let packet = |kind: u32, number: u64, body: &[u8]| {
        let mut d = kind.to_be_bytes().to_vec();
        d.extend(number.to_be_bytes());
        d.extend(body);
        d
    };
    let mut hello = Vec::new();
    for v in [9i32, 12, 2, 0, 0, 0, 22] {
        hello.extend(v.to_be_bytes());
    }
    hello.push(5);
    hello.extend(b"0.6.3");
    hello.extend([0x3c, 0x61, 0x05, 0x12, 0x34, 0x56]);
    let (listen, tracker) = ("0.0.0.0:6969".parse().ok(), "10.0.0.51:4210".parse().ok());
    top.handle_datagram(secs(0.0), listen, tracker, &packet(3, 0, &hello));
    let mut number = 1;
    for k in 0..200u32 {
        // Sensor 0 every 10 ms, sensor 1 every 20 ms.
        for sensor in [0u8, 1].into_iter().filter(|s| *s == 0 || k % 2 == 0) {
            let mut body = vec![sensor, 1];
            for c in [0.0f32, 0.0, 0.0, 1.0] {
                body.extend(c.to_be_bytes());
            }
            body.push(0);
            let t = 0.01 + f64::from(k) / 100.0;
            top.handle_datagram(secs(t), listen, tracker, &packet(17, number, &body));
            number += 1;
        }
    }
    let mut battery = 3.9f32.to_be_bytes().to_vec();
    battery.extend(0.87f32.to_be_bytes());
    top.handle_datagram(secs(1.5), listen, tracker, &packet(12, number, &battery));
    top.handle_datagram(
        secs(1.6),
        listen,
        tracker,
        &packet(19, number + 1, &[255, 0xc6]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use mocap_core::osc::{self, Arg, Message};
    use mocap_testutil::capture_payloads as capture;

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

    /// Found in review (issue 59): a protocol added to the registry showed
    /// every datagram as an error in mocap-top until its decode was wired
    /// in by hand. Now every protocol's real datagrams decode into frames
    /// and into the drill-down its registry row names; only the datagrams
    /// cut on purpose in a capture (sniffed as only likely) are errors.
    /// Each arrives on a port of no protocol's: recognised by content.
    #[test]
    fn every_protocol_of_the_registry_is_decoded_not_counted_as_errors() {
        use mocap_core::protocol::{Carries, Confidence};
        for (i, p) in Protocol::ALL.into_iter().enumerate() {
            let d = mocap_testutil::samples::of(p.key()).unwrap_or_else(|| {
                panic!("no real datagrams of {p}: add them to mocap_testutil::samples")
            });
            let cut = d
                .iter()
                .filter(|d| p.sniff(d) == Some(Confidence::Likely))
                .count() as u64;
            let mut top = Top::new();
            let port = 45_000 + i;
            assert!(
                Protocol::ALL
                    .iter()
                    .all(|q| !q.default_ports().contains(&(port as u16)))
            );
            play(
                &mut top,
                &d,
                0.0,
                60.0,
                &format!("0.0.0.0:{port}"),
                "10.0.0.5:1",
            );
            let rows = top.rows(secs(d.len() as f64 / 60.0));
            let row = rows
                .iter()
                .find(|r| r.from.key.kind == Kind::Known(p))
                .unwrap_or_else(|| panic!("{p}: {rows:?}"));
            assert_eq!(
                (row.counts.datagrams, row.counts.errors),
                (d.len() as u64, cut),
                "{p}"
            );
            assert!(row.counts.frames > 0, "{p}");
            let c = &top.stream(&row.from.key).unwrap().content;
            let shown = match p.spec().carries {
                Carries::Body => c.bones.len(),
                Carries::Face => c.face.len(),
                Carries::Trackers => c.slots.len(),
            };
            assert!(shown > 0, "{p}: nothing in its drill-down");
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
        assert!((r.rate_hz.unwrap() - 60.0).abs() <= 1.0, "{:?}", r.rate_hz);
        let frames = mocopi[..n]
            .iter()
            .filter(|d| mocap_core::smf::parse(d).unwrap().frame().is_some())
            .count();
        assert!(frames >= n - 2, "{frames}");
        assert_eq!(
            (r.counts.datagrams, r.counts.frames, r.counts.errors),
            (n as u64, frames as u64, 0)
        );
        assert_eq!(r.own.age_ms, 0);
        assert_eq!(r.own.state, Liveness::Live);
        // The datagrams of the last second, 59 or 60 of them.
        let last: f64 = mocopi[n - 60..n].iter().map(|d| d.len() as f64).sum();
        let size = mocopi[n - 1].len() as f64;
        assert!(
            (r.own.bytes_per_s - last).abs() <= size,
            "{} {last}",
            r.own.bytes_per_s
        );
        // The rate is not cumulative: it falls to 0 once the sender stops.
        let r = &top.rows(secs(end + 1.5))[0];
        assert_eq!(
            (r.rate_hz, r.own.age_ms, r.own.state),
            (Some(0.0), 1500, Liveness::Stale)
        );
        assert_eq!(top.rows(secs(end + 5.0))[0].own.state, Liveness::Quiet);
        assert_eq!(top.rows(secs(end + 0.999))[0].own.state, Liveness::Live);
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
                    mocap_core::health::sender_clock(clock),
                    Some(Duration::from_secs_f64(i as f64 / 60.0)),
                );
            }
        }
        let want = expected.report();
        assert!(want.lost + want.duplicates + want.restarts > 0, "{want:?}");
        let r = &top.rows(secs(d.len() as f64 / 60.0))[0];
        assert_eq!(
            (
                r.counts.lost,
                r.counts.duplicates,
                r.counts.reordered,
                r.counts.restarts,
                r.counts.frames
            ),
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
        assert_eq!(
            (r.counts.lost, r.counts.duplicates, r.counts.restarts),
            (3, 1, 0)
        );
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
                    r.from.listen.unwrap().port(),
                    r.from.sender.unwrap().ip().to_string(),
                    r.own.shared,
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
        assert!(rows.iter().all(|r| !r.own.shared), "{rows:?}");
    }

    #[test]
    fn unknown_bytes_are_a_stream_with_size_and_hex() {
        let mut top = Top::new();
        let junk = b"\x00\x01\x02hello, this is not mocap at all".to_vec();
        top.handle_datagram(secs(1.0), addr("0.0.0.0:9000"), addr("10.0.0.9:5"), &junk);
        let rows = top.rows(secs(1.0));
        let r = &rows[0];
        assert_eq!(r.protocol, "unknown");
        assert_eq!(r.own.size, Some(junk.len()));
        assert_eq!(
            r.own.head_hex.as_deref(),
            Some("00 01 02 68 65 6c 6c 6f 2c 20 74 68 69 73 20 69")
        );
        assert_eq!((r.counts.frames, r.counts.errors), (0, 0));
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
            .map(|r| {
                (
                    &*r.protocol,
                    r.counts.datagrams,
                    r.counts.frames,
                    r.counts.errors,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("mocopi", 1, 0, 1),
                ("ifacialmocap", 10, 10, 0),
                ("livelink", 10, 10, 0)
            ]
        );
        assert!(rows.iter().all(|r| !r.own.shared), "one sender is not two");
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
        assert_eq!(
            (&*r.protocol, r.counts.datagrams, r.counts.frames),
            ("vmc", 720, 242)
        );
        assert!((r.rate_hz.unwrap() - 60.0).abs() <= 1.0, "{:?}", r.rate_hz);
        assert!(
            (r.own.datagrams_per_s - 180.0).abs() <= 1.0,
            "{}",
            r.own.datagrams_per_s
        );
        let k = r.from.key;
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
        assert!(rows.iter().all(|r| r.from.sender.unwrap().port() >= 1010));
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

    fn blend() -> Vec<u8> {
        osc::message(&Message::new(
            "/VMC/Ext/Blend/Val",
            vec![Arg::String("Joy".into()), Arg::Float(0.5)],
        ))
        .unwrap()
    }

    #[test]
    fn live_rows_come_before_quiet_ones() {
        let mut top = Top::new();
        let b = blend();
        // Strangers on low ports, heard once long ago.
        for i in 0..20u16 {
            let sender = SocketAddr::from(([10, 0, 0, 9], 2000 + i));
            top.handle_datagram(secs(0.0), addr("0.0.0.0:9000"), Some(sender), &b);
        }
        // The performer on a higher port, live now.
        play(
            &mut top,
            &vec![b; 30],
            9.5,
            60.0,
            "0.0.0.0:39539",
            "10.0.0.5:1",
        );
        let rows = top.rows(secs(10.0));
        assert_eq!(rows.len(), 21);
        assert_eq!(rows[0].from.listen.unwrap().port(), 39539);
        assert_eq!(rows[0].own.state, Liveness::Live);
        assert!(rows[1..].iter().all(|r| r.own.state == Liveness::Quiet));
        // Among the quiet ones the order stays the stable one.
        let ports: Vec<u16> = rows[1..]
            .iter()
            .map(|r| r.from.sender.unwrap().port())
            .collect();
        assert!(ports.windows(2).all(|w| w[0] < w[1]), "{ports:?}");
    }

    #[test]
    fn quiet_streams_expire_and_c_clears_them() {
        let mut top = Top::new();
        let b = blend();
        top.handle_datagram(secs(0.0), addr("0.0.0.0:9000"), addr("10.0.0.9:1"), &b);
        top.handle_datagram(secs(50.0), addr("0.0.0.0:9000"), addr("10.0.0.9:2"), &b);
        top.handle_datagram(secs(59.5), addr("0.0.0.0:9000"), addr("10.0.0.9:3"), &b);
        top.expire(secs(59.9), Duration::from_secs(60));
        assert_eq!((top.len(), top.expired), (3, 0));
        top.expire(secs(60.0), Duration::from_secs(60));
        assert_eq!((top.len(), top.expired), (2, 1));
        // `c`: the quiet one (10 s) goes, the stale one (0.5 s) stays.
        top.clear_quiet(secs(60.0));
        assert_eq!((top.len(), top.expired), (1, 2));
        assert_eq!(top.rows(secs(60.0))[0].from.sender, addr("10.0.0.9:3"));
    }

    #[test]
    fn the_rate_counts_every_datagram_not_only_kept_streams() {
        // A flood from 10 000 source ports at 40 kHz: 256 rows are kept, the
        // rate is of every datagram.
        let mut top = Top::new();
        let b = blend();
        for i in 0..40_000u32 {
            let port = u16::try_from(10_000 + i % 10_000).unwrap();
            let sender = SocketAddr::from(([10, 0, 0, 9], port));
            top.handle_datagram(
                secs(f64::from(i) / 40_000.0),
                addr("0.0.0.0:9000"),
                Some(sender),
                &b,
            );
        }
        let now = secs(39_999.0 / 40_000.0);
        assert_eq!(top.len(), MAX_STREAMS);
        let rate = top.datagrams_per_s(now);
        assert!((rate - 40_000.0).abs() < 100.0, "{rate}");
        let rows_sum: f64 = top.rows(now).iter().map(|r| r.own.datagrams_per_s).sum();
        assert!(rows_sum < 2_000.0, "{rows_sum}");
        assert_eq!(top.datagrams_per_s(now + secs(1.5)), 0.0);
        assert_eq!(Top::new().datagrams_per_s(now), 0.0);
    }

    #[test]
    fn one_app_restarting_on_a_new_port_is_not_two_senders() {
        let mut top = Top::new();
        let d = vec![blend(); 60];
        // Old source port until 1.0 s, the new one from 1.02 s.
        play(&mut top, &d, 0.0, 60.0, "0.0.0.0:39539", "10.0.0.5:1000");
        play(&mut top, &d, 1.02, 60.0, "0.0.0.0:39539", "10.0.0.5:1001");
        for t in [1.05, 1.5, 2.0, 3.0, 5.0] {
            let rows = top.rows(secs(t));
            assert!(rows.iter().all(|r| !r.own.shared), "at {t}: {rows:?}");
        }
        // Two live at once are two, as long as both are live.
        play(&mut top, &d, 10.0, 60.0, "0.0.0.0:39539", "10.0.0.5:1000");
        play(&mut top, &d, 10.5, 60.0, "0.0.0.0:39539", "10.0.0.5:1001");
        assert!(top.rows(secs(11.0)).iter().all(|r| r.own.shared));
        // 1000 stopped at 11.0: once it is stale, 1001 is alone.
        assert!(top.rows(secs(12.1)).iter().all(|r| !r.own.shared));
    }

    #[test]
    fn a_filter_matches_protocol_port_or_sender() {
        let mut top = Top::new();
        let b = blend();
        let mocopi = capture("mocopi/wave-60hz.pcapng");
        top.handle_datagram(secs(0.0), addr("0.0.0.0:39539"), addr("10.0.0.5:1"), &b);
        top.handle_datagram(
            secs(0.0),
            addr("0.0.0.0:12351"),
            addr("192.168.1.7:50000"),
            &mocopi[1],
        );
        let rows = top.rows(secs(0.0));
        let hits = |f: &str| -> Vec<u16> {
            rows.iter()
                .filter(|r| matches(r, f))
                .map(|r| r.from.listen.unwrap().port())
                .collect()
        };
        assert_eq!(hits(""), [12351, 39539]);
        assert_eq!(hits("vmc"), [39539]);
        assert_eq!(hits("mocopi"), [12351]);
        assert_eq!(hits("3953"), [39539]);
        assert_eq!(hits("192.168."), [12351]);
        assert_eq!(hits("50000"), [12351]);
        assert!(hits("livelink").is_empty());
    }

    #[test]
    fn loss_is_a_percentage_of_the_frames_expected() {
        let d = capture("mocopi/mocopi-frame-loss.pcapng");
        let mut top = Top::new();
        play(&mut top, &d, 0.0, 60.0, "0.0.0.0:12351", "10.0.0.5:50000");
        let r = &top.rows(secs(d.len() as f64 / 60.0))[0];
        assert!(r.counts.lost > 0);
        let want = r.counts.lost as f64 * 100.0
            / (r.counts.frames - r.counts.duplicates + r.counts.lost) as f64;
        assert!((r.counts.loss_pct.unwrap() - want).abs() < 0.001, "{r:?}");
        // Not numbered: no percentage.
        let mut top = Top::new();
        top.handle_datagram(
            secs(0.0),
            addr("0.0.0.0:39539"),
            addr("10.0.0.5:1"),
            &blend(),
        );
        assert_eq!(top.rows(secs(0.0))[0].counts.loss_pct, None);
    }

    #[test]
    fn a_vmc_rotation_that_is_not_a_unit_quaternion_is_flagged() {
        let bone = |name: &str, q: [f32; 4]| {
            osc::message(&Message::new(
                "/VMC/Ext/Bone/Pos",
                [Arg::String(name.into())]
                    .into_iter()
                    .chain([0.0, 1.0, 0.0].map(Arg::Float))
                    .chain(q.map(Arg::Float))
                    .collect(),
            ))
            .unwrap()
        };
        let mut top = Top::new();
        let (l, s) = ("0.0.0.0:39539", "10.0.0.5:1");
        // Within 1e-2 of unit: fine.
        top.handle_datagram(
            secs(0.0),
            addr(l),
            addr(s),
            &bone("Hips", [0.0, 0.0, 0.0, 1.005]),
        );
        let r = &top.rows(secs(0.0))[0];
        assert_eq!(
            (r.own.non_unit_rotations, r.own.non_unit_bone.as_deref()),
            (0, None)
        );
        // Euler degrees sent as a quaternion.
        top.handle_datagram(
            secs(0.1),
            addr(l),
            addr(s),
            &bone("Spine", [10.0, 20.0, 0.0, 1.0]),
        );
        top.handle_datagram(
            secs(0.2),
            addr(l),
            addr(s),
            &bone("Head", [0.0, 0.0, 0.0, f32::NAN]),
        );
        let r = &top.rows(secs(0.2))[0];
        assert_eq!(
            (r.own.non_unit_rotations, r.own.non_unit_bone.as_deref()),
            (2, Some("Spine"))
        );
        // Once Spine is sent right, Head (NaN) is the one named.
        top.handle_datagram(
            secs(0.3),
            addr(l),
            addr(s),
            &bone("Spine", [0.0, 0.0, 0.0, 1.0]),
        );
        let r = &top.rows(secs(0.3))[0];
        assert_eq!(
            (r.own.non_unit_rotations, r.own.non_unit_bone.as_deref()),
            (2, Some("Head"))
        );
        // The captures' rotations are unit.
        let mut top = Top::new();
        play(&mut top, &capture("vmc/body-60hz.pcapng"), 0.0, 180.0, l, s);
        play(
            &mut top,
            &capture("mocopi/wave-60hz.pcapng"),
            0.0,
            60.0,
            "0.0.0.0:12351",
            s,
        );
        assert!(
            top.rows(secs(4.0))
                .iter()
                .all(|r| r.own.non_unit_rotations == 0)
        );
    }

    /// Issue 61: every Rokoko actor is a row of its own, with the frames it
    /// was in; one that left the scene goes stale while the other is live.
    #[test]
    fn every_rokoko_actor_is_a_row_of_its_own() {
        let frame = |k: usize, names: &[&str]| {
            let actors: Vec<String> = names
                .iter()
                .map(|n| {
                    format!(
                        r#"{{"name":"{n}","body":{{"hip":{{"position":{{"x":0,"y":1,"z":0}},
                        "rotation":{{"x":0,"y":0,"z":0,"w":1}}}}}}}}"#
                    )
                })
                .collect();
            format!(
                r#"{{"version":3,"fps":60,"scene":{{"timestamp":{},"actors":[{}],"props":[]}}}}"#,
                k as f64 / 60.0,
                actors.join(",")
            )
            .into_bytes()
        };
        let both: Vec<Vec<u8>> = (0..60).map(|k| frame(k, &["alice", "bob"])).collect();
        let alone: Vec<Vec<u8>> = (60..120).map(|k| frame(k, &["alice"])).collect();
        let mut top = Top::new();
        play(
            &mut top,
            &both,
            0.0,
            60.0,
            "0.0.0.0:14043",
            "10.0.0.40:53000",
        );
        play(
            &mut top,
            &alone,
            1.0,
            60.0,
            "0.0.0.0:14043",
            "10.0.0.40:53000",
        );
        let rows = top.rows(secs(2.0));
        assert_eq!(rows.len(), 2, "{rows:#?}");
        let [alice, bob] = [&rows[0], &rows[1]];
        assert_eq!(alice.from.actor.as_deref(), Some("alice"));
        assert_eq!(bob.from.actor.as_deref(), Some("bob"));
        assert_eq!((alice.counts.frames, bob.counts.frames), (120, 60));
        // The sender's datagrams and clock health on both.
        assert_eq!((alice.counts.datagrams, bob.counts.datagrams), (120, 120));
        assert!((59.0..=61.0).contains(&alice.rate_hz.unwrap()), "{alice:?}");
        assert_eq!(bob.rate_hz, Some(0.0));
        assert_eq!(
            (alice.own.state, bob.own.state),
            (Liveness::Live, Liveness::Stale)
        );
        assert_ne!(alice.from.key, bob.from.key);
        // Both rows open the same stream.
        assert!(top.stream(&bob.from.key).is_some());
        let json = serde_json::to_value(alice).unwrap();
        assert_eq!(json["actor"], "alice");
        assert_eq!(json["device"]["fps"], 60);
        assert!(matches(bob, "bob") && !matches(alice, "bob"));
    }

    /// Issue 61: a SlimeVR tracker's record carries what it says of itself
    /// (board, firmware, battery, signal) and each sensor's rotation rate.
    #[test]
    fn a_trackers_record_has_its_battery_signal_and_sensor_rates() {
        let mut top = Top::new();
        slimevr_tracker(&mut top);
        let rows = top.rows(secs(2.0));
        let json = serde_json::to_value(&rows[0]).unwrap();
        assert_eq!(json["protocol"], "slimevr");
        let device = &json["device"];
        assert_eq!(device["board"], "SlimeVR");
        assert_eq!(device["mcu"], "ESP32");
        assert_eq!(device["firmware"], "0.6.3");
        assert_eq!(device["mac"], "3c:61:05:12:34:56");
        // As sent: f32 0.87 read exactly as f64.
        assert_eq!(device["battery_level"], f64::from(0.87f32));
        assert_eq!(device["battery_v"], f64::from(3.9f32));
        assert_eq!(device["rssi_dbm"], -58);
        let slots = json["slots"].as_array().unwrap();
        assert_eq!(slots.len(), 2, "{json}");
        assert_eq!(
            (slots[0]["name"].as_str(), slots[1]["name"].as_str()),
            (Some("0"), Some("1"))
        );
        let rate = |i: usize| slots[i]["rate_hz"].as_f64().unwrap();
        assert!((99.0..=101.0).contains(&rate(0)), "{slots:?}");
        assert!((49.0..=51.0).contains(&rate(1)), "{slots:?}");
    }

    #[test]
    fn no_panic_on_any_bytes() {
        let seeds = [
            capture("mocopi/wave-60hz.pcapng").swap_remove(0),
            capture("livelink/face-60fps.pcapng").swap_remove(0),
            capture("ifacialmocap/face-60fps.pcapng").swap_remove(0),
            b"#bundle\0\0\0\0\0\0\0\0\x01\0\0\0\x10/VMC/Ext/OK\0,i\0\0\0\0\0\x01".to_vec(),
        ];
        let mut top = Top::new();
        let mut i = 0u32;
        mocap_testutil::sweep::mutants(&seeds, mocap_testutil::Rng(7), 20_000, |d| {
            // The clock starts over every 5000 datagrams: one that goes back
            // must not panic either.
            top.handle_datagram(secs(f64::from(i % 5000) / 1000.0), None, None, d);
            i += 1;
        });
        assert!(!top.rows(secs(10.0)).is_empty());
    }
}
