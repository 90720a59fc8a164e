//! What the periodic status line says about the input ([`Activity`]): the
//! rate over the last interval, not since the start (a stream that stopped
//! a minute ago must not read as 59 fps), how long nothing has come, and
//! once, when a live socket hears nothing, where it listens and why
//! datagrams usually do not arrive. Time is passed in (`now`, any origin
//! the caller keeps), so the decisions are tested without waiting.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// Silence on a live socket after which the tool says where it listens
/// and the usual causes.
pub const SILENCE: Duration = Duration::from_secs(5);

/// Arrivals as the status line reports them.
#[derive(Clone, Copy, Debug)]
pub struct Activity {
    /// The socket's address; `None` for a file or stdin, where silence is
    /// the input's, not the network's.
    listen: Option<SocketAddr>,
    started: Duration,
    interval_start: Duration,
    interval_datagrams: u64,
    last_datagram: Option<Duration>,
    told: bool,
}

/// One interval of the status line: from the previous line (or the start)
/// to now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Datagrams that arrived in it.
    pub datagrams: u64,
    /// Its length.
    pub length: Duration,
    /// How long nothing has arrived, when nothing arrived in it: since the
    /// last datagram, or since the start.
    pub quiet_for: Option<Duration>,
}

impl Interval {
    /// Datagrams per second over the interval (`None` for an empty one).
    #[must_use]
    pub fn rate(&self) -> Option<f64> {
        let s = self.length.as_secs_f64();
        (s > 0.0).then(|| self.datagrams as f64 / s)
    }
}

/// `59.8 datagrams/s over the last 5.0 s`, or `no datagrams for 12 s`.
impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.quiet_for, self.rate()) {
            (Some(q), _) => write!(f, "no datagrams for {} s", q.as_secs()),
            (None, Some(r)) => write!(
                f,
                "{r:.1} datagrams/s over the last {:.1} s",
                self.length.as_secs_f64()
            ),
            (None, None) => write!(f, "{} datagrams", self.datagrams),
        }
    }
}

/// A live socket heard nothing for [`SILENCE`]: where it listens and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Silence {
    /// The socket's address.
    pub listen: SocketAddr,
    /// How long nothing has arrived.
    pub quiet_for: Duration,
    /// Whether anything arrived before (then the sender may just have stopped).
    pub heard_before: bool,
}

impl fmt::Display for Silence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (at, port, s) = (self.listen, self.listen.port(), self.quiet_for.as_secs());
        if self.heard_before {
            write!(f, "no datagrams on {at} for {s} s: the sender stopped, or ")?;
        } else {
            write!(f, "nothing has arrived on {at} in {s} s; usually ")?;
        }
        write!(
            f,
            "a firewall blocks UDP port {port} (Windows asks the first time a program listens \
             and keeps it blocked on a network marked Public), the app sends to another IPv4 \
             address of this machine (the one on the app's network; never 127.0.0.1 from \
             another device) or to another port, or another program on port {port} gets the \
             datagrams (mocap-top shows which ports are taken)"
        )
    }
}

impl Activity {
    /// Starts at `now`; `listen` is the live socket's address, `None` for
    /// a file or stdin.
    #[must_use]
    pub fn new(now: Duration, listen: Option<SocketAddr>) -> Self {
        Self {
            listen,
            started: now,
            interval_start: now,
            interval_datagrams: 0,
            last_datagram: None,
            told: false,
        }
    }

    /// `n` datagrams arrived at `now` (a batch, or one).
    pub fn datagrams(&mut self, now: Duration, n: u64) {
        if n > 0 {
            self.interval_datagrams = self.interval_datagrams.saturating_add(n);
            self.last_datagram = Some(now);
        }
    }

    /// Ends the interval at `now` (the status line is printed) and starts
    /// the next.
    pub fn interval(&mut self, now: Duration) -> Interval {
        let length = now.saturating_sub(self.interval_start);
        let datagrams = std::mem::take(&mut self.interval_datagrams);
        self.interval_start = now;
        let quiet_for = (datagrams == 0)
            .then(|| now.saturating_sub(self.last_datagram.unwrap_or(self.started)));
        Interval {
            datagrams,
            length,
            quiet_for,
        }
    }

