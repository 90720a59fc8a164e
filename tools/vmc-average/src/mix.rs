//! `vmc-average`: mix several VMC senders into one stream. The binary parses
//! flags into [`Options`] and calls [`run`].

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use serde::Serialize;

use mocap_cli::net;
use mocap_cli::output::{report, round3, summary_kind};
use mocap_cli::prelude::*;
use mocap_cli::records::VmcOut;
use mocap_cli::senders::MAX_SENDERS;
use mocap_cli::status::Activity;
use mocap_cli::take::TakeSummary;
use mocap_core::vmc::{self, Message, Method, MixConfig, MixSchedule, Mixer};

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "vmc-average";

/// Everything `vmc-average` was asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// `--allow`: who may send.
    pub(crate) allow: mocap_cli::allow::AllowArgs,
    /// Listening addresses (each a source, and each sender on it a source).
    pub(crate) listen: Vec<SocketAddr>,
    /// Receivers of the mixed stream.
    pub(crate) to: Vec<SocketAddr>,
    /// Names for sources: a listening address (everything on it) or a sender address.
    pub(crate) sources: Vec<(String, SocketAddr)>,
    /// When to emit.
    pub(crate) schedule: MixSchedule,
    /// Rotation averaging.
    pub(crate) method: Method,
    /// A source silent this long drops out of the mix.
    pub(crate) stale: Duration,
    /// Weights by source name.
    pub(crate) weights: Vec<(String, f64)>,
    /// Bones to average (`None`: all).
    pub(crate) bones: Option<Vec<String>>,
    /// Bones taken from one source: (name, bones).
    pub(crate) prefer: Vec<(String, Vec<String>)>,
    /// The source whose other messages pass through (default: the first).
    pub(crate) primary: Option<String>,
    /// Average blendshape values across sources instead of passing the primary's.
    pub(crate) average_blends: bool,
    /// Print the mixed output.
    pub(crate) dump: bool,
    /// Format of the dump and summary.
    pub(crate) format: Format,
    /// `--count` (mixed frames), `--duration`.
    pub(crate) stop: StopArgs,
    /// `--quiet`, `--stats-interval`.
    pub(crate) log: LogArgs,
    /// `--smooth`: 1€ smoothing of the mixed output.
    pub(crate) smooth: Option<vmc::SmoothOptions>,
    /// `--bvh FILE`: record the mix as BVH.
    pub(crate) bvh: Option<mocap_cli::take::BvhOut>,
    /// `--realtime`: SCHED_FIFO for the mixing thread.
    pub(crate) realtime: bool,
}

struct SourceInfo {
    name: String,
    listen: SocketAddr,
    sender: Option<SocketAddr>,
    datagrams: u64,
    messages: u64,
    decode_errors: u64,
    /// When it last sent: past [`MAX_SENDERS`] the source heard from least
    /// recently makes room for a new sender.
    seen: Duration,
}

/// The counters of sources evicted to make room, together: the summary
/// keeps them.
#[derive(Default, Serialize)]
struct Evicted {
    senders: u64,
    frames: u64,
    datagrams: u64,
    samples: u64,
    stale_periods: u64,
    decode_errors: u64,
    dropped: u64,
    non_finite: u64,
}

/// How many sources a periodic stats record lists (the busiest).
const STATS_SOURCES: usize = 8;
/// How many sources the human summary lists, a line each (the busiest):
/// 256 senders made one 20 kB line. JSON lists them all.
const SUMMARY_LINES: usize = 16;

