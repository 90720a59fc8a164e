//! What a stream carries, newest value per name, for the drill-down views:
//! bones (mocopi, VMC), face values (iFacialMocap, Live Link Face, VMC
//! blendshapes) with head and eye angles, one row per OSC address and name
//! (VMC, VRChat, VMT; VMCProtocolMonitor's list), tracker slots (VRChat,
//! VMT). Every list is bounded: names past the bound are counted, not kept.

use std::time::Duration;

use mocap_core::osc::{self, Arg};
use mocap_core::protocol::Protocol;
use mocap_core::{ifm, livelink, smf, vmc};

use crate::window::Window;

/// Most rows one list keeps (a VMC sender has ~55 bones, ~60 blendshapes).
pub(crate) const MAX_ROWS: usize = 256;
/// Numbered sequences told apart in one stream (Live Link Face subjects).
pub(crate) const MAX_PARTS: usize = 16;
/// Arrivals an address row remembers for its rate.
const ADDRESS_WINDOW: usize = 256;
/// Longest value text kept for an address row.
const MAX_VALUE_TEXT: usize = 96;

/// One bone: name, rotation quaternion `[x, y, z, w]`, position.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bone {
    pub(crate) name: String,
    pub(crate) rot: [f32; 4],
    pub(crate) pos: [f32; 3],
}

/// How far a rotation's length may be from 1 before it is flagged. f32
/// quaternions a sender normalised are within about 1e-6 of it; 1e-2 lets
/// through rounding and senders that normalise in half precision, and
/// catches what moves an avatar wrongly: an unnormalised or zero
/// quaternion, or Euler angles sent in its place.
pub(crate) const UNIT_TOLERANCE: f64 = 1e-2;

impl Bone {
    /// Whether the rotation is a unit quaternion (within [`UNIT_TOLERANCE`]).
    pub(crate) fn unit(&self) -> bool {
        is_unit(self.rot)
    }

    /// The rotation's length.
    pub(crate) fn norm(&self) -> f64 {
        norm(self.rot)
    }

    /// The rotation as Unity's Euler angles in degrees (x, y, z).
    pub(crate) fn euler(&self) -> [f64; 3] {
        vmc::trackers::unity_euler(mocap_core::quat::wide(self.rot))
    }
}

/// One row of the OSC address list: address and first string argument (a
/// bone or blendshape name), the other arguments as text, how often.
#[derive(Clone, Debug)]
pub(crate) struct Address {
    pub(crate) key: String,
    /// The newest message's arguments after the name, kept as they came:
    /// text is made only when a screen shows it.
    last: Last,
    pub(crate) count: u64,
    window: Window,
}

/// The arguments of an address row's newest message.
#[derive(Clone, Debug)]
enum Last {
    /// A bone: position and rotation.
    Floats([f32; 7]),
    Args(Vec<Arg>),
}

impl Address {
    /// The newest arguments as text (after the name, if the row has one).
    pub(crate) fn value(&self) -> String {
        let mut out = String::new();
        match &self.last {
            Last::Floats(f) => {
                for (i, v) in f.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    arg_text(&mut out, &Arg::Float(*v));
                }
            }
            Last::Args(args) => {
                for (i, arg) in args.iter().enumerate() {
                    if out.len() >= MAX_VALUE_TEXT {
                        out.push('…');
                        break;
                    }
                    if i > 0 {
                        out.push(' ');
                    }
                    arg_text(&mut out, arg);
                }
            }
        }
        out
    }

    /// Messages per second over the last second.
    pub(crate) fn rate(&self, now: Duration) -> f64 {
        self.window.rate(now)
    }
}

/// One tracker slot: its name (VRChat's `1`…`8`, `head`; VMT's index),
/// position and, when sent, rotation as sent (VRChat: Euler degrees).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) pos: Option<[f32; 3]>,
    pub(crate) rot: Option<[f32; 3]>,
}

