//! Exit codes (0 done, 1 runtime error, 2 usage error), Ctrl-C and closed
//! stdout pipes: how every tool ends.

use std::io;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit codes, the same in every tool, for `--help` footers.
pub const EXIT_CODES_HELP: &str = "Exit codes: 0 done (count, duration, end of input, Ctrl-C, or a closed stdout pipe), 1 runtime error (port in use, unreadable file, …), 2 usage error.";

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once per process): the first Ctrl-C asks
/// loops to stop (they still print their summary); a second one exits at
/// once with 130.
///
/// # Errors
/// When a handler could not be installed.
pub fn install_ctrlc() -> anyhow::Result<()> {
    // Once per process: tools embedded in tests may run several times.
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    })?;
    Ok(())
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// An error in how the tool was asked, found after flag parsing (e.g. a relay
/// destination that is its own listening address): exit status 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Maps a tool's result to its exit code, printing the error (with its causes) on stderr.
pub fn exit(result: anyhow::Result<()>, tool: &str) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            #[expect(clippy::print_stderr, reason = "the one place errors reach the user")]
            {
                eprintln!("{tool}: error: {e:#}");
            }
            ExitCode::from(2)
        }
        Err(e) => {
            #[expect(clippy::print_stderr, reason = "the one place errors reach the user")]
            {
                eprintln!("{tool}: error: {e:#}");
            }
            ExitCode::from(1)
        }
    }
}

/// A reader closing our stdout (`| head`) is a normal end, not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| c.downcast_ref::<io::Error>().is_some_and(is_closed_pipe))
}

/// Whether a write failed because the reader of the pipe went away. Linux and
/// macOS say `EPIPE` (`BrokenPipe`); Windows says `ERROR_NO_DATA` (232, which
/// the standard library calls `BrokenPipe` too) or, when the reader was gone
/// before the write, `ERROR_PIPE_NOT_CONNECTED` (233, which it does not).
#[must_use]
pub fn is_closed_pipe(e: &io::Error) -> bool {
    /// `ERROR_PIPE_NOT_CONNECTED` from winerror.h.
    const WINDOWS_PIPE_NOT_CONNECTED: i32 = 233;
    e.kind() == io::ErrorKind::BrokenPipe
        || (cfg!(windows) && e.raw_os_error() == Some(WINDOWS_PIPE_NOT_CONNECTED))
}
