//! The viewer page in headless Chromium: `serve` gets VMC frames on
//! loopback, the page (driven by playwright-core), opened with the server's
//! `--token` in its URL, connects with it, counts frames,
//! and a screenshot is saved as a test artefact in
//! `target/test-artefacts/motion-stream-viewer.png`. Needs
//! `npm ci --prefix scripts/js` and Debian's `chromium`, so `cargo test`
//! lists it as ignored; `scripts/test-all.sh` installs both and runs it.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use mocap_core::vmc::{self, Message as Vmc};
use mocap_testutil::Proc;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_motion-stream");
const RAISE_DEG: f32 = 50.0;
const JAW: f32 = 0.7;

#[test]
#[ignore = "needs chromium + playwright-core: scripts/test-all.sh"]
fn the_viewer_draws_frames_in_headless_chromium() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let js = root.join("scripts/js");
    assert!(
        js.join("node_modules/playwright-core").exists(),
        "playwright-core is not installed: run `npm ci --prefix scripts/js` (scripts/test-all.sh does)"
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        Path::new(&chromium).exists(),
        "{chromium} is missing: install Debian's chromium (scripts/test-all.sh does)"
    );
    let mut server = Proc::spawn(
        BIN,
        &[
            "serve",
            "-l",
            "127.0.0.1:0",
            "--vmc",
            "127.0.0.1:0",
            "--segment",
            "2s",
            // A browser page that was given the token: it loads with it in
            // its URL and opens its stream with it.
            "--token",
            "viewer-T0k",
        ],
        None,
    );
    let (_, http) = server.log_line("(ws");
    let (_, udp) = server.log_line("(VMC");
    let (http, udp) = (http.unwrap(), udp.unwrap());
    // A left arm raised 50° and a jaw open at 0.7, at 60 fps, until the
    // browser is done: a steady pose, so the test can check what is drawn.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sender = {
        let done = std::sync::Arc::clone(&done);
        thread::spawn(move || {
            let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
            let start = Instant::now();
            // Until the browser is done (the node script gives up after 60 s).
            for k in 0..60 * 70u32 {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let t = k as f32 / 60.0;
                let (s, c) = (RAISE_DEG.to_radians() / 2.0).sin_cos();
                let messages = vec![
                    Vmc::BonePos {
                        name: "Hips".into(),
                        pos: [0.0, 0.95, 0.0],
                        rot: [0.0, 0.0, 0.0, 1.0],
                    },
                    // Left arm raised about −Z (Unity: the avatar's left is −X).
                    Vmc::BonePos {
                        name: "LeftUpperArm".into(),
                        pos: [0.0; 3],
                        rot: [0.0, 0.0, -s, c],
                    },
                    Vmc::BlendVal {
                        name: "jawOpen".into(),
                        value: JAW,
                    },
                    Vmc::BlendVal {
                        name: "eyeBlinkLeft".into(),
                        value: 0.2,
                    },
                    Vmc::BlendApply,
                    Vmc::Time(t),
                ];
                for d in vmc::frame_datagrams(&messages, vmc::MAX_BUNDLE).unwrap() {
                    tx.send_to(&d, udp).unwrap();
                }
                let due = start + Duration::from_secs_f64(f64::from(k + 1) / 60.0);
                if let Some(w) = due.checked_duration_since(Instant::now()) {
                    thread::sleep(w);
                }
            }
        })
    };
    let artefacts = root.join("target/test-artefacts");
    std::fs::create_dir_all(&artefacts).unwrap();
    let shot = artefacts.join("motion-stream-viewer.png");
    let _ = std::fs::remove_file(&shot);
    let run = Command::new("node")
        .arg(js.join("viewer-test.mjs"))
        .arg(format!("http://{http}/?token=viewer-T0k"))
        .arg(&shot)
        // More than one 2 s clip: the page reconnects after each End.
        .arg("75")
        .env("CHROMIUM", &chromium)
        .output()
        .expect("node runs");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    sender.join().unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "viewer test failed: {}\n{out}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stats: Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    assert!(stats["motionFrames"].as_u64().unwrap() >= 75, "{stats}");
    assert!(stats["faceFrames"].as_u64().unwrap() >= 75, "{stats}");
    assert!(stats["connections"].as_u64().unwrap() >= 2, "{stats}");
    assert_eq!(stats["errors"], 0, "{stats}");
    assert_eq!(
        stats["page_errors"].as_array().map(Vec::len),
        Some(0),
        "{stats}"
    );
    // What the page drew: the arm at the angle sent (the front view shows
    // the avatar's left on our right, raised above horizontal), and bars at
    // the blendshape values sent (float32 bodies).
    let drawn = &stats["drawn"];
    let arm = drawn["leftUpperArmDeg"].as_f64().unwrap();
    assert!((arm - f64::from(RAISE_DEG)).abs() < 0.5, "{drawn}");
    let bar = |name: &str| drawn["bars"][name].as_f64().unwrap();
    assert!((bar("jawOpen") - f64::from(JAW)).abs() < 1e-6, "{drawn}");
    assert!((bar("eyeBlinkLeft") - 0.2).abs() < 1e-6, "{drawn}");
    assert!(
        std::fs::metadata(&shot).unwrap().len() > 5_000,
        "no screenshot"
    );
    server.interrupt();
    let done = server.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    assert!(done.stderr.contains("clients served"), "{}", done.stderr);
}
