//! Precise waits for the replay's sending thread.
//!
//! A plain `thread::sleep` on Linux wakes at least the thread's timer slack
//! (50 µs by default) late, is relative (time spent before the call is
//! lost), and a normal-priority thread can be preempted right before its
//! send. So the sending thread asks for 1 ns of timer slack (and, with
//! `--realtime`, SCHED_FIFO priority where it may), and sleeps to absolute
//! CLOCK_MONOTONIC deadlines (the clock `Instant` reads), ending in a short
//! spin. Each step is best effort: without privileges it still runs, and the
//! log says what was granted. (Locking memory with mlockall was tried and
//! dropped: it delayed the first send by tens of milliseconds and did not
//! shorten the tail.)

use std::time::{Duration, Instant};

/// What [`tune_current_thread`] obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tuned {
    /// Timer slack set to 1 ns.
    pub(crate) slack: bool,
    /// SCHED_FIFO granted.
    pub(crate) realtime: bool,
}

impl Tuned {
    /// For the log: what was granted (and why real-time was not, when asked).
    pub(crate) fn describe(self, asked_realtime: bool) -> String {
        let yes_no = |b: bool| if b { "on" } else { "off" };
        format!(
            "timing: timer slack 1 ns {}, real-time priority {}{}",
            yes_no(self.slack),
            yes_no(self.realtime),
            if asked_realtime && !self.realtime {
                " (not permitted: needs root or CAP_SYS_NICE)"
            } else {
                ""
            }
        )
    }
}

/// Tunes the calling thread for precise sending (see the module docs);
/// SCHED_FIFO only when `realtime`.
#[cfg(target_os = "linux")]
pub(crate) fn tune_current_thread(realtime: bool) -> Tuned {
    use thread_priority::unix::{
        RealtimeThreadSchedulePolicy, ThreadSchedulePolicy, set_thread_priority_and_policy,
        thread_native_id,
    };
    let slack = nix::sys::prctl::set_timerslack(1).is_ok();
    // A middle real-time priority: above every normal thread, below the
    // kernel's own high-priority threads.
    let realtime = realtime
        && thread_priority::ThreadPriorityValue::try_from(50u8)
            .ok()
            .is_some_and(|p| {
                set_thread_priority_and_policy(
                    thread_native_id(),
                    thread_priority::ThreadPriority::Crossplatform(p),
                    ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
                )
                .is_ok()
            });
    Tuned { slack, realtime }
}

/// Tunes nothing where these calls do not exist.
#[cfg(not(target_os = "linux"))]
pub(crate) fn tune_current_thread(_realtime: bool) -> Tuned {
    Tuned::default()
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
