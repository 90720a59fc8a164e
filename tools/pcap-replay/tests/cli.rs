//! Runs the real `pcap-replay` binary against loopback receivers on ephemeral
//! ports. Payload bytes and order are checked; timing is the benchmark's job.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::fs::File;
use std::net::UdpSocket;
use std::time::{Duration, Instant};

use mocap_core::pcap::Datagrams;
use mocap_testutil::{Finished, Proc};
use serde_json::Value;

mod common;

use common::{CAPTURES, capture, collect, payloads, receiver, sibling};

const BIN: &str = env!("CARGO_BIN_EXE_pcap-replay");

fn replay(args: &[&str]) -> Proc {
    Proc::spawn(BIN, args, None)
}

fn summary(out: &Finished) -> Value {
    let last = out
        .stdout
        .last()
        .unwrap_or_else(|| panic!("no output; stderr: {}", out.stderr));
    serde_json::from_str(last).unwrap()
}

fn run_to(rx: &UdpSocket, file: &str, extra: &[&str], expect: usize) -> (Vec<Vec<u8>>, Value) {
    let to = rx.local_addr().unwrap().to_string();
    let mut args = vec![file, "--to", &to, "--format", "json"];
    args.extend_from_slice(extra);
    let child = replay(&args);
    let got = collect(rx, expect);
    let out = child.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    (got.into_iter().map(|(_, p)| p).collect(), summary(&out))
}

#[test]
fn every_payload_arrives_intact_and_in_order() {
    for name in [
        "mocopi-sizes.pcapng",
        "mocopi-frame-loss.pcapng",
        "tcpdump-any-sll2.pcap",
    ] {
        let want = payloads(name);
        let rx = receiver();
        let (got, sum) = run_to(&rx, &capture(name), &["--topspeed"], want.len());
        assert_eq!(got, want, "{name}");
        assert_eq!(sum["sent"], want.len() as u64);
        assert_eq!(sum["type"], "summary");
        // No deadlines at top speed, so no timing error to report.
        assert!(sum["timing_error_us"].is_null());
    }
}

/// Two threads race for each datagram under `--hedge`: still each payload
/// once, in order, and the summary says what the second thread sent (or the
/// log says why there is none).
#[test]
fn hedged_replay_sends_every_datagram_once_in_order() {
    let name = "mocopi-frame-loss.pcapng";
    let want = payloads(name);
    for (extra, n) in [
        (&["--speed", "4"][..], want.len()),
        (&["--speed", "4", "--loop", "2"][..], 2 * want.len()),
        (&["--speed", "4", "-n", "3"][..], 3),
    ] {
        let rx = receiver();
        let to = rx.local_addr().unwrap().to_string();
        let file = capture(name);
        let mut args = vec![file.as_str(), "--to", &to, "--format", "json"];
        args.extend_from_slice(&["--hedge", "--spin", "200us"]);
        args.extend_from_slice(extra);
        let child = replay(&args);
        let got: Vec<Vec<u8>> = collect(&rx, n).into_iter().map(|(_, p)| p).collect();
        let out = child.finish();
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let expected: Vec<Vec<u8>> = want.iter().cycle().take(n).cloned().collect();
        assert_eq!(got, expected, "{extra:?}");
        let mut buf = vec![0u8; 65_535];
        assert!(
            rx.recv_from(&mut buf).is_err(),
            "{extra:?}: a datagram arrived a second time"
        );
        let sum = summary(&out);
        assert_eq!(sum["sent"], n as u64, "{extra:?}");
        assert!(sum["timing_error_us"]["p99"].is_u64());
        if out.stderr.contains("sending from one thread") {
            // One CPU, or no pinning allowed: no second thread, no field.
            assert!(sum["hedged"].is_null(), "{sum}");
        } else {
            assert!(
                out.stderr.contains("--hedge: a second sending thread"),
                "{}",
                out.stderr
            );
            assert!(sum["hedged"].is_u64(), "{sum}");
        }
    }
}

