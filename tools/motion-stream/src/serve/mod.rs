//! `motion-stream serve`: live VMC motion as DLP3D streams over WebSocket.
//!
//! Threads: one accepts connections; one per connection reads the HTTP head,
//! serves the viewer page or upgrades to a WebSocket, reads the start request
//! and then only writes what the main thread queues for it ([`accept`],
//! [`writer`]). The main thread owns the VMC socket, the conversion, and every
//! client's stream order, so a slow client only ever fills its own bounded
//! queue and is dropped.

mod accept;
mod writer;

use accept::connection;

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tungstenite::Bytes;
use tungstenite::protocol::frame::coding::CloseCode;

use crate::TOOL;
use crate::records::{ClientEndRecord, ClientRecord, ServeSummary};
use crate::ws::close;
use mocap_core::cli::round3;
use mocap_core::cli::{Format, Log, LogArgs, Output, StopArgs, install_ctrlc, interrupted};
use mocap_core::dlp3d::{self, Dtype, Live, Pose, Request, Rig, Stream};
use mocap_core::net::{self as udp, MAX_DATAGRAM};
use mocap_core::vmc;

/// A client sent nothing this long gets a ping.
const KEEPALIVE: Duration = Duration::from_secs(5);

/// Connections (pages, handshakes, streams) open at once; more are refused.
const MAX_CONNECTIONS: usize = 256;

/// Largest message a client may send (start requests are a few hundred bytes).
const MAX_CLIENT_MESSAGE: usize = 64 * 1024;

/// Counts a live thread for as long as it holds this.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(n: Arc<AtomicUsize>) -> Self {
        n.fetch_add(1, Ordering::Relaxed);
        Self(n)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Kernel send buffer per client: about a second of a 55-joint stream.
const SEND_BUFFER: usize = 128 * 1024;

/// The viewer page `serve` answers `GET /` with.
const VIEWER: &str = include_str!("viewer.html");

/// Everything `motion-stream serve` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct ServeOptions {
    /// HTTP/WebSocket address.
    pub(crate) listen: SocketAddr,
    /// VMC input address.
    pub(crate) vmc: SocketAddr,
    /// Joints and rest rotations.
    pub(crate) rig: Rig,
    /// `motion_restpose_name`.
    pub(crate) restpose: String,
    /// Fixed blendshape names (else learnt from the input).
    pub(crate) blendshapes: Option<Vec<String>>,
    /// Motion and face dtype.
    pub(crate) dtype: Dtype,
    /// 16 kHz mono PCM to play (else silence), once per stream.
    pub(crate) audio: Option<Arc<Vec<i16>>>,
    /// End each client's streams after this long.
    pub(crate) segment: Option<Duration>,
    /// Input silent this long ends the streams.
    pub(crate) idle: Duration,
    /// Messages queued per client before it counts as too slow.
    pub(crate) queue: usize,
    /// Resample on the sender's `/VMC/Ext/T` instead of arrival times.
    pub(crate) sender_clock: bool,
    /// How long the input must have run before the Starts go out, so the
    /// blendshape names of every sender are known (not with fixed names).
    pub(crate) learn: Duration,
    /// TLS (wss/https).
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    /// Output format of the records.
    pub(crate) format: Format,
    /// `--count` (clients served), `--duration`.
    pub(crate) stop: StopArgs,
    /// `--quiet`, `--stats-interval`.
    pub(crate) log: LogArgs,
}

/// What the main thread queues for a client's writer.
enum Out {
    Msg(Bytes),
    Close(CloseCode, String),
}

/// A connection that sent its start request.
struct Joined {
    id: u64,
    addr: SocketAddr,
    route: String,
    request: Request,
    tx: SyncSender<Out>,
    kicked: Arc<AtomicBool>,
}

/// A client as the main thread sees it.
struct Client {
    joined: Joined,
    /// Blendshape count of its FaceChunkStart, once streaming.
    streaming: Option<usize>,
    /// Motion frames queued so far (also the audio position).
    frames: u64,
    since: Instant,
}

fn encode(r: &dlp3d::Response) -> Bytes {
    Bytes::from(dlp3d::encode_response(r))
}

/// Counters shared with the connection threads.
#[derive(Default)]
struct Shared {
    pages: u64,
    refused: u64,
}

