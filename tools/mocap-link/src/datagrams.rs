//! The samples' own datagram path (`subscribe --datagrams`): beside the
//! Zenoh session, each sample also goes to the subscriber as one UDP
//! datagram, sealed with a key the subscriber hands out over Zenoh (so only
//! who may query the room's `_datagrams` key, under Zenoh's TLS and access
//! control, can read or forge them). Zenoh's transport drops every frame
//! that arrives after a later one, which on a reordering path is most of
//! them (docs/link.md, "Across the internet"); a datagram per sample is
//! lost or reordered alone, as plain UDP is. Both copies carry the
//! publisher's timestamp: the subscriber sends on whichever comes first.
//!
//! A datagram: `MLD1`, the subscriber key's id (8 bytes), a nonce (12:
//! the publisher's random 4-byte prefix and a counter), then sealed with
//! ChaCha20-Poly1305 (ring), the first 12 bytes as associated data: the
//! publisher's clock id (16), the capture time (NTP64, 8, big-endian), the
//! key's length (1) and text, the sender's length (1) and text, the payload.

use std::collections::BTreeMap;

use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use ring::rand::{SecureRandom as _, SystemRandom};

/// The first bytes of every datagram of this path.
pub(crate) const MAGIC: [u8; 4] = *b"MLD1";
const HEAD: usize = 4 + 8 + 12;
const TAG: usize = 16;
/// Counters a receiver remembers behind the newest, per publisher: a
/// datagram reordered further back is refused (it would be stale anyway).
const WINDOW: u64 = 1024;
/// Publishers (nonce prefixes) a receiver keeps replay windows for.
const MAX_PREFIXES: usize = 256;

/// A subscriber's key, as it hands it out: id and secret.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) id: [u8; 8],
    pub(crate) secret: [u8; 32],
}

impl std::fmt::Debug for Key {
    /// The id only: a log never shows the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({})", hex(&self.id))
    }
}

impl Key {
    /// A new random key.
    ///
    /// # Errors
    /// The system's random source failed.
    pub(crate) fn random() -> anyhow::Result<Self> {
        let rng = SystemRandom::new();
        let mut k = Self {
            id: [0; 8],
            secret: [0; 32],
        };
        rng.fill(&mut k.id)
            .and_then(|()| rng.fill(&mut k.secret))
            .map_err(|_| anyhow::anyhow!("no random numbers from the system"))?;
        Ok(k)
    }

    fn aead(&self) -> LessSafeKey {
        // A 32-byte key is what ChaCha20-Poly1305 takes: this cannot fail.
        LessSafeKey::new(
            UnboundKey::new(&aead::CHACHA20_POLY1305, &self.secret)
                .unwrap_or_else(|_| unreachable!("a 32-byte ChaCha20 key")),
        )
    }
}

/// What a datagram carries: one sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sample<'a> {
    /// The publisher's clock id (Zenoh timestamp id, little-endian bytes).
    pub(crate) clock: [u8; 16],
    /// The capture time, NTP64 on that clock.
    pub(crate) capture: u64,
    /// The Zenoh key it was published under.
    pub(crate) key: &'a str,
    /// The remote sender, as text (the attachment's).
    pub(crate) sender: &'a str,
    pub(crate) payload: &'a [u8],
}

/// Seals samples for one subscriber.
pub(crate) struct Sealer {
    key: LessSafeKey,
    id: [u8; 8],
    prefix: [u8; 4],
    counter: u64,
}

impl Sealer {
    /// For `key`, with a random nonce prefix of this publisher's.
    ///
    /// # Errors
    /// The system's random source failed.
    pub(crate) fn new(key: &Key) -> anyhow::Result<Self> {
        let mut prefix = [0; 4];
        SystemRandom::new()
            .fill(&mut prefix)
            .map_err(|_| anyhow::anyhow!("no random numbers from the system"))?;
        Ok(Self {
            key: key.aead(),
            id: key.id,
            prefix,
            counter: 0,
        })
    }

    /// `s` as one datagram in `out`; `false` when its key or sender is
    /// longer than 255 bytes (not sent).
    pub(crate) fn seal(&mut self, s: &Sample<'_>, out: &mut Vec<u8>) -> bool {
        let (Ok(klen), Ok(slen)) = (u8::try_from(s.key.len()), u8::try_from(s.sender.len())) else {
            return false;
        };
        self.counter = self.counter.saturating_add(1);
        let mut nonce = [0; 12];
        for (n, b) in nonce
            .iter_mut()
            .zip(self.prefix.iter().chain(&self.counter.to_be_bytes()))
        {
            *n = *b;
        }
        let mut aad = [0; 12];
        for (a, b) in aad.iter_mut().zip(MAGIC.iter().chain(&self.id)) {
            *a = *b;
        }
        out.clear();
        out.extend_from_slice(&aad);
        out.extend_from_slice(&nonce);
        let mut body = Vec::with_capacity(26 + s.key.len() + s.sender.len() + s.payload.len());
        body.extend_from_slice(&s.clock);
        body.extend_from_slice(&s.capture.to_be_bytes());
        body.push(klen);
        body.extend_from_slice(s.key.as_bytes());
        body.push(slen);
        body.extend_from_slice(s.sender.as_bytes());
        body.extend_from_slice(s.payload);
        let aad = Aad::from(aad);
        if self
            .key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), aad, &mut body)
            .is_err()
        {
            return false;
        }
        out.extend_from_slice(&body);
        true
    }
}

