//! `mocap-top -r CAPTURE --svg FILE --at WHEN`, run for real: the SVG's
//! joints are the forward kinematics of that frame, computed here apart
//! from the tool (its own quaternion rotation, along the humanoid parent
//! table), and its pixels are one projection of them; bad moments exit 2.
//! Headless Chromium opens it (ignored: needs chromium).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::float_cmp,
    reason = "test code: a panic is how a test reports"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mocap_core::bridge::BodyPose;
use mocap_core::protocol::Protocol;
use mocap_core::vmc::HUMAN_BODY_BONES;
use mocap_core::vmc::humanoid::humanoid_parent;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-top");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

fn out_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mocap-top-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs mocap-top; its exit code and stderr.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every body frame of a capture's one sender, with its time since the
/// capture's first datagram.
fn poses(capture: &str, protocol: Protocol) -> Vec<(Duration, BodyPose)> {
    let file = std::fs::File::open(format!("{CAPTURES}/{capture}")).unwrap();
    let mut d = mocap_core::pcap::Datagrams::new(file).unwrap();
    let mut reader = (protocol.spec().body.unwrap())();
    let mut first = None;
    let mut out = Vec::new();
    while let Some(c) = d.next_datagram() {
        let c = c.unwrap();
        let t = c.ts - *first.get_or_insert(c.ts);
        if let Some(p) = reader.datagram(c.payload) {
            out.push((t, p));
        }
    }
    out
}

type V = [f64; 3];
type Q = [f64; 4];

