//! `mocap-link publish`: datagrams of any protocol from UDP listen
//! addresses, each published unchanged as one Zenoh sample under
//! `mocap/<room>/<performer>/<protocol>`, with the sender's address as the
//! attachment and the receive time as the timestamp. Publishers drop rather
//! than block and skip batching: a late pose is worth less than none.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use mocap_cli::allow::{AllowArgs, Guard, Refusals};
use mocap_cli::output::plural;
use mocap_cli::prelude::*;
use serde::Serialize;
use zenoh::Wait as _;
use zenoh::qos::{CongestionControl, Priority};
use zenoh::time::{NTP64, Timestamp};

use crate::key;
use crate::session::{self, Endpoint, ZenohArgs};
use crate::shared::{Attend, Attention, Shared};
use crate::streams::{Line, StreamRecord, Streams};

/// What `publish` was asked to do.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) udp: Vec<SocketAddr>,
    pub(crate) room: String,
    pub(crate) name: String,
    pub(crate) mode: session::Mode,
    pub(crate) listen: Vec<Endpoint>,
    pub(crate) zenoh: ZenohArgs,
    pub(crate) allow: AllowArgs,
    pub(crate) format: Format,
    pub(crate) stop: StopArgs,
    pub(crate) log: LogArgs,
}

/// Runs `publish` until `--count`, `--duration` or Ctrl-C.
///
/// Each UDP socket is read by a task on Zenoh's runtime, which publishes
/// what it reads there (under the state's lock, see [`crate::shared`]):
/// with the thread layout mocap-link sets ([`crate::runtime`]) that is the
/// thread that also sends Zenoh's batches, so a datagram wakes one thread,
/// as a plain forwarder does. Read on a thread of ours, each woke two, and
/// the second one's timer a third time (`docs/link.md`, "Measured delay").
/// The run loop asks Zenoh about routes, reports, and waits for the end.
///
/// # Errors
/// A UDP address that cannot be bound, a Zenoh session that cannot open.
pub(crate) fn run(o: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Log::new(crate::TOOL, o.log.quiet, true);
    let guard = Guard::new(&o.allow, Some(Log::new(crate::TOOL, o.log.quiet, false)));
    let mut sockets = Vec::new();
    for addr in &o.udp {
        let socket = mocap_cli::net::bind_udp(*addr, None)
            .with_context(|| format!("failed to listen on {addr}"))?;
        let local = socket.local_addr().unwrap_or(*addr);
        log.info(format_args!("listening on {local} (UDP)"));
        sockets.push(socket);
    }
    let config = session::config(&o.zenoh, o.mode.name(), &o.listen)?;
    let session = session::open(config, &log)?;
    // Answers the subscribers' round-trip probe; kept open for the run.
    let probe_key = key::probe(&o.room, &o.name);
    let reply_key = probe_key.clone();
    let outages = crate::watch::Outages::new();
    let asked = outages.asked();
    let _probe = session
        .declare_queryable(probe_key)
        .callback(move |query| {
            asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            // Replies under our own key (the query's may be a wildcard), so
            // the prober knows whose round trip it timed. One that cannot be
            // sent is one the prober counts as missing.
            let _ = query.reply(reply_key.clone(), Vec::<u8>::new()).wait();
        })
        .wait()
        .map_err(|e| anyhow::anyhow!(session::said(&e)))
        .context("failed to declare the probe")?;
    log.info(format_args!(
        "publishing as {} (zenoh id {})",
        key::stream(&o.room, &o.name, "<protocol>"),
        session.zid()
    ));
    let shared = Arc::new(Shared::new(Hot {
        room: o.room.clone(),
        name: o.name.clone(),
        clock: *session.new_timestamp().get_id(),
        session: session.clone(),
        publishers: BTreeMap::new(),
        streams: Streams::default(),
        log,
        datagrams: 0,
        published: 0,
        unmatched: 0,
        outages,
        paths: DatagramPaths::new(&o.room)?,
        put_errors: 0,
        count: o.stop.budget(),
        failed: None,
        closed: false,
    }));
    let mut readers = Readers(Vec::new());
    for socket in sockets {
        readers
            .0
            .push(spawn_reader(socket, guard.clone(), shared.clone())?);
    }
    let mut p = Publish {
        session: &session,
        shared: shared.clone(),
        readers,
        out: Output::stdout(true),
        log: Log::new(crate::TOOL, o.log.quiet, false),
        guard,
        json: o.format == Format::Json,
    };
    let stats = match o.format {
        Format::Human => Some(
            o.log
                .stats_interval
                .unwrap_or(mocap_cli::args::STATUS_INTERVAL),
        ),
        Format::Json => o.log.stats_interval,
    };
    let stopped = drive(&mut Attention::new(shared), o.stop.duration, stats, &mut p);
    p.readers.stop();
    p.report(Some(stopped?))?;
    drop(p);
    let _ = session.close().wait();
    Ok(())
}

