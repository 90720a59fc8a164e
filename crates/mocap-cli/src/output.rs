//! Where records go: JSON Lines or human lines on stdout ([`Output`]), logs
//! and progress on stderr ([`Log`]), and the one report path ([`report`]).

use std::fmt;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// Records on stdout (or any writer): JSON Lines or human lines. Buffered;
/// flushed after every record when the source is live, so `| jq` sees frames
/// as they come.
pub struct Output {
    out: BufWriter<Box<dyn Write + Send>>,
    live: bool,
    record: Vec<u8>,
    /// Named in write errors: "No space left on device" alone does not say
    /// which output filled the disk.
    name: &'static str,
}

impl Output {
    /// Stdout, flushing per record when `live`.
    pub fn stdout(live: bool) -> Self {
        let mut out = Self::new(io::stdout(), live);
        out.name = "standard output";
        out
    }

    /// Records to `w` (a file, a buffer a test reads), flushing per record
    /// when `live`.
    pub fn new(w: impl Write + Send + 'static, live: bool) -> Self {
        Self {
            out: BufWriter::with_capacity(64 * 1024, Box::new(w)),
            live,
            record: Vec::with_capacity(4096),
            name: "output",
        }
    }

    /// Writes one JSON object and a newline.
    ///
    /// # Errors
    /// Write errors, including a broken pipe.
    pub fn json<T: Serialize + ?Sized>(&mut self, record: &T) -> io::Result<()> {
        // Serialised apart from the writer, so a closed pipe surfaces as the
        // plain `BrokenPipe` I/O error it is, not wrapped in a serde error.
        self.record.clear();
        serde_json::to_writer(&mut self.record, record).map_err(io::Error::other)?;
        self.record.push(b'\n');
        let written = self.out.write_all(&self.record);
        self.checked(written)?;
        self.flush_if_live()
    }

    /// Writes formatted text (the caller adds newlines).
    ///
    /// # Errors
    /// Write errors, including a broken pipe.
    pub fn text(&mut self, args: fmt::Arguments<'_>) -> io::Result<()> {
        let written = self.out.write_fmt(args);
        self.checked(written)?;
        self.flush_if_live()
    }

    /// Flushes everything written so far.
    ///
    /// # Errors
    /// Write errors, including a broken pipe.
    pub fn flush(&mut self) -> io::Result<()> {
        let flushed = self.out.flush();
        self.checked(flushed)
    }

    fn flush_if_live(&mut self) -> io::Result<()> {
        if self.live { self.flush() } else { Ok(()) }
    }

    /// Names the output in a write error. A closed pipe stays the error the
    /// OS gave, so [`crate::exit::is_closed_pipe`] still knows it (on Windows by
    /// its raw code) and the tool ends quietly.
    fn checked(&self, r: io::Result<()>) -> io::Result<()> {
        r.map_err(|e| {
            if crate::exit::is_closed_pipe(&e) {
                e
            } else {
                io::Error::new(e.kind(), format!("writing {}: {e}", self.name))
            }
        })
    }
}

/// A JSON Lines record together with its `--format human` form.
pub trait Record: Serialize {
    /// The human form: one line, or a headline and indented lines; no final newline.
    ///
    /// # Errors
    /// Formatter errors.
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
}

/// Displays a [`Record`]'s human form.
pub struct Human<'a, R: ?Sized>(pub &'a R);

impl<R: Record + ?Sized> fmt::Display for Human<'_, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.human(f)
    }
}

impl Output {
    /// One record on stdout: its JSON line, or its human form and a newline.
    ///
    /// # Errors
    /// Write errors, including a broken pipe.
    pub fn record<R: Record + ?Sized>(&mut self, json: bool, r: &R) -> io::Result<()> {
        if json {
            self.json(r)
        } else {
            self.text(format_args!("{}\n", Human(r)))
        }
    }
}

/// The `type` of a counters record: `stats` while running, `summary` at the end.
pub fn summary_kind(stopped: Option<crate::runner::Stopped>) -> &'static str {
    if stopped.is_some() {
        "summary"
    } else {
        "stats"
    }
}

