//! Runs the real `mocap-dump` on every bundled capture (checked against the
//! per-protocol tools' output and the values the capture scripts wrote),
//! live on loopback (several sockets, an emulated iFacialMocap phone on
//! 127.0.0.2, a VMC receiver), with ephemeral ports and bounded waits.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::Duration;

use mocap_core::vmc::{self, Message};
use mocap_testutil::{LIMIT, Proc, capture, capture_payloads};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-dump");

fn tool(args: &[&str]) -> Proc {
    Proc::spawn(BIN, args, None)
}

fn path(name: &str) -> String {
    capture(name).display().to_string()
}

/// Every record of `mocap-dump -r NAME --format json`, the run ending 0.
fn records(name: &str) -> Vec<Value> {
    let run = tool(&["-r", &path(name), "--format", "json"]).finish();
    assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
    run.json()
}

fn of_type<'a>(recs: &'a [Value], t: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["type"] == t).collect()
}

/// Every .pcap/.pcapng under `captures/`, with the protocol its folder is.
fn bundled() -> Vec<(String, &'static str)> {
    let root = capture("");
    let mut out = Vec::new();
    for (dir, key) in [
        ("mocopi", "mocopi"),
        ("livelink", "livelink"),
        ("ifacialmocap", "ifacialmocap"),
        ("openseeface", "openseeface"),
        ("vmc", "vmc"),
        ("rokoko", "rokoko"),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
            .collect();
        files.sort();
        for f in files {
            let name = f.strip_prefix(&root).unwrap().display().to_string();
            out.push((name, key));
        }
    }
    out
}

/// Every datagram of every bundled capture is one record: a `frame` of the
/// folder's protocol, or an `error` naming it (the captures' damaged
/// datagrams), never unknown; the summary counts them all.
#[test]
fn every_bundled_capture_is_recognised_by_content() {
    let all = bundled();
    assert!(all.len() >= 9, "{all:?}");
    for (name, key) in all {
        let datagrams = capture_payloads(&name).len();
        let recs = records(&name);
        let (frames, errors) = (of_type(&recs, "frame"), of_type(&recs, "error"));
        assert_eq!(frames.len() + errors.len(), datagrams, "{name}");
        assert!(frames.len() > errors.len(), "{name}");
        for r in frames.iter().chain(&errors) {
            assert_eq!(r["protocol"], key, "{name}: {r}");
        }
        let sum = recs.last().unwrap();
        assert_eq!(sum["type"], "summary", "{name}");
        assert_eq!(sum["tool"], "mocap-dump");
        assert_eq!(sum["datagrams"], datagrams, "{name}");
        assert_eq!(sum["errors"], errors.len(), "{name}");
        assert_eq!(sum["unknown"], 0, "{name}");
    }
}

/// The OpenSeeFace capture's values as make_capture.py packs them: per
/// datagram k, eye openness right (k % 5) / 4 and left 1 − that, feature j
/// j/16 − 0.5 + k/256, the head's Euler x −170 + k (not when the fit
/// failed, k = 20, 21), a second face (id 1) in datagrams 10 to 14, and
/// the last datagram cut 10 bytes short.
#[test]
fn openseeface_values_are_those_packed() {
    let recs = records("openseeface/face-32fps.pcap");
    let frames = of_type(&recs, "frame");
    assert_eq!(frames.len(), 29);
    let f32_ = |x: f64| f64::from(x as f32);
    for (k, r) in frames.iter().enumerate() {
        let kf = k as f64;
        let face = &r["face"];
        let right = (k % 5) as f64 * 0.25;
        assert_eq!(face["eye_open_r"].as_f64(), Some(right), "{k}");
        assert_eq!(face["eye_open_l"].as_f64(), Some(1.0 - right), "{k}");
        assert_eq!(face["eye_l"].as_f64(), Some(f32_(-0.5 + kf / 256.0)), "{k}");
        assert_eq!(
            face["mouth_wide"].as_f64(),
            Some(f32_(13.0 / 16.0 - 0.5 + kf / 256.0)),
            "{k}"
        );
        let angles = r["angles"].as_array();
        if k == 20 || k == 21 {
            assert!(angles.is_none(), "{k}: no head without a fit");
        } else {
            let head = &angles.unwrap()[0];
            assert_eq!(head["of"], "head");
            assert_eq!(
                head["values"],
                serde_json::json!([-170.0 + kf, 10.5, 90.25])
            );
        }
        assert_eq!(
            face.get("#1 eye_open_r").and_then(Value::as_f64),
            (10..=14).contains(&k).then_some(0.5),
            "{k}"
        );
        assert_eq!(r["sender"], "127.0.0.1:50573");
        assert!(
            r.get("frame").is_none(),
            "OpenSeeFace does not number frames"
        );
    }
    let err = of_type(&recs, "error");
    assert_eq!(err.len(), 1);
    assert_eq!(err[0]["len"], 1775);
    assert_eq!(err[0]["reason"], "not a whole OpenSeeFace datagram");
}

