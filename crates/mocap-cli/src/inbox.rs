//! Listening sockets as a [`Feed`]: one read on the handler's own thread
//! ([`UdpFeed`]), or several as one ([`Inbox`]), each read on a thread of
//! its own, which stamps the arrival time and queues the datagram (bounded),
//! so the thread that handles datagrams (and draws a screen, in `mocap-top`)
//! never holds up receiving.
//!
//! Waking the handling thread for every datagram costs two context switches
//! a datagram, which is most of what a quiet live view spends. A handler
//! that only acts on its own clock (redraws, periodic records) asks for
//! [`Inbox::wake_on_deadline`]: the reading threads then wake it only when
//! the queue is filling, and it takes everything queued at once when its
//! wait ends. The feed says it is [`holding`](Feed::holding) such a batch,
//! so the run loop hands all of it over before the handler's next tick.

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{
    Arc, Condvar, Mutex, MutexGuard, PoisonError,
    atomic::{AtomicBool, AtomicU64, Ordering},
};
use std::thread;
use std::time::{Duration, Instant};

use crate::net;
use crate::runner::{Feed, Step, Stopped};

/// Datagrams waiting between the reading threads and the handler; past it a
/// reading thread drops the datagram and counts it ([`Inbox::dropped`]).
const QUEUE: usize = 16_384;

/// Their bytes, bounded too: a sender of the largest datagrams would fill
/// [`QUEUE`] with a gigabyte. 32 MiB hold the whole queue of 2 kB datagrams
/// (mocopi's are 1.6 kB).
const QUEUE_BYTES: usize = 32 << 20;

/// Queued datagrams at which a reading thread wakes a handler that asked
/// to be woken on its deadline: a quarter of the queue, so a flood is
/// taken in batches long before anything is dropped.
const FILLING: usize = QUEUE / 4;

/// How often an idle reading thread looks whether the inbox was dropped.
/// Nothing waits for it (the threads are detached), so it can be slow:
/// every wake-up of an idle tool is CPU a quiet rig pays for. A dropped
/// inbox's ports stay bound until then (a caller that binds them again
/// right away would find them taken).
const READER_TIMEOUT: Duration = Duration::from_millis(500);

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

/// A queued datagram: socket index, sender, arrival, bytes.
type Queued = (usize, SocketAddr, Instant, Vec<u8>);

/// What the reading threads and the handler share, under one lock.
#[derive(Debug, Default)]
struct Queue {
    items: VecDeque<Queued>,
    /// The payload bytes of `items`.
    bytes: usize,
    /// Reading threads still running; none left and nothing queued is the end.
    readers: usize,
    /// The handler is waiting on [`Shared::ready`] (a notify is needed).
    waiting: bool,
}

#[derive(Debug)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
    dropped: AtomicU64,
    /// Set when the inbox is dropped: the reading threads end at their next timeout.
    closed: AtomicBool,
    /// Wake the handler for every datagram (else only when the queue fills).
    eager: AtomicBool,
}

impl Queue {
    /// Queues `item` unless that would pass [`QUEUE`] or [`QUEUE_BYTES`].
    fn push(&mut self, item: Queued) -> bool {
        let bytes = self.bytes.saturating_add(item.3.len());
        if self.items.len() >= QUEUE || bytes > QUEUE_BYTES {
            return false;
        }
        self.bytes = bytes;
        self.items.push_back(item);
        true
    }

