//! The bundled Rokoko Studio capture decodes to the values its generator
//! set, and Studio's world rotations become the humanoid local rotations the
//! geometry gives. `captures/rokoko/make_capture.py` writes JSON v3 frames
//! from inputs set in the script (a body turn of 20° sin, the left arm
//! raised to 90° over frames 0–90, a head nod of 15° sin, rest offsets,
//! face values ((i + k) mod 21) × 5 percent); the numbers below are those
//! inputs worked out by hand, not our decoder's output.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::f64::consts::{FRAC_1_SQRT_2, PI};

use mocap_core::bridge::BodyPose;
use mocap_core::health::Health;
use mocap_core::ifm::ARKIT;
use mocap_core::protocol::{Confidence, Protocol, Stamp, recognise};
use mocap_core::quat::{mul, rotate, wide};
use mocap_core::rokoko::{self, Actor, ErrorKind, Item, SEGMENTS, humanoid_of, t_pose};
use mocap_core::vmc::humanoid::humanoid_parent;
use mocap_core::vmc::{HUMAN_BODY_BONES, bone_index};

fn capture() -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads("rokoko/studio-60fps.pcap")
}

const ID: [f64; 4] = [0.0, 0.0, 0.0, 1.0];

fn about(axis: [f64; 3], deg: f64) -> [f64; 4] {
    let (s, c) = (deg.to_radians() / 2.0).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

/// The same rotation (q or −q) to `eps`.
fn same(a: [f64; 4], b: [f64; 4], eps: f64) -> bool {
    let d: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    (d.abs() - 1.0).abs() < eps
}

/// The script's inputs, frame `k`.
fn turn(k: usize) -> f64 {
    20.0 * (2.0 * PI * k as f64 / 180.0).sin()
}
fn raised(k: usize) -> f64 {
    90.0 * k.min(90) as f64 / 90.0
}
fn nod(k: usize) -> f64 {
    15.0 * (2.0 * PI * k as f64 / 60.0).sin()
}

/// The script's rest offsets (metres, Unity's frame) of the humanoid bones
/// its segments drive, from the parent bone.
const OFFSETS: [(&str, [f64; 3]); 20] = [
    ("Spine", [0.0, 0.1, 0.0]),
    ("UpperChest", [0.0, 0.25, 0.0]),
    ("Neck", [0.0, 0.2, 0.0]),
    ("Head", [0.0, 0.1, 0.0]),
    ("LeftShoulder", [-0.05, 0.15, 0.0]),
    ("LeftUpperArm", [-0.12, 0.0, 0.0]),
    ("LeftLowerArm", [-0.28, 0.0, 0.0]),
    ("LeftHand", [-0.25, 0.0, 0.0]),
    ("RightShoulder", [0.05, 0.15, 0.0]),
    ("RightUpperArm", [0.12, 0.0, 0.0]),
    ("RightLowerArm", [0.28, 0.0, 0.0]),
    ("RightHand", [0.25, 0.0, 0.0]),
    ("LeftUpperLeg", [-0.1, -0.05, 0.0]),
    ("LeftLowerLeg", [0.0, -0.42, 0.0]),
    ("LeftFoot", [0.0, -0.42, 0.0]),
    ("LeftToes", [0.0, -0.06, 0.12]),
    ("RightUpperLeg", [0.1, -0.05, 0.0]),
    ("RightLowerLeg", [0.0, -0.42, 0.0]),
    ("RightFoot", [0.0, -0.42, 0.0]),
    ("RightToes", [0.0, -0.06, 0.12]),
];

#[test]
fn one_hundred_eighty_frames_plain_then_lz4_and_the_last_cut() {
    let d = capture();
    assert_eq!(d.len(), 180);
    for (k, p) in d.iter().enumerate() {
        if k == 179 {
            assert_eq!(rokoko::parse(p).unwrap_err().kind, ErrorKind::Lz4);
            assert_eq!(recognise(p), Some((Protocol::Rokoko, Confidence::Likely)));
            continue;
        }
        assert_eq!(recognise(p), Some((Protocol::Rokoko, Confidence::Certain)));
        let f = rokoko::parse(p).unwrap();
        assert_eq!(f.compressed, k >= 90, "{k}");
        assert_eq!((f.version, f.fps), (Some(3.0), Some(60.0)));
        assert_eq!(f.timestamp, Some(100.0 + k as f64 / 60.0));
        assert!(f.warnings.is_empty(), "{k}: {:?}", f.warnings);
        assert_eq!(f.actors.len(), 1);
        let a = &f.actors[0];
        assert_eq!(a.name.as_deref(), Some("Actor01"));
        assert_eq!(
            (a.meta.has_body, a.meta.has_face, a.meta.has_gloves),
            (Some(true), Some(true), Some(false))
        );
        assert_eq!(a.body.len(), 23);
        assert_eq!(a.body[0].name, "hip");
        assert_eq!(a.body[22].name, "rightToeEnd");
        let hip = a.body[0].position;
        assert_eq!(hip[0], 0.0);
        assert!((hip[1] - (1.0 + 0.02 * (2.0 * PI * k as f64 / 60.0).sin())).abs() < 1e-12);
        assert!((hip[2] - 0.005 * k as f64).abs() < 1e-12);
        assert_eq!(a.face.len(), 52);
        for (i, (name, v)) in a.face.iter().enumerate() {
            assert_eq!(name, ARKIT[i]);
            assert_eq!(*v, ((i + k) % 21) as f64 * 5.0);
        }
        assert_eq!(f.props.len(), 1);
        assert_eq!(f.props[0].name, "Stick");
        assert_eq!(f.props[0].position, [0.5, 0.75, 1.0]);
    }
}

/// Studio's clock steps 1/60 s with no gap: a clocked stream at 60 Hz with
/// nothing lost; the cut datagram is an error.
#[test]
fn health_from_the_scene_timestamp() {
    let mut h = Health::new();
    for d in capture() {
        let s = Protocol::Rokoko.stamp(&d);
        assert!(matches!(s, Stamp::Clocked { part: 0, .. } | Stamp::Error));
        h.stamp(s, None);
    }
    let r = h.report();
    assert_eq!(
        (r.frames, r.errors, r.lost, r.reordered, r.restarts, r.gaps),
        (179, 1, 0, 0, 0, 0)
    );
    assert!((r.sender_fps.unwrap() - 60.0).abs() < 0.5, "{r:?}");
}

fn bone(pose: &BodyPose, name: &str) -> ([f64; 4], [f64; 3]) {
    let b = pose.bone(name).unwrap_or_else(|| panic!("no {name}"));
    (wide(b.rot), b.pos.map(f64::from))
}

/// Every frame through the registry's body reader: the body's turn on
/// Hips, the arm's rise on LeftUpperArm, the nod on Head, every other bone
/// at rest; Hips where the script put it, every other bone at its rest
/// offset from its parent.
#[test]
fn bodies_are_the_scripts_local_motions() {
    let mut reader = (Protocol::Rokoko.spec().body.unwrap())();
    for (k, d) in capture().iter().enumerate().take(179) {
        let pose = reader.datagram(d).unwrap();
        assert_eq!(
            pose.named().count(),
            21,
            "every mapped segment, no toe ends"
        );
        assert_eq!(pose.root, None);
        for (name, b) in pose.named() {
            let want = match name {
                "Hips" => about([0.0, 1.0, 0.0], turn(k)),
                "LeftUpperArm" => about([0.0, 0.0, 1.0], -raised(k)),
                "Head" => about([1.0, 0.0, 0.0], nod(k)),
                _ => ID,
            };
            assert!(same(wide(b.rot), want, 1e-6), "{k} {name}: {:?}", b.rot);
        }
        let (_, hips) = bone(&pose, "Hips");
        let y = 1.0 + 0.02 * (2.0 * PI * k as f64 / 60.0).sin();
        assert!((hips[1] - y).abs() < 1e-6 && (hips[2] - 0.005 * k as f64).abs() < 1e-6);
        for (name, offset) in OFFSETS {
            let (_, pos) = bone(&pose, name);
            for (got, want) in pos.iter().zip(offset) {
                assert!((got - want).abs() < 1e-5, "{k} {name}: {pos:?}");
            }
        }
    }
}

/// The arm raised 90° (frame 90): LeftUpperArm turns −90° about Z, written
/// out: (0, 0, −√½, √½), which carries the arm's rest direction (−X, the
/// actor's left) to +Y, straight up.
#[test]
fn the_arm_raised_ninety_degrees_points_up() {
    let d = &capture()[90];
    let mut reader = (Protocol::Rokoko.spec().body.unwrap())();
    let pose = reader.datagram(d).unwrap();
    let (rot, _) = bone(&pose, "LeftUpperArm");
    let s = FRAC_1_SQRT_2;
    assert!(same(rot, [0.0, 0.0, -s, s], 1e-6), "{rot:?}");
    let up = rotate(rot, [-1.0, 0.0, 0.0]);
    assert!((up[0]).abs() < 1e-6 && (up[1] - 1.0).abs() < 1e-6 && up[2].abs() < 1e-6);
}

/// An actor whose segments are given, by humanoid bone, these world
/// rotations (Studio's, T-pose included).
fn actor(world: impl Fn(&str) -> [f64; 4]) -> Actor {
    Actor {
        body: SEGMENTS
            .iter()
            .map(|(segment, bone)| Item {
                name: (*segment).to_owned(),
                position: [0.0; 3],
                rotation: mul(world(bone), t_pose(bone).unwrap()),
            })
            .collect(),
        ..Actor::default()
    }
}

/// Studio's T-pose is the humanoid's rest: every bone at identity.
#[test]
fn the_t_pose_is_identity_everywhere() {
    let pose = rokoko::pose(&actor(|_| ID)).unwrap();
    assert_eq!(pose.named().count(), SEGMENTS.len());
    for (name, b) in pose.named() {
        assert!(same(wide(b.rot), ID, 1e-6), "{name}: {:?}", b.rot);
    }
}

/// The whole left arm raised 90° (world −90° about Z for the upper arm,
/// the forearm, the hand and its fingers): only LeftUpperArm moves locally;
/// and the world rotations come back by forward kinematics (the product of
/// the local rotations along the humanoid chain, times Studio's T-pose).
#[test]
fn an_arm_raised_moves_one_bone_and_fk_gives_the_world_back() {
    let raised = about([0.0, 0.0, 1.0], -90.0);
    let turned = about([0.0, 1.0, 0.0], 30.0);
    let in_left_arm = |bone: &str| {
        let mut at = bone_index(bone);
        while let Some(i) = at {
            if HUMAN_BODY_BONES[i] == "LeftUpperArm" {
                return true;
            }
            at = humanoid_parent(i);
        }
        false
    };
    let world = |bone: &str| {
        if in_left_arm(bone) {
            mul(turned, raised)
        } else {
            turned
        }
    };
    let a = actor(world);
    let pose = rokoko::pose(&a).unwrap();
    for (name, b) in pose.named() {
        let want = match name {
            "Hips" => turned,
            "LeftUpperArm" => raised,
            _ => ID,
        };
        assert!(same(wide(b.rot), want, 1e-6), "{name}: {:?}", b.rot);
    }
    for s in &a.body {
        let bone = humanoid_of(&s.name).unwrap();
        let mut m = ID;
        let mut at = bone_index(bone);
        while let Some(i) = at {
            if let Some(b) = pose.bones[i] {
                m = mul(wide(b.rot), m);
            }
            at = humanoid_parent(i);
        }
        let back = mul(m, t_pose(bone).unwrap());
        assert!(
            same(back, s.rotation, 1e-6),
            "{bone}: {back:?} {:?}",
            s.rotation
        );
    }
}

/// The face through the registry: percent to 0–1, by ARKit name.
#[test]
fn faces_are_percent_over_a_hundred() {
    let face = Protocol::Rokoko.spec().face.unwrap();
    for (k, d) in capture().iter().enumerate().take(179) {
        let f = face(d).unwrap();
        for (i, v) in f.blendshapes.iter().enumerate() {
            let want = ((i + k) % 21) as f64 * 5.0 / 100.0;
            assert_eq!(*v, Some(want as f32), "{k} {}", ARKIT[i]);
        }
    }
}
