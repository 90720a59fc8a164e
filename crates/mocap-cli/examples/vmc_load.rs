//! Benchmark helper for `scripts/bench-average.sh`: N VMC senders at F frames
//! per second, each frame one bundle of all 55 bones plus expressions (as
//! VSeeFace sends), `/VMC/Ext/T` carrying the send time; and a receiver that
//! reports how long after it was sent each new T first arrived in a mixed frame.
//!
//! `vmc_load TARGET SENDERS FPS SECONDS RECEIVE_ADDR`

#![allow(
    missing_docs,
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "a benchmark helper run by hand"
)]

use std::net::{SocketAddr, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use mocap_core::vmc::{self, HUMAN_BODY_BONES, Message};

fn main() -> anyhow::Result<()> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let [target, senders, fps, secs, recv] = a.as_slice() else {
        anyhow::bail!("usage: vmc_load TARGET SENDERS FPS SECONDS RECEIVE_ADDR");
    };
    let target: SocketAddr = target.parse()?;
    let (senders, fps, secs): (usize, f64, f64) = (senders.parse()?, fps.parse()?, secs.parse()?);
    let rx = UdpSocket::bind(recv.as_str())?;
    rx.set_read_timeout(Some(Duration::from_millis(200)))?;
    let epoch = Instant::now();
    let frames = (fps * secs) as u64;
    let mut handles = Vec::new();
    for s in 0..senders {
        handles.push(thread::spawn(move || {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            for i in 0..frames {
                let due = epoch + Duration::from_secs_f64(i as f64 / fps);
                if let Some(wait) = due.checked_duration_since(Instant::now()) {
                    thread::sleep(wait);
                }
                let mut f: Vec<Message> = HUMAN_BODY_BONES
                    .iter()
                    .map(|b| Message::BonePos {
                        name: (*b).into(),
                        pos: [0.0, 0.1, 0.0],
                        rot: [0.0, (s as f32) * 0.01, 0.0, 1.0],
                    })
                    .collect();
                for n in vmc::VRM0_PRESETS {
                    f.push(Message::BlendVal {
                        name: n.into(),
                        value: 0.5,
                    });
                }
                f.push(Message::BlendApply);
                f.push(Message::Available {
                    loaded: 1,
                    calibration: None,
                    tracking: None,
                });
                f.push(Message::Time(epoch.elapsed().as_secs_f32()));
                for d in vmc::frame_datagrams(&f, 65_000).unwrap() {
                    let _ = socket.send_to(&d, target);
                }
            }
        }));
    }
    let mut lat = Vec::new();
    // A tick re-sends the latest frame when nothing newer came; only the first
    // mixed frame carrying a given T measures how long that frame took.
    let mut seen = std::collections::HashSet::new();
    let mut buf = vec![0u8; 65_535];
    let end = epoch + Duration::from_secs_f64(secs + 1.0);
    while Instant::now() < end {
        if let Ok((n, _)) = rx.recv_from(&mut buf) {
            let now = epoch.elapsed().as_secs_f64();
            if let Ok(ms) = vmc::decode(&buf[..n]) {
                for m in ms.into_iter().flatten() {
                    if let Message::Time(t) = m
                        && seen.insert(t.to_bits())
                    {
                        lat.push(((now - f64::from(t)) * 1e6) as u64);
                    }
                }
            }
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    lat.sort_unstable();
    let p = |q: f64| {
        lat.get(((q * lat.len() as f64) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "{{\"senders\":{senders},\"fps\":{fps},\"frames_per_sender\":{frames},\"mixed_frames_received\":{},\"latency_us\":{{\"p50\":{},\"p99\":{}}}}}",
        lat.len(),
        p(0.5),
        p(0.99)
    );
    Ok(())
}
