//! The run: sockets (or a capture) into the state model on the one run
//! loop, pass-through with counted sends, `-w` recording, and the two
//! outputs the model drives: the screen, or `top.stream` records every
//! `--interval` and a summary.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use mocap_cli::allow::Guard;
use mocap_cli::args::Budget;
use mocap_cli::inbox::Inbox;
use mocap_cli::net::Link;
use mocap_cli::output::{report, round3};
use mocap_cli::prelude::*;
use mocap_cli::runner::{Feed, Step};
use mocap_cli::sends::{SendRecord, write_sends};
use mocap_cli::source::{Event, Input, Recorder, Source};
use mocap_core::protocol::Protocol;
use serde::Serialize;

use crate::screen::{Action, Note, View};
use crate::state::{MAX_STREAMS, Row, Taken, Top};
use crate::term::{Heard, Screen};

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "mocap-top";

/// Longest time between two screen redraws, and the shortest: a person
/// reads a table a few times a second, whatever the datagram rate.
const REDRAW: Duration = Duration::from_millis(100);

/// Why a run ends when its terminal hangs up (a closed tmux pane or ssh
/// session): as `q` does, with the summary on stderr if that is still there.
const TERMINAL_GONE: Stopped = Stopped::Tool("terminal closed");

/// Everything `mocap-top` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) listen: Vec<SocketAddr>,
    pub(crate) read: Option<PathBuf>,
    pub(crate) to: Vec<SocketAddr>,
    pub(crate) screen: bool,
    pub(crate) interval: Duration,
    /// `--expire`.
    pub(crate) expire: Duration,
    pub(crate) write: Option<PathBuf>,
    pub(crate) record_refused: bool,
    pub(crate) allow: mocap_cli::allow::AllowArgs,
    pub(crate) stop: StopArgs,
    pub(crate) log: LogArgs,
}

/// A listening address and where its datagrams are passed on.
struct Listening {
    addr: SocketAddr,
    link: Option<Link>,
}

/// Sockets, or a capture.
enum Inlet {
    Listen(Inbox),
    Read(Reading),
}

/// A capture read on a thread of its own: a live `tcpdump -w - | mocap-top
/// -r -` blocks in its read while nothing is captured, and keys, redraws
/// and staleness must not wait for the next datagram.
struct Reading {
    rx: Receiver<anyhow::Result<Read>>,
    /// The datagram handed out last (borrowed until the next call).
    payload: Vec<u8>,
    hold: Hold,
}

/// What the reading thread took from the capture.
enum Read {
    Datagram {
        listen: Option<SocketAddr>,
        sender: Option<SocketAddr>,
        payload: Vec<u8>,
    },
    Unreadable,
    End(Stopped),
}

/// Datagrams read ahead of the run loop; the capture is paced, so the
/// thread waits here only when handling fell far behind.
const READ_AHEAD: usize = 1024;

impl Reading {
    fn start(mut source: Source, hold: Hold) -> anyhow::Result<Self> {
        source.pace_recorded();
        let (tx, rx) = sync_channel(READ_AHEAD);
        std::thread::Builder::new()
            .name("capture".into())
            .spawn(move || {
                loop {
                    let read = match source.next(mocap_cli::runner::POLL) {
                        Ok(Step::Item(Event::Datagram(d))) => Read::Datagram {
                            listen: d.dst,
                            sender: d.src,
                            payload: d.payload.to_vec(),
                        },
                        Ok(Step::Item(Event::Unreadable(_))) => Read::Unreadable,
                        Ok(Step::Idle) => continue,
                        Ok(Step::End(why)) => match source.damage() {
                            Ok(()) => Read::End(why),
                            Err(e) => {
                                let _ = tx.send(Err(e));
                                return;
                            }
                        },
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    let end = matches!(read, Read::End(_));
                    // The run is over when no one takes what was read.
                    if tx.send(Ok(read)).is_err() || end {
                        return;
                    }
                }
            })
            .context("failed to start reading the capture")?;
        Ok(Self {
            rx,
            payload: Vec::new(),
            hold,
        })
    }
}

/// Whether a capture that ended leaves the screen up until `q`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hold {
    No,
    Open,
    Ended,
}

