//! Live VMC in, DLP3D frames out: the target rig (joint names and rest
//! rotations), VMC bone rotations turned into the rig's parent-relative
//! rotations, blendshape names learnt from the input, 30 fps resampling,
//! and the PCM that goes with each frame. Pure: times are given.

use std::collections::HashMap;

use super::math::{Pose, Resampler, unity_to_babylon};
use super::{AUDIO_RATE, FPS};
use crate::quat;
use crate::vmc::{HUMAN_BODY_BONES, Message};

/// The joints a stream declares, in body order, with each joint's rest
/// rotation relative to its parent (identity for a humanoid whose bones
/// rest at zero, as VMC's normalised humanoid bones do).
#[derive(Clone, Debug, PartialEq)]
pub struct Rig {
    /// Joint names (`motion_joint_names`).
    pub joints: Vec<String>,
    /// Parent-relative rest rotation per joint, (x, y, z, w).
    pub rest: Vec<[f32; 4]>,
}

impl Rig {
    /// Unity's 55 HumanBodyBones, at rest at identity.
    pub fn humanoid() -> Self {
        Self {
            joints: HUMAN_BODY_BONES.iter().map(|b| (*b).to_owned()).collect(),
            rest: vec![[0.0, 0.0, 0.0, 1.0]; HUMAN_BODY_BONES.len()],
        }
    }

    /// Reads a joints file: one joint per line, a name optionally followed
    /// by its parent-relative rest rotation `qx qy qz qw`; `#` starts a
    /// comment. The names are the avatar's (they must match the rest pose
    /// the client loaded); a name that is also a HumanBodyBones name is
    /// driven by that VMC bone.
    ///
    /// # Errors
    /// An empty list, a repeated name, a rotation that is not four finite
    /// numbers; with the line number.
    pub fn parse(text: &str) -> Result<Self, RigError> {
        let mut rig = Self {
            joints: Vec::new(),
            rest: Vec::new(),
        };
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let mut parts = line.split_whitespace();
            let Some(name) = parts.next() else { continue };
            let nums: Vec<&str> = parts.collect();
            let rest = match nums.as_slice() {
                [] => [0.0, 0.0, 0.0, 1.0],
                [x, y, z, w] => {
                    let q: Vec<f32> = [x, y, z, w]
                        .iter()
                        .map(|s| s.parse::<f32>().ok().filter(|v| v.is_finite()))
                        .collect::<Option<_>>()
                        .ok_or_else(|| RigError::BadRotation {
                            line: i + 1,
                            text: line.to_owned(),
                        })?;
                    let n = q.iter().map(|v| v * v).sum::<f32>().sqrt();
                    if n < 1e-6 {
                        return Err(RigError::ZeroRotation { line: i + 1 });
                    }
                    [q.first(), q.get(1), q.get(2), q.get(3)].map(|v| v.copied().unwrap_or(0.0) / n)
                }
                _ => {
                    return Err(RigError::BadLine {
                        line: i + 1,
                        text: line.to_owned(),
                    });
                }
            };
            if rig.joints.iter().any(|j| j == name) {
                return Err(RigError::Repeated {
                    line: i + 1,
                    name: name.to_owned(),
                });
            }
            rig.joints.push(name.to_owned());
            rig.rest.push(rest);
        }
        if rig.joints.is_empty() {
            return Err(RigError::Empty);
        }
        Ok(rig)
    }
}

/// A joints file that cannot be used; lines count from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RigError {
    /// A rotation that is not four finite numbers.
    BadRotation {
        /// Line number.
        line: usize,
        /// The line (comment removed).
        text: String,
    },
    /// A rotation of length zero.
    ZeroRotation {
        /// Line number.
        line: usize,
    },
    /// Neither a name nor a name and four numbers.
    BadLine {
        /// Line number.
        line: usize,
        /// The line (comment removed).
        text: String,
    },
    /// A joint named twice.
    Repeated {
        /// Line number of the second.
        line: usize,
        /// The name.
        name: String,
    },
    /// No joints at all.
    Empty,
}

