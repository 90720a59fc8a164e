//! Precise waits for the replay's sending thread.
//!
//! A plain `thread::sleep` on Linux wakes at least the thread's timer slack
//! (50 µs by default) late, is relative (time spent before the call is
//! lost), and a normal-priority thread can be preempted right before its
//! send. So the sending thread asks for 1 ns of timer slack (and, with
//! `--realtime`, SCHED_FIFO priority where it may), and sleeps to absolute
//! CLOCK_MONOTONIC deadlines (the clock `Instant` reads), ending in a short
//! spin. Each step is best effort: without privileges it still runs, and the
//! log says what was granted. The thread tuning is `cli::tune_current_thread`,
//! shared with vmc-average. (Locking memory with mlockall was tried and
//! dropped: it delayed the first send by tens of milliseconds and did not
//! shorten the tail.)

use std::time::{Duration, Instant};

/// Sleeps to absolute deadlines given as `Instant`s.
#[derive(Debug)]
pub(crate) struct Sleeper {
    /// The same moment on both clocks, to turn an `Instant` into an
    /// absolute CLOCK_MONOTONIC time.
    #[cfg(target_os = "linux")]
    anchor: (Instant, Duration),
}

impl Sleeper {
    pub(crate) fn new() -> Self {
        Self {
            #[cfg(target_os = "linux")]
            anchor: {
                use nix::time::{ClockId, clock_gettime};
                let mono = clock_gettime(ClockId::CLOCK_MONOTONIC)
                    .map(Duration::from)
                    .unwrap_or_default();
                (Instant::now(), mono)
            },
        }
    }

    /// Sleeps until `until` (or returns at once if it has passed). May wake
    /// early on a signal; callers loop on their own clock.
    pub(crate) fn sleep_until(&self, until: Instant) {
        #[cfg(target_os = "linux")]
        {
            use nix::sys::time::TimeSpec;
            use nix::time::{ClockId, ClockNanosleepFlags, clock_nanosleep};
            let (at, mono) = self.anchor;
            let target = mono + until.saturating_duration_since(at);
            let _ = clock_nanosleep(
                ClockId::CLOCK_MONOTONIC,
                ClockNanosleepFlags::TIMER_ABSTIME,
                &TimeSpec::from_duration(target),
            );
        }
        #[cfg(not(target_os = "linux"))]
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_sleeps_end_at_or_after_the_deadline() {
        let s = Sleeper::new();
        for ms in [0u64, 1, 3] {
            let until = Instant::now() + Duration::from_millis(ms);
            s.sleep_until(until);
            assert!(Instant::now() >= until, "woke before the deadline");
        }
        // A deadline in the past returns at once (no panic, no wrap).
        s.sleep_until(Instant::now() - Duration::from_millis(5));
    }
}
