//! `livelink-dump`: sniff and decode Epic's Live Link Face stream.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use mocap_cli::prelude::*;
use mocap_cli::source::Input;
use mocap_core::livelink::AngleUnit;

mod dump;

const EXAMPLES: &str = "\
Examples:
  livelink-dump
      listen on 0.0.0.0:11111 (the app's default target port), one line per packet
  livelink-dump --format json | jq -c 'select(.type==\"livelink.frame\") | .blendshapes.JawOpen'
      one value of every frame, JSON Lines
  livelink-dump -w take1.pcapng --duration 2m
      record a two-minute take while decoding (replay it with pcap-replay)
  livelink-dump -r captures/livelink/face-60fps.pcapng
      a capture: frames, no-face packets, a gap, one damaged datagram
  livelink-dump --vmc 127.0.0.1:39539
      drive a perfect-sync avatar in VSeeFace or Warudo: 52 blendshapes, Apply,
      Head rotation; a status line every 5 s instead of a line per packet
  livelink-dump --vmc 127.0.0.1:39539 --subject \"Zoe's iPhone\" --eye-bones --smooth
      one phone of several, with eye bones, smoothed
  livelink-dump -r take1.pcapng --vmc 127.0.0.1:39539
      a recorded take at its recorded timing";

/// Sniff and decode Epic's Live Link Face app (ARKit face capture over UDP):
/// 52 blendshapes, head and eye angles per frame, no-face packets, with loss,
/// duplicates, reordering, restarts, rate and jitter per phone and subject;
/// optionally bridged to VMC perfect sync.
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help()))]
struct Args {
    /// UDP address to listen on (add this PC as a target in the app's settings).
    #[arg(short, long, value_name = "ADDR", default_value_t = mocap_cli::addr::any_ipv4(mocap_core::livelink::DEFAULT_PORT), value_parser = mocap_cli::addr::parse_listen)]
    listen: SocketAddr,

    /// Read datagrams from FILE instead: a .pcap/.pcapng capture, a raw
    /// one-datagram .bin, or hex lines (one datagram per line); `-` is stdin.
    #[arg(short, long, value_name = "FILE", conflicts_with = "listen")]
    read: Option<PathBuf>,

    /// Output format: human (one line per packet: kind, subject, frame, a few
    /// values, sender) or json (`livelink.frame`, `livelink.noface`, `error`,
    /// `stats`, `summary`) [default: human; with --vmc, none: a status line
    /// every --stats-interval (default 5s) on stderr instead of a line per packet].
    #[arg(long, value_enum)]
    format: Option<Format>,

    /// Print and bridge only this subject (the phone's name in the app);
    /// the others are still counted.
    #[arg(long, value_name = "NAME")]
    subject: Option<String>,

    /// Also send every face frame as VMC perfect sync to HOST:PORT (repeatable).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest)]
    vmc: Vec<SocketAddr>,

    #[command(flatten)]
    face: mocap_cli::args::FaceArgs,

    /// How the head and eye angles are read for --vmc: radians (Unreal's
    /// reading of the app) or degrees.
    #[arg(long, value_enum, default_value = "radians", requires = "vmc")]
    angles: AnglesArg,

    #[command(flatten)]
    common: mocap_cli::dump::DumpArgs,

    #[command(flatten)]
    smooth: mocap_cli::args::SmoothArgs,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AnglesArg {
    /// Radians.
    Radians,
    /// Degrees.
    Degrees,
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    if args.smooth.smooth && args.vmc.is_empty() {
        let e = UsageError("--smooth smooths what --vmc sends: give --vmc HOST:PORT".into());
        return exit(Err(e.into()), dump::TOOL);
    }
    let input = match args.read {
        Some(path) => Input::Read(path),
        None => Input::Listen(args.listen),
    };
    let opts = dump::Options {
        input,
        common: args.common,
        // Bridging is a background job: no line per packet unless asked.
        mode: mocap_cli::dump::Mode::resolve(args.format, !args.vmc.is_empty()),
        subject: args.subject,
        vmc: (!args.vmc.is_empty()).then(|| dump::VmcOut {
            to: args.vmc,
            face: args.face.options(),
            angles: match args.angles {
                AnglesArg::Radians => AngleUnit::Radians,
                AnglesArg::Degrees => AngleUnit::Degrees,
            },
            smooth: args.smooth.options(),
        }),
    };
    exit(dump::run(&opts), dump::TOOL)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