#[test]
fn fragmented_captures_are_reassembled_before_sending() {
    for name in [
        "mocopi-sizes-fragmented.pcapng",
        "tcpdump-lo-mtu1500-fragmented.pcap",
    ] {
        let want = payloads("mocopi-sizes.pcapng");
        let rx = receiver();
        let (got, sum) = run_to(&rx, &capture(name), &["--topspeed"], want.len());
        assert_eq!(got, want, "{name}");
        assert_eq!(sum["capture"]["reassembled"], 8, "{name}");
    }
}

#[test]
fn recorded_timing_with_speed() {
    let name = "wave-60hz.pcapng";
    let path = capture(name);
    let mut d = Datagrams::new(File::open(&path).unwrap()).unwrap();
    let (mut want, mut stamps) = (Vec::new(), Vec::new());
    while let Some(r) = d.next_datagram() {
        let r = r.unwrap();
        stamps.push(r.ts);
        want.push(r.payload.to_vec());
    }
    let span = *stamps.last().unwrap() - stamps[0];
    assert!(span > Duration::from_secs(2), "{span:?}");
    let rx = receiver();
    let started = Instant::now();
    let (got, sum) = run_to(&rx, &path, &["--speed", "2"], want.len());
    let took = started.elapsed();
    assert_eq!(got, want);
    assert_eq!(sum["stopped"], "end of input");
    assert!(sum["timing_error_us"]["p99"].is_u64());
    // Half the capture's span: generous bounds, but --speed ignored (the
    // whole span) or taken as top speed (no wait at all) fails.
    let half = span / 2;
    assert!(
        took >= half.mul_f64(0.9),
        "{took:?} for a {span:?} capture at 2x"
    );
    assert!(
        took < half.mul_f64(1.6),
        "{took:?} for a {span:?} capture at 2x"
    );
    let elapsed = sum["elapsed_s"].as_f64().unwrap();
    assert!(
        (elapsed - half.as_secs_f64()).abs() < 0.25 * half.as_secs_f64(),
        "{sum}"
    );
}

#[test]
fn loops_play_the_capture_again() {
    let once = payloads("mocopi-sizes.pcapng");
    let rx = receiver();
    let (got, sum) = run_to(
        &rx,
        &capture("mocopi-sizes.pcapng"),
        &["--loop", "3", "--speed", "20"],
        once.len() * 3,
    );
    let want: Vec<_> = once.iter().cycle().take(once.len() * 3).cloned().collect();
    assert_eq!(got, want);
    assert_eq!(sum["loops"], 3);
}

#[test]
fn port_map_rewrites_the_original_port() {
    let rx = receiver();
    let map = format!("12351:{}", rx.local_addr().unwrap().port());
    let want = payloads("mocopi-sizes.pcapng");
    let child = replay(&[
        &capture("mocopi-sizes.pcapng"),
        "--port-map",
        &map,
        "--topspeed",
        "-q",
    ]);
    let got = collect(&rx, want.len());
    let out = child.finish();
    assert_eq!(out.code, Some(0));
    assert_eq!(got.into_iter().map(|(_, p)| p).collect::<Vec<_>>(), want);
}

#[test]
fn filters_skip_what_they_do_not_match() {
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let out = replay(&[
        &capture("mocopi-sizes.pcapng"),
        "--to",
        &to,
        "--filter-port",
        "9",
        "--format",
        "json",
    ])
    .finish();
    let sum = summary(&out);
    assert_eq!(
        (sum["sent"].as_u64(), sum["skipped"].as_u64()),
        (Some(0), Some(8))
    );
    let out = replay(&[
        &capture("mocopi-sizes.pcapng"),
        "--to",
        &to,
        "--src",
        "127.0.0.1",
        "--filter-port",
        "12351",
        "--topspeed",
        "--format",
        "json",
    ])
    .finish();
    assert_eq!(summary(&out)["sent"], 8);
    let out = replay(&[
        &capture("mocopi-sizes.pcapng"),
        "--to",
        &to,
        "--dst",
        "10.0.0.1",
        "--format",
        "json",
    ])
    .finish();
    assert_eq!(summary(&out)["skipped"], 8);
}

