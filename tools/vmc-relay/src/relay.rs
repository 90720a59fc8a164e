//! `vmc-relay`: forward VMC (OSC over UDP) to several receivers, raw or
//! filtered per destination, and show what passes. The binary parses flags
//! into [`Options`] and calls [`run`].

use mocap_cli::senders::Senders;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde::Serialize;

use mocap_cli::args::WriteArgs;
use mocap_cli::output::{Human, report, round3, summary_kind};
use mocap_cli::prelude::*;
use mocap_cli::records::{ErrorRecord, VmcOut};
use mocap_cli::source::{Datagram, Event, Input, InputError, Source};
use mocap_cli::status::Activity;
use mocap_cli::take::TakeSummary;
use mocap_cli::view::{FrameView, ViewArgs};
use mocap_core::osc;
use mocap_core::vmc::{
    self, Limiter, Message, Rules, TrackerCounters, TrackerFormat, TrackerOptions, TrackerStream,
};

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "vmc-relay";
/// How often a bad datagram from one source is reported on stderr.
const REPORT_EVERY: Duration = Duration::from_secs(5);

/// One receiver and what it gets.
#[derive(Debug)]
pub(crate) struct Destination {
    /// Where to send.
    pub(crate) addr: SocketAddr,
    /// Its filters; empty rules forward bytes untouched.
    pub(crate) rules: Rules,
    /// `--as vrchat|vmt`: trackers solved from the (filtered) body instead of VMC.
    pub(crate) trackers: Option<TrackerOptions>,
}

/// Everything `vmc-relay` was asked to do.
#[derive(Debug)]
pub(crate) struct Options {
    /// Socket or capture file.
    pub(crate) input: Input,
    /// `-w`.
    pub(crate) record: WriteArgs,
    /// Receivers.
    pub(crate) destinations: Vec<Destination>,
    /// `--allow`: who may send.
    pub(crate) allow: mocap_cli::allow::AllowArgs,
    /// Drop datagrams above this rate (all sources together), counted.
    pub(crate) max_pps: Option<f64>,
    /// Print what passes.
    pub(crate) dump: bool,
    /// Format of the dump and the summary.
    pub(crate) format: Format,
    /// `--count` (datagrams), `--duration`.
    pub(crate) stop: StopArgs,
    /// `--quiet`, `--stats-interval`.
    pub(crate) log: LogArgs,
    /// `--topspeed`: forward file input as fast as it is read, not at its
    /// recorded timing.
    pub(crate) topspeed: bool,
    /// `--bvh FILE`: record what arrives as BVH, one take per sender.
    pub(crate) bvh: Option<mocap_cli::take::BvhOut>,
    /// `--every-frame`: the human dump unpaced on a terminal too.
    pub(crate) view: ViewArgs,
}

#[derive(Default, Clone, Serialize)]
struct SourceStats {
    datagrams: u64,
    bytes: u64,
    decode_errors: u64,
    flooded: u64,
    #[serde(skip)]
    last_report: Option<Instant>,
}

impl SourceStats {
    /// Adds an evicted sender's counters to the aggregate.
    fn fold(all: &mut Self, gone: Self) {
        all.datagrams += gone.datagrams;
        all.bytes += gone.bytes;
        all.decode_errors += gone.decode_errors;
        all.flooded += gone.flooded;
    }
}

/// How many senders a periodic `stats` record lists (the busiest), so the
/// line stays readable with hundreds of senders.
const STATS_SENDERS: usize = 8;

#[derive(Default, Clone, Serialize)]
struct DestStats {
    datagrams: u64,
    bytes: u64,
    messages: u64,
    filtered: u64,
    rate_limited: u64,
    send_errors: u64,
    /// `--as vrchat|vmt`: frames solved and sent as trackers, and frames the
    /// tracker rate cap left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    trackers: Option<TrackerCounters>,
}

struct Dest {
    addr: SocketAddr,
    /// Its own socket and send counts (`sends` in records).
    link: mocap_cli::net::Link,
    rules: Rules,
    limiter: Option<Limiter>,
    stats: DestStats,
    /// `--smooth`: one smoother per source, with when it was last fed.
    smoothers: Senders<(vmc::Smoother, Duration)>,
    /// `--as vrchat|vmt`: the options, and one tracker stream per source.
    trackers: Option<(TrackerOptions, Senders<TrackerStream>)>,
    /// Rules that need only addresses and names: applied to the borrowed
    /// bytes of a canonical packet, without decoding it (issue 40).
    lean: Option<vmc::Lean>,
}

/// A source silent this long loses its smoothing state (it starts afresh).
const SMOOTH_STALE: Duration = Duration::from_secs(2);