/// The reading tasks, stopped when dropped.
struct Readers(Vec<tokio::task::JoinHandle<()>>);

impl Readers {
    fn stop(&self) {
        for r in &self.0 {
            r.abort();
        }
    }

    /// Whether one ended by itself: a panic in it (tokio keeps it from the
    /// process), since a socket that fails says so before it ends.
    fn one_ended(&self) -> bool {
        self.0.iter().any(tokio::task::JoinHandle::is_finished)
    }
}

impl Drop for Readers {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reads `socket` in a task on Zenoh's runtime (see [`run`]), refusing the
/// senders `guard` does not admit before anything else.
fn spawn_reader(
    socket: std::net::UdpSocket,
    guard: Guard,
    shared: Arc<Shared<Hot>>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let runtime: &tokio::runtime::Handle = &zenoh_runtime::ZRuntime::Application;
    socket
        .set_nonblocking(true)
        .context("failed to make a socket non-blocking")?;
    let socket = {
        let _inside = runtime.enter();
        tokio::net::UdpSocket::from_std(socket).context("failed to watch a socket")?
    };
    Ok(runtime.spawn(async move {
        let mut buf = vec![0; mocap_core::MAX_DATAGRAM];
        loop {
            let read = socket.recv_from(&mut buf).await;
            let at = mocap_cli::source::unix_time();
            let failure = match read {
                Ok((_, from)) if !guard.admit(Some(from)) => continue,
                Ok((n, from)) => {
                    {
                        let mut hot = shared.lock();
                        if !hot.done() {
                            hot.datagram(from, buf.get(..n).unwrap_or_default(), at);
                            if hot.done() {
                                shared.wake();
                            }
                        }
                    }
                    // Lets Zenoh's transmit task, on this thread, send the
                    // sample before the next is read: a burst read in one
                    // go (twenty phones at once) would fill its queue of 16,
                    // and the rest wait for room that cannot come while
                    // this task runs, then are dropped.
                    tokio::task::yield_now().await;
                    continue;
                }
                Err(e) => e,
            };
            match mocap_cli::net::recv_failure(&failure) {
                // Windows reports an ICMP answer to a datagram this socket
                // never sent on to it: nothing to do but read on.
                mocap_cli::net::RecvFailure::Idle
                | mocap_cli::net::RecvFailure::PortUnreachable => {}
                mocap_cli::net::RecvFailure::Fatal => {
                    shared.lock().failed =
                        Some(anyhow::Error::new(failure).context("failed to receive"));
                    shared.wake();
                    return;
                }
            }
        }
    }))
}

/// The run loop's side of `publish`.
struct Publish<'a> {
    session: &'a zenoh::Session,
    shared: Arc<Shared<Hot>>,
    readers: Readers,
    out: Output,
    log: Log,
    /// The sender check, shared with the readers: its refusals.
    guard: Guard,
    json: bool,
}

/// What the reading tasks and the run loop share.
struct Hot {
    room: String,
    name: String,
    session: zenoh::Session,
    /// The id this session stamps its timestamps with (its own, for the
    /// run): taken once, not from a new timestamp each sample.
    clock: zenoh::time::TimestampId,
    /// Shared with the run loop, which asks Zenoh about their subscribers
    /// without the lock.
    publishers: BTreeMap<&'static str, Arc<zenoh::pubsub::Publisher<'static>>>,
    streams: Streams,
    log: Log,
    datagrams: u64,
    published: u64,
    /// Published while no subscriber took them (Zenoh's matching status).
    unmatched: u64,
    outages: crate::watch::Outages,
    /// The subscribers that take sealed datagrams too.
    paths: DatagramPaths,
    put_errors: u64,
    count: mocap_cli::args::Budget,
    /// What ended the run in a reading task.
    failed: Option<anyhow::Error>,
    /// The summary is written: a reading task that was already past its
    /// read when it was stopped publishes nothing more.
    closed: bool,
}

impl Attend for Hot {
    fn needs_loop(&self) -> bool {
        self.done()
    }
}

impl Hot {
    fn done(&self) -> bool {
        self.count.spent() || self.failed.is_some() || self.closed
    }

