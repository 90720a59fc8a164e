//! One datagram sent and counted, the same way by whichever thread sends
//! it: claim it (under `--hedge`, the first thread to get there wins), wait
//! for the send of the one before (order is kept), send, mark it sent, and
//! count it with its lateness. The main thread (replay.rs) and the second
//! thread (hedge.rs) both call [`send_claimed`]; neither imports the other.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::lateness::Lateness;

/// No claim is possible any more: the run is over.
const CLOSED: u64 = u64::MAX;

/// The longest a sender waits for the other thread to finish sending the
/// datagram before its own (a stalled vCPU can hold it for a few hundred
/// ms): order is worth more than time here, but a lost thread must not stop
/// the other for good.
const TURN_LIMIT: Duration = Duration::from_secs(1);
/// Spin this long for the other thread's send, then yield the CPU.
const TURN_SPIN: Duration = Duration::from_micros(50);

/// Who sends datagram `seq`: the first to move `next` from `seq` to
/// `seq + 1`. Datagrams are numbered in playing order from 0. `done` counts
/// the datagrams whose send call has returned, so that a sender can wait
/// for the other thread's send of the one before (order is kept).
#[derive(Debug, Default)]
pub(crate) struct Claims {
    next: AtomicU64,
    done: AtomicU64,
}

impl Claims {
    /// Claims datagram `seq`; `false` when someone else already has (or the
    /// run is over).
    pub(crate) fn claim(&self, seq: u64) -> bool {
        self.next
            .compare_exchange(seq, seq + 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Waits until every datagram before `seq` is out; `false` if that
    /// took longer than `TURN_LIMIT` (the send goes ahead out of order).
    pub(crate) fn wait_turn(&self, seq: u64) -> bool {
        let start = Instant::now();
        while self.done.load(Ordering::Acquire) < seq {
            let waited = start.elapsed();
            if waited > TURN_LIMIT {
                return false;
            }
            if waited < TURN_SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        true
    }

    /// Datagram `seq` is out.
    pub(crate) fn sent(&self, seq: u64) {
        self.done.fetch_max(seq + 1, Ordering::AcqRel);
    }

    /// Whether datagram `seq` is still unclaimed (and the run not over).
    pub(crate) fn open(&self, seq: u64) -> bool {
        self.next.load(Ordering::Acquire) == seq
    }

    /// Ends the run: nothing can be claimed after this.
    pub(crate) fn close(&self) {
        self.next.store(CLOSED, Ordering::Release);
    }

    pub(crate) fn closed(&self) -> bool {
        self.next.load(Ordering::Acquire) == CLOSED
    }
}

/// What one sending thread sent.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) sent: u64,
    pub(crate) bytes: u64,
    pub(crate) send_errors: u64,
    /// Lateness of paced sends.
    pub(crate) lateness: Lateness,
}

impl Tally {
    /// Counts one send call of `len` bytes; `late`: how late it was, for
    /// a paced send.
    pub(crate) fn count(&mut self, result: &io::Result<usize>, len: usize, late: Option<Duration>) {
        if result.is_ok() {
            if let Some(l) = late {
                self.lateness.record(l);
            }
            self.sent += 1;
            self.bytes += len as u64;
        } else {
            self.send_errors += 1;
        }
    }

    pub(crate) fn merge(&mut self, other: &Self) {
        self.sent += other.sent;
        self.bytes += other.bytes;
        self.send_errors += other.send_errors;
        self.lateness.merge(&other.lateness);
    }
}

/// Sends `payload` to `to` on `socket` as datagram `seq` and counts it in
/// `tally` (with its lateness against `deadline`, for a paced send). With
/// `claims` (`--hedge`), only if this thread claims it first: `None` when
/// the other thread did; a send that could not wait its turn is counted in
/// `out_of_order`.
pub(crate) fn send_claimed(
    claims: Option<&Claims>,
    seq: u64,
    (socket, to, payload): (&UdpSocket, SocketAddr, &[u8]),
    deadline: Option<Instant>,
    tally: &mut Tally,
    out_of_order: &mut u64,
) -> Option<io::Result<usize>> {
    if let Some(c) = claims {
        if !c.claim(seq) {
            return None;
        }
        if !c.wait_turn(seq) {
            *out_of_order += 1;
        }
    }
    let sent_at = Instant::now();
    let result = socket.send_to(payload, to);
    if let Some(c) = claims {
        c.sent(seq);
    }
    let late = deadline.map(|d| sent_at.saturating_duration_since(d));
    tally.count(&result, payload.len(), late);
    Some(result)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn each_datagram_is_claimed_once() {
        let c = Claims::default();
        assert!(c.claim(0));
        assert!(!c.claim(0), "claimed twice");
        assert!(!c.claim(2), "claimed out of order");
        assert!(c.claim(1));
        c.close();
        assert!(!c.claim(2), "claimed after the end");
    }

    #[test]
    fn a_sender_waits_for_the_send_before_its_own() {
        let c = Arc::new(Claims::default());
        assert!(c.claim(0));
        assert!(c.claim(1));
        let first = {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(10));
                c.sent(0);
            })
        };
        assert!(c.wait_turn(1), "gave up waiting");
        assert_eq!(c.done.load(Ordering::Acquire), 1);
        first.join().expect("thread");
    }

    #[test]
    fn racing_threads_never_both_win() {
        let c = Arc::new(Claims::default());
        let race = |c: Arc<Claims>| {
            std::thread::spawn(move || {
                (0..20_000u64)
                    .filter(|&s| {
                        while c.next.load(Ordering::Acquire) < s {
                            std::hint::spin_loop();
                        }
                        c.claim(s)
                    })
                    .count()
            })
        };
        let (a, b) = (race(Arc::clone(&c)), race(Arc::clone(&c)));
        let won = a.join().expect("thread") + b.join().expect("thread");
        assert_eq!(won, 20_000);
    }

    /// The other thread's claim wins: nothing is sent or counted here.
    #[test]
    fn a_datagram_claimed_elsewhere_is_neither_sent_nor_counted() {
        let rx = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let tx = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let to = rx.local_addr().expect("addr");
        let claims = Claims::default();
        let mut tally = Tally::default();
        let mut late = 0;
        assert!(claims.claim(0));
        claims.sent(0);
        let mine = send_claimed(
            Some(&claims),
            0,
            (&tx, to, b"x"),
            None,
            &mut tally,
            &mut late,
        );
        assert!(mine.is_none());
        let due = Instant::now();
        let sent = send_claimed(
            Some(&claims),
            1,
            (&tx, to, b"yz"),
            Some(due),
            &mut tally,
            &mut late,
        );
        assert_eq!(sent.map(|r| r.ok()), Some(Some(2)));
        assert_eq!(
            (
                tally.sent,
                tally.bytes,
                tally.lateness.summary().is_some(),
                late
            ),
            (1, 2, true, 0)
        );
    }
}