impl Dest {
    /// Whether datagrams pass untouched.
    fn is_raw(&self) -> bool {
        self.rules.is_raw() && self.trackers.is_none()
    }

    /// `--as vrchat|vmt`: what its streams did, all senders together (for summaries).
    fn tracker_counters(&self) -> Option<TrackerCounters> {
        let (_, streams) = self.trackers.as_ref()?;
        let mut total = TrackerCounters::default();
        for s in streams.values().chain(streams.evicted()) {
            let c = s.counters();
            total.frames += c.frames;
            total.sent += c.sent;
            total.rate_limited += c.rate_limited;
            total.waiting += c.waiting;
        }
        Some(total)
    }

    /// What `--as` made of this destination.
    fn output(&self) -> &'static str {
        match self.trackers.as_ref().map(|(t, _)| t.format) {
            None => "vmc",
            Some(TrackerFormat::Vrchat(_)) => "vrchat",
            Some(TrackerFormat::Vmt(_)) => "vmt",
        }
    }

    /// `--as vrchat|vmt`: the messages that passed the rules feed this
    /// source's solver; a frame's end sends its trackers.
    fn trackers(
        &mut self,
        log: &Log,
        src: Option<SocketAddr>,
        now: Duration,
        kept: &[osc::Message],
    ) {
        let Self {
            trackers: Some((opts, streams)),
            link,
            stats,
            ..
        } = self
        else {
            return;
        };
        // One solver per sender, never shared: past the bound the stalest
        // sender's solver makes room.
        let stream = streams.get_or_insert_with(&src, || TrackerStream::new(*opts));
        for m in kept {
            if let Ok(typed) = Message::from_osc(m) {
                stream.handle_message(now, &typed);
                while let Some(d) = stream.poll_transmit() {
                    send_on(link, stats, &d, log);
                }
            }
        }
    }

    /// A decoded datagram through this destination's rules, smoothing and
    /// rate limit, out as VMC or (`--as`) as trackers.
    fn forward(
        &mut self,
        log: &Log,
        d: &Datagram<'_>,
        now: Duration,
        messages: &[&osc::Message],
        single: bool,
    ) -> anyhow::Result<()> {
        self.smoothers
            .retain(|_, (_, seen)| now.saturating_sub(*seen) < SMOOTH_STALE);
        let mut keep = Vec::with_capacity(messages.len());
        for m in messages {
            let Some(m) = self.rules.apply(m) else {
                self.stats.filtered += 1;
                continue;
            };
            let m = self.smooth(d.src, now, m);
            let Some(l) = &mut self.limiter else {
                keep.push(m);
                continue;
            };
            l.handle_message(now, m);
            let before = keep.len();
            keep.extend(std::iter::from_fn(|| l.poll_due()));
            if keep.len() == before {
                self.stats.rate_limited += 1;
            }
        }
        if self.trackers.is_some() {
            let at = d.ts.unwrap_or(now);
            self.trackers(log, d.src, at, &keep);
            return Ok(());
        }
        emit(self, &keep, single, log)
    }

    /// Smooths `m` (typed as VMC) with the state of its source, when this
    /// destination smooths; other messages and other destinations pass.
    fn smooth(&mut self, src: Option<SocketAddr>, now: Duration, m: osc::Message) -> osc::Message {
        let Some(opts) = &self.rules.smooth else {
            return m;
        };
        let Ok(mut typed) = Message::from_osc(&m) else {
            return m;
        };
        if !matches!(
            typed,
            Message::BonePos { .. } | Message::BlendVal { .. } | Message::Time(_)
        ) {
            return m;
        }
        // One filter state per sender, never shared: past the bound the
        // stalest sender's makes room.
        let (s, seen) = self
            .smoothers
            .get_or_insert_with(&src, || (vmc::Smoother::new(opts.clone()), now));
        *seen = now;
        s.handle_message(now, &mut typed);
        match typed {
            Message::Time(_) => m,
            other => other.to_osc(),
        }
    }
}

struct Relay {
    /// What `--allow` refused (shared with the source, which checks).
    guard: mocap_cli::allow::Guard,
    max_pps: Option<f64>,
    dump: bool,
    format: Format,
    out: Output,
    log: Log,
    dests: Vec<Dest>,
    sources: Senders<SourceStats>,
    start: Instant,
    tokens: f64,
    last_refill: Instant,
    decode: bool,
    /// Something needs the decoded packet even when the lean destinations
    /// do not: the dump, takes, smoothing, rate limits, trackers.
    decode_all: bool,
    takes: Option<mocap_cli::take::VmcTakes>,
    takes_done: Vec<TakeSummary>,
    /// mocopi, iFacialMocap … sent to this port by mistake.
    other: mocap_cli::other::OtherProtocols,
    /// The human dump, a VMC frame at a time (on a terminal a few a second).
    view: FrameView,
    /// A sender has ended a frame with [`vmc::FRAME_ENDS`]: the dump's frames
    /// end there; until then each datagram is one.
    frame_marks: bool,
    /// Arrivals for the status line: the last interval's rate, silence.
    activity: Activity,
}

