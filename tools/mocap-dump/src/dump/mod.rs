//! `mocap-dump`: datagrams of any registry protocol from sockets or a file,
//! each recognised by content (or decoded as `--protocol`), written through
//! the registry's [`View`](mocap_core::protocol::View), with health per
//! sender and protocol, poses bridged to VMC, and senders asked to stream.
//! The binary parses flags into [`Options`] and calls [`run`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use mocap_cli::dump::{self, Core, DumpArgs, DumpTool, Mode, Spec};
use mocap_cli::net::Fanout;
use mocap_cli::output::summary_kind;
use mocap_cli::prelude::*;
use mocap_cli::senders::Senders;
use mocap_cli::source::{Datagram, Input, InputError, Source};
use mocap_core::bridge::FaceOptions;
use mocap_core::health::{Health, HealthReport};
use mocap_core::protocol::{self, Carries, Protocol, Stamp};
use mocap_core::vmc;

mod answer;
mod ask;
mod pose;
mod records;
mod view;
mod vmt;

use answer::Answerers;
use ask::Askers;
use pose::Pose;
use records::{Counted, StreamRecord, SummaryRecord, VmcSummary, VmtSummary};
use view::{HumanView, JsonView};
use vmt::{Slots, VmtSink};

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "mocap-dump";

/// Numbered sequences told apart per stream (Live Link subjects through one
/// relay); more are decoded but not counted apart, so a spoofing sender
/// cannot grow memory without bound.
const MAX_PARTS: usize = 16;

/// How many streams a periodic stats record lists (the busiest).
const STATS_STREAMS: usize = 8;

/// Where datagrams come from.
#[derive(Clone, Debug)]
pub(crate) enum In {
    /// A capture or text file, or stdin.
    Read(PathBuf),
    /// Sockets: `-l` as given, or the default ports (those taken skipped).
    Listen { addrs: Vec<SocketAddr>, given: bool },
}

/// Everything `mocap-dump` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    pub(crate) input: In,
    /// `--protocol`: decode everything as this one.
    pub(crate) protocol: Option<Protocol>,
    /// Pacing, `-w`, `--allow`, `--count`/`--duration`, logging.
    pub(crate) common: DumpArgs,
    /// What is printed (bridging without `--format`: the status line).
    pub(crate) mode: Mode,
    /// `--vmc` and its options.
    pub(crate) vmc: Option<VmcOut>,
    /// `--ask`: each protocol asked and its sender's address.
    pub(crate) ask: Vec<(Protocol, SocketAddr)>,
    /// `--vmt` destinations and `--vmt-base`.
    pub(crate) vmt: Option<(Vec<SocketAddr>, u8)>,
    /// `--answer`: the protocols answered for (those whose row can).
    pub(crate) answer: Option<Vec<Protocol>>,
}

/// Where and how `--vmc` sends poses.
#[derive(Clone, Debug)]
pub(crate) struct VmcOut {
    /// VMC receivers.
    pub(crate) to: Vec<SocketAddr>,
    /// Names, clamping, head bone, axes, behaviour without a face.
    pub(crate) face: FaceOptions,
    /// `--smooth`.
    pub(crate) smooth: Option<vmc::SmoothOptions>,
}

/// Every default port of `protocol`, or of every protocol, on every
/// interface, each once.
pub(crate) fn default_listen(protocol: Option<Protocol>) -> Vec<SocketAddr> {
    let mut ports: Vec<u16> = match protocol {
        Some(p) => p.default_ports().to_vec(),
        None => Protocol::ALL
            .iter()
            .flat_map(|p| p.default_ports().iter().copied())
            .collect(),
    };
    let mut seen = std::collections::HashSet::new();
    ports.retain(|p| seen.insert(*p));
    ports.into_iter().map(mocap_cli::addr::any_ipv4).collect()
}

/// Binds the listening sockets: every `-l` address, or the default ports
/// that are free (each one taken said once; none free is an error).
fn listen(addrs: &[SocketAddr], given: bool, log: &Log) -> anyhow::Result<Source> {
    let mut sockets = Vec::new();
    for addr in addrs {
        match mocap_cli::source::bind_listen(*addr) {
            Ok(s) => sockets.push(s),
            Err(e) if !given => log.info(format_args!("not listening on {addr}: {e:#}")),
            Err(e) => return Err(e),
        }
    }
    if sockets.is_empty() {
        anyhow::bail!(
            "no default port could be listened on (every one is taken); listen elsewhere \
             with -l ADDR, or read a capture with -r FILE|-"
        );
    }
    Ok(Source::listening(sockets))
}

