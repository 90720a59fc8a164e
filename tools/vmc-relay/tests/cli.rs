//! Runs the real `vmc-relay` on loopback with ephemeral ports: fan-out,
//! filters, renames, rate limit, --allow, a dead receiver, garbage and a
//! nesting bomb mid-stream, sniffing, and interop with python-osc.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{SocketAddr, UdpSocket};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use mocap_core::osc;
use mocap_core::vmc::{self, Message};
use mocap_testutil::{LIMIT, Proc};

const BIN: &str = env!("CARGO_BIN_EXE_vmc-relay");

fn receiver() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    s
}

fn addr(s: &UdpSocket) -> String {
    s.local_addr().unwrap().to_string()
}

/// Datagrams until `n` arrived or the socket stays quiet.
fn collect(rx: &UdpSocket, n: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65_535];
    let start = Instant::now();
    while out.len() < n && start.elapsed() < LIMIT {
        match rx.recv_from(&mut buf) {
            Ok((len, _)) => out.push(buf[..len].to_vec()),
            Err(_) if out.len() >= n => break,
            Err(_) => {}
        }
    }
    out
}

/// Everything that arrives until the socket is quiet for a while.
fn drain(rx: &UdpSocket) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65_535];
    while let Ok((len, _)) = rx.recv_from(&mut buf) {
        out.push(buf[..len].to_vec());
    }
    out
}

fn messages(datagrams: &[Vec<u8>]) -> Vec<Message> {
    datagrams
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap().into_iter().map(Result::unwrap))
        .collect()
}

