//! Link delay in fixed memory: the recent one-way ages and round trips as
//! p50/p99, and the staleness rule that keeps a backlog (a subscriber that
//! stalled, a link that queued) from reaching the receiver.

use std::collections::VecDeque;

use serde::Serialize;

/// How many recent samples the percentiles are taken over.
const RECENT: usize = 1024;

/// The last [`RECENT`] delays of one stream, in milliseconds.
#[derive(Clone, Debug, Default)]
pub(crate) struct Recent {
    ms: VecDeque<f64>,
}

/// p50 and p99 of recent delays, in milliseconds (three decimals).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub(crate) struct Percentiles {
    pub(crate) p50: f64,
    pub(crate) p99: f64,
}

impl Recent {
    /// Adds one delay; the oldest goes past [`RECENT`]. Not-a-number is ignored.
    pub(crate) fn push(&mut self, ms: f64) {
        if !ms.is_finite() {
            return;
        }
        if self.ms.len() == RECENT {
            self.ms.pop_front();
        }
        self.ms.push_back(ms);
    }

    /// Nearest-rank p50 and p99, `None` before the first sample.
    pub(crate) fn percentiles(&self) -> Option<Percentiles> {
        if self.ms.is_empty() {
            return None;
        }
        let mut v: Vec<f64> = self.ms.iter().copied().collect();
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
            v.get(i).copied().map_or(f64::NAN, mocap_cli::round3)
        };
        Some(Percentiles {
            p50: rank(0.50),
            p99: rank(0.99),
        })
    }
}

/// How long the lowest offset of a stream is remembered: a path whose delay
/// grows for good (a new route) is relearned within two of these.
const BASE_WINDOW_S: f64 = 5.0;

/// Decides which samples are stale: those whose offset (arrival on our clock
/// minus capture on the publisher's) is more than `max_lag` above the lowest
/// offset of the stream lately. Comparing offsets of one stream cancels the
/// difference between the two clocks, so no clock sync is needed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Staleness {
    /// Lowest offset of the current and of the previous window.
    current: Option<f64>,
    previous: Option<f64>,
    window_start: Option<f64>,
}

impl Staleness {
    /// Whether a sample captured at `capture_s` (publisher clock) and
    /// arriving at `arrival_s` (ours) is more than `max_lag_s` late.
    pub(crate) fn is_stale(&mut self, capture_s: f64, arrival_s: f64, max_lag_s: f64) -> bool {
        let offset = arrival_s - capture_s;
        if !offset.is_finite() {
            return false;
        }
        let start = *self.window_start.get_or_insert(arrival_s);
        if arrival_s - start >= BASE_WINDOW_S {
            self.previous = self.current.take();
            self.window_start = Some(arrival_s);
        }
        self.current = Some(self.current.map_or(offset, |c| c.min(offset)));
        let base = match (self.current, self.previous) {
            (Some(c), Some(p)) => c.min(p),
            (c, p) => c.or(p).unwrap_or(offset),
        };
        offset - base > max_lag_s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank_over_the_recent_samples() {
        let mut r = Recent::default();
        assert_eq!(r.percentiles(), None);
        for ms in 1..=100 {
            r.push(f64::from(ms));
        }
        r.push(f64::NAN);
        assert_eq!(
            r.percentiles(),
            Some(Percentiles {
                p50: 50.0,
                p99: 99.0
            })
        );
        // Only the last RECENT count: old slow samples age out.
        for _ in 0..RECENT {
            r.push(0.25);
        }
        assert_eq!(r.percentiles().unwrap().p99, 0.25);
    }

    #[test]
    fn a_backlog_is_stale_whatever_the_clock_offset() {
        // The publisher's clock is 3 s behind ours; the path takes 1 ms.
        let skew = 3.0;
        let mut s = Staleness::default();
        let lag = 0.1;
        // 60 Hz for a second: all fresh.
        for i in 0..60 {
            let t = f64::from(i) / 60.0;
            assert!(!s.is_stale(t, t + skew + 0.001, lag));
        }
        // A 2 s stall: the frames captured during it all arrive at t = 3 s.
        let resume = 3.0 + skew;
        let stale: Vec<bool> = (60..180)
            .map(|i| s.is_stale(f64::from(i) / 60.0, resume, lag))
            .collect();
        // Only the ones captured within 100 ms before the resume pass.
        let passed = stale.iter().filter(|s| !**s).count();
        assert!((5..=7).contains(&passed), "{passed}");
        assert!(stale.iter().take(100).all(|s| *s));
        // Fresh frames after it pass again.
        assert!(!s.is_stale(3.0, resume + 0.001, lag));
    }

    #[test]
    fn a_path_that_got_slower_for_good_is_relearned() {
        let mut s = Staleness::default();
        let mut t = 0.0;
        for _ in 0..60 {
            t += 0.1;
            assert!(!s.is_stale(t, t + 0.001, 0.1));
        }
        // 300 ms slower from now on: stale at first, fresh within two windows.
        let mut fresh_at = None;
        for _ in 0..200 {
            t += 0.1;
            if !s.is_stale(t, t + 0.301, 0.1) && fresh_at.is_none() {
                fresh_at = Some(t);
            }
        }
        let since = fresh_at.unwrap() - 6.0;
        assert!(since <= 2.0 * BASE_WINDOW_S + 0.2, "{since}");
    }
}
