//! Runs the real `mocap-top` binary: JSON mode on loopback while the real
//! `pcap-replay` plays the repository's captures into it, capture input
//! from a file and from stdin, pass-through, exit codes. Every wait is
//! bounded (`-n`, `--duration`, [`mocap_testutil::LIMIT`]).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::time::Duration;

use mocap_testutil::Proc;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-top");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

/// The four captures of the end-to-end tests, with the protocol each is.
const FOUR: [(&str, &str); 4] = [
    ("mocopi/wave-60hz.pcapng", "mocopi"),
    ("livelink/face-60fps.pcapng", "livelink"),
    ("ifacialmocap/face-60fps.pcapng", "ifacialmocap"),
    ("vmc/body-60hz.pcapng", "vmc"),
];

fn capture(name: &str) -> String {
    format!("{CAPTURES}/{name}")
}

/// `pcap-replay`, built first when `cargo test -p mocap-top` did not.
fn replay_bin() -> PathBuf {
    mocap_testutil::tool(BIN, "pcap-replay")
}

/// Datagrams in a capture, read independently of both tools.
fn datagrams_in(name: &str) -> u64 {
    let file = std::fs::File::open(capture(name)).unwrap();
    let mut d = mocap_core::pcap::Datagrams::new(file).unwrap();
    let mut n = 0;
    while let Some(c) = d.next_datagram() {
        c.unwrap();
        n += 1;
    }
    n
}

/// The newest `top.stream` record of each (protocol, listen, sender).
fn last_streams(records: &[Value]) -> BTreeMap<(String, String, String), Value> {
    let mut out = BTreeMap::new();
    for r in records.iter().filter(|r| r["type"] == "top.stream") {
        let key = (
            r["protocol"].as_str().unwrap().to_owned(),
            r["listen"].to_string(),
            r["sender"].to_string(),
        );
        out.insert(key, r.clone());
    }
    out
}

/// The four captures played by four `pcap-replay`s into four `-l` ports at
/// once: one stream per port with the right protocol, and counts equal to
/// what each replay says it sent.
#[test]
fn four_replays_give_streams_whose_counts_equal_what_was_sent() {
    // Before the receiver starts: a first build takes longer than its --duration.
    let replay = replay_bin();
    let total: u64 = FOUR.iter().map(|(f, _)| datagrams_in(f)).sum();
    let n = total.to_string();
    let mut top = Proc::spawn(
        BIN,
        &[
            "--format",
            "json",
            "-l",
            "127.0.0.1:0",
            "-l",
            "127.0.0.1:0",
            "-l",
            "127.0.0.1:0",
            "-l",
            "127.0.0.1:0",
            "-n",
            &n,
            "--duration",
            "60s",
        ],
        None,
    );
    let ports: Vec<SocketAddr> = (0..4)
        .map(|_| top.log_line("listening on").1.unwrap())
        .collect();
    let replays: Vec<Proc> = FOUR
        .iter()
        .zip(&ports)
        .map(|((f, _), to)| {
            Proc::spawn(
                replay.to_str().unwrap(),
                &["--format", "json", "--to", &to.to_string(), &capture(f)],
                None,
            )
        })
        .collect();
    let mut sent = Vec::new();
    for r in replays {
        let done = r.finish();
        assert_eq!(done.code, Some(0), "{}", done.stderr);
        let summary = done.json().pop().unwrap();
        sent.push(summary["sent"].as_u64().unwrap());
    }
    assert_eq!(sent.iter().sum::<u64>(), total);
    let run = top.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let records = run.json();
    let summary = records.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["stopped"], "count");
    assert_eq!(summary["datagrams"], total);
    assert_eq!(summary["dropped"], 0);
    let streams = last_streams(&records);
    assert_eq!(streams.len(), 4, "{streams:#?}");
    for (((file, protocol), port), sent) in FOUR.iter().zip(&ports).zip(&sent) {
        let s = streams
            .values()
            .find(|s| s["listen"] == port.to_string())
            .unwrap_or_else(|| panic!("no stream on {port}"));
        assert_eq!(s["protocol"], *protocol, "{file}");
        assert_eq!(s["datagrams"], *sent, "{file}");
        assert_eq!(s["shared"], false);
        for field in [
            "rate_hz",
            "frames",
            "lost",
            "duplicates",
            "reordered",
            "restarts",
            "errors",
            "age_ms",
            "bytes_per_s",
        ] {
            assert!(s[field].is_number(), "{file}: {field} in {s}");
        }
    }
}

