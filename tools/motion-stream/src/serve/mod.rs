//! `motion-stream serve`: live VMC motion as DLP3D streams over WebSocket.
//!
//! Threads: one accepts connections; one per connection reads the HTTP head,
//! serves the viewer page or upgrades to a WebSocket, reads the start request
//! and then only writes what the main thread queues for it ([`accept`],
//! [`writer`]). The main thread owns the VMC socket, the conversion, and every
//! client's stream order, so a slow client only ever fills its own bounded
//! queue and is dropped.

mod accept;
mod access;
mod limits;
mod writer;

pub(crate) use access::{Access, new_token};
use mocap_cli::refusals::REFUSAL_LOG_INTERVAL;

use accept::connection;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tungstenite::Bytes;
use tungstenite::protocol::frame::coding::CloseCode;

use crate::TOOL;
use crate::records::{ClientEndRecord, ClientRecord, RefusedPeer, ServeSummary};
use crate::ws::close;
use mocap_cli::accept::Accept;
use mocap_cli::net;
use mocap_cli::output::{report, round3, summary_kind};
use mocap_cli::prelude::*;
use mocap_core::dlp3d::server::{self, Action, ClientId, Refusal, Session};
use mocap_core::dlp3d::{self, Request};

/// A client sent nothing this long gets a ping.
const KEEPALIVE: Duration = Duration::from_secs(5);

/// Connections (pages, handshakes, streams) open at once; more are refused.
const MAX_CONNECTIONS: usize = 256;

/// Connections whose request head is not complete, at most: half the
/// places, so that heads never finished (from however many addresses)
/// cannot hold them all; past it the oldest unfinished one makes room.
const MAX_UNFINISHED: usize = MAX_CONNECTIONS / 2;

/// An unfinished connection, as the acceptor may close it to make room.
struct Waiting {
    /// A handle on the connection's socket: shut down, its thread's read ends.
    socket: TcpStream,
    peer: SocketAddr,
    accepted: Instant,
}

/// The unfinished connections, shared by the acceptor and the connections.
type Heads = Arc<Mutex<limits::Unfinished<Waiting>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Largest message a client may send (start requests are a few hundred bytes).
const MAX_CLIENT_MESSAGE: usize = 64 * 1024;

/// A connection's place: counted among the live threads, its address's
/// connections and (until its head is read) the unfinished ones for as long
/// as its thread holds it.
struct Slot {
    active: Arc<AtomicUsize>,
    open: Arc<Mutex<limits::Open>>,
    heads: Heads,
    ip: IpAddr,
    id: u64,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // No longer closing before no longer active: the acceptor counts the
        // places held as active minus closing, which must not dip.
        lock(&self.heads).ended(self.id);
        self.active.fetch_sub(1, Ordering::Relaxed);
        lock(&self.open).give_back(self.ip);
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
    /// What to stream and when (rig, names, dtype, audio, segment, idle, learn, clock).
    pub(crate) session: server::Config,
    /// Messages queued per client before it counts as too slow.
    pub(crate) queue: usize,
    /// TLS (wss/https).
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    /// Output format of the records.
    pub(crate) format: Format,
    /// `--count` (clients served), `--duration`.
    pub(crate) stop: StopArgs,
    /// `--quiet`, `--stats-interval`.
    pub(crate) log: LogArgs,
    /// `--allow`: who may send VMC and open connections.
    pub(crate) allow: mocap_cli::allow::AllowArgs,
    /// `--head-timeout`: from the connection to the end of its request head.
    pub(crate) head_timeout: Duration,
    /// `--max-per-address`: connections one address may hold open.
    pub(crate) max_per_address: usize,
    /// `--token`, `--allow-origin`: who may open the page and the streams.
    pub(crate) access: Access,
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

/// Counters shared with the connection threads.
struct Shared {
    pages: u64,
    /// Connections refused, whatever the reason.
    refused: u64,
    /// Of `refused`: answered 401 (no or a wrong token).
    unauthorized: u64,
    /// Of `refused`: answered 403 (a page of another origin).
    forbidden: u64,
    /// Of `refused`: closed unread, over `--max-per-address` or the server's limit.
    over_limit: u64,
    /// Of `refused`: no complete request head within `--head-timeout`.
    head_timeouts: u64,
    /// Of `refused`: closed with the request head unfinished, the oldest,
    /// to make room for a new connection.
    unfinished_closed: u64,
    /// `refused` per address, and when to log them.
    refusals: mocap_cli::refusals::RefusalLog,
}

impl Default for Shared {
    fn default() -> Self {
        Self {
            pages: 0,
            refused: 0,
            unauthorized: 0,
            forbidden: 0,
            over_limit: 0,
            head_timeouts: 0,
            unfinished_closed: 0,
            refusals: mocap_cli::refusals::RefusalLog::new(REFUSAL_LOG_INTERVAL),
        }
    }
}

/// What every connection thread shares.
struct Context {
    access: Access,
    tls: Option<Arc<rustls::ServerConfig>>,
    log: Arc<Mutex<Log>>,
    shared: Arc<Mutex<Shared>>,
    queue: usize,
    /// The viewer's `rig.json`.
    page: String,
    head_timeout: Duration,
    /// Connections still reading their head.
    heads: Heads,
}

impl Context {
    /// Counts a refused connection of `peer` (`kind` counts it by reason
    /// too) and logs `why`, unless its address had a line within the last
    /// [`REFUSAL_LOG_INTERVAL`]: a flood costs counts, not log lines.
    fn refuse(
        &self,
        peer: SocketAddr,
        kind: impl FnOnce(&mut Shared),
        why: std::fmt::Arguments<'_>,
    ) {
        if self.count(peer, kind) {
            info(&self.log, why);
        }
    }