/// Runs the relay until stopped and prints the summary.
///
/// # Errors
/// A destination that loops back to the listening address ([`UsageError`]),
/// sockets that cannot be bound, unreadable files.
pub(crate) fn run(opts: Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    let (stop, stats_interval) = (opts.stop.clone(), opts.log.stats_interval);
    let Prepared {
        mut relay,
        mut source,
        batched,
    } = prepare(opts)?;
    #[cfg(target_os = "linux")]
    let stopped = if batched {
        relay.run_batched(&source, &stop, stats_interval)
    } else {
        mocap_cli::source::run(&mut source, &stop, stats_interval, &mut relay)
    };
    // recvmmsg/sendmmsg are Linux's: elsewhere the raw path is the portable
    // loop, a datagram at a time, with the same bytes out.
    #[cfg(not(target_os = "linux"))]
    let stopped = {
        if batched {
            relay.log.info(format_args!(
                "batched forwarding (recvmmsg/sendmmsg) is Linux-only; forwarding one datagram at a time"
            ));
        }
        mocap_cli::source::run(&mut source, &stop, stats_interval, &mut relay)
    };
    // Takes are closed whatever ended the run (a closed pipe included).
    let mut taken = Ok(());
    if let Some(takes) = relay.takes.take() {
        (relay.takes_done, taken) = takes.finish(&relay.log);
    }
    let stopped = stopped?;
    relay.view.finish(&mut relay.out)?;
    relay.flush_due(true)?;
    relay.log.finish();
    let recorded = source.finish(&relay.log);
    relay.summary(Some(stopped))?;
    recorded.and(taken)
}

/// The relay opened and ready to run.
struct Prepared {
    relay: Relay,
    source: Source,
    /// Every destination raw and nothing to look at: forward in batches.
    batched: bool,
}

/// Checks the options, opens the input and a sending link per destination.
fn prepare(opts: Options) -> anyhow::Result<Prepared> {
    check(&opts)?;
    let (source, guard) = open_source(&opts)?;
    let recording = opts.record.write.is_some();
    let live = source.is_live();
    let log = Log::new(TOOL, opts.log.quiet, live);
    source.announce(&log);
    for d in &opts.destinations {
        log.info(format_args!("forwarding to {} ({})", d.addr, d.mode()));
    }
    let Options {
        input: _,
        record: _,
        destinations,
        allow: _,
        max_pps,
        dump,
        format,
        stop: _,
        log: _,
        topspeed: _,
        bvh,
        view,
    } = opts;
    let dests: Vec<Dest> = destinations
        .into_iter()
        .map(Dest::open)
        .collect::<anyhow::Result<_>>()?;
    let decode = dump || bvh.is_some() || dests.iter().any(|d| !d.is_raw());
    let decode_all = dump || bvh.is_some() || dests.iter().any(|d| !d.is_raw() && d.lean.is_none());
    let relay = Relay {
        guard,
        max_pps,
        dump,
        format,
        out: Output::stdout(live),
        log,
        dests,
        sources: Senders::folding(SourceStats::fold),
        start: Instant::now(),
        tokens: max_pps.unwrap_or(0.0),
        last_refill: Instant::now(),
        decode,
        decode_all,
        takes: bvh.map(mocap_cli::take::VmcTakes::new),
        takes_done: Vec::new(),
        other: mocap_cli::other::OtherProtocols::new(mocap_core::protocol::Protocol::Vmc),
        view: FrameView::for_stdout(view, live),
        frame_marks: false,
        activity: Activity::new(Duration::ZERO, source.local_addr()),
    };
    let batched = !relay.decode
        && relay.guard.is_open()
        && relay.max_pps.is_none()
        && !recording
        && source.socket().is_some();
    Ok(Prepared {
        relay,
        source,
        batched,
    })
}

