//! The flags several tools share (`--format`, `-n`/`--duration`, logging,
//! pacing, smoothing, face and tracker options) and their value parsers.

use std::path::PathBuf;
use std::time::Duration;

/// Output format shared by every tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One readable line per record.
    Human,
    /// JSON Lines: one object per line with a `type` field.
    Json,
}

/// When to stop: `-n/--count` and `--duration`, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct StopArgs {
    /// Stop after this many packets (datagrams, counting undecodable ones).
    #[arg(short = 'n', long, value_name = "N")]
    pub count: Option<u64>,

    /// Stop after this long, e.g. 500ms, 10s, 2m.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub duration: Option<Duration>,
}

impl StopArgs {
    /// What `--count` leaves to do, for whatever unit a tool counts in.
    #[must_use]
    pub fn budget(&self) -> Budget {
        Budget {
            limit: self.count,
            used: 0,
        }
    }
}

/// `-n/--count` as every tool applies it: spent units against the limit
/// (none: no limit). The one implementation for the datagram tools, the
/// relay's batches and pcap-replay's playback.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    limit: Option<u64>,
    used: u64,
}

impl Budget {
    /// How many of `n` more units fit (all of them without a limit).
    #[must_use]
    #[inline]
    pub fn room(&self, n: u64) -> u64 {
        self.limit.map_or(n, |l| n.min(l.saturating_sub(self.used)))
    }

    /// Counts `n` units done.
    #[inline]
    pub fn spend(&mut self, n: u64) {
        self.used = self.used.saturating_add(n);
    }

    /// Whether the limit is reached.
    #[must_use]
    #[inline]
    pub fn spent(&self) -> bool {
        self.limit.is_some_and(|l| self.used >= l)
    }

    /// Units done so far.
    #[must_use]
    pub fn used(&self) -> u64 {
        self.used
    }
}

/// Logging and periodic counters, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct LogArgs {
    /// Print counters every DUR (stderr in human format, `stats` records in json).
    #[arg(long, value_name = "DUR", value_parser = parse_interval)]
    pub stats_interval: Option<Duration>,

    /// No progress or log lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// How often a bridge (`--vmc` without `--format`) prints its status line
/// when `--stats-interval` is not given.
pub const STATUS_INTERVAL: Duration = Duration::from_secs(5);

/// Capture input that a tool sends on to sockets, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct PaceArgs {
    /// With -r and an output socket: send as fast as the file is read
    /// instead of at its recorded timing.
    #[arg(long)]
    pub topspeed: bool,
}

/// 1€ smoothing of what a tool sends as VMC, the same flags in every tool
/// (vmc-relay takes them per destination, with its own parser).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct SmoothArgs {
    /// Smooth bone rotations and positions and blendshape values with the 1€
    /// filter (speed-adaptive: still poses steady, fast moves responsive).
    #[arg(long)]
    pub smooth: bool,

    /// 1€ cutoff at rest in Hz, for every kind [default: 0.5 bones, 1 blendshapes].
    #[arg(long, value_name = "HZ", requires = "smooth", value_parser = parse_cutoff)]
    pub smooth_min_cutoff: Option<f64>,

    /// 1€ speed coefficient for rotations, per rad/s [default: 3].
    #[arg(long, value_name = "B", requires = "smooth", value_parser = parse_beta)]
    pub smooth_beta: Option<f64>,

    /// 1€ cutoff of the speed estimate in Hz [default: 1].
    #[arg(long, value_name = "HZ", requires = "smooth", value_parser = parse_cutoff)]
    pub smooth_dcutoff: Option<f64>,

    /// Smooth only these bones (comma-separated HumanBodyBones names).
    #[arg(long, value_name = "BONES", value_delimiter = ',', requires = "smooth")]
    pub smooth_bones: Vec<String>,

    /// Leave blendshape values as they are.
    #[arg(long, requires = "smooth")]
    pub no_smooth_blends: bool,
}

impl SmoothArgs {
    /// The smoothing asked for, if any.
    pub fn options(&self) -> Option<mocap_core::vmc::SmoothOptions> {
        self.smooth.then(|| {
            smooth_options(
                self.smooth_min_cutoff,
                self.smooth_beta,
                self.smooth_dcutoff,
                &self.smooth_bones,
                !self.no_smooth_blends,
            )
        })
    }
}

