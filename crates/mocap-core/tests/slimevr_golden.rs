//! The bundled SlimeVR capture decodes to the values its generator packed.
//! `captures/slimevr/make_capture.py` packs every field with Python's
//! `struct`, in the layouts of SlimeVR-Tracker-ESP and SlimeVR-Server, from
//! inputs set in the script (rotation quaternions from integer quotients,
//! battery 4 − i/64 V, and so on); the numbers below are those inputs
//! worked out by hand, not our decoder's output.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use mocap_core::health::Health;
use mocap_core::protocol::{Confidence, Protocol, Stamp, View, recognise};
use mocap_core::slimevr::{self, ErrorKind, Field, Handshake, Message};

const TRACKER: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 168, 1, 51));
/// The packet numbers the script leaves out, per session (its `LOST`).
const LOST: [&[u64]; 2] = [&[100, 101, 102], &[57, 160]];

/// (arrival, from the tracker, payload) of every datagram.
fn capture() -> Vec<(Duration, bool, Vec<u8>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../captures/slimevr/tracker-100hz.pcap"
    );
    let mut d = mocap_core::pcap::Datagrams::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(c) = d.next_datagram() {
        let c = c.unwrap();
        out.push((c.ts, c.src.ip() == TRACKER, c.payload.to_vec()));
    }
    out
}

#[test]
fn six_hundred_datagrams_both_ways_and_the_last_cut() {
    let d = capture();
    assert_eq!(d.len(), 600);
    assert_eq!(d.iter().filter(|x| x.1).count(), 568);
    let last = d.iter().rposition(|x| x.1).unwrap();
    for (i, (_, _, p)) in d.iter().enumerate() {
        let sure = if i == last {
            Confidence::Likely
        } else {
            Confidence::Certain
        };
        assert_eq!(recognise(p), Some((Protocol::SlimeVr, sure)), "{i}");
    }
    // A bundle of two 23-byte packets, 5 bytes short: the second is cut.
    let e = slimevr::parse(&d[last].2).unwrap_err();
    assert_eq!(
        (e.offset, e.field, e.kind),
        (
            39,
            Field::Body("bundle"),
            ErrorKind::Truncated { need: 23, have: 18 }
        )
    );
    assert_eq!(Protocol::SlimeVr.stamp(&d[last].2), Stamp::Error);
}

#[test]
fn the_handshake_and_its_answer_as_packed() {
    let d = capture();
    let p = slimevr::parse(&d[0].2).unwrap();
    assert_eq!(p.number, Some(0));
    let Message::Handshake(h) = p.message else {
        panic!("{:?}", p.message)
    };
    assert_eq!(
        h,
        Handshake {
            board: Some(9),
            imu: Some(11),
            mcu: Some(1),
            imu_info: Some([0, 0, 0]),
            build: Some(22),
            firmware: Some(b"0.7.0"),
            mac: Some([0x3c, 0x61, 0x05, 0x12, 0x34, 0x56]),
            tracker_type: Some(0),
            vendor: [
                Some(b"SlimeVR"),
                Some(b"https://slimevr.dev"),
                Some(b"SlimeVR Tracker"),
                Some(b"SlimeVR/SlimeVR-Tracker-ESP"),
                Some(b"main"),
            ],
        }
    );
    // Sent twice; the server (from 1 s) answers the second.
    assert_eq!(
        (d[1].0 - d[0].0, d[1].2 == d[0].2),
        (Duration::from_secs(1), true)
    );
    assert!(!d[2].1);
    assert_eq!(d[2].2.len(), 64);
    let a = slimevr::parse(&d[2].2).unwrap();
    assert_eq!(
        (a.number, a.message),
        (
            None,
            Message::HandshakeAnswer {
                text: b"Hey OVR =D 5"
            }
        )
    );
    // Then feature flags both ways (the tracker's number 0), sensor info
    // and the server's acknowledgements.
    let m = |i: usize| slimevr::parse(&d[i].2).unwrap();
    assert_eq!(
        (m(3).number, m(3).message),
        (Some(0), Message::FeatureFlags { flags: &[6] })
    );
    assert_eq!(
        (m(4).number, m(4).message),
        (Some(0), Message::FeatureFlags { flags: &[3] })
    );
    let Message::SensorInfo(s) = m(6).message else {
        panic!()
    };
    assert_eq!(
        (m(6).number, s.sensor, s.status, s.imu),
        (Some(2), 1, 1, Some(11))
    );
    assert_eq!(
        (s.config, s.calibrated, s.position, s.data_type),
        (Some(3), Some(1), Some(0), Some(0))
    );
    assert_eq!(s.tps, Some([400.0, 100.0]));
    assert_eq!(
        m(8).message,
        Message::SensorAck {
            sensor: 1,
            status: 1
        }
    );
}

