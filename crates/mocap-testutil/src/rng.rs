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
    /// replaced or one of its bits flipped, a byte inserted or removed, the
    /// tail cut, a piece repeated elsewhere (repeated chunks, splices), and
    /// four bytes made a length or count that parsers die on.
    ///
    /// The one mutator of the workspace's sweeps (`crate::sweep`): what
    /// one protocol's bugs taught it, every decoder's sweep then tries.
    pub fn mutate(&mut self, v: &mut Vec<u8>, most: u64) {
        for _ in 0..1 + self.next() % most.max(1) {
            let at = self.below(v.len() + 1);
            match self.below(7) {
                0 if at < v.len() => v[at] = self.next() as u8,
                1 if at < v.len() => v[at] ^= 1 << self.below(8),
                2 => v.insert(at, self.next() as u8),
                3 if at < v.len() => {
                    v.remove(at);
                }
                4 if at + 4 <= v.len() => self.size(&mut v[at..at + 4]),
                5 if at < v.len() => {
                    let piece = v[at..(at + self.below(64)).min(v.len())].to_vec();
                    let to = self.below(v.len() + 1);
                    v.splice(to..to, piece);
                }
                _ => v.truncate(at),
            }
        }
    }

    /// Four bytes as a length or count in either byte order (SMF's are
    /// little-endian, OSC's and Live Link's big-endian), replaced by one
    /// that parsers die on: the largest, -1, zero, off by a few from the
    /// old one, a small one of either sign (OSC sizes), or any.
    fn size(&mut self, field: &mut [u8]) {
        let big = self.below(2) == 0;
        let bytes: [u8; 4] = field.try_into().unwrap();
        let old = if big {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        };
        let new = match self.below(6) {
            0 => i32::MAX as u32,
            1 => u32::MAX,
            2 => 0,
            3 => old.wrapping_add(self.below(9) as u32).wrapping_sub(4),
            4 => (self.next() as i32 % 2048) as u32,
            _ => self.next() as u32,
        };
        field.copy_from_slice(&if big {
            new.to_be_bytes()
        } else {
            new.to_le_bytes()
        });
    }
}
