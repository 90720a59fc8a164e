//! `--bvh FILE`: a take written as BVH while the tool runs ([`crate::bvh`]
//! makes the text; this file owns the file). Safe by construction: an
//! existing file is kept unless `--force`; the header's `Frames:` count (and
//! `Frame Time:`) is patched in place when the take ends (count, duration,
//! Ctrl-C, a closed pipe); lines go out whole and are flushed every second of
//! frames, so a take killed with SIGKILL keeps its lines up to the last
//! flush (its header then still says 0 frames).

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::bvh::{self, FrameEncoder, Joint};

/// Frames between flushes (one second at 60 fps).
const FLUSH_EVERY: u32 = 60;

/// One take in progress.
pub(crate) struct Take {
    path: PathBuf,
    file: BufWriter<File>,
    frames_at: u64,
    time_at: u64,
    encoder: FrameEncoder,
    frames: u64,
    unflushed: u32,
    last: String,
}

impl Take {
    /// Creates `path` (refusing an existing file unless `force`) and writes
    /// the header and a rest-pose first frame, as the mocopi app does.
    pub(crate) fn create(
        path: &Path,
        force: bool,
        joints: &[Joint],
        frame_time: f64,
    ) -> anyhow::Result<Self> {
        let header = bvh::header(joints, frame_time)?;
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
        let mut file = BufWriter::new(file);
        file.write_all(header.text.as_bytes())?;
        let frames_at = header.frames_at as u64;
        let time_at = frames_at + (bvh::FRAMES_WIDTH + "\nFrame Time: ".len()) as u64;
        let mut take = Self {
            path: path.to_owned(),
            file,
            frames_at,
            time_at,
            encoder: FrameEncoder::new(joints),
            frames: 0,
            unflushed: 0,
            last: String::new(),
        };
        let rest: Vec<[f64; 3]> = joints.iter().map(|j| j.offset).collect();
        take.frame(&rest, &[])?;
        Ok(take)
    }

    /// The file being written.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one frame (positions and `[x, y, z, w]` rotations by joint index).
    pub(crate) fn frame(
        &mut self,
        positions: &[[f64; 3]],
        rotations: &[[f64; 4]],
    ) -> io::Result<()> {
        self.last = self.encoder.line(positions, rotations);
        self.push_last()
    }

    /// Appends the last frame again (a lost frame held, so time stays right).
    pub(crate) fn repeat(&mut self) -> io::Result<()> {
        self.push_last()
    }

    fn push_last(&mut self) -> io::Result<()> {
        self.file.write_all(self.last.as_bytes())?;
        self.frames += 1;
        self.unflushed += 1;
        if self.unflushed >= FLUSH_EVERY {
            self.file.flush()?;
            self.unflushed = 0;
        }
        Ok(())
    }

    /// Flushes and patches the header: the frame count, and the frame time
    /// when the sender's rate is known.
    pub(crate) fn finish(mut self, frame_time: Option<f64>) -> io::Result<(PathBuf, u64)> {
        self.file.flush()?;
        let file = self.file.get_mut();
        file.seek(SeekFrom::Start(self.frames_at))?;
        file.write_all(bvh::frames_field(self.frames).as_bytes())?;
        // `0.016667` and `0.020000` are both eight characters: the field
        // width stays the same for any rate above 1 fps.
        if let Some(t) = frame_time.filter(|t| t.is_finite() && *t > 0.0 && *t < 1.0) {
            file.seek(SeekFrom::Start(self.time_at))?;
            file.write_all(format!("{t:.6}").as_bytes())?;
        }
        file.flush()?;
        Ok((self.path, self.frames))
    }
}

/// `FILE` for the first sender; `FILE` with `-IP-PORT` before its extension
/// for each further one.
pub(crate) fn path_for(base: &Path, sender: Option<std::net::SocketAddr>, first: bool) -> PathBuf {
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
