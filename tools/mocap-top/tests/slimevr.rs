//! The real `mocap-top` on the bundled SlimeVR capture (an emulated
//! tracker and server, `captures/slimevr/make_capture.py`): both directions
//! recognised by content, the tracker's loss equal to the packets the
//! script leaves out, its reboot (a second handshake, numbers from 0) no
//! restart. Nothing in mocap-top names SlimeVR: this is its registry row.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_testutil::Proc;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-top");
const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/slimevr/tracker-100hz.pcap"
);

#[test]
fn a_tracker_and_its_server_with_the_scripts_gaps() {
    let run = Proc::spawn(BIN, &["--format", "json", "-r", CAPTURE], None).finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let summary = run.json().pop().unwrap();
    assert_eq!(summary["type"], "summary");
    let streams = summary["per_stream"].as_array().unwrap();
    assert_eq!(streams.len(), 2, "{streams:#?}");
    assert!(streams.iter().all(|s| s["protocol"] == "slimevr"));
    let from = |ip: &str| {
        streams
            .iter()
            .find(|s| s["sender"] == format!("{ip}:6969"))
            .unwrap()
    };
    let tracker = from("192.168.1.51");
    let server = from("192.168.1.10");
    // The script's schedule: 2 + 1 handshakes, 305 + 254 numbered packets
    // less 5 left out, 6 + 5 pongs; 553 frames (every numbered packet but
    // the cut last); lost: 100–102 and 57, 160.
    let counts = |s: &serde_json::Value| {
        [
            "datagrams",
            "frames",
            "lost",
            "duplicates",
            "reordered",
            "restarts",
            "errors",
        ]
        .map(|f| s[f].as_u64().unwrap())
    };
    assert_eq!(counts(tracker), [568, 553, 5, 0, 0, 0, 1]);
    // Its last second: 100 bundles (the cut one an error), battery, signal,
    // temperature and two heartbeat answers.
    let rate = tracker["rate_hz"].as_f64().unwrap();
    assert!((100.0..=106.0).contains(&rate), "{rate}");
    // The server numbers nothing: frames, no loss. Its pings are no frames.
    assert_eq!(counts(server), [32, 20, 0, 0, 0, 0, 0]);
}