/// Runs the mixer until stopped and prints the summary.
///
/// # Errors
/// Sockets that cannot be bound; names in `--weight`, `--prefer` or
/// `--primary` that no `--source` defines ([`UsageError`]).
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    check(opts)?;
    let log = Log::new(TOOL, opts.log.quiet, true);
    let guard =
        mocap_cli::allow::Guard::new(&opts.allow, Some(Log::new(TOOL, opts.log.quiet, false)));
    let (mut inbox, bound) = listen(opts, &log, &guard)?;
    let fanout = net::Fanout::new(opts.to.clone(), mocap_cli::sends::Receiver::Vmc)
        .context("failed to open the sending socket")?;
    // Named sources first, in the order given, so --weight/--prefer/--primary can refer to them.
    let sources: Vec<SourceInfo> = opts
        .sources
        .iter()
        .map(|(name, addr)| SourceInfo {
            name: name.clone(),
            listen: *addr,
            sender: None,
            datagrams: 0,
            messages: 0,
            decode_errors: 0,
            seen: Duration::ZERO,
        })
        .collect();
    let listening = bound
        .iter()
        .map(|a| Activity::new(Duration::ZERO, Some(*a)))
        .collect();
    let mut mix = Mix {
        opts,
        log,
        mixer: Mixer::new(mix_config(opts), opts.sources.len()),
        smoother: opts.smooth.clone().map(vmc::Smoother::new),
        out: Output::stdout(true),
        start: Instant::now(),
        fanout,
        sources,
        bound,
        frames_out: 0,
        datagrams_out: 0,
        takes: opts.bvh.clone().map(mocap_cli::take::VmcTakes::new),
        refused: 0,
        evicted: Evicted::default(),
        guard,
        behind: 0,
        listening,
        arrivals: Activity::new(Duration::ZERO, None),
    };
    // The mixing thread wakes for every datagram: precise wake-ups, and with
    // --realtime ahead of every normal thread.
    let tuned = mocap_cli::realtime::tune_current_thread(opts.realtime);
    mix.log
        .info(format_args!("{}", tuned.describe(opts.realtime)));
    let stopped = drive(
        &mut inbox,
        opts.stop.duration,
        opts.log.stats_interval,
        &mut mix,
    );
    mix.behind = inbox.dropped();
    let (done, taken) = match mix.takes.take() {
        Some(t) => t.finish(&mix.log),
        None => (Vec::new(), Ok(())),
    };
    mix.summary(Some(stopped?), &done)?;
    taken
}

/// Refuses a run with nothing to mix or send, and names in `--weight`,
/// `--prefer` or `--primary` that no `--source` defines.
fn check(opts: &Options) -> anyhow::Result<()> {
    if opts.listen.is_empty() || (opts.to.is_empty() && opts.bvh.is_none()) {
        return Err(UsageError(
            "give at least one -l ADDR and one --to HOST:PORT (or --bvh FILE)".into(),
        )
        .into());
    }
    if let Some(b) = &opts.bvh {
        b.check()?;
    }
    let known = |name: &str| opts.sources.iter().any(|(n, _)| n == name);
    for name in opts
        .weights
        .iter()
        .map(|(n, _)| n)
        .chain(opts.prefer.iter().map(|(n, _)| n))
        .chain(opts.primary.iter())
    {
        if !known(name) {
            return Err(UsageError(format!(
                "source {name:?} is not defined: add --source {name}=ADDR"
            ))
            .into());
        }
    }
    Ok(())
}

/// Binds every `-l` address, refusing senders `guard` does not admit where
/// they are read; the inbox, and the addresses actually bound
/// (port 0 becomes a real port): with the sender's address they identify
/// a source.
fn listen(
    opts: &Options,
    log: &Log,
    guard: &mocap_cli::allow::Guard,
) -> anyhow::Result<(mocap_cli::inbox::Listeners, Vec<SocketAddr>)> {
    let mut sockets = Vec::new();
    let mut bound = Vec::new();
    for addr in &opts.listen {
        let socket = net::bind_udp(*addr, Some(mocap_cli::runner::POLL))
            .with_context(|| format!("failed to bind UDP {addr}"))?;
        let local = socket.local_addr()?;
        log.info(format_args!("listening on {local} (UDP); Ctrl-C to stop"));
        bound.push(local);
        sockets.push(socket);
    }
    // `--allow` where the sockets are read: strangers never reach the queue.
    Ok((mocap_cli::inbox::Listeners::guarded(sockets, guard), bound))
}

/// The mixer's configuration, sources named by `--source` by their index.
fn mix_config(opts: &Options) -> MixConfig {
    let index = |name: &str| opts.sources.iter().position(|(n, _)| n == name);
    MixConfig {
        schedule: opts.schedule,
        method: opts.method,
        stale: opts.stale,
        weights: opts
            .sources
            .iter()
            .map(|(n, _)| weight_of(opts, n))
            .collect(),
        bones: opts.bones.clone(),
        prefer: opts
            .prefer
            .iter()
            .filter_map(|(n, b)| index(n).map(|i| (i, b.clone())))
            .collect(),
        primary: opts.primary.as_deref().and_then(index).unwrap_or(0),
        average_blends: opts.average_blends,
    }
}

