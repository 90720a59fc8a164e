//! The row of the registry a protocol module fills, and the vocabulary its
//! functions speak: how sure a sniff is, what a datagram means for the
//! stream's health, and the generic view a decode writes into.

use std::time::Duration;

use crate::bridge::{BodyOf, FacePose};
use crate::osc::Arg;

use super::{AnswerOf, Ask};

/// The longest [`Spec::label`]: mocap-top's narrowest protocol column.
pub const MAX_LABEL: usize = 8;

/// The face a datagram carries, if it decodes and has one.
pub type FaceOf = fn(&[u8]) -> Option<FacePose>;

/// What a protocol is and can do: one `SPEC` constant in its module.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// The name people know it by (`Live Link Face`).
    pub name: &'static str,
    /// A short lowercase name for keys and JSON fields (`livelink`); stable:
    /// it is a JSON value and a Zenoh key segment.
    pub key: &'static str,
    /// At most [`MAX_LABEL`] characters for narrow tables (`ifm`).
    pub label: &'static str,
    /// The UDP ports its receivers listen on by default.
    pub ports: &'static [u16],
    /// Whether a datagram has the protocol's shape: `Certain` when it
    /// decodes (or its framing adds up over the whole datagram), `Likely`
    /// when only its start does (a cut datagram). Never panics.
    pub sniff: fn(&[u8]) -> Option<Confidence>,
    /// Decodes a datagram into a [`View`] and returns its [`Stamp`].
    pub decode: fn(&[u8], &mut dyn View) -> Stamp,
    /// The [`Stamp`] alone, as [`Spec::decode`] gives it, without walking
    /// what only a view needs (bones, values): what stream health costs.
    pub stamp: fn(&[u8]) -> Stamp,
    /// The face a datagram carries, for the face bridges; `None` for
    /// protocols without faces.
    pub face: Option<FaceOf>,
    /// Its body frames as humanoid poses, for the body bridges and
    /// pictures: a reader per sender, since a protocol may spread what a
    /// frame needs over datagrams (mocopi's skeleton, VMC's bundles);
    /// `None` for protocols without bodies.
    pub body: Option<BodyOf>,
    /// What a stream of it mostly carries (the drill-down view to open).
    pub carries: Carries,
    /// How a receiver asks the sender to stream (`mocap-dump --ask`);
    /// `None` for protocols that send unasked.
    pub ask: Option<Ask>,
    /// How a receiver stands in for the program a sender streams to (it
    /// answers a handshake and keeps the sender streaming), for
    /// `mocap-dump --answer`; `None` for protocols that need no answer.
    pub answer: Option<AnswerOf>,
    /// How a looped replay carries its frame numbers on
    /// ([`crate::pcap::Renumber`]); `None` for protocols without them.
    pub renumber: Option<Renumbering>,
    /// The command that reads it, with its flags (`vmc-relay --dump`).
    pub tool: &'static str,
    /// Its Wireshark dissector (`tools/wireshark/<name>.lua`), if any.
    pub dissector: Option<&'static str>,
}

/// How a looped replay reads and rewrites a protocol's frame numbers and
/// clocks ([`crate::pcap::Renumber`] does the arithmetic).
#[derive(Clone, Copy, Debug)]
pub struct Renumbering {
    /// The numbers of a datagram that has them.
    pub read: fn(&[u8]) -> Option<Numbers>,
    /// Writes `datagram` again with `numbers` into `out`; `false` (and
    /// `out` untouched) when the protocol's encoder would not give back the
    /// captured bytes (unknown chunks, text that is not UTF-8), so nothing
    /// the capture held is lost. `scratch` is for that check.
    pub write:
        fn(datagram: &[u8], numbers: &Numbers, out: &mut Vec<u8>, scratch: &mut Vec<u8>) -> bool,
}

/// Whether `emit` (a `Repr` parsed from `datagram`) writes the captured
/// bytes back exactly: the condition of every [`Renumbering::write`], so
/// nothing the capture held is lost by a rewrite.
pub(crate) fn writes_back(
    datagram: &[u8],
    scratch: &mut Vec<u8>,
    emit: impl FnOnce(&mut Vec<u8>),
) -> bool {
    scratch.clear();
    emit(scratch);
    scratch.as_slice() == datagram
}

/// A datagram's frame number, its sequence, and the sender clocks (in
/// seconds, as on the wire) a new pass moves on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Numbers {
    /// The frame number.
    pub frame: u32,
    /// Which of a sender's sequences ([`Stamp::Numbered`]'s part).
    pub part: u64,
    /// Up to two clocks (mocopi's `time` and `uttm`); `None` where absent.
    pub clocks: [Option<f64>; 2],
}

/// How sure a sniff is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    /// The start has the protocol's shape, the rest was not checked or does
    /// not add up (a cut or damaged datagram of it, perhaps).
    Likely,
    /// The framing adds up over the whole datagram.
    Certain,
}

/// What a stream of a protocol mostly carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carries {
    /// A body: bones with rotations and positions.
    Body,
    /// A face: blendshape values and head/eye angles.
    Face,
    /// Tracker slots (VRChat's OSC trackers, VMT).
    Trackers,
}

