//! OpenSeeFace's row of the registry ([`crate::protocol`]).

use std::fmt::Write as _;

use crate::bridge::FacePose;
use crate::health::sender_clock;
use crate::protocol::{Carries, Confidence, Spec, Stamp, View, part_of};

use super::packet::plausible_head;
use super::{DEFAULT_PORT, Packet, parse};

/// OpenSeeFace's face stream in the registry. It has no dump tool of its
/// own: mocap-dump (and mocap-top) decode it through the registry.
pub const SPEC: Spec = Spec {
    name: "OpenSeeFace",
    key: "openseeface",
    label: "osf",
    ports: &[DEFAULT_PORT],
    sniff,
    decode,
    stamp,
    face: Some(face),
    body: None,
    carries: Carries::Face,
    ask: None,
    answer: None,
    renumber: None,
    tool: "mocap-dump",
    dissector: Some("openseeface"),
};

/// Certain when the datagram is whole faces and every face's head is
/// believable (a clock, a camera size, eye openness 0–1, a success byte);
/// likely when only the first face's head is (a cut datagram).
fn sniff(d: &[u8]) -> Option<Confidence> {
    match parse(d) {
        Ok(p) => p
            .faces()
            .all(|f| f.plausible())
            .then_some(Confidence::Certain),
        Err(_) => plausible_head(d).then_some(Confidence::Likely),
    }
}

/// Eye openness and the 14 features as face values, the head's Euler
/// angles when the 3D fit succeeded. A datagram is a camera frame, not
/// numbered: its health is its first face's clock ([`stamp_of`]). Faces after the first are named by their id (`#1 eye_l`): short,
/// as a live view's name column is.
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(packet) = parse(d) else {
        return Stamp::Error;
    };
    let mut name = String::new();
    for (i, f) in packet.faces().enumerate() {
        let mut value = |n: &str, v: f32| {
            if i == 0 {
                view.face(n, v);
            } else {
                name.clear();
                let _ = write!(name, "#{} {n}", f.id());
                view.face(&name, v);
            }
        };
        let [right, left] = f.eyes_open();
        value("eye_open_r", right);
        value("eye_open_l", left);
        for (n, v) in f.features() {
            value(n, v);
        }
        // A view's angle names are fixed words: the first face's head only.
        if f.success() && i == 0 {
            view.angle("head", f.euler(), "deg x/y/z");
        }
    }
    stamp_of(&packet)
}

fn stamp(d: &[u8]) -> Stamp {
    parse(d).map_or(Stamp::Error, |p| stamp_of(&p))
}

/// The first face's clock, one sequence per face id: the faces of a frame
/// share its clock, and the first is the one the bridges follow. A clock
/// that is no time (decoded with a warning) leaves the frame unnumbered.
fn stamp_of(packet: &Packet<'_>) -> Stamp {
    packet
        .faces()
        .next()
        .and_then(|f| {
            Some(Stamp::Clocked {
                clock: sender_clock(f.time())?,
                part: part_of(&[&f.id().to_le_bytes()]),
            })
        })
        .unwrap_or(Stamp::Unnumbered { ends_frame: true })
}

/// The first face as the face bridges read it ([`FacePose::from`]: the
/// head from its quaternion, blinks and mouth as VRM presets).
fn face(d: &[u8]) -> Option<FacePose> {
    let packet = parse(d).ok()?;
    packet.faces().next().map(|f| FacePose::from(&f))
}
