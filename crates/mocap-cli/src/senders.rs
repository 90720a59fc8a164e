//! Per-sender state, one map type for every tool: counters, health, takes,
//! smoothers, keyed by the sender's address.

use std::collections::BTreeMap;
use std::collections::btree_map;
use std::net::SocketAddr;
use std::ops::Deref;

/// Senders tracked one by one; past this many, a flood of addresses (a port
/// sweep, spoofed sources) cannot grow memory without bound.
pub const MAX_SENDERS: usize = 256;

/// State per sender (`None`: input that gives no addresses), in address
/// order, bounded to [`MAX_SENDERS`]. Reading goes through `Deref` to the
/// map; adding goes through the bounded methods.
#[derive(Debug)]
pub struct Senders<T> {
    map: BTreeMap<Option<SocketAddr>, T>,
    /// Lookups of new senders past the bound (folded or refused).
    overflow: u64,
}

impl<T> Default for Senders<T> {
    fn default() -> Self {
        Self {
            map: BTreeMap::new(),
            overflow: 0,
        }
    }
}

impl<T> Senders<T> {
    /// No senders yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The state of `src`, made by `make` when new. Past [`MAX_SENDERS`], a new
    /// sender shares the entry without an address (`src: null` in summaries),
    /// so counters still add up.
    pub fn get_or_insert_with(
        &mut self,
        src: Option<SocketAddr>,
        make: impl FnOnce() -> T,
    ) -> &mut T {
        let key = if self.admits(src) {
            src
        } else {
            self.overflow += 1;
            None
        };
        self.map.entry(key).or_insert_with(make)
    }

    /// The state of `src`, made by `make` when new; `None` for a new sender
    /// past [`MAX_SENDERS`] (state that cannot be shared: a take's file).
    pub fn try_insert_with(
        &mut self,
        src: Option<SocketAddr>,
        make: impl FnOnce() -> T,
    ) -> Option<&mut T> {
        if !self.admits(src) {
            self.overflow += 1;
            return None;
        }
        Some(self.map.entry(src).or_insert_with(make))
    }

    /// Whether `src` has, or may get, an entry of its own.
    pub fn admits(&self, src: Option<SocketAddr>) -> bool {
        self.map.len() < MAX_SENDERS || self.map.contains_key(&src)
    }

    /// Keeps the senders `keep` says to (forgetting stale ones frees room).
    pub fn retain(&mut self, mut keep: impl FnMut(Option<SocketAddr>, &mut T) -> bool) {
        self.map.retain(|k, v| keep(*k, v));
    }

    /// The state of `src`, if it is tracked.
    pub fn get_mut(&mut self, src: Option<SocketAddr>) -> Option<&mut T> {
        self.map.get_mut(&src)
    }

    /// Every sender's state, to change.
    pub fn values_mut(&mut self) -> btree_map::ValuesMut<'_, Option<SocketAddr>, T> {
        self.map.values_mut()
    }

    /// How often a new sender past the bound was folded or refused (one per
    /// lookup, so a tool that looks up once per datagram counts datagrams).
    pub fn overflow(&self) -> u64 {
        self.overflow
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

    #[test]
    fn a_flood_of_senders_is_bounded_and_still_counted() {
        let mut s: Senders<u64> = Senders::new();
        for port in 0..1000u16 {
            *s.get_or_default(addr(port)) += 1;
        }
        // One entry per sender up to the bound, then one shared entry.
        assert_eq!(s.len(), MAX_SENDERS + 1);
        assert_eq!(s.values().sum::<u64>(), 1000);
        assert_eq!(s.get(&None), Some(&(1000 - MAX_SENDERS as u64)));
        assert_eq!(s.overflow(), 1000 - MAX_SENDERS as u64);
        // Known senders keep their own entry.
        *s.get_or_default(addr(7)) += 1;
        assert_eq!(s.get(&addr(7)), Some(&2));
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
