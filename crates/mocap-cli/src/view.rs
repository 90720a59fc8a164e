//! Per-frame human views on a terminal ([`FrameView`]): a person cannot read
//! 60 bone tables a second, and a terminal that scrolls them costs more CPU
//! than the decoding. On a terminal at most [`TERMINAL_FPS`] frames a second
//! are shown, always the newest (the ones in between are dropped, the last
//! one is shown when the stream pauses or ends); into a pipe or a file every
//! frame is written, byte for byte as without the view.

use std::io::{self, IsTerminal as _};
use std::time::Duration;

use crate::output::{Log, Output};

/// Frames a second a terminal is shown at most: enough to watch values move,
/// few enough to read them.
pub const TERMINAL_FPS: u32 = 4;

/// Most text one frame may hold before it is closed anyway: a sender that
/// never marks the end of its frames must not grow the buffer without end.
pub const MAX_FRAME_TEXT: usize = 256 * 1024;

/// `--every-frame`, the same flag in every tool with a per-frame view.
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct ViewArgs {
    /// On a terminal too, print every frame (by default a terminal is shown
    /// at most 4 frames a second, the newest; a pipe or file gets every one).
    #[arg(long)]
    pub every_frame: bool,
}

/// When a frame may be shown: at most one per period, on the caller's clock
/// (any origin, the same for every call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pace {
    every: Duration,
    next: Option<Duration>,
}

impl Pace {
    /// At most one frame per `every`.
    #[must_use]
    pub fn new(every: Duration) -> Self {
        Self { every, next: None }
    }

    /// At most `fps` frames a second (0 means 1).
    #[must_use]
    pub fn per_second(fps: u32) -> Self {
        Self::new(Duration::from_secs(1) / fps.max(1))
    }

    /// Whether a frame may be shown at `now`; if so its slot is taken and the
    /// next opens one period later.
    pub fn try_show(&mut self, now: Duration) -> bool {
        if self.next.is_some_and(|next| now < next) {
            return false;
        }
        // Past the end of time (a clock that cannot advance): never again.
        self.next = Some(now.checked_add(self.every).unwrap_or(Duration::MAX));
        true
    }

    /// When the next slot opens (`None`: now).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Duration> {
        self.next
    }
}

/// One frame's text is built in [`FrameView::frame`], then
/// [`FrameView::end_frame`] writes it, or holds it as the newest until its
/// slot comes ([`FrameView::tick`]).
#[derive(Debug)]
pub struct FrameView {
    /// `None`: every frame is written.
    pace: Option<Pace>,
    frame: String,
    held: String,
    holding: bool,
    dropped: u64,
    told: bool,
}

impl FrameView {
    /// A view that writes every frame (`pace` `None`) or paces them.
    #[must_use]
    pub fn new(pace: Option<Pace>) -> Self {
        Self {
            pace,
            frame: String::new(),
            held: String::new(),
            holding: false,
            dropped: 0,
            told: false,
        }
    }

    /// The view of a tool's stdout: paced when stdout is a terminal and the
    /// input is live (a file read at full speed is read to be seen whole),
    /// unless `--every-frame`.
    #[must_use]
    pub fn for_stdout(args: ViewArgs, live: bool) -> Self {
        let paced = live && !args.every_frame && io::stdout().is_terminal();
        Self::new(paced.then(|| Pace::per_second(TERMINAL_FPS)))
    }

    /// Whether frames are paced (stdout is a terminal).
    #[must_use]
    pub fn is_paced(&self) -> bool {
        self.pace.is_some()
    }

    /// The frame being built: write its text here, newlines included.
    pub fn frame(&mut self) -> &mut String {
        &mut self.frame
    }

    /// Whether the frame being built reached [`MAX_FRAME_TEXT`] (a caller
    /// building a frame over several datagrams then ends it).
    #[must_use]
    pub fn frame_full(&self) -> bool {
        self.frame.len() >= MAX_FRAME_TEXT
    }

    /// Frames left out so far (a newer one came before their slot).
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The frame built so far is complete at `now`: written now, or held as
    /// the newest (replacing a held older one). The first time a frame is
    /// held, `log` says why once.
    ///
    /// # Errors
    /// Write errors, including a broken pipe.
    pub fn end_frame(&mut self, now: Duration, out: &mut Output, log: &Log) -> io::Result<()> {
        let show = self.pace.as_mut().is_none_or(|p| p.try_show(now));
        if show {
            // A held frame is older than this one: it is never shown.
            if std::mem::take(&mut self.holding) {
                self.dropped += 1;
            }
            let written = out.text(format_args!("{}", self.frame));
            self.frame.clear();
            return written;
        }
        if self.holding {
            self.dropped += 1;
        }
        std::mem::swap(&mut self.frame, &mut self.held);
        self.frame.clear();
        self.holding = true;
        if !self.told {
            self.told = true;
            log.info(format_args!(
                "terminal: showing at most {TERMINAL_FPS} frames/s (newest); pipe the output, \
                 give --every-frame, or use mocap-top for the live view"
            ));
        }
        Ok(())
    }

    /// Writes the held frame if its slot has come at `now`.
    ///
    /// # Errors
    /// Write errors, including a broken pipe.
    pub fn tick(&mut self, now: Duration, out: &mut Output) -> io::Result<()> {
        if self.holding && self.pace.as_mut().is_none_or(|p| p.try_show(now)) {
            return self.write_held(out);
        }
        Ok(())
    }

