//! `mocopi-dump`: decode mocopi datagrams from a socket or a file and report
//! stream health. The binary parses flags into [`Options`] and calls [`run`].

use mocap_cli::dump::{self, Core, DumpArgs, DumpTool, Mode, Spec};
use mocap_cli::senders::Senders;
use std::fmt::Write as _;

mod records;
mod take;
mod vmc_out;

use records::{
    BoneRecord, ChildRecord, Counters, EvictedRecord, FrameRecord, PacketHead, SenderRecord,
    SensorRecord, SkeletonRecord, SummaryRecord, TimecodeRecord, TrackerRecord, UnknownRecord,
    VmcRecord, WarningRecord, smf_error,
};
use take::{BvhTake, Skeleton};
pub(crate) use vmc_out::{VmcOut, parse_mapping_arg};
use vmc_out::{VmcSink, list};

use mocap_cli::net::Fanout;
use mocap_cli::output::summary_kind;
use mocap_cli::prelude::*;
use mocap_cli::records::ErrorRecord;
use mocap_cli::source::{Datagram, Input, InputError};
use mocap_core::bridge::{BodyBridge, BodyOptions, MappingTable, SkeletonEvent};
use mocap_core::health::{Health, HealthReport};
use mocap_core::smf::{self, Body, Chunks, Packet, Tag};

/// The tool's name, as it prefixes log lines.
pub(crate) const TOOL: &str = "mocopi-dump";

/// `--format` as mocopi-dump parses it: the shared two plus the chunk tree
/// (a human view of its own; the harness sees [`Mode::Human`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FormatArg {
    /// One line per packet: kind, fnum, time, bone count, sender.
    Human,
    /// JSON Lines (`mocopi.frame`, `mocopi.skeleton`, `mocopi.sensor`, `error`, `stats`, `summary`).
    Json,
    /// The chunk tree of every datagram: offsets, lengths, tags, hex and decoded values.
    Tree,
}

/// Everything `mocopi-dump` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// Socket or file.
    pub(crate) input: Input,
    /// Pacing, `-w`, `--allow`, `--count`/`--duration`, logging.
    pub(crate) common: DumpArgs,
    /// What is printed (bridging without `--format`: the status line).
    pub(crate) mode: Mode,
    /// `--format tree`: the chunk tree instead of the human line.
    pub(crate) tree: bool,
    /// Per-bone table under each human line.
    pub(crate) bones: bool,
    /// Also send the body as VMC to these receivers.
    pub(crate) vmc: Option<VmcOut>,
    /// `--bvh FILE`: record the take as BVH (one file per sender).
    pub(crate) bvh: Option<BvhOut>,
}

pub(crate) use mocap_cli::take::BvhOut;

/// Runs the tool to the end and prints the summary.
///
/// # Errors
/// Input that cannot be opened or read, and output errors.
pub(crate) fn run(opts: &Options) -> anyhow::Result<()> {
    if let Some(b) = &opts.bvh {
        b.check()?;
    }
    let (source, core) = Core::open(
        &Spec {
            tool: TOOL,
            protocol: mocap_core::protocol::Protocol::Mocopi,
            input: &opts.input,
            args: &opts.common,
            sends: opts.vmc.is_some(),
        },
        opts.mode,
    )?;
    let mut dump = Dump {
        opts,
        senders: Senders::folding(SenderStats::fold),
        vmc: opts.vmc.as_ref().map(VmcSink::new).transpose()?,
        takes: opts.bvh.clone().map(mocap_cli::take::TakeSlots::new),
        skeletons: Senders::new(),
        takes_done: Vec::new(),
    };
    dump::run(source, core, &opts.common, &mut dump)
}

#[derive(Default)]
struct SenderStats {
    packets: u64,
    warnings: u64,
    health: Health,
    /// In the evicted aggregate only: the senders folded into it after the
    /// first.
    folded: Option<Counters>,
}

impl SenderStats {
    fn counters(&self) -> Counters {
        let own = Counters::new(self.packets, self.warnings, &self.health.report());
        match &self.folded {
            Some(f) => Counters::total([&own, f].into_iter()),
            None => own,
        }
    }

    /// Adds an evicted sender's counters to the aggregate.
    fn fold(all: &mut Self, gone: Self) {
        let gone = gone.counters();
        all.folded = Some(match all.folded.take() {
            Some(f) => Counters::total([&f, &gone].into_iter()),
            None => gone,
        });
    }
}

/// How many senders a periodic stats record lists (the busiest).
const STATS_SENDERS: usize = 8;

