//! Protocols whose sender streams only to whoever asked (a phone app a PC
//! asks for its face): the request a registry row gives ([`Ask`]) and when
//! it goes out again ([`Asking`], I/O-free: `now` in, what is due out).
//!
//! ```
//! use std::time::Duration;
//! use mocap_core::protocol::{Asking, Due, Resend};
//!
//! let s = Duration::from_secs(1);
//! let mut a = Asking::new(Resend::WhileSilent(3 * s));
//! assert_eq!(a.handle_timeout(Duration::ZERO), Some(Due::First));
//! a.handle_frame(2 * s);
//! assert_eq!(a.handle_timeout(4 * s), None); // a frame came 2 s ago
//! assert_eq!(a.poll_timeout(), Some(5 * s));
//! assert_eq!(a.handle_timeout(5 * s), Some(Due::Again));
//! ```

use std::time::Duration;

/// How a receiver asks a sender to stream to it: a registry row's
/// [`Spec::ask`](super::Spec::ask). The tool sends the request from the
/// socket it listens on, since a sender may answer to the request's source
/// address (iFacialMocap streams to the address the request came from).
#[derive(Clone, Copy, Debug)]
pub struct Ask {
    /// The sender's UDP port the request goes to (the phone's).
    pub port: u16,
    /// The request datagram, from the UDP ports we listen on (where the
    /// sender is to stream) and our name (a program name, ASCII).
    pub request: fn(ports: &[u16], name: &str) -> Vec<u8>,
    /// When the request goes out again.
    pub resend: Resend,
}

/// When a request goes out again after the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resend {
    /// Never: one request is enough.
    Once,
    /// Every period, frames or not: a sender that stops some time after the
    /// last request (VTube Studio's phone app).
    Every(Duration),
    /// After a period with neither a frame nor a request: a sender that may
    /// have been asleep, or a request lost (iFacialMocap).
    WhileSilent(Duration),
}

/// Which request is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Due {
    /// The first (or the first since [`Asking::restart`]).
    First,
    /// A resend.
    Again,
}

/// When to send a request: due at once, then as its [`Resend`] says. Times
/// are on the caller's clock (any origin, the same for every call).
#[derive(Clone, Copy, Debug)]
pub struct Asking {
    resend: Resend,
    last_send: Option<Duration>,
    last_frame: Option<Duration>,
}

impl Asking {
    /// Starts with the first request due at once.
    #[must_use]
    pub fn new(resend: Resend) -> Self {
        Self {
            resend,
            last_send: None,
            last_frame: None,
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) next has a request
    /// (`None`: never again).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Duration> {
        let Some(sent) = self.last_send else {
            return Some(Duration::ZERO);
        };
        match self.resend {
            Resend::Once => None,
            Resend::Every(p) => Some(sent.saturating_add(p)),
            Resend::WhileSilent(p) => {
                let quiet = self.last_frame.map_or(sent, |f| f.max(sent));
                Some(quiet.saturating_add(p))
            }
        }
    }

    /// The request due at `now`, if one is; it counts as sent.
    pub fn handle_timeout(&mut self, now: Duration) -> Option<Due> {
        let since = |t: Option<Duration>, p: Duration| t.is_none_or(|t| now.saturating_sub(t) >= p);
        let due = match (self.last_send, self.resend) {
            (None, _) => true,
            (Some(_), Resend::Once) => false,
            (last, Resend::Every(p)) => since(last, p),
            (last, Resend::WhileSilent(p)) => since(last, p) && since(self.last_frame, p),
        };
        if !due {
            return None;
        }
        let again = self.last_send.replace(now).is_some();
        Some(if again { Due::Again } else { Due::First })
    }

    /// A frame of the sender arrived at `now`.
    pub fn handle_frame(&mut self, now: Duration) {
        self.last_frame = Some(now);
    }