    /// [`refuse`](Self::refuse) without the line; true when one was due.
    fn count(&self, peer: SocketAddr, kind: impl FnOnce(&mut Shared)) -> bool {
        self.shared
            .lock()
            .map(|mut s| {
                kind(&mut s);
                s.refused += 1;
                s.refusals.count(peer.ip(), Instant::now())
            })
            .unwrap_or(true)
    }

    /// Logs the refusals counted but not logged: those whose interval is
    /// over, or all of them (`now` = `None`, at exit).
    fn say_unsaid(&self, now: Option<Instant>) {
        let lines = self
            .shared
            .lock()
            .map(|mut s| match now {
                Some(now) => s.refusals.due(now),
                None => s.refusals.rest(),
            })
            .unwrap_or_default();
        for (ip, n) in lines {
            info(
                &self.log,
                format_args!("{}", mocap_cli::refusals::unsaid_line(ip, n, "connection")),
            );
        }
    }
}

/// Runs the server until `--count` clients were served, `--duration`, or Ctrl-C.
///
/// # Errors
/// Ports that cannot be bound, output errors.
pub(crate) fn serve(opts: &ServeOptions) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Arc::new(Mutex::new(Log::new(TOOL, opts.log.quiet, true)));
    let mut out = Output::stdout(true);
    let listener = net::listen_tcp(opts.listen)
        .with_context(|| format!("cannot listen on {}", opts.listen))?;
    let local = listener.local_addr()?;
    let socket = net::bind_udp(opts.vmc, Some(Duration::from_millis(5)))
        .with_context(|| format!("cannot listen for VMC on {}", opts.vmc))?;
    announce(opts, &log, local, socket.local_addr()?);
    let (join_tx, join_rx) = mpsc::channel::<Joined>();
    // Connection threads alive; the writers among them are waited for at exit.
    let active = Arc::new(AtomicUsize::new(0));
    let shared = Arc::new(Mutex::new(Shared::default()));
    // VMC datagrams from outside --allow: counted per sender, logged once
    // each. Connections are checked against the same ranges by the acceptor
    // and counted per address with the server's other refusals.
    let guard =
        mocap_cli::allow::Guard::new(&opts.allow, Some(Log::new(TOOL, opts.log.quiet, false)));
    let ctx = Arc::new(Context {
        access: opts.access.clone(),
        tls: opts.tls.clone(),
        log: Arc::clone(&log),
        shared: Arc::clone(&shared),
        queue: opts.queue,
        page: viewer_info(opts),
        head_timeout: opts.head_timeout,
        heads: Arc::new(Mutex::new(limits::Unfinished::new(MAX_UNFINISHED))),
    });
    let acceptor = Acceptor {
        ctx: Arc::clone(&ctx),
        allow: opts.allow.allow.clone(),
        max_per_address: opts.max_per_address,
        active: Arc::clone(&active),
        open: Arc::default(),
        join_tx,
        next_id: 0,
        next_log: Instant::now() + REFUSAL_LOG_INTERVAL,
    };
    acceptor.spawn(listener)?;
    let mut feed = mocap_cli::inbox::UdpFeed::new(socket);
    feed.guard_with(guard.clone());
    let mut server = Server {
        guard: guard.clone(),
        opts,
        session: Session::new(opts.session.clone()),
        clients: HashMap::new(),
        started: Instant::now(),
        datagrams: 0,
        join_rx,
        log: &log,
        out: &mut out,
        shared: &shared,
    };
    let stopped = drive(
        &mut feed,
        opts.stop.duration,
        opts.log.stats_interval,
        &mut server,
    )?;
    let Server {
        mut session,
        mut clients,
        started,
        datagrams,
        ..
    } = server;
    session.close_all(started.elapsed(), "server stopping");
    act(&mut session, &mut clients, opts, &log, &mut out)?;
    drop(clients);
    wait_for_writers(&active);
    ctx.say_unsaid(None);
    summary(
        &session,
        datagrams,
        started,
        opts,
        &log,
        &mut out,
        Some(stopped),
        &shared,
        &guard,
    )?;
    out.flush()?;
    Ok(())
}

