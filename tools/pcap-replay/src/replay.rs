//! `pcap-replay`: send the UDP datagrams of a capture with their recorded
//! timing through a plain UDP socket. The capture is read by the reader every
//! tool's `-r` uses (`mocap_cli::source::Source`): pcap, pcapng, `.mocopipackets`
//! text captures and hex lines. The binary parses flags into [`Options`] and
//! calls [`run`].

use std::collections::VecDeque;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use mocap_cli::exit::interrupted;
use mocap_cli::inbox::UdpFeed;
use mocap_cli::net;
use mocap_cli::output::{report, round3};
use mocap_cli::prelude::*;
use mocap_cli::runner::{Feed, Step};
use mocap_cli::source::{Event, Input, Source};
use mocap_core::pcap::{
    CaptureStats, Fate, Impair, ImpairCounters, ImpairSpec, Pace, Renumber, RenumberCounters,
    Schedule,
};

use crate::hedge::{Hedge, HedgeSetup};
use crate::send::{Tally, send_claimed};
use crate::timing::Waited;

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "pcap-replay";

/// Shortest gap between passes of `--loop`, whatever the capture's spacing.
const MIN_LOOP_GAP: Duration = Duration::from_millis(1);

/// Everything `pcap-replay` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// The capture.
    pub(crate) file: PathBuf,
    /// Send everything here instead of to 127.0.0.1 at the original port.
    pub(crate) to: Option<SocketAddr>,
    /// Destination port rewrites.
    pub(crate) port_map: Vec<(u16, u16)>,
    /// Keep only datagrams to or from these ports (empty: all).
    pub(crate) filter_ports: Vec<u16>,
    /// Keep only datagrams from this address.
    pub(crate) src: Option<IpAddr>,
    /// Keep only datagrams to this address.
    pub(crate) dst: Option<IpAddr>,
    /// Pacing.
    pub(crate) pace: Pace,
    /// How long before each deadline to stop sleeping and spin.
    pub(crate) spin: Duration,
    /// `--realtime`: ask for SCHED_FIFO for the sending thread.
    pub(crate) realtime: bool,
    /// `--hedge`: a second sending thread on another CPU races the first.
    pub(crate) hedge: bool,
    /// Passes over the capture; 0 = until stopped.
    pub(crate) loops: u64,
    /// Wait for a datagram here, then play to its sender.
    pub(crate) trigger: Option<SocketAddr>,
    /// With `trigger`: the port to play to (default: each datagram's own).
    pub(crate) to_port: Option<u16>,
    /// With `trigger`: who may trigger (`--allow`).
    pub(crate) allow: mocap_cli::allow::AllowArgs,
    /// `--count` (datagrams sent), `--duration`.
    pub(crate) stop: StopArgs,
    /// Output format.
    pub(crate) format: Format,
    /// No progress or logs.
    pub(crate) quiet: bool,
    /// `--impair`: seeded loss, bursts, duplicates, reordering, jitter.
    pub(crate) impair: Option<ImpairSpec>,
    /// `--renumber`: carry frame numbers on across `--loop` passes.
    pub(crate) renumber: bool,
}

/// Where each datagram goes: this address, at this port or the datagram's
/// own (mapped) destination port.
#[derive(Clone, Copy, Debug)]
struct Target {
    ip: IpAddr,
    port: Option<u16>,
    /// `--trigger`: the trigger's sender and the socket it came to.
    reply: Option<Reply>,
}

/// Who triggered the replay, and where.
#[derive(Clone, Copy, Debug)]
struct Reply {
    /// The port the trigger came from.
    port: u16,
    /// The trigger socket's own address.
    own: SocketAddr,
}

impl Reply {
    /// Whether sending to `to` would send to the trigger socket itself: on
    /// one machine the capture's port (a phone's 49983) is that socket's.
    fn is_own(self, to: SocketAddr) -> bool {
        to.port() == self.own.port()
            && (to.ip() == self.own.ip() || self.own.ip().is_unspecified() && to.ip().is_loopback())
    }
}

impl Target {
    /// Where a datagram captured to `dst_port` goes. After a trigger, one
    /// with no port of its own (a text capture) or whose port is the
    /// trigger socket's goes to the port the trigger came from.
    fn to(self, port_map: &[(u16, u16)], dst_port: Option<u16>) -> SocketAddr {
        if let Some(p) = self.port {
            return SocketAddr::new(self.ip, p);
        }
        let mapped = dst_port.map(|p| SocketAddr::new(self.ip, map_port(port_map, p)));
        match (mapped, self.reply) {
            (Some(to), Some(r)) if r.is_own(to) => SocketAddr::new(self.ip, r.port),
            (Some(to), _) => to,
            (None, Some(r)) => SocketAddr::new(self.ip, r.port),
            // Refused when read (`Playback::check`): nothing to send to.
            (None, None) => SocketAddr::new(self.ip, 0),
        }
    }
}

