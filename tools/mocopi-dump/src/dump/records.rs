//! mocopi-dump's records (docs/jsonl.md).

use super::{Datagram, ErrorRecord, HealthReport, Packet, Record, list};
use mocap_cli::output::plural;
use mocap_core::smf;
use mocap_core::vmc;
use serde::Serialize;
use std::net::SocketAddr;

#[derive(Serialize)]
pub(super) struct PacketHead {
    pub(super) src: Option<SocketAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ts_us: Option<i64>,
    pub(super) sender_ip: Option<String>,
    pub(super) sender_port: Option<u16>,
    /// A string: the `u64` often passes 2^53, past which a JSON reader's
    /// f64 (jq, JavaScript) changes its last digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ipad_raw: Option<String>,
}

impl PacketHead {
    pub(super) fn new(d: &Datagram<'_>, p: &Packet<'_>) -> Self {
        let ip = p.sender.and_then(|s| s.ip());
        Self {
            src: d.src,
            ts_us: ts_us(d.ts),
            sender_ip: ip.map(|ip| ip.to_string()),
            sender_port: p.sender.map(|s| s.rcvp),
            // Kept when it does not unpack, so nothing on the wire is hidden.
            ipad_raw: p
                .sender
                .filter(|_| ip.is_none())
                .map(|s| s.ipad.to_string()),
        }
    }
}

pub(super) use mocap_cli::records::ts_us;

#[derive(Serialize)]
pub(super) struct FrameRecord<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    #[serde(flatten)]
    pub(super) head: PacketHead,
    pub(super) fnum: u32,
    // Wire float32 values are widened: serde prints an f32 as its shortest
    // float32 text (1674460416 as 1674460400.0), which f64 readers (jq,
    // Python, JavaScript) read as another number. Widened, the shortest f64
    // text reads back as exactly the wire value.
    pub(super) time: f64,
    pub(super) uttm: Option<f64>,
    pub(super) timecode: Option<TimecodeRecord>,
    pub(super) bones: Vec<BoneRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) unknown: Vec<UnknownRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) warnings: Vec<WarningRecord>,
}

#[derive(Serialize)]
pub(super) struct SkeletonRecord<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    #[serde(flatten)]
    pub(super) head: PacketHead,
    pub(super) bones: Vec<BoneRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) unknown: Vec<UnknownRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) warnings: Vec<WarningRecord>,
}

#[derive(Serialize)]
pub(super) struct SensorRecord<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    #[serde(flatten)]
    pub(super) head: PacketHead,
    pub(super) children: Vec<ChildRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) unknown: Vec<UnknownRecord>,
}

#[derive(Serialize)]
pub(super) struct TimecodeRecord {
    pub(super) hour: u8,
    pub(super) minute: u8,
    pub(super) second: u8,
    pub(super) frame: u8,
    pub(super) rate: u8,
    pub(super) drop_frame: bool,
}

#[derive(Serialize)]
pub(super) struct BoneRecord {
    pub(super) id: u16,
    pub(super) name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) parent: Option<i16>,
    // Widened from the wire's float32, like `time`.
    pub(super) rot: [f64; 4],
    pub(super) pos: [f64; 3],
}

impl BoneRecord {
    /// A bone as decoded (`parent` only in skeletons), float32 widened.
    pub(super) fn new(id: u16, parent: Option<i16>, rot: [f32; 4], pos: [f32; 3]) -> Self {
        Self {
            id,
            name: smf::bone_name(id),
            parent,
            rot: rot.map(f64::from),
            pos: pos.map(f64::from),
        }
    }
}

#[derive(Serialize)]
pub(super) struct ChildRecord {
    pub(super) tag: String,
    pub(super) offset: usize,
    pub(super) len: usize,
    pub(super) hex: String,
}

/// An odd value in a packet that was decoded all the same.
#[derive(Serialize)]
pub(super) struct WarningRecord {
    pub(super) offset: usize,
    pub(super) tag: String,
    pub(super) reason: String,
}

#[derive(Serialize)]
pub(super) struct UnknownRecord {
    pub(super) parent: Option<String>,
    pub(super) tag: String,
    pub(super) offset: usize,
    pub(super) len: usize,
}

/// The shared `error` record of a datagram SMF refused.
pub(super) fn smf_error(d: &Datagram<'_>, e: &smf::Error) -> ErrorRecord {
    let mut r = ErrorRecord::new(e.kind.to_string());
    r.src = d.src;
    r.ts_us = ts_us(d.ts);
    r.offset = Some(e.offset);
    r.tag = e.field.map(|t| t.to_string());
    r.len = Some(d.payload.len());
    r
}

#[derive(Clone, Copy, Serialize)]
pub(super) struct Counters {
    pub(super) packets: u64,
    #[serde(flatten)]
    pub(super) health: HealthReport,
    /// Packets' odd values (decoded and used all the same).
    pub(super) warnings: u64,
}

impl Counters {
    pub(super) fn new(packets: u64, warnings: u64, health: &HealthReport) -> Self {
        Self {
            packets,
            health: health.rounded(),
            warnings,
        }
    }

