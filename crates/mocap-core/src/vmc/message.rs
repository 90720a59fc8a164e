//! Typed VMC messages over OSC messages.

use std::fmt;

use crate::osc::{Arg, Message as Osc};

/// A tracked device's kind (`/VMC/Ext/{Hmd,Con,Tra}/Pos`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// Head-mounted display.
    Hmd,
    /// Controller.
    Con,
    /// Tracker.
    Tra,
}

/// A VMC message. Positions are `[x, y, z]` metres and rotations
/// `[x, y, z, w]`, in Unity's left-handed frame, as on the wire.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// `/VMC/Ext/Root/Pos`: 8 arguments, or 14 with MR scale and offset.
    RootPos {
        /// Always "root" in practice.
        name: String,
        /// Position.
        pos: [f32; 3],
        /// Rotation.
        rot: [f32; 4],
        /// MR scale and offset (V2.1).
        mr: Option<([f32; 3], [f32; 3])>,
    },
    /// `/VMC/Ext/Bone/Pos`: a HumanBodyBones name and a local pose.
    BonePos {
        /// HumanBodyBones name.
        name: String,
        /// Local position.
        pos: [f32; 3],
        /// Local rotation.
        rot: [f32; 4],
    },
    /// `/VMC/Ext/Blend/Val`: staged until Apply.
    BlendVal {
        /// Expression name.
        name: String,
        /// Weight.
        value: f32,
    },
    /// `/VMC/Ext/Blend/Apply`.
    BlendApply,
    /// `/VMC/Ext/OK` with 1, 3 or 4 ints.
    Available {
        /// 1 when a model is loaded.
        loaded: i32,
        /// Calibration state and mode (V2.5).
        calibration: Option<(i32, i32)>,
        /// Tracking status (V2.7).
        tracking: Option<i32>,
    },
    /// `/VMC/Ext/T`: the sender's time in seconds.
    Time(f32),
    /// `/VMC/Ext/Cam`: camera pose and field of view.
    Camera {
        /// Name.
        name: String,
        /// Position.
        pos: [f32; 3],
        /// Rotation.
        rot: [f32; 4],
        /// Field of view, degrees.
        fov: f32,
    },
    /// `/VMC/Ext/{Hmd,Con,Tra}/Pos` and their `/Local` forms.
    DevicePos {
        /// Which kind.
        device: Device,
        /// The `/Local` (raw, unscaled) form.
        local: bool,
        /// OpenVR serial.
        serial: String,
        /// Position.
        pos: [f32; 3],
        /// Rotation.
        rot: [f32; 4],
    },
    /// `/VMC/Ext/Con`: controller input.
    Controller {
        /// 1 press, 0 release, 2 axis change.
        active: i32,
        /// Button name.
        name: String,
        /// Left-hand controller.
        is_left: i32,
        /// Touch rather than press.
        is_touch: i32,
        /// Axis input.
        is_axis: i32,
        /// Axis values.
        axis: [f32; 3],
    },
    /// `/VMC/Ext/Key`: keyboard event.
    Key {
        /// 1 press, 0 release.
        active: i32,
        /// Key name.
        name: String,
        /// Key code.
        keycode: i32,
    },
    /// `/VMC/Ext/Midi/Note`.
    MidiNote {
        /// 1 on, 0 off.
        active: i32,
        /// Channel.
        channel: i32,
        /// Note number.
        note: i32,
        /// Velocity.
        velocity: f32,
    },
    /// `/VMC/Ext/Midi/CC/Val`.
    MidiCcValue {
        /// Knob number.
        knob: i32,
        /// Value.
        value: f32,
    },
    /// `/VMC/Ext/Midi/CC/Bit`.
    MidiCcBit {
        /// Knob number.
        knob: i32,
        /// 1 on, 0 off.
        active: i32,
    },
    /// `/VMC/Ext/Rcv`: the sender's own receiver (V2.7 adds its address).
    Receiver {
        /// 1 when on.
        enable: i32,
        /// Its port.
        port: i32,
        /// Its address (V2.7).
        ip: Option<String>,
    },
    /// `/VMC/Ext/Light`: directional light.
    Light {
        /// Name.
        name: String,
        /// Position.
        pos: [f32; 3],
        /// Rotation.
        rot: [f32; 4],
        /// Colour r, g, b, a.
        color: [f32; 4],
    },
    /// `/VMC/Ext/VRM`: the loaded model file (V2.7 adds its hash).
    Vrm {
        /// Path on the sender's machine.
        path: String,
        /// Title.
        title: String,
        /// SHA-256 (V2.7).
        hash: Option<String>,
    },
    /// `/VMC/Ext/Remote`: a model from an online service.
    Remote {
        /// Service name (lowercase).
        service: String,
        /// Service-specific JSON.
        json: String,
    },
    /// `/VMC/Ext/Opt`: free-form option string.
    Opt(String),
    /// `/VMC/Ext/Config`: the settings file in use.
    Config(String),
    /// `/VMC/Ext/Setting/Color`: background colour r, g, b, a.
    SettingColor([f32; 4]),
    /// `/VMC/Ext/Setting/Win`: top-most, transparent, click-through, hide-border.
    SettingWindow([i32; 4]),
    /// `/VMC/Ext/Set/Period`: send every N frames, per group (status, root,
    /// bone, blendshape, camera, devices); 0 disables.
    SetPeriod([i32; 6]),
    /// `/VMC/Ext/Set/Eye`: gaze target.
    SetEye {
        /// 1 to enable.
        enable: i32,
        /// Target position.
        pos: [f32; 3],
    },
    /// `/VMC/Ext/Set/Req`: asks for the low-rate information now.
    SetRequest,
    /// `/VMC/Ext/Set/Res`: a script's response.
    SetResponse(String),
    /// `/VMC/Ext/Set/Calib/Ready`.
    SetCalibReady,
    /// `/VMC/Ext/Set/Calib/Exec`: 0 normal, 1 MR, 2 MR floor.
    SetCalibExec(i32),
    /// `/VMC/Ext/Set/Config`: load a settings file.
    SetConfig(String),
    /// `/VMC/Ext/Set/Shortcut`: run a shortcut, e.g. `Functions.FreeCamera`.
    SetShortcut(String),
    /// `/VMC/Thru/…`: forwarded untouched.
    Thru(Osc),
    /// Any other address, kept as it came (re-encodes to the same bytes).
    Other(Osc),
}

