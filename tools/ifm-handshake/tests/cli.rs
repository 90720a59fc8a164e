//! Runs the real `ifm-handshake` against a phone emulator owned by the test:
//! the phone on 127.0.0.2, the tool on 127.0.0.1, ephemeral ports passed
//! through the options. Every wait is bounded.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::thread;
use std::time::Duration;

use mocap_core::{ifm, vmc};
use mocap_testutil::Proc;
use serde_json::Value;

mod common;

use common::{connect_from_phone, frames, phone, recv_command};

const BIN: &str = env!("CARGO_BIN_EXE_ifm-handshake");

fn tool(args: &[&str]) -> Proc {
    Proc::spawn(BIN, args, None)
}

/// The tool pointed at the emulated phone, listening on an ephemeral loopback port.
fn to_phone(port: &str, extra: &[&str]) -> Proc {
    tool(
        &[
            &["127.0.0.2", "--phone-port", port, "-l", "127.0.0.1:0"],
            extra,
        ]
        .concat(),
    )
}

#[test]
fn udp_v1_handshake_then_frames_and_our_command_looped_back_is_ignored() {
    let (phone, port) = phone();
    let mut t = to_phone(&port, &["--format", "json", "-n", "3"]);
    let (cmd, pc) = recv_command(&phone);
    assert_eq!(
        cmd,
        ifm::Command::StartUdp {
            version: ifm::Version::V1
        }
        .text()
    );
    phone.send_to(cmd.as_bytes(), pc).unwrap();
    for f in frames(3) {
        phone.send_to(f.as_bytes(), pc).unwrap();
    }
    t.log_line("data started");
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs.len(), 4, "{:?}", run.stdout);
    let f = &recs[0];
    assert_eq!(f["type"], "ifm.frame");
    assert_eq!(f["tracking"], true);
    assert_eq!(f["blendshapes"].as_object().unwrap().len(), 52);
    assert_eq!(f["blendshapes"]["eyeLookDownLeft"], 0.23);
    assert_eq!(f["unknown"]["hapihapi"], 0);
    assert_eq!(f["src"], phone.local_addr().unwrap().to_string());
    assert_eq!(f["head"]["rot"].as_array().unwrap().len(), 3);
    let sum = &recs[3];
    assert_eq!(
        (sum["frames"].as_u64(), sum["commands_ignored"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(sum["stopped"], "count");
}

#[test]
fn udp_v2_frames_with_negative_values() {
    let (phone, port) = phone();
    let t = to_phone(&port, &["--v2", "--format", "json", "-n", "1"]);
    let (cmd, pc) = recv_command(&phone);
    assert_eq!(
        cmd,
        ifm::Command::StartUdp {
            version: ifm::Version::V2
        }
        .text()
    );
    let v2 = "trackingStatus&1|jawOpen&-25|mouthSmile_L&150|=head#1,2,3,0.1,0.2,-0.4|rightEye#1,2,3|leftEye#4,5,6|";
    phone.send_to(v2.as_bytes(), pc).unwrap();
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let f = &run.json()[0];
    assert_eq!(f["blendshapes"]["jawOpen"], -0.25);
    assert_eq!(f["blendshapes"]["mouthSmileLeft"], 1.5);
}

#[test]
fn keepalive_resends_until_the_phone_answers() {
    let (phone, port) = phone();
    let mut t = to_phone(
        &port,
        &["--keepalive", "200ms", "-n", "1", "--format", "raw"],
    );
    // The phone "starts late": it misses the first command.
    let (first, _) = recv_command(&phone);
    let (second, pc) = recv_command(&phone);
    assert_eq!(first, second);
    t.log_line("again");
    phone.send_to(frames(1)[0].as_bytes(), pc).unwrap();
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, [frames(1)[0].to_owned()]);
}

#[test]
fn listening_only_decodes_frames_sent_without_a_handshake() {
    let mut t = tool(&["-l", "127.0.0.1:0", "-n", "2", "--format", "raw"]);
    let (_, addr) = t.log_line("listening on");
    let sender = UdpSocket::bind("127.0.0.2:0").unwrap();
    for f in frames(2) {
        sender.send_to(f.as_bytes(), addr.unwrap()).unwrap();
    }
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, frames(2));
    assert!(run.stderr.contains("listening only"));
}

