//! Face frames as VMC messages: ARKit blendshapes as `/VMC/Ext/Blend/Val`
//! with ARKit names ("perfect sync"), VRM 0.x preset expressions with
//! their preset names, then one Apply; the head (and optionally the eyes)
//! as `/VMC/Ext/Bone/Pos` rotations. Every face app reaches the bridge as a
//! [`FacePose`]: each protocol module converts its own frames
//! (`From<&ifm::Frame>`, `From<&openseeface::Face>`,
//! [`FacePose::from_livelink`]), so the bridge depends on none of them.
//!
//! The app's Euler order and signs are not documented. Our reading: X pitch,
//! Y yaw, Z roll in degrees, in ARKit's right-handed frame (+Y up, +Z towards
//! the viewer), composed as SceneKit composes `eulerAngles` (roll first, then
//! yaw, then pitch: q = qx·qy·qz), then mirrored into Unity's left-handed
//! frame by flipping Z. [`HeadAxes`] remaps and flips the three angles first,
//! so a user can correct the reading without a rebuild.

use std::fmt;
use std::str::FromStr;

use crate::ifm::ARKIT;
use crate::vmc::{Message, VRM0_PRESETS};

/// One face frame as the bridge reads it, whatever app sent it.
#[derive(Clone, Debug, PartialEq)]
pub struct FacePose {
    /// `Some(false)` while the app has lost the face.
    pub tracking: Option<bool>,
    /// ARKit blendshapes indexed like [`ARKIT`], nominally 0 to 1; `None`
    /// for those the frame did not carry.
    pub blendshapes: [Option<f32>; 52],
    /// Head angles in degrees: about X (pitch), Y (yaw), Z (roll), ARKit's frame.
    pub head: Option<[f32; 3]>,
    /// The left eye, like `head`.
    pub left_eye: Option<[f32; 3]>,
    /// The right eye, like `head`.
    pub right_eye: Option<[f32; 3]>,
    /// Head position as the app sends it (VTube Studio's `Position`).
    pub head_position: Option<[f32; 3]>,
    /// The head's rotation (x, y, z, w) already in Unity's frame, for apps
    /// that send a rotation rather than angles (OpenSeeFace); sent instead
    /// of `head`.
    pub head_rotation: Option<[f32; 4]>,
    /// VRM 0.x preset expressions indexed like [`VRM0_PRESETS`], nominally
    /// 0 to 1, for apps whose values are not ARKit blendshapes
    /// (OpenSeeFace's blinks and mouth).
    pub expressions: [Option<f32>; VRM0_PRESETS.len()],
}

impl Default for FacePose {
    fn default() -> Self {
        Self {
            tracking: None,
            blendshapes: [None; 52],
            head: None,
            left_eye: None,
            right_eye: None,
            head_position: None,
            head_rotation: None,
            expressions: [None; VRM0_PRESETS.len()],
        }
    }
}

/// How blendshape names are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlendCase {
    /// ARKit's own spelling, `eyeBlinkLeft` (perfect-sync models).
    #[default]
    Camel,
    /// `EyeBlinkLeft`, for receivers that capitalise clip names.
    Pascal,
}

/// What to send while the app reports no face (`trackingStatus` 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnLost {
    /// Repeat the last pose seen with a face.
    #[default]
    Hold,
    /// Every blendshape 0 and the head and eyes at rest.
    Neutral,
}

/// Which incoming angle drives each of pitch, yaw and roll, and with which
/// sign. Written `x,y,z` (the default), e.g. `-x,y,-z` or `x,z,y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadAxes {
    /// For pitch, yaw, roll: (index of the incoming angle 0..3, negate).
    pub map: [(usize, bool); 3],
}

impl Default for HeadAxes {
    fn default() -> Self {
        Self {
            map: [(0, false), (1, false), (2, false)],
        }
    }
}

impl HeadAxes {
    /// The incoming angles rearranged into pitch, yaw, roll.
    pub fn apply(&self, angles: [f32; 3]) -> [f32; 3] {
        self.map.map(|(i, neg)| {
            let v = angles.get(i).copied().unwrap_or(0.0);
            if neg { -v } else { v }
        })
    }

    /// A rotation's axis components rearranged the same way: a turn about
    /// one incoming axis becomes a turn about the axis it drives, by the
    /// same angle (negated with the sign).
    pub fn apply_rotation(&self, [x, y, z, w]: [f32; 4]) -> [f32; 4] {
        let [x, y, z] = self.apply([x, y, z]);
        [x, y, z, w]
    }
}