/// A known address whose arguments do not fit: what, at which argument of
/// which address, and the type tags expected and received.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Error {
    /// What is wrong.
    pub kind: ErrorKind,
    /// The address.
    pub address: String,
    /// Index (from 0) of the first argument that does not fit.
    pub argument: usize,
    /// What the address takes, as OSC type tags (e.g. `sfffffff`).
    pub expected: &'static str,
    /// What came, as type tags.
    pub got: String,
}

/// The reasons a known address's arguments are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Fewer arguments than the address takes.
    Missing,
    /// An argument of another type than the address takes there.
    Mistyped,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Missing => "missing",
            ErrorKind::Mistyped => "mistyped",
        };
        write!(
            f,
            "{}: expected arguments {}, got {} ({what} argument {})",
            self.address,
            self.expected,
            if self.got.is_empty() {
                "none"
            } else {
                &self.got
            },
            self.argument
        )
    }
}

impl std::error::Error for Error {}

/// The OSC type tag of an argument.
pub fn tag(a: &Arg) -> char {
    match a {
        Arg::Int(_) => 'i',
        Arg::Float(_) => 'f',
        Arg::String(_) => 's',
        Arg::Blob(_) => 'b',
        Arg::Long(_) => 'h',
        Arg::Double(_) => 'd',
        Arg::Bool(true) => 'T',
        Arg::Bool(false) => 'F',
        Arg::Nil => 'N',
        Arg::Inf => 'I',
        Arg::Time(..) => 't',
        Arg::Char(_) => 'c',
        Arg::Color(_) => 'r',
        Arg::Midi(_) => 'm',
        Arg::Array(_) => '[',
    }
}

/// Address, type tags, the message with its values still to be filled.
type Entry = (&'static str, &'static str, fn() -> Message);

