//! Writing a frame of VMC the way the reference sender does.

use super::Message;
use super::fast::{BLEND_ADDRESS, BLEND_TAGS, BONE_ADDRESS, BONE_TAGS};
use crate::osc;

/// Largest bundle the reference sender writes (bones are split to stay under it).
pub const MAX_BUNDLE: usize = 1200;

/// The datagrams of one frame: bone bundles, then the blend bundle(s) with
/// every `Blend/Val` before one `Blend/Apply`, then a bundle with Root/Pos
/// first, the other messages, and OK and T last. Every bundle has the
/// "immediately" timetag and stays within `max` bytes unless a single
/// message is larger.
///
/// # Errors
/// [`osc::EncodeError`] for a message OSC cannot carry (a NUL in a name);
/// nothing of the frame is written then.
pub fn frame_datagrams(messages: &[Message], max: usize) -> Result<Vec<Vec<u8>>, osc::EncodeError> {
    let mut bones = Vec::new();
    let mut blends = Vec::new();
    let mut root = Vec::new();
    let mut rest = Vec::new();
    let mut ok = Vec::new();
    let mut time = Vec::new();
    let mut apply = false;
    for m in messages {
        match m {
            Message::BonePos { name, pos, rot } => {
                let [px, py, pz] = *pos;
                let [qx, qy, qz, qw] = *rot;
                bones.push(named_floats(
                    BONE_ADDRESS,
                    BONE_TAGS,
                    name,
                    &[px, py, pz, qx, qy, qz, qw],
                )?);
            }
            Message::BlendVal { name, value } => {
                blends.push(named_floats(BLEND_ADDRESS, BLEND_TAGS, name, &[*value])?);
            }
            Message::BlendApply => apply = true,
            Message::RootPos { .. } => root.push(bytes(m)?),
            Message::Available { .. } => ok.push(bytes(m)?),
            Message::Time(_) => time.push(bytes(m)?),
            _ => rest.push(bytes(m)?),
        }
    }
    if apply || !blends.is_empty() {
        blends.push(bytes(&Message::BlendApply)?);
    }
    root.extend(rest);
    root.extend(ok);
    root.extend(time);
    let mut out = Vec::new();
    for group in [bones, blends, root] {
        pack_encoded(&group, max, &mut out);
    }
    Ok(out)
}

/// Packs messages, in order, into as few bundles of at most `max` bytes as
/// fit (a message larger than `max` goes in a bundle of its own).
///
/// # Errors
/// [`osc::EncodeError`] for a message OSC cannot carry; `out` is unchanged then.
pub fn pack(
    messages: &[osc::Message],
    max: usize,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), osc::EncodeError> {
    let encoded = messages
        .iter()
        .map(osc::message)
        .collect::<Result<Vec<_>, _>>()?;
    pack_encoded(&encoded, max, out);
    Ok(())
}

/// [`pack`] for messages already encoded, so each is written only once;
/// the packing is [`osc::BundleWriter`]'s, the relay's too.
fn pack_encoded(messages: &[Vec<u8>], max: usize, out: &mut Vec<Vec<u8>>) {
    let mut writer = osc::BundleWriter::new(max);
    let mut send = |b: &[u8]| out.push(b.to_vec());
    for m in messages {
        let appended: Result<(), std::convert::Infallible> = writer.push(
            |buf| {
                buf.extend_from_slice(m);
                Ok(())
            },
            &mut send,
        );
        let Ok(()) = appended;
    }
    writer.finish(&mut send);
}

fn bytes(m: &Message) -> Result<Vec<u8>, osc::EncodeError> {
    osc::message(&m.to_osc())
}