#[test]
fn trigger_plays_to_whoever_sent_the_first_datagram() {
    let rx = receiver();
    let port = rx.local_addr().unwrap().port().to_string();
    let mut child = replay(&[
        &capture("mocopi-sizes.pcapng"),
        "--trigger",
        "127.0.0.1:0",
        "--to-port",
        &port,
        "--topspeed",
    ]);
    let (line, trigger) = child.log_line("waiting for a datagram");
    let trigger = trigger.unwrap_or_else(|| panic!("no address in {line:?}"));
    rx.send_to(
        b"iFacialMocap_sahuasouryya9218sauhuiayeta91555dy3719",
        trigger,
    )
    .unwrap();
    let want = payloads("mocopi-sizes.pcapng");
    let got = collect(&rx, want.len());
    let out = child.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    // Played from the trigger socket, like a phone answering from its port.
    assert!(got.iter().all(|(from, _)| *from == trigger));
    assert_eq!(got.into_iter().map(|(_, p)| p).collect::<Vec<_>>(), want);
}

#[test]
fn count_and_duration_stop_early() {
    let rx = receiver();
    let (got, sum) = run_to(
        &rx,
        &capture("mocopi-sizes.pcapng"),
        &["-n", "3", "--topspeed"],
        3,
    );
    assert_eq!(got.len(), 3);
    assert_eq!(
        (sum["sent"].as_u64(), sum["stopped"].as_str()),
        (Some(3), Some("count"))
    );
    // At 1/100 speed the second datagram is due after 1.7 s; the duration ends it first.
    let (_, sum) = run_to(
        &rx,
        &capture("mocopi-sizes.pcapng"),
        &["--speed", "0.01", "--duration", "300ms"],
        1,
    );
    assert_eq!(
        (sum["sent"].as_u64(), sum["stopped"].as_str()),
        (Some(1), Some("duration"))
    );
}

#[test]
fn a_count_at_the_end_of_a_pass_finishes_the_pass() {
    let name = "mocopi-sizes.pcapng";
    let n = payloads(name).len();
    let rx = receiver();
    // Exactly the capture: it ends first, and the pass counts.
    let (got, sum) = run_to(
        &rx,
        &capture(name),
        &["-n", &n.to_string(), "--topspeed"],
        n,
    );
    assert_eq!(got.len(), n);
    assert_eq!(
        (
            sum["sent"].as_u64(),
            sum["loops"].as_u64(),
            sum["stopped"].as_str()
        ),
        (Some(n as u64), Some(1), Some("end of input"))
    );
    // Two passes of three: the count ends it, two passes played in full.
    let (got, sum) = run_to(
        &rx,
        &capture(name),
        &["-n", &(2 * n).to_string(), "--loop", "3", "--topspeed"],
        2 * n,
    );
    assert_eq!(got.len(), 2 * n);
    assert_eq!(
        (
            sum["sent"].as_u64(),
            sum["loops"].as_u64(),
            sum["stopped"].as_str()
        ),
        (Some(2 * n as u64), Some(2), Some("count"))
    );
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn ctrl_c_stops_with_a_summary() {
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    // At 1/100 speed the second datagram is due after 1.7 s.
    let child = replay(&[
        &capture("mocopi-sizes.pcapng"),
        "--to",
        &to,
        "--speed",
        "0.01",
        "--format",
        "json",
    ]);
    assert_eq!(collect(&rx, 1).len(), 1);
    child.interrupt();
    let out = child.finish();
    assert_eq!(out.code, Some(0));
    let sum = summary(&out);
    assert_eq!(
        (sum["sent"].as_u64(), sum["stopped"].as_str()),
        (Some(1), Some("interrupted"))
    );
}

#[test]
fn exit_codes() {
    let out = replay(&["/nonexistent.pcapng"]).finish();
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("/nonexistent.pcapng"));
    // One raw datagram, read as every tool's -r reads it, has no time to keep.
    let untimed = capture("seed-frame-1575.bin");
    let out = replay(&[&untimed]).finish();
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("--pps N or --topspeed"),
        "{}",
        out.stderr
    );
    let damaged = std::env::temp_dir().join(format!("damaged-{}.pcap", std::process::id()));
    std::fs::write(&damaged, b"not a capture at all").unwrap();
    let out = replay(&[damaged.to_str().unwrap()]).finish();
    let _ = std::fs::remove_file(&damaged);
    assert_eq!(out.code, Some(1));
    assert!(
        out.stderr.contains("not a pcap or pcapng file"),
        "{}",
        out.stderr
    );
    for bad in [
        &["--speed", "0", "x.pcap"][..],
        &["--port-map", "1-2", "x.pcap"],
        &[],
    ] {
        assert_eq!(replay(bad).finish().code, Some(2), "{bad:?}");
    }
    let help = replay(&["--help"]).finish();
    assert!(help.text().contains("--trigger"));
}

