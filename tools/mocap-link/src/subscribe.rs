//! `mocap-link subscribe`: samples under a key expression, each payload sent
//! unchanged to local UDP destinations from one local socket per remote
//! sender (receivers that tell senders apart by address still can), with
//! health per performer and protocol and the link's delay. Samples that
//! arrive more than `--max-lag` late (a backlog after a stall) are counted,
//! not sent: the latest pose wins.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use mocap_cli::net::Link;
use mocap_cli::output::plural;
use mocap_cli::prelude::*;
use mocap_cli::senders::Senders;
use mocap_cli::sends::{Receiver, SendRecord};
use serde::Serialize;
use zenoh::Wait as _;

use crate::delay::Clocks;
use crate::key;
use crate::session::{self, Endpoint, ZenohArgs};
use crate::shared::{Attend, Attention, Shared};
use crate::streams::{Line, StreamRecord, Streams};

/// Where samples go: every sample, or those of one protocol, one performer,
/// or one performer's protocol (`vmc=…`, `alice=…`, `alice/vmc=…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Route {
    pub(crate) only: Option<String>,
    pub(crate) to: SocketAddr,
}

impl Route {
    /// `[SELECTOR=]HOST:PORT`.
    pub(crate) fn parse(text: &str) -> Result<Self, mocap_cli::args::ValueError> {
        let (only, addr) = match text.split_once('=') {
            Some((sel, addr)) if !sel.is_empty() => (Some(sel.to_owned()), addr),
            Some(_) => {
                return Err(mocap_cli::args::ValueError(format!(
                    "expected [PROTOCOL|PERFORMER|PERFORMER/PROTOCOL=]HOST:PORT, got {text:?}"
                )));
            }
            None => (None, text),
        };
        Ok(Self {
            only,
            to: mocap_cli::addr::parse_dest(addr)?,
        })
    }

    fn takes(&self, performer: &str, protocol: &str) -> bool {
        match &self.only {
            None => true,
            Some(sel) => match sel.split_once('/') {
                Some((p, q)) => p == performer && q == protocol,
                None => sel == protocol || sel == performer,
            },
        }
    }
}

/// What `subscribe` was asked to do.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) key: String,
    pub(crate) room: String,
    pub(crate) to: Vec<Route>,
    pub(crate) max_lag: Option<Duration>,
    /// Samples larger than this are counted and not sent on.
    pub(crate) max_size: Option<usize>,
    /// Where to take sealed datagrams too, and the address to hand out.
    pub(crate) datagrams: Option<SocketAddr>,
    pub(crate) advertise: Option<SocketAddr>,
    pub(crate) probe: Option<Duration>,
    pub(crate) mode: session::Mode,
    pub(crate) listen: Vec<Endpoint>,
    pub(crate) zenoh: ZenohArgs,
    pub(crate) format: Format,
    pub(crate) stop: StopArgs,
    pub(crate) log: LogArgs,
}

/// The sample's sender, as the publisher wrote it in the attachment.
fn sender_of(sample: &zenoh::sample::Sample) -> Option<SocketAddr> {
    sample.attachment()?.try_to_string().ok()?.parse().ok()
}

