//! JSON Lines records that more than one tool prints (one type per shape,
//! documented in `docs/jsonl.md`): `error`, and the VMC message records of
//! `vmc-relay --dump` and `vmc-average --dump`.

use std::net::SocketAddr;

use serde::Serialize;

use mocap_core::osc::{self, Arg};
use mocap_core::vmc::Message;

/// `{"type":"error", …}`: what could not be decoded, where, and why. Fields a
/// tool cannot know are `null` (`src`, `offset`, `tag`) or left out (the rest).
#[derive(Clone, Debug, Serialize)]
pub struct ErrorRecord {
    #[serde(rename = "type")]
    kind: &'static str,
    /// UDP source (or TCP peer).
    pub src: Option<SocketAddr>,
    /// Receive time, microseconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ts_us: Option<i64>,
    /// Byte offset in the payload where decoding stopped.
    pub offset: Option<usize>,
    /// The chunk tag being read there.
    pub tag: Option<String>,
    /// Why.
    pub reason: String,
    /// Payload length.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub len: Option<usize>,
    /// Line of a text input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// Column of a text input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// Byte offset in a damaged capture file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_offset: Option<u64>,
}

impl ErrorRecord {
    /// An error with only its reason known.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            kind: "error",
            src: None,
            ts_us: None,
            offset: None,
            tag: None,
            reason: reason.into(),
            len: None,
            line: None,
            column: None,
            file_offset: None,
        }
    }
}

impl From<&crate::source::InputError> for ErrorRecord {
    /// Input that was not a datagram: where it was (line and column, or file offset).
    fn from(e: &crate::source::InputError) -> Self {
        let mut r = Self::new(e.reason.clone());
        r.line = e.line;
        r.column = e.column;
        r.file_offset = e.file_offset;
        r
    }
}

/// A receive time as records write it: to the nearest µs, from the exact
/// time (never through f64 seconds, which would be off by one µs now and then).
pub fn ts_us(ts: Option<std::time::Duration>) -> Option<i64> {
    ts.and_then(|t| i64::try_from((t.as_nanos() + 500) / 1000).ok())
}

/// One VMC message as a record: typed shapes for what VMC defines, `osc`
/// with every argument for the rest. Floats are widened to f64 so that an
/// f64 reader gets the wire value exactly.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type")]
pub enum VmcRecord<'a> {
    /// `/VMC/Ext/Bone/Pos`.
    #[serde(rename = "vmc.bone")]
    Bone {
        /// HumanBodyBones name.
        name: &'a str,
        /// Local position.
        pos: [f64; 3],
        /// Local rotation `[x, y, z, w]`.
        rot: [f64; 4],
        /// Sender.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<SocketAddr>,
    },
    /// `/VMC/Ext/Root/Pos`.
    #[serde(rename = "vmc.root")]
    Root {
        /// Name (`root`).
        name: &'a str,
        /// Position.
        pos: [f64; 3],
        /// Rotation.
        rot: [f64; 4],
        /// MR scale (V2.1), else `null`.
        scale: Option<[f64; 3]>,
        /// MR offset (V2.1), else `null`.
        offset: Option<[f64; 3]>,
        /// Sender.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<SocketAddr>,
    },
    /// `/VMC/Ext/Blend/Val`.
    #[serde(rename = "vmc.blend")]
    Blend {
        /// Expression name.
        name: &'a str,
        /// Weight.
        value: f64,
        /// Sender.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<SocketAddr>,
    },
    /// `/VMC/Ext/Blend/Apply`.
    #[serde(rename = "vmc.apply")]
    Apply {
        /// Sender.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<SocketAddr>,
    },
    /// `/VMC/Ext/OK`.
    #[serde(rename = "vmc.ok")]
    Ok {
        /// 1 when a model is loaded.
        loaded: i32,
        /// Calibration state (V2.5), else `null`.
        calibration_state: Option<i32>,
        /// Calibration mode (V2.5), else `null`.
        calibration_mode: Option<i32>,
        /// Tracking status (V2.7), else `null`.
        tracking: Option<i32>,
        /// Sender.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<SocketAddr>,
    },
    /// `/VMC/Ext/T`.
    #[serde(rename = "vmc.time")]
    Time {
        /// The sender's time, seconds.
        time: f64,
        /// Sender.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<SocketAddr>,
    },
    /// Any other OSC message.
    #[serde(rename = "osc")]
    Osc {
        /// OSC address.
        address: &'a str,
        /// Arguments.
        args: Vec<ArgRecord>,
        /// Sender.
        #[serde(skip_serializing_if = "Option::is_none")]
        src: Option<SocketAddr>,
    },
}

