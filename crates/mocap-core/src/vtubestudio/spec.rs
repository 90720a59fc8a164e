//! VTube Studio's row of the registry ([`crate::protocol`]).

use std::time::Duration;

use crate::bridge::FacePose;
use crate::ifm::arkit_index;
use crate::osc::Arg;
use crate::protocol::{Args, Ask, Carries, Confidence, Resend, Spec, Stamp, View};

use super::request::{MAX_PORTS, MAX_SENT_BY, REQUEST_TIME, RESEND, SENT_BY, request};
use super::{DEFAULT_PORT, Packet, REQUEST_TYPE, TrackingData, parse};

/// VTube Studio's phone protocol in the registry. It has no dump tool of
/// its own: mocap-top decodes it.
pub const SPEC: Spec = Spec {
    name: "VTube Studio",
    key: "vtubestudio",
    label: "vts",
    ports: &[DEFAULT_PORT],
    sniff,
    decode,
    stamp,
    face: Some(face),
    body: None,
    carries: Carries::Face,
    renumber: None,
    // The app streams for `time` after each request: asked again every
    // second, so one lost request leaves no gap.
    ask: Some(Ask {
        port: DEFAULT_PORT,
        request: ask,
        resend: Resend::Every(RESEND),
    }),
    answer: None,
    tool: "mocap-dump",
    dissector: Some("vtubestudio"),
};

/// The request for `ports` (the first [`MAX_PORTS`] that are not 0) from
/// `name` (its first [`MAX_SENT_BY`] characters; [`SENT_BY`] when empty),
/// asking for [`REQUEST_TIME`] of data: inside what every version of the app
/// accepts. Empty when no port is left (nothing to ask for).
fn ask(ports: &[u16], name: &str) -> Vec<u8> {
    let ports: Vec<u16> = ports
        .iter()
        .copied()
        .filter(|p| *p != 0)
        .take(MAX_PORTS)
        .collect();
    let name: String = name.chars().take(MAX_SENT_BY).collect();
    let name = if name.is_empty() { SENT_BY } else { &name };
    request(REQUEST_TIME, name, &ports).unwrap_or_default()
}

/// How far into a datagram a cut one's telling names are looked for.
const HEAD: usize = 256;

/// Certain when it decodes as a request or as tracking data; likely when it
/// is a JSON object whose start names the request or a member only the
/// tracking data has (a cut datagram). Anything not starting with `{` is
/// refused at its first byte.
fn sniff(d: &[u8]) -> Option<Confidence> {
    let start = d.iter().position(|b| !b.is_ascii_whitespace())?;
    if d.get(start) != Some(&b'{') {
        return None;
    }
    if parse(d).is_ok() {
        return Some(Confidence::Certain);
    }
    let head = d.get(..HEAD).unwrap_or(d);
    let telling: [&[u8]; 4] = [
        b"\"iOSTrackingDataRequest\"",
        b"\"FaceFound\"",
        b"\"BlendShapes\"",
        b"\"Timestamp\"",
    ];
    telling
        .iter()
        .any(|name| head.windows(name.len()).any(|w| w == *name))
        .then_some(Confidence::Likely)
}

/// A request as one message (`iOSTrackingDataRequest`, named by `sentBy`,
/// with `time` and the ports): which PC asks whom shows in the row. Tracking
/// data as face values (`FaceFound` 1 or 0, then the blendshapes as sent)
/// and the head's and eyes' angles as sent (degrees x, y, z).
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(packet) = parse(d) else {
        return Stamp::Error;
    };
    match &packet {
        Packet::Request(r) => {
            #[expect(clippy::cast_possible_truncation, reason = "seconds, shown")]
            let mut args = vec![Arg::Float(r.time.unwrap_or(f64::NAN) as f32)];
            args.extend(r.ports.iter().map(|p| Arg::Int(i32::from(*p))));
            view.message(REQUEST_TYPE, r.sent_by.as_deref(), Args::Osc(&args));
        }
        Packet::Data(t) => {
            if let Some(found) = t.face_found {
                view.face("FaceFound", if found { 1.0 } else { 0.0 });
            }
            for (name, v) in &t.blendshapes {
                view.face(name, f32s(*v));
            }
            for (what, a) in [
                ("head", t.rotation),
                ("left eye", t.eye_left),
                ("right eye", t.eye_right),
            ] {
                if let Some(a) = a {
                    view.angle(what, a.map(f32s), "deg x/y/z");
                }
            }
        }
    }
    stamp_of(&packet)
}