/// A `--head-axes` text that does not read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeadAxesError {
    /// Not three comma-separated axes.
    Count(String),
    /// A part that is not `x`, `y` or `z` (with an optional sign).
    Axis {
        /// The part.
        part: String,
        /// The whole text.
        text: String,
    },
    /// An axis named twice (and so another left out).
    Repeated(String),
}

impl fmt::Display for HeadAxesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Count(s) => write!(f, "expected three axes like x,y,z or -x,y,-z, got {s:?}"),
            Self::Axis { part, text } => {
                write!(f, "unknown axis {part:?} in {text:?} (use x, y or z)")
            }
            Self::Repeated(s) => write!(f, "each of x, y and z must appear once in {s:?}"),
        }
    }
}

impl std::error::Error for HeadAxesError {}

impl FromStr for HeadAxes {
    type Err = HeadAxesError;
    fn from_str(s: &str) -> Result<Self, HeadAxesError> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let [a, b, c] = parts.as_slice() else {
            return Err(HeadAxesError::Count(s.to_owned()));
        };
        let mut map = [(0, false); 3];
        for (slot, p) in map.iter_mut().zip([a, b, c]) {
            let (neg, axis) = match p.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, p.strip_prefix('+').unwrap_or(p)),
            };
            let i = match axis {
                "x" | "X" => 0,
                "y" | "Y" => 1,
                "z" | "Z" => 2,
                _ => {
                    return Err(HeadAxesError::Axis {
                        part: (*p).to_owned(),
                        text: s.to_owned(),
                    });
                }
            };
            *slot = (i, neg);
        }
        let mut used = map.map(|(i, _)| i);
        used.sort_unstable();
        if used != [0, 1, 2] {
            return Err(HeadAxesError::Repeated(s.to_owned()));
        }
        Ok(Self { map })
    }
}

impl fmt::Display for HeadAxes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, (i, neg)) in self.map.iter().enumerate() {
            let sep = if k == 0 { "" } else { "," };
            let axis = ["x", "y", "z"].get(*i).copied().unwrap_or("?");
            write!(f, "{sep}{}{axis}", if *neg { "-" } else { "" })?;
        }
        Ok(())
    }
}

/// Options of the face bridge.
#[derive(Clone, Debug)]
pub struct FaceOptions {
    /// Blendshape name spelling.
    pub case: BlendCase,
    /// Clamp values to 0..=1 (v2 senders may exceed the range).
    pub clamp: bool,
    /// The bone that carries the head rotation (`Head`, or `Neck`).
    pub head_bone: String,
    /// Send the eye blocks as `LeftEye` / `RightEye` rotations.
    pub eye_bones: bool,
    /// Angle remapping for head and eyes.
    pub axes: HeadAxes,
    /// Behaviour while no face is tracked.
    pub on_lost: OnLost,
}

impl Default for FaceOptions {
    fn default() -> Self {
        Self {
            case: BlendCase::Camel,
            clamp: true,
            head_bone: "Head".into(),
            eye_bones: false,
            axes: HeadAxes::default(),
            on_lost: OnLost::Hold,
        }
    }
}

/// Quaternion (x, y, z, w) of Euler angles in degrees (pitch about X, yaw
/// about Y, roll about Z), composed q = qx·qy·qz.
pub fn euler_to_quat(degrees: [f32; 3]) -> [f32; 4] {
    crate::quat::from_euler_f32(crate::quat::EulerOrder::Xyz, degrees)
}

/// A rotation from ARKit's right-handed frame (+Z towards the viewer) into
/// Unity's left-handed one (mirror Z): (x, y, z, w) → (−x, −y, z, w).
pub fn arkit_to_unity([x, y, z, w]: [f32; 4]) -> [f32; 4] {
    [-x, -y, z, w]
}

/// Turns face frames into VMC messages, remembering the last tracked pose.
#[derive(Debug, Default)]
pub struct FaceBridge {
    opts: FaceOptions,
    last: Option<Vec<Message>>,
    /// The VRM presets sent so far: the ones a neutral face resets.
    sent_presets: [bool; VRM0_PRESETS.len()],
}

impl FaceBridge {
    /// A bridge with these options.
    pub fn new(opts: FaceOptions) -> Self {
        Self {
            opts,
            ..Self::default()
        }
    }

