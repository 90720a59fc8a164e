//! A Rokoko actor through the rest of the toolkit, real binaries on
//! loopback: `mocap-dump --vmc` sends the bundled Studio capture's actor as
//! VMC to `vmc-relay`, which turns it into VRChat OSC trackers, VMT trackers
//! and a BVH take, as it does for mocopi. The expected values are the
//! capture script's inputs worked out by hand (`captures/rokoko/make_capture.py`:
//! the hip at (0, 1 + 0.02 sin(2πk/60), 0.005k) m in Unity's frame, the left
//! arm raised from the T-pose to straight up over frames 0–90, the arm's rest
//! offsets), not our decoder's output.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    reason = "test code: a panic is how a test reports"
)]

use std::f64::consts::PI;
use std::net::UdpSocket;
use std::thread;
use std::time::Duration;

use mocap_core::osc;
use mocap_testutil::Proc;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-dump");
const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/rokoko/studio-60fps.pcap"
);
const FRAMES: usize = 180;

/// The script's hip position at frame `k` (metres, Unity's frame).
fn hip(k: usize) -> [f64; 3] {
    let k = k as f64;
    [0.0, 1.0 + 0.02 * (2.0 * PI * k / 60.0).sin(), 0.005 * k]
}

/// How far above the hip the left elbow is at frame `k`: spine 0.1, chest
/// 0.25, shoulder 0.15 up, then the upper arm's 0.28 turned up by the raise
/// (none of the body's turn about Y moves a height).
fn elbow_height(k: usize) -> f64 {
    let raised = (90.0 * k.min(90) as f64 / 90.0).to_radians();
    0.1 + 0.25 + 0.15 + 0.28 * raised.sin()
}

/// Which frame a hip position is of: its z grows 5 mm a frame.
fn frame_of(z: f64) -> usize {
    (z / 0.005).round() as usize
}

fn floats(args: &[osc::Arg]) -> Vec<f64> {
    args.iter()
        .filter_map(|a| match a {
            osc::Arg::Float(f) => Some(f64::from(*f)),
            _ => None,
        })
        .collect()
}

fn receiver() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(1500)))
        .unwrap();
    s
}

/// Every datagram until none comes for the read timeout.
fn drain(rx: UdpSocket) -> thread::JoinHandle<Vec<Vec<u8>>> {
    thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0; 65_536];
        while let Ok(n) = rx.recv(&mut buf) {
            got.push(buf[..n].to_vec());
        }
        got
    })
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn a_rokoko_actor_becomes_vrchat_and_vmt_trackers_and_a_bvh_take() {
    use mocap_core::bvh;
    let dir = std::env::temp_dir().join(format!("mocap-dump-rokoko-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let take = dir.join("actor.bvh");
    let (vrchat, vmt) = (receiver(), receiver());
    let (vrchat_at, vmt_at) = (vrchat.local_addr().unwrap(), vmt.local_addr().unwrap());
    let mut relay = Proc::spawn(
        &mocap_testutil::tool(BIN, "vmc-relay").display().to_string(),
        &[
            "-l",
            "127.0.0.1:0",
            "--to",
            &vrchat_at.to_string(),
            "--as",
            "vrchat",
            "--to",
            &vmt_at.to_string(),
            "--as",
            "vmt",
            "--bvh",
            take.to_str().unwrap(),
        ],
        None,
    );
    let (_, at) = relay.log_line("listening on");
    let at = at.unwrap();
    let (vrchat, vmt) = (drain(vrchat), drain(vmt));
    // At the capture's own timing (3 s): as a live suit would send.
    let dump = Proc::spawn(
        BIN,
        &["-r", CAPTURE, "--vmc", &at.to_string(), "--format", "json"],
        None,
    )
    .finish();
    assert_eq!(dump.code, Some(0), "{}", dump.stderr);
    let (vrchat, vmt) = (vrchat.join().unwrap(), vmt.join().unwrap());
    relay.interrupt();
    let run = relay.finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);

    // VRChat: a bundle per frame (the first teaches where frames end), the
    // hip tracker where the script put the hip, the left elbow its height
    // above it.
    assert!(
        vrchat.len() >= FRAMES - 3,
        "{} VRChat bundles",
        vrchat.len()
    );
    let mut raised_seen = false;
    for d in &vrchat {
        let packet = osc::decode(d).unwrap();
        let msgs = packet.messages();
        let pos = |slot: u8| {
            let address = format!("/tracking/trackers/{slot}/position");
            floats(&msgs.iter().find(|m| m.address == address).unwrap().args)
        };
        let (h, elbow) = (pos(1), pos(7));
        let k = frame_of(h[2]);
        let want = hip(k);
        for i in 0..3 {
            assert!(
                (h[i] - want[i]).abs() < 1e-5,
                "frame {k}: hip {h:?} vs {want:?}"
            );
        }
        let up = elbow[1] - h[1];
        assert!(
            (up - elbow_height(k)).abs() < 1e-4,
            "frame {k}: elbow {up} above the hip, want {}",
            elbow_height(k)
        );
        raised_seen |= k >= 90;
    }
    assert!(raised_seen, "frames with the arm up arrived");

    // VMT: the hip is tracker index 0, its position as VRChat's.
    assert!(vmt.len() >= FRAMES - 3, "{} VMT bundles", vmt.len());
    for d in &vmt {
        let packet = osc::decode(d).unwrap();
        let hips = packet
            .messages()
            .into_iter()
            .find(|m| m.args.first() == Some(&osc::Arg::Int(0)))
            .unwrap();
        assert_eq!(hips.address, "/VMT/Room/Unity");
        let f = floats(&hips.args);
        let k = frame_of(f[3]);
        let want = hip(k);
        for i in 0..3 {
            assert!(
                (f[1 + i] - want[i]).abs() < 1e-5,
                "frame {k}: VMT hip {f:?}"
            );
        }
    }

    // BVH: one take of every frame, at Studio's 60 fps, whose joints sit
    // where the script put them (BVH's mirrored centimetres).
    let take = bvh::parse(&std::fs::read_to_string(&take).unwrap()).unwrap();
    assert_eq!(take.frames_declared, take.frames.len() as u64);
    assert!(
        take.frames.len() >= FRAMES - 3,
        "{} frames",
        take.frames.len()
    );
    assert!(
        (take.frame_time - 1.0 / 60.0).abs() < 1e-4,
        "{}",
        take.frame_time
    );
    let world = |frame: usize, joint: &str| {
        mocap_testutil::humanoid::bvh_world(&take, frame)
            .into_iter()
            .find(|(n, _)| n == joint)
            .unwrap_or_else(|| panic!("no {joint}"))
            .1
    };
    for frame in [1, 45, take.frames.len() - 1] {
        let h = world(frame, "Hips");
        let k = frame_of(h[2] / 100.0);
        let want = hip(k);
        assert!(
            (-h[0] / 100.0 - want[0]).abs() < 1e-4,
            "BVH frame {frame}: {h:?}"
        );
        assert!(
            (h[1] / 100.0 - want[1]).abs() < 1e-4,
            "BVH frame {frame}: {h:?}"
        );
        let up = (world(frame, "LeftLowerArm")[1] - h[1]) / 100.0;
        assert!(
            (up - elbow_height(k)).abs() < 1e-3,
            "BVH frame {frame}: elbow {up}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