    fn pop(&mut self) -> Option<Queued> {
        let item = self.items.pop_front()?;
        self.bytes = self.bytes.saturating_sub(item.3.len());
        Some(item)
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A reading thread cannot panic while holding the lock (it only
        // pushes); if one ever did, the queue itself is still sound.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Listening sockets read on threads; see the module doc.
#[derive(Debug)]
pub struct Inbox {
    shared: Arc<Shared>,
    /// The batch taken from the queue, handed out one by one.
    batch: VecDeque<Queued>,
    held: Vec<u8>,
}

impl Inbox {
    /// Reads each of `sockets` (bound with [`net::bind_udp`]) on a thread
    /// until the inbox is dropped or a read fails. The handler is woken for
    /// every datagram (see [`wake_on_deadline`](Self::wake_on_deadline)).
    pub fn new(sockets: Vec<UdpSocket>) -> Self {
        Self::guarded(sockets, &crate::allow::Guard::default())
    }

    /// As [`Self::new`], the reading threads refusing the senders `guard`
    /// does not admit (`--allow`) before anything is queued: strangers
    /// cannot fill the queue and crowd out the senders allowed.
    pub fn guarded(sockets: Vec<UdpSocket>, guard: &crate::allow::Guard) -> Self {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                readers: sockets.len(),
                ..Queue::default()
            }),
            ready: Condvar::new(),
            dropped: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            eager: AtomicBool::new(true),
        });
        for (i, socket) in sockets.into_iter().enumerate() {
            let reader = Reader(Arc::clone(&shared));
            let guard = guard.clone();
            thread::spawn(move || read(i, &socket, &reader.0, &guard));
        }
        Self {
            shared,
            batch: VecDeque::new(),
            held: Vec::new(),
        }
    }

    /// Wakes the handler only when its wait ends (its deadline, or the run
    /// loop's poll) or when the queue is a quarter full, not for every
    /// datagram; it then takes all that is queued as one batch, which it
    /// [holds](Feed::holding) until handed out. Arrival times are still
    /// stamped on receipt. For handlers whose work is periodic: one that
    /// passes datagrams on must not wait.
    #[must_use]
    pub fn wake_on_deadline(self) -> Self {
        self.shared.eager.store(false, Ordering::Relaxed);
        self
    }

    /// Datagrams dropped because the handler fell `QUEUE` behind.
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }
}

/// A reading thread's share of the inbox: however the thread ends (a
/// failed read, or a panic), the handler learns that one reader fewer is
/// left, so the last one's end is the end of input.
struct Reader(Arc<Shared>);

impl Drop for Reader {
    fn drop(&mut self) {
        let mut q = self.0.lock();
        q.readers = q.readers.saturating_sub(1);
        drop(q);
        self.0.ready.notify_one();
    }
}

fn read(i: usize, socket: &UdpSocket, shared: &Shared, guard: &crate::allow::Guard) {
    let mut buf = vec![0u8; mocap_core::MAX_DATAGRAM];
    // Best effort: a socket without it still ends on its own timeout.
    let _ = socket.set_read_timeout(Some(READER_TIMEOUT));
    loop {
        match socket.recv_from(&mut buf) {
            Ok((_, from)) if !guard.admit(Some(from)) => {}
            Ok((n, from)) => {
                let item = (
                    i,
                    from,
                    Instant::now(),
                    buf.get(..n).unwrap_or_default().to_vec(),
                );
                let mut q = shared.lock();
                if !q.push(item) {
                    drop(q);
                    shared.dropped.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                let wake =
                    q.waiting && (shared.eager.load(Ordering::Relaxed) || q.items.len() >= FILLING);
                if wake {
                    q.waiting = false;
                }
                drop(q);
                if wake {
                    shared.ready.notify_one();
                }
            }
            Err(e) if net::recv_failure(&e) != net::RecvFailure::Fatal => {}
            Err(_) => break,
        }
        if shared.closed.load(Ordering::Relaxed) {
            break;
        }
    }
}

/// One UDP socket as a [`Feed`] that waits exactly as long as the run loop
/// asks (a mixing tick or a stream frame may be due sooner than the poll
/// interval): items are `(sender, payload)`.
#[derive(Debug)]
pub struct UdpFeed {
    socket: UdpSocket,
    buf: Vec<u8>,
    port_unreachable: u64,
    guard: crate::allow::Guard,
}

impl UdpFeed {
    /// Reads `socket` (bound through [`net::bind_udp`]).
    pub fn new(socket: UdpSocket) -> Self {
        Self {
            socket,
            buf: vec![0; mocap_core::MAX_DATAGRAM],
            port_unreachable: 0,
            guard: crate::allow::Guard::default(),
        }
    }

    /// Refuses datagrams from senders `guard` does not admit (`--allow`).
    pub fn guard_with(&mut self, guard: crate::allow::Guard) {
        self.guard = guard;
    }

    /// The sender check and what it refused.
    pub fn guard(&self) -> &crate::allow::Guard {
        &self.guard
    }

    /// Receives skipped because they only reported an ICMP "port
    /// unreachable" for a datagram sent from this socket (Windows).
    pub fn port_unreachable(&self) -> u64 {
        self.port_unreachable
    }
}

impl Feed for UdpFeed {
    type Item<'a> = (SocketAddr, &'a [u8]);

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Self::Item<'_>>> {
        use anyhow::Context as _;
        if !net::wait_readable(&self.socket, wait).context("failed to wait for input")? {
            return Ok(Step::Idle);
        }
        match self.socket.recv_from(&mut self.buf) {
            Ok((_, from)) if !self.guard.admit(Some(from)) => Ok(Step::Idle),
            Ok((n, from)) => Ok(Step::Item((from, self.buf.get(..n).unwrap_or_default()))),
            Err(e) => match net::recv_failure(&e) {
                net::RecvFailure::Idle => Ok(Step::Idle),
                net::RecvFailure::PortUnreachable => {
                    self.port_unreachable += 1;
                    Ok(Step::Idle)
                }
                net::RecvFailure::Fatal => Err(e).context("failed to receive"),
            },
        }
    }
}

