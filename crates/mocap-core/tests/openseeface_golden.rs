//! The bundled OpenSeeFace capture decodes to the values its generator
//! packed. `captures/openseeface/make_capture.py` packs every field with
//! Python's `struct`, in the order OpenSeeFace's `facetracker.py` sends
//! them, from inputs set in the script (a clock of 1765000000 + k/32 s for
//! frame k, and so on); the numbers below are those inputs worked out by
//! hand for a few frames, not our decoder's output.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::openseeface::{self, ErrorKind, FACE_LEN, Field};
use mocap_core::protocol::{Confidence, Protocol, Stamp, View, recognise};

fn capture() -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads("openseeface/face-32fps.pcap")
}

#[test]
fn thirty_frames_two_faces_in_five_and_the_last_cut() {
    let d = capture();
    let lens: Vec<usize> = d.iter().map(Vec::len).collect();
    let mut want = vec![FACE_LEN; 30];
    want[10..15].fill(2 * FACE_LEN);
    want[29] = FACE_LEN - 10;
    assert_eq!(lens, want);
    for (k, datagram) in d.iter().enumerate() {
        let sure = if k == 29 {
            Confidence::Likely
        } else {
            Confidence::Certain
        };
        assert_eq!(
            recognise(datagram),
            Some((Protocol::OpenSeeFace, sure)),
            "{k}"
        );
    }
    let e = openseeface::parse(&d[29]).unwrap_err();
    assert_eq!((e.offset, e.field), (0, Field::Face));
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            need: 1785,
            have: 1775
        }
    );
    assert_eq!(Protocol::OpenSeeFace.stamp(&d[29]), Stamp::Error);
}

/// A datagram one byte short of a face is refused where the face starts,
/// and one byte short of two faces where the second does.
#[test]
fn a_face_one_byte_short_is_an_error_at_its_start() {
    let d = capture();
    for (cut, at) in [
        (&d[0][..FACE_LEN - 1], 0),
        (&d[12][..2 * FACE_LEN - 1], FACE_LEN),
    ] {
        let e = openseeface::parse(cut).unwrap_err();
        assert_eq!(
            (e.offset, e.field),
            (at, Field::Face),
            "{} bytes",
            cut.len()
        );
        assert_eq!(Protocol::OpenSeeFace.stamp(cut), Stamp::Error);
    }
    assert_eq!(d[0][..FACE_LEN - 1].len(), 1784);
}

#[test]
fn frame_12_has_both_faces_as_packed() {
    let d = capture();
    let p = openseeface::parse(&d[12]).unwrap();
    assert_eq!(p.warnings(), []);
    let faces: Vec<_> = p.faces().collect();
    let [a, b] = faces[..] else {
        panic!("{} faces", faces.len())
    };
    assert_eq!(a.time(), 1_765_000_000.375);
    assert_eq!(a.id(), 0);
    assert_eq!(a.resolution(), [640.0, 480.0]);
    // Right: (12 mod 5) / 4; left: 1 − right.
    assert_eq!(a.eyes_open(), [0.5, 0.5]);
    assert!(a.success());
    assert_eq!(a.fit_error(), 0.75);
    assert_eq!(a.quaternion(), [0.5, -0.5, 0.5, 0.5]);
    assert_eq!(a.euler(), [-158.0, 10.5, 90.25]);
    assert_eq!(a.translation(), [0.5, -1.25, 43.0]);
    let conf: Vec<f32> = a.confidences().collect();
    assert_eq!(
        (conf[0], conf[1], conf[67]),
        (0.0, 0.007_812_5, 0.523_437_5)
    );
    let lm: Vec<[f32; 2]> = a.landmarks().collect();
    assert_eq!((lm[0], lm[67]), ([100.0, 200.0], [167.0, 233.5]));
    let pts: Vec<[f32; 3]> = a.points_3d().collect();
    assert_eq!(pts[0], [0.0, -0.0, -1.0]);
    assert_eq!(pts[69], [4.3125, -2.156_25, -2.078_125]);
    let features: Vec<(&str, f32)> = a.features().collect();
    assert_eq!(features[0], ("eye_l", -0.453_125));
    assert_eq!(features[12], ("mouth_open", 0.296_875));
    assert_eq!(features[13], ("mouth_wide", 0.359_375));

    assert_eq!(b.id(), 1);
    assert_eq!(b.time(), 1_765_000_000.375);
    assert_eq!(b.eyes_open(), [0.5, 0.5]);
    assert_eq!(b.fit_error(), 1.5);
    assert_eq!(b.landmarks().next(), Some([101.0, 200.0]));
}

