//! Runs the real `livelink-dump` on the bundled capture, on hand-written
//! datagrams, and live on loopback (phones on 127.0.0.2 and 127.0.0.3, the
//! tool on 127.0.0.1, ephemeral ports). Every wait is bounded.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{SocketAddr, UdpSocket};
use std::process::Command;
use std::time::Duration;

use mocap_core::livelink::{self, BLENDSHAPES, PacketRepr};
use mocap_core::vmc::{self, Message};
use mocap_testutil::Proc;

const BIN: &str = env!("CARGO_BIN_EXE_livelink-dump");
const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/livelink/face-60fps.pcapng"
);

fn tool(args: &[&str]) -> Proc {
    Proc::spawn(BIN, args, None)
}

/// The capture's datagrams in order, read with the core's pcap reader.
fn capture() -> Vec<(SocketAddr, Vec<u8>)> {
    let mut r = mocap_core::pcap::Datagrams::new(std::fs::File::open(CAPTURE).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(d) = r.next_datagram() {
        let d = d.unwrap();
        out.push((d.src, d.payload.to_vec()));
    }
    out
}

/// A face datagram written out byte by byte from docs/livelink.md, not by our encoder.
fn by_hand(subject: &str, frame: i32, values: &[f32]) -> Vec<u8> {
    let device = b"4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F";
    let mut b = vec![6u8];
    b.extend((device.len() as i32).to_be_bytes());
    b.extend(device);
    b.extend((subject.len() as i32).to_be_bytes());
    b.extend(subject.as_bytes());
    b.extend(frame.to_be_bytes());
    b.extend(0.5f32.to_be_bytes());
    b.extend(60i32.to_be_bytes());
    b.extend(1i32.to_be_bytes());
    if !values.is_empty() {
        b.push(values.len() as u8);
        for v in values {
            b.extend(v.to_be_bytes());
        }
    }
    b
}

/// 61 values whose float32 bit patterns have long decimal expansions.
fn odd_values(seed: u32) -> Vec<f32> {
    (0..61u32)
        .map(|i| f32::from_bits(0x3c00_0000 + (i * 0x0012_3457 + seed * 0x0301) % 0x0300_0000))
        .collect()
}

#[test]
fn json_values_are_the_wire_values_for_an_f64_reader() {
    let frames: Vec<Vec<f32>> = (0..5).map(odd_values).collect();
    let hex: Vec<String> = frames
        .iter()
        .enumerate()
        .map(|(k, v)| mocap_core_hex(&by_hand("Zoe's iPhone", 100 + k as i32, v)))
        .chain([mocap_core_hex(&by_hand("Zoe's iPhone", 105, &[]))])
        .collect();
    let run = Proc::spawn(
        BIN,
        &["-r", "-", "--format", "json"],
        Some(hex.join("\n").into_bytes()),
    )
    .finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs.len(), 7);
    for (k, (rec, want)) in recs.iter().zip(&frames).enumerate() {
        assert_eq!(rec["type"], "livelink.frame");
        assert_eq!(rec["subject"], "Zoe's iPhone");
        assert_eq!(rec["device"], "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F");
        assert_eq!(rec["frame"], 100 + k);
        assert_eq!(rec["subframe"], 0.5);
        assert_eq!(rec["fps"], serde_json::json!([60, 1]));
        let shapes = rec["blendshapes"].as_object().unwrap();
        let names: Vec<&str> = shapes.keys().map(String::as_str).collect();
        assert_eq!(names, BLENDSHAPES, "52 names in wire order");
        for (i, name) in BLENDSHAPES.iter().enumerate() {
            assert_eq!(shapes[*name].as_f64(), Some(f64::from(want[i])), "{name}");
        }
        for (part, at) in [("head", 52), ("left_eye", 55), ("right_eye", 58)] {
            for (j, a) in ["yaw", "pitch", "roll"].iter().enumerate() {
                assert_eq!(
                    rec[part][a].as_f64(),
                    Some(f64::from(want[at + j])),
                    "{part}.{a}"
                );
            }
        }
    }
    assert_eq!(recs[5]["type"], "livelink.noface");
    assert_eq!(recs[5]["frame"], 105);
    let sum = &recs[6];
    assert_eq!(sum["type"], "summary");
    assert_eq!(sum["tool"], "livelink-dump");
    assert_eq!(
        (
            sum["packets"].as_u64(),
            sum["frames"].as_u64(),
            sum["noface"].as_u64()
        ),
        (Some(6), Some(5), Some(1))
    );
    assert_eq!(sum["lost"], 0);
}