/// The newest contents of one stream.
#[derive(Clone, Debug, Default)]
pub(crate) struct Content {
    pub(crate) bones: Vec<Bone>,
    /// Face values 0..1 by name (ARKit names for the phones, the sender's
    /// names for VMC blendshapes).
    pub(crate) face: Vec<(String, f32)>,
    /// Head and eye angles as `(what, [a, b, c], unit)`.
    pub(crate) angles: Vec<(&'static str, [f32; 3], &'static str)>,
    pub(crate) addresses: Vec<Address>,
    pub(crate) slots: Vec<Slot>,
    /// Names left out because a list was full.
    pub(crate) dropped: u64,
    /// Bone rotations received that were not unit quaternions.
    pub(crate) non_unit: u64,
    /// The sender ends its frames with [`vmc::FRAME_ENDS`] (VMC).
    frame_marks: bool,
    /// Live Link Face subjects seen, in order: [`Decoded::Numbered`]'s part.
    subjects: Vec<Vec<u8>>,
    /// Address rows by key, and the key being looked up (no allocation
    /// per message once a row exists).
    index: std::collections::HashMap<String, usize>,
    scratch: String,
    /// Where the next bone and face value are looked for first.
    next_bone: usize,
    next_face: usize,
}

/// What one datagram decoded to, for the stream's counters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Decoded {
    /// A frame with a number on the sender's clock: `(fnum, clock
    /// seconds, part)`, where `part` tells apart the numbered sequences one
    /// sender may interleave (Live Link Face subjects: several phones through
    /// one relay), up to [`MAX_PARTS`] (the rest share the last).
    Numbered(u32, f64, usize),
    /// A frame or message without a sequence number.
    Frame,
    /// Decoded, but no frame (a mocopi skeleton or sensor packet).
    Other,
    /// It did not decode.
    Error,
}

impl Content {
    /// Takes in one datagram of `protocol`, arrived at `now`.
    pub(crate) fn take(&mut self, protocol: Protocol, payload: &[u8], now: Duration) -> Decoded {
        match protocol {
            Protocol::Mocopi => self.mocopi(payload),
            Protocol::LiveLink => self.livelink(payload),
            Protocol::IFacialMocap => self.ifm(payload),
            Protocol::Vmc | Protocol::Vrchat | Protocol::Vmt => self.osc(payload, now),
            _ => Decoded::Error,
        }
    }

    fn mocopi(&mut self, payload: &[u8]) -> Decoded {
        let Ok(packet) = smf::parse(payload) else {
            return Decoded::Error;
        };
        let Some(frame) = packet.frame() else {
            // The skeleton's rest pose until frames come.
            if let Some(sk) = packet.skeleton() {
                for b in sk.bones() {
                    self.mocopi_bone(b.id, b.rot, b.pos);
                }
            }
            return Decoded::Other;
        };
        for b in frame.bones() {
            self.mocopi_bone(b.id, b.rot, b.pos);
        }
        Decoded::Numbered(
            frame.fnum,
            frame.uttm.unwrap_or_else(|| f64::from(frame.time)),
            0,
        )
    }

    fn livelink(&mut self, payload: &[u8]) -> Decoded {
        let Ok(packet) = livelink::parse(payload) else {
            return Decoded::Error;
        };
        if let Some(face) = packet.face() {
            for (name, v) in face.blendshapes() {
                self.face_value(name, v);
            }
            for (what, a) in [
                ("head", face.head()),
                ("left eye", face.left_eye()),
                ("right eye", face.right_eye()),
            ] {
                if let Some(a) = a {
                    self.angle(what, [a.yaw, a.pitch, a.roll], "yaw/pitch/roll");
                }
            }
        }
        let clock = packet
            .time
            .seconds()
            .filter(|c| c.is_finite())
            .unwrap_or(0.0);
        let subject = packet.subject_bytes();
        let part = match self.subjects.iter().position(|s| s == subject) {
            Some(i) => i,
            None if self.subjects.len() < MAX_PARTS => {
                self.subjects.push(subject.to_vec());
                self.subjects.len() - 1
            }
            None => MAX_PARTS,
        };
        Decoded::Numbered(packet.time.frame.cast_unsigned(), clock, part)
    }

    fn ifm(&mut self, payload: &[u8]) -> Decoded {
        let Ok(frame) = ifm::parse(payload) else {
            return Decoded::Error;
        };
        for (name, v) in ifm::ARKIT.iter().zip(frame.blendshapes) {
            if let Some(v) = v {
                // Percent on the wire.
                #[expect(clippy::cast_precision_loss, reason = "percent values are small")]
                self.face_value(name, v as f32 / 100.0);
            }
        }
        if let Some(h) = frame.head {
            self.angle("head", h.rot, "deg");
        }
        if let Some(e) = frame.left_eye {
            self.angle("left eye", e, "deg");
        }
        if let Some(e) = frame.right_eye {
            self.angle("right eye", e, "deg");
        }
        Decoded::Frame
    }