/// Listening sockets for a handler that acts on every datagram: one socket
/// (the usual case) is read on the handler's own thread, so a datagram costs
/// no thread hand-off (a wake-up, and its delay); several go through an
/// [`Inbox`].
#[derive(Debug)]
pub enum Listeners {
    /// One socket, read where it is handled.
    One(UdpFeed),
    /// Several, a reading thread each.
    Many(Inbox),
}

impl Listeners {
    /// Reads `sockets` (bound with [`net::bind_udp`]).
    pub fn new(sockets: Vec<UdpSocket>) -> Self {
        Self::guarded(sockets, &crate::allow::Guard::default())
    }

    /// Reads `sockets`, refusing the senders `guard` does not admit where
    /// they are read: before the queue between several sockets' threads
    /// and the handler.
    pub fn guarded(mut sockets: Vec<UdpSocket>, guard: &crate::allow::Guard) -> Self {
        if sockets.len() == 1
            && let Some(socket) = sockets.pop()
        {
            let mut feed = UdpFeed::new(socket);
            feed.guard_with(guard.clone());
            return Self::One(feed);
        }
        Self::Many(Inbox::guarded(sockets, guard))
    }

    /// Datagrams dropped because the handler fell behind (several sockets
    /// only: one socket drops nothing).
    pub fn dropped(&self) -> u64 {
        match self {
            Self::One(_) => 0,
            Self::Many(inbox) => inbox.dropped(),
        }
    }
}

impl Feed for Listeners {
    type Item<'a> = Received<'a>;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Received<'_>>> {
        Ok(match self {
            Self::One(feed) => match feed.next(wait)? {
                Step::Item((from, bytes)) => Step::Item(Received {
                    socket: 0,
                    from,
                    at: Instant::now(),
                    bytes,
                }),
                Step::Idle => Step::Idle,
                Step::End(why) => Step::End(why),
            },
            Self::Many(inbox) => inbox.next(wait)?,
        })
    }

    fn holding(&self) -> bool {
        match self {
            Self::One(_) => false,
            Self::Many(inbox) => inbox.holding(),
        }
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::Relaxed);
    }
}

impl Inbox {
    /// Takes what is queued into the batch (all of it for a deadline
    /// handler, else the oldest one, as a channel would), waiting up to
    /// `wait` when nothing is. `false`: every reading thread has ended and
    /// nothing is left.
    fn refill(&mut self, wait: Duration) -> bool {
        let shared = Arc::clone(&self.shared);
        let mut q = shared.lock();
        if q.items.is_empty() && q.readers > 0 {
            q.waiting = true;
            q = shared
                .ready
                .wait_timeout(q, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            q.waiting = false;
        }
        if self.shared.eager.load(Ordering::Relaxed) {
            // One at a time: the queue stays the one bound on what waits, and
            // the run loop ticks between datagrams as before.
            self.batch.extend(q.pop());
        } else {
            // Swapped, not copied: the emptied batch keeps its capacity for
            // the readers' next pushes. What waits is then at most twice the
            // queue (the batch being handed out, and the queue refilling).
            std::mem::swap(&mut self.batch, &mut q.items);
            q.bytes = 0;
        }
        !(self.batch.is_empty() && q.readers == 0)
    }
}

impl Feed for Inbox {
    type Item<'a> = Received<'a>;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Received<'_>>> {
        if self.batch.is_empty() && !self.refill(wait) {
            return Ok(Step::End(Stopped::EndOfInput));
        }
        Ok(match self.batch.pop_front() {
            Some((socket, from, at, bytes)) => {
                self.held = bytes;
                Step::Item(Received {
                    socket,
                    from,
                    at,
                    bytes: &self.held,
                })
            }
            None => Step::Idle,
        })
    }