fn frame(t: f32, head_x: f32) -> Vec<Vec<u8>> {
    let mut f = vec![Message::RootPos {
        name: "root".into(),
        pos: [0.0, 0.9, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
        mr: None,
    }];
    for b in ["Hips", "Spine", "Neck", "Head", "LeftHand"] {
        let x = if b == "Head" { head_x } else { 0.0 };
        f.push(Message::BonePos {
            name: b.into(),
            pos: [x, 0.1, 0.0],
            rot: [0.0, 0.0, 0.0, 1.0],
        });
    }
    f.push(Message::BlendVal {
        name: "Joy".into(),
        value: 0.5,
    });
    f.push(Message::BlendVal {
        name: "Blink_L".into(),
        value: 1.0,
    });
    f.push(Message::BlendApply);
    f.push(Message::Available {
        loaded: 1,
        calibration: None,
        tracking: None,
    });
    f.push(Message::Time(t));
    vmc::frame_datagrams(&f, vmc::MAX_BUNDLE).unwrap()
}

fn bomb() -> Vec<u8> {
    let mut b = osc::message(&osc::Message::new("/x", vec![])).unwrap();
    for _ in 0..3000 {
        let mut outer = b"#bundle\0\0\0\0\0\0\0\0\x01".to_vec();
        outer.extend_from_slice(&(b.len() as i32).to_be_bytes());
        outer.extend_from_slice(&b);
        b = outer;
    }
    b
}

/// Starts the relay on an ephemeral loopback port; returns it and its address.
fn relay(args: &[&str]) -> (Proc, SocketAddr) {
    let mut all = vec!["-l", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let mut p = Proc::spawn(BIN, &all, None);
    let (_, a) = p.log_line("listening on");
    (p, a.unwrap())
}

fn send_all(to: SocketAddr, datagrams: &[Vec<u8>]) {
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for d in datagrams {
        tx.send_to(d, to).unwrap();
        thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn raw_fan_out_gives_every_receiver_the_same_bytes_in_order() {
    let rx: Vec<_> = (0..3).map(|_| receiver()).collect();
    let mut input = Vec::new();
    for i in 0..10 {
        input.extend(frame(i as f32, i as f32));
        if i == 4 {
            input.push(b"garbage, not OSC".to_vec());
            input.push(bomb());
        }
    }
    let n = input.len().to_string();
    let (p, at) = relay(&[
        "--to",
        &addr(&rx[0]),
        "--to",
        &addr(&rx[1]),
        "--to",
        &addr(&rx[2]),
        "-n",
        &n,
        "--format",
        "json",
    ]);
    send_all(at, &input);
    for r in &rx {
        assert_eq!(collect(r, input.len()), input);
    }
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let sum = done.json().pop().unwrap();
    assert_eq!(sum["datagrams"], input.len() as u64);
    assert!(
        sum["destinations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["raw"] == true && d["datagrams"] == input.len() as u64)
    );
}

#[test]
fn filters_renames_and_flatten_per_destination() {
    let (face, body, renamed) = (receiver(), receiver(), receiver());
    let input: Vec<Vec<u8>> = (0..3).flat_map(|i| frame(i as f32, 0.0)).collect();
    let (p, at) = relay(&[
        "--to",
        &addr(&face),
        "--only",
        "/VMC/Ext/Blend/*",
        "--to",
        &addr(&body),
        "--drop-bones",
        "Head,LeftHand",
        "--to",
        &addr(&renamed),
        "--vrm0-to-vrm1",
        "--flatten",
        "--duration",
        "2s",
    ]);
    let mut with_garbage = input.clone();
    with_garbage.insert(1, b"\x00\x01junk".to_vec());
    with_garbage.insert(2, bomb());
    send_all(at, &with_garbage);
    let face_msgs = messages(&drain(&face));
    assert_eq!(
        face_msgs
            .iter()
            .filter(|m| **m == Message::BlendApply)
            .count(),
        3
    );
    assert!(
        face_msgs
            .iter()
            .all(|m| matches!(m, Message::BlendVal { .. } | Message::BlendApply))
    );
    // Vals stay before their Apply.
    assert!(
        matches!(face_msgs[0], Message::BlendVal { .. }) && face_msgs[2] == Message::BlendApply
    );
    let body_msgs = messages(&drain(&body));
    let bones: Vec<_> = body_msgs
        .iter()
        .filter_map(|m| match m {
            Message::BonePos { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(bones.len(), 9);
    assert!(!bones.contains(&"Head") && !bones.contains(&"LeftHand"));
    assert!(body_msgs.contains(&Message::Time(2.0)));
    let renamed_dgrams = drain(&renamed);
    // Flattened: one message per datagram, no bundles.
    assert!(renamed_dgrams.iter().all(|d| !d.starts_with(b"#bundle")));
    let names: Vec<_> = messages(&renamed_dgrams)
        .into_iter()
        .filter_map(|m| match m {
            Message::BlendVal { name, .. } => Some(name),
            _ => None,
        })
        .collect();
    assert_eq!(&names[..2], ["happy", "blinkLeft"]);
    let done = p.finish();
    assert_eq!(done.code, Some(0));
    assert!(done.stderr.contains("bad datagram"), "{}", done.stderr);
}

#[test]
fn rate_limit_keeps_the_newest_value() {
    let rx = receiver();
    let (p, at) = relay(&[
        "--to",
        &addr(&rx),
        "--max-rate",
        "5",
        "--duration",
        "1500ms",
        "--format",
        "json",
    ]);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for i in 0..20 {
        for d in frame(i as f32, i as f32) {
            tx.send_to(&d, at).unwrap();
        }
        thread::sleep(Duration::from_millis(10));
    }
    let done = p.finish();
    let got = messages(&drain(&rx));
    let heads: Vec<f32> = got
        .iter()
        .filter_map(|m| match m {
            Message::BonePos { name, pos, .. } if name == "Head" => Some(pos[0]),
            _ => None,
        })
        .collect();
    // 20 updates in about 0.2 s at 5 per second: a few get through, the last one always.
    assert!(heads.len() < 20 && heads.len() >= 2, "{heads:?}");
    assert_eq!(heads.last(), Some(&19.0));
    // Apply, OK and T are never rate limited.
    assert_eq!(
        got.iter().filter(|m| **m == Message::BlendApply).count(),
        20
    );
    assert_eq!(
        got.iter().filter(|m| matches!(m, Message::Time(_))).count(),
        20
    );
    let sum = done.json().pop().unwrap();
    assert!(sum["destinations"][0]["rate_limited"].as_u64().unwrap() > 0);
}

#[test]
fn allow_accepts_only_listed_sources() {
    let rx = receiver();
    let (p, at) = relay(&[
        "--to",
        &addr(&rx),
        "--allow",
        "127.0.0.2",
        "-n",
        "1",
        "--format",
        "json",
    ]);
    let from_1 = UdpSocket::bind("127.0.0.1:0").unwrap();
    let from_2 = UdpSocket::bind("127.0.0.2:0").unwrap();
    let f = frame(1.0, 0.0);
    for _ in 0..3 {
        from_1.send_to(&f[0], at).unwrap();
    }
    thread::sleep(Duration::from_millis(20));
    from_2.send_to(&f[1], at).unwrap();
    assert_eq!(collect(&rx, 1), [f[1].clone()]);
    // Refused datagrams are not counted by -n: the one allowed ends the run.
    let sum = p.finish().json().pop().unwrap();
    assert_eq!(sum["refused"], 3);
    assert_eq!(sum["datagrams"], 1);
    assert_eq!(sum["refused_senders"][0]["src"], addr(&from_1));
    assert_eq!(sum["refused_senders"][0]["datagrams"], 3);
    assert_eq!(sum["sources"].as_array().unwrap().len(), 1);
}

#[test]
fn a_dead_receiver_does_not_stop_the_others() {
    let dead = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        addr(&s)
    };
    let live = receiver();
    let input: Vec<Vec<u8>> = (0..5).flat_map(|i| frame(i as f32, 0.0)).collect();
    let n = input.len().to_string();
    let (p, at) = relay(&["--to", &dead, "--to", &addr(&live), "--to", &dead, "-n", &n]);
    send_all(at, &input);
    assert_eq!(collect(&live, input.len()), input);
    assert_eq!(p.finish().code, Some(0));
}

#[test]
fn a_loop_is_refused_as_a_usage_error() {
    let port = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let listen = format!("127.0.0.1:{port}");
    let done = Proc::spawn(BIN, &["-l", &listen, "--to", &listen], None).finish();
    assert_eq!(done.code, Some(2));
    assert!(done.stderr.contains("loop"), "{}", done.stderr);
    assert_eq!(
        Proc::spawn(BIN, &["-l", "127.0.0.1:0"], None).finish().code,
        Some(2)
    );
    assert_eq!(
        Proc::spawn(BIN, &["--only", "no-slash", "--to", "127.0.0.1:9"], None)
            .finish()
            .code,
        Some(2)
    );
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn dump_prints_typed_records_and_ctrl_c_ends_with_a_summary() {
    let (mut p, at) = relay(&["--dump", "--format", "json"]);
    send_all(at, &frame(7.5, 0.25));
    p.stdout_line("vmc.time");
    p.interrupt();
    let done = p.finish();
    assert_eq!(done.code, Some(0));
    let recs = done.json();
    let head = recs
        .iter()
        .find(|r| r["type"] == "vmc.bone" && r["name"] == "Head")
        .unwrap();
    assert_eq!(head["pos"][0], 0.25);
    assert_eq!(head["rot"], serde_json::json!([0.0, 0.0, 0.0, 1.0]));
    assert!(
        recs.iter()
            .any(|r| r["type"] == "vmc.blend" && r["name"] == "Joy" && r["value"] == 0.5)
    );
    assert!(recs.iter().any(|r| r["type"] == "vmc.apply"));
    assert!(recs.iter().any(|r| r["type"] == "vmc.root"));
    assert_eq!(recs.last().unwrap()["stopped"], "interrupted");
}

/// python-osc sends to the relay (a bundle with a bone and a blendshape, then
/// plain messages); python-osc receives what the relay sends on. Both Python
/// sides give up after a bounded wait, so a lost datagram fails the test.
#[test]
#[ignore = "needs python-osc: scripts/test-all.sh"]
fn interop_with_python_osc() {
    use std::io::BufRead as _;
    let port = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let server = format!(
        "from pythonosc import dispatcher, osc_server\n\
         import sys, time\n\
         got = []\n\
         d = dispatcher.Dispatcher()\n\
         d.set_default_handler(lambda a, *args: got.append((a, args)))\n\
         s = osc_server.BlockingOSCUDPServer(('127.0.0.1', {port}), d)\n\
         s.timeout = 0.2\n\
         print('ready', flush=True)\n\
         deadline = time.monotonic() + 10\n\
         while len(got) < 4 and time.monotonic() < deadline:\n\
         \x20   s.handle_request()\n\
         for a, args in got: print(a, *args)\n"
    );
    let mut py = Command::new("python3")
        .args(["-c", &server])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs (scripts/test-all.sh installs python-osc)");
    let mut lines = std::io::BufReader::new(py.stdout.take().unwrap()).lines();
    assert_eq!(
        lines.next().and_then(Result::ok).as_deref(),
        Some("ready"),
        "python-osc server did not start"
    );
    let to = format!("127.0.0.1:{port}");
    let (p, at) = relay(&["--to", &to, "--vrm0-to-vrm1", "-n", "3"]);
    let client = format!(
        "from pythonosc import udp_client, osc_bundle_builder as bb, osc_message_builder as mb\n\
         c = udp_client.SimpleUDPClient('127.0.0.1', {})\n\
         b = bb.OscBundleBuilder(bb.IMMEDIATELY)\n\
         m = mb.OscMessageBuilder(address='/VMC/Ext/Bone/Pos')\n\
         m.add_arg('Head')\n\
         for v in (0.5, 1.25, -0.25, 0.0, 0.0, 0.6, 0.8): m.add_arg(v, 'f')\n\
         b.add_content(m.build())\n\
         m = mb.OscMessageBuilder(address='/VMC/Ext/Blend/Val')\n\
         m.add_arg('Joy')\n\
         m.add_arg(0.75, 'f')\n\
         b.add_content(m.build())\n\
         c.send(b.build())\n\
         c.send_message('/VMC/Ext/Blend/Apply', [])\n\
         c.send_message('/VMC/Ext/T', 3.5)\n",
        at.port()
    );
    assert!(
        Command::new("python3")
            .args(["-c", &client])
            .status()
            .unwrap()
            .success()
    );
    let status = py.wait().unwrap();
    assert!(status.success());
    let text: Vec<String> = lines.map_while(Result::ok).collect();
    // Float32 on the wire: 0.6 and 0.8 come back as their float32 values.
    let (y, w) = (f64::from(0.6f32), f64::from(0.8f32));
    assert_eq!(
        text,
        [
            format!("/VMC/Ext/Bone/Pos Head 0.5 1.25 -0.25 0.0 0.0 {y} {w}"),
            "/VMC/Ext/Blend/Val happy 0.75".to_owned(),
            "/VMC/Ext/Blend/Apply".to_owned(),
            "/VMC/Ext/T 3.5".to_owned(),
        ]
    );
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
}

#[test]
fn drop_bones_only_and_vrm1_to_vrm0() {
    let (a, b) = (receiver(), receiver());
    let mut f = vec![
        Message::BonePos {
            name: "Head".into(),
            pos: [0.0; 3],
            rot: [0.0, 0.0, 0.0, 1.0],
        },
        Message::BonePos {
            name: "Neck".into(),
            pos: [0.0; 3],
            rot: [0.0, 0.0, 0.0, 1.0],
        },
        Message::BlendVal {
            name: "happy".into(),
            value: 1.0,
        },
        Message::BlendVal {
            name: "blinkLeft".into(),
            value: 0.5,
        },
        Message::BlendApply,
        Message::Time(1.0),
    ];
    f.push(Message::Available {
        loaded: 1,
        calibration: None,
        tracking: None,
    });
    let input = vmc::frame_datagrams(&f, vmc::MAX_BUNDLE).unwrap();
    let (p, at) = relay(&[
        "--to",
        &addr(&a),
        "--drop",
        "/VMC/Ext/{T,OK}",
        "--bones",
        "Neck",
        "--to",
        &addr(&b),
        "--vrm1-to-vrm0",
        "--only",
        "/VMC/Ext/Blend/*",
        "--duration",
        "1s",
    ]);
    send_all(at, &input);
    let got_a = messages(&drain(&a));
    assert!(
        got_a
            .iter()
            .all(|m| !matches!(m, Message::Time(_) | Message::Available { .. }))
    );
    let bones: Vec<_> = got_a
        .iter()
        .filter_map(|m| match m {
            Message::BonePos { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(bones, ["Neck"]);
    let got_b = messages(&drain(&b));
    let names: Vec<_> = got_b
        .iter()
        .filter_map(|m| match m {
            Message::BlendVal { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["Joy", "Blink_L"]);
    assert_eq!(p.finish().code, Some(0));
}

#[test]
fn flood_guard_drops_above_the_rate_and_counts() {
    let rx = receiver();
    let (p, at) = relay(&[
        "--to",
        &addr(&rx),
        "--max-pps",
        "50",
        "--duration",
        "3s",
        "--format",
        "json",
    ]);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let one = frame(1.0, 0.0).remove(0);
    for _ in 0..500 {
        tx.send_to(&one, at).unwrap();
    }
    // A burst passes up to the bucket (one second's worth), no more.
    let burst = drain(&rx).len();
    assert!((40..200).contains(&burst), "{burst} of the flood forwarded");
    // Once the bucket refills, traffic at a sane rate all gets through.
    thread::sleep(Duration::from_millis(1100));
    for _ in 0..10 {
        tx.send_to(&one, at).unwrap();
        thread::sleep(Duration::from_millis(40));
    }
    let calm = collect(&rx, 10);
    assert_eq!(calm.len(), 10, "good traffic after a flood was dropped");
    assert!(calm.iter().all(|d| *d == one));
    let sum = p.finish().json().pop().unwrap();
    let flooded = sum["flooded"].as_u64().unwrap();
    assert_eq!(
        flooded + (burst + calm.len()) as u64,
        sum["datagrams"].as_u64().unwrap()
    );
    assert_eq!(sum["datagrams"], 510);
}

#[test]
fn read_a_capture_and_record_what_arrives() {
    let dir = std::env::temp_dir().join(format!("vmc-relay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cap = dir.join("vmc.pcapng");
    let input: Vec<Vec<u8>> = (0..3).flat_map(|i| frame(i as f32, 0.0)).collect();
    let mut w = mocap_core::pcap::PcapNgWriter::new(std::fs::File::create(&cap).unwrap()).unwrap();
    let (src, dst): (SocketAddr, SocketAddr) = (
        "192.168.1.5:50000".parse().unwrap(),
        "192.168.1.9:39539".parse().unwrap(),
    );
    // 100 ms apart in the capture.
    for (i, d) in input.iter().enumerate() {
        w.write(Duration::from_millis(100 * i as u64), src, dst, d)
            .unwrap();
    }
    w.flush().unwrap();
    drop(w);
    // Offline: forward a capture's datagrams at their recorded timing...
    let rx = receiver();
    let span = Duration::from_millis(100 * (input.len() as u64 - 1));
    let started = Instant::now();
    let done = Proc::spawn(
        BIN,
        &[
            "-r",
            cap.to_str().unwrap(),
            "--to",
            &addr(&rx),
            "--format",
            "json",
        ],
        None,
    )
    .finish();
    let took = started.elapsed();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(drain(&rx), input);
    assert!(took >= span.mul_f64(0.9), "{took:?} for a {span:?} capture");
    // ...or as fast as read with --topspeed.
    let started = Instant::now();
    let done = Proc::spawn(
        BIN,
        &[
            "-r",
            cap.to_str().unwrap(),
            "--to",
            &addr(&rx),
            "--topspeed",
        ],
        None,
    )
    .finish();
    let took = started.elapsed();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(drain(&rx), input);
    assert!(took < span / 2, "{took:?} at top speed");
    // Live with -w: the recording reads back as the same datagrams.
    let rec = dir.join("rec.pcapng");
    let sink = receiver();
    let (p, at) = relay(&[
        "--to",
        &addr(&sink),
        "-w",
        rec.to_str().unwrap(),
        "-n",
        &input.len().to_string(),
    ]);
    send_all(at, &input);
    assert_eq!(collect(&sink, input.len()), input);
    assert_eq!(p.finish().code, Some(0));
    let mut d = mocap_core::pcap::Datagrams::new(std::fs::File::open(&rec).unwrap()).unwrap();
    let mut back = Vec::new();
    while let Some(r) = d.next_datagram() {
        back.push(r.unwrap().payload.to_vec());
    }
    assert_eq!(back, input);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-w` on a full disk (`/dev/full` fails every write with ENOSPC, here
/// once its buffer fills mid-burst) stops the recording with one loud line;
/// forwarding goes on to the end (the receiver gets every datagram, those
/// after the failure and after a quiet spell too), and the run exits 1 after
/// its summary. It used to exit 1 at the failure and forward nothing more.
#[cfg(target_os = "linux")]
#[test]
fn a_recording_on_a_full_disk_stops_alone_and_forwarding_goes_on() {
    let input: Vec<Vec<u8>> = (0..30).flat_map(|i| frame(i as f32, 0.0)).collect();
    let (first, second) = input.split_at(input.len() / 2);
    assert!(
        first.iter().map(Vec::len).sum::<usize>() > 8192,
        "past the buffer"
    );
    let rx = receiver();
    let (p, at) = relay(&[
        "--to",
        &addr(&rx),
        "-w",
        "/dev/full",
        "-n",
        &input.len().to_string(),
    ]);
    // Read as it comes: a socket left unread drops past its buffer.
    let n = input.len();
    let reader = thread::spawn(move || collect(&rx, n));
    send_all(at, first);
    // Quiet for longer than the poll: the recording is flushed when idle.
    thread::sleep(Duration::from_millis(400));
    send_all(at, second);
    let got = reader.join().unwrap();
    let done = p.finish();
    assert!(
        got == input,
        "{} of {} forwarded: {}",
        got.len(),
        input.len(),
        done.stderr
    );
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    let loud: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.contains("RECORDING STOPPED"))
        .collect();
    assert_eq!(loud.len(), 1, "{}", done.stderr);
    assert!(loud[0].contains("/dev/full"), "{}", loud[0]);
    assert!(
        done.stderr
            .contains(&format!("{} datagrams in", input.len())),
        "the summary comes: {}",
        done.stderr
    );
    let last = done.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("vmc-relay: error: the -w recording stopped early: ")
            && last.contains("/dev/full"),
        "{}",
        done.stderr
    );
}

/// `--bvh` on a full disk: the take cannot be written, which is said once
/// and loudly; forwarding goes on (every datagram reaches the receiver) and
/// the run exits 1 after its summary.
#[cfg(target_os = "linux")]
#[test]
fn a_bvh_take_on_a_full_disk_stops_alone_and_forwarding_goes_on() {
    use mocap_testutil::humanoid;
    let input: Vec<Vec<u8>> = (0..40)
        .flat_map(|k| vmc::frame_datagrams(&humanoid::frame(k, 60.0), vmc::MAX_BUNDLE).unwrap())
        .collect();
    let rx = receiver();
    let (p, at) = relay(&[
        "--to",
        &addr(&rx),
        "--bvh",
        "/dev/full",
        "--force",
        "-n",
        &input.len().to_string(),
    ]);
    let n = input.len();
    let reader = thread::spawn(move || collect(&rx, n));
    send_all(at, &input);
    let got = reader.join().unwrap();
    let done = p.finish();
    assert!(
        got == input,
        "{} of {} forwarded: {}",
        got.len(),
        n,
        done.stderr
    );
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    let loud = done.stderr.matches("BVH RECORDING STOPPED").count();
    assert_eq!(loud, 1, "{}", done.stderr);
    let last = done.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("vmc-relay: error: the BVH recording stopped early: writing /dev/full: "),
        "{}",
        done.stderr
    );
}

#[test]
fn completions_man_page_and_version() {
    mocap_testutil::check_generate(BIN, "vmc-relay", "--vrm0-to-vrm1");
}

#[test]
#[ignore = "needs bash + man-db: scripts/test-all.sh"]
fn completions_parse_in_bash_and_the_man_page_renders() {
    mocap_testutil::check_generate_with_shell_and_man(BIN, "vmc-relay", "--vrm0-to-vrm1");
}

/// `--smooth` after the second `--to`: the first receiver gets the noisy
/// stream byte for byte, the second the same messages in the same order with
/// the bone and blendshape jitter cut (the sender's T gives the timing).
#[test]
fn smooth_applies_per_destination_and_keeps_the_order() {
    let mut rng = mocap_testutil::Rng(9);
    let mut noise = || ((rng.next() % 2001) as f32 / 1000.0 - 1.0) * 0.5;
    let mut input = Vec::new();
    for k in 0..120u32 {
        let t = 10.0 + k as f32 / 60.0;
        let yaw = (30.0 + noise()).to_radians() / 2.0;
        let frame = vec![
            Message::BonePos {
                name: "Head".into(),
                pos: [0.0, 1.5, 0.0],
                rot: [0.0, yaw.sin(), 0.0, yaw.cos()],
            },
            Message::BlendVal {
                name: "Joy".into(),
                value: 0.5 + noise() / 10.0,
            },
            Message::BlendApply,
            Message::Time(t),
        ];
        input.extend(vmc::frame_datagrams(&frame, vmc::MAX_BUNDLE).unwrap());
    }
    let (a, b) = (receiver(), receiver());
    let n = input.len().to_string();
    let (p, at) = relay(&["--to", &addr(&a), "--to", &addr(&b), "--smooth", "-n", &n]);
    // Read while it sends: hundreds of datagrams would overflow a socket buffer.
    let want = input.len();
    let ra = thread::spawn(move || collect(&a, want));
    let rb = thread::spawn(move || collect(&b, want));
    send_all(at, &input);
    let (raw, smoothed) = (ra.join().unwrap(), rb.join().unwrap());
    assert_eq!(p.finish().code, Some(0));
    assert_eq!((raw.len(), smoothed.len()), (want, want));
    assert!(raw == input, "the first receiver gets the bytes as sent");
    let (ins, outs) = (messages(&input), messages(&smoothed));
    let addresses =
        |ms: &[Message]| -> Vec<String> { ms.iter().map(|m| m.to_osc().address).collect() };
    assert_eq!(
        addresses(&ins),
        addresses(&outs),
        "same messages, same order"
    );
    let series = |ms: &[Message]| -> (Vec<f32>, Vec<f32>) {
        let mut yaw = Vec::new();
        let mut joy = Vec::new();
        for m in ms {
            match m {
                Message::BonePos { rot, .. } => yaw.push(2.0 * rot[1].atan2(rot[3]).to_degrees()),
                Message::BlendVal { value, .. } => joy.push(*value),
                Message::Time(_) | Message::BlendApply => {}
                other => panic!("{other:?}"),
            }
        }
        (yaw, joy)
    };
    let jitter = |v: &[f32]| -> f32 { v[30..].windows(2).map(|w| (w[1] - w[0]).abs()).sum() };
    let ((yaw_in, joy_in), (yaw_out, joy_out)) = (series(&ins), series(&outs));
    assert!(
        jitter(&yaw_in) / jitter(&yaw_out) >= 3.0,
        "bone jitter not cut"
    );
    assert!(
        jitter(&joy_in) / jitter(&joy_out) >= 2.0,
        "blendshape jitter not cut"
    );
    // Smoothed, not frozen: the output stays on the mean pose.
    let mean = yaw_out[30..].iter().sum::<f32>() / (yaw_out.len() - 30) as f32;
    assert!((mean - 30.0).abs() < 0.5, "{mean}");
}

/// A take directory of its own per test.
fn take_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("vmc-relay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Sends test-humanoid frames `ks` at `fps` from `tx`, one bundle each.
fn send_humanoid(tx: &UdpSocket, to: SocketAddr, ks: std::ops::Range<u32>, fps: f32) {
    use mocap_testutil::humanoid;
    for k in ks {
        for d in vmc::frame_datagrams(&humanoid::frame(k, fps), vmc::MAX_BUNDLE).unwrap() {
            tx.send_to(&d, to).unwrap();
        }
        thread::sleep(Duration::from_micros(300));
    }
}

/// `--bvh`: each sender's stream becomes a take that shows the humanoid
/// exactly (every joint's world position, by forward kinematics written in
/// the test, equals the source frame's to 0.1 mm after the mirror into BVH
/// axes), Euler tracks never jump, Ctrl-C leaves a complete file whose frame
/// time is the sender's, a second sender gets its own file, and an existing
/// file is kept unless --force.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn bvh_takes_of_live_senders() {
    use mocap_core::bvh;
    use mocap_testutil::humanoid;
    let dir = take_dir("bvh");
    let path = dir.join("take.bvh");
    let mut p = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--bvh",
            path.to_str().unwrap(),
            "--dump",
            "--format",
            "json",
        ],
        None,
    );
    let (_, relay) = p.log_line("listening on");
    let relay = relay.unwrap();
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    send_humanoid(&a, relay, 0..151, 30.0);
    p.stdout_line("\"time\":5.0,");
    send_humanoid(&b, relay, 0..10, 60.0);
    p.stdout_line("\"time\":0.15");
    p.interrupt();
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let take = bvh::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // Root, then the humanoid depth first; Neck under Chest (no UpperChest).
    let names: Vec<&str> = take.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names.len(), 1 + humanoid::BONES.len(), "{names:?}");
    assert_eq!(
        &names[..4],
        ["Root", "Hips", "LeftUpperLeg", "LeftLowerLeg"]
    );
    for (bone, parent, pos) in humanoid::BONES {
        let j = take.joints.iter().find(|j| j.name == bone).unwrap();
        let want_parent = parent.unwrap_or("Root");
        assert_eq!(names[j.parent.unwrap()], want_parent, "{bone}");
        let want = [-pos[0], pos[1], pos[2]].map(|v| f64::from(v) * 100.0);
        for (got, want) in j.offset.iter().zip(want) {
            assert!((got - want).abs() < 1e-4, "{bone} offset {:?}", j.offset);
        }
    }
    // The rest pose, then frames 1..=150 (frame 0 shows where frames end).
    assert_eq!((take.frames_declared, take.frames.len()), (151, 151));
    assert!(
        (take.frame_time - 1.0 / 30.0).abs() < 1e-6,
        "{}",
        take.frame_time
    );
    assert!(
        take.frames[0].chunks(6).all(|c| c[3..] == [0.0, 0.0, 0.0]),
        "rest pose first"
    );
    for k in [1u32, 2, 37, 100, 150] {
        let e = humanoid::world_error(&take, k as usize, k);
        assert!(e < 0.01, "frame {k}: {e} cm off");
    }
    // Every bone turns steadily (some by 30 rad): no Euler track jumps.
    for w in take.frames[1..].windows(2) {
        for (c, (x, y)) in w[0].iter().zip(&w[1]).enumerate() {
            if c % 6 >= 3 {
                assert!((x - y).abs() <= 90.0, "channel {c}: {x} -> {y}");
            }
        }
    }
    // The second sender: its own file, named after it, at its own rate.
    let port = b.local_addr().unwrap().port();
    let second = dir.join(format!("take-127.0.0.1-{port}.bvh"));
    let take2 = bvh::parse(&std::fs::read_to_string(&second).unwrap()).unwrap();
    assert_eq!((take2.frames_declared, take2.frames.len()), (10, 10));
    assert!((take2.frame_time - 1.0 / 60.0).abs() < 1e-6);
    let summary = done.json().pop().unwrap();
    assert_eq!(summary["type"], "summary");
    let takes = summary["takes"].as_array().unwrap();
    assert_eq!(takes.len(), 2, "{summary}");
    let by_path = |p: &std::path::Path| {
        takes
            .iter()
            .find(|t| t["path"] == p.to_str().unwrap())
            .unwrap_or_else(|| panic!("{summary}"))
    };
    assert_eq!(by_path(&path)["frames"], 151);
    assert_eq!(by_path(&second)["frames"], 10);
    assert_eq!(by_path(&second)["src"], b.local_addr().unwrap().to_string());
    // An existing file is kept unless --force.
    let again = Command::new(BIN)
        .args([
            "-l",
            "127.0.0.1:0",
            "--bvh",
            path.to_str().unwrap(),
            "-n",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        bvh::parse(&std::fs::read_to_string(&path).unwrap())
            .unwrap()
            .frames
            .len(),
        151,
        "kept"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// 300 strangers sending one Blend/Val + Apply each take no take slot and
/// no file: the performer, who comes after them, gets the plain `--bvh`
/// name, closed by SIGTERM with its count and frame time. They used to use
/// up every slot (the performer got no take).
#[test]
#[cfg(unix)]
fn strangers_without_a_frame_take_no_bvh_slot() {
    use mocap_core::bvh;
    let dir = take_dir("bvh-strangers");
    let path = dir.join("take.bvh");
    let (mut p, relay) = relay(&["--bvh", path.to_str().unwrap()]);
    let blend = vmc::frame_datagrams(
        &[
            Message::BlendVal {
                name: "Joy".into(),
                value: 1.0,
            },
            Message::BlendApply,
        ],
        vmc::MAX_BUNDLE,
    )
    .unwrap();
    for _ in 0..300 {
        let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
        for d in &blend {
            stranger.send_to(d, relay).unwrap();
        }
        thread::sleep(Duration::from_micros(200));
    }
    let performer = UdpSocket::bind("127.0.0.1:0").unwrap();
    send_humanoid(&performer, relay, 0..31, 30.0);
    p.log_line("recording a BVH take");
    thread::sleep(Duration::from_millis(200));
    // A service stop: the header is patched as for Ctrl-C.
    p.signal(mocap_testutil::Signal::SIGTERM);
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let take = bvh::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // The rest pose and frames 1..=30 (frame 0 shows where frames end).
    assert_eq!((take.frames_declared, take.frames.len()), (31, 31));
    assert!(
        (take.frame_time - 1.0 / 30.0).abs() < 1e-6,
        "{}",
        take.frame_time
    );
    let files = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(files, 1, "{}", done.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A take ends complete however the relay stops: `-n` (datagrams), and a
/// closed stdout pipe; SIGKILL leaves a file whose header counts the frames
/// up to the last flush (one a second of frames), which load as they are.
#[test]
fn bvh_take_survives_count_closed_pipe_and_sigkill() {
    use mocap_core::bvh;
    use mocap_testutil::humanoid;
    let dir = take_dir("bvh-stops");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    // -n counts datagrams: those of 40 frames give the rest pose and 39.
    let per_frame = vmc::frame_datagrams(&humanoid::frame(0, 60.0), vmc::MAX_BUNDLE)
        .unwrap()
        .len();
    let n = (40 * per_frame).to_string();
    let counted = dir.join("count.bvh");
    let mut p = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--bvh",
            counted.to_str().unwrap(),
            "-n",
            &n,
        ],
        None,
    );
    let (_, relay) = p.log_line("listening on");
    send_humanoid(&tx, relay.unwrap(), 0..40, 60.0);
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let take = bvh::parse(&std::fs::read_to_string(&counted).unwrap()).unwrap();
    assert_eq!((take.frames_declared, take.frames.len()), (40, 40));
    assert!(humanoid::world_error(&take, 39, 39) < 0.01);
    // A closed pipe: --dump meets it on the next datagram.
    let piped = dir.join("pipe.bvh");
    let mut p = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--bvh",
            piped.to_str().unwrap(),
            "--dump",
        ],
        None,
    );
    let (_, relay) = p.log_line("listening on");
    let relay = relay.unwrap();
    send_humanoid(&tx, relay, 0..5, 60.0);
    // The take has begun (frame 1; frame 0 shows where frames end) before
    // stdout goes away.
    p.log_line("recording a BVH take");
    p.close_stdout();
    let start = Instant::now();
    while start.elapsed() < LIMIT {
        send_humanoid(&tx, relay, 5..6, 60.0);
        thread::sleep(Duration::from_millis(20));
        let text = std::fs::read_to_string(&piped).unwrap_or_default();
        if let Ok(t) = bvh::parse(&text)
            && t.frames_declared > 1
            && t.frames_declared == t.frames.len() as u64
        {
            break;
        }
    }
    let done = p.finish();
    let take = bvh::parse(&std::fs::read_to_string(&piped).unwrap()).unwrap();
    assert!(take.frames.len() > 1, "{}", done.stderr);
    assert_eq!(
        take.frames_declared,
        take.frames.len() as u64,
        "{}",
        done.stderr
    );
    // SIGKILL after 131 frames (the rest pose and 130 written): flushed at
    // 60 and 120 written frames.
    let killed = dir.join("killed.bvh");
    let mut p = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--bvh",
            killed.to_str().unwrap(),
            "--dump",
            "--format",
            "json",
        ],
        None,
    );
    let (_, relay) = p.log_line("listening on");
    send_humanoid(&tx, relay.unwrap(), 0..131, 30.0);
    p.stdout_line("\"time\":4.3333");
    let gone = p.kill();
    assert_eq!(gone.code, None, "killed by a signal");
    let take = bvh::parse(&std::fs::read_to_string(&killed).unwrap()).unwrap();
    assert_eq!(take.frames_declared, 120, "the last flush's count");
    assert!(take.frames.len() >= 120);
    assert!(humanoid::world_error(&take, 119, 119) < 0.01);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Records 90 frames of the test humanoid at 30 fps as a take.
fn humanoid_take(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("humanoid.bvh");
    let mut p = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--bvh",
            path.to_str().unwrap(),
            "--dump",
        ],
        None,
    );
    let (_, relay) = p.log_line("listening on");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    send_humanoid(&tx, relay.unwrap(), 0..91, 30.0);
    p.stdout_line("T [Float(3.0)]");
    p.interrupt();
    assert_eq!(p.finish().code, Some(0));
    path
}

/// Take frames 1, 45 and 90 are source frames 1, 45 and 90.
fn humanoid_expected() -> Vec<mocap_testutil::humanoid::Expected> {
    use mocap_testutil::humanoid;
    [1u32, 45, 90]
        .into_iter()
        .map(|k| {
            let joints = humanoid::expected_world(k)
                .into_iter()
                .map(|(n, p)| (n.to_owned(), p))
                .collect();
            (k as usize, joints)
        })
        .collect()
}

/// PyPI `bvhio` loads a VMC take: 91 frames at 1/30 s, Root and the 17
/// bones, and every bone's world position by bvhio's own forward kinematics
/// within 0.1 mm of the sender's humanoid (Unity FK, mirrored, cm).
#[test]
#[ignore = "needs python3 + bvhio: scripts/test-all.sh"]
fn bvh_take_reads_in_bvhio() {
    use mocap_testutil::humanoid::{BONES, Reader, read_with};
    let dir = take_dir("bvhio");
    let take = humanoid_take(&dir);
    let r = read_with(Reader::Bvhio, &take, &humanoid_expected());
    assert_eq!(r["frames"], 91, "{r}");
    assert!(
        (r["frame_time"].as_f64().unwrap() - 1.0 / 30.0).abs() < 1e-6,
        "{r}"
    );
    assert_eq!(r["joints"], 1 + BONES.len(), "{r}");
    assert!(r["max_error"].as_f64().unwrap() < 0.01, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Blender's own BVH importer (headless) opens a VMC take: one bone per
/// joint, every frame, 30 fps, and each bone's head in world space where
/// the sender's humanoid puts it (within 0.1 mm) at three frames.
#[test]
#[ignore = "needs blender: scripts/test-all.sh"]
fn bvh_take_imports_in_blender() {
    use mocap_testutil::humanoid::{BONES, Reader, read_with};
    let dir = take_dir("blender");
    let take = humanoid_take(&dir);
    let r = read_with(Reader::Blender, &take, &humanoid_expected());
    assert_eq!(r["bones"], 1 + BONES.len(), "{r}");
    assert_eq!(r["frames"], 91, "{r}");
    assert!((r["fps"].as_f64().unwrap() - 30.0).abs() < 0.01, "{r}");
    assert!(r["max_error"].as_f64().unwrap() < 0.01, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--as vrchat` and `--as vmt` next to a raw destination: 60 humanoid frames
/// at 60 fps; the VRChat receiver gets one bundle of tracker messages per
/// frame (3 floats each) with every tracker where forward kinematics written
/// apart (testutil's humanoid) puts its bone; the VMT receiver one bundle of
/// `/VMT/Room/Unity` per frame, 10 arguments typed `iiffffffff`; the raw one
/// every datagram byte for byte.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn as_vrchat_and_vmt_next_to_the_raw_stream() {
    use mocap_testutil::humanoid;
    let (a, b, c) = (receiver(), receiver(), receiver());
    let (p, at) = relay(&[
        "--to",
        &addr(&a),
        "--as",
        "vrchat",
        "--to",
        &addr(&b),
        "--as",
        "vmt",
        "--to",
        &addr(&c),
    ]);
    let frames: Vec<Vec<Vec<u8>>> = (0..60)
        .map(|k| vmc::frame_datagrams(&humanoid::frame(k, 60.0), vmc::MAX_BUNDLE).unwrap())
        .collect();
    let sent: Vec<Vec<u8>> = frames.concat();
    // Each receiver reads on its own thread, so none overflows while another is read.
    let reader = |rx: UdpSocket, n: usize| thread::spawn(move || collect(&rx, n));
    let (ra, rb, rc) = (reader(a, 59), reader(b, 59), reader(c, sent.len()));
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for f in &frames {
        for d in f {
            tx.send_to(d, at).unwrap();
        }
        thread::sleep(Duration::from_micros(16_667));
    }
    let (got_a, got_b, got_c) = (ra.join().unwrap(), rb.join().unwrap(), rc.join().unwrap());
    assert_eq!(got_c.len(), sent.len(), "every raw datagram");
    assert!(got_c == sent, "the raw destination gets the bytes as sent");
    // The first frame teaches where a frame ends (T, after Root/Pos), so
    // trackers start at frame 1: one bundle per frame after it.
    assert_eq!(got_a.len(), 59, "one VRChat bundle per frame");
    assert_eq!(got_b.len(), 59, "one VMT bundle per frame");
    // Slots the humanoid has bones for: hips, left foot, both knees, chest, left elbow.
    let slots = [
        (1, "Hips"),
        (2, "LeftFoot"),
        (4, "LeftLowerLeg"),
        (5, "RightLowerLeg"),
        (6, "Chest"),
        (7, "LeftLowerArm"),
    ];
    for (k, d) in (1..).zip(&got_a) {
        let packet = osc::decode(d).unwrap();
        let msgs = packet.messages();
        assert_eq!(msgs.len(), 2 * slots.len(), "frame {k}");
        let world = humanoid::expected_world(k);
        for (n, bone) in slots {
            let pos = msgs
                .iter()
                .find(|m| m.address == format!("/tracking/trackers/{n}/position"))
                .unwrap_or_else(|| panic!("frame {k}: no tracker {n}"));
            assert!(
                msgs.iter()
                    .any(|m| m.address == format!("/tracking/trackers/{n}/rotation"))
            );
            let floats: Vec<f64> = pos
                .args
                .iter()
                .map(|a| match a {
                    osc::Arg::Float(f) => f64::from(*f),
                    other => panic!("{other:?}"),
                })
                .collect();
            // testutil gives BVH's mirrored centimetres; back to Unity metres.
            let w = world.iter().find(|(b, _)| *b == bone).unwrap().1;
            let want = [-w[0] / 100.0, w[1] / 100.0, w[2] / 100.0];
            for (x, y) in floats.iter().zip(want) {
                assert!(
                    (x - y).abs() < 1e-5,
                    "frame {k} tracker {n} ({bone}): {floats:?} vs {want:?}"
                );
            }
        }
    }
    for (k, d) in got_b.iter().enumerate() {
        let packet = osc::decode(d).unwrap();
        let msgs = packet.messages();
        let mut indices: Vec<i32> = msgs
            .iter()
            .map(|m| {
                assert_eq!(m.address, "/VMT/Room/Unity");
                assert_eq!(m.args.len(), 10);
                let osc::Arg::Int(i) = m.args[0] else {
                    panic!("index: {:?}", m.args[0])
                };
                assert_eq!(m.args[1], osc::Arg::Int(1), "enable: tracker");
                assert_eq!(m.args[2], osc::Arg::Float(0.0), "time offset");
                assert!(
                    m.args[3..]
                        .iter()
                        .all(|a| matches!(a, osc::Arg::Float(f) if f.is_finite()))
                );
                i
            })
            .collect();
        indices.sort_unstable();
        assert_eq!(
            indices,
            [0, 1, 3, 4, 5, 6],
            "frame {k}: slot N at index N - 1"
        );
    }
    p.interrupt();
    let run = p.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// python-osc sends a body into `vmc-relay --to A --as vrchat --to B --as vmt
/// --to C` at 60 fps: A gets only VRChat tracker messages (3 floats each), B
/// only `/VMT/Room/Unity` with 10 arguments typed `iiffffffff`, C every
/// datagram python-osc sent, byte for byte; no frame lost.
#[test]
#[ignore = "needs python-osc: scripts/test-all.sh"]
fn trackers_from_a_python_osc_sender() {
    let (a, b, c) = (receiver(), receiver(), receiver());
    let (p, at) = relay(&[
        "--to",
        &addr(&a),
        "--as",
        "vrchat",
        "--to",
        &addr(&b),
        "--as",
        "vmt",
        "--to",
        &addr(&c),
    ]);
    let frames = 120;
    // Each frame one bundle, as VSeeFace sends: Root/Pos, the legs and arms,
    // Apply, OK, T. The script prints each datagram's bytes as it sends them.
    let client = format!(
        "from pythonosc import udp_client, osc_bundle_builder as bb, osc_message_builder as mb\n\
         import math, time\n\
         c = udp_client.SimpleUDPClient('127.0.0.1', {port})\n\
         bones = [('Hips', 0, 0.9, 0), ('Spine', 0, 0.1, 0), ('Chest', 0, 0.12, 0),\n\
         \x20        ('LeftUpperLeg', -0.08, -0.05, 0), ('LeftLowerLeg', 0, -0.42, 0), ('LeftFoot', 0, -0.4, 0),\n\
         \x20        ('RightUpperLeg', 0.08, -0.05, 0), ('RightLowerLeg', 0, -0.42, 0), ('RightFoot', 0, -0.4, 0),\n\
         \x20        ('LeftShoulder', -0.03, 0.16, 0), ('LeftUpperArm', -0.09, 0, 0), ('LeftLowerArm', -0.25, 0, 0),\n\
         \x20        ('RightShoulder', 0.03, 0.16, 0), ('RightUpperArm', 0.09, 0, 0), ('RightLowerArm', 0.25, 0, 0)]\n\
         t0 = time.monotonic()\n\
         for k in range({frames}):\n\
         \x20   b = bb.OscBundleBuilder(bb.IMMEDIATELY)\n\
         \x20   def msg(addr, *args):\n\
         \x20       m = mb.OscMessageBuilder(address=addr)\n\
         \x20       for a in args: m.add_arg(a, 's' if isinstance(a, str) else ('i' if isinstance(a, int) else 'f'))\n\
         \x20       b.add_content(m.build())\n\
         \x20   msg('/VMC/Ext/Root/Pos', 'root', 0.0, 0.0, 0.01 * k, 0.0, 0.0, 0.0, 1.0)\n\
         \x20   for i, (n, x, y, z) in enumerate(bones):\n\
         \x20       a = 0.3 * math.sin(k / 10 + i)\n\
         \x20       msg('/VMC/Ext/Bone/Pos', n, float(x), float(y), float(z), math.sin(a / 2), 0.0, 0.0, math.cos(a / 2))\n\
         \x20   msg('/VMC/Ext/Blend/Apply')\n\
         \x20   msg('/VMC/Ext/OK', 1)\n\
         \x20   msg('/VMC/Ext/T', k / 60)\n\
         \x20   d = b.build().dgram\n\
         \x20   c._sock.sendto(d, ('127.0.0.1', {port}))\n\
         \x20   print(d.hex(), flush=True)\n\
         \x20   time.sleep(max(0.0, t0 + (k + 1) / 60 - time.monotonic()))\n",
        port = at.port()
    );
    let reader = |rx: UdpSocket, n: usize| thread::spawn(move || collect(&rx, n));
    let (ra, rb, rc) = (
        reader(a, frames - 1),
        reader(b, frames - 1),
        reader(c, frames),
    );
    let out = Command::new("python3")
        .args(["-c", &client])
        .output()
        .expect("python3 runs (scripts/test-all.sh installs python-osc)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: Vec<Vec<u8>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            (0..l.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&l[i..i + 2], 16).unwrap())
                .collect()
        })
        .collect();
    assert_eq!(sent.len(), frames);
    let (got_a, got_b, got_c) = (ra.join().unwrap(), rb.join().unwrap(), rc.join().unwrap());
    assert!(
        got_c == sent,
        "C: python-osc's bytes unchanged ({} of {})",
        got_c.len(),
        sent.len()
    );
    // The first frame teaches where frames end; every later one is a bundle.
    assert_eq!(got_a.len(), frames - 1, "A: one VRChat bundle per frame");
    assert_eq!(got_b.len(), frames - 1, "B: one VMT bundle per frame");
    for d in &got_a {
        let packet = osc::decode(d).unwrap();
        let msgs = packet.messages();
        assert_eq!(msgs.len(), 16, "8 trackers, position and rotation");
        for m in msgs {
            assert!(
                m.address.starts_with("/tracking/trackers/"),
                "{}",
                m.address
            );
            assert_eq!(m.args.len(), 3);
            assert!(
                m.args
                    .iter()
                    .all(|x| matches!(x, osc::Arg::Float(f) if f.is_finite()))
            );
        }
    }
    for d in &got_b {
        let packet = osc::decode(d).unwrap();
        let msgs = packet.messages();
        assert_eq!(msgs.len(), 8);
        for (i, m) in msgs.iter().enumerate() {
            assert_eq!(m.address, "/VMT/Room/Unity");
            assert_eq!(m.args.len(), 10);
            assert_eq!(m.args[0], osc::Arg::Int(i as i32));
            assert_eq!(m.args[1], osc::Arg::Int(1));
            assert!(m.args[2..].iter().all(|x| matches!(x, osc::Arg::Float(_))));
        }
    }
    p.interrupt();
    assert_eq!(p.finish().code, Some(0));
}

/// To IPv6 loopback and to a port where nothing listens, on the batched
/// raw path and on the filtered one (`--flatten`): the IPv6 receiver gets
/// every datagram its `sends` entry counts, the closed port is counted as
/// unreachable and said once in words, the same way on both paths. A host
/// without IPv6 loopback fails this test.
#[test]
fn sends_reach_ipv6_and_a_closed_port_is_reported_on_both_paths() {
    let closed = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        addr(&s)
    };
    let input: Vec<Vec<u8>> = (0..5).flat_map(|i| frame(i as f32, 0.0)).collect();
    let n = input.len().to_string();
    for filtered in [false, true] {
        let rx = UdpSocket::bind("[::1]:0")
            .expect("IPv6 loopback (::1) is needed by this test and is unavailable here");
        rx.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let v6 = addr(&rx);
        // Before the first --to, a filter applies to every destination.
        let mut args = vec!["--format", "json", "-n", &n];
        if filtered {
            args.push("--flatten");
        }
        args.extend(["--to", &v6, "--to", &closed]);
        let (p, at) = relay(&args);
        send_all(at, &input);
        let got = drain(&rx);
        let run = p.finish();
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert!(got.len() >= input.len(), "{} datagrams", got.len());
        let sum = run.json().pop().unwrap();
        let sends = sum["sends"].as_array().unwrap();
        assert_eq!(sends[0]["to"].as_str(), Some(v6.as_str()), "{sum}");
        assert_eq!(sends[0]["sent"].as_u64(), Some(got.len() as u64), "{sum}");
        assert_eq!(sends[0]["failed"].as_u64(), Some(0), "{sum}");
        assert_eq!(sum["destinations"][0]["raw"], !filtered, "{sum}");
        if !filtered {
            assert_eq!(got, input, "raw: the bytes as they came");
        }
        let dead = &sends[1];
        assert!(dead["unreachable"].as_u64().unwrap() > 0, "{sum}");
        assert_eq!(dead["failed"], dead["unreachable"], "{sum}");
        assert_eq!(
            dead["sent"].as_u64().unwrap() + dead["failed"].as_u64().unwrap(),
            got.len() as u64,
            "{sum}"
        );
        // The destination records agree with `sends`.
        assert_eq!(
            sum["destinations"][1]["send_errors"], dead["failed"],
            "{sum}"
        );
        let said = format!("nothing is listening at {closed} (is VSeeFace's receiver on?)");
        assert_eq!(run.stderr.matches(&said).count(), 1, "{}", run.stderr);
    }
}

/// One datagram from each of `n` fresh source ports; the sockets are kept
/// open, so no two strangers share a port.
fn strangers(to: SocketAddr, n: usize, datagram: &[u8]) -> Vec<UdpSocket> {
    let mut held = Vec::new();
    for k in 0..n {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.send_to(datagram, to).unwrap();
        held.push(s);
        // Paced a little, so the kernel's receive buffer never overflows.
        if k % 32 == 31 {
            thread::sleep(Duration::from_millis(5));
        }
    }
    held
}

/// Issue 35: past 256 senders a new one was left unsmoothed and got no
/// trackers. After 300 one-shot strangers, a new sender is smoothed with a
/// filter of its own (jitter cut, mean on its own pose, not the strangers')
/// and counted, the strangers' datagrams kept in the totals.
#[test]
fn a_new_sender_after_300_one_shot_strangers_is_smoothed_on_its_own() {
    let yaw_frame = |t: f32, deg: f32| {
        let h = deg.to_radians() / 2.0;
        vmc::frame_datagrams(
            &[
                Message::BonePos {
                    name: "Head".into(),
                    pos: [0.0, 1.5, 0.0],
                    rot: [0.0, h.sin(), 0.0, h.cos()],
                },
                Message::Time(t),
            ],
            vmc::MAX_BUNDLE,
        )
        .unwrap()
    };
    let mut rng = mocap_testutil::Rng(35);
    let input: Vec<Vec<u8>> = (0..120u32)
        .flat_map(|k| {
            let noise = ((rng.next() % 2001) as f32 / 1000.0 - 1.0) * 0.5;
            yaw_frame(10.0 + k as f32 / 60.0, 30.0 + noise)
        })
        .collect();
    let rx = receiver();
    let n = (300 + input.len()).to_string();
    let (p, at) = relay(&["--to", &addr(&rx), "--smooth", "-n", &n, "--format", "json"]);
    let want = 300 + input.len();
    let reader = thread::spawn(move || collect(&rx, want));
    let _held = strangers(at, 300, &yaw_frame(1.0, 90.0)[0]);
    send_all(at, &input);
    let got = reader.join().unwrap();
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let mine: Vec<f32> = messages(&got[300..])
        .iter()
        .filter_map(|m| match m {
            Message::BonePos { rot, .. } => Some(2.0 * rot[1].atan2(rot[3]).to_degrees()),
            _ => None,
        })
        .collect();
    let ins: Vec<f32> = messages(&input)
        .iter()
        .filter_map(|m| match m {
            Message::BonePos { rot, .. } => Some(2.0 * rot[1].atan2(rot[3]).to_degrees()),
            _ => None,
        })
        .collect();
    assert_eq!(mine.len(), ins.len());
    let jitter = |v: &[f32]| -> f32 { v[30..].windows(2).map(|w| (w[1] - w[0]).abs()).sum() };
    assert!(jitter(&ins) / jitter(&mine) >= 3.0, "not smoothed");
    let mean = mine[30..].iter().sum::<f32>() / (mine.len() - 30) as f32;
    assert!((mean - 30.0).abs() < 0.5, "{mean}");
    let sum = done.json().pop().unwrap();
    assert_eq!(sum["datagrams"], want);
    assert_eq!(sum["sources"].as_array().unwrap().len(), 256);
    let evicted = &sum["evicted"];
    assert_eq!(evicted["senders"], 45, "{evicted}");
    assert_eq!(evicted["datagrams"], 45, "{evicted}");
}

/// Issue 35, `--as vrchat|vmt`: after 300 one-shot strangers a new sender
/// got no solver (refused past 256). Now it is solved on its own: one
/// bundle per frame after the first, on both tracker destinations.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn a_new_sender_after_300_one_shot_strangers_is_solved_on_its_own() {
    use mocap_testutil::humanoid;
    let (a, b) = (receiver(), receiver());
    let (p, at) = relay(&[
        "--to",
        &addr(&a),
        "--as",
        "vrchat",
        "--to",
        &addr(&b),
        "--as",
        "vmt",
    ]);
    let frames: Vec<Vec<Vec<u8>>> = (0..60)
        .map(|k| vmc::frame_datagrams(&humanoid::frame(k, 60.0), vmc::MAX_BUNDLE).unwrap())
        .collect();
    // Strangers send a whole first datagram of a body: each gets a solver.
    let _held = strangers(at, 300, &frames[0][0]);
    let reader = |rx: UdpSocket, n: usize| thread::spawn(move || collect(&rx, n));
    let (ra, rb) = (reader(a, 59), reader(b, 59));
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for f in &frames {
        for d in f {
            tx.send_to(d, at).unwrap();
        }
        thread::sleep(Duration::from_micros(16_667));
    }
    let (got_a, got_b) = (ra.join().unwrap(), rb.join().unwrap());
    p.interrupt();
    assert_eq!(p.finish().code, Some(0));
    assert_eq!(got_a.len(), 59, "one VRChat bundle per frame");
    assert_eq!(got_b.len(), 59, "one VMT bundle per frame");
    // Its own body: the hips tracker of the last frame is where the
    // reference humanoid puts them.
    let last = osc::decode(got_a.last().unwrap()).unwrap();
    assert!(
        last.messages()
            .iter()
            .any(|m| m.address == "/tracking/trackers/1/position"),
        "{last:?}"
    );
}

/// mocopi sent to the relay's port is named as mocopi once per sender, with
/// the tool that reads it, and counted; it used to be `not OSC: bad OSC
/// packet` and nothing more.
#[test]
fn another_protocol_on_the_port_is_named_once_per_sender() {
    let mocopi = include_bytes!("../../../captures/mocopi/seed-frame-1575.bin").to_vec();
    let (mut p, addr) = relay(&["--dump", "--format", "json", "-n", "3"]);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    send_all(addr, &[mocopi.clone(), mocopi.clone()]);
    tx.send_to(&mocopi, addr).unwrap();
    let (line, _) = p.log_line("looks like mocopi");
    assert!(line.contains("try mocopi-dump"), "{line}");
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert_eq!(
        done.stderr.matches("looks like mocopi").count(),
        2,
        "{}",
        done.stderr
    );
    assert!(done.stderr.contains(&tx.local_addr().unwrap().to_string()));
    let sum = done.json().pop().unwrap();
    assert_eq!(sum["other_protocol"], 3);
    assert_eq!(sum["decode_errors"], 3);
}
