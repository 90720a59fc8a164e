//! livelink-dump's records (docs/jsonl.md). Wire float32 values are widened
//! to f64, whose shortest text an f64 reader (jq, Python, JavaScript) reads
//! back as exactly the wire value.

use std::net::SocketAddr;

use mocap_cli::output::plural;
use mocap_cli::prelude::*;
use mocap_cli::records::{ErrorRecord, ts_us};
use mocap_cli::source::Datagram;
use mocap_core::health::HealthReport;
use mocap_core::livelink::{self, Angles, Face, Packet};
use serde::ser::SerializeMap as _;
use serde::{Serialize, Serializer};

/// What every packet record starts with.
#[derive(Serialize)]
pub(super) struct Head {
    src: Option<SocketAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts_us: Option<i64>,
    device: String,
    subject: String,
    frame: i32,
    subframe: f64,
    fps: [i32; 2],
}

impl Head {
    fn new(d: &Datagram<'_>, p: &Packet<'_>) -> Self {
        Self {
            src: d.src,
            ts_us: ts_us(d.ts),
            device: p.device().into_owned(),
            subject: p.subject().into_owned(),
            frame: p.time.frame,
            subframe: f64::from(p.time.subframe),
            fps: p.time.rate,
        }
    }
}

/// An odd value in a packet that was decoded all the same.
#[derive(Serialize)]
pub(super) struct WarningRecord {
    offset: usize,
    field: &'static str,
    reason: String,
}

fn warning_records(w: &[livelink::Warning]) -> Vec<WarningRecord> {
    w.iter()
        .map(|w| WarningRecord {
            offset: w.offset,
            field: w.field.as_str(),
            reason: w.kind.to_string(),
        })
        .collect()
}

/// The blendshapes as a JSON object in wire order, written straight from the datagram.
struct Blendshapes<'a>(Face<'a>);

impl Serialize for Blendshapes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        for (name, v) in self.0.blendshapes() {
            m.serialize_entry(name, &f64::from(v))?;
        }
        m.end()
    }
}

#[derive(Serialize)]
struct AnglesRecord {
    yaw: f64,
    pitch: f64,
    roll: f64,
}

impl From<Angles> for AnglesRecord {
    fn from(a: Angles) -> Self {
        Self {
            yaw: f64::from(a.yaw),
            pitch: f64::from(a.pitch),
            roll: f64::from(a.roll),
        }
    }
}

/// `livelink.frame`.
#[derive(Serialize)]
pub(super) struct FrameRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    packet: Head,
    blendshapes: Blendshapes<'a>,
    head: Option<AnglesRecord>,
    left_eye: Option<AnglesRecord>,
    right_eye: Option<AnglesRecord>,
    /// Values past the 61 named ones.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    extra: Vec<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<WarningRecord>,
}

impl<'a> FrameRecord<'a> {
    pub(super) fn new(
        d: &Datagram<'_>,
        p: &Packet<'_>,
        f: &Face<'a>,
        warnings: &[livelink::Warning],
    ) -> Self {
        Self {
            kind: "livelink.frame",
            packet: Head::new(d, p),
            blendshapes: Blendshapes(*f),
            head: f.head().map(Into::into),
            left_eye: f.left_eye().map(Into::into),
            right_eye: f.right_eye().map(Into::into),
            extra: f.extra().map(f64::from).collect(),
            warnings: warning_records(warnings),
        }
    }
}

/// `livelink.noface`.
#[derive(Serialize)]
pub(super) struct NoFaceRecord {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    head: Head,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<WarningRecord>,
}

impl NoFaceRecord {
    pub(super) fn new(d: &Datagram<'_>, p: &Packet<'_>, warnings: &[livelink::Warning]) -> Self {
        Self {
            kind: "livelink.noface",
            head: Head::new(d, p),
            warnings: warning_records(warnings),
        }
    }
}

/// The shared `error` record of a datagram the decoder refused.
pub(super) fn error_record(d: &Datagram<'_>, e: &livelink::Error) -> ErrorRecord {
    let mut r = ErrorRecord::new(e.kind.to_string());
    r.src = d.src;
    r.ts_us = ts_us(d.ts);
    r.offset = Some(e.offset);
    r.tag = Some(e.field.as_str().to_owned());
    r.len = Some(d.payload.len());
    r
}

/// Counters of one subject, or of all: the names mocopi-dump uses for the same meanings.
#[derive(Clone, Copy, Serialize)]
pub(super) struct Counters {
    pub(super) packets: u64,
    /// Packets with a face.
    frames: u64,
    /// No-face packets.
    noface: u64,
    /// Datagrams that failed to decode.
    errors: u64,
    lost: u64,
    duplicates: u64,
    reordered: u64,
    restarts: u64,
    /// Packets per second on the arrival clock (the app's rate when there is none).
    fps: Option<f64>,
    /// Packets per second on the app's frame clock.
    sender_fps: Option<f64>,
    jitter_ms: Option<f64>,
    /// Odd values decoded and used all the same.
    warnings: u64,
}