/// Runs `subscribe` until `--count`, `--duration` or Ctrl-C.
///
/// Samples are sent on from Zenoh's own callback, under one lock: a hand-off
/// to the run loop cost a thread wake-up per sample (most of the
/// subscriber's CPU, and delay). The run loop only waits for the end, probes
/// and reports.
///
/// # Errors
/// A Zenoh session that cannot open, a key expression it refuses, a
/// destination socket that cannot be opened, an output that fails.
pub(crate) fn run(o: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Log::new(crate::TOOL, o.log.quiet, true);
    let config = session::config(&o.zenoh, o.mode.name(), &o.listen)?;
    let session = session::open(config, &log)?;
    for r in &o.to {
        // A destination no socket can reach (IPv6 on a host without it) is
        // said now, not at the first sample.
        drop(Link::new(r.to, Receiver::Vmc)?);
        match &r.only {
            Some(sel) => log.info(format_args!("sending {sel} to {}", r.to)),
            None => log.info(format_args!("sending to {}", r.to)),
        }
    }
    let shared = Arc::new(Shared::new(Forward::new(
        o.room.clone(),
        o.to.clone(),
        (o.max_lag, o.max_size),
        o.format == Format::Json,
        Output::stdout(true),
        log,
        o.stop.budget(),
    )));
    let on_sample = shared.clone();
    let subscriber = session
        .declare_subscriber(o.key.clone())
        .callback(move |sample| on_sample.sample(&sample))
        .wait()
        .map_err(|e| anyhow::anyhow!(session::said(&e)))
        .with_context(|| format!("failed to subscribe to {}", o.key))?;
    shared.lock().log.info(format_args!(
        "subscribed to {} (zenoh id {})",
        o.key,
        session.zid()
    ));
    let datagrams = match o.datagrams {
        Some(at) => {
            shared.lock().two_paths = true;
            Some(datagram_path(o, at, &session, &shared)?)
        }
        None => None,
    };
    let mut s = Subscribe {
        o,
        session: &session,
        shared: shared.clone(),
        next_probe: Instant::now(),
        declared: Vec::new(),
        declare_failed: false,
        outages: crate::watch::Outages::new(),
        log: Log::new(crate::TOOL, o.log.quiet, false),
    };
    let stats = match o.format {
        Format::Human => Some(
            o.log
                .stats_interval
                .unwrap_or(mocap_cli::args::STATUS_INTERVAL),
        ),
        Format::Json => o.log.stats_interval,
    };
    let mut feed = Attention::new(shared.clone());
    let stopped = drive(&mut feed, o.stop.duration, stats, &mut s);
    // No sample after the summary.
    let _ = subscriber.undeclare().wait();
    // Nor from the datagram path: its reader stops here.
    drop(datagrams);
    let stopped = stopped?;
    shared.lock().report(Some(stopped))?;
    let _ = session.close().wait();
    Ok(())
}

/// The datagram path's receiving end: its socket's reader and the
/// queryable that hands out where and with which key (dropped at the end).
struct DatagramPath {
    _queryable: zenoh::query::Queryable<()>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Drop for DatagramPath {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

/// Listens on `at` for sealed datagrams, under a new key handed out at
/// `mocap/<room>/_datagrams/<zid>`.
fn datagram_path(
    o: &Options,
    at: SocketAddr,
    session: &zenoh::Session,
    shared: &Arc<Shared<Forward>>,
) -> anyhow::Result<DatagramPath> {
    use crate::datagrams::{self, Key, Opener};
    use std::sync::atomic::{AtomicBool, Ordering};

    let socket = mocap_cli::net::bind_udp(at, Some(mocap_cli::runner::POLL))
        .with_context(|| format!("failed to listen for datagrams on {at}"))?;
    let local = socket.local_addr().unwrap_or(at);
    let advertise = match o.advertise {
        Some(a) => a,
        None if local.ip().is_unspecified() => anyhow::bail!(UsageError(format!(
            "--datagrams {at} listens on every address: give --advertise HOST:PORT, the \
             address publishers reach this machine at"
        ))),
        None => local,
    };
    let key = Key::random()?;
    let reply = serde_json::json!({
        "to": advertise.to_string(),
        "id": datagrams::hex(&key.id),
        "key": datagrams::hex(&key.secret),
    })
    .to_string();
    let advert_key = key::datagrams(&o.room, &session.zid().to_string());
    let replied = advert_key.clone();
    let queryable = session
        .declare_queryable(advert_key)
        .callback(move |query| {
            let _ = query.reply(replied.clone(), reply.clone()).wait();
        })
        .wait()
        .map_err(|e| anyhow::anyhow!(session::said(&e)))
        .context("failed to hand out the datagram path")?;
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (stop, shared) = (stop.clone(), shared.clone());
        let mut opener = Opener::new(&key);
        std::thread::Builder::new()
            .name("datagrams".into())
            .spawn(move || {
                let (mut buf, mut plain) = (vec![0u8; 65_536], Vec::new());
                while !stop.load(Ordering::SeqCst) {
                    let Ok((n, _)) = socket.recv_from(&mut buf) else {
                        continue;
                    };
                    let arrival = mocap_cli::source::unix_now();
                    match opener.open(buf.get(..n).unwrap_or_default(), &mut plain) {
                        Ok(s) => shared.datagram(&s, arrival),
                        Err(_) => shared.lock().refused_datagrams += 1,
                    }
                }
            })
            .context("failed to start the datagram reader")?
    };
    shared.lock().log.info(format_args!(
        "taking datagrams on {local} (handed out as {advertise})"
    ));
    Ok(DatagramPath {
        _queryable: queryable,
        stop,
        reader: Some(reader),
    })
}

fn record(to: SocketAddr) -> SendRecord {
    SendRecord {
        to,
        sent: 0,
        failed: 0,
        unreachable: 0,
    }
}

impl Shared<Forward> {
    /// A sample from Zenoh: sent on, counted, printed, here on Zenoh's thread.
    fn sample(&self, sample: &zenoh::sample::Sample) {
        let arrival = mocap_cli::source::unix_now();
        let payload = sample.payload().to_bytes();
        let capture = sample.timestamp().map(|t| Capture {
            at: t.get_time().to_duration().as_secs_f64(),
            clock: u128::from_le_bytes(t.get_id().to_le_bytes()),
        });
        self.deliver(
            sample.key_expr().as_str(),
            &payload,
            sender_of(sample),
            capture,
            arrival,
        );
    }

