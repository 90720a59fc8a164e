//! The one run loop ([`drive`]): a feed of items, a handler, `--count`,
//! `--duration`, `--stats-interval` and Ctrl-C, ending with a typed
//! [`Stopped`].

use std::time::{Duration, Instant};

use crate::exit::interrupted;

/// Why a run ended: the `stopped` field of every summary (docs/jsonl.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stopped {
    /// `--count` packets, frames or clients were handled.
    Count,
    /// `--duration` elapsed.
    Duration,
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// The input file ended.
    EndOfInput,
    /// A reason of one tool's own, as its summary names it (motion-stream
    /// dump: `streams ended`, `closed by server`, `bad message`).
    Tool(&'static str),
}

impl Stopped {
    /// Name used in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Duration => "duration",
            Self::Interrupted => "interrupted",
            Self::EndOfInput => "end of input",
            Self::Tool(why) => why,
        }
    }
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Stopped {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What a [`Feed`] produced for one turn of the run loop.
#[derive(Debug)]
pub enum Step<T> {
    /// Something to handle.
    Item(T),
    /// Nothing within the wait (live input, or paced input not yet due).
    Idle,
    /// The feed is over, for this reason.
    End(Stopped),
}

/// Whether the run goes on after an item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep going.
    Continue,
    /// End the run with this reason.
    Stop(Stopped),
}

/// Anything a run loop pulls from: a UDP socket (plain or batched), a capture
/// file, a TCP listener with its connection, a WebSocket, a channel.
pub trait Feed {
    /// One thing the feed produces, possibly borrowed from it until the next call.
    type Item<'a>
    where
        Self: 'a;

    /// The next item, waiting about `wait` at most. Feeds that block in a read
    /// with a fixed timeout (a live `Source`, TCP, a WebSocket) wait up to
    /// that timeout instead (50 to 100 ms), so Ctrl-C is still seen promptly.
    ///
    /// # Errors
    /// Errors that end the run (a socket or file that failed).
    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Self::Item<'_>>>;

    /// Whether the feed holds items it has already taken in (a batch from
    /// a queue) and will hand them out without waiting. The run loop hands
    /// all of them to the handler before its next tick, so what a tick
    /// reports (a redraw, periodic records) includes every datagram that
    /// had arrived by then.
    fn holding(&self) -> bool {
        false
    }

    /// Longest wait of one turn: [`POLL`], how promptly Ctrl-C is seen,
    /// unless Ctrl-C wakes the feed ([`crate::exit::wake_on_interrupt`]):
    /// a feed that waits only for the end (mocap-link's) then wakes a few
    /// times a second instead of twenty, a cost next to a sample's at 60 Hz.
    fn longest_wait(&self) -> Duration {
        POLL
    }
}

