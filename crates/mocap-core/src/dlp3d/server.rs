//! The DLP3D server session, I/O-free (quinn's rule): clients join, VMC
//! datagrams arrive, time passes; out come the messages to queue for each
//! client, closes, and the records of clients whose stream ended. The tool
//! moves bytes and reports what it could not queue; the session decides.
//!
//! A client that joins gets its request id and `NormalResponse`, then the
//! three Starts once the input is live and its blendshape names are known
//! (fixed, or learnt over [`Config::learn`] of input); then one motion, face
//! and audio body per 30 fps frame. Its stream ends — three Ends and a close
//! — when the input stops for [`Config::idle`], after [`Config::segment`],
//! or when the server stops. A client whose queue is full is dropped
//! ([`Refusal::Full`]); one whose connection went is ended quietly.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::{
    AUDIO_CHANNELS, AUDIO_RATE, AUDIO_WIDTH, Dtype, FPS, Live, Pose, Rig, Stream, audio_body,
    audio_start, encode_response, end, face_body, face_start, motion_body, motion_frame_len,
    motion_start, normal, request_id, samples_before_frame, samples_for_frame,
};
use crate::vmc;

/// What the server streams and when.
#[derive(Clone, Debug)]
pub struct Config {
    /// Joint names and rest rotations.
    pub rig: Rig,
    /// The rest pose id announced in MotionChunkStart.
    pub restpose: String,
    /// Scalar type of bodies.
    pub dtype: Dtype,
    /// Fixed blendshape names; `None` learns them from the input.
    pub blendshapes: Option<Vec<String>>,
    /// Input time before learnt names are taken as complete.
    pub learn: Duration,
    /// Input silence after which streams end.
    pub idle: Duration,
    /// End each client's stream after this much motion.
    pub segment: Option<Duration>,
    /// Time frames by the first sender's `/VMC/Ext/T` instead of arrival.
    pub sender_clock: bool,
    /// 16 kHz mono PCM streamed as the audio track (silence after it).
    pub audio: Option<Arc<Vec<i16>>>,
}

/// A client, as the tool numbers its connections.
pub type ClientId = u64;

/// One message for one client: protobuf bytes, shared between clients
/// that get the same body.
pub type Payload = Arc<[u8]>;

/// Why a message could not be queued for a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Its queue is full: the client reads too slowly.
    Full,
    /// Its connection has gone.
    Gone,
}

/// What the session asks of the tool, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Queue `message` for `client`; report a failure with [`Session::handle_refused`].
    Send {
        /// The client.
        client: ClientId,
        /// The protobuf bytes of one WebSocket binary message.
        message: Payload,
    },
    /// Close `client`'s WebSocket normally, after what is queued.
    Close {
        /// The client.
        client: ClientId,
        /// The close reason.
        reason: String,
    },
    /// A client's stream ended: its record.
    Ended(Ended),
    /// Something for the log.
    Log(String),
}

/// How a client's stream ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Ended {
    /// The client.
    pub client: ClientId,
    /// Motion frames it was sent.
    pub frames: u64,
    /// Seconds from its Starts (or join) to a normal end; `None` otherwise.
    pub seconds: Option<f64>,
    /// Why.
    pub reason: String,
    /// `Some(true)` when dropped for reading too slowly, `Some(false)` for a
    /// connection that went while sending; `None` for a normal end.
    pub dropped: Option<bool>,
}

/// Counters for summaries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Clients connected now.
    pub clients: usize,
    /// Clients whose stream ended.
    pub served: u64,
    /// Clients dropped for reading too slowly.
    pub dropped: u64,
    /// 30 fps frames produced.
    pub frames_out: u64,
    /// VMC sender frames taken.
    pub vmc_frames: u64,
    /// VMC datagrams or messages that did not decode.
    pub decode_errors: u64,
    /// Blendshape names known.
    pub blendshapes: usize,
}

#[derive(Debug)]
struct Client {
    id: ClientId,
    /// Blendshape count of its FaceChunkStart, once streaming.
    streaming: Option<usize>,
    /// Motion frames sent so far (also the audio position).
    frames: u64,
    since: Duration,
}

/// The server's state; see the module documentation.
#[derive(Debug)]
pub struct Session {
    cfg: Config,
    live: Live,
    clients: Vec<Client>,
    last_input: Option<Duration>,
    /// When the current run of input began.
    input_since: Option<Duration>,
    clock_source: Option<SocketAddr>,
    sender_time: Option<f64>,
    served: u64,
    dropped: u64,
    frames_out: u64,
    decode_errors: u64,
    actions: VecDeque<Action>,
}

