//! One VMC sender's stream as tracker datagrams: messages in (with their
//! arrival time), a bundle of VRChat or VMT trackers out once per frame,
//! capped at a rate. Pure; the tools own the sockets. vmc-relay keeps one per
//! sender and destination, mocopi-dump one per output.
//!
//! The crate's state-machine shape: `handle_*(now, input)` takes input,
//! [`TrackerStream::poll_transmit`] hands out what to send.

use std::collections::VecDeque;
use std::time::Duration;

use super::trackers::{TrackerSolver, VmtOptions, VrchatOptions, vmt_datagrams, vrchat_datagrams};
use super::{MAX_BUNDLE, Message};

/// Which tracker protocol to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrackerFormat {
    /// VRChat's OSC trackers (`/tracking/trackers/N/…`).
    Vrchat(VrchatOptions),
    /// Virtual Motion Tracker (`/VMT/Room/Unity`).
    Vmt(VmtOptions),
}

/// How a stream is turned into trackers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrackerOptions {
    /// The protocol and its slots.
    pub format: TrackerFormat,
    /// The user's height in metres, to scale positions (`None`: the avatar's scale).
    pub height: Option<f32>,
    /// At most this many bundles per second (`None`: one per input frame).
    pub rate: Option<f64>,
}

/// What a stream has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TrackerCounters {
    /// Input frames that ended with bones in them.
    pub frames: u64,
    /// Frames sent as trackers.
    pub sent: u64,
    /// Frames left out by the rate cap.
    pub rate_limited: u64,
    /// Frames before the solver could place the hips (or measure the height).
    pub waiting: u64,
}

/// One sender's tracker output.
#[derive(Clone, Debug)]
pub struct TrackerStream {
    opts: TrackerOptions,
    solver: TrackerSolver,
    /// The strongest frame end this sender has sent ([`Message::end_rank`]).
    closer: u8,
    /// A bone arrived since the last frame ended.
    pending: bool,
    /// `closer` when the open frame's first bone came: a frame during which
    /// a stronger end first appeared has no known end, and is not sent.
    closer_at_open: u8,
    /// Earliest arrival at which the next bundle may go (rate cap).
    next_slot: Option<f64>,
    counters: TrackerCounters,
    /// The datagrams of the latest frame sent, until polled. Bounded to one
    /// frame: trackers are a pose, so a frame a caller did not poll before
    /// the next one ended is replaced rather than queued behind it.
    transmit: VecDeque<Vec<u8>>,
}

impl TrackerStream {
    /// A stream with these options.
    pub fn new(opts: TrackerOptions) -> Self {
        Self {
            opts,
            solver: TrackerSolver::new(opts.height),
            closer: 0,
            pending: false,
            closer_at_open: 0,
            next_slot: None,
            counters: TrackerCounters::default(),
            transmit: VecDeque::new(),
        }
    }

    /// The next tracker datagram to send, in order; `None` when all are out.
    /// Poll until `None` after each `handle_*`.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// Takes one message that arrived at `now` (any origin, the same for
    /// every call). When it ends a frame and the rate allows, the frame's
    /// tracker datagrams are ready for [`Self::poll_transmit`].
    pub fn handle_message(&mut self, now: Duration, m: &Message) {
        let rank = m.end_rank();
        self.closer = self.closer.max(rank);
        match m {
            Message::BonePos { .. } => {
                if !self.pending {
                    self.pending = true;
                    self.closer_at_open = self.closer;
                }
            }
            Message::RootPos { .. } => {}
            _ if rank > 0 && rank == self.closer && self.pending => {
                if self.closer_at_open < self.closer {
                    // The first frame (or the first after the sender began
                    // sending a stronger end): the reference sender puts
                    // Root/Pos after Apply, so it may lack its root.
                    self.pending = false;
                    self.counters.waiting += 1;
                    return;
                }
                self.end(now);
                return;
            }
            _ => return,
        }
        self.solver.push(m);
    }

