//! `livelink-dump`: decode Live Link Face datagrams from a socket or a file,
//! report stream health per phone and subject, and bridge faces to VMC. The
//! binary parses flags into [`Options`] and calls [`run`].

use std::fmt::Write as _;
use std::net::SocketAddr;

use mocap_cli::dump::{self, Core, DumpArgs, DumpTool, Mode, Spec};
use mocap_cli::net::Fanout;
use mocap_cli::output::summary_kind;
use mocap_cli::prelude::*;
use mocap_cli::senders::Senders;
use mocap_cli::source::{Datagram, Input, InputError};
use mocap_core::bridge::{FaceBridge, FaceOptions, FacePose};
use mocap_core::health::Health;
use mocap_core::livelink::AngleUnit;
use mocap_core::livelink::{self, Body, Packet};
use mocap_core::vmc;

mod records;

use records::{
    Counters, FrameRecord, NoFaceRecord, SubjectRecord, SummaryRecord, VmcSummary, error_record,
};

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "livelink-dump";

/// Subjects tracked per sender address; more are decoded but not counted
/// apart (a spoofing sender cannot grow memory without bound).
const MAX_SUBJECTS: usize = 16;

/// Everything `livelink-dump` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// Socket or file.
    pub(crate) input: Input,
    /// Pacing, `-w`, `--allow`, `--count`/`--duration`, logging.
    pub(crate) common: DumpArgs,
    /// What is printed (bridging without `--format`: the status line).
    pub(crate) mode: Mode,
    /// `--subject`: print and bridge only this one.
    pub(crate) subject: Option<String>,
    /// `--vmc` and its options.
    pub(crate) vmc: Option<VmcOut>,
}

/// Where and how `--vmc` sends faces.
#[derive(Clone, Debug)]
pub(crate) struct VmcOut {
    /// VMC receivers.
    pub(crate) to: Vec<SocketAddr>,
    /// Names, clamping, head bone, axes, behaviour without a face.
    pub(crate) face: FaceOptions,
    /// How head and eye angles are read.
    pub(crate) angles: AngleUnit,
    /// `--smooth`.
    pub(crate) smooth: Option<vmc::SmoothOptions>,
}

/// Runs the tool to the end and prints the summary.
///
/// # Errors
/// Input that cannot be opened or read, and output errors.
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    let (source, core) = Core::open(
        &Spec {
            tool: TOOL,
            protocol: mocap_core::protocol::Protocol::LiveLink,
            input: &opts.input,
            args: &opts.common,
            sends: opts.vmc.is_some(),
        },
        opts.mode,
    )?;
    let vmc = match &opts.vmc {
        Some(v) => Some(VmcSink {
            out: Fanout::new(v.to.clone(), mocap_cli::sends::Receiver::Vmc)
                .map_err(|e| anyhow::anyhow!("failed to open the VMC sending socket: {e}"))?,
            frames: 0,
        }),
        None => None,
    };
    let mut dump = Dump {
        opts,
        senders: Senders::folding(Sender::fold),
        vmc,
        several_logged: false,
    };
    dump::run(source, core, &opts.common, &mut dump)
}

/// One subject of one sender: its health and its bridge.
struct Subject {
    name: String,
    device: String,
    stats: Stats,
    bridge: Option<(FaceBridge, Option<vmc::Smoother>)>,
}

#[derive(Default)]
struct Stats {
    packets: u64,
    noface: u64,
    warnings: u64,
    health: Health,
}

/// A sender's subjects, and what could not be told apart.
#[derive(Default)]
struct Sender {
    subjects: Vec<Subject>,
    /// Packets that failed to decode (no subject to put them under).
    errors: u64,
    /// Packets of subjects past [`MAX_SUBJECTS`].
    untracked: u64,
    /// In the evicted aggregate only: the subjects of senders folded into
    /// it, their counters together.
    folded: Option<(u64, u64, u64, mocap_core::health::HealthReport)>,
}

impl Sender {
    /// Adds an evicted sender's counters to the aggregate.
    fn fold(all: &mut Self, gone: Self) {
        all.errors += gone.errors;
        all.untracked += gone.untracked;
        let f = all.folded.get_or_insert_with(Default::default);
        for j in gone.subjects {
            f.0 += j.stats.packets;
            f.1 += j.stats.noface;
            f.2 += j.stats.warnings;
            f.3.merge(&j.stats.health.report());
        }
        if let Some((p, n, w, h)) = gone.folded {
            f.0 += p;
            f.1 += n;
            f.2 += w;
            f.3.merge(&h);
        }
    }
}