impl Counters {
    pub(super) fn new(
        packets: u64,
        noface: u64,
        errors: u64,
        warnings: u64,
        h: &HealthReport,
    ) -> Self {
        let h = h.rounded();
        Self {
            packets,
            frames: h.frames.saturating_sub(noface),
            noface,
            errors,
            lost: h.lost,
            duplicates: h.duplicates,
            reordered: h.reordered,
            restarts: h.restarts,
            fps: h.fps,
            sender_fps: h.sender_fps,
            jitter_ms: h.jitter_ms,
            warnings,
        }
    }

    /// The same without the rates since the start (a `stats` line reports its interval's).
    pub(super) fn without_rate(mut self) -> Self {
        self.fps = None;
        self.sender_fps = None;
        self
    }

    /// The counters in words; `streams`: how many subjects' rates `fps` adds up.
    fn describe(&self, streams: usize) -> String {
        let mut s = format!(
            "{}, {}, {}; ",
            plural(self.frames, "frame", "frames"),
            plural(self.noface, "no-face", "no-face"),
            plural(self.errors, "error", "errors"),
        );
        let health = HealthReport {
            lost: self.lost,
            duplicates: self.duplicates,
            reordered: self.reordered,
            restarts: self.restarts,
            fps: self.fps,
            jitter_ms: self.jitter_ms,
            ..HealthReport::default()
        };
        mocap_cli::dump::health_words(&mut s, &health, self.warnings, streams);
        s
    }
}

/// One phone's subject in the summary.
#[derive(Serialize)]
pub(super) struct SubjectRecord {
    pub(super) src: Option<SocketAddr>,
    pub(super) subject: String,
    pub(super) device: String,
    #[serde(flatten)]
    pub(super) counters: Counters,
}

/// What `--vmc` sent.
#[derive(Serialize)]
pub(super) struct VmcSummary {
    pub(super) to: Vec<SocketAddr>,
    pub(super) frames: u64,
    pub(super) datagrams: u64,
}

/// `stats` and `summary`.
#[derive(Serialize)]
pub(super) struct SummaryRecord {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) tool: &'static str,
    #[serde(flatten)]
    pub(super) totals: Counters,
    /// Packets of subjects past the per-sender bound (decoded, not counted apart).
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) untracked: u64,
    #[serde(flatten)]
    pub(super) base: mocap_cli::dump::SummaryBase,
    pub(super) subjects: Vec<SubjectRecord>,
    /// Subjects a `stats` record leaves out (it lists the busiest few).
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub(super) more_subjects: usize,
    /// Senders evicted past 256 to make room for new ones (their counts
    /// are in the totals, not in `subjects`).
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) evicted_senders: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) capture: Option<mocap_core::pcap::CaptureStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vmc: Option<VmcSummary>,
    /// `--vmc`: each destination's counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) sends: Vec<mocap_cli::sends::SendRecord>,
    #[serde(flatten)]
    pub(super) other: mocap_cli::other::OtherProtocolCount,
}

impl SummaryRecord {
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

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

impl Record for SummaryRecord {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counters = self
            .shown(self.totals)
            .describe(self.subjects.len() + self.more_subjects);
        self.base
            .write_head(f, self.totals.packets, &counters, &self.other)?;
        if let Some(v) = &self.vmc {
            let to: Vec<String> = v.to.iter().map(ToString::to_string).collect();
            write!(
                f,
                "\n  vmc: {} frames ({} datagrams) to {}",
                v.frames,
                v.datagrams,
                to.join(", ")
            )?;
            mocap_cli::sends::write_sends(f, &self.sends)?;
        }
        if let Some(c) = &self.capture {
            write!(f, "\n  {c}")?;
        }
        if self.subjects.len() > 1 {
            for s in &self.subjects {
                let src = s.src.map_or_else(|| "-".to_owned(), |a| a.to_string());
                write!(
                    f,
                    "\n  {src} {:?}: {}",
                    s.subject,
                    self.shown(s.counters).describe(1)
                )?;
            }
        }
        if self.more_subjects > 0 {
            write!(f, "\n  +{} more subjects", self.more_subjects)?;
        }
        if self.evicted_senders > 0 {
            write!(
                f,
                "\n  {} senders evicted past 256 (in the totals)",
                self.evicted_senders
            )?;
        }
        if self.untracked > 0 {
            write!(
                f,
                "\n  {} packets of subjects past {} per sender, not counted apart",
                self.untracked,
                super::MAX_SUBJECTS
            )?;
        }
        Ok(())
    }
}