struct Dump<'o> {
    opts: &'o Options,
    senders: Senders<SenderStats>,
    vmc: Option<VmcSink>,
    /// `--bvh`: the takes open, by sender.
    takes: Option<mocap_cli::take::TakeSlots<BvhTake>>,
    /// Skeletons of senders without a take yet, until their first frame.
    skeletons: Senders<Skeleton>,
    takes_done: Vec<mocap_cli::take::TakeSummary>,
}

impl DumpTool for Dump<'_> {
    fn datagram(&mut self, core: &mut Core, d: &Datagram<'_>) -> anyhow::Result<()> {
        let stats = self.senders.get_or_default(&d.src);
        stats.packets += 1;
        let parsed = smf::parse(d.payload);
        let warnings = parsed.as_ref().map(Packet::warnings).unwrap_or_default();
        stats.warnings += warnings.len() as u64;
        match &parsed {
            Ok(p) => match &p.body {
                Body::Frame(f) => {
                    let clock = f.uttm.unwrap_or_else(|| f64::from(f.time));
                    let clock = mocap_core::health::sender_clock(clock);
                    stats.health.frame(f.fnum, clock, d.ts);
                }
                Body::Skeleton(_) => stats.health.skeleton(),
                Body::Sensor(_) => stats.health.sensor(),
            },
            Err(_) => {
                stats.health.error();
                core.other.check(d.src, d.payload, &core.log);
            }
        }
        if let (Some(sink), Some(v), Ok(p)) = (&mut self.vmc, &self.opts.vmc, &parsed) {
            sink.packet(p, d.arrival, &core.log, v)?;
        }
        if let Ok(p) = &parsed {
            let now = d.ts.unwrap_or_else(|| core.started.elapsed());
            self.take_packet(&core.log, d.src, p, now);
        }
        match core.mode {
            Mode::Json => match &parsed {
                Ok(p) => json_packet(core, d, p, &warnings)?,
                Err(e) => core.out.json(&smf_error(d, e))?,
            },
            Mode::Human => {
                let s = core.view.frame();
                if self.opts.tree {
                    tree(s, d, &parsed, core.first_arrival);
                } else {
                    human(
                        s,
                        d,
                        &parsed,
                        &warnings,
                        core.first_arrival,
                        self.opts.bones,
                    );
                }
                core.end_frame()?;
            }
            Mode::Status => {}
        }
        Ok(())
    }

    fn unreadable(&mut self, _: &InputError) {
        let stats = self.senders.get_or_default(&None);
        stats.packets += 1;
        stats.health.error();
    }

    fn packets(&self) -> u64 {
        self.senders.values().map(|s| s.packets).sum()
    }

    fn summary(&mut self, core: &mut Core, stopped: Option<Stopped>) -> anyhow::Result<()> {
        self.summary_record(core, stopped)
    }

    fn finish(&mut self, core: &mut Core) -> anyhow::Result<()> {
        self.finish_takes(&core.log)
    }
}

fn json_packet(
    core: &mut Core,
    d: &Datagram<'_>,
    p: &Packet<'_>,
    warnings: &[smf::Warning],
) -> anyhow::Result<()> {
    let head = PacketHead::new(d, p);
    let warnings: Vec<WarningRecord> = warnings
        .iter()
        .map(|w| WarningRecord {
            offset: w.offset,
            tag: w.field.to_string(),
            reason: w.kind.to_string(),
        })
        .collect();
    let unknown: Vec<_> = p
        .unknown_chunks()
        .into_iter()
        .map(|(parent, c)| UnknownRecord {
            parent: parent.map(|t| t.to_string()),
            tag: c.tag.to_string(),
            offset: c.offset,
            len: c.value.len(),
        })
        .collect();
    match &p.body {
        Body::Frame(f) => core.out.json(&FrameRecord {
            kind: "mocopi.frame",
            head,
            fnum: f.fnum,
            time: f64::from(f.time),
            uttm: f.uttm,
            // All six bytes zero is how apps say "no timecode".
            timecode: f
                .timecode
                .filter(|t| t.0 != [0; 6])
                .map(|t| TimecodeRecord {
                    hour: t.hour(),
                    minute: t.minute(),
                    second: t.second(),
                    frame: t.frame(),
                    rate: t.rate(),
                    drop_frame: t.drop_frame(),
                }),
            bones: f
                .bones()
                .map(|b| BoneRecord::new(b.id, None, b.rot, b.pos))
                .collect(),
            unknown,
            warnings,
        })?,
        Body::Skeleton(s) => core.out.json(&SkeletonRecord {
            kind: "mocopi.skeleton",
            head,
            bones: s
                .bones()
                .map(|b| BoneRecord::new(b.id, Some(b.parent), b.rot, b.pos))
                .collect(),
            unknown,
            warnings,
        })?,
        Body::Sensor(s) => core.out.json(&SensorRecord {
            kind: "mocopi.sensor",
            head,
            children: s
                .children()
                .map(|c| ChildRecord {
                    tag: c.tag.to_string(),
                    offset: c.offset,
                    len: c.value.len(),
                    hex: hex::encode(c.value),
                })
                .collect(),
            unknown,
        })?,
    }
    Ok(())
}