/// The script's quaternion of sensor `s` in bundle `k`: integer quotients,
/// sensor 0 about y, sensor 1 about x.
fn quat(k: u64, s: u64) -> [f32; 4] {
    let (m, n) = (1 + (k + 7 * s) % 20, 3u64);
    let d = (m * m + n * n) as f64;
    let sin = ((2 * m * n) as f64 / d) as f32;
    let cos = (((m * m) as f64 - (n * n) as f64) / d) as f32;
    if s == 0 {
        [0.0, sin, 0.0, cos]
    } else {
        [sin, 0.0, 0.0, cos]
    }
}

#[test]
fn rotations_battery_and_signal_as_packed() {
    let d = capture();
    let tracker: Vec<_> = d
        .iter()
        .filter(|x| x.1)
        .map(|x| (x.0, slimevr::parse(&x.2)))
        .collect();
    // Bundle k of each session, in order.
    let mut bundles = [Vec::new(), Vec::new()];
    let mut session = 0;
    let mut batteries = Vec::new();
    let mut signals = Vec::new();
    let mut temperatures = Vec::new();
    for (i, (ts, p)) in tracker.iter().enumerate() {
        let Ok(p) = p else { continue };
        match p.message {
            Message::Handshake(_) if i > 2 => session = 1,
            Message::Bundle(b) => bundles[session].push((*ts, b.messages().collect::<Vec<_>>())),
            Message::Battery { volts, level } => batteries.push((volts, level)),
            Message::Signal { sensor, dbm } => signals.push((sensor, dbm)),
            Message::Temperature { sensor, celsius } => temperatures.push((sensor, celsius)),
            _ => {}
        }
    }
    // 290 and 240 bundles, less the lost ones (all bundles) and the cut last.
    assert_eq!((bundles[0].len(), bundles[1].len()), (287, 237));
    // By hand: bundle 0, sensor 0 has m = 1: (0, 6/10, 0, −8/10); sensor 1
    // has m = 8: (48/73, 0, 0, 55/73).
    assert_eq!(
        bundles[0][0].1,
        [
            Message::RotationData {
                sensor: 0,
                data_type: 1,
                quat: [0.0, 0.6, 0.0, -0.8],
                accuracy: 0
            },
            Message::RotationData {
                sensor: 1,
                data_type: 1,
                quat: [(48.0f64 / 73.0) as f32, 0.0, 0.0, (55.0f64 / 73.0) as f32],
                accuracy: 3
            },
        ]
    );
    // Bundle k is sent k/100 s after the session's first, at 1.1 s and 4.6 s.
    let t0 = Duration::from_secs(1_765_000_000);
    for (session, list) in bundles.iter().enumerate() {
        let start = [1.1, 4.6][session];
        for (ts, b) in list {
            let k = (((*ts - t0).as_secs_f64() - start) * 100.0).round() as u64;
            let got: Vec<[f32; 4]> = b
                .iter()
                .map(|m| match m {
                    Message::RotationData { quat, .. } => *quat,
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(
                got,
                [quat(k, 0), quat(k, 1)],
                "session {session} bundle {k}"
            );
        }
    }
    // Every second from 0.405 s after the first bundle: 4 − i/64 V, 0.875 − i/128.
    let battery = |i: f32| (Some(4.0 - i / 64.0), 0.875 - i / 128.0);
    assert_eq!(
        batteries,
        [battery(0.0), battery(1.0), battery(0.0), battery(1.0)]
    );
    assert_eq!(signals, [(255, -55), (255, -56), (255, -55), (255, -56)]);
    assert_eq!(temperatures, [(0, 30.0), (0, 30.25), (0, 30.0), (0, 30.25)]);
}

#[test]
fn numbers_skip_only_the_lost_packets() {
    let d = capture();
    let mut sessions: Vec<Vec<u64>> = Vec::new();
    for (_, from_tracker, p) in &d {
        let Ok(p) = slimevr::parse(p) else { continue };
        match p.message {
            Message::Handshake(_) if sessions.last().is_none_or(|s| !s.is_empty()) => {
                sessions.push(Vec::new());
            }
            Message::Handshake(_) | Message::Ping { .. } => {}
            _ if *from_tracker => sessions.last_mut().unwrap().push(p.number.unwrap()),
            _ => assert_eq!(p.number.unwrap_or(0), 0, "the server numbers nothing"),
        }
    }
    assert_eq!(sessions.len(), 2);
    for (s, numbers) in sessions.iter().enumerate() {
        assert!(numbers.windows(2).all(|w| w[0] < w[1]));
        let top = *numbers.last().unwrap();
        let missing: Vec<u64> = (0..top).filter(|n| !numbers.contains(n)).collect();
        assert_eq!(missing, LOST[s], "session {s}");
        assert_eq!(numbers[0], 0);
    }
}

#[derive(Default)]
struct Seen {
    slots: Vec<(String, [f32; 3])>,
    messages: Vec<(String, Option<String>, usize)>,
}

impl View for Seen {
    fn slot(&mut self, name: &str, _pos: Option<[f32; 3]>, rot: Option<[f32; 3]>) {
        self.slots.push((name.to_owned(), rot.unwrap()));
    }

    fn message(&mut self, address: &str, name: Option<&str>, args: mocap_core::protocol::Args<'_>) {
        let n = match args {
            mocap_core::protocol::Args::Osc(a) => a.len(),
            _ => 0,
        };
        self.messages
            .push((address.to_owned(), name.map(str::to_owned), n));
    }
}

#[test]
fn the_registry_row_shows_slots_values_and_stamps() {
    let d = capture();
    let first_bundle = d.iter().position(|x| x.2.len() == 62).unwrap();
    let mut v = Seen::default();
    let stamp = Protocol::SlimeVr.decode(&d[first_bundle].2, &mut v);
    // Packets 0 (flags), 1 and 2 (sensor info) came before it.
    assert_eq!(
        stamp,
        Stamp::Numbered {
            frame: 3,
            clock: None,
            part: 0
        }
    );
    // Sensor 0 turns about y by 2·atan2(0.6, −0.8) = 286.26°, read as
    // Unity's −73.74°; sensor 1 about x by 2·atan2(48, 55) = 82.224°.
    assert_eq!(v.slots.len(), 2);
    assert_eq!(v.slots[0].0, "0");
    assert!((v.slots[0].1[1] - -73.739_8).abs() < 1e-3, "{:?}", v.slots);
    assert!((v.slots[1].1[0] - 82.224_2).abs() < 1e-3, "{:?}", v.slots);
    assert_eq!(
        v.messages,
        [
            ("rotation".into(), Some("0".into()), 6),
            ("rotation".into(), Some("1".into()), 6)
        ]
    );
    let stamps: Vec<Stamp> = d
        .iter()
        .take(9)
        .map(|x| Protocol::SlimeVr.stamp(&x.2))
        .collect();
    let unnumbered = Stamp::Unnumbered { ends_frame: false };
    assert_eq!(
        stamps,
        [
            Stamp::Handshake,
            Stamp::Handshake,
            unnumbered, // the answer
            unnumbered, // the tracker's flags, number 0
            unnumbered, // the server's
            Stamp::Numbered {
                frame: 1,
                clock: None,
                part: 0
            },
            Stamp::Numbered {
                frame: 2,
                clock: None,
                part: 0
            },
            unnumbered, // acknowledgements
            unnumbered,
        ]
    );
    let ping = d.iter().find(|x| x.2.len() == 16).unwrap();
    assert_eq!(Protocol::SlimeVr.stamp(&ping.2), Stamp::Sensor);
}

/// The tracker's health over its whole stream, as mocap-link and the dump
/// tools count it: the reboot is no restart, the five left out are lost.
#[test]
fn health_counts_the_gaps_and_no_restart() {
    let mut h = Health::new();
    for (ts, from_tracker, p) in capture() {
        if from_tracker {
            h.stamp(Protocol::SlimeVr.stamp(&p), Some(ts));
        }
    }
    let r = h.report();
    assert_eq!(
        (
            r.frames,
            r.lost,
            r.restarts,
            r.duplicates,
            r.reordered,
            r.errors
        ),
        (553, 5, 0, 0, 0, 1)
    );
}
