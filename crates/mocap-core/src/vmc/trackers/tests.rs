//! The solver against forward kinematics written apart, the encoders
//! against decoded bytes, Euler angles against composed turns.

use super::*;
use crate::osc;
use crate::osc::Arg;
use crate::vmc::Message;
use crate::vmc::{MAX_BUNDLE, tag};

// Forward kinematics written apart from the solver: its own product (in
// scalar–vector form), its own rotation matrices, its own parent table.

type Q = [f64; 4];
type V = [f64; 3];

fn cross(a: V, b: V) -> V {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn qprod(a: Q, b: Q) -> Q {
    let (va, vb) = ([a[0], a[1], a[2]], [b[0], b[1], b[2]]);
    let c = cross(va, vb);
    let d = va[0] * vb[0] + va[1] * vb[1] + va[2] * vb[2];
    [
        a[3] * vb[0] + b[3] * va[0] + c[0],
        a[3] * vb[1] + b[3] * va[1] + c[1],
        a[3] * vb[2] + b[3] * va[2] + c[2],
        a[3] * b[3] - d,
    ]
}

fn matrix(q: Q) -> [[f64; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - z * w),
            2.0 * (x * z + y * w),
        ],
        [
            2.0 * (x * y + z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - x * w),
        ],
        [
            2.0 * (x * z - y * w),
            2.0 * (y * z + x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

fn apply(q: Q, v: V) -> V {
    let m = matrix(q);
    [0, 1, 2].map(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
}

fn about(axis: V, degrees: f64) -> Q {
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let (s, c) = (degrees.to_radians() / 2.0).sin_cos();
    [axis[0] / n * s, axis[1] / n * s, axis[2] / n * s, c]
}

/// Unity's `Quaternion.Euler`, composed here: Z first, then X, then Y.
fn euler(e: V) -> Q {
    let [x, y, z] = e;
    qprod(
        qprod(about([0.0, 1.0, 0.0], y), about([1.0, 0.0, 0.0], x)),
        about([0.0, 0.0, 1.0], z),
    )
}

/// Angle between two rotations in degrees (q and −q alike), by the
/// chord, which keeps its digits for small angles where acos does not.
fn angle(a: Q, b: Q) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let s = if d < 0.0 { -1.0 } else { 1.0 };
    let na = a.iter().map(|v| v * v).sum::<f64>().sqrt();
    let nb = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    let chord = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x / na - s * y / nb).powi(2))
        .sum::<f64>()
        .sqrt();
    (4.0 * (chord / 2.0).min(1.0).asin()).to_degrees()
}

fn distance(a: V, b: V) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// (bone, parent, local offset in metres): a full humanoid.
const FULL: [(&str, &str, [f32; 3]); 22] = [
    ("Hips", "", [0.0, 0.95, 0.0]),
    ("Spine", "Hips", [0.0, 0.1, 0.01]),
    ("Chest", "Spine", [0.0, 0.12, 0.0]),
    ("UpperChest", "Chest", [0.0, 0.12, -0.01]),
    ("Neck", "UpperChest", [0.0, 0.1, 0.0]),
    ("Head", "Neck", [0.0, 0.08, 0.01]),
    ("LeftShoulder", "UpperChest", [-0.03, 0.08, 0.0]),
    ("LeftUpperArm", "LeftShoulder", [-0.1, 0.0, 0.0]),
    ("LeftLowerArm", "LeftUpperArm", [-0.26, 0.0, 0.0]),
    ("LeftHand", "LeftLowerArm", [-0.24, 0.0, 0.0]),
    ("RightShoulder", "UpperChest", [0.03, 0.08, 0.0]),
    ("RightUpperArm", "RightShoulder", [0.1, 0.0, 0.0]),
    ("RightLowerArm", "RightUpperArm", [0.26, 0.0, 0.0]),
    ("RightHand", "RightLowerArm", [0.24, 0.0, 0.0]),
    ("LeftUpperLeg", "Hips", [-0.09, -0.06, 0.0]),
    ("LeftLowerLeg", "LeftUpperLeg", [0.0, -0.42, 0.0]),
    ("LeftFoot", "LeftLowerLeg", [0.0, -0.41, -0.01]),
    ("LeftToes", "LeftFoot", [0.0, -0.05, 0.12]),
    ("RightUpperLeg", "Hips", [0.09, -0.06, 0.0]),
    ("RightLowerLeg", "RightUpperLeg", [0.0, -0.42, 0.0]),
    ("RightFoot", "RightLowerLeg", [0.0, -0.41, -0.01]),
    ("RightToes", "RightFoot", [0.0, -0.05, 0.12]),
];

#[derive(Clone)]
struct Bone {
    name: &'static str,
    parent: &'static str,
    offset: [f32; 3],
}

/// FULL without some bones, as a sender without them sends it: their
/// children hang off their parent, the offsets added (identity bones).
fn skeleton(without: &[&str]) -> Vec<Bone> {
    let mut bones: Vec<Bone> = FULL
        .iter()
        .map(|&(name, parent, offset)| Bone {
            name,
            parent,
            offset,
        })
        .collect();
    for gone in without {
        let g = bones.iter().find(|b| b.name == *gone).unwrap().clone();
        for b in &mut bones {
            if b.parent == g.name {
                b.parent = g.parent;
                for k in 0..3 {
                    b.offset[k] += g.offset[k];
                }
            }
        }
        bones.retain(|b| b.name != g.name);
    }
    bones
}

/// Frame `k`'s local rotation of bone `i`: legs and arms swing on sines,
/// the trunk sways, each bone about a tilted axis of its own.
fn local_rot(name: &str, i: usize, k: u32) -> [f32; 4] {
    let t = f64::from(k) / 60.0 * std::f64::consts::TAU;
    let (axis, amplitude) = match name {
        n if n.contains("Leg") => ([1.0, 0.1, 0.05 * i as f64], 40.0),
        n if n.contains("Arm") => ([0.2, 0.3, 1.0], 60.0),
        n if n.contains("Foot") || n.contains("Toes") => ([1.0, 0.0, 0.2], 25.0),
        _ => ([0.3, 1.0, 0.2 + 0.1 * i as f64], 15.0),
    };
    let phase = if name.starts_with("Left") { 0.0 } else { 3.0 };
    let q = about(axis, amplitude * (t * 0.8 + phase + i as f64 * 0.2).sin());
    q.map(|v| v as f32)
}

/// Frame `k`'s root: walking a wide circle, turning as it goes.
fn root(k: u32) -> ([f32; 3], [f32; 4]) {
    let a = f64::from(k) * 0.03;
    let pos = [2.0 * a.sin(), 0.0, 2.0 * (1.0 - a.cos())];
    (
        pos.map(|v| v as f32),
        about([0.0, 1.0, 0.0], a.to_degrees()).map(|v| v as f32),
    )
}

fn frame(skel: &[Bone], k: u32) -> Vec<Message> {
    let (pos, rot) = root(k);
    let mut f = vec![Message::RootPos {
        name: "root".into(),
        pos,
        rot,
        mr: None,
    }];
    for (i, b) in skel.iter().enumerate() {
        let mut offset = b.offset;
        if b.name == "Hips" {
            // The hips bob as they walk.
            offset[1] += 0.02 * (k as f32 * 0.3).sin();
        }
        f.push(Message::BonePos {
            name: b.name.into(),
            pos: offset,
            rot: local_rot(b.name, i, k),
        });
    }
    f.push(Message::Time(k as f32 / 60.0));
    f
}

/// World pose of `name` from a frame's messages, by the test's own table.
fn expected(skel: &[Bone], msgs: &[Message], name: &str) -> (V, Q) {
    let local = |n: &str| -> (V, Q) {
        msgs.iter()
            .rev()
            .find_map(|m| match m {
                Message::BonePos { name, pos, rot } if name == n => {
                    Some((pos.map(f64::from), rot.map(f64::from)))
                }
                _ => None,
            })
            .unwrap()
    };
    let bone = skel.iter().find(|b| b.name == name).unwrap();
    let (parent_pos, parent_rot) = if bone.parent.is_empty() {
        msgs.iter()
            .rev()
            .find_map(|m| match m {
                Message::RootPos { pos, rot, .. } => Some((pos.map(f64::from), rot.map(f64::from))),
                _ => None,
            })
            .unwrap_or(([0.0; 3], [0.0, 0.0, 0.0, 1.0]))
    } else {
        expected(skel, msgs, bone.parent)
    };
    let (lp, lr) = local(name);
    let moved = apply(parent_rot, lp);
    (
        [0, 1, 2].map(|k| parent_pos[k] + moved[k]),
        qprod(parent_rot, lr),
    )
}

const SLOT_BONES: [(Slot, &str); 8] = [
    (Slot::Hips, "Hips"),
    (Slot::LeftFoot, "LeftFoot"),
    (Slot::RightFoot, "RightFoot"),
    (Slot::LeftKnee, "LeftLowerLeg"),
    (Slot::RightKnee, "RightLowerLeg"),
    (Slot::Chest, "Chest"),
    (Slot::LeftElbow, "LeftLowerArm"),
    (Slot::RightElbow, "RightLowerArm"),
];

fn assert_close(got: Pose, (pos, rot): (V, Q), what: &str) {
    let d = distance(got.pos, pos);
    let a = angle(got.rot, rot);
    assert!(d < 1e-3, "{what}: {:?} vs {pos:?} ({d} m)", got.pos);
    assert!(a < 0.1, "{what}: {:?} vs {rot:?} ({a}°)", got.rot);
}

fn check_walk(skel: &[Bone], chest_bone: &str) {
    let mut solver = TrackerSolver::new(None);
    for k in 0..120 {
        let f = frame(skel, k);
        let t = solver.solve(&f).unwrap();
        for (slot, bone) in SLOT_BONES {
            let bone = if slot == Slot::Chest {
                chest_bone
            } else {
                bone
            };
            let got = t.get(slot).unwrap_or_else(|| panic!("{slot:?}"));
            assert_close(
                got,
                expected(skel, &f, bone),
                &format!("frame {k} {slot:?}"),
            );
        }
        assert_close(t.head.unwrap(), expected(skel, &f, "Head"), "head");
    }
}

#[test]
fn trackers_follow_a_walking_humanoid() {
    check_walk(&skeleton(&[]), "Chest");
}

#[test]
fn bones_the_sender_omits_pass_their_offset_on() {
    // Many VRM models: no UpperChest, no Neck; Head and the shoulders
    // hang off Chest.
    check_walk(&skeleton(&["UpperChest", "Neck"]), "Chest");
    // No Chest: the chest tracker sits on UpperChest.
    check_walk(&skeleton(&["Chest"]), "UpperChest");
    // Neither: no chest tracker, and the rest still right.
    let skel = skeleton(&["Chest", "UpperChest"]);
    let f = frame(&skel, 7);
    let t = TrackerSolver::new(None).solve(&f).unwrap();
    assert_eq!(t.get(Slot::Chest), None);
    assert_close(
        t.get(Slot::LeftElbow).unwrap(),
        expected(&skel, &f, "LeftLowerArm"),
        "elbow",
    );
}

#[test]
fn a_bone_missing_from_a_frame_holds_its_last_pose() {
    let skel = skeleton(&[]);
    let mut solver = TrackerSolver::new(None);
    let before = frame(&skel, 10);
    solver.solve(&before).unwrap();
    // Frame 11 without LeftLowerArm and without Root/Pos.
    let now: Vec<Message> = frame(&skel, 11)
        .into_iter()
        .filter(|m| match m {
            Message::BonePos { name, .. } => name != "LeftLowerArm",
            Message::RootPos { .. } => false,
            _ => true,
        })
        .collect();
    let t = solver.solve(&now).unwrap();
    let mut held = before.clone();
    held.extend(now.iter().cloned());
    assert_close(
        t.get(Slot::LeftElbow).unwrap(),
        expected(&skel, &held, "LeftLowerArm"),
        "held elbow",
    );
    assert_close(
        t.get(Slot::LeftFoot).unwrap(),
        expected(&skel, &held, "LeftFoot"),
        "foot under the held root",
    );
    // An empty frame holds everything.
    assert_eq!(solver.solve(&[]), Some(t));
    // No Hips yet: nothing.
    let mut fresh = TrackerSolver::new(None);
    assert_eq!(fresh.solve(&now[2..4]), None);
}

#[test]
fn height_scales_positions_by_the_rest_pose() {
    let skel = skeleton(&[]);
    // Rest heights from the table: Head is Hips + 0.1 + 0.12 + 0.12 +
    // 0.1 + 0.08 up, each foot Hips − 0.06 − 0.42 − 0.41.
    let span = f64::from(0.1f32 + 0.12 + 0.12 + 0.1 + 0.08 + 0.06 + 0.42 + 0.41);
    let avatar = span / 0.83;
    let mut solver = TrackerSolver::new(Some(1.8));
    // Waits for both feet and the head.
    let no_feet: Vec<Message> = frame(&skel, 30)
        .into_iter()
        .filter(|m| !matches!(m, Message::BonePos { name, .. } if name.ends_with("Foot")))
        .collect();
    assert_eq!(solver.solve(&no_feet), None);
    assert_eq!((solver.scale(), solver.avatar_height()), (None, None));
    let mut plain = TrackerSolver::new(None);
    assert_eq!(plain.scale(), Some(1.0));
    // The first complete frame is posed (knees bent): the rest pose
    // still measures the same.
    for k in 30..60 {
        let f = frame(&skel, k);
        let t = solver.solve(&f).unwrap();
        let u = plain.solve(&f).unwrap();
        let scale = solver.scale().unwrap();
        assert!((solver.avatar_height().unwrap() - avatar).abs() < 1e-4);
        assert!((scale - 1.8 / avatar).abs() < 1e-4, "{scale}");
        for slot in Slot::ALL {
            let (a, b) = (t.get(slot).unwrap(), u.get(slot).unwrap());
            assert!(distance(a.pos, b.pos.map(|v| v * scale)) < 1e-9);
            assert!(angle(a.rot, b.rot) < 1e-9);
        }
    }
    // A height that is not a height is ignored.
    for h in [f32::NAN, -1.7, 0.0, f32::INFINITY] {
        assert_eq!(TrackerSolver::new(Some(h)).scale(), Some(1.0));
    }
}

#[test]
fn euler_angles_are_degrees() {
    for (axis, want) in [
        ([1.0, 0.0, 0.0], [30.0, 0.0, 0.0]),
        ([0.0, 1.0, 0.0], [0.0, 30.0, 0.0]),
        ([0.0, 0.0, 1.0], [0.0, 0.0, 30.0]),
    ] {
        let got = unity_euler(about(axis, 30.0));
        assert!(
            distance(got, want) < 1e-9,
            "{got:?} (radians would be 0.52)"
        );
    }
    assert_eq!(unity_euler([0.0, 0.0, 0.0, 1.0]), [0.0, 0.0, 0.0]);
    assert_eq!(unity_euler([0.0; 4]), [0.0, 0.0, 0.0]);
    assert_eq!(unity_euler([f64::NAN; 4]), [0.0, 0.0, 0.0]);
}

#[test]
fn euler_order_is_z_then_x_then_y() {
    // Euler (30, 0, 90), worked by hand: Z 90° takes +X to +Y, then X 30°
    // tips +Y towards +Z: (0, cos 30°, sin 30°). X first would leave +X
    // alone and Z would take it to +Y.
    let q = unity_quat([30.0, 0.0, 90.0]);
    let v = apply(q, [1.0, 0.0, 0.0]);
    let c = 30f64.to_radians().cos();
    assert!(distance(v, [0.0, c, 0.5]) < 1e-12, "{v:?}");
    // The same quaternion written out: √½ (sin 15°, −sin 15°, cos 15°, cos 15°).
    let (s15, c15) = 15f64.to_radians().sin_cos();
    let h = std::f64::consts::FRAC_1_SQRT_2;
    let by_hand = [h * s15, -h * s15, h * c15, h * c15];
    assert!(angle(q, by_hand) < 1e-9);
    let e = unity_euler(by_hand);
    assert!(distance(e, [30.0, 0.0, 90.0]) < 1e-9, "{e:?}");
    // Composed X first (q_z · q_x), the same angles name another rotation.
    let xyz = qprod(about([0.0, 0.0, 1.0], 90.0), about([1.0, 0.0, 0.0], 30.0));
    assert!(angle(xyz, by_hand) > 30.0);
    assert!(distance(unity_euler(xyz), [30.0, 0.0, 90.0]) > 10.0);
    // docs/trackers.md's worked example, both ways.
    let doc = [0.057422, 0.405550, -0.299673, 0.861642];
    assert!(distance(unity_euler(doc), [20.0, 45.0, -30.0]) < 1e-3);
    assert!(angle(euler([20.0, 45.0, -30.0]), doc) < 1e-3);
    let doc_xyz = [0.252505, 0.322506, -0.299673, 0.861642];
    let zyx = qprod(
        qprod(about([0.0, 0.0, 1.0], -30.0), about([0.0, 1.0, 0.0], 45.0)),
        about([1.0, 0.0, 0.0], 20.0),
    );
    assert!(angle(zyx, doc_xyz) < 1e-3);
}

#[test]
fn euler_near_gimbal_lock_reproduces_the_rotation() {
    for x in [90.0, -90.0, 89.99, -89.99, 90.0 - 1e-9, -90.0 + 1e-6] {
        for (y, z) in [
            (0.0, 0.0),
            (40.0, 0.0),
            (0.0, -70.0),
            (123.0, 45.0),
            (-170.0, 179.0),
        ] {
            let q = euler([x, y, z]);
            let e = unity_euler(q);
            let err = angle(euler(e), q);
            assert!(err < 1e-6, "({x}, {y}, {z}) -> {e:?}: {err}°");
            assert!((e[0] - x).abs() < 1e-6, "{e:?}");
            if x.abs() == 90.0 || (x - 90.0f64).abs() < 1e-8 {
                assert_eq!(e[2], 0.0, "{e:?}");
            }
        }
    }
}

struct Rng(u64);
impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

#[test]
fn random_rotations_round_trip_through_euler() {
    let mut rng = Rng(24);
    let mut done = 0;
    while done < 20_000 {
        let q = [rng.unit(), rng.unit(), rng.unit(), rng.unit()];
        if q.iter().map(|v| v * v).sum::<f64>() < 0.01 {
            continue;
        }
        let e = unity_euler(q);
        assert!(e[0].abs() <= 90.0 && e[1].abs() <= 180.0 && e[2].abs() <= 180.0);
        assert!(angle(euler(e), q) < 1e-6, "{q:?} -> {e:?}");
        assert!(angle(unity_quat(e), euler(e)) < 1e-9);
        done += 1;
    }
}

fn walk_trackers(k: u32) -> Trackers {
    let skel = skeleton(&[]);
    let mut solver = TrackerSolver::new(None);
    solver.solve(&frame(&skel, k)).unwrap()
}

fn decoded(datagrams: &[Vec<u8>]) -> Vec<osc::Message> {
    datagrams
        .iter()
        .flat_map(|d| {
            assert!(d.len() <= MAX_BUNDLE);
            let p = osc::decode(d).unwrap();
            assert!(matches!(
                p,
                osc::PacketRepr::Bundle {
                    timetag: (0, 1),
                    ..
                }
            ));
            p.messages().into_iter().cloned().collect::<Vec<_>>()
        })
        .collect()
}

fn f(a: &Arg) -> f64 {
    match a {
        Arg::Float(v) => f64::from(*v),
        other => panic!("{other:?}"),
    }
}

#[test]
fn vrchat_bundle_decodes_to_positions_and_euler_degrees() {
    let t = walk_trackers(42);
    let opts = VrchatOptions {
        head: true,
        ..VrchatOptions::default()
    };
    let dgrams = vrchat_datagrams(&t, &opts, MAX_BUNDLE);
    assert_eq!(dgrams.len(), 1, "one frame, one bundle");
    let msgs = decoded(&dgrams);
    assert_eq!(msgs.len(), 18);
    for (i, m) in msgs.iter().enumerate() {
        let id = if i < 16 {
            (i / 2 + 1).to_string()
        } else {
            "head".into()
        };
        let kind = if i % 2 == 0 { "position" } else { "rotation" };
        assert_eq!(m.address, format!("/tracking/trackers/{id}/{kind}"));
        let tags: String = m.args.iter().map(tag).collect();
        assert_eq!(tags, "fff", "{}", m.address);
        let pose = if i < 16 {
            t.get(Slot::ALL[i / 2])
        } else {
            t.head
        }
        .unwrap();
        let v = [f(&m.args[0]), f(&m.args[1]), f(&m.args[2])];
        if kind == "position" {
            assert!(distance(v, pose.pos) < 1e-5);
        } else {
            assert!(angle(euler(v), pose.rot) < 0.1, "{v:?} vs {:?}", pose.rot);
        }
    }
    // Head off by default; a selection sends only its slots.
    let opts = VrchatOptions {
        trackers: "feet".parse().unwrap(),
        ..VrchatOptions::default()
    };
    let addrs: Vec<String> = decoded(&vrchat_datagrams(&t, &opts, MAX_BUNDLE))
        .into_iter()
        .map(|m| m.address)
        .collect();
    assert_eq!(
        addrs,
        [
            "/tracking/trackers/2/position",
            "/tracking/trackers/2/rotation",
            "/tracking/trackers/3/position",
            "/tracking/trackers/3/rotation"
        ]
    );
    // A small limit splits the frame; the messages stay in order.
    let small = vrchat_datagrams(&t, &VrchatOptions::default(), 200);
    assert!(small.len() > 1);
    assert_eq!(
        decoded(&small),
        decoded(&vrchat_datagrams(&t, &VrchatOptions::default(), MAX_BUNDLE))
    );
    // Nothing to send, nothing sent.
    assert!(vrchat_datagrams(&Trackers::default(), &opts, MAX_BUNDLE).is_empty());
}

#[test]
fn vmt_bundle_decodes_to_ten_typed_arguments() {
    let t = walk_trackers(17);
    let msgs = decoded(&vmt_datagrams(&t, &VmtOptions::default(), MAX_BUNDLE));
    assert_eq!(msgs.len(), 8);
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(m.address, "/VMT/Room/Unity");
        let tags: String = m.args.iter().map(tag).collect();
        assert_eq!(tags, "iiffffffff");
        assert_eq!(
            m.args[..3],
            [Arg::Int(i as i32), Arg::Int(1), Arg::Float(0.0)]
        );
        let pose = t.get(Slot::ALL[i]).unwrap();
        let v: Vec<f64> = m.args[3..].iter().map(f).collect();
        assert!(distance([v[0], v[1], v[2]], pose.pos) < 1e-5);
        assert!(angle([v[3], v[4], v[5], v[6]], pose.rot) < 1e-3);
    }
    let indices = |opts: VmtOptions| -> Vec<i32> {
        decoded(&vmt_datagrams(&t, &opts, MAX_BUNDLE))
            .iter()
            .map(|m| match m.args[0] {
                Arg::Int(i) => i,
                _ => panic!(),
            })
            .collect()
    };
    // A slot keeps its index whatever else is selected.
    let some = "hips,elbows".parse().unwrap();
    assert_eq!(
        indices(VmtOptions {
            trackers: some,
            base: 0
        }),
        [0, 6, 7]
    );
    let all = Selection::ALL;
    assert_eq!(
        indices(VmtOptions {
            trackers: all,
            base: VMT_MAX_BASE
        }),
        (50..=57).collect::<Vec<_>>()
    );
    assert_eq!(
        indices(VmtOptions {
            trackers: all,
            base: 55
        }),
        [55, 56, 57]
    );
    assert!(
        indices(VmtOptions {
            trackers: all,
            base: 255
        })
        .is_empty()
    );
}

