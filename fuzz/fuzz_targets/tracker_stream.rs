//! VRChat OSC and VMT trackers from a VMC stream (`vmc::TrackerStream`, what
//! `--trackers` runs): any bones, roots and frame ends at any values, pushed
//! one by one (vmc-relay) or as whole frames (mocopi-dump's bridge), with
//! any slot selection, VMT base, height and rate cap.
//!
//! Every datagram is a bundle of at most `MAX_BUNDLE` bytes that decodes,
//! and holds only the selected slots' messages in the protocol's form with
//! finite values. The counters agree with what came out, and the rate cap
//! holds: n bundles sent over T seconds at rate r means n ≤ r·T + 2.5. The
//! schedule's slots are an interval apart and a frame may use its slot half
//! an interval early; after a pause the schedule starts again from the frame
//! that ended it, and the first bundle sent may follow frames that took a
//! slot while the solver was still waiting for the hips.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::osc::{self, Arg};
use mocap_core::vmc::trackers::{SLOTS, Selection, Slot, VMT_MAX_BASE, VMT_MAX_INDEX, VmtOptions, VrchatOptions};
use mocap_fuzz::Bytes;
use mocap_core::vmc::{HUMAN_BODY_BONES, MAX_BUNDLE, Message, TrackerFormat, TrackerOptions, TrackerStream};

const GROUPS: [&str; 5] = ["hips", "feet", "knees", "chest", "elbows"];

fn floats(args: &[Arg]) -> Vec<f32> {
    args.iter()
        .map(|a| match a {
            Arg::Float(v) => *v,
            other => panic!("not a float: {other:?}"),
        })
        .collect()
}

