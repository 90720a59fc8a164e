//! The record of one stream, whichever tool writes it (mocap-top's
//! `top.stream`, mocap-link's `streams`): one type, so the two read alike
//! and count alike; each tool fills in where a stream comes from and what
//! else it knows.

use std::borrow::Cow;

use mocap_core::health::HealthReport;
use serde::Serialize;

/// One stream: its protocol, where it comes from in the tool's own words
/// (`F`: mocap-top's listen and sender addresses, mocap-link's performer
/// and sender count), its rate, jitter and counters, then the tool's own
/// fields (`E`), in that order in a record.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamRecord<F, E> {
    /// The registry key of its protocol (`mocopi`), or `unknown`.
    pub protocol: Cow<'static, str>,
    /// Where it comes from.
    #[serde(flatten)]
    pub from: F,
    /// Frames per second (how each tool measures it, its docs say); `None`
    /// until there is a rate to give.
    pub rate_hz: Option<f64>,
    /// Jitter in ms, when known.
    pub jitter_ms: Option<f64>,
    /// Datagrams, frames and health.
    #[serde(flatten)]
    pub counts: StreamCounts,
    /// What else the tool knows of it.
    #[serde(flatten)]
    pub own: E,
}

/// A stream's datagrams, frames and health counters, in record order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct StreamCounts {
    /// Datagrams received.
    pub datagrams: u64,
    /// Frames among them (duplicates included).
    pub frames: u64,
    /// Frames the sender numbered that never came.
    pub lost: u64,
    /// Lost frames as a share of the frames expected, in percent, to 0.001;
    /// left out for streams without frame numbers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_pct: Option<f64>,
    /// Copies of a frame already received.
    pub duplicates: u64,
    /// Frames that came after a later one.
    pub reordered: u64,
    /// Times the sender started its numbering again.
    pub restarts: u64,
    /// Datagrams that did not decode.
    pub errors: u64,
}

impl StreamCounts {
    /// The counts of a stream of `datagrams`, `frames` and `errors`, with
    /// the health of its numbered frames when it has any.
    #[must_use]
    pub fn new(datagrams: u64, frames: u64, errors: u64, numbered: Option<&HealthReport>) -> Self {
        let h = numbered.copied().unwrap_or_default();
        Self {
            datagrams,
            frames,
            lost: h.lost,
            loss_pct: numbered.map(|h| (h.loss_pct() * 1000.0).round() / 1000.0 + 0.0),
            duplicates: h.duplicates,
            reordered: h.reordered,
            restarts: h.restarts,
            errors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_is_a_share_of_the_frames_the_sender_meant() {
        let h = HealthReport {
            frames: 12,
            duplicates: 2,
            lost: 5,
            ..HealthReport::default()
        };
        let c = StreamCounts::new(14, 12, 1, Some(&h));
        // 5 lost of 10 + 5 meant.
        assert_eq!(c.loss_pct, Some(33.333));
        assert_eq!((c.lost, c.duplicates, c.errors), (5, 2, 1));
        let none = StreamCounts::new(3, 3, 0, None);
        assert_eq!((none.loss_pct, none.lost), (None, 0));
        assert_eq!(
            serde_json::to_string(&none).unwrap(),
            r#"{"datagrams":3,"frames":3,"lost":0,"duplicates":0,"reordered":0,"restarts":0,"errors":0}"#
        );
        let empty = StreamCounts::new(0, 0, 0, Some(&HealthReport::default()));
        assert_eq!(empty.loss_pct, Some(0.0));
    }
}
