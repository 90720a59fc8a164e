//! Per-sender state, one map type for every tool: counters, health, takes,
//! smoothers, keyed by the sender's address, bounded by evicting the sender
//! heard from least recently.

use std::collections::BTreeMap;
use std::collections::btree_map;
use std::net::SocketAddr;
use std::ops::Deref;

/// Senders tracked one by one; past this many, the sender heard from least
/// recently makes room, so a flood of addresses (a port sweep, spoofed
/// sources) cannot grow memory, and a real sender that comes after it (an
/// app restarted on a new port) still gets state of its own.
pub const MAX_SENDERS: usize = 256;

/// State per sender (`None`: input that gives no addresses), in address
/// order, bounded to [`MAX_SENDERS`]. Reading goes through `Deref` to the
/// map; adding goes through the bounded methods.
#[derive(Debug)]
pub struct Senders<T> {
    map: BTreeMap<Option<SocketAddr>, T>,
    /// When each sender was last looked up, on `clock`: its order is the
    /// order senders were heard from, which is all eviction needs.
    seen: BTreeMap<Option<SocketAddr>, u64>,
    clock: u64,
    /// The sender looked up last: its `seen` is already the newest, so
    /// looking it up again (a stream from one phone) costs one map search.
    last: Option<Option<SocketAddr>>,
    /// Adds an evicted sender's state to `evicted` (counters), if the tool
    /// keeps totals of it; else evicted state is dropped.
    fold: Option<fn(&mut T, T)>,
    evicted: Option<T>,
    evicted_senders: u64,
    /// Lookups refused by [`Self::try_insert_with`] past the bound.
    overflow: u64,
}

impl<T> Default for Senders<T> {
    fn default() -> Self {
        Self {
            map: BTreeMap::new(),
            seen: BTreeMap::new(),
            clock: 0,
            last: None,
            fold: None,
            evicted: None,
            evicted_senders: 0,
            overflow: 0,
        }
    }
}

impl<T> Senders<T> {
    /// No senders yet; the state of an evicted sender is dropped (filters,
    /// solvers: nothing a summary adds up).
    pub fn new() -> Self {
        Self::default()
    }

    /// No senders yet; the state of an evicted sender is added by `fold` to
    /// one aggregate ([`Self::evicted`]), so totals still add up.
    pub fn folding(fold: fn(&mut T, T)) -> Self {
        Self {
            fold: Some(fold),
            ..Self::default()
        }
    }

    /// The state of `src`, made by `make` when new. Past [`MAX_SENDERS`] a
    /// new sender takes the place of the one heard from least recently.
    pub fn get_or_insert_with(
        &mut self,
        src: Option<SocketAddr>,
        make: impl FnOnce() -> T,
    ) -> &mut T {
        if self.map.len() >= MAX_SENDERS && !self.map.contains_key(&src) {
            self.evict_stalest();
        }
        self.touch(src);
        self.map.entry(src).or_insert_with(make)
    }

    /// The state of `src`, made by `make` when new; `None` for a new sender
    /// past [`MAX_SENDERS`]: for state that must be closed, not dropped (a
    /// take's file), so it is never evicted.
    pub fn try_insert_with(
        &mut self,
        src: Option<SocketAddr>,
        make: impl FnOnce() -> T,
    ) -> Option<&mut T> {
        if !self.admits(src) {
            self.overflow += 1;
            return None;
        }
        self.touch(src);
        Some(self.map.entry(src).or_insert_with(make))
    }

    /// Whether `src` has, or may get without an eviction, an entry of its own.
    pub fn admits(&self, src: Option<SocketAddr>) -> bool {
        self.map.len() < MAX_SENDERS || self.map.contains_key(&src)
    }

    fn touch(&mut self, src: Option<SocketAddr>) {
        if self.last == Some(src) {
            return;
        }
        self.clock += 1;
        self.seen.insert(src, self.clock);
        self.last = Some(src);
    }

    /// Forgets when `src` was seen (it is leaving the map).
    fn forget(&mut self, src: Option<SocketAddr>) {
        self.seen.remove(&src);
        if self.last == Some(src) {
            self.last = None;
        }
    }

    /// Forgets the sender heard from least recently, folding its state.
    fn evict_stalest(&mut self) {
        let Some(src) = self
            .map
            .keys()
            .min_by_key(|k| self.seen.get(*k).copied().unwrap_or(0))
            .copied()
        else {
            return;
        };
        self.forget(src);
        let Some(gone) = self.map.remove(&src) else {
            return;
        };
        self.evicted_senders += 1;
        if let Some(fold) = self.fold {
            match &mut self.evicted {
                Some(all) => fold(all, gone),
                None => self.evicted = Some(gone),
            }
        }
    }

    /// Keeps the senders `keep` says to (forgetting stale ones frees room).
    pub fn retain(&mut self, mut keep: impl FnMut(Option<SocketAddr>, &mut T) -> bool) {
        let (seen, last) = (&mut self.seen, &mut self.last);
        self.map.retain(|k, v| {
            let kept = keep(*k, v);
            if !kept {
                seen.remove(k);
                if *last == Some(*k) {
                    *last = None;
                }
            }
            kept
        });
    }

    /// The state of `src`, if it is tracked.
    pub fn get_mut(&mut self, src: Option<SocketAddr>) -> Option<&mut T> {
        self.map.get_mut(&src)
    }

