//! Bookkeeping of the server's connections: how many each address holds
//! open (`--max-per-address`); which have not finished their request head
//! yet, so that the oldest of them makes room for a newcomer however many
//! addresses the strangers have (refusals are counted and logged by
//! `mocap_cli::refusals`, as every tool's `--allow` refusals). Pure:
//! addresses, ids and `now` in, verdicts out; tested without sockets.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;

pub(super) use mocap_cli::refusals::host;

/// Connections open per address. Entries exist only while connections are
/// open, so the table is bounded by the server's connection limit.
#[derive(Debug, Default)]
pub(super) struct Open {
    by_addr: HashMap<IpAddr, usize>,
}

impl Open {
    /// Takes a slot for `ip` unless it already holds `max`.
    pub(super) fn take(&mut self, ip: IpAddr, max: usize) -> bool {
        let n = self.by_addr.entry(host(ip)).or_insert(0);
        if *n >= max {
            return false;
        }
        *n += 1;
        true
    }

    /// A connection of `ip` ended.
    pub(super) fn give_back(&mut self, ip: IpAddr) {
        let key = host(ip);
        if let Some(n) = self.by_addr.get_mut(&key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.by_addr.remove(&key);
            }
        }
    }

    /// Connections `ip` holds open.
    #[cfg(test)]
    fn of(&self, ip: IpAddr) -> usize {
        self.by_addr.get(&host(ip)).copied().unwrap_or(0)
    }
}

/// Connections still reading their request head (the TLS handshake
/// included), oldest first, each with `H`, what closes it. Strangers on
/// many addresses can each stay under `--max-per-address` and still fill
/// every place with heads they never finish (slowloris): past `budget`
/// unfinished connections, or when every place is taken, a new connection
/// takes the place of the oldest unfinished one, as nginx and HAProxy shed
/// idle handshakes. A client that sends its head at once is never the oldest
/// for long. Those given up are `closing` until their thread ends, so the
/// places they still hold are not counted twice; at most [`MAX_CLOSING`].
#[derive(Debug)]
pub(super) struct Unfinished<H> {
    budget: usize,
    waiting: VecDeque<(u64, H)>,
    closing: Vec<u64>,
}

/// Connections given up but not ended yet: bounds the threads past the
/// server's places while they end.
pub(super) const MAX_CLOSING: usize = 32;

impl<H> Unfinished<H> {
    /// At most `budget` unfinished connections.
    pub(super) fn new(budget: usize) -> Self {
        Self {
            budget,
            waiting: VecDeque::new(),
            closing: Vec::new(),
        }
    }

    /// Connection `id` starts reading its head.
    pub(super) fn push(&mut self, id: u64, closer: H) {
        self.waiting.push_back((id, closer));
    }

    /// Whether a new connection must take an unfinished one's place: the
    /// budget is spent.
    pub(super) fn full(&self) -> bool {
        self.waiting.len() >= self.budget
    }

    /// Connections given up and not ended yet.
    pub(super) fn closing(&self) -> usize {
        self.closing.len()
    }

    /// The oldest unfinished connection, given up to make room (the caller
    /// closes it); `None` when none is waiting or too many are closing.
    pub(super) fn make_room(&mut self) -> Option<(u64, H)> {
        if self.closing.len() >= MAX_CLOSING {
            return None;
        }
        let (id, closer) = self.waiting.pop_front()?;
        self.closing.push(id);
        Some((id, closer))
    }

    /// `id` read its whole head: from now on it keeps its place. `false`
    /// when it was given up meanwhile.
    pub(super) fn finished(&mut self, id: u64) -> bool {
        let at = self.waiting.iter().position(|(i, _)| *i == id);
        at.and_then(|at| self.waiting.remove(at)).is_some()
    }

    /// `id`'s connection ended, whatever its state.
    pub(super) fn ended(&mut self, id: u64) {
        if !self.finished(id) {
            self.closing.retain(|i| *i != id);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn each_address_holds_at_most_its_share() {
        let mut open = Open::default();
        let (a, b) = (ip("127.0.0.2"), ip("127.0.0.3"));
        assert!(open.take(a, 2) && open.take(a, 2));
        assert!(!open.take(a, 2), "a third connection of the same address");
        assert!(
            !open.take(ip("::ffff:127.0.0.2"), 2),
            "the same address through a dual-stack socket"
        );
        assert!(open.take(b, 2), "another address is not affected");
        open.give_back(a);
        assert_eq!(open.of(a), 1);
        assert!(open.take(a, 2));
        open.give_back(a);
        open.give_back(a);
        open.give_back(a);
        assert_eq!(open.of(a), 0);
        assert_eq!(open.by_addr.len(), 1, "no entry is kept for a gone address");
    }

    #[test]
    fn the_oldest_unfinished_head_makes_room() {
        let mut u = Unfinished::new(3);
        for id in 1..=3 {
            u.push(id, id * 10);
        }
        assert!(u.full());
        // A newcomer takes the oldest one's place; it is closing until its
        // thread ends.
        assert_eq!(u.make_room(), Some((1, 10)));
        u.push(4, 40);
        assert_eq!(u.closing(), 1);
        assert!(!u.finished(1), "given up: its late head does not count");
        u.ended(1);
        assert_eq!(u.closing(), 0);
        // A finished head keeps its place: the next oldest goes.
        assert!(u.finished(2));
        assert!(!u.full());
        u.push(5, 50);
        assert_eq!(u.make_room(), Some((3, 30)));
        u.ended(4);
        assert_eq!(u.make_room(), Some((5, 50)));
        assert_eq!(u.make_room(), None, "none waiting");
        u.ended(2);
        u.ended(3);
        u.ended(5);
        assert_eq!((u.waiting.len(), u.closing()), (0, 0));
    }

    #[test]
    fn connections_closing_are_bounded() {
        let mut u = Unfinished::new(1000);
        for id in 0..100 {
            u.push(id, ());
        }
        let given = (0..100).filter(|_| u.make_room().is_some()).count();
        assert_eq!(given, MAX_CLOSING);
        u.ended(0);
        assert!(u.make_room().is_some(), "one ended: one more may close");
    }
}