/// Runs the server until `--count` clients were served, `--duration`, or Ctrl-C.
///
/// # Errors
/// Ports that cannot be bound, output errors.
pub(crate) fn serve(opts: &ServeOptions) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Arc::new(Mutex::new(Log::new(TOOL, opts.log.quiet, true)));
    let mut out = Output::stdout(true);
    let listener = TcpListener::bind(opts.listen)
        .with_context(|| format!("cannot listen on {}", opts.listen))?;
    let local = listener.local_addr()?;
    let socket = udp::bind_udp(opts.vmc, Some(Duration::from_millis(5)))
        .with_context(|| format!("cannot listen for VMC on {}", opts.vmc))?;
    let vmc_addr = socket.local_addr()?;
    let scheme = if opts.tls.is_some() { "https" } else { "http" };
    if let Ok(l) = log.lock() {
        l.info(format_args!(
            "listening on {local} ({}: {}{}; viewer at {scheme}://{local}/)",
            if opts.tls.is_some() { "wss" } else { "ws" },
            dlp3d::ROUTES[2],
            ", …",
        ));
        l.info(format_args!(
            "listening on {vmc_addr} (VMC over UDP); Ctrl-C to stop"
        ));
    }
    let (join_tx, join_rx) = mpsc::channel::<Joined>();
    // Connection threads alive; the writers among them are waited for at exit.
    let active = Arc::new(AtomicUsize::new(0));
    let shared = Arc::new(Mutex::new(Shared::default()));
    let page = Arc::new(viewer_info(opts));
    {
        let tls = opts.tls.clone();
        let log = Arc::clone(&log);
        let shared = Arc::clone(&shared);
        let queue = opts.queue;
        let active = Arc::clone(&active);
        thread::Builder::new()
            .name("accept".into())
            .spawn(move || {
                let mut next_id = 0u64;
                for conn in listener.incoming() {
                    let Ok(tcp) = conn else { continue };
                    next_id += 1;
                    // Bounded: a connection flood costs refusals, not threads.
                    if active.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                        if let Ok(mut s) = shared.lock() {
                            s.refused += 1;
                        }
                        if let Ok(l) = log.lock() {
                            l.info(format_args!(
                                "refused a connection: {MAX_CONNECTIONS} already open"
                            ));
                        }
                        continue;
                    }
                    let (id, c_tls, c_log, c_shared, c_join, c_page) = (
                        next_id,
                        tls.clone(),
                        Arc::clone(&log),
                        Arc::clone(&shared),
                        join_tx.clone(),
                        Arc::clone(&page),
                    );
                    let counted = Counted::new(Arc::clone(&active));
                    let spawned =
                        thread::Builder::new()
                            .name(format!("client-{id}"))
                            .spawn(move || {
                                let _counted = counted;
                                connection(
                                    id,
                                    tcp,
                                    c_tls.as_ref(),
                                    queue,
                                    &c_join,
                                    &c_log,
                                    &c_shared,
                                    &c_page,
                                );
                            });
                    if let Err(e) = spawned {
                        // The connection went with the closure; count and say why.
                        if let Ok(mut s) = shared.lock() {
                            s.refused += 1;
                        }
                        if let Ok(l) = log.lock() {
                            l.info(format_args!("cannot start a connection thread: {e}"));
                        }
                    }
                }
            })?;
    }
    let mut server = Server {
        opts,
        live: Live::new(opts.rig.clone(), opts.blendshapes.clone()),
        clients: Vec::new(),
        log: Arc::clone(&log),
        started: Instant::now(),
        last_input: None,
        input_since: None,
        clock_source: None,
        sender_time: None,
        served: 0,
        dropped: 0,
        frames_out: 0,
        datagrams: 0,
        decode_errors: 0,
    };
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut next_stats = opts.log.stats_interval.map(|d| Instant::now() + d);
    let stopped = loop {
        if interrupted() {
            break "interrupted";
        }
        if opts
            .stop
            .duration
            .is_some_and(|d| server.started.elapsed() >= d)
        {
            break "duration";
        }
        if opts.stop.count.is_some_and(|n| server.served >= n) && server.clients.is_empty() {
            break "count";
        }
        while let Ok(j) = join_rx.try_recv() {
            server.join(j, &mut out)?;
        }
        match socket.recv_from(&mut buf) {
            Ok((n, src)) => {
                server.datagrams += 1;
                server.vmc(src, buf.get(..n).unwrap_or_default(), &mut out)?;
            }
            Err(e) if udp::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("receiving VMC"),
        }
        server.housekeeping(&mut out)?;
        if let Some(at) = next_stats
            && Instant::now() >= at
        {
            next_stats = opts.log.stats_interval.map(|d| at + d);
            server.summary(&mut out, None, &shared)?;
        }
    };
    for c in std::mem::take(&mut server.clients) {
        server.finish(c, "server stopping", &mut out)?;
    }
    // Let the writers send the Ends and close frames (bounded: a peer that
    // does not answer its close must not hold the exit).
    let deadline = Instant::now() + Duration::from_secs(2);
    while active.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    server.summary(&mut out, Some(stopped), &shared)?;
    out.flush()?;
    Ok(())
}