/// What a capture gives that does not depend on timing.
fn counts(records: &[Value]) -> Vec<Vec<Value>> {
    last_streams(records)
        .values()
        .map(|s| {
            [
                "protocol",
                "listen",
                "sender",
                "datagrams",
                "frames",
                "lost",
                "duplicates",
                "reordered",
                "restarts",
                "errors",
            ]
            .iter()
            .map(|f| s[*f].clone())
            .collect()
        })
        .collect()
}

/// `-r -` from a pcapng on stdin gives the same streams as `-r FILE`: the
/// frame-loss capture, so the health counts are not all zero.
#[test]
fn a_pcapng_on_stdin_gives_the_same_streams_as_the_file() {
    let file = capture("mocopi/mocopi-frame-loss.pcapng");
    let from_file = Proc::spawn(BIN, &["--format", "json", "-r", &file], None).finish();
    assert_eq!(from_file.code, Some(0), "{}", from_file.stderr);
    let bytes = std::fs::read(&file).unwrap();
    let from_stdin = Proc::spawn(BIN, &["--format", "json", "-r", "-"], Some(bytes)).finish();
    assert_eq!(from_stdin.code, Some(0), "{}", from_stdin.stderr);
    let (a, b) = (counts(&from_file.json()), counts(&from_stdin.json()));
    assert_eq!(a, b);
    assert_eq!(a.len(), 1);
    let s = &a[0];
    assert_eq!(s[0], "mocopi");
    assert_eq!(s[3], 8, "datagrams");
    // lost, duplicates, restarts: the capture's gap of 2, duplicate, restart.
    assert_eq!(
        (s[5].clone(), s[6].clone(), s[8].clone()),
        (2.into(), 1.into(), 1.into())
    );
    let summary = from_stdin.json().pop().unwrap();
    assert_eq!(summary["stopped"], "end of input");
}

/// Every datagram on a `-l` address is passed on to its `--to` unchanged,
/// and the summary counts the sends.
#[test]
fn to_passes_every_datagram_on_unchanged() {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    sink.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let to = sink.local_addr().unwrap().to_string();
    let mut top = Proc::spawn(
        BIN,
        &[
            "--format",
            "json",
            "-l",
            "127.0.0.1:0",
            "--to",
            &to,
            "-n",
            "5",
            "--duration",
            "30s",
        ],
        None,
    );
    let at = top.log_line("listening on").1.unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let sent: Vec<Vec<u8>> = (0..5u8).map(|i| vec![b'#', i, 0xff, i]).collect();
    for d in &sent {
        tx.send_to(d, at).unwrap();
    }
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    for _ in 0..5 {
        let (n, _) = sink
            .recv_from(&mut buf)
            .expect("a passed-on datagram within 5 s");
        got.push(buf[..n].to_vec());
    }
    assert_eq!(got, sent);
    let run = top.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let records = run.json();
    let summary = records.last().unwrap();
    assert_eq!(summary["sends"][0]["to"], to);
    assert_eq!(summary["sends"][0]["sent"], 5);
    assert_eq!(summary["sends"][0]["failed"], 0);
    // Bytes no protocol claims: one unknown stream with its first bytes.
    let streams = last_streams(&records);
    let s = streams.values().next().unwrap();
    assert_eq!(s["protocol"], "unknown");
    assert_eq!(s["datagrams"], 5);
    assert_eq!(s["head_hex"], "23 04 ff 04");
}

/// JSON records come every --interval while datagrams keep coming.
#[test]
fn records_come_every_interval() {
    let mut top = Proc::spawn(
        BIN,
        &[
            "--format",
            "json",
            "-l",
            "127.0.0.1:0",
            "--interval",
            "200ms",
            "--duration",
            "1500ms",
        ],
        None,
    );
    let at = top.log_line("listening on").1.unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(b"/x\0\0,\0\0\0", at).unwrap();
    let run = top.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let records = run.json();
    let n = records.iter().filter(|r| r["type"] == "top.stream").count();
    // About seven intervals after the datagram, and the final snapshot.
    assert!((4..=9).contains(&n), "{n} records: {records:?}");
    let last = records.iter().rfind(|r| r["type"] == "top.stream").unwrap();
    assert_eq!(last["protocol"], "vmc");
    assert_eq!(last["rate_hz"], 0.0, "no datagram in the last second");
    assert!(last["age_ms"].as_u64().unwrap() >= 1000);
    assert_eq!(last["state"], "stale");
}

