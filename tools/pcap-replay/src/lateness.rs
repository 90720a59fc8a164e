//! How late the replay's sends were against their deadlines, in fixed
//! memory whatever the run's length: the summary's `timing_error_us`.

use std::time::Duration;

/// Distribution of lateness (send time minus deadline), in microseconds, in
/// fixed memory whatever the run's length: one counter per microsecond up to
/// 100 ms, and one for everything later (whose exact maximum is kept).
#[derive(Clone, Debug)]
pub(crate) struct Lateness {
    counts: Vec<u64>,
    total: u64,
    max: u32,
}

const LATENESS_BUCKETS: usize = 100_000;

impl Default for Lateness {
    fn default() -> Self {
        Self {
            counts: vec![0; LATENESS_BUCKETS + 1],
            total: 0,
            max: 0,
        }
    }
}

impl Lateness {
    /// Records one lateness sample.
    pub(crate) fn record(&mut self, late: Duration) {
        let us = u32::try_from(late.as_micros()).unwrap_or(u32::MAX);
        let bucket = usize::try_from(us)
            .unwrap_or(usize::MAX)
            .min(LATENESS_BUCKETS);
        if let Some(c) = self.counts.get_mut(bucket) {
            *c += 1;
        }
        self.total += 1;
        self.max = self.max.max(us);
    }

    /// Number of samples.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u64 {
        self.total
    }

    /// p50, p99 and max in µs (nearest rank; samples past 100 ms rank as 100 ms),
    /// or `None` without samples.
    pub(crate) fn summary(&self) -> Option<(u32, u32, u32)> {
        if self.total == 0 {
            return None;
        }
        let rank = |p: f64| {
            let want = ((p * self.total as f64).ceil() as u64).clamp(1, self.total);
            let mut seen = 0;
            for (us, c) in self.counts.iter().enumerate() {
                seen += c;
                if seen >= want {
                    return u32::try_from(us).unwrap_or(u32::MAX).min(self.max);
                }
            }
            self.max
        };
        Some((rank(0.50), rank(0.99), self.max))
    }

    /// Adds the samples of `other` (e.g. another sending thread's).
    pub(crate) fn merge(&mut self, other: &Self) {
        for (c, o) in self.counts.iter_mut().zip(&other.counts) {
            *c += o;
        }
        self.total += other.total;
        self.max = self.max.max(other.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_lateness_ranks_both_sets_of_samples() {
        let (mut a, mut b) = (Lateness::default(), Lateness::default());
        for us in [1, 2, 3] {
            a.record(Duration::from_micros(us));
        }
        for us in [10, 20, 5000] {
            b.record(Duration::from_micros(us));
        }
        a.merge(&b);
        assert_eq!(a.len(), 6);
        assert_eq!(a.summary(), Some((3, 5000, 5000)));
    }

    #[test]
    fn lateness_percentiles() {
        let mut l = Lateness::default();
        assert!(l.summary().is_none());
        for us in 1..=100u64 {
            l.record(Duration::from_micros(us));
        }
        assert_eq!(l.summary(), Some((50, 99, 100)));
    }
}
