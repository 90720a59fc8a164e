//! `--bvh FILE`: a take written as BVH while the tool runs ([`mocap_core::bvh`]
//! makes the text; this file owns the file). Safe by construction: an
//! existing file is kept unless `--force`; the header's `Frames:` count (and
//! `Frame Time:`) is patched in place when the take ends (count, duration,
//! Ctrl-C, a closed pipe, an error: a take dropped unfinished patches its
//! count too). Every second of frames the lines written so far are flushed
//! and the count patched to match, so a take killed with SIGKILL loads in
//! any reader up to its last flush (at most a second of frames lost). A
//! full disk keeps the whole frames written, counted. [`TakeSlots`] decides
//! which senders get a take.

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;

use crate::exit::UsageError;
use crate::output::{Log, plural};
use mocap_core::bvh::{self, FrameEncoder, Joint};
use mocap_core::vmc::{self, humanoid::Recorder};

/// `--bvh FILE` and `--force`, the same in every tool that records takes.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct BvhArgs {
    /// Record the take as BVH (Z-X-Y Euler degrees, centimetres). A sender
    /// gets a take once it sends a complete frame; the first writes FILE, a
    /// further one FILE with its address in the name; 30 s without frames
    /// closes a take. Name the performer with --allow. The header's frame
    /// count is patched when the take ends.
    #[arg(long, value_name = "FILE.bvh")]
    pub bvh: Option<PathBuf>,

    /// Overwrite an existing --bvh file.
    #[arg(long, requires = "bvh")]
    pub force: bool,
}

impl BvhArgs {
    /// Where to write, if anywhere.
    pub fn out(&self) -> Option<BvhOut> {
        self.bvh.clone().map(|path| BvhOut {
            path,
            force: self.force,
        })
    }
}

/// Where `--bvh` writes.
#[derive(Clone, Debug)]
pub struct BvhOut {
    /// The first sender's file; further senders get their address in the name.
    pub path: PathBuf,
    /// Overwrite existing files.
    pub force: bool,
}

impl BvhOut {
    /// Refuses, before anything runs, a file that exists without `--force`.
    ///
    /// # Errors
    /// [`UsageError`] naming the file.
    pub fn check(&self) -> anyhow::Result<()> {
        if !self.force && self.path.exists() {
            return Err(UsageError(format!(
                "{} exists: --force overwrites it",
                self.path.display()
            ))
            .into());
        }
        Ok(())
    }
}

/// Frames between flushes (one second at 60 fps).
const FLUSH_EVERY: usize = 60;

/// Bytes of frame lines held before a flush, whatever their count: a
/// skeleton of a thousand bones (a stranger's mocopi packet can hold that
/// many) makes 60 kB lines, and 256 takes hold their lines at once.
const FLUSH_BYTES: usize = 64 * 1024;

/// What a take is written to: a file, or in tests a disk that fills.
pub trait TakeFile: Write + Seek {
    /// Cuts the file to `len` bytes (a frame line the disk had no room to
    /// finish).
    ///
    /// # Errors
    /// The file cannot be cut.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
}

impl TakeFile for File {
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        Self::set_len(self, len)
    }
}

/// One take in progress.
pub struct Take<F: TakeFile = File> {
    path: PathBuf,
    file: F,
    frames_at: u64,
    time_at: u64,
    encoder: FrameEncoder,
    /// Bytes in the file and frames among them, as of the last write.
    written: u64,
    written_frames: u64,
    /// Frame lines not written yet, and where each ends in `pending`: a
    /// disk that fills mid-line leaves whole frames, cut there.
    pending: String,
    ends: Vec<usize>,
    last: String,
    /// A write failed: the file holds the frames up to it, counted, and
    /// takes no more.
    broken: bool,
    finished: bool,
}

