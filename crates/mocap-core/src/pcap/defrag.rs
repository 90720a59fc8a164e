//! IPv4 and IPv6 fragment reassembly with bounded memory, driven by capture
//! time: `handle_fragment(now, f)` in, whole payloads out of
//! [`Defrag::poll_datagram`].

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use super::link::Fragment;

/// Largest reassembled IP payload (the 16-bit IP length field).
const MAX_PAYLOAD: usize = 65_535;

/// Bounds on what the reassembler holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DefragLimits {
    /// Bytes held in incomplete datagrams, all together.
    pub max_bytes: usize,
    /// Incomplete datagrams at once.
    pub max_datagrams: usize,
    /// Capture time after its first fragment at which an incomplete datagram is dropped.
    pub timeout: Duration,
}

impl Default for DefragLimits {
    /// 4 MiB, 256 datagrams, 5 s: far above what a mocap stream needs in flight
    /// (one or two datagrams), far below what a flood could use.
    fn default() -> Self {
        Self {
            max_bytes: 4 << 20,
            max_datagrams: 256,
            timeout: Duration::from_secs(5),
        }
    }
}

/// Reassembly counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DefragStats {
    /// Fragments seen.
    pub fragments: u64,
    /// Datagrams completed.
    pub reassembled: u64,
    /// Fragments thrown away: invalid, evicted by the caps, or timed out.
    pub dropped: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    src: IpAddr,
    dst: IpAddr,
    protocol: u8,
    id: u32,
}

#[derive(Debug)]
struct Partial {
    first_ts: Duration,
    seq: u64,
    data: Vec<u8>,
    /// Received byte ranges, sorted and merged.
    have: Vec<(usize, usize)>,
    total: Option<usize>,
    fragments: u64,
}

impl Partial {
    fn complete(&self) -> bool {
        matches!((self.total, self.have.as_slice()), (Some(t), [(0, end)]) if *end == t)
    }

    fn add_range(&mut self, start: usize, end: usize) {
        self.have.push((start, end));
        self.have.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.have.len());
        for &(s, e) in &self.have {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        self.have = merged;
    }
}

/// Reassembles fragments into whole IP payloads (for UDP: header and data).
#[derive(Debug, Default)]
pub struct Defrag {
    limits: DefragLimits,
    partial: HashMap<Key, Partial>,
    held: usize,
    seq: u64,
    stats: DefragStats,
    /// The payload the last fragment completed, until polled, with its
    /// fragment count. One at most: a fragment completes at most one
    /// datagram, so a caller polling after each never loses one, and one
    /// that does not holds one payload beyond the caps (the older is
    /// dropped, its fragments counted).
    ready: Option<(Vec<u8>, u64)>,
}