    pub(super) fn total<'a>(all: impl Iterator<Item = &'a Self>) -> Self {
        let mut t = Self::new(0, 0, &HealthReport::default());
        for c in all {
            t.packets += c.packets;
            t.warnings += c.warnings;
            t.health.merge(&c.health);
        }
        t.health = t.health.rounded();
        t
    }

    /// The same without the rates since the start (a `stats` line reports its interval's).
    pub(super) fn without_rate(mut self) -> Self {
        self.health.fps = None;
        self.health.sender_fps = None;
        self
    }

    /// The counters in words; `streams`: how many senders' rates `fps` adds up.
    pub(super) fn describe(&self, streams: usize) -> String {
        let h = &self.health;
        let mut s = format!(
            "{}, {}, {}, {}; ",
            plural(h.frames, "frame", "frames"),
            plural(h.skeletons, "skeleton", "skeletons"),
            plural(h.sensors, "sensor", "sensors"),
            plural(h.errors, "error", "errors"),
        );
        mocap_cli::dump::health_words(&mut s, h, self.warnings, streams);
        s
    }
}

#[derive(Serialize)]
pub(super) struct SenderRecord {
    pub(super) src: Option<SocketAddr>,
    #[serde(flatten)]
    pub(super) counters: Counters,
}

#[derive(Serialize)]
pub(super) struct SummaryRecord<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    pub(super) tool: &'a str,
    #[serde(flatten)]
    pub(super) totals: Counters,
    #[serde(flatten)]
    pub(super) base: mocap_cli::dump::SummaryBase,
    pub(super) senders: Vec<SenderRecord>,
    /// Senders a `stats` record leaves out (it lists the busiest few).
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) more_senders: usize,
    /// Senders evicted past 256 to make room for new ones, their counters
    /// together (in the totals too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) evicted: Option<EvictedRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) capture: Option<mocap_core::pcap::CaptureStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vmc: Option<VmcRecord>,
    /// `--bvh` takes, once finished.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub(super) takes: &'a [mocap_cli::take::TakeSummary],
    /// `--vmc`, `--vrchat`, `--vmt`: each destination's counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) sends: Vec<mocap_cli::sends::SendRecord>,
    #[serde(flatten)]
    pub(super) other: mocap_cli::other::OtherProtocolCount,
}

impl SummaryRecord<'_> {
    /// Counters as a human line shows them: a `stats` line with its
    /// interval leaves the rates since the start out.
    fn shown(&self, c: Counters) -> Counters {
        if self.base.rates_since_start() {
            c
        } else {
            c.without_rate()
        }
    }
}

impl Record for SummaryRecord<'_> {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counters = self
            .shown(self.totals)
            .describe(self.senders.len() + self.more_senders);
        self.base
            .write_head(f, self.totals.packets, &counters, &self.other)?;
        if let Some(v) = &self.vmc {
            write!(
                f,
                "\n  vmc: {} frames ({} datagrams) to {}; {} frames before the first skeleton, {} skeleton changes",
                v.frames,
                v.datagrams,
                list(&v.to),
                v.waiting_for_skeleton,
                v.skeleton_changes
            )?;
            for t in &v.trackers {
                write!(
                    f,
                    "\n  {}: {} frames sent as trackers ({} datagrams) to {}; {} left out by --tracker-rate",
                    t.kind,
                    t.counters.sent,
                    t.datagrams,
                    list(&t.to),
                    t.counters.rate_limited
                )?;
            }
            mocap_cli::sends::write_sends(f, &self.sends)?;
        }
        if let Some(c) = &self.capture {
            write!(f, "\n  {c}")?;
        }
        if self.senders.len() > 1 {
            for s in &self.senders {
                let src = s.src.map_or_else(|| "-".to_owned(), |a| a.to_string());
                write!(f, "\n  {src}: {}", self.shown(s.counters).describe(1))?;
            }
        }
        if self.more_senders > 0 {
            write!(f, "\n  +{} more senders", self.more_senders)?;
        }
        if let Some(e) = &self.evicted {
            write!(
                f,
                "\n  {} senders evicted past 256 (in the totals): {}",
                e.senders,
                e.counters
                    .describe(usize::try_from(e.senders).unwrap_or(usize::MAX))
            )?;
        }
        Ok(())
    }
}

/// Senders evicted to make room, together.
#[derive(Serialize)]
pub(super) struct EvictedRecord {
    pub(super) senders: u64,
    #[serde(flatten)]
    pub(super) counters: Counters,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What `--vmc` sent, in summaries.
#[derive(Serialize)]
pub(super) struct VmcRecord {
    pub(super) to: Vec<SocketAddr>,
    pub(super) frames: u64,
    pub(super) datagrams: u64,
    pub(super) waiting_for_skeleton: u64,
    pub(super) skeleton_changes: u64,
    /// `--vrchat`, `--vmt`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) trackers: Vec<TrackerRecord>,
}

/// What one `--vrchat` or `--vmt` output sent, in summaries.
#[derive(Serialize)]
pub(super) struct TrackerRecord {
    #[serde(rename = "as")]
    pub(super) kind: &'static str,
    pub(super) to: Vec<SocketAddr>,
    #[serde(flatten)]
    pub(super) counters: vmc::TrackerCounters,
    pub(super) datagrams: u64,
}
