//! Arrivals over the last second: the rate, bytes per second and spread of
//! one stream (or one OSC address), from arrival times alone; and the last
//! minute of a stream's rate, one count a second, for its sparkline
//! ([`History`]).

use std::collections::VecDeque;
use std::time::Duration;

/// How far back a rate looks.
pub(crate) const SPAN: Duration = Duration::from_secs(1);

/// Arrival times (and sizes) within the last [`SPAN`], at most `cap` of them:
/// past the cap the oldest go, and the rate is taken over the span the rest
/// cover, so a flood costs bounded memory and still reads right.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    arrivals: VecDeque<(Duration, u32)>,
    cap: usize,
}

impl Window {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            arrivals: VecDeque::new(),
            cap: cap.max(2),
        }
    }

    /// One arrival of `bytes` at `now` (times never go back; a clock that
    /// did is taken as `now`).
    pub(crate) fn push(&mut self, now: Duration, bytes: usize) {
        let now = self.arrivals.back().map_or(now, |(last, _)| now.max(*last));
        if self.arrivals.len() >= self.cap {
            self.arrivals.pop_front();
        }
        self.arrivals
            .push_back((now, u32::try_from(bytes).unwrap_or(u32::MAX)));
        self.forget(now);
    }

    /// Drops arrivals older than [`SPAN`] before `now`.
    pub(crate) fn forget(&mut self, now: Duration) {
        let Some(from) = now.checked_sub(SPAN) else {
            return;
        };
        while self.arrivals.front().is_some_and(|(t, _)| *t <= from) {
            self.arrivals.pop_front();
        }
    }

    /// The arrivals after `now - SPAN` and the span they stand for: a full
    /// second, or less when the cap cut it.
    fn recent(&self, now: Duration) -> (impl Iterator<Item = &(Duration, u32)>, usize, f64) {
        let from = now.checked_sub(SPAN);
        let within = move |t: &Duration| from.is_none_or(|from| *t > from);
        let n = self.arrivals.iter().filter(|(t, _)| within(t)).count();
        let full = self.arrivals.len() >= self.cap;
        let span = match self.arrivals.front() {
            Some((first, _)) if full && now > *first => (now - *first).as_secs_f64(),
            _ => SPAN.as_secs_f64(),
        };
        (
            self.arrivals.iter().filter(move |(t, _)| within(t)),
            n,
            span,
        )
    }

    /// Arrivals per second over the last second.
    pub(crate) fn rate(&self, now: Duration) -> f64 {
        let (_, n, span) = self.recent(now);
        n as f64 / span
    }

    /// Bytes per second over the last second.
    pub(crate) fn bytes_per_s(&self, now: Duration) -> f64 {
        let (it, _, span) = self.recent(now);
        it.map(|(_, b)| f64::from(*b)).sum::<f64>() / span
    }

    /// Mean absolute deviation of the gaps between arrivals in the last
    /// second from their mean, in milliseconds; `None` under three arrivals.
    pub(crate) fn spread_ms(&self, now: Duration) -> Option<f64> {
        let (it, n, _) = self.recent(now);
        if n < 3 {
            return None;
        }
        let times: Vec<f64> = it.map(|(t, _)| t.as_secs_f64()).collect();
        let gaps: Vec<f64> = times
            .windows(2)
            .filter_map(|w| match w {
                [a, b] => Some(b - a),
                _ => None,
            })
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let dev = gaps.iter().map(|g| (g - mean).abs()).sum::<f64>() / gaps.len() as f64;
        Some(dev * 1000.0)
    }
}

/// Seconds of rate a [`History`] keeps.
pub(crate) const HISTORY: usize = 60;

/// Frames counted per whole second of the run (`now`'s seconds), the last
/// [`HISTORY`] of them: a second with none is a 0, so a drop shows.
#[derive(Clone, Debug, Default)]
pub(crate) struct History {
    /// Counts by second, the newest at the back: at most `HISTORY + 1`
    /// (the newest second may still be counting).
    counts: VecDeque<u32>,
    /// The second of the newest count.
    last: Option<u64>,
}

impl History {
    /// One frame at `now` (a clock that went back counts in the newest
    /// second).
    pub(crate) fn push(&mut self, now: Duration) {
        let s = now.as_secs();
        match self.last {
            Some(l) if s <= l => {
                if let Some(c) = self.counts.back_mut() {
                    *c = c.saturating_add(1);
                }
            }
            Some(l) => {
                let gap = usize::try_from(s - l - 1)
                    .unwrap_or(usize::MAX)
                    .min(HISTORY);
                self.counts.extend(std::iter::repeat_n(0, gap));
                self.counts.push_back(1);
                self.last = Some(s);
            }
            None => {
                self.counts.push_back(1);
                self.last = Some(s);
            }
        }
        while self.counts.len() > HISTORY + 1 {
            self.counts.pop_front();
        }
    }

