//! An owned Live Link Face packet: parsed from a view, written to bytes.

use super::{Body, Packet, VERSION};

/// An owned packet, for building datagrams from values (tests, captures, emulators).
#[derive(Clone, Debug, PartialEq)]
pub struct PacketRepr {
    /// Device id.
    pub device: String,
    /// Subject name.
    pub subject: String,
    /// Frame number.
    pub frame: i32,
    /// Fraction of a frame.
    pub subframe: f32,
    /// Frame rate numerator and denominator.
    pub rate: [i32; 2],
    /// The values, or `None` for a no-face packet (nothing after the frame
    /// time). `Some` of no values writes a count of 0, which reads as no face too.
    pub values: Option<Vec<f32>>,
}

impl PacketRepr {
    /// The packet a view reads (text that is not UTF-8 with replacement characters).
    pub fn parse(p: &Packet<'_>) -> Self {
        Self {
            device: p.device().into_owned(),
            subject: p.subject().into_owned(),
            frame: p.time.frame,
            subframe: p.time.subframe,
            rate: p.time.rate,
            values: match &p.body {
                Body::Face(f) => Some(f.values().collect()),
                // A count of 0 says "no face" too; kept, so the bytes round-trip.
                Body::NoFace if p.datagram().len() > p.count_offset() => Some(Vec::new()),
                Body::NoFace => None,
            },
        }
    }

    /// Number of bytes [`emit`](Self::emit) appends. Strings longer than
    /// `i32::MAX` bytes and more than 255 values are cut to fit the format.
    pub fn buffer_len(&self) -> usize {
        let text = |s: &str| 4 + s.len().min(i32::MAX as usize);
        1 + text(&self.device)
            + text(&self.subject)
            + 16
            + self.values.as_ref().map_or(0, |v| 1 + 4 * v.len().min(255))
    }

    /// Appends the datagram to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.reserve(self.buffer_len());
        out.push(VERSION);
        for s in [&self.device, &self.subject] {
            let b = s.as_bytes();
            let b = b.get(..b.len().min(i32::MAX as usize)).unwrap_or_default();
            out.extend(i32::try_from(b.len()).unwrap_or(i32::MAX).to_be_bytes());
            out.extend(b);
        }
        out.extend(self.frame.to_be_bytes());
        out.extend(self.subframe.to_be_bytes());
        let [num, den] = self.rate;
        out.extend(num.to_be_bytes());
        out.extend(den.to_be_bytes());
        if let Some(v) = &self.values {
            let v = v.get(..v.len().min(255)).unwrap_or_default();
            out.push(u8::try_from(v.len()).unwrap_or(u8::MAX));
            for x in v {
                out.extend(x.to_be_bytes());
            }
        }
    }

    /// The datagram.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buffer_len());
        self.emit(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::livelink::parse;

    #[test]
    fn round_trip_bit_exact() {
        let values: Vec<f32> = (0..61)
            .map(|i| f32::from_bits(0x3c00_0000 + i * 0x0012_3457))
            .collect();
        for values in [Some(values), None, Some(vec![-0.0, f32::MIN_POSITIVE])] {
            let repr = PacketRepr {
                device: "$4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5".into(),
                subject: "iPhone de Zoé".into(),
                frame: -3,
                subframe: 0.999,
                rate: [30000, 1001],
                values,
            };
            let b = repr.to_bytes();
            assert_eq!(b.len(), repr.buffer_len());
            let back = PacketRepr::parse(&parse(&b).unwrap());
            assert_eq!(back, repr);
            assert_eq!(back.to_bytes(), b);
        }
    }
}
