//! The Windows build of `mocopi-dump` under Wine, against the Linux build and
//! Linux peers on 127.0.0.1: the same bytes out for every bundled capture,
//! Windows paths with spaces, a live socket, Ctrl-C, `--duration`, a closed
//! pipe and the exit codes. `scripts/test-windows.sh` cross-builds the
//! `.exe` files and runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::path::Path;

use mocap_testutil::{Proc, wine};

const BIN: &str = env!("CARGO_BIN_EXE_mocopi-dump");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures/mocopi");
const SEED: &[u8] = include_bytes!("../../../captures/mocopi/seed-frame-1575.bin");
const SKDF: &[u8] = include_bytes!("../../../captures/mocopi/t-34400/sample_skdf.bin");

/// Every capture file under `captures/mocopi` (licences and notes left out).
fn captures() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![Path::new(CAPTURES).to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("pcap" | "pcapng" | "bin" | "mocopipackets")
            ) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_exit_codes_are_the_linux_builds() {
    for args in [
        &["--version"][..],
        &["--help"],
        &["-h"],
        &["--generate", "man"],
    ] {
        wine::same_as(BIN, "mocopi-dump", args);
    }
    // Usage error: 2; runtime error (a file that is not there): 1.
    let usage = wine::same_as(BIN, "mocopi-dump", &["--format", "yaml"]);
    assert_eq!(usage.status.code(), Some(2));
    let missing = wine::output("mocopi-dump", &["-r", r"C:\no such folder\capture.pcapng"]);
    assert_eq!(missing.status.code(), Some(1));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains(r"C:\no such folder\capture.pcapng"), "{err}");
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn every_bundled_capture_gives_the_linux_bytes() {
    let all = captures();
    assert!(all.len() >= 15, "{all:?}");
    for path in all {
        let p = path.to_str().unwrap();
        for format in ["json", "human", "tree"] {
            let out = wine::same_run(
                BIN,
                &["-r", p, "--format", format],
                "mocopi-dump",
                &["-r", &wine::path(&path), "--format", format],
                false,
            );
            assert!(!out.stdout.is_empty(), "{p} --format {format}: no output");
        }
    }
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn a_windows_path_with_spaces_reads_and_writes() {
    let dir = std::env::temp_dir().join(format!("mocopi dump wine {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("a capture.pcapng");
    std::fs::copy(format!("{CAPTURES}/mocopi-frame-loss.pcapng"), &input).unwrap();
    let bvh = dir.join("take one.bvh");
    let run = wine::output(
        "mocopi-dump",
        &[
            "-r",
            &wine::path(&input),
            "-q",
            "--bvh",
            &wine::path(&bvh),
            "--format",
            "json",
        ],
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The same take the Linux build writes from the same capture.
    let linux_bvh = dir.join("linux.bvh");
    let linux = mocap_testutil::output({
        let mut c = std::process::Command::new(BIN);
        c.args([
            "-r",
            input.to_str().unwrap(),
            "-q",
            "--bvh",
            linux_bvh.to_str().unwrap(),
        ]);
        c
    });
    assert_eq!(linux.status.code(), Some(0));
    let (w, l) = (
        std::fs::read(&bvh).unwrap(),
        std::fs::read(&linux_bvh).unwrap(),
    );
    assert!(!w.contains(&b'\r'), "CR in the Windows take");
    assert_eq!(w, l, "the Windows take differs from the Linux one");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Starts the Windows build on an ephemeral loopback port.
fn live(args: &[&str]) -> (Proc, std::net::SocketAddr) {
    let mut p = wine::spawn(
        "mocopi-dump",
        &[&["-l", "127.0.0.1:0"], args].concat(),
        None,
    );
    let (line, addr) = p.log_line("listening on");
    (p, addr.unwrap_or_else(|| panic!("no address in {line:?}")))
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn live_datagrams_from_linux_then_ctrl_c() {
    let (mut tool, addr) = live(&["--format", "json"]);
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(SKDF, addr).unwrap();
    tx.send_to(SEED, addr).unwrap();
    assert!(
        tool.stdout_line("mocopi.skeleton")
            .contains(&tx.local_addr().unwrap().to_string())
    );
    assert!(tool.stdout_line("mocopi.frame").contains("\"fnum\":4977"));
    // Wine turns SIGINT into the console's Ctrl-C event.
    tool.interrupt();
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let last = run.json().pop().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["stopped"].as_str()),
        (Some("summary"), Some("interrupted"))
    );
    assert_eq!(
        (last["frames"].as_u64(), last["skeletons"].as_u64()),
        (Some(1), Some(1))
    );
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn duration_ends_an_idle_listener_and_a_closed_pipe_ends_quietly() {
    let (tool, _) = live(&["--duration", "700ms", "--format", "json"]);
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.json().pop().unwrap()["stopped"], "duration");

    // Megabytes of JSON, so the tool is still writing when the reader goes away.
    let input = format!("{}\n", hex::encode(SEED)).repeat(3000);
    let mut tool = wine::spawn(
        "mocopi-dump",
        &["-r", "-", "--format", "json"],
        Some(input.into_bytes()),
    );
    assert!(tool.stdout_line("").contains("\"mocopi.frame\""));
    tool.close_stdout();
    let run = tool.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("error"), "{}", run.stderr);
}
