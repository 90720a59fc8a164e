//! `vmc-average`: mix several VMC senders into one stream.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};

mod mix;
use mocap_cli::prelude::*;
use mocap_core::vmc::{Method, MixSchedule};

const EXAMPLES: &str = "\
Examples:
  vmc-average -l 0.0.0.0:39541 -l 0.0.0.0:39542 --to 127.0.0.1:39539
      two trackers on two ports, every bone averaged, 60 mixed frames a second
  vmc-average -l 0.0.0.0:39541 --source tdpt=192.168.1.20:50000 --source wmc=127.0.0.1:50001 \\
              --mode window --window 450ms --gap 50ms --bones Spine,Chest,Neck,Head --to 127.0.0.1:39538
      seed 003's setup, done right (window mode, four bones, Markley averaging)
  vmc-average -l 0.0.0.0:39541 -l 0.0.0.0:39542 --source face=0.0.0.0:39542 \\
              --prefer face:Head,Neck --weight face=0.5 --to 127.0.0.1:39539
      head and neck from one source, the body averaged
  vmc-average -l 0.0.0.0:39541 -l 0.0.0.0:39542 --to 127.0.0.1:39539 --bvh mix.bvh
      also record the mix as a BVH take
  sudo vmc-average -l 0.0.0.0:39541 -l 0.0.0.0:39542 --to 127.0.0.1:39539 --realtime
      mix at real-time priority: fewer late frames on a busy machine";

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Mode {
    /// As soon as the primary source completes a frame, with the latest frame
    /// of each other live source (no added latency).
    Frame,
    /// Every tick, the latest frame of each live source.
    Tick,
    /// Every window + gap, every frame of the window.
    Window,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum MethodArg {
    /// Markley's eigenvector method.
    Markley,
    /// Sign-aligned, normalised weighted sum.
    Nlerp,
    /// Per-component mean (wrong; for comparison with seed 003).
    Naive,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BlendsArg {
    /// Pass the primary source's blendshapes through.
    Primary,
    /// Average blendshape values by name across live sources (weighted).
    Average,
}

/// Mix several VMC senders into one stream: rotations averaged correctly
/// (q and -q are one rotation), positions and weights linearly, per-bone
/// preference, and everything else passed through from a primary source.
#[derive(Debug, Parser)]
// The usage line names --to: clap leaves out arguments that are required only
// unless another is given, and a mixer with no output is the usual first mistake.
#[command(
    version,
    override_usage = "vmc-average [OPTIONS] --listen <ADDR>... --to <HOST:PORT>...\n       vmc-average [OPTIONS] --listen <ADDR>... --bvh <FILE.bvh>",
    after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help())
)]
struct Args {
    /// UDP address to listen on (repeatable).
    #[arg(short, long, value_name = "ADDR", required = true, value_parser = mocap_cli::addr::parse_listen)]
    listen: Vec<SocketAddr>,

    /// Receiver of the mixed stream (repeatable).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest, required_unless_present = "bvh")]
    to: Vec<SocketAddr>,

    /// Name a source: NAME=ADDR, where ADDR is a listening address or a sender's address.
    #[arg(long, value_name = "NAME=ADDR", value_parser = parse_source)]
    source: Vec<(String, SocketAddr)>,

    /// When to emit mixed frames [default: frame; tick when --rate is given].
    #[arg(long, value_enum)]
    mode: Option<Mode>,

    /// Mixed frames per second in tick mode, 1 to 1000 [default: 60].
    #[arg(long, value_name = "HZ", value_parser = parse_rate)]
    rate: Option<f64>,

    /// Window length in window mode, 1ms to 60s.
    #[arg(long, value_name = "DUR", default_value = "450ms", value_parser = parse_window)]
    window: Duration,

    /// Pause after each window in window mode, 0 to 60s.
    #[arg(long, value_name = "DUR", default_value = "50ms", value_parser = parse_gap)]
    gap: Duration,

    /// Rotation averaging.
    #[arg(long, value_enum, default_value_t = MethodArg::Markley)]
    method: MethodArg,

    /// A source silent this long drops out of the mix until it returns, 1ms to 1h.
    #[arg(long, value_name = "DUR", default_value = "500ms", value_parser = parse_stale)]
    stale: Duration,

    /// Weight of a named source: NAME=W, 0 to 1e6 (repeatable; default 1).
    #[arg(long, value_name = "NAME=W", value_parser = parse_weight)]
    weight: Vec<(String, f64)>,

    /// Bones to average, comma-separated, or `all`.
    #[arg(long, value_name = "BONES", default_value = "all")]
    bones: String,

    /// Take these bones from one source instead of averaging: NAME:BONE,BONE (repeatable).
    #[arg(long, value_name = "NAME:BONES", value_parser = parse_prefer)]
    prefer: Vec<(String, Vec<String>)>,

    /// The source whose other messages (root, blendshapes, OK, T) pass through (default: the first).
    #[arg(long, value_name = "NAME")]
    primary: Option<String>,

    /// Blendshape values: `primary` passes the primary's through, `average` averages them by name.
    #[arg(long, value_enum, default_value = "primary")]
    blends: BlendsArg,

    /// Print the mixed output.
    #[arg(long)]
    dump: bool,

    /// Format of --dump and of the summary.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// Run the mixing thread at real-time priority (SCHED_FIFO; root or
    /// CAP_SYS_NICE): shorter latency tails when the machine is busy.
    #[arg(long)]
    realtime: bool,

