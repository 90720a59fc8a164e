//! What a stream carries, newest value per name, for the drill-down views:
//! bones (mocopi, VMC), face values (iFacialMocap, Live Link Face, VMC
//! blendshapes) with head and eye angles, one row per OSC address and name
//! (VMC, VRChat, VMT; VMCProtocolMonitor's list), tracker slots (VRChat,
//! VMT), and the newest body frame for the stick figure (protocols whose
//! registry row gives bodies), the device's facts (a tracker's battery and
//! signal) and the members of its frames (Rokoko actors). Every list is
//! bounded: names past the bound are counted, not kept.

use std::time::Duration;

use mocap_core::bridge::{BodyOf, BodyPose, BodyReader};
use mocap_core::osc::Arg;
use mocap_core::protocol::{Args, Fact, Protocol, Stamp, View};
use mocap_core::vmc;

use crate::window::{History, Window};

/// Most rows one list keeps (a VMC sender has ~55 bones, ~60 blendshapes).
pub(crate) const MAX_ROWS: usize = 256;
/// Numbered sequences told apart in one stream (Live Link Face subjects).
pub(crate) const MAX_PARTS: usize = 16;
/// Arrivals an address row remembers for its rate.
const ADDRESS_WINDOW: usize = 256;
/// Longest value text kept for an address row.
const MAX_VALUE_TEXT: usize = 96;
/// Updates a tracker slot remembers for its rate.
const SLOT_WINDOW: usize = 1024;
/// Device facts kept (their keys are the protocol modules' constants).
const MAX_FACTS: usize = 32;
/// Longest text fact kept.
const MAX_FACT_TEXT: usize = 64;

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
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) pos: Option<[f32; 3]>,
    pub(crate) rot: Option<[f32; 3]>,
    /// Its updates (a SlimeVR sensor's rotations), for its rate.
    window: Window,
}

impl Slot {
    /// Updates per second over the last second.
    pub(crate) fn rate(&self, now: Duration) -> f64 {
        self.window.rate(now)
    }
}

/// A device fact's newest value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FactValue {
    Number(f64),
    Text(String),
}

impl serde::Serialize for FactValue {
    /// Whole numbers (a build, dBm) as integers, the rest as sent.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2⁵³
        match self {
            #[expect(clippy::cast_possible_truncation, reason = "whole and within 2⁵³")]
            Self::Number(n) if n.fract() == 0.0 && n.abs() < EXACT => s.serialize_i64(*n as i64),
            Self::Number(n) => s.serialize_f64(*n),
            Self::Text(t) => s.serialize_str(t),
        }
    }
}

/// A member of a stream's frames (a Rokoko actor): its name, and the
/// frames it was in.
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) name: String,
    pub(crate) frames: u64,
    pub(crate) last: Duration,
    pub(crate) window: Window,
    pub(crate) history: History,
}

/// A body stream's newest whole frame, from its protocol's reader (one per
/// stream: it keeps what the protocol spreads over datagrams).
pub(crate) struct Body {
    reader: Box<dyn BodyReader>,
    make: BodyOf,
    pub(crate) pose: Option<BodyPose>,
}

impl Body {
    fn new(make: BodyOf) -> Self {
        Self {
            reader: make(),
            make,
            pose: None,
        }
    }
}

impl Clone for Body {
    /// The pose; a fresh reader (a paused screen's copy is drawn, never fed).
    fn clone(&self) -> Self {
        Self {
            reader: (self.make)(),
            make: self.make,
            pose: self.pose.clone(),
        }
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Body").field("pose", &self.pose).finish()
    }
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
    /// The newest body frame (protocols with bodies).
    pub(crate) body: Option<Body>,
    /// The device's facts, newest value each, in the order first seen.
    pub(crate) device: Vec<(&'static str, FactValue)>,
    /// The members of its frames, in the order first seen (up to
    /// [`MAX_PARTS`]).
    pub(crate) members: Vec<Member>,
    /// Names left out because a list was full.
    pub(crate) dropped: u64,
    /// Bone rotations received that were not unit quaternions.
    pub(crate) non_unit: u64,
    /// Numbered sequences seen, in order ([`Stamp::Numbered`]'s part).
    parts: Vec<u64>,
    /// Address rows by key, and the key being looked up (no allocation
    /// per message once a row exists).
    index: std::collections::HashMap<String, usize>,
    scratch: String,
    /// Where the next bone and face value are looked for first.
    next_bone: usize,
    next_face: usize,
}

impl Content {
    /// Takes in one datagram of `protocol`, arrived at `now`: the registry's
    /// decode writes into this content; its stamp is the stream's.
    pub(crate) fn take(&mut self, protocol: Protocol, payload: &[u8], now: Duration) -> Stamp {
        if let Some(make) = protocol.spec().body {
            let body = self.body.get_or_insert_with(|| Body::new(make));
            if let Some(pose) = body.reader.datagram(payload) {
                body.pose = Some(pose);
            }
        }
        protocol.decode(payload, &mut Taking { content: self, now })
    }

