//! Runs the real `vmc-average` on loopback: senders on separate ports and on
//! one port, checked value by value; a stale source; pass-through order;
//! `--prefer`; garbage and a bomb from one source while the other is mixed.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use mocap_core::vmc::{self, Message};
use mocap_testutil::{Finished, Proc};

mod common;

use common::{frame, free_port, last_head, receive, receiver, sender};

const BIN: &str = env!("CARGO_BIN_EXE_vmc-average");

fn start(args: &[&str]) -> Proc {
    let mut p = Proc::spawn(BIN, args, None);
    p.log_line("listening on");
    p
}

fn finish(p: Proc) -> Finished {
    p.interrupt();
    let f = p.finish();
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    f
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn two_senders_on_two_ports_are_averaged_and_the_primary_passes_through() {
    let (p1, p2) = (free_port(), free_port());
    let (l1, l2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.1:{p2}"));
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let tool = start(&[
        "-l",
        &l1,
        "-l",
        &l2,
        "--source",
        &format!("a={l1}"),
        "--source",
        &format!("b={l2}"),
        "--to",
        &to,
        "--rate",
        "30",
        "--format",
        "json",
    ]);
    let a = sender("127.0.0.1:0", l1.parse().unwrap(), 10.0, false);
    let b = sender("127.0.0.1:0", l2.parse().unwrap(), 30.0, false);
    thread::sleep(Duration::from_millis(300));
    let got = receive(&rx, Duration::from_millis(400));
    assert!((last_head(&got) - 20.0).abs() < 1e-3, "{}", last_head(&got));
    // Hips average to themselves; Joy (source a, the primary) passes through before Apply.
    let joy = got.iter().position(|m| matches!(m, Message::BlendVal { name, value } if name == "Joy" && (*value - 0.1).abs() < 1e-6)).unwrap();
    assert_eq!(got[joy + 1], Message::BlendApply);
    a.stop();
    b.stop();
    let sum = finish(tool).json().pop().unwrap();
    assert!(sum["frames_out"].as_u64().unwrap() > 5);
    assert_eq!(sum["sources"].as_array().unwrap().len(), 2);
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn two_senders_on_one_port_and_a_source_going_stale() {
    let p = free_port();
    let l = format!("127.0.0.1:{p}");
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let tool = start(&[
        "-l", &l, "--to", &to, "--rate", "30", "--stale", "200ms", "--format", "json",
    ]);
    let a = sender("127.0.0.1:0", l.parse().unwrap(), 10.0, false);
    let b = sender("127.0.0.2:0", l.parse().unwrap(), 50.0, false);
    thread::sleep(Duration::from_millis(300));
    assert!((last_head(&receive(&rx, Duration::from_millis(300))) - 30.0).abs() < 1e-3);
    b.stop();
    thread::sleep(Duration::from_millis(400));
    assert!((last_head(&receive(&rx, Duration::from_millis(200))) - 10.0).abs() < 1e-3);
    let b = sender("127.0.0.2:0", l.parse().unwrap(), 50.0, false);
    thread::sleep(Duration::from_millis(300));
    assert!((last_head(&receive(&rx, Duration::from_millis(200))) - 30.0).abs() < 1e-3);
    a.stop();
    b.stop();
    let sum = finish(tool).json().pop().unwrap();
    let sources = sum["sources"].as_array().unwrap();
    // The returning sender keeps its address only if the OS reuses the port; count per name.
    assert!(
        sources
            .iter()
            .any(|s| s["stale_periods"].as_u64().unwrap() >= 1),
        "{sum}"
    );
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn prefer_and_garbage_from_one_source() {
    let (p1, p2) = (free_port(), free_port());
    let (l1, l2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.1:{p2}"));
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let tool = start(&[
        "-l",
        &l1,
        "-l",
        &l2,
        "--source",
        &format!("a={l1}"),
        "--source",
        &format!("b={l2}"),
        "--prefer",
        "b:Head",
        "--to",
        &to,
        "--rate",
        "30",
        "--format",
        "json",
    ]);
    let a = sender("127.0.0.1:0", l1.parse().unwrap(), 10.0, false);
    let b = sender("127.0.0.1:0", l2.parse().unwrap(), 40.0, true);
    thread::sleep(Duration::from_millis(300));
    let got = receive(&rx, Duration::from_millis(400));
    // Head from b alone; a keeps being mixed despite b's garbage.
    assert!((last_head(&got) - 40.0).abs() < 1e-3);
    assert!(
        got.iter()
            .any(|m| matches!(m, Message::BlendVal { value, .. } if (*value - 0.1).abs() < 1e-6))
    );
    a.stop();
    b.stop();
    let sum = finish(tool).json().pop().unwrap();
    let b_stats = sum["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "b")
        .unwrap()
        .clone();
    assert!(b_stats["decode_errors"].as_u64().unwrap() > 0);
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn usage_errors() {
    assert_eq!(
        Proc::spawn(BIN, &["--to", "127.0.0.1:9"], None)
            .finish()
            .code,
        Some(2)
    );
    let f = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:9",
            "--primary",
            "nobody",
        ],
        None,
    )
    .finish();
    assert_eq!(f.code, Some(2));
    assert!(f.stderr.contains("nobody"));
    // Issue 57: `--rate 0|nan|1e-9` ran and mixed nothing, `--rate inf`
    // mixed ~780 frames/s; zero durations left nothing to mix.
    for (flag, value, range) in [
        ("--rate", "0", "rate in Hz from 1 to 1000"),
        ("--rate", "nan", "rate in Hz from 1 to 1000"),
        ("--rate", "1e-9", "rate in Hz from 1 to 1000"),
        ("--rate", "inf", "rate in Hz from 1 to 1000"),
        ("--rate", "-5", "rate in Hz from 1 to 1000"),
        ("--window", "0", "1ms to 60s"),
        ("--window", "100h", "1ms to 60s"),
        ("--gap", "10m", "0 to 60s"),
        ("--stale", "0", "1ms to 1h"),
        ("--stale", "nan", "1ms to 1h"),
    ] {
        let f = Proc::spawn(
            BIN,
            &[
                "-l",
                "127.0.0.1:0",
                "--to",
                "127.0.0.1:9",
                "--duration",
                "1s",
                &format!("{flag}={value}"),
            ],
            None,
        )
        .finish();
        assert_eq!(f.code, Some(2), "{flag} {value}: {}", f.stderr);
        assert!(
            f.stderr.contains(flag) && f.stderr.contains(range),
            "{flag} {value}: {}",
            f.stderr
        );
    }
}

#[test]
fn completions_man_page_and_version() {
    mocap_testutil::check_generate(BIN, "vmc-average", "--prefer");
}

#[test]
#[ignore = "needs bash + man-db: scripts/test-all.sh"]
fn completions_parse_in_bash_and_the_man_page_renders() {
    mocap_testutil::check_generate_with_shell_and_man(BIN, "vmc-average", "--prefer");
}

/// One sender socket, two streams to two listening ports (a script with one
/// socket, or pcap-replay --port-map splitting two trackers): two sources,
/// mixed to the mean, each with its own listening address.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn one_sender_socket_to_two_ports_is_two_sources() {
    let (p1, p2) = (free_port(), free_port());
    let (l1, l2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.1:{p2}"));
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let tool = start(&[
        "-l", &l1, "-l", &l2, "--to", &to, "--rate", "30", "--format", "json",
    ]);
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let (a, b): (SocketAddr, SocketAddr) = (l1.parse().unwrap(), l2.parse().unwrap());
    let handle = thread::spawn(move || {
        let mut i = 0u32;
        while !flag.load(Ordering::SeqCst) {
            for (to, head) in [(a, 20.0), (b, 40.0)] {
                for d in frame(head, i as f32) {
                    socket.send_to(&d, to).unwrap();
                }
            }
            i += 1;
            thread::sleep(Duration::from_millis(20));
        }
    });
    thread::sleep(Duration::from_millis(300));
    let got = receive(&rx, Duration::from_millis(400));
    stop.store(true, Ordering::SeqCst);
    handle.join().unwrap();
    assert!((last_head(&got) - 30.0).abs() < 1e-3, "{}", last_head(&got));
    let sum = finish(tool).json().pop().unwrap();
    let sources = sum["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2, "{sum}");
    let mut listens: Vec<&str> = sources
        .iter()
        .map(|s| s["listen"].as_str().unwrap())
        .collect();
    listens.sort_unstable();
    let mut want = [l1.as_str(), l2.as_str()];
    want.sort_unstable();
    assert_eq!(listens, want);
    assert_eq!(sources[0]["sender"], sources[1]["sender"]);
    assert!(
        sources.iter().all(|s| s["frames"].as_u64().unwrap() > 5),
        "{sum}"
    );
}

/// The default (frame) mode emits one mixed frame per frame of the primary
/// source, with the other source's latest: 5 primary frames 100 ms apart give
/// exactly 5 mixed frames (a 60 Hz tick would give about 30).
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn frame_mode_emits_once_per_primary_frame() {
    let (p1, p2) = (free_port(), free_port());
    let (l1, l2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.1:{p2}"));
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let mut tool = start(&[
        "-l",
        &l1,
        "-l",
        &l2,
        "--source",
        &format!("body={l1}"),
        "--source",
        &format!("face={l2}"),
        "--to",
        &to,
        "--format",
        "json",
    ]);
    // Both sockets bound before anything is sent.
    tool.log_line("listening on");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    // The face first, so the body's frames mix with it.
    for d in frame(40.0, 0.0) {
        tx.send_to(&d, &l2).unwrap();
    }
    thread::sleep(Duration::from_millis(50));
    for i in 0..5 {
        for d in frame(20.0, i as f32) {
            tx.send_to(&d, &l1).unwrap();
        }
        thread::sleep(Duration::from_millis(100));
    }
    let got = receive(&rx, Duration::from_millis(300));
    let sum = finish(tool).json().pop().unwrap();
    // The face alone drove one frame before the body (the primary) was live.
    assert_eq!(sum["frames_out"], 6, "{sum}");
    let hips = got
        .iter()
        .filter(|m| matches!(m, Message::BonePos { name, .. } if name == "Hips"))
        .count();
    assert_eq!(hips, 6);
    assert!((last_head(&got) - 30.0).abs() < 1e-3, "{}", last_head(&got));
}

/// `--smooth` on the mixed output: two still senders (10° and 30°) still mix
/// to 20° (smoothing converges on a still pose, it does not move it).
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn smoothed_mix_settles_on_the_mean() {
    let (p1, p2) = (free_port(), free_port());
    let (l1, l2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.1:{p2}"));
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let mut tool = start(&[
        "-l", &l1, "-l", &l2, "--to", &to, "--smooth", "--format", "json",
    ]);
    tool.log_line("listening on");
    let a = sender("127.0.0.1:0", l1.parse().unwrap(), 10.0, false);
    let b = sender("127.0.0.1:0", l2.parse().unwrap(), 30.0, false);
    thread::sleep(Duration::from_millis(1500));
    let got = receive(&rx, Duration::from_millis(300));
    a.stop();
    b.stop();
    assert!((last_head(&got) - 20.0).abs() < 0.05, "{}", last_head(&got));
    finish(tool);
}

/// `--bvh` records the mix (here of one sender, so the mix is its pose): a
/// take whose every joint's world position equals the sender's frame's to
/// 0.1 mm (forward kinematics written in the test), with the frame count
/// of the mixed frames and the sender's frame time; --to is optional.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn bvh_take_of_the_mix() {
    use mocap_core::bvh;
    use mocap_testutil::humanoid;
    let dir = std::env::temp_dir().join(format!("vmc-average-bvh-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mix.bvh");
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
    let (_, at) = p.log_line("listening on");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for k in 0..90 {
        for d in vmc::frame_datagrams(&humanoid::frame(k, 60.0), vmc::MAX_BUNDLE).unwrap() {
            tx.send_to(&d, at.unwrap()).unwrap();
        }
        thread::sleep(Duration::from_micros(500));
    }
    p.stdout_line("\"time\":1.4833");
    let done = finish(p);
    let summary = done.json().pop().unwrap();
    // Mixed frames with a pose (the mixer may also pass on a lone OK/T).
    let poses = done
        .stdout
        .iter()
        .filter(|l| l.contains("\"Hips\""))
        .count() as u64;
    assert!(poses >= 89, "{summary}");
    let take = bvh::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(take.frames_declared, poses + 1, "the rest pose and the mix");
    assert_eq!(take.frames.len() as u64, poses + 1);
    assert_eq!(summary["takes"][0]["frames"], poses + 1);
    assert_eq!(take.joints.len(), 1 + humanoid::BONES.len());
    assert!(
        (take.frame_time - 1.0 / 60.0).abs() < 1e-6,
        "{}",
        take.frame_time
    );
    // The last mixed frame is source frame 89; count back from it (the
    // mixer's first frame closes before the sender's first Root/Pos).
    let last = take.frames.len() - 1;
    for back in [0usize, 1, 30, 80] {
        let k = 89 - back as u32;
        let e = humanoid::world_error(&take, last - back, k);
        assert!(e < 0.01, "source frame {k}: {e} cm off");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 35: after one datagram from each of 256 source ports, every new
/// sender was refused for the rest of the run. Now 300 one-shot strangers
/// come and go, and a sender after them (a performer's app restarted on a
/// new port) is mixed on its own; the strangers' counts stay in the summary.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn a_new_sender_after_300_one_shot_strangers_is_mixed() {
    let p = free_port();
    let l: SocketAddr = format!("127.0.0.1:{p}").parse().unwrap();
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let tool = start(&[
        "-l",
        &l.to_string(),
        "--to",
        &to,
        "--rate",
        "50",
        "--stale",
        "200ms",
        "--format",
        "json",
    ]);
    let datagrams = frame(10.0, 0.0);
    let strangers = 300;
    // Kept open, so no two strangers share a port.
    let mut held = Vec::new();
    for k in 0..strangers {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        for d in &datagrams {
            s.send_to(d, l).unwrap();
        }
        held.push(s);
        // Paced a little, so the kernel's receive buffer never overflows.
        if k % 32 == 31 {
            thread::sleep(Duration::from_millis(5));
        }
    }
    // The strangers go stale; the newcomer alone makes the mix.
    thread::sleep(Duration::from_millis(300));
    let performer = sender("127.0.0.1:0", l, 70.0, false);
    thread::sleep(Duration::from_millis(300));
    let got = receive(&rx, Duration::from_millis(300));
    assert!((last_head(&got) - 70.0).abs() < 1e-3, "{}", last_head(&got));
    performer.stop();
    let done = finish(tool);
    assert!(!done.stderr.contains("not mixed"), "{}", done.stderr);
    let sum = done.json().pop().unwrap();
    let sources = sum["sources"].as_array().unwrap();
    assert_eq!(sources.len(), mocap_cli::senders::MAX_SENDERS);
    assert!(sum.get("refused").is_none());
    let evicted = &sum["evicted"];
    assert_eq!(
        evicted["senders"].as_u64(),
        Some((strangers + 1 - mocap_cli::senders::MAX_SENDERS) as u64),
        "{evicted}"
    );
    // Every stranger's datagrams are counted, evicted or not.
    let strangers_counted: u64 = sources
        .iter()
        .filter(|s| s["frames"].as_u64() == Some(1))
        .map(|s| s["datagrams"].as_u64().unwrap())
        .sum::<u64>()
        + evicted["datagrams"].as_u64().unwrap();
    assert_eq!(strangers_counted, (strangers * datagrams.len()) as u64);
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn realtime_says_what_was_granted_and_still_mixes() {
    let p = free_port();
    let l = format!("127.0.0.1:{p}");
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let tool = start(&["-l", &l, "--to", &to, "--realtime", "--format", "json"]);
    let a = sender("127.0.0.1:0", l.parse().unwrap(), 10.0, false);
    thread::sleep(Duration::from_millis(300));
    assert!((last_head(&receive(&rx, Duration::from_millis(200))) - 10.0).abs() < 1e-3);
    a.stop();
    let done = finish(tool);
    // Granted as root; otherwise the log says why not. Either way it is said.
    let line = done
        .stderr
        .lines()
        .find(|l| l.contains("real-time priority"))
        .unwrap_or_else(|| panic!("{}", done.stderr));
    assert!(
        line.ends_with("real-time priority on") || line.contains("not permitted"),
        "{line}"
    );
}

/// `--allow`: a second sender outside the range is not mixed, only counted.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn allow_keeps_a_stranger_out_of_the_mix() {
    let p1 = free_port();
    let l1 = format!("127.0.0.1:{p1}");
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let tool = start(&[
        "-l",
        &l1,
        "--to",
        &to,
        "--rate",
        "30",
        "--allow",
        "127.0.0.1",
        "--format",
        "json",
    ]);
    let friend = sender("127.0.0.1:0", l1.parse().unwrap(), 10.0, false);
    // The stranger's frames, counted: 20 frames of a 50° head.
    let stranger = UdpSocket::bind("127.0.0.2:0").unwrap();
    let mut sent = 0;
    for k in 0..20 {
        for d in frame(50.0, k as f32) {
            stranger.send_to(&d, l1.as_str()).unwrap();
            sent += 1;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let got = receive(&rx, Duration::from_millis(300));
    // Only the friend's 10° head: with the stranger mixed in it would be 30°.
    assert!((last_head(&got) - 10.0).abs() < 1e-3, "{}", last_head(&got));
    friend.stop();
    let sum = finish(tool).json().pop().unwrap();
    assert_eq!(sum["sources"].as_array().unwrap().len(), 1, "{sum}");
    assert_eq!(sum["refused"], sent, "{sum}");
    let refused = &sum["refused_senders"];
    assert_eq!(refused.as_array().unwrap().len(), 1, "{sum}");
    assert_eq!(
        refused[0]["src"],
        stranger.local_addr().unwrap().to_string()
    );
    assert_eq!(refused[0]["datagrams"], sent);
}

/// The mix to IPv6 loopback and to a port where nothing listens: the IPv6
/// receiver gets every datagram its `sends` entry counts; the closed port
/// is counted and said once in words. A host without IPv6 loopback fails
/// this test.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn output_reaches_ipv6_and_a_closed_port_is_reported() {
    let rx = UdpSocket::bind("[::1]:0")
        .expect("IPv6 loopback (::1) is needed by this test and is unavailable here");
    let v6 = rx.local_addr().unwrap().to_string();
    let closed = format!("127.0.0.1:{}", free_port());
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let tool = start(&[
        "-l", &listen, "--to", &v6, "--to", &closed, "--rate", "50", "-n", "20", "--format", "json",
    ]);
    let a = sender("127.0.0.1:0", listen.parse().unwrap(), 10.0, false);
    let run = tool.finish();
    a.stop();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    rx.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = vec![0u8; 65_536];
    let mut got = 0u64;
    while rx.recv(&mut buf).is_ok() {
        got += 1;
    }
    assert!(got >= 20, "{got} datagrams");
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["frames_out"], 20, "{sum}");
    let sends = sum["sends"].as_array().unwrap();
    assert_eq!(sends[0]["to"].as_str(), Some(v6.as_str()), "{sum}");
    assert_eq!(sends[0]["sent"].as_u64(), Some(got), "{sum}");
    assert_eq!(sends[0]["failed"].as_u64(), Some(0), "{sum}");
    let dead = &sends[1];
    assert!(dead["unreachable"].as_u64().unwrap() > 0, "{sum}");
    assert_eq!(dead["failed"], dead["unreachable"], "{sum}");
    assert_eq!(
        dead["sent"].as_u64().unwrap() + dead["failed"].as_u64().unwrap(),
        got,
        "{sum}"
    );
    let said = format!("nothing is listening at {closed} (is VSeeFace's receiver on?)");
    assert_eq!(run.stderr.matches(&said).count(), 1, "{}", run.stderr);
}

/// The status line reports its interval: a rate while a sender sends,
/// `no datagrams for N s` after; a listening socket that hears nothing for
/// 5 s says once where it listens and the usual causes, and a second
/// socket that heard the sender says that the sender stopped.
#[test]
fn status_lines_report_the_interval_and_silence_is_explained_once() {
    let (p1, p2) = (free_port(), free_port());
    let (l1, l2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.1:{p2}"));
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let mut tool = Proc::spawn(
        BIN,
        &[
            "-l",
            &l1,
            "-l",
            &l2,
            "--to",
            &to,
            "--stats-interval",
            "1s",
            "--duration",
            "7500ms",
        ],
        None,
    );
    tool.log_line("listening on");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for k in 0..5 {
        for d in frame(10.0, k as f32) {
            tx.send_to(&d, l1.as_str()).unwrap();
        }
    }
    tool.log_line("datagrams/s over the last");
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let heard: SocketAddr = l1.parse().unwrap();
    mocap_testutil::status::assert_went_quiet(&run.stderr, heard, 4);
    let never =
        mocap_testutil::status::told(&run.stderr, &format!("nothing has arrived on {l2} in 5 s"));
    assert_eq!(never.len(), 1, "{}", run.stderr);
    assert!(never[0].contains(&format!("firewall blocks UDP port {p2}")));
    assert!(run.stderr.contains("done (duration)"), "{}", run.stderr);
}

/// Issue 57: a stranger heard first whose Hips are NaN (or infinite) became
/// the primary, stayed live on its T alone and froze frame mode at one mixed
/// frame while the performer sent 240. The output now follows the good
/// sender frame for frame.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn a_first_sender_of_nan_hips_does_not_black_out_frame_mode() {
    for bad in [f32::NAN, f32::INFINITY] {
        let l = format!("127.0.0.1:{}", free_port());
        let rx = receiver();
        let to = rx.local_addr().unwrap().to_string();
        let tool = start(&["-l", &l, "--to", &to, "--format", "json"]);
        let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
        let nan = vmc::frame_datagrams(
            &[
                Message::BonePos {
                    name: "Hips".into(),
                    pos: [0.0, bad, 0.0],
                    rot: [0.0, 0.0, 0.0, 1.0],
                },
                Message::Available {
                    loaded: 1,
                    calibration: None,
                    tracking: None,
                },
                Message::Time(0.0),
            ],
            vmc::MAX_BUNDLE,
        )
        .unwrap();
        let send_nan = || {
            for d in &nan {
                stranger.send_to(d, &l).unwrap();
            }
        };
        // Heard first, so it is the first source (the default primary).
        send_nan();
        thread::sleep(Duration::from_millis(50));
        let performer = UdpSocket::bind("127.0.0.1:0").unwrap();
        const FRAMES: usize = 60;
        for i in 0..FRAMES {
            send_nan();
            for d in frame(20.0, 1000.0 + i as f32) {
                performer.send_to(&d, &l).unwrap();
            }
            thread::sleep(Duration::from_millis(8));
        }
        let got = receive(&rx, Duration::from_millis(300));
        let sum = finish(tool).json().pop().unwrap();
        let times: Vec<f32> = got
            .iter()
            .filter_map(|m| match m {
                Message::Time(t) => Some(*t),
                _ => None,
            })
            .collect();
        // Loopback rarely drops; a few datagrams may be.
        assert!(
            times.len() >= FRAMES - 3,
            "{bad}: {} of {FRAMES}: {sum}",
            times.len()
        );
        assert!(
            times.iter().all(|t| *t >= 1000.0),
            "the stranger's T passed through: {times:?}"
        );
        assert!((last_head(&got) - 20.0).abs() < 1e-3);
        let stranger = &sum["sources"][0];
        assert!(
            stranger["non_finite"].as_u64().unwrap() >= FRAMES as u64,
            "{sum}"
        );
    }
}

/// Issue 57: with 256 senders the human summary was one 20 kB line. Now a
/// line per source for the busiest 16, then how many more.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn the_human_summary_lists_a_bounded_number_of_sources_a_line_each() {
    let l: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let tool = start(&["-l", &l.to_string(), "--to", "127.0.0.1:9", "--rate", "50"]);
    let datagrams = frame(10.0, 0.0);
    // Kept open, so no two senders share a port.
    let mut held = Vec::new();
    for k in 0..40 {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        // The first sender sends twice: the busiest, so always listed.
        for _ in 0..if k == 0 { 2 } else { 1 } {
            for d in &datagrams {
                s.send_to(d, l).unwrap();
            }
        }
        held.push(s);
    }
    let first = held[0].local_addr().unwrap().to_string();
    thread::sleep(Duration::from_millis(200));
    let done = finish(tool);
    let err = &done.stderr;
    let longest = err.lines().map(str::len).max().unwrap();
    assert!(longest < 300, "a {longest}-byte line:\n{err}");
    let listed: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("stale periods"))
        .collect();
    assert_eq!(listed.len(), 16, "{err}");
    assert!(listed[0].contains(&first), "{err}");
    assert!(err.contains("… and 24 more sources (24 frames, "), "{err}");
}
