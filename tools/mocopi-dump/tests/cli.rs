//! Runs the real `mocopi-dump` binary: offline on captures, live on loopback
//! with ephemeral ports. Every child is bounded in time and killed on failure.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::io::Write;
use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use mocap_testutil::{Finished, Proc};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mocopi-dump");
const SEED: &[u8] = include_bytes!("../../../captures/mocopi/seed-frame-1575.bin");
const SKDF: &[u8] = include_bytes!("../../../captures/mocopi/t-34400/sample_skdf.bin");
const FRAM: &[u8] = include_bytes!("../../../captures/mocopi/t-34400/sample_fram.bin");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures/mocopi");

/// Starts the tool on an ephemeral loopback port and reads the port it got.
fn live(args: &[&str]) -> (Proc, SocketAddr) {
    let mut tool = Proc::spawn(BIN, &[&["-l", "127.0.0.1:0"], args].concat(), None);
    let (line, addr) = tool.log_line("listening on");
    (
        tool,
        addr.unwrap_or_else(|| panic!("no address in {line:?}")),
    )
}

fn offline(args: &[&str], stdin: Option<&[u8]>) -> Finished {
    Proc::spawn(BIN, args, stdin.map(<[u8]>::to_vec)).finish()
}

/// The `type` of every record.
fn types(recs: &[Value]) -> Vec<&str> {
    recs.iter().map(|r| r["type"].as_str().unwrap()).collect()
}

fn sender() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").unwrap()
}

#[test]
fn decodes_the_seed_frame_from_a_file() {
    let path = format!("{CAPTURES}/seed-frame-1575.bin");
    let run = offline(&["-r", &path, "--format", "json"], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs.len(), 2);
    let f = &recs[0];
    assert_eq!(f["type"], "mocopi.frame");
    assert_eq!(f["src"], Value::Null);
    assert_eq!(f["fnum"], 4977);
    assert_eq!(f["uttm"], Value::Null);
    assert_eq!(f["timecode"], Value::Null);
    assert_eq!(f["sender_ip"], "172.20.10.7");
    assert_eq!(f["sender_port"], 12351);
    let bones = f["bones"].as_array().unwrap();
    assert_eq!(bones.len(), 27);
    assert_eq!(bones[0]["name"], "root");
    assert_eq!(bones[10]["name"], "head");
    // An f64 reader gets exactly the wire's float32 values: the clock (the
    // shortest float32 text, 1674460400.0, would read 16 s off) and bones.
    let wire = |at: usize| f64::from(f32::from_le_bytes(SEED[at..at + 4].try_into().unwrap()));
    let time_at = SEED.windows(4).position(|w| w == b"time").unwrap() + 4;
    assert_eq!(f["time"].as_f64(), Some(wire(time_at)));
    assert_eq!(f["time"].as_f64(), Some(1_674_460_416.0));
    let text = run.stdout[0].as_str();
    assert!(text.contains(r#""time":1674460416.0"#), "{text}");
    for (i, b) in bones.iter().enumerate() {
        let tran = 1575 - 27 * 54 + i * 54 + 26;
        for j in 0..4 {
            assert_eq!(b["rot"][j].as_f64(), Some(wire(tran + 4 * j)), "bone {i}");
        }
        for j in 0..3 {
            assert_eq!(
                b["pos"][j].as_f64(),
                Some(wire(tran + 16 + 4 * j)),
                "bone {i}"
            );
        }
    }
    let s = &recs[1];
    assert_eq!(s["type"], "summary");
    assert_eq!(
        (s["packets"].as_u64(), s["frames"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(s["stopped"], "end of input");
}

#[test]
fn health_of_the_frame_loss_capture() {
    let path = format!("{CAPTURES}/animu-sphere/frame-loss-60hz.mocopipackets");
    let run = offline(&["-r", &path, "--format", "json"], None);
    assert_eq!(run.code, Some(0));
    let recs = run.json();
    let sum = recs.last().unwrap();
    assert_eq!(sum["type"], "summary");
    for (k, v) in [
        ("frames", 7),
        ("skeletons", 1),
        ("lost", 2),
        ("duplicates", 1),
        ("restarts", 1),
        ("errors", 0),
    ] {
        assert_eq!(sum[k], v, "{k}");
    }
    assert!((sum["sender_fps"].as_f64().unwrap() - 60.0).abs() < 0.01);
    assert!((sum["fps"].as_f64().unwrap() - 60.0).abs() < 0.1);
}

#[test]
fn malformed_capture_gives_error_records_and_exit_zero() {
    let path = format!("{CAPTURES}/animu-sphere/malformed-packets.mocopipackets");
    let run = offline(&["-r", &path, "--format", "json"], None);
    assert_eq!(run.code, Some(0));
    let recs = run.json();
    assert_eq!(recs.len(), 14);
    // What cannot be decoded is an error record; odd values (NaN and
    // negative clocks, a NaN rest pose: datagrams 8, 9, 10, 12) are decoded
    // records carrying a warning.
    let types: Vec<&str> = recs[..13]
        .iter()
        .map(|r| r["type"].as_str().unwrap())
        .collect();
    let mut want = vec!["error"; 13];
    for i in [8, 9, 10] {
        want[i] = "mocopi.frame";
    }
    want[12] = "mocopi.skeleton";
    assert_eq!(types, want);
    assert_eq!(recs[9]["time"], -1.0);
    assert_eq!(recs[9]["warnings"][0]["tag"], "time");
    assert_eq!(recs[9]["warnings"][0]["reason"], "clock value is negative");
    assert_eq!(recs[12]["warnings"][0]["tag"], "bons");
    assert_eq!(recs[1]["tag"], "vrsn");
    assert_eq!(recs[1]["offset"], 34);
    assert!(recs[1]["reason"].as_str().unwrap().contains("version 2"));
    assert_eq!(recs[13]["errors"], 9);
    assert_eq!(recs[13]["warnings"], 4);
}

#[test]
fn hex_lines_on_stdin_with_a_bad_line_in_between() {
    let mut input = hex::encode(SEED);
    input.push_str("\nnot hex\n");
    input.push_str(&hex::encode(FRAM));
    input.push('\n');
    let run = offline(&["-r", "-", "--format", "json"], Some(input.as_bytes()));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let types = types(&recs);
    assert_eq!(types, ["mocopi.frame", "error", "mocopi.frame", "summary"]);
    assert_eq!(recs[1]["line"], 2);
    assert_eq!(recs[2]["fnum"], 1);
}

#[test]
fn tree_format_shows_offsets_tags_and_values() {
    let path = format!("{CAPTURES}/seed-frame-1575.bin");
    let run = offline(&["-r", &path, "--format", "tree"], None);
    assert_eq!(run.code, Some(0));
    let out = &run.text();
    assert!(out.contains("datagram  1575 bytes"), "{out}");
    assert!(
        out.contains("      51       8    ipad  170c310d28000000  (172.20.10.7)"),
        "{out}"
    );
    assert!(out.contains("=> frame fnum=4977"), "{out}");
}

#[test]
fn live_json_with_garbage_in_the_middle() {
    let (tool, addr) = live(&["--format", "json", "-n", "4"]);
    let tx = sender();
    for d in [SEED, b"garbage!".as_slice(), FRAM, SKDF] {
        tx.send_to(d, addr).unwrap();
        // Keep loopback order and give the receiver time; no timing is asserted.
        thread::sleep(Duration::from_millis(5));
    }
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let types = types(&recs);
    assert_eq!(
        types,
        [
            "mocopi.frame",
            "error",
            "mocopi.frame",
            "mocopi.skeleton",
            "summary"
        ]
    );
    let src = tx.local_addr().unwrap().to_string();
    assert_eq!(recs[0]["src"], src.as_str());
    assert!(recs[0]["ts_us"].as_i64().unwrap() > 1_600_000_000_000_000);
    assert_eq!(recs[1]["offset"], 0);
    assert!(recs[1]["reason"].as_str().unwrap().contains("overruns"));
    assert_eq!(recs[2]["fnum"], 1);
    assert_eq!(recs[3]["bones"][0]["parent"], -1);
    let sum = &recs[4];
    assert_eq!(
        (sum["packets"].as_u64(), sum["errors"].as_u64()),
        (Some(4), Some(1))
    );
    assert_eq!(sum["stopped"], "count");
    assert_eq!(sum["senders"][0]["src"], src.as_str());
}

#[test]
fn live_human_lines() {
    let (tool, addr) = live(&["-n", "2"]);
    let tx = sender();
    tx.send_to(SEED, addr).unwrap();
    tx.send_to(SKDF, addr).unwrap();
    let run = tool.finish();
    assert_eq!(run.code, Some(0));
    let lines = &run.stdout;
    assert_eq!(lines.len(), 2, "{}", run.text());
    assert!(lines[0].starts_with("frame     fnum=4977 "), "{}", lines[0]);
    assert!(lines[0].contains(&format!("src={}", tx.local_addr().unwrap())));
    assert!(lines[1].starts_with("skeleton  bones=27"));
    assert!(
        run.stderr.contains("done (count): 2 packets"),
        "{}",
        run.stderr
    );
}

#[test]
fn duration_stops_an_idle_listener() {
    let start = Instant::now();
    let run = live(&["--duration", "300ms", "--format", "json"])
        .0
        .finish();
    assert_eq!(run.code, Some(0));
    assert!(start.elapsed() >= Duration::from_millis(300));
    let recs = run.json();
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["stopped"], "duration");
    assert_eq!(recs[0]["packets"], 0);
}

#[test]
fn stats_records_every_interval() {
    let run = live(&[
        "--duration",
        "700ms",
        "--stats-interval",
        "200ms",
        "--format",
        "json",
    ])
    .0
    .finish();
    let recs = run.json();
    let stats = recs.iter().filter(|r| r["type"] == "stats").count();
    assert!(stats >= 2, "{}", run.text());
    assert_eq!(recs.last().unwrap()["type"], "summary");
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn ctrl_c_ends_cleanly_with_a_summary() {
    let (mut tool, addr) = live(&["--format", "json"]);
    let tx = sender();
    tx.send_to(SEED, addr).unwrap();
    tool.stdout_line("mocopi.frame");
    tool.interrupt();
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs[0]["type"], "mocopi.frame");
    assert_eq!(recs.last().unwrap()["stopped"], "interrupted");
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn ctrl_c_while_stdin_is_quiet() {
    let (mut tool, mut stdin) = Proc::spawn_with_stdin(BIN, &["-r", "-", "--format", "json"]);
    writeln!(stdin, "{}", hex::encode(SEED)).unwrap();
    // Flushed per record although stdin is still open.
    tool.stdout_line("mocopi.frame");
    tool.interrupt();
    let run = tool.finish();
    drop(stdin);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.json().last().unwrap()["stopped"], "interrupted");
}

#[test]
fn a_second_instance_on_the_same_port_is_refused() {
    let (first, addr) = live(&["--duration", "2s"]);
    let port = addr.port().to_string();
    let second = offline(&["-l", &addr.to_string()], None);
    assert_eq!(second.code, Some(1));
    assert!(
        second.stderr.contains(&port) && second.stderr.contains("in use"),
        "{}",
        second.stderr
    );
    first.finish();
}

#[test]
fn bad_text_lines_are_errors_and_reading_goes_on() {
    let mut input = Vec::new();
    input.extend_from_slice(hex::encode(SEED).as_bytes());
    input.extend_from_slice(b"\n# caf\xe9 comment\n0a\xff0b\n");
    input.extend_from_slice(&b"ab".repeat(70_000));
    input.extend_from_slice(b"\n");
    input.extend_from_slice(&b"a".repeat(300_000));
    input.extend_from_slice(b"\n");
    input.extend_from_slice(hex::encode(FRAM).as_bytes());
    input.extend_from_slice(b"\n");
    let run = offline(&["-r", "-", "--format", "json"], Some(&input));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let types = types(&recs);
    assert_eq!(
        types,
        [
            "mocopi.frame",
            "error",
            "error",
            "error",
            "mocopi.frame",
            "summary"
        ]
    );
    assert_eq!(
        (recs[1]["line"].as_u64(), recs[1]["column"].as_u64()),
        (Some(3), Some(2))
    );
    assert!(
        recs[2]["reason"]
            .as_str()
            .unwrap()
            .contains("more than one datagram")
    );
    assert!(recs[3]["reason"].as_str().unwrap().contains("too long"));
    assert_eq!(recs[4]["fnum"], 1);
}

#[test]
fn deeply_nested_chunks_do_not_overflow_the_tree_view() {
    // 8000 `head` containers inside each other: a legal length walk, no format.
    let mut d = Vec::new();
    for _ in 0..8000 {
        let len = d.len() as u32;
        let mut outer = len.to_le_bytes().to_vec();
        outer.extend_from_slice(b"head");
        outer.extend_from_slice(&d);
        d = outer;
    }
    let input = format!("{}\n", hex::encode(&d));
    let run = offline(&["-r", "-", "--format", "tree"], Some(input.as_bytes()));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.text().len() < 1_000_000,
        "{} bytes of tree",
        run.text().len()
    );
    assert!(run.text().contains("=> error"));
}

#[test]
fn a_capture_on_stdin() {
    let bytes = std::fs::read(format!("{CAPTURES}/tcpdump-any-sll2.pcap")).unwrap();
    let run = offline(&["-r", "-", "--format", "json"], Some(&bytes));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs.last().unwrap()["frames"], 7);
    assert_eq!(recs.last().unwrap()["capture"]["records"], 8);
}

#[test]
fn port_in_use_is_a_runtime_error_naming_the_port() {
    // A plain socket without SO_REUSEADDR keeps the port to itself.
    let holder = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = holder.local_addr().unwrap().to_string();
    let run = offline(&["-l", &addr], None);
    assert_eq!(run.code, Some(1));
    let port = holder.local_addr().unwrap().port().to_string();
    assert!(
        run.stderr.contains(&port) && run.stderr.contains("in use"),
        "{}",
        run.stderr
    );
}

#[test]
fn usage_and_runtime_exit_codes() {
    assert_eq!(offline(&["--no-such-flag"], None).code, Some(2));
    assert_eq!(offline(&["--format", "xml"], None).code, Some(2));
    assert_eq!(offline(&["--duration", "soon"], None).code, Some(2));
    let missing = offline(&["-r", "/nonexistent/capture.bin"], None);
    assert_eq!(missing.code, Some(1));
    assert!(missing.stderr.contains("/nonexistent/capture.bin"));
    let help = offline(&["--help"], None);
    assert_eq!(help.code, Some(0));
    assert!(help.text().contains("Examples:") && help.text().contains("Exit codes"));
}

#[test]
fn closed_stdout_pipe_ends_with_exit_zero() {
    // Several megabytes of JSON, so the tool is still writing when the reader goes away.
    let line = format!("{}\n", hex::encode(SEED));
    let input = line.repeat(3000);
    let mut tool = Proc::spawn(
        BIN,
        &["-r", "-", "--format", "json"],
        Some(input.into_bytes()),
    );
    let first = tool.stdout_line("");
    assert!(first.contains("\"mocopi.frame\""));
    tool.close_stdout();
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("error"), "{}", run.stderr);
}

/// Output with the run-dependent fields removed (elapsed time; with `live`,
/// also the UDP source and receive time, which a replay cannot keep).
fn normalise(records: &[Value], live: bool) -> Vec<Value> {
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let Some(o) = r.as_object_mut() {
                o.remove("elapsed_s");
                if live {
                    for k in ["src", "ts_us", "fps", "jitter_ms", "capture", "senders"] {
                        o.remove(k);
                    }
                }
            }
            r
        })
        .collect()
}

