//! What a relay forwards to one destination: address and bone filters,
//! expression renames, and a per-stream rate limit. Pure: time is passed in.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use super::names::{vrm0_to_vrm1, vrm1_to_vrm0};
use crate::osc::{self, Arg, Message, Pattern};

/// Expression-name rewriting between VRM versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rename {
    /// `Joy` → `happy`, `Blink_L` → `blinkLeft`, …
    Vrm0ToVrm1,
    /// The reverse.
    Vrm1ToVrm0,
}

/// Filters and rewrites for one destination. Empty rules forward bytes as they came.
#[derive(Debug, Default)]
pub struct Rules {
    /// Keep only messages whose address matches one of these.
    pub only: Vec<Pattern>,
    /// Drop messages whose address matches one of these.
    pub drop: Vec<Pattern>,
    /// Keep only these bones (Bone/Pos).
    pub bones: Option<Vec<String>>,
    /// Drop these bones (Bone/Pos).
    pub drop_bones: Vec<String>,
    /// Rename expressions in Blend/Val.
    pub rename: Option<Rename>,
    /// At most this many updates per second per stream (address + name).
    pub max_rate: Option<f64>,
    /// Send every message in its own datagram instead of bundles.
    pub flatten: bool,
    /// 1€ smoothing of bones and blendshapes (state kept per source by the relay).
    pub smooth: Option<super::SmoothOptions>,
}

const BONE_POS: &str = "/VMC/Ext/Bone/Pos";
const BLEND_VAL: &str = "/VMC/Ext/Blend/Val";

impl Rules {
    /// Whether datagrams pass untouched (no decoding needed).
    pub fn is_raw(&self) -> bool {
        self.only.is_empty()
            && self.drop.is_empty()
            && self.bones.is_none()
            && self.drop_bones.is_empty()
            && self.rename.is_none()
            && self.max_rate.is_none()
            && !self.flatten
            && self.smooth.is_none()
    }

    /// Whether these rules need no more of a message than its address and
    /// first string (filters and renames: no smoothing, no rate limit), so
    /// [`Lean`] can apply them to borrowed bytes.
    pub fn is_lean(&self) -> bool {
        self.max_rate.is_none() && self.smooth.is_none()
    }

    /// The message to forward, rewritten, or `None` when the rules drop it.
    pub fn apply(&self, m: &Message) -> Option<Message> {
        let addr = m.address.as_str();
        if !self.address_passes(addr) {
            return None;
        }
        let mut out = m.clone();
        match self.verdict(addr, first_string(m)) {
            Verdict::Drop => return None,
            Verdict::Keep => {}
            Verdict::Rename(new) => {
                let new = new.to_owned();
                if let Some(Arg::String(name)) = out.args.first_mut() {
                    *name = new;
                }
            }
        }
        Some(out)
    }

    /// `--only` and `--drop`: what depends on the address alone.
    fn address_passes(&self, addr: &str) -> bool {
        (self.only.is_empty() || self.only.iter().any(|p| p.matches(addr)))
            && !self.drop.iter().any(|p| p.matches(addr))
    }

    /// Bones and renames, for an address that passed: what the first string
    /// argument decides.
    fn verdict<'n>(&self, addr: &str, name: Option<&'n str>) -> Verdict<'n> {
        if addr == BONE_POS {
            if let Some(keep) = &self.bones
                && !name.is_some_and(|n| keep.iter().any(|b| b == n))
            {
                return Verdict::Drop;
            }
            if name.is_some_and(|n| self.drop_bones.iter().any(|b| b == n)) {
                return Verdict::Drop;
            }
        }
        if let (Some(rename), BLEND_VAL, Some(name)) = (self.rename, addr, name) {
            let new = match rename {
                Rename::Vrm0ToVrm1 => vrm0_to_vrm1(name),
                Rename::Vrm1ToVrm0 => vrm1_to_vrm0(name),
            };
            if new != name {
                return Verdict::Rename(new);
            }
        }
        Verdict::Keep
    }
}

/// What the rules make of one message that passed the address filters.
enum Verdict<'n> {
    Drop,
    Keep,
    /// Kept, with this first string (an expression renamed).
    Rename(&'n str),
}

/// Most addresses whose filter verdict [`Lean`] remembers; past it the
/// patterns are matched each time rather than memory growing.
const MAX_ADDRESSES: usize = 1024;

/// [`Rules`] that [`is_lean`](Rules::is_lean) applied to a borrowed
/// [`osc::Flat`] packet: kept messages are forwarded as their bytes (a
/// renamed one rewritten), bundled with [`osc::BundleWriter`] as
/// [`pack`](super::pack) bundles them. The datagrams are the ones
/// [`Rules::apply`] and `pack` make of the decoded packet; nothing is
/// allocated once the buffers have grown and every address has been seen.
#[derive(Debug)]
pub struct Lean {
    /// `--only`/`--drop` per address: pattern matching allocates, and a
    /// sender uses few addresses.
    addresses: HashMap<Box<str>, bool>,
    bundle: osc::BundleWriter,
    scratch: Vec<u8>,
}