/// Each typed address once: its address, its arguments as type tags
/// (`[…]` optional, as later protocol versions added them) and the message
/// it reads into, with the values still to be filled. [`Message::args`]
/// says the order of the values; reading and writing both follow it.
/// Bone/Pos comes first: it is most of the traffic.
const TABLE: &[Entry] = &[
    ("/VMC/Ext/Bone/Pos", "sfffffff", || Message::BonePos {
        name: String::new(),
        pos: [0.0; 3],
        rot: [0.0; 4],
    }),
    ("/VMC/Ext/Blend/Val", "sf", || Message::BlendVal {
        name: String::new(),
        value: 0.0,
    }),
    ("/VMC/Ext/Root/Pos", "sfffffff[ffffff]", || {
        Message::RootPos {
            name: String::new(),
            pos: [0.0; 3],
            rot: [0.0; 4],
            mr: None,
        }
    }),
    ("/VMC/Ext/Blend/Apply", "", || Message::BlendApply),
    ("/VMC/Ext/OK", "i[ii[i]]", || Message::Available {
        loaded: 0,
        calibration: None,
        tracking: None,
    }),
    ("/VMC/Ext/T", "f", || Message::Time(0.0)),
    ("/VMC/Ext/Cam", "sffffffff", || Message::Camera {
        name: String::new(),
        pos: [0.0; 3],
        rot: [0.0; 4],
        fov: 0.0,
    }),
    ("/VMC/Ext/Hmd/Pos", "sfffffff", || {
        device(Device::Hmd, false)
    }),
    ("/VMC/Ext/Con/Pos", "sfffffff", || {
        device(Device::Con, false)
    }),
    ("/VMC/Ext/Tra/Pos", "sfffffff", || {
        device(Device::Tra, false)
    }),
    ("/VMC/Ext/Hmd/Pos/Local", "sfffffff", || {
        device(Device::Hmd, true)
    }),
    ("/VMC/Ext/Con/Pos/Local", "sfffffff", || {
        device(Device::Con, true)
    }),
    ("/VMC/Ext/Tra/Pos/Local", "sfffffff", || {
        device(Device::Tra, true)
    }),
    ("/VMC/Ext/Con", "isiiifff", || Message::Controller {
        active: 0,
        name: String::new(),
        is_left: 0,
        is_touch: 0,
        is_axis: 0,
        axis: [0.0; 3],
    }),
    ("/VMC/Ext/Key", "isi", || Message::Key {
        active: 0,
        name: String::new(),
        keycode: 0,
    }),
    ("/VMC/Ext/Midi/Note", "iiif", || Message::MidiNote {
        active: 0,
        channel: 0,
        note: 0,
        velocity: 0.0,
    }),
    ("/VMC/Ext/Midi/CC/Val", "if", || Message::MidiCcValue {
        knob: 0,
        value: 0.0,
    }),
    ("/VMC/Ext/Midi/CC/Bit", "ii", || Message::MidiCcBit {
        knob: 0,
        active: 0,
    }),
    ("/VMC/Ext/Rcv", "ii[s]", || Message::Receiver {
        enable: 0,
        port: 0,
        ip: None,
    }),
    ("/VMC/Ext/Light", "sfffffffffff", || Message::Light {
        name: String::new(),
        pos: [0.0; 3],
        rot: [0.0; 4],
        color: [0.0; 4],
    }),
    ("/VMC/Ext/VRM", "ss[s]", || Message::Vrm {
        path: String::new(),
        title: String::new(),
        hash: None,
    }),
    ("/VMC/Ext/Remote", "ss", || Message::Remote {
        service: String::new(),
        json: String::new(),
    }),
    ("/VMC/Ext/Opt", "s", || Message::Opt(String::new())),
    ("/VMC/Ext/Config", "s", || Message::Config(String::new())),
    ("/VMC/Ext/Setting/Color", "ffff", || {
        Message::SettingColor([0.0; 4])
    }),
    ("/VMC/Ext/Setting/Win", "iiii", || {
        Message::SettingWindow([0; 4])
    }),
    ("/VMC/Ext/Set/Period", "iiiiii", || {
        Message::SetPeriod([0; 6])
    }),
    ("/VMC/Ext/Set/Eye", "ifff", || Message::SetEye {
        enable: 0,
        pos: [0.0; 3],
    }),
    ("/VMC/Ext/Set/Req", "", || Message::SetRequest),
    ("/VMC/Ext/Set/Res", "s", || {
        Message::SetResponse(String::new())
    }),
    ("/VMC/Ext/Set/Calib/Ready", "", || Message::SetCalibReady),
    ("/VMC/Ext/Set/Calib/Exec", "i", || Message::SetCalibExec(0)),
    ("/VMC/Ext/Set/Config", "s", || {
        Message::SetConfig(String::new())
    }),
    ("/VMC/Ext/Set/Shortcut", "s", || {
        Message::SetShortcut(String::new())
    }),
];