struct Server<'o> {
    opts: &'o ServeOptions,
    live: Live,
    clients: Vec<Client>,
    log: Arc<Mutex<Log>>,
    started: Instant,
    last_input: Option<Instant>,
    /// When the current run of input began.
    input_since: Option<Instant>,
    clock_source: Option<SocketAddr>,
    sender_time: Option<f64>,
    served: u64,
    dropped: u64,
    frames_out: u64,
    datagrams: u64,
    decode_errors: u64,
}

impl Server<'_> {
    fn info(&self, args: std::fmt::Arguments<'_>) {
        if let Ok(l) = self.log.lock() {
            l.info(args);
        }
    }

    /// Whether the blendshape names are settled enough to start streams.
    fn learnt(&self) -> bool {
        self.opts.blendshapes.is_some()
            || self
                .input_since
                .is_some_and(|t| t.elapsed() >= self.opts.learn)
    }

    fn input_live(&self) -> bool {
        self.last_input
            .is_some_and(|t| t.elapsed() < self.opts.idle)
    }

    fn join(&mut self, j: Joined, out: &mut Output) -> anyhow::Result<()> {
        self.info(format_args!(
            "client {} from {} on {} ({})",
            j.id, j.addr, j.route, j.request.class_name
        ));
        record(
            out,
            self.opts.format,
            &ClientRecord {
                kind: "dlp3d.client",
                client: j.id,
                peer: j.addr,
                route: &j.route,
                class: &j.request.class_name,
                text: &j.request.speech_text,
            },
            format_args!(
                "client {} {} {} {}",
                j.id, j.addr, j.route, j.request.class_name
            ),
        )?;
        let id = format!("mocap-tools-{}", j.id);
        let mut c = Client {
            joined: j,
            streaming: None,
            frames: 0,
            since: Instant::now(),
        };
        let sent = send(&c, encode(&dlp3d::request_id(&id)))
            .and_then(|()| send(&c, encode(&dlp3d::normal())))
            .and_then(|()| {
                if self.input_live() && self.learnt() {
                    self.start(&mut c)
                } else {
                    Ok(())
                }
            });
        match sent {
            Ok(()) => {
                self.clients.push(c);
                Ok(())
            }
            Err(why) => self.drop_client(c, why, out),
        }
    }

    /// The three Starts, with the blendshape names known now.
    fn start(&self, c: &mut Client) -> Result<(), Refused> {
        let names = self.live.blendshapes().to_vec();
        let msgs = [
            dlp3d::motion_start(
                &self.opts.rig.joints,
                &self.opts.restpose,
                self.opts.dtype,
                None,
            ),
            dlp3d::face_start(&names, self.opts.dtype, None),
            dlp3d::audio_start(
                dlp3d::AUDIO_RATE as i32,
                dlp3d::AUDIO_CHANNELS as i32,
                dlp3d::AUDIO_WIDTH as i32,
            ),
        ];
        for m in &msgs {
            send(c, encode(m))?;
        }
        c.streaming = Some(names.len());
        c.since = Instant::now();
        Ok(())
    }

    fn vmc(&mut self, src: SocketAddr, datagram: &[u8], out: &mut Output) -> anyhow::Result<()> {
        let Ok(messages) = vmc::decode(datagram) else {
            self.decode_errors += 1;
            return Ok(());
        };
        let mut t = self.started.elapsed().as_secs_f64();
        if self.opts.sender_clock {
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
                .is_none_or(|l| l.elapsed() >= self.opts.idle)
            {
                self.info(format_args!("VMC input started"));
                self.input_since = Some(Instant::now());
            }
            self.last_input = Some(Instant::now());
        }
        for p in poses {
            self.frame(&p, out)?;
        }
        Ok(())
    }

    /// One 30 fps frame to every streaming client (encoded once per shape).
    fn frame(&mut self, pose: &Pose, out: &mut Output) -> anyhow::Result<()> {
        // Clients that joined before the input began start with this frame
        // (once the input has run long enough to know its blendshapes).
        let learnt = self.learnt();
        let mut starting = Vec::new();
        for mut c in std::mem::take(&mut self.clients) {
            if learnt
                && c.streaming.is_none()
                && let Err(why) = self.start(&mut c)
            {
                self.drop_client(c, why, out)?;
                continue;
            }
            starting.push(c);
        }
        self.clients = starting;
        self.frames_out += 1;
        let mut scalars = Vec::with_capacity(dlp3d::motion_frame_len(pose.rotations.len()));
        pose.push_motion_frame(&mut scalars);
        let motion = encode(&dlp3d::motion_body(self.opts.dtype, &scalars));
        let mut faces: HashMap<usize, Bytes> = HashMap::new();
        let mut audio: HashMap<u64, Bytes> = HashMap::new();
        let segment = self
            .opts
            .segment
            .map(|d| (d.as_secs_f64() * f64::from(dlp3d::FPS)).round() as u64);
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
                    encode(&dlp3d::face_body(self.opts.dtype, &w))
                })
                .clone();
            let pcm = audio
                .entry(c.frames)
                .or_insert_with(|| encode(&dlp3d::audio_body(self.pcm(c.frames))))
                .clone();
            let sent = send(&c, motion.clone())
                .and_then(|()| send(&c, face))
                .and_then(|()| send(&c, pcm));
            c.frames += 1;
            if let Err(why) = sent {
                self.drop_client(c, why, out)?;
            } else if segment.is_some_and(|n| c.frames >= n) {
                self.finish(c, "segment done", out)?;
            } else {
                keep.push(c);
            }
        }
        self.clients = keep;
        Ok(())
    }

    /// 16-bit PCM for motion frame `k`: the `--audio` file, then silence.
    fn pcm(&self, k: u64) -> Vec<u8> {
        let n = dlp3d::samples_for_frame(k);
        let start = dlp3d::samples_before_frame(k);
        let mut bytes = Vec::with_capacity(n * 2);
        for i in start..start + n {
            let s = self
                .opts
                .audio
                .as_ref()
                .and_then(|a| a.get(i).copied())
                .unwrap_or(0);
            bytes.extend_from_slice(&s.to_le_bytes());
        }
        bytes
    }

    /// Ends of the input and of gone clients.
    fn housekeeping(&mut self, out: &mut Output) -> anyhow::Result<()> {
        let idle = !self.input_live() && self.last_input.is_some();
        let mut keep = Vec::with_capacity(self.clients.len());
        for c in std::mem::take(&mut self.clients) {
            if c.joined.kicked.load(Ordering::Relaxed) {
                // The writer gave up (the peer closed or stopped reading).
                self.served += 1;
                record(
                    out,
                    self.opts.format,
                    &ClientEndRecord {
                        kind: "dlp3d.client_end",
                        client: c.joined.id,
                        frames: c.frames,
                        seconds: None,
                        reason: "connection closed",
                        dropped: None,
                    },
                    format_args!("client {} closed after {} frames", c.joined.id, c.frames),
                )?;
            } else if idle && c.streaming.is_some() {
                self.finish(c, "input stopped", out)?;
            } else {
                keep.push(c);
            }
        }
        self.clients = keep;
        if idle && self.clients.iter().all(|c| c.streaming.is_none()) {
            self.info(format_args!("VMC input stopped"));
            self.last_input = None;
            self.input_since = None;
            self.clock_source = None;
            self.sender_time = None;
        }
        Ok(())
    }

    /// The three Ends (if streaming), then a clean close.
    fn finish(&mut self, c: Client, reason: &str, out: &mut Output) -> anyhow::Result<()> {
        if c.streaming.is_some() {
            for s in [Stream::Motion, Stream::Face, Stream::Audio] {
                if let Err(why) = send(&c, encode(&dlp3d::end(s))) {
                    // Half the Ends would leave the client waiting: drop it.
                    return self.drop_client(c, why, out);
                }
            }
        }
        let _ = c
            .joined
            .tx
            .try_send(Out::Close(CloseCode::Normal, reason.to_owned()));
        self.served += 1;
        record(
            out,
            self.opts.format,
            &ClientEndRecord {
                kind: "dlp3d.client_end",
                client: c.joined.id,
                frames: c.frames,
                seconds: Some(round3(c.since.elapsed().as_secs_f64())),
                reason,
                dropped: None,
            },
            format_args!(
                "client {} done after {} frames ({reason})",
                c.joined.id, c.frames
            ),
        )?;
        Ok(())
    }

    fn drop_client(&mut self, c: Client, why: Refused, out: &mut Output) -> anyhow::Result<()> {
        c.joined.kicked.store(true, Ordering::Relaxed);
        self.served += 1;
        let reason = match why {
            Refused::Full => {
                self.dropped += 1;
                format!("too slow: {} messages queued", self.opts.queue)
            }
            Refused::Gone => "connection closed".to_owned(),
        };
        if why == Refused::Full {
            self.info(format_args!(
                "dropped client {} ({}): {reason}",
                c.joined.id, c.joined.addr
            ));
        }
        record(
            out,
            self.opts.format,
            &ClientEndRecord {
                kind: "dlp3d.client_end",
                client: c.joined.id,
                frames: c.frames,
                seconds: None,
                reason: &reason,
                dropped: Some(why == Refused::Full),
            },
            format_args!(
                "client {} ended after {} frames: {reason}",
                c.joined.id, c.frames
            ),
        )?;
        Ok(())
    }

    fn summary(
        &self,
        out: &mut Output,
        stopped: Option<&str>,
        shared: &Mutex<Shared>,
    ) -> anyhow::Result<()> {
        let (pages, refused) = shared
            .lock()
            .map(|s| (s.pages, s.refused))
            .unwrap_or_default();
        let rec = ServeSummary {
            kind: if stopped.is_some() {
                "summary"
            } else {
                "stats"
            },
            tool: TOOL,
            clients: self.clients.len(),
            served: self.served,
            dropped: self.dropped,
            refused,
            pages,
            vmc_datagrams: self.datagrams,
            vmc_frames: self.live.frames_in(),
            decode_errors: self.decode_errors,
            frames_out: self.frames_out,
            blendshapes: self.live.blendshapes().len(),
            elapsed_s: round3(self.started.elapsed().as_secs_f64()),
            stopped,
        };
        match self.opts.format {
            Format::Json => out.json(&rec)?,
            Format::Human => {
                out.flush()?;
                let line = format!(
                    "{}: {} clients served ({} dropped, {} refused), {} VMC frames in, {} frames out",
                    stopped.map_or_else(|| "stats".to_owned(), |s| format!("done ({s})")),
                    self.served,
                    self.dropped,
                    refused,
                    self.live.frames_in(),
                    self.frames_out
                );
                if let Ok(l) = self.log.lock() {
                    if stopped.is_some() {
                        l.always(format_args!("{line}"));
                    } else {
                        l.info(format_args!("{line}"));
                    }
                }
            }
        }
        Ok(())
    }
}

fn record(
    out: &mut Output,
    format: Format,
    rec: &impl serde::Serialize,
    human: std::fmt::Arguments<'_>,
) -> io::Result<()> {
    match format {
        Format::Json => out.json(rec),
        Format::Human => out.text(format_args!("{human}\n")),
    }
}

/// Why a message could not be queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refused {
    /// The queue is full: the client reads too slowly.
    Full,
    /// The writer has gone: the client closed.
    Gone,
}

/// Queues a message for a client.
fn send(c: &Client, b: Bytes) -> Result<(), Refused> {
    c.joined.tx.try_send(Out::Msg(b)).map_err(|e| match e {
        TrySendError::Full(_) => Refused::Full,
        TrySendError::Disconnected(_) => Refused::Gone,
    })
}

/// What the viewer page needs: joint names and the humanoid layout it knows.
fn viewer_info(opts: &ServeOptions) -> String {
    #[derive(serde::Serialize)]
    struct Info<'a> {
        joints: &'a [String],
        restpose: &'a str,
    }
    serde_json::to_string(&Info {
        joints: &opts.rig.joints,
        restpose: &opts.restpose,
    })
    .unwrap_or_default()
}
