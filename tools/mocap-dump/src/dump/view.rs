//! The registry's [`View`] written two ways: every value for a `frame`
//! record ([`JsonView`]), and a count and a few telling values for a human
//! line ([`HumanView`]). Wire float32 values are widened to f64, whose
//! shortest text an f64 reader (jq, Python, JavaScript) reads back as
//! exactly the wire value.

use std::fmt::Write as _;

use mocap_cli::records::ArgRecord;
use mocap_core::protocol::{Args, Protocol, Stamp, View};
use serde::ser::SerializeMap as _;
use serde::{Serialize, Serializer};

fn wide<const N: usize>(v: [f32; N]) -> [f64; N] {
    v.map(f64::from)
}

/// One bone.
#[derive(Serialize)]
struct Bone {
    name: String,
    rot: [f64; 4],
    pos: [f64; 3],
}

/// Head or eye angles.
#[derive(Serialize)]
struct Angles {
    of: &'static str,
    values: [f64; 3],
    unit: &'static str,
}

/// A tracker slot.
#[derive(Serialize)]
struct Slot {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pos: Option<[f64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rot: Option<[f64; 3]>,
}

/// A message's arguments: a bone's pose, every OSC argument, or `null`
/// when the message did not decode.
#[derive(Serialize)]
#[serde(untagged)]
enum MessageArgs {
    Bone { pos: [f64; 3], rot: [f64; 4] },
    Osc(Vec<ArgRecord>),
    Undecoded,
}

/// One message of an addressed protocol.
#[derive(Serialize)]
struct Message {
    address: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    args: MessageArgs,
}

/// Face values as a JSON object in the order decoded (names as sent).
#[derive(Default)]
struct FaceValues(Vec<(String, f64)>);

impl Serialize for FaceValues {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, v) in &self.0 {
            m.serialize_entry(name, v)?;
        }
        m.end()
    }
}

/// Everything a decode wrote, as the fields of a `frame` record: only the
/// kinds the protocol has.
#[derive(Default, Serialize)]
pub(super) struct JsonView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    bones: Vec<Bone>,
    #[serde(skip_serializing_if = "FaceValues::is_empty")]
    face: FaceValues,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    angles: Vec<Angles>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    slots: Vec<Slot>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    messages: Vec<Message>,
}

impl FaceValues {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl View for JsonView {
    fn bone(&mut self, name: &str, rot: [f32; 4], pos: [f32; 3]) {
        self.bones.push(Bone {
            name: name.to_owned(),
            rot: wide(rot),
            pos: wide(pos),
        });
    }

    fn face(&mut self, name: &str, value: f32) {
        self.face.0.push((name.to_owned(), f64::from(value)));
    }

    fn angle(&mut self, what: &'static str, angles: [f32; 3], unit: &'static str) {
        self.angles.push(Angles {
            of: what,
            values: wide(angles),
            unit,
        });
    }

    fn slot(&mut self, name: &str, pos: Option<[f32; 3]>, rot: Option<[f32; 3]>) {
        self.slots.push(Slot {
            name: name.to_owned(),
            pos: pos.map(wide),
            rot: rot.map(wide),
        });
    }

    fn message(&mut self, address: &str, name: Option<&str>, args: Args<'_>) {
        self.messages.push(Message {
            address: address.to_owned(),
            name: name.map(str::to_owned),
            args: match args {
                Args::Bone { pos, rot } => MessageArgs::Bone {
                    pos: wide(pos),
                    rot: wide(rot),
                },
                Args::Osc(a) => MessageArgs::Osc(a.iter().map(ArgRecord::from).collect()),
                Args::Undecoded => MessageArgs::Undecoded,
            },
        });
    }
}

/// Face values kept for a human line: the strongest few are shown.
const FACE_SHOWN: usize = 3;

/// What a human line shows: counts, the first bone, slot and message, the
/// strongest face values, the angles.
#[derive(Default)]
pub(super) struct HumanView {
    bones: usize,
    first_bone: Option<(String, [f32; 3])>,
    /// The strongest values so far, strongest first.
    face: Vec<(String, f32)>,
    faces: usize,
    angles: Vec<(&'static str, [f32; 3], &'static str)>,
    slots: usize,
    first_slot: Option<String>,
    messages: usize,
    first_message: Option<String>,
}

impl View for HumanView {
    fn bone(&mut self, name: &str, _: [f32; 4], pos: [f32; 3]) {
        self.bones += 1;
        if self.first_bone.is_none() {
            self.first_bone = Some((name.to_owned(), pos));
        }
    }