    #[command(flatten)]
    allow: mocap_cli::allow::AllowArgs,

    #[command(flatten)]
    stop: StopArgs,

    #[command(flatten)]
    log: LogArgs,

    #[command(flatten)]
    smooth: mocap_cli::args::SmoothArgs,

    /// --bvh records the mixed stream (what --to receives) as one take.
    #[command(flatten)]
    bvh: mocap_cli::take::BvhArgs,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

fn parse_source(s: &str) -> Result<(String, SocketAddr), String> {
    let (name, addr) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=ADDR, got {s:?}"))?;
    Ok((
        name.to_owned(),
        mocap_cli::addr::parse_host_port(addr).map_err(|e| e.0)?,
    ))
}

/// The tick rates `--rate` accepts, 1 to 1000 Hz: the mixer's shortest
/// period is 1 ms ([`mocap_core::vmc::MIN_PERIOD`]); below 1 Hz is no
/// longer a motion stream.
fn parse_rate(s: &str) -> Result<f64, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_within(s, 1.0, 1000.0, "a rate in Hz")
}

const MINUTE: Duration = Duration::from_secs(60);

/// A zero window holds no frame; past a minute, a window's frames are
/// capped ([`mocap_core::vmc::MAX_WINDOW_FRAMES`]) and the mix comes too
/// rarely to follow a body.
fn parse_window(s: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_duration_within(s, Duration::from_millis(1), MINUTE, "1ms to 60s")
}

fn parse_gap(s: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_duration_within(s, Duration::ZERO, MINUTE, "0 to 60s")
}

/// A zero `--stale` leaves no source ever live: nothing would be mixed.
fn parse_stale(s: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_duration_within(
        s,
        Duration::from_millis(1),
        Duration::from_secs(3600),
        "1ms to 1h",
    )
}

fn parse_weight(s: &str) -> Result<(String, f64), String> {
    let (name, w) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=W, got {s:?}"))?;
    // Bounded so that sums of weighted values stay finite (two weights
    // of 1e308 summed to infinity and mixed NaN positions).
    match w.parse::<f64>() {
        Ok(w) if (0.0..=1e6).contains(&w) => Ok((name.to_owned(), w)),
        _ => Err(format!("weight must be a number from 0 to 1e6, got {w:?}")),
    }
}

fn parse_prefer(s: &str) -> Result<(String, Vec<String>), String> {
    let (name, bones) = s
        .split_once(':')
        .ok_or_else(|| format!("expected NAME:BONES, got {s:?}"))?;
    Ok((
        name.to_owned(),
        bones.split(',').map(str::to_owned).collect(),
    ))
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    let opts = mix::Options {
        listen: args.listen,
        to: args.to,
        sources: args.source,
        // An explicit --rate means ticks (as before frame mode existed).
        schedule: match args.mode.unwrap_or_else(|| {
            if args.rate.is_some() {
                Mode::Tick
            } else {
                Mode::Frame
            }
        }) {
            Mode::Frame => MixSchedule::Frame,
            Mode::Tick => MixSchedule::Tick {
                rate: args.rate.unwrap_or(60.0),
            },
            Mode::Window => MixSchedule::Window {
                window: args.window,
                gap: args.gap,
            },
        },
        method: match args.method {
            MethodArg::Markley => Method::Markley,
            MethodArg::Nlerp => Method::Nlerp,
            MethodArg::Naive => Method::Naive,
        },
        stale: args.stale,
        weights: args.weight,
        bones: (args.bones != "all").then(|| args.bones.split(',').map(str::to_owned).collect()),
        prefer: args.prefer,
        primary: args.primary,
        average_blends: matches!(args.blends, BlendsArg::Average),
        dump: args.dump,
        format: args.format,
        stop: args.stop,
        log: args.log,
        smooth: args.smooth.options(),
        bvh: args.bvh.out(),
        realtime: args.realtime,
        allow: args.allow,
    };
    exit(mix::run(&opts), mix::TOOL)
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
    fn value_parsers() {
        assert_eq!(parse_source("wmc=127.0.0.1:5000").unwrap().0, "wmc");
        assert!(parse_source("nope").is_err());
        assert_eq!(parse_weight("a=0.5"), Ok(("a".into(), 0.5)));
        assert!(parse_weight("a=-1").is_err());
        assert!(parse_weight("a=1e308").is_err());
        assert!(parse_weight("a=nan").is_err());
        assert_eq!(parse_prefer("face:Head,Neck").unwrap().1, ["Head", "Neck"]);
        assert_eq!(parse_rate("60"), Ok(60.0));
        assert_eq!(parse_rate("1000"), Ok(1000.0));
        for bad in ["0", "nan", "1e-9", "inf", "-5", "0.5", "1000.5", "x"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.0.contains("rate in Hz from 1 to 1000"), "{bad}: {e}");
        }
        assert_eq!(parse_window("450ms"), Ok(Duration::from_millis(450)));
        assert_eq!(parse_gap("0"), Ok(Duration::ZERO));
        assert_eq!(parse_stale("500ms"), Ok(Duration::from_millis(500)));
        for (parse, bad) in [
            (
                parse_window as fn(&str) -> Result<Duration, mocap_cli::args::ValueError>,
                "0",
            ),
            (parse_window, "61s"),
            (parse_gap, "2m"),
            (parse_stale, "0"),
            (parse_stale, "2h"),
            (parse_stale, "-1s"),
            (parse_stale, "nan"),
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