    fn publisher(
        &mut self,
        protocol: &'static str,
    ) -> anyhow::Result<&zenoh::pubsub::Publisher<'static>> {
        if !self.publishers.contains_key(protocol) {
            let k = key::stream(&self.room, &self.name, protocol);
            // Declared, this session keeps the key's route (the remote
            // subscribers that take it) instead of matching the key against
            // every subscription for each sample: 3 % of a publisher's
            // instructions a sample, measured. (The subscriber declares the
            // keys it receives, where the same matching was half its work.)
            let declared = self
                .session
                .declare_keyexpr(k.clone())
                .wait()
                .map_err(|e| anyhow::anyhow!(session::said(&e)))
                .with_context(|| format!("failed to declare the key {k}"))?;
            let p = self
                .session
                .declare_publisher(declared)
                // Real time: never block the reader on a slow link, never
                // hold a sample back to batch it.
                .congestion_control(CongestionControl::Drop)
                .express(true)
                .priority(Priority::InteractiveHigh)
                .wait()
                .map_err(|e| anyhow::anyhow!(session::said(&e)))
                .with_context(|| format!("failed to declare a publisher on {k}"))?;
            self.log.info(format_args!("publishing {k}"));
            self.publishers.insert(protocol, Arc::new(p));
        }
        self.publishers
            .get(protocol)
            .map(|p| &**p)
            .context("publisher just declared")
    }

    /// One admitted datagram, received at `at` (Unix time): published, and
    /// sent to the subscribers that take datagrams.
    fn datagram(&mut self, from: SocketAddr, bytes: &[u8], at: std::time::Duration) {
        self.count.spend(1);
        self.datagrams += 1;
        let protocol = key::protocol_of(bytes);
        if let Some(gap) =
            self.streams
                .datagram(&self.name, protocol, Some(from), bytes, at.as_secs_f64())
        {
            self.log.info(format_args!(
                "{}/{protocol}: arriving again after {gap:.1} s",
                self.name
            ));
        }
        let id = self.clock;
        let ts = Timestamp::new(NTP64::from(at), id);
        let sender = from.to_string();
        let put = match self.publisher(protocol) {
            Ok(p) => p
                .put(bytes.to_vec())
                .timestamp(ts)
                .attachment(sender.clone())
                .wait(),
            Err(e) => {
                self.failed = Some(e);
                return;
            }
        };
        if let Some(p) = self.publishers.get(protocol)
            && !self.paths.is_empty()
        {
            self.paths.send(
                &crate::datagrams::Sample {
                    clock: id.to_le_bytes(),
                    capture: ts.get_time().as_u64(),
                    key: p.key_expr().as_str(),
                    sender: &sender,
                    payload: bytes,
                },
                &self.log,
            );
        }
        match put {
            Ok(()) => {
                self.published += 1;
                let key = self.publishers.get(protocol).map(|p| p.key_expr().as_str());
                if key.is_some_and(|k| self.outages.published(k)) {
                    self.unmatched += 1;
                }
            }
            Err(e) => {
                if self.put_errors == 0 {
                    self.log.info(format_args!(
                        "cannot publish: {e}; further failures are only counted"
                    ));
                }
                self.put_errors += 1;
            }
        }
    }
}

impl Publish<'_> {
    /// Written after the lock is let go: an output nobody reads would
    /// otherwise stop the reading tasks, and with them Zenoh's thread.
    fn report(&mut self, stopped: Option<Stopped>) -> anyhow::Result<()> {
        let mut hot = self.shared.lock();
        // The summary is the last word: nothing is published after it.
        hot.closed |= stopped.is_some();
        let r = PublishRecord {
            kind: mocap_cli::output::summary_kind(stopped),
            stopped,
            datagrams: hot.datagrams,
            published: hot.published,
            unmatched: hot.unmatched,
            datagrams_sent: hot.paths.sent,
            datagram_errors: hot.paths.failed,
            put_errors: hot.put_errors,
            untracked: hot.streams.untracked(),
            streams: hot
                .streams
                .records(mocap_cli::source::unix_time().as_secs_f64()),
            refusals: self.guard.summary(),
        };
        drop(hot);
        mocap_cli::output::report(&mut self.out, &self.log, self.json, &r, stopped.is_some())?;
        Ok(())
    }
}

