//! `--bvh FILE`: a take written as BVH while the tool runs ([`mocap_core::bvh`]
//! makes the text; this file owns the file). Safe by construction: an
//! existing file is kept unless `--force`; the header's `Frames:` count (and
//! `Frame Time:`) is patched in place when the take ends (count, duration,
//! Ctrl-C, a closed pipe, an error: a take dropped unfinished patches its
//! count too). Every second of frames the lines written so far are flushed
//! and the count patched to match, so a take killed with SIGKILL loads in
//! any reader up to its last flush (at most a second of frames lost).

use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context as _;

use super::{Log, UsageError};
use mocap_core::bvh::{self, FrameEncoder, Joint};
use mocap_core::vmc::{self, humanoid::Recorder};

/// `--bvh FILE` and `--force`, the same in every tool that records takes.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct BvhArgs {
    /// Record the take as BVH (Z-X-Y Euler degrees, centimetres); a further
    /// sender goes to FILE with its address in the name. The header's frame
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
        if self.ends.len() >= FLUSH_EVERY {
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
    pub fn finish(mut self, frame_time: Option<f64>) -> io::Result<(PathBuf, u64)> {
        self.finished = true;
        let path = self.path.clone();
        self.finish_file(frame_time).map_err(|e| named(&path, &e))?;
        Ok((path, self.written_frames))
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

/// `--bvh` for VMC streams: one take per sender (vmc-relay) or of the mix
/// (vmc-average), each started at its first frame with `Hips`.
pub struct VmcTakes {
    out: BvhOut,
    takes: super::Senders<VmcTake>,
    /// Takes begun (the first gets FILE itself).
    started: usize,
    positions: Vec<[f64; 3]>,
    rotations: Vec<[f64; 4]>,
}

struct VmcTake {
    recorder: Recorder,
    take: Option<Take>,
}

/// Says (even under `--quiet`) that the sender bound is reached: `src` and
/// later new senders get no BVH take. Tools say it once.
pub fn log_no_take(log: &Log, src: Option<SocketAddr>) {
    log.always(format_args!(
        "{} senders recorded already: no BVH take for {} or later new senders",
        super::MAX_SENDERS,
        src.map_or_else(|| "-".to_owned(), |s| s.to_string())
    ));
}

impl VmcTakes {
    /// Takes to be written at `out` (one per sender).
    pub fn new(out: BvhOut) -> Self {
        Self {
            out,
            takes: super::Senders::new(),
            started: 0,
            positions: Vec::new(),
            rotations: Vec::new(),
        }
    }

    /// One message from `src` that arrived at `now` (any origin, the same
    /// for every call).
    pub fn push(
        &mut self,
        src: Option<SocketAddr>,
        m: &vmc::Message,
        now: Duration,
        log: &Log,
    ) -> anyhow::Result<()> {
        self.record(src, log, |r| r.handle_message(m, now))
    }

    /// One whole frame (a mix) that was made at `now`.
    pub fn push_frame(
        &mut self,
        frame: &[vmc::Message],
        now: Duration,
        log: &Log,
    ) -> anyhow::Result<()> {
        self.record(None, log, |r| r.handle_frame(frame, now))
    }

    fn record(
        &mut self,
        src: Option<SocketAddr>,
        log: &Log,
        feed: impl FnOnce(&mut Recorder) -> bool,
    ) -> anyhow::Result<()> {
        // A new sender past the bound gets no take (and no file).
        let refused = self.takes.overflow();
        let Some(t) = self.takes.try_insert_with(&src, || VmcTake {
            recorder: Recorder::new(),
            take: None,
        }) else {
            if refused == 0 {
                log_no_take(log, src);
            }
            return Ok(());
        };
        if !feed(&mut t.recorder) {
            return Ok(());
        }
        let take = match &mut t.take {
            Some(take) => take,
            None => {
                let joints = t.recorder.joints().unwrap_or_default();
                let path = path_for(&self.out.path, src, self.started == 0);
                let take = Take::create(&path, self.out.force, &joints, 1.0 / 60.0)?;
                self.started += 1;
                log.info(format_args!(
                    "recording a BVH take{} ({} joints) to {}",
                    src.map_or_else(String::new, |s| format!(" of {s}")),
                    joints.len(),
                    take.path().display()
                ));
                t.take.insert(take)
            }
        };
        if t.recorder.frame(&mut self.positions, &mut self.rotations) {
            take.frame(&self.positions, &self.rotations)?;
        }
        Ok(())
    }

    /// Patches and closes every take (frame time measured over the take).
    pub fn finish(self, log: &Log) -> anyhow::Result<Vec<TakeSummary>> {
        let mut done = Vec::new();
        for (src, t) in self.takes.into_entries() {
            let Some(take) = t.take else {
                if t.recorder.skipped() > 0 {
                    log.always(format_args!(
                        "no BVH take{}: {} frames, none with Hips",
                        src.map_or_else(String::new, |s| format!(" of {s}")),
                        t.recorder.skipped()
                    ));
                }
                continue;
            };
            let (path, frames) = take.finish(t.recorder.frame_time())?;
            log.always(format_args!(
                "BVH take: {frames} frames in {}",
                path.display()
            ));
            done.push(TakeSummary {
                src,
                path,
                frames,
                held: 0,
            });
        }
        Ok(done)
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
