//! `mocopi-dump`: sniff and decode Sony mocopi's motion stream.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use mocap_cli::prelude::*;
use mocap_cli::source::Input;
use mocap_core::bridge::{BodyOptions, MappingTable};

mod dump;

const EXAMPLES: &str = "\
Examples:
  mocopi-dump
      listen on 0.0.0.0:12351, one line per packet
  mocopi-dump -l 0.0.0.0:12352 --bones
      another port, with a per-bone table
  mocopi-dump -r session.pcapng --format json
      a capture: pcap, pcapng or .mocopipackets
  mocopi-dump -r captures/mocopi/seed-frame-1575.bin --format tree
      the chunk tree of one datagram
  mocopi-dump -w session.pcapng
      record while decoding (replay with pcap-replay)
  xxd -p -c0 frame.bin | mocopi-dump -r -
      hex lines on stdin
  mocopi-dump --duration 30s --stats-interval 5s
      stream health for 30 seconds
  mocopi-dump --format json | jq -c 'select(.type==\"mocopi.frame\") | .bones[0].pos'
  mocopi-dump -q --bvh take1.bvh --duration 2m
      record a two-minute take that Blender, Maya or Unreal imports
  mocopi-dump --vmc 127.0.0.1:39539
      drive a VMC receiver (VSeeFace, VMC4B, Warudo) with the body; a status
      line every 5 s instead of a line per frame
  mocopi-dump -r captures/mocopi/wave-60hz.pcapng --vmc 127.0.0.1:39539 --mapping animu-sphere
      a capture at its recorded timing, with another torso mapping
  mocopi-dump --vrchat 127.0.0.1:9000 --height 1.70 --trackers hips,feet
      full-body trackers for VRChat (OSC), scaled to a 1.70 m user
  mocopi-dump --vmt 127.0.0.1:39570
      eight SteamVR trackers through the Virtual Motion Tracker driver";

/// Sniff and decode Sony mocopi's motion stream (Sony Motion Format over UDP):
/// frames, skeletons and sensor packets, with loss, duplicates, reordering,
/// restarts, rate and jitter per sender.
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help()))]
#[command(group = clap::ArgGroup::new("bridge").args(["vmc", "vrchat", "vmt"]).multiple(true))]
struct Args {
    /// UDP address to listen on.
    #[arg(short, long, value_name = "ADDR", default_value_t = mocap_cli::addr::any_ipv4(mocap_core::smf::DEFAULT_PORT), value_parser = mocap_cli::addr::parse_listen)]
    listen: SocketAddr,

    /// Read datagrams from FILE instead: a .pcap/.pcapng capture, a raw
    /// one-datagram .bin, hex lines (one datagram per line), or a
    /// .mocopipackets capture; `-` is stdin.
    #[arg(short, long, value_name = "FILE", conflicts_with = "listen")]
    read: Option<PathBuf>,

    /// Output format [default: human; with --vmc, none: a status line every
    /// --stats-interval (default 5s) on stderr instead of a line per packet].
    #[arg(long, value_enum)]
    format: Option<dump::FormatArg>,

    /// Print a per-bone table under each packet (human format).
    #[arg(long)]
    bones: bool,

    /// Also send the body as VMC to HOST:PORT (repeatable): retargeted onto
    /// HumanBodyBones in Unity's axes, once a skeleton packet has arrived.
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest)]
    vmc: Vec<SocketAddr>,

    /// Also send the body as VRChat OSC trackers to HOST:PORT (repeatable;
    /// VRChat listens on 9000): solved from the same retargeted body.
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest)]
    vrchat: Vec<SocketAddr>,

    /// Also send the body as Virtual Motion Tracker trackers to HOST:PORT
    /// (repeatable; the SteamVR driver listens on 39570).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest)]
    vmt: Vec<SocketAddr>,

    #[command(flatten)]
    tracker: mocap_cli::args::TrackerArgs,

    /// Which mocopi joints drive Spine, Chest, UpperChest and the rest:
    /// `sony` (Sony's Unity plugin), `animu-sphere`, or a JSON file
    /// `{"Hips": "root", "Spine": "torso_3", …}`.
    #[arg(long, value_name = "MAPPING", default_value = "sony", requires = "bridge",
          value_parser = dump::parse_mapping_arg)]
    mapping: (String, MappingTable),

    /// Keep Hips at the skeleton's rest position instead of following the
    /// performer's root (the avatar turns and bends in place).
    #[arg(long, requires = "bridge")]
    no_root_motion: bool,

    #[command(flatten)]
    common: mocap_cli::dump::DumpArgs,

    /// --bvh takes are in the mocopi app's layout (27 joints, rest pose
    /// first, lost frames held) and start at the first skeleton packet.
    #[command(flatten)]
    bvh: mocap_cli::take::BvhArgs,

    #[command(flatten)]
    smooth: mocap_cli::args::SmoothArgs,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    let bridging = !(args.vmc.is_empty() && args.vrchat.is_empty() && args.vmt.is_empty());
    if args.smooth.smooth && !bridging {
        let e = UsageError(
            "--smooth smooths what --vmc, --vrchat and --vmt send: give one of them".into(),
        );
        return exit(Err(e.into()), dump::TOOL);
    }
    let t = &args.tracker;
    let tracker_flags = t.trackers.is_some()
        || t.height.is_some()
        || t.tracker_rate.is_some()
        || t.head
        || t.vmt_base.is_some();
    if tracker_flags && args.vrchat.is_empty() && args.vmt.is_empty() {
        let e = UsageError(
            "--trackers, --height, --tracker-rate, --head and --vmt-base shape what --vrchat and --vmt send: give one of them".into(),
        );
        return exit(Err(e.into()), dump::TOOL);
    }
    let smooth = args.smooth.options();
    let input = match args.read {
        Some(path) => Input::Read(path),
        None => Input::Listen(args.listen),
    };
    let opts = dump::Options {
        input,
        common: args.common,
        // Bridging is a background job: no line per frame unless asked.
        mode: mocap_cli::dump::Mode::resolve(
            args.format.map(|f| match f {
                dump::FormatArg::Json => Format::Json,
                dump::FormatArg::Human | dump::FormatArg::Tree => Format::Human,
            }),
            bridging,
        ),
        tree: args.format == Some(dump::FormatArg::Tree),
        bones: args.bones,
        bvh: args.bvh.out(),
        vmc: bridging.then(|| {
            let (mapping_name, mapping) = args.mapping;
            dump::VmcOut {
                to: args.vmc,
                body: BodyOptions {
                    mapping,
                    root_motion: !args.no_root_motion,
                },
                mapping_name,
                smooth,
                trackers: [
                    (args.vrchat, args.tracker.vrchat()),
                    (args.vmt, args.tracker.vmt()),
                ]
                .into_iter()
                .filter(|(to, _)| !to.is_empty())
                .collect(),
            }
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
