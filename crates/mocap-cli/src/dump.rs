//! The one harness of the datagram dump tools (mocopi-dump, livelink-dump,
//! ifm-handshake's UDP mode): how they open their input, what they print
//! for input that cannot be read, the status-line mode of a bridge, the
//! health words of their summaries, and the run from first datagram to
//! summary. A tool keeps only what its protocol needs: its decode, its
//! records and its per-sender state ([`DumpTool`]).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use mocap_core::health::HealthReport;
use mocap_core::pcap::CaptureStats;
use mocap_core::protocol::Protocol;

use crate::allow::{AllowArgs, Guard, Refusals};
use crate::args::{Format, LogArgs, PaceArgs, STATUS_INTERVAL, StopArgs, WriteArgs};
use crate::exit::install_ctrlc;
use crate::other::{OtherProtocolCount, OtherProtocols};
use crate::output::{Log, Output, Record, fps_text, plural, report, round3};
use crate::records::ErrorRecord;
use crate::runner::{FeedHandler, Flow, Stopped};
use crate::source::{Datagram, Event, Input, InputError, Source};
use crate::status::Activity;
use crate::view::{FrameView, ViewArgs};

/// What a dump tool prints: a line per packet, JSON Lines, or — a bridge
/// (`--vmc` without `--format`) — only a status line every interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A readable line per packet.
    Human,
    /// JSON Lines.
    Json,
    /// No line per packet; the status line on stderr.
    Status,
}

impl Mode {
    /// `--format` as given; when it is not, the status line for a tool that
    /// bridges (its datagrams go somewhere else) and human lines otherwise.
    #[must_use]
    pub fn resolve(format: Option<Format>, bridging: bool) -> Self {
        match format {
            Some(Format::Json) => Self::Json,
            Some(Format::Human) => Self::Human,
            None if bridging => Self::Status,
            None => Self::Human,
        }
    }

    /// How often the periodic record comes: `--stats-interval`, and for the
    /// status line [`STATUS_INTERVAL`] when it is not given.
    #[must_use]
    pub fn stats_every(self, log: &LogArgs) -> Option<Duration> {
        match self {
            Self::Status => Some(log.stats_interval.unwrap_or(STATUS_INTERVAL)),
            _ => log.stats_interval,
        }
    }
}

/// The flags every dump tool takes besides its input and its protocol's
/// own: pacing, `-w`, `--allow`, when to stop, logging.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct DumpArgs {
    /// `--topspeed`.
    #[command(flatten)]
    pub pace: PaceArgs,
    /// `-w`, `--record-refused`.
    #[command(flatten)]
    pub record: WriteArgs,
    /// `--allow`.
    #[command(flatten)]
    pub allow: AllowArgs,
    /// `-n`, `--duration`.
    #[command(flatten)]
    pub stop: StopArgs,
    /// `--quiet`, `--stats-interval`.
    #[command(flatten)]
    pub log: LogArgs,
    /// `--every-frame`.
    #[command(flatten)]
    pub view: ViewArgs,
}

/// How a dump tool opens its input.
#[derive(Clone, Copy, Debug)]
pub struct Spec<'a> {
    /// The tool's name, as log lines start.
    pub tool: &'static str,
    /// Its protocol: the port `-w` records under, and what other protocols
    /// are told apart from.
    pub protocol: Protocol,
    /// `-l`/`-r`.
    pub input: &'a Input,
    /// The shared flags.
    pub args: &'a DumpArgs,
    /// Whether the tool sends what it decodes to sockets (`--vmc` …): a
    /// capture then plays at its recorded timing unless `--topspeed`.
    pub sends: bool,
}

/// What every dump tool holds beside its protocol's state.
#[expect(missing_debug_implementations, reason = "Output and Log hold writers")]
pub struct Core {
    /// The tool's name.
    pub tool: &'static str,
    /// What it prints.
    pub mode: Mode,
    /// What `--allow` refused (shared with the source, which checks).
    pub guard: Guard,
    /// Records on stdout.
    pub out: Output,
    /// Log and progress on stderr.
    pub log: Log,
    /// When the run started.
    pub started: Instant,
    /// The first datagram's receive time, which human lines count from.
    pub first_arrival: Option<f64>,
    /// Other protocols sent to this port.
    pub other: OtherProtocols,
    /// What reading a capture met, once the input is finished.
    pub capture: Option<CaptureStats>,
    /// The human lines of each datagram ([`Mode::Human`]): built in
    /// `view.frame()`, ended with [`Core::end_frame`]; on a terminal at most
    /// a few a second.
    pub view: FrameView,
    /// Arrivals for the status line: the last interval's rate, silence.
    pub activity: Activity,
    /// The interval a `stats` record covers, set just before the tool
    /// writes it (`None` in the summary): what its human line reports
    /// instead of the rate since the start.
    pub interval: Option<crate::status::Interval>,
}