/// An OSC argument in a record: numbers, strings, booleans and `null` as
/// themselves, blobs as `{"blob": hex}`, arrays as arrays, the rest as text.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum ArgRecord {
    /// `i`, `h`.
    Int(i64),
    /// `f` (widened), `d`.
    Float(f64),
    /// `s`, and anything else as its debug text.
    Text(String),
    /// `T`, `F`.
    Bool(bool),
    /// `b`.
    Blob {
        /// The bytes in hex.
        blob: String,
    },
    /// `[` … `]`.
    Array(Vec<Self>),
    /// `N`.
    Nil(Option<()>),
}

impl From<&Arg> for ArgRecord {
    fn from(a: &Arg) -> Self {
        match a {
            Arg::Int(v) => Self::Int(i64::from(*v)),
            Arg::Long(v) => Self::Int(*v),
            Arg::Float(v) => Self::Float(f64::from(*v)),
            Arg::Double(v) => Self::Float(*v),
            Arg::String(v) => Self::Text(v.clone()),
            Arg::Bool(v) => Self::Bool(*v),
            Arg::Blob(b) => Self::Blob {
                blob: hex::encode(b),
            },
            Arg::Array(v) => Self::Array(v.iter().map(Self::from).collect()),
            Arg::Nil => Self::Nil(None),
            other => Self::Text(format!("{other:?}")),
        }
    }
}

fn wide<const N: usize>(v: [f32; N]) -> [f64; N] {
    v.map(f64::from)
}

impl<'a> VmcRecord<'a> {
    /// The record of `m` (`typed`, when it is a VMC message) from `src`.
    pub fn new(src: Option<SocketAddr>, m: &'a osc::Message, typed: Option<&'a Message>) -> Self {
        match typed {
            Some(t) => Self::typed(src, t).unwrap_or_else(|| Self::osc(src, m)),
            None => Self::osc(src, m),
        }
    }

    /// The record of a typed message, when VMC gives it a shape of its own.
    pub fn typed(src: Option<SocketAddr>, m: &'a Message) -> Option<Self> {
        Some(match m {
            Message::BonePos { name, pos, rot } => Self::Bone {
                name,
                pos: wide(*pos),
                rot: wide(*rot),
                src,
            },
            Message::RootPos { name, pos, rot, mr } => Self::Root {
                name,
                pos: wide(*pos),
                rot: wide(*rot),
                scale: mr.map(|m| wide(m.0)),
                offset: mr.map(|m| wide(m.1)),
                src,
            },
            Message::BlendVal { name, value } => Self::Blend {
                name,
                value: f64::from(*value),
                src,
            },
            Message::BlendApply => Self::Apply { src },
            Message::Available {
                loaded,
                calibration,
                tracking,
            } => Self::Ok {
                loaded: *loaded,
                calibration_state: calibration.map(|c| c.0),
                calibration_mode: calibration.map(|c| c.1),
                tracking: *tracking,
                src,
            },
            Message::Time(t) => Self::Time {
                time: f64::from(*t),
                src,
            },
            _ => return None,
        })
    }

    fn osc(src: Option<SocketAddr>, m: &'a osc::Message) -> Self {
        Self::Osc {
            address: &m.address,
            args: m.args.iter().map(ArgRecord::from).collect(),
            src,
        }
    }
}

/// A VMC message to print: its `vmc.*` record, or the human line (`--dump`
/// without `--format json`), which shows the float32 values as sent.
#[derive(Clone, Copy, Debug)]
pub struct VmcOut<'a> {
    /// Sender, when known.
    pub src: Option<SocketAddr>,
    /// When the datagram was captured (live input: received), as in the
    /// other protocols' records; `None` for what a tool made (a mix).
    pub ts: Option<std::time::Duration>,
    /// The message as OSC.
    pub osc: &'a osc::Message,
    /// The message as VMC, when it is one.
    pub typed: Option<&'a Message>,
}

