//! Deterministic network faults for replays: loss, bursts of loss,
//! duplication, reordering and jitter, decided from a seed, so the same seed
//! and capture give the same datagrams in the same order every run and a
//! receiver's counters can be asserted to equal what was injected. Pure: the
//! replayer offers each datagram's deadline and does what the [`Fate`] says.
//!
//! ```
//! use std::time::Duration;
//! use mocap_core::pcap::{Impair, ImpairSpec};
//!
//! let spec: ImpairSpec = "loss=10%,dup=5%,reorder=5%,seed=7".parse()?;
//! let mut a = Impair::new(spec);
//! let mut b = Impair::new(spec);
//! let ms = Duration::from_millis;
//! let fates: Vec<_> = (0..100).map(|i| a.offer(ms(16 * i))).collect();
//! assert_eq!(fates, (0..100).map(|i| b.offer(ms(16 * i))).collect::<Vec<_>>());
//! let c = a.counters();
//! assert_eq!(c.dropped, fates.iter().filter(|f| f.dropped).count() as u64);
//! # Ok::<(), mocap_core::pcap::ImpairError>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// What to impair, as `--impair` writes it: `loss=P%`, `burst=N@P%`,
/// `dup=P%`, `reorder=P%`, `jitter=MS`, `seed=N`, comma-separated.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ImpairSpec {
    /// Chance a datagram is lost (0 to 1).
    pub loss: f64,
    /// Runs of `N` consecutive datagrams lost, each starting with this chance.
    pub burst: Option<(u32, f64)>,
    /// Chance a datagram is sent twice.
    pub dup: f64,
    /// Chance a datagram is held back and sent after the next one sent.
    pub reorder: f64,
    /// Extra delay of up to this much, order kept.
    pub jitter: Duration,
    /// The seed of every choice.
    pub seed: u64,
}

/// A `--impair` text that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ImpairError {
    /// A part is not `key=value`, or the key is unknown.
    Key(String),
    /// A value that does not read, or a share outside 0–100 %.
    Value {
        /// The key.
        key: String,
        /// The value as written.
        value: String,
    },
}

impl fmt::Display for ImpairError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Key(k) => write!(
                f,
                "unknown impairment {k:?} (use loss=P%, burst=N@P%, dup=P%, reorder=P%, jitter=MS, seed=N)"
            ),
            Self::Value { key, value } => write!(f, "{key}={value}: not a valid value"),
        }
    }
}

impl std::error::Error for ImpairError {}

fn percent(key: &str, v: &str) -> Result<f64, ImpairError> {
    let bad = || ImpairError::Value {
        key: key.into(),
        value: v.into(),
    };
    let n: f64 = v
        .strip_suffix('%')
        .unwrap_or(v)
        .trim()
        .parse()
        .map_err(|_| bad())?;
    if (0.0..=100.0).contains(&n) {
        Ok(n / 100.0)
    } else {
        Err(bad())
    }
}

impl FromStr for ImpairSpec {
    type Err = ImpairError;
    fn from_str(s: &str) -> Result<Self, ImpairError> {
        let mut spec = Self::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((key, v)) = part.split_once('=') else {
                return Err(ImpairError::Key(part.into()));
            };
            let bad = || ImpairError::Value {
                key: key.into(),
                value: v.into(),
            };
            match key.trim() {
                "loss" => spec.loss = percent(key, v)?,
                "dup" => spec.dup = percent(key, v)?,
                "reorder" => spec.reorder = percent(key, v)?,
                "burst" => {
                    let (n, p) = v.split_once('@').ok_or_else(bad)?;
                    let n: u32 = n.trim().parse().map_err(|_| bad())?;
                    if n == 0 {
                        return Err(bad());
                    }
                    spec.burst = Some((n, percent(key, p)?));
                }
                "jitter" => {
                    let ms: f64 = v
                        .strip_suffix("ms")
                        .unwrap_or(v)
                        .trim()
                        .parse()
                        .map_err(|_| bad())?;
                    if !(0.0..=10_000.0).contains(&ms) {
                        return Err(bad());
                    }
                    spec.jitter = Duration::from_secs_f64(ms / 1000.0);
                }
                "seed" => spec.seed = v.trim().parse().map_err(|_| bad())?,
                other => return Err(ImpairError::Key(other.into())),
            }
        }
        Ok(spec)
    }
}