/// Bone/Pos and Blend/Val written directly: they are most of every frame.
fn named_floats(
    address: &[u8],
    tags: &[u8],
    name: &str,
    floats: &[f32],
) -> Result<Vec<u8>, osc::EncodeError> {
    if name.contains('\0') {
        // The same refusal the general encoder makes, with its words.
        return Err(osc::EncodeError {
            kind: osc::EncodeErrorKind::NulInString,
            address: String::from_utf8_lossy(address.split(|&b| b == 0).next().unwrap_or_default())
                .into_owned(),
        });
    }
    let mut b = Vec::with_capacity(address.len() + tags.len() + name.len() + 4 + 4 * floats.len());
    b.extend_from_slice(address);
    b.extend_from_slice(tags);
    b.extend_from_slice(name.as_bytes());
    b.push(0);
    while b.len() % 4 != 0 {
        b.push(0);
    }
    for v in floats {
        b.extend_from_slice(&v.to_be_bytes());
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vmc::HUMAN_BODY_BONES;

    fn frame() -> Vec<Message> {
        let mut f = vec![
            Message::Time(12.5),
            Message::Available {
                loaded: 1,
                calibration: Some((3, 0)),
                tracking: None,
            },
            Message::BlendApply,
        ];
        for (i, b) in HUMAN_BODY_BONES.iter().enumerate() {
            f.push(Message::BonePos {
                name: (*b).into(),
                pos: [i as f32, 0.0, 0.0],
                rot: [0.0, 0.0, 0.0, 1.0],
            });
        }
        for n in crate::vmc::VRM0_PRESETS {
            f.push(Message::BlendVal {
                name: n.into(),
                value: 0.25,
            });
        }
        f.push(Message::RootPos {
            name: "root".into(),
            pos: [0.0; 3],
            rot: [0.0, 0.0, 0.0, 1.0],
            mr: None,
        });
        f
    }

    #[test]
    fn shaped_like_the_reference_sender() {
        let dgrams = frame_datagrams(&frame(), MAX_BUNDLE).unwrap();
        assert!(
            dgrams.iter().all(|d| d.len() <= MAX_BUNDLE),
            "{:?}",
            dgrams.iter().map(Vec::len).collect::<Vec<_>>()
        );
        let decoded: Vec<Vec<Message>> = dgrams
            .iter()
            .map(|d| {
                let p = osc::decode(d).unwrap();
                assert!(matches!(
                    p,
                    osc::PacketRepr::Bundle {
                        timetag: (0, 1),
                        ..
                    }
                ));
                p.messages()
                    .into_iter()
                    .map(|m| Message::from_osc(m).unwrap())
                    .collect()
            })
            .collect();
        let all: Vec<Message> = decoded.iter().flatten().cloned().collect();
        // 55 bones in several bundles, in order.
        let bones: Vec<_> = all
            .iter()
            .filter(|m| matches!(m, Message::BonePos { .. }))
            .collect();
        assert_eq!(bones.len(), 55);
        assert!(decoded.len() >= 5);
        // Vals, then exactly one Apply right after them.
        let first_val = all
            .iter()
            .position(|m| matches!(m, Message::BlendVal { .. }))
            .unwrap();
        let apply = all.iter().position(|m| *m == Message::BlendApply).unwrap();
        assert_eq!(apply, first_val + 17);
        // The last bundle: Root first, OK, T last.
        let last = decoded.last().unwrap();
        assert!(matches!(last[0], Message::RootPos { .. }));
        assert!(matches!(last[last.len() - 2], Message::Available { .. }));
        assert_eq!(last[last.len() - 1], Message::Time(12.5));
    }

    #[test]
    fn written_as_the_general_encoder_writes() {
        let f = frame();
        // Every message of a frame, bones and blends written directly.
        for d in frame_datagrams(&f, MAX_BUNDLE).unwrap() {
            let p = osc::decode(&d).unwrap();
            let general =
                osc::bundle(&p.messages().into_iter().cloned().collect::<Vec<_>>()).unwrap();
            assert_eq!(d, general);
        }
        let msgs: Vec<osc::Message> = f.iter().map(Message::to_osc).collect();
        let mut packed = Vec::new();
        pack(&msgs, MAX_BUNDLE, &mut packed).unwrap();
        // Rebuilt with the general bundle encoder from the same split.
        let mut at = 0;
        for d in &packed {
            let p = osc::decode(d).unwrap();
            let n = p.messages().len();
            assert_eq!(*d, osc::bundle(&msgs[at..at + n]).unwrap());
            at += n;
        }
        assert_eq!(at, msgs.len());
        // One message larger than the limit still goes out, alone.
        let mut big = Vec::new();
        pack(&msgs[..3], 40, &mut big).unwrap();
        assert_eq!(big.len(), 3);
    }

    #[test]
    fn a_name_osc_cannot_carry_is_refused_by_both_writers() {
        // Bones and blends are written directly, everything else through
        // the general encoder: both refuse a NUL, and say where.
        let bone = Message::BonePos {
            name: "Hi\0ps".into(),
            pos: [0.0; 3],
            rot: [0.0, 0.0, 0.0, 1.0],
        };
        let e = frame_datagrams(std::slice::from_ref(&bone), MAX_BUNDLE).unwrap_err();
        assert_eq!(e.kind, osc::EncodeErrorKind::NulInString);
        assert_eq!(e.address, "/VMC/Ext/Bone/Pos");
        assert_eq!(osc::message(&bone.to_osc()).unwrap_err(), e);
        let root = Message::RootPos {
            name: "ro\0ot".into(),
            pos: [0.0; 3],
            rot: [0.0, 0.0, 0.0, 1.0],
            mr: None,
        };
        let e = frame_datagrams(&[root], MAX_BUNDLE).unwrap_err();
        assert_eq!(e.address, "/VMC/Ext/Root/Pos");
        let mut out = vec![vec![1]];
        assert!(pack(&[bone.to_osc()], MAX_BUNDLE, &mut out).is_err());
        assert_eq!(out, vec![vec![1]]);
    }
}