    /// Frames in each whole second before `now`'s, oldest first, at most
    /// [`HISTORY`]: the seconds since the first frame, zeros for those
    /// without one up to `now`.
    pub(crate) fn samples(&self, now: Duration) -> Vec<u32> {
        let Some(last) = self.last else {
            return Vec::new();
        };
        let s = now.as_secs();
        let mut out: Vec<u32> = self.counts.iter().copied().collect();
        if s <= last {
            // The newest second is still counting.
            out.pop();
        } else {
            let quiet = usize::try_from(s - last - 1)
                .unwrap_or(usize::MAX)
                .min(HISTORY);
            out.extend(std::iter::repeat_n(0, quiet));
        }
        let cut = out.len().saturating_sub(HISTORY);
        out.drain(..cut);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_keeps_a_count_a_second_for_a_minute_with_drops_as_zeros() {
        let mut h = History::default();
        assert!(h.samples(ms(5000)).is_empty());
        // 60 Hz for 3 s from 0.5 s, nothing from 3.5 s to 6 s, then 30 Hz.
        for i in 0..180u64 {
            h.push(ms(500 + i * 1000 / 60));
        }
        // Still in the fourth second: three whole seconds (the first half).
        assert_eq!(h.samples(ms(3400)), [30, 60, 60]);
        for i in 0..30u64 {
            h.push(ms(6000 + i * 1000 / 30));
        }
        assert_eq!(h.samples(ms(6900)), [30, 60, 60, 30, 0, 0]);
        assert_eq!(h.samples(ms(7000)), [30, 60, 60, 30, 0, 0, 30]);
        // Quiet since: zeros up to now, and never more than a minute.
        let s = h.samples(ms(10_000));
        assert_eq!(s[7..], [0, 0, 0]);
        let s = h.samples(ms(200_000));
        assert_eq!(s.len(), HISTORY);
        assert!(s.iter().all(|c| *c == 0));
        // A long run stays bounded; the clock going back counts as now.
        for i in 0..100_000u64 {
            h.push(ms(300_000 + i * 10));
        }
        assert!(h.counts.len() <= HISTORY + 1);
        h.push(ms(1));
        let s = h.samples(ms(1_300_000));
        assert_eq!((s.len(), s[0]), (HISTORY, 100));
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn rate_counts_the_last_second_only() {
        let mut w = Window::new(1000);
        // 60 Hz for two seconds, 100 bytes each: 16.667 ms apart.
        for i in 0..120u32 {
            w.push(Duration::from_secs_f64(f64::from(i) / 60.0), 100);
        }
        let now = Duration::from_secs_f64(119.0 / 60.0);
        assert!((w.rate(now) - 60.0).abs() <= 1.0, "{}", w.rate(now));
        assert!((w.bytes_per_s(now) - 6000.0).abs() <= 100.0);
        // Even spacing: no spread.
        assert!(w.spread_ms(now).unwrap() < 0.01);
        // Half a second later, half the window is empty.
        let later = now + ms(500);
        assert!((w.rate(later) - 30.0).abs() <= 1.0, "{}", w.rate(later));
        assert_eq!(w.rate(now + ms(1001)), 0.0);
        assert_eq!(w.spread_ms(now + ms(1001)), None);
    }

    #[test]
    fn uneven_gaps_have_a_spread() {
        let mut w = Window::new(100);
        // Gaps of 10 and 30 ms in turn: mean 20, each 10 off.
        let mut t = 0;
        for i in 0..11 {
            w.push(ms(t), 1);
            t += if i % 2 == 0 { 10 } else { 30 };
        }
        let spread = w.spread_ms(ms(200)).unwrap();
        assert!((spread - 10.0).abs() < 1e-6, "{spread}");
    }

    #[test]
    fn a_flood_past_the_cap_still_reads_its_rate() {
        let mut w = Window::new(100);
        // 10 kHz for 0.5 s: the window keeps 100 arrivals spanning 10 ms.
        for i in 0..5000u64 {
            w.push(Duration::from_micros(i * 100), 1);
        }
        assert_eq!(w.arrivals.len(), 100);
        let now = Duration::from_micros(4999 * 100);
        let rate = w.rate(now);
        assert!((rate - 10_000.0).abs() < 200.0, "{rate}");
    }

    #[test]
    fn a_clock_going_back_is_held() {
        let mut w = Window::new(10);
        w.push(ms(500), 1);
        w.push(ms(400), 1);
        assert_eq!(w.rate(ms(600)), 2.0);
    }
}