impl std::fmt::Display for RigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::BadRotation { line, text } => {
                write!(f, "line {line}: {text:?}: the rotation is not four numbers")
            }
            Self::ZeroRotation { line } => write!(f, "line {line}: a zero rotation"),
            Self::BadLine { line, text } => write!(
                f,
                "line {line}: {text:?}: expected a name, optionally followed by qx qy qz qw"
            ),
            Self::Repeated { line, name } => write!(f, "line {line}: {name} is listed twice"),
            Self::Empty => f.write_str("no joints listed"),
        }
    }
}

impl std::error::Error for RigError {}

/// `a · b` for f32 quaternions, computed wide.
fn qmul(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    quat::mul(quat::wide(a), quat::wide(b)).map(|v| v as f32)
}

/// Most blendshape names learnt from the input (ARKit has 52, VRM presets
/// 17); names past this are ignored, so a flood of names cannot grow memory.
pub const MAX_BLENDSHAPES: usize = 256;

/// VMC messages in, 30 fps poses out, in a rig's joint order.
#[derive(Clone, Debug)]
pub struct Live {
    rig: Rig,
    index: HashMap<String, usize>,
    blends: Vec<String>,
    blend_index: HashMap<String, usize>,
    /// Names are fixed (`--blendshapes FILE`): others are ignored.
    fixed_blends: bool,
    local: Vec<[f32; 4]>,
    weights: Vec<f32>,
    staged: Vec<(usize, f32)>,
    hips: [f32; 3],
    root: ([f32; 3], [f32; 4]),
    resampler: Resampler,
    frames_in: u64,
    /// Whether anything arrived since the last frame end.
    dirty: bool,
    /// Messages skipped for a NaN or infinite value.
    non_finite: u64,
}

impl Live {
    /// A converter for `rig`; `blendshapes` fixes the face names (else they
    /// are learnt from the input, in the order first seen).
    pub fn new(rig: Rig, blendshapes: Option<Vec<String>>) -> Self {
        let index = rig
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| (j.clone(), i))
            .collect();
        let fixed_blends = blendshapes.is_some();
        let blends = blendshapes.unwrap_or_default();
        let blend_index = blends
            .iter()
            .enumerate()
            .map(|(i, b)| (b.clone(), i))
            .collect();
        let n = rig.joints.len();
        Self {
            rig,
            index,
            weights: vec![0.0; blends.len()],
            blends,
            blend_index,
            fixed_blends,
            local: vec![[0.0, 0.0, 0.0, 1.0]; n],
            staged: Vec::new(),
            hips: [0.0; 3],
            root: ([0.0; 3], [0.0, 0.0, 0.0, 1.0]),
            resampler: Resampler::new(f64::from(FPS)),
            frames_in: 0,
            dirty: false,
            non_finite: 0,
        }
    }

    /// The rig.
    pub fn rig(&self) -> &Rig {
        &self.rig
    }

    /// Blendshape names so far; later names are only ever appended, so a
    /// client that started with the first B keeps a valid prefix.
    pub fn blendshapes(&self) -> &[String] {
        &self.blends
    }

    /// VMC frames completed so far.
    pub fn frames_in(&self) -> u64 {
        self.frames_in
    }

    /// Messages skipped so far for a NaN or infinite value.
    pub fn non_finite(&self) -> u64 {
        self.non_finite
    }

    /// Takes one VMC message received at `t` seconds; when it ends a
    /// sender's frame (OK, T, Apply), returns the 30 fps poses that are now
    /// due.
    /// A bone, root or blendshape value with a NaN or infinite number is
    /// skipped: the last good one stands, and no frame carries it.
    pub fn message(&mut self, t: f64, m: &Message) -> Vec<Pose> {
        if !m.values_finite() {
            self.non_finite += 1;
            return Vec::new();
        }
        match m {
            Message::BonePos { name, pos, rot } => {
                if let Some(slot) = self
                    .index
                    .get(name.as_str())
                    .and_then(|i| self.local.get_mut(*i))
                {
                    *slot = *rot;
                }
                if name == "Hips" {
                    self.hips = *pos;
                }
                self.dirty = true;
            }
            Message::RootPos { pos, rot, .. } => {
                self.root = (*pos, *rot);
                self.dirty = true;
            }
            Message::BlendVal { name, value } => {
                let i = match self.blend_index.get(name.as_str()) {
                    Some(i) => Some(*i),
                    None if !self.fixed_blends
                        && self.blends.len() < MAX_BLENDSHAPES
                        && name.len() <= crate::vmc::MAX_NAME_LEN =>
                    {
                        self.blends.push(name.clone());
                        self.weights.push(0.0);
                        let i = self.blends.len() - 1;
                        self.blend_index.insert(name.clone(), i);
                        Some(i)
                    }
                    None => None,
                };
                // One staged value per name: a sender that never applies
                // cannot grow this past the name count.
                if let Some(i) = i {
                    match self.staged.iter_mut().find(|(j, _)| *j == i) {
                        Some(slot) => slot.1 = *value,
                        None => self.staged.push((i, *value)),
                    }
                }
                self.dirty = true;
            }
            Message::BlendApply => {
                for (i, v) in self.staged.drain(..) {
                    if let Some(w) = self.weights.get_mut(i) {
                        *w = if v.is_finite() { v } else { 0.0 };
                    }
                }
            }
            _ => {}
        }
        if !m.ends_frame() || !self.dirty {
            return Vec::new();
        }
        self.dirty = false;
        self.frames_in += 1;
        let pose = self.pose();
        self.resampler.push(t, pose)
    }

    /// The current pose: rest · VMC local rotation per joint; the root is
    /// the Hips' world position (through Root/Pos) in Babylon units.
    pub fn pose(&self) -> Pose {
        let (root_pos, root_rot) = self.root;
        let h = quat::rotate(quat::wide(root_rot), self.hips.map(f64::from)).map(|v| v as f32);
        Pose {
            rotations: self
                .rig
                .rest
                .iter()
                .zip(&self.local)
                .map(|(r, l)| qmul(*r, *l))
                .collect(),
            root: unity_to_babylon([root_pos[0] + h[0], root_pos[1] + h[1], root_pos[2] + h[2]]),
            weights: self.weights.clone(),
        }
    }
}

