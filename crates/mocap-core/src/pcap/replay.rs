//! When to send each datagram of a replay: pure scheduling, no clocks.
//!
//! Every deadline is an offset from the start of the replay computed from
//! capture timestamps (absolute, never a sum of sleeps), so lateness in
//! sending one packet never delays the next.

use std::time::Duration;

/// The latest deadline a schedule gives (about a century): absurd speeds,
/// rates or capture times cannot overflow a clock.
pub const MAX_DEADLINE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// How a replay is paced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// Recorded spacing divided by `speed` (2.0 = twice as fast); idle gaps
    /// longer than `max_gap` (in capture time) are shortened to it.
    Recorded {
        /// Speed factor, > 0.
        speed: f64,
        /// Longest gap kept, in capture time.
        max_gap: Option<Duration>,
    },
    /// A fixed number of datagrams per second.
    Rate(f64),
    /// As fast as possible.
    TopSpeed,
}

/// Deadlines for a sequence of capture timestamps, over as many loops as asked.
#[derive(Clone, Debug)]
pub struct Schedule {
    pace: Pace,
    last_ts: Option<Duration>,
    /// Capture time elapsed so far (gaps capped), summed exactly.
    virtual_time: Duration,
    sent: u64,
    loop_gap: Option<Duration>,
    restart: bool,
}

impl Schedule {
    /// A schedule with this pace.
    pub fn new(pace: Pace) -> Self {
        Self {
            pace,
            last_ts: None,
            virtual_time: Duration::ZERO,
            sent: 0,
            loop_gap: None,
            restart: false,
        }
    }

    /// Starts the capture over (for `--loop`): the first datagram of the next
    /// pass follows the last one of this pass after `gap` of capture time
    /// (the capture's mean spacing keeps a looped stream at its rate).
    pub fn restart(&mut self, gap: Duration) {
        self.restart = true;
        self.loop_gap = Some(gap);
    }

    /// The offset from the start of the replay at which to send a datagram
    /// captured at `ts`.
    pub fn deadline(&mut self, ts: Duration) -> Duration {
        let n = self.sent;
        self.sent += 1;
        match self.pace {
            Pace::TopSpeed => Duration::ZERO,
            Pace::Rate(pps) => {
                // Datagram n goes at n / pps seconds.
                Duration::try_from_secs_f64(n as f64 / pps)
                    .unwrap_or(MAX_DEADLINE)
                    .min(MAX_DEADLINE)
            }
            Pace::Recorded { speed, max_gap } => {
                let gap = if self.restart {
                    self.restart = false;
                    self.loop_gap.unwrap_or_default()
                } else {
                    // Out-of-order timestamps in a capture send at once.
                    self.last_ts
                        .map_or(Duration::ZERO, |last| ts.saturating_sub(last))
                };
                let gap = max_gap.map_or(gap, |m| gap.min(m));
                self.virtual_time = self.virtual_time.saturating_add(gap);
                self.last_ts = Some(ts);
                Duration::try_from_secs_f64(self.virtual_time.as_secs_f64() / speed)
                    .unwrap_or(MAX_DEADLINE)
                    .min(MAX_DEADLINE)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn recorded_spacing_from_the_first_packet() {
        let mut s = Schedule::new(Pace::Recorded {
            speed: 1.0,
            max_gap: None,
        });
        let base = Duration::from_secs(1_700_000_000);
        let got: Vec<_> = [0, 16, 33, 50]
            .iter()
            .map(|&t| s.deadline(base + ms(t)))
            .collect();
        assert_eq!(got, [ms(0), ms(16), ms(33), ms(50)]);
    }

    #[test]
    fn speed_scales_and_max_gap_caps() {
        let mut s = Schedule::new(Pace::Recorded {
            speed: 2.0,
            max_gap: Some(ms(100)),
        });
        let got: Vec<_> = [0, 20, 5020, 5040]
            .iter()
            .map(|&t| s.deadline(ms(t)))
            .collect();
        assert_eq!(got, [ms(0), ms(10), ms(60), ms(70)]);
    }

    #[test]
    fn no_drift_over_a_long_capture() {
        // 10 minutes at 60 Hz with timestamps in whole microseconds.
        let mut s = Schedule::new(Pace::Recorded {
            speed: 1.0,
            max_gap: None,
        });
        let mut last = Duration::ZERO;
        for i in 0..36_000u64 {
            last = s.deadline(Duration::from_micros(i * 1_000_000 / 60));
        }
        assert_eq!(last, Duration::from_micros(35_999 * 1_000_000 / 60));
    }

    #[test]
    fn rate_and_topspeed() {
        let mut s = Schedule::new(Pace::Rate(50.0));
        let got: Vec<_> = (0..3).map(|_| s.deadline(Duration::ZERO)).collect();
        assert_eq!(got, [ms(0), ms(20), ms(40)]);
        let mut t = Schedule::new(Pace::TopSpeed);
        assert_eq!(t.deadline(ms(500)), Duration::ZERO);
    }

    #[test]
    fn loops_continue_at_the_mean_spacing() {
        let mut s = Schedule::new(Pace::Recorded {
            speed: 1.0,
            max_gap: None,
        });
        for t in [100, 120, 140] {
            s.deadline(ms(t));
        }
        s.restart(ms(20));
        assert_eq!(s.deadline(ms(100)), ms(60));
        assert_eq!(s.deadline(ms(120)), ms(80));
    }

    #[test]
    fn backwards_timestamps_send_at_once() {
        let mut s = Schedule::new(Pace::Recorded {
            speed: 1.0,
            max_gap: None,
        });
        s.deadline(ms(100));
        assert_eq!(s.deadline(ms(50)), ms(0));
        assert_eq!(s.deadline(ms(60)), ms(10));
    }

    #[test]
    fn absurd_paces_and_timestamps_are_capped() {
        let mut s = Schedule::new(Pace::Recorded {
            speed: 1e-300,
            max_gap: None,
        });
        s.deadline(ms(0));
        assert_eq!(s.deadline(ms(1)), MAX_DEADLINE);
        let mut s = Schedule::new(Pace::Rate(1e-300));
        s.deadline(ms(0));
        assert_eq!(s.deadline(ms(0)), MAX_DEADLINE);
        let mut s = Schedule::new(Pace::Recorded {
            speed: 1.0,
            max_gap: None,
        });
        s.deadline(Duration::ZERO);
        assert_eq!(s.deadline(Duration::MAX), MAX_DEADLINE);
        assert_eq!(s.deadline(Duration::MAX), MAX_DEADLINE);
    }
}