#[test]
fn usage_and_runtime_errors_have_their_exit_codes() {
    // The screen needs a terminal.
    let run = Proc::spawn(BIN, &["--format", "human", "-l", "127.0.0.1:0"], None).finish();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("terminal"), "{}", run.stderr);
    // --to without -l.
    let run = Proc::spawn(BIN, &["--to", "127.0.0.1:9"], None).finish();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    // More --to than -l.
    let run = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:9",
            "--to",
            "127.0.0.1:10",
        ],
        None,
    )
    .finish();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    // A port another program holds, given with -l.
    let held = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = held.local_addr().unwrap().to_string();
    let run = Proc::spawn(
        BIN,
        &["--format", "json", "-l", &addr, "--duration", "1s"],
        None,
    )
    .finish();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(run.stderr.contains("already in use"), "{}", run.stderr);
    // A file that is not there.
    let run = Proc::spawn(
        BIN,
        &["--format", "json", "-r", "/nonexistent.pcapng"],
        None,
    )
    .finish();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

#[test]
fn ctrl_c_ends_with_a_summary() {
    let mut top = Proc::spawn(BIN, &["--format", "json", "-l", "127.0.0.1:0"], None);
    top.log_line("listening on");
    #[cfg(unix)]
    {
        top.interrupt();
        let run = top.finish();
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let summary = run.json().pop().unwrap();
        assert_eq!(summary["stopped"], "interrupted");
    }
    #[cfg(not(unix))]
    drop(top);
}

/// `-w` records what arrived, readable by the tool itself.
#[test]
fn write_records_what_arrived() {
    let dir = std::env::temp_dir().join(format!("mocap-top-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rec.pcapng");
    let p = path.to_str().unwrap();
    let mut top = Proc::spawn(
        BIN,
        &[
            "--format",
            "json",
            "-l",
            "127.0.0.1:0",
            "-w",
            p,
            "-n",
            "3",
            "--duration",
            "30s",
        ],
        None,
    );
    let at = top.log_line("listening on").1.unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for _ in 0..3 {
        tx.send_to(b"hello", at).unwrap();
    }
    let run = top.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let again = Proc::spawn(BIN, &["--format", "json", "-r", p], None).finish();
    let streams = last_streams(&again.json());
    let s = streams.values().next().unwrap();
    assert_eq!(
        (s["datagrams"].as_u64(), s["protocol"].as_str()),
        (Some(3), Some("unknown"))
    );
    assert_eq!(s["sender"], tx.local_addr().unwrap().to_string());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::io::stderr().flush();
}

#[test]
fn generate_prints_completions_and_a_man_page() {
    mocap_testutil::check_generate(BIN, "mocap-top", "--interval");
}

/// Without `-l`, every default port is listened on, and one another
/// program holds is reported as taken, not fatal. It binds the real
/// default ports, which no other test may hold at the same time:
/// scripts/test-all.sh runs it on its own.
#[test]
#[ignore = "binds a default port: scripts/test-all.sh"]
fn default_ports_are_listened_on_and_a_held_one_is_reported() {
    // VMT's port stands for "another program has it" (VSeeFace on 39539,
    // VRChat on 9000 in real life). If something on this machine holds
    // it already, that is the same case.
    let _held = UdpSocket::bind("0.0.0.0:39570");
    let mut top = Proc::spawn(
        BIN,
        &["--format", "json", "-n", "1", "--duration", "10s"],
        None,
    );
    top.log_line("listening on 0.0.0.0:12351");
    // One mocopi frame to the default mocopi port ends the run (`-n 1`); a
    // lost one ends it by --duration and fails below.
    let frame = std::fs::read(capture("mocopi/seed-frame-1575.bin")).unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(&frame, "127.0.0.1:12351").unwrap();
    let run = top.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let records = run.json();
    let summary = records.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["stopped"], "count", "{}", run.stderr);
    let taken = summary["taken"].as_array().unwrap();
    let vmt = taken
        .iter()
        .find(|t| t["listen"] == "0.0.0.0:39570")
        .unwrap_or_else(|| panic!("39570 not reported taken: {summary}"));
    assert_eq!(vmt["protocol"], "VMT");
    assert_eq!(vmt["reason"], "another program has it");
    // Named as the OS says: this test holds it.
    let program = vmt["program"].as_str().unwrap();
    assert!(
        program.ends_with(&format!("(pid {})", std::process::id())),
        "{program}"
    );
    assert!(
        run.stderr.contains("VMT port 39570 not watched"),
        "{}",
        run.stderr
    );
    // Every default port is either listened on or reported taken.
    let listening = summary["listening"].as_array().unwrap();
    let ports = mocap_core::protocol::Protocol::ALL
        .iter()
        .flat_map(|p| p.default_ports());
    for port in ports {
        let addr = format!("0.0.0.0:{port}");
        let heard = listening.iter().any(|l| l == addr.as_str());
        let held = taken.iter().any(|t| t["listen"] == addr.as_str());
        assert!(
            heard != held,
            "{addr}: listening {heard}, taken {held}: {summary}"
        );
    }
    assert!(listening.iter().any(|l| l == "0.0.0.0:12351"));
    let streams = last_streams(&records);
    let mocopi = streams
        .values()
        .find(|s| s["listen"] == "0.0.0.0:12351")
        .unwrap_or_else(|| panic!("no stream on 12351: {records:?}"));
    assert_eq!(mocopi["protocol"], "mocopi");
    assert_eq!(mocopi["datagrams"], 1);
    assert_eq!(mocopi["sender"], tx.local_addr().unwrap().to_string());
}