impl Core {
    /// Opens the input as every dump tool does: Ctrl-C (and SIGTERM/SIGHUP)
    /// handled, the source opened, `-w` recording, pacing, `--allow`
    /// checked by the source, the input announced.
    ///
    /// # Errors
    /// Input that cannot be opened, a `-w` file that cannot be created.
    pub fn open(spec: &Spec<'_>, mode: Mode) -> anyhow::Result<(Source, Self)> {
        install_ctrlc()?;
        let source = Source::open(spec.input)?;
        Self::with_source(source, spec, mode)
    }

    /// The same around a source the tool opened itself (several listening
    /// sockets: [`Source::listening`]); `spec.input` is not opened again.
    ///
    /// # Errors
    /// A `-w` file that cannot be created.
    pub fn with_source(
        mut source: Source,
        spec: &Spec<'_>,
        mode: Mode,
    ) -> anyhow::Result<(Source, Self)> {
        install_ctrlc()?;
        let args = spec.args;
        if let Some(path) = &args.record.write {
            let port = spec.protocol.default_ports().first().copied().unwrap_or(0);
            source.record_to(path, port, Log::new(spec.tool, args.log.quiet, false))?;
        }
        if spec.sends && !args.pace.topspeed {
            source.pace_recorded();
        }
        let guard = Guard::new(
            &args.allow,
            Some(Log::new(spec.tool, args.log.quiet, false)),
        );
        let guard = if args.record.record_refused {
            guard.recording_refused()
        } else {
            guard
        };
        source.guard_with(guard.clone());
        let live = source.is_live();
        let log = Log::new(spec.tool, args.log.quiet, live);
        source.announce(&log);
        let core = Self {
            tool: spec.tool,
            mode,
            guard,
            out: Output::stdout(live),
            log,
            started: Instant::now(),
            first_arrival: None,
            other: OtherProtocols::new(spec.protocol),
            capture: None,
            view: FrameView::for_stdout(args.view, live),
            activity: Activity::new(Duration::ZERO, source.local_addr()),
            interval: None,
        };
        Ok((source, core))
    }

    /// Writes an input item that could not be read (the tool has counted
    /// it): the shared `error` record, a human line, or nothing in status
    /// mode.
    ///
    /// # Errors
    /// Output errors.
    pub fn unreadable(&mut self, e: &InputError) -> std::io::Result<()> {
        match self.mode {
            Mode::Json => self.out.json(&ErrorRecord::from(e)),
            Mode::Human => self.out.text(format_args!("error     {e}\n")),
            Mode::Status => Ok(()),
        }
    }

    /// Writes a `stats` record (`last` false) or the summary.
    ///
    /// # Errors
    /// Output errors.
    pub fn report<R: Record + ?Sized>(&mut self, r: &R, last: bool) -> std::io::Result<()> {
        report(&mut self.out, &self.log, self.mode == Mode::Json, r, last)
    }

    /// The human lines built in `view.frame()` are one datagram's: written,
    /// or on a terminal held until their slot.
    ///
    /// # Errors
    /// Output errors.
    pub fn end_frame(&mut self) -> std::io::Result<()> {
        let now = self.started.elapsed();
        self.view.end_frame(now, &mut self.out, &self.log)
    }

    /// Seconds since the run started.
    #[must_use]
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// What every `stats` and `summary` record starts with, as of now.
    #[must_use]
    pub fn summary_base(&self, stopped: Option<Stopped>) -> SummaryBase {
        SummaryBase {
            elapsed_s: round3(self.elapsed_s()),
            stopped,
            refusals: self.guard.summary(),
            interval: self.interval,
        }
    }

    /// Where a datagram came from and when, for the end of a human line:
    /// ` src=ADDR t=+SECONDS` (seconds since the first datagram).
    pub fn push_origin(s: &mut String, d: &Datagram<'_>, first: Option<f64>) {
        if let Some(src) = d.src {
            let _ = write!(s, " src={src}");
        }
        if let (Some(at), Some(first)) = (d.arrival, first) {
            let _ = write!(s, " t=+{:.6}", at - first);
        }
    }
}

