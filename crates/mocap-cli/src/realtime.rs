//! A tool's time-critical thread (pcap-replay's sender, vmc-average's mixer):
//! 1 ns of timer slack, and with `--realtime` SCHED_FIFO where permitted, so
//! a busy machine's other threads do not delay its wake-ups. Best effort: the
//! log says what was granted.

/// What [`tune_current_thread`] obtained.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tuned {
    /// Timer slack set to 1 ns.
    pub slack: bool,
    /// SCHED_FIFO granted.
    pub realtime: bool,
}

impl Tuned {
    /// For the log: what was granted (and why real-time was not, when asked).
    pub fn describe(self, asked_realtime: bool) -> String {
        if !cfg!(target_os = "linux") {
            return format!(
                "timing: timer slack{} and absolute-deadline sleeps are Linux-only; plain sleeps at normal priority here",
                if asked_realtime {
                    ", real-time priority (--realtime)"
                } else {
                    ""
                }
            );
        }
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
pub fn tune_current_thread(realtime: bool) -> Tuned {
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
pub fn tune_current_thread(_realtime: bool) -> Tuned {
    Tuned::default()
}
