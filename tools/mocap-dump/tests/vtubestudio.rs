//! `mocap-dump --ask` against a VTube Studio phone emulated from the
//! documented protocol (DenchiSoft's VTubeStudioBlendshapeUDPReceiverTest:
//! README "Requesting tracking data", VTubeStudioUDPDataRequest.cs,
//! VTubeStudioRawTrackingData.cs): the phone streams one JSON datagram per
//! frame to the requester's address on each port it asked for, for `time`
//! seconds after the newest request, then stops. The emulator is written
//! here from those documents, not from our decoder.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::float_cmp,
    clippy::cast_precision_loss,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use mocap_core::vmc::{self, Message};
use mocap_testutil::Proc;

const BIN: &str = env!("CARGO_BIN_EXE_mocap-dump");

/// ARKit blendshapes as the app names them (its enum capitalises them).
const SHAPES: [&str; 4] = ["EyeBlinkLeft", "JawOpen", "MouthSmileRight", "BrowInnerUp"];

/// The value of `shape` in frame `k`: a quarter step, exact in f32.
fn value(k: u64, shape: usize) -> f32 {
    ((k + shape as u64) % 5) as f32 / 4.0
}

/// Frame `k`'s datagram, with the reference class's member names.
fn frame(k: u64, t0_ms: u64) -> Vec<u8> {
    let shapes: Vec<serde_json::Value> = SHAPES
        .iter()
        .enumerate()
        .map(|(i, n)| serde_json::json!({"k": n, "v": value(k, i)}))
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "Timestamp": t0_ms + k * 1000 / 60,
        "Hotkey": -1,
        "FaceFound": true,
        "Rotation": {"x": 1.0, "y": 2.0, "z": 3.0},
        "Position": {"x": 0.0, "y": 0.0, "z": 30.0},
        "EyeLeft": {"x": 0.0, "y": 0.0, "z": 0.0},
        "EyeRight": {"x": 0.0, "y": 0.0, "z": 0.0},
        "BlendShapes": shapes,
    }))
    .unwrap()
}

/// What the phone did: when each frame went out, and each request's time.
struct Phone {
    sends: Vec<Instant>,
    requests: usize,
    times: Vec<f64>,
}

/// The phone: answers requests on `socket`, streams at 60 Hz while the
/// newest request's `time` has not run out, until `stop`.
fn phone(socket: UdpSocket, stop: Arc<AtomicBool>) -> Phone {
    socket
        .set_read_timeout(Some(Duration::from_millis(2)))
        .unwrap();
    let mut out = Phone {
        sends: Vec::new(),
        requests: 0,
        times: Vec::new(),
    };
    let mut asked: Option<(Instant, f64, Vec<SocketAddr>)> = None;
    let mut next = Instant::now();
    let mut k = 0;
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = socket.recv_from(&mut buf) {
            // Other apps' requests (iFacialMocap's) are not JSON: ignored.
            if let Ok(r) = serde_json::from_slice::<serde_json::Value>(&buf[..n])
                && r["messageType"] == "iOSTrackingDataRequest"
            {
                let time = r["time"].as_f64().unwrap();
                let to = r["ports"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        SocketAddr::new(from.ip(), u16::try_from(p.as_u64().unwrap()).unwrap())
                    })
                    .collect();
                out.requests += 1;
                out.times.push(time);
                asked = Some((Instant::now(), time, to));
            }
        }
        let now = Instant::now();
        if let Some((at, time, to)) = &asked
            && now.duration_since(*at).as_secs_f64() < *time
            && now >= next
        {
            let d = frame(k, 1_765_000_000_000);
            for a in to {
                socket.send_to(&d, a).unwrap();
            }
            out.sends.push(now);
            k += 1;
            next += Duration::from_micros(16_667);
            if next < now {
                next = now;
            }
        }
    }
    out
}