#[derive(Default)]
struct Counts {
    /// What was sent, by both threads under `--hedge`.
    tally: Tally,
    skipped: u64,
    loops: u64,
    /// Of `sent`, what the `--hedge` thread sent (`None` without one).
    hedged: Option<u64>,
    /// `--hedge`: sends that went ahead of the other thread's stalled one.
    out_of_order: u64,
    /// `--impair`: what the receiver will see.
    impaired: Option<ImpairCounters>,
    /// `--renumber`: datagrams renumbered, and numbered ones kept as captured.
    renumbered: Option<RenumberCounters>,
    /// Lines of a text capture that did not read, skipped.
    unreadable: u64,
}

/// Runs the replay and prints the summary.
///
/// # Errors
/// An unreadable or unsupported capture, socket errors.
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Log::new(TOOL, opts.quiet, false);
    let mut out = Output::stdout(false);
    let open = || open_capture(&opts.file);
    // Fail on a bad file before waiting for a trigger or opening sockets.
    let capture = open()?;
    let start_wall = Instant::now();
    let (socket, target) = match opts.trigger {
        Some(addr) => match wait_for_trigger(opts, &log, addr)? {
            Triggered::Play(socket, target) => (socket, target),
            Triggered::Stopped(why) => {
                let counts = Counts::default();
                return finish(opts, &log, &mut out, &counts, None, why, start_wall);
            }
        },
        None => untriggered(opts)?,
    };
    let progress = progress_bar(opts, &log)?;
    // Deadlines to keep: make this thread's sleeps and sends precise.
    if opts.pace != Pace::TopSpeed {
        let tuned = mocap_cli::realtime::tune_current_thread(opts.realtime);
        log.info(format_args!("{}", tuned.describe(opts.realtime)));
    }
    let hedge = start_hedge(opts, &log, &socket, progress.as_ref())?;
    let mut feed = Playback::new(opts, &log, &open, capture);
    feed.hedge = hedge.as_ref().map(|h| (h, target));
    let mut send = Transmit {
        opts,
        log: &log,
        out: &mut out,
        socket,
        target,
        progress,
        hedge: hedge.as_ref(),
        counts: Counts::default(),
    };
    // `--duration` counts from the start, the wait for a trigger included.
    let left = opts
        .stop
        .duration
        .map(|d| d.saturating_sub(start_wall.elapsed()));
    let stopped = drive(&mut feed, left, None, &mut send)?;
    // Nothing goes out once the run is over (the second thread may hold
    // the next datagram).
    if let Some(h) = &hedge {
        h.close();
    }
    if let Some(pb) = &send.progress {
        pb.finish_and_clear();
    }
    let mut counts = send.counts;
    feed.count(&mut counts, opts.renumber);
    let stats = add_stats(feed.done, feed.capture.capture_stats());
    // A damaged capture ends the run in error once the summary is out.
    let damage = feed.capture.damage();
    drop(feed);
    if let Some(h) = hedge {
        join_hedge(h, &mut counts, &log);
    }
    finish(opts, &log, &mut out, &counts, stats, stopped, start_wall)?;
    damage
}

/// How the wait for `--trigger` ended.
enum Triggered {
    /// A datagram came: play from this socket to this target.
    Play(UdpSocket, Target),
    /// None came before the run was stopped.
    Stopped(Stopped),
}

/// `--trigger`: binds `addr` and waits for a datagram from a sender
/// `--allow` lets in; the replay then plays to that sender.
fn wait_for_trigger(opts: &Options, log: &Log, addr: SocketAddr) -> anyhow::Result<Triggered> {
    let socket = bind_trigger(addr)?;
    let local = socket.local_addr()?;
    log.info(format_args!(
        "waiting for a datagram on {local} (UDP) to start"
    ));
    let mut feed = UdpFeed::new(socket.try_clone()?);
    feed.guard_with(mocap_cli::allow::Guard::new(
        &opts.allow,
        Some(Log::new(TOOL, opts.quiet, false)),
    ));
    let mut trigger = Trigger(None);
    let why = drive(&mut feed, opts.stop.duration, None, &mut trigger)?;
    let Some(peer) = trigger.0 else {
        return Ok(Triggered::Stopped(why));
    };
    let reply = Reply {
        port: peer.port(),
        own: local,
    };
    announce_trigger(log, opts.to_port, peer, reply);
    let target = Target {
        ip: peer.ip(),
        port: opts.to_port,
        reply: Some(reply),
    };
    Ok(Triggered::Play(socket, target))
}

