//! Load for `motion-stream serve` (used by `scripts/bench-stream.sh`): N
//! WebSocket clients that count what they receive, and one VMC sender with a
//! full rig (55 bones, 52 blendshapes) whose `/VMC/Ext/T` advances 1/30 s per
//! frame, sent at `--rate` frames per second (0: as fast as possible).
//!
//!   load WS_URL VMC_ADDR CLIENTS FRAMES RATE
//!
//! Prints one JSON line: frames sent, per-client frames received and the
//! slowest client's frames per second.

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "a benchmark driver run by hand"
)]

use std::net::{TcpStream, UdpSocket};
use std::thread;
use std::time::{Duration, Instant};

use mocap_core::dlp3d::{self, Event, Request, class};
use mocap_core::vmc::{self, HUMAN_BODY_BONES, Message as Vmc};
use prost::Message as _;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, vmc_addr, clients, frames, rate] = args.as_slice() else {
        panic!("usage: load WS_URL VMC_ADDR CLIENTS FRAMES RATE");
    };
    let clients: usize = clients.parse().unwrap();
    let frames: u32 = frames.parse().unwrap();
    let rate: f64 = rate.parse().unwrap();
    let host = url
        .strip_prefix("ws://")
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_owned();
    let readers: Vec<_> = (0..clients)
        .map(|_| {
            let (url, host) = (url.clone(), host.clone());
            thread::spawn(move || {
                let tcp = TcpStream::connect(&host).unwrap();
                tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                let (mut ws, _) = tungstenite::client(url.as_str(), tcp).unwrap();
                let start = Request {
                    class_name: class::DIRECT_GENERATION.into(),
                    app_name: "babylon".into(),
                    ..Request::default()
                };
                ws.send(tungstenite::Message::Binary(start.encode_to_vec().into()))
                    .unwrap();
                let mut d = dlp3d::Decoder::new();
                let (mut n, mut first, mut last) = (0u64, None, Instant::now());
                while let Ok(m) = ws.read() {
                    if let tungstenite::Message::Binary(b) = m {
                        if let Ok(Event::Body {
                            stream: dlp3d::Stream::Motion,
                            frames,
                            ..
                        }) = d.decode(&b)
                        {
                            n += frames as u64;
                            first.get_or_insert_with(Instant::now);
                            last = Instant::now();
                        }
                        if d.finished() {
                            break;
                        }
                    }
                }
                let secs = first.map_or(0.0, |f| last.duration_since(f).as_secs_f64());
                (n, secs)
            })
        })
        .collect();
    // Let every client join before the input starts.
    thread::sleep(Duration::from_millis(500));
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut messages: Vec<Vmc> = HUMAN_BODY_BONES
        .iter()
        .map(|b| Vmc::BonePos {
            name: (*b).into(),
            pos: [0.0, 0.1, 0.0],
            rot: [0.0, 0.0, 0.0, 1.0],
        })
        .collect();
    messages.extend(mocap_core::ifm::ARKIT.iter().map(|n| Vmc::BlendVal {
        name: (*n).into(),
        value: 0.0,
    }));
    messages.push(Vmc::BlendApply);
    messages.push(Vmc::Available {
        loaded: 1,
        calibration: None,
        tracking: None,
    });
    messages.push(Vmc::Time(0.0));
    let sent_at = Instant::now();
    for k in 0..frames {
        let t = k as f32 / 30.0;
        let (s, c) = (t.sin() * 0.3, (1.0 - (t.sin() * 0.3).powi(2)).sqrt());
        for m in &mut messages {
            match m {
                Vmc::BonePos { rot, .. } => *rot = [s, 0.0, 0.0, c],
                Vmc::BlendVal { value, .. } => *value = 0.5 + 0.5 * t.sin(),
                Vmc::Time(x) => *x = t,
                _ => {}
            }
        }
        for d in vmc::frame_datagrams(&messages, vmc::MAX_BUNDLE).unwrap() {
            tx.send_to(&d, vmc_addr.as_str()).unwrap();
        }
        if rate > 0.0 {
            let due = sent_at + Duration::from_secs_f64(f64::from(k + 1) / rate);
            if let Some(w) = due.checked_duration_since(Instant::now()) {
                thread::sleep(w);
            }
        } else if k % 64 == 63 {
            // Leave the kernel's UDP buffer room to drain.
            thread::sleep(Duration::from_micros(200));
        }
    }
    let send_secs = sent_at.elapsed().as_secs_f64();
    let results: Vec<(u64, f64)> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let slowest = results
        .iter()
        .map(|(n, s)| if *s > 0.0 { *n as f64 / s } else { 0.0 })
        .fold(f64::INFINITY, f64::min);
    println!(
        "{}",
        json!({
            "clients": clients, "frames_sent": frames, "send_s": (send_secs * 1000.0).round() / 1000.0,
            "frames_received": results.iter().map(|r| r.0).collect::<Vec<_>>(),
            "slowest_client_fps": slowest.round(),
        })
    );
}
