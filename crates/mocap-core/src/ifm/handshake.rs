//! The iFacialMocap start handshake, I/O-free: when to send the start
//! command to the phone and when to send it again, and which TCP connection
//! is the phone's. Events and `now` in, [`Action`]s out; the tool owns the
//! sockets.
//!
//! - UDP: the start command goes out at once; while no frame has come for
//!   `keepalive`, it goes out again every `keepalive` (a phone that was
//!   asleep, or a datagram lost).
//! - TCP: while no connection is up, the start command goes out at once and
//!   again every `keepalive`; when one drops, at once. A phone that
//!   reconnects opens a new connection while the old one may linger
//!   silently: the newest connection wins and the old one is dropped.
//! - Stopping a TCP stream sends the stop command.

use std::collections::VecDeque;
use std::time::Duration;

use super::Command;
use crate::protocol::{Asking, Due, Resend};

/// How frames arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// One datagram per frame.
    Udp,
    /// The phone connects to us.
    Tcp,
}

/// A TCP connection, as the tool numbers them.
pub type ConnId = u64;

/// What the handshake asks of the tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Send `command` to the phone; `again` when it is a resend.
    Send {
        /// The command.
        command: Command,
        /// A resend (nothing came after the last one).
        again: bool,
    },
    /// Close this connection: a newer one took its place.
    Drop(ConnId),
}

/// The handshake's state; see the module documentation.
#[derive(Clone, Debug)]
pub struct Handshake {
    transport: Transport,
    start: Command,
    /// When the start command is due: every registry protocol that must be
    /// asked times its requests so ([`crate::protocol::Asking`]).
    asking: Asking,
    conn: Option<ConnId>,
    actions: VecDeque<Action>,
}

impl Handshake {
    /// Starts: the start command is due at once.
    pub fn new(transport: Transport, start: Command, keepalive: Duration, now: Duration) -> Self {
        let resend = match transport {
            Transport::Udp => Resend::WhileSilent(keepalive),
            // Frames do not keep a TCP phone asked; being connected does.
            Transport::Tcp => Resend::Every(keepalive),
        };
        let mut h = Self {
            transport,
            start,
            asking: Asking::new(resend),
            conn: None,
            actions: VecDeque::new(),
        };
        h.handle_timeout(now);
        h
    }

    /// The next thing to do.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// The connection that is the phone's, if one is up.
    pub fn connection(&self) -> Option<ConnId> {
        self.conn
    }

    /// Whether the phone is connected and needs no command.
    fn connected(&self) -> bool {
        self.transport == Transport::Tcp && self.conn.is_some()
    }

    /// When [`Self::handle_timeout`] may have something to send.
    pub fn poll_timeout(&self) -> Option<Duration> {
        // A connected phone needs nothing until it drops, whatever was sent
        // before: checked first, so a reconnect after a drop cannot leave a
        // deadline in the past that the run loop would wake for forever.
        if self.connected() {
            return None;
        }
        self.asking.poll_timeout()
    }

    /// Sends the start command if it is due.
    pub fn handle_timeout(&mut self, now: Duration) {
        if self.connected() {
            return;
        }
        if let Some(due) = self.asking.handle_timeout(now) {
            self.actions.push_back(Action::Send {
                command: self.start,
                again: due == Due::Again,
            });
        }
    }

    /// A frame arrived.
    pub fn handle_frame(&mut self, now: Duration) {
        self.asking.handle_frame(now);
    }

    /// The phone connected (TCP). The newest connection wins.
    pub fn handle_connected(&mut self, conn: ConnId) {
        if let Some(old) = self.conn.replace(conn) {
            self.actions.push_back(Action::Drop(old));
        }
    }

    /// A connection ended (TCP). When it was the phone's, the start command
    /// is due again at once.
    pub fn handle_disconnected(&mut self, conn: ConnId) {
        if self.conn == Some(conn) {
            self.conn = None;
            self.asking.restart();
        }
    }