impl Defrag {
    /// A reassembler with these bounds.
    pub fn new(limits: DefragLimits) -> Self {
        Self {
            limits,
            ..Self::default()
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> DefragStats {
        self.stats
    }

    /// Bytes held in incomplete datagrams.
    pub fn held_bytes(&self) -> usize {
        self.held
    }

    /// Incomplete datagrams held.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }

    /// The payload (for UDP: header and data) the last fragment completed,
    /// once.
    pub fn poll_datagram(&mut self) -> Option<Vec<u8>> {
        self.ready.take().map(|(data, _)| data)
    }

    /// Adds a fragment seen at capture time `now`; when it completes its
    /// datagram, [`Self::poll_datagram`] has the payload. Fragments may come
    /// in any order and more than once; overlaps take the newest bytes.
    pub fn handle_fragment(&mut self, now: Duration, f: &Fragment<'_>) {
        let Some(whole) = self.reassemble(now, f) else {
            return;
        };
        if let Some((_, fragments)) = self.ready.replace(whole) {
            self.stats.dropped += fragments;
        }
    }

    /// The reassembly: the payload and its fragment count when `f`
    /// completes its datagram.
    fn reassemble(&mut self, ts: Duration, f: &Fragment<'_>) -> Option<(Vec<u8>, u64)> {
        self.stats.fragments += 1;
        self.handle_timeout(ts);
        let end = f.offset.checked_add(f.data.len())?;
        // Fragments that are not a multiple of 8 bytes except the last, or that
        // run past the IP length limit, cannot be part of a real datagram.
        // An empty fragment is only meaningful as the last one (it fixes the length).
        if end > MAX_PAYLOAD
            || (f.more && !f.data.len().is_multiple_of(8))
            || (f.more && f.data.is_empty())
        {
            self.stats.dropped += 1;
            return None;
        }
        let key = Key {
            src: f.src,
            dst: f.dst,
            protocol: f.protocol,
            id: f.id,
        };
        let grow = match self.partial.get(&key) {
            Some(p) => end.saturating_sub(p.data.len()),
            None => end,
        };
        if !self.partial.contains_key(&key) {
            while self.partial.len() >= self.limits.max_datagrams.max(1) {
                if !self.evict_oldest(None) {
                    break;
                }
            }
        }
        while self.held + grow > self.limits.max_bytes {
            if !self.evict_oldest(Some(&key)) {
                self.stats.dropped += 1;
                return None;
            }
        }
        self.seq += 1;
        let seq = self.seq;
        let p = self.partial.entry(key).or_insert_with(|| Partial {
            first_ts: ts,
            seq,
            data: Vec::new(),
            have: Vec::new(),
            total: None,
            fragments: 0,
        });
        if !f.more {
            // Two different "last" fragments: the datagram is inconsistent.
            if p.total.is_some_and(|t| t != end) || p.have.last().is_some_and(|r| r.1 > end) {
                let dropped = p.fragments + 1;
                self.remove(&key);
                self.stats.dropped += dropped;
                return None;
            }
            p.total = Some(end);
        } else if p.total.is_some_and(|t| end > t) {
            self.stats.dropped += 1;
            return None;
        }
        if p.data.len() < end {
            p.data.resize(end, 0);
            self.held += grow;
        }
        if let Some(slot) = p.data.get_mut(f.offset..end) {
            slot.copy_from_slice(f.data);
        }
        p.add_range(f.offset, end);
        p.fragments += 1;
        if !p.complete() {
            return None;
        }
        let p = self.remove(&key)?;
        self.stats.reassembled += 1;
        Some((p.data, p.fragments))
    }

    /// Drops datagrams whose first fragment is older than the timeout at `now`.
    pub fn handle_timeout(&mut self, now: Duration) {
        let timeout = self.limits.timeout;
        let stale: Vec<Key> = self
            .partial
            .iter()
            .filter(|(_, p)| now.saturating_sub(p.first_ts) > timeout)
            .map(|(k, _)| *k)
            .collect();
        for k in stale {
            if let Some(p) = self.remove(&k) {
                self.stats.dropped += p.fragments;
            }
        }
    }

    /// Drops everything still incomplete (end of capture), counting it.
    pub fn finish(&mut self) {
        let keys: Vec<Key> = self.partial.keys().copied().collect();
        for k in keys {
            if let Some(p) = self.remove(&k) {
                self.stats.dropped += p.fragments;
            }
        }
    }

    /// Drops the oldest incomplete datagram (other than `keep`), counting its
    /// fragments; false when there is none to drop.
    fn evict_oldest(&mut self, keep: Option<&Key>) -> bool {
        let oldest = self
            .partial
            .iter()
            .filter(|(k, _)| Some(*k) != keep)
            .min_by_key(|(_, p)| p.seq)
            .map(|(k, _)| *k);
        match oldest.and_then(|k| self.remove(&k)) {
            Some(p) => {
                self.stats.dropped += p.fragments;
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, key: &Key) -> Option<Partial> {
        let p = self.partial.remove(key)?;
        self.held = self.held.saturating_sub(p.data.len());
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds one fragment; the payload it completed.
    fn feed(r: &mut Defrag, now: Duration, f: &Fragment<'_>) -> Option<Vec<u8>> {
        r.handle_fragment(now, f);
        r.poll_datagram()
    }

    fn frag(id: u32, offset: usize, more: bool, data: &[u8]) -> Fragment<'_> {
        Fragment {
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            protocol: 17,
            id,
            offset,
            more,
            data,
        }
    }

    fn datagram(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn pieces(d: &[u8], per: usize) -> Vec<(usize, bool, &[u8])> {
        d.chunks(per)
            .enumerate()
            .map(|(i, c)| (i * per, (i + 1) * per < d.len(), c))
            .collect()
    }

    #[test]
    fn in_order_reversed_and_duplicated() {
        let d = datagram(4500);
        let parts = pieces(&d, 1480);
        for order in [vec![0, 1, 2, 3], vec![3, 2, 1, 0], vec![1, 1, 3, 0, 0, 2]] {
            let mut r = Defrag::default();
            let mut out = None;
            for &i in &order {
                let (off, more, data) = parts[i];
                if let Some(done) = feed(&mut r, Duration::ZERO, &frag(9, off, more, data)) {
                    assert!(out.is_none(), "completed twice");
                    out = Some(done);
                }
            }
            assert_eq!(out.as_deref(), Some(&d[..]), "{order:?}");
            assert_eq!(r.held_bytes(), 0);
            assert_eq!(r.stats().reassembled, 1);
        }
    }

    #[test]
    fn an_unpolled_payload_is_replaced_by_the_next_and_counted() {
        let mut r = Defrag::default();
        r.handle_fragment(Duration::ZERO, &frag(1, 0, true, &[1; 8]));
        r.handle_fragment(Duration::ZERO, &frag(1, 8, false, &[1; 8]));
        r.handle_fragment(Duration::ZERO, &frag(2, 0, true, &[2; 8]));
        r.handle_fragment(Duration::ZERO, &frag(2, 8, false, &[2; 8]));
        assert_eq!(r.poll_datagram(), Some(vec![2; 16]));
        assert_eq!(r.poll_datagram(), None);
        let s = r.stats();
        assert_eq!((s.fragments, s.reassembled, s.dropped), (4, 2, 2));
    }

    #[test]
    fn flood_of_never_finished_datagrams_stays_under_the_cap() {
        let limits = DefragLimits {
            max_bytes: 64 * 1024,
            max_datagrams: 16,
            timeout: Duration::from_secs(5),
        };
        let mut r = Defrag::new(limits);
        let chunk = [0u8; 1480];
        for id in 0..10_000u32 {
            // First fragments only: nothing ever completes.
            feed(&mut r, Duration::ZERO, &frag(id, 0, true, &chunk));
            assert!(r.held_bytes() <= limits.max_bytes);
            assert!(r.pending() <= limits.max_datagrams);
        }
        // A real datagram arriving during the flood still reassembles.
        let d = datagram(3000);
        let mut got = None;
        for (off, more, data) in pieces(&d, 1480) {
            if let Some(done) = feed(&mut r, Duration::ZERO, &frag(999_999, off, more, data)) {
                got = Some(done);
            }
        }
        assert_eq!(got.as_deref(), Some(&d[..]));
        assert!(r.stats().dropped >= 10_000 - 16);
    }

    #[test]
    fn incomplete_datagrams_time_out_by_capture_time() {
        let mut r = Defrag::default();
        feed(&mut r, Duration::from_secs(1), &frag(1, 0, true, &[0; 8]));
        assert_eq!(r.pending(), 1);
        r.handle_timeout(Duration::from_secs(7));
        assert_eq!(r.pending(), 0);
        assert_eq!(r.stats().dropped, 1);
    }

    #[test]
    fn an_empty_last_fragment_fixes_the_length() {
        let mut r = Defrag::default();
        assert!(feed(&mut r, Duration::ZERO, &frag(5, 0, true, &[7; 16])).is_none());
        assert_eq!(
            feed(&mut r, Duration::ZERO, &frag(5, 16, false, &[])).as_deref(),
            Some(&[7u8; 16][..])
        );
    }

    #[test]
    fn impossible_fragments_are_dropped() {
        let mut r = Defrag::default();
        // Not a multiple of 8 but more fragments follow.
        assert!(feed(&mut r, Duration::ZERO, &frag(1, 0, true, &[0; 7])).is_none());
        // Past 65535 bytes.
        assert!(feed(&mut r, Duration::ZERO, &frag(2, 65_528, false, &[0; 16])).is_none());
        // Two different ends.
        feed(&mut r, Duration::ZERO, &frag(3, 8, false, &[0; 8]));
        assert!(feed(&mut r, Duration::ZERO, &frag(3, 8, false, &[0; 16])).is_none());
        assert_eq!(r.pending(), 0);
        assert_eq!(r.stats().dropped, 4);
    }
}