/// What one datagram means for its stream's health.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stamp {
    /// A frame numbered by its sender.
    Numbered {
        /// The sender's frame number.
        frame: u32,
        /// The sender's clock, when it sent one that is a time (finite, not
        /// negative).
        clock: Option<Duration>,
        /// Which of the numbered sequences one sender interleaves this frame
        /// belongs to (Live Link Face subjects: several phones through one
        /// relay), as a hash of what tells them apart ([`part_of`]); 0 for
        /// protocols with one sequence per sender.
        part: u64,
    },
    /// A frame without a number that carries its sender's clock (VTube
    /// Studio's `Timestamp`, OpenSeeFace's time): its health comes from the
    /// clock alone ([`crate::health::Health::clocked`]).
    Clocked {
        /// The sender's clock.
        clock: Duration,
        /// Which of one sender's streams (OpenSeeFace's face id), as
        /// [`Stamp::Numbered`]'s `part`; 0 for one stream per sender.
        part: u64,
    },
    /// A datagram without a frame number. `ends_frame` when it carries the
    /// protocol's end-of-frame mark (VMC's `/VMC/Ext/OK` and time): a sender
    /// that marks its frames sends several datagrams per frame; one that
    /// never does sends a frame per datagram.
    Unnumbered {
        /// The datagram ends a frame.
        ends_frame: bool,
    },
    /// A description of the body, not a frame (mocopi's skeleton).
    Skeleton,
    /// Device data, not a frame (mocopi's sensor packets).
    Sensor,
    /// The sender's handshake: a new session whose frame numbers start
    /// again (a SlimeVR tracker counts from 0 after power-on). Neither a
    /// frame nor a restart: the next frame is the session's first.
    Handshake,
    /// It did not decode.
    Error,
}

/// The value of [`Stamp::Numbered`]'s `part` for a sequence told apart by
/// `fields`: a hash over each (its length first), eight bytes at a step
/// since it runs on every Live Link datagram. Stable across runs and
/// builds, so it can name a sequence in a test or a log.
#[must_use]
pub fn part_of(fields: &[&[u8]]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |word: u64| h = (h ^ word).wrapping_mul(K).rotate_left(29);
    for field in fields {
        mix(field.len() as u64);
        let mut words = field.chunks_exact(8);
        for w in &mut words {
            mix(u64::from_le_bytes(w.try_into().unwrap_or_default()));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            let mut b = [0; 8];
            b.iter_mut().zip(tail).for_each(|(d, s)| *d = *s);
            mix(u64::from_le_bytes(b));
        }
    }
    h
}

/// The arguments of one message, as [`View::message`] gets them.
#[derive(Clone, Copy, Debug)]
pub enum Args<'a> {
    /// A bone's position and rotation (VMC's `/VMC/Ext/Bone/Pos`, decoded
    /// without building the message).
    Bone {
        /// Local position.
        pos: [f32; 3],
        /// Local rotation `[x, y, z, w]`.
        rot: [f32; 4],
    },
    /// The arguments after the name, as sent.
    Osc(&'a [Arg]),
    /// The message did not decode.
    Undecoded,
}

/// Where a decode writes what a datagram carries, by meaning: what a live
/// view's drill-down and a generic dump show. Every method has an empty
/// default: a view takes what it shows.
pub trait View {
    /// One bone: its name as sent, rotation `[x, y, z, w]`, position.
    fn bone(&mut self, name: &str, rot: [f32; 4], pos: [f32; 3]) {
        let _ = (name, rot, pos);
    }

    /// One face value, nominally 0 to 1 (blendshapes).
    fn face(&mut self, name: &str, value: f32) {
        let _ = (name, value);
    }

    /// Head or eye angles: `what` (`head`, `left eye`), three values and
    /// their meaning (`deg`, `yaw/pitch/roll`).
    fn angle(&mut self, what: &'static str, angles: [f32; 3], unit: &'static str) {
        let _ = (what, angles, unit);
    }

    /// A tracker slot's position or rotation (as sent: VRChat's rotation is
    /// Euler degrees); `None` for what this message did not carry.
    fn slot(&mut self, name: &str, pos: Option<[f32; 3]>, rot: Option<[f32; 3]>) {
        let _ = (name, pos, rot);
    }

    /// One message of an addressed protocol (OSC): its address, its first
    /// string argument when it names something (a bone, a blendshape), and
    /// the rest.
    fn message(&mut self, address: &str, name: Option<&str>, args: Args<'_>) {
        let _ = (address, name, args);
    }

    /// A fact about the sending device, newest value per `what` (a stable
    /// snake_case key with its unit: `battery_level`, `rssi_dbm`,
    /// `firmware`): what a live view shows beside the stream's health.
    fn device(&mut self, what: &'static str, value: Fact<'_>) {
        let _ = (what, value);
    }

    /// What follows, up to the next call, belongs to the member `name` of
    /// the frame (a Rokoko actor): several performers in one sender's
    /// frames, each a row of their own in a live view.
    fn member(&mut self, name: &str) {
        let _ = name;
    }
}

/// The value of a [`View::device`] fact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fact<'a> {
    /// A number, as sent.
    Number(f64),
    /// A name or version, as sent.
    Text(&'a str),
}

/// A view that keeps nothing: for the [`Stamp`] alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoView;

impl View for NoView {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_told_apart_by_every_field() {
        let a = part_of(&[b"iPhone", b"Face"]);
        assert_eq!(a, part_of(&[b"iPhone", b"Face"]));
        assert_ne!(a, part_of(&[b"iPhone", b"Face2"]));
        // The length goes first: moving a byte between fields changes it.
        assert_ne!(a, part_of(&[b"iPhon", b"eFace"]));
        assert_ne!(part_of(&[]), part_of(&[b""]));
    }
}
