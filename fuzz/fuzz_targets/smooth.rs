//! 1€ smoothing: `vmc::Smoother` over any VMC bones, blendshapes, sender
//! clocks and arrivals (what `--smooth` runs), and the filters of
//! `filter` fed directly with any f64 samples, times and the parameters the
//! command line accepts.
//!
//! Besides what the filters document (a finite sample gives a finite
//! output; a rotation output is unit length and in the last output's
//! hemisphere; a sample that cannot be used repeats the last output), one
//! property ties a stream's past to its future: whatever came before, a
//! sender that then behaves (a steady pose and clock at 60 fps for ten
//! seconds) is followed. A filter that any sample can leave frozen fails it.
#![no_main]

use std::collections::BTreeMap;

use libfuzzer_sys::fuzz_target;
use mocap_core::filter::{Params, Rotation, Scalar, Vector};
use mocap_fuzz::Bytes;
use mocap_core::quat::dot;
use mocap_core::vmc::{Message, SmoothOptions, Smoother};

const BONES: [&str; 3] = ["Hips", "Head", "LeftHand"];
const BLENDS: [&str; 2] = ["A", "Blink_L"];
/// Ten seconds at 60 fps: the slowest default cutoff (0.5 Hz) leaves an
/// error of 0.95^600 ≈ 1e-13 of where it started.
const STEADY: u32 = 600;
const TARGET_ROT: [f64; 4] = [0.0, 0.258_819_045_102_520_7, 0.0, 0.965_925_826_289_068_3];
const TARGET_POS: [f64; 3] = [0.1, 0.9, -0.2];
const TARGET_BLEND: f64 = 0.5;

fn usable(q: [f64; 4]) -> bool {
    let n = dot(q, q);
    n.is_finite() && n > 1e-24
}

fn unit(q: [f64; 4]) -> bool {
    q.iter().all(|v| v.is_finite()) && (dot(q, q).sqrt() - 1.0).abs() < 1e-6
}

/// Bits, but every NaN alike: a signalling NaN comes back quiet from the
/// f64 the filters work in, which is the same value.
fn bits<const N: usize>(a: [f32; N]) -> [u32; N] {
    a.map(|v| if v.is_nan() { f32::NAN.to_bits() } else { v.to_bits() })
}

/// The last output per name, to check "repeats the last output".
#[derive(Default)]
struct Last {
    rot: BTreeMap<&'static str, [f32; 4]>,
    pos: BTreeMap<&'static str, [f32; 3]>,
    blend: BTreeMap<&'static str, f32>,
}