#[test]
fn completions_man_page_and_version() {
    mocap_testutil::check_generate(BIN, "pcap-replay", "--port-map");
}

#[test]
#[ignore = "needs bash + man-db: scripts/test-all.sh"]
fn completions_parse_in_bash_and_the_man_page_renders() {
    mocap_testutil::check_generate_with_shell_and_man(BIN, "pcap-replay", "--port-map");
}

/// `--trigger --allow`: a datagram from anyone else does not start the replay
/// (it would aim the capture at them); the allowed sender's does.
#[test]
fn trigger_with_allow_ignores_other_senders() {
    let rx = receiver();
    let port = rx.local_addr().unwrap().port().to_string();
    let mut child = replay(&[
        &capture("mocopi-sizes.pcapng"),
        "--trigger",
        "127.0.0.1:0",
        "--to-port",
        &port,
        "--allow",
        "127.0.0.1",
        "--topspeed",
        "--format",
        "json",
    ]);
    let (_, trigger) = child.log_line("waiting for a datagram");
    let trigger = trigger.unwrap();
    let stranger = UdpSocket::bind("127.0.0.2:0").unwrap();
    stranger.send_to(b"go", trigger).unwrap();
    child.log_line("refused datagrams from 127.0.0.2");
    rx.send_to(b"go", trigger).unwrap();
    let want = payloads("mocopi-sizes.pcapng");
    let got = collect(&rx, want.len());
    let out = child.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(got.into_iter().map(|(_, p)| p).collect::<Vec<_>>(), want);
    assert!(
        out.stderr
            .contains(&format!("triggered by {}", rx.local_addr().unwrap())),
        "{}",
        out.stderr
    );
    // Without --trigger, --allow is a usage error.
    let bad = replay(&[&capture("mocopi-sizes.pcapng"), "--allow", "127.0.0.1"]).finish();
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
}

/// A capture of `n` mocopi frames, fnum 1..=n, 1/60 s apart, from our writer.
fn numbered_frames(name: &str, n: u32) -> std::path::PathBuf {
    use mocap_core::smf::{self, BodyRepr};
    let seed = include_bytes!("../../../captures/mocopi/seed-frame-1575.bin");
    let mut repr = smf::PacketRepr::parse(&smf::parse(seed).unwrap());
    let path = std::env::temp_dir().join(format!("impair-{name}-{}.pcapng", std::process::id()));
    let mut w = mocap_core::pcap::PcapNgWriter::new(File::create(&path).unwrap()).unwrap();
    let (src, dst) = (
        "127.0.0.1:50012".parse().unwrap(),
        "127.0.0.1:12351".parse().unwrap(),
    );
    for k in 1..=n {
        if let BodyRepr::Frame(f) = &mut repr.body {
            f.fnum = k;
            f.time = k as f32 / 60.0;
        }
        w.write(
            Duration::from_secs(1_764_417_600) + Duration::from_micros(16_667 * u64::from(k)),
            src,
            dst,
            &repr.to_bytes(),
        )
        .unwrap();
    }
    w.flush().unwrap();
    path
}