fn mocap_core_hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bundled capture: what its README says it holds, per subject.
#[test]
fn reads_the_bundled_capture() {
    let run = tool(&["-r", CAPTURE, "--format", "json"]).finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let kind = |k: &str| recs.iter().filter(|r| r["type"] == k).count();
    assert_eq!(
        (
            kind("livelink.frame"),
            kind("livelink.noface"),
            kind("error")
        ),
        (268, 30, 1)
    );
    let noface: Vec<u64> = recs
        .iter()
        .filter(|r| r["type"] == "livelink.noface")
        .map(|r| r["frame"].as_u64().unwrap())
        .collect();
    let start = 16 * 3600 * 60;
    assert_eq!(noface, (start + 150..start + 180).collect::<Vec<_>>());
    let err = recs.iter().find(|r| r["type"] == "error").unwrap();
    assert_eq!(err["tag"], "values");
    assert_eq!(err["offset"], 1 + 4 + 36 + 4 + 12 + 16);
    assert_eq!(err["reason"], "61 values need 244 bytes, 234 left");
    let sum = recs.last().unwrap();
    assert_eq!(sum["type"], "summary");
    assert_eq!(sum["packets"], 299);
    assert_eq!(
        (
            sum["lost"].as_u64(),
            sum["duplicates"].as_u64(),
            sum["errors"].as_u64()
        ),
        (Some(3), Some(1), Some(1))
    );
    let subjects = sum["subjects"].as_array().unwrap();
    assert_eq!(subjects.len(), 2);
    let zoe = &subjects[0];
    assert_eq!(
        (zoe["src"].as_str(), zoe["subject"].as_str()),
        (Some("127.0.0.3:50200"), Some("Zoe's iPhone"))
    );
    assert_eq!(
        (
            zoe["frames"].as_u64(),
            zoe["noface"].as_u64(),
            zoe["lost"].as_u64(),
            zoe["duplicates"].as_u64()
        ),
        (Some(208), Some(30), Some(3), Some(1))
    );
    let ipad = &subjects[1];
    assert_eq!(
        (
            ipad["subject"].as_str(),
            ipad["frames"].as_u64(),
            ipad["lost"].as_u64()
        ),
        (Some("Studio iPad"), Some(60), Some(0))
    );
    // The sender clock is frame + subframe: the subframe drifts 0.001 a
    // frame in this capture, so the app's clock shows 60 / 1.001 fps.
    assert!((ipad["sender_fps"].as_f64().unwrap() - 59.94).abs() < 0.001);
    assert!((ipad["fps"].as_f64().unwrap() - 60.0).abs() < 0.01);
    // --subject prints one of them; the other is still counted.
    let run = tool(&[
        "-r",
        CAPTURE,
        "--format",
        "json",
        "--subject",
        "Studio iPad",
    ])
    .finish();
    let recs = run.json();
    assert_eq!(
        recs.iter()
            .filter(|r| r["type"] == "livelink.frame")
            .count(),
        60
    );
    assert_eq!(
        recs.last().unwrap()["subjects"].as_array().unwrap().len(),
        2
    );
    // Human lines: one per packet, then the summary on stderr.
    let run = tool(&["-r", CAPTURE]).finish();
    let text = run.text();
    assert_eq!(run.stdout.len(), 299);
    assert!(
        text.starts_with("frame     \"Zoe's iPhone\" frame=3456000"),
        "{text}"
    );
    assert!(text.contains("noface    \"Zoe's iPhone\" frame=3456150"));
    assert!(
        run.stderr
            .contains("268 frames, 30 no-face, 1 error; lost 3, duplicates 1"),
        "{}",
        run.stderr
    );
    // Two phones: the total rate is both added, and says so (it read as
    // one phone at twice the rate).
    assert!(run.stderr.contains("; 2 streams, "), "{}", run.stderr);
    assert!(run.stderr.contains(" fps in all"), "{}", run.stderr);
}

