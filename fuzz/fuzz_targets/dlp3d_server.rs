//! The DLP3D server session (`dlp3d::server::Session`, what `motion-stream
//! serve` runs) under any sequence of events: clients joining, VMC frames
//! with any bones, blendshapes and values from two senders, datagrams of any
//! bytes, time passing, timeouts, connections gone, queues refusing a message
//! (between actions or in the middle of them, as the tool's queue does), the
//! server stopping; any rig, dtype, learning, idle and segment times, sender
//! clock, audio.
//!
//! Asserted: each client's messages, in the order they come out, are a
//! stream the web client accepts (`dlp3d::Decoder`: request id first, Starts
//! before bodies, whole frames, nothing after the Ends); nothing is sent to
//! a client after its close, its refusal or its end; each client ends once,
//! with the motion frames it was sent (a dropped one: at least those), and a
//! normal end of a streaming client comes after its three Ends; when the
//! server stops every client has ended. `served + clients` equals the joins
//! and `dropped` the ends marked dropped; after a timeout is handled the
//! next deadline is in the future (no spinning).
#![no_main]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::dlp3d::server::{Action, ClientId, Config, Refusal, Session};
use mocap_core::dlp3d::{Decoder, Dtype, Event, Rig, Stream};
use mocap_core::vmc::{self, HUMAN_BODY_BONES, MAX_BUNDLE, Message};
use mocap_fuzz::Bytes;

const NAMES: [&str; 4] = ["jawOpen", "eyeBlinkLeft", "A", "Joy"];

/// What a client has been sent so far.
#[derive(Default)]
struct Client {
    decoder: Decoder,
    motion_frames: u64,
    started: bool,
    closed: bool,
    refused: bool,
    ended: bool,
}

struct Model {
    clients: HashMap<ClientId, Client>,
    /// A client whose next message the "queue" refuses, and how.
    refuse_next: Option<(ClientId, Refusal)>,
    dropped: u64,
}

