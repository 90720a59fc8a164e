//! The phone's TCP connection as the run loop's feed: one peer at a time on
//! a listener, the newest connection winning (a phone that reconnects must
//! not wait for the dead one to time out), or the first for a transfer.

use std::io::{self, Read as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use mocap_cli::accept::Accept;
use mocap_cli::allow::Guard;
use mocap_cli::net;
use mocap_cli::runner::{Feed, POLL, Step};

/// What a [`TcpFeed`] produced.
#[derive(Debug)]
pub(crate) enum Tcp<'a> {
    /// A peer connected (`replaced`: an older connection was closed for it).
    Connected {
        /// Connections so far, this one included.
        id: u64,
        /// The peer.
        peer: SocketAddr,
        /// Whether an older connection was dropped.
        replaced: bool,
    },
    /// Bytes from the connection.
    Data {
        /// The peer.
        peer: SocketAddr,
        /// What one read returned.
        bytes: &'a [u8],
    },
    /// The connection ended: closed by the peer (`error: None`) or failed.
    Closed {
        /// Its id.
        id: u64,
        /// The peer.
        peer: SocketAddr,
        /// Why, when it failed.
        error: Option<io::Error>,
    },
}

/// One peer at a time on a listener: a new connection replaces the old one
/// (a phone that reconnects must not wait for the dead one to time out).
#[derive(Debug)]
pub(crate) struct TcpFeed {
    accept: Accept,
    conn: Option<(TcpStream, SocketAddr, u64)>,
    connections: u64,
    buf: Vec<u8>,
    /// Keep the first connection: later ones wait in the backlog, unread.
    first_wins: bool,
    /// Who may connect (`--allow`); others are closed unread.
    guard: Guard,
}

impl TcpFeed {
    /// Listens on `listener` (from [`net::listen_tcp`]).
    pub(crate) fn new(listener: TcpListener) -> Self {
        Self {
            accept: Accept::new(listener),
            conn: None,
            connections: 0,
            buf: vec![0; 64 * 1024],
            first_wins: false,
            guard: Guard::default(),
        }
    }

    /// Closes connections from peers `guard` does not admit, unread (and
    /// without replacing the connection there is).
    #[must_use]
    pub(crate) fn guarded(mut self, guard: Guard) -> Self {
        self.guard = guard;
        self
    }

    /// Keeps the connection it has: later connections are not accepted while
    /// it lasts (a transfer that a stray connection must not cut short).
    #[must_use]
    pub(crate) fn first_wins(mut self) -> Self {
        self.first_wins = true;
        self
    }

    /// Whether a peer is connected.
    #[cfg(test)]
    pub(crate) fn is_connected(&self) -> bool {
        self.conn.is_some()
    }
}

impl Feed for TcpFeed {
    type Item<'a> = Tcp<'a>;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Tcp<'_>>> {
        // With a connection, only look for a newer one; without, wait for one.
        let accept_wait = if self.conn.is_some() {
            Duration::ZERO
        } else {
            wait
        };
        let accepted = if self.conn.is_some() && self.first_wins {
            None
        } else {
            match self.accept.next(accept_wait)? {
                Step::Item(c) => Some(c),
                Step::Idle | Step::End(_) => None,
            }
        };
        // A refused peer is closed and the current connection still read, so
        // a stranger's connect loop cannot starve the phone's stream.
        let accepted = accepted.filter(|(_, peer)| self.guard.admit(Some(*peer)));
        if let Some((s, peer)) = accepted {
            // Reads wait at most a poll interval, so Ctrl-C and newer connections are seen.
            s.set_read_timeout(Some(POLL))?;
            self.connections += 1;
            let id = self.connections;
            let replaced = self.conn.replace((s, peer, id)).is_some();
            return Ok(Step::Item(Tcp::Connected { id, peer, replaced }));
        }
        let Some((stream, peer, id)) = &mut self.conn else {
            return Ok(Step::Idle);
        };
        let (peer, id) = (*peer, *id);
        let error = match stream.read(&mut self.buf) {
            Ok(0) => None,
            Ok(n) => {
                return Ok(Step::Item(Tcp::Data {
                    peer,
                    bytes: self.buf.get(..n).unwrap_or_default(),
                }));
            }
            Err(e) if net::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                return Ok(Step::Idle);
            }
            Err(e) => Some(e),
        };
        self.conn = None;
        Ok(Step::Item(Tcp::Closed { id, peer, error }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn listener() -> (TcpListener, SocketAddr) {
        let l = net::listen_tcp(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let a = l.local_addr().unwrap();
        (l, a)
    }

    /// Pulls until something that is not idle, within a bound.
    fn next_item(feed: &mut TcpFeed) -> String {
        next_within(feed, 200)
    }

    fn next_within(feed: &mut TcpFeed, tries: u32) -> String {
        for _ in 0..tries {
            match feed.next(Duration::from_millis(10)).unwrap() {
                Step::Item(Tcp::Connected { id, replaced, .. }) => {
                    return format!("connected {id} {replaced}");
                }
                Step::Item(Tcp::Data { bytes, .. }) => {
                    return format!("data {}", String::from_utf8_lossy(bytes));
                }
                Step::Item(Tcp::Closed { id, error, .. }) => {
                    return format!("closed {id} {}", error.is_some());
                }
                Step::Idle => {}
                Step::End(why) => return format!("end {why}"),
            }
        }
        "nothing".into()
    }

    #[test]
    fn the_newest_connection_wins_and_bytes_come_from_it() {
        let (l, at) = listener();
        let mut feed = TcpFeed::new(l);
        assert_eq!(next_within(&mut TcpFeed::new(listener().0), 5), "nothing");
        let mut first = TcpStream::connect(at).unwrap();
        assert_eq!(next_item(&mut feed), "connected 1 false");
        first.write_all(b"one").unwrap();
        assert_eq!(next_item(&mut feed), "data one");
        let mut second = TcpStream::connect(at).unwrap();
        assert_eq!(next_item(&mut feed), "connected 2 true");
        // The old connection is no longer read.
        first.write_all(b"old").unwrap();
        second.write_all(b"two").unwrap();
        assert_eq!(next_item(&mut feed), "data two");
        drop(second);
        assert_eq!(next_item(&mut feed), "closed 2 false");
        assert!(!feed.is_connected());
    }

    #[test]
    fn first_wins_keeps_reading_the_first_connection() {
        let (l, at) = listener();
        let mut feed = TcpFeed::new(l).first_wins();
        let mut first = TcpStream::connect(at).unwrap();
        assert_eq!(next_item(&mut feed), "connected 1 false");
        let mut stray = TcpStream::connect(at).unwrap();
        stray.write_all(b"stray").unwrap();
        first.write_all(b"one").unwrap();
        assert_eq!(next_item(&mut feed), "data one");
        drop(first);
        assert_eq!(next_item(&mut feed), "closed 1 false");
        // Then the queued one.
        assert_eq!(next_item(&mut feed), "connected 2 false");
        assert_eq!(next_item(&mut feed), "data stray");
    }
}