/// The `--trigger` socket, with a hint when the port is taken.
fn bind_trigger(addr: SocketAddr) -> anyhow::Result<UdpSocket> {
    net::bind_udp(addr, Some(mocap_cli::runner::POLL)).map_err(|e| {
        let hint = if e.kind() == io::ErrorKind::AddrInUse {
            format!(
                "failed to bind the trigger address {addr}: another program has UDP port {} \
                 (ifm-handshake on its default 0.0.0.0:{0}?); start the replay first, or \
                 listen elsewhere with ifm-handshake -l 127.0.0.1:{}",
                addr.port(),
                addr.port().wrapping_add(1)
            )
        } else {
            format!("failed to bind the trigger address {addr}")
        };
        anyhow::Error::new(e).context(hint)
    })
}

/// Says where a triggered replay plays to.
fn announce_trigger(log: &Log, to_port: Option<u16>, peer: SocketAddr, reply: Reply) {
    match to_port {
        Some(p) => log.info(format_args!(
            "triggered by {peer}; playing to {}:{p}",
            peer.ip()
        )),
        None if reply.is_own(SocketAddr::new(peer.ip(), reply.own.port())) => {
            log.info(format_args!(
                "triggered by {peer}; playing to {} at each datagram's port, except that \
                 datagrams for port {}, this socket's own, go to {} (the trigger's port; \
                 --to-port P sets one port for all)",
                peer.ip(),
                reply.own.port(),
                peer.port()
            ));
        }
        None => log.info(format_args!(
            "triggered by {peer}; playing to {} at each datagram's port",
            peer.ip()
        )),
    }
}

/// Without `--trigger`: a sending socket, to `--to` or 127.0.0.1.
fn untriggered(opts: &Options) -> anyhow::Result<(UdpSocket, Target)> {
    let ip = opts.to.map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |a| a.ip());
    let socket = net::sender_udp(ip).context("failed to open a UDP socket")?;
    let target = Target {
        ip,
        port: opts.to.map(|a| a.port()),
        reply: None,
    };
    Ok((socket, target))
}

/// `--hedge`: waits for the second thread and adds what it sent.
fn join_hedge(h: Hedge, counts: &mut Counts, log: &Log) {
    let theirs = h.finish();
    counts.tally.merge(&theirs.tally);
    counts.hedged = Some(theirs.tally.sent);
    counts.out_of_order += theirs.out_of_order;
    if let Some(e) = theirs.first_error {
        log.info(format_args!(
            "the --hedge thread failed to send {} datagrams, the first: {e}",
            theirs.tally.send_errors
        ));
    }
    if counts.out_of_order > 0 {
        log.info(format_args!(
            "{} datagrams went out before the one ahead of them: the other sending thread stalled for over a second",
            counts.out_of_order
        ));
    }
}

/// Opens the capture with the reader every tool's `-r` uses: pcap, pcapng,
/// a `.mocopipackets` text capture or hex lines (a raw datagram otherwise).
fn open_capture(path: &Path) -> anyhow::Result<Source> {
    if path.is_dir() {
        bail!(
            "{} is a directory; pcap-replay plays one capture file: .pcap, .pcapng, \
             a .mocopipackets text capture or hex lines",
            path.display()
        );
    }
    Source::open(&Input::Read(path.to_owned()))
}

/// Starts the `--hedge` thread: this thread stays on the CPU it is on, the
/// second goes to the others. `None` without `--hedge`, at top speed, or
/// with a single CPU (logged).
fn start_hedge(
    opts: &Options,
    log: &Log,
    socket: &UdpSocket,
    progress: Option<&ProgressBar>,
) -> anyhow::Result<Option<Hedge>> {
    if !opts.hedge || opts.pace == Pace::TopSpeed {
        return Ok(None);
    }
    #[cfg(target_os = "linux")]
    let Some((mine, others)) = crate::hedge::split_cpus() else {
        log.info(format_args!(
            "--hedge needs a second CPU to run on; sending from one thread"
        ));
        return Ok(None);
    };
    // Without pinning the race still helps when a thread is preempted, but
    // two spinning threads on one CPU would only take turns.
    #[cfg(not(target_os = "linux"))]
    if std::thread::available_parallelism().map_or(1, std::num::NonZero::get) < 2 {
        log.info(format_args!(
            "--hedge needs a second CPU to run on; sending from one thread"
        ));
        return Ok(None);
    }
    // The second thread first, so that it does not inherit this thread's
    // pinning; it pins itself to the other CPUs and says whether it could.
    let (hedge, pinned) = Hedge::start(HedgeSetup {
        socket: socket.try_clone()?,
        spin: opts.spin,
        realtime: opts.realtime,
        progress: progress.cloned(),
        #[cfg(target_os = "linux")]
        cpus: Some(others),
    })
    .context("failed to start the --hedge thread")?;
    #[cfg(target_os = "linux")]
    let pinned = pinned && crate::hedge::pin_current_thread(&mine);
    if !pinned {
        log.info(format_args!(
            "--hedge could not put the two sending threads on different CPUs; sending from one thread"
        ));
        hedge.finish();
        return Ok(None);
    }
    if cfg!(target_os = "linux") {
        log.info(format_args!(
            "--hedge: a second sending thread on another CPU races this one for every datagram"
        ));
    } else {
        log.info(format_args!(
            "--hedge: a second sending thread races this one for every datagram (CPU pinning is Linux-only: the system places the two threads)"
        ));
    }
    Ok(Some(hedge))
}

