//! The checked, zero-copy view of one Live Link Face datagram ([`parse`]).

use std::borrow::Cow;

use super::{
    BLENDSHAPES, Error, ErrorKind, Field, HEAD, LEFT_EYE, RIGHT_EYE, Result, VALUE_COUNT, VERSION,
    Warning, WarningKind,
};
use crate::wire::Cursor;

/// A checked view of one datagram: every accessor is infallible.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet<'a> {
    device: &'a [u8],
    subject: &'a [u8],
    /// The frame time block.
    pub time: FrameTime,
    /// A face, or the app's "no face" marker.
    pub body: Body<'a>,
    datagram: &'a [u8],
    /// Offsets of the device length, subject length, frame time and count.
    at: [usize; 4],
}

/// The frame time block: Unreal's `FQualifiedFrameTime`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameTime {
    /// Frame number on the app's timecode clock.
    pub frame: i32,
    /// How far into the frame, 0 up to 1.
    pub subframe: f32,
    /// Frame rate as numerator and denominator (60/1).
    pub rate: [i32; 2],
}

impl FrameTime {
    /// Frames per second, when numerator and denominator are positive.
    pub fn fps(&self) -> Option<f64> {
        let [n, d] = self.rate;
        (n > 0 && d > 0).then(|| f64::from(n) / f64::from(d))
    }

    /// The frame time in seconds on the app's clock, when the rate is known.
    pub fn seconds(&self) -> Option<f64> {
        self.fps()
            .map(|fps| (f64::from(self.frame) + f64::from(self.subframe)) / fps)
    }
}

/// What a datagram carries after its frame time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Body<'a> {
    /// Values: blendshapes, head, eyes.
    Face(Face<'a>),
    /// Nothing after the frame time (or a count of 0): the app has no face.
    NoFace,
}

/// The values of a face packet, read in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Face<'a> {
    /// `4 × count` bytes of big-endian `f32`.
    values: &'a [u8],
}

/// Yaw, pitch and roll as sent (radians in Unreal's reading).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Angles {
    /// About the vertical axis.
    pub yaw: f32,
    /// Nodding.
    pub pitch: f32,
    /// Tilting.
    pub roll: f32,
}

impl<'a> Face<'a> {
    /// How many values the packet carries (61 from the app).
    pub fn count(&self) -> usize {
        self.values.len() / 4
    }

    /// Value `i` in wire order, if the packet has it.
    pub fn value(&self, i: usize) -> Option<f32> {
        let at = i.checked_mul(4)?;
        let b = self.values.get(at..)?.first_chunk::<4>()?;
        Some(f32::from_be_bytes(*b))
    }

    /// Every value in wire order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = f32> + 'a {
        // `as_chunks` hands out `[u8; 4]`: no index, no fallible conversion.
        self.values
            .as_chunks::<4>()
            .0
            .iter()
            .map(|b| f32::from_be_bytes(*b))
    }

    /// Blendshape `i` (0–51, [`BLENDSHAPES`] order), if the packet has it.
    pub fn blendshape(&self, i: usize) -> Option<f32> {
        if i < BLENDSHAPES.len() {
            self.value(i)
        } else {
            None
        }
    }

    /// The blendshapes present, by name, in wire order.
    pub fn blendshapes(&self) -> impl Iterator<Item = (&'static str, f32)> + 'a {
        BLENDSHAPES.iter().copied().zip(self.values())
    }

    /// Head yaw, pitch, roll.
    pub fn head(&self) -> Option<Angles> {
        self.angles(HEAD)
    }

    /// The left eye's yaw, pitch, roll.
    pub fn left_eye(&self) -> Option<Angles> {
        self.angles(LEFT_EYE)
    }

    /// The right eye's yaw, pitch, roll.
    pub fn right_eye(&self) -> Option<Angles> {
        self.angles(RIGHT_EYE)
    }

    /// Values past the 61 this decoder names (a newer app's additions).
    pub fn extra(&self) -> impl Iterator<Item = f32> + 'a {
        self.values().skip(VALUE_COUNT)
    }

    fn angles(&self, at: usize) -> Option<Angles> {
        Some(Angles {
            yaw: self.value(at)?,
            pitch: self.value(at + 1)?,
            roll: self.value(at + 2)?,
        })
    }
}