/// PCM samples for motion frame `k` at 30 fps and 16 kHz: 533 or 534, so
/// that audio and motion never drift apart.
pub fn samples_for_frame(k: u64) -> usize {
    let rate = u64::from(AUDIO_RATE);
    let fps = u64::from(FPS);
    usize::try_from((k + 1) * rate / fps - k * rate / fps).unwrap_or(0)
}

/// PCM samples before motion frame `k` (the sum of [`samples_for_frame`]
/// over the frames before it, in closed form).
pub fn samples_before_frame(k: u64) -> usize {
    usize::try_from(k * u64::from(AUDIO_RATE) / u64::from(FPS)).unwrap_or(usize::MAX)
}

/// A WAV file as 16 kHz mono 16-bit samples: PCM 8/16/24/32-bit or IEEE
/// float, any rate and channel count; channels are averaged and the rate
/// converted linearly.
///
/// # Errors
/// Not RIFF/WAVE, no `fmt ` or `data` chunk, an unsupported encoding.
pub fn wav_to_pcm16k(bytes: &[u8]) -> Result<Vec<i16>, WavError> {
    let u16le = |b: &[u8], at: usize| {
        b.get(at..at + 2)
            .and_then(|s| s.try_into().ok())
            .map(u16::from_le_bytes)
    };
    let u32le = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .and_then(|s| s.try_into().ok())
            .map(u32::from_le_bytes)
    };
    if bytes.get(0..4) != Some(b"RIFF") || bytes.get(8..12) != Some(b"WAVE") {
        return Err(WavError::NotWave);
    }
    let mut at = 12usize;
    let mut fmt = None;
    let mut data = None;
    while let (Some(id), Some(len)) = (bytes.get(at..at + 4), u32le(bytes, at + 4)) {
        let len = len as usize;
        let body = at + 8;
        let chunk = bytes
            .get(body..body.saturating_add(len))
            .or_else(|| bytes.get(body..));
        match (id, chunk) {
            (b"fmt ", Some(c)) => fmt = Some(c),
            (b"data", Some(c)) => data = Some(c),
            _ => {}
        }
        // Chunks are padded to even lengths.
        at = body.saturating_add(len).saturating_add(len & 1);
    }
    let fmt = fmt.ok_or(WavError::NoFmt)?;
    let data = data.ok_or(WavError::NoData)?;
    let (Some(format), Some(channels), Some(rate), Some(bits)) =
        (u16le(fmt, 0), u16le(fmt, 2), u32le(fmt, 4), u16le(fmt, 14))
    else {
        return Err(WavError::ShortFmt);
    };
    // WAVE_FORMAT_EXTENSIBLE keeps the real format in its sub-format GUID.
    let format = if format == 0xfffe {
        u16le(fmt, 24).unwrap_or(0)
    } else {
        format
    };
    let width = usize::from(bits / 8);
    if channels == 0 || width == 0 {
        return Err(WavError::Empty);
    }
    // Real audio; also bounds the output a forged header can ask for.
    if !(4_000..=384_000).contains(&rate) {
        return Err(WavError::Rate(rate));
    }
    let sample = |s: &[u8]| -> Option<f32> {
        match (format, bits) {
            (1, 8) => s.first().map(|b| (f32::from(*b) - 128.0) / 128.0),
            (1, 16) => s
                .try_into()
                .ok()
                .map(|b| f32::from(i16::from_le_bytes(b)) / 32768.0),
            (1, 24) => match s {
                [a, b, c] => Some(i32::from_le_bytes([0, *a, *b, *c]) as f32 / 2_147_483_648.0),
                _ => None,
            },
            (1, 32) => s
                .try_into()
                .ok()
                .map(|b| i32::from_le_bytes(b) as f32 / 2_147_483_648.0),
            (3, 32) => s.try_into().ok().map(f32::from_le_bytes),
            _ => None,
        }
    };
    if sample(&vec![0; width]).is_none() {
        return Err(WavError::Encoding { format, bits });
    }
    let frame = width * usize::from(channels);
    let mono: Vec<f32> = data
        .chunks_exact(frame)
        .map(|f| {
            let sum: f32 = f.chunks_exact(width).filter_map(sample).sum();
            sum / f32::from(channels)
        })
        .collect();
    let ratio = f64::from(rate) / f64::from(AUDIO_RATE);
    let out_len = (mono.len() as f64 / ratio).floor() as usize;
    Ok((0..out_len)
        .map(|i| {
            let x = i as f64 * ratio;
            let j = x.floor() as usize;
            let f = (x - x.floor()) as f32;
            let a = mono.get(j).copied().unwrap_or(0.0);
            let b = mono.get(j + 1).copied().unwrap_or(a);
            let v = (a + (b - a) * f).clamp(-1.0, 1.0);
            (v * 32767.0).round() as i16
        })
        .collect())
}