/// What happens to one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fate {
    /// Not sent (alone, or in a burst).
    pub dropped: bool,
    /// Dropped as part of a burst.
    pub burst: bool,
    /// Sent this many times (1, or 2 for a duplicate); 0 when dropped.
    pub copies: u8,
    /// Extra delay added by jitter.
    pub delay: Duration,
    /// When to send it (the offered deadline plus delay, never before the
    /// previous datagram's).
    pub due: Duration,
    /// Held back: the caller keeps it and sends it right after the next
    /// datagram that is sent (or at the end).
    pub hold: bool,
    /// Send the held datagram right after this one.
    pub release: bool,
}

/// What a receiver will see of the faults: counters to assert.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ImpairCounters {
    /// Datagrams not sent.
    pub dropped: u64,
    /// Datagrams sent twice.
    pub duplicated: u64,
    /// Datagrams sent after one that followed them.
    pub reordered: u64,
    /// Datagrams given extra delay.
    pub delayed: u64,
    /// The seed.
    pub seed: u64,
}

/// The decisions, datagram by datagram.
#[derive(Clone, Debug)]
pub struct Impair {
    spec: ImpairSpec,
    state: u64,
    burst_left: u32,
    last_due: Duration,
    holding: bool,
    counters: ImpairCounters,
}

impl Impair {
    /// Decisions from `spec` (its seed included).
    pub fn new(spec: ImpairSpec) -> Self {
        Self {
            spec,
            state: spec.seed,
            burst_left: 0,
            last_due: Duration::ZERO,
            holding: false,
            counters: ImpairCounters {
                seed: spec.seed,
                ..ImpairCounters::default()
            },
        }
    }

    /// SplitMix64: a fixed, tiny generator, so a seed means the same run on
    /// every platform and version.
    fn unit(&mut self) -> f64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The fate of the next datagram, due at `due` (time since the replay began).
    pub fn offer(&mut self, due: Duration) -> Fate {
        // Every datagram draws the same five numbers, whatever befalls it:
        // one choice never shifts the others.
        let (b, l, j, d, r) = (
            self.unit(),
            self.unit(),
            self.unit(),
            self.unit(),
            self.unit(),
        );
        let mut fate = Fate {
            dropped: false,
            burst: false,
            copies: 1,
            delay: Duration::ZERO,
            due,
            hold: false,
            release: false,
        };
        if self.burst_left > 0 {
            self.burst_left -= 1;
            fate.burst = true;
        } else if let Some((n, p)) = self.spec.burst
            && b < p
        {
            self.burst_left = n.saturating_sub(1);
            fate.burst = true;
        }
        if fate.burst || l < self.spec.loss {
            self.counters.dropped += 1;
            return Fate {
                dropped: true,
                copies: 0,
                ..fate
            };
        }
        if !self.spec.jitter.is_zero() {
            fate.delay = self.spec.jitter.mul_f64(j);
            if !fate.delay.is_zero() {
                self.counters.delayed += 1;
            }
        }
        fate.due = due.saturating_add(fate.delay).max(self.last_due);
        self.last_due = fate.due;
        if d < self.spec.dup {
            fate.copies = 2;
            self.counters.duplicated += 1;
        }
        if self.holding {
            fate.release = true;
            self.holding = false;
            self.counters.reordered += 1;
        } else if r < self.spec.reorder {
            fate.hold = true;
            self.holding = true;
        }
        fate
    }

