//! The bundled VTube Studio capture decodes to the values its generator
//! wrote. `captures/vtubestudio/make_capture.py` writes every datagram with
//! Python's `json`, laid out as DenchiSoft's reference classes are, from
//! inputs set in the script (frame k at 1765000000000 + k·1000//60 ms, no
//! face in frames 60–89, frames 110–114 never sent, …); the numbers below
//! are those inputs worked out by hand, not our decoder's output.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::time::Duration;

use mocap_core::health::Health;
use mocap_core::osc::Arg;
use mocap_core::protocol::{Args, Confidence, Protocol, Stamp, View, recognise};
use mocap_core::vtubestudio::{self, ErrorKind, Field, Packet, Request, TrackingData, WarningKind};

const T0_MS: u64 = 1_765_000_000_000;

fn capture() -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads("vtubestudio/phone-60fps.pcap")
}

/// The phone's frames by frame number (from the timestamp), and the requests.
fn split() -> (Vec<(u64, TrackingData)>, Vec<Request>) {
    let (mut frames, mut requests) = (Vec::new(), Vec::new());
    for d in capture() {
        match vtubestudio::parse(&d) {
            Ok(Packet::Data(t)) => {
                let ms = u64::try_from(t.timestamp.unwrap()).unwrap() - T0_MS;
                // k·1000//60 back to k: the frame whose time this is.
                let k = (ms * 60).div_ceil(1000);
                frames.push((k, t));
            }
            Ok(Packet::Request(r)) => requests.push(r),
            Err(_) => {}
        }
    }
    (frames, requests)
}

#[test]
fn requests_frames_and_the_cut_one_are_recognised() {
    let d = capture();
    // 4 requests, 150 frames less the 5 never sent.
    assert_eq!(d.len(), 4 + 145);
    let mut likely = 0;
    for (i, datagram) in d.iter().enumerate() {
        match recognise(datagram) {
            Some((Protocol::VTubeStudio, Confidence::Certain)) => {}
            Some((Protocol::VTubeStudio, Confidence::Likely)) => {
                likely += 1;
                assert_eq!(datagram.len(), 200, "{i}");
                let e = vtubestudio::parse(datagram).unwrap_err();
                assert_eq!((e.offset, e.field), (200, Field::Datagram));
                assert_eq!(
                    e.kind,
                    ErrorKind::Json(mocap_core::json::JsonErrorKind::Eof)
                );
                assert_eq!(Protocol::VTubeStudio.stamp(datagram), Stamp::Error);
            }
            other => panic!("datagram {i}: {other:?}"),
        }
    }
    assert_eq!(likely, 1);
}

#[test]
fn the_requests_as_written() {
    let (_, requests) = split();
    assert_eq!(requests.len(), 4);
    let pc: Vec<&Request> = requests
        .iter()
        .filter(|r| r.sent_by.as_deref() == Some("PCApp"))
        .collect();
    assert_eq!(pc.len(), 3);
    for r in pc {
        assert_eq!((r.time, r.ports.as_slice()), (Some(3.0), &[50510][..]));
        assert_eq!(r.warnings, []);
    }
    let other = requests
        .iter()
        .find(|r| r.sent_by.as_deref() == Some("OtherPC"))
        .unwrap();
    assert_eq!(other.time, Some(12.5));
    assert_eq!(other.ports, (50520..50560).collect::<Vec<u16>>());
    let kinds: Vec<_> = other.warnings.iter().map(|w| w.kind).collect();
    assert_eq!(kinds, [WarningKind::TimeRange, WarningKind::PortCount(40)]);
}

#[test]
fn frame_30_as_written() {
    let (frames, _) = split();
    let ks: Vec<u64> = frames.iter().map(|(k, _)| *k).collect();
    let want: Vec<u64> = (0..149).filter(|k| !(110..115).contains(k)).collect();
    assert_eq!(
        ks, want,
        "every frame once, in order, less the gap and the cut one"
    );
    let t = &frames[30].1;
    assert_eq!(t.timestamp, Some(1_765_000_000_500));
    assert_eq!(t.hotkey, Some(3));
    assert_eq!(t.face_found, Some(true));
    assert_eq!(t.rotation, Some([-2.5, 5.5, -2.25]));
    assert_eq!(t.position, Some([0.5, -1.25, 33.75]));
    assert_eq!(t.eye_left, Some([1.5, -1.875, 0.0]));
    assert_eq!(t.eye_right, Some([1.5, 1.875, 0.0]));
    assert_eq!(t.blendshapes.len(), 52);
    // Entry i of frame k is ((i + k) % 17) / 16, in the app's order.
    assert_eq!(t.blendshapes[0], ("EyeBlinkLeft".to_owned(), 0.8125));
    assert_eq!(t.blendshapes[14], ("JawForward".to_owned(), 0.625));
    assert_eq!(t.blendshapes[15], ("JawRight".to_owned(), 0.6875));
    assert_eq!(t.blendshapes[16], ("JawLeft".to_owned(), 0.75));
    assert_eq!(t.blendshapes[17], ("JawOpen".to_owned(), 0.8125));
    assert_eq!(t.blendshapes[20], ("MouthPucker".to_owned(), 1.0));
    assert_eq!(t.blendshapes[51], ("TongueOut".to_owned(), 0.8125));
    assert_eq!(t.warnings, []);
    // Every other frame: the hotkey is none, and the face is missing in 60–89.
    for (k, t) in &frames {
        assert_eq!(t.hotkey, Some(if *k == 30 { 3 } else { -1 }), "{k}");
        assert_eq!(t.face_found, Some(!(60..90).contains(k)), "{k}");
        assert_eq!(t.warnings, [], "{k}");
    }
}