/// Where the server listens, said once; the token's URL even with
/// `--quiet`, and a warning when the stream is open to the network.
fn announce(opts: &ServeOptions, log: &Mutex<Log>, local: SocketAddr, vmc_addr: SocketAddr) {
    let Ok(l) = log.lock() else {
        return;
    };
    let scheme = if opts.tls.is_some() { "https" } else { "http" };
    let query = opts
        .access
        .token
        .as_ref()
        .map_or_else(String::new, |t| format!("?token={t}"));
    let line = format_args!(
        "listening on {local} ({}: {}{}; viewer at {scheme}://{local}/{query})",
        if opts.tls.is_some() { "wss" } else { "ws" },
        dlp3d::ROUTES[2],
        ", …",
    );
    // The token is needed to connect at all: said even with --quiet.
    if opts.access.token.is_some() {
        l.always(line);
    } else {
        l.info(line);
    }
    if !local.ip().is_loopback() && opts.access.token.is_none() {
        l.always(format_args!(
            "warning: {local} is reachable from the network and no --token is set: any device or web page that can reach it can watch the stream (--token auto prints a viewer URL with one)"
        ));
    }
    l.info(format_args!(
        "listening on {vmc_addr} (VMC over UDP); Ctrl-C to stop"
    ));
}

/// Lets the writers send the Ends and close frames (bounded: a peer that
/// does not answer its close must not hold the exit).
fn wait_for_writers(active: &AtomicUsize) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while active.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
}

/// The accept thread on the run loop: each connection gets a thread of its
/// own (bounded by [`MAX_CONNECTIONS`], `--max-per-address` and
/// [`MAX_UNFINISHED`]), which reads the HTTP head and serves the page or
/// joins the session.
struct Acceptor {
    ctx: Arc<Context>,
    /// `--allow`: a connection from elsewhere is closed unread.
    allow: Vec<mocap_cli::allow::Cidr>,
    max_per_address: usize,
    active: Arc<AtomicUsize>,
    open: Arc<Mutex<limits::Open>>,
    join_tx: mpsc::Sender<Joined>,
    next_id: u64,
    /// When refusals counted but not logged are next looked at.
    next_log: Instant,
}

impl Acceptor {
    /// The accept thread.
    fn spawn(mut self, listener: std::net::TcpListener) -> std::io::Result<()> {
        thread::Builder::new()
            .name("accept".into())
            .spawn(move || {
                let mut feed = Accept::new(listener);
                // Ends with the process (or on Ctrl-C); only a failing listener ends it early.
                if let Err(e) = drive(&mut feed, None, None, &mut self) {
                    info(&self.ctx.log, format_args!("stopped accepting: {e:#}"));
                }
            })?;
        Ok(())
    }

