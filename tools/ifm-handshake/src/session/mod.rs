//! `ifm-handshake`: start an iFacialMocap / Facemotion3d stream and decode it,
//! over UDP (the default) or TCP, or fetch a baked recording. The binary
//! parses flags into [`Options`] and calls [`run`].

use mocap_cli::allow::{AllowArgs, Cidr, Guard};
use mocap_cli::senders::Senders;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

mod bake;
mod feed;
mod records;
mod tcp;
mod udp;

use bake::run_bake;
use records::{FrameRecord, HeadRecord, RecordingRecord, SenderRecord, SummaryRecord};
use tcp::run_tcp;
use udp::run_udp;

use mocap_cli::args::WriteArgs;
use mocap_cli::net;
use mocap_cli::net::Fanout;
use mocap_cli::output::{report, round3, summary_kind};
use mocap_cli::prelude::*;
use mocap_cli::records::{ErrorRecord, ts_us};
use mocap_cli::source::{Datagram, Input, InputError, Source, TextInput, unix_time};
use mocap_core::bridge::{FaceBridge, FaceOptions};
use mocap_core::ifm::handshake::{Action as HandshakeAction, Handshake, Transport};
use mocap_core::ifm::{self, Command, Frame};
use mocap_core::vmc;

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "ifm-handshake";
/// Where frames are received unless `-l` says otherwise.
pub(crate) const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(
    IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
    ifm::PC_UDP_PORT,
);
/// A recording that stops arriving for this long has failed.
const BAKE_STALL: Duration = Duration::from_secs(10);
/// Largest baked recording accepted (a 10-minute recording is about 36 MB).
const MAX_RECORDING: usize = 512 << 20;

/// `--format` as ifm-handshake parses it: the shared two plus the text as
/// received (a human view of its own; the harness sees
/// [`OutputFormat::Human`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// One compact line per frame: tracking, head angles, strongest blendshapes.
    Human,
    /// JSON Lines (`ifm.frame`, `error`, `stats`, `summary`, `ifm.recording`).
    Json,
    /// Each frame's text as received, one per line.
    Raw,
}

/// What is printed: the dump tools' one output mode.
pub(crate) use mocap_cli::dump::Mode as OutputFormat;

/// What to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Stream over UDP (or read a capture) and decode.
    Udp,
    /// Listen on TCP here, ask the phone to connect, decode; stop string on exit.
    Tcp {
        /// TCP listening address.
        listen: SocketAddr,
    },
    /// Listen on TCP here and fetch the recorded animation.
    Bake {
        /// TCP listening address.
        listen: SocketAddr,
        /// Where to write the recording's JSON.
        out: Option<PathBuf>,
    },
    /// Send `lookForward` and exit.
    LookForward,
    /// Send the TCP stop string and exit.
    StopTcp,
}

/// Everything `ifm-handshake` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// The phone; `None` listens only (for apps set to a fixed destination).
    pub(crate) phone: Option<IpAddr>,
    /// The phone's command port (default 49983; Facemotion3d 49993).
    pub(crate) phone_port: Option<u16>,
    /// UDP address to listen on, or a file to read.
    pub(crate) input: Input,
    /// `-l` was given (not [`DEFAULT_LISTEN`]).
    pub(crate) listen_given: bool,
    /// `-w`.
    pub(crate) record: WriteArgs,
    /// `--allow`: who else may send frames (with a phone given, it may).
    pub(crate) allow: AllowArgs,
    /// The frame layout to ask for (`--v2`).
    pub(crate) version: ifm::Version,
    /// Facemotion3d's command and port.
    pub(crate) facemotion3d: bool,
    /// Re-send the start command this often while no frame arrives.
    pub(crate) keepalive: Duration,
    /// No frame for this long counts as the data stopping.
    pub(crate) silence: Duration,
    /// What to do.
    pub(crate) mode: Mode,
    /// What is printed (bridging without `--format`: the status line).
    pub(crate) format: OutputFormat,
    /// `--format raw`: each frame's text as received instead of the human line.
    pub(crate) raw: bool,
    /// `--count` (frames), `--duration`.
    pub(crate) stop: StopArgs,
    /// `--quiet`, `--stats-interval`.
    pub(crate) log: LogArgs,
    /// Also send every frame as VMC (perfect sync) to these receivers.
    pub(crate) vmc: Option<VmcOut>,
    /// `--topspeed`: send file input as fast as it is read, not at its
    /// recorded timing.
    pub(crate) topspeed: bool,
}