#[test]
fn status_lines_report_the_interval_and_silence_is_explained_once() {
    let mut t = tool(&[
        "-l",
        "127.0.0.1:0",
        "--format",
        "raw",
        "--stats-interval",
        "1s",
        "--duration",
        "7500ms",
    ]);
    let (_, addr) = t.log_line("listening on");
    let at = addr.unwrap();
    let sender = UdpSocket::bind("127.0.0.2:0").unwrap();
    for f in frames(5) {
        sender.send_to(f.as_bytes(), at).unwrap();
    }
    // After the first stats line the phone is quiet for the rest of the run.
    t.log_line("datagrams/s over the last");
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, frames(5));
    // The rate since the start is left out of stats lines, kept in the summary.
    mocap_testutil::status::assert_went_quiet(&run.stderr, at, 4);
    let summary = run.stderr.lines().find(|l| l.contains("done (duration)"));
    assert!(
        summary.is_some_and(|l| l.contains("5 frames")),
        "{}",
        run.stderr
    );
}

#[test]
fn tcp_mode_frames_in_pieces_a_reconnect_and_the_stop_string() {
    let (phone, port) = phone();
    let mut t = to_phone(
        &port,
        &[
            "--tcp",
            "--tcp-listen",
            "127.0.0.1:0",
            "--keepalive",
            "200ms",
            "-n",
            "4",
            "--format",
            "json",
        ],
    );
    let (_, tcp) = t.log_line("listening on TCP");
    let tcp = tcp.unwrap();
    let stream_of = |fs: &[&str]| -> Vec<u8> {
        fs.iter()
            .flat_map(|f| [f.as_bytes(), ifm::TERMINATOR.as_bytes()].concat())
            .collect()
    };
    let all = frames(4);
    for (round, pair) in all.chunks(2).enumerate() {
        let (cmd, _) = recv_command(&phone);
        assert_eq!(
            cmd,
            ifm::Command::StartTcp {
                version: ifm::Version::V1
            }
            .text(),
            "round {round}"
        );
        let mut s = connect_from_phone(tcp);
        let bytes = stream_of(pair);
        // Three writes that cut frames and the terminator.
        for piece in [&bytes[..500], &bytes[500..990], &bytes[990..]] {
            s.write_all(piece).unwrap();
            s.flush().unwrap();
            thread::sleep(Duration::from_millis(20));
        }
        if round == 0 {
            drop(s);
            t.log_line("disconnected");
        } else {
            // Keep the connection until the tool has its frames. A start
            // command re-sent before the phone connected may still be queued.
            let start = ifm::Command::StartTcp {
                version: ifm::Version::V1,
            }
            .text();
            let stop = loop {
                let (cmd, _) = recv_command(&phone);
                if cmd != start {
                    break cmd;
                }
            };
            assert_eq!(stop, ifm::Command::StopTcp.text());
        }
    }
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let texts: Vec<_> = recs.iter().filter(|r| r["type"] == "ifm.frame").collect();
    assert_eq!(texts.len(), 4);
    let sum = recs.last().unwrap();
    assert_eq!(
        (sum["frames"].as_u64(), sum["connections"].as_u64()),
        (Some(4), Some(2))
    );
}

