//! Mixing several VMC senders into one stream: frames per source, window or
//! tick scheduling, averaging or per-bone preference. Pure: time is passed in
//! (`handle_message(now, source, m)`), mixed frames come out of
//! [`Mixer::poll_frame`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

use super::average::{Method, average_linear, average_rotation};
use super::{MAX_NAME_LEN, MAX_NAMES, Message};

/// The shortest tick or window period: 1000 mixed frames per second.
pub const MIN_PERIOD: Duration = Duration::from_millis(1);

/// The most bytes (roughly: messages and their names) the messages other
/// than bones of one frame may hold. A reference-sender frame holds a few
/// kB; a sender that stages Blend/Val for ever, or names endless
/// expressions, is held to this and its surplus counted as dropped.
pub const MAX_FRAME_BYTES: usize = 64 * 1024;
/// The most messages other than bones one frame holds (with
/// [`MAX_FRAME_BYTES`]).
pub const MAX_FRAME_MESSAGES: usize = 1024;
/// The most frames one source keeps for a window: past it the oldest go,
/// so a sender closing frames at any rate holds bounded memory.
pub const MAX_WINDOW_FRAMES: usize = 1024;

/// When mixed frames are made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MixSchedule {
    /// As soon as the driving source completes a frame, from the latest
    /// complete frame of each live source: no wait for a tick. The driver is
    /// the primary source while it is live, else the first live source (a
    /// source is live while its latest frame carries a finite value and is
    /// no older than `stale`).
    Frame,
    /// Every `1/rate` s, from the latest complete frame of each live source.
    Tick {
        /// Frames per second.
        rate: f64,
    },
    /// Every `window + gap`, from every frame each source completed in the
    /// last `window` (seed 003's 450 ms + 50 ms, done right).
    Window {
        /// How far back frames count.
        window: Duration,
        /// Pause after each window.
        gap: Duration,
    },
}

/// How sources are mixed.
#[derive(Clone, Debug)]
pub struct MixConfig {
    /// When to emit.
    pub schedule: MixSchedule,
    /// Rotation averaging.
    pub method: Method,
    /// A source with no complete frame for this long drops out of the mix.
    pub stale: Duration,
    /// Weight per source (default 1).
    pub weights: Vec<f64>,
    /// Bones to average; `None` means every bone.
    pub bones: Option<Vec<String>>,
    /// Bones taken from one source instead of averaged: (source, bones).
    pub prefer: Vec<(usize, Vec<String>)>,
    /// The source whose other messages (Root, blendshapes, OK, T, …) pass
    /// through; while it is not live, the first live source stands in.
    pub primary: usize,
    /// Average blendshape values by name across sources instead of passing
    /// the primary's through.
    pub average_blends: bool,
}

/// A bone's local position and rotation.
type Pose = ([f32; 3], [f32; 4]);

/// A source's complete frame. Bones are indexed by the mixer's interned
/// name ids, so a frame costs no allocation per bone and frames are recycled.
#[derive(Clone, Debug, Default)]
struct Frame {
    bones: Vec<Option<Pose>>,
    /// How many of `bones` are set.
    bone_count: usize,
    /// Everything else, in order (Root, Blend/Val, Apply, OK, T, others).
    rest: Vec<Message>,
    /// What `rest` holds, as [`size_of`] counts it.
    rest_bytes: usize,
}

impl Frame {
    fn set(&mut self, id: usize, pose: Pose) {
        if self.bones.len() <= id {
            self.bones.resize(id + 1, None);
        }
        if let Some(slot) = self.bones.get_mut(id) {
            if slot.is_none() {
                self.bone_count += 1;
            }
            *slot = Some(pose);
        }
    }

    /// Adds a message other than a bone: a later Blend/Val replaces the
    /// staged value of its name (a frame holds one value per name), and
    /// past the bounds nothing is added. `false` when `m` was dropped.
    fn push(&mut self, m: Message) -> bool {
        if let Message::BlendVal { name, value } = &m
            && let Some(Message::BlendVal { value: v, .. }) = self
                .rest
                .iter_mut()
                .find(|x| matches!(x, Message::BlendVal { name: n, .. } if n == name))
        {
            *v = *value;
            return true;
        }
        let bytes = size_of(&m);
        if self.rest.len() >= MAX_FRAME_MESSAGES || self.rest_bytes + bytes > MAX_FRAME_BYTES {
            return false;
        }
        self.rest_bytes += bytes;
        self.rest.push(m);
        true
    }

    /// Empties the frame, keeping its allocations.
    fn clear(&mut self) {
        self.bones.fill(None);
        self.bone_count = 0;
        self.rest.clear();
        self.rest_bytes = 0;
    }

    /// Whether the frame carries a value: a bone, or a message other than
    /// a frame end (values with NaN or infinity never enter a frame).
    fn has_values(&self) -> bool {
        self.bone_count > 0 || self.rest.iter().any(|m| !m.ends_frame())
    }

    /// Messages and names held.
    fn held(&self) -> usize {
        self.bones.len() + self.rest.len()
    }
}