fn smoother(mut b: Bytes) {
    let mut s = Smoother::new(SmoothOptions::default());
    let mut last = Last::default();
    let mut arrival = 0.0f64;
    // Names the prefix sent (the others would start afresh).
    let (mut bones, mut blends) = (Vec::new(), Vec::new());
    while let Some(op) = b.u8() {
        match op % 4 {
            0 => {
                let name = BONES[usize::from(op / 4) % BONES.len()];
                let (Some(pos), Some(rot)) = (b.f32s::<3>(), b.f32s::<4>()) else { break };
                if !bones.contains(&name) {
                    bones.push(name);
                }
                let mut m = Message::BonePos { name: name.into(), pos, rot };
                s.handle_message(at(arrival), &mut m);
                let Message::BonePos { name: got, pos: out_pos, rot: out_rot } = m else {
                    panic!("a bone became {m:?}")
                };
                assert_eq!(got, name);
                let wide = out_rot.map(f64::from);
                assert!(unit(wide), "rotation {rot:?} gave {out_rot:?}");
                if !usable(rot.map(f64::from)) {
                    let before = last.rot.get(name).copied().unwrap_or([0.0, 0.0, 0.0, 1.0]);
                    assert_eq!(bits(out_rot), bits(before), "an unusable rotation repeats the last");
                } else if let Some(before) = last.rot.get(name) {
                    assert!(dot(wide, before.map(f64::from)) >= -1e-6, "{before:?} to {out_rot:?} flipped");
                }
                if pos.iter().all(|v| v.is_finite()) {
                    assert!(out_pos.iter().all(|v| v.is_finite()), "position {pos:?} gave {out_pos:?}");
                } else {
                    let before = last.pos.get(name).copied().unwrap_or(pos);
                    assert_eq!(bits(out_pos), bits(before), "a non-finite position repeats the last");
                }
                if usable(rot.map(f64::from)) || last.rot.contains_key(name) {
                    last.rot.insert(name, out_rot);
                }
                if pos.iter().all(|v| v.is_finite()) || last.pos.contains_key(name) {
                    last.pos.insert(name, out_pos);
                }
            }
            1 => {
                let name = BLENDS[usize::from(op / 4) % BLENDS.len()];
                let Some(value) = b.f32() else { break };
                if !blends.contains(&name) {
                    blends.push(name);
                }
                let mut m = Message::BlendVal { name: name.into(), value };
                s.handle_message(at(arrival), &mut m);
                let Message::BlendVal { name: got, value: out } = m else { panic!("a blendshape became {m:?}") };
                assert_eq!(got, name);
                if value.is_finite() {
                    assert!(out.is_finite(), "blendshape {value} gave {out}");
                    last.blend.insert(name, out);
                } else if let Some(before) = last.blend.get(name) {
                    assert_eq!(out.to_bits(), before.to_bits(), "a non-finite weight repeats the last");
                }
            }
            2 => {
                let Some(t) = b.f32() else { break };
                let mut m = Message::Time(t);
                s.handle_message(at(arrival), &mut m);
                assert!(matches!(m, Message::Time(x) if x.to_bits() == t.to_bits()), "T changed: {m:?}");
            }
            _ => {
                // Arrivals come from a monotonic clock: up to 6.5 s later.
                let Some(d) = b.take::<2>() else { break };
                arrival += f64::from(u16::from_le_bytes(d)) * 1e-4;
            }
        }
    }

    // A sender that behaves: every name it sent, a steady pose, T at 60 fps.
    if bones.is_empty() && blends.is_empty() {
        return;
    }
    let (mut rot, mut pos, mut blend) = ([0.0f32; 4], [0.0f32; 3], 0.0f32);
    for k in 0..STEADY {
        arrival += 1.0 / 60.0;
        for &name in &bones {
            let mut m = Message::BonePos {
                name: name.into(),
                pos: TARGET_POS.map(|v| v as f32),
                rot: TARGET_ROT.map(|v| v as f32),
            };
            s.handle_message(at(arrival), &mut m);
            if let Message::BonePos { pos: p, rot: r, .. } = m {
                (pos, rot) = (p, r);
            }
            if k == STEADY - 1 {
                let angle = 2.0 * dot(rot.map(f64::from), TARGET_ROT).abs().min(1.0).acos();
                assert!(angle < 1e-3, "{name}: still {angle} rad from a steady rotation after {STEADY} frames");
                let off = pos.iter().zip(TARGET_POS).map(|(a, b)| (f64::from(*a) - b).abs()).fold(0.0, f64::max);
                assert!(off < 1e-4, "{name}: still {off} from a steady position after {STEADY} frames");
            }
        }
        for &name in &blends {
            let mut m = Message::BlendVal { name: name.into(), value: TARGET_BLEND as f32 };
            s.handle_message(at(arrival), &mut m);
            if let Message::BlendVal { value, .. } = m {
                blend = value;
            }
            if k == STEADY - 1 {
                let off = (f64::from(blend) - TARGET_BLEND).abs();
                assert!(off < 1e-4, "{name}: still {off} from a steady weight after {STEADY} frames");
            }
        }
        s.handle_message(at(arrival), &mut Message::Time(k as f32 / 60.0));
    }
}

/// A parameter as the command line accepts it: finite, above 0 (or at
/// least 0 for beta).
fn param(v: Option<f64>, default: f64, zero_ok: bool) -> f64 {
    match v {
        Some(v) if v.is_finite() && (v > 0.0 || (zero_ok && v == 0.0)) => v,
        _ => default,
    }
}