/// What the inlet produced.
enum Got<'a> {
    Datagram {
        /// Index of the listening socket (live input only).
        socket: Option<usize>,
        listen: Option<SocketAddr>,
        sender: Option<SocketAddr>,
        at: Option<Instant>,
        payload: &'a [u8],
    },
    Unreadable,
    /// The capture ended; the screen stays up until `q`.
    Ended,
}

impl Feed for Inlet {
    type Item<'a> = Got<'a>;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Got<'_>>> {
        Ok(match self {
            Self::Listen(inbox) => match inbox.next(wait)? {
                Step::Item(r) => Step::Item(Got::Datagram {
                    socket: Some(r.socket),
                    listen: None,
                    sender: Some(r.from),
                    at: Some(r.at),
                    payload: r.bytes,
                }),
                Step::Idle => Step::Idle,
                Step::End(why) => Step::End(why),
            },
            Self::Read(r) if r.hold == Hold::Ended => {
                std::thread::sleep(wait);
                Step::Idle
            }
            Self::Read(r) => match r.rx.recv_timeout(wait) {
                Ok(read) => match read? {
                    Read::Datagram {
                        listen,
                        sender,
                        payload,
                    } => {
                        r.payload = payload;
                        Step::Item(Got::Datagram {
                            socket: None,
                            listen,
                            sender,
                            at: None,
                            payload: &r.payload,
                        })
                    }
                    Read::Unreadable => Step::Item(Got::Unreadable),
                    Read::End(_) if r.hold == Hold::Open => {
                        r.hold = Hold::Ended;
                        Step::Item(Got::Ended)
                    }
                    Read::End(why) => Step::End(why),
                },
                Err(RecvTimeoutError::Timeout) => Step::Idle,
                Err(RecvTimeoutError::Disconnected) => {
                    anyhow::bail!("the capture's reading thread ended")
                }
            },
        })
    }

    fn holding(&self) -> bool {
        match self {
            Self::Listen(inbox) => inbox.holding(),
            Self::Read(..) => false,
        }
    }
}

