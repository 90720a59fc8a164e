//! TCP connections as the run loop's feed ([`Accept`]): handed over as they
//! are accepted (motion-stream's server, ifm-handshake's phone feed).

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use anyhow::Context as _;

use crate::net;
use crate::runner::{Feed, POLL, Step};

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

#[cfg(test)]
mod tests {
    use super::*;

    fn listener() -> (TcpListener, SocketAddr) {
        let l = net::listen_tcp(SocketAddr::from(([127, 0, 0, 1], 0))).unwrap();
        let a = l.local_addr().unwrap();
        (l, a)
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