/// What one pass over the capture has seen (for the next pass's spacing).
#[derive(Default)]
struct Pass {
    first_ts: Option<Duration>,
    last_ts: Duration,
    n: u64,
    /// The capture could not be read on: this pass is over.
    over: bool,
}

/// A datagram whose time has come.
enum Played<'a> {
    /// Send `payload` to the port the capture gave (`dst`), due at `due`.
    Due {
        payload: &'a [u8],
        /// `None`: the capture gives none (text).
        dst_port: Option<u16>,
        due: Instant,
        /// Its number in playing order (what `--hedge` claims).
        seq: u64,
        /// `--impair`: what was done to it (its first copy only).
        note: Option<Note>,
    },
    /// `--impair` dropped a datagram.
    Dropped(Note),
    /// The capture cannot be read past this point (this pass ends).
    ReadStopped(String),
    /// A line of a text capture did not read; the next ones are played.
    Unreadable(String),
}

/// `--impair`'s record of one datagram of the capture (`--format json`).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Note {
    #[serde(rename = "type")]
    kind: &'static str,
    /// The datagram's number among those the filters kept (1 = the first).
    n: u64,
    /// `dropped` or `sent`.
    fate: &'static str,
    /// Dropped in a burst.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    burst: bool,
    /// Times sent (2: duplicated).
    copies: u8,
    /// Extra delay from `jitter`, µs.
    delay_us: u64,
    /// Held back and sent after the next datagram (reordered).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    held: bool,
}

impl Note {
    fn new(n: u64, f: &Fate) -> Self {
        Self {
            kind: "replay.datagram",
            n,
            fate: if f.dropped { "dropped" } else { "sent" },
            burst: f.burst,
            copies: f.copies,
            delay_us: u64::try_from(f.delay.as_micros()).unwrap_or(u64::MAX),
            held: f.hold,
        }
    }
}

/// A datagram `--impair` let through, waiting its turn.
struct Queued {
    payload: Vec<u8>,
    dst_port: Option<u16>,
    due: Instant,
    copies: u8,
    note: Option<Note>,
}

/// `--impair`: the decisions and what they left to play.
struct Impaired {
    decide: Impair,
    queue: VecDeque<Queued>,
    /// The datagram held back until the next one is sent.
    held: Option<Queued>,
    /// Records of dropped datagrams, printed in order.
    notes: VecDeque<Note>,
    /// Datagrams offered so far.
    n: u64,
}

/// The capture at its recorded timing, pass after pass (`--loop`): each
/// datagram is handed out when due, after absolute-deadline sleeps and a
/// short spin; a wait longer than the run loop allows comes back idle with
/// the datagram held.
struct Playback<'o, O> {
    opts: &'o Options,
    log: &'o Log,
    open: &'o O,
    capture: Source,
    sleeper: crate::timing::Sleeper,
    schedule: Schedule,
    /// The clock starts when the first datagram is in hand, so opening and
    /// reading the file do not make every send look late.
    start: Option<Instant>,
    /// The next datagram (its payload in `payload`): destination port, due.
    held: Option<(Option<u16>, Instant)>,
    payload: Vec<u8>,
    pass: Pass,
    first_pass: Option<(Duration, Duration, u64)>,
    /// Capture counters of the passes before the current one (`None` for text).
    done: Option<CaptureStats>,
    skipped: u64,
    /// Lines of a text capture that did not read.
    unreadable: u64,
    /// Frame numbers over the passes, with `--loop`: it learns them in the
    /// first pass (for the hint when `--renumber` is not given) and, with
    /// `--renumber`, carries them on in the next.
    renumber: Option<Renumber>,
    /// The hint that a loop repeats frame numbers was given.
    hinted: bool,
    loops: u64,
    /// Datagrams handed out to be sent (what `--count` counts); the number
    /// of the held one.
    played: mocap_cli::args::Budget,
    /// `--hedge`: the second sending thread, told of each held datagram
    /// (sent where `Target` says) before it is due.
    hedge: Option<(&'o Hedge, Target)>,
    /// The number of the last datagram posted to it.
    posted: Option<u64>,
    /// `--impair`.
    impair: Option<Impaired>,
    /// `--impair`'s record of the held datagram.
    note: Option<Note>,
}

