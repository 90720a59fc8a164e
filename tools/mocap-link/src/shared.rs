//! State that Zenoh's threads and the run loop share: samples are handled
//! where they arrive (a subscriber's callback, a publisher's reading task
//! on Zenoh's runtime), under one lock, and the run loop only waits until
//! that state asks for it (the end of the run, keys to declare), probes
//! and reports. A hand-off to the run loop would cost a thread wake-up per
//! sample: most of a process's CPU at 60 Hz, and delay.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mocap_cli::runner::{Feed, Step};

/// The shared state and what wakes the run loop.
pub(crate) struct Shared<T> {
    state: Mutex<T>,
    attention: Condvar,
}

/// State the run loop must act on now, which the sample path cannot do
/// itself: end the run; declare keys, which a subscriber's callback cannot
/// (Zenoh holds the lock a declaration takes).
pub(crate) trait Attend {
    fn needs_loop(&self) -> bool;
}

impl<T> Shared<T> {
    pub(crate) fn new(state: T) -> Self {
        Self {
            state: Mutex::new(state),
            attention: Condvar::new(),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        // A poisoned lock only means a sample path panicked mid-sample; the
        // counts are still the best there are.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wakes the run loop to look at the state.
    pub(crate) fn wake(&self) {
        self.attention.notify_all();
    }
}

/// The run loop's feed: nothing to hand out (samples are handled where
/// they arrive); it waits until the state needs the loop, Ctrl-C, or `wait`
/// passes.
pub(crate) struct Attention<T>(Arc<Shared<T>>);

/// How long the run loop waits at most when nothing needs it: its timers
/// (Zenoh's routes and the datagram paths asked once a second, a stream
/// that fell silent) are seen within this; Ctrl-C at once.
const LONGEST_WAIT: Duration = Duration::from_millis(250);

impl<T: Send + 'static> Attention<T> {
    /// Also woken by Ctrl-C. The handler holds only a weak reference: the
    /// state goes when the run ends.
    pub(crate) fn new(shared: Arc<Shared<T>>) -> Self {
        let weak = Arc::downgrade(&shared);
        mocap_cli::exit::wake_on_interrupt(move || {
            if let Some(s) = weak.upgrade() {
                // Under the lock when it is free, so the loop cannot be
                // between its check of the flag and its wait; never waiting
                // for it: the handler thread also has a second Ctrl-C and
                // SIGTERM to take, and the lock's holder may be stuck (an
                // output nobody reads). A wake-up missed then costs at most
                // one LONGEST_WAIT.
                let _held = s.state.try_lock();
                s.wake();
            }
        });
        Self(shared)
    }
}

impl<T: Attend + 'static> Feed for Attention<T> {
    type Item<'a> = std::convert::Infallible;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Self::Item<'_>>> {
        let s = self.0.lock();
        let _ = self
            .0
            .attention
            .wait_timeout_while(s, wait, |s| {
                !s.needs_loop() && !mocap_cli::exit::interrupted()
            })
            .unwrap_or_else(PoisonError::into_inner);
        Ok(Step::Idle)
    }

    fn longest_wait(&self) -> Duration {
        LONGEST_WAIT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Flag(bool);
    impl Attend for Flag {
        fn needs_loop(&self) -> bool {
            self.0
        }
    }

    #[test]
    fn the_loop_returns_when_the_state_asks_for_it_or_the_wait_is_over() {
        let shared = Arc::new(Shared::new(Flag(false)));
        let mut feed = Attention::new(shared.clone());
        // Nothing asked: the wait is honoured, and returns.
        let t = std::time::Instant::now();
        assert!(matches!(
            feed.next(Duration::from_millis(20)).unwrap(),
            Step::Idle
        ));
        assert!(t.elapsed() >= Duration::from_millis(20));
        // Asked from another thread: returns long before its minute.
        let asker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            shared.lock().0 = true;
            shared.wake();
        });
        let t = std::time::Instant::now();
        assert!(matches!(
            feed.next(Duration::from_secs(60)).unwrap(),
            Step::Idle
        ));
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
        asker.join().unwrap();
    }
}
