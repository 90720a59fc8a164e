//! `pcap-replay`: replay the UDP datagrams of a capture at recorded timing.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mocap_cli::prelude::*;
use mocap_core::pcap::Pace;

mod hedge;
mod lateness;
mod replay;
mod send;
mod timing;

const EXAMPLES: &str = "\
Examples:
  pcap-replay session.pcapng
      to 127.0.0.1 at each datagram's original port, recorded timing
  pcap-replay session.pcapng --to 127.0.0.1:39540 --speed 2
      everything to one address, twice as fast
  pcap-replay mocopi.pcap --port-map 12351:22351 --loop 0 --renumber
      another port, over and over until Ctrl-C, frame numbers carried on like an endless phone
  pcap-replay captures/mocopi/animu-sphere/frame-loss-60hz.mocopipackets --to 127.0.0.1:12351
      a .mocopipackets text capture (its receive times; no ports in it, so --to)
  pcap-replay any.pcapng --filter-port 49983 --topspeed
      one protocol's datagrams, as fast as possible
  pcap-replay face.pcapng --trigger 127.0.0.1:49983
      act as the phone: wait for the handshake, then stream to its sender
      (one machine: then run ifm-handshake 127.0.0.1, which listens on another port)
  pcap-replay session.pcapng --hedge --format json | jq .timing_error_us
      microsecond timing on a virtual machine: two threads race each send
  pcap-replay session.pcapng --impair loss=5%,dup=1%,reorder=1%,seed=7 --format json
      bad Wi-Fi, the same every run: a record per datagram, the faults in the summary

--speed follows tcpreplay's --multiplier (2.0 = twice as fast), not
udpreplay's -s (which multiplies the delays).";

/// Replay the UDP datagrams of a pcap or pcapng capture at their recorded
/// timing, over a plain UDP socket (no root needed). IP fragments are
/// reassembled first; Ethernet, VLAN, Linux SLL/SLL2, NULL/LOOP and raw IP
/// captures are read, and the text captures the other tools read
/// (.mocopipackets with its receive times; hex lines with --pps or --topspeed).
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help()))]
struct Args {
    /// The capture: .pcap, .pcapng, a .mocopipackets text capture or hex lines.
    file: PathBuf,

    /// Send every datagram to HOST:PORT (default: 127.0.0.1 at its original port).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest, conflicts_with = "trigger")]
    to: Option<SocketAddr>,

    /// Rewrite destination port FROM to TO (repeatable).
    #[arg(long, value_name = "FROM:TO", value_parser = parse_port_map)]
    port_map: Vec<(u16, u16)>,

    /// Keep only datagrams to or from this port (repeatable).
    #[arg(long = "filter-port", value_name = "PORT")]
    filter_ports: Vec<u16>,

    /// Keep only datagrams from this IP address.
    #[arg(long, value_name = "IP")]
    src: Option<IpAddr>,

    /// Keep only datagrams to this IP address.
    #[arg(long, value_name = "IP")]
    dst: Option<IpAddr>,

    /// Playback speed: 2.0 is twice as fast, 0.5 half as fast.
    #[arg(long, default_value_t = 1.0, value_parser = mocap_cli::args::parse_speed, conflicts_with_all = ["pps", "topspeed"])]
    speed: f64,

    /// Send at a fixed rate of N datagrams per second instead.
    #[arg(long, value_name = "N", value_parser = mocap_cli::args::parse_pps, conflicts_with = "topspeed")]
    pps: Option<f64>,

    /// Send as fast as possible.
    #[arg(long)]
    topspeed: bool,

    /// Shorten idle gaps longer than DUR (capture time) to DUR.
    #[arg(long, value_name = "DUR", value_parser = mocap_cli::args::parse_duration)]
    max_gap: Option<Duration>,

    /// Stop sleeping this long before each send and spin the rest, for
    /// microsecond timing; 0 only sleeps (less CPU, up to a millisecond late).
    // Native sleeps wake 50–200 µs late, now and then over a millisecond on a
    // busy or virtual machine; spinning the last millisecond keeps the error
    // in microseconds for about 6 % of a core at 60 Hz.
    #[arg(long, value_name = "DUR", value_parser = mocap_cli::args::parse_duration, default_value = "1ms")]
    spin: Duration,

