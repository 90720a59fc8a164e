//! `--vmc`: the body retargeted and sent as VMC.

use anyhow::Context as _;

use super::{Body, BodyBridge, BodyOptions, Fanout, Log, MappingTable, Packet, SkeletonEvent};
use mocap_core::vmc;
use std::net::SocketAddr;
use std::time::Duration;
use std::time::Instant;

/// Where and how `--vmc` sends the body.
#[derive(Clone, Debug)]
pub(crate) struct VmcOut {
    /// VMC receivers.
    pub(crate) to: Vec<SocketAddr>,
    /// Mapping and root motion.
    pub(crate) body: BodyOptions,
    /// The mapping's name, for the log.
    pub(crate) mapping_name: String,
    /// `--smooth`: 1€ smoothing of what is sent.
    pub(crate) smooth: Option<vmc::SmoothOptions>,
    /// `--vrchat`, `--vmt`: tracker receivers and how to solve for them.
    pub(crate) trackers: Vec<(Vec<SocketAddr>, vmc::TrackerOptions)>,
}

/// One `--vrchat` or `--vmt` output: its stream and its receivers.
pub(super) struct TrackerSink {
    pub(super) stream: vmc::TrackerStream,
    pub(super) out: Fanout,
}

/// The `--vmc` sink: the bridge, one socket, the clock for offline pacing.
pub(super) struct VmcSink {
    pub(super) bridge: BodyBridge,
    pub(super) out: Fanout,
    pub(super) smoother: Option<vmc::Smoother>,
    pub(super) started: Instant,
    pub(super) first_arrival: Option<f64>,
    pub(super) frames: u64,
    pub(super) waiting: u64,
    pub(super) last_waiting_log: Option<Instant>,
    pub(super) changes: u64,
    pub(super) trackers: Vec<TrackerSink>,
}

impl VmcSink {
    pub(super) fn new(v: &VmcOut) -> anyhow::Result<Self> {
        Ok(Self {
            bridge: BodyBridge::new(v.body.clone()),
            out: Fanout::new(v.to.clone(), mocap_cli::sends::Receiver::Vmc)
                .context("failed to open the VMC sending socket")?,
            smoother: v.smooth.clone().map(vmc::Smoother::new),
            started: Instant::now(),
            first_arrival: None,
            frames: 0,
            waiting: 0,
            last_waiting_log: None,
            changes: 0,
            trackers: v
                .trackers
                .iter()
                .map(|(to, opts)| {
                    Ok(TrackerSink {
                        stream: vmc::TrackerStream::new(*opts),
                        out: Fanout::new(to.clone(), receiver(opts))
                            .context("failed to open the tracker sending socket")?,
                    })
                })
                .collect::<anyhow::Result<_>>()?,
        })
    }