/// What [`Lean::forward`] did with one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Forwarded {
    /// Messages sent on.
    pub kept: u64,
    /// Messages the rules dropped.
    pub dropped: u64,
}

impl Lean {
    /// Bundles of at most `max` bytes (the relay uses [`MAX_BUNDLE`](super::MAX_BUNDLE)).
    pub fn new(max: usize) -> Self {
        Self {
            addresses: HashMap::new(),
            bundle: osc::BundleWriter::new(max),
            scratch: Vec::new(),
        }
    }

    /// Applies `rules` to `packet` and hands each datagram to go out to
    /// `send`: one per message when the packet was a single message or the
    /// rules flatten, else bundles.
    ///
    /// # Errors
    /// [`osc::EncodeError`] for a rename OSC cannot carry (none of the VRM
    /// tables' names); the messages before it have been sent.
    pub fn forward(
        &mut self,
        rules: &Rules,
        packet: &osc::Flat<'_>,
        mut send: impl FnMut(&[u8]),
    ) -> Result<Forwarded, osc::EncodeError> {
        let single = rules.flatten || !packet.is_bundle();
        let mut done = Forwarded::default();
        let mut result = Ok(());
        for m in packet.messages() {
            let addr = m.address();
            let passes = match self.addresses.get(addr) {
                Some(&p) => p,
                None => {
                    let p = rules.address_passes(addr);
                    if self.addresses.len() < MAX_ADDRESSES {
                        self.addresses.insert(addr.into(), p);
                    }
                    p
                }
            };
            let verdict = if passes {
                rules.verdict(addr, m.first_string())
            } else {
                Verdict::Drop
            };
            let write = |out: &mut Vec<u8>| match verdict {
                Verdict::Rename(new) => m.emit_with_first(new, out),
                _ => {
                    out.extend_from_slice(m.bytes());
                    Ok(())
                }
            };
            match (&verdict, single) {
                (Verdict::Drop, _) => {
                    done.dropped += 1;
                    continue;
                }
                (Verdict::Keep, true) => send(m.bytes()),
                (Verdict::Rename(_), true) => {
                    self.scratch.clear();
                    if let Err(e) = write(&mut self.scratch) {
                        result = Err(e);
                        break;
                    }
                    send(&self.scratch);
                }
                (_, false) => {
                    if let Err(e) = self.bundle.push(write, &mut send) {
                        result = Err(e);
                        break;
                    }
                }
            }
            done.kept += 1;
        }
        if !single {
            self.bundle.finish(&mut send);
        }
        result.map(|()| done)
    }
}

fn first_string(m: &Message) -> Option<&str> {
    match m.args.first() {
        Some(Arg::String(s)) => Some(s),
        _ => None,
    }
}

/// Continuous streams that a rate limit applies to; everything else (Apply,
/// OK, T, events, low-rate information) always passes.
fn stream_key(m: &Message) -> Option<String> {
    match m.address.as_str() {
        BONE_POS
        | BLEND_VAL
        | "/VMC/Ext/Root/Pos"
        | "/VMC/Ext/Cam"
        | "/VMC/Ext/Hmd/Pos"
        | "/VMC/Ext/Con/Pos"
        | "/VMC/Ext/Tra/Pos"
        | "/VMC/Ext/Hmd/Pos/Local"
        | "/VMC/Ext/Con/Pos/Local"
        | "/VMC/Ext/Tra/Pos/Local" => Some(format!(
            "{}\0{}",
            m.address,
            first_string(m).unwrap_or_default()
        )),
        _ => None,
    }
}

#[derive(Debug)]
struct Slot {
    next: Duration,
    pending: Option<Message>,
}

/// Per-stream rate limit: within a slot the newest value wins, and a held
/// value is sent when its slot comes, so the last value is never lost.
///
/// `handle_message(now, m)` offers a message, `handle_timeout(now)` lets
/// held values whose slot has come go; what may go is handed out by
/// [`Self::poll_due`], in order.
#[derive(Debug)]
pub struct Limiter {
    interval: Duration,
    slots: HashMap<String, Slot>,
    held: u64,
    /// What may go, until polled.
    ready: VecDeque<Message>,
    overflowed: u64,
}

/// Most streams tracked at once (55 bones, many expressions, devices);
/// beyond it a stream is not limited rather than memory growing.
const MAX_STREAMS: usize = 4096;