impl Take {
    /// Creates `path` (refusing an existing file unless `force`) and writes
    /// the header and a rest-pose first frame, as the mocopi app does.
    pub fn create(
        path: &Path,
        force: bool,
        joints: &[Joint],
        frame_time: f64,
    ) -> anyhow::Result<Self> {
        let mut options = OpenOptions::new();
        options.write(true);
        if force {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        let file = options.open(path).with_context(|| {
            format!(
                "cannot create {}{}",
                path.display(),
                if force {
                    ""
                } else {
                    " (it may exist: --force overwrites)"
                }
            )
        })?;
        let regular = file.metadata().is_ok_and(|m| m.is_file());
        Self::start(path, file, joints, frame_time).inspect_err(|_| {
            // A header cut short (a full disk) is no take; a device
            // (`/dev/full`) is not ours to remove.
            if regular {
                let _ = std::fs::remove_file(path);
            }
        })
    }
}

impl<F: TakeFile> Take<F> {
    /// Writes the header and the rest pose to `file`, known as `path`.
    fn start(path: &Path, mut file: F, joints: &[Joint], frame_time: f64) -> anyhow::Result<Self> {
        let header = bvh::header(joints, frame_time)?;
        file.write_all(header.text.as_bytes())
            .map_err(|e| named(path, &e))?;
        let frames_at = header.frames_at as u64;
        let time_at = frames_at + (bvh::FRAMES_WIDTH + "\nFrame Time: ".len()) as u64;
        let mut take = Self {
            path: path.to_owned(),
            file,
            frames_at,
            time_at,
            encoder: FrameEncoder::new(joints),
            written: header.text.len() as u64,
            written_frames: 0,
            pending: String::new(),
            ends: Vec::with_capacity(FLUSH_EVERY),
            last: String::new(),
            broken: false,
            finished: false,
        };
        let rest: Vec<[f64; 3]> = joints.iter().map(|j| j.offset).collect();
        take.frame(&rest, &[])?;
        Ok(take)
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames in the take so far, the rest pose included.
    pub fn frames(&self) -> u64 {
        self.written_frames + self.ends.len() as u64
    }

    /// Appends one frame (positions and `[x, y, z, w]` rotations by joint index).
    ///
    /// # Errors
    /// A failed write (the take then holds the frames before it, counted,
    /// and refuses more).
    pub fn frame(&mut self, positions: &[[f64; 3]], rotations: &[[f64; 4]]) -> io::Result<()> {
        self.last = self.encoder.line(positions, rotations);
        self.push_last().map_err(|e| named(&self.path, &e))
    }

    /// Appends the last frame again (a lost frame held, so time stays right).
    ///
    /// # Errors
    /// As [`Self::frame`].
    pub fn repeat(&mut self) -> io::Result<()> {
        self.push_last().map_err(|e| named(&self.path, &e))
    }

    fn push_last(&mut self) -> io::Result<()> {
        if self.broken {
            return Err(io::Error::other("stopped after an earlier write error"));
        }
        self.pending.push_str(&self.last);
        self.ends.push(self.pending.len());
        if self.ends.len() >= FLUSH_EVERY || self.pending.len() >= FLUSH_BYTES {
            self.sync()?;
        }
        Ok(())
    }

    /// Writes out the frames so far and makes the header's count say so.
    fn sync(&mut self) -> io::Result<()> {
        if self.broken {
            return Ok(());
        }
        if !self.pending.is_empty() {
            if let Err(e) = self.file.write_all(self.pending.as_bytes()) {
                self.salvage();
                return Err(e);
            }
            self.written += self.pending.len() as u64;
            self.written_frames += self.ends.len() as u64;
            self.pending.clear();
            self.ends.clear();
        }
        self.patch_count().inspect_err(|_| self.broken = true)
    }

    fn patch_count(&mut self) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(self.frames_at))?;
        self.file
            .write_all(bvh::frames_field(self.written_frames).as_bytes())?;
        self.file.seek(SeekFrom::End(0))?;
        self.file.flush()
    }

    /// After a failed write (a full disk): keeps the whole frames that
    /// reached the file, cuts a line left half written, and counts them in
    /// the header, which is written over in place (no new space needed).
    /// Best effort: the write's own error is what the caller reports.
    fn salvage(&mut self) {
        self.broken = true;
        let Ok(on_disk) = self.file.seek(SeekFrom::End(0)) else {
            return;
        };
        let reached = on_disk.saturating_sub(self.written);
        let whole = self
            .ends
            .iter()
            .take_while(|&&end| end as u64 <= reached)
            .count();
        let kept = whole
            .checked_sub(1)
            .and_then(|i| self.ends.get(i))
            .map_or(0, |&end| end as u64);
        self.written += kept;
        self.written_frames += whole as u64;
        self.pending.clear();
        self.ends.clear();
        if on_disk > self.written {
            let _ = self.file.set_len(self.written);
        }
        let _ = self.patch_count();
    }

    /// Flushes and patches the header: the frame count, and the frame time
    /// when the sender's rate is known. A take a write error stopped is
    /// closed the same way, with the frames it holds.
    ///
    /// # Errors
    /// A failed write (the take then holds the frames before it, counted).
    pub fn finish(self, frame_time: Option<f64>) -> io::Result<(PathBuf, u64)> {
        let (path, frames, result) = self.close(frame_time);
        result.map(|()| (path, frames))
    }

    /// As [`Self::finish`], with the file and the frames it holds even when
    /// a write failed.
    pub fn close(mut self, frame_time: Option<f64>) -> (PathBuf, u64, io::Result<()>) {
        self.finished = true;
        let path = self.path.clone();
        let result = self.finish_file(frame_time).map_err(|e| named(&path, &e));
        (path, self.written_frames, result)
    }

    fn finish_file(&mut self, frame_time: Option<f64>) -> io::Result<()> {
        self.sync()?;
        // `0.016667` and `0.020000` are both eight characters: the field
        // width stays the same for any rate above 1 fps.
        if let Some(t) = frame_time.filter(|t| t.is_finite() && *t > 0.0 && *t < 1.0) {
            self.file.seek(SeekFrom::Start(self.time_at))?;
            self.file.write_all(format!("{t:.6}").as_bytes())?;
        }
        self.file.flush()
    }
}

/// A write error that names the take's file: "No space left on device" alone
/// does not say which of the outputs filled the disk.
fn named(path: &Path, e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("writing {}: {e}", path.display()))
}

impl<F: TakeFile> Drop for Take<F> {
    /// A take ended by an error (a closed pipe, a failed send) still gets
    /// its count; the frame time stays as created.
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.sync();
        }
    }
}