/// Runs the tool to the end and prints the summary.
///
/// # Errors
/// Input that cannot be opened or read, and output errors.
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    let quiet = opts.common.log.quiet;
    let (source, input) = match &opts.input {
        In::Read(path) => {
            let input = Input::Read(path.clone());
            (Source::open(&input)?, input)
        }
        In::Listen { addrs, given } => {
            let log = Log::new(TOOL, quiet, true);
            let source = listen(addrs, *given, &log)?;
            let first = addrs
                .first()
                .copied()
                .unwrap_or(mocap_cli::addr::any_ipv4(0));
            (source, Input::Listen(first))
        }
    };
    let (source, core) = Core::with_source(
        source,
        &Spec {
            tool: TOOL,
            // Only where `-w` writes datagrams that came without addresses.
            protocol: opts.protocol.unwrap_or(Protocol::Mocopi),
            input: &input,
            args: &opts.common,
            sends: opts.vmc.is_some() || opts.vmt.is_some(),
        },
        opts.mode,
    )?;
    let given = matches!(opts.input, In::Listen { given: true, .. });
    let askers = Askers::open(&opts.ask, &source.sockets(), given)?;
    let answerers = match &opts.answer {
        Some(protocols) => Answerers::open(protocols, source.sockets()),
        None => Answerers::default(),
    };
    let vmc = match &opts.vmc {
        Some(v) => Some(VmcSink {
            out: Fanout::new(v.to.clone(), mocap_cli::sends::Receiver::Vmc)
                .map_err(|e| anyhow::anyhow!("failed to open the VMC sending socket: {e}"))?,
            frames: 0,
        }),
        None => None,
    };
    let vmt = match &opts.vmt {
        Some((to, base)) => Some(VmtSink::new(
            Fanout::new(to.clone(), mocap_cli::sends::Receiver::Vmt)
                .map_err(|e| anyhow::anyhow!("failed to open the VMT sending socket: {e}"))?,
            *base,
        )),
        None => None,
    };
    let mut tool = Dump {
        opts,
        streams: Senders::folding(Stream::fold),
        unknown: 0,
        unreadable: 0,
        vmc,
        vmt,
        askers,
        answerers,
        no_pose: Vec::new(),
    };
    dump::run(source, core, &opts.common, &mut tool)
}

/// One sender's stream of one protocol.
#[derive(Default)]
struct Stream {
    datagrams: u64,
    /// Health per numbered sequence (its `part`); index 0 also takes the
    /// datagrams without a number.
    parts: Vec<(u64, Health)>,
    /// Datagrams of sequences past [`MAX_PARTS`].
    untracked: u64,
    /// `--vmc`: what this stream sends, if it has a pose.
    pose: Option<Pose>,
    /// In the evicted aggregate only: the streams folded into it.
    folded: Option<(u64, HealthReport, bool)>,
}

impl Stream {
    fn new(p: Protocol, vmc: Option<&VmcOut>) -> Self {
        Self {
            pose: vmc.and_then(|v| Pose::new(p, v)),
            ..Self::default()
        }
    }

    /// Counts what a datagram's stamp says, on its sequence's health.
    fn count(&mut self, stamp: Stamp, arrival: Option<Duration>) {
        self.datagrams += 1;
        let part = match stamp {
            Stamp::Numbered { part, .. } | Stamp::Clocked { part, .. } => part,
            _ => 0,
        };
        let i = match self.parts.iter().position(|(p, _)| *p == part) {
            Some(i) => i,
            None if self.parts.len() < MAX_PARTS => {
                self.parts.push((part, Health::new()));
                self.parts.len() - 1
            }
            None => {
                self.untracked += 1;
                return;
            }
        };
        if let Some((_, h)) = self.parts.get_mut(i) {
            h.stamp(stamp, arrival);
        }
    }

    /// Every sequence's health together (rates add up).
    fn report(&self) -> HealthReport {
        let mut r = self.folded.map(|f| f.1).unwrap_or_default();
        for (_, h) in &self.parts {
            r.merge(&h.report());
        }
        r
    }

    /// Whether any sequence numbered its frames (loss means something).
    fn numbered(&self) -> bool {
        self.parts.iter().any(|(_, h)| h.is_numbered()) || self.folded.is_some_and(|f| f.2)
    }

    fn datagrams(&self) -> u64 {
        self.datagrams + self.folded.map_or(0, |f| f.0)
    }