    /// The VMC messages for one frame of any face protocol that converts
    /// into a [`FacePose`] (an iFacialMocap `&Frame`, …); see
    /// [`pose`](Self::pose). Names outside ARKit (`hapihapi`, `FM_*`, …) are
    /// not sent.
    pub fn messages(&mut self, frame: impl Into<FacePose>) -> Vec<Message> {
        self.pose(&frame.into())
    }

    /// The VMC messages for one face: every ARKit blendshape the frame
    /// carries as Blend/Val, then every VRM preset, one Blend/Apply, then
    /// the head (and eye) bones.
    pub fn pose(&mut self, frame: &FacePose) -> Vec<Message> {
        if frame.tracking == Some(false) {
            return match self.opts.on_lost {
                OnLost::Hold => self.last.clone().unwrap_or_default(),
                OnLost::Neutral => self.neutral(),
            };
        }
        let mut out = Vec::with_capacity(56);
        for (name, v) in ARKIT.iter().zip(frame.blendshapes) {
            if let Some(v) = v {
                out.push(self.blend(name, v));
            }
        }
        for ((name, v), sent) in VRM0_PRESETS
            .iter()
            .zip(frame.expressions)
            .zip(&mut self.sent_presets)
        {
            if let Some(v) = v {
                *sent = true;
                out.push(blend(&self.opts, name, v));
            }
        }
        out.push(Message::BlendApply);
        if let Some(q) = frame.head_rotation {
            out.push(Message::BonePos {
                name: self.opts.head_bone.clone(),
                pos: [0.0; 3],
                rot: self.opts.axes.apply_rotation(q),
            });
        } else if let Some(h) = frame.head {
            out.push(self.bone(&self.opts.head_bone, h));
        }
        if self.opts.eye_bones {
            if let Some(e) = frame.left_eye {
                out.push(self.bone("LeftEye", e));
            }
            if let Some(e) = frame.right_eye {
                out.push(self.bone("RightEye", e));
            }
        }
        if self.opts.on_lost == OnLost::Hold {
            self.last = Some(out.clone());
        }
        out
    }

    fn neutral(&self) -> Vec<Message> {
        let mut out: Vec<Message> = ARKIT.iter().map(|n| self.blend(n, 0.0)).collect();
        for (name, sent) in VRM0_PRESETS.iter().zip(self.sent_presets) {
            if sent {
                out.push(self.blend(name, 0.0));
            }
        }
        out.push(Message::BlendApply);
        out.push(self.bone(&self.opts.head_bone, [0.0; 3]));
        if self.opts.eye_bones {
            out.push(self.bone("LeftEye", [0.0; 3]));
            out.push(self.bone("RightEye", [0.0; 3]));
        }
        out
    }

    fn blend(&self, name: &str, value: f32) -> Message {
        blend(&self.opts, name, value)
    }

    fn bone(&self, name: &str, degrees: [f32; 3]) -> Message {
        Message::BonePos {
            name: name.to_owned(),
            pos: [0.0; 3],
            rot: arkit_to_unity(euler_to_quat(self.opts.axes.apply(degrees))),
        }
    }
}

