//! `pcap-replay`: send the UDP datagrams of a capture with their recorded
//! timing through a plain UDP socket. The binary parses flags into
//! [`Options`] and calls [`run`].

use std::fs::File;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use mocap_core::cli::CaptureRecord;
use mocap_core::cli::round3;
use mocap_core::cli::{Format, Log, Output, StopArgs, Stopped, install_ctrlc, interrupted};
use mocap_core::net;
use mocap_core::pcap::{CaptureError, CaptureStats, Datagrams, Lateness, Pace, Schedule};

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "pcap-replay";

/// Shortest gap between passes of `--loop`, whatever the capture's spacing.
const MIN_LOOP_GAP: Duration = Duration::from_millis(1);
/// Longest single sleep, so Ctrl-C and `--duration` are noticed during long gaps.
const MAX_NAP: Duration = Duration::from_millis(50);

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
    /// Passes over the capture; 0 = until stopped.
    pub(crate) loops: u64,
    /// Wait for a datagram here, then play to its sender.
    pub(crate) trigger: Option<SocketAddr>,
    /// With `trigger`: the port to play to (default: each datagram's own).
    pub(crate) to_port: Option<u16>,
    /// `--count` (datagrams sent), `--duration`.
    pub(crate) stop: StopArgs,
    /// Output format.
    pub(crate) format: Format,
    /// No progress or logs.
    pub(crate) quiet: bool,
}

/// Where each datagram goes: this address, at this port or the datagram's
/// own (mapped) destination port.
#[derive(Clone, Copy, Debug)]
struct Target {
    ip: IpAddr,
    port: Option<u16>,
}

#[derive(Default)]
struct Counts {
    sent: u64,
    bytes: u64,
    skipped: u64,
    send_errors: u64,
    loops: u64,
}