    /// When a held frame is next due (`None`: nothing is held).
    #[must_use]
    pub fn poll_timeout(&self) -> Option<Duration> {
        if self.holding {
            Some(self.pace.and_then(|p| p.poll_timeout()).unwrap_or_default())
        } else {
            None
        }
    }

    /// The run is over: the held frame, the last one, is written.
    ///
    /// # Errors
    /// Write errors, including a broken pipe.
    pub fn finish(&mut self, out: &mut Output) -> io::Result<()> {
        if self.holding {
            self.write_held(out)?;
        }
        if !self.frame.is_empty() {
            // A frame never ended (the input ended inside it) is still shown.
            let written = out.text(format_args!("{}", self.frame));
            self.frame.clear();
            written?;
        }
        Ok(())
    }

    fn write_held(&mut self, out: &mut Output) -> io::Result<()> {
        self.holding = false;
        let written = out.text(format_args!("{}", self.held));
        self.held.clear();
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::Shared;
    use std::fmt::Write as _;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn pace_gives_one_slot_per_period() {
        let mut p = Pace::per_second(4);
        assert_eq!(p.poll_timeout(), None);
        assert!(p.try_show(ms(1000)));
        assert_eq!(p.poll_timeout(), Some(ms(1250)));
        assert!(!p.try_show(ms(1016)));
        assert!(!p.try_show(ms(1249)));
        assert!(p.try_show(ms(1250)));
        // A late frame starts its own period; no burst to catch up.
        assert!(p.try_show(ms(5000)));
        assert!(!p.try_show(ms(5100)));
        assert_eq!(Pace::per_second(0).every, Duration::from_secs(1));
        let mut end = Pace::new(Duration::from_secs(1));
        assert!(end.try_show(Duration::MAX));
        assert!(!end.try_show(Duration::MAX - ms(1)));
    }

    /// 60 frames a second for one second, each a numbered line.
    fn sixty(view: &mut FrameView, out: &mut Output, log: &Log) {
        for i in 0..60u64 {
            let now = Duration::from_micros(i * 16_667);
            view.tick(now, out).unwrap();
            writeln!(view.frame(), "frame {i}").unwrap();
            view.end_frame(now, out, log).unwrap();
        }
    }

    #[test]
    fn a_terminal_sees_at_most_four_frames_a_second_and_the_last_one() {
        let buf = Shared::default();
        let mut out = Output::new(buf.clone(), true);
        let log = Log::new("test", true, false);
        let mut view = FrameView::new(Some(Pace::per_second(4)));
        sixty(&mut view, &mut out, &log);
        // The first at once, then the newest held one as each slot opens
        // (250, 500, 750 ms), before the frame that arrives then.
        assert_eq!(buf.text(), "frame 0\nframe 14\nframe 29\nframe 44\n");
        assert_eq!(view.poll_timeout(), Some(Duration::from_micros(1_000_015)));
        // The stream pauses: the newest held frame shows when its slot comes.
        view.tick(ms(990), &mut out).unwrap();
        assert!(!buf.text().contains("frame 59"));
        view.tick(ms(1001), &mut out).unwrap();
        assert!(
            buf.text().ends_with("frame 44\nframe 59\n"),
            "{}",
            buf.text()
        );
        assert_eq!(view.poll_timeout(), None);
        // 60 frames, 5 shown.
        assert_eq!(view.dropped(), 55);
        // Nothing left to show at the end.
        view.finish(&mut out).unwrap();
        assert_eq!(buf.text().lines().count(), 5);
    }

    #[test]
    fn the_end_of_the_run_shows_the_held_frame() {
        let buf = Shared::default();
        let mut out = Output::new(buf.clone(), true);
        let log = Log::new("test", true, false);
        let mut view = FrameView::new(Some(Pace::per_second(4)));
        for (i, at) in [0, 10, 20].into_iter().enumerate() {
            write!(view.frame(), "f{i}\n  bone\n").unwrap();
            view.end_frame(ms(at), &mut out, &log).unwrap();
        }
        assert_eq!(buf.text(), "f0\n  bone\n");
        view.finish(&mut out).unwrap();
        assert_eq!(buf.text(), "f0\n  bone\nf2\n  bone\n");
        assert_eq!(view.dropped(), 1);
    }

    #[test]
    fn unpaced_every_frame_is_written_as_built() {
        let buf = Shared::default();
        let mut out = Output::new(buf.clone(), true);
        let log = Log::new("test", true, false);
        let mut view = FrameView::new(None);
        assert!(!view.is_paced());
        sixty(&mut view, &mut out, &log);
        let want: String = (0..60).map(|i| format!("frame {i}\n")).collect();
        assert_eq!(buf.text(), want);
        assert_eq!((view.dropped(), view.poll_timeout()), (0, None));
        // A frame the input ended inside is written at the end.
        view.frame().push_str("partial\n");
        assert!(!view.frame_full());
        view.finish(&mut out).unwrap();
        assert!(buf.text().ends_with("frame 59\npartial\n"));
    }

    #[test]
    fn a_frame_is_full_at_the_bound() {
        let mut view = FrameView::new(None);
        view.frame().push_str(&"x".repeat(MAX_FRAME_TEXT - 1));
        assert!(!view.frame_full());
        view.frame().push('x');
        assert!(view.frame_full());
    }

    #[test]
    fn every_frame_and_files_are_not_paced() {
        // Whether the test's stdout is a terminal depends on who runs it:
        // only the cases that never pace are asserted.
        let every = ViewArgs { every_frame: true };
        assert!(!FrameView::for_stdout(every, true).is_paced());
        assert!(!FrameView::for_stdout(ViewArgs::default(), false).is_paced());
    }
}