/// The mixer on the run loop: datagrams in, mixed frames out.
struct Mix<'o> {
    opts: &'o Options,
    log: Log,
    mixer: Mixer,
    smoother: Option<vmc::Smoother>,
    out: Output,
    start: Instant,
    fanout: net::Fanout,
    sources: Vec<SourceInfo>,
    /// The addresses actually bound, by listening index.
    bound: Vec<SocketAddr>,
    frames_out: u64,
    datagrams_out: u64,
    takes: Option<mocap_cli::take::VmcTakes>,
    /// Datagrams of new senders past [`MAX_SENDERS`] when every source is
    /// named by `--source` (none can be evicted), not mixed.
    refused: u64,
    evicted: Evicted,
    /// `--allow`, checked here for every listening socket at once.
    guard: mocap_cli::allow::Guard,
    /// Datagrams of several listening sockets dropped because mixing fell
    /// behind receiving (read from the inbox when the run ends).
    behind: u64,
    /// Arrivals on each listening socket: once one hears nothing, where it
    /// listens and why.
    listening: Vec<Activity>,
    /// Arrivals on all of them: a `stats` line's rate over its interval.
    arrivals: Activity,
}

impl Mix<'_> {
    fn summary(&mut self, stopped: Option<Stopped>, takes: &[TakeSummary]) -> anyhow::Result<()> {
        // A stats line lists the busiest few sources; the summary all.
        let mut listed: Vec<usize> = (0..self.sources.len()).collect();
        let mut more_sources = 0;
        if stopped.is_none() {
            listed.sort_by_key(|i| {
                std::cmp::Reverse(self.sources.get(*i).map_or(0, |s| s.datagrams))
            });
            more_sources = listed.len().saturating_sub(STATS_SOURCES);
            listed.truncate(STATS_SOURCES);
            listed.sort_unstable();
        }
        let rec = SummaryRecord {
            human_lines: if stopped.is_some() {
                SUMMARY_LINES
            } else {
                STATS_SOURCES
            },
            kind: summary_kind(stopped),
            tool: TOOL,
            frames_out: self.frames_out,
            datagrams_out: self.datagrams_out,
            elapsed_s: round3(self.start.elapsed().as_secs_f64()),
            stopped,
            refused: self.refused + self.guard.refused(),
            refused_senders: self.guard.summary().refused_senders,
            behind: self.behind,
            sources: listed
                .into_iter()
                .filter_map(|i| {
                    let s = self.sources.get(i)?;
                    let c = self.mixer.counters(i);
                    Some(SourceRecord {
                        name: &s.name,
                        listen: s.listen,
                        sender: s.sender,
                        frames: c.frames,
                        datagrams: s.datagrams,
                        samples: s.messages,
                        stale_periods: c.stale_periods,
                        decode_errors: s.decode_errors,
                        dropped: c.dropped,
                        non_finite: c.non_finite,
                    })
                })
                .collect(),
            more_sources,
            evicted: (self.evicted.senders > 0).then_some(&self.evicted),
            takes,
            sends: self.fanout.sends().collect(),
            interval: stopped
                .is_none()
                .then(|| self.arrivals.interval(self.start.elapsed())),
        };
        report(
            &mut self.out,
            &self.log,
            self.opts.format == Format::Json,
            &rec,
            stopped.is_some(),
        )?;
        Ok(())
    }
}