/// What reading on gave.
enum Read {
    /// A datagram is held (or queued by `--impair`).
    Held,
    /// The pass is over.
    End,
    /// The capture cannot be read on (this pass ends).
    Stopped(String),
    /// A line of a text capture did not read.
    Unreadable(String),
    /// Nothing yet (text on stdin).
    NotYet,
}

impl<'o, O: Fn() -> anyhow::Result<Source>> Playback<'o, O> {
    /// Adds what the passes counted (skips, loops, `--impair`,
    /// `--renumber`, unreadable lines) to the run's counts.
    fn count(&self, counts: &mut Counts, renumber: bool) {
        counts.skipped = self.skipped;
        counts.loops = self.loops;
        counts.impaired = self.impair.as_ref().map(|i| i.decide.counters());
        counts.unreadable = self.unreadable;
        if renumber {
            counts.renumbered = Some(
                self.renumber
                    .as_ref()
                    .map(Renumber::counters)
                    .unwrap_or_default(),
            );
        }
    }

    /// Plays `capture` (the first pass; `open` opens it again for the next).
    fn new(opts: &'o Options, log: &'o Log, open: &'o O, capture: Source) -> Self {
        Self {
            opts,
            log,
            open,
            capture,
            sleeper: crate::timing::Sleeper::new(),
            schedule: Schedule::new(opts.pace),
            start: None,
            held: None,
            payload: Vec::with_capacity(mocap_core::MAX_DATAGRAM),
            pass: Pass::default(),
            first_pass: None,
            done: None,
            skipped: 0,
            unreadable: 0,
            renumber: (opts.loops != 1).then(Renumber::new),
            hinted: false,
            loops: 0,
            played: opts.stop.budget(),
            hedge: None,
            posted: None,
            impair: opts.impair.map(|spec| Impaired {
                decide: Impair::new(spec),
                queue: VecDeque::new(),
                held: None,
                notes: VecDeque::new(),
                n: 0,
            }),
            note: None,
        }
    }

    /// Reads up to the next datagram the filters keep.
    fn read_next(&mut self) -> anyhow::Result<Read> {
        loop {
            let d = match self.capture.next(Duration::ZERO)? {
                Step::Item(Event::Datagram(d)) => d,
                // A damaged capture: everything before the fault was played.
                Step::Item(Event::Unreadable(e)) if e.file_offset.is_some() => {
                    return Ok(Read::Stopped(format!(
                        "{}: stopped reading: {e}",
                        self.opts.file.display()
                    )));
                }
                Step::Item(Event::Unreadable(e)) => {
                    let at = e.line.map(|l| format!("line {l}: ")).unwrap_or_default();
                    return Ok(Read::Unreadable(format!(
                        "{}: {at}{e}",
                        self.opts.file.display()
                    )));
                }
                Step::Idle => return Ok(Read::NotYet),
                Step::End(_) => break,
            };
            check(self.opts, d.src.is_some(), d.dst.is_some(), d.ts.is_some())?;
            if !keep(self.opts, d.src, d.dst) {
                self.skipped += 1;
                continue;
            }
            let ts = d.ts.unwrap_or_default();
            let dst_port = d.dst.map(|a| a.port());
            let src = d.src;
            self.pass.first_ts.get_or_insert(ts);
            self.pass.last_ts = ts;
            self.pass.n += 1;
            self.payload.clear();
            self.payload.extend_from_slice(d.payload);
            if let Some(r) = &mut self.renumber
                && (r.pass() == 0 || self.opts.renumber)
            {
                r.datagram(src, &mut self.payload);
            }
            // Deadlines are capped (a century), so the sum cannot overflow.
            let start = *self.start.get_or_insert_with(Instant::now);
            let due = start
                .checked_add(self.schedule.deadline(ts))
                .unwrap_or(start);
            let Some(imp) = &mut self.impair else {
                self.held = Some((dst_port, due));
                return Ok(Read::Held);
            };
            imp.n += 1;
            let fate = imp.decide.offer(due.saturating_duration_since(start));
            if fate.dropped {
                imp.notes.push_back(Note::new(imp.n, &fate));
                continue;
            }
            let q = Queued {
                payload: self.payload.clone(),
                dst_port,
                due: start.checked_add(fate.due).unwrap_or(start),
                copies: fate.copies,
                note: Some(Note::new(imp.n, &fate)),
            };
            if fate.hold {
                imp.held = Some(q);
                continue;
            }
            let at = q.due;
            imp.queue.push_back(q);
            if fate.release
                && let Some(mut h) = imp.held.take()
            {
                // Right after the one it was held behind.
                h.due = at;
                imp.queue.push_back(h);
            }
            return Ok(Read::Held);
        }
        // A datagram still held at the end of a pass goes last: not reordered.
        if let Some(imp) = &mut self.impair
            && let Some(h) = imp.held.take()
        {
            imp.queue.push_back(h);
            return Ok(Read::Held);
        }
        Ok(Read::End)
    }

