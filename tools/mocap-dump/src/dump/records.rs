//! mocap-dump's records (docs/jsonl.md): `frame` with the decoded values
//! of any protocol, `error`, and `stats`/`summary` with the shared
//! per-stream counters ([`StreamCounts`]).

use std::fmt::Write as _;
use std::net::SocketAddr;

use mocap_cli::dump::{Core, Mode, SummaryBase};
use mocap_cli::output::plural;
use mocap_cli::prelude::*;
use mocap_cli::records::{ErrorRecord, ts_us};
use mocap_cli::sends::SendRecord;
use mocap_cli::source::Datagram;
use mocap_cli::streams::StreamCounts;
use mocap_core::health::HealthReport;
use mocap_core::protocol::{Protocol, Stamp};
use serde::Serialize;

use super::ask::AskRecord;
use super::view::JsonView;

/// Bytes of an unknown datagram a human line shows.
const UNKNOWN_HEAD: usize = 16;

/// `frame`: one decoded datagram.
#[derive(Serialize)]
struct FrameRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    protocol: &'static str,
    sender: Option<SocketAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ts_us: Option<i64>,
    /// The sender's frame number, for protocols that number frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<u32>,
    /// The sender's clock in seconds, for protocols that stamp frames with
    /// a clock and no number (OpenSeeFace, VTube Studio).
    #[serde(skip_serializing_if = "Option::is_none")]
    clock_s: Option<f64>,
    /// What a datagram that is not a frame is (`skeleton`, `sensor`,
    /// `handshake`).
    #[serde(skip_serializing_if = "Option::is_none")]
    carries: Option<&'static str>,
    #[serde(flatten)]
    view: &'a JsonView,
}

/// `error`, with the protocol the datagram was taken for.
#[derive(Serialize)]
struct ProtocolError {
    #[serde(flatten)]
    error: ErrorRecord,
    #[serde(skip_serializing_if = "Option::is_none")]
    protocol: Option<&'static str>,
}

fn error_record(d: &Datagram<'_>, reason: String, p: Option<Protocol>) -> ProtocolError {
    let mut error = ErrorRecord::new(reason);
    error.src = d.src;
    error.ts_us = ts_us(d.ts);
    error.len = Some(d.payload.len());
    ProtocolError {
        error,
        protocol: p.map(Protocol::key),
    }
}

/// Writes a decoded datagram's record: `frame`, or `error` when it did not
/// decode as `p`.
///
/// # Errors
/// Output errors.
pub(super) fn frame(
    core: &mut Core,
    d: &Datagram<'_>,
    p: Protocol,
    stamp: Stamp,
    view: &JsonView,
) -> std::io::Result<()> {
    let (frame, clock_s, carries) = match stamp {
        Stamp::Numbered { frame, .. } => (Some(frame), None, None),
        Stamp::Clocked { clock, .. } => (None, Some(clock.as_secs_f64()), None),
        Stamp::Unnumbered { .. } => (None, None, None),
        Stamp::Skeleton => (None, None, Some("skeleton")),
        Stamp::Sensor => (None, None, Some("sensor")),
        Stamp::Handshake => (None, None, Some("handshake")),
        Stamp::Error => {
            let reason = format!("not a whole {} datagram", p.name());
            return core.out.json(&error_record(d, reason, Some(p)));
        }
    };
    core.out.json(&FrameRecord {
        kind: "frame",
        protocol: p.key(),
        sender: d.src,
        ts_us: ts_us(d.ts),
        frame,
        clock_s,
        carries,
        view,
    })
}

/// Writes a datagram no protocol of the registry recognises: an `error`
/// record, or a human line with its first bytes.
///
/// # Errors
/// Output errors.
pub(super) fn unknown(core: &mut Core, d: &Datagram<'_>) -> anyhow::Result<()> {
    match core.mode {
        Mode::Json => {
            let reason = "no protocol of the registry recognises it".to_owned();
            core.out.json(&error_record(d, reason, None))?;
        }
        Mode::Human => {
            let s = core.view.frame();
            let _ = write!(s, "{:<12} {} bytes", "unknown", d.payload.len());
            for b in d.payload.iter().take(UNKNOWN_HEAD) {
                let _ = write!(s, " {b:02x}");
            }
            if d.payload.len() > UNKNOWN_HEAD {
                s.push_str(" …");
            }
            Core::push_origin(s, d, core.first_arrival);
            s.push('\n');
            core.end_frame()?;
        }
        Mode::Status => {}
    }
    Ok(())
}

/// A stream's counters, or every stream's together: the shared
/// per-stream counts and the rates.
#[derive(Serialize)]
pub(super) struct Counted {
    #[serde(flatten)]
    pub(super) counts: StreamCounts,
    /// Frames per second on the arrival clock (the sender's when there is none).
    fps: Option<f64>,
    jitter_ms: Option<f64>,
}

impl Counted {
    /// `datagrams` of which `h` tells the health; loss only for `numbered`
    /// streams (frames the sender numbered).
    pub(super) fn new(datagrams: u64, numbered: bool, h: &HealthReport) -> Self {
        let h = h.rounded();
        Self {
            counts: StreamCounts::new(datagrams, h.frames, h.errors, numbered.then_some(&h)),
            fps: h.fps,
            jitter_ms: h.jitter_ms,
        }
    }

