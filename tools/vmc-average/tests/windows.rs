//! The Windows build of `vmc-average` under Wine mixes two Linux senders on
//! 127.0.0.1 into a Linux receiver, value for value as on Linux.
//! `scripts/test-windows.sh` builds the `.exe` files and runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::thread;
use std::time::Duration;

use mocap_core::vmc::Message;
use mocap_testutil::wine;

mod common;

use common::{free_port, last_head, receive, receiver, sender};

const BIN: &str = env!("CARGO_BIN_EXE_vmc-average");

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_usage_errors_are_the_linux_builds() {
    for args in [
        &["--version"][..],
        &["--help"],
        &["-h"],
        &["--generate", "complete-zsh"],
    ] {
        wine::same_as(BIN, "vmc-average", args);
    }
    let usage = wine::same_as(BIN, "vmc-average", &["--rate", "fast"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn mixes_two_senders() {
    let (p1, p2) = (free_port(), free_port());
    let (l1, l2) = (format!("127.0.0.1:{p1}"), format!("127.0.0.1:{p2}"));
    let rx = receiver();
    let to = rx.local_addr().unwrap().to_string();
    let mut tool = wine::spawn(
        "vmc-average",
        &[
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
        ],
        None,
    );
    tool.log_line("listening on");
    let a = sender("127.0.0.1:0", l1.parse().unwrap(), 10.0, false);
    let b = sender("127.0.0.1:0", l2.parse().unwrap(), 30.0, false);
    thread::sleep(Duration::from_millis(500));
    let got = receive(&rx, Duration::from_millis(600));
    // Head turned 10° and 30° about Y: the mean rotation is 20°.
    assert!((last_head(&got) - 20.0).abs() < 1e-3, "{}", last_head(&got));
    // The primary's blendshape passes through, right before Apply.
    let joy = got
        .iter()
        .position(|m| matches!(m, Message::BlendVal { name, value } if name == "Joy" && (*value - 0.1).abs() < 1e-6))
        .unwrap();
    assert_eq!(got[joy + 1], Message::BlendApply);
    a.stop();
    b.stop();
    tool.interrupt();
    let done = tool.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let sum = done.json().pop().unwrap();
    assert_eq!(sum["stopped"], "interrupted");
    assert!(sum["frames_out"].as_u64().unwrap() > 5, "{sum}");
    assert_eq!(sum["sources"].as_array().unwrap().len(), 2);
}