    /// Takes a whole frame (a bridge's output for one input frame).
    pub fn handle_frame(&mut self, now: Duration, frame: &[Message]) {
        for m in frame {
            if matches!(m, Message::BonePos { .. }) {
                self.pending = true;
            }
            self.solver.push(m);
        }
        if self.pending {
            self.end(now);
        }
    }

    /// The options it was made with.
    pub fn options(&self) -> &TrackerOptions {
        &self.opts
    }

    /// Counters so far.
    pub fn counters(&self) -> TrackerCounters {
        self.counters
    }

    /// Adds the counters of a stream that is gone (an evicted sender's) to
    /// this one's, so totals keep them.
    pub fn fold(&mut self, gone: Self) {
        let (c, g) = (&mut self.counters, gone.counters);
        c.frames += g.frames;
        c.sent += g.sent;
        c.rate_limited += g.rate_limited;
        c.waiting += g.waiting;
    }

    /// The solver (avatar height, scale).
    pub fn solver(&self) -> &TrackerSolver {
        &self.solver
    }

    fn end(&mut self, now: Duration) {
        let now = now.as_secs_f64();
        self.pending = false;
        self.counters.frames += 1;
        if let Some(rate) = self.opts.rate.filter(|r| r.is_finite() && *r > 0.0) {
            let interval = 1.0 / rate;
            // Half an interval of slack: a 60 Hz sender capped at 60 with a
            // little jitter keeps every frame; capped at 30 it keeps every other.
            if let Some(slot) = self.next_slot
                && now + interval / 2.0 < slot
            {
                self.counters.rate_limited += 1;
                return;
            }
            let base = self.next_slot.map_or(now, |s| s.max(now - interval));
            self.next_slot = Some(base + interval);
        }
        let Some(trackers) = self.solver.trackers() else {
            self.counters.waiting += 1;
            return;
        };
        let out = match &self.opts.format {
            TrackerFormat::Vrchat(o) => vrchat_datagrams(&trackers, o, MAX_BUNDLE),
            TrackerFormat::Vmt(o) => vmt_datagrams(&trackers, o, MAX_BUNDLE),
        };
        if !out.is_empty() {
            self.counters.sent += 1;
            self.transmit.clear();
            self.transmit.extend(out);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::unwrap_used)]

    use super::*;
    use crate::osc;

    fn bone(name: &str, pos: [f32; 3]) -> Message {
        Message::BonePos {
            name: name.into(),
            pos,
            rot: [0.0, 0.0, 0.0, 1.0],
        }
    }

    fn frame() -> Vec<Message> {
        vec![
            bone("Hips", [0.0, 0.9, 0.0]),
            bone("LeftUpperLeg", [-0.1, -0.05, 0.0]),
            bone("LeftLowerLeg", [0.0, -0.4, 0.0]),
            bone("LeftFoot", [0.0, -0.4, 0.0]),
        ]
    }

