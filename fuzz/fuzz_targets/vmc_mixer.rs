//! The VMC mixer (`vmc::Mixer`) under any configuration and any sequence of
//! bones, blendshapes, frame ends, time steps and polls.
//!
//! The mixer runs twice side by side: once with one source, once with two
//! to four sources that all get the same messages, with the same weight.
//! Averaging equal poses is the pose itself, so both must give the same
//! frames: the same messages in the same order, bone rotations equal up to
//! sign and rounding. Also asserted: with finite input every mixed rotation
//! is finite and of unit length; a tick or window schedule's next deadline
//! is after the poll that set it (a zero period must not hang or spin);
//! every mixed frame encodes into datagrams that decode; what the mixer
//! holds stays under its bound (`Mixer::held`).
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::osc::{self, Arg};
use mocap_core::vmc::{self, Message, Method, MixConfig, MixSchedule, Mixer};
use mocap_fuzz::Bytes;

const BONES: [&str; 4] = ["Hips", "Spine", "Head", "LeftHand"];
const BLENDS: [&str; 3] = ["A", "Blink", "Joy"];

/// A value within ±2 in steps of 1/64, from one byte.
fn small(b: &mut Bytes) -> Option<f32> {
    Some(f32::from(b.u8()? as i8) / 64.0)
}

fn vmc(address: &str, args: Vec<Arg>) -> Message {
    Message::from_osc(&osc::Message::new(address, args)).expect("a valid VMC message")
}

fn check_frame(frame: &[Message]) {
    for m in frame {
        if let Message::BonePos { rot, pos, .. } = m {
            assert!(rot.iter().chain(pos).all(|v| v.is_finite()), "{m:?}");
            let n: f32 = rot.iter().map(|v| v * v).sum::<f32>().sqrt();
            assert!((n - 1.0).abs() < 1e-3, "rotation of length {n}: {m:?}");
        }
    }
    let oscs: Vec<osc::Message> = frame.iter().map(Message::to_osc).collect();
    let mut out = Vec::new();
    vmc::pack(&oscs, vmc::MAX_BUNDLE, &mut out).unwrap();
    let decoded: usize = out.iter().map(|d| osc::decode(d).expect("a mixed datagram decodes").messages().len()).sum();
    assert_eq!(decoded, oscs.len());
}

fn same(a: &[Message], b: &[Message]) {
    assert_eq!(a.len(), b.len(), "{a:?}\n{b:?}");
    for (x, y) in a.iter().zip(b) {
        match (x, y) {
            (Message::BonePos { name: n1, pos: p1, rot: r1 }, Message::BonePos { name: n2, pos: p2, rot: r2 }) => {
                assert_eq!(n1, n2);
                let close = |u: &[f32], v: &[f32], s: f32| u.iter().zip(v).all(|(a, b)| (a - s * b).abs() < 1e-3);
                assert!(close(p1, p2, 1.0), "{x:?} / {y:?}");
                assert!(close(r1, r2, 1.0) || close(r1, r2, -1.0), "{x:?} / {y:?}");
            }
            (Message::BlendVal { name: n1, value: v1 }, Message::BlendVal { name: n2, value: v2 }) => {
                assert_eq!(n1, n2);
                assert!((v1 - v2).abs() <= 1e-4 * v1.abs().max(1.0), "{x:?} / {y:?}");
            }
            _ => assert_eq!(x, y),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let (Some(s), Some(r), Some(g), Some(m), Some(st), Some(n), Some(w)) =
        (b.u8(), b.u8(), b.u8(), b.u8(), b.u8(), b.u8(), b.u8())
    else {
        return;
    };
    let schedule = match s % 3 {
        0 => MixSchedule::Frame,
        1 => MixSchedule::Tick { rate: f64::from(r) },
        _ => MixSchedule::Window {
            window: Duration::from_millis(u64::from(r)),
            gap: Duration::from_millis(u64::from(g)),
        },
    };
    let method = [Method::Markley, Method::Nlerp, Method::Naive][usize::from(m % 3)];
    let sources = 2 + usize::from(n % 3);
    let weight = f64::from(w % 8 + 1) / 4.0;
    let cfg = |count: usize| MixConfig {
        schedule,
        method,
        stale: Duration::from_millis(u64::from(st) * 4),
        weights: vec![weight; count],
        bones: (s & 8 != 0).then(|| vec!["Hips".to_owned(), "Head".to_owned()]),
        prefer: Vec::new(),
        primary: 0,
        average_blends: s & 16 != 0,
    };
    let mut one = Mixer::new(cfg(1), 1);
    let mut many = Mixer::new(cfg(sources), sources);
    let mut now = Duration::ZERO;
    while let Some(op) = b.u8() {
        let msg = match op % 7 {
            0 => {
                let name = BONES[usize::from(op / 7 % 4)];
                let mut v = [0f32; 7];
                for x in &mut v {
                    *x = small(&mut b).unwrap_or(0.5);
                }
                // Methods need a rotation to average; a zero one is refused.
                if v[3..].iter().all(|x| *x == 0.0) {
                    v[6] = 1.0;
                }
                let rot = [v[3], v[4], v[5], v[6]];
                let n = rot.iter().map(|x| x * x).sum::<f32>().sqrt();
                Some(Message::BonePos { name: name.to_owned(), pos: [v[0], v[1], v[2]], rot: rot.map(|x| x / n) })
            }
            1 => Some(Message::BlendVal { name: BLENDS[usize::from(op / 7 % 3)].to_owned(), value: small(&mut b).unwrap_or(0.0) }),
            2 => Some(vmc("/VMC/Ext/Blend/Apply", vec![])),
            3 => Some(vmc("/VMC/Ext/OK", vec![Arg::Int(1)])),
            4 => Some(vmc("/VMC/Ext/T", vec![Arg::Float(now.as_secs_f32())])),
            5 => {
                now += Duration::from_millis(u64::from(b.u8().unwrap_or(0)));
                None
            }
            _ => {
                let (x, y) = (one.poll_frame(now), many.poll_frame(now));
                if !matches!(schedule, MixSchedule::Frame) {
                    for mixer in [&one, &many] {
                        assert!(mixer.poll_timeout().is_some_and(|d| d > now), "next deadline not after now");
                    }
                }
                match (&x, &y) {
                    (Some(x), Some(y)) => {
                        check_frame(x);
                        check_frame(y);
                        same(x, y);
                    }
                    (None, None) => {}
                    _ => panic!("one mixer emitted and the other not: {x:?} / {y:?}"),
                }
                None
            }
        };
        if let Some(msg) = msg {
            one.handle_message(now, 0, msg.clone());
            for i in 0..sources {
                many.handle_message(now, i, msg.clone());
            }
        }
        // Whatever the sequence, the mixer's state stays under its bound.
        for (mixer, count) in [(&one, 1), (&many, sources)] {
            let frame = vmc::MAX_NAMES + vmc::MAX_FRAME_MESSAGES;
            let bound = count * (3 * frame + vmc::MAX_WINDOW_FRAMES * (1 + frame)) + 2 * vmc::MAX_NAMES;
            assert!(mixer.held() <= bound, "{} held, bound {bound}", mixer.held());
        }
    }
    for i in 0..sources {
        assert_eq!(many.counters(i), one.counters(0));
    }
});