#[test]
fn a_failed_fit_sends_zero_points_and_no_head() {
    let d = capture();
    let p = openseeface::parse(&d[20]).unwrap();
    let f = p.faces().next().unwrap();
    assert!(!f.success());
    assert_eq!(f.eyes_open(), [0.0, 1.0]);
    assert!(f.points_3d().all(|p| p == [0.0; 3]));
    let mut v = Seen::default();
    assert_eq!(Protocol::OpenSeeFace.decode(&d[20], &mut v), face_0_at(20));
    assert_eq!(v.angles, []);
    let pose = (Protocol::OpenSeeFace.spec().face.unwrap())(&d[20]).unwrap();
    assert_eq!(pose.tracking, Some(false));
}

#[derive(Default)]
struct Seen {
    faces: Vec<(String, f32)>,
    angles: Vec<(&'static str, [f32; 3])>,
}

impl View for Seen {
    fn face(&mut self, name: &str, value: f32) {
        self.faces.push((name.to_owned(), value));
    }

    fn angle(&mut self, what: &'static str, angles: [f32; 3], _unit: &'static str) {
        self.angles.push((what, angles));
    }
}

#[test]
fn the_registry_row_shows_values_head_blinks_and_mouth() {
    let d = capture();
    let mut v = Seen::default();
    assert_eq!(Protocol::OpenSeeFace.decode(&d[12], &mut v), face_0_at(12));
    // Two eyes and 14 features for each of the two faces.
    assert_eq!(v.faces.len(), 32);
    assert_eq!(v.faces[0], ("eye_open_r".to_owned(), 0.5));
    assert_eq!(v.faces[2], ("eye_l".to_owned(), -0.453_125));
    assert_eq!(v.faces[31], ("#1 mouth_wide".to_owned(), 0.359_375));
    assert_eq!(v.angles, [("head", [-158.0, 10.5, 90.25])]);

    // Frame 3: right eye 3/4 open, left 1/4: the right eye is past the
    // open threshold (0.55), the left a (0.55 − 0.25) / (0.55 − 0.2) blink.
    // Mouth open 12/16 − 1/2 + 3/256, wide 13/16 − 1/2 + 3/256: the opening
    // shared as A = open · (1 − wide), I = open · wide.
    let pose = (Protocol::OpenSeeFace.spec().face.unwrap())(&d[3]).unwrap();
    let presets = mocap_core::vmc::VRM0_PRESETS;
    let expr = |name: &str| pose.expressions[presets.iter().position(|n| *n == name).unwrap()];
    let near = |got: Option<f32>, want: f64| {
        assert!(
            (f64::from(got.unwrap()) - want).abs() < 1e-6,
            "{got:?} {want}"
        );
    };
    near(expr("Blink_R"), 0.0);
    near(expr("Blink_L"), 0.3 / 0.35);
    let (open, wide) = (0.25 + 3.0 / 256.0, 0.3125 + 3.0 / 256.0);
    near(expr("A"), open * (1.0 - wide));
    near(expr("I"), open * wide);
    near(expr("U"), 0.0);
    assert_eq!(pose.expressions.iter().flatten().count(), 5);
    assert_eq!(pose.blendshapes.iter().flatten().count(), 0);
    assert_eq!((pose.tracking, pose.head), (Some(true), None));
    // The script's quaternion (½, −½, ½, ½) is how the tracker packs a head
    // turned 90° chin down from facing the camera: −90° about Unity's X.
    let [x, y, z, w] = pose.head_rotation.unwrap();
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let dot = -x * h + w * h;
    assert!(
        (dot.abs() - 1.0).abs() < 1e-6 && y.abs() < 1e-6 && z.abs() < 1e-6,
        "{x} {y} {z} {w}"
    );
}

/// The stamp of frame `k`: face 0's sequence at the script's clock,
/// `T0 + k / 32` seconds (exact in binary).
fn face_0_at(k: u64) -> Stamp {
    Stamp::Clocked {
        clock: std::time::Duration::from_secs(1_765_000_000)
            + std::time::Duration::from_millis(k * 1000 / 32),
        part: mocap_core::protocol::part_of(&[&0i32.to_le_bytes()]),
    }
}

/// The script sends 32 frames a second for 30 frames, the last cut: health
/// from the first face's clock counts 29 frames, none lost, at 32 per second.
#[test]
fn health_from_the_face_clock() {
    let mut h = mocap_core::health::Health::new();
    for d in capture() {
        h.stamp(Protocol::OpenSeeFace.stamp(&d), None);
    }
    let r = h.report();
    assert_eq!(
        (r.frames, r.errors, r.lost, r.reordered, r.restarts),
        (29, 1, 0, 0, 0)
    );
    assert!((r.sender_fps.unwrap() - 32.0).abs() < 1e-9, "{r:?}");
}
