//! A small VMC humanoid for `--bvh` tests, with forward kinematics written
//! here apart from the code under test (its own quaternion product, its own
//! parent list, its own Z-X-Y Euler matrices), so the two can disagree.

use mocap_core::vmc::Message;

/// (bone, parent, Unity local position in metres). No UpperChest: Neck
/// and the shoulders hang off Chest, as on many VRM models.
pub const BONES: [(&str, Option<&str>, [f32; 3]); 17] = [
    ("Hips", None, [0.0, 0.95, 0.02]),
    ("Spine", Some("Hips"), [0.0, 0.08, -0.01]),
    ("Chest", Some("Spine"), [0.0, 0.12, 0.0]),
    ("Neck", Some("Chest"), [0.0, 0.2, 0.01]),
    ("Head", Some("Neck"), [0.0, 0.09, 0.0]),
    ("LeftShoulder", Some("Chest"), [-0.03, 0.16, 0.0]),
    ("LeftUpperArm", Some("LeftShoulder"), [-0.09, 0.0, 0.0]),
    ("LeftLowerArm", Some("LeftUpperArm"), [-0.25, 0.0, 0.0]),
    ("LeftHand", Some("LeftLowerArm"), [-0.24, 0.0, 0.0]),
    ("RightShoulder", Some("Chest"), [0.03, 0.16, 0.0]),
    ("RightUpperArm", Some("RightShoulder"), [0.09, 0.0, 0.0]),
    ("LeftUpperLeg", Some("Hips"), [-0.08, -0.05, 0.0]),
    ("LeftLowerLeg", Some("LeftUpperLeg"), [0.0, -0.42, 0.0]),
    ("LeftFoot", Some("LeftLowerLeg"), [0.0, -0.4, 0.0]),
    ("LeftToes", Some("LeftFoot"), [0.0, -0.05, 0.12]),
    ("RightUpperLeg", Some("Hips"), [0.08, -0.05, 0.0]),
    ("RightLowerLeg", Some("RightUpperLeg"), [0.0, -0.42, 0.0]),
];

/// Frame `k`'s local rotation of bone `i`: about a tilted axis of its
/// own, by an angle that grows with the frame (past ±180° for some).
pub fn rotation(i: usize, k: u32) -> [f32; 4] {
    let a = (i as f64 * 1.3).sin_cos();
    let axis = [a.0, a.1, 0.3 + 0.1 * i as f64];
    let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
    let angle = (0.05 + 0.01 * i as f64) * f64::from(k) + 0.1 * i as f64;
    let (s, c) = (angle / 2.0).sin_cos();
    [
        (axis[0] / n * s) as f32,
        (axis[1] / n * s) as f32,
        (axis[2] / n * s) as f32,
        c as f32,
    ]
}

/// Frame `k`'s root: walking forward along Unity's +Z, turning about Y.
pub fn root(k: u32) -> ([f32; 3], [f32; 4]) {
    let (s, c) = (0.01 * f64::from(k)).sin_cos();
    ([0.1, 0.0, 0.01 * k as f32], [0.0, s as f32, 0.0, c as f32])
}

/// Frame `k` as a sender writes it: Root/Pos, every bone, a blendshape,
/// Apply, OK and T (`k / fps` seconds).
pub fn frame(k: u32, fps: f32) -> Vec<Message> {
    let (pos, rot) = root(k);
    let mut f = vec![Message::RootPos {
        name: "root".into(),
        pos,
        rot,
        mr: None,
    }];
    for (i, (name, _, pos)) in BONES.iter().enumerate() {
        f.push(Message::BonePos {
            name: (*name).into(),
            pos: *pos,
            rot: rotation(i, k),
        });
    }
    f.push(Message::BlendVal {
        name: "A".into(),
        value: 0.5,
    });
    f.push(Message::BlendApply);
    f.push(Message::Available {
        loaded: 1,
        calibration: None,
        tracking: None,
    });
    f.push(Message::Time(k as f32 / fps));
    f
}

fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    [
        a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
        a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
        a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
        a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
    ]
}

fn turn(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let p = mul(mul(q, [v[0], v[1], v[2], 0.0]), [-q[0], -q[1], -q[2], q[3]]);
    [p[0], p[1], p[2]]
}

/// World positions by Unity's (and SMF's) rules: a child sits at its
/// parent's position plus the parent's world rotation applied to the
/// child's local position; parents come first.
pub fn forward(parents: &[Option<usize>], local: &[([f64; 3], [f64; 4])]) -> Vec<[f64; 3]> {
    let mut world: Vec<([f64; 3], [f64; 4])> = Vec::new();
    for (parent, (pos, rot)) in parents.iter().zip(local) {
        world.push(match parent {
            None => (*pos, *rot),
            Some(p) => {
                let (pp, pr) = world[*p];
                let d = turn(pr, *pos);
                ([pp[0] + d[0], pp[1] + d[1], pp[2] + d[2]], mul(pr, *rot))
            }
        });
    }
    world.into_iter().map(|(p, _)| p).collect()
}