/// `FILE` for the first sender; `FILE` with `-IP-PORT` before its extension
/// for each further one.
pub fn path_for(base: &Path, sender: Option<SocketAddr>, first: bool) -> PathBuf {
    if first {
        return base.to_owned();
    }
    let tag = sender.map_or_else(
        || "file".to_owned(),
        |s| format!("{}-{}", s.ip(), s.port()).replace(':', "_"),
    );
    let stem = base
        .file_stem()
        .map_or_else(|| "take".into(), |s| s.to_string_lossy().into_owned());
    let name = match base.extension() {
        Some(ext) => format!("{stem}-{tag}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{tag}"),
    };
    base.with_file_name(name)
}

/// A sender with a take that sends nothing for this long loses it: the take
/// is closed (its header patched) and the slot freed for another; if the
/// sender comes back it gets a new take (a new file).
pub const TAKE_QUIET: Duration = Duration::from_secs(30);

/// Takes a run may write in all (files created): senders come and go, and
/// a take closed for quiet frees its slot for a new file.
pub const MAX_TAKES: usize = 4096;

/// How often a sender refused a take is said (with a count of the others).
const REFUSED_EVERY: Duration = Duration::from_secs(10);

/// How often open takes are checked for quiet senders.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// One sender's open take, and the tool's own state for it.
pub struct TakeSlot<T> {
    /// The tool's per-take state (a recorder, a bone index).
    pub state: T,
    /// The file.
    pub take: Take,
    /// Lost frames held, for the summary.
    pub held: u64,
    /// When the sender was last heard.
    seen: Duration,
}

/// `--bvh` takes by sender, the same in every tool that records them. A
/// sender gets a take (a slot, of [`MAX_SENDERS`](crate::senders::MAX_SENDERS), and
/// the plain `--bvh` name when it is the first) only once it has sent a
/// complete frame: a stranger's stray message takes nothing. A slot quiet
/// for [`TAKE_QUIET`] is closed and freed. A write that fails (a full disk)
/// stops every take, said once; the run goes on and [`Self::finish`]
/// returns the failure.
pub struct TakeSlots<T> {
    out: BvhOut,
    open: crate::senders::Senders<TakeSlot<T>>,
    done: Vec<TakeSummary>,
    swept: Option<Duration>,
    /// Senders with a complete frame that found no slot free, and when one
    /// was last said.
    refused: u64,
    refused_said: Option<Duration>,
    failed: Option<String>,
}

impl<T> TakeSlots<T> {
    /// Takes to be written at `out`.
    pub fn new(out: BvhOut) -> Self {
        Self {
            out,
            open: crate::senders::Senders::new(),
            done: Vec::new(),
            swept: None,
            refused: 0,
            refused_said: None,
            failed: None,
        }
    }

    /// Whether takes are still written (no write has failed).
    pub fn recording(&self) -> bool {
        self.failed.is_none()
    }

    /// `src`'s open take, heard from at `now`.
    pub fn get_mut(&mut self, src: &Option<SocketAddr>, now: Duration) -> Option<&mut TakeSlot<T>> {
        let slot = self.open.get_mut(src)?;
        slot.seen = slot.seen.max(now);
        Some(slot)
    }

    /// Opens a take for `src`, which has just sent a complete frame, or
    /// says (at a bounded rate) why there is no slot for it.
    pub fn open(
        &mut self,
        src: Option<SocketAddr>,
        now: Duration,
        joints: &[Joint],
        state: T,
        log: &Log,
        frame_time: impl Fn(&Option<SocketAddr>, &T) -> Option<f64>,
    ) -> Option<&mut TakeSlot<T>> {
        if self.failed.is_some() {
            return None;
        }
        if !self.open.admits(&src) {
            // Room may be held by senders gone quiet since the last sweep.
            self.close_quiet(now, log, &frame_time);
        }
        if !self.open.admits(&src) || self.open.len() + self.done.len() >= MAX_TAKES {
            self.refuse(src, now, log);
            return None;
        }
        let path = self.name(src);
        let take = match Take::create(&path, self.out.force, joints, 1.0 / 60.0) {
            Ok(t) => t,
            Err(e) => {
                self.fail(&e, log, &frame_time);
                return None;
            }
        };
        log.info(format_args!(
            "recording a BVH take{} ({} joints) to {}",
            src.map_or_else(String::new, |s| format!(" of {s}")),
            joints.len(),
            take.path().display()
        ));
        self.open.try_insert_with(&src, || TakeSlot {
            state,
            take,
            held: 0,
            seen: now,
        })
    }

    /// The plain name for the first take; then the sender's address in it,
    /// and a number after that for a sender's later takes, or when a file
    /// of that name exists (without `--force`): an old file is no reason to
    /// stop recording.
    fn name(&self, src: Option<SocketAddr>) -> PathBuf {
        let first = self.open.is_empty() && self.done.is_empty();
        let base = path_for(&self.out.path, src, first);
        let used = |p: &Path| {
            self.done.iter().any(|d| d.path == p)
                || self.open.values().any(|t| t.take.path() == p)
                || (!self.out.force && p.exists())
        };
        if !used(&base) {
            return base;
        }
        (2..=MAX_TAKES)
            .map(|n| numbered(&base, n))
            .find(|p| !used(p))
            .unwrap_or(base)
    }

