//! What the fuzz targets share: reading typed values off the input, front
//! to back. Every read is `None` once the input runs out, so a target stops
//! where its input does.

/// The rest of a fuzz input.
pub struct Bytes<'a>(pub &'a [u8]);

impl<'a> Bytes<'a> {
    /// The next `N` bytes.
    pub fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }

    /// The next `n` bytes (fewer when the input ends first).
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }

    /// The next byte.
    pub fn u8(&mut self) -> Option<u8> {
        self.take::<1>().map(|[b]| b)
    }

    /// A little-endian f32, any bits (NaN, infinities, subnormals).
    pub fn f32(&mut self) -> Option<f32> {
        self.take().map(f32::from_le_bytes)
    }

    /// A little-endian f64, any bits.
    pub fn f64(&mut self) -> Option<f64> {
        self.take().map(f64::from_le_bytes)
    }

    /// `N` little-endian f32s.
    pub fn f32s<const N: usize>(&mut self) -> Option<[f32; N]> {
        let mut out = [0.0; N];
        for v in &mut out {
            *v = self.f32()?;
        }
        Some(out)
    }
}