/// Where and how `--vmc` sends frames.
#[derive(Clone, Debug)]
pub(crate) struct VmcOut {
    /// VMC receivers.
    pub(crate) to: Vec<SocketAddr>,
    /// Names, scaling, head bone and axes.
    pub(crate) face: FaceOptions,
    /// `--smooth`: 1€ smoothing of what is sent.
    pub(crate) smooth: Option<vmc::SmoothOptions>,
}

/// The `--vmc` sink: the bridge's state and the receivers.
struct VmcSink {
    bridge: FaceBridge,
    out: Fanout,
    smoother: Option<vmc::Smoother>,
    started: Instant,
}

impl VmcSink {
    fn send(&mut self, f: &Frame<'_>, arrival: Option<Duration>, log: &Log) -> anyhow::Result<()> {
        let mut messages = self.bridge.messages(f);
        if messages.is_empty() {
            return Ok(());
        }
        if let Some(s) = &mut self.smoother {
            let at = arrival.unwrap_or_else(|| self.started.elapsed());
            s.handle_frame(at, &mut messages);
        }
        for d in vmc::frame_datagrams(&messages, vmc::MAX_BUNDLE)? {
            self.out.send(&d, log);
        }
        Ok(())
    }
}

impl Options {
    /// How often to print counters: `--stats-interval`, or every few seconds
    /// in bridge mode, where they are the only output.
    fn stats_every(&self) -> Option<Duration> {
        self.format.stats_every(&self.log)
    }

    fn phone_addr(&self, cmd: Command) -> Option<SocketAddr> {
        let default = if self.facemotion3d {
            ifm::FM_PHONE_PORT
        } else {
            cmd.phone_port()
        };
        let port = self.phone_port.unwrap_or(default);
        self.phone.map(|ip| SocketAddr::new(ip, port))
    }

    fn start_command(&self, tcp: bool) -> Command {
        match (self.facemotion3d, tcp) {
            (true, _) => Command::FacemotionStart,
            (false, false) => Command::StartUdp {
                version: self.version,
            },
            (false, true) => Command::StartTcp {
                version: self.version,
            },
        }
    }
}

/// Runs the tool to the end and prints the summary.
///
/// # Errors
/// Sockets that cannot be bound, files that cannot be read or written.
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    match &opts.mode {
        Mode::Udp => run_udp(opts),
        Mode::Tcp { listen } => run_tcp(opts, *listen),
        Mode::Bake { listen, out } => run_bake(opts, *listen, out.as_ref()),
        Mode::LookForward => send_only(opts, Command::LookForward),
        Mode::StopTcp => send_only(opts, Command::StopTcp),
    }
}

/// Who may send frames: the handshake says who the phone is, so with a phone
/// given frames from anyone else are refused unless `--allow` names them too;
/// without one, `--allow` alone (everyone when it is not given).
fn phone_guard(opts: &Options, phone: Option<SocketAddr>, log: &Log) -> Guard {
    let mut ranges = opts.allow.allow.clone();
    if let Some(p) = phone {
        ranges.push(Cidr::host(p.ip()));
        log.info(format_args!(
            "accepting frames from the phone at {} only{}",
            p.ip(),
            if opts.allow.allow.is_empty() {
                " (--allow adds others)"
            } else {
                " and --allow"
            }
        ));
    }
    let guard = Guard::only(ranges, Some(Log::new(TOOL, opts.log.quiet, false)));
    if opts.record.record_refused {
        guard.recording_refused()
    } else {
        guard
    }
}