/// Runs the replay and prints the summary.
///
/// # Errors
/// An unreadable or unsupported capture, socket errors.
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Log::new(TOOL, opts.quiet, false);
    let mut out = Output::stdout(false);
    let open = || -> anyhow::Result<Datagrams<File>> {
        let f = File::open(&opts.file)
            .with_context(|| format!("failed to open {}", opts.file.display()))?;
        Datagrams::new(f).map_err(|e| anyhow::anyhow!("{}: {e}", opts.file.display()))
    };
    // Fail on a bad file before waiting for a trigger or opening sockets.
    let mut capture = open()?;
    let start_wall = Instant::now();
    let deadline = opts.stop.duration.and_then(|d| start_wall.checked_add(d));

    let (socket, target) = match opts.trigger {
        Some(addr) => {
            let socket = net::bind_udp(addr, Some(MAX_NAP))
                .with_context(|| format!("failed to bind the trigger address {addr}"))?;
            let local = socket.local_addr()?;
            log.info(format_args!(
                "waiting for a datagram on {local} (UDP) to start"
            ));
            let Some(peer) = wait_for_trigger(&socket, deadline)? else {
                return finish(
                    opts,
                    &log,
                    &mut out,
                    &Counts::default(),
                    &Lateness::default(),
                    None,
                    Stopped::Interrupted,
                    start_wall,
                );
            };
            log.info(format_args!(
                "triggered by {peer}; playing to {}",
                peer.ip()
            ));
            (
                socket,
                Target {
                    ip: peer.ip(),
                    port: opts.to_port,
                },
            )
        }
        None => {
            let ip = opts.to.map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |a| a.ip());
            let bind: SocketAddr = if ip.is_ipv4() {
                (Ipv4Addr::UNSPECIFIED, 0).into()
            } else {
                (Ipv6Addr::UNSPECIFIED, 0).into()
            };
            let socket = UdpSocket::bind(bind).context("failed to open a UDP socket")?;
            socket.set_broadcast(ip.is_ipv4()).ok();
            (
                socket,
                Target {
                    ip,
                    port: opts.to.map(|a| a.port()),
                },
            )
        }
    };

    let progress = progress_bar(opts, &log)?;
    // Deadlines to keep: make this thread's sleeps and sends precise.
    if opts.pace != Pace::TopSpeed {
        let tuned = crate::timing::tune_current_thread(opts.realtime);
        log.info(format_args!("{}", tuned.describe(opts.realtime)));
    }
    let sleeper = crate::timing::Sleeper::new();
    let mut schedule = Schedule::new(opts.pace);
    let mut lateness = Lateness::default();
    let mut counts = Counts::default();
    let mut stats = CaptureStats::default();
    let mut first_pass: Option<(Duration, Duration, u64)> = None;
    // The clock starts when the first datagram is in hand, so opening and
    // reading the file do not make every send look late.
    let mut start: Option<Instant> = None;
    let mut stopped = Stopped::EndOfInput;
    'passes: loop {
        let (mut first_ts, mut last_ts, mut n) = (None, Duration::ZERO, 0u64);
        while let Some(item) = capture.next_datagram() {
            let d = match item {
                Ok(d) => d,
                Err(CaptureError::Read(e)) => {
                    log.info(format_args!(
                        "{}: stopped reading: {e}",
                        opts.file.display()
                    ));
                    break;
                }
                Err(e) => bail!("{}: {e}", opts.file.display()),
            };
            if !keep(opts, d.src, d.dst) {
                counts.skipped += 1;
                continue;
            }
            first_ts.get_or_insert(d.ts);
            last_ts = d.ts;
            n += 1;
            if opts.stop.count.is_some_and(|c| counts.sent >= c) {
                stopped = Stopped::Count;
                stats = add_stats(stats, capture.stats());
                break 'passes;
            }
            // Deadlines are capped (a century), so the sum cannot overflow.
            let start = *start.get_or_insert_with(Instant::now);
            let due = start.checked_add(schedule.deadline(d.ts)).unwrap_or(start);
            match wait_until(&sleeper, due, deadline, opts.spin) {
                Wait::Due => {}
                Wait::Interrupted => {
                    stopped = Stopped::Interrupted;
                    stats = add_stats(stats, capture.stats());
                    break 'passes;
                }
                Wait::Deadline => {
                    stopped = Stopped::Duration;
                    stats = add_stats(stats, capture.stats());
                    break 'passes;
                }
            }
            let port = target
                .port
                .unwrap_or_else(|| map_port(&opts.port_map, d.dst.port()));
            let to = SocketAddr::new(target.ip, port);
            let sent_at = Instant::now();
            match socket.send_to(d.payload, to) {
                Ok(_) => {
                    // At top speed there are no deadlines to be late for.
                    if opts.pace != Pace::TopSpeed {
                        lateness.record(sent_at.saturating_duration_since(due));
                    }
                    counts.sent += 1;
                    counts.bytes += d.payload.len() as u64;
                }
                Err(e) => {
                    if counts.send_errors == 0 {
                        log.info(format_args!(
                            "failed to send to {to}: {e} (counting further failures)"
                        ));
                    }
                    counts.send_errors += 1;
                }
            }
            if let Some(pb) = &progress {
                pb.inc(1);
            }
        }
        stats = add_stats(stats, capture.stats());
        counts.loops += 1;
        if opts.loops != 0 && counts.loops >= opts.loops {
            break;
        }
        if n == 0 {
            // Nothing to play (all filtered); looping would spin.
            break;
        }
        let pass = first_pass.get_or_insert_with(|| (first_ts.unwrap_or_default(), last_ts, n));
        let mean_gap = if pass.2 > 1 {
            pass.1.saturating_sub(pass.0) / u32::try_from(pass.2 - 1).unwrap_or(u32::MAX)
        } else {
            Duration::ZERO
        };
        // A one-datagram (or zero-span) capture still loops at a sane pace.
        schedule.restart(mean_gap.max(MIN_LOOP_GAP));
        capture = open()?;
    }
    if let Some(pb) = &progress {
        pb.finish_and_clear();
    }
    finish(
        opts,
        &log,
        &mut out,
        &counts,
        &lateness,
        Some(stats),
        stopped,
        start_wall,
    )
}

fn add_stats(a: CaptureStats, b: CaptureStats) -> CaptureStats {
    CaptureStats {
        packets: a.packets + b.packets,
        datagrams: a.datagrams + b.datagrams,
        non_udp: a.non_udp + b.non_udp,
        fragments: a.fragments + b.fragments,
        reassembled: a.reassembled + b.reassembled,
        dropped: a.dropped + b.dropped,
        truncated: a.truncated + b.truncated,
        untimed: a.untimed + b.untimed,
        unsupported_link: a.unsupported_link + b.unsupported_link,
    }
}

fn keep(opts: &Options, src: SocketAddr, dst: SocketAddr) -> bool {
    (opts.filter_ports.is_empty()
        || opts.filter_ports.contains(&src.port())
        || opts.filter_ports.contains(&dst.port()))
        && opts.src.is_none_or(|ip| ip == src.ip())
        && opts.dst.is_none_or(|ip| ip == dst.ip())
}

