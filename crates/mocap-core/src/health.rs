//! Stream health of one sender of numbered frames (mocopi's `fnum`, Live Link
//! Face's frame number): loss, duplicates, reordering, restarts, rate and
//! jitter, from frame numbers and clocks alone (no I/O, no clock reads).
//! Frames that carry only their sender's clock (VTube Studio, OpenSeeFace:
//! [`Health::clocked`]) get the same counters from the clock: a clock
//! going back a second or more is a restart, less is a late frame; a step
//! of [`GAP_PERIODS`] periods or more (the median of the recent steps)
//! lost the frames that would have filled it, estimated from the period;
//! a step over a second is a pause ([`HealthReport::gaps`]), not loss.
//!
//! ```
//! use mocap_core::health::{FrameEvent, Health, sender_clock};
//!
//! let mut h = Health::new();
//! // Frames 1, 2, 4 at 60 Hz, then 3 late and 4 again.
//! for (fnum, t) in [(1, 0.0), (2, 1.0 / 60.0), (4, 3.0 / 60.0), (3, 2.0 / 60.0), (4, 3.0 / 60.0)] {
//!     h.frame(fnum, sender_clock(t), None);
//! }
//! let r = h.report();
//! assert_eq!((r.frames, r.lost, r.reordered, r.duplicates), (5, 0, 1, 1));
//! assert_eq!(h.frame(5, sender_clock(4.0 / 60.0), None), FrameEvent::InOrder { lost: 0 });
//! ```

use std::time::Duration;

use crate::protocol::Stamp;

/// How far back (in frames) late and duplicate frames are recognised.
const WINDOW: u32 = 1024;
/// A backwards `fnum` jump at least this large is a new session, as Sony's
/// Unreal receiver decides; smaller ones are late packets.
pub const RESTART_JUMP: u32 = 1000;
/// A forward `fnum` jump at least this large is a new session too (about 28
/// minutes at 60 Hz: no Wi-Fi outage is that long and the stream still on).
pub const RESTART_FORWARD: u32 = 100_000;
/// A run of this many consecutive frame numbers behind the newest one that
/// fill no counted gap is a sender that restarted (an app restarted mid-take,
/// a looping sender), as RFC 3550 A.1 resynchronises on in-order packets
/// after a jump: counted once as a restart, not as duplicates for ever.
/// Four frames are 67 ms at 60 Hz; late frames of the same session fill
/// gaps and never count towards it.
pub const RESYNC_RUN: u32 = 4;
/// BVH Sender numbers every frame -1; such frames carry no sequence.
pub const UNNUMBERED: u32 = u32::MAX;
/// Clock steps longer than this are outages, not frame intervals, and are left
/// out of the rate.
const MAX_STEP_S: f64 = 1.0;
/// A sender's clock going back at least this far (seconds) is a new
/// session of a sender that numbers nothing (a looped replay, a clock set
/// back); less is a late frame.
pub const CLOCK_RESTART_S: f64 = 1.0;
/// A step of a clock-only stream at least this many periods long is missing
/// frames: a frame the sender stamped up to three quarters of a period late
/// is not a loss.
pub const GAP_PERIODS: f64 = 1.75;
/// Recent steps of a clock-only stream whose median is its period.
const PERIODS: usize = 15;
/// Steps needed before the period is believed.
const MIN_PERIODS: usize = 4;
/// A period shorter than this (seconds) is a burst, not a frame rate: no
/// loss is estimated from it (and so at most 1000 frames per step).
const MIN_PERIOD_S: f64 = 0.001;
/// A rate needs frames spread over at least this long: a burst of a few
/// frames microseconds apart (a stranger's, a flood) would otherwise claim
/// hundreds of thousands of frames per second, and a summary's total, the
/// sum over senders, read 538 442 670 fps.
const MIN_RATE_SPAN_S: f64 = 0.05;

/// A sender's clock in seconds (wire data) as a time, when it is one: not
/// negative, finite, within [`Duration`]'s range.
#[must_use]
pub fn sender_clock(seconds: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(seconds).ok()
}

/// Which unnumbered datagrams are frames: a sender that marks the end of
/// its frames ([`Stamp::Unnumbered`]'s `ends_frame`, VMC's OK and time)
/// sends several datagrams per frame and only the marked ones count; one
/// that never marks sends a frame per datagram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameMarks {
    seen: bool,
}

impl FrameMarks {
    /// Whether a datagram that does (`ends_frame`) or does not carry the
    /// mark is a frame of this sender.
    pub fn is_frame(&mut self, ends_frame: bool) -> bool {
        self.seen |= ends_frame;
        ends_frame || !self.seen
    }
}

/// What one frame meant for the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameEvent {
    /// The first frame of a session.
    First,
    /// The next frame, after `lost` missing ones.
    InOrder {
        /// Frames skipped since the previous one.
        lost: u32,
    },
    /// An `fnum` already seen.
    Duplicate,
    /// A frame older than the newest one, filling an earlier gap.
    Late,
    /// A large jump: the sender restarted.
    Restart,
    /// The sender restarted: this frame completes a run of
    /// [`RESYNC_RUN`] consecutive frame numbers behind the newest one. The
    /// run's earlier frames, returned as [`Duplicate`](Self::Duplicate) or
    /// [`Late`](Self::Late), are taken back off those counters.
    Resync {
        /// Frames of the run that had been counted as duplicates.
        duplicates: u32,
        /// Frames of the run that had been counted as reordered.
        late: u32,
    },
    /// A late frame of the session before the last restart; not counted in this one.
    Stale,
    /// `fnum` is -1 (BVH Sender): no sequence to check.
    Unnumbered,
}

