//! The Windows build of `motion-stream` under Wine: `serve` takes VMC from
//! Linux and answers the Linux build's `dump` over WebSocket, and `dump -r`
//! of that recording gives the Linux build's bytes. `scripts/test-windows.sh`
//! builds the `.exe` files and runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_testutil::{Proc, wine};

mod common;

use common::send_vmc;

const BIN: &str = env!("CARGO_BIN_EXE_motion-stream");

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_usage_errors_are_the_linux_builds() {
    for args in [
        &["--version"][..],
        &["--help"],
        &["serve", "--help"],
        &["dump", "--help"],
        &["--generate", "man"],
    ] {
        wine::same_as(BIN, "motion-stream", args);
    }
    let usage = wine::same_as(BIN, "motion-stream", &["serve", "--dtype", "int7"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn serve_answers_a_linux_client_and_its_recording_reads_the_same() {
    let mut server = wine::spawn(
        "motion-stream",
        &[
            "serve",
            "-l",
            "127.0.0.1:0",
            "--vmc",
            "127.0.0.1:0",
            "--dtype",
            "float16",
            "--learn",
            "0s",
        ],
        None,
    );
    let (_, http) = server.log_line("(ws");
    let (_, udp) = server.log_line("(VMC");
    let (http, udp) = (http.unwrap(), udp.unwrap());
    let dir = std::env::temp_dir().join(format!("motion stream wine {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("take one.dlp3d");
    let url = format!("ws://{http}/api/v4/audio_chat_with_text_llm");
    let mut dump = Proc::spawn(
        BIN,
        &[
            "dump",
            &url,
            "--text",
            "hi",
            "-w",
            rec.to_str().unwrap(),
            "--frames",
        ],
        None,
    );
    dump.log_line("connected to");
    // 40 frames, then idle input ends the streams.
    send_vmc(udp, 40).join().unwrap();
    let live = dump.finish();
    assert_eq!(live.code, Some(0), "{}", live.stderr);
    let recs = live.json();
    let types: Vec<&str> = recs.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        &types[..5],
        [
            "dlp3d.request_id",
            "dlp3d.normal",
            "dlp3d.motion_start",
            "dlp3d.face_start",
            "dlp3d.audio_start"
        ]
    );
    assert_eq!(recs[2]["dtype"], "float16");
    let bodies = recs
        .iter()
        .filter(|r| r["type"] == "dlp3d.motion_body")
        .count();
    assert!((18..=22).contains(&bodies), "{bodies} motion bodies");
    let sum = recs.last().unwrap();
    assert_eq!(
        (sum["complete"].as_bool(), sum["stopped"].as_str()),
        (Some(true), Some("streams ended"))
    );
    server.interrupt();
    let served = server.finish();
    assert_eq!(served.code, Some(0), "{}", served.stderr);

    // The Windows reader of the recording prints what the Linux reader does.
    let out = wine::same_run(
        BIN,
        &["dump", "-r", rec.to_str().unwrap(), "--frames"],
        "motion-stream",
        &["dump", "-r", &wine::path(&rec), "--frames"],
        false,
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().lines().count(),
        recs.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