    pub(super) fn packet(
        &mut self,
        p: &Packet<'_>,
        arrival: Option<f64>,
        log: &Log,
        opts: &VmcOut,
    ) -> anyhow::Result<()> {
        match &p.body {
            // A rest pose with NaN or infinities would put NaN into every
            // bone sent; keep the skeleton we have (or keep waiting).
            Body::Skeleton(s)
                if s.bones()
                    .any(|b| !b.rot.iter().chain(&b.pos).all(|v| v.is_finite())) =>
            {
                log.info(format_args!(
                    "skeleton with a non-finite rest pose not used for VMC"
                ));
            }
            Body::Skeleton(s) => match self.bridge.skeleton(s) {
                SkeletonEvent::First => log.info(format_args!(
                    "skeleton received: sending {} (mapping {}, root motion {})",
                    self.outputs(),
                    opts.mapping_name,
                    if opts.body.root_motion { "on" } else { "off" },
                )),
                SkeletonEvent::Changed => {
                    self.changes += 1;
                    log.info(format_args!("skeleton changed: retargeting rebuilt"));
                }
                SkeletonEvent::Same => {}
            },
            Body::Frame(f) => {
                let t = match (arrival, self.first_arrival) {
                    (Some(at), Some(first)) => at - first,
                    (Some(at), None) => {
                        self.first_arrival = Some(at);
                        0.0
                    }
                    _ => self.started.elapsed().as_secs_f64(),
                };
                let Some(mut messages) = self.bridge.frame(f, t as f32) else {
                    self.waiting += 1;
                    let now = Instant::now();
                    if self
                        .last_waiting_log
                        .is_none_or(|at| now.duration_since(at) >= Duration::from_secs(5))
                    {
                        self.last_waiting_log = Some(now);
                        log.info(format_args!(
                            "waiting for skeleton (mocopi sends one every ~3.5 s); {} frames held back",
                            self.waiting
                        ));
                    }
                    return Ok(());
                };
                // Filters and the tracker rate take time since the first
                // frame; a capture's clock stepping back counts as no time.
                let now = Duration::try_from_secs_f64(t).unwrap_or_default();
                if let Some(s) = &mut self.smoother {
                    s.handle_frame(now, &mut messages);
                }
                self.frames += 1;
                if !self.out.targets().is_empty() {
                    for d in vmc::frame_datagrams(&messages, vmc::MAX_BUNDLE)? {
                        self.out.send(&d, log);
                    }
                }
                // One bridge frame is one tracker frame, solved from the
                // same (smoothed) body.
                for sink in &mut self.trackers {
                    sink.stream.handle_frame(now, &messages);
                    while let Some(d) = sink.stream.poll_transmit() {
                        sink.out.send(&d, log);
                    }
                }
            }
            Body::Sensor(_) => {}
        }
        Ok(())
    }
}

impl VmcSink {
    /// Every destination's counts: VMC first, then the tracker outputs.
    pub(super) fn sends(&self) -> Vec<mocap_cli::sends::SendRecord> {
        self.out
            .sends()
            .chain(self.trackers.iter().flat_map(|t| t.out.sends()))
            .collect()
    }

    /// What the bridge feeds, for the log.
    fn outputs(&self) -> String {
        let mut parts = Vec::new();
        if !self.out.targets().is_empty() {
            parts.push(format!("VMC to {}", list(self.out.targets())));
        }
        for t in &self.trackers {
            parts.push(format!(
                "{} trackers to {}",
                t.kind(),
                list(t.out.targets())
            ));
        }
        parts.join(", ")
    }
}

/// What listens for a tracker output.
fn receiver(opts: &vmc::TrackerOptions) -> mocap_cli::sends::Receiver {
    match opts.format {
        vmc::TrackerFormat::Vrchat(_) => mocap_cli::sends::Receiver::Vrchat,
        vmc::TrackerFormat::Vmt(_) => mocap_cli::sends::Receiver::Vmt,
    }
}

impl TrackerSink {
    /// `vrchat` or `vmt`.
    pub(super) fn kind(&self) -> &'static str {
        match self.stream.options().format {
            vmc::TrackerFormat::Vrchat(_) => "vrchat",
            vmc::TrackerFormat::Vmt(_) => "vmt",
        }
    }
}

/// `--mapping`: `sony`, `animu-sphere` or a JSON file (see
/// [`mocap_core::bridge::parse_mapping`]). Returns the name for the log and the table.
///
/// # Errors
/// An unreadable or invalid file, with the reason.
pub(crate) fn parse_mapping_arg(s: &str) -> Result<(String, MappingTable), String> {
    match s {
        "sony" => Ok((s.into(), mocap_core::bridge::SONY_MAPPING.to_vec())),
        "animu-sphere" => Ok((s.into(), mocap_core::bridge::ANIMU_SPHERE_MAPPING.to_vec())),
        path => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                format!("{path}: {e} (expected sony, animu-sphere or a JSON mapping file)")
            })?;
            let table =
                mocap_core::bridge::parse_mapping(&text).map_err(|e| format!("{path}: {e}"))?;
            Ok((path.into(), table))
        }
    }
}

pub(super) fn list(to: &[SocketAddr]) -> String {
    to.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
