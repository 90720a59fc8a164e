//! Writing a frame of VMC the way the reference sender does.

use super::Message;
use crate::osc;

/// Largest bundle the reference sender writes (bones are split to stay under it).
pub const MAX_BUNDLE: usize = 1200;

/// Bundle header: `#bundle\0` and the timetag.
const BUNDLE_HEADER: usize = 16;

/// The datagrams of one frame: bone bundles, then the blend bundle(s) with
/// every `Blend/Val` before one `Blend/Apply`, then a bundle with Root/Pos
/// first, the other messages, and OK and T last. Every bundle has the
/// "immediately" timetag and stays within `max` bytes unless a single
/// message is larger.
pub fn frame_datagrams(messages: &[Message], max: usize) -> Vec<Vec<u8>> {
    let mut bones = Vec::new();
    let mut blends = Vec::new();
    let mut root = Vec::new();
    let mut rest = Vec::new();
    let mut ok = Vec::new();
    let mut time = Vec::new();
    let mut apply = false;
    for m in messages {
        match m {
            Message::BonePos { .. } => bones.push(m.to_osc()),
            Message::BlendVal { .. } => blends.push(m.to_osc()),
            Message::BlendApply => apply = true,
            Message::RootPos { .. } => root.push(m.to_osc()),
            Message::Available { .. } => ok.push(m.to_osc()),
            Message::Time(_) => time.push(m.to_osc()),
            _ => rest.push(m.to_osc()),
        }
    }
    if apply || !blends.is_empty() {
        blends.push(Message::BlendApply.to_osc());
    }
    root.extend(rest);
    root.extend(ok);
    root.extend(time);
    let mut out = Vec::new();
    for group in [bones, blends, root] {
        pack(&group, max, &mut out);
    }
    out
}

/// Packs messages, in order, into as few bundles of at most `max` bytes as
/// fit (a message larger than `max` goes in a bundle of its own).
pub fn pack(messages: &[osc::Message], max: usize, out: &mut Vec<Vec<u8>>) {
    let mut current: Vec<osc::Message> = Vec::new();
    let mut size = BUNDLE_HEADER;
    for m in messages {
        let len = 4 + osc::message(m).len();
        if !current.is_empty() && size + len > max {
            out.push(osc::bundle(&current));
            current.clear();
            size = BUNDLE_HEADER;
        }
        current.push(m.clone());
        size += len;
    }
    if !current.is_empty() {
        out.push(osc::bundle(&current));
    }
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
        let dgrams = frame_datagrams(&frame(), MAX_BUNDLE);
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
                    osc::Packet::Bundle {
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
}