/// What a mocopi receiver counts (the core's stream health, as mocopi-dump
/// reports it) of what pcap-replay --impair sent, with the replay's records.
fn impaired_run(
    cap: &std::path::Path,
    spec: &str,
) -> (
    Vec<u32>,
    mocap_core::health::HealthReport,
    Value,
    Vec<Value>,
) {
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    // Ten times the recorded rate: 600 frames in a second, 1.7 ms apart.
    let child = replay(&[
        cap.to_str().unwrap(),
        "--to",
        &to,
        "--speed",
        "10",
        "--impair",
        spec,
        "--format",
        "json",
    ]);
    let mut got = Vec::new();
    let mut health = mocap_core::health::Health::new();
    let mut buf = vec![0u8; 65_535];
    let quiet = Duration::from_millis(500);
    rx.set_read_timeout(Some(quiet)).unwrap();
    while let Ok(n) = rx.recv(&mut buf) {
        let p = mocap_core::smf::parse(&buf[..n]).unwrap();
        let f = p.frame().unwrap();
        health.frame(
            f.fnum,
            mocap_core::health::sender_clock(f64::from(f.time)),
            None,
        );
        got.push(f.fnum);
    }
    let out = child.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let recs = out.json();
    let sum = recs.last().unwrap().clone();
    (got, health.report(), sum, recs)
}

/// `--impair` into a receiver: its lost, duplicates and reordered equal what
/// the summary says was injected (less the drops before the first and after
/// the last frame sent, which no receiver can see); the same seed gives the
/// same arrivals, another seed others; every datagram has its record.
#[test]
fn impaired_replay_counts_are_what_the_receiver_sees() {
    let cap = numbered_frames("counts", 600);
    for spec in [
        "loss=5%,dup=2%,seed=11",
        "reorder=5%,seed=12",
        "loss=3%,burst=6@1%,dup=2%,reorder=3%,jitter=1ms,seed=13",
    ] {
        let (got, h, sum, recs) = impaired_run(&cap, spec);
        let imp = &sum["impaired"];
        let notes: Vec<&Value> = recs
            .iter()
            .filter(|r| r["type"] == "replay.datagram")
            .collect();
        assert_eq!(notes.len(), 600, "{spec}: a record per datagram");
        let sent: Vec<u64> = notes
            .iter()
            .filter(|r| r["fate"] == "sent")
            .map(|r| r["n"].as_u64().unwrap())
            .collect();
        let (lo, hi) = (*sent.iter().min().unwrap(), *sent.iter().max().unwrap());
        let unseen = notes
            .iter()
            .filter(|r| r["fate"] == "dropped")
            .filter(|r| r["n"].as_u64().unwrap() < lo || r["n"].as_u64().unwrap() > hi)
            .count() as u64;
        assert_eq!(
            h.lost,
            imp["dropped"].as_u64().unwrap() - unseen,
            "{spec}: lost"
        );
        assert_eq!(
            h.duplicates,
            imp["duplicated"].as_u64().unwrap(),
            "{spec}: duplicates"
        );
        assert_eq!(
            h.reordered,
            imp["reordered"].as_u64().unwrap(),
            "{spec}: reordered"
        );
        assert_eq!(
            got.len() as u64,
            sum["sent"].as_u64().unwrap(),
            "{spec}: every datagram sent arrived"
        );
        let dups = notes.iter().filter(|r| r["copies"] == 2).count() as u64;
        assert_eq!(dups, imp["duplicated"].as_u64().unwrap());
        if spec.contains("loss") {
            assert!(imp["dropped"].as_u64().unwrap() > 5, "{spec}: {imp}");
        }
        if spec.contains("reorder") {
            assert!(h.reordered > 5, "{spec}: {h:?}");
        }
        // The same seed, the same arrivals; another seed, others.
        let (again, ..) = impaired_run(&cap, spec);
        assert_eq!(again, got, "{spec}: same seed");
        let other = spec.replace("seed=1", "seed=9");
        let (different, ..) = impaired_run(&cap, &other);
        assert_ne!(different, got, "{spec}: another seed");
    }
    let run = replay(&[cap.to_str().unwrap(), "--impair", "loss=120%"]).finish();
    assert_eq!(run.code, Some(2));
    let run = replay(&[cap.to_str().unwrap(), "--impair", "loss=1%", "--hedge"]).finish();
    assert_eq!(run.code, Some(2));
    let _ = std::fs::remove_file(&cap);
}