impl FeedHandler<Attention<Hot>> for Publish<'_> {
    fn item(&mut self, never: std::convert::Infallible) -> anyhow::Result<Flow> {
        match never {}
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        // Zenoh is asked without the lock: its answers may wait on its
        // runtime's thread, which may be waiting for the lock (a datagram
        // being read).
        let (routes, query) = {
            let mut hot = self.shared.lock();
            if let Some(e) = hot.failed.take() {
                return Err(e);
            }
            if self.readers.one_ended() {
                anyhow::bail!("a UDP socket's reading task ended unexpectedly");
            }
            let routes = hot
                .outages
                .due()
                .then(|| hot.publishers.values().cloned().collect::<Vec<_>>());
            let hot = &mut *hot;
            hot.paths.take_answers(&hot.log);
            (routes, hot.paths.due_query())
        };
        let seen = routes.map(|p| crate::watch::Outages::ask(self.session, p.iter().map(|p| &**p)));
        if let Some(q) = query {
            q.ask(self.session);
        }
        let mut hot = self.shared.lock();
        let hot = &mut *hot;
        if let Some(seen) = seen {
            hot.outages.observe(seen, &hot.log);
        }
        let now = mocap_cli::source::unix_time().as_secs_f64();
        for (performer, protocol, for_s) in hot.streams.fell_silent(now) {
            hot.log.info(format_args!(
                "{performer}/{protocol}: nothing has arrived for {for_s:.1} s"
            ));
        }
        Ok(hot.count.spent().then_some(Stopped::Count))
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        self.report(None)
    }
}

/// How long a subscriber's datagram path is kept without its answer. An
/// outage stops the answers too, and after one on a lossy path Zenoh's
/// own connection can take many seconds to carry them again (seen: over
/// 10 s), while the datagrams already flow: a path dropped meanwhile froze
/// the stream until Zenoh was back. Datagrams to a subscriber that is gone
/// cost little, and one that restarts at the same address replaces its
/// old path at its first answer.
const PATH_EXPIRY: std::time::Duration = std::time::Duration::from_secs(60);

/// Most subscribers a publisher sends datagrams to: each costs a send per
/// sample, and anyone who may answer in the room could otherwise point a
/// publisher at any number of addresses.
const MAX_PATHS: usize = 8;

/// The subscribers that take sealed datagrams: asked for once a second
/// (`mocap/<room>/_datagrams/*`), kept while they answer.
struct DatagramPaths {
    query: String,
    socket: std::net::UdpSocket,
    next: std::time::Instant,
    /// Answers as they come (Zenoh's callback): reply key, address, key.
    answers: Arc<std::sync::Mutex<Vec<(String, SocketAddr, crate::datagrams::Key)>>>,
    /// By reply key: where, the sealer, its key id, when last answered.
    paths: BTreeMap<
        String,
        (
            SocketAddr,
            crate::datagrams::Sealer,
            [u8; 8],
            std::time::Instant,
        ),
    >,
    buf: Vec<u8>,
    sent: u64,
    failed: u64,
    /// Whether a path refused past [`MAX_PATHS`] was told.
    told_full: bool,
}

impl DatagramPaths {
    fn new(room: &str) -> anyhow::Result<Self> {
        let socket = std::net::UdpSocket::bind("0.0.0.0:0")
            .context("failed to open a socket for the datagram path")?;
        Ok(Self {
            query: format!("{}/{room}/{}/*", key::ROOT, key::DATAGRAMS),
            socket,
            next: std::time::Instant::now(),
            answers: Arc::default(),
            paths: BTreeMap::new(),
            buf: Vec::new(),
            sent: 0,
            failed: 0,
            told_full: false,
        })
    }

    fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Takes the answers in, forgets the paths that stopped answering.
    fn take_answers(&mut self, log: &Log) {
        use crate::datagrams::Sealer;
        let now = std::time::Instant::now();
        let answers = std::mem::take(
            &mut *self
                .answers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for (from, to, k) in answers {
            match self.paths.get_mut(&from) {
                Some(p) if p.0 == to && p.2 == k.id => p.3 = now,
                _ => match Sealer::new(&k) {
                    // A subscriber restarted at the same address: its old
                    // key goes.
                    Ok(sealer) if self.paths.values().any(|p| p.0 == to) => {
                        self.paths.retain(|_, p| p.0 != to);
                        log.info(format_args!(
                            "sending sealed datagrams to {to} with a new key (subscriber {from})"
                        ));
                        self.paths.insert(from, (to, sealer, k.id, now));
                    }
                    Ok(_) if self.paths.len() >= MAX_PATHS => {
                        if !std::mem::replace(&mut self.told_full, true) {
                            log.info(format_args!(
                                "{from} offers a datagram path, but {MAX_PATHS} are in use: \
                                 not taken (nor further ones while they are)"
                            ));
                        }
                    }
                    Ok(sealer) => {
                        log.info(format_args!(
                            "sending sealed datagrams to {to} too (subscriber {from})"
                        ));
                        self.paths.insert(from, (to, sealer, k.id, now));
                    }
                    Err(e) => log.info(format_args!("{e}: no datagram path to {to}")),
                },
            }
        }
        self.paths.retain(|from, p| {
            let keep = now.saturating_duration_since(p.3) < PATH_EXPIRY;
            if !keep {
                log.info(format_args!(
                    "no answer from {from} for {} s: no more datagrams to {}",
                    PATH_EXPIRY.as_secs(),
                    p.0
                ));
            }
            keep
        });
    }

    /// The question to ask now, once a second.
    fn due_query(&mut self) -> Option<PathQuery> {
        let now = std::time::Instant::now();
        if now < self.next {
            return None;
        }
        self.next = crate::watch::later(now, std::time::Duration::from_secs(1));
        Some(PathQuery {
            selector: self.query.clone(),
            answers: self.answers.clone(),
        })
    }

    /// One sample to every subscriber that takes datagrams.
    fn send(&mut self, s: &crate::datagrams::Sample<'_>, log: &Log) {
        for (to, sealer, ..) in self.paths.values_mut() {
            if !sealer.seal(s, &mut self.buf) {
                self.failed += 1;
                continue;
            }
            match self.socket.send_to(&self.buf, *to) {
                Ok(_) => self.sent += 1,
                Err(e) => {
                    if self.failed == 0 {
                        log.info(format_args!(
                            "cannot send a datagram to {to}: {e}; further failures are only counted"
                        ));
                    }
                    self.failed += 1;
                }
            }
        }
    }
}

/// The subscribers asked for their datagram paths; their answers are
/// gathered for [`DatagramPaths::take_answers`].
struct PathQuery {
    selector: String,
    answers: Arc<std::sync::Mutex<Vec<(String, SocketAddr, crate::datagrams::Key)>>>,
}

impl PathQuery {
    /// Asks; the answers come in Zenoh's callback.
    fn ask(self, session: &zenoh::Session) {
        use crate::datagrams::unhex;
        let answers = self.answers;
        let _ = session
            .get(&self.selector)
            .callback(move |reply| {
                let Ok(sample) = reply.result() else { return };
                let Ok(text) = sample.payload().try_to_string() else {
                    return;
                };
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
                    return;
                };
                let field = |k: &str| v.get(k).and_then(serde_json::Value::as_str);
                let to = field("to").and_then(|t| t.parse::<SocketAddr>().ok());
                let id = field("id").and_then(unhex::<8>);
                let secret = field("key").and_then(unhex::<32>);
                let mut answers = answers
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                // Bounded however many answer before the next poll.
                if let (Some(to), Some(id), Some(secret)) = (to, id, secret)
                    && answers.len() < 4 * MAX_PATHS
                {
                    answers.push((
                        sample.key_expr().as_str().to_owned(),
                        to,
                        crate::datagrams::Key { id, secret },
                    ));
                }
            })
            .wait();
    }
}

/// `stats` and `summary` records of `publish`.
#[derive(Debug, Serialize)]
struct PublishRecord {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<Stopped>,
    /// Datagrams received (and admitted by --allow).
    datagrams: u64,
    /// Samples handed to Zenoh.
    published: u64,
    /// Of those, samples published while no subscriber took them.
    unmatched: u64,
    /// Sealed datagrams sent to subscribers that take them, and sends that
    /// failed.
    datagrams_sent: u64,
    datagram_errors: u64,
    /// Samples Zenoh refused.
    put_errors: u64,
    /// Datagrams of streams past the bound, counted only.
    untracked: u64,
    streams: Vec<StreamRecord>,
    #[serde(flatten)]
    refusals: Refusals,
}

impl Record for PublishRecord {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} received, {} published",
            mocap_cli::output::summary_head(self.stopped),
            plural(self.datagrams, "datagram", "datagrams"),
            self.published
        )?;
        if self.unmatched > 0 {
            write!(f, " ({} with no subscriber)", self.unmatched)?;
        }
        if self.put_errors > 0 {
            write!(f, ", {} failed", self.put_errors)?;
        }
        f.write_str(&self.refusals.human())?;
        for s in &self.streams {
            write!(f, "\n  {}", Line(s))?;
        }
        Ok(())
    }
}