#[test]
fn bake_receives_and_writes_the_recording() {
    let (phone, port) = phone();
    let dir = std::env::temp_dir().join(format!("ifm-bake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out_file = dir.join("take.json");
    let mut t = to_phone(
        &port,
        &[
            "--bake",
            "--bake-listen",
            "127.0.0.1:0",
            "--out",
            out_file.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    let (_, tcp) = t.log_line("listening on TCP");
    let (cmd, _) = recv_command(&phone);
    assert_eq!(cmd, ifm::Command::Bake.text());
    let recording: Vec<String> = frames(120).into_iter().map(str::to_owned).collect();
    let payload = ifm::write_recording(&recording);
    let mut s = connect_from_phone(tcp.unwrap());
    for piece in payload.chunks(7000) {
        s.write_all(piece).unwrap();
    }
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let rec = &run.json()[0];
    assert_eq!(rec["type"], "ifm.recording");
    assert_eq!(
        (rec["frames"].as_u64(), rec["bad_frames"].as_u64()),
        (Some(120), Some(0))
    );
    assert_eq!(rec["duration_s"], 2.0);
    let written = std::fs::read(&out_file).unwrap();
    assert_eq!(ifm::parse_recording(&written).unwrap(), recording);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn one_shot_commands() {
    let (phone, port) = phone();
    for (flags, want) in [
        (vec!["--look-forward"], ifm::Command::LookForward),
        (vec!["--stop"], ifm::Command::StopTcp),
    ] {
        let t = to_phone(&port, &flags);
        let (cmd, _) = recv_command(&phone);
        assert_eq!(cmd, want.text());
        assert_eq!(t.finish().code, Some(0));
    }
    // Facemotion3d's start command.
    let t = to_phone(&port, &["--facemotion3d", "--duration", "300ms"]);
    let (cmd, _) = recv_command(&phone);
    assert_eq!(cmd, "FACEMOTION3D_OtherStreaming");
    assert_eq!(t.finish().code, Some(0));
}

#[test]
fn reads_text_captures_and_reports_bad_datagrams() {
    let mut input = frames(5).join("\n");
    input.push_str("\nnot a frame at all\n");
    input.push_str(include_str!(
        "../../../captures/ifacialmocap/v1_corrupted_stale_tail.txt"
    ));
    let run = Proc::spawn(
        BIN,
        &["-r", "-", "--format", "json"],
        Some(input.into_bytes()),
    )
    .finish();
    assert_eq!(run.code, Some(0));
    let recs: Vec<Value> = run.json();
    let types: Vec<_> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "ifm.frame",
            "ifm.frame",
            "ifm.frame",
            "ifm.frame",
            "ifm.frame",
            "error",
            "ifm.frame",
            "summary"
        ]
    );
    assert_eq!(recs[6]["warnings"].as_array().unwrap().len(), 2);
    let sum = recs.last().unwrap();
    assert_eq!(
        (
            sum["frames"].as_u64(),
            sum["errors"].as_u64(),
            sum["warnings"].as_u64()
        ),
        (Some(6), Some(1), Some(2))
    );
}

#[test]
fn usage_errors() {
    for bad in [
        &["--tcp", "--bake"][..],
        &["--format", "xml"],
        &["--out", "x.json"],
        // Held out: -r with -l was accepted, the -l silently unused.
        &["-r", "x.pcapng", "-l", "127.0.0.1:0"],
    ] {
        assert_eq!(tool(bad).finish().code, Some(2), "{bad:?}");
    }
    let run = tool(&["--look-forward", "-l", "127.0.0.1:0"]).finish();
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains("PHONE_HOST"), "{}", run.stderr);
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn capture_in_record_out_and_ctrl_c() {
    let dir = std::env::temp_dir().join(format!("ifm-pcap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A capture of 4 frames, written by the core's pcapng writer.
    let cap = dir.join("face.pcapng");
    let mut w = mocap_core::pcap::PcapNgWriter::new(std::fs::File::create(&cap).unwrap()).unwrap();
    let (phone_addr, pc): (SocketAddr, SocketAddr) = (
        "192.168.1.23:49983".parse().unwrap(),
        "192.168.1.10:49983".parse().unwrap(),
    );
    for (i, f) in frames(4).iter().enumerate() {
        let ts = Duration::from_secs(1_764_417_600) + Duration::from_millis(16 * i as u64);
        w.write(ts, phone_addr, pc, f.as_bytes()).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let run = tool(&["-r", cap.to_str().unwrap(), "--format", "json"]).finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[0]["src"], "192.168.1.23:49983");
    assert_eq!(recs[4]["frames"], 4);
    assert!((recs[4]["fps"].as_f64().unwrap() - 62.5).abs() < 0.01);

    // Live with -w, then Ctrl-C: the recording holds what arrived.
    let rec = dir.join("rec.pcapng");
    let mut t = tool(&[
        "-l",
        "127.0.0.1:0",
        "-w",
        rec.to_str().unwrap(),
        "--format",
        "raw",
    ]);
    let (_, addr) = t.log_line("listening on");
    let sender = UdpSocket::bind("127.0.0.2:0").unwrap();
    for f in frames(3) {
        sender.send_to(f.as_bytes(), addr.unwrap()).unwrap();
    }
    for _ in 0..3 {
        t.stdout_line("");
    }
    t.interrupt();
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("done (interrupted): 3 frames"),
        "{}",
        run.stderr
    );
    let run = tool(&["-r", rec.to_str().unwrap(), "--format", "raw"]).finish();
    assert_eq!(run.code, Some(0));
    assert_eq!(run.stdout, frames(3));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vmc_output_carries_every_frame_value_by_value() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let run = Proc::spawn(
        BIN,
        &["-r", "-", "--format", "json", "--vmc", &to, "--eye-bones"],
        Some(frames(3).join("\n").into_bytes()),
    )
    .finish();
    assert_eq!(run.code, Some(0), "{}", run.text());
    let recs: Vec<Value> = run.json();
    let mut buf = vec![0u8; 65_536];
    let mut datagrams = Vec::new();
    while let Ok(n) = rx.recv(&mut buf) {
        datagrams.push(buf[..n].to_vec());
    }
    let sum = recs.last().unwrap();
    assert_eq!(sum["vmc_datagrams"].as_u64(), Some(datagrams.len() as u64));
    let messages: Vec<vmc::Message> = datagrams
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .map(Result::unwrap)
        .collect();
    // Shaped like the reference sender: per frame the bone bundle, then the
    // Vals and one Apply.
    let frames_out: Vec<&[vmc::Message]> = messages
        .split_inclusive(|m| *m == vmc::Message::BlendApply)
        .collect();
    assert_eq!(frames_out.len(), 3);
    for (rec, out) in recs.iter().zip(&frames_out) {
        let shapes = rec["blendshapes"].as_object().unwrap();
        let vals: Vec<(&str, f32)> = out
            .iter()
            .filter_map(|m| match m {
                vmc::Message::BlendVal { name, value } => Some((name.as_str(), *value)),
                _ => None,
            })
            .collect();
        assert_eq!(vals.len(), shapes.len());
        for (name, value) in &vals {
            // The JSON record already gives fractions (percent / 100).
            let expected = shapes[*name].as_f64().unwrap() as f32;
            assert!(
                (value - expected.clamp(0.0, 1.0)).abs() < 1e-6,
                "{name} {value} {expected}"
            );
        }
        let apply = out.iter().position(|m| *m == vmc::Message::BlendApply);
        assert_eq!(apply, Some(out.len() - 1));
        assert!(
            out[3..out.len() - 1]
                .iter()
                .all(|m| matches!(m, vmc::Message::BlendVal { .. }))
        );
        let bones: Vec<&str> = out
            .iter()
            .filter_map(|m| match m {
                vmc::Message::BonePos { name, rot, .. } => {
                    let n: f32 = rot.iter().map(|v| v * v).sum();
                    assert!((n - 1.0).abs() < 1e-5);
                    Some(name.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(bones, ["Head", "LeftEye", "RightEye"]);
    }
}

#[test]
fn completions_man_page_and_version() {
    mocap_testutil::check_generate(BIN, "ifm-handshake", "--bake");
}

#[test]
#[ignore = "needs bash + man-db: scripts/test-all.sh"]
fn completions_parse_in_bash_and_the_man_page_renders() {
    mocap_testutil::check_generate_with_shell_and_man(BIN, "ifm-handshake", "--bake");
}

/// iFacialMocap's numbers are decimal text on the wire: an f64 reader of our
/// JSON gets exactly the numbers the text says (head, eyes, and blendshape
/// percents as fractions).
#[test]
fn json_numbers_are_the_wire_text_for_an_f64_reader() {
    let lines = frames(40);
    let run = Proc::spawn(
        BIN,
        &["-r", "-", "--format", "json"],
        Some(lines.join("\n").into_bytes()),
    )
    .finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs.len(), lines.len() + 1);
    let block = |line: &str, key: &str| -> Vec<f64> {
        let at = line.find(key).unwrap() + key.len();
        line[at..]
            .split('|')
            .next()
            .unwrap()
            .split(',')
            .map(|v| v.parse::<f64>().unwrap())
            .collect()
    };
    let nums = |v: &Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    for (line, rec) in lines.iter().zip(&recs) {
        let head = block(line, "head#");
        assert_eq!(nums(&rec["head"]["rot"]), head[..3], "{line}");
        assert_eq!(nums(&rec["head"]["pos"]), head[3..], "{line}");
        assert_eq!(nums(&rec["right_eye"]), block(line, "rightEye#"), "{line}");
        assert_eq!(nums(&rec["left_eye"]), block(line, "leftEye#"), "{line}");
        let jaw: f64 = block(line, "|jawOpen-")[0];
        assert_eq!(rec["blendshapes"]["jawOpen"].as_f64(), Some(jaw / 100.0));
    }
}

/// Datagrams arriving at `rx` until it is quiet for 500 ms, with the time
/// from the first to the last.
fn receive_all(rx: &UdpSocket) -> (Vec<Vec<u8>>, Duration) {
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = vec![0u8; 65_536];
    let mut got = Vec::new();
    let (mut first, mut last) = (None, None);
    while let Ok(n) = rx.recv(&mut buf) {
        let now = std::time::Instant::now();
        first.get_or_insert(now);
        last = Some(now);
        got.push(buf[..n].to_vec());
    }
    let span = match (first, last) {
        (Some(a), Some(b)) => b - a,
        _ => Duration::ZERO,
    };
    (got, span)
}

/// Sending a capture on as VMC plays it at its recorded timing (203 frames
/// over 3.37 s), so a receiver gets every frame; in bridge mode (no
/// --format) stdout stays empty. --topspeed sends as fast as read.
#[test]
fn vmc_from_a_capture_is_paced_and_quiet() {
    let cap = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../captures/ifacialmocap/face-60fps.pcapng"
    );
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let started = std::time::Instant::now();
    let tool = Proc::spawn(BIN, &["-r", cap, "--vmc", &to], None);
    let (got, span) = receive_all(&rx);
    let run = tool.finish();
    let took = started.elapsed();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.is_empty(),
        "bridge mode printed {:?}",
        run.stdout
    );
    assert!(run.stderr.contains("203 frames"), "{}", run.stderr);
    let applies = got
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .filter(|m| *m.as_ref().unwrap() == vmc::Message::BlendApply)
        .count();
    assert_eq!(applies, 203);
    // 202 gaps of 1/60 s: 3.37 s, played as recorded (generous bounds).
    assert!(span >= Duration::from_millis(3000), "{span:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let sent = format!("{} VMC datagrams sent", got.len());
    assert!(run.stderr.contains(&sent), "{}", run.stderr);
    // --topspeed: the same datagrams sent at once (a burst a receiver may
    // not keep up with, which is why pacing is the default).
    let tool = Proc::spawn(BIN, &["-r", cap, "--vmc", &to, "--topspeed"], None);
    let (fast, span) = receive_all(&rx);
    let run = tool.finish();
    assert_eq!(run.code, Some(0));
    assert!(run.stderr.contains(&sent), "{}", run.stderr);
    assert!(!fast.is_empty() && fast.len() <= got.len());
    assert!(span < Duration::from_secs(1), "{span:?}");
}

/// `--vmc --smooth`: every frame still sent (one Apply each), head rotations
/// smoothed (not equal to the unsmoothed ones, still unit); `--smooth`
/// without `--vmc` is a usage error.
#[test]
fn vmc_smooth_sends_every_frame_smoothed() {
    let cap = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../captures/ifacialmocap/face-60fps.pcapng"
    );
    let run = |extra: &[&str]| -> Vec<vmc::Message> {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap().to_string();
        let mut args = vec!["-r", cap, "--vmc", to.as_str(), "-q"];
        args.extend_from_slice(extra);
        let tool = Proc::spawn(BIN, &args, None);
        let (got, _) = receive_all(&rx);
        assert_eq!(tool.finish().code, Some(0));
        got.iter()
            .flat_map(|d| vmc::decode(d).unwrap())
            .map(Result::unwrap)
            .collect()
    };
    let (plain, smooth) = (run(&[]), run(&["--smooth"]));
    let applies = |m: &[vmc::Message]| m.iter().filter(|m| **m == vmc::Message::BlendApply).count();
    assert_eq!(applies(&plain), 203);
    assert_eq!(applies(&smooth), 203);
    assert_eq!(plain.len(), smooth.len());
    let heads = |m: &[vmc::Message]| -> Vec<[f32; 4]> {
        m.iter()
            .filter_map(|m| match m {
                vmc::Message::BonePos { name, rot, .. } if name == "Head" => Some(*rot),
                _ => None,
            })
            .collect()
    };
    let (hp, hs) = (heads(&plain), heads(&smooth));
    assert_eq!(hp.len(), hs.len());
    assert!(
        hs.iter()
            .all(|q| (q.iter().map(|v| v * v).sum::<f32>() - 1.0).abs() < 1e-4)
    );
    assert!(hp.iter().zip(&hs).filter(|(a, b)| a != b).count() > 100);
    let usage = Proc::spawn(BIN, &["-r", cap, "--smooth"], None).finish();
    assert_eq!(usage.code, Some(2), "{}", usage.stderr);
}

/// With the phone given, only the phone's frames are decoded: a stranger on
/// the same network is refused and counted, until `--allow` names it.
#[test]
fn frames_from_anyone_but_the_phone_are_refused() {
    let stranger = UdpSocket::bind("127.0.0.3:0").unwrap();
    for allow in [None, Some("127.0.0.3")] {
        let (phone, port) = phone();
        let extra: Vec<&str> = match allow {
            Some(a) => vec!["--format", "json", "-n", "4", "--allow", a],
            None => vec!["--format", "json", "-n", "2"],
        };
        let mut t = to_phone(&port, &extra);
        let (_, pc) = recv_command(&phone);
        t.log_line("phone at 127.0.0.2 only");
        for f in frames(2) {
            stranger.send_to(f.as_bytes(), pc).unwrap();
        }
        thread::sleep(Duration::from_millis(50));
        for f in frames(2) {
            phone.send_to(f.as_bytes(), pc).unwrap();
        }
        let run = t.finish();
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let recs = run.json();
        let sum = recs.last().unwrap();
        let phone_addr = phone.local_addr().unwrap().to_string();
        let from = |who: &str| {
            recs.iter()
                .filter(|r| r["type"] == "ifm.frame" && r["src"] == who)
                .count()
        };
        if allow.is_none() {
            assert_eq!(from(&phone_addr), 2);
            assert_eq!(from(&stranger.local_addr().unwrap().to_string()), 0);
            assert_eq!(sum["refused"], 2);
            assert_eq!(
                sum["refused_senders"][0]["src"],
                stranger.local_addr().unwrap().to_string()
            );
        } else {
            assert_eq!(from(&phone_addr), 2);
            assert_eq!(from(&stranger.local_addr().unwrap().to_string()), 2);
            assert!(sum.get("refused").is_none(), "{sum}");
        }
    }
}

/// TCP mode with a phone: a stranger's connection is closed unread and
/// counted, and does not replace the phone's.
#[test]
fn tcp_mode_refuses_a_strangers_connection() {
    let (phone, port) = phone();
    let mut t = to_phone(
        &port,
        &[
            "--tcp",
            "--tcp-listen",
            "127.0.0.1:0",
            "-n",
            "2",
            "--format",
            "json",
        ],
    );
    let (_, tcp) = t.log_line("listening on TCP");
    let tcp = tcp.unwrap();
    recv_command(&phone);
    let frame_bytes = |f: &str| [f.as_bytes(), ifm::TERMINATOR.as_bytes()].concat();
    let mut stranger = TcpStream::connect(tcp).unwrap();
    let _ = stranger.write_all(&frame_bytes(frames(1)[0]));
    thread::sleep(Duration::from_millis(100));
    let mut s = connect_from_phone(tcp);
    for f in frames(2) {
        s.write_all(&frame_bytes(f)).unwrap();
    }
    let run = t.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let sum = recs.last().unwrap();
    assert_eq!(sum["frames"], 2, "{sum}");
    assert_eq!(sum["refused"], 1, "{sum}");
    assert!(
        recs.iter()
            .filter(|r| r["type"] == "ifm.frame")
            .all(|r| r["src"].as_str().unwrap().starts_with("127.0.0.2:"))
    );
}

/// `--vmc` to IPv6 loopback: the receiver gets every datagram the summary
/// counts for it (`sends`), none failed. A host without IPv6 loopback
/// fails this test.
#[test]
fn vmc_output_reaches_an_ipv6_receiver() {
    let rx = UdpSocket::bind("[::1]:0")
        .expect("IPv6 loopback (::1) is needed by this test and is unavailable here");
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let run = Proc::spawn(
        BIN,
        &["-r", "-", "--format", "json", "--vmc", &to],
        Some(frames(5).join("\n").into_bytes()),
    )
    .finish();
    assert_eq!(run.code, Some(0), "{}", run.text());
    let mut buf = vec![0u8; 65_536];
    let mut got = 0u64;
    while rx.recv(&mut buf).is_ok() {
        got += 1;
    }
    let sum = run.json().pop().unwrap();
    assert!(got >= 5, "{got} datagrams");
    assert_eq!(sum["vmc_datagrams"].as_u64(), Some(got), "{sum}");
    assert_eq!(
        sum["sends"],
        serde_json::json!([{"to": to, "sent": got, "failed": 0, "unreachable": 0}])
    );
}