/// How a body becomes trackers (mocopi-dump's `--vrchat` and `--vmt`; vmc-relay
/// takes the same flags per destination, with its own parser).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct TrackerArgs {
    /// Tracker slots: any of hips, feet, knees, chest, elbows
    /// (comma-separated), or all [default: all].
    #[arg(long, value_name = "SLOTS")]
    pub trackers: Option<mocap_core::vmc::trackers::Selection>,

    /// The user's height in metres: tracker positions are scaled by it over
    /// the avatar's, measured from the first frame's rest pose [default: the
    /// avatar's own scale].
    #[arg(long, value_name = "M", value_parser = parse_height)]
    pub height: Option<f32>,

    /// At most HZ tracker bundles per second [default: one per input frame].
    #[arg(long, value_name = "HZ", value_parser = parse_rate)]
    pub tracker_rate: Option<f64>,

    /// With --vrchat: also send the head reference (/tracking/trackers/head/…).
    #[arg(long)]
    pub head: bool,

    /// With --vmt: the VMT index of slot 1 (hips); slot N gets BASE + N - 1 [default: 0].
    #[arg(long, value_name = "BASE", value_parser = clap::value_parser!(u8).range(..=i64::from(mocap_core::vmc::trackers::VMT_MAX_BASE)))]
    pub vmt_base: Option<u8>,
}

impl TrackerArgs {
    /// The options of a VRChat output.
    pub fn vrchat(&self) -> mocap_core::vmc::TrackerOptions {
        self.options(mocap_core::vmc::TrackerFormat::Vrchat(
            mocap_core::vmc::trackers::VrchatOptions {
                trackers: self.trackers.unwrap_or_default(),
                head: self.head,
            },
        ))
    }

    /// The options of a VMT output.
    pub fn vmt(&self) -> mocap_core::vmc::TrackerOptions {
        self.options(mocap_core::vmc::TrackerFormat::Vmt(
            mocap_core::vmc::trackers::VmtOptions {
                trackers: self.trackers.unwrap_or_default(),
                base: self.vmt_base.unwrap_or(0),
            },
        ))
    }

    fn options(&self, format: mocap_core::vmc::TrackerFormat) -> mocap_core::vmc::TrackerOptions {
        mocap_core::vmc::TrackerOptions {
            format,
            height: self.height,
            rate: self.tracker_rate,
        }
    }
}

/// `--height`: a person's height in metres, 0.5 to 3.
///
/// # Errors
/// Text that is not a number, or a number outside that range.
pub fn parse_height(s: &str) -> Result<f32, ValueError> {
    match s.parse::<f32>() {
        Ok(h) if h.is_finite() && (0.5..=3.0).contains(&h) => Ok(h),
        _ => Err(ValueError(format!(
            "{s:?} is not a height in metres (0.5 to 3.0, e.g. 1.70)"
        ))),
    }
}

/// How a face bridge (`--vmc` of ifm-handshake and livelink-dump) writes
/// perfect sync, the same flags in both tools. They need the tool's `--vmc`.
#[derive(Clone, Debug, clap::Args)]
pub struct FaceArgs {
    /// Blendshape names for --vmc: ARKit's `eyeBlinkLeft` or `EyeBlinkLeft`.
    #[arg(long, value_enum, default_value = "camel", requires = "vmc")]
    pub blend_case: BlendCaseArg,

    /// Send blendshape values as they are instead of clamping to 0..1.
    #[arg(long, requires = "vmc")]
    pub no_clamp: bool,

    /// The bone that carries the head rotation for --vmc.
    #[arg(long, value_name = "BONE", default_value = "Head", requires = "vmc")]
    pub head_bone: String,

    /// Send the eye angles as LeftEye / RightEye rotations too.
    #[arg(long, requires = "vmc")]
    pub eye_bones: bool,

    /// Which incoming angle is pitch, yaw and roll, with sign (e.g. -x,y,-z).
    #[arg(long, value_name = "AXES", default_value = "x,y,z", requires = "vmc")]
    pub head_axes: mocap_core::bridge::HeadAxes,

    /// While the app reports no face: hold the last pose or send a neutral one.
    #[arg(long, value_enum, default_value = "hold", requires = "vmc")]
    pub on_lost: OnLostArg,
}

/// `--blend-case`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum BlendCaseArg {
    /// `eyeBlinkLeft` (perfect-sync models).
    Camel,
    /// `EyeBlinkLeft`.
    Pascal,
}