    /// A sample from the datagram path: as one from Zenoh.
    fn datagram(&self, s: &crate::datagrams::Sample<'_>, arrival: f64) {
        let capture = Capture {
            at: zenoh::time::NTP64(s.capture).to_duration().as_secs_f64(),
            clock: u128::from_le_bytes(s.clock),
        };
        self.deliver(
            s.key,
            s.payload,
            s.sender.parse().ok(),
            Some(capture),
            arrival,
        );
    }

    fn deliver(
        &self,
        key: &str,
        payload: &[u8],
        sender: Option<SocketAddr>,
        capture: Option<Capture>,
        arrival: f64,
    ) {
        let mut f = self.lock();
        if f.done() {
            return;
        }
        let waiting = f.undeclared;
        let sent = f.sample(key, payload, sender, capture, arrival);
        if let Err(e) = sent {
            f.failed = Some(e);
        }
        if f.done() || (f.undeclared && !waiting) {
            self.wake();
        }
    }
}

impl Attend for Forward {
    fn needs_loop(&self) -> bool {
        self.done() || self.undeclared
    }
}

/// One remote sender's local end: a socket per destination that takes its
/// samples, so each remote sender has a source address of its own here.
struct Outlet {
    links: Vec<Option<Link>>,
    staleness: Clocks,
    /// Samples taken, and the newest one's arrival (Unix seconds): a live
    /// outlet is never evicted for a newcomer.
    samples: u64,
    last: f64,
}

impl Outlet {
    fn is_live(&self, now: f64) -> bool {
        self.samples >= 3 && now - self.last < crate::streams::LIVE_S
    }
}

/// When a sample was captured, by the clock that stamped it (the
/// publisher's, or a router's: see [`Clocks`]).
#[derive(Clone, Copy, Debug)]
struct Capture {
    /// Unix seconds on that clock.
    at: f64,
    /// The id of the clock (Zenoh's timestamp id).
    clock: u128,
}

/// How many samples [`Firsts`] remembers: seconds of every stream of a
/// room (60 Hz × 8 performers × 3 protocols is 1 440 a second).
const FIRSTS: usize = 8192;

/// The samples sent on lately, by (clock, capture time, key and sender),
/// bounded.
#[derive(Default)]
struct Firsts {
    order: std::collections::VecDeque<(u128, u64, u64)>,
    set: std::collections::HashSet<(u128, u64, u64)>,
}

impl Firsts {
    /// Whether this is the first copy of the sample, remembering it.
    fn first(&mut self, c: Capture, key: &str, sender: Option<SocketAddr>) -> bool {
        use std::hash::{Hash as _, Hasher as _};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        // Two senders' datagrams stamped in the same instant are two samples.
        (key, sender).hash(&mut h);
        let id = (c.clock, c.at.to_bits(), h.finish());
        if !self.set.insert(id) {
            return false;
        }
        self.order.push_back(id);
        if self.order.len() > FIRSTS
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        true
    }
}

/// Everything a sample changes.
struct Forward {
    /// The subscriber's room: its performers go by their bare names.
    room: String,
    routes: Vec<Route>,
    max_lag: Option<Duration>,
    max_size: Option<usize>,
    json: bool,
    streams: Streams,
    /// By performer (or the whole key of a foreign one), then remote
    /// sender; looked up by borrowed name, bounded as every per-sender map.
    outlets: Senders<Outlet, (String, Option<SocketAddr>)>,
    /// Counts no live outlet holds, per route: those of evicted outlets,
    /// and datagrams for which no socket could be opened.
    retired: Vec<SendRecord>,
    /// Per route: a failure has been logged (by any outlet's socket).
    told: Vec<bool>,
    /// Every stream key seen (bounded), and whether the run loop has
    /// declared it to Zenoh yet (see [`Subscribe::declare_keys`]).
    keys: Senders<bool, String>,
    /// A key is waiting to be declared.
    undeclared: bool,
    out: Output,
    log: Log,
    samples: u64,
    stale: u64,
    /// Samples past --max-size.
    oversize: u64,
    /// Samples recently sent on, by clock and capture time: the second
    /// copy of one (Zenoh's and the datagram path's) is not sent again.
    firsts: Firsts,
    /// Whether samples come by two paths (`--datagrams`): only then is a
    /// second copy looked for.
    two_paths: bool,
    /// Second copies dropped.
    second_copies: u64,
    /// Datagrams on the datagram path that did not open (another key,
    /// forged, replayed, not ours).
    refused_datagrams: u64,
    count: mocap_cli::args::Budget,
    /// What ended the run from a callback, for the run loop to return.
    failed: Option<anyhow::Error>,
}

fn receiver_for(protocol: &str) -> Receiver {
    key::protocol_named(protocol).map_or(Receiver::Vmc, Receiver::for_protocol)
}

fn add(total: &mut SendRecord, r: SendRecord) {
    total.sent += r.sent;
    total.failed += r.failed;
    total.unreachable += r.unreachable;
}

impl Forward {
    fn new(
        room: String,
        routes: Vec<Route>,
        (max_lag, max_size): (Option<Duration>, Option<usize>),
        json: bool,
        out: Output,
        log: Log,
        count: mocap_cli::args::Budget,
    ) -> Self {
        Self {
            retired: routes.iter().map(|r| record(r.to)).collect(),
            told: vec![false; routes.len()],
            room,
            routes,
            max_lag,
            max_size,
            json,
            streams: Streams::default(),
            outlets: Senders::new(),
            keys: Senders::new(),
            undeclared: false,
            out,
            log,
            samples: 0,
            stale: 0,
            oversize: 0,
            firsts: Firsts::default(),
            two_paths: false,
            second_copies: 0,
            refused_datagrams: 0,
            count,
            failed: None,
        }
    }