    /// Ends a pass; `false` when no other follows.
    fn next_pass(&mut self) -> anyhow::Result<bool> {
        self.loops += 1;
        let pass = std::mem::take(&mut self.pass);
        // Nothing to play (all filtered) would loop at full spin.
        if (self.opts.loops != 0 && self.loops >= self.opts.loops) || pass.n == 0 {
            return Ok(false);
        }
        let first = *self
            .first_pass
            .get_or_insert_with(|| (pass.first_ts.unwrap_or_default(), pass.last_ts, pass.n));
        let mean_gap = if first.2 > 1 {
            first.1.saturating_sub(first.0) / u32::try_from(first.2 - 1).unwrap_or(u32::MAX)
        } else {
            Duration::ZERO
        };
        // A one-datagram (or zero-span) capture still loops at a sane pace.
        self.schedule.restart(mean_gap.max(MIN_LOOP_GAP));
        self.done = add_stats(self.done, self.capture.capture_stats());
        self.capture = (self.open)()?;
        if let Some(r) = &mut self.renumber {
            r.next_pass();
            if !self.opts.renumber && r.streams() > 0 && !self.hinted {
                self.hinted = true;
                self.log.info(format_args!(
                    "pass 2 repeats the capture's frame numbers: a receiver counts a sender \
                     restart per pass; --renumber carries them on (mocopi, Live Link Face)"
                ));
            }
        }
        Ok(true)
    }
}

impl<O: Fn() -> anyhow::Result<Source>> Feed for Playback<'_, O> {
    type Item<'a>
        = Played<'a>
    where
        Self: 'a;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Played<'_>>> {
        loop {
            if let Some(imp) = &mut self.impair {
                if let Some(note) = imp.notes.pop_front() {
                    return Ok(Step::Item(Played::Dropped(note)));
                }
                if self.held.is_none()
                    && let Some(q) = imp.queue.pop_front()
                {
                    if q.copies > 1 {
                        // The duplicate goes right after the original.
                        imp.queue.push_front(Queued {
                            payload: q.payload.clone(),
                            dst_port: q.dst_port,
                            due: q.due,
                            copies: q.copies - 1,
                            note: None,
                        });
                    }
                    self.payload = q.payload;
                    self.held = Some((q.dst_port, q.due));
                    self.note = q.note;
                }
            }
            if self.held.is_some() {
                break;
            }
            if self.pass.over {
                if !self.next_pass()? {
                    return Ok(Step::End(Stopped::EndOfInput));
                }
                continue;
            }
            match self.read_next()? {
                // `--count` reached with a datagram still to play (at the end
                // of a pass the pass ends first, so it counts in `loops`).
                Read::Held if self.played.spent() => {
                    return Ok(Step::End(Stopped::Count));
                }
                Read::Held => {}
                Read::End => self.pass.over = true,
                Read::Stopped(why) => {
                    self.pass.over = true;
                    return Ok(Step::Item(Played::ReadStopped(why)));
                }
                Read::Unreadable(why) => {
                    self.unreadable += 1;
                    return Ok(Step::Item(Played::Unreadable(why)));
                }
                Read::NotYet => return Ok(Step::Idle),
            }
        }
        let Some((dst_port, due)) = self.held else {
            return Ok(Step::Idle);
        };
        let seq = self.played.used();
        if let Some((hedge, target)) = self.hedge
            && self.posted.is_none_or(|p| p < seq)
            && hedge.post(
                seq,
                due,
                target.to(&self.opts.port_map, dst_port),
                &self.payload,
            )
        {
            self.posted = Some(seq);
        }
        // Not due within this turn, or Ctrl-C: keep the datagram, go idle
        // (the run loop stops on Ctrl-C).
        if self
            .sleeper
            .wait_for(due, self.opts.spin, wait, || !interrupted())
            != Waited::Due
        {
            return Ok(Step::Idle);
        }
        self.held = None;
        self.played.spend(1);
        Ok(Step::Item(Played::Due {
            payload: &self.payload,
            dst_port,
            due,
            seq,
            note: self.note.take(),
        }))
    }
}

/// Sends what the playback hands out and keeps the lateness.
struct Transmit<'o> {
    opts: &'o Options,
    log: &'o Log,
    /// `--impair --format json`: a record per datagram.
    out: &'o mut Output,
    socket: UdpSocket,
    target: Target,
    progress: Option<ProgressBar>,
    hedge: Option<&'o Hedge>,
    counts: Counts,
}