#[derive(Default)]
struct Seen {
    faces: Vec<(String, f32)>,
    angles: Vec<(&'static str, [f32; 3])>,
    messages: Vec<(String, Option<String>, Vec<Arg>)>,
}

impl View for Seen {
    fn face(&mut self, name: &str, value: f32) {
        self.faces.push((name.to_owned(), value));
    }

    fn angle(&mut self, what: &'static str, angles: [f32; 3], _unit: &'static str) {
        self.angles.push((what, angles));
    }

    fn message(&mut self, address: &str, name: Option<&str>, args: Args<'_>) {
        let Args::Osc(args) = args else {
            panic!("{address}: {args:?}")
        };
        self.messages
            .push((address.to_owned(), name.map(str::to_owned), args.to_vec()));
    }
}

#[test]
fn the_registry_row_shows_values_angles_and_requests() {
    let d = capture();
    let first_data = d
        .iter()
        .find(|d| matches!(vtubestudio::parse(d), Ok(Packet::Data(_))))
        .unwrap();
    let mut v = Seen::default();
    assert_eq!(
        Protocol::VTubeStudio.decode(first_data, &mut v),
        Stamp::Clocked {
            clock: Duration::from_millis(T0_MS),
            part: 0
        }
    );
    assert_eq!(v.faces.len(), 53);
    assert_eq!(v.faces[0], ("FaceFound".to_owned(), 1.0));
    // Frame 0: entry i is (i % 17) / 16, after FaceFound.
    assert_eq!(v.faces[2], ("EyeLookDownLeft".to_owned(), 0.0625));
    assert_eq!(v.faces[17], ("JawLeft".to_owned(), 1.0));
    assert_eq!(v.faces[18], ("JawOpen".to_owned(), 0.0));
    assert_eq!(
        v.angles,
        [
            ("head", [-10.0, 5.5, -2.25]),
            ("left eye", [1.5, 0.0, 0.0]),
            ("right eye", [1.5, 0.0, 0.0]),
        ]
    );
    let mut v = Seen::default();
    assert_eq!(
        Protocol::VTubeStudio.decode(&d[0], &mut v),
        Stamp::Unnumbered { ends_frame: true }
    );
    assert_eq!(
        v.messages,
        [(
            "iOSTrackingDataRequest".to_owned(),
            Some("PCApp".to_owned()),
            vec![Arg::Float(3.0), Arg::Int(50510)]
        )]
    );
}

#[test]
fn the_face_pose_by_arkit_name() {
    let d = capture();
    let face = Protocol::VTubeStudio.spec().face.unwrap();
    let (mut tracked, mut lost) = (0, 0);
    for datagram in &d {
        let Ok(Packet::Data(t)) = vtubestudio::parse(datagram) else {
            assert_eq!(face(datagram), None);
            continue;
        };
        let pose = face(datagram).unwrap();
        match pose.tracking {
            Some(true) => tracked += 1,
            Some(false) => lost += 1,
            None => panic!("no tracking"),
        }
        if t.timestamp == Some(1_765_000_000_500) {
            // Frame 30: ARKit's order is jawForward, jawLeft, jawRight,
            // jawOpen; the app's list has JawRight before JawLeft.
            assert_eq!(
                pose.blendshapes[14],
                Some(0.625),
                "jawForward: (14 + 30) % 17 = 10"
            );
            assert_eq!(
                pose.blendshapes[15],
                Some(0.75),
                "jawLeft: (16 + 30) % 17 = 12"
            );
            assert_eq!(
                pose.blendshapes[16],
                Some(0.6875),
                "jawRight: (15 + 30) % 17 = 11"
            );
            assert_eq!(
                pose.blendshapes[17],
                Some(0.8125),
                "jawOpen: (17 + 30) % 17 = 13"
            );
            assert!(pose.blendshapes.iter().all(Option::is_some));
            assert_eq!(pose.head, Some([5.5, -2.5, -2.25]));
            assert_eq!(pose.left_eye, Some([1.5, -1.875, 0.0]));
            assert_eq!(pose.head_position, Some([0.5, -1.25, 33.75]));
        }
    }
    assert_eq!((tracked, lost), (144 - 30, 30));
}

/// The phone's clock steps 16 or 17 ms; frames 110–114 were never sent: a
/// 100 ms step, five frames lost. The requests are another stream.
#[test]
fn health_from_the_timestamps() {
    let mut h = Health::new();
    for d in capture() {
        if !matches!(vtubestudio::parse(&d), Ok(Packet::Request(_))) {
            h.stamp(Protocol::VTubeStudio.stamp(&d), None);
        }
    }
    let r = h.report();
    assert_eq!(
        (r.frames, r.errors, r.lost, r.reordered, r.restarts, r.gaps),
        (144, 1, 5, 0, 0, 0)
    );
    assert!((r.sender_fps.unwrap() - 60.0).abs() < 0.5, "{r:?}");
}