impl Model {
    /// Polls every action, checking each; a refusal in the middle goes back
    /// to the session as the tool's `act` does.
    fn drain(&mut self, s: &mut Session) {
        while let Some(a) = s.poll_action() {
            match a {
                Action::Send { client, message } => {
                    let c = self.clients.get_mut(&client).expect("a message for a client that never joined");
                    assert!(!c.ended && !c.closed && !c.refused, "a message for client {client} after its end, close or refusal");
                    if let Some((_, why)) = self.refuse_next.take_if(|(id, _)| *id == client) {
                        c.refused = true;
                        s.handle_refused(client, why, 8);
                        continue;
                    }
                    let e = c.decoder.decode(&message).unwrap_or_else(|e| panic!("client {client} cannot read its stream: {e}"));
                    match e {
                        Event::MotionStart { .. } => c.started = true,
                        Event::Body { stream: Stream::Motion, frames, .. } => c.motion_frames += frames as u64,
                        _ => {}
                    }
                }
                Action::Close { client, .. } => {
                    let c = self.clients.get_mut(&client).expect("a close for a client that never joined");
                    assert!(!c.ended && !c.closed && !c.refused, "client {client} closed twice or after its end");
                    c.closed = true;
                }
                Action::Ended(e) => {
                    let c = self.clients.get_mut(&e.client).expect("the end of a client that never joined");
                    assert!(!c.ended, "client {} ended twice", e.client);
                    c.ended = true;
                    if e.dropped == Some(true) {
                        self.dropped += 1;
                    }
                    if e.dropped.is_some() {
                        assert!(e.frames >= c.motion_frames, "{e:?}: {} frames were sent", c.motion_frames);
                    } else {
                        assert_eq!(e.frames, c.motion_frames, "{e:?}");
                    }
                    if e.seconds.is_some() && c.started {
                        assert!(c.decoder.finished(), "client {} ended normally without its Ends", e.client);
                    }
                }
                Action::Log(_) => {}
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let (Some(flags), Some(learn), Some(idle), Some(segment)) = (b.u8(), b.u8(), b.u8(), b.u8()) else {
        return;
    };
    let ms = |v: u8, by: u64| Duration::from_millis(u64::from(v) * by);
    let cfg = Config {
        rig: if flags & 1 != 0 { Rig::humanoid() } else { Rig::parse("Hips\nSpine\nHead\n").expect("a rig") },
        restpose: "rest".into(),
        dtype: if flags & 2 != 0 { Dtype::F32 } else { Dtype::F16 },
        blendshapes: (flags & 4 != 0).then(|| NAMES[..2].iter().map(|n| (*n).to_owned()).collect()),
        learn: ms(learn, 4),
        idle: ms(idle, 4),
        segment: (flags & 8 != 0).then(|| ms(segment, 8)),
        sender_clock: flags & 16 != 0,
        audio: (flags & 32 != 0).then(|| Arc::new((0..3000).map(|i| (i * 37 % 2000) as i16).collect())),
    };
    let mut s = Session::new(cfg);
    let mut m = Model { clients: HashMap::new(), refuse_next: None, dropped: 0 };
    let mut now = Duration::ZERO;
    let mut joins: ClientId = 0;
    let mut frame: Vec<Message> = Vec::new();
    let senders: [SocketAddr; 2] = ["127.0.0.1:5000".parse().expect("addr"), "127.0.0.2:5000".parse().expect("addr")];
    while let Some(op) = b.u8() {
        let high = op / 8;
        match op % 8 {
            0 => {
                let Some(d) = b.take::<2>() else { break };
                now += Duration::from_micros(u64::from(u16::from_le_bytes(d)) * 50);
            }
            1 => {
                joins += 1;
                m.clients.insert(joins, Client::default());
                s.handle_join(now, joins);
            }
            2 => {
                let (Some(i), Some(pos), Some(rot)) = (b.u8(), b.f32s::<3>(), b.f32s::<4>()) else { break };
                let name = HUMAN_BODY_BONES[usize::from(i) % HUMAN_BODY_BONES.len()];
                frame.push(Message::BonePos { name: name.into(), pos, rot });
            }
            3 => {
                let Some(value) = b.f32() else { break };
                frame.push(Message::BlendVal { name: NAMES[usize::from(high) % NAMES.len()].into(), value });
            }
            4 => {
                frame.push(match high % 3 {
                    0 => {
                        let Some(t) = b.f32() else { break };
                        Message::Time(t)
                    }
                    1 => Message::Available { loaded: 1, calibration: None, tracking: None },
                    _ => Message::BlendApply,
                });
                let src = senders[usize::from(high / 3) % 2];
                if let Ok(datagrams) = vmc::frame_datagrams(&frame, MAX_BUNDLE) {
                    for d in datagrams {
                        s.handle_vmc(now, src, &d);
                    }
                }
                frame.clear();
            }
            5 => {
                let Some(n) = b.u8() else { break };
                let d = b.bytes(usize::from(n));
                s.handle_vmc(now, senders[usize::from(high) % 2], d);
            }
            6 => {
                if s.poll_timeout().is_some_and(|t| t <= now) || high & 1 == 0 {
                    s.handle_timeout(now);
                    assert!(s.poll_timeout().is_none_or(|t| t > now), "due again at once: it would spin");
                }
            }
            _ => {
                let Some(k) = b.u8() else { break };
                let client = ClientId::from(k) % (joins + 1);
                let why = if high & 4 != 0 { Refusal::Full } else { Refusal::Gone };
                match high % 4 {
                    0 => s.handle_gone(client),
                    1 => {
                        if let Some(c) = m.clients.get_mut(&client) {
                            c.refused = true;
                        }
                        s.handle_refused(client, why, 8);
                    }
                    2 => m.refuse_next = Some((client, why)),
                    _ => s.close_all(now, "stopping"),
                }
            }
        }
        m.drain(&mut s);
        let st = s.stats();
        assert_eq!(st.served + st.clients as u64, joins, "{st:?}");
        assert_eq!(st.dropped, m.dropped, "{st:?}");
    }
    s.close_all(now, "stopping");
    m.refuse_next = None;
    m.drain(&mut s);
    assert!(m.clients.values().all(|c| c.ended), "a client never ended");
    assert_eq!(s.stats().clients, 0);
});