    /// The next request is due at once, as a first one (a connection to
    /// the sender dropped).
    pub fn restart(&mut self) {
        self.last_send = None;
    }
}

/// A receiver that answers a sender for it to keep streaming, in the place
/// of the program the sender is meant for (SlimeVR trackers stream only to
/// a server that answered their handshake and keeps sending heartbeats): a
/// registry row's [`Spec::answer`](super::Spec::answer). I/O-free: the tool
/// hands it what arrives and sends what it polls, from the socket the
/// datagram came to.
pub trait Answer: Send {
    /// Takes a datagram from `from` (any datagram of the protocol: the
    /// answerer picks what to answer).
    fn handle_datagram(&mut self, now: Duration, from: std::net::SocketAddr, datagram: &[u8]);
    /// Time passes: what is due (heartbeats) is queued.
    fn handle_timeout(&mut self, now: Duration);
    /// When [`Self::handle_timeout`] next has something to do.
    fn poll_timeout(&self) -> Option<Duration>;
    /// The next datagram to send, and where.
    fn poll_transmit(&mut self) -> Option<(std::net::SocketAddr, Vec<u8>)>;
}

/// Makes a protocol's [`Answer`] (a registry row's `answer`).
pub type AnswerOf = fn() -> Box<dyn Answer>;

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);
    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn every_period_resends_whatever_comes() {
        let mut a = Asking::new(Resend::Every(S));
        assert_eq!(a.poll_timeout(), Some(Duration::ZERO));
        assert_eq!(a.handle_timeout(Duration::ZERO), Some(Due::First));
        a.handle_frame(500 * MS);
        assert_eq!(a.poll_timeout(), Some(S));
        assert_eq!(a.handle_timeout(S - MS), None);
        assert_eq!(a.handle_timeout(S), Some(Due::Again));
        // A late wake-up sends once, and the period counts from then.
        assert_eq!(a.handle_timeout(3 * S + 100 * MS), Some(Due::Again));
        assert_eq!(a.handle_timeout(3 * S + 200 * MS), None);
        assert_eq!(a.poll_timeout(), Some(4 * S + 100 * MS));
    }

    #[test]
    fn while_silent_waits_for_a_quiet_period() {
        let mut a = Asking::new(Resend::WhileSilent(2 * S));
        assert_eq!(a.handle_timeout(Duration::ZERO), Some(Due::First));
        assert_eq!(a.handle_timeout(2 * S - MS), None);
        assert_eq!(a.handle_timeout(2 * S), Some(Due::Again));
        for k in 0..30 {
            let t = 3 * S + k * 100 * MS;
            a.handle_frame(t);
            assert_eq!(a.handle_timeout(t), None);
        }
        // The last frame came at 5.9 s.
        assert_eq!(a.poll_timeout(), Some(7900 * MS));
        assert_eq!(a.handle_timeout(7899 * MS), None);
        assert_eq!(a.handle_timeout(7900 * MS), Some(Due::Again));
    }

    #[test]
    fn once_is_once_until_restarted() {
        let mut a = Asking::new(Resend::Once);
        assert_eq!(a.handle_timeout(S), Some(Due::First));
        assert_eq!(a.poll_timeout(), None);
        assert_eq!(a.handle_timeout(100 * S), None);
        a.restart();
        assert_eq!(a.poll_timeout(), Some(Duration::ZERO));
        assert_eq!(a.handle_timeout(101 * S), Some(Due::First));
    }

    #[test]
    fn clocks_at_their_ends_do_not_panic() {
        for resend in [
            Resend::Every(Duration::MAX),
            Resend::WhileSilent(Duration::MAX),
            Resend::Every(Duration::ZERO),
        ] {
            let mut a = Asking::new(resend);
            assert_eq!(a.handle_timeout(Duration::MAX), Some(Due::First));
            a.handle_frame(Duration::MAX);
            let _ = a.poll_timeout();
            let _ = a.handle_timeout(Duration::ZERO);
        }
    }
}