/// One Blend/Val, spelt and clamped as the options say (VRM preset names
/// start with a capital already: either spelling keeps them).
fn blend(opts: &FaceOptions, name: &str, value: f32) -> Message {
    let value = if opts.clamp {
        value.clamp(0.0, 1.0)
    } else {
        value
    };
    let name = match opts.case {
        BlendCase::Camel => name.to_owned(),
        BlendCase::Pascal => {
            let mut c = name.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        }
    };
    Message::BlendVal { name, value }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ifm::parse_str;
    use crate::livelink::AngleUnit;

    const FRAME: &str = "trackingStatus-1|eyeBlink_L-97|jawOpen-150|mouthSmile_R-25|hapihapi-0|=head#10.0,0.0,0.0,0.0,0.0,-0.5|rightEye#1.0,2.0,0.0|leftEye#3.0,4.0,0.0|";

    fn close(a: [f32; 4], b: [f32; 4]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
    }

    fn run(opts: FaceOptions, text: &str) -> Vec<Message> {
        let frame = parse_str(text).expect("frame parses");
        FaceBridge::new(opts).messages(&frame)
    }

    fn vals(out: &[Message]) -> Vec<(String, f32)> {
        out.iter()
            .filter_map(|m| match m {
                Message::BlendVal { name, value } => Some((name.clone(), *value)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn names_scaling_clamping_and_apply_after_the_vals() {
        let out = run(FaceOptions::default(), FRAME);
        assert_eq!(
            vals(&out),
            [
                ("eyeBlinkLeft".to_owned(), 0.97),
                ("jawOpen".to_owned(), 1.0),
                ("mouthSmileRight".to_owned(), 0.25)
            ]
        );
        let apply = out.iter().position(|m| *m == Message::BlendApply);
        assert_eq!(apply, Some(3));
        assert!(matches!(&out[4], Message::BonePos { name, .. } if name == "Head"));
        assert_eq!(
            out.len(),
            5,
            "hapihapi and the eyes are not sent by default"
        );

        let opts = FaceOptions {
            case: BlendCase::Pascal,
            clamp: false,
            eye_bones: true,
            head_bone: "Neck".into(),
            ..FaceOptions::default()
        };
        let out = run(opts, FRAME);
        assert_eq!(vals(&out)[0], ("EyeBlinkLeft".to_owned(), 0.97));
        assert_eq!(vals(&out)[1], ("JawOpen".to_owned(), 1.5));
        let bones: Vec<&str> = out
            .iter()
            .filter_map(|m| match m {
                Message::BonePos { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(bones, ["Neck", "LeftEye", "RightEye"]);
    }

    #[test]
    fn pure_pitch_yaw_and_roll_turn_about_one_axis() {
        let (s, c) = (15f32.to_radians().sin(), 15f32.to_radians().cos());
        // 30° about one ARKit axis; X and Y flip sign into Unity, Z keeps it.
        assert!(close(
            arkit_to_unity(euler_to_quat([30.0, 0.0, 0.0])),
            [-s, 0.0, 0.0, c]
        ));
        assert!(close(
            arkit_to_unity(euler_to_quat([0.0, 30.0, 0.0])),
            [0.0, -s, 0.0, c]
        ));
        assert!(close(
            arkit_to_unity(euler_to_quat([0.0, 0.0, 30.0])),
            [0.0, 0.0, s, c]
        ));
        // Composition order: roll first, then yaw, then pitch.
        // qx(90°)·qy(90°) by hand: (½, ½, ½, ½); the other order gives (½, ½, −½, ½).
        assert!(close(
            euler_to_quat([90.0, 90.0, 0.0]),
            [0.5, 0.5, 0.5, 0.5]
        ));
    }

    #[test]
    fn head_axes_remap_and_flip() {
        let axes: HeadAxes = "-x,z,y".parse().unwrap();
        assert_eq!(axes.apply([1.0, 2.0, 3.0]), [-1.0, 3.0, 2.0]);
        assert_eq!(axes.to_string(), "-x,z,y");
        assert_eq!("x,y,z".parse::<HeadAxes>().unwrap(), HeadAxes::default());
        assert!("x,x,z".parse::<HeadAxes>().is_err());
        assert!("x,y".parse::<HeadAxes>().is_err());
        assert!("x,y,w".parse::<HeadAxes>().is_err());
        let opts = FaceOptions {
            axes,
            ..FaceOptions::default()
        };
        let out = run(opts, "=head#0.0,0.0,30.0,0.0,0.0,0.0|");
        // Incoming Z now drives yaw.
        let s = 15f32.to_radians().sin();
        assert!(
            matches!(&out[1], Message::BonePos { rot, .. } if (rot[1] + s).abs() < 1e-6 && rot[0].abs() < 1e-6)
        );
    }

    #[test]
    fn a_lost_face_holds_or_goes_neutral() {
        let lost = "trackingStatus-0|eyeBlink_L-10|=head#50.0,0.0,0.0,0.0,0.0,0.0|";
        let mut hold = FaceBridge::new(FaceOptions::default());
        let seen = hold.messages(&parse_str(FRAME).unwrap());
        assert_eq!(hold.messages(&parse_str(lost).unwrap()), seen);
        // Nothing seen yet: nothing to hold.
        assert!(
            FaceBridge::new(FaceOptions::default())
                .messages(&parse_str(lost).unwrap())
                .is_empty()
        );
        let mut neutral = FaceBridge::new(FaceOptions {
            on_lost: OnLost::Neutral,
            ..FaceOptions::default()
        });
        neutral.messages(&parse_str(FRAME).unwrap());
        let out = neutral.messages(&parse_str(lost).unwrap());
        let v = vals(&out);
        assert_eq!(v.len(), 52);
        assert!(v.iter().all(|(_, x)| *x == 0.0));
        assert_eq!(out.get(52), Some(&Message::BlendApply));
        assert!(matches!(&out[53], Message::BonePos { rot, .. } if *rot == [0.0, 0.0, 0.0, 1.0]));
    }

    #[test]
    fn a_live_link_face_reaches_vmc_like_an_ifm_frame() {
        use crate::livelink::{PacketRepr, parse};
        let mut values = vec![0.0f32; 61];
        values[0] = 0.97; // EyeBlinkLeft
        values[17] = 1.5; // JawOpen, clamped
        values[52] = 0.0; // head yaw
        values[53] = 10f32.to_radians(); // head pitch
        let bytes = PacketRepr {
            device: "d".into(),
            subject: "s".into(),
            frame: 1,
            subframe: 0.0,
            rate: [60, 1],
            values: Some(values),
        }
        .to_bytes();
        let packet = parse(&bytes).unwrap();
        let pose = FacePose::from_livelink(packet.face(), AngleUnit::Radians);
        let ifm = parse_str("eyeBlink_L-97|jawOpen-150|=head#10.0,0.0,0.0,0.0,0.0,0.0|").unwrap();
        let mut ours = FaceBridge::new(FaceOptions::default()).pose(&pose);
        let theirs = FaceBridge::new(FaceOptions::default()).messages(&ifm);
        // All 52 blendshapes are sent (Live Link sends every one), then Apply, then Head.
        assert_eq!(vals(&ours).len(), 52);
        assert_eq!(vals(&ours)[0], ("eyeBlinkLeft".to_owned(), 0.97));
        assert_eq!(vals(&ours)[17], ("jawOpen".to_owned(), 1.0));
        assert_eq!(ours[52], Message::BlendApply);
        let (Message::BonePos { rot: a, .. }, Message::BonePos { rot: b, .. }) =
            (ours.pop().unwrap(), theirs.last().unwrap().clone())
        else {
            panic!("head bones last");
        };
        assert!(close(a, b), "10° of pitch either way: {a:?} {b:?}");
        // No face: held like iFacialMocap's trackingStatus 0.
        let lost = FacePose::from_livelink(None, AngleUnit::Radians);
        assert_eq!(lost.tracking, Some(false));
        assert!(
            FaceBridge::new(FaceOptions::default())
                .pose(&lost)
                .is_empty()
        );
    }

    #[test]
    fn vrm_presets_go_before_apply_and_a_rotation_is_sent_as_given() {
        let mut pose = FacePose {
            tracking: Some(true),
            head: Some([50.0, 0.0, 0.0]),
            head_rotation: Some([0.0, 0.5, 0.0, 0.75f32.sqrt()]),
            ..FacePose::default()
        };
        // Blink_R (index 16) then A (index 1): sent in the preset list's order.
        pose.expressions[16] = Some(0.25);
        pose.expressions[1] = Some(1.5);
        pose.blendshapes[0] = Some(0.5); // eyeBlinkLeft: ARKit names come first
        let mut bridge = FaceBridge::new(FaceOptions {
            case: BlendCase::Pascal,
            on_lost: OnLost::Neutral,
            ..FaceOptions::default()
        });
        let out = bridge.pose(&pose);
        assert_eq!(
            vals(&out),
            [
                ("EyeBlinkLeft".to_owned(), 0.5),
                ("A".to_owned(), 1.0),
                ("Blink_R".to_owned(), 0.25),
            ]
        );
        assert_eq!(out[3], Message::BlendApply);
        // The rotation wins over the angles and is not converted again.
        assert_eq!(
            out[4],
            Message::BonePos {
                name: "Head".into(),
                pos: [0.0; 3],
                rot: [0.0, 0.5, 0.0, 0.75f32.sqrt()],
            }
        );
        assert_eq!(out.len(), 5);
        // A remap moves the turn from Y to Z and flips it.
        let axes: HeadAxes = "x,z,-y".parse().unwrap();
        assert_eq!(
            axes.apply_rotation([0.0, 0.5, 0.0, 0.75f32.sqrt()]),
            [0.0, 0.0, -0.5, 0.75f32.sqrt()]
        );
        // Going neutral resets the presets this bridge has sent, and no others.
        let lost = FacePose {
            tracking: Some(false),
            ..FacePose::default()
        };
        let v = vals(&bridge.pose(&lost));
        assert_eq!(v.len(), 52 + 2);
        assert_eq!(
            &v[52..],
            [("A".to_owned(), 0.0), ("Blink_R".to_owned(), 0.0)]
        );
    }
}