    /// The connection, unless `--allow` or `--max-per-address` refuses it
    /// (closed unread). Admitted, it holds a place of its address.
    fn admit(&self, tcp: TcpStream, peer: SocketAddr) -> Option<TcpStream> {
        let ip = peer.ip();
        if !self.allow.is_empty() && !self.allow.iter().any(|c| c.contains(ip)) {
            drop(tcp);
            self.ctx.refuse(
                peer,
                |_| {},
                format_args!("{peer}: refused a connection: not in --allow (closed unread)"),
            );
            return None;
        }
        // Bounded: a connection flood costs refusals, not threads; one
        // address cannot take every place, and many addresses holding
        // heads they never finish give up the oldest to a newcomer.
        if !lock(&self.open).take(ip, self.max_per_address) {
            drop(tcp);
            self.ctx.refuse(
                peer,
                |s| s.over_limit += 1,
                format_args!(
                    "{peer}: refused a connection: {} already open from {} (--max-per-address)",
                    self.max_per_address,
                    limits::host(ip)
                ),
            );
            return None;
        }
        Some(tcp)
    }

    /// Refuses an admitted connection, giving its address's place back.
    fn refuse_taken(&self, peer: SocketAddr, why: std::fmt::Arguments<'_>) {
        lock(&self.open).give_back(peer.ip());
        self.ctx.refuse(peer, |s| s.over_limit += 1, why);
    }

    /// A place among [`MAX_CONNECTIONS`]: when all are held, the oldest
    /// unfinished head gives up its own (closed, counted); false (refused)
    /// when none can.
    fn make_room(&self, peer: SocketAddr, accepted: Instant) -> bool {
        let given_up = {
            let mut heads = lock(&self.ctx.heads);
            let held = self
                .active
                .load(Ordering::Relaxed)
                .saturating_sub(heads.closing());
            if held >= MAX_CONNECTIONS || heads.full() {
                let Some(old) = heads.make_room() else {
                    drop(heads);
                    self.refuse_taken(
                        peer,
                        format_args!(
                            "{peer}: refused a connection: {MAX_CONNECTIONS} connections already open"
                        ),
                    );
                    return false;
                };
                Some(old)
            } else {
                None
            }
        };
        if let Some((_, old)) = given_up {
            // Its thread's read ends at once, and it leaves quietly: counted here.
            let _ = old.socket.shutdown(std::net::Shutdown::Both);
            self.ctx.refuse(
                old.peer,
                |s| s.unfinished_closed += 1,
                format_args!(
                    "{}: closed a connection whose request head was unfinished after {:.1} s: its place was needed ({MAX_UNFINISHED} unfinished at most)",
                    old.peer,
                    accepted.saturating_duration_since(old.accepted).as_secs_f64()
                ),
            );
        }
        true
    }

    /// The connection's thread, which reads its head and serves it; its
    /// slot gives the places back when it ends.
    fn start(&mut self, tcp: TcpStream, socket: TcpStream, peer: SocketAddr, accepted: Instant) {
        let id = self.next_id;
        lock(&self.ctx.heads).push(
            id,
            Waiting {
                socket,
                peer,
                accepted,
            },
        );
        self.active.fetch_add(1, Ordering::Relaxed);
        let slot = Slot {
            active: Arc::clone(&self.active),
            open: Arc::clone(&self.open),
            heads: Arc::clone(&self.ctx.heads),
            ip: peer.ip(),
            id,
        };
        let (ctx, join) = (Arc::clone(&self.ctx), self.join_tx.clone());
        let spawned = thread::Builder::new()
            .name(format!("client-{id}"))
            .spawn(move || {
                let _slot = slot;
                connection(id, tcp, accepted, &ctx, &join);
            });
        if let Err(e) = spawned {
            // The connection went with the closure.
            self.ctx.refuse(
                peer,
                |_| {},
                format_args!("{peer}: cannot start a connection thread: {e}"),
            );
        }
    }
}