/// The blendshape values of each VMC frame (frames end with Apply), by
/// ARKit name.
fn vmc_frames(datagrams: &[Vec<u8>]) -> Vec<Vec<(String, f32)>> {
    let messages: Vec<Message> = datagrams
        .iter()
        .flat_map(|d| vmc::decode(d).unwrap())
        .map(Result::unwrap)
        .collect();
    messages
        .split_inclusive(|m| *m == Message::BlendApply)
        .filter(|f| f.last() == Some(&Message::BlendApply))
        .map(|f| {
            f.iter()
                .filter_map(|m| match m {
                    Message::BlendVal { name, value } => Some((name.clone(), *value)),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// The check: 20 s of asking keeps the phone streaming without a
/// gap, every frame reaches VMC once with its blendshapes as sent, and the
/// phone stops within `time` of mocap-dump stopping.
#[test]
fn asking_keeps_the_phone_streaming_and_every_frame_reaches_vmc() {
    let phone_socket = UdpSocket::bind("127.0.0.3:0").unwrap();
    let phone_at = phone_socket.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let emulator = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || phone(phone_socket, stop))
    };
    let vmc_rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let vmc_at = vmc_rx.local_addr().unwrap();
    vmc_rx
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let reader = thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 65_536];
        let mut quiet_since = Instant::now();
        // Until 4 s without a datagram: the tool has stopped.
        while quiet_since.elapsed() < Duration::from_secs(4) {
            if let Ok(n) = vmc_rx.recv(&mut buf) {
                got.push(buf[..n].to_vec());
                quiet_since = Instant::now();
            }
        }
        got
    });
    // A free port for the tool to listen on (freed again at once).
    let listen = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let t = Proc::spawn(
        BIN,
        &[
            "-l",
            &listen.to_string(),
            "--ask",
            &phone_at.to_string(),
            "--vmc",
            &vmc_at.to_string(),
            "--duration",
            "20s",
        ],
        None,
    );
    let run = t.finish_within(Duration::from_secs(30));
    let ended = Instant::now();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let got = reader.join().unwrap();
    // The phone has had more than `time` (3 s) without a request by now.
    stop.store(true, Ordering::Relaxed);
    let phone = emulator.join().unwrap();

    assert!(phone.requests >= 18, "{} requests in 20 s", phone.requests);
    assert!(phone.times.iter().all(|t| *t == 3.0), "{:?}", phone.times);
    // Streaming without a gap while asked: 60 Hz, no step over 100 ms.
    let sends = &phone.sends;
    let first = sends[0];
    let while_asked: Vec<&Instant> = sends.iter().take_while(|s| **s <= ended).collect();
    let steps = while_asked.windows(2).map(|w| w[1].duration_since(*w[0]));
    let longest = steps.max().unwrap();
    assert!(longest < Duration::from_millis(100), "a gap of {longest:?}");
    let span = while_asked.last().unwrap().duration_since(first);
    assert!(span > Duration::from_secs(19), "streamed for {span:?}");
    // The phone stops within `time` of the last request (mocap-dump's end).
    let last = *sends.last().unwrap();
    assert!(
        last <= ended + Duration::from_millis(3_200),
        "the phone sent {:?} after mocap-dump ended",
        last.saturating_duration_since(ended)
    );
    assert!(last > ended, "the phone stopped before its time ran out");

    // Every frame mocap-dump received went to VMC once, values as sent.
    let frames = vmc_frames(&got);
    eprintln!(
        "{} requests, {} frames sent while asked over {span:?}, longest step {longest:?}, \
         {} VMC frames, the phone's last frame {:?} after mocap-dump ended",
        phone.requests,
        while_asked.len(),
        frames.len(),
        last.duration_since(ended)
    );
    let received = while_asked.len();
    assert!(
        frames.len() + 3 >= received && frames.len() <= received,
        "{} VMC frames of {received} sent while mocap-dump ran",
        frames.len()
    );
    for (k, f) in frames.iter().enumerate() {
        let k = k as u64;
        let want: Vec<(String, f32)> = SHAPES
            .iter()
            .enumerate()
            .map(|(i, n)| {
                // ARKit's own spelling, as the bridge writes it by default.
                let mut name = n.to_string();
                name[..1].make_ascii_lowercase();
                (name, value(k, i))
            })
            .collect();
        let mut f = f.clone();
        f.sort_by(|a, b| a.0.cmp(&b.0));
        let mut want = want;
        want.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(f, want, "frame {k}");
    }
}