/// Checks one datagram against the format and selection.
fn check(datagram: &[u8], format: &TrackerFormat) {
    assert!(datagram.len() <= MAX_BUNDLE, "{} bytes", datagram.len());
    let packet = osc::decode(datagram).unwrap_or_else(|e| panic!("our own datagram does not decode: {e:?}"));
    assert!(matches!(packet, osc::PacketRepr::Bundle { .. }), "{packet:?}");
    let messages = packet.messages();
    assert!(!messages.is_empty());
    for m in messages {
        match format {
            TrackerFormat::Vrchat(o) => {
                let rest = m.address.strip_prefix("/tracking/trackers/").unwrap_or_else(|| panic!("{}", m.address));
                let (who, what) = rest.split_once('/').unwrap_or_else(|| panic!("{}", m.address));
                assert!(what == "position" || what == "rotation", "{}", m.address);
                if who == "head" {
                    assert!(o.head, "a head reference nobody asked for");
                } else {
                    let n: u8 = who.parse().unwrap_or_else(|_| panic!("{}", m.address));
                    let slot = Slot::ALL.get(usize::from(n).wrapping_sub(1)).copied();
                    let slot = slot.unwrap_or_else(|| panic!("tracker {n} of {SLOTS}"));
                    assert_eq!(slot.number(), n);
                    assert!(o.trackers.contains(slot), "{slot:?} is not selected");
                }
                let v = floats(&m.args);
                assert!(v.len() == 3 && v.iter().all(|x| x.is_finite()), "{m:?}");
            }
            TrackerFormat::Vmt(o) => {
                assert_eq!(m.address, "/VMT/Room/Unity");
                let [Arg::Int(index), Arg::Int(1), Arg::Float(offset), rest @ ..] = &m.args[..] else {
                    panic!("{m:?}")
                };
                assert_eq!(*offset, 0.0);
                let slot = usize::try_from(*index - i32::from(o.base)).ok().and_then(|i| Slot::ALL.get(i).copied());
                let slot = slot.unwrap_or_else(|| panic!("index {index} with base {}", o.base));
                assert!(o.trackers.contains(slot), "{slot:?} is not selected");
                assert!(*index <= i32::from(VMT_MAX_INDEX), "index {index}");
                let v = floats(rest);
                assert!(v.len() == 7 && v.iter().all(|x| x.is_finite()), "{m:?}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let (Some(mode), Some(groups), Some([r0, r1]), Some(h)) = (b.u8(), b.u8(), b.take::<2>(), b.u8()) else {
        return;
    };
    let names: Vec<&str> = GROUPS.iter().enumerate().filter(|(i, _)| groups & (1 << i) != 0).map(|(_, g)| *g).collect();
    let trackers: Selection = if names.is_empty() { "all".parse() } else { names.join(",").parse() }.expect("group names parse");
    let format = if mode & 1 == 0 {
        TrackerFormat::Vrchat(VrchatOptions { trackers, head: mode & 2 != 0 })
    } else {
        TrackerFormat::Vmt(VmtOptions { trackers, base: (mode >> 2) % (VMT_MAX_BASE + 1) })
    };
    let whole_frames = mode & 0x80 != 0;
    // Rates as the command line takes them (above 0), in tenths of a hertz.
    let rate = match u16::from_le_bytes([r0, r1]) {
        0 => None,
        n => Some(f64::from(n) / 10.0),
    };
    let height = (h != 0).then(|| 1.0 + f32::from(h) / 255.0);
    let mut s = TrackerStream::new(TrackerOptions { format, height, rate });

    let mut now = 0.0f64;
    let mut frame = Vec::new();
    let (mut sends, mut first, mut last) = (0u64, None::<f64>, 0.0f64);
    let mut out = |s: &mut TrackerStream, now: f64| {
        let got: Vec<Vec<u8>> = std::iter::from_fn(|| s.poll_transmit()).collect();
        if !got.is_empty() {
            sends += 1;
            first.get_or_insert(now);
            last = now;
        }
        for d in &got {
            check(d, &format);
        }
    };
    while let Some(op) = b.u8() {
        let m = match op % 4 {
            0 => {
                let name = HUMAN_BODY_BONES[usize::from(op / 4) % HUMAN_BODY_BONES.len()];
                let (Some(pos), Some(rot)) = (b.f32s::<3>(), b.f32s::<4>()) else { break };
                Message::BonePos { name: name.into(), pos, rot }
            }
            1 => {
                let (Some(pos), Some(rot)) = (b.f32s::<3>(), b.f32s::<4>()) else { break };
                Message::RootPos { name: "root".into(), pos, rot, mr: None }
            }
            2 => match (op / 4) % 3 {
                0 => {
                    let Some(t) = b.f32() else { break };
                    Message::Time(t)
                }
                1 => Message::Available { loaded: 1, calibration: None, tracking: None },
                _ => Message::BlendApply,
            },
            _ => {
                let Some(d) = b.take::<2>() else { break };
                now += f64::from(u16::from_le_bytes(d)) * 1e-4;
                continue;
            }
        };
        if whole_frames {
            let end = m.end_rank() > 0;
            frame.push(m);
            if end {
                s.handle_frame(at(now), &frame);
                out(&mut s, now);
                frame.clear();
            }
        } else {
            s.handle_message(at(now), &m);
            out(&mut s, now);
        }
    }

    let c = s.counters();
    assert_eq!(c.sent, sends, "{c:?}");
    assert!(c.sent + c.rate_limited <= c.frames, "{c:?}");
    match rate {
        None => assert_eq!(c.rate_limited, 0, "{c:?}"),
        Some(r) => {
            if let Some(first) = first {
                let allowed = (last - first) * r + 2.5 + 1e-9 * sends as f64;
                assert!(sends as f64 <= allowed, "{sends} bundles in {} s at {r} Hz", last - first);
            }
        }
    }
});

/// Seconds as the Duration the state machines take (none for a time
/// before zero or not finite).
fn at(seconds: f64) -> std::time::Duration {
    std::time::Duration::try_from_secs_f64(seconds).unwrap_or_default()
}
