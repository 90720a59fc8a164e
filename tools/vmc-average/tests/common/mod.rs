//! Loopback VMC senders and receivers shared by this tool's test files.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    dead_code,
    reason = "test code: a panic is how a test reports; each file uses a part"
)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mocap_core::osc;
use mocap_core::vmc::{self, Message};

pub(crate) fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) fn frame(head_deg: f32, t: f32) -> Vec<Vec<u8>> {
    let h = head_deg.to_radians() / 2.0;
    let f = vec![
        Message::BonePos {
            name: "Head".into(),
            pos: [0.0, head_deg / 100.0, 0.0],
            rot: [0.0, h.sin(), 0.0, h.cos()],
        },
        Message::BonePos {
            name: "Hips".into(),
            pos: [0.0, 0.9, 0.0],
            rot: [0.0, 0.0, 0.0, 1.0],
        },
        Message::BlendVal {
            name: "Joy".into(),
            value: head_deg / 100.0,
        },
        Message::BlendApply,
        Message::Available {
            loaded: 1,
            calibration: None,
            tracking: None,
        },
        Message::Time(t),
    ];
    vmc::frame_datagrams(&f, vmc::MAX_BUNDLE).unwrap()
}

/// A sender of frames at 50 Hz until told to stop; `head` may change while it runs.
pub(crate) struct Sender {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

pub(crate) fn sender(from: &str, to: SocketAddr, head: f32, junk: bool) -> Sender {
    let socket = UdpSocket::bind(from).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let handle = thread::spawn(move || {
        let mut i = 0u32;
        while !flag.load(Ordering::SeqCst) {
            for d in frame(head, i as f32) {
                let _ = socket.send_to(&d, to);
            }
            if junk && i.is_multiple_of(3) {
                let _ = socket.send_to(b"\x00garbage", to);
                let mut bomb = osc::message(&osc::Message::new("/x", vec![])).unwrap();
                for _ in 0..3000 {
                    let mut b = b"#bundle\0\0\0\0\0\0\0\0\x01".to_vec();
                    b.extend_from_slice(&(bomb.len() as i32).to_be_bytes());
                    b.extend_from_slice(&bomb);
                    bomb = b;
                }
                let _ = socket.send_to(&bomb, to);
            }
            i += 1;
            thread::sleep(Duration::from_millis(20));
        }
    });
    Sender { stop, handle }
}

impl Sender {
    pub(crate) fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        self.handle.join().unwrap();
    }
}

pub(crate) fn receiver() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    s
}

/// Mixed frames received during `for_`, as message lists per datagram.
pub(crate) fn receive(rx: &UdpSocket, for_: Duration) -> Vec<Message> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65_535];
    let start = Instant::now();
    while start.elapsed() < for_ {
        if let Ok((n, _)) = rx.recv_from(&mut buf) {
            out.extend(
                vmc::decode(&buf[..n])
                    .unwrap()
                    .into_iter()
                    .map(Result::unwrap),
            );
        }
    }
    out
}

pub(crate) fn last_head(msgs: &[Message]) -> f32 {
    msgs.iter()
        .rev()
        .find_map(|m| match m {
            Message::BonePos { name, rot, .. } if name == "Head" => {
                Some(2.0 * rot[1].atan2(rot[3]).to_degrees())
            }
            _ => None,
        })
        .expect("a Head bone in the output")
}