    /// The newest body frame, once one has come.
    pub(crate) fn pose(&self) -> Option<&BodyPose> {
        self.body.as_ref().and_then(|b| b.pose.as_ref())
    }

    /// The index of a numbered sequence's `part` (Live Link Face subjects)
    /// in the order seen, up to [`MAX_PARTS`]; the rest share the last.
    pub(crate) fn part_index(&mut self, part: u64) -> usize {
        match self.parts.iter().position(|p| *p == part) {
            Some(i) => i,
            None if self.parts.len() < MAX_PARTS => {
                self.parts.push(part);
                self.parts.len() - 1
            }
            None => MAX_PARTS,
        }
    }

    fn fact(&mut self, what: &'static str, value: Fact<'_>) {
        let value = match value {
            Fact::Number(n) => FactValue::Number(n),
            Fact::Text(t) => FactValue::Text(cut(t, MAX_FACT_TEXT).to_owned()),
        };
        if let Some(f) = self.device.iter_mut().find(|f| f.0 == what) {
            f.1 = value;
        } else if self.device.len() < MAX_FACTS {
            self.device.push((what, value));
        } else {
            self.dropped += 1;
        }
    }

    fn member(&mut self, name: &str, now: Duration) {
        let at = match self.members.iter().position(|m| m.name == name) {
            Some(at) => at,
            None if self.members.len() < MAX_PARTS => {
                self.members.push(Member {
                    name: cut(name, MAX_FACT_TEXT).to_owned(),
                    frames: 0,
                    last: now,
                    window: Window::new(ADDRESS_WINDOW),
                    history: History::default(),
                });
                self.members.len() - 1
            }
            None => {
                self.dropped += 1;
                return;
            }
        };
        if let Some(m) = self.members.get_mut(at) {
            m.frames += 1;
            m.last = now.max(m.last);
            m.window.push(now, 0);
            m.history.push(now);
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
                    window: Window::new(SLOT_WINDOW),
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

/// The registry's decode writing into one stream's content.
struct Taking<'a> {
    content: &'a mut Content,
    now: Duration,
}

impl View for Taking<'_> {
    fn bone(&mut self, name: &str, rot: [f32; 4], pos: [f32; 3]) {
        self.content.bone(name, rot, pos);
    }

    fn face(&mut self, name: &str, value: f32) {
        self.content.face_value(name, value);
    }

    fn angle(&mut self, what: &'static str, angles: [f32; 3], unit: &'static str) {
        self.content.angle(what, angles, unit);
    }

    fn slot(&mut self, name: &str, pos: Option<[f32; 3]>, rot: Option<[f32; 3]>) {
        let now = self.now;
        if let Some(s) = self.content.slot(name) {
            s.pos = pos.or(s.pos);
            s.rot = rot.or(s.rot);
            s.window.push(now, 0);
        }
    }

    fn device(&mut self, what: &'static str, value: Fact<'_>) {
        self.content.fact(what, value);
    }

    fn member(&mut self, name: &str) {
        self.content.member(name, self.now);
    }

    fn message(&mut self, address: &str, name: Option<&str>, args: Args<'_>) {
        let last = match args {
            Args::Bone {
                pos: [px, py, pz],
                rot: [qx, qy, qz, qw],
            } => Last::Floats([px, py, pz, qx, qy, qz, qw]),
            Args::Osc(args) => Last::Args(args.to_vec()),
            Args::Undecoded => Last::Args(Vec::new()),
        };
        self.content.address(address, name, last, self.now);
    }
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or_default()
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
