//! ifm-handshake's records (docs/jsonl.md).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use mocap_cli::prelude::*;

use serde::Serialize;

#[derive(Serialize)]
pub(super) struct HeadRecord {
    pub(super) rot: [f32; 3],
    pub(super) pos: [f32; 3],
}

#[derive(Serialize)]
pub(super) struct FrameRecord<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    pub(super) src: Option<SocketAddr>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) ts_us: Option<i64>,
    pub(super) tracking: Option<bool>,
    pub(super) blendshapes: BTreeMap<&'a str, f32>,
    pub(super) head: Option<HeadRecord>,
    pub(super) right_eye: Option<[f32; 3]>,
    pub(super) left_eye: Option<[f32; 3]>,
    pub(super) unknown: BTreeMap<&'a str, i32>,
    pub(super) warnings: Vec<String>,
}

#[derive(Serialize)]
pub(super) struct SenderRecord {
    pub(super) src: Option<SocketAddr>,
    pub(super) frames: u64,
    pub(super) errors: u64,
    pub(super) warnings: u64,
    pub(super) gaps: u64,
    pub(super) fps: Option<f64>,
}

#[derive(Serialize)]
pub(super) struct SummaryRecord<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'a str,
    pub(super) tool: &'a str,
    pub(super) frames: u64,
    pub(super) errors: u64,
    pub(super) warnings: u64,
    pub(super) gaps: u64,
    pub(super) fps: Option<f64>,
    pub(super) commands_ignored: u64,
    pub(super) commands_refused: u64,
    #[serde(flatten)]
    pub(super) refusals: mocap_cli::allow::Refusals,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) connections: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) vmc_datagrams: Option<u64>,
    /// `--vmc`: each destination's counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) sends: Vec<mocap_cli::sends::SendRecord>,
    pub(super) elapsed_s: f64,
    pub(super) stopped: Option<Stopped>,
    pub(super) senders: Vec<SenderRecord>,
    #[serde(flatten)]
    pub(super) other: mocap_cli::other::OtherProtocolCount,
    /// The interval a status line covers (human form only).
    #[serde(skip)]
    pub(super) interval: Option<mocap_cli::status::Interval>,
}

impl Record for SummaryRecord<'_> {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        mocap_cli::dump::counters_head(f, self.stopped, self.interval)?;
        write!(
            f,
            "{} frames, {} errors, {} warnings, {} gaps, {} commands ignored",
            self.frames, self.errors, self.warnings, self.gaps, self.commands_ignored
        )?;
        f.write_str(&self.refusals.human())?;
        f.write_str(&self.other.human())?;
        if self.commands_refused > 0 {
            write!(f, ", {} commands refused", self.commands_refused)?;
        }
        // A status line's rate is its interval's (above): the rate since
        // the start would read 60 fps long after the phone stopped.
        if let Some(fps) = self.fps
            && (self.interval.is_none() || self.stopped.is_some())
        {
            write!(f, "; {fps:.1} fps")?;
        }
        if let Some(n) = self.connections {
            write!(f, "; {n} connections")?;
        }
        if let Some(n) = self.vmc_datagrams {
            write!(f, "; {n} VMC datagrams sent")?;
        }
        mocap_cli::sends::write_sends(f, &self.sends)?;
        Ok(())
    }
}

#[derive(Serialize)]
pub(super) struct RecordingRecord {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) frames: usize,
    pub(super) bad_frames: usize,
    pub(super) duration_s: f64,
    pub(super) bytes: usize,
    pub(super) out: Option<String>,
}
