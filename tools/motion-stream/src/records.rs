//! What motion-stream prints, one type per record shape (docs/jsonl.md):
//! the dump's `dlp3d.*` records and summary, the server's client records and
//! summary, and the shared `error`.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;

use std::fmt;

use mocap_cli::output::summary_head;
use mocap_cli::prelude::*;
use mocap_cli::records::ErrorRecord;
use serde::Serialize;

/// An `error` record (or line).
pub(crate) fn error(out: &mut Output, format: Format, reason: &str) -> io::Result<()> {
    match format {
        Format::Json => out.json(&ErrorRecord::new(reason)),
        Format::Human => out.text(format_args!("error                {reason}\n")),
    }
}

/// A `dlp3d.*` record: the message's kind and what it carries.
#[derive(Serialize)]
pub(crate) struct EventRecord<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    #[serde(flatten)]
    pub(crate) body: EventBody<'a>,
}

/// What a DLP3D message carries, by kind. Scalars are widened to f64, so an
/// f64 reader gets the float32 on the wire exactly.
#[derive(Serialize)]
#[serde(untagged)]
pub(crate) enum EventBody<'a> {
    RequestId {
        request_id: &'a str,
    },
    Failed {
        message: &'a str,
    },
    MotionStart {
        joints: &'a [String],
        restpose: &'a str,
        dtype: &'static str,
        timeline_start: Option<i32>,
    },
    FaceStart {
        blendshapes: &'a [String],
        dtype: &'static str,
        timeline_start: Option<i32>,
    },
    AudioStart {
        rate: u32,
        channels: u32,
        width: u32,
    },
    Motion {
        frames: usize,
        bytes: usize,
        root: Vec<Vec<f64>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        frame_data: Option<Vec<MotionFrame>>,
    },
    Face {
        frames: usize,
        bytes: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        weights: Option<Vec<Vec<f64>>>,
    },
    Audio {
        bytes: usize,
        duration_s: f64,
    },
    /// Normal, Leave, the Ends: nothing but the kind.
    Empty {},
}

/// One motion frame with `--frames`: each joint's 3×3 rotation, then the
/// frame's trailing values.
#[derive(Serialize)]
pub(crate) struct MotionFrame {
    pub(crate) rotations: Vec<Vec<f64>>,
    pub(crate) meta: Vec<f64>,
}

/// The dump's `summary`.
#[derive(Serialize)]
pub(crate) struct DumpSummary<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) tool: &'static str,
    pub(crate) messages: u64,
    pub(crate) errors: u64,
    pub(crate) motion_frames: u64,
    pub(crate) face_frames: u64,
    pub(crate) audio_s: f64,
    pub(crate) bodies: &'a BTreeMap<&'static str, u64>,
    pub(crate) complete: bool,
    pub(crate) elapsed_s: f64,
    pub(crate) stopped: Stopped,
}

/// `dlp3d.client`: a connection sent its start request.
#[derive(Serialize)]
pub(crate) struct ClientRecord<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) client: u64,
    pub(crate) peer: SocketAddr,
    pub(crate) route: &'a str,
    pub(crate) class: &'a str,
    pub(crate) text: &'a str,
}

/// `dlp3d.client_end`: a client's stream ended, and why.
#[derive(Serialize)]
pub(crate) struct ClientEndRecord<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) client: u64,
    pub(crate) frames: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) seconds: Option<f64>,
    pub(crate) reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dropped: Option<bool>,
}

/// The server's `stats` and `summary`.
#[derive(Serialize)]
pub(crate) struct ServeSummary {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) tool: &'static str,
    pub(crate) clients: usize,
    pub(crate) served: u64,
    pub(crate) dropped: u64,
    /// Connections and VMC datagrams refused.
    pub(crate) refused: u64,
    /// Of `refused`: VMC datagrams from outside `--allow`.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) refused_datagrams: u64,
    /// Of `refused`: requests without the right `--token` (401).
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) unauthorized: u64,
    /// Of `refused`: WebSocket upgrades from pages of another origin (403).
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) forbidden: u64,
    /// Of `refused`: connections closed unread, over `--max-per-address` or
    /// the server's 256.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) over_limit: u64,
    /// Of `refused`: connections without a whole request head within `--head-timeout`.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) head_timeouts: u64,
    /// Of `refused`: connections closed with their request head unfinished,
    /// the oldest, when a new connection needed the place.
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) unfinished_closed: u64,
    pub(crate) pages: u64,
    pub(crate) vmc_datagrams: u64,
    pub(crate) vmc_frames: u64,
    pub(crate) decode_errors: u64,
    pub(crate) frames_out: u64,
    pub(crate) blendshapes: usize,
    pub(crate) elapsed_s: f64,
    pub(crate) stopped: Option<Stopped>,
    /// VMC senders `--allow` refused, with their datagrams.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) refused_senders: Vec<mocap_cli::allow::RefusedSender>,
    /// Addresses whose connections were refused (any reason), with counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) refused_peers: Vec<RefusedPeer>,
}

/// An address whose connections were refused.
#[derive(Serialize)]
pub(crate) struct RefusedPeer {
    /// Its IP address (`null`: addresses past the bound of 256, together).
    pub(crate) addr: Option<std::net::IpAddr>,
    /// Its connections refused.
    pub(crate) connections: u64,
}

impl Record for DumpSummary<'_> {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "done ({}): {} messages, {} motion frames, {} face frames, {:.2} s of audio, {} errors",
            self.stopped,
            self.messages,
            self.motion_frames,
            self.face_frames,
            self.audio_s,
            self.errors
        )
    }
}

impl Record for ClientRecord<'_> {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "client {} {} {} {}",
            self.client, self.peer, self.route, self.class
        )
    }
}

impl Record for ClientEndRecord<'_> {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (client, frames, reason) = (self.client, self.frames, self.reason);
        match (self.dropped, self.seconds) {
            (Some(_), _) => write!(f, "client {client} ended after {frames} frames: {reason}"),
            (None, Some(_)) => write!(f, "client {client} done after {frames} frames ({reason})"),
            (None, None) => write!(f, "client {client} closed after {frames} frames"),
        }
    }
}

impl Record for ServeSummary {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} clients served ({} dropped, {} refused), {} VMC frames in, {} frames out",
            summary_head(self.stopped),
            self.served,
            self.dropped,
            self.refused,
            self.vmc_frames,
            self.frames_out
        )
    }
}

/// Widens float32 rows for f64 readers.
pub(crate) fn wide_rows<'a>(rows: impl Iterator<Item = &'a [f32]>) -> Vec<Vec<f64>> {
    rows.map(|r| r.iter().map(|v| f64::from(*v)).collect())
        .collect()
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}
