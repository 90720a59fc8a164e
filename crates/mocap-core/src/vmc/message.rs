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
    fn s(&mut self) -> Result<String, Error> {
        match self.take() {
            Some(Arg::String(s)) => Ok(s.clone()),
            _ => Err(self.err()),
        }
    }
    fn f(&mut self) -> Result<f32, Error> {
        match self.take() {
            Some(Arg::Float(v)) => Ok(*v),
            _ => Err(self.err()),
        }
    }
    fn i(&mut self) -> Result<i32, Error> {
        match self.take() {
            Some(Arg::Int(v)) => Ok(*v),
            _ => Err(self.err()),
        }
    }
    /// An optional trailing string (a later protocol version's addition).
    fn opt_s(&mut self) -> Option<String> {
        match self.m.args.get(self.i) {
            Some(Arg::String(v)) => {
                self.i += 1;
                Some(v.clone())
            }
            _ => None,
        }
    }
    fn v3(&mut self) -> Result<[f32; 3], Error> {
        Ok([self.f()?, self.f()?, self.f()?])
    }
    fn q(&mut self) -> Result<[f32; 4], Error> {
        Ok([self.f()?, self.f()?, self.f()?, self.f()?])
    }
    /// Whether the next `n` arguments are floats (an optional group is present).
    fn floats_follow(&self, n: usize) -> bool {
        self.m
            .args
            .get(self.i..self.i + n)
            .is_some_and(|a| a.iter().all(|x| matches!(x, Arg::Float(_))))
    }
    fn ints_follow(&self, n: usize) -> bool {
        self.m
            .args
            .get(self.i..self.i + n)
            .is_some_and(|a| a.iter().all(|x| matches!(x, Arg::Int(_))))
    }
}

impl Message {
    /// Types an OSC message. Unknown addresses become [`Message::Other`].
    ///
    /// # Errors
    /// [`Error`] when a known address has too few or mistyped arguments.
    pub fn from_osc(m: &Osc) -> Result<Self, Error> {
        let r = |expected| Reader { m, i: 0, expected };
        Ok(match m.address.as_str() {
            "/VMC/Ext/Root/Pos" => {
                let mut a = r("sfffffff[ffffff]");
                let (name, pos, rot) = (a.s()?, a.v3()?, a.q()?);
                let mr = if a.floats_follow(6) {
                    Some((a.v3()?, a.v3()?))
                } else {
                    None
                };
                Self::RootPos { name, pos, rot, mr }
            }
            "/VMC/Ext/Bone/Pos" => {
                let mut a = r("sfffffff");
                Self::BonePos {
                    name: a.s()?,
                    pos: a.v3()?,
                    rot: a.q()?,
                }
            }
            "/VMC/Ext/Blend/Val" => {
                let mut a = r("sf");
                Self::BlendVal {
                    name: a.s()?,
                    value: a.f()?,
                }
            }
            "/VMC/Ext/Blend/Apply" => Self::BlendApply,
            "/VMC/Ext/OK" => {
                let mut a = r("i[ii[i]]");
                let loaded = a.i()?;
                let calibration = if a.ints_follow(2) {
                    Some((a.i()?, a.i()?))
                } else {
                    None
                };
                let tracking = if calibration.is_some() && a.ints_follow(1) {
                    Some(a.i()?)
                } else {
                    None
                };
                Self::Available {
                    loaded,
                    calibration,
                    tracking,
                }
            }
            "/VMC/Ext/T" => Self::Time(r("f").f()?),
            "/VMC/Ext/Cam" => {
                let mut a = r("sffffffff");
                Self::Camera {
                    name: a.s()?,
                    pos: a.v3()?,
                    rot: a.q()?,
                    fov: a.f()?,
                }
            }
            addr @ ("/VMC/Ext/Hmd/Pos"
            | "/VMC/Ext/Con/Pos"
            | "/VMC/Ext/Tra/Pos"
            | "/VMC/Ext/Hmd/Pos/Local"
            | "/VMC/Ext/Con/Pos/Local"
            | "/VMC/Ext/Tra/Pos/Local") => {
                let device = match addr.get(9..12) {
                    Some("Hmd") => Device::Hmd,
                    Some("Con") => Device::Con,
                    _ => Device::Tra,
                };
                let mut a = r("sfffffff");
                Self::DevicePos {
                    device,
                    local: addr.ends_with("/Local"),
                    serial: a.s()?,
                    pos: a.v3()?,
                    rot: a.q()?,
                }
            }
            "/VMC/Ext/Con" => {
                let mut a = r("isiiifff");
                Self::Controller {
                    active: a.i()?,
                    name: a.s()?,
                    is_left: a.i()?,
                    is_touch: a.i()?,
                    is_axis: a.i()?,
                    axis: a.v3()?,
                }
            }
            "/VMC/Ext/Key" => {
                let mut a = r("isi");
                Self::Key {
                    active: a.i()?,
                    name: a.s()?,
                    keycode: a.i()?,
                }
            }
            "/VMC/Ext/Midi/Note" => {
                let mut a = r("iiif");
                Self::MidiNote {
                    active: a.i()?,
                    channel: a.i()?,
                    note: a.i()?,
                    velocity: a.f()?,
                }
            }
            "/VMC/Ext/Midi/CC/Val" => {
                let mut a = r("if");
                Self::MidiCcValue {
                    knob: a.i()?,
                    value: a.f()?,
                }
            }
            "/VMC/Ext/Midi/CC/Bit" => {
                let mut a = r("ii");
                Self::MidiCcBit {
                    knob: a.i()?,
                    active: a.i()?,
                }
            }
            "/VMC/Ext/Rcv" => {
                let mut a = r("ii[s]");
                let (enable, port) = (a.i()?, a.i()?);
                let ip = a.opt_s();
                Self::Receiver { enable, port, ip }
            }
            "/VMC/Ext/Light" => {
                let mut a = r("sfffffffffff");
                Self::Light {
                    name: a.s()?,
                    pos: a.v3()?,
                    rot: a.q()?,
                    color: a.q()?,
                }
            }
            "/VMC/Ext/VRM" => {
                let mut a = r("ss[s]");
                let (path, title) = (a.s()?, a.s()?);
                let hash = a.opt_s();
                Self::Vrm { path, title, hash }
            }
            "/VMC/Ext/Remote" => {
                let mut a = r("ss");
                Self::Remote {
                    service: a.s()?,
                    json: a.s()?,
                }
            }
            "/VMC/Ext/Opt" => Self::Opt(r("s").s()?),
            "/VMC/Ext/Config" => Self::Config(r("s").s()?),
            "/VMC/Ext/Setting/Color" => Self::SettingColor(r("ffff").q()?),
            "/VMC/Ext/Setting/Win" => {
                let mut a = r("iiii");
                Self::SettingWindow([a.i()?, a.i()?, a.i()?, a.i()?])
            }
            "/VMC/Ext/Set/Period" => {
                let mut a = r("iiiiii");
                Self::SetPeriod([a.i()?, a.i()?, a.i()?, a.i()?, a.i()?, a.i()?])
            }
            "/VMC/Ext/Set/Eye" => {
                let mut a = r("ifff");
                Self::SetEye {
                    enable: a.i()?,
                    pos: a.v3()?,
                }
            }
            "/VMC/Ext/Set/Req" => Self::SetRequest,
            "/VMC/Ext/Set/Res" => Self::SetResponse(r("s").s()?),
            "/VMC/Ext/Set/Calib/Ready" => Self::SetCalibReady,
            "/VMC/Ext/Set/Calib/Exec" => Self::SetCalibExec(r("i").i()?),
            "/VMC/Ext/Set/Config" => Self::SetConfig(r("s").s()?),
            "/VMC/Ext/Set/Shortcut" => Self::SetShortcut(r("s").s()?),
            addr if addr.starts_with("/VMC/Thru/") => Self::Thru(m.clone()),
            _ => Self::Other(m.clone()),
        })
    }