/// The record of the same capture from another tool of ours.
fn other_tool(name: &str, capture_name: &str) -> Vec<Value> {
    let bin = mocap_testutil::tool(BIN, name);
    let run = Proc::spawn(
        bin.to_str().unwrap(),
        &["-r", &path(capture_name), "--format", "json"],
        None,
    )
    .finish();
    assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
    run.json()
}

/// Live Link: the same frames, values and health as livelink-dump reads.
#[test]
fn livelink_as_livelink_dump_reads_it() {
    let name = "livelink/face-60fps.pcapng";
    let ours = records(name);
    let theirs = other_tool("livelink-dump", name);
    let faces: Vec<&Value> = of_type(&ours, "frame")
        .into_iter()
        .filter(|r| r.get("face").is_some())
        .collect();
    let their_faces = of_type(&theirs, "livelink.frame");
    assert_eq!(faces.len(), their_faces.len());
    assert_eq!(faces.len(), 268);
    for (a, b) in faces.iter().zip(&their_faces) {
        assert_eq!(a["frame"], b["frame"]);
        assert_eq!(a["sender"], b["src"]);
        let shapes = b["blendshapes"].as_object().unwrap();
        for (n, v) in shapes {
            assert_eq!(a["face"][n], *v, "{n}");
        }
        let head = &a["angles"][0];
        assert_eq!(head["of"], "head");
        assert_eq!(
            head["values"],
            serde_json::json!([b["head"]["yaw"], b["head"]["pitch"], b["head"]["roll"]])
        );
    }
    let (s, t) = (ours.last().unwrap(), theirs.last().unwrap());
    assert_eq!(s["datagrams"], t["packets"]);
    for k in ["lost", "duplicates", "reordered", "restarts", "errors"] {
        assert_eq!(s[k], t[k], "{k}");
    }
}

/// mocopi: the frame numbers and bones mocopi-dump reads, in order.
#[test]
fn mocopi_as_mocopi_dump_reads_it() {
    let name = "mocopi/wave-60hz.pcapng";
    let ours = records(name);
    let theirs = other_tool("mocopi-dump", name);
    let numbers: Vec<&Value> = of_type(&ours, "frame")
        .into_iter()
        .filter_map(|r| r.get("frame"))
        .collect();
    let their_numbers: Vec<&Value> = of_type(&theirs, "mocopi.frame")
        .into_iter()
        .map(|r| &r["fnum"])
        .collect();
    assert_eq!(numbers, their_numbers);
    let first = of_type(&ours, "frame")
        .into_iter()
        .find(|r| r.get("frame").is_some())
        .unwrap();
    let their_first = of_type(&theirs, "mocopi.frame")[0];
    let bones = first["bones"].as_array().unwrap();
    let their_bones = their_first["bones"].as_array().unwrap();
    assert_eq!(bones.len(), their_bones.len());
    for (a, b) in bones.iter().zip(their_bones) {
        assert_eq!((&a["rot"], &a["pos"]), (&b["rot"], &b["pos"]));
    }
    assert_eq!(
        of_type(&ours, "frame")
            .iter()
            .filter(|r| r["carries"] == "skeleton")
            .count(),
        of_type(&theirs, "mocopi.skeleton").len()
    );
    let (s, t) = (ours.last().unwrap(), theirs.last().unwrap());
    for k in ["lost", "duplicates", "reordered", "restarts"] {
        assert_eq!(s[k], t[k], "{k}");
    }
}

