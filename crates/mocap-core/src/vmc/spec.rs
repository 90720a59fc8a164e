//! The OSC protocols' rows of the registry ([`crate::protocol`]): VMC (and
//! any other OSC), VRChat's OSC input and the VMT driver. All three are OSC;
//! the registry tells them apart by the (first) address, and one decode
//! serves them all: bones, blendshapes, tracker slots and one row per
//! address.

use crate::bridge::{BodyPose, BodyReader, BonePose};
use crate::health::FrameMarks;
use crate::osc::{Arg, Message as Osc};
use crate::protocol::{Args, Carries, Confidence, Spec, Stamp, View};

use super::trackers::{VMT_PORT, VRCHAT_PORT};
use super::{Element, FRAME_ENDS, MARIONETTE_PORT, Message, PERFORMER_PORT, decode_borrowed};

/// VMC, and OSC that is neither VRChat's nor VMT's, in the registry.
pub const SPEC: Spec = Spec {
    sniff: |d| sniff(d, Family::Other),
    body: Some(|| Box::new(VmcBody::default())),
    ..osc_row(
        "VMC (OSC)",
        "vmc",
        &[MARIONETTE_PORT, PERFORMER_PORT],
        Carries::Body,
    )
};

/// VRChat's OSC input (avatar parameters, trackers, chatbox) in the registry.
pub const VRCHAT_SPEC: Spec = Spec {
    sniff: |d| sniff(d, Family::Vrchat),
    ..osc_row("VRChat OSC", "vrchat", &[VRCHAT_PORT], Carries::Trackers)
};

/// The VMT driver's OSC trackers inside SteamVR in the registry.
pub const VMT_SPEC: Spec = Spec {
    sniff: |d| sniff(d, Family::Vmt),
    ..osc_row("VMT", "vmt", &[VMT_PORT], Carries::Trackers)
};

/// What the three OSC rows share: one decode and stamp, read by
/// vmc-relay, dissected by vmc.lua; the key is the label. Each row sets
/// its own sniff (a const fn cannot build the closure from an argument).
const fn osc_row(
    name: &'static str,
    key: &'static str,
    ports: &'static [u16],
    carries: Carries,
) -> Spec {
    Spec {
        name,
        key,
        label: key,
        ports,
        sniff: |d| sniff(d, Family::Other),
        decode,
        stamp,
        face: None,
        body: None,
        renumber: None,
        carries,
        ask: None,
        answer: None,
        tool: "vmc-relay --dump",
        dissector: Some("vmc"),
    }
}

/// Which OSC application a datagram speaks, from its (first) address.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Vrchat,
    Vmt,
    /// VMC and any other OSC.
    Other,
}

/// The address prefixes VRChat's OSC input reads (docs/trackers.md).
const VRCHAT_PREFIXES: [&[u8]; 6] = [
    b"/avatar/",
    b"/input/",
    b"/chatbox/",
    b"/tracking/",
    b"/usercamera/",
    b"/dolly/",
];

fn family(address: &[u8]) -> Family {
    if address.starts_with(b"/VMT/") {
        Family::Vmt
    } else if VRCHAT_PREFIXES.iter().any(|p| address.starts_with(p)) {
        Family::Vrchat
    } else {
        Family::Other
    }
}

/// OSC of `want`: `#bundle\0` whose first element (if any) is a message of
/// that family, or an address `/…` NUL-padded to four bytes followed by a
/// `,` type tag string. The framing inside is left to [`decode`]: this runs
/// on every datagram a live view receives.
fn sniff(d: &[u8], want: Family) -> Option<Confidence> {
    if d.starts_with(b"#bundle\0") {
        // The first element's address decides; an empty bundle or one that
        // starts with a nested bundle counts as VMC/other OSC.
        let first = d.get(20..).filter(|e| e.first() == Some(&b'/'));
        let found = first.map_or(Family::Other, |e| {
            family(e.split(|&b| b == 0).next().unwrap_or_default())
        });
        if found != want {
            return None;
        }
        return Some(if d.len() >= 16 && d.len().is_multiple_of(4) {
            Confidence::Certain
        } else {
            Confidence::Likely
        });
    }
    if d.first() != Some(&b'/') {
        return None;
    }
    let Some(nul) = d.iter().position(|&b| b == 0) else {
        // An address without its end: a cut message at best.
        return (d.iter().all(u8::is_ascii_graphic) && family(d) == want)
            .then_some(Confidence::Likely);
    };
    let address = d.get(..nul)?;
    if !address.iter().all(u8::is_ascii_graphic) || family(address) != want {
        return None;
    }
    let tags_at = (nul / 4 + 1) * 4;
    Some(
        if d.get(tags_at) == Some(&b',') && d.len().is_multiple_of(4) {
            Confidence::Certain
        } else {
            Confidence::Likely
        },
    )
}

