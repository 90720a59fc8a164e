//! Per-sender state, one map type for every tool: counters, health, takes,
//! smoothers, outlets, keyed by the sender's address (or any ordered key,
//! such as a performer's name and an address), bounded by evicting the
//! sender heard from least recently.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// Senders tracked one by one; past this many, the sender heard from least
/// recently makes room, so a flood of addresses (a port sweep, spoofed
/// sources) cannot grow memory, and a real sender that comes after it (an
/// app restarted on a new port) still gets state of its own.
pub const MAX_SENDERS: usize = 256;

/// One sender's state and when it was last looked up.
#[derive(Debug)]
struct Slot<T> {
    state: T,
    /// On the map's `clock`: its order is the order senders were heard
    /// from, which is all eviction needs.
    seen: u64,
}

/// State per sender, in key order, bounded to [`MAX_SENDERS`]. The key is a
/// sender's address by default (`None`: input that gives no addresses); a
/// key that owns text (a performer's name) is looked up by a borrowed form
/// of it ([`Pair`]), so a lookup never allocates: only a new sender does.
#[derive(Debug)]
pub struct Senders<T, K = Option<SocketAddr>> {
    map: BTreeMap<K, Slot<T>>,
    clock: u64,
    /// Adds an evicted sender's state to `evicted` (counters), if the tool
    /// keeps totals of it; else evicted state is dropped.
    fold: Option<fn(&mut T, T)>,
    evicted: Option<T>,
    evicted_senders: u64,
    /// Lookups refused by [`Self::try_insert_with`] past the bound.
    overflow: u64,
}

impl<T, K> Default for Senders<T, K> {
    fn default() -> Self {
        Self {
            map: BTreeMap::new(),
            clock: 0,
            fold: None,
            evicted: None,
            evicted_senders: 0,
            overflow: 0,
        }
    }
}

impl<T, K: Ord + Clone> Senders<T, K> {
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