/// Runs the tool to the end and prints the summary.
///
/// # Errors
/// Input that cannot be opened or read, no port to listen on, output errors.
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    // On the screen, log lines would scribble over the table: what they say
    // is drawn instead, and the summary comes after the screen closes.
    let log = Log::new(TOOL, opts.log.quiet || opts.screen, true);
    let mut taken = Vec::new();
    let mut listens = Vec::new();
    let mut inlet = match &opts.read {
        Some(path) => {
            let source = Source::open(&Input::Read(path.clone()))?;
            let hold = if opts.screen { Hold::Open } else { Hold::No };
            Inlet::Read(Reading::start(source, hold)?)
        }
        None => {
            let mut sockets = Vec::new();
            for (addr, protocol) in listen_addresses(&opts.listen) {
                let source = match Source::open(&Input::Listen(addr)) {
                    Ok(s) => s,
                    Err(e) if opts.listen.is_empty() => {
                        let t = Taken {
                            listen: addr,
                            protocol,
                            reason: reason(&e),
                            program: (kind(&e) == Some(io::ErrorKind::AddrInUse))
                                .then(|| holder(addr.port())),
                        };
                        log.info(format_args!("{}", t.advice()));
                        taken.push(t);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                source.announce(&log);
                let (Some(socket), Some(local)) = (source.socket(), source.local_addr()) else {
                    anyhow::bail!("failed to use the socket bound to {addr}");
                };
                let link = match opts.to.get(sockets.len()) {
                    Some(to) => Some(
                        Link::new(*to, mocap_cli::sends::Receiver::Vmc)
                            .with_context(|| format!("failed to open a socket to send to {to}"))?,
                    ),
                    None => None,
                };
                listens.push(Listening { addr: local, link });
                sockets.push(socket);
            }
            if sockets.is_empty() {
                anyhow::bail!(
                    "no default port could be listened on (every one is taken); listen \
                     elsewhere with -l ADDR, or read a capture with -r FILE|-"
                );
            }
            let inbox = Inbox::new(sockets);
            // Nothing is done per datagram but counting, unless it is passed
            // on: then the handler wakes for each, so `--to` adds no delay.
            if listens.iter().any(|l| l.link.is_some()) {
                Inlet::Listen(inbox)
            } else {
                Inlet::Listen(inbox.wake_on_deadline())
            }
        }
    };
    let mut recorder = match &opts.write {
        Some(path) => Some(Recorder::create(path, 0)?),
        None => None,
    };
    if let Some(r) = &recorder {
        log.info(format_args!("recording to {}", r.path().display()));
    }
    let screen = if opts.screen {
        Some(Screen::open().context("failed to set up the terminal")?)
    } else {
        None
    };
    let now = Instant::now();
    let mut view = View::new();
    view.notes = taken
        .iter()
        .map(|t| Note::Taken(t.clone()))
        .chain(
            listens
                .iter()
                .map(|l| Note::Listening(l.addr, l.link.as_ref().map(Link::to))),
        )
        .collect();
    if let Some(r) = &recorder {
        view.recording = Some(r.path().display().to_string());
    }
    let guard = Guard::new(
        &opts.allow,
        Some(Log::new(TOOL, opts.log.quiet || opts.screen, true)),
    );
    let guard = if opts.record_refused {
        guard.recording_refused()
    } else {
        guard
    };
    let mut h = Handler {
        guard,
        top: Top::new(),
        start: now,
        out: Output::stdout(true),
        log,
        listens,
        taken,
        screen,
        view,
        interval: opts.interval,
        expire: opts.expire,
        next_out: now + if opts.screen { REDRAW } else { opts.interval },
        budget: opts.stop.budget(),
        recorder: recorder.take(),
        write: opts.write.clone(),
        unreadable: 0,
        recorded: Vec::new(),
        recording_failed: None,
        json: !opts.screen,
    };
    if h.screen.is_some() {
        h.draw()?;
    }
    let stopped = drive(&mut inlet, opts.stop.duration, None, &mut h);
    // The terminal is given back before anything else is printed.
    h.screen = None;
    // A capture's source records nothing (`-w` is the handler's): there is
    // nothing of it to finish.
    let stopped = stopped?;
    let dropped = match &inlet {
        Inlet::Listen(inbox) => inbox.dropped(),
        Inlet::Read(..) => 0,
    };
    h.finish(stopped, dropped)
}

/// Every default port of every protocol, or the `-l` addresses.
fn listen_addresses(given: &[SocketAddr]) -> Vec<(SocketAddr, &'static str)> {
    if !given.is_empty() {
        return given.iter().map(|a| (*a, "")).collect();
    }
    Protocol::ALL
        .iter()
        .flat_map(|p| {
            p.default_ports()
                .iter()
                .map(|port| (SocketAddr::from(([0, 0, 0, 0], *port)), p.name()))
        })
        .collect()
}

/// The kind of the I/O error behind `e`.
fn kind(e: &anyhow::Error) -> Option<io::ErrorKind> {
    e.chain()
        .find_map(|c| c.downcast_ref::<io::Error>())
        .map(io::Error::kind)
}

/// The program holding UDP `port`, as the OS's socket table says:
/// `NAME (pid N)`, or `unknown` when it does not say (a process of another
/// user without the rights to see it, a platform it cannot read).
fn holder(port: u16) -> String {
    /// Longest name kept (a Windows path name can be long).
    const MAX_NAME: usize = 64;
    match listeners::get_process_by_port(port, listeners::Protocol::UDP) {
        Ok(p) if !p.name.is_empty() => {
            let name: String = p.name.chars().take(MAX_NAME).collect();
            format!("{name} (pid {})", p.pid)
        }
        _ => "unknown".into(),
    }
}

/// Why a bind failed, in a few words.
fn reason(e: &anyhow::Error) -> String {
    match kind(e) {
        Some(io::ErrorKind::AddrInUse) => "another program has it".into(),
        Some(io::ErrorKind::PermissionDenied) => "not permitted".into(),
        _ => format!("{e:#}"),
    }
}

struct Handler {
    /// `--allow`.
    guard: Guard,
    top: Top,
    start: Instant,
    out: Output,
    log: Log,
    listens: Vec<Listening>,
    taken: Vec<Taken>,
    screen: Option<Screen>,
    view: View,
    interval: Duration,
    expire: Duration,
    /// When the next records are written or the screen is drawn.
    next_out: Instant,
    /// `-n` datagrams.
    budget: Budget,
    recorder: Option<Recorder>,
    /// `-w`: where the `w` key records (else a new name each time).
    write: Option<PathBuf>,
    /// Input that could not be turned into a datagram (damaged capture lines).
    unreadable: u64,
    /// Recordings finished with the `w` key.
    recorded: Vec<PathBuf>,
    /// Why the recording stopped early (a full disk): the run went on, and
    /// ends in error once its summary is out.
    recording_failed: Option<String>,
    /// JSON Lines on stdout (no screen).
    json: bool,
}

/// A `top.stream` record.
#[derive(Serialize)]
struct StreamRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    row: &'a Row,
}