/// Two phones live on one port, kept apart by sender and subject; a gap, a
/// duplicate and a late frame counted; -w records what arrived; Ctrl-C ends
/// with the summary.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn live_phones_kept_apart_recorded_and_interrupted() {
    let dir = std::env::temp_dir().join(format!("livelink-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("take.pcapng");
    let mut t = tool(&[
        "-l",
        "127.0.0.1:0",
        "--format",
        "json",
        "-w",
        rec.to_str().unwrap(),
    ]);
    let (_, addr) = t.log_line("listening on");
    let addr = addr.unwrap();
    let a = UdpSocket::bind("127.0.0.2:0").unwrap();
    let b = UdpSocket::bind("127.0.0.3:0").unwrap();
    // Phone A: frames 0, 1, 3, 3, 2, 4 (a gap filled late, a duplicate).
    for f in [0, 1, 3, 3, 2, 4] {
        a.send_to(&by_hand("A", f, &odd_values(1)), addr).unwrap();
        t.stdout_line("livelink.frame");
    }
    // Phone B sends two subjects (an app can be renamed mid-session).
    for (s, f) in [("B", 10), ("B", 11), ("B2", 50)] {
        b.send_to(&by_hand(s, f, &[]), addr).unwrap();
        t.stdout_line("livelink.noface");
    }
    // Garbage from A: an error record, and the tool keeps going.
    a.send_to(&[6, 0, 0, 0, 99], addr).unwrap();
    t.stdout_line("\"error\"");
    t.interrupt();
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["stopped"], "interrupted");
    assert_eq!(sum["packets"], 10);
    let subjects = sum["subjects"].as_array().unwrap();
    let pick = |s: &str| subjects.iter().find(|x| x["subject"] == s).unwrap();
    let a_rec = pick("A");
    assert_eq!(a_rec["src"], a.local_addr().unwrap().to_string());
    assert_eq!(
        (
            a_rec["frames"].as_u64(),
            a_rec["lost"].as_u64(),
            a_rec["duplicates"].as_u64(),
            a_rec["reordered"].as_u64()
        ),
        (Some(6), Some(0), Some(1), Some(1))
    );
    assert_eq!(
        (pick("B")["noface"].as_u64(), pick("B2")["noface"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(sum["errors"], 1);
    // The recording holds the same ten datagrams.
    let again = tool(&["-r", rec.to_str().unwrap(), "--format", "json"]).finish();
    let recs = again.json();
    assert_eq!(recs.last().unwrap()["packets"], 10);
    assert_eq!(
        recs.iter()
            .filter(|r| r["type"] == "livelink.frame")
            .count(),
        6
    );
    let _ = std::fs::remove_dir_all(&dir);
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

/// What --vmc must send for one subject of the capture, frame by frame: the
/// wire blendshapes of each face packet, the last face again for a no-face
/// packet (the default --on-lost hold).
fn expected_faces(subject: &str) -> Vec<Vec<f32>> {
    let mut out = Vec::new();
    let mut last: Option<Vec<f32>> = None;
    for (_, d) in capture() {
        let Ok(p) = livelink::parse(&d) else { continue };
        if p.subject() != subject {
            continue;
        }
        if let Some(f) = p.face() {
            last = Some(f.values().take(52).collect());
        }
        if let Some(l) = &last {
            out.push(l.clone());
        }
    }
    out
}

fn blend_values(messages: &[Message]) -> Vec<Vec<f32>> {
    messages
        .split_inclusive(|m| *m == Message::BlendApply)
        .map(|frame| {
            frame
                .iter()
                .filter_map(|m| match m {
                    Message::BlendVal { value, .. } => Some(*value),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// --vmc from the capture, at its recorded timing: one Apply per packet of
/// the chosen subject, every blendshape the wire value (clamping leaves
/// these 0–1 values alone), ARKit names, Head after the values.
#[test]
fn vmc_sends_every_face_frame_with_the_wire_values() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let t = tool(&[
        "-r",
        CAPTURE,
        "--vmc",
        &to,
        "--subject",
        "Zoe's iPhone",
        "--eye-bones",
    ]);
    let got = receive_all(&rx);
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.is_empty(),
        "bridge mode is quiet: {:?}",
        run.stdout
    );
    let messages: Vec<Message> = got
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .map(Result::unwrap)
        .collect();
    let want = expected_faces("Zoe's iPhone");
    assert_eq!(want.len(), 238, "208 faces + 30 no-face packets");
    assert_eq!(blend_values(&messages).len(), want.len());
    assert_eq!(blend_values(&messages), want);
    let first: Vec<&str> = messages
        .iter()
        .take_while(|m| **m != Message::BlendApply)
        .filter_map(|m| match m {
            Message::BlendVal { name, .. } => Some(name.as_str()),
            Message::BonePos { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(first[..3], ["Head", "LeftEye", "RightEye"]);
    assert_eq!(first[3], "eyeBlinkLeft");
    assert_eq!(first.len(), 3 + 52);
    assert!(run.stderr.contains("vmc: 238 frames"), "{}", run.stderr);
}

#[test]
fn usage_errors_and_runtime_errors() {
    for bad in [
        &["--format", "xml"][..],
        &["--smooth"],
        &["--eye-bones"],
        &["--angles", "degrees"],
        &["-l", "nowhere"],
    ] {
        assert_eq!(tool(bad).finish().code, Some(2), "{bad:?}");
    }
    let run = tool(&["-r", "/nonexistent/take.pcapng"]).finish();
    assert_eq!(run.code, Some(1));
    // A port in use is a runtime error.
    let busy = UdpSocket::bind("127.0.0.1:0").unwrap();
    let at = busy.local_addr().unwrap().to_string();
    let run = tool(&["-l", &at, "--duration", "1s"]).finish();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

#[test]
fn count_and_duration_stop_the_run() {
    let run = tool(&["-r", CAPTURE, "-n", "5", "--format", "json"]).finish();
    let recs = run.json();
    assert_eq!(recs.len(), 6);
    assert_eq!(recs[5]["stopped"], "count");
    let run = tool(&["-l", "127.0.0.1:0", "--duration", "300ms"]).finish();
    assert_eq!(run.code, Some(0));
    assert!(run.stderr.contains("done (duration"), "{}", run.stderr);
}

#[test]
fn completions_man_page_and_version() {
    mocap_testutil::check_generate(BIN, "livelink-dump", "--subject");
}

#[test]
#[ignore = "needs bash + man-db: scripts/test-all.sh"]
fn completions_parse_in_bash_and_the_man_page_renders() {
    mocap_testutil::check_generate_with_shell_and_man(BIN, "livelink-dump", "--subject");
}

/// The whole leg as a user runs it: `pcap-replay` plays the capture into
/// `livelink-dump -l … --vmc …`, and a python-osc receiver gets every face
/// frame's blendshapes with the wire values and one Apply per frame. The
/// receiver gives up after a bounded wait, so a lost datagram fails the test.
#[test]
#[ignore = "needs python-osc: scripts/test-all.sh"]
fn pcap_replay_into_livelink_dump_into_python_osc() {
    use std::io::BufRead as _;
    let replay = mocap_testutil::tool(BIN, "pcap-replay");
    let port = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = format!(
        "from pythonosc import dispatcher, osc_server\n\
         import time\n\
         frames, cur = [], []\n\
         def val(a, name, v): cur.append((name, v))\n\
         def apply(a, *args):\n\
         \x20   frames.append(list(cur)); cur.clear()\n\
         d = dispatcher.Dispatcher()\n\
         d.map('/VMC/Ext/Blend/Val', val)\n\
         d.map('/VMC/Ext/Blend/Apply', apply)\n\
         s = osc_server.BlockingOSCUDPServer(('127.0.0.1', {port}), d)\n\
         s.timeout = 0.2\n\
         print('ready', flush=True)\n\
         deadline = time.monotonic() + 30\n\
         while len(frames) < 238 and time.monotonic() < deadline:\n\
         \x20   s.handle_request()\n\
         for f in frames: print(' '.join(n + '=' + repr(v) for n, v in f))\n"
    );
    let mut py = Command::new("python3")
        .args(["-c", &server])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs (scripts/test-all.sh installs python-osc)");
    let mut lines = std::io::BufReader::new(py.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ready"));
    let to = format!("127.0.0.1:{port}");
    let mut dump = tool(&[
        "-l",
        "127.0.0.1:0",
        "--vmc",
        &to,
        "--subject",
        "Zoe's iPhone",
        "--stats-interval",
        "10s",
    ]);
    let (_, at) = dump.log_line("listening on");
    let at = at.unwrap().to_string();
    let played = Proc::spawn(
        replay.to_str().unwrap(),
        &["-q", CAPTURE, "--to", &at],
        None,
    )
    .finish();
    assert_eq!(played.code, Some(0), "{}", played.stderr);
    // Read before waiting: the receiver's report is larger than a pipe holds.
    let report: Vec<String> = lines.map_while(Result::ok).collect();
    let status = py.wait().unwrap();
    assert!(status.success());
    dump.interrupt();
    let run = dump.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let frames: Vec<Vec<(String, f64)>> = report
        .iter()
        .map(|l| {
            l.split(' ')
                .map(|kv| {
                    let (k, v) = kv.split_once('=').unwrap();
                    (k.to_owned(), v.parse().unwrap())
                })
                .collect()
        })
        .collect();
    let want = expected_faces("Zoe's iPhone");
    assert_eq!(
        frames.len(),
        want.len(),
        "one Apply per packet of the subject"
    );
    for (k, (got, want)) in frames.iter().zip(&want).enumerate() {
        assert_eq!(got.len(), 52, "frame {k}");
        for ((name, v), (arkit, w)) in got.iter().zip(mocap_core::ifm::ARKIT.iter().zip(want)) {
            assert_eq!(name, arkit, "frame {k}");
            assert_eq!(*v, f64::from(*w), "frame {k} {name}");
        }
    }
}

#[test]
fn repr_bytes_equal_the_hand_written_layout() {
    let values = odd_values(3);
    let ours = PacketRepr {
        device: "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F".into(),
        subject: "Zoe's iPhone".into(),
        frame: 7,
        subframe: 0.5,
        rate: [60, 1],
        values: Some(values.clone()),
    };
    assert_eq!(ours.to_bytes(), by_hand("Zoe's iPhone", 7, &values));
}

/// `--vmc --smooth`: still one Apply per packet, values smoothed (not the
/// wire values, still within 0–1); `--smooth` without `--vmc` is a usage error.
#[test]
fn vmc_smooth_sends_every_frame_smoothed() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let t = tool(&[
        "-r",
        CAPTURE,
        "--vmc",
        &to,
        "--subject",
        "Zoe's iPhone",
        "--smooth",
    ]);
    let got = receive_all(&rx);
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let messages: Vec<Message> = got
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .map(Result::unwrap)
        .collect();
    let smoothed = blend_values(&messages);
    let wire = expected_faces("Zoe's iPhone");
    assert_eq!(smoothed.len(), wire.len());
    assert!(smoothed.iter().flatten().all(|v| (0.0..=1.0).contains(v)));
    let differ = smoothed.iter().zip(&wire).filter(|(s, w)| s != w).count();
    assert!(
        differ > wire.len() / 2,
        "only {differ} of {} frames changed",
        wire.len()
    );
    assert_eq!(tool(&["-r", CAPTURE, "--smooth"]).finish().code, Some(2));
}

/// `--vmc` to IPv6 loopback: the receiver gets every datagram the summary
/// counts for it; a second destination where nothing listens is reported
/// in words and counted, and does not disturb the first. A host without
/// IPv6 loopback fails this test.
#[test]
fn vmc_reaches_ipv6_and_a_closed_port_is_reported() {
    let rx = UdpSocket::bind("[::1]:0")
        .expect("IPv6 loopback (::1) is needed by this test and is unavailable here");
    let to = rx.local_addr().unwrap().to_string();
    let closed = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let t = tool(&[
        "-r",
        CAPTURE,
        "--format",
        "json",
        "-n",
        "60",
        "--vmc",
        &to,
        "--vmc",
        &closed.to_string(),
    ]);
    let got = receive_all(&rx);
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(got.len() >= 40, "{} datagrams", got.len());
    let sum = run.json().pop().unwrap();
    let sends = sum["sends"].as_array().unwrap();
    assert_eq!(sends[0]["to"].as_str(), Some(to.as_str()), "{sum}");
    assert_eq!(sends[0]["sent"].as_u64(), Some(got.len() as u64), "{sum}");
    assert_eq!(sends[0]["failed"].as_u64(), Some(0), "{sum}");
    let dead = &sends[1];
    assert!(dead["unreachable"].as_u64().unwrap() > 0, "{sum}");
    assert_eq!(dead["failed"], dead["unreachable"], "{sum}");
    assert_eq!(
        dead["sent"].as_u64().unwrap() + dead["failed"].as_u64().unwrap(),
        got.len() as u64,
        "{sum}"
    );
    let said = format!("nothing is listening at {closed} (is VSeeFace's receiver on?)");
    assert_eq!(run.stderr.matches(&said).count(), 1, "{}", run.stderr);
}

/// `--allow` under a flood from one host on many source ports (the held-out
/// run wrote a line per port: 193 k lines in 5 s): one line names the host,
/// every datagram is counted, and the friend is served all along.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn refusals_are_logged_once_per_host_not_per_port() {
    let mut t = tool(&[
        "-l",
        "127.0.0.1:0",
        "--allow",
        "127.0.0.1",
        "--format",
        "json",
    ]);
    let (_, addr) = t.log_line("listening on");
    let addr = addr.unwrap();
    let ports = 400;
    for k in 0..ports {
        let stranger = UdpSocket::bind("127.0.0.2:0").unwrap();
        stranger.send_to(&by_hand("S", k, &[]), addr).unwrap();
    }
    let friend = UdpSocket::bind("127.0.0.1:0").unwrap();
    friend.send_to(&by_hand("F", 1, &[]), addr).unwrap();
    t.stdout_line("livelink.noface");
    t.interrupt();
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["refused"], ports);
    assert_eq!(sum["packets"], 1, "only the friend's datagram is decoded");
    let lines = run
        .stderr
        .matches("refused datagrams from 127.0.0.2:")
        .count();
    assert_eq!(lines, 1, "{}", run.stderr);
}

/// Held out: an app restarted mid-take, its frame numbers back by less
/// than 1000, was counted as duplicates for ever (and mocap-top's rate fell
/// to 0). A run of in-order frames after the jump is one restart.
#[test]
fn an_app_restart_mid_take_is_one_restart_not_duplicates() {
    let hex: Vec<String> = (0..=400)
        .chain(100..=200)
        .map(|f| mocap_core_hex(&by_hand("A", f, &[])))
        .collect();
    let run = Proc::spawn(
        BIN,
        &["-r", "-", "--format", "json"],
        Some(hex.join("\n").into_bytes()),
    )
    .finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["packets"], 502);
    assert_eq!(
        (
            sum["restarts"].as_u64(),
            sum["duplicates"].as_u64(),
            sum["reordered"].as_u64(),
            sum["lost"].as_u64()
        ),
        (Some(1), Some(0), Some(0), Some(0)),
        "{sum}"
    );
}