/// The headline word of a human counters line: `stats`, or `done (why)`.
pub fn summary_head(stopped: Option<crate::runner::Stopped>) -> impl fmt::Display {
    fmt::from_fn(move |f| match stopped {
        Some(why) => write!(f, "done ({why})"),
        None => f.write_str("stats"),
    })
}

/// `n` and its noun, singular for one: `1 error`, `3 errors`.
#[must_use]
pub fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A rate in summaries: one stream's `59.8 fps`, or for several added
/// together `2 streams, 119.5 fps in all` (the sum alone reads as one
/// stream running twice as fast).
#[must_use]
pub fn fps_text(fps: f64, streams: usize) -> String {
    if streams > 1 {
        format!("{streams} streams, {fps:.1} fps in all")
    } else {
        format!("{fps:.1} fps")
    }
}

/// The one report path for `stats` and `summary` records: JSON on stdout, or
/// the human lines on stderr after the records written so far (the summary
/// shows even with `--quiet`, periodic stats do not).
///
/// # Errors
/// Write errors on stdout, including a broken pipe.
pub fn report<R: Record + ?Sized>(
    out: &mut Output,
    log: &Log,
    json: bool,
    r: &R,
    last: bool,
) -> io::Result<()> {
    if json {
        out.json(r)?;
    } else {
        // Records first, so the summary is the last thing on a shared terminal.
        out.flush()?;
        let text = Human(r).to_string();
        for line in text.lines() {
            if last {
                log.always(format_args!("{line}"));
            } else {
                log.info(format_args!("{line}"));
            }
        }
    }
    out.flush()
}

/// A number rounded to three decimals, as records show seconds and rates.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// Log lines and the progress spinner on stderr.
pub struct Log {
    tool: &'static str,
    quiet: bool,
    progress: Option<ProgressBar>,
    last_tick: Instant,
}

impl Log {
    /// A logger for `tool`. The spinner shows only for live input, when stderr
    /// is a terminal and stdout is not (so it never mixes with records).
    pub fn new(tool: &'static str, quiet: bool, live: bool) -> Self {
        let progress =
            (!quiet && live && io::stderr().is_terminal() && !io::stdout().is_terminal()).then(
                || {
                    let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                    if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed} {msg}") {
                        pb.set_style(style);
                    }
                    pb
                },
            );
        Self {
            tool,
            quiet,
            progress,
            last_tick: Instant::now(),
        }
    }

    /// Whether log lines are suppressed.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// A log line (suppressed by `--quiet`).
    pub fn info(&self, args: fmt::Arguments<'_>) {
        if !self.quiet {
            self.always(args);
        }
    }

    /// A line that `--quiet` does not suppress (the human-format summary).
    pub fn always(&self, args: fmt::Arguments<'_>) {
        let line = format!("{}: {args}", self.tool);
        match &self.progress {
            Some(pb) => pb.suspend(|| write_stderr(&line)),
            None => write_stderr(&line),
        }
    }

    /// Updates the spinner's message, at most ten times a second.
    pub fn progress(&mut self, message: impl FnOnce() -> String) {
        if let Some(pb) = &self.progress
            && self.last_tick.elapsed() >= Duration::from_millis(100)
        {
            pb.set_message(message());
            pb.tick();
            self.last_tick = Instant::now();
        }
    }

    /// Removes the spinner.
    pub fn finish(&self) {
        if let Some(pb) = &self.progress {
            pb.finish_and_clear();
        }
    }
}