    /// Every sender's state, to change.
    pub fn values_mut(&mut self) -> btree_map::ValuesMut<'_, Option<SocketAddr>, T> {
        self.map.values_mut()
    }

    /// How often [`Self::try_insert_with`] refused a new sender past the
    /// bound (one per lookup).
    pub fn overflow(&self) -> u64 {
        self.overflow
    }

    /// The state of every evicted sender folded together (with
    /// [`Self::folding`]; `None` before the first eviction).
    pub fn evicted(&self) -> Option<&T> {
        self.evicted.as_ref()
    }

    /// How many senders were evicted to make room.
    pub fn evicted_senders(&self) -> u64 {
        self.evicted_senders
    }

    /// The `few` senders with the most `by` (ties in address order), and
    /// how many others there are: what a stats line shows of a crowd.
    pub fn busiest(
        &self,
        few: usize,
        by: impl Fn(&T) -> u64,
    ) -> (Vec<(Option<SocketAddr>, &T)>, usize) {
        let mut all: Vec<(Option<SocketAddr>, &T)> =
            self.map.iter().map(|(k, v)| (*k, v)).collect();
        all.sort_by_key(|(_, v)| std::cmp::Reverse(by(v)));
        let more = all.len().saturating_sub(few);
        all.truncate(few);
        (all, more)
    }
}

impl<T: Default> Senders<T> {
    /// The state of `src`, default when new (bounded as [`Self::get_or_insert_with`]).
    pub fn get_or_default(&mut self, src: Option<SocketAddr>) -> &mut T {
        self.get_or_insert_with(src, T::default)
    }
}

impl<T> Deref for Senders<T> {
    type Target = BTreeMap<Option<SocketAddr>, T>;

    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<T> IntoIterator for Senders<T> {
    type Item = (Option<SocketAddr>, T);
    type IntoIter = btree_map::IntoIter<Option<SocketAddr>, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.map.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> Option<SocketAddr> {
        Some(SocketAddr::from(([127, 0, 0, 1], port)))
    }

    /// Issue 35: 256 one-shot strangers took the table for good; past the
    /// bound new senders shared one folded entry. Now the stalest goes, its
    /// counts fold into the evicted aggregate, and totals still add up.
    #[test]
    fn a_flood_of_senders_evicts_the_stalest_and_totals_add_up() {
        let mut s: Senders<u64> = Senders::folding(|all, gone| *all += gone);
        *s.get_or_default(addr(40_000)) += 1;
        for port in 0..1000u16 {
            *s.get_or_default(addr(port)) += 1;
            // The performer keeps sending among the strangers.
            *s.get_or_default(addr(40_000)) += 1;
        }
        assert_eq!(s.len(), MAX_SENDERS);
        assert_eq!(s.get(&None), None, "nobody is folded into a shared entry");
        assert_eq!(s.get(&addr(40_000)), Some(&1001), "a live sender stays");
        assert_eq!(s.evicted_senders(), 1000 - (MAX_SENDERS as u64 - 1));
        let total = s.values().sum::<u64>() + s.evicted().copied().unwrap_or(0);
        assert_eq!(total, 2001);
        // A new sender after them all gets its own entry.
        *s.get_or_default(addr(50_000)) += 1;
        assert_eq!(s.get(&addr(50_000)), Some(&1));
        assert_eq!(s.get(&addr(40_000)), Some(&1001));
        let (top, more) = s.busiest(3, |n| *n);
        assert_eq!(
            top.first().map(|(a, n)| (*a, **n)),
            Some((addr(40_000), 1001))
        );
        assert_eq!((top.len(), more), (3, MAX_SENDERS - 3));
    }

    /// A sender looked up again is not re-stamped (it is the newest
    /// already); one forgotten by `retain` and back is stamped anew, so
    /// eviction still takes the stalest, not it.
    #[test]
    fn a_sender_back_after_retain_is_the_newest() {
        let mut s: Senders<u16> = Senders::new();
        for port in 2..=MAX_SENDERS as u16 {
            s.get_or_insert_with(addr(port), || port);
        }
        s.get_or_insert_with(addr(1), || 1);
        s.get_or_insert_with(addr(1), || 1);
        s.retain(|src, _| src != addr(1));
        s.get_or_insert_with(addr(1), || 1);
        assert_eq!(s.len(), MAX_SENDERS);
        s.get_or_insert_with(addr(9999), || 0);
        assert!(s.get(&addr(1)).is_some(), "the newest sender was evicted");
        assert!(s.get(&addr(2)).is_none(), "the stalest sender stayed");
    }

    #[test]
    fn without_a_fold_evicted_state_is_dropped() {
        let mut s: Senders<u16> = Senders::new();
        for port in 0..300u16 {
            s.get_or_insert_with(addr(port), || port);
        }
        assert_eq!(s.len(), MAX_SENDERS);
        assert!(s.evicted().is_none());
        assert_eq!(s.evicted_senders(), 300 - MAX_SENDERS as u64);
        assert_eq!(s.keys().next(), Some(&addr(300 - MAX_SENDERS as u16)));
    }

    #[test]
    fn state_that_cannot_be_shared_is_refused_past_the_bound() {
        let mut s: Senders<u16> = Senders::new();
        for port in 0..MAX_SENDERS as u16 {
            assert!(s.try_insert_with(addr(port), || port).is_some());
        }
        assert!(s.try_insert_with(addr(9999), || 0).is_none());
        assert_eq!(s.try_insert_with(addr(3), || 0).copied(), Some(3));
        assert_eq!(s.len(), MAX_SENDERS);
        assert_eq!(s.overflow(), 1);
        let ports: Vec<u16> = s.into_iter().map(|(_, p)| p).take(3).collect();
        assert_eq!(ports, [0, 1, 2], "address order");
    }
}
