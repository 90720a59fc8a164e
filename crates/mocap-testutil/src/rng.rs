//! Seeded, reproducible choices: a failing sweep fails the same way on the
//! next run, on any machine.

use std::time::Duration;

/// xorshift64*: reproducible choices for mutation sweeps.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    #[allow(
        clippy::should_implement_trait,
        reason = "named as in the sweeps' own copies; an endless Iterator adds nothing"
    )]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A number of the kinds that break time arithmetic: zero, signs, NaN,
    /// infinities, the smallest and largest, and any bit pattern.
    pub fn any_f64(&mut self) -> f64 {
        const EDGES: [f64; 12] = [
            0.0,
            -0.0,
            -5.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            5e-324,
            1e-9,
            f64::MAX,
            f64::MIN,
            30.0,
        ];
        match self.below(3) {
            0 => EDGES[self.below(EDGES.len())],
            1 => f64::from_bits(self.next()),
            _ => (self.next() % 100_000) as f64 / 100.0,
        }
    }

    /// A clock reading of the kinds that break time arithmetic: zero, the
    /// largest, just below it, and any count of nanoseconds or seconds.
    pub fn any_duration(&mut self) -> Duration {
        match self.below(5) {
            0 => Duration::ZERO,
            1 => Duration::MAX,
            2 => Duration::MAX - Duration::from_nanos(self.next() % 1_000_000_000),
            3 => Duration::from_secs(self.next()),
            _ => Duration::from_nanos(self.next()),
        }
    }

    /// One to `most` edits of the kinds that break binary framing: a byte
    /// replaced, a byte inserted, four bytes made a small big-endian size
    /// (bundle element and blob sizes), the tail cut.
    pub fn mutate(&mut self, v: &mut Vec<u8>, most: u64) {
        for _ in 0..1 + self.next() % most.max(1) {
            let at = self.below(v.len() + 1);
            match self.next() % 4 {
                0 if at < v.len() => v[at] = self.next() as u8,
                1 => v.insert(at, self.next() as u8),
                2 if at + 4 <= v.len() => {
                    v[at..at + 4].copy_from_slice(&(self.next() as i32 % 2048).to_be_bytes());
                }
                _ => v.truncate(at),
            }
        }
    }
}