fn command_socket(opts: &Options) -> anyhow::Result<UdpSocket> {
    let ip = match &opts.input {
        Input::Listen(a) => a.ip(),
        Input::Read(_) => IpAddr::from([0, 0, 0, 0]),
    };
    net::sender_udp_from(ip).context("failed to open a UDP socket for commands")
}

/// Sends a command: `Ok(false)` when the send was refused only because the
/// phone answered an earlier one with ICMP "port unreachable" (its app is not
/// open yet; Windows reports that on the next `sendto`). The handshake sends
/// again, so that is not the end of the run.
fn send(socket: &UdpSocket, to: SocketAddr, cmd: Command) -> anyhow::Result<bool> {
    match socket.send_to(cmd.text().as_bytes(), to) {
        Ok(_) => Ok(true),
        Err(e) if mocap_cli::sends::is_port_unreachable(&e) => Ok(false),
        Err(e) => Err(e).with_context(|| format!("failed to send the command to {to}")),
    }
}

fn send_only(opts: &Options, cmd: Command) -> anyhow::Result<()> {
    let Some(to) = opts.phone_addr(cmd) else {
        bail!("this command needs the phone's address (PHONE_HOST)");
    };
    let log = Log::new(TOOL, opts.log.quiet, false);
    if !send(&command_socket(opts)?, to, cmd)? {
        bail!("{to} refused the command (ICMP port unreachable): is the app open?");
    }
    log.info(format_args!("sent {:?} to {to}", cmd.text()));
    Ok(())
}

/// Per-source counters.
#[derive(Clone, Debug, Default)]
struct SourceStats {
    frames: u64,
    errors: u64,
    warnings: u64,
    gaps: u64,
    first: Option<f64>,
    last: Option<f64>,
}

impl SourceStats {
    /// Adds an evicted sender's counters to the aggregate (its rate goes:
    /// a rate of several senders means nothing).
    fn fold(all: &mut Self, gone: Self) {
        all.frames += gone.frames;
        all.errors += gone.errors;
        all.warnings += gone.warnings;
        all.gaps += gone.gaps;
        (all.first, all.last) = (None, None);
    }

    fn fps(&self) -> Option<f64> {
        match (self.first, self.last) {
            (Some(a), Some(b)) if b > a && self.frames > 1 => {
                Some(round3((self.frames - 1) as f64 / (b - a)))
            }
            _ => None,
        }
    }
}

/// Decoding, output and counters shared by the UDP and TCP modes.
struct Decoder<'o> {
    /// What the sender check refused (shared with the source, which checks).
    guard: Guard,
    opts: &'o Options,
    out: Output,
    log: Log,
    sources: Senders<SourceStats>,
    commands_ignored: u64,
    /// Commands the phone's address refused (ICMP port unreachable), resent.
    commands_refused: u64,
    frames: u64,
    started: Instant,
    /// Receive time of the last frame, for start/stop/resume reports.
    last_frame: Option<Instant>,
    stopped_reported: bool,
    line: String,
    vmc: Option<VmcSink>,
    /// mocopi, VMC … sent to this port by mistake.
    other: mocap_cli::other::OtherProtocols,
    /// Datagrams per status interval, and where a silent socket listens
    /// (UDP mode; on `started`'s clock).
    activity: mocap_cli::status::Activity,
}

impl<'o> Decoder<'o> {
    /// Counts a command the phone's address refused; the first one is logged.
    fn refused(&mut self, to: SocketAddr) {
        if self.commands_refused == 0 {
            self.log.info(format_args!(
                "{to} refused the command (ICMP port unreachable: is the app open?); sending it again"
            ));
        }
        self.commands_refused += 1;
    }

