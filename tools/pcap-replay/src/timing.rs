//! Precise waits for the replay's sending thread.
//!
//! A plain `thread::sleep` on Linux wakes at least the thread's timer slack
//! (50 µs by default) late, is relative (time spent before the call is
//! lost), and a normal-priority thread can be preempted right before its
//! send. So the sending thread asks for 1 ns of timer slack (and, with
//! `--realtime`, SCHED_FIFO priority where it may), and sleeps to absolute
//! CLOCK_MONOTONIC deadlines (the clock `Instant` reads), ending in a short
//! spin. Each step is best effort: without privileges it still runs, and the
//! log says what was granted. The thread tuning is `mocap_cli::realtime::tune_current_thread`,
//! shared with vmc-average. (Locking memory with mlockall was tried and
//! dropped: it delayed the first send by tens of milliseconds and did not
//! shorten the tail.)

use std::time::{Duration, Instant};

/// How [`Sleeper::wait_for`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Waited {
    /// The due time has come.
    Due,
    /// Not due within the turn (which was slept).
    NotYet,
    /// The caller's condition said stop.
    Stopped,
}

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

    /// Waits for `due`: sleeps to `spin` before it, then spins. Comes back
    /// `NotYet` after sleeping `turn` when the due time (less the spin) is
    /// further away than that, and `Stopped` as soon as `go_on` says no
    /// (asked before each sleep and on each turn of the spin). Both sending
    /// threads wait this way.
    pub(crate) fn wait_for(
        &self,
        due: Instant,
        spin: Duration,
        turn: Duration,
        go_on: impl Fn() -> bool,
    ) -> Waited {
        loop {
            if !go_on() {
                return Waited::Stopped;
            }
            let now = Instant::now();
            let left = due.saturating_duration_since(now);
            if left.is_zero() {
                return Waited::Due;
            }
            if left.saturating_sub(spin) > turn {
                // Never sleep into the spin window.
                self.sleep_until(now + turn);
                return Waited::NotYet;
            }
            if left > spin {
                self.sleep_until(due - spin);
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Sleeps until `until` (or returns at once if it has passed). May wake
    /// early on a signal; callers loop on their own clock.
    fn sleep_until(&self, until: Instant) {
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

    #[test]
    fn waits_end_due_not_yet_or_stopped() {
        let s = Sleeper::new();
        let spin = Duration::from_micros(300);
        let due = Instant::now() + Duration::from_millis(3);
        assert_eq!(
            s.wait_for(due, spin, Duration::from_secs(1), || true),
            Waited::Due
        );
        assert!(Instant::now() >= due, "due before its time");
        // Further than a turn away: the turn is slept, the wait comes back.
        let far = Instant::now() + Duration::from_secs(60);
        let before = Instant::now();
        let turn = Duration::from_millis(2);
        assert_eq!(s.wait_for(far, spin, turn, || true), Waited::NotYet);
        assert!(before.elapsed() >= turn);
        assert_eq!(s.wait_for(due, spin, turn, || false), Waited::Stopped);
    }
}