fn filters(mut b: Bytes) {
    let (Some(flags), Some(rate)) = (b.u8(), b.f64()) else { return };
    // Even flags: the defaults, and the steady sender must be followed;
    // odd: any parameters the command line accepts, and only the
    // documented per-sample properties hold (a tiny cutoff may follow
    // nothing within ten seconds, by design).
    let custom = flags & 1 == 1;
    let params = |d: Params, b: &mut Bytes| {
        if custom {
            Params {
                min_cutoff: param(b.f64(), d.min_cutoff, false),
                beta: param(b.f64(), d.beta, true),
                dcutoff: param(b.f64(), d.dcutoff, false),
            }
        } else {
            d
        }
    };
    let mut scalar = Scalar::new(params(Params::BLEND, &mut b), rate);
    let mut vector = Vector::new(params(Params::POSITION, &mut b), rate);
    let mut rotation = Rotation::new(params(Params::ROTATION, &mut b), rate);
    let (mut last_x, mut last_v, mut last_q) = (None::<f64>, None::<[f64; 3]>, None::<[f64; 4]>);
    while let Some(op) = b.u8() {
        let t = (op & 4 == 0).then(|| b.f64()).flatten();
        match op % 4 {
            0 => {
                let Some(x) = b.f64() else { break };
                let y = scalar.filter(x, t);
                if x.is_finite() {
                    assert!(y.is_finite(), "{x} at {t:?} gave {y}");
                    last_x = Some(y);
                } else if let Some(l) = last_x {
                    assert_eq!(y.to_bits(), l.to_bits(), "a non-finite sample repeats the last");
                }
            }
            1 => {
                let (Some(a), Some(c), Some(d)) = (b.f64(), b.f64(), b.f64()) else { break };
                let x = [a, c, d];
                let y = vector.filter(x, t);
                if x.iter().all(|v| v.is_finite()) {
                    assert!(y.iter().all(|v| v.is_finite()), "{x:?} at {t:?} gave {y:?}");
                    last_v = Some(y);
                } else if let Some(l) = last_v {
                    assert_eq!(y.map(f64::to_bits), l.map(f64::to_bits), "a non-finite sample repeats the last");
                }
            }
            _ => {
                let (Some(a), Some(c), Some(d), Some(e)) = (b.f64(), b.f64(), b.f64(), b.f64()) else { break };
                let q = [a, c, d, e];
                let y = rotation.filter(q, t);
                assert!(unit(y), "{q:?} at {t:?} gave {y:?}");
                match last_q {
                    Some(l) if !usable(q) => assert_eq!(y, l, "an unusable rotation repeats the last"),
                    Some(l) => assert!(dot(y, l) >= -1e-9, "{l:?} to {y:?} flipped"),
                    None => {}
                }
                if usable(q) || last_q.is_some() {
                    last_q = Some(y);
                }
            }
        }
    }
    if custom {
        return;
    }
    let (mut x, mut v, mut q) = (0.0, [0.0; 3], [0.0; 4]);
    for k in 0..STEADY {
        let t = Some(f64::from(k) / 60.0);
        x = scalar.filter(TARGET_BLEND, t);
        v = vector.filter(TARGET_POS, t);
        q = rotation.filter(TARGET_ROT, t);
    }
    assert!((x - TARGET_BLEND).abs() < 1e-6, "scalar still at {x} after {STEADY} steady samples");
    let off = v.iter().zip(TARGET_POS).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(off < 1e-6, "vector still {off} off after {STEADY} steady samples");
    let angle = 2.0 * dot(q, TARGET_ROT).abs().min(1.0).acos();
    assert!(angle < 1e-6, "rotation still {angle} rad off after {STEADY} steady samples");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 0 {
        smoother(Bytes(rest));
    } else {
        filters(Bytes(rest));
    }
});

/// Seconds as the Duration the state machines take (none for a time
/// before zero or not finite).
fn at(seconds: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(seconds).unwrap_or_default()
}
