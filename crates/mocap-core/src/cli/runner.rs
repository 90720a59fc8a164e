use std::time::{Duration, Instant};

use super::{Datagram, Event, InputError, Source, StopArgs, interrupted};

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// `--count` packets were handled.
    Count,
    /// `--duration` elapsed.
    Duration,
    /// Ctrl-C.
    Interrupted,
    /// The input file ended.
    EndOfInput,
}

impl Stopped {
    /// Name used in summaries.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Duration => "duration",
            Self::Interrupted => "interrupted",
            Self::EndOfInput => "end of input",
        }
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
    let start = Instant::now();
    // Overflowing sums (absurd durations) mean "never".
    let deadline = stop.duration.and_then(|d| start.checked_add(d));
    let mut next_stats = stats_interval.and_then(|d| start.checked_add(d));
    let mut packets = 0u64;
    loop {
        if stop.count.is_some_and(|n| packets >= n) || handler.finished() {
            return Ok(Stopped::Count);
        }
        if interrupted() {
            return Ok(Stopped::Interrupted);
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            return Ok(Stopped::Duration);
        }
        if let (Some(at), Some(every)) = (next_stats, stats_interval)
            && now >= at
        {
            handler.stats()?;
            next_stats = at.checked_add(every);
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