/// How many subjects a periodic stats record lists (the busiest).
const STATS_SUBJECTS: usize = 8;

/// What `--vmc` has sent.
struct VmcSink {
    out: Fanout,
    frames: u64,
}

struct Dump<'o> {
    opts: &'o Options,
    senders: Senders<Sender>,
    vmc: Option<VmcSink>,
    several_logged: bool,
}

impl DumpTool for Dump<'_> {
    fn datagram(&mut self, core: &mut Core, d: &Datagram<'_>) -> anyhow::Result<()> {
        match livelink::parse(d.payload) {
            Ok(p) => self.packet(core, d, &p)?,
            Err(e) => {
                self.senders.get_or_default(&d.src).errors += 1;
                core.other.check(d.src, d.payload, &core.log);
                match core.mode {
                    Mode::Json => core.out.json(&error_record(d, &e))?,
                    Mode::Human => {
                        let s = core.view.frame();
                        let _ = write!(s, "error     {e} ({} bytes)", d.payload.len());
                        Core::push_origin(s, d, core.first_arrival);
                        s.push('\n');
                        core.end_frame()?;
                    }
                    Mode::Status => {}
                }
            }
        }
        Ok(())
    }

    fn unreadable(&mut self, _: &InputError) {
        self.senders.get_or_default(&None).errors += 1;
    }

    fn packets(&self) -> u64 {
        self.senders
            .values()
            .map(|s| {
                s.errors + s.untracked + s.subjects.iter().map(|j| j.stats.packets).sum::<u64>()
            })
            .sum()
    }

    fn summary(&mut self, core: &mut Core, stopped: Option<Stopped>) -> anyhow::Result<()> {
        self.summary_record(core, stopped)
    }
}

