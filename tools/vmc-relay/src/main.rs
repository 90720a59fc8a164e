//! `vmc-relay`: forward, filter and sniff VMC (OSC over UDP).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgAction, ArgMatches, FromArgMatches as _, Parser};
mod relay;

use mocap_cli::args::WriteArgs;
use mocap_cli::prelude::*;
use mocap_cli::source::Input;
use mocap_core::osc::Pattern;
use mocap_core::vmc::trackers::{Selection, VMT_MAX_BASE, VmtOptions, VrchatOptions};
use mocap_core::vmc::{Rename, Rules, TrackerFormat, TrackerOptions};
use relay::Destination;

const EXAMPLES: &str = "\
Examples:
  vmc-relay --to 127.0.0.1:39540 --to 127.0.0.1:39538
      one sender on 39539 to VSeeFace and Blender, bytes unchanged
  vmc-relay --to 127.0.0.1:39540 --to 127.0.0.1:39538 --only '/VMC/Ext/Blend/*'
      filters after a --to apply to that destination only: Blender gets the face
  vmc-relay --drop-bones LeftHand,RightHand --to 127.0.0.1:39540
      filters before the first --to apply to every destination
  vmc-relay --to 127.0.0.1:39540 --vrm0-to-vrm1 --max-rate 30
      VRM1 expression names, at most 30 updates per second per bone and expression
  vmc-relay --dump --format json | jq -c 'select(.type==\"vmc.bone\" and .name==\"Head\")'
      sniff what arrives on 39539
  vmc-relay -l 0.0.0.0:39540 --allow 192.168.1.0/24 --to 127.0.0.1:39541
      accept only the LAN
  vmc-relay --bvh take.bvh --duration 1m
      record a minute of what arrives as BVH (Blender: File > Import > BVH)
  vmc-relay --to 127.0.0.1:9000 --as vrchat --height 1.70 --trackers hips,feet
      VRChat full-body trackers (OSC) solved from the body, scaled to a 1.70 m user
  vmc-relay --to 127.0.0.1:39540 --to 127.0.0.1:39570 --as vmt
      VSeeFace gets the VMC stream as it came, SteamVR (VMT driver) 8 trackers";

/// Forward VMC (OSC over UDP) from one port to several receivers: byte for
/// byte, or filtered per destination (addresses, bones, expression names, rate),
/// and show what passes.
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help()))]
struct Args {
    /// UDP address to listen on.
    #[arg(short, long, value_name = "ADDR", default_value_t = mocap_cli::addr::any_ipv4(mocap_core::vmc::MARIONETTE_PORT), value_parser = mocap_cli::addr::parse_listen)]
    listen: SocketAddr,

    /// Read datagrams from a capture instead (pcap, pcapng, hex lines).
    #[arg(short, long, value_name = "FILE", conflicts_with = "listen")]
    read: Option<PathBuf>,

    #[command(flatten)]
    record: WriteArgs,