/// Refuses options with nothing to do, or a destination that would loop.
fn check(opts: &Options) -> anyhow::Result<()> {
    if opts.destinations.is_empty() && !opts.dump && opts.bvh.is_none() {
        return Err(UsageError(
            "nothing to do: give --to HOST:PORT (repeatable), --dump or --bvh FILE".into(),
        )
        .into());
    }
    if let Some(b) = &opts.bvh {
        b.check()?;
    }
    if let Input::Listen(listen) = opts.input {
        for d in &opts.destinations {
            if loops_back(listen, d.addr) {
                return Err(UsageError(format!(
                    "destination {} is the relay's own listening address {listen}: that would loop",
                    d.addr
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// Opens the input with `--allow`'s guard, `-w`'s recording, and a
/// capture's recorded pacing when it is sent on.
fn open_source(opts: &Options) -> anyhow::Result<(Source, mocap_cli::allow::Guard)> {
    let mut source = Source::open(&opts.input)?;
    let guard =
        mocap_cli::allow::Guard::new(&opts.allow, Some(Log::new(TOOL, opts.log.quiet, false)));
    let guard = if opts.record.record_refused {
        guard.recording_refused()
    } else {
        guard
    };
    source.guard_with(guard.clone());
    if let Some(path) = &opts.record.write {
        source.record_to(
            path,
            vmc::MARIONETTE_PORT,
            Log::new(TOOL, opts.log.quiet, false),
        )?;
    }
    // Sending to a socket from a capture plays it at its recorded timing.
    if !opts.destinations.is_empty() && !opts.topspeed {
        source.pace_recorded();
    }
    Ok((source, guard))
}

impl Destination {
    /// What it gets, for the log.
    fn mode(&self) -> &'static str {
        match &self.trackers {
            Some(t) => match t.format {
                TrackerFormat::Vrchat(_) => "VRChat OSC trackers",
                TrackerFormat::Vmt(_) => "VMT trackers",
            },
            None if self.rules.is_raw() => "raw",
            None => "filtered",
        }
    }
}

impl Dest {
    /// A destination with its sending link.
    fn open(d: Destination) -> anyhow::Result<Self> {
        let receiver = match d.trackers.as_ref().map(|t| t.format) {
            None => mocap_cli::sends::Receiver::Vmc,
            Some(TrackerFormat::Vrchat(_)) => mocap_cli::sends::Receiver::Vrchat,
            Some(TrackerFormat::Vmt(_)) => mocap_cli::sends::Receiver::Vmt,
        };
        let lean = (d.trackers.is_none() && !d.rules.is_raw() && d.rules.is_lean())
            .then(|| vmc::Lean::new(vmc::MAX_BUNDLE));
        Ok(Self {
            addr: d.addr,
            lean,
            link: mocap_cli::net::Link::new(d.addr, receiver)
                .context("failed to open the sending socket")?,
            limiter: d.rules.max_rate.map(Limiter::new),
            rules: d.rules,
            stats: DestStats::default(),
            smoothers: Senders::new(),
            trackers: d
                .trackers
                .map(|t| (t, Senders::folding(TrackerStream::fold))),
        })
    }
}

/// `stats` and `summary`.
#[derive(Serialize)]
struct SummaryRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    tool: &'static str,
    datagrams: u64,
    bytes: u64,
    decode_errors: u64,
    refused: u64,
    flooded: u64,
    elapsed_s: f64,
    stopped: Option<Stopped>,
    /// Each sender `--allow` refused, with its count.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refused_senders: Vec<mocap_cli::allow::RefusedSender>,
    sources: Vec<SourceRecord<'a>>,
    /// Senders a `stats` record leaves out (it lists the busiest few).
    #[serde(skip_serializing_if = "is_zero")]
    more_senders: usize,
    /// Senders evicted to make room for new ones (past 256), their
    /// counters together; they are in the totals above.
    #[serde(skip_serializing_if = "Option::is_none")]
    evicted: Option<EvictedRecord<'a>>,
    destinations: Vec<DestRecord<'a>>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    takes: &'a [TakeSummary],
    /// Each destination's counts, as every tool that sends shows them.
    sends: Vec<mocap_cli::sends::SendRecord>,
    #[serde(flatten)]
    other: mocap_cli::other::OtherProtocolCount,
    /// A `stats` line's interval (human form only).
    #[serde(skip)]
    interval: Option<mocap_cli::status::Interval>,
}

impl Record for SummaryRecord<'_> {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        mocap_cli::dump::counters_head(f, self.stopped, self.interval)?;
        write!(
            f,
            "{} datagrams in ({} decode errors, {} refused, {} flooded)",
            self.datagrams, self.decode_errors, self.refused, self.flooded
        )?;
        if let Some(e) = &self.evicted {
            write!(
                f,
                " ({} senders evicted past 256, their {} datagrams included)",
                e.senders, e.stats.datagrams
            )?;
        }
        f.write_str(&self.other.human())?;
        for d in &self.destinations {
            let s = d.stats;
            write!(
                f,
                "; {} <- {} datagrams ({} filtered, {} rate-limited, {} send errors)",
                d.to, s.datagrams, s.filtered, s.rate_limited, s.send_errors
            )?;
        }
        mocap_cli::sends::write_sends(f, &self.sends)
    }
}

#[derive(Serialize)]
struct SourceRecord<'a> {
    src: Option<SocketAddr>,
    #[serde(flatten)]
    stats: &'a SourceStats,
}

#[derive(Serialize)]
struct EvictedRecord<'a> {
    senders: u64,
    #[serde(flatten)]
    stats: &'a SourceStats,
}

#[derive(Serialize)]
struct DestRecord<'a> {
    to: SocketAddr,
    raw: bool,
    /// `vmc`, `vrchat` or `vmt` (`--as`).
    #[serde(rename = "as")]
    output: &'static str,
    #[serde(flatten)]
    stats: &'a DestStats,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn loops_back(listen: SocketAddr, to: SocketAddr) -> bool {
    if listen.port() != to.port() {
        return false;
    }
    to.ip() == listen.ip()
        || (listen.ip().is_unspecified() && (to.ip().is_loopback() || to.ip().is_unspecified()))
}