    fn refuse(&mut self, src: Option<SocketAddr>, now: Duration, log: &Log) {
        self.refused += 1;
        if self
            .refused_said
            .is_some_and(|at| now.saturating_sub(at) < REFUSED_EVERY)
        {
            return;
        }
        self.refused_said = Some(now);
        log.always(format_args!(
            "no BVH take for {}: {} takes open (a take refused {} times so far); \
             a take is freed after {} s without frames; name the performer with --allow",
            src.map_or_else(|| "-".to_owned(), |s| s.to_string()),
            self.open.len(),
            self.refused,
            TAKE_QUIET.as_secs()
        ));
    }

    /// A write error (`src`'s take, or creating one): every take is closed
    /// with what it holds, said once.
    pub fn fail(
        &mut self,
        e: &dyn std::fmt::Display,
        log: &Log,
        frame_time: &impl Fn(&Option<SocketAddr>, &T) -> Option<f64>,
    ) {
        if self.failed.is_some() {
            return;
        }
        let what = format!("{e:#}");
        log.always(format_args!(
            "error: {what}: BVH RECORDING STOPPED, every take closed with the frames it holds \
             (the run goes on; exit status 1 at the end)"
        ));
        self.failed = Some(what);
        let open = std::mem::take(&mut self.open);
        for (src, slot) in open.into_entries() {
            self.close(src, slot, log, frame_time);
        }
    }

    /// Runs `write` on `src`'s take; a failure stops every take.
    pub fn write(
        &mut self,
        src: &Option<SocketAddr>,
        log: &Log,
        frame_time: impl Fn(&Option<SocketAddr>, &T) -> Option<f64>,
        write: impl FnOnce(&mut TakeSlot<T>) -> io::Result<()>,
    ) {
        let Some(slot) = self.open.get_mut(src) else {
            return;
        };
        if let Err(e) = write(slot) {
            self.fail(&e, log, &frame_time);
        }
    }

    /// Closes the takes of senders quiet for [`TAKE_QUIET`] (checked at
    /// most once a second of `now`).
    pub fn sweep(
        &mut self,
        now: Duration,
        log: &Log,
        frame_time: impl Fn(&Option<SocketAddr>, &T) -> Option<f64>,
    ) {
        if self
            .swept
            .is_some_and(|at| now.saturating_sub(at) < SWEEP_EVERY)
        {
            return;
        }
        self.close_quiet(now, log, &frame_time);
    }

    fn close_quiet(
        &mut self,
        now: Duration,
        log: &Log,
        frame_time: &impl Fn(&Option<SocketAddr>, &T) -> Option<f64>,
    ) {
        self.swept = Some(now);
        let quiet: Vec<Option<SocketAddr>> = self
            .open
            .iter()
            .filter(|(_, t)| now.saturating_sub(t.seen) >= TAKE_QUIET)
            .map(|(k, _)| *k)
            .collect();
        for src in quiet {
            if let Some(slot) = self.open.remove(&src) {
                log.info(format_args!(
                    "{} sent nothing for {} s: its BVH take is closed",
                    src.map_or_else(|| "the input".to_owned(), |s| s.to_string()),
                    TAKE_QUIET.as_secs()
                ));
                self.close(src, slot, log, frame_time);
            }
        }
    }

    fn close(
        &mut self,
        src: Option<SocketAddr>,
        slot: TakeSlot<T>,
        log: &Log,
        frame_time: &impl Fn(&Option<SocketAddr>, &T) -> Option<f64>,
    ) {
        let ft = frame_time(&src, &slot.state);
        let (path, frames, result) = slot.take.close(ft);
        if let Err(e) = result {
            self.fail(&e, log, frame_time);
        }
        log.always(format_args!(
            "BVH take: {frames} frames{} in {}",
            if slot.held > 0 {
                format!(" ({} lost frames held)", slot.held)
            } else {
                String::new()
            },
            path.display()
        ));
        self.done.push(TakeSummary {
            src,
            path,
            frames,
            held: slot.held,
        });
    }

    /// Closes every take (its frame time from `frame_time`) and hands back
    /// the summaries, and the failure (for exit status 1) if a write failed.
    pub fn finish(
        mut self,
        log: &Log,
        frame_time: impl Fn(&Option<SocketAddr>, &T) -> Option<f64>,
    ) -> (Vec<TakeSummary>, anyhow::Result<()>) {
        let open = std::mem::take(&mut self.open);
        for (src, slot) in open.into_entries() {
            self.close(src, slot, log, &frame_time);
        }
        let result = match self.failed {
            Some(what) => Err(anyhow::anyhow!("the BVH recording stopped early: {what}")),
            None => Ok(()),
        };
        (self.done, result)
    }
}

/// `base` with `-n` before its extension.
fn numbered(base: &Path, n: usize) -> PathBuf {
    let stem = base
        .file_stem()
        .map_or_else(|| "take".into(), |s| s.to_string_lossy().into_owned());
    let name = match base.extension() {
        Some(ext) => format!("{stem}-{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}-{n}"),
    };
    base.with_file_name(name)
}