/// Why a datagram was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not this path's (no magic, too short).
    NotOurs,
    /// Sealed for another key (an old subscriber session's, say).
    OtherKey,
    /// The seal does not hold: damaged or forged.
    Forged,
    /// A counter already seen, or too far behind: a replay.
    Replayed,
    /// Opened, but its fields do not add up.
    Malformed,
}

/// Opens the datagrams sealed for one key.
pub(crate) struct Opener {
    key: LessSafeKey,
    id: [u8; 8],
    /// By nonce prefix: the newest counter and which of the [`WINDOW`]
    /// before it were seen.
    windows: BTreeMap<[u8; 4], (u64, Vec<u64>)>,
}

impl Opener {
    pub(crate) fn new(key: &Key) -> Self {
        Self {
            key: key.aead(),
            id: key.id,
            windows: BTreeMap::new(),
        }
    }

    /// The sample `datagram` carries, opened in `buf`.
    pub(crate) fn open<'b>(
        &mut self,
        datagram: &[u8],
        buf: &'b mut Vec<u8>,
    ) -> Result<Sample<'b>, Refused> {
        if datagram.len() < HEAD + TAG || datagram.get(..4) != Some(&MAGIC[..]) {
            return Err(Refused::NotOurs);
        }
        if datagram.get(4..12) != Some(&self.id[..]) {
            return Err(Refused::OtherKey);
        }
        let nonce: [u8; 12] = datagram
            .get(12..HEAD)
            .and_then(|n| n.try_into().ok())
            .ok_or(Refused::NotOurs)?;
        let aad: [u8; 12] = datagram
            .get(..12)
            .and_then(|a| a.try_into().ok())
            .ok_or(Refused::NotOurs)?;
        buf.clear();
        buf.extend_from_slice(datagram.get(HEAD..).unwrap_or_default());
        let plain = self
            .key
            .open_in_place(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad),
                buf.as_mut_slice(),
            )
            .map_err(|_| Refused::Forged)?;
        let (prefix, counter) = nonce.split_first_chunk::<4>().ok_or(Refused::NotOurs)?;
        let counter = u64::from_be_bytes(counter.try_into().map_err(|_| Refused::NotOurs)?);
        let prefix = *prefix;
        if !fresh(&mut self.windows, prefix, counter) {
            return Err(Refused::Replayed);
        }
        let len = plain.len();
        parse(buf.get(..len).unwrap_or_default()).ok_or(Refused::Malformed)
    }
}

/// Whether `counter` of publisher `prefix` is new, remembering it.
fn fresh(windows: &mut BTreeMap<[u8; 4], (u64, Vec<u64>)>, prefix: [u8; 4], counter: u64) -> bool {
    if !windows.contains_key(&prefix) && windows.len() >= MAX_PREFIXES {
        // The publisher with the lowest newest counter makes room: a
        // process that is gone, most likely.
        if let Some(k) = windows.iter().min_by_key(|(_, w)| w.0).map(|(k, _)| *k) {
            windows.remove(&k);
        }
    }
    let (newest, seen) = windows.entry(prefix).or_insert((0, Vec::new()));
    if counter > *newest {
        seen.retain(|c| counter.saturating_sub(*c) < WINDOW);
        if *newest > 0 {
            seen.push(*newest);
        }
        *newest = counter;
        true
    } else if counter == *newest
        || newest.saturating_sub(counter) >= WINDOW
        || seen.contains(&counter)
    {
        false
    } else {
        seen.push(counter);
        true
    }
}

fn parse(p: &[u8]) -> Option<Sample<'_>> {
    let clock: [u8; 16] = p.get(..16)?.try_into().ok()?;
    let capture = u64::from_be_bytes(p.get(16..24)?.try_into().ok()?);
    let klen = usize::from(*p.get(24)?);
    let key = std::str::from_utf8(p.get(25..25 + klen)?).ok()?;
    let at = 25 + klen;
    let slen = usize::from(*p.get(at)?);
    let sender = std::str::from_utf8(p.get(at + 1..at + 1 + slen)?).ok()?;
    let payload = p.get(at + 1 + slen..)?;
    Some(Sample {
        clock,
        capture,
        key,
        sender,
        payload,
    })
}