/// Datagrams at `rx` until it is quiet for 500 ms.
fn receive_all(rx: &UdpSocket) -> Vec<Vec<u8>> {
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = vec![0u8; 65_536];
    let mut got = Vec::new();
    while let Ok(n) = rx.recv(&mut buf) {
        got.push(buf[..n].to_vec());
    }
    got
}

/// Each frame's blendshapes as (name, value), frames ended by Apply.
fn blend_frames(datagrams: &[Vec<u8>]) -> Vec<Vec<(String, f32)>> {
    let messages: Vec<Message> = datagrams
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .map(Result::unwrap)
        .collect();
    messages
        .split_inclusive(|m| *m == Message::BlendApply)
        .map(|frame| {
            frame
                .iter()
                .filter_map(|m| match m {
                    Message::BlendVal { name, value } => Some((name.clone(), *value)),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// OpenSeeFace to VMC: one Apply per whole datagram, its face 0's mouth
/// and blinks as VRM presets and its head, the last tracked pose held while
/// the fit failed (datagrams 20 and 21), nothing for the cut last datagram.
/// Expected values from make_capture.py's inputs and the mapping in
/// docs/openseeface.md: blink thresholds 0.2 (shut) and 0.55 (open), the
/// mouth's opening shared as A = open · (1 − wide), I = open · wide.
#[test]
fn vmc_from_openseeface_sends_vrm_presets_and_the_head() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let t = tool(&["-r", &path("openseeface/face-32fps.pcap"), "--vmc", &to]);
    let got = receive_all(&rx);
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "bridging is quiet: {:?}", run.stdout);
    let frames = blend_frames(&got);
    let blink = |open: f64| ((0.55 - open) / 0.35).clamp(0.0, 1.0);
    let want: Vec<Vec<(&str, f64)>> = (0..29)
        .map(|k| {
            let k = if k == 20 || k == 21 { 19 } else { k };
            let right = f64::from(k % 5) * 0.25;
            let left = 1.0 - right;
            let open = 12.0 / 16.0 - 0.5 + f64::from(k) / 256.0;
            let wide = 13.0 / 16.0 - 0.5 + f64::from(k) / 256.0;
            vec![
                ("A", open * (1.0 - wide)),
                ("I", open * wide),
                ("U", 0.0),
                ("Blink_L", blink(left)),
                ("Blink_R", blink(right)),
            ]
        })
        .collect();
    assert_eq!(frames.len(), want.len());
    for (k, (got, want)) in frames.iter().zip(&want).enumerate() {
        let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
        let want_names: Vec<&str> = want.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, want_names, "frame {k}");
        for ((n, g), (_, w)) in got.iter().zip(want) {
            assert!(
                (f64::from(*g) - w).abs() < 1e-6,
                "frame {k} {n}: {g} vs {w}"
            );
        }
    }
    // The script's quaternion (½, −½, ½, ½) is a head turned 90° chin down
    // from facing the camera: −90° about Unity's X, in every frame.
    let heads: Vec<[f32; 4]> = got
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .filter_map(|m| match m.unwrap() {
            Message::BonePos { name, rot, .. } if name == "Head" => Some(rot),
            _ => None,
        })
        .collect();
    assert_eq!(heads.len(), 29);
    let h = std::f32::consts::FRAC_1_SQRT_2;
    for [x, y, z, w] in heads {
        let dot = -x * h + w * h;
        assert!((dot.abs() - 1.0).abs() < 1e-6 && y.abs() < 1e-6 && z.abs() < 1e-6);
    }
    assert!(run.stderr.contains("vmc: 29 frames"), "{}", run.stderr);
}

/// Live Link to VMC: every face packet's 52 blendshapes as sent, once per
/// packet, each phone through its own bridge.
#[test]
fn vmc_from_livelink_sends_the_wire_blendshapes() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let name = "livelink/face-60fps.pcapng";
    let t = tool(&["-r", &path(name), "--vmc", &to]);
    let got = receive_all(&rx);
    assert_eq!(t.finish().code, Some(0));
    let sent = blend_frames(&got);
    // The capture's faces, decoded by the core's own Live Link parser
    // (each no-face packet holds the sender's last face).
    let mut last = std::collections::HashMap::new();
    let mut want = Vec::new();
    for d in capture_payloads(name) {
        let Ok(p) = mocap_core::livelink::parse(&d) else {
            continue;
        };
        let key = p.device().into_owned();
        if let Some(f) = p.face() {
            last.insert(key.clone(), f.values().take(52).collect::<Vec<f32>>());
        }
        if let Some(v) = last.get(&key) {
            want.push(v.clone());
        }
    }
    let values: Vec<Vec<f32>> = sent
        .iter()
        .map(|f| f.iter().map(|(_, v)| *v).collect())
        .collect();
    assert_eq!(values.len(), want.len());
    assert_eq!(values, want);
}

/// mocopi to VMC through the registry's body reader: one frame per frame
/// packet after the first skeleton, each Root/Pos, the 22 bones of Sony's
/// mapping, OK and the time, with Hips where the capture's root joint is,
/// mirrored into Unity's frame (read here with the core's own mocopi parser).
#[test]
fn vmc_from_mocopi_sends_a_body_frame_per_frame_packet() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let name = "mocopi/wave-60hz.pcapng";
    // At the capture's timing: a burst of 360 datagrams could overflow the
    // test's socket buffer before it reads them.
    let t = tool(&["-r", &path(name), "--vmc", &to]);
    let got = receive_all(&rx);
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let messages: Vec<Message> = got
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .map(Result::unwrap)
        .collect();
    let frames: Vec<&[Message]> = messages
        .split_inclusive(|m| matches!(m, Message::Time(_)))
        .collect();
    let mut want = Vec::new();
    let mut skeleton = false;
    for d in capture_payloads(name) {
        match mocap_core::smf::parse(&d).unwrap().body {
            mocap_core::smf::Body::Skeleton(_) => skeleton = true,
            mocap_core::smf::Body::Frame(f) if skeleton => {
                want.push(f.bones().find(|b| b.id == 0).unwrap().pos);
            }
            _ => {}
        }
    }
    assert!(want.len() > 100, "{} frames", want.len());
    assert_eq!(frames.len(), want.len());
    for (frame, [x, y, z]) in frames.iter().zip(want) {
        assert!(
            frame.iter().any(|m| matches!(m, Message::RootPos { .. })),
            "{frame:?}"
        );
        let bones: Vec<&str> = frame
            .iter()
            .filter_map(|m| match m {
                Message::BonePos { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(bones.len(), 22, "{bones:?}");
        let hips = frame.iter().find_map(|m| match m {
            Message::BonePos { name, pos, .. } if name == "Hips" => Some(*pos),
            _ => None,
        });
        assert_eq!(hips, Some([-x, y, z]));
        assert!(matches!(frame[frame.len() - 2], Message::Available { .. }));
    }
    // The VMC time counts from the first frame, at the capture's 60 Hz.
    let Message::Time(last) = messages.last().unwrap() else {
        panic!("no time")
    };
    let span = (frames.len() - 1) as f32 / 60.0;
    assert!(
        (last - span).abs() < 0.1,
        "{last} s over {} frames",
        frames.len()
    );
}

/// The Rokoko capture (one actor, plain then LZ4 frames, the last cut) to
/// VMC: one frame per decoded Studio frame, each with the 21 bones its
/// segments drive and the 52 blendshapes. The rotations are the script's
/// local motions (captures/rokoko/make_capture.py: the body's turn of
/// 20°·sin(2πk/180) about Y on Hips, the left arm raised −min(k, 90)° about
/// Z, the head's nod of 15°·sin(2πk/60) about X, identity elsewhere), which
/// is what Studio's world rotations give by the Unity plugin's conversion
/// (docs/rokoko.md); the blendshapes ((i + k) mod 21)·5 percent over 100
/// as an f32.
#[test]
fn vmc_from_rokoko_sends_body_and_face_per_studio_frame() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let t = tool(&["-r", &path("rokoko/studio-60fps.pcap"), "--vmc", &to]);
    let got = receive_all(&rx);
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let messages: Vec<Message> = got
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .map(Result::unwrap)
        .collect();
    let frames: Vec<&[Message]> = messages
        .split_inclusive(|m| matches!(m, Message::Time(_)))
        .collect();
    assert_eq!(frames.len(), 179, "180 datagrams, the last cut");
    let about = |axis: [f64; 3], deg: f64| {
        let (s, c) = (deg.to_radians() / 2.0).sin_cos();
        [axis[0] * s, axis[1] * s, axis[2] * s, c]
    };
    let tau = std::f64::consts::TAU;
    for (k, frame) in frames.iter().enumerate() {
        let kf = k as f64;
        let mut bones = 0;
        let mut blends = Vec::new();
        for m in *frame {
            match m {
                Message::BonePos { name, rot, .. } => {
                    bones += 1;
                    let want = match name.as_str() {
                        "Hips" => about([0.0, 1.0, 0.0], 20.0 * (tau * kf / 180.0).sin()),
                        "LeftUpperArm" => about([0.0, 0.0, 1.0], -kf.min(90.0)),
                        "Head" => about([1.0, 0.0, 0.0], 15.0 * (tau * kf / 60.0).sin()),
                        _ => [0.0, 0.0, 0.0, 1.0],
                    };
                    let dot: f64 = rot.iter().zip(want).map(|(a, b)| f64::from(*a) * b).sum();
                    assert!((dot.abs() - 1.0).abs() < 1e-6, "{k} {name}: {rot:?}");
                }
                Message::BlendVal { name, value } => blends.push((name.clone(), *value)),
                _ => {}
            }
        }
        assert_eq!(bones, 21, "{k}");
        assert_eq!(blends.len(), 52, "{k}");
        for (i, (name, value)) in blends.iter().enumerate() {
            assert_eq!(name, mocap_core::ifm::ARKIT[i]);
            let want = ((i + k) % 21) as f64 * 5.0 / 100.0;
            assert_eq!(*value, want as f32, "{k} {name}");
        }
        assert!(matches!(frame[frame.len() - 2], Message::Available { .. }));
    }
}

/// The emulated iFacialMocap phone's command socket on 127.0.0.2.
fn phone() -> (UdpSocket, SocketAddr) {
    let s = UdpSocket::bind("127.0.0.2:0").unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    let at = s.local_addr().unwrap();
    (s, at)
}

/// The next command the phone receives; the tool's log when none comes
/// within the limit.
fn recv_command(phone: &UdpSocket, t: Proc) -> (Vec<u8>, SocketAddr, Proc) {
    let mut buf = [0u8; 2048];
    match phone.recv_from(&mut buf) {
        Ok((n, from)) => (buf[..n].to_vec(), from, t),
        Err(e) => panic!("no command within {LIMIT:?} ({e}): {}", t.kill().stderr),
    }
}

const IFM_FRAMES: &str =
    include_str!("../../../captures/ifacialmocap/v1_minbitt_head_sample_data.txt");

/// `--ask` makes the phone send: the start command ifm-handshake sends,
/// from the port listened on; the phone's frames are then decoded; a phone
/// that missed the first command gets it again after 3 s without frames.
#[test]
fn ask_makes_the_ifacialmocap_phone_send() {
    let (phone, at) = phone();
    let at = at.to_string();
    let mut t = tool(&[
        "-l",
        "127.0.0.1:0",
        "--protocol",
        "ifacialmocap",
        "--ask",
        &at,
        "--format",
        "json",
        "-n",
        "3",
    ]);
    let (_, listening) = t.log_line("listening on");
    let (first, _, t) = recv_command(&phone, t);
    // Missed: nothing is sent back, so the tool asks again.
    let (cmd, pc, mut t) = recv_command(&phone, t);
    assert_eq!(first, cmd);
    assert_eq!(Some(pc), listening, "asked from the listening socket");
    assert_eq!(
        mocap_core::ifm::Command::parse(&cmd),
        Ok(mocap_core::ifm::Command::StartUdp {
            version: mocap_core::ifm::Version::V1
        })
    );
    t.log_line("frames yet; asked");
    let lines: Vec<&str> = IFM_FRAMES.lines().take(3).collect();
    for l in &lines {
        phone.send_to(l.as_bytes(), pc).unwrap();
    }
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let frames = of_type(&recs, "frame");
    assert_eq!(frames.len(), 3);
    for (r, line) in frames.iter().zip(&lines) {
        assert_eq!(r["protocol"], "ifacialmocap");
        assert_eq!(r["sender"], at);
        let f = mocap_core::ifm::parse(line.as_bytes()).unwrap();
        let (name, v) = f.arkit().next().unwrap();
        assert_eq!(r["face"][name].as_f64(), Some(f64::from(v)), "{name}");
    }
    let sum = recs.last().unwrap();
    assert_eq!(sum["stopped"], "count");
    assert_eq!(sum["asked"][0]["protocol"], "ifacialmocap");
    assert_eq!(sum["asked"][0]["to"], at);
    assert_eq!(sum["asked"][0]["requests"], 2);
    assert_eq!(sum["sends"][0]["sent"], 2);
}

/// Several `-l` sockets at once, each datagram named by content whatever
/// port it came to; `-w` records them and reads back the same.
#[test]
fn several_sockets_and_a_recording() {
    let dir = std::env::temp_dir().join(format!("mocap-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let take = dir.join("take.pcapng").display().to_string();
    let mut t = tool(&[
        "-l",
        "127.0.0.1:0",
        "-l",
        "127.0.0.1:0",
        "--format",
        "json",
        "-n",
        "3",
        "-w",
        &take,
    ]);
    let (line, _) = t.log_line("listening on");
    let ports: Vec<SocketAddr> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(ports.len(), 2, "{line}");
    let osf = capture_payloads("openseeface/face-32fps.pcap");
    let live = capture_payloads("livelink/face-60fps.pcapng");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(&osf[0], ports[0]).unwrap();
    tx.send_to(&live[0], ports[1]).unwrap();
    tx.send_to(b"hello, anyone?", ports[1]).unwrap();
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    // Two sockets, a reading thread each: either may come first.
    let mut protocols: Vec<&str> = of_type(&recs, "frame")
        .into_iter()
        .map(|r| r["protocol"].as_str().unwrap())
        .collect();
    protocols.sort_unstable();
    assert_eq!(protocols, ["livelink", "openseeface"]);
    let unknown = of_type(&recs, "error");
    assert_eq!(
        unknown[0]["reason"],
        "no protocol of the registry recognises it"
    );
    assert_eq!(recs.last().unwrap()["unknown"], 1);
    let replay = tool(&["-r", &take, "--format", "json"]).finish();
    let again = replay.json();
    let (a, b) = (of_type(&again, "frame"), of_type(&recs, "frame"));
    assert_eq!(a.len(), 2);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x["protocol"], &x["face"]), (&y["protocol"], &y["face"]));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--allow`: a sender outside the ranges is refused before anything sees
/// it (not decoded, not counted by `-n`), and the summary says so.
#[test]
fn allow_refuses_other_senders() {
    let mut t = tool(&[
        "-l",
        "127.0.0.1:0",
        "--allow",
        "127.0.0.2/32",
        "--format",
        "json",
        "-n",
        "1",
    ]);
    let (_, at) = t.log_line("listening on");
    let at = at.unwrap();
    let osf = capture_payloads("openseeface/face-32fps.pcap");
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    stranger.send_to(&osf[0], at).unwrap();
    t.log_line("refused");
    let friend = UdpSocket::bind("127.0.0.2:0").unwrap();
    friend.send_to(&osf[1], at).unwrap();
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let frames = of_type(&recs, "frame");
    assert_eq!(frames.len(), 1);
    assert_eq!(
        frames[0]["sender"],
        friend.local_addr().unwrap().to_string()
    );
    let sum = recs.last().unwrap();
    assert_eq!(
        (&sum["refused"], &sum["datagrams"]),
        (&Value::from(1), &Value::from(1))
    );
}

#[test]
fn human_lines_name_the_protocol() {
    let run = tool(&["-r", &path("mocopi/wave-60hz.pcapng"), "-n", "2"]).finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout[0].starts_with("mocopi       skeleton bones=27"),
        "{:?}",
        run.stdout
    );
    assert!(
        run.stdout[1].starts_with("mocopi       frame="),
        "{:?}",
        run.stdout
    );
    assert!(run.stderr.contains("done (count)"), "{}", run.stderr);
    // --vmc with a protocol whose row gives no pose: said once, not per datagram.
    let run = tool(&[
        "-r",
        &path("slimevr/tracker-100hz.pcap"),
        "--vmc",
        "127.0.0.1:9",
        "--topspeed",
    ])
    .finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("not bridged to --vmc").count(),
        1,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("read by: mocap-dump"), "{}", run.stderr);
    // Forced: every datagram decoded as the protocol given.
    let run = tool(&[
        "-r",
        &path("mocopi/wave-60hz.pcapng"),
        "--protocol",
        "livelink",
        "-n",
        "1",
    ])
    .finish();
    assert!(
        run.stdout[0].starts_with("livelink     error: not a whole Live Link Face datagram"),
        "{:?}",
        run.stdout
    );
}

#[test]
fn usage_errors_and_runtime_errors() {
    for (bad, says) in [
        (&["--format", "xml"][..], "xml"),
        (&["--smooth"], "--vmc"),
        (&["--eye-bones"], "--vmc"),
        (&["--protocol", "nosuch"], "nosuch"),
        (&["-l", "nowhere"], "nowhere"),
        (&["--ask", "127.0.0.1:0"], "port 0"),
        (&["-r", "x.pcap", "--ask", "127.0.0.1"], "--ask"),
        (
            &["--ask", "127.0.0.1", "--protocol", "mocopi"],
            "mocopi streams without being asked",
        ),
    ] {
        let run = tool(bad).finish();
        assert_eq!(run.code, Some(2), "{bad:?}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{bad:?}: {}", run.stderr);
    }
    let run = tool(&["-r", "/nonexistent/take.pcapng"]).finish();
    assert_eq!(run.code, Some(1));
    // A port in use, asked for, is a runtime error.
    let busy = UdpSocket::bind("127.0.0.1:0").unwrap();
    let at = busy.local_addr().unwrap().to_string();
    let run = tool(&["-l", &at, "--duration", "1s"]).finish();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

#[test]
fn completions_man_page_and_version() {
    mocap_testutil::check_generate(BIN, "mocap-dump", "--ask");
}

#[test]
#[ignore = "needs bash + man-db: scripts/test-all.sh"]
fn completions_parse_in_bash_and_the_man_page_renders() {
    mocap_testutil::check_generate_with_shell_and_man(BIN, "mocap-dump", "--ask");
}