/// `--bvh` for VMC streams: one take per sender (vmc-relay) or of the mix
/// (vmc-average), each begun at a frame with `Hips` that a frame end
/// (`/VMC/Ext/OK`, `T`) completed.
pub struct VmcTakes {
    slots: TakeSlots<Recorder>,
    /// Senders of bones without a take yet, until they complete a frame;
    /// bounded by evicting the one heard from least recently.
    pending: crate::senders::Senders<Recorder>,
    positions: Vec<[f64; 3]>,
    rotations: Vec<[f64; 4]>,
}

fn vmc_frame_time(_: &Option<SocketAddr>, r: &Recorder) -> Option<f64> {
    r.frame_time()
}

impl VmcTakes {
    /// Takes to be written at `out` (one per sender).
    pub fn new(out: BvhOut) -> Self {
        Self {
            slots: TakeSlots::new(out),
            pending: crate::senders::Senders::new(),
            positions: Vec::new(),
            rotations: Vec::new(),
        }
    }

    /// One message from `src` that arrived at `now` (any origin, the same
    /// for every call).
    pub fn push(&mut self, src: Option<SocketAddr>, m: &vmc::Message, now: Duration, log: &Log) {
        // Only bones start a sender's recorder: other messages alone never
        // make a frame, so they cost nothing here.
        let bones = matches!(
            m,
            vmc::Message::BonePos { .. } | vmc::Message::RootPos { .. }
        );
        self.record(src, now, log, bones, |r| r.handle_message(now, m));
    }

    /// One whole frame (a mix) that was made at `now`.
    pub fn push_frame(&mut self, frame: &[vmc::Message], now: Duration, log: &Log) {
        self.record(None, now, log, true, |r| r.handle_frame(now, frame));
    }

    fn record(
        &mut self,
        src: Option<SocketAddr>,
        now: Duration,
        log: &Log,
        starts: bool,
        feed: impl FnOnce(&mut Recorder),
    ) {
        if !self.slots.recording() {
            return;
        }
        self.slots.sweep(now, log, vmc_frame_time);
        if let Some(slot) = self.slots.get_mut(&src, now) {
            feed(&mut slot.state);
            if slot
                .state
                .poll_frame(&mut self.positions, &mut self.rotations)
            {
                let (p, r) = (&self.positions, &self.rotations);
                self.slots
                    .write(&src, log, vmc_frame_time, |t| t.take.frame(p, r));
            }
            return;
        }
        let recorder = if starts {
            self.pending.get_or_insert_with(&src, Recorder::new)
        } else {
            match self.pending.get_mut(&src) {
                Some(r) => r,
                None => return,
            }
        };
        feed(recorder);
        if !recorder.poll_frame(&mut self.positions, &mut self.rotations) {
            return;
        }
        // A complete frame: the sender may have a take. Without a free
        // slot it stays pending and asks again at its next frame.
        let joints = recorder.joints().unwrap_or_default();
        let Some(recorder) = self.pending.remove(&src) else {
            return;
        };
        let slots = &mut self.slots;
        let opened = slots
            .open(src, now, &joints, recorder, log, vmc_frame_time)
            .is_some();
        if opened {
            let (p, r) = (&self.positions, &self.rotations);
            slots.write(&src, log, vmc_frame_time, |t| t.take.frame(p, r));
        }
    }

    /// Closes every take (frame time measured over the take); the failure,
    /// if a write failed, to return after the summary.
    pub fn finish(self, log: &Log) -> (Vec<TakeSummary>, anyhow::Result<()>) {
        // One line however many senders: strangers are among them.
        let (senders, skipped) = self
            .pending
            .values()
            .filter(|r| r.frames() == 0 && r.skipped() > 0)
            .fold((0u64, 0u64), |(n, k), r| (n + 1, k + r.skipped()));
        if senders > 0 {
            log.always(format_args!(
                "no BVH take for {}: {skipped} frames, none with Hips",
                plural(senders, "sender", "senders")
            ));
        }
        self.slots.finish(log, vmc_frame_time)
    }
}