impl FeedHandler<Accept> for Acceptor {
    fn item(&mut self, (tcp, peer): (TcpStream, SocketAddr)) -> anyhow::Result<Flow> {
        let accepted = Instant::now();
        self.next_id += 1;
        let Some(tcp) = self.admit(tcp, peer) else {
            return Ok(Flow::Continue);
        };
        let Ok(socket) = tcp.try_clone() else {
            self.refuse_taken(
                peer,
                format_args!("{peer}: refused a connection: out of descriptors"),
            );
            return Ok(Flow::Continue);
        };
        if self.make_room(peer, accepted) {
            self.start(tcp, socket, peer, accepted);
        }
        Ok(Flow::Continue)
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        let now = Instant::now();
        if now >= self.next_log {
            self.next_log = now + Duration::from_secs(1);
            self.ctx.say_unsaid(Some(now));
        }
        Ok(None)
    }
}

/// Joins and writers' verdicts come on a channel and flags: looked at this often.
const JOIN_POLL: Duration = Duration::from_millis(5);

/// The session on the run loop: VMC datagrams in, client messages queued.
struct Server<'a> {
    /// `--allow` (shared with the VMC feed and the accept thread).
    guard: mocap_cli::allow::Guard,
    opts: &'a ServeOptions,
    session: Session,
    clients: HashMap<ClientId, Joined>,
    started: Instant,
    datagrams: u64,
    join_rx: mpsc::Receiver<Joined>,
    log: &'a Mutex<Log>,
    out: &'a mut Output,
    shared: &'a Mutex<Shared>,
}

impl FeedHandler<mocap_cli::inbox::UdpFeed> for Server<'_> {
    fn item(&mut self, (src, bytes): (SocketAddr, &[u8])) -> anyhow::Result<Flow> {
        self.datagrams += 1;
        self.session.handle_vmc(self.started.elapsed(), src, bytes);
        Ok(Flow::Continue)
    }

    /// New clients, writers that gave up, the session's timers, what it asks for.
    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        while let Ok(j) = self.join_rx.try_recv() {
            info(
                self.log,
                format_args!(
                    "client {} from {} on {} ({})",
                    j.id, j.addr, j.route, j.request.class_name
                ),
            );
            self.out.record(
                self.opts.format == Format::Json,
                &ClientRecord {
                    kind: "dlp3d.client",
                    client: j.id,
                    peer: j.addr,
                    route: &j.route,
                    class: &j.request.class_name,
                    text: &j.request.speech_text,
                },
            )?;
            self.session.handle_join(self.started.elapsed(), j.id);
            self.clients.insert(j.id, j);
        }
        // Writers that gave up (the peer closed or stopped reading).
        for (id, _) in self
            .clients
            .iter()
            .filter(|(_, c)| c.kicked.load(Ordering::Relaxed))
        {
            self.session.handle_gone(*id);
        }
        let now = self.started.elapsed();
        if self.session.poll_timeout().is_some_and(|t| now >= t) {
            self.session.handle_timeout(now);
        }
        act(
            &mut self.session,
            &mut self.clients,
            self.opts,
            self.log,
            self.out,
        )?;
        let served = self
            .opts
            .stop
            .count
            .is_some_and(|n| self.session.stats().served >= n);
        Ok((served && self.clients.is_empty()).then_some(Stopped::Count))
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        summary(
            &self.session,
            self.datagrams,
            self.started,
            self.opts,
            self.log,
            self.out,
            None,
            self.shared,
            &self.guard,
        )
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let now = self.started.elapsed();
        let timer = self
            .session
            .poll_timeout()
            .map_or(JOIN_POLL, |t| t.saturating_sub(now));
        Some(Instant::now() + timer.min(JOIN_POLL))
    }
}

fn info(log: &Mutex<Log>, args: std::fmt::Arguments<'_>) {
    if let Ok(l) = log.lock() {
        l.info(args);
    }
}