impl<'a> Packet<'a> {
    /// The device id, with replacement characters if it is not UTF-8.
    pub fn device(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.device)
    }

    /// The device id as sent.
    pub fn device_bytes(&self) -> &'a [u8] {
        self.device
    }

    /// The subject name, with replacement characters if it is not UTF-8.
    pub fn subject(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.subject)
    }

    /// The subject name as sent.
    pub fn subject_bytes(&self) -> &'a [u8] {
        self.subject
    }

    /// The face, if the packet has one.
    pub fn face(&self) -> Option<&Face<'a>> {
        match &self.body {
            Body::Face(f) => Some(f),
            Body::NoFace => None,
        }
    }

    /// The datagram this view reads.
    pub fn datagram(&self) -> &'a [u8] {
        self.datagram
    }

    /// Byte offset of the value count (the end of the frame time block).
    pub fn count_offset(&self) -> usize {
        self.at[3]
    }

    /// The odd values in this packet, in wire order.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        let mut warn = |offset, field, kind| w.push(Warning::new(offset, field, kind));
        let [device_at, subject_at, time_at, count_at] = self.at;
        if std::str::from_utf8(self.device).is_err() {
            warn(device_at, Field::Device, WarningKind::NotUtf8);
        }
        if std::str::from_utf8(self.subject).is_err() {
            warn(subject_at, Field::Subject, WarningKind::NotUtf8);
        }
        if self.time.fps().is_none() {
            warn(time_at + 8, Field::FrameTime, WarningKind::Rate);
        }
        if !self.time.subframe.is_finite() {
            warn(time_at + 4, Field::FrameTime, WarningKind::Subframe);
        }
        if let Body::Face(f) = &self.body {
            if f.count() != VALUE_COUNT {
                let n = u8::try_from(f.count()).unwrap_or(u8::MAX);
                warn(count_at, Field::Values, WarningKind::Count(n));
            }
            for (index, v) in f.values().enumerate() {
                if !v.is_finite() {
                    warn(
                        count_at + 1 + 4 * index,
                        Field::Values,
                        WarningKind::NonFinite { index },
                    );
                }
            }
        }
        let used = match &self.body {
            Body::Face(f) => count_at + 1 + f.values.len(),
            Body::NoFace => self.datagram.len().min(count_at + 1),
        };
        let trailing = self.datagram.len().saturating_sub(used);
        if trailing > 0 {
            warn(used, Field::Values, WarningKind::Trailing { len: trailing });
        }
        w
    }
}

/// A length-prefixed string's bytes. A length that is negative or runs past
/// the end is refused at the length, with the bytes left after it.
fn string<'a>(c: &mut Cursor<'a>, field: Field) -> Result<&'a [u8]> {
    let at = c.offset();
    let len = c.i32_be(field)?;
    let have = c.len();
    usize::try_from(len)
        .ok()
        .and_then(|n| c.bytes(n, field).ok())
        .ok_or_else(|| Error::new(at, field, ErrorKind::Length { len, have }))
}

