use std::time::{Duration, Instant};

use super::{Datagram, Event, InputError, Source, StopArgs, interrupted};

/// Why a run ended: the `stopped` field of every summary (docs/jsonl.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stopped {
    /// `--count` packets, frames or clients were handled.
    Count,
    /// `--duration` elapsed.
    Duration,
    /// Ctrl-C.
    Interrupted,
    /// The input file ended.
    EndOfInput,
    /// A stream client: every stream the server started has ended.
    StreamsEnded,
    /// A stream client: the server closed the connection.
    ClosedByServer,
    /// A stream client: the server sent a message that was refused.
    BadMessage,
}

impl Stopped {
    /// Name used in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Duration => "duration",
            Self::Interrupted => "interrupted",
            Self::EndOfInput => "end of input",
            Self::StreamsEnded => "streams ended",
            Self::ClosedByServer => "closed by server",
            Self::BadMessage => "bad message",
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

/// What a tool does with each thing its source produces.
pub trait Handler {
    /// A datagram arrived.
    ///
    /// # Errors
    /// Output errors; they end the run.
    fn datagram(&mut self, d: Datagram<'_>) -> anyhow::Result<()>;

    /// Input could not be read as a datagram (counts as a packet).
    ///
    /// # Errors
    /// Output errors; they end the run.
    fn unreadable(&mut self, e: &InputError) -> anyhow::Result<()>;

    /// `--stats-interval` elapsed.
    ///
    /// # Errors
    /// Output errors; they end the run.
    fn stats(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    /// Called while waiting on a live source, about every poll interval.
    fn idle(&mut self) {}

    /// Whether the handler has what it was asked for (e.g. `--count` frames,
    /// when a tool counts frames rather than datagrams); ends the run as `Count`.
    fn finished(&self) -> bool {
        false
    }
}

/// The clock side of a run loop: `--duration`, Ctrl-C and `--stats-interval`,
/// shared by every tool's loop.
#[derive(Debug)]
pub struct Pacer {
    deadline: Option<Instant>,
    every: Option<Duration>,
    next_stats: Option<Instant>,
}

impl Pacer {
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

/// Pulls from `source` into `handler` until the count, the duration, Ctrl-C
/// or the end of input.
///
/// # Errors
/// Source and handler errors.
pub fn run(
    source: &mut Source,
    stop: &StopArgs,
    stats_interval: Option<Duration>,
    handler: &mut impl Handler,
) -> anyhow::Result<Stopped> {
    let mut pacer = Pacer::new(stop.duration, stats_interval);
    let mut packets = 0u64;
    loop {
        if stop.count.is_some_and(|n| packets >= n) || handler.finished() {
            return Ok(Stopped::Count);
        }
        if let Some(why) = pacer.stopped() {
            return Ok(why);
        }
        if pacer.stats_due() {
            handler.stats()?;
        }
        match source.next_event()? {
            Event::Datagram(d) => {
                packets += 1;
                handler.datagram(d)?;
            }
            Event::Unreadable(e) => {
                packets += 1;
                handler.unreadable(&e)?;
            }
            Event::Idle => handler.idle(),
            Event::End => return Ok(Stopped::EndOfInput),
        }
    }
}