    /// Stopping: a TCP stream gets the stop command.
    pub fn stop(&mut self) {
        if self.transport == Transport::Tcp {
            self.actions.push_back(Action::Send {
                command: Command::StopTcp,
                again: false,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);
    const START: Command = Command::StartUdp {
        version: crate::ifm::Version::V1,
    };

    fn drain(h: &mut Handshake) -> Vec<Action> {
        std::iter::from_fn(|| h.poll_action()).collect()
    }

    fn send(again: bool) -> Action {
        Action::Send {
            command: START,
            again,
        }
    }

    /// Found by the `ifm_handshake` fuzz target: after the phone's
    /// connection dropped and a new one came before the next timeout,
    /// `poll_timeout` said "now" for as long as the new one stayed up,
    /// though nothing was due (a loop waiting on it would spin).
    #[test]
    fn tcp_reconnect_before_resend_needs_no_wake() {
        let start = Command::StartTcp {
            version: crate::ifm::Version::V1,
        };
        let mut h = Handshake::new(Transport::Tcp, start, 2 * S, Duration::ZERO);
        h.handle_connected(1);
        h.handle_disconnected(1);
        h.handle_connected(2);
        drain(&mut h);
        assert_eq!(h.poll_timeout(), None);
        h.handle_timeout(S);
        assert!(drain(&mut h).is_empty());
    }

    #[test]
    fn udp_resends_while_no_frame_comes() {
        let mut h = Handshake::new(Transport::Udp, START, 2 * S, Duration::ZERO);
        assert_eq!(drain(&mut h), [send(false)]);
        assert_eq!(h.poll_timeout(), Some(2 * S));
        h.handle_timeout(2 * S - Duration::from_millis(1));
        assert!(drain(&mut h).is_empty());
        h.handle_timeout(2 * S);
        assert_eq!(drain(&mut h), [send(true)]);
        // Frames keep it quiet, however long.
        for k in 0..50 {
            h.handle_frame(3 * S + k * Duration::from_millis(100));
            h.handle_timeout(3 * S + k * Duration::from_millis(100));
        }
        assert!(drain(&mut h).is_empty());
        // Silence after the last frame (at 7.9 s): again after keepalive.
        assert_eq!(h.poll_timeout(), Some(Duration::from_millis(9900)));
        h.handle_timeout(Duration::from_millis(9899));
        assert!(drain(&mut h).is_empty());
        h.handle_timeout(Duration::from_millis(9900));
        assert_eq!(drain(&mut h), [send(true)]);
    }

    #[test]
    fn tcp_newest_connection_wins_and_a_drop_resends_at_once() {
        let start = Command::StartTcp {
            version: crate::ifm::Version::V2,
        };
        let mut h = Handshake::new(Transport::Tcp, start, 2 * S, Duration::ZERO);
        assert_eq!(
            drain(&mut h),
            [Action::Send {
                command: start,
                again: false
            }]
        );
        h.handle_timeout(2 * S);
        assert_eq!(drain(&mut h).len(), 1, "resent while nobody connects");
        h.handle_connected(1);
        assert_eq!(h.poll_timeout(), None);
        h.handle_timeout(10 * S);
        assert!(drain(&mut h).is_empty(), "connected: nothing to send");
        // The phone reconnects: the old connection goes.
        h.handle_connected(2);
        assert_eq!(drain(&mut h), [Action::Drop(1)]);
        assert_eq!(h.connection(), Some(2));
        // The old one ending changes nothing; the current one ending resends.
        h.handle_disconnected(1);
        assert_eq!(h.poll_timeout(), None);
        h.handle_disconnected(2);
        assert_eq!(h.poll_timeout(), Some(Duration::ZERO));
        h.handle_timeout(11 * S);
        assert_eq!(
            drain(&mut h),
            [Action::Send {
                command: start,
                again: false
            }]
        );
        h.stop();
        assert_eq!(
            drain(&mut h),
            [Action::Send {
                command: Command::StopTcp,
                again: false
            }]
        );
    }
}