/// Decodes one Live Link Face datagram.
///
/// # Errors
/// Only what cannot be walked: an empty datagram, a version other than 6, a
/// string length past the end, a frame time cut short, or a count whose values
/// do not fit. Never panics.
pub fn parse(datagram: &[u8]) -> Result<Packet<'_>> {
    let mut c = Cursor::new(datagram);
    if c.is_empty() {
        return Err(Error::new(0, Field::Version, ErrorKind::Empty));
    }
    let version = c.u8(Field::Version)?;
    if version != VERSION {
        return Err(Error::new(0, Field::Version, ErrorKind::Version(version)));
    }
    let device_at = c.offset();
    let device = string(&mut c, Field::Device)?;
    let subject_at = c.offset();
    let subject = string(&mut c, Field::Subject)?;
    let time_at = c.offset();
    let mut t = c.take(16, Field::FrameTime)?;
    let time = FrameTime {
        frame: t.i32_be(Field::FrameTime)?,
        subframe: t.f32_be(Field::FrameTime)?,
        rate: [t.i32_be(Field::FrameTime)?, t.i32_be(Field::FrameTime)?],
    };
    let count_at = c.offset();
    // Nothing after the frame time, or a count of 0: no face.
    let body = match c.u8(Field::Values).unwrap_or(0) {
        0 => Body::NoFace,
        count => {
            let have = c.len();
            let values = c
                .bytes(usize::from(count) * 4, Field::Values)
                .map_err(|_| {
                    Error::new(count_at, Field::Values, ErrorKind::Count { count, have })
                })?;
            Body::Face(Face { values })
        }
    };
    Ok(Packet {
        device,
        subject,
        time,
        body,
        datagram,
        at: [device_at, subject_at, time_at, count_at],
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, clippy::unwrap_used)]

    use super::*;
    use crate::livelink::PacketRepr;

    fn sample(values: Option<Vec<f32>>) -> Vec<u8> {
        PacketRepr {
            device: "1".into(),
            subject: "Ahmeds_iPhone".into(),
            frame: 1_096_414,
            subframe: 0.255_237_58,
            rate: [60, 1],
            values,
        }
        .to_bytes()
    }

    /// A face packet written out by hand from the table in the module docs.
    #[test]
    fn layout_by_hand() {
        let mut b = vec![6u8, 0, 0, 0, 1, b'1', 0, 0, 0, 2, b'h', b'i'];
        b.extend(7i32.to_be_bytes());
        b.extend(0.5f32.to_be_bytes());
        b.extend(60i32.to_be_bytes());
        b.extend(1i32.to_be_bytes());
        b.push(61);
        for i in 0..61 {
            b.extend((i as f32 / 100.0).to_be_bytes());
        }
        let p = parse(&b).unwrap();
        assert_eq!(p.device(), "1");
        assert_eq!(p.subject(), "hi");
        assert_eq!(
            p.time,
            FrameTime {
                frame: 7,
                subframe: 0.5,
                rate: [60, 1]
            }
        );
        assert_eq!(p.time.seconds(), Some(7.5 / 60.0));
        let f = p.face().unwrap();
        assert_eq!(f.count(), 61);
        assert_eq!(f.blendshape(17), Some(0.17));
        assert_eq!(f.blendshape(52), None);
        assert_eq!(
            f.head(),
            Some(Angles {
                yaw: 0.52,
                pitch: 0.53,
                roll: 0.54
            })
        );
        assert_eq!(f.right_eye().map(|a| a.roll), Some(0.60));
        assert_eq!(f.blendshapes().count(), 52);
        assert!(p.warnings().is_empty());
        assert_eq!(b.len(), 270 + 1 + 2);
    }

    #[test]
    fn no_face_ends_after_the_frame_time() {
        let b = sample(None);
        let p = parse(&b).unwrap();
        assert_eq!(p.body, Body::NoFace);
        assert!(p.warnings().is_empty());
        // A count of 0 says the same.
        let mut z = b.clone();
        z.push(0);
        assert_eq!(parse(&z).unwrap().body, Body::NoFace);
        assert!(parse(&z).unwrap().warnings().is_empty());
    }

    #[test]
    fn refusals_name_offset_and_field() {
        assert_eq!(parse(&[]).unwrap_err().kind, ErrorKind::Empty);
        let e = parse(&[5, 0, 0, 0, 0]).unwrap_err();
        assert_eq!(
            (e.offset, e.field, e.kind),
            (0, Field::Version, ErrorKind::Version(5))
        );
        // A device length past the end.
        let e = parse(&[6, 0, 0, 0, 9, b'x']).unwrap_err();
        assert_eq!((e.offset, e.field), (1, Field::Device));
        assert_eq!(e.kind, ErrorKind::Length { len: 9, have: 1 });
        // A negative subject length.
        let e = parse(&[6, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe]).unwrap_err();
        assert_eq!((e.offset, e.field), (5, Field::Subject));
        assert_eq!(e.kind, ErrorKind::Length { len: -2, have: 0 });
        // A frame time cut short.
        let b = sample(None);
        let e = parse(&b[..b.len() - 3]).unwrap_err();
        assert_eq!((e.offset, e.field), (23, Field::FrameTime));
        assert_eq!(e.kind, ErrorKind::Truncated { need: 16, have: 13 });
        // A count whose values do not fit.
        let full = sample(Some(vec![0.0; 61]));
        let e = parse(&full[..full.len() - 1]).unwrap_err();
        assert_eq!((e.offset, e.field), (39, Field::Values));
        assert_eq!(
            e.kind,
            ErrorKind::Count {
                count: 61,
                have: 243
            }
        );
        assert_eq!(
            e.to_string(),
            "61 values need 244 bytes, 243 left at offset 39 in `values`"
        );
    }

    #[test]
    fn odd_values_are_warnings_on_a_decoded_packet() {
        let mut values = vec![0.0; 12];
        values[3] = f32::NAN;
        let mut b = PacketRepr {
            device: String::new(),
            subject: "s".into(),
            frame: 1,
            subframe: 0.0,
            rate: [60, 0],
            values: Some(values),
        }
        .to_bytes();
        b[5 + 4] = 0xff; // the subject's one byte: not UTF-8
        b.extend([1, 2]);
        let p = parse(&b).unwrap();
        assert_eq!(p.subject(), "\u{fffd}");
        assert_eq!(p.face().unwrap().count(), 12);
        assert_eq!(p.face().unwrap().head(), None);
        let kinds: Vec<_> = p.warnings().iter().map(|w| (w.offset, w.kind)).collect();
        assert_eq!(
            kinds,
            [
                (5, WarningKind::NotUtf8),
                (10 + 8, WarningKind::Rate),
                (26, WarningKind::Count(12)),
                (26 + 1 + 12, WarningKind::NonFinite { index: 3 }),
                (26 + 1 + 48, WarningKind::Trailing { len: 2 }),
            ]
        );
    }

    #[test]
    fn no_panic_on_any_prefix_or_flip() {
        let b = sample(Some((0..61).map(|i| i as f32).collect()));
        for n in 0..=b.len() {
            let _ = parse(&b[..n]).map(|p| p.warnings());
        }
        for i in 0..b.len() {
            for bit in 0..8 {
                let mut m = b.clone();
                m[i] ^= 1 << bit;
                if let Ok(p) = parse(&m) {
                    let _ = p.warnings();
                    let _ = PacketRepr::parse(&p).to_bytes();
                }
            }
        }
    }
}