impl<O: Fn() -> anyhow::Result<Source>> FeedHandler<Playback<'_, O>> for Transmit<'_> {
    fn item(&mut self, played: Played<'_>) -> anyhow::Result<Flow> {
        let (payload, dst_port, due, seq, note) = match played {
            Played::Due {
                payload,
                dst_port,
                due,
                seq,
                note,
            } => (payload, dst_port, due, seq, note),
            Played::Dropped(note) => {
                if self.opts.format == Format::Json {
                    self.out.json(&note)?;
                }
                return Ok(Flow::Continue);
            }
            Played::ReadStopped(why) => {
                self.log.info(format_args!("{why}"));
                return Ok(Flow::Continue);
            }
            Played::Unreadable(why) => {
                self.counts.unreadable += 1;
                if self.counts.unreadable == 1 {
                    self.log.info(format_args!(
                        "{why}; skipped (further ones are counted: unreadable)"
                    ));
                }
                return Ok(Flow::Continue);
            }
        };
        let to = self.target.to(&self.opts.port_map, dst_port);
        // At top speed there are no deadlines to be late for.
        let deadline = (self.opts.pace != Pace::TopSpeed).then_some(due);
        // None: the second thread got there first; it sends and counts this one.
        let Some(result) = send_claimed(
            self.hedge.map(Hedge::claims),
            seq,
            (&self.socket, to, payload),
            deadline,
            &mut self.counts.tally,
            &mut self.counts.out_of_order,
        ) else {
            return Ok(Flow::Continue);
        };
        if let Err(e) = &result
            && self.counts.tally.send_errors == 1
        {
            self.log.info(format_args!(
                "failed to send to {to}: {e} (counting further failures)"
            ));
        }
        if let Some(n) = note
            && self.opts.format == Format::Json
        {
            self.out.json(&n)?;
        }
        if let Some(pb) = &self.progress {
            pb.inc(1);
        }
        Ok(Flow::Continue)
    }
}

/// Waits for the first datagram on the trigger socket.
struct Trigger(Option<SocketAddr>);

impl FeedHandler<UdpFeed> for Trigger {
    fn item(&mut self, (peer, _): (SocketAddr, &[u8])) -> anyhow::Result<Flow> {
        self.0 = Some(peer);
        Ok(Flow::Stop(Stopped::Tool("triggered")))
    }
}

fn add_stats(a: Option<CaptureStats>, b: Option<CaptureStats>) -> Option<CaptureStats> {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => return a.or(b),
    };
    Some(CaptureStats {
        packets: a.packets + b.packets,
        datagrams: a.datagrams + b.datagrams,
        non_udp: a.non_udp + b.non_udp,
        fragments: a.fragments + b.fragments,
        reassembled: a.reassembled + b.reassembled,
        dropped: a.dropped + b.dropped,
        truncated: a.truncated + b.truncated,
        untimed: a.untimed + b.untimed,
        unsupported_link: a.unsupported_link + b.unsupported_link,
    })
}

/// Refuses what the flags cannot do with a datagram of this input: text
/// captures carry no addresses, hex lines no times either.
fn check(o: &Options, src: bool, dst: bool, timed: bool) -> anyhow::Result<()> {
    let file = o.file.display();
    let why = if !timed && matches!(o.pace, Pace::Recorded { .. }) {
        format!(
            "{file}: its datagrams carry no times (hex lines, or one raw datagram); \
             pace them with --pps N or --topspeed"
        )
    } else if !dst && o.to.is_none() && o.trigger.is_none() {
        format!(
            "{file}: a text capture names no destination port; give one with --to HOST:PORT \
             (mocopi's is 12351: --to 127.0.0.1:12351)"
        )
    } else if !(src && dst) && (!o.filter_ports.is_empty() || o.src.is_some() || o.dst.is_some()) {
        format!(
            "{file}: a text capture carries no addresses, so --filter-port, --src and --dst \
             cannot select from it"
        )
    } else {
        return Ok(());
    };
    Err(UsageError(why).into())
}

/// Whether the filters keep a datagram (one without addresses only when
/// there are none).
fn keep(opts: &Options, src: Option<SocketAddr>, dst: Option<SocketAddr>) -> bool {
    let port = |a: Option<SocketAddr>| a.is_some_and(|a| opts.filter_ports.contains(&a.port()));
    (opts.filter_ports.is_empty() || port(src) || port(dst))
        && opts.src.is_none_or(|ip| src.is_some_and(|a| a.ip() == ip))
        && opts.dst.is_none_or(|ip| dst.is_some_and(|a| a.ip() == ip))
}

