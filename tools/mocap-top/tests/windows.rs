//! The Windows build of `mocap-top` under Wine: help and exit codes as the
//! Linux build's, a bundled capture replayed into `top.stream` records and
//! a summary with the Linux build's counts, and a live datagram from Linux
//! on a loopback socket. `scripts/test-windows.sh` builds the `.exe` files
//! and runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::path::Path;

use mocap_testutil::{Proc, wine};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-top");
const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/mocopi/mocopi-frame-loss.pcapng"
);

fn records(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Per stream (protocol, sender), the counts the last `top.stream` says.
fn counts(records: &[Value]) -> Vec<(String, String, Value, Value, Value)> {
    let mut last = std::collections::BTreeMap::new();
    for r in records.iter().filter(|r| r["type"] == "top.stream") {
        let key = (r["protocol"].to_string(), r["sender"].to_string());
        last.insert(key, r.clone());
    }
    last.into_iter()
        .map(|((p, s), r)| {
            (
                p,
                s,
                r["datagrams"].clone(),
                r["frames"].clone(),
                r["lost"].clone(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_exit_codes_are_the_linux_builds() {
    for args in [&["--version"][..], &["--help"], &["--generate", "man"]] {
        wine::same_as(BIN, "mocap-top", args);
    }
    // The screen needs a terminal: a usage error in both.
    let usage = wine::same_as(
        BIN,
        "mocap-top",
        &["--format", "human", "-l", "127.0.0.1:0"],
    );
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn a_replayed_capture_gives_the_linux_streams_and_a_summary() {
    let linux = Proc::spawn(BIN, &["-r", CAPTURE, "--format", "json"], None).finish();
    assert_eq!(linux.code, Some(0), "{}", linux.stderr);
    let windows = wine::output(
        "mocap-top",
        &["-r", &wine::path(Path::new(CAPTURE)), "--format", "json"],
    );
    assert_eq!(
        windows.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&windows.stderr)
    );
    assert!(!windows.stdout.contains(&b'\r'), "CR on stdout");
    let ours = records(&windows.stdout);
    let streams = counts(&ours);
    assert!(!streams.is_empty(), "no top.stream records: {ours:?}");
    // Rates and ages follow the playback's clock; the counts do not.
    assert_eq!(streams, counts(&linux.json()));
    let summary = ours.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["stopped"], "end of input");
    assert_eq!(summary["datagrams"], 8);
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn a_live_datagram_from_linux_is_a_stream() {
    let mut top = wine::spawn(
        "mocap-top",
        &[
            "--format",
            "json",
            "-l",
            "127.0.0.1:0",
            "-n",
            "1",
            "--duration",
            "15s",
        ],
        None,
    );
    let (line, at) = top.log_line("listening on");
    let at = at.unwrap_or_else(|| panic!("no address in {line:?}"));
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    // One datagram: a lost one ends the run by --duration and fails below.
    tx.send_to(b"hello", at).unwrap();
    let run = top.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let records = run.json();
    let summary = records.last().unwrap();
    assert_eq!(summary["stopped"], "count", "{}", run.stderr);
    let stream = records
        .iter()
        .find(|r| r["type"] == "top.stream")
        .unwrap_or_else(|| panic!("no top.stream: {records:?}"));
    assert_eq!(stream["protocol"], "unknown");
    assert_eq!(stream["datagrams"], 1);
    assert_eq!(stream["sender"], tx.local_addr().unwrap().to_string());
}