fn encode(r: &super::Response) -> Payload {
    encode_response(r).into()
}

impl Session {
    /// A server with no clients and no input yet.
    pub fn new(cfg: Config) -> Self {
        Self {
            live: Live::new(cfg.rig.clone(), cfg.blendshapes.clone()),
            cfg,
            clients: Vec::new(),
            last_input: None,
            input_since: None,
            clock_source: None,
            sender_time: None,
            served: 0,
            dropped: 0,
            frames_out: 0,
            decode_errors: 0,
            actions: VecDeque::new(),
        }
    }

    /// The next thing to do, in order; poll until `None` after each
    /// `handle_*`. One call queues at most a few actions per client (Starts,
    /// a frame's three bodies, Ends, a close, the record), and the tool
    /// bounds its clients, so a caller that polls holds a bounded queue.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// When [`Self::handle_timeout`] has something to do (the input going
    /// idle), if anything is pending.
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.last_input.map(|t| t.saturating_add(self.cfg.idle))
    }

    /// Counters now.
    pub fn stats(&self) -> Stats {
        Stats {
            clients: self.clients.len(),
            served: self.served,
            dropped: self.dropped,
            frames_out: self.frames_out,
            vmc_frames: self.live.frames_in(),
            decode_errors: self.decode_errors,
            blendshapes: self.live.blendshapes().len(),
        }
    }

    fn send(&mut self, client: ClientId, message: Payload) {
        self.actions.push_back(Action::Send { client, message });
    }

    fn learnt(&self, now: Duration) -> bool {
        self.cfg.blendshapes.is_some()
            || self
                .input_since
                .is_some_and(|t| now.saturating_sub(t) >= self.cfg.learn)
    }

    fn input_live(&self, now: Duration) -> bool {
        self.last_input
            .is_some_and(|t| now.saturating_sub(t) < self.cfg.idle)
    }

    /// A connection sent its start request.
    pub fn handle_join(&mut self, now: Duration, client: ClientId) {
        let id = format!("mocap-tools-{client}");
        self.send(client, encode(&request_id(&id)));
        self.send(client, encode(&normal()));
        let mut c = Client {
            id: client,
            streaming: None,
            frames: 0,
            since: now,
        };
        if self.input_live(now) && self.learnt(now) {
            self.start(&mut c, now);
        }
        self.clients.push(c);
    }

    /// The three Starts, with the blendshape names known now.
    fn start(&mut self, c: &mut Client, now: Duration) {
        let names = self.live.blendshapes().to_vec();
        let starts = [
            motion_start(
                &self.cfg.rig.joints,
                &self.cfg.restpose,
                self.cfg.dtype,
                None,
            ),
            face_start(&names, self.cfg.dtype, None),
            audio_start(AUDIO_RATE as i32, AUDIO_CHANNELS as i32, AUDIO_WIDTH as i32),
        ];
        for m in &starts {
            self.send(c.id, encode(m));
        }
        c.streaming = Some(names.len());
        c.since = now;
    }

    /// A VMC datagram from `src`.
    pub fn handle_vmc(&mut self, now: Duration, src: SocketAddr, datagram: &[u8]) {
        let Ok(messages) = vmc::decode(datagram) else {
            self.decode_errors += 1;
            return;
        };
        let mut t = now.as_secs_f64();
        if self.cfg.sender_clock {
            // The sender's /VMC/Ext/T: steadier than arrival times over
            // Wi-Fi (and lets a load test run faster than real time). One
            // sender's clock rules (the first to send T): clocks of several
            // senders do not agree. Datagrams without a T (bones,
            // blendshapes) and other senders' go with its latest.
            if let Some(Ok(vmc::Message::Time(st))) = messages
                .iter()
                .find(|m| matches!(m, Ok(vmc::Message::Time(_))))
                && st.is_finite()
                && *self.clock_source.get_or_insert(src) == src
            {
                self.sender_time = Some(f64::from(*st));
            }
            t = self.sender_time.unwrap_or(t);
        }
        let mut poses = Vec::new();
        for m in messages {
            match m {
                Ok(m) => poses.extend(self.live.message(t, &m)),
                Err(_) => self.decode_errors += 1,
            }
        }
        if self.live.frames_in() > 0 {
            if self
                .last_input
                .is_none_or(|l| now.saturating_sub(l) >= self.cfg.idle)
            {
                self.actions
                    .push_back(Action::Log("VMC input started".into()));
                self.input_since = Some(now);
            }
            self.last_input = Some(now);
        }
        for p in poses {
            self.frame(&p, now);
        }
    }

    /// One 30 fps frame to every streaming client (encoded once per shape).
    fn frame(&mut self, pose: &Pose, now: Duration) {
        // Clients that joined before the input began start with this frame
        // (once the input has run long enough to know its blendshapes).
        if self.learnt(now) {
            let mut clients = std::mem::take(&mut self.clients);
            for c in clients.iter_mut().filter(|c| c.streaming.is_none()) {
                self.start(c, now);
            }
            self.clients = clients;
        }
        self.frames_out += 1;
        let mut scalars = Vec::with_capacity(motion_frame_len(pose.rotations.len()));
        pose.push_motion_frame(&mut scalars);
        let motion = encode(&motion_body(self.cfg.dtype, &scalars));
        let mut faces: HashMap<usize, Payload> = HashMap::new();
        let mut audio: HashMap<u64, Payload> = HashMap::new();
        let segment = self
            .cfg
            .segment
            .map(|d| (d.as_secs_f64() * f64::from(FPS)).round() as u64);
        let mut keep = Vec::with_capacity(self.clients.len());
        for mut c in std::mem::take(&mut self.clients) {
            let Some(b) = c.streaming else {
                keep.push(c);
                continue;
            };
            let face = faces
                .entry(b)
                .or_insert_with(|| {
                    let w: Vec<f32> = (0..b)
                        .map(|i| pose.weights.get(i).copied().unwrap_or(0.0))
                        .collect();
                    encode(&face_body(self.cfg.dtype, &w))
                })
                .clone();
            let pcm = audio
                .entry(c.frames)
                .or_insert_with(|| {
                    let audio = self.cfg.audio.as_deref().map(Vec::as_slice);
                    encode(&audio_body(pcm(audio, c.frames)))
                })
                .clone();
            self.send(c.id, Arc::clone(&motion));
            self.send(c.id, face);
            self.send(c.id, pcm);
            c.frames += 1;
            if segment.is_some_and(|n| c.frames >= n) {
                self.finish(c, "segment done", now);
            } else {
                keep.push(c);
            }
        }
        self.clients = keep;
    }

    /// Ends streams when the input has been quiet for [`Config::idle`].
    pub fn handle_timeout(&mut self, now: Duration) {
        if self.input_live(now) || self.last_input.is_none() {
            return;
        }
        let mut keep = Vec::with_capacity(self.clients.len());
        for c in std::mem::take(&mut self.clients) {
            if c.streaming.is_some() {
                self.finish(c, "input stopped", now);
            } else {
                keep.push(c);
            }
        }
        self.clients = keep;
        self.actions
            .push_back(Action::Log("VMC input stopped".into()));
        self.last_input = None;
        self.input_since = None;
        self.clock_source = None;
        self.sender_time = None;
    }

    /// The three Ends (if streaming), a close, the record.
    fn finish(&mut self, c: Client, reason: &str, now: Duration) {
        if c.streaming.is_some() {
            for s in [Stream::Motion, Stream::Face, Stream::Audio] {
                self.send(c.id, encode(&end(s)));
            }
        }
        self.actions.push_back(Action::Close {
            client: c.id,
            reason: reason.to_owned(),
        });
        self.served += 1;
        self.actions.push_back(Action::Ended(Ended {
            client: c.id,
            frames: c.frames,
            seconds: Some(now.saturating_sub(c.since).as_secs_f64()),
            reason: reason.to_owned(),
            dropped: None,
        }));
    }

    /// Ends every stream (the server is stopping).
    pub fn close_all(&mut self, now: Duration, reason: &str) {
        for c in std::mem::take(&mut self.clients) {
            self.finish(c, reason, now);
        }
    }

    /// The client's connection went on its own (its writer gave up).
    pub fn handle_gone(&mut self, client: ClientId) {
        let Some(i) = self.clients.iter().position(|c| c.id == client) else {
            return;
        };
        let c = self.clients.remove(i);
        self.served += 1;
        self.actions.push_back(Action::Ended(Ended {
            client,
            frames: c.frames,
            seconds: None,
            reason: "connection closed".into(),
            dropped: None,
        }));
    }

    /// A message for `client` could not be queued: the client is dropped
    /// (or, already ending, its end becomes a drop) and nothing more is
    /// queued for it. `queue` is the queue's size, for the reason.
    pub fn handle_refused(&mut self, client: ClientId, why: Refusal, queue: usize) {
        let mut ended = None;
        self.actions.retain(|a| match a {
            Action::Send { client: c, .. } | Action::Close { client: c, .. } => *c != client,
            Action::Ended(e) if e.client == client => {
                ended = Some(e.frames);
                false
            }
            _ => true,
        });
        let frames = match (ended, self.clients.iter().position(|c| c.id == client)) {
            (Some(frames), _) => frames,
            (None, Some(i)) => {
                self.served += 1;
                self.clients.remove(i).frames
            }
            // Already reported.
            (None, None) => return,
        };
        let reason = match why {
            Refusal::Full => {
                self.dropped += 1;
                format!("too slow: {queue} messages queued")
            }
            Refusal::Gone => "connection closed".to_owned(),
        };
        self.actions.push_back(Action::Ended(Ended {
            client,
            frames,
            seconds: None,
            reason,
            dropped: Some(why == Refusal::Full),
        }));
    }
}