fn human(
    s: &mut String,
    d: &Datagram<'_>,
    parsed: &smf::Result<Packet<'_>>,
    warnings: &[smf::Warning],
    first_arrival: Option<f64>,
    bones: bool,
) {
    match parsed {
        Ok(p) => {
            match &p.body {
                Body::Frame(f) => {
                    let _ = write!(s, "frame     fnum={} time={:.3}", f.fnum, f.time);
                    if let Some(u) = f.uttm {
                        let _ = write!(s, " uttm={u:.6}");
                    }
                    if let Some(t) = f.timecode.filter(|t| t.0 != [0; 6]) {
                        let _ = write!(
                            s,
                            " tc={:02}:{:02}:{:02}:{:02}",
                            t.hour(),
                            t.minute(),
                            t.second(),
                            t.frame()
                        );
                    }
                    let _ = write!(s, " bones={}", f.bone_count());
                }
                Body::Skeleton(k) => {
                    let _ = write!(s, "skeleton  bones={}", k.bone_count());
                }
                Body::Sensor(n) => {
                    let _ = write!(s, "sensor    children={}", n.children().count());
                    for c in n.children() {
                        let _ = write!(s, " {}={}", c.tag, hex::encode(c.value));
                    }
                }
            }
            if p.unknown_count() > 0 {
                let _ = write!(s, " unknown={}", p.unknown_count());
            }
            if let Some(w) = warnings.first() {
                let _ = write!(s, " warnings={} ({w})", warnings.len());
            }
            Core::push_origin(s, d, first_arrival);
            if let Some(sender) = p.sender {
                match sender.ip() {
                    Some(ip) => {
                        let _ = write!(s, " sender={ip}:{}", sender.rcvp);
                    }
                    None => {
                        let _ = write!(s, " sender=ipad:{:#x}:{}", sender.ipad, sender.rcvp);
                    }
                }
            }
            s.push('\n');
            if bones {
                bone_table(s, p);
            }
        }
        Err(e) => {
            let _ = write!(s, "error     {e} ({} bytes)", d.payload.len());
            Core::push_origin(s, d, first_arrival);
            s.push('\n');
        }
    }
}

fn tree(
    s: &mut String,
    d: &Datagram<'_>,
    parsed: &smf::Result<Packet<'_>>,
    first_arrival: Option<f64>,
) {
    let _ = write!(s, "datagram  {} bytes", d.payload.len());
    Core::push_origin(s, d, first_arrival);
    let _ = writeln!(s, "\n  offset  length  tag");
    let _ = tree_lines(s, Chunks::top(d.payload), None, 0);
    match parsed {
        Ok(p) => {
            let _ = write!(s, "  => {}", p.body.kind());
            if let Body::Frame(f) = &p.body {
                let _ = write!(s, " fnum={}", f.fnum);
            }
            let _ = writeln!(s, " ({} unknown chunks)\n", p.unknown_count());
        }
        Err(e) => {
            let _ = writeln!(s, "  => error: {e}\n");
        }
    }
}

impl Dump<'_> {
    fn summary_record(&mut self, core: &mut Core, stopped: Option<Stopped>) -> anyhow::Result<()> {
        // A stats record lists the busiest few senders; the summary all.
        let (listed, more_senders) = if stopped.is_none() {
            self.senders.busiest(STATS_SENDERS, |s| s.packets)
        } else {
            (self.senders.iter().collect(), 0)
        };
        let senders: Vec<_> = listed
            .into_iter()
            .map(|(src, s)| SenderRecord {
                src: *src,
                counters: s.counters(),
            })
            .collect();
        let evicted = self.senders.evicted().map(|s| EvictedRecord {
            senders: self.senders.evicted_senders(),
            counters: s.counters(),
        });
        // Totals over every sender, evicted ones included.
        let all: Vec<Counters> = self
            .senders
            .values()
            .chain(self.senders.evicted())
            .map(SenderStats::counters)
            .collect();
        let totals = Counters::total(all.iter());
        let rec = SummaryRecord {
            kind: summary_kind(stopped),
            tool: TOOL,
            totals,
            base: core.summary_base(stopped),
            senders,
            more_senders,
            evicted,
            capture: core.capture,
            vmc: self.vmc.as_ref().map(|v| VmcRecord {
                to: v.out.targets().to_vec(),
                frames: v.frames,
                datagrams: v.out.sent(),
                waiting_for_skeleton: v.waiting,
                skeleton_changes: v.changes,
                trackers: v
                    .trackers
                    .iter()
                    .map(|t| TrackerRecord {
                        kind: t.kind(),
                        to: t.out.targets().to_vec(),
                        counters: t.stream.counters(),
                        datagrams: t.out.sent(),
                    })
                    .collect(),
            }),
            takes: &self.takes_done,
            sends: self.vmc.as_ref().map(VmcSink::sends).unwrap_or_default(),
            other: core.other.summary(),
        };
        core.report(&rec, stopped.is_some())?;
        Ok(())
    }
}