impl Dump<'_> {
    fn packet(&mut self, core: &mut Core, d: &Datagram<'_>, p: &Packet<'_>) -> anyhow::Result<()> {
        let subject = p.subject();
        let warnings = p.warnings();
        let chosen = self.opts.subject.as_deref().is_none_or(|s| s == subject);
        let sender = self.senders.get_or_default(&d.src);
        let known = sender.subjects.iter().position(|s| s.name == subject);
        let index = match known {
            Some(i) => Some(i),
            None if sender.subjects.len() < MAX_SUBJECTS => {
                sender.subjects.push(Subject {
                    name: subject.clone().into_owned(),
                    device: p.device().into_owned(),
                    stats: Stats::default(),
                    bridge: self.opts.vmc.as_ref().map(|v| {
                        (
                            FaceBridge::new(v.face.clone()),
                            v.smooth.clone().map(vmc::Smoother::new),
                        )
                    }),
                });
                Some(sender.subjects.len() - 1)
            }
            None => None,
        };
        let Some(subj) = index.and_then(|i| sender.subjects.get_mut(i)) else {
            sender.untracked += 1;
            return Ok(());
        };
        let s = &mut subj.stats;
        s.packets += 1;
        s.warnings += warnings.len() as u64;
        if matches!(p.body, Body::NoFace) {
            s.noface += 1;
        }
        // The frame number is a timecode frame count: it runs on while the
        // face is lost, so no-face packets keep the sequence too.
        let clock = p.time.seconds().and_then(mocap_core::health::sender_clock);
        s.health.frame(p.time.frame.cast_unsigned(), clock, d.ts);
        if chosen
            && let (Some((bridge, smoother)), Some(sink), Some(v)) =
                (&mut subj.bridge, &mut self.vmc, &self.opts.vmc)
        {
            let pose = FacePose::from_livelink(p.face(), v.angles);
            let mut messages = bridge.pose(&pose);
            if !messages.is_empty() {
                if let Some(sm) = smoother {
                    let at = d.ts.unwrap_or_else(|| core.started.elapsed());
                    sm.handle_frame(at, &mut messages);
                }
                sink.frames += 1;
                for datagram in vmc::frame_datagrams(&messages, vmc::MAX_BUNDLE)? {
                    sink.out.send(&datagram, &core.log);
                }
            }
            let subjects = sender.subjects.len();
            if subjects > 1 && self.opts.subject.is_none() && !self.several_logged {
                self.several_logged = true;
                core.log.info(format_args!(
                    "{subjects} subjects from {}: --vmc sends them all; choose one with --subject NAME",
                    d.src.map_or_else(|| "the input".to_owned(), |a| a.to_string())
                ));
            }
        }
        if !chosen {
            return Ok(());
        }
        match core.mode {
            Mode::Json => match &p.body {
                Body::Face(f) => core.out.json(&FrameRecord::new(d, p, f, &warnings))?,
                Body::NoFace => core.out.json(&NoFaceRecord::new(d, p, &warnings))?,
            },
            Mode::Human => {
                let s = core.view.frame();
                human(s, p, &warnings);
                Core::push_origin(s, d, core.first_arrival);
                s.push('\n');
                core.end_frame()?;
            }
            Mode::Status => {}
        }
        Ok(())
    }

    fn summary_record(&mut self, core: &mut Core, stopped: Option<Stopped>) -> anyhow::Result<()> {
        let mut subjects = Vec::new();
        let (mut errors, mut untracked) = (0, 0);
        // Totals: sums, and every subject's health merged (rates add up).
        let (mut packets, mut noface, mut warnings) = (0, 0, 0);
        let mut health = mocap_core::health::HealthReport::default();
        let evicted = self.senders.evicted();
        // The evicted aggregate counts in the totals; its subjects are not
        // listed.
        let all = self
            .senders
            .iter()
            .map(|(src, s)| (Some(src), s))
            .chain(evicted.map(|s| (None, s)));
        for (src, s) in all {
            if let Some((p, n, w, h)) = &s.folded {
                packets += p;
                noface += n;
                warnings += w;
                health.merge(h);
            }
            errors += s.errors;
            untracked += s.untracked;
            for j in &s.subjects {
                let report = j.stats.health.report();
                health.merge(&report);
                packets += j.stats.packets;
                noface += j.stats.noface;
                warnings += j.stats.warnings;
                let Some(src) = src else {
                    continue;
                };
                subjects.push(SubjectRecord {
                    src: *src,
                    subject: j.name.clone(),
                    device: j.device.clone(),
                    counters: Counters::new(
                        j.stats.packets,
                        j.stats.noface,
                        0,
                        j.stats.warnings,
                        &report,
                    ),
                });
            }
        }
        let totals = Counters::new(
            packets + errors + untracked,
            noface,
            errors,
            warnings,
            &health,
        );
        // A stats record lists the busiest few subjects; the summary all.
        let mut more_subjects = 0;
        if stopped.is_none() && subjects.len() > STATS_SUBJECTS {
            subjects.sort_by_key(|s| std::cmp::Reverse(s.counters.packets));
            more_subjects = subjects.len() - STATS_SUBJECTS;
            subjects.truncate(STATS_SUBJECTS);
        }
        let rec = SummaryRecord {
            kind: summary_kind(stopped),
            tool: TOOL,
            totals,
            untracked,
            more_subjects,
            evicted_senders: self.senders.evicted_senders(),
            base: core.summary_base(stopped),
            subjects,
            capture: core.capture,
            vmc: self.vmc.as_ref().map(|v| VmcSummary {
                to: v.out.targets().to_vec(),
                frames: v.frames,
                datagrams: v.out.sent(),
            }),
            sends: self
                .vmc
                .as_ref()
                .map(|v| v.out.sends().collect())
                .unwrap_or_default(),
            other: core.other.summary(),
        };
        core.report(&rec, stopped.is_some())?;
        Ok(())
    }
}

/// One human line: kind, subject, frame time, a few telling values.
fn human(s: &mut String, p: &Packet<'_>, warnings: &[livelink::Warning]) {
    let t = &p.time;
    let kind = match p.body {
        Body::Face(_) => "frame",
        Body::NoFace => "noface",
    };
    let _ = write!(
        s,
        "{kind:<9} {:?} frame={} sub={:.3} fps={}/{}",
        p.subject(),
        t.frame,
        t.subframe,
        t.rate[0],
        t.rate[1]
    );
    if let Body::Face(f) = &p.body {
        let v = |i| f.blendshape(i).unwrap_or(f32::NAN);
        // Blinks and the jaw: what a user glances at to see the face is live.
        let _ = write!(s, " blink={:.2}/{:.2} jaw={:.2}", v(0), v(7), v(17));
        if let Some(h) = f.head() {
            let _ = write!(s, " head=({:.3},{:.3},{:.3})", h.yaw, h.pitch, h.roll);
        }
        if f.count() != livelink::VALUE_COUNT {
            let _ = write!(s, " values={}", f.count());
        }
    }
    if let Some(w) = warnings.first() {
        let _ = write!(s, " warnings={} ({w})", warnings.len());
    }
}