/// The part of a dump tool's `stats` and `summary` records that every tool
/// says alike (flattened into the record, so its fields stand at the top
/// level): how long the run took, how it stopped, what `--allow` refused.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SummaryBase {
    /// Seconds since the run started.
    pub elapsed_s: f64,
    /// How the run ended (`None` in a `stats` record).
    pub stopped: Option<Stopped>,
    /// What `--allow` refused.
    #[serde(flatten)]
    pub refusals: Refusals,
    /// The interval a `stats` record covers (human form only).
    #[serde(skip)]
    pub interval: Option<crate::status::Interval>,
}

impl SummaryBase {
    /// Whether the human line shows rates since the start: a `stats` line
    /// with its interval shows the interval's instead.
    #[must_use]
    pub fn rates_since_start(&self) -> bool {
        self.interval.is_none() || self.stopped.is_some()
    }

    /// The first line of the human form: `done (why): N packets in S s;
    /// <counters>` (or `stats: <interval>; …`), then what `--allow`
    /// refused and the other protocols that came.
    ///
    /// # Errors
    /// Formatter errors.
    pub fn write_head(
        &self,
        f: &mut std::fmt::Formatter<'_>,
        packets: u64,
        counters: &str,
        other: &OtherProtocolCount,
    ) -> std::fmt::Result {
        counters_head(f, self.stopped, self.interval)?;
        write!(
            f,
            "{packets} packets in {:.2} s; {counters}",
            self.elapsed_s
        )?;
        f.write_str(&self.refusals.human())?;
        f.write_str(&other.human())
    }
}

/// A dump tool's own part: its decode, records and per-sender state.
pub trait DumpTool {
    /// A datagram arrived (after `--allow`).
    ///
    /// # Errors
    /// Output errors and sends that end the run.
    fn datagram(&mut self, core: &mut Core, d: &Datagram<'_>) -> anyhow::Result<()>;

    /// An input item could not be read: count it (the harness writes it).
    fn unreadable(&mut self, e: &InputError);

    /// Datagrams so far, for the progress line.
    fn packets(&self) -> u64;

    /// The periodic record (`stopped` is `None`) or the summary.
    ///
    /// # Errors
    /// Output errors.
    fn summary(&mut self, core: &mut Core, stopped: Option<Stopped>) -> anyhow::Result<()>;

    /// Every turn of the run loop: the tool's own timers (a request to a
    /// sender resent).
    ///
    /// # Errors
    /// Sends that end the run.
    fn tick(&mut self, core: &mut Core) -> anyhow::Result<()> {
        let _ = core;
        Ok(())
    }

    /// When [`tick`](Self::tick) next has work, on `core.started`'s clock.
    fn poll_timeout(&self) -> Option<Duration> {
        None
    }

    /// The run ended, however it ended (a closed pipe too): close what must
    /// be closed (takes). Before the summary; an error is returned after it.
    ///
    /// # Errors
    /// Files that could not be written.
    fn finish(&mut self, core: &mut Core) -> anyhow::Result<()> {
        let _ = core;
        Ok(())
    }
}

/// Runs a dump tool over its source to the end and writes its summary.
///
/// # Errors
/// Input, output and the tool's own errors.
pub fn run<T: DumpTool>(
    mut source: Source,
    mut core: Core,
    args: &DumpArgs,
    tool: &mut T,
) -> anyhow::Result<()> {
    let every = core.mode.stats_every(&args.log);
    let stop = &args.stop;
    let mut h = Harness {
        core: &mut core,
        tool,
    };
    let stopped = crate::source::run(&mut source, stop, every, &mut h);
    let Harness { core, tool } = h;
    let finished = tool.finish(core);
    let stopped = stopped?;
    core.view.finish(&mut core.out)?;
    core.log.finish();
    let recorded = source.finish(&core.log);
    core.capture = source.capture_stats();
    tool.summary(core, Some(stopped))?;
    core.out.flush()?;
    finished.and(recorded)
}

struct Harness<'a, T> {
    core: &'a mut Core,
    tool: &'a mut T,
}

