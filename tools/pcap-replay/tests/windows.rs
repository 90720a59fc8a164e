//! The Windows build of `pcap-replay` under Wine delivers captures to Linux
//! receivers on 127.0.0.1: every payload, in order, paced (the portable
//! sleeps), with `--hedge` and as a triggered phone. `scripts/test-windows.sh`
//! builds the `.exe` files and runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::path::Path;

use mocap_testutil::{Proc, wine};

mod common;

use common::{CAPTURES, collect, payloads, receiver};

const BIN: &str = env!("CARGO_BIN_EXE_pcap-replay");

fn replay(name: &str, extra: &[&str]) -> Proc {
    let file = wine::path(Path::new(&format!("{CAPTURES}/{name}")));
    wine::spawn("pcap-replay", &[&[file.as_str()], extra].concat(), None)
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_exit_codes_are_the_linux_builds() {
    for args in [
        &["--version"][..],
        &["--help"],
        &["-h"],
        &["--generate", "complete-fish"],
    ] {
        wine::same_as(BIN, "pcap-replay", args);
    }
    let usage = wine::same_as(BIN, "pcap-replay", &["x.pcap", "--speed", "fast"]);
    assert_eq!(usage.status.code(), Some(2));
    let missing = wine::output("pcap-replay", &[r"C:\no such\capture.pcapng"]);
    assert_eq!(missing.status.code(), Some(1));
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn a_capture_reaches_a_linux_receiver_paced_and_hedged() {
    let want = payloads("wave-60hz.pcapng");
    assert_eq!(want.len(), 242);
    for extra in [&[][..], &["--hedge"]] {
        let rx = receiver();
        let to = rx.local_addr().unwrap().to_string();
        let p = replay(
            "wave-60hz.pcapng",
            &[&["--to", &to, "--speed", "4", "--format", "json"], extra].concat(),
        );
        let got = collect(&rx, want.len());
        let out = p.finish();
        assert_eq!(out.code, Some(0), "{extra:?}: {}", out.stderr);
        assert_eq!(got.len(), want.len(), "{extra:?}: datagrams lost");
        assert!(
            got.into_iter().map(|(_, d)| d).eq(want.iter().cloned()),
            "{extra:?}: payloads differ"
        );
        let sum = out.json().pop().unwrap();
        assert_eq!(sum["sent"], 242, "{extra:?}");
        // Paced: the tool measured how late each send was.
        assert!(sum["timing_error_us"]["p99"].is_u64(), "{extra:?}: {sum}");
    }
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn triggered_by_a_linux_peer_it_plays_back_to_it() {
    let rx = receiver();
    let port = rx.local_addr().unwrap().port().to_string();
    let mut p = replay(
        "mocopi-sizes.pcapng",
        &["--trigger", "127.0.0.1:0", "--to-port", &port, "--topspeed"],
    );
    let (line, trigger) = p.log_line("waiting for a datagram");
    let trigger = trigger.unwrap_or_else(|| panic!("no address in {line:?}"));
    rx.send_to(
        b"iFacialMocap_sahuasouryya9218sauhuiayeta91555dy3719",
        trigger,
    )
    .unwrap();
    let want = payloads("mocopi-sizes.pcapng");
    let got = collect(&rx, want.len());
    let out = p.finish();
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        got.iter().all(|(from, _)| *from == trigger),
        "not from the trigger socket"
    );
    assert!(got.into_iter().map(|(_, d)| d).eq(want));
}