impl Handler {
    /// After an item: `-n` is counted here, not only at the tick, because
    /// a batch the inbox holds is handed over whole before the next tick.
    fn flow(&self) -> Flow {
        if self.budget.spent() {
            Flow::Stop(Stopped::Count)
        } else {
            Flow::Continue
        }
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn records(&mut self) -> io::Result<()> {
        let now = self.now();
        for row in self.top.rows(now) {
            self.out.json(&StreamRecord {
                kind: "top.stream",
                row: &row,
            })?;
        }
        self.out.flush()
    }

    fn draw(&mut self) -> anyhow::Result<()> {
        let now = self.now();
        let sends: Vec<SendRecord> = self.sends();
        if let Some(screen) = &mut self.screen {
            screen.draw(&self.top, &self.view, now, &sends)?;
        }
        Ok(())
    }

    fn sends(&self) -> Vec<SendRecord> {
        self.listens
            .iter()
            .filter_map(|l| l.link.as_ref().map(Link::record))
            .collect()
    }

    /// Keys since the last redraw; `Some` when one of them ends the run.
    fn keys(&mut self) -> anyhow::Result<Option<Stopped>> {
        let Some(screen) = &mut self.screen else {
            return Ok(None);
        };
        let keys = match screen.input() {
            Heard::Keys(keys) => keys,
            Heard::Gone => return Ok(Some(TERMINAL_GONE)),
        };
        let now = self.now();
        for key in keys {
            match self.view.key(key, &self.top, now) {
                Action::None => {}
                Action::Quit => return Ok(Some(Stopped::Tool("quit"))),
                Action::ToggleRecording => self.toggle_recording()?,
                Action::ClearQuiet => self.top.clear_quiet(now),
                Action::Redraw => {
                    if let Some(screen) = &mut self.screen {
                        screen.clear()?;
                    }
                }
            }
        }
        Ok(None)
    }

    /// Records one datagram, if recording; a write that fails stops the
    /// recording, not the run.
    fn record(&mut self, sender: Option<SocketAddr>, listen: Option<SocketAddr>, payload: &[u8]) {
        if let Some(r) = &mut self.recorder
            && let Err(e) = r.record(sender, listen, None, payload)
        {
            self.stop_recording(&e);
        }
    }

    /// A recording whose write failed: closed, said loudly once (on the
    /// screen, and on stderr), and the run's exit status will say so.
    fn stop_recording(&mut self, e: &anyhow::Error) {
        let Some(r) = self.recorder.take() else {
            return;
        };
        let what = format!(
            "{}: RECORDING STOPPED, {e:#} (the run goes on; exit status 1 at the end)",
            r.path().display()
        );
        self.log.always(format_args!("error: {what}"));
        self.view.recording = None;
        self.view.notes.push(Note::RecordingStopped(what));
        self.recording_failed = Some(format!("{e:#}"));
    }

    fn toggle_recording(&mut self) -> anyhow::Result<()> {
        if let Some(mut r) = self.recorder.take() {
            match r.finish(&self.log) {
                Ok(()) => self.recorded.push(r.path().to_owned()),
                Err(e) => {
                    self.recorder = Some(r);
                    self.stop_recording(&e);
                }
            }
            self.view.recording = None;
            return Ok(());
        }
        let path = self.write.clone().unwrap_or_else(|| {
            PathBuf::from(format!(
                "mocap-top-{}.pcapng",
                mocap_cli::source::unix_time().as_secs()
            ))
        });
        let r = Recorder::create(&path, 0)?;
        self.view.recording = Some(path.display().to_string());
        self.recorder = Some(r);
        Ok(())
    }

    fn finish(&mut self, stopped: Stopped, dropped: u64) -> anyhow::Result<()> {
        if let Some(mut r) = self.recorder.take() {
            match r.finish(&self.log) {
                Ok(()) => self.recorded.push(r.path().to_owned()),
                Err(e) => {
                    self.recorder = Some(r);
                    self.stop_recording(&e);
                }
            }
        }
        let json = self.json;
        if json {
            self.records()?;
        }
        let rec = Summary {
            kind: "summary",
            tool: TOOL,
            stopped,
            elapsed_s: round3(self.now().as_secs_f64()),
            datagrams: self.top.datagrams,
            streams: self.top.len(),
            per_stream: self.top.rows(self.now()),
            refused: self.guard.refused(),
            evicted: self.top.evicted,
            expired: self.top.expired,
            unreadable: self.unreadable,
            dropped,
            listening: self.listens.iter().map(|l| l.addr).collect(),
            taken: &self.taken,
            sends: self.sends(),
            recorded: &self.recorded,
        };
        report(&mut self.out, &self.log, json, &rec, true)?;
        match &self.recording_failed {
            Some(why) => anyhow::bail!("the recording stopped early: {why}"),
            None => Ok(()),
        }
    }
}

impl FeedHandler<Inlet> for Handler {
    fn item(&mut self, got: Got<'_>) -> anyhow::Result<Flow> {
        if matches!(got, Got::Ended) {
            self.view.ended = true;
            return Ok(Flow::Continue);
        }
        self.budget.spend(1);
        let (socket, listen, sender, at, payload) = match got {
            Got::Datagram {
                socket,
                listen,
                sender,
                at,
                payload,
            } => (socket, listen, sender, at, payload),
            Got::Unreadable => {
                self.unreadable += 1;
                return Ok(self.flow());
            }
            Got::Ended => return Ok(Flow::Continue),
        };
        let now = at.map_or_else(|| self.now(), |at| at.saturating_duration_since(self.start));
        let listening = socket.and_then(|i| self.listens.get_mut(i));
        let listen = listen.or_else(|| listening.as_ref().map(|l| l.addr));
        if !self.guard.admit(sender) {
            if self.guard.records_refused() {
                self.record(sender, listen, payload);
            }
            return Ok(self.flow());
        }
        if let Some(link) = listening.and_then(|l| l.link.as_mut()) {
            link.send(payload, &self.log);
        }
        self.record(sender, listen, payload);
        self.top.handle_datagram(now, listen, sender, payload);
        Ok(self.flow())
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        if self.budget.spent() {
            return Ok(Some(Stopped::Count));
        }
        let now = Instant::now();
        if now < self.next_out {
            return Ok(None);
        }
        if self.screen.is_some() {
            self.next_out = later(self.next_out, REDRAW, now);
            if let Some(why) = self.keys()? {
                return Ok(Some(why));
            }
            if let Err(e) = self.draw() {
                // Hung up between the look at the keys and the draw.
                return match self.keys()? {
                    Some(why) => Ok(Some(why)),
                    None => Err(e),
                };
            }
        } else {
            self.next_out = later(self.next_out, self.interval, now);
            self.records()?;
        }
        let now = self.now();
        self.top.forget(now);
        self.top.expire(now, self.expire);
        Ok(None)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        Some(self.next_out)
    }
}

/// The next time after `at` by steps of `every` that is not already past.
fn later(at: Instant, every: Duration, now: Instant) -> Instant {
    let next = at + every;
    if next <= now { now + every } else { next }
}

/// The last record.
#[derive(Serialize)]
struct Summary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    tool: &'static str,
    stopped: Stopped,
    elapsed_s: f64,
    datagrams: u64,
    streams: usize,
    /// Each stream still in the table, as its `top.stream` record.
    per_stream: Vec<Row>,
    /// Datagrams from senders `--allow` does not admit.
    refused: u64,
    /// Streams dropped to stay within the bound (the least recent first).
    evicted: u64,
    /// Streams removed after `--expire` without a datagram, or by `c`.
    expired: u64,
    /// Capture input that was not a datagram.
    unreadable: u64,
    /// Datagrams dropped because handling fell behind receiving.
    dropped: u64,
    listening: Vec<SocketAddr>,
    taken: &'a [Taken],
    sends: Vec<SendRecord>,
    recorded: &'a [PathBuf],
}