/// Roughly what a message costs held: its own size and its text. Blend/Val,
/// the common case, is counted without encoding; rarer messages by their
/// wire size.
fn size_of(m: &Message) -> usize {
    std::mem::size_of::<Message>()
        + match m {
            Message::BlendVal { name, .. }
            | Message::BonePos { name, .. }
            | Message::RootPos { name, .. } => name.len(),
            Message::BlendApply | Message::Time(_) | Message::Available { .. } => 0,
            other => crate::osc::message(&other.to_osc()).map_or(MAX_FRAME_BYTES, |b| b.len()),
        }
}

#[derive(Debug, Default)]
struct Source {
    /// The strongest frame end this source sends (T 3, OK 2, Apply 1): only
    /// that one closes its frames, so a sender ending frames with Apply, OK
    /// and then T is not cut in three.
    closer: u8,
    open: Frame,
    /// A cleared frame to reuse as the next `open` one.
    spare: Frame,
    latest: Option<(Duration, Frame)>,
    window: VecDeque<(Duration, Frame)>,
    frames: u64,
    /// Messages not held: past a bound, or with a NaN or infinite value.
    dropped: u64,
    non_finite: u64,
    stale_periods: u64,
    was_live: bool,
    /// A frame completed since the last mix (frame mode).
    fresh: bool,
}

impl Source {
    /// Live: its latest frame carries a value and is no older than `stale`.
    /// A sender whose bones are all NaN completes frames of nothing but
    /// ends; such a source neither drives nor passes through.
    fn live(&self, now: Duration, stale: Duration) -> bool {
        self.latest
            .as_ref()
            .is_some_and(|(t, f)| f.has_values() && now.saturating_sub(*t) <= stale)
    }
}

/// Per-source counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SourceCounters {
    /// Complete frames received.
    pub frames: u64,
    /// Times the source went stale.
    pub stale_periods: u64,
    /// Messages left out: an open frame full ([`MAX_FRAME_MESSAGES`],
    /// [`MAX_FRAME_BYTES`]), or a bone name past [`MAX_NAMES`] or
    /// [`MAX_NAME_LEN`].
    pub dropped: u64,
    /// Bones, roots and blendshape values with a NaN or infinite value,
    /// left out: the source's last good value stands.
    pub non_finite: u64,
}

/// The mixer.
#[derive(Debug)]
pub struct Mixer {
    cfg: MixConfig,
    sources: Vec<Source>,
    /// The last rotation sent per bone id (sign continuity).
    previous: Vec<Option<[f32; 4]>>,
    next_emit: Option<Duration>,
    /// Bone names by id, ids by name, and the ids in name order (the order
    /// bones are mixed and sent in).
    names: Vec<String>,
    ids: HashMap<String, usize>,
    order: Vec<usize>,
}

impl Mixer {
    /// A mixer for `count` sources.
    pub fn new(cfg: MixConfig, count: usize) -> Self {
        Self {
            cfg,
            sources: (0..count).map(|_| Source::default()).collect(),
            previous: Vec::new(),
            next_emit: None,
            names: Vec::new(),
            ids: HashMap::new(),
            order: Vec::new(),
        }
    }

    /// Adds a source (senders appear while running); returns its index.
    pub fn add_source(&mut self, weight: f64) -> usize {
        self.sources.push(Source::default());
        let i = self.sources.len() - 1;
        if let Some(w) = self.cfg.weights.get_mut(i) {
            *w = weight;
        } else {
            self.cfg.weights.resize(i, 1.0);
            self.cfg.weights.push(weight);
        }
        i
    }

    /// Number of sources.
    pub fn source_count(&self) -> usize {
        self.sources.len()
    }

    /// Counters of one source.
    pub fn counters(&self, source: usize) -> SourceCounters {
        self.sources
            .get(source)
            .map(|s| SourceCounters {
                frames: s.frames,
                stale_periods: s.stale_periods,
                dropped: s.dropped,
                non_finite: s.non_finite,
            })
            .unwrap_or_default()
    }

    /// Gives source `i` to a new sender: the old one's frames and counters
    /// go (a tool folds the counters into its totals first).
    pub fn replace_source(&mut self, i: usize, weight: f64) {
        if let Some(s) = self.sources.get_mut(i) {
            *s = Source::default();
        }
        if let Some(w) = self.cfg.weights.get_mut(i) {
            *w = weight;
        }
    }

    /// Everything the mixer holds, counted in messages, bone slots, frames
    /// and names: bounded by the constants above whatever the senders do,
    /// for tests and soaks to check.
    pub fn held(&self) -> usize {
        let sources: usize = self
            .sources
            .iter()
            .map(|s| {
                s.open.held()
                    + s.spare.held()
                    + s.latest.as_ref().map_or(0, |(_, f)| f.held())
                    + s.window.iter().map(|(_, f)| 1 + f.held()).sum::<usize>()
            })
            .sum();
        sources + self.names.len() + self.previous.len()
    }

    /// The id of a bone name, interned on first sight; `None` for a name
    /// past the bounds on names.
    fn intern(&mut self, name: &str) -> Option<usize> {
        if let Some(&id) = self.ids.get(name) {
            return Some(id);
        }
        if self.names.len() >= MAX_NAMES || name.len() > MAX_NAME_LEN {
            return None;
        }
        let id = self.names.len();
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        let names = &self.names;
        let at = self
            .order
            .partition_point(|&o| names.get(o).is_some_and(|n| n.as_str() < name));
        self.order.insert(at, id);
        Some(id)
    }

