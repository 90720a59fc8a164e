//! TCP inputs for the run loop: connections as they are accepted, and one
//! connection's bytes (the newest wins).

use std::io::{self, Read as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use anyhow::Context as _;

use super::{Feed, POLL, Step};
use crate::net;

/// Connections, handed over as they are accepted. Failed accepts never end
/// the feed: a connection that died while queued is skipped, and running out
/// of descriptors or memory is waited out (the connection stays queued).
#[derive(Debug)]
pub struct Accept {
    listener: TcpListener,
}

impl Accept {
    /// Accepts on `listener` (from [`net::listen_tcp`]).
    pub fn new(listener: TcpListener) -> Self {
        Self { listener }
    }

    fn accept(&self, wait: Duration) -> anyhow::Result<Option<(TcpStream, SocketAddr)>> {
        if !net::wait_acceptable(&self.listener, wait).context("failed to wait for a connection")? {
            return Ok(None);
        }
        match self.listener.accept() {
            Ok((s, peer)) => {
                // Accepted sockets may inherit non-blocking mode; readers want timeouts.
                s.set_nonblocking(false)?;
                Ok(Some((s, peer)))
            }
            // Nothing there after all, or a peer that gave up while queued
            // (Linux also reports its network errors here: retry, as accept(2) says).
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::Interrupted
                        | io::ErrorKind::ConnectionAborted
                        | io::ErrorKind::ConnectionReset
                        | io::ErrorKind::NetworkUnreachable
                        | io::ErrorKind::HostUnreachable
                        | io::ErrorKind::NetworkDown
                        | io::ErrorKind::TimedOut
                ) || e.raw_os_error().is_some_and(is_transient_accept_errno) =>
            {
                Ok(None)
            }
            // Out of descriptors or memory: the listener stays readable, so
            // wait a turn rather than spin, and try again.
            Err(_) => {
                std::thread::sleep(wait.min(POLL));
                Ok(None)
            }
        }
    }
}

/// Errors accept(2) passes on from a connection that is already gone
/// (EPROTO, ENOPROTOOPT, EHOSTDOWN, ENONET, EOPNOTSUPP on Linux).
fn is_transient_accept_errno(code: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        use nix::errno::Errno;
        [
            Errno::EPROTO,
            Errno::ENOPROTOOPT,
            Errno::EHOSTDOWN,
            Errno::ENONET,
            Errno::EOPNOTSUPP,
        ]
        .contains(&Errno::from_raw(code))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = code;
        false
    }
}

impl Feed for Accept {
    type Item<'a> = (TcpStream, SocketAddr);

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<(TcpStream, SocketAddr)>> {
        Ok(match self.accept(wait)? {
            Some(c) => Step::Item(c),
            None => Step::Idle,
        })
    }
}

/// What a [`TcpFeed`] produced.
#[derive(Debug)]
pub enum Tcp<'a> {
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
pub struct TcpFeed {
    accept: Accept,
    conn: Option<(TcpStream, SocketAddr, u64)>,
    connections: u64,
    buf: Vec<u8>,
    /// Keep the first connection: later ones wait in the backlog, unread.
    first_wins: bool,
    /// Who may connect (`--allow`); others are closed unread.
    guard: super::Guard,
}

impl TcpFeed {
    /// Listens on `listener` (from [`net::listen_tcp`]).
    pub fn new(listener: TcpListener) -> Self {
        Self {
            accept: Accept::new(listener),
            conn: None,
            connections: 0,
            buf: vec![0; 64 * 1024],
            first_wins: false,
            guard: super::Guard::default(),
        }
    }

    /// Closes connections from peers `guard` does not admit, unread (and
    /// without replacing the connection there is).
    #[must_use]
    pub fn guarded(mut self, guard: super::Guard) -> Self {
        self.guard = guard;
        self
    }

    /// Keeps the connection it has: later connections are not accepted while
    /// it lasts (a transfer that a stray connection must not cut short).
    #[must_use]
    pub fn first_wins(mut self) -> Self {
        self.first_wins = true;
        self
    }

    /// Whether a peer is connected.
    pub fn is_connected(&self) -> bool {
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
            self.accept.accept(accept_wait)?
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

    #[test]
    fn accept_hands_connections_over() {
        let (l, at) = listener();
        let mut feed = Accept::new(l);
        let _c = TcpStream::connect(at).unwrap();
        let mut got = None;
        for _ in 0..200 {
            if let Step::Item((_, peer)) = feed.next(Duration::from_millis(10)).unwrap() {
                got = Some(peer);
                break;
            }
        }
        assert_eq!(got.map(|p| p.ip()), Some(at.ip()));
    }
}