impl Relay {
    fn datagram(&mut self, d: Datagram<'_>) -> anyhow::Result<()> {
        self.activity.datagrams(self.start.elapsed(), 1);
        if self.flooded(&d) {
            return Ok(());
        }
        // Raw destinations get the bytes as they came, whatever they are.
        for dest in self.dests.iter_mut().filter(|d| d.is_raw()) {
            send(dest, d.payload, &self.log);
        }
        if !self.decode {
            return Ok(());
        }
        // The common case, a canonical packet, goes to the lean
        // destinations as its bytes; anything else is decoded for all.
        // (Not looked at when no destination is lean: the decode below
        // reads the datagram anyway.)
        let flat = self
            .dests
            .iter()
            .any(|d| d.lean.is_some())
            .then(|| osc::Flat::parse(d.payload))
            .flatten();
        if let Some(flat) = &flat {
            self.forward_lean(flat)?;
            if !self.decode_all {
                return self.flush_due(false);
            }
        }
        let packet = match osc::decode(d.payload) {
            Ok(p) => p,
            Err(e) => return self.undecodable(&d, &e),
        };
        // A single message in goes out as a single message; bundles as bundles.
        let single = matches!(packet, osc::PacketRepr::Message(_));
        let messages = packet.messages();
        if self.dump {
            self.dump_datagram(&d, &messages)?;
        }
        let now = self.start.elapsed();
        if let Some(takes) = &mut self.takes {
            let at = d.ts.unwrap_or(now);
            for m in &messages {
                if let Ok(m) = Message::from_osc(m) {
                    takes.push(d.src, &m, at, &self.log);
                }
            }
        }
        let lean_done = flat.is_some();
        for dest in self
            .dests
            .iter_mut()
            .filter(|d| !(d.is_raw() || lean_done && d.lean.is_some()))
        {
            dest.forward(&self.log, &d, now, &messages, single)?;
        }
        self.flush_due(false)
    }

    /// Counts the datagram for its sender; true when `--max-pps` drops it.
    fn flooded(&mut self, d: &Datagram<'_>) -> bool {
        let stats = self.sources.get_or_default(&d.src);
        stats.datagrams += 1;
        stats.bytes += d.payload.len() as u64;
        let Some(max) = self.max_pps else {
            return false;
        };
        let now = Instant::now();
        let refill = now.duration_since(self.last_refill).as_secs_f64() * max;
        self.tokens = (self.tokens + refill).min(max.max(1.0));
        self.last_refill = now;
        if self.tokens < 1.0 {
            stats.flooded += 1;
            return true;
        }
        self.tokens -= 1.0;
        false
    }

    /// A canonical packet to the lean destinations, as its bytes.
    fn forward_lean(&mut self, flat: &osc::Flat<'_>) -> anyhow::Result<()> {
        for dest in &mut self.dests {
            let Dest {
                lean: Some(lean),
                link,
                rules,
                stats,
                ..
            } = dest
            else {
                continue;
            };
            let done = lean.forward(rules, flat, |b| send_on(link, stats, b, &self.log))?;
            stats.messages += done.kept;
            stats.filtered += done.dropped;
        }
        Ok(())
    }