    /// A `/VMC/Ext/Bone/Pos` from `source`, by borrowed name (no allocation
    /// once the name has been seen).
    /// A bone with a NaN or infinite value is left out (counted): the
    /// source's last good pose of it stands in the mix.
    pub fn handle_bone(&mut self, source: usize, name: &str, pos: [f32; 3], rot: [f32; 4]) {
        if source >= self.sources.len() {
            return;
        }
        let finite = pos.iter().chain(&rot).all(|v| v.is_finite());
        let id = if finite { self.intern(name) } else { None };
        let Some(s) = self.sources.get_mut(source) else {
            return;
        };
        match id {
            Some(id) => s.open.set(id, (pos, rot)),
            None if finite => s.dropped += 1,
            None => s.non_finite += 1,
        }
    }

    /// A message from `source` at time `now`. OK, T and Blend/Apply close the
    /// source's frame; half-received frames are never mixed.
    pub fn handle_message(&mut self, now: Duration, source: usize, m: Message) {
        if let Message::BonePos { name, pos, rot } = &m {
            self.handle_bone(source, name, *pos, *rot);
            return;
        }
        let Some(s) = self.sources.get_mut(source) else {
            return;
        };
        if !m.values_finite() {
            s.non_finite += 1;
            return;
        }
        let rank = m.end_rank();
        s.closer = s.closer.max(rank);
        let ends = rank > 0 && rank == s.closer;
        if !s.open.push(m) {
            s.dropped += 1;
        }
        if ends {
            // A sender ending with OK then T closes its first frame at OK
            // (T's rank is not known yet); the lone T that follows belongs
            // to that frame, not to a new, empty one.
            if s.open.bone_count == 0
                && s.open.rest.iter().all(Message::ends_frame)
                && let Some((_, latest)) = &mut s.latest
            {
                // Bounded like any frame: a sender of nothing but ends
                // must not grow the frame they join. Nor do they keep it
                // live: a sender whose bones are all NaN sends nothing but
                // ends, and must go stale like a silent one.
                for m in s.open.rest.drain(..) {
                    if !latest.push(m) {
                        s.dropped += 1;
                    }
                }
                s.open.rest_bytes = 0;
                return;
            }
            let frame = std::mem::replace(&mut s.open, std::mem::take(&mut s.spare));
            s.frames += 1;
            s.fresh = true;
            // Tick mode only needs the latest frame; keeping a history there
            // would cost a copy per frame and grow without bound.
            if matches!(self.cfg.schedule, MixSchedule::Window { .. }) {
                if s.window.len() >= MAX_WINDOW_FRAMES {
                    s.window.pop_front();
                    s.dropped += 1;
                }
                s.window.push_back((now, frame.clone()));
            }
            if let Some((_, mut old)) = s.latest.replace((now, frame)) {
                old.clear();
                s.spare = old;
            }
        }
    }

    /// When the next mixed frame is due, after the first call to [`poll_frame`](Self::poll_frame).
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.next_emit
    }

    /// The mixed frame, if one is due at `now`.
    pub fn poll_frame(&mut self, now: Duration) -> Option<Vec<Message>> {
        let period = match self.cfg.schedule {
            MixSchedule::Frame => return self.poll_driven(now),
            MixSchedule::Tick { rate } => Duration::try_from_secs_f64(1.0 / rate.max(1e-3)).ok()?,
            MixSchedule::Window { window, gap } => window.saturating_add(gap),
        };
        // A zero period (a zero window and gap, an infinite rate) would emit
        // on every poll and the catch-up below would never end.
        let period = period.max(MIN_PERIOD);
        let due = *self
            .next_emit
            .get_or_insert_with(|| now.saturating_add(period));
        if now < due {
            return None;
        }
        // Catch up without bursts if we were late: the first slot after now,
        // found by division (a long stall at a short period is many slots).
        let slots = (now - due).as_nanos() / period.as_nanos() + 1;
        let skip = u64::try_from(period.as_nanos().saturating_mul(slots)).unwrap_or(u64::MAX);
        self.next_emit = Some(due.saturating_add(Duration::from_nanos(skip)));
        Some(self.mix(now))
    }

    /// Frame mode: mix when the driving source has a fresh frame.
    fn poll_driven(&mut self, now: Duration) -> Option<Vec<Message>> {
        let stale = self.cfg.stale;
        // Polled per datagram: asked of the sources, not collected.
        let driver = self.lead(|i| self.sources.get(i).is_some_and(|s| s.live(now, stale)))?;
        if !self.sources.get(driver).is_some_and(|s| s.fresh) {
            return None;
        }
        for s in &mut self.sources {
            s.fresh = false;
        }
        Some(self.mix(now))
    }

    /// The source that stands as primary: the configured one while it is
    /// live, else the first live source.
    fn lead(&self, live: impl Fn(usize) -> bool) -> Option<usize> {
        if self.cfg.primary < self.sources.len() && live(self.cfg.primary) {
            return Some(self.cfg.primary);
        }
        (0..self.sources.len()).find(|i| live(*i))
    }

    fn live(&mut self, now: Duration) -> Vec<bool> {
        let stale = self.cfg.stale;
        self.sources
            .iter_mut()
            .map(|s| {
                let live = s.live(now, stale);
                if s.was_live && !live {
                    s.stale_periods += 1;
                }
                s.was_live = live;
                live
            })
            .collect()
    }

    fn mix(&mut self, now: Duration) -> Vec<Message> {
        let live = self.live(now);
        let lead = self.lead(|i| live.get(i) == Some(&true));
        let window = match self.cfg.schedule {
            MixSchedule::Window { window, .. } => Some(window),
            MixSchedule::Tick { .. } | MixSchedule::Frame => None,
        };
        if let Some(w) = window {
            for s in &mut self.sources {
                s.window.retain(|(t, _)| now.saturating_sub(*t) <= w);
            }
        }
        // The frames that count, borrowed: each live source's latest (tick)
        // or everything in the window.
        let frames: Vec<(usize, &Frame)> = self
            .sources
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                let picked: Vec<&Frame> = match window {
                    None => s
                        .latest
                        .as_ref()
                        .filter(|_| live.get(i) == Some(&true))
                        .map(|(_, f)| f)
                        .into_iter()
                        .collect(),
                    Some(_) => s.window.iter().map(|(_, f)| f).collect(),
                };
                picked.into_iter().map(move |f| (i, f))
            })
            .collect();
        let mut out = Vec::with_capacity(self.order.len() + 24);
        if self.previous.len() < self.names.len() {
            self.previous.resize(self.names.len(), None);
        }
        let bones = Bones {
            cfg: &self.cfg,
            names: &self.names,
            order: &self.order,
            lead,
        };
        bones.mix(&frames, &mut self.previous, &mut out);
        let blends = if self.cfg.average_blends {
            average_blends(&self.cfg.weights, &frames)
        } else {
            Vec::new()
        };
        let lead_frame = lead
            .and_then(|i| self.sources.get(i))
            .and_then(|s| s.latest.as_ref())
            .map(|(_, f)| f);
        pass_through(lead_frame, self.cfg.average_blends, blends, &mut out);
        if window.is_some() {
            for s in &mut self.sources {
                s.window.clear();
            }
        }
        out
    }
}