    /// A receiver (repeatable). Filter options after it apply to it alone.
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest, action = ArgAction::Append)]
    to: Vec<SocketAddr>,

    /// Forward only messages whose address matches this OSC pattern (repeatable).
    #[arg(long, value_name = "PATTERN", value_parser = check_pattern, action = ArgAction::Append)]
    only: Vec<String>,

    /// Drop messages whose address matches this OSC pattern (repeatable).
    #[arg(long, value_name = "PATTERN", value_parser = check_pattern, action = ArgAction::Append)]
    drop: Vec<String>,

    /// Forward only these bones' Bone/Pos (comma-separated HumanBodyBones names).
    #[arg(long, value_name = "NAMES", value_delimiter = ',', action = ArgAction::Append)]
    bones: Vec<String>,

    /// Drop these bones' Bone/Pos.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', action = ArgAction::Append)]
    drop_bones: Vec<String>,

    /// Rename VRM0 expressions to VRM1 in Blend/Val (Joy -> happy, …).
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true", conflicts_with = "vrm1_to_vrm0")]
    vrm0_to_vrm1: Vec<bool>,

    /// Rename VRM1 expressions to VRM0 in Blend/Val.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    vrm1_to_vrm0: Vec<bool>,

    /// At most HZ updates per second per bone, expression or device (newest wins;
    /// the held value goes out at the next slot). Apply, OK, T and events always pass.
    #[arg(long, value_name = "HZ", value_parser = mocap_cli::args::parse_rate, action = ArgAction::Append)]
    max_rate: Vec<f64>,

    /// Send every message in its own datagram (for receivers without bundle support).
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    flatten: Vec<bool>,

    /// Smooth bone rotations and positions and blendshape values with the 1€
    /// filter (speed-adaptive), per source; after a --to, for that receiver alone.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    smooth: Vec<bool>,

    /// 1€ cutoff at rest in Hz, for every kind [default: 0.5 bones, 1 blendshapes].
    #[arg(long, value_name = "HZ", value_parser = mocap_cli::args::parse_cutoff, action = ArgAction::Append)]
    smooth_min_cutoff: Vec<f64>,

    /// 1€ speed coefficient for rotations, per rad/s [default: 3].
    #[arg(long, value_name = "B", value_parser = mocap_cli::args::parse_beta, action = ArgAction::Append)]
    smooth_beta: Vec<f64>,

    /// 1€ cutoff of the speed estimate in Hz [default: 1].
    #[arg(long, value_name = "HZ", value_parser = mocap_cli::args::parse_cutoff, action = ArgAction::Append)]
    smooth_dcutoff: Vec<f64>,

    /// Smooth only these bones (comma-separated).
    #[arg(long, value_name = "BONES", value_delimiter = ',', action = ArgAction::Append)]
    smooth_bones: Vec<String>,

    /// With --smooth: leave blendshape values as they are.
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    no_smooth_blends: Vec<bool>,

    /// What a destination gets: `vmc` (the stream, filtered by the options
    /// around it), `vrchat` (VRChat's OSC trackers) or `vmt` (Virtual Motion
    /// Tracker for SteamVR), solved from the body after its filters and --smooth.
    #[arg(long = "as", value_name = "KIND", value_enum, action = ArgAction::Append)]
    output: Vec<OutputKind>,

    /// Tracker slots for --as vrchat|vmt: any of hips, feet, knees, chest,
    /// elbows (comma-separated), or all [default: all].
    #[arg(long, value_name = "SLOTS", action = ArgAction::Append)]
    trackers: Vec<Selection>,

    /// The user's height in metres: tracker positions are scaled by it over
    /// the avatar's, measured from the first frame's rest pose [default: the
    /// avatar's own scale].
    #[arg(long, value_name = "M", value_parser = mocap_cli::args::parse_height, action = ArgAction::Append)]
    height: Vec<f32>,

    /// At most HZ tracker bundles per second [default: one per input frame].
    #[arg(long, value_name = "HZ", value_parser = mocap_cli::args::parse_rate, action = ArgAction::Append)]
    tracker_rate: Vec<f64>,

    /// With --as vrchat: also send the head reference (/tracking/trackers/head/…).
    #[arg(long, action = ArgAction::Append, num_args = 0, default_missing_value = "true")]
    head: Vec<bool>,

    /// With --as vmt: the VMT index of slot 1 (hips); slot N gets BASE + N - 1 [default: 0].
    #[arg(long, value_name = "BASE", value_parser = clap::value_parser!(u8).range(..=i64::from(VMT_MAX_BASE)), action = ArgAction::Append)]
    vmt_base: Vec<u8>,

    #[command(flatten)]
    allow: mocap_cli::allow::AllowArgs,

    /// Drop datagrams above this many per second (all sources together), counted.
    #[arg(long, value_name = "N", value_parser = mocap_cli::args::parse_pps)]
    max_pps: Option<f64>,

    /// Print what arrives (human lines, or JSON Lines with --format json).
    #[arg(long)]
    dump: bool,

    /// Format of --dump and of the summary.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// --dump on a terminal: a VMC frame (up to its /VMC/Ext/OK and /VMC/Ext/T) at a time.
    #[command(flatten)]
    view: mocap_cli::view::ViewArgs,

    /// --bvh records what arrives (before any filter), one take per sender:
    /// the humanoid's bones, Root/Pos as root motion, mirrored into BVH axes.
    #[command(flatten)]
    bvh: mocap_cli::take::BvhArgs,

    #[command(flatten)]
    pace: mocap_cli::args::PaceArgs,

    #[command(flatten)]
    stop: StopArgs,

    #[command(flatten)]
    log: LogArgs,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

/// `--as`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum OutputKind {
    /// The VMC stream (filtered by the destination's options).
    Vmc,
    /// VRChat OSC trackers.
    Vrchat,
    /// Virtual Motion Tracker.
    Vmt,
}

fn check_pattern(s: &str) -> Result<String, mocap_core::osc::PatternError> {
    Pattern::new(s).map(|_| s.to_owned())
}

/// Which destination each occurrence of an option belongs to: the nearest
/// `--to` before it, or every destination when it comes before the first.
fn owners(m: &ArgMatches, id: &str, to: &[usize]) -> Vec<Option<usize>> {
    // Defaults (a count of 0) have an index too; only what was typed counts.
    if m.value_source(id) != Some(clap::parser::ValueSource::CommandLine) {
        return Vec::new();
    }
    m.indices_of(id)
        .map(|idx| idx.map(|i| to.iter().rposition(|&t| t < i)).collect())
        .unwrap_or_default()
}

