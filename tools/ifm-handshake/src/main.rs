//! `ifm-handshake`: start an iFacialMocap / Facemotion3d stream and decode it.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mocap_cli::args::WriteArgs;
use mocap_cli::prelude::*;
use mocap_cli::source::Input;

mod session;
use session::{FormatArg, Mode};

const EXAMPLES: &str = "\
Examples:
  ifm-handshake 192.168.1.23
      ask the phone to stream (v1) to this PC's UDP 49983, print one line per frame
  ifm-handshake 192.168.1.23 --v2 --format json | jq -c '.blendshapes.jawOpen'
      v2 frames (values may be negative), JSON Lines
  ifm-handshake
      no handshake: decode frames from an app set to send to this address
  ifm-handshake 192.168.1.23 --tcp
      TCP mode: the phone connects to port 49986; the stop command is sent on exit
  ifm-handshake 192.168.1.23 --bake --out take1.json
      fetch the recorded animation over TCP 49987
  ifm-handshake 192.168.1.23 --look-forward
      re-centre the face (the app's Look Forward button)
  ifm-handshake 192.168.1.23 --facemotion3d
      Facemotion3d: its start command to phone port 49993
  ifm-handshake -r face.pcapng --format raw
      the frames of a capture, as text
  pcap-replay face.pcapng --trigger 127.0.0.1:49983 & ifm-handshake 127.0.0.1
      one machine: the replay plays the phone (this tool then listens on a free port)
  ifm-handshake 192.168.1.23 --vmc 127.0.0.1:39539
      drive a perfect-sync avatar in VSeeFace: blendshapes, Apply, Head rotation
  ifm-handshake 192.168.1.23 --vmc 127.0.0.1:39539 --blend-case pascal --eye-bones --head-axes -x,y,-z
      capitalised clip names, eye bones, pitch and roll flipped";

/// Start an iFacialMocap or Facemotion3d face stream from the shell and decode
/// every frame: blendshapes (ARKit names), head rotation and position, eyes,
/// tracking status; unknown entries and junk are reported, never fatal.
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help()))]
struct Args {
    /// The phone's address (name or IP): frames are then accepted from this
    /// address only (--allow adds others). Without it, only listen, to any sender.
    #[arg(value_name = "PHONE_HOST")]
    phone: Option<String>,

    /// UDP address to listen on (frames arrive at port 49983) [default:
    /// 0.0.0.0:49983; with a phone on this machine's loopback, such as
    /// pcap-replay --trigger 127.0.0.1:49983, a free port there, since the
    /// phone has 49983].
    #[arg(short, long, value_name = "ADDR", value_parser = mocap_cli::addr::parse_listen)]
    listen: Option<SocketAddr>,

    /// Read datagrams from FILE (pcap, pcapng, hex lines) instead of listening.
    #[arg(short, long, value_name = "FILE", conflicts_with_all = ["tcp", "bake", "listen"])]
    read: Option<PathBuf>,

    #[command(flatten)]
    record: WriteArgs,

    // With PHONE_HOST, frames are accepted from the phone's address only,
    // and --allow adds others (said in PHONE_HOST's help).
    #[command(flatten)]
    allow: mocap_cli::allow::AllowArgs,

    /// The phone's command port (default 49983; with --facemotion3d 49993).
    #[arg(long, value_name = "PORT")]
    phone_port: Option<u16>,

    /// Ask for v2 frames (`name&value`, negative values allowed).
    #[arg(long)]
    v2: bool,

    /// Use Facemotion3d's start command and port.
    #[arg(long)]
    facemotion3d: bool,

    /// Re-send the start command this often while no frame arrives.
    #[arg(long, value_name = "DUR", default_value = "3s", value_parser = mocap_cli::args::parse_duration)]
    keepalive: Duration,

    /// Report the data as stopped after this long without a frame.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = mocap_cli::args::parse_duration)]
    silence: Duration,

    /// TCP mode: listen for the phone's connection and ask it to stream there.
    #[arg(long, conflicts_with_all = ["bake", "look_forward", "stop"])]
    tcp: bool,