/// What mixing the bones of a frame reads: the config, the interned
/// names, their name order, and the source standing as primary.
struct Bones<'a> {
    cfg: &'a MixConfig,
    names: &'a [String],
    order: &'a [usize],
    lead: Option<usize>,
}

impl Bones<'_> {
    /// Each bone in name order, from the frames that have it: averaged, or
    /// from its preferred source (or the primary for a bone not averaged).
    /// Each frame holds its poses by name id, so a bone's poses from every
    /// frame are found without a lookup.
    fn mix(
        &self,
        frames: &[(usize, &Frame)],
        previous: &mut [Option<[f32; 4]>],
        out: &mut Vec<Message>,
    ) {
        let mut here: Vec<(usize, &Pose)> = Vec::with_capacity(frames.len());
        let mut rots: Vec<([f32; 4], f64)> = Vec::new();
        let mut poss: Vec<([f32; 3], f64)> = Vec::new();
        for &id in self.order {
            let Some(name) = self.names.get(id).map(String::as_str) else {
                continue;
            };
            here.clear();
            for (i, f) in frames {
                if let Some(Some(pose)) = f.bones.get(id) {
                    here.push((*i, pose));
                }
            }
            if here.is_empty() {
                continue;
            }
            let only = self.only(name, &here);
            rots.clear();
            poss.clear();
            for (i, (p, r)) in &here {
                if only.is_some_and(|o| o != *i) {
                    continue;
                }
                let w = self.cfg.weights.get(*i).copied().unwrap_or(1.0);
                rots.push((*r, w));
                poss.push((*p, w));
            }
            let Some(previous) = previous.get_mut(id) else {
                continue;
            };
            let (Some(rot), Some(pos)) = (
                average_rotation(&rots, self.cfg.method, *previous),
                average_linear(&poss),
            ) else {
                continue;
            };
            *previous = Some(rot);
            out.push(Message::BonePos {
                name: name.to_owned(),
                pos,
                rot,
            });
        }
    }

    /// The one source bone `name` is taken from (`None`: averaged over
    /// all): its preferred source when that sent it, else the primary for a
    /// bone left out of the average.
    fn only(&self, name: &str, here: &[(usize, &Pose)]) -> Option<usize> {
        let preferred = self
            .cfg
            .prefer
            .iter()
            .find(|(_, bones)| bones.iter().any(|b| b == name))
            .map(|(src, _)| *src);
        let averaged = self
            .cfg
            .bones
            .as_ref()
            .is_none_or(|b| b.iter().any(|x| x == name));
        match preferred {
            Some(src) if here.iter().any(|(i, _)| *i == src) => Some(src),
            _ if averaged => None,
            _ => Some(self.lead.unwrap_or(self.cfg.primary)),
        }
    }
}

/// Blendshape values averaged by name, weighted like the bones.
fn average_blends(weights: &[f64], frames: &[(usize, &Frame)]) -> Vec<Message> {
    let mut sums: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for (i, f) in frames {
        let w = weights.get(*i).copied().unwrap_or(1.0);
        for m in &f.rest {
            if let Message::BlendVal { name, value } = m
                && value.is_finite()
            {
                let e = sums.entry(name.as_str()).or_insert((0.0, 0.0));
                e.0 += w * f64::from(*value);
                e.1 += w;
            }
        }
    }
    sums.into_iter()
        .filter(|(_, (_, w))| *w > 0.0)
        .map(|(name, (sum, w))| Message::BlendVal {
            name: name.to_owned(),
            value: (sum / w) as f32,
        })
        .collect()
}