    /// Run the sending thread at real-time priority (SCHED_FIFO; root or
    /// CAP_SYS_NICE): fewer preemptions right before a send on a busy machine.
    #[arg(long)]
    realtime: bool,

    /// Race a second sending thread, on another CPU, for every datagram;
    /// the first to be on time sends it. For frame-rate streams on virtual
    /// machines, whose CPUs stall for milliseconds now and then (rarely two
    /// at once). Costs a second thread's sleeps and --spin.
    #[arg(long, conflicts_with = "topspeed")]
    hedge: bool,

    /// Impair the replay, deterministically from a seed: loss=P%,
    /// burst=N@P% (runs of N lost), dup=P%, reorder=P% (held back past the
    /// next one), jitter=MS (extra delay, order kept), seed=N; combinable,
    /// e.g. loss=5%,dup=1%,seed=7. The summary says what was done.
    #[arg(long, value_name = "SPEC", conflicts_with = "hedge")]
    impair: Option<mocap_core::pcap::ImpairSpec>,

    /// Play the capture N times; 0 loops until stopped. Each pass repeats
    /// the capture's frame numbers (receivers count duplicates) unless
    /// --renumber is given.
    #[arg(long = "loop", value_name = "N", default_value_t = 1)]
    loops: u64,

    /// With --loop: carry frame numbers on from pass to pass, so a looped
    /// capture plays like an endless phone (mocopi fnum and clocks, Live Link
    /// Face frame numbers; iFacialMocap and VMC have none and go as captured).
    #[arg(long)]
    renumber: bool,

    /// Wait for one datagram on ADDR:PORT, then play to its sender's address
    /// (from that socket), e.g. to answer an iFacialMocap handshake.
    #[arg(long, value_name = "ADDR:PORT", value_parser = mocap_cli::addr::parse_host_port)]
    trigger: Option<SocketAddr>,

    /// With --trigger: play to this port instead of each datagram's own.
    #[arg(long, value_name = "PORT", requires = "trigger")]
    to_port: Option<u16>,

    // With --trigger: only these senders may start the replay (a spoofed
    // trigger would aim the whole capture at someone else).
    #[command(flatten)]
    allow: mocap_cli::allow::AllowArgs,

    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    #[command(flatten)]
    stop: StopArgs,

    /// No progress bar or log lines on stderr.
    #[arg(short, long)]
    quiet: bool,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

fn parse_port_map(s: &str) -> Result<(u16, u16), String> {
    let (a, b) = s
        .split_once(':')
        .ok_or_else(|| format!("expected FROM:TO, got {s:?}"))?;
    let port = |p: &str| {
        p.trim()
            .parse::<u16>()
            .map_err(|e| format!("bad port {p:?}: {e}"))
    };
    Ok((port(a)?, port(b)?))
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    if !args.allow.allow.is_empty() && args.trigger.is_none() {
        let e = UsageError("--allow says who may trigger: it goes with --trigger".into());
        return exit(Err(e.into()), replay::TOOL);
    }
    let pace = if args.topspeed {
        Pace::TopSpeed
    } else if let Some(pps) = args.pps {
        Pace::Rate(pps)
    } else {
        Pace::Recorded {
            speed: args.speed,
            max_gap: args.max_gap,
        }
    };
    let opts = replay::Options {
        file: args.file,
        to: args.to,
        port_map: args.port_map,
        filter_ports: args.filter_ports,
        src: args.src,
        dst: args.dst,
        pace,
        spin: args.spin,
        realtime: args.realtime,
        hedge: args.hedge,
        loops: args.loops,
        trigger: args.trigger,
        to_port: args.to_port,
        allow: args.allow,
        stop: args.stop,
        format: args.format,
        quiet: args.quiet,
        impair: args.impair,
        renumber: args.renumber,
    };
    exit(replay::run(&opts), replay::TOOL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        Args::command().debug_assert();
    }

    #[test]
    fn port_maps() {
        assert_eq!(parse_port_map("12351:22351"), Ok((12351, 22351)));
        assert!(parse_port_map("12351").is_err());
        assert!(parse_port_map("a:1").is_err());
    }
}