    /// What the stream has ready to send, drained.
    fn sent(s: &mut TrackerStream) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| s.poll_transmit()).collect()
    }

    /// Feeds one message; what it made ready.
    fn message(s: &mut TrackerStream, now: f64, m: &Message) -> Vec<Vec<u8>> {
        s.handle_message(Duration::from_secs_f64(now), m);
        sent(s)
    }

    /// Feeds one frame; what it made ready.
    fn whole(s: &mut TrackerStream, now: f64, frame: &[Message]) -> Vec<Vec<u8>> {
        s.handle_frame(Duration::from_secs_f64(now), frame);
        sent(s)
    }

    fn stream(rate: Option<f64>) -> TrackerStream {
        TrackerStream::new(TrackerOptions {
            format: TrackerFormat::Vrchat(VrchatOptions::default()),
            height: None,
            rate,
        })
    }

    #[test]
    fn one_bundle_per_frame_at_the_senders_strongest_end() {
        let mut s = stream(None);
        let ok = Message::Available {
            loaded: 1,
            calibration: None,
            tracking: None,
        };
        // A sender that ends frames with Apply, OK and T: the first frame
        // is not sent (where it ends is learnt from it), the others at T.
        for k in 0..5 {
            let now = f64::from(k) / 60.0;
            for m in frame() {
                assert!(message(&mut s, now, &m).is_empty());
            }
            let ends = [Message::BlendApply, ok.clone(), Message::Time(now as f32)];
            let sent: Vec<usize> = ends
                .iter()
                .enumerate()
                .filter(|(_, m)| !message(&mut s, now, m).is_empty())
                .map(|(i, _)| i)
                .collect();
            let want: &[usize] = if k == 0 { &[] } else { &[2] };
            assert_eq!(sent, want, "frame {k}");
        }
        assert_eq!(s.counters().sent, 4);
        assert_eq!(s.counters().waiting, 1);
        // A frame end with no bones since: nothing.
        assert!(message(&mut s, 1.0, &Message::Time(1.0)).is_empty());
        // What goes out is VRChat's hips first.
        let mut s = stream(None);
        let out = whole(&mut s, 0.0, &frame());
        let p = osc::decode(&out[0]).unwrap();
        assert_eq!(p.messages()[0].address, "/tracking/trackers/1/position");
    }

    #[test]
    fn the_rate_cap_keeps_every_other_frame_at_half_the_rate() {
        let mut s = stream(Some(30.0));
        let mut sent = Vec::new();
        for k in 0..60 {
            // 60 fps with ±2 ms of jitter.
            let now = f64::from(k) / 60.0 + if k % 2 == 0 { 0.002 } else { -0.002 };
            if !whole(&mut s, now, &frame()).is_empty() {
                sent.push(k);
            }
        }
        assert_eq!(sent, (0..60).step_by(2).collect::<Vec<_>>());
        assert_eq!(s.counters().rate_limited, 30);
        // Capped at the input's own rate, jitter loses nothing.
        let mut s = stream(Some(60.0));
        let n = (0..60)
            .filter(|&k| {
                let now = f64::from(k) / 60.0 + if k % 2 == 0 { 0.003 } else { -0.003 };
                !whole(&mut s, now, &frame()).is_empty()
            })
            .count();
        assert_eq!(n, 60);
    }

    #[test]
    fn poll_transmit_drains_and_an_unpolled_frame_is_replaced() {
        let moved = |x| {
            let mut f = frame();
            f[0] = bone("Hips", [x, 0.9, 0.0]);
            f
        };
        let mut polled = stream(None);
        assert!(!whole(&mut polled, 0.0, &moved(0.0)).is_empty());
        let second = whole(&mut polled, 0.1, &moved(0.5));
        assert!(!second.is_empty());
        assert_eq!(polled.poll_transmit(), None);
        // A caller that polls late gets the latest frame only: the queue
        // never holds more than one frame.
        let mut late = stream(None);
        late.handle_frame(Duration::ZERO, &moved(0.0));
        late.handle_frame(Duration::from_secs_f64(0.1), &moved(0.5));
        assert_eq!(sent(&mut late), second);
        assert_eq!(late.counters().sent, 2);
    }

    #[test]
    fn vmt_and_waiting_for_the_hips() {
        let mut s = TrackerStream::new(TrackerOptions {
            format: TrackerFormat::Vmt(VmtOptions::default()),
            height: None,
            rate: None,
        });
        assert!(whole(&mut s, 0.0, &[bone("Head", [0.0, 0.1, 0.0])]).is_empty());
        assert_eq!(s.counters().waiting, 1);
        let out = whole(&mut s, 0.1, &frame());
        let p = osc::decode(&out[0]).unwrap();
        assert!(p.messages().iter().all(|m| m.address == "/VMT/Room/Unity"));
    }
}