    /// A datagram that is not OSC: counted, reported at a bounded rate
    /// (unless it is another protocol's), a record in the JSON dump.
    fn undecodable(&mut self, d: &Datagram<'_>, e: &osc::Error) -> anyhow::Result<()> {
        let stats = self.sources.get_or_default(&d.src);
        stats.decode_errors += 1;
        let other = self.other.check(d.src, d.payload, &self.log).is_some();
        if !other
            && stats
                .last_report
                .is_none_or(|t| t.elapsed() >= REPORT_EVERY)
        {
            stats.last_report = Some(Instant::now());
            let n = stats.decode_errors;
            self.log.info(format_args!(
                "bad datagram{}: {e} ({n} so far from this source)",
                d.src.map_or_else(String::new, |s| format!(" from {s}"))
            ));
        }
        if self.dump && self.format == Format::Json {
            let mut rec = ErrorRecord::new(e.to_string());
            rec.src = d.src;
            rec.len = Some(d.payload.len());
            self.out.json(&rec)?;
        }
        Ok(())
    }

    /// `--dump`: the datagram's messages; in the human view a frame ends
    /// at a sender's frame end (or per datagram until one is seen).
    fn dump_datagram(
        &mut self,
        d: &Datagram<'_>,
        messages: &[&osc::Message],
    ) -> anyhow::Result<()> {
        for m in messages {
            self.dump(d.src, d.ts, m)?;
        }
        if self.format == Format::Human {
            let ends = messages
                .iter()
                .any(|m| vmc::FRAME_ENDS.contains(&m.address.as_str()));
            self.frame_marks |= ends;
            // Unpaced (a pipe), a datagram's lines go out as it is read.
            let whole = ends || !self.frame_marks || !self.view.is_paced();
            if whole || self.view.frame_full() {
                self.view
                    .end_frame(self.start.elapsed(), &mut self.out, &self.log)?;
            }
        }
        Ok(())
    }

    fn unreadable(&mut self, e: &InputError) -> anyhow::Result<()> {
        self.log.info(format_args!("{e}"));
        Ok(())
    }
}

impl FeedHandler<Source> for Relay {
    fn item(&mut self, event: Event<'_>) -> anyhow::Result<Flow> {
        match event {
            Event::Datagram(d) => self.datagram(d)?,
            Event::Unreadable(e) => self.unreadable(&e)?,
        }
        Ok(Flow::Continue)
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        self.summary(None)
    }

    fn idle(&mut self) -> anyhow::Result<()> {
        if let Err(e) = self.flush_due(false) {
            self.log.info(format_args!("{e:#}"));
        }
        Ok(())
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        self.view.tick(self.start.elapsed(), &mut self.out)?;
        self.tell_silence();
        Ok(None)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.start.checked_add(self.view.poll_timeout()?)
    }
}

/// A receiver that is down must not stop the others: the link counts and
/// logs the failure.
fn send(dest: &mut Dest, bytes: &[u8], log: &Log) {
    send_on(&mut dest.link, &mut dest.stats, bytes, log);
}

/// [`send`], for a caller holding other parts of the destination.
fn send_on(link: &mut mocap_cli::net::Link, stats: &mut DestStats, bytes: &[u8], log: &Log) {
    if link.send(bytes, log) {
        stats.bytes += bytes.len() as u64;
    }
}

/// Sends messages as they came (single, or bundled); fails only for a message
/// OSC cannot carry, which a decoded one never is.
fn emit(dest: &mut Dest, messages: &[osc::Message], single: bool, log: &Log) -> anyhow::Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    dest.stats.messages += messages.len() as u64;
    if dest.rules.flatten || single {
        for m in messages {
            send(dest, &osc::message(m)?, log);
        }
    } else {
        let mut bundles = Vec::new();
        vmc::pack(messages, vmc::MAX_BUNDLE, &mut bundles)?;
        for b in &bundles {
            send(dest, b, log);
        }
    }
    Ok(())
}

impl Relay {
    /// The raw fast path: `recvmmsg` up to 32 datagrams, `sendmmsg` them to
    /// every destination, with no decoding and no allocation (issue 40:
    /// `batched_tests` holds it to that).
    #[cfg(target_os = "linux")]
    fn run_batched(
        &mut self,
        source: &Source,
        stop: &StopArgs,
        stats_interval: Option<Duration>,
    ) -> anyhow::Result<Stopped> {
        let Some(socket) = source.socket() else {
            return Ok(Stopped::EndOfInput);
        };
        let mut feed = batched::Feed::new(socket);
        let mut headers = mocap_cli::net::batch::SendHeaders::default();
        batched::Forward::new(self, &mut headers, stop.budget()).run(
            &mut feed,
            stop.duration,
            stats_interval,
        )
    }

    /// Once, a live socket that hears nothing: where it listens and why.
    fn tell_silence(&mut self) {
        if let Some(silence) = self.activity.silence(self.start.elapsed()) {
            self.log.info(format_args!("{silence}"));
        }
    }