/// What a tool does with what its [`Feed`] produces. Every method but
/// [`item`](Self::item) has a default that does nothing.
pub trait FeedHandler<F: Feed + ?Sized> {
    /// An item arrived.
    ///
    /// # Errors
    /// Errors that end the run (output that failed).
    fn item(&mut self, item: F::Item<'_>) -> anyhow::Result<Flow>;

    /// The feed waited without producing anything.
    ///
    /// # Errors
    /// Errors that end the run.
    fn idle(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Called on every turn before waiting: timers, queued work, and whether
    /// the run is done (`--count` reached, …).
    ///
    /// # Errors
    /// Errors that end the run.
    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        Ok(None)
    }

    /// `--stats-interval` elapsed.
    ///
    /// # Errors
    /// Errors that end the run.
    fn stats(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// When [`tick`](Self::tick) next has work (a mixing tick, a handshake
    /// resend), so the loop wakes for it; `None` for no timer. The same name
    /// as the core state machines' deadline query (`Mixer::poll_timeout`,
    /// `Handshake::poll_timeout`, …), on the tool's clock.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

/// Longest wait of one turn: how promptly Ctrl-C and `--duration` are seen.
/// Every blocking read or wait in the tools is bounded by it.
pub const POLL: Duration = Duration::from_millis(50);

/// The run loop of every tool: pulls from `feed` into `handler` until the
/// handler or the feed says stop, `--duration` elapses or Ctrl-C; calls
/// `stats` every `stats_interval`. Always ends with a [`Stopped`] reason.
///
/// # Errors
/// Feed and handler errors.
pub fn drive<F, H>(
    feed: &mut F,
    duration: Option<Duration>,
    stats_interval: Option<Duration>,
    handler: &mut H,
) -> anyhow::Result<Stopped>
where
    F: Feed + ?Sized,
    H: FeedHandler<F> + ?Sized,
{
    let mut pacer = RunClock::new(duration, stats_interval);
    loop {
        if !feed.holding() {
            if let Some(why) = handler.tick()? {
                return Ok(why);
            }
            if let Some(why) = pacer.stopped() {
                return Ok(why);
            }
            if pacer.stats_due() {
                handler.stats()?;
            }
        }
        let mut wait = feed.longest_wait();
        if let Some(at) = handler.poll_timeout() {
            wait = wait.min(at.saturating_duration_since(Instant::now()));
        }
        if let Some(left) = pacer.left() {
            wait = wait.min(left);
        }
        // Periodic records on time, however long the feed may wait.
        if let Some(at) = pacer.next_stats {
            wait = wait.min(at.saturating_duration_since(Instant::now()));
        }
        match feed.next(wait)? {
            Step::Item(item) => {
                if let Flow::Stop(why) = handler.item(item)? {
                    return Ok(why);
                }
            }
            Step::Idle => handler.idle()?,
            Step::End(why) => return Ok(why),
        }
    }
}

/// The clock side of the run loop: `--duration`, Ctrl-C and `--stats-interval`.
#[derive(Debug)]
pub struct RunClock {
    deadline: Option<Instant>,
    every: Option<Duration>,
    next_stats: Option<Instant>,
}

impl RunClock {
    /// Starts now. Overflowing sums (absurd durations) mean "never".
    pub fn new(duration: Option<Duration>, stats_interval: Option<Duration>) -> Self {
        let start = Instant::now();
        Self {
            deadline: duration.and_then(|d| start.checked_add(d)),
            every: stats_interval,
            next_stats: stats_interval.and_then(|d| start.checked_add(d)),
        }
    }

    /// Why the run should end now (Ctrl-C, `--duration`), if it should.
    pub fn stopped(&self) -> Option<Stopped> {
        if interrupted() {
            Some(Stopped::Interrupted)
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stopped::Duration)
        } else {
            None
        }
    }

    /// Time left of `--duration`, if one was given.
    pub fn left(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }

    /// Whether periodic counters are due now (then schedules the next).
    pub fn stats_due(&mut self) -> bool {
        match (self.next_stats, self.every) {
            (Some(at), Some(every)) if Instant::now() >= at => {
                self.next_stats = at.checked_add(every);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A feed of numbers that can idle between them, on no clock.
    struct Numbers {
        items: std::collections::VecDeque<Option<u32>>,
        waits: Vec<Duration>,
        /// Items already taken in (a batch), handed out without waiting.
        held: usize,
        longest: Duration,
    }

    impl Feed for Numbers {
        type Item<'a> = u32;
        fn next(&mut self, wait: Duration) -> anyhow::Result<Step<u32>> {
            self.waits.push(wait);
            self.held = self.held.saturating_sub(1);
            Ok(match self.items.pop_front() {
                Some(Some(n)) => Step::Item(n),
                Some(None) => Step::Idle,
                None => Step::End(Stopped::EndOfInput),
            })
        }
        fn holding(&self) -> bool {
            self.held > 0
        }
        fn longest_wait(&self) -> Duration {
            self.longest
        }
    }

    #[derive(Default)]
    struct Sum {
        total: u32,
        idles: u32,
        ticks: u32,
        stop_at: Option<u32>,
        wake: Option<Duration>,
    }

    impl FeedHandler<Numbers> for Sum {
        fn item(&mut self, n: u32) -> anyhow::Result<Flow> {
            self.total += n;
            Ok(if self.stop_at == Some(n) {
                Flow::Stop(Stopped::Tool("bad message"))
            } else {
                Flow::Continue
            })
        }
        fn idle(&mut self) -> anyhow::Result<()> {
            self.idles += 1;
            Ok(())
        }
        fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
            self.ticks += 1;
            Ok((self.total >= 100).then_some(Stopped::Count))
        }
        fn poll_timeout(&self) -> Option<Instant> {
            self.wake.map(|w| Instant::now() + w)
        }
    }

    fn numbers(items: &[Option<u32>]) -> Numbers {
        Numbers {
            items: items.iter().copied().collect(),
            waits: Vec::new(),
            held: 0,
            longest: POLL,
        }
    }

    /// The waits `drive` asks of an idle feed of two turns whose longest
    /// wait is `longest`, with a handler timer `wake` after now, a
    /// `--duration` and a stats interval.
    fn idle_waits(
        longest: Duration,
        wake: Option<Duration>,
        duration: Option<Duration>,
        every: Option<Duration>,
    ) -> Vec<Duration> {
        let mut feed = numbers(&[None, None]);
        feed.longest = longest;
        let mut h = Sum {
            wake,
            ..Sum::default()
        };
        drive(&mut feed, duration, every, &mut h).unwrap();
        feed.waits
    }

    #[test]
    fn a_feed_woken_by_ctrl_c_waits_longer_but_never_past_a_timer() {
        let long = Duration::from_secs(2);
        assert_eq!(idle_waits(long, None, None, None), [long; 3]);
        let ms = Duration::from_millis;
        let waits = idle_waits(long, Some(ms(300)), None, None);
        assert!(waits.iter().all(|w| *w <= ms(300)), "{waits:?}");
        // Nor past the next periodic record.
        let waits = idle_waits(long, None, None, Some(ms(400)));
        assert!(waits.iter().all(|w| *w <= ms(400)), "{waits:?}");
    }

    #[test]
    fn runs_to_the_end_of_the_feed() {
        let mut feed = numbers(&[Some(1), None, Some(2), None, Some(3)]);
        let mut h = Sum::default();
        let why = drive(&mut feed, None, None, &mut h).unwrap();
        assert_eq!(why, Stopped::EndOfInput);
        assert_eq!((h.total, h.idles), (6, 2));
        // One tick per turn: five items and idles, and the turn that met the end.
        assert_eq!(h.ticks, 6);
        assert!(feed.waits.iter().all(|w| *w == POLL));
    }

    #[test]
    fn the_handler_ends_the_run() {
        let mut feed = numbers(&[Some(1), Some(7), Some(2)]);
        let mut h = Sum {
            stop_at: Some(7),
            ..Sum::default()
        };
        assert_eq!(
            drive(&mut feed, None, None, &mut h).unwrap(),
            Stopped::Tool("bad message")
        );
        assert_eq!(h.total, 8, "nothing after the stopping item");
        let mut feed = numbers(&[Some(60), Some(60), Some(1)]);
        let mut h = Sum::default();
        assert_eq!(
            drive(&mut feed, None, None, &mut h).unwrap(),
            Stopped::Count
        );
        assert_eq!(h.total, 120, "tick saw the total before the third item");
    }

    #[test]
    fn a_batch_the_feed_holds_is_handled_whole_before_the_next_tick() {
        // The same items as above, taken in as one batch: the tick after it
        // sees all three (a redraw shows every datagram that had arrived).
        let mut feed = numbers(&[Some(60), Some(60), Some(1)]);
        feed.held = 3;
        let mut h = Sum::default();
        assert_eq!(
            drive(&mut feed, None, None, &mut h).unwrap(),
            Stopped::Count
        );
        assert_eq!((h.total, h.ticks), (121, 1));
    }

    #[test]
    fn waits_no_longer_than_the_handler_timer_or_the_duration() {
        let ms = Duration::from_millis;
        // The handler's deadline is 3 ms after it was asked: the loop waits
        // at most that, not its 50 ms poll.
        let waits = idle_waits(POLL, Some(ms(3)), None, None);
        assert!(waits.iter().all(|w| *w <= ms(3)), "{waits:?}");
        let waits = idle_waits(POLL, None, Some(ms(20)), None);
        assert!(waits.iter().all(|w| *w <= ms(20)), "{waits:?}");
    }

    #[test]
    fn a_zero_duration_ends_before_any_item() {
        let mut feed = numbers(&[Some(1)]);
        let mut h = Sum::default();
        assert_eq!(
            drive(&mut feed, Some(Duration::ZERO), None, &mut h).unwrap(),
            Stopped::Duration
        );
        assert_eq!(h.total, 0);
    }
}