/// Everything but bones passes through from the primary source's latest
/// frame (or its stand-in's); averaged blendshapes take the place of its
/// own, before Apply.
fn pass_through(
    lead: Option<&Frame>,
    average_blends: bool,
    mut blends: Vec<Message>,
    out: &mut Vec<Message>,
) {
    let mut applied = false;
    for m in lead.map_or(&[][..], |f| &f.rest) {
        match m {
            Message::BlendVal { .. } if average_blends => {}
            Message::BlendApply if !applied => {
                out.append(&mut blends);
                out.push(Message::BlendApply);
                applied = true;
            }
            other => out.push(other.clone()),
        }
    }
    if !blends.is_empty() {
        out.append(&mut blends);
        out.push(Message::BlendApply);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn bone(name: &str, deg: f32) -> Message {
        let h = deg.to_radians() / 2.0;
        Message::BonePos {
            name: name.into(),
            pos: [0.0, deg / 100.0, 0.0],
            rot: [0.0, h.sin(), 0.0, h.cos()],
        }
    }

    fn frame(m: &mut Mixer, src: usize, t: u64, head: f32, time: f32) {
        m.handle_message(ms(t), src, bone("Head", head));
        m.handle_message(ms(t), src, bone("Spine", 0.0));
        m.handle_message(
            ms(t),
            src,
            Message::BlendVal {
                name: "Joy".into(),
                value: 1.0,
            },
        );
        m.handle_message(ms(t), src, Message::Time(time));
    }

    fn head_angle(out: &[Message]) -> f32 {
        out.iter()
            .find_map(|m| match m {
                Message::BonePos { name, rot, .. } if name == "Head" => {
                    Some(2.0 * rot[1].atan2(rot[3]).to_degrees())
                }
                _ => None,
            })
            .unwrap()
    }

    /// The most [`Mixer::held`] can be for `sources` sources: three frames
    /// each (open, spare, latest), the window in window mode, and the names.
    fn held_bound(schedule: MixSchedule, sources: usize) -> usize {
        let frame = MAX_NAMES + MAX_FRAME_MESSAGES;
        let window = match schedule {
            MixSchedule::Window { .. } => MAX_WINDOW_FRAMES * (1 + frame),
            MixSchedule::Frame | MixSchedule::Tick { .. } => 0,
        };
        sources * (3 * frame + window) + 2 * MAX_NAMES
    }

    /// Issue 35: a sender staging Blend/Val without Apply grew its open
    /// frame by one message per value, for ever. A seeded hostile mix of
    /// every per-sender shape (values without Apply, endless and long
    /// names, bones without an end, lone ends, NaN) keeps the mixer under
    /// its bound, and the mix stays finite.
    #[test]
    fn hostile_senders_keep_the_mixer_bounded() {
        for schedule in [
            MixSchedule::Frame,
            MixSchedule::Tick { rate: 60.0 },
            MixSchedule::Window {
                window: ms(450),
                gap: ms(50),
            },
        ] {
            let mut m = Mixer::new(cfg(schedule), 2);
            let mut rng = mocap_testutil::Rng(35);
            let long = "x".repeat(1000);
            let mut most = 0;
            for k in 0..160_000u64 {
                let src = rng.below(2);
                let now = ms(k / 20);
                let name = match rng.below(4) {
                    0 => format!("n{k}"),
                    1 => format!("{long}{k}"),
                    _ => "Joy".to_owned(),
                };
                let v = match rng.below(8) {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    _ => 0.5,
                };
                // Long stretches without a frame end (Apply does not end
                // frames once T has): what a staging sender sends.
                let ends = (k / 40_000) % 2 == 0;
                match rng.below(if ends { 16 } else { 13 }) {
                    0..=7 => m.handle_message(now, src, Message::BlendVal { name, value: v }),
                    8..=11 => m.handle_bone(src, &name, [v, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
                    12 => m.handle_message(
                        now,
                        src,
                        Message::Other(crate::osc::Message::new(format!("/x/{name}"), vec![])),
                    ),
                    13 => m.handle_message(now, src, Message::Time(k as f32)),
                    // Bones of a real body now and then, closed as the
                    // strongest end would.
                    14 => frame(&mut m, src, k / 20, 10.0, k as f32),
                    _ => m.handle_message(now, src, Message::BlendApply),
                }
                if let Some(out) = m.poll_frame(now) {
                    for x in &out {
                        assert!(x.values_finite(), "{x:?}");
                    }
                }
                most = most.max(m.held());
            }
            assert!(most <= held_bound(schedule, 2), "{schedule:?}: {most}");
            let c = m.counters(0);
            assert!(c.dropped > 0 && c.non_finite > 0, "{c:?}");
        }
    }

    /// One sender's Blend/Val without Apply: the open frame holds one
    /// value per name, not one per message.
    #[test]
    fn values_without_apply_hold_one_per_name() {
        let mut m = Mixer::new(cfg(MixSchedule::Tick { rate: 60.0 }), 1);
        for k in 0..100_000u64 {
            m.handle_message(
                ms(k),
                0,
                Message::BlendVal {
                    name: format!("{}", k % 3),
                    value: 0.5,
                },
            );
        }
        assert!(m.held() <= 3, "{}", m.held());
        assert_eq!(m.counters(0).dropped, 0);
    }

    /// Found by the `vmc_mixer` fuzz target: a zero window and gap (also
    /// an infinite `--rate`) hung the first poll; a long stall at a short
    /// period looped once per missed slot.
    #[test]
    fn zero_and_tiny_periods_neither_hang_nor_burst() {
        let zero = MixSchedule::Window {
            window: Duration::ZERO,
            gap: Duration::ZERO,
        };
        for schedule in [
            zero,
            MixSchedule::Tick {
                rate: f64::INFINITY,
            },
        ] {
            let mut m = Mixer::new(cfg(schedule), 2);
            frame(&mut m, 0, 0, 10.0, 0.0);
            assert!(m.poll_frame(ms(0)).is_none());
            assert_eq!(m.poll_timeout(), Some(MIN_PERIOD));
            assert!(m.poll_frame(ms(1)).is_some());
            assert_eq!(m.poll_timeout(), Some(ms(2)));
            // An hour's stall: one frame, and the next slot after it.
            assert!(
                m.poll_frame(ms(3_600_000) + Duration::from_micros(500))
                    .is_some()
            );
            assert_eq!(m.poll_timeout(), Some(ms(3_600_001)));
            assert!(
                m.poll_frame(ms(3_600_000) + Duration::from_micros(900))
                    .is_none()
            );
        }
    }

    fn cfg(schedule: MixSchedule) -> MixConfig {
        MixConfig {
            schedule,
            method: Method::Markley,
            stale: ms(500),
            weights: vec![1.0, 1.0],
            bones: None,
            prefer: Vec::new(),
            primary: 0,
            average_blends: false,
        }
    }

    /// Frames are recycled: a bone missing from a later frame must not come
    /// back from an older one; bones go out in name order.
    #[test]
    fn recycled_frames_carry_only_their_own_bones() {
        let mut m = Mixer::new(cfg(MixSchedule::Frame), 1);
        let names = |out: &[Message]| -> Vec<String> {
            out.iter()
                .filter_map(|m| match m {
                    Message::BonePos { name, .. } => Some(name.clone()),
                    _ => None,
                })
                .collect()
        };
        m.handle_message(ms(0), 0, bone("Spine", 0.0));
        m.handle_message(ms(0), 0, bone("Head", 0.0));
        m.handle_message(ms(0), 0, bone("Chest", 0.0));
        m.handle_message(ms(0), 0, Message::Time(1.0));
        assert_eq!(
            names(&m.poll_frame(ms(0)).unwrap()),
            ["Chest", "Head", "Spine"]
        );
        for k in 1..4u64 {
            m.handle_message(ms(k), 0, bone("Head", 0.0));
            m.handle_message(ms(k), 0, Message::Time(1.0 + k as f32));
            assert_eq!(names(&m.poll_frame(ms(k)).unwrap()), ["Head"], "frame {k}");
        }
    }

    #[test]
    fn frame_mode_mixes_when_the_primary_completes_a_frame() {
        let mut m = Mixer::new(cfg(MixSchedule::Frame), 2);
        assert!(m.poll_frame(ms(0)).is_none());
        // Before the primary has sent anything, the first live source drives.
        frame(&mut m, 1, 1, 30.0, 1.0);
        let out = m.poll_frame(ms(1)).unwrap();
        assert!((head_angle(&out) - 30.0).abs() < 1e-3);
        // Once the primary is live it alone triggers, mixing the other's latest.
        frame(&mut m, 0, 2, 10.0, 1.0);
        let out = m.poll_frame(ms(2)).unwrap();
        assert!((head_angle(&out) - 20.0).abs() < 1e-3);
        assert!(
            m.poll_frame(ms(3)).is_none(),
            "nothing new from the primary"
        );
        frame(&mut m, 1, 4, 50.0, 2.0);
        assert!(
            m.poll_frame(ms(4)).is_none(),
            "a secondary frame waits for the primary"
        );
        // Half a frame from the primary is not a frame.
        m.handle_message(ms(5), 0, bone("Head", 10.0));
        assert!(m.poll_frame(ms(5)).is_none());
        m.handle_message(ms(5), 0, Message::Time(2.0));
        let out = m.poll_frame(ms(5)).unwrap();
        assert!((head_angle(&out) - 30.0).abs() < 1e-3);
        assert!(m.poll_timeout().is_none(), "no timer in frame mode");
        // The primary goes stale: the other source drives alone.
        frame(&mut m, 1, 700, 40.0, 3.0);
        let out = m.poll_frame(ms(700)).unwrap();
        assert!((head_angle(&out) - 40.0).abs() < 1e-3);
    }

    /// Issue 57: a sender heard first whose bones are all NaN became the
    /// primary; its lone T kept it live, it never completed a fresh frame,
    /// and frame mode mixed once while the performer sent 240 frames. A
    /// source whose frames carry no finite value neither drives nor passes
    /// its messages through; the primary falls over to a good source.
    #[test]
    fn a_primary_without_finite_values_falls_over_to_a_good_source() {
        for bad in [f32::NAN, f32::INFINITY] {
            let mut m = Mixer::new(cfg(MixSchedule::Frame), 2);
            let mut out = 0;
            for k in 0..240u64 {
                let now = ms(k * 4);
                m.handle_message(
                    now,
                    0,
                    Message::BonePos {
                        name: "Hips".into(),
                        pos: [0.0, bad, 0.0],
                        rot: [0.0, 0.0, 0.0, 1.0],
                    },
                );
                m.handle_message(
                    now,
                    0,
                    Message::Available {
                        loaded: 1,
                        calibration: None,
                        tracking: None,
                    },
                );
                m.handle_message(now, 0, Message::Time(k as f32));
                frame(&mut m, 1, k * 4, 30.0, 1000.0 + k as f32);
                if let Some(f) = m.poll_frame(now) {
                    assert!((head_angle(&f) - 30.0).abs() < 1e-3);
                    // The good source's messages pass through, not the stranger's.
                    assert!(f.contains(&Message::Time(1000.0 + k as f32)), "{f:?}");
                    out += 1;
                }
            }
            assert_eq!(out, 240, "{bad}");
            assert_eq!(m.counters(0).non_finite, 240);
        }
    }

    /// A source whose good frame is followed by frames of nothing but NaN:
    /// the good frame ages and goes stale like a silent source's.
    #[test]
    fn frames_of_only_non_finite_values_do_not_keep_a_source_live() {
        let mut m = Mixer::new(cfg(MixSchedule::Frame), 2);
        frame(&mut m, 0, 0, 10.0, 0.0);
        assert!(m.poll_frame(ms(0)).is_some());
        let mut out = 0;
        for k in 1..300u64 {
            let now = ms(k * 4);
            m.handle_bone(0, "Head", [f32::NAN; 3], [0.0, 0.0, 0.0, 1.0]);
            m.handle_message(now, 0, Message::Time(k as f32));
            frame(&mut m, 1, k * 4, 30.0, 1.0);
            out += usize::from(m.poll_frame(now).is_some());
        }
        // Past --stale (500 ms) the good source drives every frame.
        assert!(out >= 299 - 500 / 4, "{out}");
        assert_eq!(m.counters(0).stale_periods, 1);
    }

    #[test]
    fn tick_mixes_the_latest_frames_of_live_sources() {
        let mut m = Mixer::new(cfg(MixSchedule::Tick { rate: 60.0 }), 2);
        assert!(m.poll_frame(ms(0)).is_none());
        frame(&mut m, 0, 5, 10.0, 1.0);
        frame(&mut m, 1, 6, 30.0, 2.0);
        // Half a frame from source 1 is not mixed.
        m.handle_message(ms(7), 1, bone("Head", 90.0));
        let out = m.poll_frame(ms(17)).unwrap();
        assert!((head_angle(&out) - 20.0).abs() < 1e-3);
        // Primary's other messages pass through, in order.
        let rest: Vec<_> = out
            .iter()
            .filter(|m| !matches!(m, Message::BonePos { .. }))
            .collect();
        assert_eq!(
            rest,
            [
                &Message::BlendVal {
                    name: "Joy".into(),
                    value: 1.0
                },
                &Message::Time(1.0)
            ]
        );
        assert!(m.poll_frame(ms(20)).is_none());
        let next = m.poll_timeout().unwrap();
        assert!(next > ms(33) && next < ms(34), "{next:?}");
    }

    #[test]
    fn a_stale_source_drops_out_and_returns() {
        let mut m = Mixer::new(cfg(MixSchedule::Tick { rate: 10.0 }), 2);
        m.poll_frame(ms(0));
        frame(&mut m, 0, 50, 10.0, 1.0);
        frame(&mut m, 1, 50, 30.0, 1.0);
        assert!((head_angle(&m.poll_frame(ms(100)).unwrap()) - 20.0).abs() < 1e-3);
        frame(&mut m, 0, 650, 10.0, 2.0);
        // Source 1 said nothing for 650 ms: only source 0 counts.
        assert!((head_angle(&m.poll_frame(ms(700)).unwrap()) - 10.0).abs() < 1e-3);
        assert_eq!(m.counters(1).stale_periods, 1);
        frame(&mut m, 1, 750, 50.0, 3.0);
        assert!((head_angle(&m.poll_frame(ms(800)).unwrap()) - 30.0).abs() < 1e-3);
    }

    #[test]
    fn window_uses_every_frame_in_the_window() {
        let mut m = Mixer::new(
            cfg(MixSchedule::Window {
                window: ms(450),
                gap: ms(50),
            }),
            2,
        );
        m.poll_frame(ms(0));
        for t in [100, 200, 300] {
            frame(&mut m, 0, t, 0.0, 1.0);
        }
        frame(&mut m, 1, 400, 40.0, 1.0);
        assert!(m.poll_frame(ms(499)).is_none());
        // Three samples at 0 degrees and one at 40: the mean is near 10.
        let a = head_angle(&m.poll_frame(ms(500)).unwrap());
        assert!(a > 9.0 && a < 11.0, "{a}");
        // The next window starts empty.
        assert!(
            m.poll_frame(ms(1000))
                .unwrap()
                .iter()
                .all(|m| !matches!(m, Message::BonePos { .. }))
        );
    }

    #[test]
    fn prefer_takes_bones_from_one_source() {
        let mut c = cfg(MixSchedule::Tick { rate: 10.0 });
        c.prefer = vec![(1, vec!["Head".into()])];
        let mut m = Mixer::new(c, 2);
        m.poll_frame(ms(0));
        frame(&mut m, 0, 10, 10.0, 1.0);
        frame(&mut m, 1, 10, 30.0, 1.0);
        let out = m.poll_frame(ms(100)).unwrap();
        assert!((head_angle(&out) - 30.0).abs() < 1e-3);
    }

    #[test]
    fn bones_outside_the_list_come_from_the_primary() {
        let mut c = cfg(MixSchedule::Tick { rate: 10.0 });
        c.bones = Some(vec!["Spine".into()]);
        c.primary = 1;
        let mut m = Mixer::new(c, 2);
        m.poll_frame(ms(0));
        frame(&mut m, 0, 10, 10.0, 1.0);
        frame(&mut m, 1, 10, 30.0, 2.0);
        let out = m.poll_frame(ms(100)).unwrap();
        assert!((head_angle(&out) - 30.0).abs() < 1e-3);
        assert!(out.contains(&Message::Time(2.0)));
    }

    #[test]
    fn frames_end_at_the_last_marker_the_sender_uses() {
        let mut m = Mixer::new(cfg(MixSchedule::Tick { rate: 10.0 }), 2);
        m.poll_frame(ms(0));
        // Reference-sender order: bones, Vals, Apply, then Root, OK, T.
        for (t, head) in [(10, 10.0), (30, 20.0)] {
            m.handle_message(ms(t), 0, bone("Head", head));
            m.handle_message(
                ms(t),
                0,
                Message::BlendVal {
                    name: "A".into(),
                    value: 0.5,
                },
            );
            m.handle_message(ms(t), 0, Message::BlendApply);
            m.handle_message(
                ms(t),
                0,
                Message::Available {
                    loaded: 1,
                    calibration: None,
                    tracking: None,
                },
            );
            m.handle_message(ms(t), 0, Message::Time(t as f32));
        }
        let out = m.poll_frame(ms(100)).unwrap();
        assert!((head_angle(&out) - 20.0).abs() < 1e-3);
        // The whole second frame passes through, Apply before OK before T.
        let rest: Vec<_> = out
            .iter()
            .filter(|m| !matches!(m, Message::BonePos { .. }))
            .cloned()
            .collect();
        assert_eq!(rest.len(), 4);
        assert_eq!(rest[1], Message::BlendApply);
        assert_eq!(rest[3], Message::Time(30.0));
        // The first frame closed early at Apply and again at OK; the lone
        // OK and T joined it instead of counting as frames without bones.
        assert_eq!(m.counters(0).frames, 2);
    }

    #[test]
    fn a_lone_closer_after_the_first_frame_joins_it() {
        let mut m = Mixer::new(cfg(MixSchedule::Tick { rate: 10.0 }), 1);
        m.poll_frame(ms(0));
        m.handle_message(ms(10), 0, bone("Head", 15.0));
        m.handle_message(
            ms(10),
            0,
            Message::Available {
                loaded: 1,
                calibration: None,
                tracking: None,
            },
        );
        m.handle_message(ms(10), 0, Message::Time(0.5));
        let out = m.poll_frame(ms(100)).unwrap();
        assert!((head_angle(&out) - 15.0).abs() < 1e-3, "{out:?}");
        assert_eq!(out.last(), Some(&Message::Time(0.5)));
        assert_eq!(m.counters(0).frames, 1);
    }

    #[test]
    fn weights_apply() {
        let mut c = cfg(MixSchedule::Tick { rate: 10.0 });
        c.weights = vec![3.0, 1.0];
        let mut m = Mixer::new(c, 2);
        m.poll_frame(ms(0));
        frame(&mut m, 0, 10, 0.0, 1.0);
        frame(&mut m, 1, 10, 40.0, 1.0);
        let a = head_angle(&m.poll_frame(ms(100)).unwrap());
        let want = (40f64.to_radians().sin())
            .atan2(3.0 + 40f64.to_radians().cos())
            .to_degrees();
        assert!((f64::from(a) - want).abs() < 1e-3, "{a} vs {want}");
    }

    #[test]
    fn blendshapes_average_by_name_when_asked() {
        let mut c = cfg(MixSchedule::Tick { rate: 60.0 });
        c.average_blends = true;
        c.weights = vec![1.0, 3.0];
        let mut m = Mixer::new(c, 2);
        m.poll_frame(ms(0));
        let val = |name: &str, value: f32| Message::BlendVal {
            name: name.into(),
            value,
        };
        // Twice: a source's first frame ends early, while the mixer learns
        // that T (not Apply) ends its frames.
        for (src, joy) in [(0, 0.2), (1, 0.6), (0, 0.2), (1, 0.6)] {
            m.handle_message(ms(1), src, val("Joy", joy));
            if src == 1 {
                m.handle_message(ms(1), src, val("Blink", 1.0));
            }
            m.handle_message(ms(1), src, Message::BlendApply);
            m.handle_message(ms(1), src, Message::Time(1.0));
        }
        let out = m.poll_frame(ms(17)).unwrap();
        let rest: Vec<&Message> = out
            .iter()
            .filter(|x| !matches!(x, Message::BonePos { .. }))
            .collect();
        // (0.2·1 + 0.6·3) / 4 = 0.5; Blink only from source 1; one Apply after the values.
        assert_eq!(
            rest,
            [
                &val("Blink", 1.0),
                &val("Joy", 0.5),
                &Message::BlendApply,
                &Message::Time(1.0)
            ]
        );
    }
}