fn map_port(map: &[(u16, u16)], port: u16) -> u16 {
    map.iter()
        .find(|(from, _)| *from == port)
        .map_or(port, |(_, to)| *to)
}

fn progress_bar(opts: &Options, log: &Log) -> anyhow::Result<Option<ProgressBar>> {
    use std::io::IsTerminal as _;
    if log.is_quiet() || !io::stderr().is_terminal() {
        return Ok(None);
    }
    // One quick pass counts the datagrams, so the bar can show an ETA
    // (stdin cannot be read twice).
    let mut total = 0u64;
    if opts.file.as_os_str() != "-" {
        let mut d = open_capture(&opts.file)?;
        while let Ok(Step::Item(e)) = d.next(Duration::ZERO) {
            match e {
                Event::Datagram(c) if keep(opts, c.src, c.dst) => total += 1,
                Event::Unreadable(e) if e.file_offset.is_some() => break,
                _ => {}
            }
        }
    }
    let total = if opts.loops == 0 || opts.file.as_os_str() == "-" {
        None
    } else {
        Some(total * opts.loops)
    };
    let pb = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    let template = if total.is_some() {
        "{bar:30} {pos}/{len} datagrams, {elapsed} elapsed, ETA {eta}"
    } else {
        "{spinner} {pos} datagrams, {elapsed} elapsed"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        pb.set_style(style);
    }
    Ok(Some(pb))
}

#[derive(Serialize)]
struct Timing {
    p50: u32,
    p99: u32,
    max: u32,
}

#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    tool: &'a str,
    sent: u64,
    bytes: u64,
    skipped: u64,
    send_errors: u64,
    loops: u64,
    /// With `--hedge`: how many of `sent` the second thread sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    hedged: Option<u64>,
    timing_error_us: Option<Timing>,
    elapsed_s: f64,
    stopped: Stopped,
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<CaptureStats>,
    /// `--impair`: dropped, duplicated, reordered, delayed, seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    impaired: Option<ImpairCounters>,
    /// `--renumber`: renumbered, kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    renumbered: Option<RenumberCounters>,
    /// Lines of a text capture that did not read, skipped.
    unreadable: u64,
}

fn finish(
    opts: &Options,
    log: &Log,
    out: &mut Output,
    counts: &Counts,
    stats: Option<CaptureStats>,
    stopped: Stopped,
    start: Instant,
) -> anyhow::Result<()> {
    let elapsed = start.elapsed().as_secs_f64();
    let timing = counts
        .tally
        .lateness
        .summary()
        .map(|(p50, p99, max)| Timing { p50, p99, max });
    let rec = Summary {
        kind: "summary",
        tool: TOOL,
        sent: counts.tally.sent,
        bytes: counts.tally.bytes,
        skipped: counts.skipped,
        send_errors: counts.tally.send_errors,
        loops: counts.loops,
        hedged: counts.hedged,
        timing_error_us: timing,
        elapsed_s: round3(elapsed),
        stopped,
        capture: stats,
        impaired: counts.impaired,
        renumbered: counts.renumbered,
        unreadable: counts.unreadable,
    };
    report(out, log, opts.format == Format::Json, &rec, true)?;
    Ok(())
}

impl Record for Summary<'_> {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "done ({}): sent {} datagrams ({} bytes) in {:.3} s, {} skipped by filters, {} send errors",
            self.stopped, self.sent, self.bytes, self.elapsed_s, self.skipped, self.send_errors
        )?;
        if let Some(h) = self.hedged {
            write!(f, " ({h} sent by the --hedge thread)")?;
        }
        if let Some(t) = &self.timing_error_us {
            write!(
                f,
                "; timing error p50 {} µs, p99 {} µs, max {} µs",
                t.p50, t.p99, t.max
            )?;
        }
        if let Some(i) = &self.impaired {
            write!(
                f,
                "\n  impaired (seed {}): {} dropped, {} duplicated, {} reordered, {} delayed",
                i.seed, i.dropped, i.duplicated, i.reordered, i.delayed
            )?;
        }
        if let Some(r) = &self.renumbered {
            write!(
                f,
                "\n  renumbered: {} datagrams, {} numbered ones kept as captured",
                r.renumbered, r.kept
            )?;
        }
        if self.unreadable > 0 {
            write!(f, "\n  {} unreadable lines skipped", self.unreadable)?;
        }
        if let Some(c) = &self.capture
            && (c.fragments > 0 || c.non_udp > 0 || c.truncated > 0)
        {
            write!(
                f,
                "\n  capture: {} non-UDP, {} fragments ({} datagrams reassembled, {} dropped), {} truncated",
                c.non_udp, c.fragments, c.reassembled, c.dropped, c.truncated
            )?;
        }
        Ok(())
    }
}