fn device(device: Device, local: bool) -> Message {
    Message::DevicePos {
        device,
        local,
        serial: String::new(),
        pos: [0.0; 3],
        rot: [0.0; 4],
    }
}

/// One direction over a message's arguments, in wire order: [`Reader`]
/// fills the values from an OSC message, [`Writer`] moves them into one.
trait Args {
    fn s(&mut self, v: &mut String) -> Result<(), Error>;
    fn f(&mut self, v: &mut f32) -> Result<(), Error>;
    fn i(&mut self, v: &mut i32) -> Result<(), Error>;
    /// An optional trailing group of arguments of these type tags (a later
    /// protocol version's addition): read when all of them came, written
    /// when present.
    fn opt<T: Default>(
        &mut self,
        v: &mut Option<T>,
        tags: &str,
        fill: impl FnOnce(&mut Self, &mut T) -> Result<(), Error>,
    ) -> Result<(), Error>;

    fn fs(&mut self, v: &mut [f32]) -> Result<(), Error> {
        v.iter_mut().try_for_each(|x| self.f(x))
    }
    fn is(&mut self, v: &mut [i32]) -> Result<(), Error> {
        v.iter_mut().try_for_each(|x| self.i(x))
    }
}

/// Reads arguments in order; extra arguments are ignored, as the spec says.
struct Reader<'a> {
    m: &'a Osc,
    i: usize,
    expected: &'static str,
}

impl<'a> Reader<'a> {
    /// The error for the argument [`Self::take`] just took.
    fn err(&self) -> Error {
        let argument = self.i.saturating_sub(1);
        Error {
            kind: if argument < self.m.args.len() {
                ErrorKind::Mistyped
            } else {
                ErrorKind::Missing
            },
            address: self.m.address.clone(),
            argument,
            expected: self.expected,
            got: self.m.args.iter().map(tag).collect(),
        }
    }
    fn take(&mut self) -> Option<&'a Arg> {
        let a = self.m.args.get(self.i);
        self.i += 1;
        a
    }
}

impl Args for Reader<'_> {
    fn s(&mut self, v: &mut String) -> Result<(), Error> {
        match self.take() {
            Some(Arg::String(s)) => s.clone_into(v),
            _ => return Err(self.err()),
        }
        Ok(())
    }
    fn f(&mut self, v: &mut f32) -> Result<(), Error> {
        match self.take() {
            Some(Arg::Float(x)) => *v = *x,
            _ => return Err(self.err()),
        }
        Ok(())
    }
    fn i(&mut self, v: &mut i32) -> Result<(), Error> {
        match self.take() {
            Some(Arg::Int(x)) => *v = *x,
            _ => return Err(self.err()),
        }
        Ok(())
    }
    fn opt<T: Default>(
        &mut self,
        v: &mut Option<T>,
        tags: &str,
        fill: impl FnOnce(&mut Self, &mut T) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let follows = self
            .m
            .args
            .get(self.i..self.i + tags.len())
            .is_some_and(|a| a.iter().map(tag).eq(tags.chars()));
        if follows {
            fill(self, v.insert(T::default()))?;
        } else {
            *v = None;
        }
        Ok(())
    }
}

/// Moves the values into OSC arguments.
struct Writer(Vec<Arg>);

impl Args for Writer {
    fn s(&mut self, v: &mut String) -> Result<(), Error> {
        self.0.push(Arg::String(std::mem::take(v)));
        Ok(())
    }
    fn f(&mut self, v: &mut f32) -> Result<(), Error> {
        self.0.push(Arg::Float(*v));
        Ok(())
    }
    fn i(&mut self, v: &mut i32) -> Result<(), Error> {
        self.0.push(Arg::Int(*v));
        Ok(())
    }
    fn opt<T: Default>(
        &mut self,
        v: &mut Option<T>,
        _tags: &str,
        fill: impl FnOnce(&mut Self, &mut T) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match v {
            Some(x) => fill(self, x),
            None => Ok(()),
        }
    }
}

impl Message {
    /// Types an OSC message. Unknown addresses become [`Message::Other`].
    ///
    /// # Errors
    /// [`Error`] when a known address has too few or mistyped arguments.
    pub fn from_osc(m: &Osc) -> Result<Self, Error> {
        let Some((_, expected, blank)) = TABLE.iter().find(|(a, ..)| *a == m.address) else {
            return Ok(if m.address.starts_with("/VMC/Thru/") {
                Self::Thru(m.clone())
            } else {
                Self::Other(m.clone())
            });
        };
        let mut msg = blank();
        msg.args(&mut Reader { m, i: 0, expected })?;
        Ok(msg)
    }