    /// Whether samples stop here: `--count` reached, or a failure to report.
    fn done(&self) -> bool {
        self.count.spent() || self.failed.is_some()
    }

    /// One sample that arrived at `arrival` (Unix seconds).
    fn sample(
        &mut self,
        k: &str,
        payload: &[u8],
        sender: Option<SocketAddr>,
        capture: Option<Capture>,
        arrival: f64,
    ) -> anyhow::Result<()> {
        if let Some(c) = capture.filter(|_| self.two_paths)
            && !self.firsts.first(c, k, sender)
        {
            self.second_copies += 1;
            return Ok(());
        }
        self.samples += 1;
        self.count.spend(1);
        if !self.keys.contains_key(k) && self.keys.try_insert_with(k, || false).is_some() {
            self.undeclared = true;
        }
        let (room, bare, protocol) = key::split(k);
        // Performers of another room (a key expression over several) are
        // other performers: their health and sockets are apart.
        let performer = match room {
            Some(r) if r != self.room => key::room_and_performer(k).unwrap_or(bare),
            _ => bare,
        };
        if let Some(gap) = self
            .streams
            .datagram(performer, protocol, sender, payload, arrival)
        {
            self.log.info(format_args!(
                "{performer}/{protocol}: arriving again after {gap:.1} s"
            ));
        }
        let age_ms = capture.map(|c| (arrival - c.at) * 1000.0);
        if let Some(ms) = age_ms {
            self.streams.one_way(performer, protocol, ms);
        }
        if self.max_size.is_some_and(|max| payload.len() > max) {
            self.oversize += 1;
            self.streams.oversize(performer, protocol);
            return Ok(());
        }
        let routes = self.routes.len();
        let Some((outlet, gone)) = self.outlets.get_or_insert_sparing(
            mocap_cli::senders::pair(&(performer, &sender)),
            || Outlet {
                links: (0..routes).map(|_| None).collect(),
                staleness: Clocks::default(),
                samples: 0,
                last: arrival,
            },
            |o| o.is_live(arrival),
        ) else {
            // Every outlet is a live sender's: a newcomer waits for one to
            // go quiet; counted (`outlets_full`).
            return Ok(());
        };
        outlet.samples += 1;
        outlet.last = arrival;
        // An evicted outlet's sockets close here; its counts stay in the totals.
        if let Some(gone) = gone {
            for (total, link) in self.retired.iter_mut().zip(&gone.links) {
                if let Some(l) = link {
                    add(total, l.record());
                }
            }
        }
        let stale = match (capture, self.max_lag) {
            (Some(c), Some(lag)) => {
                outlet
                    .staleness
                    .is_stale(c.clock, c.at, arrival, lag.as_secs_f64())
            }
            _ => false,
        };
        if stale {
            self.stale += 1;
            self.streams.stale(performer, protocol);
        } else {
            let per_route = self.routes.iter().zip(outlet.links.iter_mut());
            for ((route, link), (told, apart)) in
                per_route.zip(self.told.iter_mut().zip(&mut self.retired))
            {
                if !route.takes(bare, protocol) {
                    continue;
                }
                let link = match link {
                    Some(l) => l,
                    None => match Link::new(route.to, receiver_for(protocol)) {
                        Ok(l) => link.insert(l),
                        // Out of sockets, say (a socket per remote sender and
                        // route): this datagram is counted as failed and the
                        // next one tries again; the run goes on.
                        Err(e) => {
                            apart.failed += 1;
                            if !std::mem::replace(told, true) {
                                self.log
                                    .info(format_args!("{e}; further failures are only counted"));
                            }
                            continue;
                        }
                    },
                };
                // One line per destination, whichever remote sender's socket
                // fails first.
                if *told {
                    link.hush();
                }
                link.send(payload, &self.log);
                *told |= link.told();
            }
        }
        if self.json {
            self.out.json(&SampleRecord {
                kind: "link.sample",
                key: k,
                performer,
                protocol,
                sender,
                bytes: payload.len(),
                age_ms: age_ms.map(mocap_cli::output::round3),
                stale,
            })?;
        }
        Ok(())
    }