#[test]
fn golden_json_for_every_capture() {
    let golden_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden");
    let bless = std::env::var_os("BLESS").is_some();
    // BLESS rewrites the oracle from our own output: a person reviews the
    // diff; CI must compare, never rewrite.
    assert!(
        !(bless && std::env::var_os("CI").is_some()),
        "BLESS is set in CI: the golden files would be rewritten, not checked"
    );
    for name in [
        "mocopi-sizes.pcapng",
        "mocopi-sizes-fragmented.pcapng",
        "mocopi-frame-loss.pcapng",
        "tcpdump-lo-ethernet.pcap",
        "tcpdump-any-sll2.pcap",
        "tcpdump-lo-mtu1500-fragmented.pcap",
        "recorded-by-mocopi-dump.pcapng",
        "animu-sphere/malformed-packets.mocopipackets",
        "seed-frame-1575.bin",
    ] {
        let run = offline(
            &["-r", &format!("{CAPTURES}/{name}"), "--format", "json"],
            None,
        );
        assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
        let got: Vec<String> = normalise(&run.json(), false)
            .iter()
            .map(|v| v.to_string())
            .collect();
        let path = format!("{golden_dir}/{}.jsonl", name.replace('/', "__"));
        if bless {
            std::fs::write(&path, got.join("\n") + "\n").unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{path}: {e} (run with BLESS=1 to create it)"));
        let want: Vec<&str> = want.lines().collect();
        assert_eq!(got.len(), want.len(), "{name}: record count");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g, w,
                "{name}: record {i} differs (BLESS=1 regenerates after review)"
            );
        }
    }
}

/// Every capture timestamp of a file, to the nanosecond, read by the core's reader.
fn timestamps(path: &str) -> Vec<Duration> {
    let mut r = mocap_core::pcap::CaptureReader::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(p) = r.next_packet() {
        out.push(p.unwrap().ts);
    }
    out
}

