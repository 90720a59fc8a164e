//! The Windows build of `livelink-dump` under Wine: the same output as the
//! Linux build for the bundled capture, live datagrams from Linux bridged to
//! a Linux VMC receiver, then Ctrl-C. `scripts/test-windows.sh` builds the
//! `.exe` files and runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::path::Path;

use mocap_core::livelink::PacketRepr;
use mocap_core::vmc::{self, Message};
use mocap_testutil::{LIMIT, wine};

const BIN: &str = env!("CARGO_BIN_EXE_livelink-dump");
const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/livelink/face-60fps.pcapng"
);

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_exit_codes_are_the_linux_builds() {
    for args in [
        &["--version"][..],
        &["--help"],
        &["-h"],
        &["--generate", "man"],
    ] {
        wine::same_as(BIN, "livelink-dump", args);
    }
    let usage = wine::same_as(BIN, "livelink-dump", &["--angles", "degrees"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn the_bundled_capture_gives_the_linux_bytes() {
    for format in ["json", "human"] {
        let out = wine::same_run(
            BIN,
            &["-r", CAPTURE, "--format", format],
            "livelink-dump",
            &["-r", &wine::path(Path::new(CAPTURE)), "--format", format],
            false,
        );
        assert!(!out.stdout.is_empty(), "--format {format}: no output");
    }
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn live_face_bridged_to_a_linux_receiver_then_ctrl_c() {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(LIMIT)).unwrap();
    let to = rx.local_addr().unwrap().to_string();
    let mut tool = wine::spawn(
        "livelink-dump",
        &["-l", "127.0.0.1:0", "--vmc", &to, "--format", "json"],
        None,
    );
    let (line, addr) = tool.log_line("listening on");
    let addr = addr.unwrap_or_else(|| panic!("no address in {line:?}"));
    let mut values = vec![0.0f32; 61];
    values[17] = 0.375; // JawOpen
    let face = PacketRepr {
        device: "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F".into(),
        subject: "Zoe's iPhone".into(),
        frame: 42,
        subframe: 0.5,
        rate: [60, 1],
        values: Some(values),
    };
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(&face.to_bytes(), addr).unwrap();
    assert!(
        tool.stdout_line("livelink.frame")
            .contains("\"JawOpen\":0.375")
    );
    // The bridge's datagrams reach the Linux receiver; the frame ends in Apply.
    let mut buf = vec![0u8; 65_536];
    let mut messages = Vec::new();
    while !messages.contains(&Message::BlendApply) {
        let n = rx.recv(&mut buf).expect("VMC from the Windows build");
        messages.extend(
            vmc::decode(&buf[..n])
                .unwrap()
                .into_iter()
                .map(Result::unwrap),
        );
    }
    assert!(messages.contains(&Message::BlendVal {
        name: "jawOpen".into(),
        value: 0.375
    }));
    tool.interrupt();
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let last = run.json().pop().unwrap();
    assert_eq!(last["stopped"], "interrupted");
    assert_eq!(last["frames"], 1);
}