/// `--on-lost`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum OnLostArg {
    /// Repeat the last tracked pose.
    Hold,
    /// All blendshapes 0, head and eyes at rest.
    Neutral,
}

impl FaceArgs {
    /// The bridge options these flags ask for.
    pub fn options(&self) -> mocap_core::bridge::FaceOptions {
        use mocap_core::bridge::{BlendCase, FaceOptions, OnLost};
        FaceOptions {
            case: match self.blend_case {
                BlendCaseArg::Camel => BlendCase::Camel,
                BlendCaseArg::Pascal => BlendCase::Pascal,
            },
            clamp: !self.no_clamp,
            head_bone: self.head_bone.clone(),
            eye_bones: self.eye_bones,
            axes: self.head_axes,
            on_lost: match self.on_lost {
                OnLostArg::Hold => OnLost::Hold,
                OnLostArg::Neutral => OnLost::Neutral,
            },
        }
    }
}

/// Smoothing options from the flags' values (`None`: the default).
/// `--smooth-min-cutoff` and `--smooth-dcutoff` apply to every kind;
/// `--smooth-beta` is per rad/s, so it applies to rotations only (positions
/// and blendshapes keep theirs, in their own units).
pub fn smooth_options(
    min_cutoff: Option<f64>,
    beta: Option<f64>,
    dcutoff: Option<f64>,
    bones: &[String],
    blends: bool,
) -> mocap_core::vmc::SmoothOptions {
    let mut o = mocap_core::vmc::SmoothOptions {
        bones: (!bones.is_empty()).then(|| bones.to_vec()),
        blends,
        ..mocap_core::vmc::SmoothOptions::default()
    };
    for p in [&mut o.rotation, &mut o.position, &mut o.blend] {
        if let Some(v) = min_cutoff {
            p.min_cutoff = v;
        }
        if let Some(v) = dcutoff {
            p.dcutoff = v;
        }
    }
    if let Some(b) = beta {
        o.rotation.beta = b;
    }
    o
}

/// A flag's value that cannot be used; the message says what was expected
/// (clap prints it after the flag's name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError(pub String);

impl std::fmt::Display for ValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ValueError {}

/// A finite number in `lo..=hi`; the message names `what` and the range.
/// The shared flags' parsers below are made of it; a tool's own flag with
/// its own range uses it too.
///
/// # Errors
/// A message with the range when `text` is not such a number.
pub fn parse_within(text: &str, lo: f64, hi: f64, what: &str) -> Result<f64, ValueError> {
    match text.trim().parse::<f64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(ValueError(format!(
            "expected {what} from {lo} to {hi}, got {text:?}"
        ))),
    }
}

/// An update rate in Hz (`--max-rate`, `--tracker-rate`, `--rate`): 0.01
/// (one every 100 s) to 10 000, beyond any sender's frame rate.
///
/// # Errors
/// A message with the range when it is not one.
pub fn parse_rate(text: &str) -> Result<f64, ValueError> {
    parse_within(text, 0.01, 10_000.0, "a rate in Hz")
}

/// A 1€ cutoff frequency in Hz (`--smooth-min-cutoff`, `--smooth-dcutoff`):
/// 0.001 to 1000.
///
/// # Errors
/// A message with the range when it is not one.
pub fn parse_cutoff(text: &str) -> Result<f64, ValueError> {
    parse_within(text, 0.001, 1000.0, "a cutoff in Hz")
}

/// The 1€ speed coefficient (`--smooth-beta`): 0 (no speed adaptation) to 1000.
///
/// # Errors
/// A message with the range when it is not one.
pub fn parse_beta(text: &str) -> Result<f64, ValueError> {
    parse_within(text, 0.0, 1000.0, "a speed coefficient")
}

/// Datagrams per second (`--max-pps`, `--pps`): 0.01 to 10 000 000.
///
/// # Errors
/// A message with the range when it is not one.
pub fn parse_pps(text: &str) -> Result<f64, ValueError> {
    parse_within(text, 0.01, 10_000_000.0, "datagrams per second")
}

/// A playback speed factor (`--speed`): 0.001 to 1000.
///
/// # Errors
/// A message with the range when it is not one.
pub fn parse_speed(text: &str) -> Result<f64, ValueError> {
    parse_within(text, 0.001, 1000.0, "a speed factor")
}