/// World positions of frame `k` by Unity's rules ([`forward`] from the
/// root), then mirrored on X and in centimetres: what a BVH take of the
/// stream must show.
pub fn expected_world(k: u32) -> Vec<(&'static str, [f64; 3])> {
    let (rp, rr) = root(k);
    let wide = |q: [f32; 4]| q.map(f64::from);
    let mut parents = vec![None];
    let mut local = vec![(rp.map(f64::from), wide(rr))];
    for (i, (_, parent, pos)) in BONES.iter().enumerate() {
        let p = parent.map_or(0, |p| 1 + BONES.iter().position(|b| b.0 == p).unwrap());
        parents.push(Some(p));
        local.push((pos.map(f64::from), wide(rotation(i, k))));
    }
    let world = forward(&parents, &local);
    BONES
        .iter()
        .zip(&world[1..])
        .map(|((n, _, _), p)| (*n, [-p[0] * 100.0, p[1] * 100.0, p[2] * 100.0]))
        .collect()
}

/// A take frame's index and each joint's expected world position.
pub type Expected = (usize, Vec<(String, [f64; 3])>);

/// Which independent reader checks a take.
#[derive(Clone, Copy, Debug)]
pub enum Reader {
    /// PyPI `bvhio` (`scripts/bvh/check-bvhio.py`).
    Bvhio,
    /// Blender's own importer, headless (`scripts/bvh/check-blender.py`).
    Blender,
}

/// Has `reader` load `take` and compare its world positions with
/// `expected` (by frame index: joint name and position in the file's
/// axes and units). Returns the reader's JSON report: frame and joint
/// counts, frame time or fps, `max_error` and where.
pub fn read_with(
    reader: Reader,
    take: &std::path::Path,
    expected: &[Expected],
) -> serde_json::Value {
    let frames: serde_json::Map<String, serde_json::Value> = expected
        .iter()
        .map(|(f, joints)| {
            let j: serde_json::Map<String, serde_json::Value> = joints
                .iter()
                .map(|(n, p)| (n.clone(), serde_json::json!(p)))
                .collect();
            (f.to_string(), serde_json::Value::Object(j))
        })
        .collect();
    let json = take.with_extension("expected.json");
    std::fs::write(&json, serde_json::json!({ "frames": frames }).to_string()).unwrap();
    let scripts = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/bvh");
    let out = match reader {
        Reader::Bvhio => std::process::Command::new("python3")
            .arg(format!("{scripts}/check-bvhio.py"))
            .arg(take)
            .arg(&json)
            .output(),
        Reader::Blender => std::process::Command::new("blender")
            .args(["-b", "--factory-startup", "--python"])
            .arg(format!("{scripts}/check-blender.py"))
            .arg("--")
            .arg(take)
            .arg(&json)
            .output(),
    }
    .unwrap_or_else(|e| panic!("{reader:?}: {e} (scripts/test-all.sh installs it)"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("RESULT ")
                .or_else(|| l.starts_with('{').then_some(l))
        })
        .unwrap_or_else(|| {
            panic!(
                "{reader:?} gave no result: {stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    serde_json::from_str(line).unwrap()
}

fn matmul(a: [[f64; 3]; 3], b: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut m = [[0.0; 3]; 3];
    for (r, row) in m.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    m
}

/// World positions of every joint of a BVH frame (six channels per
/// joint, positions replacing offsets as Blender reads them; rotations
/// `Rz·Rx·Ry` of the Zrotation, Xrotation, Yrotation channels).
pub fn bvh_world(take: &mocap_core::bvh::Bvh, frame: usize) -> Vec<(String, [f64; 3])> {
    let line = &take.frames[frame];
    let mut world: Vec<([f64; 3], [[f64; 3]; 3])> = Vec::new();
    for (j, joint) in take.joints.iter().enumerate() {
        let c = &line[j * 6..j * 6 + 6];
        let r = |deg: f64| deg.to_radians().sin_cos();
        let (sz, cz) = r(c[3]);
        let (sx, cx) = r(c[4]);
        let (sy, cy) = r(c[5]);
        let rz = [[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]];
        let rx = [[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]];
        let ry = [[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]];
        let local = matmul(matmul(rz, rx), ry);
        let t = [c[0], c[1], c[2]];
        world.push(match joint.parent {
            None => (t, local),
            Some(p) => {
                let (pp, pm) = world[p];
                let d: Vec<f64> = (0..3)
                    .map(|r| (0..3).map(|k| pm[r][k] * t[k]).sum())
                    .collect();
                (
                    [pp[0] + d[0], pp[1] + d[1], pp[2] + d[2]],
                    matmul(pm, local),
                )
            }
        });
    }
    take.joints
        .iter()
        .zip(world)
        .map(|(j, (p, _))| (j.name.clone(), p))
        .collect()
}

/// The largest distance (centimetres) between a take's frame and
/// [`expected_world`] of source frame `k`, over every bone.
pub fn world_error(take: &mocap_core::bvh::Bvh, frame: usize, k: u32) -> f64 {
    let got = bvh_world(take, frame);
    expected_world(k)
        .iter()
        .map(|(name, want)| {
            let (_, p) = got
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("{name} not in the take"));
            (0..3).map(|i| (p[i] - want[i]).powi(2)).sum::<f64>().sqrt()
        })
        .fold(0.0, f64::max)
}
