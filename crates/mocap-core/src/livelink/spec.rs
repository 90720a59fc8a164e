//! Live Link Face's row of the registry ([`crate::protocol`]).

use crate::bridge::FacePose;
use crate::health::sender_clock;
use crate::protocol::{
    Carries, Confidence, Numbers, Renumbering, Spec, Stamp, View, part_of, writes_back,
};

use super::{AngleUnit, DEFAULT_PORT, Packet, PacketRepr, VERSION, parse};

/// Epic's Live Link Face in the registry.
pub const SPEC: Spec = Spec {
    name: "Live Link Face",
    key: "livelink",
    label: "livelink",
    ports: &[DEFAULT_PORT],
    sniff,
    decode,
    stamp,
    face: Some(face),
    body: None,
    carries: Carries::Face,
    ask: None,
    answer: None,
    renumber: Some(Renumbering {
        read: numbers,
        write: renumbered,
    }),
    tool: "livelink-dump",
    dissector: Some("livelink"),
};

/// Longest device or subject name a sniff believes: real ones are a phone's
/// name; a length past this is more likely another protocol's bytes.
const MAX_NAME: usize = 1024;

/// The parser's layout walked without decoding: the version, two names
/// that fit (and are believable), the 16-byte frame time, then nothing (no
/// face) or a count and exactly its floats. Certain when all of it adds
/// up, likely when it is cut after the names. This runs on every datagram
/// a live view receives; a full [`parse`] here cost a third more.
fn sniff(d: &[u8]) -> Option<Confidence> {
    let (&version, rest) = d.split_first()?;
    if version != VERSION {
        return None;
    }
    let rest = skip_name(skip_name(rest)?)?;
    let Some((_time, rest)) = rest.split_at_checked(16) else {
        return Some(Confidence::Likely);
    };
    Some(match rest.split_first() {
        None => Confidence::Certain,
        Some((&n, values)) if values.len() == 4 * usize::from(n) => Confidence::Certain,
        Some(_) => Confidence::Likely,
    })
}

/// A big-endian `i32` length and that many bytes, when they fit and the
/// length is believable for a name.
fn skip_name(d: &[u8]) -> Option<&[u8]> {
    let (len, rest) = d.split_first_chunk::<4>()?;
    let len = usize::try_from(i32::from_be_bytes(*len)).ok()?;
    if len > MAX_NAME {
        return None;
    }
    rest.get(len..)
}

/// Blendshapes by ARKit name, head and eye angles; numbered by the
/// timecode's frame on the timecode's clock, one sequence per device and
/// subject. The frame count runs on while the face is lost, so no-face
/// packets are numbered frames too.
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(packet) = parse(d) else {
        return Stamp::Error;
    };
    if let Some(face) = packet.face() {
        for (name, v) in face.blendshapes() {
            view.face(name, v);
        }
        for (what, a) in [
            ("head", face.head()),
            ("left eye", face.left_eye()),
            ("right eye", face.right_eye()),
        ] {
            if let Some(a) = a {
                view.angle(what, [a.yaw, a.pitch, a.roll], "yaw/pitch/roll");
            }
        }
    }
    stamp_of(&packet)
}

fn stamp(d: &[u8]) -> Stamp {
    parse(d).map_or(Stamp::Error, |p| stamp_of(&p))
}

fn stamp_of(packet: &Packet<'_>) -> Stamp {
    Stamp::Numbered {
        frame: packet.time.frame.cast_unsigned(),
        clock: packet.time.seconds().and_then(sender_clock),
        part: part_of(&[packet.device_bytes(), packet.subject_bytes()]),
    }
}

/// The face as the bridges read it, angles in radians as Unreal reads them.
fn face(d: &[u8]) -> Option<FacePose> {
    let packet = parse(d).ok()?;
    Some(FacePose::from_livelink(packet.face(), AngleUnit::Radians))
}

/// The timecode's frame number per device and subject; the subframe and
/// rate are not clocks a pass moves on.
fn numbers(d: &[u8]) -> Option<Numbers> {
    let p = parse(d).ok()?;
    Some(Numbers {
        frame: p.time.frame.cast_unsigned(),
        part: part_of(&[p.device_bytes(), p.subject_bytes()]),
        clocks: [None, None],
    })
}

/// The packet with a new frame number (face and no-face packets alike).
fn renumbered(d: &[u8], n: &Numbers, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> bool {
    let Ok(packet) = parse(d) else {
        return false;
    };
    let mut repr = PacketRepr::parse(&packet);
    if !writes_back(d, scratch, |b| repr.emit(b)) {
        return false;
    }
    repr.frame = n.frame.cast_signed();
    out.clear();
    repr.emit(out);
    true
}