    /// The state of `key`, made by `make` when new. Past [`MAX_SENDERS`] a
    /// new sender takes the place of the one heard from least recently.
    pub fn get_or_insert_with<Q>(&mut self, key: &Q, make: impl FnOnce() -> T) -> &mut T
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(gone) = self.make_room(key) {
            self.retire(gone);
        }
        self.stamp_or_insert(key, make)
    }

    /// As [`Self::get_or_insert_with`], with the state evicted to make room
    /// handed back instead of folded or dropped: for state the caller closes
    /// or adds up itself (sockets and their counts).
    pub fn get_or_insert_evicting<Q>(
        &mut self,
        key: &Q,
        make: impl FnOnce() -> T,
    ) -> (&mut T, Option<T>)
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        let gone = self.make_room(key);
        (self.stamp_or_insert(key, make), gone)
    }

    /// The state of `key`, made by `make` when new; `None` for a new sender
    /// past [`MAX_SENDERS`]: for state that must be closed, not dropped (a
    /// take's file), so it is never evicted.
    pub fn try_insert_with<Q>(&mut self, key: &Q, make: impl FnOnce() -> T) -> Option<&mut T>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        if !self.admits(key) {
            self.overflow += 1;
            return None;
        }
        Some(self.stamp_or_insert(key, make))
    }

    /// As [`Self::get_or_insert_evicting`], except that no sender `keep`
    /// says to keep (one that is live) is evicted: the least recently heard
    /// of the others makes room. `None`, counted in [`Self::overflow`], for
    /// a new sender when every tracked one is kept. So a flood of strangers
    /// evicts strangers and never a performer who is sending.
    pub fn get_or_insert_sparing<Q>(
        &mut self,
        key: &Q,
        make: impl FnOnce() -> T,
        keep: impl Fn(&T) -> bool,
    ) -> Option<(&mut T, Option<T>)>
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        let gone = if self.admits(key) {
            None
        } else {
            let Some(stalest) = self
                .map
                .iter()
                .filter(|(_, s)| !keep(&s.state))
                .min_by_key(|(_, s)| s.seen)
                .map(|(k, _)| k.clone())
            else {
                self.overflow += 1;
                return None;
            };
            self.evicted_senders += 1;
            self.map.remove::<K>(&stalest).map(|s| s.state)
        };
        Some((self.stamp_or_insert(key, make), gone))
    }

    /// Whether `key` has, or may get without an eviction, an entry of its own.
    pub fn admits<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.len() < MAX_SENDERS || self.map.contains_key(key)
    }

    /// Stamps `key` as the newest, inserting it (the only place a key is
    /// copied) when new.
    fn stamp_or_insert<Q>(&mut self, key: &Q, make: impl FnOnce() -> T) -> &mut T
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.clock += 1;
        let seen = self.clock;
        if !self.map.contains_key(key) {
            self.map.insert(
                key.to_owned(),
                Slot {
                    state: make(),
                    seen,
                },
            );
        }
        // Found by a second search: returning the first one's borrow from
        // one branch and inserting in the other is refused by the borrow
        // checker, and the insert needs the owned key only when new.
        let slot = self
            .map
            .get_mut(key)
            .expect("a key looked up or inserted just above");
        slot.seen = seen;
        &mut slot.state
    }

    /// Evicts the sender heard from least recently if `key` is new and the
    /// map is full, and hands back its state.
    fn make_room<Q>(&mut self, key: &Q) -> Option<T>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        if self.admits(key) {
            return None;
        }
        let stalest = self.map.iter().min_by_key(|(_, s)| s.seen)?.0.clone();
        let slot = self.map.remove::<K>(&stalest)?;
        self.evicted_senders += 1;
        Some(slot.state)
    }

    /// Folds an evicted sender's state into the aggregate, or drops it.
    fn retire(&mut self, gone: T) {
        if let Some(fold) = self.fold {
            match &mut self.evicted {
                Some(all) => fold(all, gone),
                None => self.evicted = Some(gone),
            }
        }
    }

    /// Forgets `key`, handing back its state (a sender moved to another
    /// table, a take closed).
    pub fn remove<Q>(&mut self, key: &Q) -> Option<T>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.remove(key).map(|s| s.state)
    }

    /// Keeps the senders `keep` says to (forgetting stale ones frees room).
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut T) -> bool) {
        self.map.retain(|k, slot| keep(k, &mut slot.state));
    }

    /// The state of `key`, if it is tracked (not stamped: reading is not
    /// hearing from a sender).
    pub fn get<Q>(&self, key: &Q) -> Option<&T>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.get(key).map(|s| &s.state)
    }

    /// The state of `key`, to change, if it is tracked (not stamped).
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut T>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.get_mut(key).map(|s| &mut s.state)
    }

    /// Whether `key` is tracked.
    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.contains_key(key)
    }

    /// How many senders are tracked.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether no sender is tracked.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every sender and its state, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &T)> {
        self.map.iter().map(|(k, s)| (k, &s.state))
    }

    /// Every sender, in key order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.map.keys()
    }

    /// Every sender's state, in key order.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.map.values().map(|s| &s.state)
    }

    /// Every sender and its state, to change (not stamped).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut T)> {
        self.map.iter_mut().map(|(k, s)| (k, &mut s.state))
    }

    /// Every sender's state, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.map.values_mut().map(|s| &mut s.state)
    }

    /// Every sender and its state, taken apart (to close takes at the end).
    pub fn into_entries(self) -> impl Iterator<Item = (K, T)> {
        self.map.into_iter().map(|(k, s)| (k, s.state))
    }

    /// How often [`Self::try_insert_with`] or [`Self::get_or_insert_sparing`]
    /// refused a new sender past the bound (one per lookup).
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

    /// The `few` senders with the most `by` (ties in key order), and how
    /// many others there are: what a stats line shows of a crowd.
    pub fn busiest(&self, few: usize, by: impl Fn(&T) -> u64) -> (Vec<(&K, &T)>, usize) {
        let mut all: Vec<(&K, &T)> = self.iter().collect();
        all.sort_by_key(|(_, v)| std::cmp::Reverse(by(v)));
        let more = all.len().saturating_sub(few);
        all.truncate(few);
        (all, more)
    }
}

impl<T: Default, K: Ord + Clone> Senders<T, K> {
    /// The state of `key`, default when new (bounded as
    /// [`Self::get_or_insert_with`]).
    pub fn get_or_default<Q>(&mut self, key: &Q) -> &mut T
    where
        K: Borrow<Q>,
        Q: Ord + ToOwned<Owned = K> + ?Sized,
    {
        self.get_or_insert_with(key, T::default)
    }
}

/// A key of two parts (a performer's name and a sender's address, a
/// performer and a protocol) that a [`Senders`] map can be searched by in
/// borrowed form: the owned `(String, Option<SocketAddr>)` and the lookup
/// `(&str, &Option<SocketAddr>)` both are a `Pair<str, Option<SocketAddr>>`,
/// ordered as the tuple is. See [`pair`].
pub trait Pair<A: ?Sized, B: ?Sized> {
    /// The two parts, borrowed.
    fn parts(&self) -> (&A, &B);
}

impl<A, B, QA, QB> Pair<QA, QB> for (A, B)
where
    A: Borrow<QA>,
    B: Borrow<QB>,
    QA: ?Sized,
    QB: ?Sized,
{
    fn parts(&self) -> (&QA, &QB) {
        (self.0.borrow(), self.1.borrow())
    }
}