impl Record for Summary<'_> {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "done ({}): {} datagrams, {} in {:.1} s",
            self.stopped,
            self.datagrams,
            mocap_cli::output::plural(self.streams as u64, "stream", "streams"),
            self.elapsed_s
        )?;
        if self.expired > 0 {
            write!(f, ", {} expired", self.expired)?;
        }
        if self.evicted > 0 {
            write!(f, ", {} evicted (over {MAX_STREAMS})", self.evicted)?;
        }
        if self.dropped > 0 {
            write!(f, ", {} dropped (handling fell behind)", self.dropped)?;
        }
        if self.unreadable > 0 {
            write!(f, ", {} unreadable input", self.unreadable)?;
        }
        // Live streams come first; past a screenful, strangers are counted.
        for r in self.per_stream.iter().take(SUMMARY_STREAMS) {
            write!(f, "\n  {}", StreamLine(r))?;
        }
        if let Some(more) = self.per_stream.len().checked_sub(SUMMARY_STREAMS)
            && more > 0
        {
            write!(
                f,
                "\n  … and {more} more streams (--format json lists every one)"
            )?;
        }
        for t in self.taken {
            write!(f, "\n  {}", t.advice())?;
        }
        write_sends(f, &self.sends)?;
        for p in self.recorded {
            write!(f, "\n  recorded to {}", show(p))?;
        }
        Ok(())
    }
}