    /// The stream keys seen since the last call, marked declared.
    fn take_undeclared(&mut self) -> Vec<String> {
        let mut new = Vec::new();
        if !std::mem::take(&mut self.undeclared) {
            return new;
        }
        self.keys.retain(|k, declared| {
            if !*declared {
                *declared = true;
                new.push(k.clone());
            }
            true
        });
        new
    }

    /// A probe's answer from `performer` after `rtt`.
    fn round_trip(&mut self, performer: &str, rtt: Duration) {
        let ms = rtt.as_secs_f64() * 1000.0;
        if self.streams.round_trip(performer, ms) {
            self.log
                .info(format_args!("{performer} answers (round trip {ms:.2} ms)"));
        }
    }

    fn sends(&self) -> Vec<SendRecord> {
        let mut totals = self.retired.clone();
        for o in self.outlets.values() {
            for (total, link) in totals.iter_mut().zip(&o.links) {
                if let Some(l) = link {
                    add(total, l.record());
                }
            }
        }
        totals
    }

    fn report(&mut self, stopped: Option<Stopped>) -> anyhow::Result<()> {
        let r = SubscribeRecord {
            kind: mocap_cli::output::summary_kind(stopped),
            stopped,
            samples: self.samples,
            stale: self.stale,
            oversize: self.oversize,
            second_copies: self.second_copies,
            refused_datagrams: self.refused_datagrams,
            senders: self.outlets.len(),
            evicted_senders: self.outlets.evicted_senders(),
            outlets_full: self.outlets.overflow(),
            untracked: self.streams.untracked(),
            streams: self.streams.records(mocap_cli::source::unix_now()),
            sends: self.sends(),
        };
        mocap_cli::output::report(&mut self.out, &self.log, self.json, &r, stopped.is_some())?;
        Ok(())
    }
}

/// The run loop's side: probes, stats, and the end.
struct Subscribe<'a> {
    o: &'a Options,
    session: &'a zenoh::Session,
    shared: Arc<Shared<Forward>>,
    next_probe: Instant,
    /// The stream keys declared to Zenoh (at most [`mocap_cli::senders::MAX_SENDERS`]).
    declared: Vec<zenoh::key_expr::KeyExpr<'static>>,
    /// Whether a failed declaration was told.
    declare_failed: bool,
    /// Routers and peers lost and found, and where that is said.
    outages: crate::watch::Outages,
    log: Log,
}