    fn new(opts: &'o Options, live: bool) -> anyhow::Result<Self> {
        let vmc = match &opts.vmc {
            Some(v) => Some(VmcSink {
                bridge: FaceBridge::new(v.face.clone()),
                out: Fanout::new(v.to.clone(), mocap_cli::sends::Receiver::Vmc)
                    .context("failed to open the VMC sending socket")?,
                smoother: v.smooth.clone().map(vmc::Smoother::new),
                started: Instant::now(),
            }),
            None => None,
        };
        Ok(Self {
            guard: Guard::default(),
            opts,
            out: Output::stdout(live),
            log: Log::new(TOOL, opts.log.quiet, live),
            sources: Senders::folding(SourceStats::fold),
            commands_ignored: 0,
            commands_refused: 0,
            frames: 0,
            started: Instant::now(),
            last_frame: None,
            stopped_reported: false,
            line: String::new(),
            vmc,
            other: mocap_cli::other::OtherProtocols::new(
                mocap_core::protocol::Protocol::IFacialMocap,
            ),
            activity: mocap_cli::status::Activity::new(Duration::ZERO, None),
        })
    }

    /// Seconds since the start, the clock of [`Self::activity`].
    fn now(&self) -> Duration {
        self.started.elapsed()
    }

    fn frame_bytes(
        &mut self,
        src: Option<SocketAddr>,
        arrival: Option<f64>,
        ts: Option<Duration>,
        bytes: &[u8],
    ) -> anyhow::Result<()> {
        if ifm::is_command(bytes) {
            // Our own command looped back, or another PC's handshake.
            self.commands_ignored += 1;
            return Ok(());
        }
        let now = Instant::now();
        if matches!(self.opts.input, Input::Listen(_)) || matches!(self.opts.mode, Mode::Tcp { .. })
        {
            match self.last_frame {
                None => self.log.info(format_args!("data started{}", from(src))),
                Some(_) if self.stopped_reported => {
                    self.log.info(format_args!("data resumed{}", from(src)));
                }
                _ => {}
            }
        }
        self.last_frame = Some(now);
        self.stopped_reported = false;
        let stats = self.sources.get_or_default(&src);
        if let (Some(last), Some(at)) = (stats.last, arrival)
            && at - last > self.opts.silence.as_secs_f64()
        {
            stats.gaps += 1;
        }
        match ifm::parse(bytes) {
            Ok(f) => {
                stats.frames += 1;
                stats.warnings += f.warnings.len() as u64;
                if let Some(at) = arrival {
                    stats.first.get_or_insert(at);
                    stats.last = Some(at);
                }
                self.frames += 1;
                self.print_frame(src, ts, bytes, &f)?;
                if let Some(v) = &mut self.vmc {
                    v.send(&f, ts, &self.log)?;
                }
            }
            Err(e) => {
                stats.errors += 1;
                self.other.check(src, bytes, &self.log);
                match self.opts.format {
                    OutputFormat::Json => {
                        let mut r = ErrorRecord::new(e.to_string());
                        r.src = src;
                        r.offset = Some(e.offset);
                        r.len = Some(bytes.len());
                        self.out.json(&r)?;
                    }
                    OutputFormat::Status => {}
                    _ => self.out.text(format_args!(
                        "error  {e} ({} bytes){}\n",
                        bytes.len(),
                        from(src)
                    ))?,
                }
            }
        }
        Ok(())
    }