/// A WAV file that cannot be read as audio.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WavError {
    /// Not RIFF/WAVE.
    NotWave,
    /// No `fmt ` chunk.
    NoFmt,
    /// No `data` chunk.
    NoData,
    /// A `fmt ` chunk too short for its fields.
    ShortFmt,
    /// Zero channels or a zero sample width.
    Empty,
    /// A sample rate outside 4–384 kHz.
    Rate(u32),
    /// An encoding not read (WAVE format tag and bits per sample).
    Encoding {
        /// The format tag (1 PCM, 3 IEEE float).
        format: u16,
        /// Bits per sample.
        bits: u16,
    },
}

impl std::fmt::Display for WavError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotWave => f.write_str("not a RIFF/WAVE file"),
            Self::NoFmt => f.write_str("no fmt chunk"),
            Self::NoData => f.write_str("no data chunk"),
            Self::ShortFmt => f.write_str("fmt chunk too short"),
            Self::Empty => f.write_str("zero channels or sample width"),
            Self::Rate(rate) => write!(f, "sample rate {rate} Hz (expected 4000–384000)"),
            Self::Encoding { format, bits } => {
                write!(f, "unsupported WAV encoding (format {format}, {bits} bits)")
            }
        }
    }
}

impl std::error::Error for WavError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlp3d::quat_to_mat;
    use mocap_testutil::Rng;

    fn bone(name: &str, pos: [f32; 3], rot: [f32; 4]) -> Message {
        Message::BonePos {
            name: name.into(),
            pos,
            rot,
        }
    }

    fn about(axis: [f32; 3], deg: f32) -> [f32; 4] {
        let (s, c) = (deg.to_radians() / 2.0).sin_cos();
        [axis[0] * s, axis[1] * s, axis[2] * s, c]
    }

    #[test]
    fn vmc_frames_become_rig_poses_at_30_fps() {
        let rig = Rig::parse(
            "Hips\nSpine 0 0.7071068 0 0.7071068 # rests turned 90° about Y\nLeftHand\n",
        )
        .unwrap();
        let mut live = Live::new(rig, None);
        let mut out = Vec::new();
        for k in 0..=6 {
            let t = f64::from(k) / 60.0;
            let deg = 6.0 * k as f32;
            for m in [
                bone("Hips", [0.0, 1.0, 0.01 * k as f32], [0.0, 0.0, 0.0, 1.0]),
                bone("Spine", [0.0; 3], about([1.0, 0.0, 0.0], deg)),
                bone("Head", [0.0; 3], about([0.0, 1.0, 0.0], 45.0)),
                Message::BlendVal {
                    name: "jawOpen".into(),
                    value: 0.1 * k as f32,
                },
                Message::BlendApply,
                Message::Time(t as f32),
            ] {
                out.extend(live.message(t, &m));
            }
        }
        // 7 frames at 60 fps span 0.1 s: 4 frames at 30 fps.
        assert_eq!(out.len(), 4);
        assert_eq!(live.blendshapes(), ["jawOpen"]);
        for (j, p) in out.iter().enumerate() {
            let k = 2.0 * j as f32;
            // Spine = rest (90° about Y) · VMC local (6k° about X).
            let want = quat_to_mat(qmul(
                [
                    0.0,
                    std::f32::consts::FRAC_1_SQRT_2,
                    0.0,
                    std::f32::consts::FRAC_1_SQRT_2,
                ],
                about([1.0, 0.0, 0.0], 6.0 * k),
            ));
            let got = quat_to_mat(p.rotations[1]);
            assert!(
                got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-5),
                "{j}"
            );
            // A joint the input never names stays at its rest.
            assert_eq!(p.rotations[2], [0.0, 0.0, 0.0, 1.0]);
            // Hips at (0, 1, 0.01k) m → ×100 Babylon units.
            assert!((p.root[1] - 100.0).abs() < 1e-4);
            assert!((p.root[2] - k).abs() < 1e-3, "{:?}", p.root);
            assert!((p.weights[0] - 0.1 * k).abs() < 1e-5);
        }
    }

    /// A NaN in one bone or the root must not reach a frame (a NaN root
    /// froze the viewer): the last good value stands.
    #[test]
    fn non_finite_values_are_skipped_and_the_last_good_one_stands() {
        let mut live = Live::new(Rig::humanoid(), None);
        let mut out = Vec::new();
        for k in 0..=12u32 {
            let t = f64::from(k) / 60.0;
            let bad = k % 2 == 1;
            let x = if bad { f32::NAN } else { 0.01 };
            let r = if bad { f32::INFINITY } else { 0.0 };
            for m in [
                bone("Hips", [x, 1.0, 0.0], [r, 0.0, 0.0, 1.0]),
                Message::RootPos {
                    name: "root".into(),
                    pos: [x; 3],
                    rot: [0.0, r, 0.0, 1.0],
                    mr: None,
                },
                Message::BlendVal {
                    name: "jawOpen".into(),
                    value: if bad { f32::NAN } else { 0.5 },
                },
                Message::BlendApply,
                Message::Time(t as f32),
            ] {
                out.extend(live.message(t, &m));
            }
        }
        assert!(!out.is_empty());
        for p in &out {
            let all = p
                .rotations
                .iter()
                .flatten()
                .chain(&p.root)
                .chain(&p.weights);
            assert!(all.clone().all(|v| v.is_finite()), "{p:?}");
            assert!((p.weights[0] - 0.5).abs() < 1e-6);
        }
        assert_eq!(live.non_finite(), 6 * 3);
    }

    #[test]
    fn fixed_blendshape_names_ignore_others_and_learnt_names_only_grow() {
        let mut live = Live::new(Rig::humanoid(), Some(vec!["A".into(), "B".into()]));
        for m in [
            Message::BlendVal {
                name: "C".into(),
                value: 1.0,
            },
            Message::BlendVal {
                name: "B".into(),
                value: 0.5,
            },
            Message::BlendApply,
        ] {
            live.message(0.0, &m);
        }
        assert_eq!(live.blendshapes(), ["A", "B"]);
        assert_eq!(live.pose().weights, [0.0, 0.5]);
        let mut live = Live::new(Rig::humanoid(), None);
        for name in ["x", "y", "x", "z"] {
            live.message(
                0.0,
                &Message::BlendVal {
                    name: name.into(),
                    value: 1.0,
                },
            );
        }
        assert_eq!(live.blendshapes(), ["x", "y", "z"]);
        assert_eq!(live.rig().joints.len(), 55);
        // A flood of names stops at the cap; staged values stay one per name.
        let mut live = Live::new(Rig::humanoid(), None);
        for i in 0..10_000 {
            live.message(
                0.0,
                &Message::BlendVal {
                    name: format!("n{}", i % 1000),
                    value: 1.0,
                },
            );
        }
        assert_eq!(live.blendshapes().len(), MAX_BLENDSHAPES);
        assert_eq!(live.staged.len(), MAX_BLENDSHAPES);
    }

    #[test]
    fn joints_files_are_checked() {
        let bad_line = |text: &str| RigError::BadLine {
            line: 1,
            text: text.into(),
        };
        for (bad, want) in [
            ("", RigError::Empty),
            ("# only a comment", RigError::Empty),
            (
                "A\nA",
                RigError::Repeated {
                    line: 2,
                    name: "A".into(),
                },
            ),
            ("A 1 2 3", bad_line("A 1 2 3")),
            ("A 0 0 0 0", RigError::ZeroRotation { line: 1 }),
            (
                "A x y z w",
                RigError::BadRotation {
                    line: 1,
                    text: "A x y z w".into(),
                },
            ),
        ] {
            assert_eq!(Rig::parse(bad), Err(want), "{bad:?}");
        }
        let rig = Rig::parse("  Hips  \n\nHead 0 0 2 0\n").unwrap();
        assert_eq!(rig.joints, ["Hips", "Head"]);
        assert_eq!(rig.rest[1], [0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn audio_keeps_pace_with_motion() {
        let total: usize = (0..30).map(samples_for_frame).sum();
        assert_eq!(total, 16_000);
        assert!((0..300).all(|k| (533..=534).contains(&samples_for_frame(k))));
        let mut sum = 0;
        for k in 0..1000 {
            assert_eq!(samples_before_frame(k), sum);
            sum += samples_for_frame(k);
        }
    }

    fn wav(rate: u32, channels: u16, samples: &[i16]) -> Vec<u8> {
        let data: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        let mut w = Vec::new();
        w.extend_from_slice(b"RIFF");
        w.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
        w.extend_from_slice(b"WAVEfmt ");
        w.extend_from_slice(&16u32.to_le_bytes());
        w.extend_from_slice(&1u16.to_le_bytes());
        w.extend_from_slice(&channels.to_le_bytes());
        w.extend_from_slice(&rate.to_le_bytes());
        w.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
        w.extend_from_slice(&(channels * 2).to_le_bytes());
        w.extend_from_slice(&16u16.to_le_bytes());
        w.extend_from_slice(b"data");
        w.extend_from_slice(&(data.len() as u32).to_le_bytes());
        w.extend_from_slice(&data);
        w
    }

    #[test]
    fn wav_files_become_16k_mono() {
        let same = wav(16_000, 1, &[0, 1000, -1000, 32767]);
        assert_eq!(wav_to_pcm16k(&same).unwrap(), [0, 1000, -1000, 32766]);
        // 32 kHz stereo: every other frame, the two channels averaged.
        let stereo = wav(32_000, 2, &[100, 300, 0, 0, 500, 700, 0, 0]);
        assert_eq!(wav_to_pcm16k(&stereo).unwrap(), [200, 600]);
        assert_eq!(wav_to_pcm16k(b"RIFF\0\0\0\0WAVE"), Err(WavError::NoFmt));
        assert_eq!(wav_to_pcm16k(b"not a wav"), Err(WavError::NotWave));
        assert_eq!(
            wav_to_pcm16k(&wav(1, 1, &[0; 1000])),
            Err(WavError::Rate(1))
        );
        // Damaged files: any result, never a panic.
        let mut rng = Rng(0x3a7);
        for i in 0..same.len() {
            let _ = wav_to_pcm16k(&same[..i]);
        }
        for _ in 0..20_000 {
            let mut v = stereo.clone();
            let i = rng.below(v.len());
            v[i] = rng.next() as u8;
            let _ = wav_to_pcm16k(&v);
        }
    }
}