fn map_port(map: &[(u16, u16)], port: u16) -> u16 {
    map.iter()
        .find(|(from, _)| *from == port)
        .map_or(port, |(_, to)| *to)
}

enum Wait {
    Due,
    Interrupted,
    Deadline,
}

/// Sleeps (to absolute deadlines) until close to `due`, then spins; gives up
/// on Ctrl-C or `--duration`.
fn wait_until(
    sleeper: &crate::timing::Sleeper,
    due: Instant,
    stop_at: Option<Instant>,
    spin: Duration,
) -> Wait {
    loop {
        if interrupted() {
            return Wait::Interrupted;
        }
        let now = Instant::now();
        if stop_at.is_some_and(|s| now >= s) {
            return Wait::Deadline;
        }
        if now >= due {
            return Wait::Due;
        }
        // Wake for whichever comes first: the send or the end of `--duration`.
        let wake = stop_at.map_or(due, |s| s.min(due));
        let left = wake.saturating_duration_since(now);
        if left > spin {
            sleeper.sleep_until(now + (left - spin).min(MAX_NAP));
        } else {
            std::hint::spin_loop();
        }
    }
}

fn wait_for_trigger(
    socket: &UdpSocket,
    deadline: Option<Instant>,
) -> anyhow::Result<Option<SocketAddr>> {
    let mut buf = vec![0u8; net::MAX_DATAGRAM];
    loop {
        if interrupted() || deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(None);
        }
        match socket.recv_from(&mut buf) {
            Ok((_, peer)) => return Ok(Some(peer)),
            Err(e) if net::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("failed to receive the trigger"),
        }
    }
}

fn progress_bar(opts: &Options, log: &Log) -> anyhow::Result<Option<ProgressBar>> {
    use std::io::IsTerminal as _;
    if log.is_quiet() || !io::stderr().is_terminal() {
        return Ok(None);
    }
    // One quick pass counts the datagrams, so the bar can show an ETA.
    let f = File::open(&opts.file)?;
    let mut d = Datagrams::new(f).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut total = 0u64;
    while let Some(Ok(c)) = d.next_datagram() {
        if keep(opts, c.src, c.dst) {
            total += 1;
        }
    }
    let total = if opts.loops == 0 {
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
    timing_error_us: Option<Timing>,
    elapsed_s: f64,
    stopped: Stopped,
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<CaptureRecord>,
}

#[expect(clippy::too_many_arguments, reason = "the summary's inputs")]
fn finish(
    opts: &Options,
    log: &Log,
    out: &mut Output,
    counts: &Counts,
    lateness: &Lateness,
    stats: Option<CaptureStats>,
    stopped: Stopped,
    start: Instant,
) -> anyhow::Result<()> {
    let elapsed = start.elapsed().as_secs_f64();
    let timing = lateness
        .summary()
        .map(|(p50, p99, max)| Timing { p50, p99, max });
    match opts.format {
        Format::Json => out.json(&Summary {
            kind: "summary",
            tool: TOOL,
            sent: counts.sent,
            bytes: counts.bytes,
            skipped: counts.skipped,
            send_errors: counts.send_errors,
            loops: counts.loops,
            timing_error_us: timing,
            elapsed_s: round3(elapsed),
            stopped,
            capture: stats.map(CaptureRecord::from),
        })?,
        Format::Human => {
            let mut line = format!(
                "done ({stopped}): sent {} datagrams ({} bytes) in {elapsed:.3} s, {} skipped by filters, {} send errors",
                counts.sent, counts.bytes, counts.skipped, counts.send_errors
            );
            if let Some(t) = timing {
                line.push_str(&format!(
                    "; timing error p50 {} µs, p99 {} µs, max {} µs",
                    t.p50, t.p99, t.max
                ));
            }
            log.always(format_args!("{line}"));
            if let Some(c) = stats
                && (c.fragments > 0 || c.non_udp > 0 || c.truncated > 0)
            {
                log.always(format_args!(
                    "  capture: {} non-UDP, {} fragments ({} datagrams reassembled, {} dropped), {} truncated",
                    c.non_udp, c.fragments, c.reassembled, c.dropped, c.truncated
                ));
            }
        }
    }
    out.flush()?;
    Ok(())
}