/// Most messages ready at once. One `handle_timeout` readies at most one
/// value per stream, so a caller that polls after each call never reaches
/// it; one that does not poll is held to it: a limited value that would pass
/// waits in its slot (still the newest), and other messages are counted in
/// [`Limiter::overflowed`] and dropped.
const MAX_READY: usize = MAX_STREAMS;

impl Limiter {
    /// At most `rate` updates per second per stream. Total for any value: a
    /// rate below 0.001 (or NaN) is one update per 1000 s, an infinite one
    /// lets every update through.
    pub fn new(rate: f64) -> Self {
        let interval = Duration::try_from_secs_f64(1.0 / rate.max(1e-3)).unwrap_or(Duration::MAX);
        Self {
            interval,
            slots: HashMap::new(),
            held: 0,
            ready: VecDeque::new(),
            overflowed: 0,
        }
    }

    /// Updates replaced by a newer one before their slot (counted, not sent).
    pub fn superseded(&self) -> u64 {
        self.held
    }

    /// Messages not limited by stream that found `MAX_READY` messages
    /// unpolled, dropped (zero for a caller that polls after each call).
    pub fn overflowed(&self) -> u64 {
        self.overflowed
    }

    /// The next message that may go, in the order it was readied; poll until
    /// `None` after each `handle_*`.
    pub fn poll_due(&mut self) -> Option<Message> {
        self.ready.pop_front()
    }

    /// Offers a message at time `now`: it is ready at once when its stream's
    /// slot has come (or it is not limited), else held as its stream's
    /// newest value.
    pub fn handle_message(&mut self, now: Duration, m: Message) {
        let room = self.ready.len() < MAX_READY;
        let key = stream_key(&m)
            .filter(|key| self.slots.contains_key(key) || self.slots.len() < MAX_STREAMS);
        let Some(key) = key else {
            if room {
                self.ready.push_back(m);
            } else {
                self.overflowed += 1;
            }
            return;
        };
        let slot = self.slots.entry(key).or_insert(Slot {
            next: Duration::ZERO,
            pending: None,
        });
        if now >= slot.next && room {
            // Saturating: the relay flushes at `Duration::MAX` when input ends.
            slot.next = now.saturating_add(self.interval);
            if slot.pending.take().is_some() {
                self.held += 1;
            }
            self.ready.push_back(m);
            return;
        }
        if slot.pending.replace(m).is_some() {
            self.held += 1;
        }
    }

    /// Readies the held values whose slot has come at `now`, in no
    /// particular order (past `MAX_READY` the rest stay due).
    pub fn handle_timeout(&mut self, now: Duration) {
        for slot in self.slots.values_mut() {
            if self.ready.len() >= MAX_READY {
                break;
            }
            if now >= slot.next
                && let Some(m) = slot.pending.take()
            {
                slot.next = now.saturating_add(self.interval);
                self.ready.push_back(m);
            }
        }
    }

    /// When [`Self::handle_timeout`] has a held value to ready, if any is held.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.slots
            .values()
            .filter(|s| s.pending.is_some())
            .map(|s| s.next)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bone(name: &str, x: f32) -> Message {
        let mut a = vec![Arg::String(name.into())];
        a.extend([x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0].map(Arg::Float));
        Message::new(BONE_POS, a)
    }

    fn blend(name: &str) -> Message {
        Message::new(BLEND_VAL, vec![Arg::String(name.into()), Arg::Float(1.0)])
    }

    #[test]
    fn filters_and_renames() {
        let r = Rules {
            only: vec![Pattern::new("/VMC/Ext/{Bone,Blend}/*").unwrap()],
            drop_bones: vec!["Head".into()],
            rename: Some(Rename::Vrm0ToVrm1),
            ..Rules::default()
        };
        assert!(!r.is_raw());
        assert!(r.apply(&bone("Hips", 0.0)).is_some());
        assert!(r.apply(&bone("Head", 0.0)).is_none());
        assert!(
            r.apply(&Message::new("/VMC/Ext/T", vec![Arg::Float(1.0)]))
                .is_none()
        );
        assert_eq!(r.apply(&blend("Joy")).unwrap(), blend("happy"));
        assert_eq!(
            r.apply(&blend("eyeBlinkLeft")).unwrap(),
            blend("eyeBlinkLeft")
        );
        let only_neck = Rules {
            bones: Some(vec!["Neck".into()]),
            ..Rules::default()
        };
        assert!(only_neck.apply(&bone("Hips", 0.0)).is_none());
        assert!(only_neck.apply(&bone("Neck", 0.0)).is_some());
        assert!(only_neck.apply(&blend("A")).is_some());
        assert!(Rules::default().is_raw());
    }

