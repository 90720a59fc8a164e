//! Every timer of the core on any rate and any clock: `vmc::Limiter`,
//! `vmc::Mixer`'s tick and window schedules, `ifm::handshake::Handshake`'s
//! keepalive, `pcap::Schedule`'s paces and `health::Health`'s arrivals, fed
//! rates and durations from raw bits (NaN, infinities, zero, negatives) and
//! clocks that jump, go back and reach `Duration::MAX`.
//!
//! Asserted: nothing panics (time arithmetic is total); the limiter sends
//! or counts as superseded every update it was offered once flushed at the
//! clock's end, and holds nothing after it; polled at the deadline its
//! `poll_timeout` reports, the mixer emits.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::health::Health;
use mocap_core::ifm::handshake::{Handshake, Transport};
use mocap_core::ifm::{Command, Version};
use mocap_core::osc::{self, Arg};
use mocap_core::pcap::{Pace, Schedule};
use mocap_core::vmc::{Limiter, Message, Method, MixConfig, MixSchedule, Mixer};

/// Reads the input front to back; past its end, zeros.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0, |v, _| v << 8 | u64::from(self.u8()))
    }

    fn f64(&mut self) -> f64 {
        f64::from_bits(self.u64())
    }

    /// A clock reading: small steps mostly, and now and then anything.
    fn clock(&mut self, now: Duration) -> Duration {
        match self.u8() % 8 {
            0 => Duration::MAX,
            1 => Duration::from_nanos(self.u64()),
            2 => Duration::from_secs(self.u64()),
            3 => now.saturating_sub(Duration::from_millis(u64::from(self.u8()))),
            _ => now.saturating_add(Duration::from_millis(u64::from(self.u8()))),
        }
    }

    fn done(&self) -> bool {
        self.0.is_empty()
    }
}

fn bone(name: &str, x: f32) -> Message {
    Message::BonePos {
        name: name.into(),
        pos: [x, 0.0, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
    }
}

/// The same bone as the limiter sees it: an OSC message.
fn osc_bone(name: &str, x: f32) -> osc::Message {
    let mut a = vec![Arg::String(name.into())];
    a.extend([x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0].map(Arg::Float));
    osc::Message::new("/VMC/Ext/Bone/Pos", a)
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let rate = b.f64();
    let span = Duration::from_nanos(b.u64());
    let gap = Duration::from_nanos(b.u64());

    let mut limiter = Limiter::new(rate);
    let (mut offered, mut sent) = (0u64, 0u64);

    let schedule = match b.u8() % 2 {
        0 => MixSchedule::Tick { rate },
        _ => MixSchedule::Window { window: span, gap },
    };
    let mut mixer = Mixer::new(
        MixConfig {
            schedule,
            method: Method::Nlerp,
            stale: span,
            weights: vec![1.0, 1.0],
            bones: None,
            prefer: Vec::new(),
            primary: 0,
            average_blends: false,
        },
        2,
    );

    let transport = if b.u8() % 2 == 0 {
        Transport::Udp
    } else {
        Transport::Tcp
    };
    let start = Command::StartUdp {
        version: Version::V2,
    };
    let mut hs = Handshake::new(transport, start, span, Duration::ZERO);

    let pace = match b.u8() % 3 {
        0 => Pace::Rate(rate),
        1 => Pace::Recorded {
            speed: rate,
            max_gap: Some(gap),
        },
        _ => Pace::Recorded {
            speed: rate,
            max_gap: None,
        },
    };
    let mut replay = Schedule::new(pace);
    let mut health = Health::new();

    let mut now = Duration::ZERO;
    while !b.done() {
        now = b.clock(now);
        let op = b.u8();
        let source = usize::from(op & 1);
        let x = f32::from(op);
        match op % 7 {
            0 => {
                offered += 1;
                limiter.handle_message(now, osc_bone(["Hips", "Head"][usize::from(op >> 7)], x));
                sent += std::iter::from_fn(|| limiter.poll_due()).count() as u64;
            }
            1 => {
                limiter.handle_timeout(now);
                sent += std::iter::from_fn(|| limiter.poll_due()).count() as u64;
            }
            2 => {
                mixer.handle_message(now, source, bone("Hips", x));
                mixer.handle_message(
                    now,
                    source,
                    Message::Available {
                        loaded: 1,
                        calibration: None,
                        tracking: None,
                    },
                );
            }
            3 => {
                if let Some(due) = mixer.poll_timeout() {
                    // Polled at its own deadline, the mixer emits (a tick or window schedule).
                    let at = due.max(now);
                    assert!(
                        mixer.poll_frame(at).is_some(),
                        "due at {due:?}, nothing at {at:?}"
                    );
                }
                let _ = mixer.poll_frame(now);
            }
            4 => {
                hs.handle_frame(now);
                let _ = hs.poll_timeout();
                hs.handle_timeout(now);
                while hs.poll_action().is_some() {}
            }
            5 => {
                let _ = replay.deadline(now);
                if op & 8 != 0 {
                    replay.restart(gap);
                }
            }
            _ => {
                let clock = b.f64();
                let _ = health.frame(
                    b.u64() as u32,
                    mocap_core::health::sender_clock(clock),
                    (op & 8 != 0).then_some(now),
                );
                let _ = health.report();
            }
        }
    }
    limiter.handle_timeout(Duration::MAX);
    sent += std::iter::from_fn(|| limiter.poll_due()).count() as u64;
    assert_eq!(limiter.poll_timeout(), None, "held after the clock's end");
    assert_eq!(
        offered,
        sent + limiter.superseded(),
        "updates lost to the limit"
    );
});