/// Two borrowed parts as a key to look up: `senders.get_or_default(pair(&(name, &addr)))`.
pub fn pair<'a, A: ?Sized, B: ?Sized>(key: &'a (&'a A, &'a B)) -> &'a (dyn Pair<A, B> + 'a) {
    key
}

impl<QA: Ord + ?Sized, QB: Ord + ?Sized> PartialEq for dyn Pair<QA, QB> + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl<QA: Ord + ?Sized, QB: Ord + ?Sized> Eq for dyn Pair<QA, QB> + '_ {}

impl<QA: Ord + ?Sized, QB: Ord + ?Sized> PartialOrd for dyn Pair<QA, QB> + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<QA: Ord + ?Sized, QB: Ord + ?Sized> Ord for dyn Pair<QA, QB> + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts().cmp(&other.parts())
    }
}

// An owned pair is its borrowed form: what lets a map keyed by owned pairs be
// searched by borrowed ones, with the same order as the tuple's own.
impl<'a, A, B, QA, QB> Borrow<dyn Pair<QA, QB> + 'a> for (A, B)
where
    A: Borrow<QA> + 'a,
    B: Borrow<QB> + 'a,
    QA: ?Sized + 'a,
    QB: ?Sized + 'a,
{
    fn borrow(&self) -> &(dyn Pair<QA, QB> + 'a) {
        self
    }
}