    fn print_frame(
        &mut self,
        src: Option<SocketAddr>,
        ts: Option<Duration>,
        bytes: &[u8],
        f: &Frame<'_>,
    ) -> anyhow::Result<()> {
        match self.opts.format {
            OutputFormat::Status => {}
            OutputFormat::Human if self.opts.raw => {
                self.out
                    .text(format_args!("{}\n", String::from_utf8_lossy(bytes)))?;
            }
            OutputFormat::Json => self.out.json(&FrameRecord {
                kind: "ifm.frame",
                src,
                ts_us: ts_us(ts),
                tracking: f.tracking,
                blendshapes: f.arkit().collect(),
                head: f.head.map(|h| HeadRecord {
                    rot: h.rot,
                    pos: h.pos,
                }),
                right_eye: f.right_eye,
                left_eye: f.left_eye,
                unknown: f.unknown.iter().map(|(n, v)| (*n, *v)).collect(),
                warnings: f.warnings.iter().map(ToString::to_string).collect(),
            })?,
            OutputFormat::Human => {
                let s = &mut self.line;
                s.clear();
                let tracking = match f.tracking {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "?",
                };
                let _ = write!(s, "frame  tracking={tracking}");
                if let Some(h) = f.head {
                    let [x, y, z] = h.rot;
                    let _ = write!(s, " head=({x:.1},{y:.1},{z:.1})");
                }
                let mut top: Vec<_> = f.arkit().collect();
                top.sort_by(|a, b| b.1.total_cmp(&a.1));
                for (name, v) in top.iter().take(3) {
                    let _ = write!(s, " {name}={v:.2}");
                }
                let _ = write!(s, " shapes={}", f.arkit_count());
                if !f.warnings.is_empty() {
                    let _ = write!(s, " warnings={}", f.warnings.len());
                }
                s.push_str(&from(src));
                s.push('\n');
                self.out.text(format_args!("{}", self.line))?;
            }
        }
        Ok(())
    }

    /// Reports the data stopping once it has been silent long enough.
    fn check_silence(&mut self) {
        if let Some(t) = self.last_frame
            && !self.stopped_reported
            && t.elapsed() >= self.opts.silence
        {
            self.stopped_reported = true;
            self.log.info(format_args!(
                "data stopped (no frame for {:?})",
                self.opts.silence
            ));
        }
    }

    /// The summary, or (`stopped: None`) a status line; `interval`: the
    /// datagrams since the last status line (UDP mode).
    fn summary(
        &mut self,
        stopped: Option<Stopped>,
        connections: Option<u64>,
        interval: Option<mocap_cli::status::Interval>,
    ) -> anyhow::Result<()> {
        let senders: Vec<_> = self
            .sources
            .iter()
            .map(|(src, s)| SenderRecord {
                src: *src,
                frames: s.frames,
                errors: s.errors,
                warnings: s.warnings,
                gaps: s.gaps,
                fps: s.fps(),
            })
            .collect();
        // Evicted senders (past 256) stay in the totals.
        let evicted = self.sources.evicted();
        let total = |f: fn(&SenderRecord) -> u64, g: fn(&SourceStats) -> u64| {
            senders.iter().map(f).sum::<u64>() + evicted.map_or(0, g)
        };
        let rec = SummaryRecord {
            kind: summary_kind(stopped),
            tool: TOOL,
            frames: total(|s| s.frames, |s| s.frames),
            errors: total(|s| s.errors, |s| s.errors),
            warnings: total(|s| s.warnings, |s| s.warnings),
            gaps: total(|s| s.gaps, |s| s.gaps),
            fps: senders.iter().filter_map(|s| s.fps).reduce(f64::max),
            commands_ignored: self.commands_ignored,
            commands_refused: self.commands_refused,
            refusals: self.guard.summary(),
            connections,
            vmc_datagrams: self.vmc.as_ref().map(|v| v.out.sent()),
            sends: self
                .vmc
                .as_ref()
                .map(|v| v.out.sends().collect())
                .unwrap_or_default(),
            elapsed_s: round3(self.started.elapsed().as_secs_f64()),
            stopped,
            senders,
            other: self.other.summary(),
            interval,
        };
        report(
            &mut self.out,
            &self.log,
            self.opts.format == OutputFormat::Json,
            &rec,
            stopped.is_some(),
        )?;
        Ok(())
    }
}

fn from(src: Option<SocketAddr>) -> String {
    src.map_or_else(String::new, |s| format!(" from {s}"))
}