/// Does what the session asks: queues messages (reporting what a client's
/// queue refused), closes, prints the records of ended clients.
fn act(
    session: &mut Session,
    clients: &mut HashMap<ClientId, Joined>,
    opts: &ServeOptions,
    log: &Mutex<Log>,
    out: &mut Output,
) -> anyhow::Result<()> {
    while let Some(a) = session.poll_action() {
        match a {
            Action::Send { client, message } => {
                let Some(c) = clients.get(&client) else {
                    continue;
                };
                let why = match c.tx.try_send(Out::Msg(Bytes::from_owner(message))) {
                    Ok(()) => continue,
                    Err(TrySendError::Full(_)) => Refusal::Full,
                    Err(TrySendError::Disconnected(_)) => Refusal::Gone,
                };
                c.kicked.store(true, Ordering::Relaxed);
                session.handle_refused(client, why, opts.queue);
            }
            Action::Close { client, reason } => {
                if let Some(c) = clients.get(&client) {
                    let _ = c.tx.try_send(Out::Close(CloseCode::Normal, reason));
                }
            }
            Action::Ended(e) => {
                let addr = clients.remove(&e.client).map(|c| c.addr);
                if e.dropped == Some(true) {
                    info(
                        log,
                        format_args!(
                            "dropped client {}{}: {}",
                            e.client,
                            addr.map_or_else(String::new, |a| format!(" ({a})")),
                            e.reason
                        ),
                    );
                }
                out.record(
                    opts.format == Format::Json,
                    &ClientEndRecord {
                        kind: "dlp3d.client_end",
                        client: e.client,
                        frames: e.frames,
                        seconds: e.seconds.map(round3),
                        reason: &e.reason,
                        dropped: e.dropped,
                    },
                )?;
            }
            Action::Log(line) => info(log, format_args!("{line}")),
        }
    }
    Ok(())
}

#[expect(clippy::too_many_arguments, reason = "the summary's inputs")]
fn summary(
    session: &Session,
    datagrams: u64,
    started: Instant,
    opts: &ServeOptions,
    log: &Mutex<Log>,
    out: &mut Output,
    stopped: Option<Stopped>,
    shared: &Mutex<Shared>,
    guard: &mocap_cli::allow::Guard,
) -> anyhow::Result<()> {
    let (pages, connections, unauthorized, forbidden, over_limit, head_timeouts, closed, peers) =
        shared
            .lock()
            .map(|s| {
                (
                    s.pages,
                    s.refused,
                    s.unauthorized,
                    s.forbidden,
                    s.over_limit,
                    s.head_timeouts,
                    s.unfinished_closed,
                    s.refusals.totals(),
                )
            })
            .unwrap_or_default();
    let refusals = guard.summary();
    let st = session.stats();
    let rec = ServeSummary {
        kind: summary_kind(stopped),
        tool: TOOL,
        clients: st.clients,
        served: st.served,
        dropped: st.dropped,
        refused: connections + refusals.refused,
        refused_datagrams: refusals.refused,
        unauthorized,
        forbidden,
        over_limit,
        head_timeouts,
        unfinished_closed: closed,
        pages,
        vmc_datagrams: datagrams,
        vmc_frames: st.vmc_frames,
        decode_errors: st.decode_errors,
        frames_out: st.frames_out,
        blendshapes: st.blendshapes,
        elapsed_s: round3(started.elapsed().as_secs_f64()),
        stopped,
        refused_senders: refusals.refused_senders,
        refused_peers: peers
            .into_iter()
            .map(|(addr, connections)| RefusedPeer { addr, connections })
            .collect(),
    };
    // The log is shared with the connection threads (one that panicked
    // while logging leaves it usable).
    let log = log
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    report(
        out,
        &log,
        opts.format == Format::Json,
        &rec,
        stopped.is_some(),
    )?;
    Ok(())
}

/// What the viewer page needs: joint names and the humanoid layout it knows.
fn viewer_info(opts: &ServeOptions) -> String {
    #[derive(serde::Serialize)]
    struct Info<'a> {
        joints: &'a [String],
        restpose: &'a str,
    }
    serde_json::to_string(&Info {
        joints: &opts.session.rig.joints,
        restpose: &opts.session.restpose,
    })
    .unwrap_or_default()
}