#[test]
fn rewriting_a_capture_keeps_every_timestamp_to_the_nanosecond() {
    // The time went through f64 seconds once (about 0.24 µs of precision in
    // 2026): -w moved packets by up to a few hundred ns and ts_us was now and
    // then one µs off. Both come from the capture's own timestamp now.
    let dir = std::env::temp_dir().join(format!("mocopi-dump-ts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("again.pcapng");
    let src = format!("{CAPTURES}/recorded-by-mocopi-dump.pcapng");
    let run = offline(
        &["-r", &src, "--format", "json", "-w", out.to_str().unwrap()],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let want = timestamps(&src);
    assert!(
        want.iter().any(|t| t.subsec_nanos() % 1000 != 0),
        "a capture with ns times"
    );
    assert_eq!(timestamps(out.to_str().unwrap()), want);
    let printed: Vec<u128> = run
        .json()
        .iter()
        .filter_map(|r| r["ts_us"].as_u64())
        .map(u128::from)
        .collect();
    let nearest: Vec<u128> = want.iter().map(|t| (t.as_nanos() + 500) / 1000).collect();
    assert_eq!(printed, nearest);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn write_records_what_arrived_and_reads_back_the_same() {
    let dir = std::env::temp_dir().join(format!("mocopi-dump-w-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rec.pcapng");
    let path_s = path.to_str().unwrap();
    let (tool, addr) = live(&["--format", "json", "-n", "4", "-w", path_s]);
    let tx = sender();
    for d in [SKDF, SEED, b"garbage!".as_slice(), FRAM] {
        tx.send_to(d, addr).unwrap();
        thread::sleep(Duration::from_millis(5));
    }
    let live_run = tool.finish();
    assert_eq!(live_run.code, Some(0), "{}", live_run.stderr);
    let from_file = offline(&["-r", path_s, "--format", "json"], None);
    assert_eq!(from_file.code, Some(0), "{}", from_file.stderr);
    let (a, b) = (live_run.json(), from_file.json());
    // Same records, same sources and receive times (the recording keeps both),
    // the undecodable datagram included.
    let strip = |v: &[Value]| -> Vec<Value> {
        normalise(v, false)
            .into_iter()
            .filter(|r| r["type"] != "summary")
            .collect()
    };
    assert_eq!(strip(&a), strip(&b));
    assert_eq!(b.last().unwrap()["errors"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replaying_a_capture_live_gives_what_reading_it_gives() {
    use mocap_core::pcap::Datagrams;
    for name in [
        "mocopi-sizes.pcapng",
        "mocopi-sizes-fragmented.pcapng",
        "mocopi-frame-loss.pcapng",
        "tcpdump-lo-ethernet.pcap",
        "tcpdump-any-sll2.pcap",
        "tcpdump-lo-mtu1500-fragmented.pcap",
        "recorded-by-mocopi-dump.pcapng",
    ] {
        let file = format!("{CAPTURES}/{name}");
        let offline_run = offline(&["-r", &file, "--format", "json"], None);
        let count = offline_run.json().last().unwrap()["packets"].to_string();
        let (tool, addr) = live(&["--format", "json", "-n", &count]);
        // Played the way pcap-replay plays it (its own tests check its
        // timing): every datagram, in order, from one UDP socket.
        let mut capture = Datagrams::new(std::fs::File::open(&file).unwrap()).unwrap();
        let tx = sender();
        while let Some(d) = capture.next_datagram() {
            let Ok(d) = d else { break };
            tx.send_to(d.payload, addr).unwrap();
            thread::sleep(Duration::from_micros(300));
        }
        let live_run = tool.finish();
        assert_eq!(live_run.code, Some(0), "{}", live_run.stderr);
        let a = normalise(&offline_run.json(), true);
        let b = normalise(&live_run.json(), true);
        assert_eq!(a.len(), b.len(), "{name}");
        for (x, y) in a.iter().zip(&b) {
            if x["type"] == "summary" {
                for k in [
                    "packets",
                    "frames",
                    "skeletons",
                    "lost",
                    "duplicates",
                    "restarts",
                    "errors",
                ] {
                    assert_eq!(x[k], y[k], "{name}: summary {k}");
                }
            } else {
                assert_eq!(x, y, "{name}");
            }
        }
    }
}

/// Everything a receiver got until it was quiet for 500 ms, decoded.
fn receive_vmc(rx: &UdpSocket) -> (usize, Vec<mocap_core::vmc::Message>) {
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = vec![0u8; 65_536];
    let mut datagrams = 0;
    let mut messages = Vec::new();
    while let Ok(n) = rx.recv(&mut buf) {
        assert!(n <= 1200, "a {n}-byte datagram");
        datagrams += 1;
        messages.extend(
            mocap_core::vmc::decode(&buf[..n])
                .unwrap()
                .into_iter()
                .map(Result::unwrap),
        );
    }
    (datagrams, messages)
}

/// VMC frames: the messages from one Root/Pos to the next T.
fn vmc_frames(messages: &[mocap_core::vmc::Message]) -> Vec<&[mocap_core::vmc::Message]> {
    messages
        .split_inclusive(|m| matches!(m, mocap_core::vmc::Message::Time(_)))
        .collect()
}

#[test]
fn vmc_output_waits_for_the_skeleton_and_carries_the_retargeted_pose() {
    use mocap_core::vmc::Message;
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let (tool, addr) = live(&["--format", "json", "--vmc", &to, "-n", "4"]);
    let tx = sender();
    // A frame before any skeleton is decoded but not sent.
    for d in [FRAM, SKDF, SEED, FRAM] {
        tx.send_to(d, addr).unwrap();
        thread::sleep(Duration::from_millis(30));
    }
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("waiting for skeleton"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("skeleton received"), "{}", run.stderr);
    let (datagrams, messages) = receive_vmc(&rx);
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["vmc"]["frames"], 2);
    assert_eq!(sum["vmc"]["waiting_for_skeleton"], 1);
    assert_eq!(sum["vmc"]["datagrams"].as_u64(), Some(datagrams as u64));
    let frames = vmc_frames(&messages);
    assert_eq!(frames.len(), 2);
    // Bone bundles first, then Root/Pos, OK and T, as the reference sender.
    for got in &frames {
        let bones = got
            .iter()
            .filter(|m| matches!(m, Message::BonePos { .. }))
            .count();
        assert_eq!(bones, 22);
        assert!(matches!(got[got.len() - 3], Message::RootPos { .. }));
        assert!(matches!(
            got[got.len() - 2],
            Message::Available { loaded: 1, .. }
        ));
    }
    let bone = |f: &[Message], want: &str| -> ([f32; 3], [f32; 4]) {
        f.iter()
            .find_map(|m| match m {
                Message::BonePos { name, pos, rot } if name == want => Some((*pos, *rot)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {want}"))
    };
    // The seed frame against values computed by hand (Python, rotation
    // matrices: not the bridge's quaternion code) from its decoded bones.
    for (name, pos, rot) in [
        (
            "Hips",
            [0.523_354_2, 0.717_374_6, -0.746_616],
            [0.204_347_4, 0.098_602_7, 0.062_336_9, -0.971_922_7],
        ),
        (
            "Spine",
            [-0.003_869_1, 0.158_729_8, 0.019_302_5],
            [-0.162_761_2, -0.016_873_8, -0.028_176_1, -0.986_118_7],
        ),
        (
            "Neck",
            [0.000_034_5, 0.148_937_5, 0.022_309_7],
            [-0.041_985_6, 0.042_259_7, 0.013_650_9, -0.998_130_7],
        ),
        (
            "Head",
            [0.001_077_8, 0.093_724_4, 0.011_454_2],
            [-0.034_226_4, 0.033_835_5, 0.030_612_7, -0.998_372],
        ),
        (
            "LeftUpperArm",
            [-0.125_803, 0.031_555_9, -0.031_742_5],
            [-0.105_545_5, -0.490_017_5, -0.523_749, -0.688_788_8],
        ),
    ] {
        let (p, q) = bone(frames[0], name);
        assert!(
            p.iter().zip(pos).all(|(a, b)| (a - b).abs() < 2e-6),
            "{name}: {p:?} vs {pos:?}"
        );
        // q and −q are the same rotation.
        let dot: f32 = q.iter().zip(rot).map(|(a, b)| a * b).sum();
        assert!((dot.abs() - 1.0).abs() < 2e-6, "{name}: {q:?} vs {rot:?}");
    }
    // The t-34400 frame is a T-pose on its own skeleton: every bone at rest.
    for m in frames[1] {
        if let Message::BonePos { name, rot, .. } = m {
            assert!(
                (rot[3].abs() - 1.0).abs() < 1e-6,
                "{name} is not at rest: {rot:?}"
            );
        }
    }
    // The seed frame's Hips: the root joint mirrored (−x, y, z).
    let Message::BonePos { name, pos, .. } = &frames[0][0] else {
        panic!("{:?}", frames[0][0])
    };
    assert_eq!(name, "Hips");
    assert_eq!(*pos, [0.523_354_2, 0.717_374_56, -0.746_615_95]);
}

#[test]
fn vmc_output_from_a_capture_at_recorded_timing_with_a_mapping_file() {
    use mocap_core::vmc::Message;
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let dir = std::env::temp_dir().join(format!("mocopi-vmc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let map = dir.join("map.json");
    std::fs::write(
        &map,
        r#"{"Hips": "root", "Spine": "torso_4", "LeftUpperArm": 12, "LeftLowerArm": "l_low_arm"}"#,
    )
    .unwrap();
    let cap = format!("{CAPTURES}/wave-60hz.pcapng");
    let started = Instant::now();
    // 1 skeleton + 60 frames = one second of capture.
    let run = offline(
        &[
            "-r",
            &cap,
            "-q",
            "--format",
            "json",
            "-n",
            "61",
            "--vmc",
            &to,
            "--mapping",
            map.to_str().unwrap(),
            "--no-root-motion",
        ],
        None,
    );
    let took = started.elapsed();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Paced, not dumped at once: 60 frames span 59/60 s of capture time.
    assert!(took >= Duration::from_millis(900), "{took:?}");
    let (_, messages) = receive_vmc(&rx);
    let frames = vmc_frames(&messages);
    assert_eq!(frames.len(), 60);
    let mut hips_positions = std::collections::BTreeSet::new();
    for (i, f) in frames.iter().enumerate() {
        let bones: Vec<(&str, [f32; 3], [f32; 4])> = f
            .iter()
            .filter_map(|m| match m {
                Message::BonePos { name, pos, rot } => Some((name.as_str(), *pos, *rot)),
                _ => None,
            })
            .collect();
        let names: Vec<&str> = bones.iter().map(|b| b.0).collect();
        assert_eq!(names, ["Hips", "Spine", "LeftUpperArm", "LeftLowerArm"]);
        hips_positions.insert(bones[0].1.map(f32::to_bits));
        // The capture waves l_low_arm about mocopi's +Z by 30° + 25°·sin(2πt);
        // in Unity's mirrored frame that is the same angle about −Z.
        let t = i as f32 / 60.0;
        let deg = 30.0 + 25.0 * (t * std::f32::consts::TAU).sin();
        let (s, c) = (deg.to_radians() / 2.0).sin_cos();
        let q = bones[3].2;
        let dot = q[2] * -s + q[3] * c;
        assert!((dot.abs() - 1.0).abs() < 1e-5, "frame {i}: {q:?} vs {deg}°");
        // T is capture time since the first frame.
        let Some(Message::Time(at)) = f.last() else {
            panic!("{:?}", f.last())
        };
        assert!((at - t).abs() < 1e-4, "frame {i}: T {at} vs {t}");
    }
    // --no-root-motion: the capture's root moves, Hips do not.
    assert_eq!(hips_positions.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vmc_usage_errors() {
    let run = offline(&["--mapping", "sony"], None);
    assert_eq!(run.code, Some(2), "--mapping without --vmc");
    let run = offline(
        &["--vmc", "127.0.0.1:39539", "--mapping", "/no/such.json"],
        None,
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("/no/such.json"), "{}", run.stderr);
    let run = offline(&["--vmc", "nowhere"], None);
    assert_eq!(run.code, Some(2));
}

#[test]
fn completions_man_page_and_version() {
    mocap_testutil::check_generate(BIN, "mocopi-dump", "--bones");
}

#[test]
#[ignore = "needs bash + man-db: scripts/test-all.sh"]
fn completions_parse_in_bash_and_the_man_page_renders() {
    mocap_testutil::check_generate_with_shell_and_man(BIN, "mocopi-dump", "--bones");
}

/// The golden files are snapshots of our own output; this pins each capture
/// behind them to values read another way: the frames and skeletons the
/// capture was built from (`captures/README.md`), read straight from their
/// bytes at fixed offsets (no SMF decoder), and record counts as tcpdump and
/// the generator wrote them.
#[test]
fn golden_captures_carry_their_source_datagrams() {
    const NEUTRAL: &str =
        include_str!("../../../captures/mocopi/animu-sphere/neutral-standing-60hz.mocopipackets");
    const LOSS: &str =
        include_str!("../../../captures/mocopi/animu-sphere/frame-loss-60hz.mocopipackets");
    let text = |t: &str| -> Vec<Vec<u8>> {
        mocap_core::textcap::decode_all(t)
            .into_iter()
            .map(|r| r.unwrap().payload)
            .collect()
    };
    let mut sizes = vec![SKDF.to_vec(), SEED.to_vec(), FRAM.to_vec()];
    sizes.extend(text(NEUTRAL).into_iter().filter(|d| d.len() == 1605));
    let loss = text(LOSS);
    // (capture, source datagrams, pcap records)
    let cases = [
        ("mocopi-sizes.pcapng", &sizes, 8),
        // Our writer at a 1500-byte MTU: two fragments per datagram.
        ("mocopi-sizes-fragmented.pcapng", &sizes, 16),
        ("tcpdump-lo-ethernet.pcap", &sizes, 8),
        ("tcpdump-any-sll2.pcap", &sizes, 8),
        // tcpdump wrote 16 packets for the 8 datagrams.
        ("tcpdump-lo-mtu1500-fragmented.pcap", &sizes, 16),
        ("mocopi-frame-loss.pcapng", &loss, 8),
        ("recorded-by-mocopi-dump.pcapng", &loss, 8),
    ];
    let f32_at = |d: &[u8], at: usize| f32::from_le_bytes(d[at..at + 4].try_into().unwrap());
    let u16_at = |d: &[u8], at: usize| u16::from_le_bytes(d[at..at + 2].try_into().unwrap());
    let wire = |v: &Value| v.as_f64().unwrap() as f32;
    for (name, source, records) in cases {
        let run = offline(
            &["-r", &format!("{CAPTURES}/{name}"), "--format", "json"],
            None,
        );
        assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
        let recs = run.json();
        let sum = recs.last().unwrap();
        assert_eq!(sum["capture"]["records"], records, "{name}");
        assert_eq!(sum["capture"]["datagrams"], source.len(), "{name}");
        let decoded: Vec<&Value> = recs
            .iter()
            .filter(|r| r["type"] == "mocopi.frame" || r["type"] == "mocopi.skeleton")
            .collect();
        assert_eq!(decoded.len(), source.len(), "{name}");
        for (k, (rec, d)) in decoded.iter().zip(source.iter()).enumerate() {
            let skeleton = rec["type"] == "mocopi.skeleton";
            // Bone records close the datagram: 54 bytes each in a frame
            // (btrs, bnid, tran), 64 in a skeleton (bndt, bnid, pbid, tran).
            let size = if skeleton { 64 } else { 54 };
            let bones = rec["bones"].as_array().unwrap();
            assert_eq!(bones.len(), 27, "{name} #{k}");
            let start = d.len() - 27 * size;
            for (i, b) in bones.iter().enumerate() {
                let at = start + i * size;
                assert_eq!(b["id"], u16_at(d, at + 16), "{name} #{k} bone {i}");
                let tran = if skeleton {
                    assert_eq!(
                        b["parent"].as_i64(),
                        Some(i64::from(u16_at(d, at + 26) as i16)),
                        "{name} #{k} bone {i}"
                    );
                    at + 36
                } else {
                    at + 26
                };
                let rot: Vec<f32> = (0..4).map(|j| f32_at(d, tran + 4 * j)).collect();
                let pos: Vec<f32> = (4..7).map(|j| f32_at(d, tran + 4 * j)).collect();
                let got_rot: Vec<f32> = b["rot"].as_array().unwrap().iter().map(wire).collect();
                let got_pos: Vec<f32> = b["pos"].as_array().unwrap().iter().map(wire).collect();
                assert_eq!(got_rot, rot, "{name} #{k} bone {i}");
                assert_eq!(got_pos, pos, "{name} #{k} bone {i}");
            }
            if !skeleton {
                // `fnum`: the 4 bytes after its tag.
                let at = d.windows(4).position(|w| w == b"fnum").unwrap() + 4;
                let fnum = u32::from_le_bytes(d[at..at + 4].try_into().unwrap());
                assert_eq!(rec["fnum"], fnum, "{name} #{k}");
            }
        }
    }
    // The malformed-packets capture: the 13 datagrams captures/README.md
    // lists, each answered by exactly one record.
    let run = offline(
        &[
            "-r",
            &format!("{CAPTURES}/animu-sphere/malformed-packets.mocopipackets"),
            "--format",
            "json",
        ],
        None,
    );
    let recs = run.json();
    assert_eq!(recs.last().unwrap()["packets"], 13);
    assert_eq!(recs.len(), 13 + 1);
}

/// Bridge mode (`--vmc` without `--format`): nothing per frame on stdout,
/// a status line per --stats-interval on stderr, every frame still sent at
/// the capture's pace.
#[test]
fn vmc_bridge_mode_keeps_stdout_empty_and_reports_status() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let cap = format!("{CAPTURES}/wave-60hz.pcapng");
    let started = Instant::now();
    // 1 skeleton + 90 frames: 1.5 s of capture.
    let tool = Proc::spawn(
        BIN,
        &[
            "-r",
            &cap,
            "--vmc",
            &to,
            "-n",
            "91",
            "--stats-interval",
            "500ms",
        ],
        None,
    );
    // Read while it sends: 270 datagrams would overflow a socket buffer.
    let (_, messages) = receive_vmc(&rx);
    let run = tool.finish();
    let took = started.elapsed();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{:?}", run.stdout);
    assert!(took >= Duration::from_millis(1300), "{took:?}");
    let status = run
        .stderr
        .lines()
        .filter(|l| l.contains(": stats: "))
        .count();
    assert!(status >= 2, "{}", run.stderr);
    assert!(run.stderr.contains("vmc: 90 frames"), "{}", run.stderr);
    assert_eq!(vmc_frames(&messages).len(), 90);
}

/// `--smooth` on the bridge: the same frames in the same shape, the waving
/// forearm smoothed but never more than two frames behind the capture's own
/// angle (157°/s at the fastest, so 5.3° is two frames); without --vmc it is
/// a usage error.
#[test]
fn vmc_smooth_keeps_up_with_the_wave() {
    use mocap_core::vmc::Message;
    let cap = format!("{CAPTURES}/wave-60hz.pcapng");
    let run_with = |extra: &[&str]| {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = rx.local_addr().unwrap().to_string();
        let mut args = vec!["-r", cap.as_str(), "--vmc", to.as_str(), "-n", "121", "-q"];
        args.extend_from_slice(extra);
        let tool = Proc::spawn(BIN, &args, None);
        let (_, messages) = receive_vmc(&rx);
        assert_eq!(tool.finish().code, Some(0));
        messages
    };
    let plain = run_with(&[]);
    let smooth = run_with(&["--smooth"]);
    let (fp, fs) = (vmc_frames(&plain), vmc_frames(&smooth));
    assert_eq!(fp.len(), 120);
    assert_eq!(fs.len(), 120);
    let forearm = |f: &[Message]| -> f32 {
        f.iter()
            .find_map(|m| match m {
                Message::BonePos { name, rot, .. } if name == "LeftLowerArm" => {
                    Some(2.0 * (-rot[2]).atan2(rot[3]).to_degrees())
                }
                _ => None,
            })
            .unwrap()
    };
    let mut differs = 0;
    for (i, (p, s)) in fp.iter().zip(&fs).enumerate() {
        assert_eq!(p.len(), s.len(), "frame {i}");
        assert_eq!(p.last(), s.last(), "frame {i}: T as sent");
        let (a, b) = (forearm(p), forearm(s));
        assert!((a - b).abs() <= 5.3, "frame {i}: {b} smoothed vs {a}");
        if (a - b).abs() > 0.05 {
            differs += 1;
        }
    }
    assert!(differs > 60, "only {differs} frames smoothed");
    let usage = offline(&["--smooth"], None);
    assert_eq!(usage.code, Some(2), "{}", usage.stderr);
}

/// A stranger's skeleton packet with no frame after it takes neither the
/// plain `--bvh` name nor a slot: the performer (skeleton, then frames) is
/// written to `take.bvh` and no other file is made. The stranger used to
/// take `take.bvh` (empty) and the performer went to `take-IP-PORT.bvh`.
#[test]
fn a_strangers_skeleton_takes_no_bvh_name() {
    use mocap_core::{bvh, smf};
    let dir = std::env::temp_dir().join(format!("mocopi-bvh-stranger-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let payloads = mocap_testutil::capture_payloads("mocopi/wave-60hz.pcapng");
    let skeleton = payloads
        .iter()
        .find(|p| matches!(smf::parse(p).map(|p| p.body), Ok(smf::Body::Skeleton(_))))
        .unwrap();
    let cap = dir.join("stranger-first.pcapng");
    let file = std::fs::File::create(&cap).unwrap();
    let mut w = mocap_core::pcap::PcapNgWriter::new(file).unwrap();
    let dst: SocketAddr = "192.168.1.9:12351".parse().unwrap();
    let stranger: SocketAddr = "192.168.1.66:40000".parse().unwrap();
    let performer: SocketAddr = "192.168.1.5:50000".parse().unwrap();
    w.write(Duration::from_secs(1), stranger, dst, skeleton)
        .unwrap();
    for (i, p) in payloads.iter().enumerate() {
        let at = Duration::from_secs(2) + Duration::from_millis(16 * i as u64);
        w.write(at, performer, dst, p).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let path = dir.join("take.bvh");
    let run = offline(
        &[
            "-r",
            cap.to_str().unwrap(),
            "--bvh",
            path.to_str().unwrap(),
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let take = bvh::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // A rest-pose frame, then the 240 frames.
    assert_eq!((take.frames_declared, take.frames.len()), (241, 241));
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bvh"))
        .collect();
    assert_eq!(files, ["take.bvh"], "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--bvh`: the wave capture as a take in the app's layout, checked against
/// the capture generator's formula (the forearm waves about +Z by
/// 30° + 25°·sin 2πt, so its Zrotation is that angle and X, Y stay 0), the
/// skeleton's offsets in centimetres and a patched frame count; lost frames
/// are held and duplicates skipped; an existing file is kept unless --force.
#[test]
fn bvh_take_of_a_capture() {
    use mocap_core::bvh;
    let dir = std::env::temp_dir().join(format!("mocopi-bvh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wave.bvh");
    let out = path.to_str().unwrap();
    let run = offline(
        &[
            "-r",
            &format!("{CAPTURES}/wave-60hz.pcapng"),
            "--bvh",
            out,
            "-q",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let take = bvh::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // A rest-pose frame, then the 240 frames.
    assert_eq!(take.frames_declared, 241);
    assert_eq!(take.frames.len(), 241);
    assert!(
        (take.frame_time - 1.0 / 60.0).abs() < 1e-6,
        "{}",
        take.frame_time
    );
    // The app's joints, names and order (SMF ids 0..=26), each with the
    // app's six channels.
    let names: Vec<&str> = take.joints.iter().map(|j| j.name.as_str()).collect();
    let app = "root torso_1 torso_2 torso_3 torso_4 torso_5 torso_6 torso_7 neck_1 neck_2 head \
               l_shoulder l_up_arm l_low_arm l_hand r_shoulder r_up_arm r_low_arm r_hand \
               l_up_leg l_low_leg l_foot l_toes r_up_leg r_low_leg r_foot r_toes";
    assert_eq!(names, app.split_whitespace().collect::<Vec<_>>());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches("CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n")
            .count(),
        27
    );
    assert!(text.starts_with("HIERARCHY\nROOT root\n{\n"));
    // Offsets: the t-34400 skeleton's rest translations (read from its bytes) × 100.
    for (i, j) in take.joints.iter().enumerate() {
        let at = SKDF.len() - 27 * 64 + i * 64 + 36 + 16;
        let f = |k: usize| {
            f64::from(f32::from_le_bytes(
                SKDF[at + 4 * k..at + 4 * k + 4].try_into().unwrap(),
            ))
        };
        for k in 0..3 {
            assert!(
                (j.offset[k] - f(k) * 100.0).abs() < 1e-5,
                "{} offset",
                j.name
            );
        }
    }
    assert!(
        take.frames[0].chunks(6).all(|c| c[3..] == [0.0, 0.0, 0.0]),
        "rest pose first"
    );
    for (k, line) in take.frames[1..].iter().enumerate() {
        let t = k as f64 / 60.0;
        let want = 30.0 + 25.0 * (t * std::f64::consts::TAU).sin();
        let arm = &line[13 * 6..13 * 6 + 6];
        assert!(
            (arm[3] - want).abs() < 1e-3,
            "frame {k}: Z {} vs {want}",
            arm[3]
        );
        assert!(
            arm[4].abs() < 1e-3 && arm[5].abs() < 1e-3,
            "frame {k}: {arm:?}"
        );
    }
    // Loss and duplicates: 3000..3002, (3003, 3004 lost), 3005, 3006, 3006 again, restart at 1.
    let loss = dir.join("loss.bvh");
    let run = offline(
        &[
            "-r",
            &format!("{CAPTURES}/mocopi-frame-loss.pcapng"),
            "--bvh",
            loss.to_str().unwrap(),
            "-q",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("2 lost frames held"), "{}", run.stderr);
    let take = bvh::parse(&std::fs::read_to_string(&loss).unwrap()).unwrap();
    assert_eq!(take.frames.len(), 1 + 3 + 2 + 2 + 1);
    assert_eq!(
        take.frames[4], take.frames[3],
        "a lost frame holds the last pose"
    );
    // An existing file is kept, unless --force.
    let again = offline(
        &["-r", &format!("{CAPTURES}/wave-60hz.pcapng"), "--bvh", out],
        None,
    );
    assert_eq!(again.code, Some(2), "{}", again.stderr);
    let forced = offline(
        &[
            "-r",
            &format!("{CAPTURES}/wave-60hz.pcapng"),
            "--bvh",
            out,
            "--force",
            "-n",
            "11",
            "-q",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(forced.code, Some(0), "{}", forced.stderr);
    let take = bvh::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        (take.frames_declared, take.frames.len()),
        (11, 11),
        "-n 11: skeleton + 10 frames + rest"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The wave take and, from the same capture's JSON records (the skeleton's
/// parents, each frame's local poses), every joint's world position at
/// three frames by forward kinematics in the test, in centimetres: take
/// frame `j` is capture frame `j - 1` (the rest pose comes first).
fn wave_take_and_world(
    dir: &std::path::Path,
) -> (std::path::PathBuf, Vec<mocap_testutil::humanoid::Expected>) {
    use mocap_testutil::humanoid::forward;
    let path = dir.join("wave.bvh");
    let wave = format!("{CAPTURES}/wave-60hz.pcapng");
    let run = offline(
        &[
            "-r",
            &wave,
            "--bvh",
            path.to_str().unwrap(),
            "-q",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    let skeleton = recs
        .iter()
        .find(|r| r["type"] == "mocopi.skeleton")
        .unwrap();
    let ids: Vec<i64> = skeleton["bones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_i64().unwrap())
        .collect();
    let parents: Vec<Option<usize>> = skeleton["bones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| ids.iter().position(|&i| i == b["parent"].as_i64().unwrap()))
        .collect();
    let frames: Vec<&Value> = recs
        .iter()
        .filter(|r| r["type"] == "mocopi.frame")
        .collect();
    let v = |x: &Value| {
        x.as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_f64().unwrap())
            .collect::<Vec<f64>>()
    };
    let expected = [1usize, 100, 240]
        .into_iter()
        .map(|j| {
            let bones = frames[j - 1]["bones"].as_array().unwrap();
            let local: Vec<([f64; 3], [f64; 4])> = bones
                .iter()
                .map(|b| {
                    let (p, q) = (v(&b["pos"]), v(&b["rot"]));
                    ([p[0], p[1], p[2]], [q[0], q[1], q[2], q[3]])
                })
                .collect();
            let world = forward(&parents, &local);
            let joints = bones
                .iter()
                .zip(world)
                .map(|(b, p)| (b["name"].as_str().unwrap().to_owned(), p.map(|c| c * 100.0)))
                .collect();
            (j, joints)
        })
        .collect();
    (path, expected)
}

/// An independent reader (PyPI `bvhio`) loads the take: 241 frames at
/// 1/60 s, the 27 joints, and every joint's world position by bvhio's own
/// forward kinematics within 0.1 mm of the capture's (SMF skeleton + frame).
#[test]
#[ignore = "needs python3 + bvhio: scripts/test-all.sh"]
fn bvh_take_reads_in_bvhio() {
    use mocap_testutil::humanoid::{Reader, read_with};
    let dir = std::env::temp_dir().join(format!("mocopi-bvhio-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (take, expected) = wave_take_and_world(&dir);
    let r = read_with(Reader::Bvhio, &take, &expected);
    assert_eq!(r["frames"], 241, "{r}");
    assert!(
        (r["frame_time"].as_f64().unwrap() - 1.0 / 60.0).abs() < 1e-6,
        "{r}"
    );
    assert_eq!(r["joints"], 27, "{r}");
    assert!(r["max_error"].as_f64().unwrap() < 0.01, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Blender's own BVH importer (headless) opens the take: 27 bones, 241
/// frames at 60 fps, every bone's head where the capture puts its joint.
#[test]
#[ignore = "needs blender: scripts/test-all.sh"]
fn bvh_take_imports_in_blender() {
    use mocap_testutil::humanoid::{Reader, read_with};
    let dir = std::env::temp_dir().join(format!("mocopi-blender-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (take, expected) = wave_take_and_world(&dir);
    let r = read_with(Reader::Blender, &take, &expected);
    assert_eq!(r["bones"], 27, "{r}");
    assert_eq!(r["frames"], 241, "{r}");
    assert!((r["fps"].as_f64().unwrap() - 60.0).abs() < 0.01, "{r}");
    assert!(r["max_error"].as_f64().unwrap() < 0.01, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hex file as Windows editors save it (a UTF-8 byte-order mark, CRLF line
/// ends) reads exactly as the plain one, from a file and from stdin.
#[test]
fn hex_text_with_a_byte_order_mark_and_crlf_reads_as_plain_text() {
    let plain = format!("{}\n{}\n", hex::encode(SKDF), hex::encode(SEED));
    let windows = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
    let dir = std::env::temp_dir().join(format!("mocopi-dump-bom-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("plain.txt"), dir.join("windows.txt"));
    std::fs::write(&a, &plain).unwrap();
    std::fs::write(&b, &windows).unwrap();
    let want = offline(&["-r", a.to_str().unwrap(), "--format", "json"], None);
    let recs = normalise(&want.json(), false);
    assert_eq!(types(&recs), ["mocopi.skeleton", "mocopi.frame", "summary"]);
    assert_eq!(recs[2]["errors"], 0);
    let from_file = offline(&["-r", b.to_str().unwrap(), "--format", "json"], None);
    assert_eq!(normalise(&from_file.json(), false), recs);
    let from_stdin = offline(&["-r", "-", "--format", "json"], Some(windows.as_bytes()));
    assert_eq!(normalise(&from_stdin.json(), false), recs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--allow`: a stranger's datagrams are refused before anything sees them
/// (not decoded, not recorded), counted per sender, and logged once.
#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn allow_refuses_other_senders_before_decoding_and_recording() {
    let dir = std::env::temp_dir().join(format!("mocopi-dump-allow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("rec.pcapng");
    let (mut tool, addr) = live(&[
        "--allow",
        "127.0.0.1/32",
        "--format",
        "json",
        "-w",
        rec.to_str().unwrap(),
    ]);
    let friend = UdpSocket::bind("127.0.0.1:0").unwrap();
    let stranger = UdpSocket::bind("127.0.0.2:0").unwrap();
    for _ in 0..3 {
        stranger.send_to(SEED, addr).unwrap();
    }
    friend.send_to(SKDF, addr).unwrap();
    friend.send_to(SEED, addr).unwrap();
    tool.stdout_line("mocopi.frame");
    tool.log_line(&format!(
        "refused datagrams from {}",
        stranger.local_addr().unwrap()
    ));
    tool.interrupt();
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(types(&recs), ["mocopi.skeleton", "mocopi.frame", "summary"]);
    let sum = &recs[2];
    assert_eq!(sum["packets"], 2);
    assert_eq!(sum["refused"], 3);
    assert_eq!(
        sum["refused_senders"][0]["src"],
        stranger.local_addr().unwrap().to_string()
    );
    assert_eq!(sum["refused_senders"][0]["datagrams"], 3);
    assert_eq!(
        run.stderr.matches("refused datagrams from").count(),
        1,
        "{}",
        run.stderr
    );
    // The recording holds the friend's two datagrams only.
    let back = offline(&["-r", rec.to_str().unwrap(), "--format", "json"], None).json();
    assert_eq!(types(&back), ["mocopi.skeleton", "mocopi.frame", "summary"]);
    assert!(
        back.iter()
            .take(2)
            .all(|r| r["src"] == friend.local_addr().unwrap().to_string())
    );
    // --record-refused: the stranger's datagrams are in the recording, still
    // refused (not decoded) when it is read back with the same --allow.
    let rec2 = dir.join("all.pcapng");
    let (mut tool, addr) = live(&[
        "--allow",
        "127.0.0.1",
        "--record-refused",
        "--format",
        "json",
        "-w",
        rec2.to_str().unwrap(),
    ]);
    stranger.send_to(SEED, addr).unwrap();
    friend.send_to(SKDF, addr).unwrap();
    tool.stdout_line("mocopi.skeleton");
    tool.interrupt();
    assert_eq!(tool.finish().json().pop().unwrap()["refused"], 1);
    let all = offline(&["-r", rec2.to_str().unwrap(), "--format", "json"], None).json();
    assert_eq!(types(&all), ["mocopi.frame", "mocopi.skeleton", "summary"]);
    let path = rec2.to_str().unwrap();
    let again = offline(
        &["-r", path, "--allow", "127.0.0.1", "--format", "json"],
        None,
    )
    .json();
    assert_eq!(types(&again), ["mocopi.skeleton", "summary"]);
    assert_eq!(again[1]["refused"], 1);
    // Without --allow nothing is refused, and the summary says nothing of it.
    let (tool, addr) = live(&["--format", "json", "-n", "1"]);
    stranger.send_to(SEED, addr).unwrap();
    let sum = tool.finish().json().pop().unwrap();
    assert_eq!(sum["packets"], 1);
    assert!(sum.get("refused").is_none(), "{sum}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Forward kinematics written here, apart from the solver: world poses of
/// the named bones of one VMC frame, from Root/Pos down the parents given.
fn world_of(frame: &[mocap_core::vmc::Message], chain: &[(&str, &str)]) -> Vec<(String, [f64; 3])> {
    use mocap_core::vmc::Message;
    fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    }
    let turn = |q: [f64; 4], v: [f64; 3]| {
        let p = mul(mul(q, [v[0], v[1], v[2], 0.0]), [-q[0], -q[1], -q[2], q[3]]);
        [p[0], p[1], p[2]]
    };
    let wide = |v: &[f32]| v.iter().map(|x| f64::from(*x)).collect::<Vec<_>>();
    let mut world: Vec<(String, [f64; 3], [f64; 4])> = Vec::new();
    for m in frame {
        if let Message::RootPos { pos, rot, .. } = m {
            let (p, r) = (wide(pos), wide(rot));
            world.push(("Root".into(), [p[0], p[1], p[2]], [r[0], r[1], r[2], r[3]]));
        }
    }
    for (bone, parent) in chain {
        let (pos, rot) = frame
            .iter()
            .find_map(|m| match m {
                Message::BonePos { name, pos, rot } if name == bone => Some((wide(pos), wide(rot))),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{bone} not in the frame"));
        let (_, pp, pr) = world.iter().find(|(n, _, _)| n == parent).unwrap().clone();
        let d = turn(pr, [pos[0], pos[1], pos[2]]);
        world.push((
            (*bone).into(),
            [pp[0] + d[0], pp[1] + d[1], pp[2] + d[2]],
            mul(pr, [rot[0], rot[1], rot[2], rot[3]]),
        ));
    }
    world.into_iter().map(|(n, p, _)| (n, p)).collect()
}

/// `--vrchat` next to `--vmc` on a capture: one tracker bundle per body frame,
/// each tracker where forward kinematics of the VMC frame sent alongside puts
/// its bone; `--trackers` picks the slots; the summary counts what was sent.
#[test]
fn vrchat_trackers_from_a_capture_follow_the_body() {
    use mocap_core::osc;
    let (vmc_rx, trk_rx) = (
        UdpSocket::bind("127.0.0.1:0").unwrap(),
        UdpSocket::bind("127.0.0.1:0").unwrap(),
    );
    let (vmc_to, trk_to) = (
        vmc_rx.local_addr().unwrap().to_string(),
        trk_rx.local_addr().unwrap().to_string(),
    );
    let vmc_thread = thread::spawn(move || receive_vmc(&vmc_rx).1);
    let trk_thread = thread::spawn(move || {
        trk_rx
            .set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut buf = vec![0u8; 65_536];
        let mut got = Vec::new();
        while let Ok(n) = trk_rx.recv(&mut buf) {
            let packet = osc::decode(&buf[..n]).unwrap();
            got.push(
                packet
                    .messages()
                    .into_iter()
                    .cloned()
                    .collect::<Vec<osc::Message>>(),
            );
        }
        got
    });
    let cap = format!("{CAPTURES}/wave-60hz.pcapng");
    let run = offline(
        &[
            "-r",
            &cap,
            "--format",
            "json",
            "-q",
            "--vmc",
            &vmc_to,
            "--vrchat",
            &trk_to,
            "--trackers",
            "hips,feet,knees,elbows",
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let messages = vmc_thread.join().unwrap();
    let bundles = trk_thread.join().unwrap();
    let frames = vmc_frames(&messages);
    assert_eq!(frames.len(), 240);
    assert_eq!(bundles.len(), 240, "one tracker bundle per body frame");
    let chain = [
        ("Hips", "Root"),
        ("Spine", "Hips"),
        ("Chest", "Spine"),
        ("UpperChest", "Chest"),
        ("LeftShoulder", "UpperChest"),
        ("LeftUpperArm", "LeftShoulder"),
        ("LeftLowerArm", "LeftUpperArm"),
        ("RightShoulder", "UpperChest"),
        ("RightUpperArm", "RightShoulder"),
        ("RightLowerArm", "RightUpperArm"),
        ("LeftUpperLeg", "Hips"),
        ("LeftLowerLeg", "LeftUpperLeg"),
        ("LeftFoot", "LeftLowerLeg"),
        ("RightUpperLeg", "Hips"),
        ("RightLowerLeg", "RightUpperLeg"),
        ("RightFoot", "RightLowerLeg"),
    ];
    let slots = [
        (1, "Hips"),
        (2, "LeftFoot"),
        (3, "RightFoot"),
        (4, "LeftLowerLeg"),
        (5, "RightLowerLeg"),
        (7, "LeftLowerArm"),
        (8, "RightLowerArm"),
    ];
    let mut elbow_z = Vec::new();
    for (k, (frame, bundle)) in frames.iter().zip(&bundles).enumerate() {
        let world = world_of(frame, &chain);
        let addresses: Vec<&str> = bundle.iter().map(|m| m.address.as_str()).collect();
        assert_eq!(
            addresses.len(),
            2 * slots.len(),
            "frame {k}: no chest (not asked)"
        );
        for (n, bone) in slots {
            let pos = bundle
                .iter()
                .find(|m| m.address == format!("/tracking/trackers/{n}/position"))
                .unwrap();
            let got: Vec<f64> = pos
                .args
                .iter()
                .map(|a| match a {
                    osc::Arg::Float(f) => f64::from(*f),
                    other => panic!("{other:?}"),
                })
                .collect();
            let want = world.iter().find(|(b, _)| b == bone).unwrap().1;
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (g - w).abs() < 1e-4,
                    "frame {k} tracker {n} ({bone}): {got:?} vs {want:?}"
                );
            }
            if n == 7 {
                elbow_z.push(got[2]);
            }
        }
    }
    // The performer steps forward at 0.1 m/s: the left elbow goes with them.
    let moved = elbow_z.last().unwrap() - elbow_z.first().unwrap();
    assert!(
        (moved.abs() - 0.1 * 239.0 / 60.0).abs() < 0.05,
        "elbow moved {moved} m"
    );
    let sum = run.json().pop().unwrap();
    let t = &sum["vmc"]["trackers"][0];
    assert_eq!(
        (
            t["as"].as_str(),
            t["sent"].as_u64(),
            t["datagrams"].as_u64()
        ),
        (Some("vrchat"), Some(240), Some(240))
    );
    // Tracker flags without a tracker output are a usage error.
    assert_eq!(
        offline(&["--height", "1.7", "--vmc", "127.0.0.1:9"], None).code,
        Some(2)
    );
    assert_eq!(
        offline(&["--vmt-base", "51", "--vmt", "127.0.0.1:9"], None).code,
        Some(2)
    );
}

/// A full disk names the output that filled it: "No space left on device"
/// alone does not say whether the BVH take or stdout failed. `/dev/full`
/// fails every write with ENOSPC.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_names_the_file_that_filled() {
    let capture = format!("{CAPTURES}/wave-60hz.pcapng");
    let run = std::process::Command::new(BIN)
        .args(["-r", &capture, "--bvh", "/dev/full", "--force", "-q"])
        .stdout(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("writing /dev/full: "), "{stderr}");

    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let run = std::process::Command::new(BIN)
        .args(["-r", &capture, "--format", "json"])
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("writing standard output: "), "{stderr}");
}

/// A receiver on IPv6 loopback; a host without it fails the test rather
/// than skip it.
fn ipv6_receiver() -> UdpSocket {
    UdpSocket::bind("[::1]:0")
        .expect("IPv6 loopback (::1) is needed by this test and is unavailable here")
}

/// How many datagrams `rx` got until it was quiet for 500 ms.
fn count_datagrams(rx: &UdpSocket) -> u64 {
    rx.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut buf = vec![0u8; 65_536];
    let mut n = 0;
    while rx.recv(&mut buf).is_ok() {
        n += 1;
    }
    n
}

/// `--vmc`, `--vrchat` and `--vmt` to IPv6 loopback: each receiver gets
/// every datagram the summary says was sent to it, none failed.
#[test]
fn vmc_and_trackers_reach_ipv6_receivers() {
    let rxs = [ipv6_receiver(), ipv6_receiver(), ipv6_receiver()];
    let to: Vec<String> = rxs
        .iter()
        .map(|r| r.local_addr().unwrap().to_string())
        .collect();
    let counters: Vec<_> = rxs
        .into_iter()
        .map(|rx| thread::spawn(move || count_datagrams(&rx)))
        .collect();
    let cap = format!("{CAPTURES}/wave-60hz.pcapng");
    // 1 skeleton + 60 frames: one second at recorded timing.
    let run = offline(
        &[
            "-r", &cap, "--format", "json", "-n", "61", "--vmc", &to[0], "--vrchat", &to[1],
            "--vmt", &to[2],
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let got: Vec<u64> = counters.into_iter().map(|c| c.join().unwrap()).collect();
    // One tracker bundle per body frame, and VMC bundles for every frame.
    assert_eq!(&got[1..], [60, 60], "{got:?}");
    assert!(got[0] >= 60, "{got:?}");
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["vmc"]["frames"], 60, "{sum}");
    let sends = sum["sends"].as_array().unwrap();
    assert_eq!(sends.len(), 3, "{sum}");
    for ((s, to), got) in sends.iter().zip(&to).zip(&got) {
        assert_eq!(s["to"].as_str(), Some(to.as_str()), "{sum}");
        assert_eq!(s["sent"].as_u64(), Some(*got), "{to}: {s}");
        assert_eq!(
            (s["failed"].as_u64(), s["unreachable"].as_u64()),
            (Some(0), Some(0)),
            "{s}"
        );
    }
    assert_eq!(sum["vmc"]["datagrams"].as_u64(), Some(got[0]));
    // The human summary shows the same counts per destination.
    let rx = ipv6_receiver();
    let to = [rx.local_addr().unwrap().to_string()];
    let run = offline(
        &["-r", &cap, "-n", "3", "--topspeed", "--vmc", &to[0]],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("sent to {}: ", to[0])) && run.stderr.contains(", 0 failed"),
        "{}",
        run.stderr
    );
}

/// `--vmc` to a loopback port where nothing listens: said once in words,
/// counted in the summary, and the run still ends well.
#[test]
fn vmc_to_a_closed_port_is_reported() {
    let closed = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let cap = format!("{CAPTURES}/wave-60hz.pcapng");
    let run = offline(
        &[
            "-r",
            &cap,
            "--format",
            "json",
            "-n",
            "31",
            "--vmc",
            &closed.to_string(),
        ],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let said = format!("nothing is listening at {closed} (is VSeeFace's receiver on?)");
    assert_eq!(run.stderr.matches(&said).count(), 1, "{}", run.stderr);
    let sum = run.json().pop().unwrap();
    let s = &sum["sends"][0];
    assert_eq!(s["to"].as_str(), Some(closed.to_string().as_str()), "{sum}");
    let (sent, failed, unreachable) = (
        s["sent"].as_u64().unwrap(),
        s["failed"].as_u64().unwrap(),
        s["unreachable"].as_u64().unwrap(),
    );
    assert!(unreachable > 0, "{s}");
    assert_eq!(failed, unreachable, "{s}");
    // Every datagram is accounted for: as many as a listening receiver gets.
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let ok = offline(
        &["-r", &cap, "-q", "-n", "31", "--topspeed", "--vmc", &to],
        None,
    );
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    assert_eq!(sent + failed, count_datagrams(&rx), "{s}");
    // Human: the detail line says it too.
    let run = offline(
        &["-r", &cap, "-n", "31", "--vmc", &closed.to_string()],
        None,
    );
    assert!(
        run.stderr.contains("times nothing was listening)"),
        "{}",
        run.stderr
    );
}

/// Issue 35: past 256 senders a new one was folded into one shared entry
/// with the strangers before it, so its health was theirs. After 300
/// one-shot strangers, a new sender's packets are counted on their own.
#[test]
fn a_new_sender_after_300_one_shot_strangers_has_its_own_health() {
    let strangers = 300;
    let mine = 5;
    let n = (strangers + mine).to_string();
    let (tool, at) = live(&["--format", "json", "-n", &n]);
    // Kept open, so no two strangers share a port.
    let mut held = Vec::new();
    for k in 0..strangers {
        let s = sender();
        s.send_to(SEED, at).unwrap();
        held.push(s);
        // Paced a little, so the kernel's receive buffer never overflows.
        if k % 32 == 31 {
            thread::sleep(Duration::from_millis(5));
        }
    }
    let me = sender();
    for _ in 0..mine {
        me.send_to(FRAM, at).unwrap();
        thread::sleep(Duration::from_millis(2));
    }
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["type"], "summary");
    let src = me.local_addr().unwrap().to_string();
    let senders = sum["senders"].as_array().unwrap();
    assert_eq!(senders.len(), mocap_cli::senders::MAX_SENDERS);
    let own = senders
        .iter()
        .find(|s| s["src"] == src.as_str())
        .unwrap_or_else(|| panic!("no entry of its own"));
    assert_eq!(own["packets"], mine, "{own}");
    assert!(senders.iter().all(|s| !s["src"].is_null()));
    // The evicted strangers stay in the totals.
    assert_eq!(sum["packets"], strangers + mine);
    let evicted = &sum["evicted"];
    assert_eq!(
        evicted["senders"],
        strangers + 1 - mocap_cli::senders::MAX_SENDERS,
        "{evicted}"
    );
    assert_eq!(evicted["packets"], evicted["senders"], "{evicted}");
}

/// SIGTERM (a service stop) and SIGHUP (a closed terminal) end the tool as
/// Ctrl-C does: the summary is printed, the `-w` recording reads back whole
/// and the `--bvh` take's frame count matches its frame lines. They used to
/// kill it mid-write (a pcapng cut inside a record, `Frames: 120` over 138
/// lines).
#[cfg(unix)]
#[test]
fn sigterm_and_sighup_end_like_ctrl_c() {
    use mocap_core::{bvh, pcap::Datagrams};
    use mocap_testutil::Signal;
    let file = format!("{CAPTURES}/wave-60hz.pcapng");
    let mut wave = Vec::new();
    let mut capture = Datagrams::new(std::fs::File::open(&file).unwrap()).unwrap();
    while let Some(d) = capture.next_datagram() {
        wave.push(d.unwrap().payload.to_vec());
    }
    let dir = std::env::temp_dir().join(format!("mocopi-dump-sig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for sig in [Signal::SIGTERM, Signal::SIGHUP] {
        let rec = dir.join(format!("{sig}.pcapng"));
        let take = dir.join(format!("{sig}.bvh"));
        let (mut tool, addr) = live(&[
            "--format",
            "json",
            "-w",
            rec.to_str().unwrap(),
            "--bvh",
            take.to_str().unwrap(),
        ]);
        let tx = sender();
        for d in &wave {
            tx.send_to(d, addr).unwrap();
            thread::sleep(Duration::from_micros(300));
        }
        // Every datagram was handled (and so recorded) before the signal.
        for _ in &wave {
            tool.stdout_line("mocopi.");
        }
        tool.signal(sig);
        let run = tool.finish();
        assert_eq!(run.code, Some(0), "{sig}: {}", run.stderr);
        let recs = run.json();
        let sum = recs.last().unwrap();
        assert_eq!(sum["type"], "summary", "{sig}");
        assert_eq!(sum["stopped"], "interrupted", "{sig}");
        assert_eq!(sum["packets"], wave.len(), "{sig}");
        let mut back = Datagrams::new(std::fs::File::open(&rec).unwrap()).unwrap();
        let mut n = 0;
        while let Some(d) = back.next_datagram() {
            assert_eq!(d.unwrap().payload, wave[n].as_slice(), "{sig}");
            n += 1;
        }
        assert_eq!(n, wave.len(), "{sig}: the recording holds every datagram");
        let t = bvh::parse(&std::fs::read_to_string(&take).unwrap()).unwrap();
        assert!(t.frames.len() > 1, "{sig}");
        assert_eq!(t.frames_declared, t.frames.len() as u64, "{sig}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `-l` goes through the one address parser: a host name resolves, an
/// unbracketed IPv6 address is refused (exit 2) with its correct spelling,
/// and a bad address shows the forms. All three said `invalid socket
/// address syntax` with no example before.
#[test]
fn listen_addresses_take_names_and_explain_refusals() {
    let mut tool = Proc::spawn(BIN, &["-l", "localhost:0", "--duration", "200ms"], None);
    let (line, addr) = tool.log_line("listening on");
    assert!(addr.is_some_and(|a| a.ip().is_loopback()), "{line}");
    assert_eq!(tool.finish().code, Some(0));
    let run = offline(&["-l", "::1:12351"], None);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("[::1]:12351"), "{}", run.stderr);
    let run = offline(&["-l", "nowhere"], None);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("e.g. 12351"), "{}", run.stderr);
}

/// A file in no known format is refused (exit 1) with what was expected:
/// this README used to be read as one raw datagram (exit 0, chunk errors),
/// a gzip file too. Hex lines with one bad line still read, exit 0, the
/// error counted.
#[test]
fn a_file_that_is_no_capture_is_refused_with_what_was_expected() {
    let readme = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    let run = offline(&["-r", readme], None);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("no known format"), "{}", run.stderr);
    assert!(run.stderr.contains("expected a pcap"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{:?}", run.stdout);
    let dir = std::env::temp_dir().join(format!("mocopi-dump-gz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gz = dir.join("take.pcapng.gz");
    // What `gzip` writes for an empty file.
    std::fs::write(
        &gz,
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    )
    .unwrap();
    let run = offline(&["-r", gz.to_str().unwrap()], None);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("gzip-compressed: gunzip it first"),
        "{}",
        run.stderr
    );
    // The same from stdin.
    let run = offline(&["-r", "-"], Some(&std::fs::read(&gz).unwrap()));
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("gunzip"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(&dir);
    let hex = format!("{}\nnot hex at all\n", hex::encode(SEED));
    let run = offline(&["-r", "-", "--format", "json"], Some(hex.as_bytes()));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.json().last().unwrap()["errors"], 1);
}

/// Waiting on a FIFO with no writer, or on a stdin nothing is written to,
/// the first Ctrl-C ends the tool with its summary. Opening the FIFO (and
/// reading stdin's first bytes) blocked the main thread, so the first
/// Ctrl-C was only noted and a second one needed.
#[cfg(unix)]
#[test]
fn ctrl_c_while_a_fifo_has_no_writer() {
    let dir = std::env::temp_dir().join(format!("mocopi-dump-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("f");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let tool = Proc::spawn(
        BIN,
        &["-r", fifo.to_str().unwrap(), "--format", "json"],
        None,
    );
    let (quiet, stdin) = Proc::spawn_with_stdin(BIN, &["-r", "-", "--format", "json"]);
    // Long enough for both to be waiting in the open (or the first read).
    thread::sleep(Duration::from_millis(300));
    for t in [tool, quiet] {
        t.interrupt();
        let run = t.finish();
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let recs = run.json();
        assert_eq!(recs.last().unwrap()["stopped"], "interrupted");
        assert_eq!(recs.last().unwrap()["packets"], 0);
    }
    drop(stdin);
    let _ = std::fs::remove_dir_all(&dir);
}

/// VMC sent to mocopi-dump's port is named as VMC once per sender, with
/// the tool that reads it, and counted; it used to be only a chunk-length
/// error per datagram (`chunk length 1853186595 overruns its parent`).
#[test]
fn another_protocol_on_the_port_is_named_once_per_sender() {
    let (mut tool, addr) = live(&["--format", "json", "-n", "4"]);
    let vmc = mocap_core::osc::message(&mocap_core::osc::Message::new(
        "/VMC/Ext/OK",
        vec![mocap_core::osc::Arg::Int(1)],
    ))
    .unwrap();
    let (a, b) = (sender(), sender());
    for tx in [&a, &a, &a, &b] {
        tx.send_to(&vmc, addr).unwrap();
        thread::sleep(Duration::from_millis(5));
    }
    let (line, _) = tool.log_line("looks like VMC (OSC)");
    assert!(
        line.contains(&a.local_addr().unwrap().to_string()) && line.contains("vmc-relay --dump"),
        "{line}"
    );
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // One sentence per sender, not per datagram.
    assert_eq!(
        run.stderr.matches("looks like VMC").count(),
        2,
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains(&b.local_addr().unwrap().to_string()));
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["other_protocol"], 4);
    assert_eq!(sum["errors"], 4);
}

/// The status line reports its interval, not the run: a rate while frames
/// come, `no datagrams for N s` after; a socket that hears nothing for 5 s
/// says once where it listens and the usual causes. Piped stdout gets every
/// frame (the terminal pace is for terminals only).
#[test]
fn status_lines_report_the_interval_and_silence_is_explained_once() {
    let (mut dump, at) = live(&["--stats-interval", "1s", "--duration", "7500ms"]);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..5 {
        tx.send_to(SEED, at).unwrap();
    }
    // After the first stats line the stream is quiet for the rest of the run.
    let run = {
        dump.log_line("datagrams/s over the last");
        dump.finish()
    };
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.text().matches("frame ").count(), 5, "{}", run.text());
    // The rate since the start is left out of stats lines, kept in the summary.
    mocap_testutil::status::assert_went_quiet(&run.stderr, at, 4);
    assert!(run.stderr.contains("done (duration)"), "{}", run.stderr);
}

/// Held out: a capture whose first record is corrupt exited 0 in every
/// tool, as if it were empty. Damage ends the run in error (1) after the
/// summary; a capture cut short after its first records (tcpdump stopped
/// mid-write) is only reported.
#[test]
fn a_damaged_capture_ends_in_error_a_cut_tail_does_not() {
    let dir = std::env::temp_dir().join(format!("mocopi-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read(format!("{CAPTURES}/mocopi-frame-loss.pcapng")).unwrap();
    // The first Enhanced Packet Block (type 6), by walking the block lengths.
    let mut at = 0;
    while u32::from_le_bytes(good[at..at + 4].try_into().unwrap()) != 6 {
        at += u32::from_le_bytes(good[at + 4..at + 8].try_into().unwrap()) as usize;
    }
    let mut corrupt = good.clone();
    corrupt[at + 4..at + 8].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let cases = [
        ("corrupt-length.pcapng", corrupt, Some(1)),
        ("cut-in-first.pcapng", good[..at + 40].to_vec(), Some(1)),
        ("cut-tail.pcapng", good[..good.len() - 50].to_vec(), Some(0)),
    ];
    for (name, bytes, code) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let run = offline(&["-r", path.to_str().unwrap(), "--format", "json"], None);
        assert_eq!(run.code, code, "{name}: {}", run.stderr);
        let recs = run.json();
        assert_eq!(
            recs.last().unwrap()["type"],
            "summary",
            "{name}: the summary comes first"
        );
        let told = run.stderr.contains("could not be read to its end");
        assert_eq!(told, code == Some(1), "{name}: {}", run.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