impl Subscribe<'_> {
    /// Declares the stream keys seen since last time to this session.
    ///
    /// Zenoh keeps a key's route (which subscribers take it) only for a key
    /// its session has declared; for any other, every sample is matched
    /// against every subscription again, which measured half of the
    /// subscriber's work per sample. A publisher does not declare its keys
    /// to other sessions, so the subscriber declares what it receives. From
    /// the run loop, not Zenoh's callback: a declaration takes the lock that
    /// the callback's caller holds.
    fn declare_keys(&mut self) {
        let keys = self.shared.lock().take_undeclared();
        for k in keys {
            match self.session.declare_keyexpr(k).wait() {
                Ok(ke) => self.declared.push(ke),
                Err(e) if !self.declare_failed => {
                    self.declare_failed = true;
                    self.shared.lock().log.info(format_args!(
                        "cannot declare a stream key ({e}): its samples still arrive, \
                         each routed anew"
                    ));
                }
                Err(_) => {}
            }
        }
    }

    fn probe(&mut self) {
        let sent = Instant::now();
        let shared = self.shared.clone();
        let sel = key::probe(&self.o.room, "*");
        let asked = self
            .session
            .get(sel)
            .callback(move |reply| {
                if let Ok(sample) = reply.result() {
                    let (_, performer, _) = key::split(sample.key_expr().as_str());
                    shared.lock().round_trip(performer, sent.elapsed());
                }
            })
            .timeout(Duration::from_secs(1))
            .wait();
        if let Err(e) = asked {
            self.shared
                .lock()
                .log
                .info(format_args!("cannot probe: {e}"));
        }
    }
}

impl FeedHandler<Attention<Forward>> for Subscribe<'_> {
    fn item(&mut self, never: std::convert::Infallible) -> anyhow::Result<Flow> {
        match never {}
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        {
            let mut f = self.shared.lock();
            if let Some(e) = f.failed.take() {
                return Err(e);
            }
            if f.count.spent() {
                return Ok(Some(Stopped::Count));
            }
            // A stream that stops is said within a second, whatever its
            // history (the status line comes every few seconds).
            let now = mocap_cli::source::unix_now();
            for (performer, protocol, for_s) in f.streams.fell_silent(now) {
                f.log.info(format_args!(
                    "{performer}/{protocol}: nothing has arrived for {for_s:.1} s"
                ));
            }
        }
        // Outside the lock: Zenoh's callback needs it for every sample.
        if self.outages.due() {
            let seen = crate::watch::Outages::ask(self.session, std::iter::empty());
            self.outages.observe(seen, &self.log);
        }
        self.declare_keys();
        if let Some(every) = self.o.probe
            && Instant::now() >= self.next_probe
        {
            self.next_probe = crate::watch::later(Instant::now(), every);
            self.probe();
        }
        Ok(None)
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        self.shared.lock().report(None)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.o.probe.map(|_| self.next_probe)
    }
}

/// One sample as `--format json` prints it.
#[derive(Debug, Serialize)]
struct SampleRecord<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    key: &'a str,
    performer: &'a str,
    protocol: &'a str,
    /// The remote sender, from the sample's attachment.
    sender: Option<SocketAddr>,
    bytes: usize,
    /// Arrival minus capture time, where the sample has a timestamp.
    age_ms: Option<f64>,
    /// Too late to send on (--max-lag).
    stale: bool,
}

/// `stats` and `summary` records of `subscribe`.
#[derive(Debug, Serialize)]
struct SubscribeRecord {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<Stopped>,
    samples: u64,
    /// Samples not sent on: more than --max-lag late.
    stale: u64,
    /// Samples not sent on: larger than --max-size.
    oversize: u64,
    /// The datagram path: second copies of samples already sent on, and
    /// datagrams that did not open.
    second_copies: u64,
    refused_datagrams: u64,
    /// Remote senders with a local socket now.
    senders: usize,
    evicted_senders: u64,
    /// Samples of a new remote sender not sent on: every local socket was
    /// a live sender's.
    outlets_full: u64,
    untracked: u64,
    streams: Vec<StreamRecord>,
    sends: Vec<SendRecord>,
}