/// A finished take, for the summary.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TakeSummary {
    /// The sender (none for a text file or a mix).
    pub src: Option<SocketAddr>,
    /// The file.
    pub path: PathBuf,
    /// Frames written, the rest-pose frame included.
    pub frames: u64,
    /// Lost frames held.
    pub held: u64,
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mocap-cli-take-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        let _ = std::fs::remove_file(&p);
        p
    }

    fn joints() -> Vec<Joint> {
        vec![
            Joint {
                name: "Hips".into(),
                parent: None,
                offset: [0.0, 90.0, 0.0],
            },
            Joint {
                name: "Spine".into(),
                parent: Some(0),
                offset: [0.0, 10.0, 0.0],
            },
        ]
    }

    fn read(path: &Path) -> bvh::Bvh {
        bvh::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn a_finished_take_declares_its_frames_and_the_measured_frame_time() {
        let p = scratch("finished.bvh");
        let mut t = Take::create(&p, false, &joints(), 1.0 / 60.0).unwrap();
        let pos = [[1.0, 90.0, 2.0], [0.0, 10.0, 0.0]];
        let rot = [[0.0, 0.0, 0.0, 1.0]; 2];
        t.frame(&pos, &rot).unwrap();
        t.repeat().unwrap();
        let (path, frames) = t.finish(Some(0.02)).unwrap();
        assert_eq!((path.as_path(), frames), (p.as_path(), 3), "rest pose + 2");
        let b = read(&p);
        assert_eq!(b.frames_declared, 3);
        assert_eq!(b.frames.len(), 3);
        assert!((b.frame_time - 0.02).abs() < 1e-9, "{}", b.frame_time);
        // The held frame repeats the one before it; the first is the rest pose.
        assert_eq!(b.frames[1], b.frames[2]);
        assert_eq!(&b.frames[1][..3], &[1.0, 90.0, 2.0]);
        assert_eq!(&b.frames[0][..3], &[0.0, 90.0, 0.0]);
    }

    #[test]
    fn an_absurd_frame_time_keeps_the_one_it_was_created_with() {
        let p = scratch("absurd.bvh");
        let t = Take::create(&p, false, &joints(), 1.0 / 60.0).unwrap();
        t.finish(Some(f64::INFINITY)).unwrap();
        assert!((read(&p).frame_time - 1.0 / 60.0).abs() < 1e-6);
    }

    #[test]
    fn a_take_dropped_unfinished_or_killed_after_a_flush_still_loads() {
        let p = scratch("dropped.bvh");
        let mut t = Take::create(&p, false, &joints(), 1.0 / 60.0).unwrap();
        // The rest pose, then frames to the flush and one past it.
        for _ in 0..FLUSH_EVERY {
            t.repeat().unwrap();
        }
        // Flushed and patched every FLUSH_EVERY frames, before any finish:
        // what a SIGKILL would leave (the frame past the flush not yet).
        let b = read(&p);
        assert_eq!(b.frames_declared, FLUSH_EVERY as u64);
        assert_eq!(b.frames.len(), FLUSH_EVERY);
        t.repeat().unwrap();
        drop(t);
        let b = read(&p);
        assert_eq!(b.frames_declared, FLUSH_EVERY as u64 + 2);
        assert_eq!(b.frames.len(), FLUSH_EVERY + 2);
    }

    /// A disk with room for `room` bytes: a write past it is cut short and
    /// the next fails, as on a full disk; writing over bytes it holds works.
    struct Disk {
        data: std::rc::Rc<std::cell::RefCell<Vec<u8>>>,
        pos: usize,
        room: usize,
    }

    impl Write for Disk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let mut data = self.data.borrow_mut();
            let n = buf.len().min(self.room.saturating_sub(self.pos));
            if n == 0 && !buf.is_empty() {
                return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
            }
            let end = self.pos + n;
            if data.len() < end {
                data.resize(end, 0);
            }
            data[self.pos..end].copy_from_slice(&buf[..n]);
            self.pos = end;
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Seek for Disk {
        fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
            let len = self.data.borrow().len() as u64;
            self.pos = match to {
                SeekFrom::Start(n) => n,
                SeekFrom::End(d) => len.saturating_add_signed(d),
                SeekFrom::Current(d) => (self.pos as u64).saturating_add_signed(d),
            } as usize;
            Ok(self.pos as u64)
        }
    }

    impl TakeFile for Disk {
        fn set_len(&mut self, len: u64) -> io::Result<()> {
            self.data.borrow_mut().resize(len as usize, 0);
            Ok(())
        }
    }

    /// The disk fills mid-line between two flushes (the held-out run: 15
    /// frames written, `Frames: 0`): the take keeps the whole frames, cuts
    /// the half line, counts them in its header, refuses more, and still
    /// closes with its frame time.
    #[test]
    fn a_disk_that_fills_leaves_whole_frames_counted() {
        let data = std::rc::Rc::default();
        let header = bvh::header(&joints(), 1.0 / 60.0).unwrap().text.len();
        let mut encoder = FrameEncoder::new(&joints());
        let rest = encoder
            .line(&[[0.0, 90.0, 0.0], [0.0, 10.0, 0.0]], &[])
            .len();
        let line = encoder
            .line(
                &[[1.0, 90.0, 2.0], [0.0, 10.0, 0.0]],
                &[[0.0, 0.0, 0.0, 1.0]; 2],
            )
            .len();
        // Room for the header, the rest pose and 14 and a half frame lines.
        let disk = Disk {
            data: std::rc::Rc::clone(&data),
            pos: 0,
            room: header + rest + 14 * line + line / 2,
        };
        let mut t = Take::start(Path::new("full.bvh"), disk, &joints(), 1.0 / 60.0).unwrap();
        let pos = [[1.0, 90.0, 2.0], [0.0, 10.0, 0.0]];
        let rot = [[0.0, 0.0, 0.0, 1.0]; 2];
        let mut failed = None;
        for i in 0..FLUSH_EVERY {
            if let Err(e) = t.frame(&pos, &rot) {
                failed = Some((i, e));
                break;
            }
        }
        let (i, e) = failed.expect("the disk fills at the first flush");
        assert_eq!(i, FLUSH_EVERY - 2, "the rest pose and 58 frames pending");
        assert!(e.to_string().starts_with("writing full.bvh: "), "{e}");
        let text = String::from_utf8(data.borrow().clone()).unwrap();
        let b = bvh::parse(&text).unwrap();
        assert!(text.ends_with('\n'), "no half line");
        assert_eq!(b.frames.len(), 15);
        assert_eq!(b.frames_declared, 15);
        assert!(t.frame(&pos, &rot).is_err(), "nothing after the error");
        let (_, frames) = t.finish(Some(0.02)).unwrap();
        assert_eq!(frames, 15);
        let b = bvh::parse(&String::from_utf8(data.borrow().clone()).unwrap()).unwrap();
        assert_eq!((b.frames_declared, b.frames.len()), (15, 15));
        assert!((b.frame_time - 0.02).abs() < 1e-9);
    }

    /// A full disk from the start: no take and no file left behind.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_take_on_a_full_disk_fails_at_once_and_names_it() {
        let e = Take::create(Path::new("/dev/full"), true, &joints(), 0.1)
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("writing /dev/full: "), "{e:#}");
        assert!(Path::new("/dev/full").exists(), "a device is not removed");
    }

    /// Long frame lines are written out by size, not held for a second of
    /// frames: what a take holds in memory stays under FLUSH_BYTES and a line.
    #[test]
    fn long_lines_are_flushed_by_size() {
        let p = scratch("long.bvh");
        let many: Vec<Joint> = (0..1000usize)
            .map(|i| Joint {
                name: format!("bone_{i}"),
                parent: i.checked_sub(1),
                offset: [1.0, 2.0, 3.0],
            })
            .collect();
        let mut t = Take::create(&p, false, &many, 1.0 / 60.0).unwrap();
        let pos = vec![[123.456, 234.567, 345.678]; 1000];
        let rot = vec![[0.1, 0.2, 0.3, 0.9]; 1000];
        for _ in 0..3 {
            t.frame(&pos, &rot).unwrap();
        }
        assert!(t.pending.len() < FLUSH_BYTES, "{}", t.pending.len());
        let b = read(&p);
        assert!(
            b.frames_declared >= 1,
            "written before {FLUSH_EVERY} frames"
        );
        assert_eq!(b.frames_declared, b.frames.len() as u64);
        t.finish(None).unwrap();
        assert_eq!(read(&p).frames_declared, 4);
    }

    #[test]
    fn an_existing_file_is_kept_unless_forced() {
        let p = scratch("exists.bvh");
        std::fs::write(&p, "mine").unwrap();
        let out = BvhOut {
            path: p.clone(),
            force: false,
        };
        let e = out.check().unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e}");
        assert!(Take::create(&p, false, &joints(), 0.1).is_err());
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "mine");
        BvhOut { force: true, ..out }.check().unwrap();
        Take::create(&p, true, &joints(), 0.1)
            .unwrap()
            .finish(None)
            .unwrap();
        assert_eq!(read(&p).frames_declared, 1);
    }

    fn log() -> Log {
        Log::new("test", true, false)
    }

    fn sender(i: u32) -> Option<SocketAddr> {
        Some(SocketAddr::from(([10, 0, (i >> 8) as u8, i as u8], 5000)))
    }

    /// A frame of `Hips` ended by `/VMC/Ext/OK` and `T`.
    fn vmc_frame(k: u32) -> Vec<vmc::Message> {
        vec![
            vmc::Message::BonePos {
                name: "Hips".into(),
                pos: [0.0, 0.9, 0.0],
                rot: [0.0, 0.0, 0.0, 1.0],
            },
            vmc::Message::Available {
                loaded: 1,
                calibration: None,
                tracking: None,
            },
            vmc::Message::Time(k as f32 / 60.0),
        ]
    }

    fn send(takes: &mut VmcTakes, src: Option<SocketAddr>, ms: &[vmc::Message], now: Duration) {
        for m in ms {
            takes.push(src, m, now, &log());
        }
    }

    fn scratch_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mocap-cli-slots-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// 300 strangers each sending a blendshape and Apply, then 300 more
    /// each sending a bone with no frame end: no file, no slot taken; the
    /// performer's first complete frame gets the plain name.
    #[test]
    fn strangers_without_a_complete_frame_take_no_slot_and_no_name() {
        let dir = scratch_dir("strangers");
        let path = dir.join("take.bvh");
        let mut takes = VmcTakes::new(BvhOut {
            path: path.clone(),
            force: false,
        });
        let t0 = Duration::from_secs(1);
        for i in 0..300 {
            let blend = [
                vmc::Message::BlendVal {
                    name: "Joy".into(),
                    value: 1.0,
                },
                vmc::Message::BlendApply,
            ];
            send(&mut takes, sender(i), &blend, t0);
            send(&mut takes, sender(1000 + i), &vmc_frame(0)[..1], t0);
        }
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no file yet");
        let performer = Some(SocketAddr::from(([192, 168, 1, 5], 39539)));
        for k in 0..10 {
            send(
                &mut takes,
                performer,
                &vmc_frame(k),
                t0 + Duration::from_millis(17 * u64::from(k)),
            );
        }
        let (done, failed) = takes.finish(&log());
        failed.unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(
            (done[0].src, done[0].path.as_path()),
            (performer, path.as_path())
        );
        // The rest pose and frames 1..=9 (frame 0 shows where frames end).
        assert_eq!(read(&path).frames_declared, 10);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    }

    /// Every slot held by senders that sent complete frames: the performer
    /// waits (refused, said at a bounded rate); once they are quiet for
    /// TAKE_QUIET their takes are closed with the right header and freed,
    /// and the performer gets one.
    #[test]
    fn quiet_slots_are_closed_and_freed() {
        let dir = scratch_dir("quiet");
        let path = dir.join("take.bvh");
        let mut takes = VmcTakes::new(BvhOut {
            path: path.clone(),
            force: false,
        });
        let at = |ms: u64| Duration::from_millis(ms);
        for i in 0..crate::senders::MAX_SENDERS as u32 {
            for k in 0..3 {
                send(
                    &mut takes,
                    sender(i),
                    &vmc_frame(k),
                    at(1000 + 17 * u64::from(k)),
                );
            }
        }
        let performer = Some(SocketAddr::from(([192, 168, 1, 5], 39539)));
        let mut k = 0;
        let mut ms = 2000;
        while ms < 2000 + TAKE_QUIET.as_millis() as u64 + 2000 {
            send(&mut takes, performer, &vmc_frame(k), at(ms));
            k += 1;
            ms += 50;
        }
        let (done, failed) = takes.finish(&log());
        failed.unwrap();
        assert_eq!(done.len(), crate::senders::MAX_SENDERS + 1);
        let first = &done.iter().find(|d| d.path == path).unwrap();
        assert_eq!(first.src, sender(0));
        let b = read(&path);
        assert_eq!((b.frames_declared, b.frames.len()), (3, 3));
        // Measured over the take (arrivals 17 ms apart), not left at 1/60.
        assert!((b.frame_time - 0.017).abs() < 1e-6, "{}", b.frame_time);
        let mine = done.iter().find(|d| d.src == performer).unwrap();
        // Its take began once the others had been quiet for TAKE_QUIET.
        let b = read(&mine.path);
        assert_eq!(b.frames_declared, mine.frames);
        assert_eq!(b.frames.len() as u64, mine.frames);
        // Its last ~3 s at 20 fps (the others were last heard at ~1.03 s).
        assert!((55..=61).contains(&mine.frames), "{}", mine.frames);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A sender whose take was closed for quiet and who comes back gets a
    /// new file, not the old one overwritten.
    #[test]
    fn a_sender_back_after_quiet_gets_a_new_file() {
        let dir = scratch_dir("back");
        let path = dir.join("take.bvh");
        let mut takes = VmcTakes::new(BvhOut {
            path: path.clone(),
            force: true,
        });
        let a = sender(1);
        for round in 0..3u64 {
            for k in 0..4 {
                let now =
                    Duration::from_secs(100 * round) + Duration::from_millis(17 * u64::from(k));
                send(&mut takes, a, &vmc_frame(k), now);
            }
        }
        let (done, failed) = takes.finish(&log());
        failed.unwrap();
        let paths: Vec<PathBuf> = done.iter().map(|d| d.path.clone()).collect();
        assert_eq!(
            paths,
            [
                path.clone(),
                dir.join("take-10.0.0.1-5000.bvh"),
                dir.join("take-10.0.0.1-5000-2.bvh")
            ]
        );
        for p in &paths {
            // The rest pose and frames 1..=3 (frame 0 shows where frames end).
            assert_eq!(read(p).frames_declared, 4, "{}", p.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file left by an earlier run under a further sender's name is kept
    /// (no --force), and the take goes to the next free name instead of
    /// stopping the recording.
    #[test]
    fn an_old_file_under_a_senders_name_is_kept_and_the_take_numbered() {
        let dir = scratch_dir("old");
        let path = dir.join("take.bvh");
        let old = dir.join("take-10.0.0.1-5000.bvh");
        std::fs::write(&old, "yesterday").unwrap();
        let mut takes = VmcTakes::new(BvhOut {
            path: path.clone(),
            force: false,
        });
        for k in 0..3 {
            let now = Duration::from_millis(17 * u64::from(k));
            send(&mut takes, sender(0), &vmc_frame(k), now);
            send(&mut takes, sender(1), &vmc_frame(k), now);
        }
        let (done, failed) = takes.finish(&log());
        failed.unwrap();
        let mut paths: Vec<PathBuf> = done.iter().map(|d| d.path.clone()).collect();
        paths.sort();
        assert_eq!(paths, [dir.join("take-10.0.0.1-5000-2.bvh"), path]);
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "yesterday");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn further_senders_get_their_address_in_the_name() {
        let base = Path::new("dir/take.bvh");
        let v4: SocketAddr = "192.168.1.5:39539".parse().unwrap();
        let v6: SocketAddr = "[::1]:5000".parse().unwrap();
        assert_eq!(path_for(base, Some(v4), true), base);
        assert_eq!(
            path_for(base, Some(v4), false),
            Path::new("dir/take-192.168.1.5-39539.bvh")
        );
        // No colon in a Windows file name.
        assert_eq!(
            path_for(base, Some(v6), false),
            Path::new("dir/take-__1-5000.bvh")
        );
        assert_eq!(
            path_for(Path::new("take"), None, false),
            Path::new("take-file")
        );
    }
}