fn stamp(d: &[u8]) -> Stamp {
    parse(d).map_or(Stamp::Error, |p| stamp_of(&p))
}

/// Tracking data on the phone's clock (`Timestamp`, one sequence per
/// sender), counted whether or not a face was found, as Live Link Face's
/// no-face packets are; without a timestamp that is a time, a frame without
/// a number. A request is a datagram of its own, not a frame's part.
fn stamp_of(packet: &Packet) -> Stamp {
    match packet {
        Packet::Request(_) => Stamp::Unnumbered { ends_frame: true },
        Packet::Data(t) => t.timestamp.and_then(|ms| u64::try_from(ms).ok()).map_or(
            Stamp::Unnumbered { ends_frame: true },
            |ms| Stamp::Clocked {
                clock: Duration::from_millis(ms),
                part: 0,
            },
        ),
    }
}

/// The tracking data as the bridges read it; a request has no face.
fn face(d: &[u8]) -> Option<FacePose> {
    match parse(d).ok()? {
        Packet::Data(t) => Some(pose(&t)),
        Packet::Request(_) => None,
    }
}

/// `FaceFound` as tracking; ARKit blendshapes by name (ARKit's spelling or
/// the app's capitalised one); the head from `Rotation`, whose `x` turns
/// left and right and `y` nods (VTube Studio's FaceAngleX/Y; DenchiSoft's
/// example turns a cube by (−y, −x, z) in Unity, which is (y, x, z) in
/// ARKit's frame); eyes and position as sent.
pub(super) fn pose(t: &TrackingData) -> FacePose {
    let mut pose = FacePose {
        tracking: t.face_found,
        head: t.rotation.map(|[x, y, z]| [y, x, z].map(f32s)),
        left_eye: t.eye_left.map(|a| a.map(f32s)),
        right_eye: t.eye_right.map(|a| a.map(f32s)),
        head_position: t.position.map(|a| a.map(f32s)),
        ..FacePose::default()
    };
    for (name, v) in &t.blendshapes {
        if let Some(slot) = arkit_slot(name).and_then(|i| pose.blendshapes.get_mut(i)) {
            *slot = Some(f32s(*v));
        }
    }
    pose
}

/// The ARKit index of `name`, spelt as ARKit does (`jawOpen`) or
/// capitalised as VTube Studio's blendshape enum is (`JawOpen`).
pub(super) fn arkit_slot(name: &str) -> Option<usize> {
    arkit_index(name).or_else(|| {
        // Long enough for ARKit's longest name (19 bytes).
        let mut buf = [0u8; 24];
        let out = buf.get_mut(..name.len())?;
        out.copy_from_slice(name.as_bytes());
        out.first_mut()?.make_ascii_lowercase();
        arkit_index(std::str::from_utf8(out).ok()?)
    })
}

/// An `f64` from the JSON as the `f32` views and bridges carry.
#[expect(
    clippy::cast_possible_truncation,
    reason = "values for views and bridges"
)]
fn f32s(v: f64) -> f32 {
    v as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_of_arkit_names() {
        assert_eq!(arkit_slot("jawOpen"), Some(17));
        assert_eq!(arkit_slot("JawOpen"), Some(17));
        assert_eq!(arkit_slot("EyeBlinkLeft"), Some(0));
        assert_eq!(arkit_slot("MouthLowerDownRight"), Some(38));
        for other in [
            "",
            "J",
            "Hapihapi",
            "ÉjawOpen",
            "JawOpenJawOpenJawOpenJawOpen",
        ] {
            assert_eq!(arkit_slot(other), None, "{other}");
        }
    }

    #[test]
    fn the_ask_stays_inside_every_app_version() {
        let ports: Vec<u16> = (0..40).collect();
        let name = "a program with a name longer than thirty-two characters";
        let Ok(Packet::Request(r)) = parse(&ask(&ports, name)) else {
            panic!("not a request")
        };
        assert_eq!(r.ports, (1..=16).collect::<Vec<u16>>());
        assert_eq!(r.time, Some(3.0));
        assert_eq!(r.sent_by.as_deref().map(str::len), Some(32));
        let Ok(Packet::Request(r)) = parse(&ask(&[7], "")) else {
            panic!("not a request")
        };
        assert_eq!(r.sent_by.as_deref(), Some("mocap-dump"));
        assert!(ask(&[0], "x").is_empty(), "no port, nothing asked");
    }
}