/// A live capture on stdin that goes quiet (`tcpdump -U -w - | mocap-top
/// -r -` once the sender stops; the pipe stays open): records go on, the
/// stream goes stale by the wall clock, and SIGTERM ends the run with a
/// summary. Before, the run waited in the capture's read: no record came
/// after the last datagram and SIGTERM was not seen.
#[test]
#[cfg(unix)]
fn a_quiet_capture_on_stdin_goes_stale_and_sigterm_ends_it() {
    let (mut top, mut stdin) =
        Proc::spawn_with_stdin(BIN, &["-r", "-", "--format", "json", "--interval", "200ms"]);
    let capture = std::fs::read(format!("{CAPTURES}/mocopi/mocopi-frame-loss.pcapng")).unwrap();
    stdin.write_all(&capture).unwrap();
    stdin.flush().unwrap();
    let line = top.stdout_line(r#""state":"stale""#);
    assert!(line.contains(r#""protocol":"mocopi""#), "{line}");
    top.signal(mocap_testutil::Signal::SIGTERM);
    let run = top.finish();
    drop(stdin);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let summary = run.json().pop().unwrap();
    assert_eq!(summary["stopped"], "interrupted", "{summary}");
    assert_eq!(summary["datagrams"], 8, "{summary}");
}

/// Held out (vmc-relay, and mocap-top the same): a recording on a full disk
/// ended the run. It stops the recording alone, with one loud line; the
/// datagrams are still counted and the run ends in error after the summary.
#[test]
#[cfg(target_os = "linux")]
fn a_recording_on_a_full_disk_stops_alone() {
    let mut top = Proc::spawn(
        BIN,
        &[
            "--format",
            "json",
            "-l",
            "127.0.0.1:0",
            "-w",
            "/dev/full",
            "-n",
            "40",
            "--duration",
            "30s",
        ],
        None,
    );
    let at = top.log_line("listening on").1.unwrap();
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    // 40 datagrams of 1 kB: past the writer's buffer, so a write fails.
    for _ in 0..40 {
        tx.send_to(&[7u8; 1000], at).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let run = top.finish();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("RECORDING STOPPED").count(),
        1,
        "{}",
        run.stderr
    );
    let sum = run.json().pop().unwrap();
    assert_eq!(sum["type"], "summary");
    assert_eq!(sum["datagrams"], 40, "{sum}");
}
