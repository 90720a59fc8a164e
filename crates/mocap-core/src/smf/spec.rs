//! mocopi's row of the registry ([`crate::protocol`]).

use crate::health::sender_clock;
use crate::protocol::{Carries, Confidence, Spec, Stamp, View};

use super::{Body, Chunks, DEFAULT_PORT, Tag, bone_name, parse};

/// Sony mocopi in the registry.
pub const SPEC: Spec = Spec {
    name: "mocopi",
    key: "mocopi",
    ports: &[DEFAULT_PORT],
    sniff,
    decode,
    face: None,
    carries: Carries::Body,
    tool: "mocopi-dump",
    dissector: Some("mocopi"),
};

/// The first chunk is `head`: certain when its length fits the datagram
/// (the chunk reader the parser walks with says so), likely when it does
/// not (a cut datagram). The rest is left to [`decode`]: this runs on every
/// datagram a live view receives.
fn sniff(d: &[u8]) -> Option<Confidence> {
    match Chunks::top(d).next()? {
        Ok(head) if head.tag == Tag::HEAD => Some(Confidence::Certain),
        Ok(_) => None,
        Err(_) => (d.get(4..8) == Some(b"head")).then_some(Confidence::Likely),
    }
}

/// Bones of a frame (or of the skeleton's rest pose until frames come),
/// numbered by `fnum` on the `uttm` clock, else `time`.
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(packet) = parse(d) else {
        return Stamp::Error;
    };
    match &packet.body {
        Body::Frame(frame) => {
            for b in frame.bones() {
                bone(view, b.id, b.rot, b.pos);
            }
            Stamp::Numbered {
                frame: frame.fnum,
                clock: sender_clock(frame.uttm.unwrap_or_else(|| f64::from(frame.time))),
                part: 0,
            }
        }
        Body::Skeleton(sk) => {
            for b in sk.bones() {
                bone(view, b.id, b.rot, b.pos);
            }
            Stamp::Skeleton
        }
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