/// `mocopi-dump -l 127.0.0.1:0` started, and the address it listens on.
fn mocopi_dump(args: &[&str]) -> (Proc, String) {
    let mut all = vec!["-l", "127.0.0.1:0", "--format", "json", "--duration", "15s"];
    all.extend_from_slice(args);
    let mut rx = Proc::spawn(&sibling("mocopi-dump"), &all, None);
    let (line, at) = rx.log_line("listening on");
    let at = at.unwrap_or_else(|| panic!("no address in {line:?}"));
    (rx, at.to_string())
}

/// Records without what depends on the way in (socket source, receive time).
fn frames_only(recs: &[Value]) -> Vec<Value> {
    recs.iter()
        .filter(|r| r["type"] != "summary")
        .map(|r| {
            let mut r = r.clone();
            let o = r.as_object_mut().unwrap();
            o.remove("src");
            o.remove("ts_us");
            r
        })
        .collect()
}

/// The `.mocopipackets` capture the README starts with, replayed at its
/// recorded times into mocopi-dump: the same frames as `mocopi-dump -r` of
/// it. Without --to it says what to add (the text names no port).
#[test]
fn text_capture_replays_into_mocopi_dump_as_reading_it_does() {
    let file = format!("{CAPTURES}/animu-sphere/frame-loss-60hz.mocopipackets");
    let offline = Proc::spawn(
        &sibling("mocopi-dump"),
        &["-r", &file, "--format", "json"],
        None,
    )
    .finish();
    assert_eq!(offline.code, Some(0), "{}", offline.stderr);
    let want = frames_only(&offline.json());
    assert_eq!(want.len(), 8);
    let (rx, to) = mocopi_dump(&["-n", "8"]);
    let out = replay(&[&file, "--to", &to, "--format", "json"]).finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let sum = summary(&out);
    assert_eq!(
        (sum["sent"].as_u64(), sum["unreadable"].as_u64()),
        (Some(8), Some(0))
    );
    let live = rx.finish();
    assert_eq!(live.code, Some(0), "{}", live.stderr);
    assert_eq!(frames_only(&live.json()), want);
    // The health mocopi-dump reads from the file is what it sees live.
    let (a, b) = (offline.json(), live.json());
    for k in ["frames", "lost", "duplicates", "restarts"] {
        assert_eq!(a.last().unwrap()[k], b.last().unwrap()[k], "{k}");
    }

    let out = replay(&[&file]).finish();
    assert_eq!(out.code, Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("--to HOST:PORT"), "{}", out.stderr);
}

/// A directory says what it is and what is expected; `--help` keeps each
/// example's explanation under its own example.
#[test]
fn a_directory_and_the_help_say_what_they_mean() {
    let out = replay(&[CAPTURES]).finish();
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("is a directory"), "{}", out.stderr);
    assert!(out.stderr.contains(".pcapng"), "{}", out.stderr);
    let help = replay(&["--help"]).finish().text();
    let lines: Vec<&str> = help.lines().map(str::trim).collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.starts_with(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in {help}"))
    };
    let hedge = at("pcap-replay session.pcapng --hedge");
    assert!(lines[hedge + 1].starts_with("microsecond timing"), "{help}");
    let impair = at("pcap-replay session.pcapng --impair");
    assert!(lines[impair + 1].starts_with("bad Wi-Fi"), "{help}");
    assert!(!lines[impair + 2].starts_with("microsecond"), "{help}");
}

