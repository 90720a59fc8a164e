//! `--hedge`: a second sending thread, on another CPU, races the main one
//! for every datagram.
//!
//! On a shared virtual machine the host stops a virtual CPU now and then for
//! milliseconds, and a thread on that CPU cannot help being late, whatever
//! its priority. The stalls of two virtual CPUs are independent: two
//! SCHED_FIFO threads waking together 30 000 times (cyclictest, one per
//! vCPU) were each over 1 ms late about ten times, and never both over
//! 200 µs late at once. So the playback posts each datagram to this thread,
//! pinned away from the main one, before it is due; both wait for the due
//! time, and the first to get there claims it (one atomic step) and sends
//! it. The loser skips it. It costs a second thread's sleeps and spins.

use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use mocap_cli::exit::interrupted;

use crate::send::{Claims, Tally, send_claimed};
use crate::timing::{Sleeper, Waited};

/// The datagram posted to the second thread: its number, due time and
/// destination, and its bytes.
#[derive(Debug, Default)]
struct Slot {
    posted: Option<(u64, Instant, SocketAddr)>,
    payload: Vec<u8>,
}

#[derive(Debug, Default)]
struct Shared {
    claims: Claims,
    slot: Mutex<Slot>,
    posted: Condvar,
}

/// What the second thread sent.
#[derive(Debug, Default)]
pub(crate) struct HedgeSent {
    pub(crate) tally: Tally,
    /// The first send error, for the log.
    pub(crate) first_error: Option<std::io::Error>,
    /// Sends that went ahead before the other thread's previous send was
    /// out (it stalled past `TURN_LIMIT`).
    pub(crate) out_of_order: u64,
}

/// The main thread's side: post, claim, and at the end collect.
#[derive(Debug)]
pub(crate) struct Hedge {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<HedgeSent>>,
}

/// How the second thread sends and waits.
pub(crate) struct HedgeSetup {
    pub(crate) socket: UdpSocket,
    pub(crate) spin: Duration,
    pub(crate) realtime: bool,
    pub(crate) progress: Option<ProgressBar>,
    /// The CPUs the thread may run on (none: wherever the scheduler likes).
    #[cfg(target_os = "linux")]
    pub(crate) cpus: Option<nix::sched::CpuSet>,
}