/// `v` turned by unit `q`: v + 2w(u×v) + 2u×(u×v).
fn turn([x, y, z, w]: Q, v: V) -> V {
    let cross = |a: V, b: V| -> V {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let u = [x, y, z];
    let t = cross(u, v).map(|c| 2.0 * c);
    let ut = cross(u, t);
    [0, 1, 2].map(|i| v[i] + w * t[i] + ut[i])
}

fn product(a: Q, b: Q) -> Q {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

fn unit(q: [f32; 4]) -> Q {
    let q = q.map(f64::from);
    let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    q.map(|c| c / n)
}

/// World positions by forward kinematics: the root, then each ancestor's
/// local pose from Hips down; a bone the frame lacks is identity with no
/// offset.
fn world(pose: &BodyPose, bone: usize) -> V {
    let mut chain = vec![bone];
    while let Some(p) = humanoid_parent(*chain.last().unwrap()) {
        chain.push(p);
    }
    let (mut pos, mut rot) = match pose.root {
        Some(r) => (r.pos.map(f64::from), unit(r.rot)),
        None => ([0.0; 3], [0.0, 0.0, 0.0, 1.0]),
    };
    for b in chain.iter().rev() {
        if let Some(l) = pose.bones[*b] {
            let off = turn(rot, l.pos.map(f64::from));
            pos = [0, 1, 2].map(|i| pos[i] + off[i]);
            rot = product(rot, unit(l.rot));
        }
    }
    pos
}

/// A joint circle of the SVG.
#[derive(Debug)]
struct Joint {
    view: String,
    bone: String,
    class: String,
    world: V,
    at: [f64; 2],
}

fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    let len = tag[start..].find('"').unwrap();
    &tag[start..start + len]
}

/// The joints of an SVG and the height of each view's ground line.
fn parse(svg: &str) -> (Vec<Joint>, Vec<(String, f64)>) {
    let mut view = String::new();
    let (mut joints, mut grounds) = (Vec::new(), Vec::new());
    for line in svg.lines() {
        if let Some(rest) = line.strip_prefix("<g class=\"view ") {
            view = rest.split('"').next().unwrap().to_owned();
        } else if line.starts_with("<line class=\"ground\"") {
            grounds.push((view.clone(), attr(line, "y1").parse().unwrap()));
        } else if line.starts_with("<circle") {
            let w: Vec<f64> = attr(line, "data-world")
                .split(' ')
                .map(|v| v.parse().unwrap())
                .collect();
            joints.push(Joint {
                view: view.clone(),
                bone: attr(line, "data-bone").to_owned(),
                class: attr(line, "class").to_owned(),
                world: [w[0], w[1], w[2]],
                at: [
                    attr(line, "cx").parse().unwrap(),
                    attr(line, "cy").parse().unwrap(),
                ],
            });
        }
    }
    (joints, grounds)
}

/// The SVG's joints against FK of `pose`, and its pixels against one
/// projection per view: front x = a − s·x, side x = c + s·z, y = b − s·y.
fn check(svg: &str, pose: &BodyPose) {
    let (joints, grounds) = parse(svg);
    // The body's bones the frame has: the figure draws those (no fingers,
    // eyes or jaw), in both views.
    let drawn: Vec<usize> = (0..HUMAN_BODY_BONES.len())
        .filter(|b| (*b <= 20 || *b == 54) && pose.bones[*b].is_some())
        .collect();
    assert!(drawn.len() >= 15, "{drawn:?}");
    for view in ["front", "side"] {
        let js: Vec<&Joint> = joints.iter().filter(|j| j.view == view).collect();
        assert_eq!(js.len(), drawn.len(), "{view}");
        for j in &js {
            let b = HUMAN_BODY_BONES.iter().position(|n| *n == j.bone).unwrap();
            let want = world(pose, b);
            for k in 0..3 {
                assert!(
                    (j.world[k] - want[k]).abs() < 1e-5,
                    "{view} {}: {:?} != FK {want:?}",
                    j.bone,
                    j.world
                );
            }
            let side = if j.bone.starts_with("Left") {
                "left"
            } else if j.bone.starts_with("Right") {
                "right"
            } else {
                "centre"
            };
            assert_eq!(j.class, format!("joint {side}"), "{}", j.bone);
        }
        // The scale from the two joints furthest apart in height.
        let hi = js
            .iter()
            .max_by(|a, b| a.world[1].total_cmp(&b.world[1]))
            .unwrap();
        let lo = js
            .iter()
            .min_by(|a, b| a.world[1].total_cmp(&b.world[1]))
            .unwrap();
        let s = (lo.at[1] - hi.at[1]) / (hi.world[1] - lo.world[1]);
        assert!(s > 50.0, "{view}: {s} px a metre");
        let across = |j: &Joint| {
            if view == "front" {
                -j.world[0]
            } else {
                j.world[2]
            }
        };
        let (a, b) = (hi.at[0] - s * across(hi), hi.at[1] + s * hi.world[1]);
        for j in &js {
            assert!((j.at[0] - (a + s * across(j))).abs() < 0.01, "{view} {j:?}");
            assert!(
                (j.at[1] - (b - s * j.world[1])).abs() < 0.01,
                "{view} {j:?}"
            );
        }
        // The lowest foot stands on the ground line.
        let ground = grounds.iter().find(|(v, _)| v == view).unwrap().1;
        let feet = js
            .iter()
            .filter(|j| j.bone.ends_with("Foot") || j.bone.ends_with("Toes"))
            .map(|j| j.at[1])
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(
            (feet - ground).abs() < 0.01,
            "{view}: feet {feet}, ground {ground}"
        );
        if view == "front" {
            // Facing the viewer: its left hand right of its right hand.
            let x = |n: &str| js.iter().find(|j| j.bone == n).unwrap().at[0];
            assert!(x("LeftHand") > x("RightHand"), "{js:?}");
        }
    }
}

#[test]
fn the_svg_of_a_moment_has_the_joints_of_that_frames_kinematics() {
    let all = poses("mocopi/wave-60hz.pcapng", Protocol::Mocopi);
    assert!(all.len() > 200, "{}", all.len());
    let out = out_path("at.svg");
    let o = out.to_str().unwrap();
    let capture = format!("{CAPTURES}/mocopi/wave-60hz.pcapng");
    // By time: the newest frame by 2.5 s.
    assert_eq!(
        run(&["-r", &capture, "--svg", o, "--at", "2.5s"]).0,
        Some(0)
    );
    let svg = std::fs::read_to_string(&out).unwrap();
    let n = all
        .iter()
        .rposition(|(t, _)| *t <= Duration::from_millis(2500))
        .unwrap();
    assert!(
        svg.contains(&format!(": body frame {n} at ")),
        "{}",
        svg.lines().find(|l| l.starts_with("<text")).unwrap()
    );
    check(&svg, &all[n].1);
    // By frame number, counted from 0; another pose (the arm waves).
    assert_eq!(
        run(&["-r", &capture, "--svg", o, "--at", "frame:40"]).0,
        Some(0)
    );
    let svg40 = std::fs::read_to_string(&out).unwrap();
    assert!(svg40.contains(": body frame 40 at "));
    check(&svg40, &all[40].1);
    let hand = |svg: &str| {
        let (joints, _) = parse(svg);
        joints
            .into_iter()
            .find(|j| j.bone == "LeftHand")
            .unwrap()
            .world
    };
    assert_ne!(hand(&svg40), hand(&svg));
    // VMC bones too.
    let vmc = poses("vmc/body-60hz.pcapng", Protocol::Vmc);
    let capture = format!("{CAPTURES}/vmc/body-60hz.pcapng");
    assert_eq!(
        run(&["-r", &capture, "--svg", o, "--at", "frame:100"]).0,
        Some(0)
    );
    check(&std::fs::read_to_string(&out).unwrap(), &vmc[100].1);
}

#[test]
fn a_moment_that_is_not_one_exits_2_and_says_what_is() {
    let capture = format!("{CAPTURES}/mocopi/wave-60hz.pcapng");
    let out = out_path("bad.svg");
    let o = out.to_str().unwrap();
    for (at, says) in [
        ("soon", "e.g. 3.5s, 1500ms, 2m"),
        ("frame:x", "frame:1200"),
        ("9s", "past the end"),
        ("frame:100000", "frame:0 to frame:"),
    ] {
        let (code, err) = run(&["-r", &capture, "--svg", o, "--at", at]);
        assert_eq!(code, Some(2), "{at}: {err}");
        assert!(err.contains(says), "{at}: {err}");
    }
    assert!(!out.exists());
    // --svg needs a capture and a moment; --at needs --svg.
    assert_eq!(run(&["--svg", o, "--at", "1s"]).0, Some(2));
    assert_eq!(run(&["-r", &capture, "--svg", o]).0, Some(2));
    assert_eq!(run(&["-r", &capture, "--at", "1s"]).0, Some(2));
    // It reads a capture; it does not record one.
    let w = out_path("w.pcapng");
    let (code, err) = run(&[
        "-r",
        &capture,
        "--svg",
        o,
        "--at",
        "1s",
        "-w",
        w.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(!out.exists() && !w.exists());
    // A capture without a body stream.
    let face = format!("{CAPTURES}/livelink/face-60fps.pcapng");
    let (code, err) = run(&["-r", &face, "--svg", o, "--at", "1s"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no body"), "{err}");
}

/// The SVG opens in a browser: headless Chromium renders it to a PNG of
/// its size with something drawn (a blank page compresses to far less).
#[test]
#[ignore = "needs chromium: scripts/test-all.sh"]
fn the_svg_opens_in_headless_chromium() {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: install Debian's chromium (scripts/test-all.sh does)"
    );
    let capture = format!("{CAPTURES}/mocopi/wave-60hz.pcapng");
    let svg = out_path("browser.svg");
    assert_eq!(
        run(&["-r", &capture, "--svg", svg.to_str().unwrap(), "--at", "2s"]).0,
        Some(0)
    );
    let png = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/test-artefacts/mocap-top-figure.png");
    std::fs::create_dir_all(png.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&png);
    let out = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=600,324",
            &format!("--screenshot={}", png.display()),
            &format!("file://{}", svg.display()),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (600, 324), "IHDR width and height");
    assert!(bytes.len() > 5000, "{} bytes: nothing drawn?", bytes.len());
}