fn build(m: &ArgMatches, args: &Args) -> Vec<Destination> {
    let to: Vec<usize> = m
        .indices_of("to")
        .map(Iterator::collect)
        .unwrap_or_default();
    let n = args.to.len();
    let mut rules: Vec<Rules> = (0..n).map(|_| Rules::default()).collect();
    let applies = |owner: Option<usize>, i: usize| owner.is_none_or(|o| o == i);
    for (i, r) in rules.iter_mut().enumerate() {
        for (v, o) in args.only.iter().zip(owners(m, "only", &to)) {
            if applies(o, i)
                && let Ok(p) = Pattern::new(v)
            {
                r.only.push(p);
            }
        }
        for (v, o) in args.drop.iter().zip(owners(m, "drop", &to)) {
            if applies(o, i)
                && let Ok(p) = Pattern::new(v)
            {
                r.drop.push(p);
            }
        }
        for (v, o) in args.bones.iter().zip(owners(m, "bones", &to)) {
            if applies(o, i) {
                r.bones.get_or_insert_with(Vec::new).push(v.clone());
            }
        }
        for (v, o) in args.drop_bones.iter().zip(owners(m, "drop_bones", &to)) {
            if applies(o, i) {
                r.drop_bones.push(v.clone());
            }
        }
        if owners(m, "vrm0_to_vrm1", &to)
            .into_iter()
            .any(|o| applies(o, i))
        {
            r.rename = Some(Rename::Vrm0ToVrm1);
        }
        if owners(m, "vrm1_to_vrm0", &to)
            .into_iter()
            .any(|o| applies(o, i))
        {
            r.rename = Some(Rename::Vrm1ToVrm0);
        }
        // A destination's own rate wins over one given for all.
        for (v, o) in args.max_rate.iter().zip(owners(m, "max_rate", &to)) {
            if o == Some(i) || (o.is_none() && r.max_rate.is_none()) {
                r.max_rate = Some(*v);
            }
        }
        r.flatten |= owners(m, "flatten", &to).into_iter().any(|o| applies(o, i));
        if owners(m, "smooth", &to).into_iter().any(|o| applies(o, i)) {
            // A destination's own value wins over one given for all.
            let pick = |values: &[f64], id: &str| {
                let mut v = None;
                for (x, o) in values.iter().zip(owners(m, id, &to)) {
                    if o == Some(i) || (o.is_none() && v.is_none()) {
                        v = Some(*x);
                    }
                }
                v
            };
            let bones: Vec<String> = args
                .smooth_bones
                .iter()
                .zip(owners(m, "smooth_bones", &to))
                .filter(|(_, o)| applies(*o, i))
                .map(|(b, _)| b.clone())
                .collect();
            let blends = !owners(m, "no_smooth_blends", &to)
                .into_iter()
                .any(|o| applies(o, i));
            r.smooth = Some(mocap_cli::args::smooth_options(
                pick(&args.smooth_min_cutoff, "smooth_min_cutoff"),
                pick(&args.smooth_beta, "smooth_beta"),
                pick(&args.smooth_dcutoff, "smooth_dcutoff"),
                &bones,
                blends,
            ));
        }
    }
    args.to
        .iter()
        .zip(rules)
        .enumerate()
        .map(|(i, (addr, rules))| Destination {
            addr: *addr,
            rules,
            trackers: tracker_options(m, args, &to, i),
        })
        .collect()
}

/// The last value of `values` that applies to destination `i`: its own
/// (after its `--to`), else one given before the first `--to`.
fn pick<T: Copy>(m: &ArgMatches, id: &str, to: &[usize], values: &[T], i: usize) -> Option<T> {
    let mut v = None;
    for (x, o) in values.iter().zip(owners(m, id, to)) {
        if o == Some(i) || (o.is_none() && v.is_none()) {
            v = Some(*x);
        }
    }
    v
}