/// Bytes as lowercase hex.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Hex back to bytes, exactly `N` of them.
pub(crate) fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let mut out = [0; N];
    for (o, pair) in out.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        *o = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::indexing_slicing,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    fn sample(payload: &[u8]) -> Sample<'_> {
        Sample {
            clock: [7; 16],
            capture: 0x0123_4567_89ab_cdef,
            key: "mocap/show/alice/mocopi",
            sender: "192.168.1.20:50012",
            payload,
        }
    }

    #[test]
    fn a_sealed_sample_opens_as_it_was() {
        let key = Key::random().unwrap();
        let mut sealer = Sealer::new(&key).unwrap();
        let mut opener = Opener::new(&key);
        let (mut d, mut buf) = (Vec::new(), Vec::new());
        let payload = vec![0x5a; 1600];
        assert!(sealer.seal(&sample(&payload), &mut d));
        assert_eq!(&d[..4], b"MLD1");
        assert_eq!(d.len(), HEAD + 16 + 8 + 1 + 23 + 1 + 18 + 1600 + TAG);
        assert_eq!(opener.open(&d, &mut buf), Ok(sample(&payload)));
    }

    #[test]
    fn forgeries_replays_and_strangers_are_refused() {
        let key = Key::random().unwrap();
        let mut sealer = Sealer::new(&key).unwrap();
        let mut opener = Opener::new(&key);
        let (mut d, mut buf) = (Vec::new(), Vec::new());
        assert!(sealer.seal(&sample(b"pose"), &mut d));
        // Any bit flipped, in the header or the sealed part.
        for at in [5, 14, HEAD + 3, d.len() - 1] {
            let mut bad = d.clone();
            bad[at] ^= 1;
            let r = opener.open(&bad, &mut buf);
            assert!(
                matches!(r, Err(Refused::Forged | Refused::OtherKey)),
                "{at}: {r:?}"
            );
        }
        assert!(opener.open(&d, &mut buf).is_ok());
        assert_eq!(opener.open(&d, &mut buf), Err(Refused::Replayed));
        // Another key's seal, and bytes that are not ours.
        let other = Key::random().unwrap();
        let mut theirs = Sealer::new(&other).unwrap();
        let mut e = Vec::new();
        assert!(theirs.seal(&sample(b"pose"), &mut e));
        assert_eq!(opener.open(&e, &mut buf), Err(Refused::OtherKey));
        assert_eq!(opener.open(b"/VMC/Ext/OK", &mut buf), Err(Refused::NotOurs));
        assert_eq!(opener.open(&[], &mut buf), Err(Refused::NotOurs));
    }

    #[test]
    fn reordered_datagrams_open_once_each() {
        let key = Key::random().unwrap();
        let mut sealer = Sealer::new(&key).unwrap();
        let mut opener = Opener::new(&key);
        let mut sealed = Vec::new();
        for i in 0..20u8 {
            let mut d = Vec::new();
            assert!(sealer.seal(&sample(&[i]), &mut d));
            sealed.push(d);
        }
        let mut buf = Vec::new();
        // The last first (it overtook the rest), then the others.
        let order: Vec<usize> = std::iter::once(19).chain(0..19).collect();
        for i in order {
            let s = opener.open(&sealed[i], &mut buf).unwrap();
            assert_eq!(s.payload, [i as u8]);
        }
        for d in &sealed {
            assert_eq!(opener.open(d, &mut buf), Err(Refused::Replayed));
        }
    }

    #[test]
    fn the_replay_window_is_bounded() {
        let mut w = BTreeMap::new();
        let p = [1, 2, 3, 4];
        for c in 1..=5000 {
            assert!(fresh(&mut w, p, c));
        }
        assert!(w[&p].1.len() <= WINDOW as usize);
        assert!(!fresh(&mut w, p, 5000 - WINDOW), "too far behind");
        // Counters at the top of the range: no overflow.
        assert!(fresh(&mut w, p, u64::MAX));
        assert!(!fresh(&mut w, p, u64::MAX));
        assert!(fresh(&mut w, p, u64::MAX - 1));
        for prefix in 0..1000u32 {
            fresh(&mut w, prefix.to_be_bytes(), 1);
        }
        assert!(w.len() <= MAX_PREFIXES);
    }

    #[test]
    fn hex_goes_both_ways() {
        let k = Key::random().unwrap();
        assert_eq!(unhex::<32>(&hex(&k.secret)), Some(k.secret));
        assert_eq!(unhex::<8>("zz00000000000000"), None);
        assert_eq!(unhex::<8>("00"), None);
        assert!(!format!("{k:?}").contains(&hex(&k.secret)));
    }
}