    /// Whether a datagram is still held (to send at the end; it was not reordered).
    pub fn holding(&self) -> bool {
        self.holding
    }

    /// What was done so far.
    pub fn counters(&self) -> ImpairCounters {
        self.counters
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn run(spec: &str, n: u32) -> (Vec<Fate>, ImpairCounters) {
        let mut i = Impair::new(spec.parse().unwrap());
        let f = (0..n)
            .map(|k| i.offer(Duration::from_millis(u64::from(k) * 16)))
            .collect();
        (f, i.counters())
    }

    #[test]
    fn parses_every_key_and_refuses_the_rest() {
        let s: ImpairSpec = "loss=5%, burst=10@1%,dup=2,reorder=3%,jitter=20ms,seed=42"
            .parse()
            .unwrap();
        assert_eq!(s.loss, 0.05);
        assert_eq!(s.burst, Some((10, 0.01)));
        assert_eq!((s.dup, s.reorder), (0.02, 0.03));
        assert_eq!(s.jitter, Duration::from_millis(20));
        assert_eq!(s.seed, 42);
        for bad in [
            "loss",
            "loss=101%",
            "loss=x",
            "burst=0@5%",
            "burst=5",
            "jitter=-1",
            "seed=-3",
            "lose=5%",
        ] {
            assert!(bad.parse::<ImpairSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_run_and_another_differs() {
        let spec = "loss=5%,burst=4@1%,dup=3%,reorder=3%,jitter=10ms";
        let (a, ca) = run(&format!("{spec},seed=1"), 5000);
        let (b, cb) = run(&format!("{spec},seed=1"), 5000);
        let (c, _) = run(&format!("{spec},seed=2"), 5000);
        assert_eq!((&a, ca), (&b, cb));
        assert_ne!(a, c);
        // Rates near what was asked (5000 draws).
        let lost = ca.dropped as f64 / 5000.0;
        assert!((0.06..0.14).contains(&lost), "{lost}");
        assert!((100..200).contains(&ca.duplicated), "{ca:?}");
    }

    #[test]
    fn counters_say_what_the_fates_did() {
        let (f, c) = run("loss=10%,dup=10%,reorder=10%,jitter=5ms,seed=9", 2000);
        assert_eq!(c.dropped, f.iter().filter(|x| x.dropped).count() as u64);
        assert_eq!(
            c.duplicated,
            f.iter().filter(|x| x.copies == 2).count() as u64
        );
        assert_eq!(c.reordered, f.iter().filter(|x| x.release).count() as u64);
        assert_eq!(
            c.delayed,
            f.iter().filter(|x| !x.delay.is_zero()).count() as u64
        );
        // Holds and releases alternate; order of dues is kept under jitter.
        let mut holding = false;
        let mut last = Duration::ZERO;
        for x in f.iter().filter(|x| !x.dropped) {
            assert_eq!(x.release, holding);
            holding = x.hold || (holding && !x.release);
            assert!(x.due >= last);
            assert!(x.delay <= Duration::from_millis(5));
            last = x.due;
        }
    }

    #[test]
    fn bursts_drop_runs_of_n() {
        let (f, _) = run("burst=5@2%,seed=3", 3000);
        let mut runs = Vec::new();
        let mut n = 0;
        for x in &f {
            if x.burst {
                n += 1;
            } else if n > 0 {
                runs.push(n);
                n = 0;
            }
        }
        assert!(!runs.is_empty());
        // A run is 5, or a multiple when a burst starts right after another ends.
        assert!(runs.iter().all(|r| r % 5 == 0), "{runs:?}");
    }

    #[test]
    fn nothing_asked_changes_nothing() {
        let (f, c) = run("seed=5", 100);
        assert!(
            f.iter()
                .all(|x| !x.dropped && x.copies == 1 && !x.hold && x.delay.is_zero())
        );
        assert_eq!(
            c,
            ImpairCounters {
                seed: 5,
                ..ImpairCounters::default()
            }
        );
    }
}