impl Serialize for VmcOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Stamped<'a> {
            #[serde(flatten)]
            record: VmcRecord<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            ts_us: Option<i64>,
        }
        Stamped {
            record: VmcRecord::new(self.src, self.osc, self.typed),
            ts_us: ts_us(self.ts),
        }
        .serialize(s)
    }
}

impl crate::output::Record for VmcOut<'_> {
    fn human(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.typed {
            Some(Message::BonePos { name, pos, rot }) => {
                write!(f, "bone   {name:<24} pos={pos:?} rot={rot:?}")
            }
            Some(Message::BlendVal { name, value }) => write!(f, "blend  {name:<24} {value}"),
            _ => write!(f, "osc    {} {:?}", self.osc.address, self.osc.args),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ts_us_is_the_nearest_microsecond_of_the_exact_time() {
        use std::time::Duration;
        // 1795989220.690868378 s: through f64 seconds this printed …869.
        let t = Duration::new(1_795_989_220, 690_868_378);
        assert_eq!(ts_us(Some(t)), Some(1_795_989_220_690_868));
        assert_ne!(
            (t.as_secs_f64() * 1e6).round() as i64,
            1_795_989_220_690_868
        );
        assert_eq!(ts_us(Some(Duration::new(0, 1_500))), Some(2));
        assert_eq!(ts_us(Some(Duration::new(0, 1_499))), Some(1));
        assert_eq!(ts_us(None), None);
    }

    #[test]
    fn records_keep_wire_values_and_shapes() {
        let bone = Message::BonePos {
            name: "Head".into(),
            pos: [0.1, 0.2, 0.3],
            rot: [0.0, 0.0, 0.0, 1.0],
        };
        let osc = bone.to_osc();
        let v = serde_json::to_value(VmcRecord::new(None, &osc, Some(&bone))).unwrap();
        assert_eq!(v["type"], "vmc.bone");
        // 0.1f32 read by an f64 reader is the f32 value, not 0.1.
        assert_eq!(v["pos"][0].as_f64().unwrap(), f64::from(0.1f32));
        assert!(v.get("src").is_none());
        let other = osc::Message {
            address: "/x".into(),
            args: vec![
                Arg::Int(3),
                Arg::Blob(vec![1, 255]),
                Arg::Nil,
                Arg::Bool(true),
            ],
        };
        let src = "127.0.0.1:9".parse().ok();
        let v = serde_json::to_value(VmcRecord::new(src, &other, None)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "osc", "address": "/x", "args": [3, {"blob": "01ff"}, null, true], "src": "127.0.0.1:9"})
        );
        let e = serde_json::to_value(ErrorRecord::new("bad")).unwrap();
        assert_eq!(
            e,
            serde_json::json!({"type": "error", "src": null, "offset": null, "tag": null, "reason": "bad"})
        );
    }

    #[test]
    fn vmc_lines_show_the_float32_values_and_json_widens_them() {
        let bone = Message::BonePos {
            name: "Head".into(),
            pos: [0.1, 0.2, 0.3],
            rot: [0.0, 0.0, 0.0, 1.0],
        };
        let osc = bone.to_osc();
        let out = VmcOut {
            src: None,
            ts: Some(std::time::Duration::new(1_795_989_220, 690_868_378)),
            osc: &osc,
            typed: Some(&bone),
        };
        assert_eq!(
            crate::output::Human(&out).to_string(),
            format!(
                "bone   {:<24} pos=[0.1, 0.2, 0.3] rot=[0.0, 0.0, 0.0, 1.0]",
                "Head"
            )
        );
        let v = serde_json::to_value(out).unwrap();
        assert_eq!(v["type"], "vmc.bone");
        assert_eq!(v["pos"][1].as_f64().unwrap(), f64::from(0.2f32));
        // The capture time, in the same field and unit as mocopi's records.
        assert_eq!(v["ts_us"], 1_795_989_220_690_868_i64);
        let line = serde_json::to_string(&out).unwrap();
        assert!(line.starts_with(r#"{"type":"vmc.bone","#), "{line}");
        let plain = osc::Message {
            address: "/x".into(),
            args: vec![Arg::Int(3)],
        };
        let out = VmcOut {
            src: None,
            ts: None,
            osc: &plain,
            typed: None,
        };
        assert_eq!(crate::output::Human(&out).to_string(), "osc    /x [Int(3)]");
        assert!(serde_json::to_value(out).unwrap().get("ts_us").is_none());
    }
}