/// Counters and timing for one sender.
#[derive(Clone, Debug, Default)]
pub struct Health {
    frames: u64,
    skeletons: u64,
    sensors: u64,
    errors: u64,
    lost: u64,
    duplicates: u64,
    reordered: u64,
    restarts: u64,
    newest: Option<u32>,
    /// fnums received, for the last [`WINDOW`] frames.
    seen: Vec<u64>,
    /// fnums counted as lost, for the last [`WINDOW`] frames.
    missing: Vec<u64>,
    /// The newest fnum of the session before the last restart.
    previous: Option<u32>,
    /// A run of consecutive frames behind the newest one, on probation as
    /// a restarted sender.
    probe: Option<Probe>,
    first_arrival: Option<f64>,
    last_arrival: Option<f64>,
    arrived: u64,
    last_clock: Option<f64>,
    clock_span: f64,
    clock_frames: u64,
    last_transit: Option<f64>,
    jitter: Option<f64>,
    marks: FrameMarks,
    gaps: u64,
    /// The sequence of frames that carry only a clock.
    clocked: Option<ClockRun>,
}

/// What [`Health::clocked`] keeps of a sender's clock.
#[derive(Clone, Copy, Debug)]
struct ClockRun {
    /// The newest clock, seconds.
    newest: f64,
    /// The latest steps between in-order frames (at most a second each), a ring.
    steps: [f64; PERIODS],
    filled: usize,
    next: usize,
    /// The last step counted as lost frames (from, to) and how many of them
    /// have not arrived late since.
    gap: Option<(f64, f64, u32)>,
}

impl ClockRun {
    fn starting(at: f64) -> Self {
        Self {
            newest: at,
            steps: [0.0; PERIODS],
            filled: 0,
            next: 0,
            gap: None,
        }
    }

    fn push(&mut self, step: f64) {
        if let Some(slot) = self.steps.get_mut(self.next) {
            *slot = step;
        }
        self.next = (self.next + 1) % PERIODS;
        self.filled = (self.filled + 1).min(PERIODS);
    }

    /// The median of the recent steps, once there are enough.
    fn period(&self) -> Option<f64> {
        if self.filled < MIN_PERIODS {
            return None;
        }
        let mut sorted = self.steps;
        let recent = sorted.get_mut(..self.filled)?;
        recent.sort_unstable_by(f64::total_cmp);
        recent
            .get(self.filled / 2)
            .copied()
            .filter(|p| *p >= MIN_PERIOD_S)
    }
}

/// Consecutive frames behind the newest one (see [`RESYNC_RUN`]).
#[derive(Clone, Copy, Debug, Default)]
struct Probe {
    /// The frame number that continues the run.
    next: u32,
    /// Frames of the run that filled no gap.
    run: u32,
    /// Frames of the run in all.
    len: u32,
    duplicates: u32,
    late: u32,
}

/// A snapshot of [`Health`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct HealthReport {
    /// Frame packets received, duplicates included.
    pub frames: u64,
    /// Skeleton packets received.
    pub skeletons: u64,
    /// Sensor packets received.
    pub sensors: u64,
    /// Datagrams that failed to decode.
    pub errors: u64,
    /// Frames missing from `fnum` gaps (late arrivals are taken back off).
    pub lost: u64,
    /// Frames whose `fnum` was already seen.
    pub duplicates: u64,
    /// Frames that arrived after a newer one.
    pub reordered: u64,
    /// Sender restarts (large backwards `fnum` jumps; a clock-only sender's
    /// clock going back a second or more).
    pub restarts: u64,
    /// Pauses of a clock-only sender: steps of its clock over a second (it
    /// stopped, lost the face, or nothing came through); their frames are
    /// not counted as lost.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "is_zero"))]
    pub gaps: u64,
    /// Frames per second: frame packets arriving (duplicates and late ones
    /// included) on the arrival clock when arrival times are known, else the
    /// sender's rate.
    pub fps: Option<f64>,
    /// Frames per second on the sender's clock (`uttm`, else `time`).
    pub sender_fps: Option<f64>,
    /// Interarrival jitter in milliseconds (RFC 3550 estimator: arrival
    /// spacing against sender-clock spacing).
    pub jitter_ms: Option<f64>,
}