/// Most streams the human summary has a line for.
const SUMMARY_STREAMS: usize = 40;

/// One stream in the human summary.
struct StreamLine<'a>(&'a Row);

impl fmt::Display for StreamLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        let addr = |a: Option<SocketAddr>| a.map_or_else(|| "-".to_owned(), |a| a.to_string());
        let n = |n: u64, one: &str| mocap_cli::output::plural(n, one, &format!("{one}s"));
        write!(
            f,
            "{} on {} from {}: {}, {}",
            r.from.key.kind.name(),
            addr(r.from.listen),
            addr(r.from.sender),
            n(r.counts.datagrams, "datagram"),
            n(r.counts.frames, "frame")
        )?;
        if let Some(pct) = r.counts.loss_pct {
            write!(f, ", {} lost ({pct:.1} %)", r.counts.lost)?;
            if r.counts.duplicates + r.counts.reordered + r.counts.restarts > 0 {
                write!(
                    f,
                    ", {} duplicated, {} reordered, {}",
                    r.counts.duplicates,
                    r.counts.reordered,
                    n(r.counts.restarts, "restart")
                )?;
            }
        }
        if r.counts.errors > 0 {
            write!(f, ", {}", n(r.counts.errors, "error"))?;
        }
        if r.own.non_unit_rotations > 0 {
            write!(
                f,
                ", {} not unit quaternions",
                n(r.own.non_unit_rotations, "rotation")
            )?;
        }
        Ok(())
    }
}

