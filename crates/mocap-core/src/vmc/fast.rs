//! The common case decoded without the general OSC machinery: one flat bundle
//! whose elements are mostly `/VMC/Ext/Bone/Pos` with exactly a name and seven
//! floats, the way every VMC sender writes them. Only canonical encodings are
//! taken here (zero padding, sizes a multiple of four, no nesting); anything
//! else returns `None` and the caller decodes the whole datagram the general
//! way, so both paths always give the same messages.

use super::{Error, Message};
use crate::osc::{self, PacketRepr};

pub(super) const BUNDLE_TAG: &[u8; 8] = b"#bundle\0";
/// `/VMC/Ext/Bone/Pos` and its type tags, NUL-padded as on the wire.
pub(super) const BONE_ADDRESS: &[u8; 20] = b"/VMC/Ext/Bone/Pos\0\0\0";
pub(super) const BONE_TAGS: &[u8; 12] = b",sfffffff\0\0\0";
/// `/VMC/Ext/Blend/Val` and its type tags, NUL-padded as on the wire.
pub(super) const BLEND_ADDRESS: &[u8; 20] = b"/VMC/Ext/Blend/Val\0\0";
pub(super) const BLEND_TAGS: &[u8; 4] = b",sf\0";

/// One message of a datagram, with a bone's name borrowed from the bytes
/// (the mixer's hot path takes bones without allocating a name).
#[derive(Clone, Debug, PartialEq)]
pub enum Element<'a> {
    /// `/VMC/Ext/Bone/Pos`.
    Bone {
        /// HumanBodyBones name, borrowed.
        name: &'a str,
        /// Local position.
        pos: [f32; 3],
        /// Local rotation.
        rot: [f32; 4],
    },
    /// Any other message (or one that is not a valid VMC message).
    Other(Result<Message, Error>),
}

impl Element<'_> {
    /// As an owned message.
    pub fn into_owned(self) -> Result<Message, Error> {
        match self {
            Element::Bone { name, pos, rot } => Ok(Message::BonePos {
                name: name.to_owned(),
                pos,
                rot,
            }),
            Element::Other(m) => m,
        }
    }
}

pub(super) fn decode(bytes: &[u8]) -> Option<Vec<Result<Message, Error>>> {
    Some(
        decode_borrowed(bytes)?
            .into_iter()
            .map(Element::into_owned)
            .collect(),
    )
}

pub(super) fn decode_borrowed(bytes: &[u8]) -> Option<Vec<Element<'_>>> {
    // Tag, then an eight-byte timetag the mixer does not use.
    let mut rest = bytes.strip_prefix(BUNDLE_TAG)?.get(8..)?;
    let mut out = Vec::with_capacity(rest.len() / 56);
    while !rest.is_empty() {
        let (size, tail) = rest.split_first_chunk::<4>()?;
        let size = usize::try_from(i32::from_be_bytes(*size)).ok()?;
        if size % 4 != 0 || size > tail.len() {
            return None;
        }
        let (elem, tail) = tail.split_at(size);
        rest = tail;
        if let Some((name, [px, py, pz, qx, qy, qz, qw])) =
            named_floats(elem, BONE_ADDRESS, BONE_TAGS)
        {
            out.push(Element::Bone {
                name,
                pos: [px, py, pz],
                rot: [qx, qy, qz, qw],
            });
            continue;
        }
        if let Some(m) = blend(elem) {
            out.push(Element::Other(Ok(m)));
            continue;
        }
        if elem.starts_with(BUNDLE_TAG) {
            return None;
        }
        match osc::decode(elem).ok()? {
            PacketRepr::Message(m) => out.push(Element::Other(Message::from_osc(&m))),
            PacketRepr::Bundle { .. } => return None,
        }
    }
    Some(out)
}

fn blend(elem: &[u8]) -> Option<Message> {
    let (name, [value]) = named_floats(elem, BLEND_ADDRESS, BLEND_TAGS)?;
    Some(Message::BlendVal {
        name: name.to_owned(),
        value,
    })
}