impl<'a, QA, QB> ToOwned for dyn Pair<QA, QB> + 'a
where
    QA: ToOwned + ?Sized + 'a,
    QB: ToOwned + ?Sized + 'a,
{
    type Owned = (QA::Owned, QB::Owned);

    fn to_owned(&self) -> Self::Owned {
        let (a, b) = self.parts();
        (a.to_owned(), b.to_owned())
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
        *s.get_or_default(&addr(40_000)) += 1;
        for port in 0..1000u16 {
            *s.get_or_default(&addr(port)) += 1;
            // The performer keeps sending among the strangers.
            *s.get_or_default(&addr(40_000)) += 1;
        }
        assert_eq!(s.len(), MAX_SENDERS);
        assert_eq!(s.get(&None), None, "nobody is folded into a shared entry");
        assert_eq!(s.get(&addr(40_000)), Some(&1001), "a live sender stays");
        assert_eq!(s.evicted_senders(), 1000 - (MAX_SENDERS as u64 - 1));
        let total = s.values().sum::<u64>() + s.evicted().copied().unwrap_or(0);
        assert_eq!(total, 2001);
        // A new sender after them all gets its own entry.
        *s.get_or_default(&addr(50_000)) += 1;
        assert_eq!(s.get(&addr(50_000)), Some(&1));
        assert_eq!(s.get(&addr(40_000)), Some(&1001));
        let (top, more) = s.busiest(3, |n| *n);
        assert_eq!(
            top.first().map(|(a, n)| (**a, **n)),
            Some((addr(40_000), 1001))
        );
        assert_eq!((top.len(), more), (3, MAX_SENDERS - 3));
    }

    /// Issue 58: a flood of strangers faster than a performer's own rate
    /// (256 new keys between two of her samples) evicted her state and
    /// socket. Sparing what is live, strangers evict strangers; with every
    /// entry live a newcomer is refused and counted.
    #[test]
    fn sparing_never_evicts_a_kept_sender() {
        // State: samples heard; kept when it has sent 3 or more.
        let mut s: Senders<u32> = Senders::new();
        let keep = |n: &u32| *n >= 3;
        for _ in 0..3 {
            *s.get_or_insert_sparing(&addr(40_000), || 0, keep)
                .unwrap()
                .0 += 1;
        }
        // 1000 one-shot strangers in a row, none of them kept.
        for port in 0..1000u16 {
            let (n, _) = s.get_or_insert_sparing(&addr(port), || 0, keep).unwrap();
            *n += 1;
        }
        assert_eq!(s.get(&addr(40_000)), Some(&3), "the performer stays");
        assert_eq!(s.len(), MAX_SENDERS);
        // Every entry kept: a newcomer is refused, nobody evicted.
        let mut full: Senders<u32> = Senders::new();
        for port in 0..MAX_SENDERS as u16 {
            full.get_or_insert_sparing(&addr(port), || 3, keep).unwrap();
        }
        let evicted = full.evicted_senders();
        assert!(
            full.get_or_insert_sparing(&addr(60_000), || 0, keep)
                .is_none()
        );
        assert_eq!((full.overflow(), full.evicted_senders()), (1, evicted));
        // The evicted state is handed back.
        let mut one: Senders<u32> = Senders::new();
        for port in 0..MAX_SENDERS as u16 {
            one.get_or_insert_sparing(&addr(port), || u32::from(port), |_| false);
        }
        let (_, gone) = one
            .get_or_insert_sparing(&addr(60_000), || 0, |_| false)
            .unwrap();
        assert_eq!(gone, Some(0), "the stalest, port 0");
    }

    /// A sender looked up again is not re-stamped (it is the newest
    /// already); one forgotten by `retain` and back is stamped anew, so
    /// eviction still takes the stalest, not it.
    #[test]
    fn a_sender_back_after_retain_is_the_newest() {
        let mut s: Senders<u16> = Senders::new();
        for port in 2..=MAX_SENDERS as u16 {
            s.get_or_insert_with(&addr(port), || port);
        }
        s.get_or_insert_with(&addr(1), || 1);
        s.get_or_insert_with(&addr(1), || 1);
        s.retain(|src, _| *src != addr(1));
        s.get_or_insert_with(&addr(1), || 1);
        assert_eq!(s.len(), MAX_SENDERS);
        s.get_or_insert_with(&addr(9999), || 0);
        assert!(s.get(&addr(1)).is_some(), "the newest sender was evicted");
        assert!(s.get(&addr(2)).is_none(), "the stalest sender stayed");
    }

    #[test]
    fn without_a_fold_evicted_state_is_dropped() {
        let mut s: Senders<u16> = Senders::new();
        for port in 0..300u16 {
            s.get_or_insert_with(&addr(port), || port);
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
            assert!(s.try_insert_with(&addr(port), || port).is_some());
        }
        assert!(s.try_insert_with(&addr(9999), || 0).is_none());
        assert_eq!(s.try_insert_with(&addr(3), || 0).copied(), Some(3));
        assert_eq!(s.len(), MAX_SENDERS);
        assert_eq!(s.overflow(), 1);
        let ports: Vec<u16> = s.into_entries().map(|(_, p)| p).take(3).collect();
        assert_eq!(ports, [0, 1, 2], "address order");
    }

    /// A key of a name and an address is searched by borrowed parts, in
    /// the tuple's order, and copied only when new.
    #[test]
    fn pairs_are_looked_up_by_borrowed_parts() {
        let mut s: Senders<u32, (String, Option<SocketAddr>)> = Senders::new();
        let name = String::from("alice");
        *s.get_or_default(pair(&(name.as_str(), &addr(1)))) += 1;
        *s.get_or_default(pair(&("alice", &addr(1)))) += 1;
        *s.get_or_default(pair(&("bob", &None))) += 5;
        *s.get_or_default(pair(&("alice", &None))) += 7;
        assert_eq!(s.len(), 3);
        assert_eq!(s.get(pair(&("alice", &addr(1)))), Some(&2));
        assert_eq!(s.get(pair(&("carol", &addr(1)))), None);
        let keys: Vec<(&str, Option<SocketAddr>)> =
            s.keys().map(|(n, a)| (n.as_str(), *a)).collect();
        assert_eq!(
            keys,
            [("alice", None), ("alice", addr(1)), ("bob", None)],
            "the owned tuple's order"
        );
        let mut two: Senders<u8, (String, String)> = Senders::new();
        two.get_or_insert_with(pair(&("alice", "vmc")), || 1);
        two.get_or_insert_with(pair(&("alice", "mocopi")), || 2);
        assert_eq!(two.get(pair(&("alice", "vmc"))), Some(&1));
        assert_eq!(two.get(pair(&("alice", "vm"))), None);
    }

    /// State the caller must close comes back from the eviction that made
    /// room for a new sender, neither folded nor dropped.
    #[test]
    fn an_evicting_lookup_hands_back_the_stalest_state() {
        let mut s: Senders<u16, (String, Option<SocketAddr>)> =
            Senders::folding(|_, _| panic!("not folded"));
        for port in 0..MAX_SENDERS as u16 {
            let who = if port % 2 == 0 { "alice" } else { "bob" };
            let (_, gone) = s.get_or_insert_evicting(pair(&(who, &addr(port))), || port);
            assert_eq!(gone, None);
        }
        // A known one is stamped newest and evicts nothing.
        let (v, gone) = s.get_or_insert_evicting(pair(&("alice", &addr(0))), || 9);
        assert_eq!((*v, gone), (0, None));
        let (v, gone) = s.get_or_insert_evicting(pair(&("carol", &None)), || 999);
        assert_eq!((*v, gone), (999, Some(1)), "bob's port 1 was the stalest");
        assert_eq!((s.len(), s.evicted_senders()), (MAX_SENDERS, 1));
        assert!(s.evicted().is_none());
        let (v, gone) = s.get_or_insert_evicting(pair(&("bob", &addr(1))), || 1000);
        assert_eq!((*v, gone), (1000, Some(2)), "then alice's port 2");
    }
}