    /// The OSC message for this VMC message.
    pub fn to_osc(&self) -> Osc {
        match self {
            Self::Thru(m) | Self::Other(m) => m.clone(),
            _ => self.clone().into_osc(),
        }
    }

    /// The OSC message for this VMC message, its strings moved, not copied.
    pub fn into_osc(mut self) -> Osc {
        let address = match self {
            Self::Thru(m) | Self::Other(m) => return m,
            _ => self.address(),
        };
        let mut w = Writer(Vec::new());
        // The writer refuses nothing.
        let _ = self.args(&mut w);
        Osc::new(address, w.0)
    }

    /// The address of a typed message (`Thru` and `Other` keep their own).
    fn address(&self) -> &'static str {
        let same = |m: &Self| match (self, m) {
            (
                Self::DevicePos { device, local, .. },
                Self::DevicePos {
                    device: d,
                    local: l,
                    ..
                },
            ) => device == d && local == l,
            _ => std::mem::discriminant(self) == std::mem::discriminant(m),
        };
        TABLE
            .iter()
            .find(|(_, _, blank)| same(&blank()))
            .map_or("", |(address, ..)| address)
    }

    /// Each typed message's values in wire order, for reading or writing.
    fn args(&mut self, a: &mut impl Args) -> Result<(), Error> {
        match self {
            Self::RootPos { name, pos, rot, mr } => {
                a.s(name)?;
                a.fs(pos)?;
                a.fs(rot)?;
                a.opt(mr, "ffffff", |a, (scale, offset)| {
                    a.fs(scale)?;
                    a.fs(offset)
                })
            }
            Self::BonePos { name, pos, rot }
            | Self::DevicePos {
                serial: name,
                pos,
                rot,
                ..
            } => {
                a.s(name)?;
                a.fs(pos)?;
                a.fs(rot)
            }
            Self::BlendVal { name, value } => {
                a.s(name)?;
                a.f(value)
            }
            Self::Available {
                loaded,
                calibration,
                tracking,
            } => {
                a.i(loaded)?;
                a.opt(calibration, "ii", |a, (state, mode)| {
                    a.i(state)?;
                    a.i(mode)
                })?;
                if calibration.is_some() {
                    a.opt(tracking, "i", |a, t| a.i(t))
                } else {
                    // Tracking comes only after calibration (V2.7 after V2.5).
                    *tracking = None;
                    Ok(())
                }
            }
            Self::Time(t) => a.f(t),
            Self::Camera {
                name,
                pos,
                rot,
                fov,
            } => {
                a.s(name)?;
                a.fs(pos)?;
                a.fs(rot)?;
                a.f(fov)
            }
            Self::Controller {
                active,
                name,
                is_left,
                is_touch,
                is_axis,
                axis,
            } => {
                a.i(active)?;
                a.s(name)?;
                a.i(is_left)?;
                a.i(is_touch)?;
                a.i(is_axis)?;
                a.fs(axis)
            }
            Self::Key {
                active,
                name,
                keycode,
            } => {
                a.i(active)?;
                a.s(name)?;
                a.i(keycode)
            }
            Self::MidiNote {
                active,
                channel,
                note,
                velocity,
            } => {
                a.i(active)?;
                a.i(channel)?;
                a.i(note)?;
                a.f(velocity)
            }
            Self::MidiCcValue { knob, value } => {
                a.i(knob)?;
                a.f(value)
            }
            Self::MidiCcBit { knob, active } => {
                a.i(knob)?;
                a.i(active)
            }
            Self::Receiver { enable, port, ip } => {
                a.i(enable)?;
                a.i(port)?;
                a.opt(ip, "s", |a, v| a.s(v))
            }
            Self::Light {
                name,
                pos,
                rot,
                color,
            } => {
                a.s(name)?;
                a.fs(pos)?;
                a.fs(rot)?;
                a.fs(color)
            }
            Self::Vrm { path, title, hash } => {
                a.s(path)?;
                a.s(title)?;
                a.opt(hash, "s", |a, v| a.s(v))
            }
            Self::Remote { service, json } => {
                a.s(service)?;
                a.s(json)
            }
            Self::Opt(v)
            | Self::Config(v)
            | Self::SetResponse(v)
            | Self::SetConfig(v)
            | Self::SetShortcut(v) => a.s(v),
            Self::SettingColor(c) => a.fs(c),
            Self::SettingWindow(w) => a.is(w),
            Self::SetPeriod(p) => a.is(p),
            Self::SetEye { enable, pos } => {
                a.i(enable)?;
                a.fs(pos)
            }
            Self::SetCalibExec(mode) => a.i(mode),
            Self::BlendApply
            | Self::SetRequest
            | Self::SetCalibReady
            | Self::Thru(_)
            | Self::Other(_) => Ok(()),
        }
    }

    /// Whether this message ends a sender's frame: OK, T or Blend/Apply
    /// (what receivers such as VRM4U take as "frame complete").
    pub fn ends_frame(&self) -> bool {
        matches!(
            self,
            Self::Available { .. } | Self::Time(_) | Self::BlendApply
        )
    }

    /// Whether the values a receiver computes with (a bone's or the root's
    /// pose, a blendshape weight) are all finite; other messages are.
    /// Forwarding a NaN unchanged is a relay's job; mixing, smoothing or
    /// solving with one poisons every later output.
    pub fn values_finite(&self) -> bool {
        match self {
            Self::RootPos { pos, rot, .. } | Self::BonePos { pos, rot, .. } => {
                pos.iter().chain(rot).all(|v| v.is_finite())
            }
            Self::BlendVal { value, .. } => value.is_finite(),
            _ => true,
        }
    }

    /// How strongly this message ends a frame: 3 for T, 2 for OK, 1 for
    /// Blend/Apply, 0 for the rest. A sender's frames end at the strongest
    /// of these it sends (the reference sender puts Root/Pos after Apply).
    pub fn end_rank(&self) -> u8 {
        match self {
            Self::Time(_) => 3,
            Self::Available { .. } => 2,
            Self::BlendApply => 1,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_pos_eight_or_fourteen_and_extra_args_ignored() {
        let mut args = vec![Arg::String("root".into())];
        args.extend((0..7).map(|i| Arg::Float(i as f32)));
        let m8 = Osc::new("/VMC/Ext/Root/Pos", args.clone());
        let Message::RootPos { mr, rot, .. } = Message::from_osc(&m8).unwrap() else {
            panic!()
        };
        assert_eq!((mr, rot), (None, [3.0, 4.0, 5.0, 6.0]));
        args.extend((7..13).map(|i| Arg::Float(i as f32)));
        let m14 = Osc::new("/VMC/Ext/Root/Pos", args.clone());
        let typed = Message::from_osc(&m14).unwrap();
        assert!(matches!(typed, Message::RootPos { mr: Some(_), .. }));
        assert_eq!(typed.to_osc(), m14);
        args.push(Arg::Int(99));
        assert!(Message::from_osc(&Osc::new("/VMC/Ext/Root/Pos", args)).is_ok());
    }

    #[test]
    fn ok_with_one_three_or_four_ints() {
        for n in [1, 3, 4] {
            let m = Osc::new("/VMC/Ext/OK", (0..n).map(Arg::Int).collect());
            let typed = Message::from_osc(&m).unwrap();
            assert_eq!(typed.to_osc(), m, "{n}");
            assert!(typed.ends_frame());
        }
    }

    #[test]
    fn wrong_arguments_are_typed_errors() {
        let e = Message::from_osc(&Osc::new(
            "/VMC/Ext/Bone/Pos",
            vec![Arg::String("Head".into()), Arg::Float(1.0)],
        ))
        .unwrap_err();
        assert_eq!(e.expected, "sfffffff");
        assert_eq!(e.got, "sf");
        assert_eq!((e.kind, e.argument), (ErrorKind::Missing, 2));
        assert_eq!(
            e.to_string(),
            "/VMC/Ext/Bone/Pos: expected arguments sfffffff, got sf (missing argument 2)"
        );
        let e = Message::from_osc(&Osc::new("/VMC/Ext/T", vec![Arg::Int(1)])).unwrap_err();
        assert_eq!((e.kind, e.argument), (ErrorKind::Mistyped, 0));
        assert!(Message::from_osc(&Osc::new("/VMC/Ext/Set/Period", vec![Arg::Int(1)])).is_err());
    }

    #[test]
    fn every_typed_address_round_trips() {
        let all = vec![
            Message::Controller {
                active: 1,
                name: "Trigger".into(),
                is_left: 1,
                is_touch: 0,
                is_axis: 0,
                axis: [0.0, 0.5, 0.0],
            },
            Message::Key {
                active: 1,
                name: "A".into(),
                keycode: 65,
            },
            Message::MidiNote {
                active: 1,
                channel: 0,
                note: 60,
                velocity: 0.8,
            },
            Message::MidiCcValue {
                knob: 3,
                value: 0.25,
            },
            Message::MidiCcBit { knob: 3, active: 1 },
            Message::Receiver {
                enable: 1,
                port: 39540,
                ip: None,
            },
            Message::Receiver {
                enable: 1,
                port: 39540,
                ip: Some("192.168.1.2".into()),
            },
            Message::Light {
                name: "Light".into(),
                pos: [0.0; 3],
                rot: [0.0, 0.0, 0.0, 1.0],
                color: [1.0; 4],
            },
            Message::Vrm {
                path: "C:/a.vrm".into(),
                title: "A".into(),
                hash: Some("abc".into()),
            },
            Message::Remote {
                service: "vroidhub".into(),
                json: "{}".into(),
            },
            Message::Opt("x".into()),
            Message::Config("c.json".into()),
            Message::SettingColor([0.0, 1.0, 0.0, 1.0]),
            Message::SettingWindow([1, 0, 0, 1]),
            Message::SetPeriod([1, 1, 1, 1, 1, 1]),
            Message::SetEye {
                enable: 1,
                pos: [0.0, 1.5, 1.0],
            },
            Message::SetRequest,
            Message::SetResponse("ok".into()),
            Message::SetCalibReady,
            Message::SetCalibExec(1),
            Message::SetConfig("c.json".into()),
            Message::SetShortcut("Functions.FreeCamera".into()),
        ];
        for m in all {
            assert_eq!(Message::from_osc(&m.to_osc()).as_ref(), Ok(&m));
        }
    }

    /// Address and type tags of each message as the VMC specification
    /// lists them (its message tables), written out here rather than derived from
    /// the table they check.
    #[test]
    fn wire_shape_follows_the_spec() {
        let q = [0.0, 0.0, 0.0, 1.0];
        let cases: Vec<(Message, &str, &str)> = vec![
            (
                Message::RootPos {
                    name: "root".into(),
                    pos: [0.0; 3],
                    rot: q,
                    mr: Some(([1.0; 3], [0.0; 3])),
                },
                "/VMC/Ext/Root/Pos",
                "sfffffffffffff",
            ),
            (
                Message::BonePos {
                    name: "Hips".into(),
                    pos: [0.0; 3],
                    rot: q,
                },
                "/VMC/Ext/Bone/Pos",
                "sfffffff",
            ),
            (
                Message::BlendVal {
                    name: "A".into(),
                    value: 0.5,
                },
                "/VMC/Ext/Blend/Val",
                "sf",
            ),
            (Message::BlendApply, "/VMC/Ext/Blend/Apply", ""),
            (
                Message::Available {
                    loaded: 1,
                    calibration: Some((3, 0)),
                    tracking: Some(1),
                },
                "/VMC/Ext/OK",
                "iiii",
            ),
            (
                Message::Available {
                    loaded: 1,
                    calibration: None,
                    tracking: Some(1),
                },
                "/VMC/Ext/OK",
                "i",
            ),
            (Message::Time(1.5), "/VMC/Ext/T", "f"),
            (
                Message::Camera {
                    name: "Camera".into(),
                    pos: [0.0; 3],
                    rot: q,
                    fov: 60.0,
                },
                "/VMC/Ext/Cam",
                "sffffffff",
            ),
            (
                Message::DevicePos {
                    device: Device::Hmd,
                    local: false,
                    serial: "HMD".into(),
                    pos: [0.0; 3],
                    rot: q,
                },
                "/VMC/Ext/Hmd/Pos",
                "sfffffff",
            ),
            (
                Message::DevicePos {
                    device: Device::Con,
                    local: true,
                    serial: "C".into(),
                    pos: [0.0; 3],
                    rot: q,
                },
                "/VMC/Ext/Con/Pos/Local",
                "sfffffff",
            ),
            (
                Message::Controller {
                    active: 1,
                    name: "Trigger".into(),
                    is_left: 1,
                    is_touch: 0,
                    is_axis: 0,
                    axis: [0.0; 3],
                },
                "/VMC/Ext/Con",
                "isiiifff",
            ),
            (
                Message::Key {
                    active: 1,
                    name: "A".into(),
                    keycode: 65,
                },
                "/VMC/Ext/Key",
                "isi",
            ),
            (
                Message::MidiNote {
                    active: 1,
                    channel: 0,
                    note: 60,
                    velocity: 0.8,
                },
                "/VMC/Ext/Midi/Note",
                "iiif",
            ),
            (
                Message::MidiCcValue {
                    knob: 1,
                    value: 0.5,
                },
                "/VMC/Ext/Midi/CC/Val",
                "if",
            ),
            (
                Message::MidiCcBit { knob: 1, active: 1 },
                "/VMC/Ext/Midi/CC/Bit",
                "ii",
            ),
            (
                Message::Receiver {
                    enable: 1,
                    port: 39540,
                    ip: Some("127.0.0.1".into()),
                },
                "/VMC/Ext/Rcv",
                "iis",
            ),
            (
                Message::Light {
                    name: "L".into(),
                    pos: [0.0; 3],
                    rot: q,
                    color: [1.0; 4],
                },
                "/VMC/Ext/Light",
                "sfffffffffff",
            ),
            (
                Message::Vrm {
                    path: "a.vrm".into(),
                    title: "A".into(),
                    hash: None,
                },
                "/VMC/Ext/VRM",
                "ss",
            ),
            (
                Message::Remote {
                    service: "vroidhub".into(),
                    json: "{}".into(),
                },
                "/VMC/Ext/Remote",
                "ss",
            ),
            (Message::Opt("x".into()), "/VMC/Ext/Opt", "s"),
            (Message::Config("c".into()), "/VMC/Ext/Config", "s"),
            (
                Message::SettingColor([1.0; 4]),
                "/VMC/Ext/Setting/Color",
                "ffff",
            ),
            (
                Message::SettingWindow([1; 4]),
                "/VMC/Ext/Setting/Win",
                "iiii",
            ),
            (Message::SetPeriod([1; 6]), "/VMC/Ext/Set/Period", "iiiiii"),
            (
                Message::SetEye {
                    enable: 1,
                    pos: [0.0; 3],
                },
                "/VMC/Ext/Set/Eye",
                "ifff",
            ),
            (Message::SetRequest, "/VMC/Ext/Set/Req", ""),
            (Message::SetResponse("r".into()), "/VMC/Ext/Set/Res", "s"),
            (Message::SetCalibReady, "/VMC/Ext/Set/Calib/Ready", ""),
            (Message::SetCalibExec(2), "/VMC/Ext/Set/Calib/Exec", "i"),
            (Message::SetConfig("c".into()), "/VMC/Ext/Set/Config", "s"),
            (
                Message::SetShortcut("F".into()),
                "/VMC/Ext/Set/Shortcut",
                "s",
            ),
        ];
        for (m, address, tags) in cases {
            let o = m.to_osc();
            let got: String = o.args.iter().map(tag).collect();
            assert_eq!((o.address.as_str(), got.as_str()), (address, tags), "{m:?}");
        }
    }

    #[test]
    fn every_table_entry_writes_its_own_address_and_required_tags() {
        for (address, tags, blank) in TABLE {
            let o = blank().to_osc();
            assert_eq!(o.address, *address);
            let got: String = o.args.iter().map(tag).collect();
            let required = tags.split('[').next().unwrap_or_default();
            assert_eq!(got, required, "{address}");
            assert_eq!(Message::from_osc(&o), Ok(blank()), "{address}");
        }
    }

    #[test]
    fn unknown_and_thru_are_kept() {
        let m = Osc::new("/Something/Else", vec![Arg::Double(1.5), Arg::Nil]);
        assert_eq!(Message::from_osc(&m).unwrap(), Message::Other(m.clone()));
        let t = Osc::new(
            "/VMC/Thru/Custom",
            vec![Arg::String("x".into()), Arg::Int(2)],
        );
        assert_eq!(Message::from_osc(&t).unwrap().to_osc(), t);
        let d = Osc::new("/VMC/Ext/Tra/Pos/Local", {
            let mut a = vec![Arg::String("LHR-1".into())];
            a.extend((0..7).map(|i| Arg::Float(i as f32)));
            a
        });
        let typed = Message::from_osc(&d).unwrap();
        assert!(matches!(
            typed,
            Message::DevicePos {
                device: Device::Tra,
                local: true,
                ..
            }
        ));
        assert_eq!(typed.to_osc(), d);
    }
}