/// Every message as an address row; bones, blendshapes and tracker slots
/// by meaning. A VMC sender splits a frame over several datagrams and ends
/// it with OK and the time ([`FRAME_ENDS`]); other OSC has no frames.
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    // VMC's own decoder: bones of the usual canonical bundle without an
    // allocation (a flood is mostly bones), the rest through rosc.
    let Ok(elements) = decode_borrowed(d) else {
        return Stamp::Error;
    };
    let mut ends = false;
    for e in elements {
        match e {
            Element::Bone { name, pos, rot } => {
                view.message("/VMC/Ext/Bone/Pos", Some(name), Args::Bone { pos, rot });
                view.bone(name, rot, pos);
            }
            Element::Other(Ok(m)) => {
                let m = match m {
                    Message::Other(o) | Message::Thru(o) => o,
                    typed => typed.to_osc(),
                };
                ends |= FRAME_ENDS.contains(&m.address.as_str());
                values(&m, view);
                tracker(&m, view);
                match m.args.split_first() {
                    Some((Arg::String(name), rest)) => {
                        view.message(&m.address, Some(name), Args::Osc(rest));
                    }
                    _ => view.message(&m.address, None, Args::Osc(&m.args)),
                }
            }
            Element::Other(Err(_)) => {
                view.message("(message that did not decode)", None, Args::Undecoded);
            }
        }
    }
    Stamp::Unnumbered { ends_frame: ends }
}

/// Whether the datagram decodes and carries a frame's end, without
/// building messages' text (typed OK and time are told by their variant).
fn stamp(d: &[u8]) -> Stamp {
    let Ok(elements) = decode_borrowed(d) else {
        return Stamp::Error;
    };
    let ends_frame = elements.iter().any(|e| match e {
        Element::Other(Ok(Message::Available { .. } | Message::Time(_))) => true,
        Element::Other(Ok(Message::Other(o) | Message::Thru(o))) => {
            FRAME_ENDS.contains(&o.address.as_str())
        }
        _ => false,
    });
    Stamp::Unnumbered { ends_frame }
}

/// VMC's bodies: bones and the root gather over the datagrams of a frame,
/// which ends where the sender marks it (OK, time); a sender that never
/// marks sends a frame per datagram. Bones outside `HumanBodyBones` are
/// left out (they have no place in a humanoid pose); the pose is bounded.
#[derive(Default)]
struct VmcBody {
    pose: BodyPose,
    marks: FrameMarks,
}

impl BodyReader for VmcBody {
    fn datagram(&mut self, datagram: &[u8]) -> Option<BodyPose> {
        let elements = decode_borrowed(datagram).ok()?;
        let mut ends = false;
        for e in elements {
            match e {
                Element::Bone { name, pos, rot } => {
                    self.pose.set(name, BonePose { pos, rot });
                }
                Element::Other(Ok(Message::BonePos { name, pos, rot })) => {
                    self.pose.set(&name, BonePose { pos, rot });
                }
                Element::Other(Ok(Message::RootPos { pos, rot, .. })) => {
                    self.pose.root = Some(BonePose { pos, rot });
                }
                Element::Other(Ok(Message::Available { .. } | Message::Time(_))) => ends = true,
                Element::Other(Ok(Message::Other(o) | Message::Thru(o))) => {
                    ends |= FRAME_ENDS.contains(&o.address.as_str());
                }
                Element::Other(_) => {}
            }
        }
        if !self.marks.is_frame(ends) {
            return None;
        }
        let pose = std::mem::take(&mut self.pose);
        (!pose.is_empty()).then_some(pose)
    }
}

fn floats(args: &[Arg]) -> Vec<f32> {
    args.iter()
        .filter_map(|a| match a {
            Arg::Float(f) => Some(*f),
            _ => None,
        })
        .collect()
}

/// VMC's bones (also the root) and blendshapes.
fn values(m: &Osc, view: &mut dyn View) {
    match (m.address.as_str(), m.args.split_first()) {
        ("/VMC/Ext/Bone/Pos" | "/VMC/Ext/Root/Pos", Some((Arg::String(name), rest))) => {
            if let [px, py, pz, qx, qy, qz, qw, ..] = floats(rest)[..] {
                view.bone(name, [qx, qy, qz, qw], [px, py, pz]);
            }
        }
        ("/VMC/Ext/Blend/Val", Some((Arg::String(name), [Arg::Float(v), ..]))) => {
            view.face(name, *v);
        }
        _ => {}
    }
}

/// VRChat's `/tracking/trackers/<slot>/position|rotation` and VMT's
/// `/VMT/…` (index, enable, time offset, then position and rotation).
fn tracker(m: &Osc, view: &mut dyn View) {
    let floats = floats(&m.args);
    let three = |from: usize| {
        floats
            .get(from..from + 3)
            .and_then(|f| <[f32; 3]>::try_from(f).ok())
    };
    if let Some(rest) = m.address.strip_prefix("/tracking/trackers/") {
        let (Some((slot, what)), Some(v)) = (rest.split_once('/'), three(0)) else {
            return;
        };
        match what {
            "position" => view.slot(slot, Some(v), None),
            "rotation" => view.slot(slot, None, Some(v)),
            _ => view.slot(slot, None, None),
        }
    } else if m.address.starts_with("/VMT/")
        && let (Some(Arg::Int(index)), Some(pos)) = (m.args.first(), three(1))
    {
        view.slot(&index.to_string(), Some(pos), None);
    }
}
