//! 1€ smoothing of a VMC stream ([`crate::filter`]): bone rotations on the
//! sphere, bone positions as vectors, blendshape values as scalars. Root,
//! Apply, OK, T and every other message pass untouched. Pure: messages and
//! their arrival time in, smoothed messages out.
//!
//! Timestamps: the sender's `/VMC/Ext/T` when it is sane (finite, moving
//! forward by less than a second each time), else arrival. A frame's bones
//! come before its T, so they are stamped with the previous frame's T: every
//! bone is one frame behind the same way, and the periods the filters see are
//! the sender's own.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{MAX_NAME_LEN, Message};
use crate::filter::{self, Params};

/// What to smooth and how.
#[derive(Clone, Debug, PartialEq)]
pub struct SmoothOptions {
    /// Bone rotations.
    pub rotation: Params,
    /// Bone positions (metres).
    pub position: Params,
    /// Blendshape values.
    pub blend: Params,
    /// Only these bones (`None`: every bone).
    pub bones: Option<Vec<String>>,
    /// Smooth Blend/Val too.
    pub blends: bool,
}

impl Default for SmoothOptions {
    fn default() -> Self {
        Self {
            rotation: Params::ROTATION,
            position: Params::POSITION,
            blend: Params::BLEND,
            bones: None,
            blends: true,
        }
    }
}

/// The smoothing state of one stream (one sender): a filter per bone and per
/// blendshape it has sent, so memory is bounded by what the stream names.
#[derive(Clone, Debug)]
pub struct Smoother {
    opts: SmoothOptions,
    bones: BTreeMap<String, (filter::Rotation, filter::Vector)>,
    blends: BTreeMap<String, filter::Scalar>,
    /// The last sane sender clock.
    clock: Option<f64>,
}

/// The rate filters assume until timestamps give one.
const RATE: f64 = 60.0;
/// The most names one stream may have filters for (a sender naming endless
/// bones must not grow memory for ever).
pub const MAX_NAMES: usize = 512;

impl Smoother {
    /// A stream with nothing seen yet.
    pub fn new(opts: SmoothOptions) -> Self {
        Self {
            opts,
            bones: BTreeMap::new(),
            blends: BTreeMap::new(),
            clock: None,
        }
    }

    fn stamp(&self, arrival: Duration) -> f64 {
        self.clock.unwrap_or(arrival.as_secs_f64())
    }

    /// Smooths `m` in place; `arrival` is its receive time (any origin, the
    /// same for every call). A filter: its output is `m` itself, so there is
    /// nothing to poll.
    pub fn handle_message(&mut self, arrival: Duration, m: &mut Message) {
        match m {
            Message::Time(t) => {
                let t = f64::from(*t);
                let sane = t.is_finite() && self.clock.is_none_or(|c| t > c && t - c < 1.0);
                // A restarted or absurd clock: fall back to arrival until it
                // moves sanely again.
                self.clock = sane.then_some(t);
            }
            Message::BonePos { name, pos, rot } => {
                if self
                    .opts
                    .bones
                    .as_ref()
                    .is_some_and(|b| !b.iter().any(|x| x == name))
                {
                    return;
                }
                let t = Some(self.stamp(arrival));
                if !self.bones.contains_key(name.as_str())
                    && (self.bones.len() >= MAX_NAMES || name.len() > MAX_NAME_LEN)
                {
                    return;
                }
                let (r, p) = self.bones.entry(name.clone()).or_insert_with(|| {
                    (
                        filter::Rotation::new(self.opts.rotation, RATE),
                        filter::Vector::new(self.opts.position, RATE),
                    )
                });
                let q = r.filter(rot.map(f64::from), t);
                *rot = q.map(|v| v as f32);
                let x = p.filter(pos.map(f64::from), t);
                *pos = x.map(|v| v as f32);
            }
            Message::BlendVal { name, value } if self.opts.blends => {
                let t = Some(self.stamp(arrival));
                if !self.blends.contains_key(name.as_str())
                    && (self.blends.len() >= MAX_NAMES || name.len() > MAX_NAME_LEN)
                {
                    return;
                }
                let blend = self.opts.blend;
                let f = self
                    .blends
                    .entry(name.clone())
                    .or_insert_with(|| filter::Scalar::new(blend, RATE));
                *value = f.filter(f64::from(*value), t) as f32;
            }
            _ => {}
        }
    }

    /// Smooths every message of a frame (or datagram) in order.
    pub fn handle_frame(&mut self, arrival: Duration, messages: &mut [Message]) {
        for m in messages {
            self.handle_message(arrival, m);
        }
    }