impl FeedHandler<mocap_cli::inbox::Listeners> for Mix<'_> {
    fn item(&mut self, r: mocap_cli::inbox::Received<'_>) -> anyhow::Result<Flow> {
        let (listen_idx, from, bytes) = (r.socket, r.from, r.bytes);
        let now = self.start.elapsed();
        self.arrivals.datagrams(now, 1);
        if let Some(a) = self.listening.get_mut(listen_idx) {
            a.datagrams(now, 1);
        }
        if !self.guard.admit(Some(from)) {
            return Ok(Flow::Continue);
        }
        let listen = self.opts.listen.get(listen_idx).copied().unwrap_or(from);
        let local = self.bound.get(listen_idx).copied().unwrap_or(listen);
        let Some(src) = source_of(
            &mut self.sources,
            &mut self.mixer,
            &mut self.evicted,
            self.opts,
            (listen, local),
            (from, now),
        ) else {
            if self.refused == 0 {
                self.log.always(format_args!(
                    "{MAX_SENDERS} sources named by --source: datagrams of other senders (first {from}) are not mixed"
                ));
            }
            self.refused += 1;
            return Ok(Flow::Continue);
        };
        let Some(s) = self.sources.get_mut(src) else {
            return Ok(Flow::Continue);
        };
        s.datagrams += 1;
        s.seen = now;
        // Bone names borrowed from the datagram: the mixer interns
        // them, so a bone costs no allocation on this path.
        match vmc::decode_borrowed(bytes) {
            Ok(msgs) => {
                for m in msgs {
                    match m {
                        vmc::Element::Bone { name, pos, rot } => {
                            s.messages += 1;
                            self.mixer.handle_bone(src, name, pos, rot);
                        }
                        vmc::Element::Other(Ok(m)) => {
                            s.messages += 1;
                            self.mixer.handle_message(now, src, m);
                        }
                        vmc::Element::Other(Err(_)) => s.decode_errors += 1,
                    }
                }
            }
            // Bad bytes from one source never touch the others.
            Err(_) => s.decode_errors += 1,
        }
        Ok(Flow::Continue)
    }

    /// Emits the mixed frame when one is due, then checks `--count`.
    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        let now = self.start.elapsed();
        for a in &mut self.listening {
            if let Some(silence) = a.silence(now) {
                self.log.info(format_args!("{silence}"));
            }
        }
        if let Some(mut frame) = self.mixer.poll_frame(self.start.elapsed())
            && !frame.is_empty()
        {
            if let Some(s) = &mut self.smoother {
                s.handle_frame(self.start.elapsed(), &mut frame);
            }
            for d in vmc::frame_datagrams(&frame, vmc::MAX_BUNDLE)? {
                self.fanout.send(&d, &self.log);
            }
            self.datagrams_out = self.fanout.sent();
            if let Some(t) = &mut self.takes {
                t.push_frame(&frame, self.start.elapsed(), &self.log);
            }
            self.frames_out += 1;
            if self.opts.dump {
                dump(&mut self.out, self.opts.format, &frame)?;
            }
        }
        Ok(self
            .opts
            .stop
            .count
            .is_some_and(|n| self.frames_out >= n)
            .then_some(Stopped::Count))
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        self.summary(None, &[])
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.mixer.poll_timeout().map(|d| self.start + d)
    }
}

/// The source a datagram belongs to: a name given for its sender, else one
/// for its listening socket (`(as given, as bound)`), else the source of
/// this (listening socket, sender) pair, new if need be. One sender socket
/// that sends to two listening ports is two sources (one script or one
/// `pcap-replay --port-map` playing two trackers). Past [`MAX_SENDERS`] a
/// new sender takes the place of the sender heard from least recently (a
/// flood of addresses must not grow the mix, nor lock out a performer whose
/// app restarted on a new port); `None` only when every source is named.
fn source_of(
    sources: &mut Vec<SourceInfo>,
    mixer: &mut Mixer,
    evicted: &mut Evicted,
    opts: &Options,
    (listen, local): (SocketAddr, SocketAddr),
    (from, now): (SocketAddr, Duration),
) -> Option<usize> {
    if let Some(i) = opts.sources.iter().position(|(_, a)| *a == from) {
        return Some(i);
    }
    if let Some(i) = opts
        .sources
        .iter()
        .position(|(_, a)| *a == listen || *a == local)
    {
        return Some(i);
    }
    if let Some(i) = sources
        .iter()
        .position(|s| s.sender == Some(from) && s.listen == local)
    {
        return Some(i);
    }
    let name = if opts.listen.len() > 1 {
        format!("{from}>{local}")
    } else {
        format!("{from}")
    };
    let info = SourceInfo {
        name,
        listen: local,
        sender: Some(from),
        datagrams: 0,
        messages: 0,
        decode_errors: 0,
        seen: now,
    };
    let weight = weight_of(opts, &info.name);
    if sources.len() < MAX_SENDERS {
        let i = mixer.add_source(weight);
        sources.push(info);
        return Some(i);
    }
    // Named sources (`sender: None`) keep their slots.
    let (i, old) = sources
        .iter_mut()
        .enumerate()
        .filter(|(_, s)| s.sender.is_some())
        .min_by_key(|(_, s)| s.seen)?;
    let c = mixer.counters(i);
    evicted.senders += 1;
    evicted.frames += c.frames;
    evicted.datagrams += old.datagrams;
    evicted.samples += old.messages;
    evicted.stale_periods += c.stale_periods;
    evicted.decode_errors += old.decode_errors;
    evicted.dropped += c.dropped;
    evicted.non_finite += c.non_finite;
    *old = info;
    mixer.replace_source(i, weight);
    Some(i)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `--weight NAME=W` for a source (1 if none).
fn weight_of(opts: &Options, name: &str) -> f64 {
    opts.weights
        .iter()
        .find(|(n, _)| n == name)
        .map_or(1.0, |(_, w)| *w)
}

fn dump(out: &mut Output, format: Format, frame: &[Message]) -> anyhow::Result<()> {
    for m in frame {
        let osc = m.to_osc();
        out.record(
            format == Format::Json,
            &VmcOut {
                src: None,
                ts: None,
                osc: &osc,
                typed: Some(m),
            },
        )?;
    }
    Ok(())
}

impl Record for SummaryRecord<'_> {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        mocap_cli::dump::counters_head(f, self.stopped, self.interval)?;
        write!(f, "{} mixed frames", self.frames_out)?;
        // A line per source, the busiest few, in the order they came.
        let mut shown: Vec<usize> = (0..self.sources.len()).collect();
        shown.sort_by_key(|i| std::cmp::Reverse(self.sources.get(*i).map_or(0, |s| s.datagrams)));
        let rest: Vec<&SourceRecord<'_>> = shown
            .split_off(shown.len().min(self.human_lines))
            .into_iter()
            .filter_map(|i| self.sources.get(i))
            .collect();
        shown.sort_unstable();
        for s in shown.into_iter().filter_map(|i| self.sources.get(i)) {
            write!(
                f,
                "\n  {}: {} frames, {} datagrams, {} stale periods, {} decode errors",
                s.name, s.frames, s.datagrams, s.stale_periods, s.decode_errors
            )?;
            if s.dropped + s.non_finite > 0 {
                write!(
                    f,
                    " ({} messages dropped past the bounds, {} NaN/inf skipped)",
                    s.dropped, s.non_finite
                )?;
            }
        }
        let more = rest.len() + self.more_sources;
        if more > 0 {
            write!(f, "\n  … and {more} more sources")?;
            if !rest.is_empty() {
                let (frames, datagrams) = rest
                    .iter()
                    .fold((0u64, 0u64), |(fr, d), s| (fr + s.frames, d + s.datagrams));
                write!(f, " ({frames} frames, {datagrams} datagrams)")?;
            }
        }
        if let Some(e) = self.evicted {
            write!(
                f,
                "\n  {} senders evicted past {MAX_SENDERS} ({} frames, {} datagrams)",
                e.senders, e.frames, e.datagrams
            )?;
        }
        if self.refused > 0 {
            write!(
                f,
                "\n  {} datagrams not mixed (refused by --allow, or past {MAX_SENDERS} named sources)",
                self.refused
            )?;
        }
        if self.behind > 0 {
            write!(
                f,
                "\n  {} datagrams dropped (mixing fell behind receiving)",
                self.behind
            )?;
        }
        mocap_cli::sends::write_sends(f, &self.sends)
    }
}