    fn osc(&mut self, payload: &[u8], now: Duration) -> Decoded {
        // VMC's own decoder: bones of the usual canonical bundle without an
        // allocation (a flood is mostly bones), the rest through rosc.
        let Ok(elements) = vmc::decode_borrowed(payload) else {
            return Decoded::Error;
        };
        let mut ends = false;
        for e in elements {
            match e {
                vmc::Element::Bone { name, pos, rot } => {
                    let [px, py, pz] = pos;
                    let [qx, qy, qz, qw] = rot;
                    self.address(
                        "/VMC/Ext/Bone/Pos",
                        Some(name),
                        Last::Floats([px, py, pz, qx, qy, qz, qw]),
                        now,
                    );
                    self.bone(name, rot, pos);
                }
                vmc::Element::Other(Ok(m)) => {
                    let mut m = match m {
                        vmc::Message::Other(o) | vmc::Message::Thru(o) => o,
                        typed => typed.to_osc(),
                    };
                    ends |= vmc::FRAME_ENDS.contains(&m.address.as_str());
                    self.vmc(&m);
                    self.tracker(&m);
                    let args = std::mem::take(&mut m.args);
                    let (name, rest) = match args.split_first() {
                        Some((Arg::String(n), rest)) => (Some(n.as_str()), rest.to_vec()),
                        _ => (None, args.clone()),
                    };
                    self.address(&m.address, name, Last::Args(rest), now);
                }
                vmc::Element::Other(Err(_)) => {
                    self.address(
                        "(message that did not decode)",
                        None,
                        Last::Args(Vec::new()),
                        now,
                    );
                }
            }
        }
        // A VMC sender splits a frame over several datagrams and ends it
        // with OK and the time; other OSC has no frames: a datagram is one.
        self.frame_marks |= ends;
        if ends || !self.frame_marks {
            Decoded::Frame
        } else {
            Decoded::Other
        }
    }

    fn vmc(&mut self, m: &osc::Message) {
        let floats = |args: &[Arg]| -> Vec<f32> {
            args.iter()
                .filter_map(|a| match a {
                    Arg::Float(f) => Some(*f),
                    _ => None,
                })
                .collect()
        };
        match (m.address.as_str(), m.args.split_first()) {
            ("/VMC/Ext/Bone/Pos" | "/VMC/Ext/Root/Pos", Some((Arg::String(name), rest))) => {
                if let [px, py, pz, qx, qy, qz, qw, ..] = floats(rest)[..] {
                    self.bone(name, [qx, qy, qz, qw], [px, py, pz]);
                }
            }
            ("/VMC/Ext/Blend/Val", Some((Arg::String(name), [Arg::Float(v), ..]))) => {
                self.face_value(name, *v);
            }
            _ => {}
        }
    }

    fn tracker(&mut self, m: &osc::Message) {
        let floats: Vec<f32> = m
            .args
            .iter()
            .filter_map(|a| match a {
                Arg::Float(f) => Some(*f),
                _ => None,
            })
            .collect();
        if let Some(rest) = m.address.strip_prefix("/tracking/trackers/") {
            let Some((slot, what)) = rest.split_once('/') else {
                return;
            };
            let Some(&[x, y, z]) = floats.get(..3).and_then(|f| <&[f32; 3]>::try_from(f).ok())
            else {
                return;
            };
            let Some(s) = self.slot(slot) else { return };
            match what {
                "position" => s.pos = Some([x, y, z]),
                "rotation" => s.rot = Some([x, y, z]),
                _ => {}
            }
        } else if m.address.starts_with("/VMT/") {
            // Index, enable, time offset, then position (and rotation).
            let (Some(Arg::Int(index)), Some(&[x, y, z])) = (
                m.args.first(),
                floats.get(1..4).and_then(|f| <&[f32; 3]>::try_from(f).ok()),
            ) else {
                return;
            };
            let name = index.to_string();
            if let Some(s) = self.slot(&name) {
                s.pos = Some([x, y, z]);
            }
        }
    }

    fn slot(&mut self, name: &str) -> Option<&mut Slot> {
        let at = match self.slots.iter().position(|s| s.name == name) {
            Some(at) => at,
            None if self.slots.len() < MAX_ROWS => {
                self.slots.push(Slot {
                    name: name.to_owned(),
                    pos: None,
                    rot: None,
                });
                self.slots.len() - 1
            }
            None => {
                self.dropped += 1;
                return None;
            }
        };
        self.slots.get_mut(at)
    }