    /// Filters held (bones + blendshapes).
    pub fn len(&self) -> usize {
        self.bones.len() + self.blends.len()
    }

    /// Whether nothing is held yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bone(deg: f32) -> Message {
        let h = deg.to_radians() / 2.0;
        Message::BonePos {
            name: "Head".into(),
            pos: [0.0, 1.5, 0.0],
            rot: [0.0, h.sin(), 0.0, h.cos()],
        }
    }

    fn yaw(m: &Message) -> f32 {
        match m {
            Message::BonePos { rot, .. } => 2.0 * rot[1].atan2(rot[3]).to_degrees(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bones_and_blends_are_smoothed_the_rest_untouched() {
        let mut s = Smoother::new(SmoothOptions::default());
        let mut frame = |deg: f32, t: f32| {
            let mut f = vec![
                Message::RootPos {
                    name: "root".into(),
                    pos: [deg, 0.0, 0.0],
                    rot: [0.0, 0.0, 0.0, 1.0],
                    mr: None,
                },
                bone(deg),
                Message::BlendVal {
                    name: "Joy".into(),
                    value: deg / 100.0,
                },
                Message::BlendApply,
                Message::Time(t),
            ];
            s.handle_frame(Duration::ZERO, &mut f);
            f
        };
        let first = frame(0.0, 1.0);
        assert_eq!(yaw(&first[1]), 0.0);
        // A 10° step: smoothed part of the way, not all, not none.
        let out = frame(10.0, 1.0 + 1.0 / 60.0);
        let y = yaw(&out[1]);
        assert!(y > 0.5 && y < 9.5, "{y}");
        let Message::BlendVal { value, .. } = out[2] else {
            panic!()
        };
        assert!(value > 0.005 && value < 0.095, "{value}");
        // Root, Apply and T as sent.
        assert_eq!(
            out[0],
            Message::RootPos {
                name: "root".into(),
                pos: [10.0, 0.0, 0.0],
                rot: [0.0, 0.0, 0.0, 1.0],
                mr: None
            }
        );
        assert_eq!(out[3], Message::BlendApply);
        assert_eq!(out[4], Message::Time(1.0 + 1.0 / 60.0));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn bone_list_and_blend_switch_limit_what_is_touched() {
        let mut s = Smoother::new(SmoothOptions {
            bones: Some(vec!["Spine".into()]),
            blends: false,
            ..SmoothOptions::default()
        });
        let mut a = vec![
            bone(0.0),
            Message::BlendVal {
                name: "A".into(),
                value: 0.0,
            },
        ];
        s.handle_frame(Duration::ZERO, &mut a);
        let mut b = vec![
            bone(30.0),
            Message::BlendVal {
                name: "A".into(),
                value: 1.0,
            },
        ];
        s.handle_frame(Duration::from_secs_f64(0.1), &mut b);
        assert_eq!(b[0], bone(30.0), "Head is not in --smooth-bones");
        assert_eq!(
            b[1],
            Message::BlendVal {
                name: "A".into(),
                value: 1.0
            }
        );
        assert!(s.is_empty());
    }

    #[test]
    fn names_are_bounded() {
        let mut s = Smoother::new(SmoothOptions::default());
        for i in 0..2 * MAX_NAMES {
            let mut m = Message::BlendVal {
                name: format!("b{i}"),
                value: 0.5,
            };
            s.handle_message(Duration::ZERO, &mut m);
        }
        assert_eq!(s.len(), MAX_NAMES);
    }

    /// A sender may put NaN or infinity in a weight (the relay forwards it
    /// as sent). Before the filters dropped such samples cleanly, one of them
    /// froze that blendshape under `--smooth` until the tool restarted.
    #[test]
    fn a_nan_or_infinite_weight_repeats_the_last_and_freezes_nothing() {
        for bad in [f32::NAN, f32::INFINITY] {
            let mut s = Smoother::new(SmoothOptions::default());
            let mut weight = |value: f32, k: u16| {
                let mut f = [
                    Message::BlendVal {
                        name: "Joy".into(),
                        value,
                    },
                    Message::Time(f32::from(k) / 60.0),
                ];
                s.handle_frame(Duration::ZERO, &mut f);
                match f[0] {
                    Message::BlendVal { value, .. } => value,
                    ref other => panic!("{other:?}"),
                }
            };
            let before = weight(0.2, 0);
            assert_eq!(weight(bad, 1).to_bits(), before.to_bits());
            let mut y = 0.0;
            for k in 2..602 {
                y = weight(0.8, k);
            }
            assert!((y - 0.8).abs() < 1e-5, "{bad}: stuck at {y}");
        }
    }
}