    /// The OSC message for this VMC message.
    pub fn to_osc(&self) -> Osc {
        let s = |v: &str| Arg::String(v.to_owned());
        let fl = |v: &[f32]| v.iter().map(|x| Arg::Float(*x)).collect::<Vec<_>>();
        match self {
            Self::RootPos { name, pos, rot, mr } => {
                let mut args = vec![s(name)];
                args.extend(fl(pos));
                args.extend(fl(rot));
                if let Some((scale, offset)) = mr {
                    args.extend(fl(scale));
                    args.extend(fl(offset));
                }
                Osc::new("/VMC/Ext/Root/Pos", args)
            }
            Self::BonePos { name, pos, rot } => {
                let mut args = vec![s(name)];
                args.extend(fl(pos));
                args.extend(fl(rot));
                Osc::new("/VMC/Ext/Bone/Pos", args)
            }
            Self::BlendVal { name, value } => {
                Osc::new("/VMC/Ext/Blend/Val", vec![s(name), Arg::Float(*value)])
            }
            Self::BlendApply => Osc::new("/VMC/Ext/Blend/Apply", vec![]),
            Self::Available {
                loaded,
                calibration,
                tracking,
            } => {
                let mut args = vec![Arg::Int(*loaded)];
                if let Some((state, mode)) = calibration {
                    args.extend([Arg::Int(*state), Arg::Int(*mode)]);
                    if let Some(t) = tracking {
                        args.push(Arg::Int(*t));
                    }
                }
                Osc::new("/VMC/Ext/OK", args)
            }
            Self::Time(t) => Osc::new("/VMC/Ext/T", vec![Arg::Float(*t)]),
            Self::Camera {
                name,
                pos,
                rot,
                fov,
            } => {
                let mut args = vec![s(name)];
                args.extend(fl(pos));
                args.extend(fl(rot));
                args.push(Arg::Float(*fov));
                Osc::new("/VMC/Ext/Cam", args)
            }
            Self::DevicePos {
                device,
                local,
                serial,
                pos,
                rot,
            } => {
                let kind = match device {
                    Device::Hmd => "Hmd",
                    Device::Con => "Con",
                    Device::Tra => "Tra",
                };
                let suffix = if *local { "/Local" } else { "" };
                let mut args = vec![s(serial)];
                args.extend(fl(pos));
                args.extend(fl(rot));
                Osc::new(format!("/VMC/Ext/{kind}/Pos{suffix}"), args)
            }
            Self::Controller {
                active,
                name,
                is_left,
                is_touch,
                is_axis,
                axis,
            } => {
                let mut args = vec![Arg::Int(*active), s(name), Arg::Int(*is_left)];
                args.extend([Arg::Int(*is_touch), Arg::Int(*is_axis)]);
                args.extend(fl(axis));
                Osc::new("/VMC/Ext/Con", args)
            }
            Self::Key {
                active,
                name,
                keycode,
            } => Osc::new(
                "/VMC/Ext/Key",
                vec![Arg::Int(*active), s(name), Arg::Int(*keycode)],
            ),
            Self::MidiNote {
                active,
                channel,
                note,
                velocity,
            } => Osc::new(
                "/VMC/Ext/Midi/Note",
                vec![
                    Arg::Int(*active),
                    Arg::Int(*channel),
                    Arg::Int(*note),
                    Arg::Float(*velocity),
                ],
            ),
            Self::MidiCcValue { knob, value } => Osc::new(
                "/VMC/Ext/Midi/CC/Val",
                vec![Arg::Int(*knob), Arg::Float(*value)],
            ),
            Self::MidiCcBit { knob, active } => Osc::new(
                "/VMC/Ext/Midi/CC/Bit",
                vec![Arg::Int(*knob), Arg::Int(*active)],
            ),
            Self::Receiver { enable, port, ip } => {
                let mut args = vec![Arg::Int(*enable), Arg::Int(*port)];
                args.extend(ip.as_deref().map(s));
                Osc::new("/VMC/Ext/Rcv", args)
            }
            Self::Light {
                name,
                pos,
                rot,
                color,
            } => {
                let mut args = vec![s(name)];
                args.extend(fl(pos));
                args.extend(fl(rot));
                args.extend(fl(color));
                Osc::new("/VMC/Ext/Light", args)
            }
            Self::Vrm { path, title, hash } => {
                let mut args = vec![s(path), s(title)];
                args.extend(hash.as_deref().map(s));
                Osc::new("/VMC/Ext/VRM", args)
            }
            Self::Remote { service, json } => {
                Osc::new("/VMC/Ext/Remote", vec![s(service), s(json)])
            }
            Self::Opt(v) => Osc::new("/VMC/Ext/Opt", vec![s(v)]),
            Self::Config(v) => Osc::new("/VMC/Ext/Config", vec![s(v)]),
            Self::SettingColor(c) => Osc::new("/VMC/Ext/Setting/Color", fl(c)),
            Self::SettingWindow(w) => Osc::new(
                "/VMC/Ext/Setting/Win",
                w.iter().map(|v| Arg::Int(*v)).collect(),
            ),
            Self::SetPeriod(p) => Osc::new(
                "/VMC/Ext/Set/Period",
                p.iter().map(|v| Arg::Int(*v)).collect(),
            ),
            Self::SetEye { enable, pos } => {
                let mut args = vec![Arg::Int(*enable)];
                args.extend(fl(pos));
                Osc::new("/VMC/Ext/Set/Eye", args)
            }
            Self::SetRequest => Osc::new("/VMC/Ext/Set/Req", vec![]),
            Self::SetResponse(v) => Osc::new("/VMC/Ext/Set/Res", vec![s(v)]),
            Self::SetCalibReady => Osc::new("/VMC/Ext/Set/Calib/Ready", vec![]),
            Self::SetCalibExec(mode) => Osc::new("/VMC/Ext/Set/Calib/Exec", vec![Arg::Int(*mode)]),
            Self::SetConfig(v) => Osc::new("/VMC/Ext/Set/Config", vec![s(v)]),
            Self::SetShortcut(v) => Osc::new("/VMC/Ext/Set/Shortcut", vec![s(v)]),
            Self::Thru(m) | Self::Other(m) => m.clone(),
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
            (Message::SettingColor([1.0; 4]), "/VMC/Ext/Setting/Color", "ffff"),
            (Message::SettingWindow([1; 4]), "/VMC/Ext/Setting/Win", "iiii"),
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
            (Message::SetShortcut("F".into()), "/VMC/Ext/Set/Shortcut", "s"),
        ];
        for (m, address, tags) in cases {
            let o = m.to_osc();
            let got: String = o.args.iter().map(tag).collect();
            assert_eq!((o.address.as_str(), got.as_str()), (address, tags), "{m:?}");
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