impl<T: DumpTool> FeedHandler<Source> for Harness<'_, T> {
    fn item(&mut self, event: Event<'_>) -> anyhow::Result<Flow> {
        match event {
            Event::Datagram(d) => {
                if self.core.first_arrival.is_none() {
                    self.core.first_arrival = d.arrival;
                }
                let now = self.core.started.elapsed();
                self.core.activity.datagrams(now, 1);
                self.tool.datagram(self.core, &d)?;
                let packets = self.tool.packets();
                self.core.log.progress(|| format!("{packets} packets"));
            }
            Event::Unreadable(e) => {
                self.tool.unreadable(&e);
                self.core.unreadable(&e)?;
            }
        }
        Ok(Flow::Continue)
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        let now = self.core.started.elapsed();
        self.core.interval = Some(self.core.activity.interval(now));
        let written = self.tool.summary(self.core, None);
        self.core.interval = None;
        written
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        let now = self.core.started.elapsed();
        self.core.view.tick(now, &mut self.core.out)?;
        self.tool.tick(self.core)?;
        if let Some(silence) = self.core.activity.silence(now) {
            self.core.log.info(format_args!("{silence}"));
        }
        Ok(None)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let due = match (self.core.view.poll_timeout(), self.tool.poll_timeout()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        self.core.started.checked_add(due)
    }

    fn idle(&mut self) -> anyhow::Result<()> {
        let packets = self.tool.packets();
        self.core
            .log
            .progress(|| format!("{packets} packets (waiting)"));
        Ok(())
    }
}

/// The head of a dump tool's counters line: `stats: <the interval>; ` —
/// the rate over the last interval, or how long nothing has come — or
/// `done (why): ` for the summary. A `stats` line then leaves the rates
/// since the start out (`fps: None`): they hide a stream that stopped.
///
/// # Errors
/// Formatter errors.
pub fn counters_head(
    f: &mut std::fmt::Formatter<'_>,
    stopped: Option<Stopped>,
    interval: Option<crate::status::Interval>,
) -> std::fmt::Result {
    write!(f, "{}: ", crate::output::summary_head(stopped))?;
    match interval {
        Some(i) if stopped.is_none() => write!(f, "{i}; "),
        _ => Ok(()),
    }
}

/// The stream-health part of a summary line, the same words in every dump
/// tool: `lost N, duplicates N, reordered N, restarts N[; N warnings][;
/// R fps][, jitter J ms]`. `streams` is how many senders' rates `fps` adds
/// up (said when more than one).
pub fn health_words(s: &mut String, h: &HealthReport, warnings: u64, streams: usize) {
    let _ = write!(
        s,
        "lost {}, duplicates {}, reordered {}, restarts {}",
        h.lost, h.duplicates, h.reordered, h.restarts
    );
    if warnings > 0 {
        let _ = write!(s, "; {}", plural(warnings, "warning", "warnings"));
    }
    if let Some(fps) = h.fps {
        let _ = write!(s, "; {}", fps_text(fps, streams));
    }
    if let Some(j) = h.jitter_ms {
        let _ = write!(s, ", jitter {j:.2} ms");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bridge_without_format_prints_the_status_line() {
        assert_eq!(Mode::resolve(None, true), Mode::Status);
        assert_eq!(Mode::resolve(None, false), Mode::Human);
        assert_eq!(Mode::resolve(Some(Format::Json), true), Mode::Json);
        assert_eq!(Mode::resolve(Some(Format::Human), true), Mode::Human);
        let log = LogArgs::default();
        assert_eq!(Mode::Status.stats_every(&log), Some(STATUS_INTERVAL));
        assert_eq!(Mode::Json.stats_every(&log), None);
        let every = LogArgs {
            stats_interval: Some(Duration::from_secs(2)),
            quiet: false,
        };
        assert_eq!(
            Mode::Status.stats_every(&every),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            Mode::Human.stats_every(&every),
            Some(Duration::from_secs(2))
        );
    }

    #[test]
    fn health_words_say_what_is_there() {
        let mut h = HealthReport {
            lost: 2,
            duplicates: 1,
            reordered: 3,
            restarts: 0,
            ..HealthReport::default()
        };
        let mut s = String::new();
        health_words(&mut s, &h, 0, 1);
        assert_eq!(s, "lost 2, duplicates 1, reordered 3, restarts 0");
        h.fps = Some(59.94);
        h.jitter_ms = Some(1.234);
        s.clear();
        health_words(&mut s, &h, 1, 1);
        assert_eq!(
            s,
            format!(
                "lost 2, duplicates 1, reordered 3, restarts 0; 1 warning; {}, jitter 1.23 ms",
                fps_text(59.94, 1)
            )
        );
    }

    #[test]
    fn origin_counts_from_the_first_datagram() {
        let d = Datagram {
            src: Some("127.0.0.1:5000".parse().unwrap()),
            dst: None,
            arrival: Some(10.25),
            ts: None,
            payload: b"",
        };
        let mut s = String::new();
        Core::push_origin(&mut s, &d, Some(10.0));
        assert_eq!(s, " src=127.0.0.1:5000 t=+0.250000");
        s.clear();
        Core::push_origin(&mut s, &d, None);
        assert_eq!(s, " src=127.0.0.1:5000");
    }
}