    /// Once per run: a live socket that has heard nothing for [`SILENCE`]
    /// (since the start, or since its last datagram).
    pub fn silence(&mut self, now: Duration) -> Option<Silence> {
        let listen = self.listen?;
        let quiet_for = now.saturating_sub(self.last_datagram.unwrap_or(self.started));
        if self.told || quiet_for < SILENCE {
            return None;
        }
        self.told = true;
        Some(Silence {
            listen,
            quiet_for,
            heard_before: self.last_datagram.is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: f64) -> Duration {
        Duration::from_secs_f64(n)
    }

    fn at() -> SocketAddr {
        "0.0.0.0:12351".parse().unwrap()
    }

    #[test]
    fn the_rate_is_the_last_intervals_not_the_runs() {
        let mut a = Activity::new(s(100.0), Some(at()));
        for i in 0..300 {
            a.datagrams(s(100.0 + f64::from(i) / 60.0), 1);
        }
        let first = a.interval(s(105.0));
        assert_eq!(first.datagrams, 300);
        assert_eq!(first.quiet_for, None);
        assert!((first.rate().unwrap() - 60.0).abs() < 1e-9);
        assert_eq!(first.to_string(), "60.0 datagrams/s over the last 5.0 s");
        // The next interval: a batch of 32 and then half a rate.
        a.datagrams(s(106.0), 32);
        a.datagrams(s(107.0), 0);
        for i in 0..118 {
            a.datagrams(s(107.0 + f64::from(i) / 40.0), 1);
        }
        let second = a.interval(s(110.0));
        assert_eq!(second.datagrams, 150);
        assert_eq!(second.to_string(), "30.0 datagrams/s over the last 5.0 s");
    }

    #[test]
    fn a_quiet_stream_says_for_how_long() {
        let mut a = Activity::new(s(0.0), None);
        // Nothing yet: quiet since the start.
        let i = a.interval(s(5.0));
        assert_eq!(i.quiet_for, Some(s(5.0)));
        assert_eq!(i.to_string(), "no datagrams for 5 s");
        a.datagrams(s(6.0), 1);
        assert_eq!(a.interval(s(10.0)).quiet_for, None);
        // It stopped at 6 s: quiet since then, across intervals.
        assert_eq!(a.interval(s(15.0)).to_string(), "no datagrams for 9 s");
        assert_eq!(a.interval(s(20.5)).quiet_for, Some(s(14.5)));
        // An empty interval has no rate.
        let empty = a.interval(s(20.5));
        assert_eq!((empty.rate(), empty.length), (None, Duration::ZERO));
    }

    #[test]
    fn silence_on_a_socket_is_told_once_with_the_address() {
        let mut a = Activity::new(s(10.0), Some(at()));
        assert_eq!(a.silence(s(14.9)), None);
        let told = a.silence(s(15.0)).unwrap();
        assert_eq!(told.listen, at());
        assert!(!told.heard_before);
        let text = told.to_string();
        assert!(
            text.starts_with("nothing has arrived on 0.0.0.0:12351 in 5 s"),
            "{text}"
        );
        for cause in [
            "firewall blocks UDP port 12351",
            "another IPv4 address",
            "another program on port 12351",
        ] {
            assert!(text.contains(cause), "{cause}: {text}");
        }
        assert_eq!(a.silence(s(60.0)), None, "once per run");
    }

    #[test]
    fn a_stream_that_stops_is_told_from_its_last_datagram() {
        let mut a = Activity::new(s(0.0), Some(at()));
        a.datagrams(s(1.0), 1);
        a.datagrams(s(30.0), 1);
        // Talking for 30 s is not silence; 5 s after the last one is.
        assert_eq!(a.silence(s(34.0)), None);
        let told = a.silence(s(35.5)).unwrap();
        assert!(told.heard_before);
        assert_eq!(told.quiet_for, s(5.5));
        assert!(
            told.to_string()
                .starts_with("no datagrams on 0.0.0.0:12351 for 5 s: the sender stopped")
        );
    }

    #[test]
    fn a_file_is_never_told_about_the_network() {
        let mut a = Activity::new(s(0.0), None);
        assert_eq!(a.silence(s(3600.0)), None);
    }
}
