//! RefusalLog counted per address and logged at a bounded rate: the first
//! refusal of an address is logged, the rest of an interval only counted,
//! and the count told in one line when the interval is over. One table for
//! every tool: `--allow` refusals ([`crate::allow::Guard`]) and motion-stream's
//! refused connections. Bounded: past [`MAX_SENDERS`] addresses the others
//! share one entry. Pure: addresses and `now` in, verdicts out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::senders::MAX_SENDERS;

/// How often one address is named in the log at most.
pub const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Addresses whose refusals are counted one by one; past this, the rest
/// share one entry (a spoofed or scanning sweep must not grow the table).
const MAX_ADDRESSES: usize = MAX_SENDERS;

/// The key of an address: an IPv4 client seen through a dual-stack socket
/// (`::ffff:a.b.c.d`) is the same client as over IPv4.
pub fn host(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
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
/// [`due`]: RefusalLog::due
#[derive(Debug)]
pub struct RefusalLog {
    interval: Duration,
    by_addr: HashMap<IpAddr, Tally>,
    /// Addresses past [`MAX_ADDRESSES`], together.
    others: Tally,
}

impl RefusalLog {
    /// Logs each address at most once per `interval`.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            by_addr: HashMap::new(),
            others: Tally::default(),
        }
    }

    /// Counts a refusal of `ip`; true when it is to be logged (the first of
    /// its address in an interval).
    pub fn count(&mut self, ip: IpAddr, now: Instant) -> bool {
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
    pub fn due(&mut self, now: Instant) -> Vec<(Option<IpAddr>, u64)> {
        self.unsaid(Some(now))
    }

    /// Everything not logged yet, whatever the interval (at exit).
    pub fn rest(&mut self) -> Vec<(Option<IpAddr>, u64)> {
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

    /// RefusalLog per address, for the summary (`None`: past the bound).
    pub fn totals(&self) -> Vec<(Option<IpAddr>, u64)> {
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

/// The line for `n` refusals of `what` (`connection`, `datagram`) that
/// were counted but not logged.
pub fn unsaid_line(ip: Option<IpAddr>, n: u64, what: &str) -> String {
    let who = ip.map_or_else(|| "other addresses".to_owned(), |ip| ip.to_string());
    let s = if n == 1 { "" } else { "s" };
    format!("{who}: {n} more {what}{s} refused since the last line about it")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn refusals_are_logged_once_per_address_per_interval() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut r = RefusalLog::new(10 * s);
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
        let mut r = RefusalLog::new(Duration::from_secs(10));
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