    /// Adds an evicted stream's counters to the aggregate.
    fn fold(all: &mut Self, gone: Self) {
        let report = gone.report();
        let f = all.folded.get_or_insert_with(Default::default);
        f.0 += gone.datagrams();
        f.1.merge(&report);
        f.2 |= gone.numbered();
        all.untracked += gone.untracked;
    }
}

/// What `--vmc` has sent.
struct VmcSink {
    out: Fanout,
    frames: u64,
}

/// Streams are told apart by sender and protocol (its key: ordered).
type StreamKey = (Option<SocketAddr>, &'static str);

struct Dump<'o> {
    opts: &'o Options,
    streams: Senders<Stream, StreamKey>,
    /// Datagrams no protocol of the registry recognised.
    unknown: u64,
    /// Input items that were not datagrams.
    unreadable: u64,
    vmc: Option<VmcSink>,
    vmt: Option<VmtSink>,
    askers: Askers,
    answerers: Answerers,
    /// Protocols without a pose that came with `--vmc` given: said once
    /// each (bounded by the registry, whatever senders a stranger spoofs).
    no_pose: Vec<Protocol>,
}

impl DumpTool for Dump<'_> {
    fn datagram(&mut self, core: &mut Core, d: &Datagram<'_>) -> anyhow::Result<()> {
        let protocol = self
            .opts
            .protocol
            .or_else(|| protocol::recognise(d.payload).map(|(p, _)| p));
        let Some(p) = protocol else {
            self.unknown += 1;
            return records::unknown(core, d);
        };
        let vmc = self.opts.vmc.as_ref();
        let stream = self
            .streams
            .get_or_insert_with(&(d.src, p.key()), || Stream::new(p, vmc));
        let stamp = match core.mode {
            Mode::Json => {
                let mut view = JsonView::default();
                let stamp = p.decode(d.payload, &mut view);
                records::frame(core, d, p, stamp, &view)?;
                stamp
            }
            Mode::Human => {
                let mut view = HumanView::default();
                let stamp = p.decode(d.payload, &mut view);
                let s = core.view.frame();
                view::human_line(s, p, stamp, &view, d.payload.len());
                Core::push_origin(s, d, core.first_arrival);
                s.push('\n');
                core.end_frame()?;
                stamp
            }
            Mode::Status => p.stamp(d.payload),
        };
        stream.count(stamp, d.ts);
        if stamp == Stamp::Error {
            return Ok(());
        }
        let now = core.started.elapsed();
        // Answered at once: a tracker waits for the answer to stream.
        self.answerers
            .handle_datagram(p, d.src, d.dst, d.payload, now);
        self.answerers.tick(now, &core.log);
        self.askers.handle_frame(p, d.src, now);
        if let Some(sink) = &mut self.vmt
            && p.spec().carries == Carries::Trackers
        {
            let mut slots = Slots::default();
            p.decode(d.payload, &mut slots);
            sink.send(d.src, &slots, &core.log);
        }
        let Some(sink) = &mut self.vmc else {
            return Ok(());
        };
        match &mut stream.pose {
            Some(pose) => {
                let at = d.ts.unwrap_or(now);
                let messages = pose.messages(d.payload, at);
                if !messages.is_empty() {
                    sink.frames += 1;
                    for datagram in vmc::frame_datagrams(&messages, vmc::MAX_BUNDLE)? {
                        sink.out.send(&datagram, &core.log);
                    }
                }
            }
            None if !self.no_pose.contains(&p) => {
                self.no_pose.push(p);
                core.log.info(format_args!(
                    "{} (first from {}): not bridged to --vmc, its registry row gives no \
                     face or body (decoded all the same; read by: {})",
                    p.name(),
                    d.src
                        .map_or_else(|| "the input".to_owned(), |a| a.to_string()),
                    p.spec().tool
                ));
            }
            None => {}
        }
        Ok(())
    }

    fn unreadable(&mut self, _: &InputError) {
        self.unreadable += 1;
    }

    fn packets(&self) -> u64 {
        let streams: u64 = self.streams.values().map(Stream::datagrams).sum();
        let evicted = self.streams.evicted().map_or(0, Stream::datagrams);
        streams + evicted + self.unknown + self.unreadable
    }

    fn tick(&mut self, core: &mut Core) -> anyhow::Result<()> {
        self.askers.tick(core.started.elapsed(), &core.log);
        self.answerers.tick(core.started.elapsed(), &core.log);
        Ok(())
    }

    fn poll_timeout(&self) -> Option<Duration> {
        [self.askers.poll_timeout(), self.answerers.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    fn summary(&mut self, core: &mut Core, stopped: Option<Stopped>) -> anyhow::Result<()> {
        let mut streams = Vec::new();
        let mut health = HealthReport::default();
        let mut datagrams = 0;
        let mut untracked = 0;
        let mut numbered = false;
        for ((src, key), s) in self.streams.iter() {
            let report = s.report();
            health.merge(&report);
            datagrams += s.datagrams();
            untracked += s.untracked;
            numbered |= s.numbered();
            streams.push(StreamRecord {
                protocol: key,
                sender: *src,
                counted: Counted::new(s.datagrams(), s.numbered(), &report),
            });
        }
        if let Some(s) = self.streams.evicted() {
            health.merge(&s.report());
            datagrams += s.datagrams();
            untracked += s.untracked;
            numbered |= s.numbered();
        }
        let mut more_streams = 0;
        if stopped.is_none() && streams.len() > STATS_STREAMS {
            streams.sort_by_key(|s| std::cmp::Reverse(s.counted.counts.datagrams));
            more_streams = streams.len() - STATS_STREAMS;
            streams.truncate(STATS_STREAMS);
        }
        let mut sends: Vec<_> = self.askers.sends().chain(self.answerers.sends()).collect();
        if let Some(v) = &self.vmc {
            sends.extend(v.out.sends());
        }
        if let Some(v) = &self.vmt {
            sends.extend(v.out.sends());
        }
        let rec = SummaryRecord {
            kind: summary_kind(stopped),
            tool: TOOL,
            totals: Counted::new(datagrams, numbered, &health),
            unknown: self.unknown,
            unreadable: self.unreadable,
            untracked,
            base: core.summary_base(stopped),
            streams,
            more_streams,
            evicted_senders: self.streams.evicted_senders(),
            capture: core.capture,
            vmc: self.vmc.as_ref().map(|v| VmcSummary {
                to: v.out.targets().to_vec(),
                frames: v.frames,
                datagrams: v.out.sent(),
            }),
            vmt: self.vmt.as_ref().map(|v| VmtSummary {
                to: v.out.targets().to_vec(),
                updates: v.updates,
                unplaced: v.unplaced,
            }),
            asked: self.askers.records(),
            sends,
        };
        core.report(&rec, stopped.is_some())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without -l: every registry port once (a protocol added is listened
    /// for with no edit here), or --protocol's own.
    #[test]
    fn default_ports_are_the_registrys() {
        let all = default_listen(None);
        for p in Protocol::ALL {
            for port in p.default_ports() {
                assert!(
                    all.contains(&mocap_cli::addr::any_ipv4(*port)),
                    "{p} {port}"
                );
            }
        }
        let ports: std::collections::HashSet<u16> = all.iter().map(SocketAddr::port).collect();
        assert_eq!(ports.len(), all.len(), "each port once");
        let ifm = Protocol::from_key("ifacialmocap");
        assert_eq!(
            default_listen(ifm),
            [mocap_cli::addr::any_ipv4(mocap_core::ifm::PC_UDP_PORT)]
        );
    }

    /// Default ports another program holds are skipped (and said); one
    /// asked for with -l is an error, and so is no free default port.
    #[test]
    fn taken_default_ports_are_skipped_given_ones_fail() {
        let busy = std::net::UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let taken = busy.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let free: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|e| panic!("{e}"));
        let log = Log::new(TOOL, true, false);
        let source = listen(&[taken, free], false, &log).unwrap_or_else(|e| panic!("{e:#}"));
        let bound = source.sockets();
        assert_eq!(bound.len(), 1);
        assert_ne!(bound.first().map(|b| b.0), Some(taken));
        assert!(listen(&[taken, free], true, &log).is_err());
        let none = listen(&[taken], false, &log).err().map(|e| e.to_string());
        assert!(none.is_some_and(|e| e.contains("no default port")));
    }

    /// Health is kept per numbered sequence, bounded per stream.
    #[test]
    fn sequences_are_counted_apart_and_bounded() {
        let mut s = Stream::default();
        for frame in 0..3 {
            for part in 0..(MAX_PARTS as u64 + 4) {
                s.count(
                    Stamp::Numbered {
                        frame,
                        clock: None,
                        part,
                    },
                    None,
                );
            }
        }
        assert_eq!(s.parts.len(), MAX_PARTS);
        assert_eq!(s.untracked, 3 * 4);
        let r = s.report();
        // Each sequence 0, 1, 2 in order: nothing lost, no duplicates.
        assert_eq!(
            (r.frames, r.lost, r.duplicates),
            (3 * MAX_PARTS as u64, 0, 0)
        );
        assert!(s.numbered());
    }
}