/// 16-bit PCM for motion frame `k`: the audio, then silence.
fn pcm(audio: Option<&[i16]>, k: u64) -> Vec<u8> {
    let n = samples_for_frame(k);
    let start = samples_before_frame(k);
    let mut bytes = Vec::with_capacity(n * 2);
    for i in start..start + n {
        let s = audio.and_then(|a| a.get(i).copied()).unwrap_or(0);
        bytes.extend_from_slice(&s.to_le_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlp3d::Decoder;

    const MS: Duration = Duration::from_millis(1);

    fn config() -> Config {
        Config {
            rig: Rig::parse("Hips\nSpine\n").unwrap(),
            restpose: "rest".into(),
            dtype: Dtype::F16,
            blendshapes: None,
            learn: 100 * MS,
            idle: 500 * MS,
            segment: None,
            sender_clock: false,
            audio: None,
        }
    }

    fn src() -> SocketAddr {
        "127.0.0.1:5000".parse().unwrap()
    }

    /// One VMC sender frame as one datagram.
    fn datagram(k: u32) -> Vec<u8> {
        let f = [
            vmc::Message::BonePos {
                name: "Hips".into(),
                pos: [0.0, 1.0, 0.0],
                rot: [0.0, 0.0, 0.0, 1.0],
            },
            vmc::Message::BlendVal {
                name: "jawOpen".into(),
                value: 0.5,
            },
            vmc::Message::BlendApply,
            vmc::Message::Time(k as f32 / 60.0),
        ];
        let osc: Vec<_> = f.iter().map(vmc::Message::to_osc).collect();
        crate::osc::bundle(&osc).expect("encodable")
    }

    /// The clients' side: a decoder per client, as each reads its own stream.
    #[derive(Default)]
    struct Peers(HashMap<ClientId, Decoder>);

    /// Everything queued, as (client, decoded kind) and other actions.
    fn drain(s: &mut Session, peers: &mut Peers) -> (Vec<(ClientId, &'static str)>, Vec<Action>) {
        let (mut sent, mut other) = (Vec::new(), Vec::new());
        let decoders = &mut peers.0;
        while let Some(a) = s.poll_action() {
            match a {
                Action::Send { client, message } => {
                    let kind = match decoders.entry(client).or_default().decode(&message) {
                        Ok(e) => e.kind(),
                        Err(e) => panic!("client {client}: {e}"),
                    };
                    sent.push((client, kind));
                }
                a => other.push(a),
            }
        }
        (sent, other)
    }

    /// About 60 fps of input from `from` to `to` milliseconds.
    fn input(s: &mut Session, from: u32, to: u32) {
        for ms in (from..to).filter(|ms| ms % 17 == 0) {
            s.handle_vmc(
                Duration::from_millis(u64::from(ms)),
                src(),
                &datagram(ms / 17),
            );
        }
    }

    #[test]
    fn a_client_waits_for_live_learnt_input_then_streams() {
        let mut s = Session::new(config());
        let mut p = Peers::default();
        s.handle_join(Duration::ZERO, 1);
        let (sent, _) = drain(&mut s, &mut p);
        assert_eq!(sent, [(1, "dlp3d.request_id"), (1, "dlp3d.normal")]);
        // 50 ms of input: live, but names not learnt yet: no Starts.
        for k in 0..3 {
            s.handle_vmc(
                Duration::from_millis(u64::from(k) * 17),
                src(),
                &datagram(k),
            );
        }
        let (sent, other) = drain(&mut s, &mut p);
        assert!(sent.is_empty(), "{sent:?}");
        assert_eq!(other, [Action::Log("VMC input started".into())]);
        // Past the learning time: Starts, then bodies.
        for k in 3..12 {
            s.handle_vmc(
                Duration::from_millis(u64::from(k) * 17),
                src(),
                &datagram(k),
            );
        }
        let (sent, _) = drain(&mut s, &mut p);
        let kinds: Vec<&str> = sent.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            &kinds[..6],
            [
                "dlp3d.motion_start",
                "dlp3d.face_start",
                "dlp3d.audio_start",
                "dlp3d.motion_body",
                "dlp3d.face_body",
                "dlp3d.audio_body"
            ]
        );
        // A client joining now starts at once.
        s.handle_join(Duration::from_millis(210), 2);
        let (sent, _) = drain(&mut s, &mut p);
        assert_eq!(sent.len(), 5, "{sent:?}");
        assert_eq!(s.stats().clients, 2);
    }

    #[test]
    fn idle_input_ends_streams_with_three_ends_and_a_close() {
        let mut s = Session::new(config());
        let mut p = Peers::default();
        s.handle_join(Duration::ZERO, 1);
        input(&mut s, 0, 600);
        let last = s.poll_timeout().unwrap();
        drain(&mut s, &mut p);
        // Not yet due: nothing happens.
        s.handle_timeout(last - MS);
        assert!(s.poll_action().is_none());
        s.handle_timeout(last);
        let (sent, other) = drain(&mut s, &mut p);
        assert_eq!(
            sent,
            [
                (1, "dlp3d.motion_end"),
                (1, "dlp3d.face_end"),
                (1, "dlp3d.audio_end")
            ]
        );
        let Action::Ended(e) = &other[1] else {
            panic!("{other:?}")
        };
        assert_eq!(
            other[0],
            Action::Close {
                client: 1,
                reason: "input stopped".into()
            }
        );
        assert_eq!((e.reason.as_str(), e.dropped), ("input stopped", None));
        assert!(e.frames > 0);
        assert_eq!(other[2], Action::Log("VMC input stopped".into()));
        assert_eq!(s.poll_timeout(), None);
        assert_eq!((s.stats().clients, s.stats().served), (0, 1));
    }

    #[test]
    fn a_slow_client_is_dropped_and_nothing_more_is_queued_for_it() {
        let mut s = Session::new(config());
        let mut p = Peers::default();
        s.handle_join(Duration::ZERO, 1);
        s.handle_join(Duration::ZERO, 2);
        input(&mut s, 0, 300);
        // The tool could not queue client 2's first message.
        s.handle_refused(2, Refusal::Full, 256);
        let (sent, other) = drain(&mut s, &mut p);
        assert!(sent.iter().all(|(c, _)| *c == 1), "{sent:?}");
        let Some(Action::Ended(e)) = other.last() else {
            panic!("{other:?}")
        };
        assert_eq!(
            (e.client, e.reason.as_str(), e.dropped),
            (2, "too slow: 256 messages queued", Some(true))
        );
        input(&mut s, 300, 400);
        let (sent, _) = drain(&mut s, &mut p);
        assert!(!sent.is_empty() && sent.iter().all(|(c, _)| *c == 1));
        assert_eq!(
            (s.stats().dropped, s.stats().served, s.stats().clients),
            (1, 1, 1)
        );
        // A refusal while ending turns the end into a drop, counted once.
        s.close_all(Duration::from_secs(1), "server stopping");
        s.handle_refused(1, Refusal::Gone, 256);
        let (sent, other) = drain(&mut s, &mut p);
        assert!(sent.is_empty());
        assert_eq!(other.len(), 1, "{other:?}");
        let Action::Ended(e) = &other[0] else {
            panic!()
        };
        assert_eq!(
            (e.reason.as_str(), e.dropped),
            ("connection closed", Some(false))
        );
        assert_eq!(s.stats().served, 2);
    }

    #[test]
    fn segments_end_after_their_frames_and_gone_clients_are_reported() {
        let mut s = Session::new(Config {
            segment: Some(Duration::from_millis(100)),
            blendshapes: Some(vec!["jawOpen".into()]),
            ..config()
        });
        let mut p = Peers::default();
        input(&mut s, 0, 20);
        s.handle_join(Duration::from_millis(20), 1);
        s.handle_join(Duration::from_millis(20), 2);
        s.handle_gone(2);
        input(&mut s, 20, 400);
        let (sent, other) = drain(&mut s, &mut p);
        let bodies = sent
            .iter()
            .filter(|(c, k)| *c == 1 && *k == "dlp3d.motion_body")
            .count();
        assert_eq!(bodies, 3, "100 ms at 30 fps");
        let ended: Vec<&Ended> = other
            .iter()
            .filter_map(|a| match a {
                Action::Ended(e) => Some(e),
                _ => None,
            })
            .collect();
        assert_eq!(ended.len(), 2);
        assert_eq!(
            (ended[0].client, ended[0].reason.as_str()),
            (2, "connection closed")
        );
        assert_eq!(
            (ended[1].client, ended[1].reason.as_str()),
            (1, "segment done")
        );
    }
}
