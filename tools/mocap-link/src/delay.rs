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
            v.get(i)
                .copied()
                .map_or(f64::NAN, mocap_cli::output::round3)
        };
        Some(Percentiles {
            p50: rank(0.50),
            p99: rank(0.99),
        })
    }
}

/// How long one window of offsets lasts, in seconds: each closed window
/// gives its median.
const WINDOW_S: f64 = 1.0;
/// How many closed windows' medians the base is the lowest of: a path whose
/// delay grows for good (a new route) is relearned within one window more.
const WINDOWS: usize = 5;
/// Most offsets one window keeps (a flood past it is judged, not kept).
const WINDOW_CAP: usize = 4096;

/// Decides which samples are stale: those whose offset (arrival on our clock
/// minus capture on the publisher's) is more than `max_lag` above the
/// stream's usual offset lately. Comparing offsets of one stream cancels the
/// difference between the two clocks, so no clock sync is needed.
///
/// The usual offset is the lowest of the medians of the last [`WINDOWS`]
/// one-second windows: a median, because on a reordering path a tenth of
/// the samples can arrive a whole path delay early (netem's `reorder`, a
/// route change), and the lowest offset, which an earlier version used,
/// then made every sample on time look late; the lowest of several, so a
/// window of backlog after a stall does not make the backlog look fresh.
/// Until a window has closed, the median of the current one's earlier
/// samples is used.
#[derive(Clone, Debug, Default)]
pub(crate) struct Staleness {
    /// Offsets of the current window.
    current: Vec<f64>,
    window_start: Option<f64>,
    /// Medians of the last closed windows, oldest first.
    medians: VecDeque<f64>,
}

/// The median of `v` (reordered in place); `None` when empty.
fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    Some(*m)
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
        if arrival_s - start >= WINDOW_S {
            if let Some(m) = median(&mut self.current) {
                if self.medians.len() == WINDOWS {
                    self.medians.pop_front();
                }
                self.medians.push_back(m);
            }
            self.current.clear();
            self.window_start = Some(arrival_s);
        }
        let base = match self.medians.iter().copied().min_by(f64::total_cmp) {
            Some(b) => b,
            // The first window: the median of its samples before this one.
            None => match median(&mut self.current.clone()) {
                Some(b) => b,
                None => offset,
            },
        };
        if self.current.len() < WINDOW_CAP {
            self.current.push(offset);
        }
        offset - base > max_lag_s
    }
}

/// How many clocks a sender's staleness is kept for at once.
const CLOCKS: usize = 4;

/// [`Staleness`] per clock that stamped a sender's samples. Offsets are
/// comparable only between samples stamped by one clock, and one sender's
/// samples can carry two: a Zenoh router replaces a timestamp more than
/// 500 ms ahead of its own clock with one of its own (a publisher whose
/// clock runs fast, some of its samples only when near that bound), and
/// stamps samples that came without one (a foreign publisher's).
#[derive(Clone, Debug, Default)]
pub(crate) struct Clocks {
    /// Clock id, its staleness, when it was last used (arrival, seconds).
    by_clock: Vec<(u128, Staleness, f64)>,
}

impl Clocks {
    /// [`Staleness::is_stale`] among the samples stamped by `clock`.
    pub(crate) fn is_stale(
        &mut self,
        clock: u128,
        capture_s: f64,
        arrival_s: f64,
        max_lag_s: f64,
    ) -> bool {
        let i = match self.by_clock.iter().position(|(c, ..)| *c == clock) {
            Some(i) => i,
            None => {
                if self.by_clock.len() >= CLOCKS {
                    // The clock heard from least recently makes room.
                    let oldest = self
                        .by_clock
                        .iter()
                        .enumerate()
                        .min_by(|(_, a), (_, b)| a.2.total_cmp(&b.2))
                        .map(|(k, _)| k);
                    if let Some(o) = oldest {
                        self.by_clock.swap_remove(o);
                    }
                }
                self.by_clock.push((clock, Staleness::default(), arrival_s));
                self.by_clock.len() - 1
            }
        };
        match self.by_clock.get_mut(i) {
            Some((_, staleness, used)) => {
                *used = arrival_s;
                staleness.is_stale(capture_s, arrival_s, max_lag_s)
            }
            None => false,
        }
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
        // The old medians age out, and the window in progress closes.
        assert!(since <= (WINDOWS + 1) as f64 * WINDOW_S + 0.2, "{since}");
    }

    /// Found by the WAN harness (issue 58): on a path of 150 ms that
    /// reorders a tenth of its packets as netem does (sent at once, a whole
    /// delay early), the lowest offset was an early sample's, and every
    /// sample on time was then 150 ms "late": 88 % were dropped as stale.
    /// Judged against the median, only a real backlog is.
    #[test]
    fn early_samples_of_a_reordering_path_do_not_make_the_rest_stale() {
        let mut s = Staleness::default();
        let mut stale = 0;
        let mut x: u32 = 1;
        for i in 0..1200 {
            let t = f64::from(i) / 60.0;
            // A tenth arrive at once; the rest after 150 ms ± 10.
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let r = f64::from(x >> 16) / 65_536.0;
            let delay = if i % 10 == 3 {
                0.001
            } else {
                0.140 + 0.020 * r
            };
            if s.is_stale(t, t + delay + 2.0, 0.1) {
                stale += 1;
            }
        }
        assert_eq!(stale, 0);
        // A stall on the same path still leaves its backlog stale.
        let resume = 20.0 + 2.0 + 1.0;
        let backlog = (0..60)
            .filter(|k| s.is_stale(20.0 + f64::from(*k) / 60.0, resume, 0.1))
            .count();
        assert!(backlog >= 45, "{backlog}");
    }

    /// A publisher whose clock is near 500 ms ahead of a router's: the
    /// router stamps some samples itself. Each clock's samples are judged
    /// among themselves: none of the fresh ones is stale, a backlog on
    /// either clock is.
    #[test]
    fn samples_stamped_by_two_clocks_are_judged_apart() {
        let (publisher, router) = (1u128, 2u128);
        let mut c = Clocks::default();
        let lag = 0.1;
        for i in 0..120 {
            let t = f64::from(i) / 60.0;
            // The router's clock is 0.5 s behind the publisher's.
            let (clock, capture) = if i % 3 == 0 {
                (router, t - 0.5)
            } else {
                (publisher, t)
            };
            assert!(!c.is_stale(clock, capture, t + 0.001, lag), "{i}");
        }
        assert!(c.is_stale(publisher, 1.0, 2.5, lag));
        assert!(c.is_stale(router, 0.5, 2.5, lag));
        // One clock's staleness alone would have dropped the router's.
        let mut one = Staleness::default();
        assert!(!one.is_stale(1.0, 1.001, lag));
        assert!(one.is_stale(0.5, 1.001, lag));
    }

    #[test]
    fn clocks_are_bounded() {
        let mut c = Clocks::default();
        for clock in 0..100u128 {
            let t = clock as f64;
            let _ = c.is_stale(clock, t, t, 0.1);
        }
        assert_eq!(c.by_clock.len(), CLOCKS);
        // The most recent ones are kept.
        assert!(c.by_clock.iter().all(|(id, ..)| *id >= 96));
    }
}