    fn holding(&self) -> bool {
        !self.batch.is_empty() && !self.shared.eager.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_of_every_socket_come_with_their_index() {
        let a = net::bind_udp("127.0.0.1:0".parse().unwrap(), Some(crate::runner::POLL)).unwrap();
        let b = net::bind_udp("127.0.0.1:0".parse().unwrap(), Some(crate::runner::POLL)).unwrap();
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

    /// Issue 58: with several sockets `--allow` was applied after the
    /// queue, so a stranger's flood could fill it and crowd out the
    /// performer. Now the reading threads refuse strangers: only the
    /// allowed sender's datagrams are queued, and the refusals counted.
    #[test]
    fn strangers_are_refused_before_the_queue() {
        let bind =
            || net::bind_udp("127.0.0.1:0".parse().unwrap(), Some(crate::runner::POLL)).unwrap();
        let (a, b) = (bind(), bind());
        let (pa, pb) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        // The performer on 127.0.0.2, strangers on 127.0.0.1.
        let guard = crate::allow::Guard::only(
            vec![crate::allow::Cidr::parse("127.0.0.2/32").unwrap()],
            None,
        );
        let mut feed = Listeners::guarded(vec![a, b], &guard);
        let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
        let performer = UdpSocket::bind("127.0.0.2:0").unwrap();
        for _ in 0..20_000 {
            let _ = stranger.send_to(b"flood", pa);
        }
        performer.send_to(b"pose", pb).unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        let mut got = Vec::new();
        while got.is_empty() && Instant::now() < until {
            if let Step::Item(r) = feed.next(Duration::from_millis(100)).unwrap() {
                got.push(r.bytes.to_vec());
            }
        }
        assert_eq!(got, [b"pose".to_vec()], "nothing of the flood was queued");
        assert_eq!(feed.dropped(), 0);
        assert!(guard.refused() > 0);
    }

    #[test]
    fn one_listener_is_read_in_place_and_several_through_an_inbox() {
        let bind =
            || net::bind_udp("127.0.0.1:0".parse().unwrap(), Some(crate::runner::POLL)).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        for n in [1, 2] {
            let sockets: Vec<UdpSocket> = (0..n).map(|_| bind()).collect();
            let to = sockets[n - 1].local_addr().unwrap();
            let mut feed = Listeners::new(sockets);
            assert_eq!(matches!(feed, Listeners::One(_)), n == 1);
            assert_eq!(feed.dropped(), 0);
            let sent = Instant::now();
            tx.send_to(b"last socket", to).unwrap();
            let until = Instant::now() + Duration::from_secs(10);
            let r = loop {
                assert!(Instant::now() < until, "nothing read from {n} sockets");
                if let Step::Item(r) = feed.next(Duration::from_millis(100)).unwrap() {
                    break (r.socket, r.from, r.at >= sent, r.bytes.to_vec());
                }
            };
            assert_eq!(
                r,
                (
                    n - 1,
                    tx.local_addr().unwrap(),
                    true,
                    b"last socket".to_vec()
                )
            );
            assert!(!feed.holding());
            assert_eq!(feed.dropped(), 0);
        }
    }

    #[test]
    fn the_queue_is_bounded_in_datagrams_and_in_bytes() {
        let item = |n: usize| {
            (
                0,
                "127.0.0.1:1".parse().unwrap(),
                Instant::now(),
                vec![0u8; n],
            )
        };
        let mut q = Queue::default();
        // The largest datagrams: the byte bound comes first.
        let big = mocap_core::MAX_DATAGRAM;
        let mut queued = 0;
        while q.push(item(big)) {
            queued += 1;
        }
        assert_eq!(queued, QUEUE_BYTES / big);
        assert!(q.bytes <= QUEUE_BYTES);
        assert!(q.push(item(QUEUE_BYTES - q.bytes)), "what still fits");
        assert!(!q.push(item(1)));
        // Taking one out makes room for as many bytes.
        let out = q.pop().unwrap();
        assert!(q.push(item(out.3.len())));
        // Small datagrams: the count bound.
        let mut q = Queue::default();
        while q.push(item(100)) {}
        assert_eq!(q.items.len(), QUEUE);
        while q.pop().is_some() {}
        assert_eq!(q.bytes, 0);
    }

    /// Blocks until the handler thread is waiting on the inbox, so a test
    /// sends while it waits, not before.
    fn until_waiting(shared: &Shared) {
        let until = Instant::now() + Duration::from_secs(10);
        while !shared.lock().waiting {
            assert!(Instant::now() < until, "the handler never waited");
            thread::sleep(Duration::from_millis(1));
        }
    }

    fn lazy_inbox() -> (Inbox, SocketAddr, UdpSocket) {
        let a = net::bind_udp("127.0.0.1:0".parse().unwrap(), Some(crate::runner::POLL)).unwrap();
        let to = a.local_addr().unwrap();
        let inbox = Inbox::new(vec![a]).wake_on_deadline();
        (inbox, to, UdpSocket::bind("127.0.0.1:0").unwrap())
    }

    #[test]
    fn a_deadline_handler_is_not_woken_by_a_datagram_but_gets_its_arrival_time() {
        let (mut inbox, to, tx) = lazy_inbox();
        let start = Instant::now();
        let wait = Duration::from_millis(400);
        let shared = Arc::clone(&inbox.shared);
        let sender = thread::spawn(move || {
            until_waiting(&shared);
            tx.send_to(b"early", to).unwrap();
        });
        let (at, returned) = loop {
            let left = (start + wait).saturating_duration_since(Instant::now());
            if let Step::Item(r) = inbox.next(left).unwrap() {
                break (r.at, Instant::now());
            }
            assert!(start.elapsed() < Duration::from_secs(10), "never arrived");
        };
        sender.join().unwrap();
        // Handed over when the wait ended, not when it arrived; stamped on arrival.
        assert!(
            returned >= start + wait,
            "woken early: {:?}",
            returned - start
        );
        assert!(at < start + Duration::from_millis(300), "{:?}", at - start);
    }

    #[test]
    fn a_filling_queue_wakes_a_deadline_handler_and_comes_as_one_held_batch() {
        let (mut inbox, to, tx) = lazy_inbox();
        let start = Instant::now();
        let n = FILLING + 10;
        let shared = Arc::clone(&inbox.shared);
        let sender = thread::spawn(move || {
            until_waiting(&shared);
            for i in 0..n {
                tx.send_to(&(i as u32).to_be_bytes(), to).unwrap();
                // Paced a little, so the kernel's buffer never overflows.
                if i % 256 == 0 {
                    thread::sleep(Duration::from_millis(1));
                }
            }
        });
        // Long enough that only the queue filling up can end it in time.
        let first = loop {
            match inbox.next(Duration::from_secs(30)).unwrap() {
                Step::Item(r) => break u32::from_be_bytes(r.bytes.try_into().unwrap()),
                _ => assert!(start.elapsed() < Duration::from_secs(20), "not woken"),
            }
        };
        assert!(start.elapsed() < Duration::from_secs(20));
        assert_eq!(first, 0);
        assert!(inbox.holding(), "the rest of the batch is held");
        let mut next = 1;
        while inbox.holding() {
            if let Step::Item(r) = inbox.next(Duration::ZERO).unwrap() {
                assert_eq!(u32::from_be_bytes(r.bytes.try_into().unwrap()), next);
                next += 1;
            }
        }
        assert!(next as usize >= FILLING, "one batch of {next}");
        sender.join().unwrap();
        assert_eq!(inbox.dropped(), 0);
    }
}