fn bone_table(s: &mut String, p: &Packet<'_>) {
    let row = |s: &mut String, id: u16, parent: Option<i16>, rot: [f32; 4], pos: [f32; 3]| {
        let name = smf::bone_name(id).unwrap_or("?");
        let _ = write!(s, "  {id:>3} {name:<11}");
        if let Some(parent) = parent {
            let _ = write!(s, " {parent:>6}");
        }
        for v in rot.iter().chain(&pos) {
            let _ = write!(s, " {v:>9.5}");
        }
        s.push('\n');
    };
    let cols = "    rot.x     rot.y     rot.z     rot.w     pos.x     pos.y     pos.z";
    match &p.body {
        Body::Frame(f) => {
            let _ = writeln!(s, "   id name        {cols}");
            for b in f.bones() {
                row(s, b.id, None, b.rot, b.pos);
            }
        }
        Body::Skeleton(k) => {
            let _ = writeln!(s, "   id name        parent {cols}");
            for b in k.bones() {
                row(s, b.id, Some(b.parent), b.rot, b.pos);
            }
        }
        Body::Sensor(_) => {}
    }
}

fn tree_lines(
    s: &mut String,
    chunks: Chunks<'_>,
    parent: Option<Tag>,
    depth: usize,
) -> std::fmt::Result {
    let indent = "  ".repeat(depth);
    for c in chunks {
        match c {
            Ok(c) => {
                let known = c.tag.is_known_in(parent);
                write!(
                    s,
                    "  {:>6}  {:>6}  {indent}{}",
                    c.offset,
                    c.value.len(),
                    c.tag
                )?;
                // Only containers where the format puts them are opened: the
                // depth stays that of the format (4), whatever the bytes say.
                if known && c.tag.is_container() && parent != Some(Tag::SNDT) {
                    s.push('\n');
                    tree_lines(s, c.children(), Some(c.tag), depth + 1)?;
                } else {
                    let mark = if known { ' ' } else { '?' };
                    write!(s, "{mark} {}", hex::encode(c.value))?;
                    if let Some(v) = describe_leaf(c.tag, c.value) {
                        write!(s, "  ({v})")?;
                    }
                    s.push('\n');
                }
            }
            Err(e) => writeln!(s, "  {:>6}          {indent}! {}", e.offset, e.kind)?,
        }
    }
    Ok(())
}

/// The decoded value of a known leaf, for the tree view.
fn describe_leaf(tag: Tag, v: &[u8]) -> Option<String> {
    Some(match tag {
        Tag::FTYP => format!("{:?}", String::from_utf8_lossy(v)),
        Tag::VRSN => v.first_chunk::<1>().map(|b| b[0].to_string())?,
        Tag::IPAD => {
            let n = u64::from_le_bytes(*v.first_chunk::<8>()?);
            match smf::unpack_ipv4(n) {
                Some(ip) => ip.to_string(),
                None => format!("{n}: not a decimal-packed address"),
            }
        }
        Tag::RCVP | Tag::BNID => u16::from_le_bytes(*v.first_chunk::<2>()?).to_string(),
        Tag::PBID => i16::from_le_bytes(*v.first_chunk::<2>()?).to_string(),
        Tag::FNUM => u32::from_le_bytes(*v.first_chunk::<4>()?).to_string(),
        Tag::TIME => f32::from_le_bytes(*v.first_chunk::<4>()?).to_string(),
        Tag::UTTM => f64::from_le_bytes(*v.first_chunk::<8>()?).to_string(),
        Tag::TRAN => {
            let f: Vec<String> = v
                .chunks_exact(4)
                .filter_map(|b| <[u8; 4]>::try_from(b).ok())
                .map(|b| format!("{:.5}", f32::from_le_bytes(b)))
                .collect();
            let (rot, pos) = f.split_at(f.len().min(4));
            format!("rot {} pos {}", rot.join(" "), pos.join(" "))
        }
        _ => return None,
    })
}