impl Hedge {
    /// Starts the second thread; also whether it runs where `setup.cpus`
    /// says (`true` when no CPUs were asked for).
    ///
    /// # Errors
    /// The thread could not be spawned.
    pub(crate) fn start(setup: HedgeSetup) -> std::io::Result<(Self, bool)> {
        let shared = Arc::new(Shared::default());
        let theirs = Arc::clone(&shared);
        let (pinned_tx, pinned_rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("pcap-replay hedge".into())
            .spawn(move || run(&theirs, setup, &pinned_tx))?;
        let pinned = pinned_rx
            .recv_timeout(Duration::from_secs(1))
            .unwrap_or(false);
        Ok((
            Self {
                shared,
                thread: Some(thread),
            },
            pinned,
        ))
    }

    /// Hands datagram `seq`, due at `due`, to the second thread; `false`
    /// if the thread was busy with the slot (never wait on it: it may be
    /// on a stalled CPU), so that this datagram is not hedged.
    pub(crate) fn post(&self, seq: u64, due: Instant, to: SocketAddr, payload: &[u8]) -> bool {
        let mut slot = match self.shared.slot.try_lock() {
            Ok(slot) => slot,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        slot.posted = Some((seq, due, to));
        slot.payload.clear();
        slot.payload.extend_from_slice(payload);
        drop(slot);
        self.shared.posted.notify_one();
        true
    }

    /// The claims both threads share.
    pub(crate) fn claims(&self) -> &Claims {
        &self.shared.claims
    }

    /// Ends the run: nothing is claimed (so sent) after this.
    pub(crate) fn close(&self) {
        // Under the lock, so that the thread cannot miss the wake-up between
        // looking at the claims and going to wait.
        let slot = self
            .shared
            .slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        self.shared.claims.close();
        drop(slot);
        self.shared.posted.notify_one();
    }

    /// Ends the run and returns what the second thread sent.
    pub(crate) fn finish(mut self) -> HedgeSent {
        self.stop().unwrap_or_default()
    }

    fn stop(&mut self) -> Option<HedgeSent> {
        self.close();
        self.thread.take()?.join().ok()
    }
}

impl Drop for Hedge {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The second thread: takes each new post, waits for its due time the way
/// the main thread does, and sends it if it gets there first.
fn run(shared: &Shared, setup: HedgeSetup, pinned: &std::sync::mpsc::Sender<bool>) -> HedgeSent {
    #[cfg(target_os = "linux")]
    let _ = pinned.send(setup.cpus.as_ref().is_none_or(pin_current_thread));
    #[cfg(not(target_os = "linux"))]
    let _ = pinned.send(true);
    mocap_cli::realtime::tune_current_thread(setup.realtime);
    let sleeper = Sleeper::new();
    let mut out = HedgeSent::default();
    let mut payload = Vec::with_capacity(mocap_core::MAX_DATAGRAM);
    let mut last: Option<u64> = None;
    loop {
        let (seq, due, to) = {
            let mut slot = shared.slot.lock().unwrap_or_else(PoisonError::into_inner);
            loop {
                if shared.claims.closed() {
                    return out;
                }
                if let Some((seq, due, to)) = slot.posted
                    && last.is_none_or(|l| seq > l)
                {
                    // Take the bytes; the main thread refills the buffer.
                    std::mem::swap(&mut payload, &mut slot.payload);
                    break (seq, due, to);
                }
                slot = shared
                    .posted
                    .wait_timeout(slot, mocap_cli::runner::POLL)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        };
        last = Some(seq);
        // Until it is due, unless the main thread sends it first, the run
        // ends or Ctrl-C; long waits in naps, to notice those.
        let due_now = loop {
            match sleeper.wait_for(due, setup.spin, mocap_cli::runner::POLL, || {
                shared.claims.open(seq) && !interrupted()
            }) {
                Waited::Due => break true,
                Waited::NotYet => {}
                Waited::Stopped => break false,
            }
        };
        if !due_now {
            continue;
        }
        let claimed = Some(&shared.claims);
        let Some(result) = send_claimed(
            claimed,
            seq,
            (&setup.socket, to, &payload),
            Some(due),
            &mut out.tally,
            &mut out.out_of_order,
        ) else {
            continue;
        };
        if let Err(e) = result {
            out.first_error.get_or_insert(e);
        }
        if let Some(pb) = &setup.progress {
            pb.inc(1);
        }
    }
}

/// The CPU this thread is on, and every other CPU it may use: the main
/// thread stays on the first, the second thread goes to the others.
/// `None` with fewer than two CPUs.
#[cfg(target_os = "linux")]
pub(crate) fn split_cpus() -> Option<(nix::sched::CpuSet, nix::sched::CpuSet)> {
    use nix::sched::{CpuSet, sched_getaffinity, sched_getcpu};
    let allowed = sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
    let here = sched_getcpu().ok()?;
    let mut mine = CpuSet::new();
    mine.set(here).ok()?;
    let mut others = CpuSet::new();
    let mut any = false;
    for cpu in (0..CpuSet::count()).filter(|&c| c != here) {
        if allowed.is_set(cpu).unwrap_or(false) {
            others.set(cpu).ok()?;
            any = true;
        }
    }
    any.then_some((mine, others))
}

/// Pins the calling thread to `cpus`.
#[cfg(target_os = "linux")]
pub(crate) fn pin_current_thread(cpus: &nix::sched::CpuSet) -> bool {
    nix::sched::sched_setaffinity(nix::unistd::Pid::from_raw(0), cpus).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receiver(timeout: Duration) -> UdpSocket {
        let rx = UdpSocket::bind("127.0.0.1:0").expect("bind");
        rx.set_read_timeout(Some(timeout)).expect("timeout");
        rx
    }

    fn setup() -> HedgeSetup {
        HedgeSetup {
            socket: UdpSocket::bind("127.0.0.1:0").expect("bind"),
            spin: Duration::from_micros(200),
            realtime: false,
            progress: None,
            #[cfg(target_os = "linux")]
            cpus: None,
        }
    }

    /// A main thread that stalls past the due time: the second thread sends
    /// the datagram, at its due time, and the main thread's claim fails.
    #[test]
    fn the_second_thread_sends_what_a_stalled_main_thread_has_not() {
        let rx = receiver(Duration::from_secs(5));
        let to = rx.local_addr().expect("addr");
        let (hedge, pinned) = Hedge::start(setup()).expect("start");
        assert!(pinned, "no CPUs were asked for");
        let due = Instant::now() + Duration::from_millis(20);
        assert!(hedge.post(0, due, to, b"first"));
        let mut buf = [0u8; 16];
        let (n, _) = rx
            .recv_from(&mut buf)
            .expect("the second thread sent nothing");
        assert!(Instant::now() >= due, "sent before it was due");
        assert_eq!(buf.get(..n), Some(&b"first"[..]));
        assert!(
            !hedge.claims().claim(0),
            "the main thread could claim it as well"
        );
        let sent = hedge.finish();
        let t = &sent.tally;
        assert_eq!((t.sent, t.bytes, t.lateness.len()), (1, 5, 1));
    }

    /// The main thread on time: the second thread sends nothing for that
    /// datagram. It is shown alive first-hand: the next datagram, which the
    /// main thread leaves, it sends (so a dead thread fails this test).
    #[test]
    fn the_second_thread_stands_back_when_the_main_one_sends() {
        let rx = receiver(Duration::from_secs(5));
        let to = rx.local_addr().expect("addr");
        let (hedge, _) = Hedge::start(setup()).expect("start");
        let due = Instant::now() + Duration::from_millis(30);
        assert!(hedge.post(0, due, to, b"mine"));
        assert!(hedge.claims().claim(0));
        hedge.claims().sent(0);
        std::thread::sleep(Duration::from_millis(60));
        assert!(hedge.post(1, Instant::now() + Duration::from_millis(10), to, b"theirs"));
        let mut buf = [0u8; 16];
        let (n, _) = rx
            .recv_from(&mut buf)
            .expect("the second thread sent nothing at all");
        assert_eq!(
            buf.get(..n),
            Some(&b"theirs"[..]),
            "the second thread sent the main thread's datagram too"
        );
        let sent = hedge.finish();
        assert_eq!(sent.tally.sent, 1);
    }

    /// After the end, nothing posted is sent; before it, the thread sends
    /// (so a dead thread fails this test).
    #[test]
    fn nothing_is_sent_after_finish() {
        let rx = receiver(Duration::from_secs(5));
        let to = rx.local_addr().expect("addr");
        let (hedge, _) = Hedge::start(setup()).expect("start");
        assert!(hedge.post(0, Instant::now() + Duration::from_millis(10), to, b"before"));
        let mut buf = [0u8; 16];
        let (n, _) = rx
            .recv_from(&mut buf)
            .expect("the second thread sent nothing");
        assert_eq!(buf.get(..n), Some(&b"before"[..]));
        assert!(hedge.post(1, Instant::now() + Duration::from_millis(30), to, b"late"));
        let sent = hedge.finish();
        assert_eq!(sent.tally.sent, 1);
        rx.set_read_timeout(Some(Duration::from_millis(100)))
            .expect("timeout");
        assert!(rx.recv_from(&mut buf).is_err(), "sent after the end");
    }
}