/// `--loop 3` into mocopi-dump: by default each pass repeats the frame
/// numbers (a looping sender: two restarts, and the log says what to add);
/// with `--renumber` the three passes read as one stream.
#[test]
fn looped_replay_with_renumber_reads_as_one_endless_stream() {
    let file = capture("wave-60hz.pcapng");
    for renumber in [false, true] {
        let (rx, to) = mocopi_dump(&["-n", "726"]);
        let mut args = vec![file.as_str(), "--to", &to, "--loop", "3", "--speed", "4"];
        args.extend_from_slice(&["--format", "json"]);
        if renumber {
            args.push("--renumber");
        }
        let out = replay(&args).finish();
        assert_eq!(out.code, Some(0), "{}", out.stderr);
        let rx = rx.finish();
        assert_eq!(rx.code, Some(0), "{}", rx.stderr);
        let recs = rx.json();
        let health = recs.last().unwrap();
        let sum = summary(&out);
        assert_eq!(health["frames"], 720, "{health}");
        assert_eq!(health["skeletons"], 6, "{health}");
        let fnums: Vec<u64> = recs
            .iter()
            .filter(|r| r["type"] == "mocopi.frame")
            .map(|r| r["fnum"].as_u64().unwrap())
            .collect();
        if renumber {
            assert_eq!(
                (
                    health["duplicates"].as_u64(),
                    health["lost"].as_u64(),
                    health["restarts"].as_u64()
                ),
                (Some(0), Some(0), Some(0)),
                "{health}"
            );
            assert!(fnums.windows(2).all(|w| w[1] == w[0] + 1), "{fnums:?}");
            assert_eq!(sum["renumbered"]["renumbered"], 480, "{sum}");
            assert_eq!(sum["renumbered"]["kept"], 0, "{sum}");
        } else {
            // Each pass jumps back by less than 1000 frames and runs on in
            // order: a restart, not 240 duplicates (RFC 3550 A.1).
            assert_eq!(
                (health["duplicates"].as_u64(), health["restarts"].as_u64()),
                (Some(0), Some(2)),
                "{health}"
            );
            assert_eq!(fnums[..240], fnums[240..480]);
            assert!(sum["renumbered"].is_null(), "{sum}");
            assert!(out.stderr.contains("--renumber"), "{}", out.stderr);
        }
    }
}

/// README's phone emulation on one machine, as written: the replay plays the
/// phone on its port 49983, `ifm-handshake PHONE` with no -l (whose default
/// port is that one) still gets every frame.
#[test]
fn one_machine_phone_emulation_as_the_readme_writes_it() {
    // Before the phone starts: a first build outlasts its --duration.
    let handshake = sibling("ifm-handshake");
    // A loopback address of its own on Linux, so parallel runs do not meet.
    let host = if cfg!(target_os = "linux") {
        format!("127.0.0.{}", 2 + std::process::id() % 250)
    } else {
        "127.0.0.1".to_owned()
    };
    let face = format!("{CAPTURES}/../ifacialmocap/face-60fps.pcapng");
    let trigger = format!("{host}:49983");
    let mut phone = replay(&[
        &face,
        "--trigger",
        &trigger,
        "--duration",
        "15s",
        "--format",
        "json",
    ]);
    phone.log_line("waiting for a datagram");
    let pc = Proc::spawn(
        &handshake,
        &[&host, "-n", "203", "--duration", "15s", "--format", "json"],
        None,
    )
    .finish();
    let phone = phone.finish();
    assert_eq!(pc.code, Some(0), "{}", pc.stderr);
    assert_eq!(phone.code, Some(0), "{}", phone.stderr);
    assert_eq!(summary(&phone)["sent"], 203, "{}", phone.stderr);
    let recs = pc.json();
    let sum = recs.last().unwrap();
    assert_eq!(sum["frames"], 203, "{sum}\n{}", pc.stderr);
    assert!(pc.stderr.contains("listening on"), "{}", pc.stderr);
    assert_eq!(sum["stopped"], "count", "{sum}");
}