    /// Sends rate-limited values whose slot has come (all of them at the end).
    fn flush_due(&mut self, all: bool) -> anyhow::Result<()> {
        let now = if all {
            Duration::MAX
        } else {
            self.start.elapsed()
        };
        for dest in &mut self.dests {
            if let Some(l) = &mut dest.limiter {
                l.handle_timeout(now);
                let due: Vec<osc::Message> = std::iter::from_fn(|| l.poll_due()).collect();
                dest.stats.rate_limited = dest.stats.rate_limited.saturating_sub(due.len() as u64);
                emit(dest, &due, false, &self.log)?;
            }
        }
        Ok(())
    }

    fn dump(
        &mut self,
        src: Option<SocketAddr>,
        ts: Option<Duration>,
        m: &osc::Message,
    ) -> anyhow::Result<()> {
        let typed = Message::from_osc(m).ok();
        let rec = VmcOut {
            src,
            ts,
            osc: m,
            typed: typed.as_ref(),
        };
        if self.format == Format::Json {
            self.out.json(&rec)?;
        } else {
            use std::fmt::Write as _;
            let _ = writeln!(self.view.frame(), "{}", Human(&rec));
        }
        Ok(())
    }

    fn summary(&mut self, stopped: Option<Stopped>) -> anyhow::Result<()> {
        let interval = stopped
            .is_none()
            .then(|| self.activity.interval(self.start.elapsed()));
        for d in &mut self.dests {
            d.stats.trackers = d.tracker_counters();
            let sent = d.link.record();
            d.stats.datagrams = sent.sent;
            d.stats.send_errors = sent.failed;
        }
        // Evicted senders' counters stay in the totals.
        let total = |f: fn(&SourceStats) -> u64| {
            self.sources
                .values()
                .chain(self.sources.evicted())
                .map(f)
                .sum::<u64>()
        };
        let (datagrams, decode_errors, flooded) = (
            total(|s| s.datagrams),
            total(|s| s.decode_errors),
            total(|s| s.flooded),
        );
        let refusals = self.guard.summary();
        // A stats line lists the busiest few; the summary every sender.
        let (listed, more_senders) = if stopped.is_none() {
            self.sources.busiest(STATS_SENDERS, |s| s.datagrams)
        } else {
            (self.sources.iter().collect(), 0)
        };
        let rec = SummaryRecord {
            kind: summary_kind(stopped),
            tool: TOOL,
            datagrams,
            bytes: total(|s| s.bytes),
            decode_errors,
            refused: refusals.refused,
            flooded,
            elapsed_s: round3(self.start.elapsed().as_secs_f64()),
            stopped,
            refused_senders: refusals.refused_senders,
            sources: listed
                .into_iter()
                .map(|(src, stats)| SourceRecord { src: *src, stats })
                .collect(),
            more_senders,
            evicted: self.sources.evicted().map(|stats| EvictedRecord {
                senders: self.sources.evicted_senders(),
                stats,
            }),
            destinations: self
                .dests
                .iter()
                .map(|d| DestRecord {
                    to: d.addr,
                    raw: d.is_raw(),
                    output: d.output(),
                    stats: &d.stats,
                })
                .collect(),
            takes: &self.takes_done,
            sends: self.dests.iter().map(|d| d.link.record()).collect(),
            other: self.other.summary(),
            interval,
        };
        report(
            &mut self.out,
            &self.log,
            self.format == Format::Json,
            &rec,
            stopped.is_some(),
        )?;
        Ok(())
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod batched_tests;

#[cfg(test)]
mod lean_tests;

/// Options of a quiet relay on an ephemeral loopback port, sending to
/// `destinations`: what the in-process tests drive.
#[cfg(test)]
fn listening_on_loopback(destinations: Vec<Destination>) -> Options {
    Options {
        input: Input::Listen(SocketAddr::from(([127, 0, 0, 1], 0))),
        record: WriteArgs::default(),
        destinations,
        allow: mocap_cli::allow::AllowArgs::default(),
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
        view: ViewArgs::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_detection() {
        let l: SocketAddr = "0.0.0.0:39539".parse().unwrap();
        assert!(loops_back(l, "127.0.0.1:39539".parse().unwrap()));
        assert!(!loops_back(l, "127.0.0.1:39540".parse().unwrap()));
        assert!(!loops_back(
            "127.0.0.1:39539".parse().unwrap(),
            "192.168.1.9:39539".parse().unwrap()
        ));
    }
}

/// The raw fast path on the run loop: batches in, batches out.
#[cfg(target_os = "linux")]
mod batched {
    use std::net::{SocketAddr, UdpSocket};
    use std::time::Duration;

    use anyhow::Context as _;
    use mocap_cli::net::{self, batch};
    use mocap_cli::prelude::*;
    use mocap_cli::runner::Step;

    use super::Relay;

    /// A socket read `recvmmsg` at a time.
    pub(super) struct Feed {
        socket: UdpSocket,
        batch: batch::Batch,
    }

    impl Feed {
        pub(super) fn new(socket: UdpSocket) -> Self {
            Self {
                socket,
                batch: batch::Batch::new(),
            }
        }
    }

    impl mocap_cli::runner::Feed for Feed {
        type Item<'a> = &'a batch::Batch;

        // The socket's own read timeout (the poll interval) bounds the wait.
        fn next(&mut self, _wait: Duration) -> anyhow::Result<Step<&batch::Batch>> {
            match self.batch.recv(&self.socket) {
                Ok(_) => Ok(Step::Item(&self.batch)),
                Err(e) if net::recv_failure(&e) != net::RecvFailure::Fatal => Ok(Step::Idle),
                Err(e) => Err(e).context("failed to receive"),
            }
        }
    }

    /// Forwards each batch to every destination, counting per sender.
    pub(super) struct Forward<'r> {
        relay: &'r mut Relay,
        headers: &'r mut batch::SendHeaders,
        count: mocap_cli::args::Budget,
        /// The sender heard last and what it sent since, not yet in its
        /// entry in `relay.sources`: a stream from one sender adds up here,
        /// with no map search per datagram.
        tally: Tally,
    }

    #[derive(Default)]
    struct Tally {
        src: Option<SocketAddr>,
        datagrams: u64,
        bytes: u64,
    }

    impl<'r> Forward<'r> {
        pub(super) fn new(
            relay: &'r mut Relay,
            headers: &'r mut batch::SendHeaders,
            count: mocap_cli::args::Budget,
        ) -> Self {
            Self {
                relay,
                headers,
                count,
                tally: Tally::default(),
            }
        }

        /// The run loop over `feed` until stopped, the counts settled.
        ///
        /// # Errors
        /// The feed's and the summary's.
        pub(super) fn run(
            &mut self,
            feed: &mut Feed,
            duration: Option<Duration>,
            stats_interval: Option<Duration>,
        ) -> anyhow::Result<Stopped> {
            let stopped = drive(feed, duration, stats_interval, self);
            self.settle();
            stopped
        }

        /// Adds the tally to its sender's entry (before anything reads the
        /// entries, and when another sender is heard). Senders are looked
        /// up in the order they were heard, so eviction order is kept.
        fn settle(&mut self) {
            let t = std::mem::take(&mut self.tally);
            if t.datagrams > 0 {
                let stats = self.relay.sources.get_or_default(&t.src);
                stats.datagrams += t.datagrams;
                stats.bytes += t.bytes;
            }
        }
    }

    impl FeedHandler<Feed> for Forward<'_> {
        fn item(&mut self, batch: &batch::Batch) -> anyhow::Result<Flow> {
            let n = batch.len();
            // `--count` counts datagrams: forward only up to it.
            let room = usize::try_from(self.count.room(n as u64)).unwrap_or(n);
            // The payloads as slices, on the stack; a batch of one (the
            // common case at a few thousand datagrams a second) needs no array.
            let mut one: &[u8] = &[];
            let mut many: [&[u8]; batch::SIZE];
            let slots = if room == 1 {
                std::slice::from_mut(&mut one)
            } else {
                many = [&[]; batch::SIZE];
                &mut many[..]
            };
            for ((payload, src), slot) in batch.datagrams().take(room).zip(slots.iter_mut()) {
                if self.tally.src != src && self.tally.datagrams > 0 {
                    self.settle();
                }
                self.tally.src = src;
                self.tally.datagrams += 1;
                self.tally.bytes += payload.len() as u64;
                *slot = payload;
            }
            let payloads = slots.get(..room).unwrap_or_default();
            self.count.spend(room as u64);
            let now = self.relay.start.elapsed();
            self.relay.activity.datagrams(now, room as u64);
            // One call per destination on its own connected socket: its
            // failures are its own. The batch's buffers go out as they came in.
            for d in &mut self.relay.dests {
                d.stats.bytes +=
                    batch::send_batch(&mut d.link, payloads, self.headers, &self.relay.log);
            }
            Ok(if self.count.spent() {
                Flow::Stop(Stopped::Count)
            } else {
                Flow::Continue
            })
        }

        fn stats(&mut self) -> anyhow::Result<()> {
            self.settle();
            self.relay.summary(None)
        }

        fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
            self.relay.tell_silence();
            Ok(None)
        }
    }
}