#[test]
fn garbage_never_panics_nor_sends_non_finite_values() {
    const VALUES: [f32; 12] = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1e38,
        -1e38,
        1e-38,
        0.5,
        -0.7,
        f32::MAX,
        f32::MIN_POSITIVE,
    ];
    let mut rng = Rng(99);
    let pick = |rng: &mut Rng| {
        let r = (rng.unit() + 1.0) / 2.0;
        VALUES[((r * VALUES.len() as f64) as usize).min(VALUES.len() - 1)]
    };
    let names = [
        "Hips",
        "LeftFoot",
        "LeftLowerLeg",
        "LeftUpperLeg",
        "Chest",
        "Head",
        "Tail",
        "",
    ];
    for height in [None, Some(1.7), Some(f32::NAN), Some(f32::MAX), Some(1e-30)] {
        let mut solver = TrackerSolver::new(height);
        for _ in 0..400 {
            let mut frame = Vec::new();
            let n = ((rng.unit() + 1.0) * 6.0) as usize;
            for _ in 0..n {
                let name = names[((rng.unit() + 1.0) * 3.99) as usize];
                let pos = [pick(&mut rng), pick(&mut rng), pick(&mut rng)];
                let rot = [
                    pick(&mut rng),
                    pick(&mut rng),
                    pick(&mut rng),
                    pick(&mut rng),
                ];
                frame.push(if rng.unit() < -0.8 {
                    Message::RootPos {
                        name: name.into(),
                        pos,
                        rot,
                        mr: None,
                    }
                } else {
                    Message::BonePos {
                        name: name.into(),
                        pos,
                        rot,
                    }
                });
            }
            frame.push(Message::Other(osc::Message::new("/x", vec![])));
            let Some(t) = solver.solve(&frame) else {
                continue;
            };
            let vr = vrchat_datagrams(
                &t,
                &VrchatOptions {
                    head: true,
                    ..Default::default()
                },
                MAX_BUNDLE,
            );
            let vmt = vmt_datagrams(&t, &VmtOptions::default(), MAX_BUNDLE);
            for m in decoded(&vr).iter().chain(&decoded(&vmt)) {
                for a in &m.args {
                    if let Arg::Float(v) = a {
                        assert!(v.is_finite(), "{m:?}");
                    }
                }
            }
        }
    }
    // Poses made by hand are checked too.
    let mut t = Trackers::default();
    t.slots[0] = Some(Pose {
        pos: [f64::NAN, 0.0, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
    });
    t.slots[1] = Some(Pose {
        pos: [1e300, 0.0, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
    });
    assert!(vrchat_messages(&t, &VrchatOptions::default()).is_empty());
    assert!(vmt_messages(&t, &VmtOptions::default()).is_empty());
}

#[test]
fn selection_parses_groups_and_refuses_others() {
    let s: Selection = "hips,feet,knees,chest,elbows".parse().unwrap();
    assert_eq!((s, s.len()), (Selection::ALL, 8));
    assert_eq!(Selection::default(), Selection::ALL);
    assert_eq!("all".parse(), Ok(Selection::ALL));
    let s: Selection = " Feet , knees ,".parse().unwrap();
    assert_eq!(
        s.slots().collect::<Vec<_>>(),
        [
            Slot::LeftFoot,
            Slot::RightFoot,
            Slot::LeftKnee,
            Slot::RightKnee
        ]
    );
    assert_eq!(s.to_string(), "feet,knees");
    assert_eq!(Selection::ALL.to_string(), "all");
    for text in ["chest", "hips,elbows", "feet,hips"] {
        let s: Selection = text.parse().unwrap();
        assert_eq!(s.to_string().parse(), Ok(s));
    }
    assert_eq!("".parse::<Selection>(), Err(SelectionError::Empty));
    assert_eq!(" , ".parse::<Selection>(), Err(SelectionError::Empty));
    let e = "hips,tail".parse::<Selection>().unwrap_err();
    assert_eq!(e, SelectionError::Unknown("tail".into()));
    assert_eq!(
        e.to_string(),
        "unknown tracker group \"tail\" (expected a comma-separated list of hips, feet, knees, chest, elbows, all)"
    );
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert!(boxed.to_string().contains("tail"));
}

#[test]
fn slots_follow_slimevr_numbering() {
    let got: Vec<(u8, &str)> = Slot::ALL.iter().map(|s| (s.number(), s.bone())).collect();
    assert_eq!(
        got,
        [
            (1, "Hips"),
            (2, "LeftFoot"),
            (3, "RightFoot"),
            (4, "LeftLowerLeg"),
            (5, "RightLowerLeg"),
            (6, "Chest"),
            (7, "LeftLowerArm"),
            (8, "RightLowerArm")
        ]
    );
    for (i, s) in Slot::ALL.iter().enumerate() {
        assert_eq!(s.index(), i);
        assert_eq!(
            s.addresses().0,
            format!("/tracking/trackers/{}/position", i + 1)
        );
        assert_eq!(
            s.addresses().1,
            format!("/tracking/trackers/{}/rotation", i + 1)
        );
    }
}