    #[test]
    fn rate_limit_keeps_the_newest_and_never_loses_the_last() {
        let ms = Duration::from_millis;
        let mut l = Limiter::new(10.0); // one update per 100 ms per stream
        assert_eq!(offer(&mut l, ms(0), bone("Hips", 1.0)).len(), 1);
        assert!(offer(&mut l, ms(10), bone("Hips", 2.0)).is_empty());
        assert!(offer(&mut l, ms(20), bone("Hips", 3.0)).is_empty());
        // Another stream has its own slot; Apply always passes.
        assert_eq!(offer(&mut l, ms(20), bone("Head", 9.0)).len(), 1);
        let apply = Message::new("/VMC/Ext/Blend/Apply", vec![]);
        assert_eq!(offer(&mut l, ms(20), apply.clone()), [apply]);
        assert_eq!(l.poll_timeout(), Some(ms(100)));
        assert!(due(&mut l, ms(50)).is_empty());
        assert_eq!(due(&mut l, ms(100)), [bone("Hips", 3.0)]);
        assert_eq!(l.superseded(), 1);
        assert_eq!(l.poll_timeout(), None);
    }

    /// Offers one message; what it readied.
    fn offer(l: &mut Limiter, now: Duration, m: Message) -> Vec<Message> {
        l.handle_message(now, m);
        std::iter::from_fn(|| l.poll_due()).collect()
    }

    /// Lets time pass to `now`; the held values it readied.
    fn due(l: &mut Limiter, now: Duration) -> Vec<Message> {
        l.handle_timeout(now);
        std::iter::from_fn(|| l.poll_due()).collect()
    }

    /// A caller that never polls: the ready queue stops at its bound, a
    /// limited value waits in its slot (and still goes, the newest), other
    /// messages are counted.
    #[test]
    fn the_ready_queue_is_bounded_and_loses_no_limited_value() {
        let mut l = Limiter::new(1e9);
        let apply = || Message::new("/VMC/Ext/Blend/Apply", vec![]);
        for _ in 0..MAX_READY {
            l.handle_message(Duration::ZERO, apply());
        }
        l.handle_message(Duration::ZERO, apply());
        assert_eq!(l.overflowed(), 1);
        l.handle_message(Duration::ZERO, bone("Hips", 1.0));
        l.handle_message(Duration::ZERO, bone("Hips", 2.0));
        assert_eq!(l.superseded(), 1);
        let drained: Vec<Message> = std::iter::from_fn(|| l.poll_due()).collect();
        assert_eq!(drained.len(), MAX_READY);
        assert_eq!(due(&mut l, Duration::ZERO), [bone("Hips", 2.0)]);
        assert_eq!(l.poll_timeout(), None);
    }

    /// Any rate, any clock (backwards, at `Duration::MAX`, as the relay's
    /// end-of-input flush reads it): no panic, and every offered update is
    /// sent or counted as superseded. On a clock that only goes forward, one
    /// stream's sends are an interval apart (or pinned at the clock's end).
    #[test]
    fn any_rate_and_any_clock() {
        let mut rng = mocap_testutil::Rng(0x5eed_1e55);
        for _ in 0..2_000 {
            let rate = rng.any_f64();
            let mut l = Limiter::new(rate);
            let forward = rng.below(2) == 0;
            let mut now = Duration::ZERO;
            let mut last: HashMap<String, Duration> = HashMap::new();
            let (mut offered, mut sent) = (0u64, 0u64);
            let mut note = |m: &Message, now: Duration| {
                let name = first_string(m).unwrap_or_default().to_owned();
                if let Some(prev) = last.insert(name, now)
                    && forward
                {
                    let gap = now.saturating_sub(prev);
                    assert!(
                        gap >= l_interval(rate) || now == Duration::MAX,
                        "rate {rate}: sent {gap:?} after the last"
                    );
                }
            };
            for _ in 0..1 + rng.below(40) {
                now = if forward {
                    now.saturating_add(rng.any_duration() / (1 + rng.below(1 << 20) as u32))
                } else {
                    rng.any_duration()
                };
                let m = bone(["Hips", "Head"][rng.below(2)], 0.0);
                offered += 1;
                for m in offer(&mut l, now, m) {
                    sent += 1;
                    note(&m, now);
                }
                if rng.below(3) == 0 {
                    for m in due(&mut l, now) {
                        sent += 1;
                        note(&m, now);
                    }
                }
                let _ = l.poll_timeout();
            }
            for m in due(&mut l, Duration::MAX) {
                sent += 1;
                note(&m, Duration::MAX);
            }
            assert_eq!(l.poll_timeout(), None, "rate {rate}: held after the end");
            assert_eq!(offered, sent + l.superseded(), "rate {rate}: updates lost");
        }
    }

    /// The interval `Limiter::new` derives, for the test's own check.
    fn l_interval(rate: f64) -> Duration {
        Duration::try_from_secs_f64(1.0 / rate.max(1e-3)).unwrap_or(Duration::MAX)
    }
}