fn show(p: &Path) -> impl fmt::Display + '_ {
    p.display()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_human_summary_has_a_line_per_stream_with_loss_in_percent() {
        let mocopi = {
            let file = std::fs::File::open(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../captures/mocopi/mocopi-frame-loss.pcapng"
            ))
            .unwrap();
            let mut d = mocap_core::pcap::Datagrams::new(file).unwrap();
            let mut out = Vec::new();
            while let Some(c) = d.next_datagram() {
                out.push(c.unwrap().payload.to_vec());
            }
            out
        };
        let mut top = Top::new();
        let at = |s: &str| Some(s.parse::<SocketAddr>().unwrap());
        for (i, d) in mocopi.iter().enumerate() {
            let t = Duration::from_millis(16 * i as u64);
            top.handle_datagram(t, at("0.0.0.0:12351"), at("10.0.0.5:50000"), d);
        }
        top.handle_datagram(
            Duration::ZERO,
            at("0.0.0.0:9000"),
            at("10.0.0.6:1"),
            b"junk",
        );
        let rec = Summary {
            kind: "summary",
            tool: TOOL,
            stopped: Stopped::Tool("quit"),
            elapsed_s: 1.0,
            datagrams: top.datagrams,
            streams: top.len(),
            per_stream: top.rows(Duration::from_secs(1)),
            refused: 0,
            evicted: 0,
            expired: 3,
            unreadable: 0,
            dropped: 0,
            listening: Vec::new(),
            taken: &[],
            sends: Vec::new(),
            recorded: &[],
        };
        let text = mocap_cli::output::Human(&rec).to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "done (quit): 9 datagrams, 2 streams in 1.0 s, 3 expired",
                "  unknown on 0.0.0.0:9000 from 10.0.0.6:1: 1 datagram, 0 frames",
                "  mocopi on 0.0.0.0:12351 from 10.0.0.5:50000: 8 datagrams, 7 frames, 2 lost \
                 (25.0 %), 1 duplicated, 0 reordered, 1 restart",
            ],
            "{text}"
        );
        let json = serde_json::to_value(&rec).unwrap();
        assert_eq!(json["per_stream"][1]["loss_pct"], 25.0);
        assert_eq!(json["per_stream"][0]["protocol"], "unknown");
        // 256 strangers: a screenful of lines, the rest counted.
        for i in 0..300u16 {
            let sender = SocketAddr::from(([10, 0, 0, 9], 1000 + i));
            top.handle_datagram(Duration::ZERO, at("0.0.0.0:9000"), Some(sender), b"x");
        }
        let rows = top.rows(Duration::from_secs(1));
        let rec = Summary {
            streams: rows.len(),
            per_stream: rows,
            ..rec
        };
        let text = mocap_cli::output::Human(&rec).to_string();
        assert_eq!(text.lines().count(), 1 + SUMMARY_STREAMS + 1, "{text}");
        assert!(
            text.ends_with("… and 216 more streams (--format json lists every one)"),
            "{text}"
        );
        assert_eq!(
            serde_json::to_value(&rec).unwrap()["per_stream"]
                .as_array()
                .unwrap()
                .len(),
            256
        );
    }

    #[test]
    fn the_program_holding_a_port_is_named() {
        let held = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = held.local_addr().unwrap().port();
        let name = std::fs::read_to_string("/proc/self/comm");
        let got = holder(port);
        // Linux names it (from /proc); elsewhere the OS's table does.
        assert!(
            got.ends_with(&format!("(pid {})", std::process::id())),
            "{got}"
        );
        if let Ok(name) = name {
            assert!(got.starts_with(name.trim()), "{got} {name}");
        }
        drop(held);
        assert_eq!(holder(port), "unknown");
    }

    #[test]
    fn no_listen_address_means_every_default_port_of_every_protocol() {
        let any = |port: u16| SocketAddr::from(([0, 0, 0, 0], port));
        let listed = listen_addresses(&[]);
        assert!(
            listed.starts_with(&[
                (any(12351), "mocopi"),
                (any(39539), "VMC (OSC)"),
                (any(39540), "VMC (OSC)"),
                (any(49983), "iFacialMocap"),
                (any(11111), "Live Link Face"),
                (any(9000), "VRChat OSC"),
                (any(39570), "VMT"),
            ]),
            "{listed:?}"
        );
        // A protocol added to the registry is listened for with no edit
        // here: every port of every row, once, under its name.
        let ports: usize = Protocol::ALL.iter().map(|p| p.default_ports().len()).sum();
        assert_eq!(listed.len(), ports);
        for p in Protocol::ALL {
            for port in p.default_ports() {
                assert!(listed.contains(&(any(*port), p.name())), "{p} {port}");
            }
        }
        // Given addresses replace the defaults, in their order.
        let given = [any(40001), "127.0.0.1:0".parse().unwrap()];
        let listed: Vec<_> = listen_addresses(&given)
            .into_iter()
            .map(|(a, _)| a)
            .collect();
        assert_eq!(listed, given);
    }
}