/// A message at `address` whose arguments are exactly one string and `N`
/// floats, canonically padded.
fn named_floats<'a, const N: usize>(
    elem: &'a [u8],
    address: &[u8],
    tags: &[u8],
) -> Option<(&'a str, [f32; N])> {
    let rest = elem.strip_prefix(address)?.strip_prefix(tags)?;
    let nul = rest.iter().position(|&b| b == 0)?;
    let padded = (nul + 4) & !3;
    if rest.len() != padded + 4 * N {
        return None;
    }
    let (name, floats) = rest.split_at(padded);
    if name.get(nul..)?.iter().any(|&b| b != 0) {
        return None;
    }
    let name = std::str::from_utf8(name.get(..nul)?).ok()?;
    let mut f = [0f32; N];
    for (v, c) in f.iter_mut().zip(floats.chunks_exact(4)) {
        *v = f32::from_be_bytes(c.try_into().ok()?);
    }
    Some((name, f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mocap_testutil::Rng;

    fn general(bytes: &[u8]) -> Result<Vec<Result<Message, Error>>, osc::Error> {
        let packet = osc::decode(bytes)?;
        Ok(packet
            .messages()
            .into_iter()
            .map(Message::from_osc)
            .collect())
    }

    /// A VSeeFace-like frame: root, bones, expressions, apply, OK, T.
    fn frame() -> Vec<u8> {
        let mut ms = vec![Message::RootPos {
            name: "root".into(),
            pos: [0.0, 1.0, 0.0],
            rot: [0.0, 0.0, 0.0, 1.0],
            mr: None,
        }];
        for (i, b) in super::super::HUMAN_BODY_BONES.iter().enumerate() {
            let x = i as f32 * 0.01;
            ms.push(Message::BonePos {
                name: (*b).to_owned(),
                pos: [x, -x, 0.5],
                rot: [0.1, x, -0.2, 0.97],
            });
        }
        ms.push(Message::BlendVal {
            name: "Joy".into(),
            value: 0.25,
        });
        ms.push(Message::BlendApply);
        ms.push(Message::Time(12.5));
        let osc: Vec<_> = ms.iter().map(Message::to_osc).collect();
        osc::bundle(&osc).expect("encodable")
    }

    /// Whether the fast path took `bytes`; when it did, the general path must agree.
    fn same(bytes: &[u8]) -> bool {
        let Some(fast) = decode(bytes) else {
            return false;
        };
        {
            match general(bytes) {
                Ok(slow) => assert_eq!(format!("{fast:?}"), format!("{slow:?}")),
                Err(e) => panic!("fast path accepted what OSC refuses: {e:?}"),
            }
        }
        true
    }

    #[test]
    fn takes_a_real_frame_and_agrees() {
        let bytes = frame();
        let fast = decode(&bytes).expect("canonical frame takes the fast path");
        assert_eq!(fast.len(), 1 + super::super::HUMAN_BODY_BONES.len() + 3);
        assert!(matches!(&fast[1], Ok(Message::BonePos { name, .. }) if name == "Hips"));
        assert!(same(&bytes));
    }

    #[test]
    fn declines_nesting_and_odd_sizes() {
        let inner = frame();
        let nested = PacketRepr::Bundle {
            timetag: (0, 1),
            content: vec![osc::decode(&inner).expect("frame decodes")],
        }
        .to_bytes()
        .expect("encodable");
        assert!(decode(&nested).is_none());
        assert!(general(&nested).is_ok());
        let mut odd = frame();
        odd.truncate(odd.len() - 1);
        assert!(decode(&odd).is_none());
    }

    #[test]
    fn agrees_with_the_general_path_on_any_damage() {
        let good = frame();
        for n in 0..good.len() {
            same(&good[..n]);
        }
        let mut taken = 0;
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0xff;
            taken += usize::from(same(&b));
        }
        // Flipped float and name bytes stay canonical: the comparison must
        // have exercised the fast path, not only its refusals.
        assert!(taken > good.len() / 4, "fast path taken {taken} times");
        let mut rng = Rng(0x5eed_0006);
        for _ in 0..3000 {
            let mut b = good.clone();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len());
                b[i] = rng.next() as u8;
            }
            same(&b);
        }
    }
}
