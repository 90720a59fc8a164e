//! Per-address bookkeeping of the server's connections: how many each
//! address holds open (`--max-per-address`), and its refusals, counted and
//! logged once per address per interval, so that one host flooding the
//! server costs it a few log lines and its own slots, not everyone's. Pure:
//! addresses and `now` in, verdicts out; tested without sockets.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

/// Addresses whose refusals are counted one by one; past this, the rest
/// share one entry (a spoofed or scanning sweep must not grow the table).
const MAX_ADDRESSES: usize = mocap_cli::MAX_SENDERS;

/// The key of an address: an IPv4 client seen through a dual-stack listener
/// (`::ffff:a.b.c.d`) is the same client as over IPv4.
pub(super) fn host(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

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

/// One address's refusals.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    total: u64,
    /// Refused since the last line about this address, not logged yet.
    unsaid: u64,
    /// Until when further refusals are only counted.
    quiet_until: Option<Instant>,
}

/// Refused connections per address: the first refusal of an address is
/// logged, then for `interval` its refusals are only counted, and [`due`]
/// gives their number when the interval is over.
///
/// [`due`]: Refusals::due
#[derive(Debug)]
pub(super) struct Refusals {
    interval: Duration,
    by_addr: HashMap<IpAddr, Tally>,
    /// Addresses past [`MAX_ADDRESSES`], together.
    others: Tally,
}

impl Refusals {
    /// Logs each address at most once per `interval`.
    pub(super) fn new(interval: Duration) -> Self {
        Self {
            interval,
            by_addr: HashMap::new(),
            others: Tally::default(),
        }
    }

    /// Counts a refusal of `ip`; true when it is to be logged (the first of
    /// its address in an interval).
    pub(super) fn count(&mut self, ip: IpAddr, now: Instant) -> bool {
        let key = host(ip);
        let room = self.by_addr.len() < MAX_ADDRESSES;
        let tally = match self.by_addr.get_mut(&key) {
            Some(t) => t,
            None if room => self.by_addr.entry(key).or_default(),
            None => &mut self.others,
        };
        tally.total += 1;
        if tally.quiet_until.is_some_and(|t| now < t) {
            tally.unsaid += 1;
            return false;
        }
        tally.quiet_until = now.checked_add(self.interval);
        true
    }

    /// Addresses whose quiet interval is over with refusals not logged yet,
    /// and how many (`None`: the addresses past the table's bound); each is
    /// given once.
    pub(super) fn due(&mut self, now: Instant) -> Vec<(Option<IpAddr>, u64)> {
        self.unsaid(Some(now))
    }

    /// Everything not logged yet, whatever the interval (at exit).
    pub(super) fn rest(&mut self) -> Vec<(Option<IpAddr>, u64)> {
        self.unsaid(None)
    }

    fn unsaid(&mut self, now: Option<Instant>) -> Vec<(Option<IpAddr>, u64)> {
        let over = |t: &Tally| match (now, t.quiet_until) {
            (Some(now), Some(q)) => now >= q,
            _ => true,
        };
        let mut lines: Vec<_> = self
            .by_addr
            .iter_mut()
            .map(|(ip, t)| (Some(*ip), t))
            .chain(std::iter::once((None, &mut self.others)))
            .filter(|(_, t)| t.unsaid > 0 && over(t))
            .map(|(ip, t)| (ip, std::mem::take(&mut t.unsaid)))
            .collect();
        lines.sort_unstable();
        lines
    }

    /// Refusals per address, for the summary (`None`: past the bound).
    pub(super) fn totals(&self) -> Vec<(Option<IpAddr>, u64)> {
        let mut all: Vec<_> = self
            .by_addr
            .iter()
            .map(|(ip, t)| (Some(*ip), t.total))
            .chain((self.others.total > 0).then_some((None, self.others.total)))
            .collect();
        all.sort_unstable();
        all
    }
}

/// The line for refusals that were counted but not logged.
pub(super) fn unsaid_line(ip: Option<IpAddr>, n: u64) -> String {
    let who = ip.map_or_else(|| "other addresses".to_owned(), |ip| ip.to_string());
    let s = if n == 1 { "" } else { "s" };
    format!("{who}: {n} more connection{s} refused since the last line about it")
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
    fn refusals_are_logged_once_per_address_per_interval() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut r = Refusals::new(10 * s);
        let (a, b) = (ip("127.0.0.2"), ip("127.0.0.3"));
        assert!(r.count(a, t0), "the first refusal is logged");
        let said = (1..=500).filter(|_| r.count(a, t0 + s)).count();
        assert_eq!(said, 0, "the rest of the interval is counted only");
        assert!(r.count(b, t0 + s), "another address has its own interval");
        assert_eq!(r.due(t0 + 5 * s), vec![], "not before the interval is over");
        assert_eq!(r.due(t0 + 10 * s), vec![(Some(a), 500)]);
        assert_eq!(r.due(t0 + 11 * s), vec![], "said once");
        assert!(r.count(a, t0 + 12 * s), "a new interval starts");
        assert!(!r.count(a, t0 + 13 * s));
        assert_eq!(r.rest(), vec![(Some(a), 1)]);
        assert_eq!(r.totals(), vec![(Some(a), 503), (Some(b), 1)]);
    }

    #[test]
    fn the_table_of_refused_addresses_is_bounded() {
        let t0 = Instant::now();
        let mut r = Refusals::new(Duration::from_secs(10));
        let said = (0..2000u32)
            .filter(|i| r.count(IpAddr::from(i.to_be_bytes()), t0))
            .count();
        assert_eq!(r.by_addr.len(), MAX_ADDRESSES);
        // One line per tracked address, one for all the others together.
        assert_eq!(said, MAX_ADDRESSES + 1);
        let totals = r.totals();
        assert_eq!(totals.len(), MAX_ADDRESSES + 1);
        assert_eq!(totals.iter().map(|(_, n)| n).sum::<u64>(), 2000);
        assert_eq!(
            r.due(t0 + Duration::from_secs(10)),
            vec![(None, 2000 - MAX_ADDRESSES as u64 - 1)]
        );
    }
}