    fn face(&mut self, name: &str, value: f32) {
        self.faces += 1;
        // Kept bounded: a face of many values keeps only its strongest few.
        let at = self
            .face
            .iter()
            .position(|(_, v)| value.abs() > v.abs())
            .unwrap_or(self.face.len());
        if at < FACE_SHOWN {
            self.face.insert(at, (name.to_owned(), value));
            self.face.truncate(FACE_SHOWN);
        }
    }

    fn angle(&mut self, what: &'static str, angles: [f32; 3], unit: &'static str) {
        // A protocol names a few fixed angles; more are counted in none.
        if self.angles.len() < 4 {
            self.angles.push((what, angles, unit));
        }
    }

    fn slot(&mut self, name: &str, _: Option<[f32; 3]>, _: Option<[f32; 3]>) {
        self.slots += 1;
        if self.first_slot.is_none() {
            self.first_slot = Some(name.to_owned());
        }
    }

    fn message(&mut self, address: &str, name: Option<&str>, _: Args<'_>) {
        self.messages += 1;
        if self.first_message.is_none() {
            self.first_message = Some(match name {
                Some(n) => format!("{address} {n}"),
                None => address.to_owned(),
            });
        }
    }
}

/// One datagram's human line (without its origin): protocol, what the stamp
/// says, then what the view took.
pub(super) fn human_line(s: &mut String, p: Protocol, stamp: Stamp, v: &HumanView, len: usize) {
    let _ = write!(s, "{:<12}", p.key());
    match stamp {
        Stamp::Numbered { frame, .. } => {
            let _ = write!(s, " frame={frame}");
        }
        Stamp::Clocked { clock, .. } => {
            let _ = write!(s, " clock={:.3}s", clock.as_secs_f64());
        }
        Stamp::Unnumbered { .. } => {}
        Stamp::Handshake => s.push_str(" handshake"),
        Stamp::Skeleton => s.push_str(" skeleton"),
        Stamp::Sensor => s.push_str(" sensor"),
        Stamp::Error => {
            let _ = write!(s, " error: not a whole {} datagram ({len} bytes)", p.name());
            return;
        }
    }
    if v.bones > 0 {
        let _ = write!(s, " bones={}", v.bones);
        if let Some((name, [x, y, z])) = &v.first_bone {
            let _ = write!(s, " {name}=({x:.3},{y:.3},{z:.3})");
        }
    }
    if v.faces > 0 {
        let _ = write!(s, " face={}", v.faces);
        for (name, value) in &v.face {
            let _ = write!(s, " {name}={value:.2}");
        }
    }
    for (what, [a, b, c], unit) in &v.angles {
        let _ = write!(
            s,
            " {}=({a:.3},{b:.3},{c:.3}) {unit}",
            what.replace(' ', "_")
        );
    }
    if v.slots > 0 {
        let _ = write!(s, " slots={}", v.slots);
        if let Some(name) = &v.first_slot {
            let _ = write!(s, " {name}");
        }
    }
    if v.messages > 0 {
        let _ = write!(s, " messages={}", v.messages);
        if let Some(m) = &v.first_message {
            let _ = write!(s, " {m}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strongest_face_values_are_kept_in_order() {
        let mut v = HumanView::default();
        for (n, x) in [("a", 0.1), ("b", -0.9), ("c", 0.5), ("d", 0.2), ("e", 0.7)] {
            v.face(n, x);
        }
        let names: Vec<&str> = v.face.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["b", "e", "c"]);
        assert_eq!(v.faces, 5);
    }

    #[test]
    fn floats_are_the_wire_values_for_an_f64_reader() {
        let mut v = JsonView::default();
        v.face("jawOpen", 0.1);
        v.angle("head", [0.3, -1.0e-7, 1.5], "deg");
        let text = serde_json::to_string(&v).unwrap_or_default();
        let back: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let jaw = back["face"]["jawOpen"].as_f64().unwrap_or_default();
        assert_eq!(jaw, f64::from(0.1f32));
        assert_eq!(
            back["angles"][0]["values"][1].as_f64(),
            Some(f64::from(-1.0e-7f32))
        );
        assert!(back.get("bones").is_none(), "{text}");
    }
}