/// A duration from `min` to `max` ([`parse_duration`]'s forms), named as
/// `range` in the message (e.g. "1ms to 60s").
///
/// # Errors
/// A message with the range when `text` is not such a duration.
pub fn parse_duration_within(
    text: &str,
    min: Duration,
    max: Duration,
    range: &str,
) -> Result<Duration, ValueError> {
    match parse_duration(text) {
        Ok(d) if (min..=max).contains(&d) => Ok(d),
        Ok(_) => Err(ValueError(format!("expected {range}, got {text:?}"))),
        Err(e) => Err(ValueError(format!("{e} ({range})"))),
    }
}

/// How often something periodic happens (`--stats-interval`, mocap-top's
/// `--interval`): 10 ms or more; a zero period would print without pause.
///
/// # Errors
/// A message with the range when `text` is not such a duration.
pub fn parse_interval(text: &str) -> Result<Duration, ValueError> {
    parse_duration_within(
        text,
        Duration::from_millis(10),
        Duration::MAX,
        "10ms or more",
    )
}

/// Recording what a sniffing tool receives, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct WriteArgs {
    /// Record every datagram received, before decoding, to FILE (pcapng).
    #[arg(short = 'w', long = "write", value_name = "FILE.pcapng")]
    pub write: Option<PathBuf>,

    /// With -w and --allow: record refused datagrams too (they are never
    /// decoded or forwarded), to see what a stranger sent.
    #[arg(long, requires_all = ["write", "allow"])]
    pub record_refused: bool,
}

/// Parses `500ms`, `10s`, `2m`, `1h`, `1.5s`, or a plain number of seconds.
///
/// # Errors
/// A message naming the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, ValueError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        ValueError(format!(
            "invalid duration {text:?}: expected e.g. 500ms, 10s, 2m"
        ))
    })?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(ValueError(format!(
                "invalid duration unit {other:?} in {text:?}: use ms, s, m or h"
            )));
        }
    };
    let secs = value * scale;
    // A century is longer than any run; beyond it, clocks would overflow.
    if secs > 100.0 * 365.0 * 24.0 * 3600.0 {
        return Err(ValueError(format!(
            "duration {text:?} is too long (at most 100 years)"
        )));
    }
    Duration::try_from_secs_f64(secs)
        .map_err(|e| ValueError(format!("invalid duration {text:?}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_limits_any_unit() {
        let mut b = StopArgs {
            count: Some(5),
            duration: None,
        }
        .budget();
        assert_eq!(b.room(3), 3);
        b.spend(3);
        assert!(!b.spent());
        assert_eq!(b.room(32), 2, "a batch is cut to what is left");
        b.spend(2);
        assert!(b.spent());
        assert_eq!((b.room(1), b.used()), (0, 5));
        let mut free = StopArgs::default().budget();
        free.spend(u64::MAX);
        free.spend(1);
        assert!(!free.spent());
        assert_eq!(free.room(7), 7);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("4000000000000000h").is_err());
        assert!(parse_interval("0").unwrap_err().0.contains("10ms or more"));
        assert_eq!(parse_interval("1s"), Ok(Duration::from_secs(1)));
        let w = |t| parse_duration_within(t, Duration::ZERO, Duration::from_secs(60), "0 to 60s");
        assert_eq!(w("60s"), Ok(Duration::from_secs(60)));
        assert!(w("61s").unwrap_err().0.contains("0 to 60s"));
        assert!(w("x").unwrap_err().0.contains("0 to 60s"));
    }

    #[test]
    fn rates_are_finite_and_in_range() {
        assert_eq!(parse_rate("30"), Ok(30.0));
        assert_eq!(parse_rate("0.01"), Ok(0.01));
        assert_eq!(parse_rate(" 60 "), Ok(60.0));
        for bad in [
            "0", "-5", "nan", "NaN", "inf", "-inf", "0.001", "1e-9", "1e300", "", "x",
        ] {
            let e = parse_rate(bad).expect_err(bad);
            assert!(e.0.contains("0.01 to 10000"), "{bad}: {e}");
        }
        assert!(parse_pps("0").is_err() && parse_pps("nan").is_err());
        assert_eq!(parse_pps("1000"), Ok(1000.0));
        assert!(parse_speed("1e-9").is_err() && parse_speed("0").is_err());
        assert_eq!(parse_speed("0.5"), Ok(0.5));
        assert!(parse_cutoff("0").is_err() && parse_cutoff("inf").is_err());
        assert_eq!(parse_beta("0"), Ok(0.0));
        assert!(parse_beta("-1").is_err() && parse_beta("nan").is_err());
    }
}