    fn address(&mut self, address: &str, name: Option<&str>, last: Last, now: Duration) {
        self.scratch.clear();
        self.scratch.push_str(address);
        if let Some(n) = name {
            self.scratch.push(' ');
            self.scratch.push_str(n);
        }
        let at = match self.index.get(self.scratch.as_str()) {
            Some(at) => *at,
            None if self.addresses.len() < MAX_ROWS => {
                self.addresses.push(Address {
                    key: self.scratch.clone(),
                    last: Last::Args(Vec::new()),
                    count: 0,
                    window: Window::new(ADDRESS_WINDOW),
                });
                self.index
                    .insert(self.scratch.clone(), self.addresses.len() - 1);
                self.addresses.len() - 1
            }
            None => {
                self.dropped += 1;
                return;
            }
        };
        if let Some(a) = self.addresses.get_mut(at) {
            a.count += 1;
            a.window.push(now, 0);
            a.last = last;
        }
    }

    /// A mocopi joint by its id: the table's name costs no allocation.
    fn mocopi_bone(&mut self, id: u16, rot: [f32; 4], pos: [f32; 3]) {
        match smf::bone_name(id) {
            Some(name) => self.bone(name, rot, pos),
            None => self.bone(&format!("bone {id}"), rot, pos),
        }
    }

    fn bone(&mut self, name: &str, rot: [f32; 4], pos: [f32; 3]) {
        if !is_unit(rot) {
            self.non_unit += 1;
        }
        // A sender names its bones in the same order every frame: the one
        // after the last is tried first, so a frame costs no search.
        let hint = self.next_bone;
        let at = match self.bones.get(hint) {
            Some(b) if b.name == name => Some(hint),
            _ => self.bones.iter().position(|b| b.name == name),
        };
        if let Some(b) = at.and_then(|i| self.bones.get_mut(i)) {
            b.rot = rot;
            b.pos = pos;
            self.next_bone = at.map_or(0, |i| i + 1);
        } else if self.bones.len() < MAX_ROWS {
            self.bones.push(Bone {
                name: name.to_owned(),
                rot,
                pos,
            });
            self.next_bone = self.bones.len();
        } else {
            self.dropped += 1;
        }
    }

    fn face_value(&mut self, name: &str, v: f32) {
        // In the order of the last frame, as for bones.
        let hint = self.next_face;
        let at = match self.face.get(hint) {
            Some(f) if f.0 == name => Some(hint),
            _ => self.face.iter().position(|f| f.0 == name),
        };
        if let Some(f) = at.and_then(|i| self.face.get_mut(i)) {
            f.1 = v;
            self.next_face = at.map_or(0, |i| i + 1);
        } else if self.face.len() < MAX_ROWS {
            self.face.push((name.to_owned(), v));
            self.next_face = self.face.len();
        } else {
            self.dropped += 1;
        }
    }

    fn angle(&mut self, what: &'static str, v: [f32; 3], unit: &'static str) {
        if let Some(a) = self.angles.iter_mut().find(|a| a.0 == what) {
            a.1 = v;
        } else {
            self.angles.push((what, v, unit));
        }
    }
}

fn norm(q: [f32; 4]) -> f64 {
    q.iter().map(|c| f64::from(*c).powi(2)).sum::<f64>().sqrt()
}

/// A NaN or infinite component is not a unit quaternion either.
fn is_unit(q: [f32; 4]) -> bool {
    (norm(q) - 1.0).abs() <= UNIT_TOLERANCE
}

fn arg_text(out: &mut String, arg: &Arg) {
    use std::fmt::Write as _;
    let _ = match arg {
        Arg::Int(i) => write!(out, "{i}"),
        Arg::Float(f) => write!(out, "{f:.3}"),
        Arg::String(s) => write!(out, "{s:?}"),
        Arg::Blob(b) => write!(out, "<{} bytes>", b.len()),
        Arg::Long(i) => write!(out, "{i}"),
        Arg::Double(f) => write!(out, "{f:.3}"),
        Arg::Bool(b) => write!(out, "{b}"),
        Arg::Nil => write!(out, "nil"),
        Arg::Inf => write!(out, "inf"),
        other => write!(out, "{other:?}"),
    };
}