/// `stats` and `summary`.
#[derive(Serialize)]
struct SummaryRecord<'a> {
    /// How many sources the human form lists, a line each.
    #[serde(skip)]
    human_lines: usize,
    #[serde(rename = "type")]
    kind: &'static str,
    tool: &'static str,
    frames_out: u64,
    datagrams_out: u64,
    elapsed_s: f64,
    stopped: Option<Stopped>,
    /// Datagrams not mixed: refused by `--allow`, or from new senders when
    /// all 256 sources are named (none can be evicted).
    #[serde(skip_serializing_if = "is_zero")]
    refused: u64,
    /// Senders `--allow` refused, with their counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    refused_senders: Vec<mocap_cli::allow::RefusedSender>,
    /// Datagrams dropped because mixing fell behind receiving (several
    /// `--listen` sockets: their reading threads queue a bounded number).
    #[serde(skip_serializing_if = "is_zero")]
    behind: u64,
    sources: Vec<SourceRecord<'a>>,
    /// Sources a `stats` record leaves out (it lists the busiest few).
    #[serde(skip_serializing_if = "is_zero_usize")]
    more_sources: usize,
    /// Senders evicted past [`MAX_SENDERS`] to make room for new ones,
    /// their counters together.
    #[serde(skip_serializing_if = "Option::is_none")]
    evicted: Option<&'a Evicted>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    takes: &'a [TakeSummary],
    /// Each `--to` destination's counts.
    sends: Vec<mocap_cli::sends::SendRecord>,
    /// A `stats` line's interval (human form only).
    #[serde(skip)]
    interval: Option<mocap_cli::status::Interval>,
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

/// One source in a summary.
#[derive(Serialize)]
struct SourceRecord<'a> {
    name: &'a str,
    listen: SocketAddr,
    sender: Option<SocketAddr>,
    frames: u64,
    datagrams: u64,
    samples: u64,
    stale_periods: u64,
    decode_errors: u64,
    /// Messages the mixer left out past its bounds on one frame.
    #[serde(skip_serializing_if = "is_zero")]
    dropped: u64,
    /// Values with NaN or infinity, left out.
    #[serde(skip_serializing_if = "is_zero")]
    non_finite: u64,
}
