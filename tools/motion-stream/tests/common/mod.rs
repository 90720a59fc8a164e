//! VMC input for `motion-stream serve`, shared by this tool's test files.

#![allow(
    clippy::unwrap_used,
    dead_code,
    reason = "test code: a panic is how a test reports; each file uses a part"
)]

use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use mocap_core::vmc::{self, Message as Vmc};

pub(crate) fn about(axis: [f32; 3], deg: f32) -> [f32; 4] {
    let (s, c) = (deg.to_radians() / 2.0).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

/// VMC frame k: Hips 1 m up and k cm forward, Spine turning 1° per frame
/// about X, jawOpen k/100, then OK and T — as one sender would.
pub(crate) fn vmc_frame(k: u32) -> Vec<Vec<u8>> {
    let messages = vec![
        Vmc::BonePos {
            name: "Hips".into(),
            pos: [0.0, 1.0, 0.01 * k as f32],
            rot: [0.0, 0.0, 0.0, 1.0],
        },
        Vmc::BonePos {
            name: "Spine".into(),
            pos: [0.0, 0.1, 0.0],
            rot: about([1.0, 0.0, 0.0], k as f32),
        },
        Vmc::BlendVal {
            name: "jawOpen".into(),
            value: k as f32 / 100.0,
        },
        Vmc::BlendVal {
            name: "eyeBlinkLeft".into(),
            value: 0.5,
        },
        Vmc::BlendApply,
        Vmc::Available {
            loaded: 1,
            calibration: None,
            tracking: None,
        },
        Vmc::Time(k as f32 / 60.0),
    ];
    vmc::frame_datagrams(&messages, vmc::MAX_BUNDLE).unwrap()
}

/// Sends `frames` VMC frames at 60 fps from a thread.
pub(crate) fn send_vmc(to: SocketAddr, frames: u32) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let start = Instant::now();
        for k in 0..frames {
            let due = start + Duration::from_secs_f64(f64::from(k) / 60.0);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                thread::sleep(wait);
            }
            for d in vmc_frame(k) {
                tx.send_to(&d, to).unwrap();
            }
        }
    })
}