fn write_stderr(line: &str) {
    let mut err = io::stderr().lock();
    // Nothing useful can be done when stderr itself is gone.
    let _ = writeln!(err, "{line}");
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer a test can read back (also the view's tests').
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub(crate) Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        /// What was written, as text.
        pub(crate) fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// A writer that fails every write with `kind`.
    struct Failing(io::ErrorKind);

    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(self.0.into())
        }
    }

    #[test]
    fn counts_and_rates_read_as_english() {
        assert_eq!(plural(0, "error", "errors"), "0 errors");
        assert_eq!(plural(1, "error", "errors"), "1 error");
        assert_eq!(plural(2, "no-face", "no-face"), "2 no-face");
        assert_eq!(fps_text(59.84, 1), "59.8 fps");
        assert_eq!(fps_text(59.84, 0), "59.8 fps");
        assert_eq!(fps_text(119.5, 2), "2 streams, 119.5 fps in all");
    }

    #[test]
    fn a_write_error_names_the_output_and_a_closed_pipe_stays_as_it_was() {
        let mut out = Output::new(Failing(io::ErrorKind::StorageFull), true);
        let e = out
            .json(&crate::records::ErrorRecord::new("bad"))
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        assert!(e.to_string().starts_with("writing output: "), "{e}");
        let mut out = Output::stdout(false);
        out.out = BufWriter::new(Box::new(Failing(io::ErrorKind::StorageFull)));
        out.text(format_args!("{}", "x".repeat(100_000)))
            .unwrap_err();
        let e = out.flush().unwrap_err();
        assert!(
            e.to_string().starts_with("writing standard output: "),
            "{e}"
        );
        // `| head` closing the pipe must still read as a closed pipe.
        let mut out = Output::new(Failing(io::ErrorKind::BrokenPipe), true);
        let e = out.text(format_args!("x\n")).unwrap_err();
        assert!(crate::exit::is_closed_pipe(&e));
        assert!(!e.to_string().contains("writing"), "{e}");
    }

    #[test]
    fn records_go_to_any_writer_whole_lines_and_live_output_is_flushed_per_record() {
        let buf = Shared::default();
        let mut out = Output::new(buf.clone(), true);
        out.json(&crate::records::ErrorRecord::new("bad")).unwrap();
        // Live: already there, without a flush.
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "{\"type\":\"error\",\"src\":null,\"offset\":null,\"tag\":null,\"reason\":\"bad\"}\n"
        );
        let file = Shared::default();
        let mut out = Output::new(file.clone(), false);
        out.text(format_args!("line\n")).unwrap();
        assert!(file.0.lock().unwrap().is_empty(), "buffered until flushed");
        out.flush().unwrap();
        assert_eq!(file.0.lock().unwrap().as_slice(), b"line\n");
    }

    #[derive(Serialize)]
    struct Counts {
        #[serde(rename = "type")]
        kind: &'static str,
        n: u64,
        stopped: Option<crate::runner::Stopped>,
    }

    impl Record for Counts {
        fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(
                f,
                "{}: {} things\n  more",
                summary_head(self.stopped),
                self.n
            )
        }
    }

    #[test]
    fn one_report_path_json_on_stdout_human_lines_elsewhere() {
        let rec = Counts {
            kind: summary_kind(Some(crate::runner::Stopped::Count)),
            n: 3,
            stopped: Some(crate::runner::Stopped::Count),
        };
        assert_eq!(Human(&rec).to_string(), "done (count): 3 things\n  more");
        let stats = Counts {
            kind: summary_kind(None),
            n: 1,
            stopped: None,
        };
        assert_eq!(Human(&stats).to_string(), "stats: 1 things\n  more");
        let log = Log::new("test", true, false);
        let buf = Shared::default();
        let mut out = Output::new(buf.clone(), false);
        report(&mut out, &log, true, &rec, true).unwrap();
        report(&mut out, &log, false, &stats, false).unwrap();
        // JSON on stdout, flushed at once; the human form goes to the log, not stdout.
        assert_eq!(
            String::from_utf8(buf.0.lock().unwrap().clone()).unwrap(),
            "{\"type\":\"summary\",\"n\":3,\"stopped\":\"count\"}\n"
        );
        out.record(false, &stats).unwrap();
        out.flush().unwrap();
        assert!(
            String::from_utf8(buf.0.lock().unwrap().clone())
                .unwrap()
                .ends_with("stats: 1 things\n  more\n")
        );
    }
}
