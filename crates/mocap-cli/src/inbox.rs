//! Several listening sockets as one [`Feed`]: each is read on a thread of
//! its own, which stamps the arrival time and hands the datagram over a
//! bounded channel, so the thread that handles datagrams (and draws a
//! screen, in `mocap-top`) never holds up receiving.

use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, Ordering},
};
use std::thread;
use std::time::{Duration, Instant};

use crate::{Feed, Step, Stopped, net};

/// Datagrams waiting between the reading threads and the handler; past it a
/// reading thread drops the datagram and counts it ([`Inbox::dropped`]).
const QUEUE: usize = 16_384;

/// One datagram from an [`Inbox`].
#[derive(Clone, Copy, Debug)]
pub struct Received<'a> {
    /// Index of the socket it arrived on, in the order given.
    pub socket: usize,
    /// The sender.
    pub from: SocketAddr,
    /// When the reading thread received it.
    pub at: Instant,
    /// The payload.
    pub bytes: &'a [u8],
}

/// Listening sockets read on threads; see the module doc.
#[derive(Debug)]
pub struct Inbox {
    rx: Receiver<(usize, SocketAddr, Instant, Vec<u8>)>,
    held: Vec<u8>,
    dropped: Arc<AtomicU64>,
    /// Set when the inbox is dropped: the reading threads end at their next timeout.
    closed: Arc<AtomicBool>,
}

impl Inbox {
    /// Reads each of `sockets` (bound with [`net::bind_udp`] and a read
    /// timeout) on a thread until the inbox is dropped or a read fails.
    pub fn new(sockets: Vec<UdpSocket>) -> Self {
        let (tx, rx) = sync_channel(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let closed = Arc::new(AtomicBool::new(false));
        for (i, socket) in sockets.into_iter().enumerate() {
            let tx = tx.clone();
            let dropped = Arc::clone(&dropped);
            let closed = Arc::clone(&closed);
            thread::spawn(move || read(i, &socket, &tx, &dropped, &closed));
        }
        Self {
            rx,
            held: Vec::new(),
            dropped,
            closed,
        }
    }

    /// Datagrams dropped because the handler fell `QUEUE` behind.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

fn read(
    i: usize,
    socket: &UdpSocket,
    tx: &SyncSender<(usize, SocketAddr, Instant, Vec<u8>)>,
    dropped: &AtomicU64,
    closed: &AtomicBool,
) {
    let mut buf = vec![0u8; mocap_core::MAX_DATAGRAM];
    loop {
        match socket.recv_from(&mut buf) {
            Ok((n, from)) => {
                let item = (
                    i,
                    from,
                    Instant::now(),
                    buf.get(..n).unwrap_or_default().to_vec(),
                );
                match tx.try_send(item) {
                    Ok(()) => {}
                    Err(TrySendError::Full(_)) => {
                        dropped.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(TrySendError::Disconnected(_)) => break,
                }
            }
            Err(e) if net::recv_failure(&e) != net::RecvFailure::Fatal => {
                if closed.load(Ordering::Relaxed) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.closed.store(true, Ordering::Relaxed);
    }
}

impl Feed for Inbox {
    type Item<'a> = Received<'a>;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Received<'_>>> {
        Ok(match self.rx.recv_timeout(wait) {
            Ok((socket, from, at, bytes)) => {
                self.held = bytes;
                Step::Item(Received {
                    socket,
                    from,
                    at,
                    bytes: &self.held,
                })
            }
            Err(RecvTimeoutError::Timeout) => Step::Idle,
            Err(RecvTimeoutError::Disconnected) => Step::End(Stopped::EndOfInput),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_of_every_socket_come_with_their_index() {
        let a = net::bind_udp("127.0.0.1:0".parse().unwrap(), Some(crate::POLL)).unwrap();
        let b = net::bind_udp("127.0.0.1:0".parse().unwrap(), Some(crate::POLL)).unwrap();
        let (pa, pb) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let mut inbox = Inbox::new(vec![a, b]);
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.send_to(b"to a", pa).unwrap();
        tx.send_to(b"to b", pb).unwrap();
        let mut got = Vec::new();
        let until = Instant::now() + Duration::from_secs(10);
        while got.len() < 2 && Instant::now() < until {
            if let Step::Item(r) = inbox.next(Duration::from_millis(100)).unwrap() {
                assert_eq!(r.from, tx.local_addr().unwrap());
                got.push((r.socket, r.bytes.to_vec()));
            }
        }
        got.sort();
        assert_eq!(got, [(0, b"to a".to_vec()), (1, b"to b".to_vec())]);
        assert_eq!(inbox.dropped(), 0);
    }
}