impl Record for SubscribeRecord {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}, {} stale, {} remote senders",
            mocap_cli::output::summary_head(self.stopped),
            plural(self.samples, "sample", "samples"),
            self.stale,
            self.senders
        )?;
        if self.oversize > 0 {
            write!(f, ", {} over --max-size", self.oversize)?;
        }
        for s in &self.streams {
            write!(f, "\n  {}", Line(s))?;
        }
        mocap_cli::sends::write_sends(f, &self.sends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(routes: Vec<Route>) -> Forward {
        Forward::new(
            "default".to_owned(),
            routes,
            (None, None),
            false,
            Output::stdout(false),
            Log::new(crate::TOOL, true, false),
            mocap_cli::args::Budget::default(),
        )
    }

    /// Issue 58: thousands of made-up performer keys evicted alice's socket
    /// (139 source ports seen by her receiver). Her outlet is live, so it
    /// stays: every datagram of hers leaves from one port.
    #[test]
    fn a_flood_of_strangers_never_moves_a_live_performers_socket() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let to = rx.local_addr().unwrap();
        let mut f = quiet(vec![Route::parse(&format!("alice={to}")).unwrap()]);
        let alice: SocketAddr = "192.0.2.1:1000".parse().unwrap();
        let mut t = 1.0;
        // Alice streams at 60 Hz; once she is live, 300 made-up names come
        // between two of her datagrams (18 000 a second), more than the
        // 256 outlets kept.
        for k in 0..30u32 {
            t += 1.0 / 60.0;
            f.sample("mocap/default/alice/vmc", b"x", Some(alice), None, t)
                .unwrap();
            if k >= 3 {
                for i in 0..300 {
                    let fake = format!("mocap/default/fake{k}-{i}/vmc");
                    f.sample(&fake, b"y", Some(alice), None, t).unwrap();
                }
            }
        }
        let mut ports = std::collections::BTreeSet::new();
        let mut buf = [0; 16];
        let mut got = 0;
        while let Ok((n, from)) = rx.recv_from(&mut buf) {
            assert_eq!(&buf[..n], b"x");
            ports.insert(from.port());
            got += 1;
        }
        assert_eq!(got, 30);
        assert_eq!(ports.len(), 1, "{ports:?}");
        assert_eq!(f.outlets.evicted_senders(), 27 * 300 - 255);
    }

    /// Issue 58: 1 MB samples were carried and then counted as stale, the
    /// receiver's socket buffers full of them. Past --max-size they stop
    /// here, counted per stream; the performer's own pass.
    #[test]
    fn samples_past_max_size_are_counted_not_sent() {
        let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        rx.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let to = rx.local_addr().unwrap();
        let mut f = quiet(vec![Route::parse(&to.to_string()).unwrap()]);
        f.max_size = Some(16_384);
        let big = vec![0u8; 1 << 20];
        f.sample("mocap/default/mallory/vmc", &big, None, None, 1.0)
            .unwrap();
        f.sample("mocap/default/alice/vmc", b"pose", None, None, 1.0)
            .unwrap();
        let mut buf = [0; 64];
        assert_eq!(rx.recv(&mut buf).unwrap(), 4);
        assert!(rx.recv(&mut buf).is_err(), "the big one was not sent");
        assert_eq!(f.oversize, 1);
        let records = f.streams.records(mocap_cli::source::unix_now());
        let mallory = records
            .iter()
            .find(|r| r.from.performer == "mallory")
            .unwrap();
        assert_eq!(mallory.own.oversize, 1);
        let json = serde_json::to_string(&mallory.own).unwrap();
        assert!(json.contains("\"oversize\":1"), "{json}");
    }

    /// Nothing listens at the destination: each remote sender's socket
    /// fails there, and only the first failure of the destination is told
    /// (the later sockets are hushed); every failure is counted.
    #[test]
    fn a_destination_that_fails_is_told_once_for_all_remote_senders() {
        let closed = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = closed.local_addr().unwrap();
        drop(closed);
        let mut f = quiet(vec![Route::parse(&to.to_string()).unwrap()]);
        let a: SocketAddr = "192.0.2.1:1000".parse().unwrap();
        let b: SocketAddr = "192.0.2.2:1000".parse().unwrap();
        // Linux and macOS refuse the send after the "port unreachable";
        // Windows reads it off the socket now and then: bounded either way.
        for _ in 0..100 {
            f.sample("mocap/default/alice/vmc", b"x", Some(a), None, 1.0)
                .unwrap();
            if f.told[0] {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(f.told[0], "the destination's failure was told");
        f.sample("mocap/default/alice/vmc", b"x", Some(b), None, 1.0)
            .unwrap();
        let outlet = f
            .outlets
            .get(mocap_cli::senders::pair(&("alice", &Some(b))))
            .unwrap();
        let link = outlet.links[0].as_ref().unwrap();
        assert!(link.told(), "a second sender's socket is hushed");
        let sends = f.sends();
        assert_eq!(sends.len(), 1);
        assert!(sends[0].failed >= 1, "{sends:?}");
        assert_eq!(sends[0].sent + sends[0].failed, f.samples, "{sends:?}");
    }

    /// A key expression over several rooms: the same performer name in two
    /// rooms is two performers, each with health of its own (their frame
    /// numbers interleaved would count as lost and reordered).
    #[test]
    fn one_name_in_two_rooms_is_two_performers() {
        let mut f = quiet(Vec::new());
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures/mocopi/");
        let frame = std::fs::read(format!("{dir}seed-frame-1575.bin")).unwrap();
        for (i, k) in ["mocap/default/alice/mocopi", "mocap/studio/alice/mocopi"]
            .iter()
            .cycle()
            .take(6)
            .enumerate()
        {
            f.sample(k, &frame, None, None, 1.0 + i as f64 / 60.0)
                .unwrap();
        }
        let streams = f.streams.records(mocap_cli::source::unix_now());
        let names: Vec<&str> = streams.iter().map(|s| s.from.performer.as_str()).collect();
        assert_eq!(names, ["alice", "studio/alice"]);
        for s in &streams {
            assert_eq!(
                (s.counts.datagrams, s.counts.reordered, s.counts.lost),
                (3, 0, 0),
                "{s:?}"
            );
        }
    }

    #[test]
    fn routes_pick_by_protocol_performer_or_both() {
        let all = Route::parse("127.0.0.1:9").unwrap();
        let vmc = Route::parse("vmc=127.0.0.1:39539").unwrap();
        let alice = Route::parse("alice=127.0.0.1:1").unwrap();
        let both = Route::parse("bob/mocopi=[::1]:12351").unwrap();
        assert_eq!(vmc.only.as_deref(), Some("vmc"));
        assert!(all.takes("bob", "vmc"));
        assert!(vmc.takes("bob", "vmc") && !vmc.takes("bob", "mocopi"));
        assert!(alice.takes("alice", "mocopi") && !alice.takes("bob", "mocopi"));
        assert!(both.takes("bob", "mocopi") && !both.takes("alice", "mocopi"));
        assert!(Route::parse("=127.0.0.1:9").is_err());
        assert!(Route::parse("vmc=nowhere").is_err());
    }

    /// Each new stream key is handed to the run loop once, to declare, and
    /// no more than the bound of them.
    #[test]
    fn new_stream_keys_are_handed_out_once_and_bounded() {
        let mut f = quiet(Vec::new());
        f.sample("mocap/default/alice/vmc", b"x", None, None, 1.0)
            .unwrap();
        f.sample("mocap/default/alice/vmc", b"x", None, None, 1.1)
            .unwrap();
        f.sample("mocap/studio/bob/mocopi", b"x", None, None, 1.2)
            .unwrap();
        assert_eq!(
            f.take_undeclared(),
            ["mocap/default/alice/vmc", "mocap/studio/bob/mocopi"]
        );
        assert!(f.take_undeclared().is_empty());
        f.sample("mocap/default/alice/vmc", b"x", None, None, 1.3)
            .unwrap();
        assert!(f.take_undeclared().is_empty(), "a known key again");
        for i in 0..2 * mocap_cli::senders::MAX_SENDERS {
            f.sample(&format!("flood/{i}"), b"x", None, None, 2.0)
                .unwrap();
        }
        assert_eq!(
            f.take_undeclared().len(),
            mocap_cli::senders::MAX_SENDERS - 2
        );
        assert_eq!(f.keys.len(), mocap_cli::senders::MAX_SENDERS);
    }
}