#[cfg(feature = "serde")]
#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl HealthReport {
    /// Adds another sender's report: counters and rates add up (total frames
    /// per second), jitter is the worse of the two.
    pub fn merge(&mut self, other: &Self) {
        let add = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        self.frames += other.frames;
        self.skeletons += other.skeletons;
        self.sensors += other.sensors;
        self.errors += other.errors;
        self.lost += other.lost;
        self.duplicates += other.duplicates;
        self.reordered += other.reordered;
        self.restarts += other.restarts;
        self.gaps += other.gaps;
        self.fps = add(self.fps, other.fps);
        self.sender_fps = add(self.sender_fps, other.sender_fps);
        self.jitter_ms = match (self.jitter_ms, other.jitter_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Lost frames as a share of the frames the sender meant, in percent:
    /// copies are not frames it meant, and late ones filled a gap already
    /// counted as lost, and left it. 0 before any frame.
    #[must_use]
    pub fn loss_pct(&self) -> f64 {
        let expected = self
            .frames
            .saturating_sub(self.duplicates)
            .saturating_add(self.lost);
        if expected == 0 {
            0.0
        } else {
            self.lost as f64 * 100.0 / expected as f64
        }
    }

    /// The same report with rates rounded to 0.001, for display.
    pub fn rounded(mut self) -> Self {
        let r = |v: Option<f64>| v.map(|x| (x * 1000.0).round() / 1000.0);
        self.fps = r(self.fps);
        self.sender_fps = r(self.sender_fps);
        self.jitter_ms = r(self.jitter_ms);
        self
    }
}

impl Health {
    /// A sender with nothing seen yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts what one datagram's [`Stamp`] says (a frame, a skeleton, a
    /// sensor packet, an error), arrived at `arrival` if known; the frame's
    /// event when it was one.
    pub fn stamp(&mut self, stamp: Stamp, arrival: Option<Duration>) -> Option<FrameEvent> {
        match stamp {
            Stamp::Numbered { frame, clock, .. } => Some(self.frame(frame, clock, arrival)),
            Stamp::Clocked { clock, .. } => Some(self.clocked(clock, arrival)),
            Stamp::Unnumbered { ends_frame } => self
                .marks
                .is_frame(ends_frame)
                .then(|| self.frame(UNNUMBERED, None, arrival)),
            Stamp::Skeleton => {
                self.skeleton();
                None
            }
            Stamp::Sensor => {
                self.sensor();
                None
            }
            Stamp::Handshake => {
                self.handshake();
                None
            }
            Stamp::Error => {
                self.error();
                None
            }
        }
    }

    /// Counts a frame. `clock` is the sender's clock (mocopi's `uttm` when
    /// present, else `time`: wire data, see [`sender_clock`]); `arrival` the
    /// receive time (any origin, the same for every call), if known.
    pub fn frame(
        &mut self,
        fnum: u32,
        clock: Option<Duration>,
        arrival: Option<Duration>,
    ) -> FrameEvent {
        // Sums and differences are in seconds; a missing clock is NaN, which
        // the steps below leave out of rate and jitter.
        let clock = clock.map_or(f64::NAN, |c| c.as_secs_f64());
        let arrival = arrival.map(|a| a.as_secs_f64());
        self.frames += 1;
        let event = match self.newest {
            _ if fnum == UNNUMBERED => FrameEvent::Unnumbered,
            None => {
                self.start(fnum);
                FrameEvent::First
            }
            Some(newest) => self.sequence(newest, fnum, clock),
        };
        self.account(event, clock, arrival)
    }

    /// Counts a frame that carries its sender's `clock` and no number
    /// ([`Stamp::Clocked`]), arrived at `arrival` if known: an equal clock is
    /// a duplicate, one back by less than [`CLOCK_RESTART_S`] a late frame
    /// (taken back off the last gap's lost frames when it falls in it), one
    /// back further a restart; a step forward of [`GAP_PERIODS`] periods or
    /// more lost the frames the period says would have filled it, and one
    /// over a second is a pause, counted in [`HealthReport::gaps`].
    pub fn clocked(&mut self, clock: Duration, arrival: Option<Duration>) -> FrameEvent {
        let clock = clock.as_secs_f64();
        self.frames += 1;
        let event = self.clock_sequence(clock);
        self.account(event, clock, arrival.map(|a| a.as_secs_f64()))
    }

    fn clock_sequence(&mut self, at: f64) -> FrameEvent {
        let Some(run) = &mut self.clocked else {
            self.clocked = Some(ClockRun::starting(at));
            return FrameEvent::First;
        };
        let step = at - run.newest;
        if step == 0.0 {
            return FrameEvent::Duplicate;
        }
        if step <= -CLOCK_RESTART_S {
            // The same sender again: its period stays.
            run.newest = at;
            run.gap = None;
            self.restarts += 1;
            return FrameEvent::Restart;
        }
        if step < 0.0 {
            self.reordered += 1;
            if let Some((from, to, left)) = &mut run.gap
                && *from < at
                && at < *to
                && *left > 0
            {
                *left -= 1;
                self.lost = self.lost.saturating_sub(1);
            }
            return FrameEvent::Late;
        }
        let mut lost = 0;
        if step > MAX_STEP_S {
            self.gaps += 1;
            run.gap = None;
        } else {
            if let Some(period) = run.period()
                && step >= GAP_PERIODS * period
            {
                // At most a second over at least a millisecond: 1000 frames.
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "a ratio from 1.75 to 1000"
                )]
                let frames = (step / period).round() as u32;
                lost = frames.saturating_sub(1);
                self.lost += u64::from(lost);
                run.gap = Some((run.newest, at, lost));
            }
            run.push(step);
        }
        run.newest = at;
        FrameEvent::InOrder { lost }
    }

    /// The counters, rate and jitter of one frame judged `event`.
    fn account(&mut self, event: FrameEvent, clock: f64, arrival: Option<f64>) -> FrameEvent {
        if let Some(at) = arrival {
            self.first_arrival.get_or_insert(at);
            self.last_arrival = Some(at);
            self.arrived += 1;
        }
        match event {
            FrameEvent::Duplicate => self.duplicates += 1,
            FrameEvent::Late | FrameEvent::Stale | FrameEvent::Unnumbered => {}
            // A NaN or infinite clock (decoded with a warning) says nothing
            // about rate or jitter; it must not poison the sums either.
            _ if !clock.is_finite() => {}
            FrameEvent::First | FrameEvent::Restart | FrameEvent::Resync { .. } => {
                self.last_clock = Some(clock);
                self.last_transit = arrival.map(|at| at - clock);
            }
            FrameEvent::InOrder { lost } => {
                if let Some(prev) = self.last_clock {
                    let step = clock - prev;
                    if step > 0.0 && step <= MAX_STEP_S * f64::from(lost + 1) {
                        self.clock_span += step;
                        self.clock_frames += u64::from(lost) + 1;
                    }
                }
                self.last_clock = Some(clock);
                if let Some(at) = arrival {
                    self.jitter_step(at - clock);
                }
            }
        }
        event
    }

    /// Whether any numbered frame came, or any that carried its sender's
    /// clock (loss and its share mean something).
    #[must_use]
    pub fn is_numbered(&self) -> bool {
        self.newest.is_some() || self.clocked.is_some()
    }

    /// Counts a skeleton packet.
    pub fn skeleton(&mut self) {
        self.skeletons += 1;
    }

    /// Counts a sensor packet.
    pub fn sensor(&mut self) {
        self.sensors += 1;
    }

    /// A handshake: the sender numbers its frames again from its next one,
    /// which is the session's first (no loss, no restart). Late frames of
    /// the session before are stale, as after a restart.
    pub fn handshake(&mut self) {
        if let Some(newest) = self.newest.take() {
            self.previous = Some(newest);
        }
        self.probe = None;
    }

    /// Counts a datagram that failed to decode.
    pub fn error(&mut self) {
        self.errors += 1;
    }

    /// The counters and rates so far.
    pub fn report(&self) -> HealthReport {
        let sender_fps = (self.clock_span >= MIN_RATE_SPAN_S)
            .then(|| self.clock_frames as f64 / self.clock_span);
        let arrival_fps = match (self.first_arrival, self.last_arrival) {
            (Some(a), Some(b)) if b - a >= MIN_RATE_SPAN_S && self.arrived >= 2 => {
                Some((self.arrived - 1) as f64 / (b - a))
            }
            _ => None,
        };
        // Spans of a few subnormal seconds (only crafted clocks have them)
        // would divide to infinity; no rate is better than an infinite one.
        let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
        let (arrival_fps, sender_fps) = (finite(arrival_fps), finite(sender_fps));
        HealthReport {
            frames: self.frames,
            skeletons: self.skeletons,
            sensors: self.sensors,
            errors: self.errors,
            lost: self.lost,
            duplicates: self.duplicates,
            reordered: self.reordered,
            restarts: self.restarts,
            gaps: self.gaps,
            fps: arrival_fps.or(sender_fps),
            sender_fps,
            jitter_ms: finite(self.jitter.map(|j| j * 1000.0)),
        }
    }

    fn jitter_step(&mut self, transit: f64) {
        if let Some(prev) = self.last_transit {
            let d = (transit - prev).abs();
            // Outages and clock jumps are not jitter.
            if d < MAX_STEP_S {
                let j = self.jitter.unwrap_or(0.0);
                self.jitter = Some(j + (d - j) / 16.0);
            }
        }
        self.last_transit = Some(transit);
    }

    fn sequence(&mut self, newest: u32, fnum: u32, clock: f64) -> FrameEvent {
        let fills_gap = fnum < newest
            && Self::is_marked(&self.missing, fnum)
            && !Self::is_marked(&self.seen, fnum);
        let event = self.judge(newest, fnum, clock);
        match event {
            FrameEvent::Duplicate | FrameEvent::Late if fnum < newest => {
                self.on_probation(fnum, event, fills_gap)
            }
            _ => {
                self.probe = None;
                event
            }
        }
    }

    /// A frame behind the newest one, judged `event` (a late one already
    /// counted as reordered, a duplicate not yet): it starts or continues a
    /// run, and completes a restart at [`RESYNC_RUN`].
    fn on_probation(&mut self, fnum: u32, event: FrameEvent, fills_gap: bool) -> FrameEvent {
        let mut p = match self.probe {
            Some(p) if p.next == fnum => p,
            _ => Probe::default(),
        };
        p.next = fnum.wrapping_add(1);
        p.len += 1;
        match event {
            FrameEvent::Duplicate => {
                p.duplicates += 1;
                p.run += 1;
            }
            // A late frame that filled a gap of this session continues a
            // run without counting towards it: reordering, not a restart.
            _ if fills_gap => {}
            _ => {
                p.late += 1;
                p.run += 1;
            }
        }
        if p.run < RESYNC_RUN {
            self.probe = Some(p);
            return event;
        }
        self.probe = None;
        let this_dup = u32::from(event == FrameEvent::Duplicate);
        let this_late = u32::from(event == FrameEvent::Late && !fills_gap);
        // This frame's late count is in `reordered` already, its duplicate
        // count not yet: it is the restart instead.
        self.duplicates = self
            .duplicates
            .saturating_sub(u64::from(p.duplicates - this_dup));
        self.reordered = self.reordered.saturating_sub(u64::from(p.late));
        self.restarts += 1;
        self.previous = self.newest;
        self.start(fnum);
        for back in 1..p.len {
            Self::mark(&mut self.seen, fnum.wrapping_sub(back));
        }
        FrameEvent::Resync {
            duplicates: p.duplicates - this_dup,
            late: p.late - this_late,
        }
    }

    fn judge(&mut self, newest: u32, fnum: u32, clock: f64) -> FrameEvent {
        let delta = i64::from(fnum) - i64::from(newest);
        let clock_went_back = self.last_clock.is_some_and(|c| clock < c);
        if delta == 0 {
            return FrameEvent::Duplicate;
        }
        if delta < 0 && delta > -i64::from(RESTART_JUMP) {
            return if Self::is_marked(&self.missing, fnum) {
                Self::clear(&mut self.missing, fnum);
                Self::mark(&mut self.seen, fnum);
                self.lost = self.lost.saturating_sub(1);
                self.reordered += 1;
                FrameEvent::Late
            } else if Self::is_marked(&self.seen, fnum) {
                FrameEvent::Duplicate
            } else {
                // Older than this session's first frame: never counted as
                // lost, but remembered, so that a copy of it is a duplicate.
                Self::mark(&mut self.seen, fnum);
                self.reordered += 1;
                FrameEvent::Late
            };
        }
        if delta > 0 {
            // Right after a restart, frames of the old session can still arrive.
            let stale = self.previous.is_some_and(|p| {
                fnum <= p && p - fnum < RESTART_JUMP && delta >= i64::from(RESTART_JUMP)
            });
            if stale {
                return FrameEvent::Stale;
            }
            let big = delta >= i64::from(RESTART_FORWARD)
                || (delta >= i64::from(RESTART_JUMP) && clock_went_back);
            if !big {
                let lost = u32::try_from(delta - 1).unwrap_or(u32::MAX);
                self.advance(newest, fnum);
                self.lost += u64::from(lost);
                return FrameEvent::InOrder { lost };
            }
        }
        self.restarts += 1;
        self.previous = Some(newest);
        self.start(fnum);
        FrameEvent::Restart
    }

    fn start(&mut self, fnum: u32) {
        self.newest = Some(fnum);
        self.seen = vec![0; (WINDOW / 64) as usize];
        self.missing = vec![0; (WINDOW / 64) as usize];
        Self::mark(&mut self.seen, fnum);
    }

    fn advance(&mut self, from: u32, to: u32) {
        let first_missing = if to - from >= WINDOW {
            self.seen.iter_mut().for_each(|w| *w = 0);
            self.missing.iter_mut().for_each(|w| *w = 0);
            to - (WINDOW - 1)
        } else {
            from + 1
        };
        for f in first_missing..to {
            Self::clear(&mut self.seen, f);
            Self::mark(&mut self.missing, f);
        }
        Self::clear(&mut self.missing, to);
        Self::mark(&mut self.seen, to);
        self.newest = Some(to);
    }

    fn slot(fnum: u32) -> (usize, u64) {
        let bit = fnum % WINDOW;
        ((bit / 64) as usize, 1 << (bit % 64))
    }

    fn mark(bits: &mut [u64], fnum: u32) {
        let (word, mask) = Self::slot(fnum);
        if let Some(w) = bits.get_mut(word) {
            *w |= mask;
        }
    }

    fn clear(bits: &mut [u64], fnum: u32) {
        let (word, mask) = Self::slot(fnum);
        if let Some(w) = bits.get_mut(word) {
            *w &= !mask;
        }
    }

    fn is_marked(bits: &[u64], fnum: u32) -> bool {
        let (word, mask) = Self::slot(fnum);
        bits.get(word).is_some_and(|w| w & mask != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(h: &mut Health, fnums: &[u32]) -> Vec<FrameEvent> {
        fnums
            .iter()
            .map(|&f| {
                h.frame(
                    f,
                    sender_clock(f64::from(f) / 60.0),
                    Some(Duration::from_secs_f64(f64::from(f) / 60.0)),
                )
            })
            .collect()
    }

    /// Found by the `health` fuzz target: a frame older than the session's
    /// first one was counted as reordered every time it came, its copies
    /// never as duplicates.
    /// Found by the `health` fuzz target: clocks a subnormal apart gave an
    /// infinite rate.
    #[test]
    fn rates_are_never_infinite() {
        let mut h = Health::new();
        h.frame(1, sender_clock(0.0), Some(Duration::ZERO));
        h.frame(
            2,
            sender_clock(5e-324),
            Some(Duration::from_secs_f64(5e-324)),
        );
        let r = h.report();
        assert_eq!((r.fps, r.sender_fps), (None, None));
        assert_eq!(r.frames, 2);
    }

    #[test]
    fn copy_of_a_frame_older_than_the_first_is_a_duplicate() {
        let mut h = Health::new();
        let events = feed(&mut h, &[1_000_224, 1_000_135, 1_000_135]);
        assert_eq!(
            events,
            [FrameEvent::First, FrameEvent::Late, FrameEvent::Duplicate]
        );
        let r = h.report();
        assert_eq!((r.reordered, r.duplicates, r.lost), (1, 1, 0));
    }

    #[test]
    fn counts_gaps_duplicates_and_restarts() {
        // The shape of animu-sphere's frame-loss capture: 3000..3002, gap of 2,
        // 3005, 3006, a duplicate 3006, then a restart at 1.
        let mut h = Health::new();
        let ev = feed(&mut h, &[3000, 3001, 3002, 3005, 3006, 3006, 1]);
        assert_eq!(ev[3], FrameEvent::InOrder { lost: 2 });
        assert_eq!(ev[5], FrameEvent::Duplicate);
        assert_eq!(ev[6], FrameEvent::Restart);
        let r = h.report();
        assert_eq!(
            (r.frames, r.lost, r.duplicates, r.restarts, r.reordered),
            (7, 2, 1, 1, 0)
        );
    }

    /// Held out: an app restarted mid-take (frame numbers back by less than
    /// 1000) was counted as duplicates for ever. A run of in-order frames
    /// after the jump is one restart (RFC 3550 A.1's resynchronisation).
    #[test]
    fn a_small_jump_back_then_in_order_frames_is_one_restart() {
        let mut h = Health::new();
        let old: Vec<u32> = (100..=700).collect();
        feed(&mut h, &old);
        let ev = feed(&mut h, &[300, 301, 302, 303, 304]);
        assert_eq!(ev[..3], [FrameEvent::Duplicate; 3]);
        assert_eq!(
            ev[3],
            FrameEvent::Resync {
                duplicates: 3,
                late: 0
            }
        );
        assert_eq!(ev[4], FrameEvent::InOrder { lost: 0 });
        let new: Vec<u32> = (305..=400).collect();
        assert!(
            feed(&mut h, &new)
                .iter()
                .all(|e| *e == FrameEvent::InOrder { lost: 0 })
        );
        let r = h.report();
        assert_eq!(
            (r.restarts, r.duplicates, r.reordered, r.lost),
            (1, 0, 0, 0)
        );
        assert_eq!(
            feed(&mut h, &[302])[0],
            FrameEvent::Duplicate,
            "a copy of the run"
        );
    }

    #[test]
    fn a_looping_sender_restarts_once_per_loop() {
        let mut h = Health::new();
        let lap: Vec<u32> = (0..100).collect();
        for _ in 0..3 {
            feed(&mut h, &lap);
        }
        let r = h.report();
        assert_eq!((r.restarts, r.duplicates, r.lost, r.frames), (2, 0, 0, 300));
    }

    #[test]
    fn a_jump_back_past_the_first_frame_resyncs_on_late_frames() {
        let mut h = Health::new();
        feed(&mut h, &[5000, 5001, 5002]);
        let ev = feed(&mut h, &[4500, 4501, 4502, 4503]);
        assert_eq!(ev[..3], [FrameEvent::Late; 3]);
        assert_eq!(
            ev[3],
            FrameEvent::Resync {
                duplicates: 0,
                late: 3
            }
        );
        assert_eq!((h.report().reordered, h.report().restarts), (0, 1));
    }

    #[test]
    fn late_frames_filling_gaps_and_single_copies_are_no_restart() {
        let mut h = Health::new();
        feed(&mut h, &[10, 16, 11, 12, 13, 14, 15, 17]);
        let r = h.report();
        assert_eq!((r.lost, r.reordered, r.restarts), (0, 5, 0));
        // Copies that are not a run stay duplicates.
        feed(&mut h, &[12, 14, 12, 16, 18]);
        let r = h.report();
        assert_eq!((r.duplicates, r.restarts), (4, 0));
    }

    #[test]
    fn late_frame_fills_its_gap() {
        let mut h = Health::new();
        let ev = feed(&mut h, &[10, 12, 11, 11, 13]);
        assert_eq!(ev[2], FrameEvent::Late);
        assert_eq!(ev[3], FrameEvent::Duplicate);
        let r = h.report();
        assert_eq!((r.lost, r.reordered, r.duplicates), (0, 1, 1));
    }

    #[test]
    fn late_frames_only_fill_gaps_that_were_counted() {
        let mut h = Health::new();
        feed(&mut h, &[100, 103, 99]);
        assert_eq!((h.report().lost, h.report().reordered), (2, 1));
        let mut h = Health::new();
        feed(&mut h, &[101, 103, 100]);
        assert_eq!(h.report().lost, 1, "102 is still missing");
    }

    #[test]
    fn huge_forward_jumps_and_stale_frames_after_a_restart() {
        let mut h = Health::new();
        let ev = feed(&mut h, &[5, 4_000_000_000]);
        assert_eq!(ev[1], FrameEvent::Restart);
        assert_eq!(h.report().lost, 0);
        let mut h = Health::new();
        let ev = feed(&mut h, &[5000, 5002, 10, 4990, 11]);
        assert_eq!(ev[2], FrameEvent::Restart);
        assert_eq!(ev[3], FrameEvent::Stale);
        assert_eq!(ev[4], FrameEvent::InOrder { lost: 0 });
        assert_eq!((h.report().lost, h.report().restarts), (1, 1));
    }

    #[test]
    fn forward_jump_with_a_clock_going_back_is_a_restart() {
        let mut h = Health::new();
        h.frame(10, sender_clock(500.0), None);
        assert_eq!(h.frame(5000, sender_clock(1.0), None), FrameEvent::Restart);
        // The same jump with the clock moving on is an outage: loss.
        let mut h = Health::new();
        h.frame(10, sender_clock(500.0), None);
        assert_eq!(
            h.frame(5000, sender_clock(583.0), None),
            FrameEvent::InOrder { lost: 4989 }
        );
    }

    #[test]
    fn bvh_sender_frames_have_no_sequence() {
        let mut h = Health::new();
        let ev = feed(&mut h, &[UNNUMBERED, UNNUMBERED, UNNUMBERED]);
        assert!(ev.iter().all(|e| *e == FrameEvent::Unnumbered));
        let r = h.report();
        assert_eq!((r.frames, r.duplicates, r.lost), (3, 0, 0));
    }

    #[test]
    fn restart_threshold_follows_sonys_rule() {
        let mut h = Health::new();
        feed(&mut h, &[5000, 5001]);
        assert_eq!(feed(&mut h, &[5001 - 999])[0], FrameEvent::Late);
        assert_eq!(feed(&mut h, &[5001 - RESTART_JUMP])[0], FrameEvent::Restart);
    }

    #[test]
    fn rates_from_sender_clock_and_arrivals() {
        let mut h = Health::new();
        for f in 0..61u32 {
            // Arrivals alternate 2 ms early and late around the sender clock.
            let jitter = if f % 2 == 0 { 0.002 } else { -0.002 };
            h.frame(
                f,
                sender_clock(f64::from(f) / 60.0),
                Some(Duration::from_secs_f64(
                    100.0 + f64::from(f) / 60.0 + jitter,
                )),
            );
        }
        let r = h.report();
        assert!((r.sender_fps.unwrap() - 60.0).abs() < 1e-9);
        assert!((r.fps.unwrap() - 60.0).abs() < 0.5);
        let j = r.jitter_ms.unwrap();
        assert!(j > 2.0 && j < 4.0, "jitter {j}");
    }

    /// Held out: mocopi-dump's "fps in all" read 538 442 670 after a burst
    /// of strangers' frames microseconds apart.
    #[test]
    fn a_burst_microseconds_apart_has_no_rate() {
        let mut total = HealthReport::default();
        for k in 0..256u32 {
            let mut h = Health::new();
            for f in 0..3u32 {
                let t = f64::from(k) + f64::from(f) * 1e-6;
                h.frame(f, sender_clock(t), Some(Duration::from_secs_f64(t)));
            }
            let r = h.report();
            assert_eq!((r.fps, r.sender_fps), (None, None));
            total.merge(&r);
        }
        assert_eq!(total.fps, None);
        // Fifty milliseconds of a 60 Hz sender are enough.
        let mut h = Health::new();
        feed(&mut h, &[0, 1, 2, 3]);
        assert!((h.report().fps.unwrap() - 60.0).abs() < 1e-6);
    }

    #[test]
    fn sender_rate_ignores_lost_frames_and_clock_without_resolution() {
        let mut h = Health::new();
        for f in [0u32, 1, 2, 5, 6] {
            h.frame(f, sender_clock(f64::from(f) / 50.0), None);
        }
        let r = h.report();
        assert!((r.sender_fps.unwrap() - 50.0).abs() < 1e-9);
        assert_eq!(r.fps, r.sender_fps);
        assert_eq!(r.jitter_ms, None);

        // Early apps sent Unix seconds as f32: every step is 0 or 128 s.
        let mut h = Health::new();
        for f in 0..10u32 {
            h.frame(f, sender_clock(1_674_460_416.0), None);
        }
        assert_eq!(h.report().fps, None);
    }

    #[test]
    fn clocks_are_times_or_nothing() {
        assert_eq!(sender_clock(1.5), Some(Duration::from_millis(1500)));
        assert_eq!(sender_clock(0.0), Some(Duration::ZERO));
        for bad in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300] {
            assert_eq!(sender_clock(bad), None, "{bad}");
        }
        // A frame without a clock still counts, and gives no rate.
        let mut h = Health::new();
        for f in 0..10 {
            h.frame(f, None, None);
        }
        let r = h.report();
        assert_eq!((r.frames, r.lost, r.fps), (10, 0, None));
    }

    #[test]
    fn stamps_count_as_their_meaning() {
        let mut h = Health::new();
        let at = |ms| Some(Duration::from_millis(ms));
        let numbered = |frame| Stamp::Numbered {
            frame,
            clock: sender_clock(f64::from(frame) / 60.0),
            part: 0,
        };
        assert_eq!(h.stamp(numbered(1), at(0)), Some(FrameEvent::First));
        assert_eq!(
            h.stamp(numbered(3), at(33)),
            Some(FrameEvent::InOrder { lost: 1 })
        );
        assert_eq!(h.stamp(Stamp::Skeleton, None), None);
        assert_eq!(h.stamp(Stamp::Sensor, None), None);
        assert_eq!(h.stamp(Stamp::Error, None), None);
        let r = h.report();
        assert_eq!(
            (r.frames, r.lost, r.skeletons, r.sensors, r.errors),
            (2, 1, 1, 1, 1)
        );
    }

    /// Clock-only frames at `ms` milliseconds of the sender's clock, each
    /// arriving 5 ms later.
    fn clocked(h: &mut Health, ms: &[u64]) -> Vec<FrameEvent> {
        ms.iter()
            .map(|&t| {
                let at = Duration::from_millis(t);
                h.clocked(at, Some(at + Duration::from_millis(5)))
            })
            .collect()
    }

    /// Milliseconds of a 60 Hz clock (16 or 17 ms steps) for frames `from..to`.
    fn at_60hz(frames: std::ops::Range<u64>) -> Vec<u64> {
        frames.map(|k| 1_765_000_000_000 + k * 1000 / 60).collect()
    }

    #[test]
    fn clock_only_frames_in_order_have_a_rate_and_lose_nothing() {
        let mut h = Health::new();
        let ev = clocked(&mut h, &at_60hz(0..120));
        assert_eq!(ev[0], FrameEvent::First);
        assert!(
            ev[1..]
                .iter()
                .all(|e| *e == FrameEvent::InOrder { lost: 0 })
        );
        let r = h.report();
        assert_eq!(
            (r.frames, r.lost, r.reordered, r.restarts, r.gaps),
            (120, 0, 0, 0, 0)
        );
        assert!((r.sender_fps.unwrap() - 60.0).abs() < 0.1, "{r:?}");
        assert!(h.is_numbered());
    }

    #[test]
    fn a_clock_step_of_several_periods_lost_the_frames_between() {
        let mut h = Health::new();
        let mut t = at_60hz(0..30);
        // Frames 30..=34 never came.
        t.extend(at_60hz(35..60));
        let ev = clocked(&mut h, &t);
        assert_eq!(ev[30], FrameEvent::InOrder { lost: 5 });
        assert_eq!(h.report().lost, 5);
        // One of them arrives late: it fills the gap.
        let late = at_60hz(32..33);
        assert_eq!(clocked(&mut h, &late), [FrameEvent::Late]);
        let dup = at_60hz(59..60);
        assert_eq!(clocked(&mut h, &dup), [FrameEvent::Duplicate]);
        let r = h.report();
        assert_eq!((r.lost, r.reordered, r.duplicates, r.gaps), (4, 1, 1, 0));
    }

    /// A frame the sender stamped late by less than three quarters of a
    /// period (the step before it long, the one after short) is no loss.
    #[test]
    fn sender_jitter_is_not_loss() {
        let mut h = Health::new();
        let mut t = at_60hz(0..20);
        t[10] += 12;
        clocked(&mut h, &t);
        assert_eq!(h.report().lost, 0);
    }

    #[test]
    fn a_pause_over_a_second_is_a_gap_not_loss() {
        let mut h = Health::new();
        let mut t = at_60hz(0..30);
        t.extend(at_60hz(300..330));
        let ev = clocked(&mut h, &t);
        assert_eq!(ev[30], FrameEvent::InOrder { lost: 0 });
        let r = h.report();
        assert_eq!((r.lost, r.gaps, r.restarts), (0, 1, 0));
        // The pause is left out of the sender's rate.
        assert!((r.sender_fps.unwrap() - 60.0).abs() < 0.1, "{r:?}");
    }

    #[test]
    fn a_clock_going_back_a_second_is_a_restart_and_less_is_late() {
        let mut h = Health::new();
        let lap = at_60hz(0..120);
        clocked(&mut h, &lap);
        // A looped replay: two seconds back.
        let ev = clocked(&mut h, &lap);
        assert_eq!(ev[0], FrameEvent::Restart);
        assert!(
            ev[1..]
                .iter()
                .all(|e| *e == FrameEvent::InOrder { lost: 0 })
        );
        // 500 ms back is a late frame, not a restart.
        let back = at_60hz(89..90);
        assert_eq!(clocked(&mut h, &back), [FrameEvent::Late]);
        let r = h.report();
        assert_eq!((r.restarts, r.reordered, r.lost), (1, 1, 0));
    }

    #[test]
    fn clocked_stamps_count_as_frames_with_their_clock() {
        let mut h = Health::new();
        for (k, t) in at_60hz(0..10).into_iter().enumerate() {
            let stamp = Stamp::Clocked {
                clock: Duration::from_millis(t),
                part: 0,
            };
            let want = if k == 0 {
                FrameEvent::First
            } else {
                FrameEvent::InOrder { lost: 0 }
            };
            assert_eq!(h.stamp(stamp, None), Some(want));
        }
        assert_eq!(h.report().frames, 10);
        let mut total = h.report();
        total.gaps = 2;
        total.merge(&total.clone());
        assert_eq!(total.gaps, 4);
    }

    /// A SlimeVR tracker numbers from 0 again after its handshake: the
    /// new numbers are the session's first, not a restart, a loss or
    /// copies; a late frame of the old session is stale.
    #[test]
    fn a_handshake_starts_the_numbering_again() {
        let mut h = Health::new();
        let mut old: Vec<u32> = (4000..=5000).collect();
        old.retain(|f| *f != 4500);
        feed(&mut h, &old);
        assert_eq!(h.stamp(Stamp::Handshake, None), None);
        let again: Vec<u32> = (0..50).collect();
        let ev = feed(&mut h, &again);
        assert_eq!(ev[0], FrameEvent::First);
        assert!(
            ev[1..]
                .iter()
                .all(|e| *e == FrameEvent::InOrder { lost: 0 })
        );
        let r = h.report();
        assert_eq!(
            (r.frames, r.lost, r.restarts, r.duplicates, r.reordered),
            (1050, 1, 0, 0, 0)
        );
        assert_eq!(feed(&mut h, &[4999])[0], FrameEvent::Stale);
        // Without the handshake the same numbers are one restart.
        let mut h = Health::new();
        feed(&mut h, &old);
        feed(&mut h, &again);
        assert_eq!(h.report().restarts, 1);
    }

    #[test]
    fn a_sender_that_marks_its_frames_counts_only_the_marked_ones() {
        // Without marks, every datagram is a frame.
        let mut h = Health::new();
        for _ in 0..3 {
            h.stamp(Stamp::Unnumbered { ends_frame: false }, None);
        }
        assert_eq!(h.report().frames, 3);
        // Once a mark is seen, three datagrams per frame are one frame.
        let mut h = Health::new();
        for i in 0..9 {
            let event = h.stamp(
                Stamp::Unnumbered {
                    ends_frame: i % 3 == 2,
                },
                None,
            );
            assert_eq!(event.is_some(), i < 2 || i % 3 == 2, "datagram {i}");
        }
        assert_eq!(h.report().frames, 5);
    }
}