    /// TCP address to listen on in --tcp mode.
    #[arg(long, value_name = "ADDR", default_value_t = mocap_cli::addr::any_ipv4(mocap_core::ifm::PC_TCP_PORT), value_parser = mocap_cli::addr::parse_listen)]
    tcp_listen: SocketAddr,

    /// Fetch the recorded animation (TCP) and print its frame count and duration.
    #[arg(long, conflicts_with_all = ["look_forward", "stop"])]
    bake: bool,

    /// TCP address to listen on in --bake mode.
    #[arg(long, value_name = "ADDR", default_value_t = mocap_cli::addr::any_ipv4(mocap_core::ifm::PC_BAKE_PORT), value_parser = mocap_cli::addr::parse_listen)]
    bake_listen: SocketAddr,

    /// With --bake: write the recording's JSON here.
    #[arg(long, value_name = "FILE", requires = "bake")]
    out: Option<PathBuf>,

    /// Send the look-forward (re-centre) command and exit.
    #[arg(long, conflicts_with = "stop")]
    look_forward: bool,

    /// Send the TCP stop command and exit.
    #[arg(long)]
    stop: bool,

    /// Output format [default: human; with --vmc, none: a status line every
    /// --stats-interval (default 5s) on stderr instead of a line per frame].
    #[arg(long, value_enum)]
    format: Option<FormatArg>,

    /// Also send every frame as VMC (perfect sync) to HOST:PORT (repeatable).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest)]
    vmc: Vec<SocketAddr>,

    #[command(flatten)]
    face: mocap_cli::args::FaceArgs,

    #[command(flatten)]
    pace: mocap_cli::args::PaceArgs,

    #[command(flatten)]
    limits: StopArgs,

    #[command(flatten)]
    log: LogArgs,

    #[command(flatten)]
    smooth: mocap_cli::args::SmoothArgs,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

fn resolve(host: &str) -> anyhow::Result<IpAddr> {
    if let Ok(ip) = host.parse() {
        return Ok(ip);
    }
    let addrs: Vec<_> = (host, 0).to_socket_addrs()?.collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .map(SocketAddr::ip)
        .ok_or_else(|| anyhow::anyhow!("{host} resolves to no address"))
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    let phone = match args.phone.as_deref().map(resolve).transpose() {
        Ok(p) => p,
        Err(e) => return exit(Err(e), session::TOOL),
    };
    let mode = if args.tcp {
        Mode::Tcp {
            listen: args.tcp_listen,
        }
    } else if args.bake {
        Mode::Bake {
            listen: args.bake_listen,
            out: args.out,
        }
    } else if args.look_forward {
        Mode::LookForward
    } else if args.stop {
        Mode::StopTcp
    } else {
        Mode::Udp
    };
    if args.smooth.smooth && args.vmc.is_empty() {
        let e = UsageError("--smooth smooths what --vmc sends: give --vmc HOST:PORT".into());
        return exit(Err(e.into()), session::TOOL);
    }
    let smooth = args.smooth.options();
    let opts = session::Options {
        phone,
        phone_port: args.phone_port,
        input: args.read.map_or_else(
            || Input::Listen(args.listen.unwrap_or(session::DEFAULT_LISTEN)),
            Input::Read,
        ),
        listen_given: args.listen.is_some(),
        record: args.record,
        allow: args.allow,
        version: if args.v2 {
            mocap_core::ifm::Version::V2
        } else {
            mocap_core::ifm::Version::V1
        },
        facemotion3d: args.facemotion3d,
        keepalive: args.keepalive,
        silence: args.silence,
        mode,
        // Bridging is a background job: no line per frame unless asked.
        format: mocap_cli::dump::Mode::resolve(
            args.format.map(|f| match f {
                FormatArg::Json => Format::Json,
                FormatArg::Human | FormatArg::Raw => Format::Human,
            }),
            !args.vmc.is_empty(),
        ),
        raw: args.format == Some(FormatArg::Raw),
        topspeed: args.pace.topspeed,
        stop: args.limits,
        log: args.log,
        vmc: (!args.vmc.is_empty()).then_some(session::VmcOut {
            to: args.vmc,
            face: args.face.options(),
            smooth,
        }),
    };
    exit(session::run(&opts), session::TOOL)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
