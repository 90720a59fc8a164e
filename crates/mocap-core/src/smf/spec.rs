//! mocopi's row of the registry ([`crate::protocol`]).

use crate::health::sender_clock;
use crate::protocol::{Carries, Confidence, Numbers, Renumbering, Spec, Stamp, View, writes_back};

use super::{Body, BodyRepr, DEFAULT_PORT, HEADER_LEN, PacketRepr, Tag, bone_name, parse};

/// Sony mocopi in the registry.
pub const SPEC: Spec = Spec {
    name: "mocopi",
    key: "mocopi",
    label: "mocopi",
    ports: &[DEFAULT_PORT],
    sniff,
    decode,
    stamp,
    face: None,
    body: Some(crate::bridge::MocopiBody::boxed),
    carries: Carries::Body,
    ask: None,
    answer: None,
    renumber: Some(Renumbering {
        read: numbers,
        write: renumbered,
    }),
    tool: "mocopi-dump",
    dissector: Some("mocopi"),
};

/// The first chunk is `head`: certain when its length fits the datagram,
/// likely when it does not (a cut datagram). Only the chunk header is read,
/// as the parser's chunk reader reads it ([`HEADER_LEN`] bytes: length,
/// then tag): this runs on every datagram a live view receives, so the rest
/// is left to [`decode`].
fn sniff(d: &[u8]) -> Option<Confidence> {
    let (header, _) = d.split_first_chunk::<HEADER_LEN>()?;
    let [l0, l1, l2, l3, t0, t1, t2, t3] = *header;
    if Tag([t0, t1, t2, t3]) != Tag::HEAD {
        return None;
    }
    let len = usize::try_from(u32::from_le_bytes([l0, l1, l2, l3])).ok()?;
    Some(
        if len
            .checked_add(HEADER_LEN)
            .is_some_and(|end| end <= d.len())
        {
            Confidence::Certain
        } else {
            Confidence::Likely
        },
    )
}

/// Bones of a frame (or of the skeleton's rest pose until frames come).
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(packet) = parse(d) else {
        return Stamp::Error;
    };
    match &packet.body {
        Body::Frame(frame) => {
            for b in frame.bones() {
                bone(view, b.id, b.rot, b.pos);
            }
        }
        Body::Skeleton(sk) => {
            for b in sk.bones() {
                bone(view, b.id, b.rot, b.pos);
            }
        }
        Body::Sensor(_) => {}
    }
    stamp_of(&packet.body)
}

fn stamp(d: &[u8]) -> Stamp {
    parse(d).map_or(Stamp::Error, |p| stamp_of(&p.body))
}

/// A frame is numbered by `fnum` on the `uttm` clock, else `time`.
fn stamp_of(body: &Body<'_>) -> Stamp {
    match body {
        Body::Frame(frame) => Stamp::Numbered {
            frame: frame.fnum,
            clock: sender_clock(frame.uttm.unwrap_or_else(|| f64::from(frame.time))),
            part: 0,
        },
        Body::Skeleton(_) => Stamp::Skeleton,
        Body::Sensor(_) => Stamp::Sensor,
    }
}

/// A joint by its id: the table's name costs no allocation.
fn bone(view: &mut dyn View, id: u16, rot: [f32; 4], pos: [f32; 3]) {
    match bone_name(id) {
        Some(name) => view.bone(name, rot, pos),
        None => view.bone(&format!("bone {id}"), rot, pos),
    }
}

/// A frame's `fnum`, `time` and `uttm`; skeleton and sensor packets and
/// frames numbered -1 (BVH Sender's) have none.
fn numbers(d: &[u8]) -> Option<Numbers> {
    let packet = parse(d).ok()?;
    let f = packet.frame()?;
    (f.fnum != crate::health::UNNUMBERED).then_some(Numbers {
        frame: f.fnum,
        part: 0,
        clocks: [Some(f64::from(f.time)), f.uttm],
    })
}

/// The frame with new numbers; a clock past the format's range (it would
/// not read back) keeps its captured value. `tmcd` is left alone.
fn renumbered(d: &[u8], n: &Numbers, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> bool {
    let Ok(packet) = parse(d) else {
        return false;
    };
    let mut repr = PacketRepr::parse(&packet);
    if !writes_back(d, scratch, |b| repr.emit(b)) {
        return false;
    }
    let BodyRepr::Frame(fr) = &mut repr.body else {
        return false;
    };
    let [time, uttm] = n.clocks;
    fr.fnum = n.frame;
    #[expect(clippy::cast_possible_truncation, reason = "time is f32 on the wire")]
    if let Some(t) = time.map(|t| t as f32).filter(|t| t.is_finite()) {
        fr.time = t;
    }
    if let (Some(u), Some(t)) = (&mut fr.uttm, uttm.filter(|t| t.is_finite())) {
        *u = t;
    }
    out.clear();
    repr.emit(out);
    true
}
