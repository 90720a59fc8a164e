//! The Windows build of `ifm-handshake` under Wine: the UDP handshake with a
//! phone emulated on Linux (also when the phone's app opens only after the
//! first start commands), and the same bytes as the Linux build for every
//! bundled capture. `scripts/test-windows.sh` builds the `.exe` files and
//! runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::thread;
use std::time::Duration;

use mocap_core::ifm;
use mocap_testutil::{LIMIT, wine};

mod common;

use common::{FRAMES, recv_command};

const BIN: &str = env!("CARGO_BIN_EXE_ifm-handshake");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures/ifacialmocap");

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_usage_errors_are_the_linux_builds() {
    for args in [
        &["--version"][..],
        &["--help"],
        &["-h"],
        &["--generate", "complete-bash"],
    ] {
        wine::same_as(BIN, "ifm-handshake", args);
    }
    let usage = wine::same_as(BIN, "ifm-handshake", &["--keepalive", "often"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn handshake_with_a_phone_whose_app_opens_late() {
    // A port where nothing listens yet: the first start commands meet an
    // ICMP "port unreachable" (on Windows, reported on the socket's next
    // send or receive), and the run must go on sending until the app opens.
    let port = UdpSocket::bind("127.0.0.2:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut tool = wine::spawn(
        "ifm-handshake",
        &[
            "127.0.0.2",
            "--phone-port",
            &port.to_string(),
            "-l",
            "127.0.0.1:0",
            "--keepalive",
            "300ms",
            "--format",
            "json",
            "-n",
            "3",
        ],
        None,
    );
    tool.log_line("sent");
    thread::sleep(Duration::from_millis(700));
    let phone = UdpSocket::bind(("127.0.0.2", port)).unwrap();
    phone.set_read_timeout(Some(LIMIT)).unwrap();
    let (cmd, pc) = recv_command(&phone);
    assert_eq!(
        cmd,
        ifm::Command::StartUdp {
            version: ifm::Version::V1
        }
        .text()
    );
    for f in FRAMES.lines().take(3) {
        phone.send_to(f.as_bytes(), pc).unwrap();
    }
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs = run.json();
    assert_eq!(recs.len(), 4, "{:?}", run.stdout);
    assert_eq!(recs[0]["type"], "ifm.frame");
    assert_eq!(recs[0]["blendshapes"]["eyeLookDownLeft"], 0.23);
    assert_eq!(recs[0]["src"], phone.local_addr().unwrap().to_string());
    assert_eq!(
        (recs[3]["frames"].as_u64(), recs[3]["stopped"].as_str()),
        (Some(3), Some("count"))
    );
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn every_bundled_capture_gives_the_linux_bytes() {
    let mut names: Vec<_> = std::fs::read_dir(CAPTURES)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("txt" | "pcapng")
            )
        })
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for path in names {
        for format in ["json", "human"] {
            let p = path.to_str().unwrap();
            let out = wine::same_run(
                BIN,
                &["-r", p, "--format", format],
                "ifm-handshake",
                &["-r", &wine::path(&path), "--format", format],
                false,
            );
            assert!(!out.stdout.is_empty(), "{p} --format {format}: no output");
        }
    }
}