/// `--as vrchat|vmt` and the tracker options of destination `i`.
fn tracker_options(m: &ArgMatches, args: &Args, to: &[usize], i: usize) -> Option<TrackerOptions> {
    let kind = pick(m, "output", to, &args.output, i).unwrap_or(OutputKind::Vmc);
    let trackers = pick(m, "trackers", to, &args.trackers, i).unwrap_or_default();
    let format = match kind {
        OutputKind::Vmc => return None,
        OutputKind::Vrchat => TrackerFormat::Vrchat(VrchatOptions {
            trackers,
            head: owners(m, "head", to)
                .into_iter()
                .any(|o| o.is_none_or(|o| o == i)),
        }),
        OutputKind::Vmt => TrackerFormat::Vmt(VmtOptions {
            trackers,
            base: pick(m, "vmt_base", to, &args.vmt_base, i).unwrap_or(0),
        }),
    };
    Some(TrackerOptions {
        format,
        height: pick(m, "height", to, &args.height, i),
        rate: pick(m, "tracker_rate", to, &args.tracker_rate, i),
    })
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let matches = mocap_cli::generate::command::<Args>().get_matches();
    let args = match Args::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => e.exit(),
    };
    let destinations = build(&matches, &args);
    let opts = relay::Options {
        input: args
            .read
            .clone()
            .map_or(Input::Listen(args.listen), Input::Read),
        record: args.record.clone(),
        destinations,
        allow: args.allow.clone(),
        max_pps: args.max_pps,
        dump: args.dump,
        format: args.format,
        stop: args.stop.clone(),
        log: args.log.clone(),
        topspeed: args.pace.topspeed,
        view: args.view,
        bvh: args.bvh.out(),
    };
    exit(relay::run(opts), relay::TOOL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    fn dests(argv: &[&str]) -> Vec<Destination> {
        let m = Args::command().try_get_matches_from(argv).unwrap();
        let a = Args::from_arg_matches(&m).unwrap();
        build(&m, &a)
    }

    #[test]
    fn cli_definition_is_valid() {
        Args::command().debug_assert();
    }

    #[test]
    fn options_after_a_destination_are_its_own() {
        let d = dests(&[
            "vmc-relay",
            "--drop-bones",
            "Head",
            "--to",
            "127.0.0.1:1",
            "--to",
            "127.0.0.1:2",
            "--only",
            "/VMC/Ext/Blend/*",
            "--max-rate",
            "30",
            "--to",
            "127.0.0.1:3",
        ]);
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].rules.drop_bones, ["Head"]);
        assert!(d[0].rules.only.is_empty() && d[2].rules.only.is_empty());
        assert_eq!(d[1].rules.only.len(), 1);
        assert_eq!(d[1].rules.max_rate, Some(30.0));
        assert_eq!(d[2].rules.max_rate, None);
        assert!(d.iter().all(|x| x.rules.drop_bones == ["Head"]));
        let raw = dests(&["vmc-relay", "--to", "127.0.0.1:1"]);
        assert!(raw[0].rules.is_raw());
        assert!(raw[0].trackers.is_none());
    }

    /// A flag given after two destinations applies to each (issue 35's
    /// review: the first destination stayed raw).
    #[test]
    fn a_flag_after_each_destination_is_each_ones() {
        let d = dests(&[
            "vmc-relay",
            "--to",
            "127.0.0.1:1",
            "--flatten",
            "--to",
            "127.0.0.1:2",
            "--flatten",
        ]);
        assert!(
            d[0].rules.flatten && d[1].rules.flatten,
            "{:?}",
            (d[0].rules.flatten, d[1].rules.flatten)
        );
        let d = dests(&[
            "vmc-relay",
            "--to",
            "127.0.0.1:1",
            "--smooth",
            "--to",
            "127.0.0.1:2",
            "--smooth",
        ]);
        assert!(d[0].rules.smooth.is_some() && d[1].rules.smooth.is_some());
        let d = dests(&[
            "vmc-relay",
            "--to",
            "127.0.0.1:1",
            "--to",
            "127.0.0.1:2",
            "--flatten",
        ]);
        assert!(!d[0].rules.flatten && d[1].rules.flatten);
    }

    #[test]
    fn as_and_tracker_options_per_destination() {
        let d = dests(&[
            "vmc-relay",
            "--height",
            "1.7",
            "--to",
            "127.0.0.1:1",
            "--as",
            "vrchat",
            "--trackers",
            "hips,feet",
            "--head",
            "--to",
            "127.0.0.1:2",
            "--as",
            "vmt",
            "--vmt-base",
            "10",
            "--tracker-rate",
            "30",
            "--to",
            "127.0.0.1:3",
        ]);
        let t0 = d[0].trackers.unwrap();
        assert_eq!(
            t0.format,
            TrackerFormat::Vrchat(VrchatOptions {
                trackers: "hips,feet".parse().unwrap(),
                head: true
            })
        );
        assert_eq!((t0.height, t0.rate), (Some(1.7), None));
        let t1 = d[1].trackers.unwrap();
        assert_eq!(
            t1.format,
            TrackerFormat::Vmt(VmtOptions {
                trackers: Selection::ALL,
                base: 10
            })
        );
        assert_eq!((t1.height, t1.rate), (Some(1.7), Some(30.0)));
        assert!(d[2].trackers.is_none(), "vmc by default");
        for bad in [
            &["vmc-relay", "--to", "127.0.0.1:1", "--as", "vrc"][..],
            &["vmc-relay", "--to", "127.0.0.1:1", "--height", "170"],
            &["vmc-relay", "--to", "127.0.0.1:1", "--vmt-base", "51"],
            &["vmc-relay", "--to", "127.0.0.1:1", "--trackers", "hands"],
        ] {
            assert!(
                Args::command().try_get_matches_from(bad).is_err(),
                "{bad:?}"
            );
        }
    }
}