    /// `N frames, N errors; lost …` for a human line.
    fn describe(&self, with_rate: bool) -> String {
        let c = &self.counts;
        let mut s = format!(
            "{}, {}; ",
            plural(c.frames, "frame", "frames"),
            plural(c.errors, "error", "errors"),
        );
        let h = HealthReport {
            lost: c.lost,
            duplicates: c.duplicates,
            reordered: c.reordered,
            restarts: c.restarts,
            fps: self.fps.filter(|_| with_rate),
            jitter_ms: self.jitter_ms,
            ..HealthReport::default()
        };
        mocap_cli::dump::health_words(&mut s, &h, 0, 1);
        s
    }
}

/// One stream (sender and protocol) in `stats` and `summary`.
#[derive(Serialize)]
pub(super) struct StreamRecord {
    pub(super) protocol: &'static str,
    pub(super) sender: Option<SocketAddr>,
    #[serde(flatten)]
    pub(super) counted: Counted,
}

/// What `--vmc` sent.
#[derive(Serialize)]
pub(super) struct VmcSummary {
    pub(super) to: Vec<SocketAddr>,
    pub(super) frames: u64,
    pub(super) datagrams: u64,
}

/// What `--vmt` sent.
#[derive(Serialize)]
pub(super) struct VmtSummary {
    pub(super) to: Vec<SocketAddr>,
    /// Tracker updates (one `/VMT/Room/Unity` each).
    pub(super) updates: u64,
    /// Slots past the last VMT index, not sent.
    pub(super) unplaced: u64,
}

/// `stats` and `summary`.
#[derive(Serialize)]
pub(super) struct SummaryRecord {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) tool: &'static str,
    /// Every stream together (unknown and unreadable datagrams are not in
    /// its `datagrams`).
    #[serde(flatten)]
    pub(super) totals: Counted,
    /// Datagrams no protocol recognised.
    pub(super) unknown: u64,
    /// Input that was not a datagram (a bad hex line).
    pub(super) unreadable: u64,
    /// Datagrams of numbered sequences past the bound per stream (decoded,
    /// not counted apart).
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) untracked: u64,
    #[serde(flatten)]
    pub(super) base: SummaryBase,
    pub(super) streams: Vec<StreamRecord>,
    /// Streams a `stats` record leaves out (it lists the busiest few).
    #[serde(skip_serializing_if = "is_zero_usize")]
    pub(super) more_streams: usize,
    /// Senders evicted past 256 to make room for new ones (in the totals).
    #[serde(skip_serializing_if = "is_zero")]
    pub(super) evicted_senders: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) capture: Option<mocap_core::pcap::CaptureStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vmc: Option<VmcSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vmt: Option<VmtSummary>,
    /// `--ask`: what was asked of whom.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) asked: Vec<AskRecord>,
    /// Each destination's counts (`--ask`, `--vmc`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) sends: Vec<SendRecord>,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

impl SummaryRecord {
    /// Every datagram, unknown and unreadable input too.
    fn packets(&self) -> u64 {
        self.totals.counts.datagrams + self.unknown + self.unreadable
    }
}

impl Record for SummaryRecord {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rates = self.base.rates_since_start();
        let mut counters = self.totals.describe(rates);
        if self.unknown > 0 {
            let _ = write!(counters, "; {} unknown", self.unknown);
        }
        if self.unreadable > 0 {
            let _ = write!(counters, "; {} unreadable", self.unreadable);
        }
        self.base
            .write_head(f, self.packets(), &counters, &Default::default())?;
        for s in &self.streams {
            let src = s.sender.map_or_else(|| "-".to_owned(), |a| a.to_string());
            write!(
                f,
                "\n  {} {src}: {} datagrams, {}",
                s.protocol,
                s.counted.counts.datagrams,
                s.counted.describe(rates)
            )?;
        }
        if self.more_streams > 0 {
            write!(f, "\n  +{} more streams", self.more_streams)?;
        }
        for a in &self.asked {
            write!(
                f,
                "\n  asked {} for {} {} times (from {})",
                a.to, a.protocol, a.requests, a.from
            )?;
        }
        if let Some(v) = &self.vmc {
            let to: Vec<String> = v.to.iter().map(ToString::to_string).collect();
            write!(
                f,
                "\n  vmc: {} frames ({} datagrams) to {}",
                v.frames,
                v.datagrams,
                to.join(", ")
            )?;
        }
        if let Some(v) = &self.vmt {
            let to: Vec<String> = v.to.iter().map(ToString::to_string).collect();
            write!(
                f,
                "\n  vmt: {} tracker updates to {}",
                v.updates,
                to.join(", ")
            )?;
            if v.unplaced > 0 {
                write!(f, " ({} past the last VMT index, not sent)", v.unplaced)?;
            }
        }
        mocap_cli::sends::write_sends(f, &self.sends)?;
        if let Some(c) = &self.capture {
            write!(f, "\n  {c}")?;
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
                "\n  {} datagrams of sequences past {} per stream, not counted apart",
                self.untracked,
                super::MAX_PARTS
            )?;
        }
        Ok(())
    }
}
