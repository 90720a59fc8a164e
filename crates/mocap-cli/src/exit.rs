//! Exit codes (0 done, 1 runtime error, 2 usage error), Ctrl-C and closed
//! stdout pipes: how every tool ends.

use std::io;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Done: `--count`, `--duration`, end of input, Ctrl-C, or a closed stdout pipe.
pub const EXIT_OK: u8 = 0;
/// A runtime error: a port in use, an unreadable file, …
pub const EXIT_RUNTIME: u8 = 1;
/// A usage error, found by clap (its own code) or after parsing ([`UsageError`]).
pub const EXIT_USAGE: u8 = 2;
/// A second Ctrl-C: out at once, as a shell reports a death by SIGINT (128 + 2).
pub const EXIT_INTERRUPTED_TWICE: i32 = 130;

/// The exit codes, the same in every tool, for `--help` footers; written
/// from the constants the code exits with.
#[must_use]
pub fn exit_codes_help() -> String {
    format!(
        "Exit codes: {EXIT_OK} done (count, duration, end of input, Ctrl-C, or a closed stdout pipe), \
         {EXIT_RUNTIME} runtime error (port in use, unreadable file, …), {EXIT_USAGE} usage error."
    )
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// What the handler calls after setting the flag: one, the running loop's.
static WAKE: Mutex<Option<Arc<dyn Fn() + Send + Sync>>> = Mutex::new(None);

/// Installs the Ctrl-C handler (once per process): the first Ctrl-C asks
/// loops to stop (they still print their summary); a second one exits at
/// once with 130. SIGTERM and SIGHUP (a service stop, a closed terminal) and
/// a closed Windows console count as Ctrl-C (ctrlc's `termination`
/// feature): without it they killed the tool with no summary and a `-w`
/// file cut mid-record.
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
            std::process::exit(EXIT_INTERRUPTED_TWICE);
        }
        let wake = WAKE.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(wake) = wake {
            wake();
        }
    })?;
    Ok(())
}

/// Has the Ctrl-C handler call `wake` (replacing the one given before):
/// for a run loop that waits on something other than a timer, so it may
/// wait longer than [`crate::runner::POLL`] and still end at once
/// ([`crate::runner::Feed::longest_wait`]).
pub fn wake_on_interrupt(wake: impl Fn() + Send + Sync + 'static) {
    *WAKE.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(wake));
}

/// Whether Ctrl-C was pressed (or SIGTERM or SIGHUP arrived).
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
        Ok(()) => ExitCode::from(EXIT_OK),
        Err(e) if is_broken_pipe(&e) => ExitCode::from(EXIT_OK),
        Err(e) if e.downcast_ref::<UsageError>().is_some() => {
            #[expect(clippy::print_stderr, reason = "the one place errors reach the user")]
            {
                eprintln!("{tool}: error: {e:#}");
            }
            ExitCode::from(EXIT_USAGE)
        }
        Err(e) => {
            #[expect(clippy::print_stderr, reason = "the one place errors reach the user")]
            {
                eprintln!("{tool}: error: {e:#}");
            }
            ExitCode::from(EXIT_RUNTIME)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes the help text names are the codes the tools exit with, and
    /// clap's own code for a bad flag is our usage code.
    #[test]
    fn help_names_the_codes_the_code_uses() {
        let help = exit_codes_help();
        for (code, what) in [
            (EXIT_OK, "done"),
            (EXIT_RUNTIME, "runtime error"),
            (EXIT_USAGE, "usage error"),
        ] {
            assert!(help.contains(&format!("{code} {what}")), "{help}");
        }
        let err = clap::Command::new("t")
            .try_get_matches_from(["t", "--no-such-flag"])
            .unwrap_err();
        assert_eq!(err.exit_code(), i32::from(EXIT_USAGE));
        assert_eq!(
            ExitCode::from(EXIT_USAGE),
            exit(Err(UsageError("x".into()).into()), "t")
        );
    }
}
