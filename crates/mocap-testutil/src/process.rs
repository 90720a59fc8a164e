//! Child processes (the tools under test) whose every wait is bounded and
//! whose output is drained on threads, so a hung or chatty child fails a
//! test instead of hanging it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::thread;
use std::time::{Duration, Instant};

/// Signals for [`Proc::signal`], so tests need no nix of their own.
#[cfg(unix)]
pub use nix::sys::signal::Signal;

/// How long any wait on a child may take before the test fails.
pub const LIMIT: Duration = Duration::from_secs(20);

/// One output pipe, read into lines on a thread so a full pipe never blocks the child.
#[derive(Debug)]
struct Lines {
    rx: Receiver<String>,
    seen: Vec<String>,
    /// Lines before this index were already handed out by [`Lines::next_with`].
    next: usize,
    /// While set, the pipe is not read: it fills, as for a consumer that
    /// stopped reading.
    paused: Arc<AtomicBool>,
}

impl Lines {
    fn read(r: impl Read + Send + 'static) -> Self {
        let (tx, rx) = channel();
        let paused = Arc::new(AtomicBool::new(false));
        let held = paused.clone();
        thread::spawn(move || {
            let mut r = BufReader::new(r);
            let mut buf = Vec::new();
            let read_on = || {
                while held.load(Ordering::SeqCst) {
                    thread::sleep(Duration::from_millis(10));
                }
                true
            };
            // Lossy, so a stray non-UTF-8 byte shows up in an assertion instead of ending the pipe.
            while read_on() && matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
                let line = String::from_utf8_lossy(&buf);
                // A carriage return is kept: the tools write `\n` alone on
                // every system, and a Windows build that wrote CRLF must show.
                let line = line.strip_suffix('\n').unwrap_or(&line);
                if tx.send(line.to_owned()).is_err() {
                    break;
                }
                buf.clear();
            }
        });
        Self {
            rx,
            seen: Vec::new(),
            next: 0,
            paused,
        }
    }

    /// The next line not yet handed out that contains `needle`, waiting until `deadline`.
    fn next_with(&mut self, needle: &str, deadline: Instant) -> Option<String> {
        loop {
            if let Some(i) = self.seen[self.next..]
                .iter()
                .position(|l| l.contains(needle))
            {
                self.next += i + 1;
                return Some(self.seen[self.next - 1].clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            self.seen.push(self.rx.recv_timeout(left).ok()?);
        }
    }

    /// Everything, once the writer has gone (or the deadline passed).
    fn rest(&mut self, deadline: Instant) -> Vec<String> {
        while let Ok(l) = self
            .rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(l);
        }
        std::mem::take(&mut self.seen)
    }
}

/// A child process whose output is drained on threads and whose every wait is
/// bounded by [`LIMIT`]; it is killed when a wait fails.
#[derive(Debug)]
pub struct Proc {
    child: Child,
    stdout: Lines,
    stderr: Lines,
}

impl Proc {
    /// Starts `bin` with `args`. `stdin` is written from a thread (the child may
    /// fill stdout before it has read all of it) and then closed; `None` gives
    /// the child no stdin at all.
    pub fn spawn(bin: &str, args: &[&str], stdin: Option<Vec<u8>>) -> Self {
        let mut p = Self::start(bin, args, stdin.is_some());
        if let Some(input) = stdin {
            let mut pipe = p.child.stdin.take().unwrap();
            thread::spawn(move || {
                // The child may exit or close stdin early; what it read is what the test checks.
                let _ = pipe.write_all(&input);
            });
        }
        p
    }

    /// Starts `bin` with a stdin pipe the caller writes and closes when it likes.
    pub fn spawn_with_stdin(bin: &str, args: &[&str]) -> (Self, ChildStdin) {
        let mut p = Self::start(bin, args, true);
        let stdin = p.child.stdin.take().unwrap();
        (p, stdin)
    }

    /// Starts `bin` with `args` and these environment variables added, no stdin.
    pub fn spawn_with_env(bin: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_env(bin, args, false, env)
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    fn start(bin: &str, args: &[&str], piped: bool) -> Self {
        Self::start_env(bin, args, piped, &[])
    }

    fn start_env(bin: &str, args: &[&str], piped: bool, env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(bin)
            .args(args)
            .envs(env.iter().copied())
            .stdin(if piped { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{bin}: {e}"));
        Self {
            stdout: Lines::read(child.stdout.take().unwrap()),
            stderr: Lines::read(child.stderr.take().unwrap()),
            child,
        }
    }

    /// Waits for the next stderr line containing `needle`; returns it with the
    /// first socket address in it (how the tools report ephemeral ports).
    pub fn log_line(&mut self, needle: &str) -> (String, Option<SocketAddr>) {
        let Some(line) = self.stderr.next_with(needle, Instant::now() + LIMIT) else {
            self.fail(&format!("no log line with {needle:?}"));
        };
        let addr = line.split_whitespace().find_map(|w| w.parse().ok());
        (line, addr)
    }

    /// Waits for the next stdout line containing `needle` (`""`: any line) and returns it.
    pub fn stdout_line(&mut self, needle: &str) -> String {
        match self.stdout.next_with(needle, Instant::now() + LIMIT) {
            Some(line) => line,
            None => self.fail(&format!(
                "no stdout line with {needle:?}; got {:?}",
                self.stdout.seen
            )),
        }
    }

    /// Stops reading stdout without closing it, so it fills and the child's
    /// writes block, as behind a consumer that stopped reading; until
    /// [`Self::finish`] (or [`Self::kill`]), which reads it again.
    pub fn pause_stdout(&self) {
        self.stdout.paused.store(true, Ordering::SeqCst);
    }

    /// Stops reading stdout, so the child's next writes meet a closed pipe.
    pub fn close_stdout(&mut self) {
        // The reader thread ends, dropping the pipe, once its next send fails.
        self.stdout.rx = channel().1;
    }

    /// Sends SIGINT, as Ctrl-C in a terminal would.
    #[cfg(unix)]
    pub fn interrupt(&self) {
        // Through the system call, not `kill(1)`: a machine with only a Rust
        // toolchain and coreutils has no `kill` binary.
        let pid = i32::try_from(self.child.id()).unwrap();
        let sent = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGINT);
        assert!(sent.is_ok(), "SIGINT to {pid}: {sent:?}");
    }

    /// Ctrl-C for a child needs a Unix signal; elsewhere (Windows, where a
    /// console control event cannot be aimed at one child without unsafe
    /// code) a test that calls this fails, so such tests are marked
    /// `#[cfg_attr(not(unix), ignore = "...")]`.
    #[cfg(not(unix))]
    pub fn interrupt(&self) {
        panic!(
            "Ctrl-C cannot be sent to child {} on this platform (Unix signals only)",
            self.child.id()
        );
    }

    /// Sends `sig` (SIGTERM, SIGHUP: a service stop, a closed terminal).
    #[cfg(unix)]
    pub fn signal(&self, sig: Signal) {
        let pid = i32::try_from(self.child.id()).unwrap();
        let sent = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
        assert!(sent.is_ok(), "{sig} to {pid}: {sent:?}");
    }

    /// The child's resident memory in KiB, from `/proc` (Linux only: the
    /// tests that watch memory are Linux tests).
    #[cfg(target_os = "linux")]
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Sends SIGKILL and waits: the child gets no chance to clean up.
    pub fn kill(mut self) -> Finished {
        let _ = self.child.kill();
        self.finish()
    }

    /// Waits for the child to exit and collects its output.
    pub fn finish(self) -> Finished {
        self.finish_within(LIMIT)
    }

    /// [`Self::finish`] for a child meant to run longer than [`LIMIT`]
    /// (a `--duration` run): fails when it has not exited within `limit`.
    pub fn finish_within(mut self, limit: Duration) -> Finished {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "did not stop within {limit:?}; log so far: {:?}",
                    self.stderr.seen
                );
            }
            thread::sleep(Duration::from_millis(10));
        };
        // The pipes close when the child exits, so this only drains what is buffered.
        self.stdout.paused.store(false, Ordering::SeqCst);
        let deadline = Instant::now() + LIMIT;
        Finished {
            code: status.code(),
            stdout: self.stdout.rest(deadline),
            stderr: self.stderr.rest(deadline).join("\n"),
        }
    }

    fn fail(&mut self, what: &str) -> ! {
        let _ = self.child.kill();
        panic!(
            "{what} within {LIMIT:?}; log so far: {:?}",
            self.stderr.seen
        );
    }
}

impl Drop for Proc {
    /// A test that fails (or forgets to finish) must not leave the child
    /// running: servers would outlive the test run.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// What a finished child left behind.
#[derive(Debug)]
pub struct Finished {
    /// The exit code; `None` when a signal ended the child.
    pub code: Option<i32>,
    /// Every stdout line, including those [`Proc::stdout_line`] returned.
    pub stdout: Vec<String>,
    /// All of stderr, lines joined with `\n`.
    pub stderr: String,
}

impl Finished {
    /// Stdout as the child wrote it (each line ends in `\n`).
    pub fn text(&self) -> String {
        self.stdout.iter().map(|l| format!("{l}\n")).collect()
    }

    /// Every stdout line parsed as one JSON value.
    pub fn json(&self) -> Vec<serde_json::Value> {
        self.stdout
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

/// Runs `command` to its end with no stdin, its output read whole, killing it
/// when it takes longer than [`LIMIT`].
///
/// # Panics
/// When it cannot start or does not end within the limit.
#[must_use]
pub fn output(mut command: Command) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    // Read on threads whose results are waited for with a deadline too: a
    // daemon the child started (Wine's wineserver) may hold the pipes open.
    let drain = |mut r: Box<dyn Read + Send>| {
        let (tx, rx) = channel();
        thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            let _ = tx.send(v);
        });
        rx
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not end within {LIMIT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    let collect = |rx: Receiver<Vec<u8>>, what: &str| {
        rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("{command:?}: {what} still open {LIMIT:?} after the start"))
    };
    std::process::Output {
        status,
        stdout: collect(out, "stdout"),
        stderr: collect(err, "stderr"),
    }
}

/// Another tool of this workspace (`pcap-replay`, …), from the folder that
/// holds `beside` (a binary of the same build: `env!("CARGO_BIN_EXE_…")`).
///
/// `cargo test -p TOOL` builds TOOL's own binary only, so the other tool is
/// built here first, with the build's own profile, target folder and
/// target: once per test process, and by cargo, so it is built when it is
/// missing and rebuilt when its sources changed (a stale binary would test
/// old code). Cargo's lock on the target folder serialises test processes;
/// the mutex here, the tests of one process. Without cargo (a test binary
/// run by hand) the binary there is used as it is.
///
/// # Panics
/// When the build fails, or neither it nor an earlier one left the binary.
#[must_use]
pub fn tool(beside: &str, name: &str) -> std::path::PathBuf {
    use std::path::Path;
    use std::sync::Mutex;
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());

    let dir = Path::new(beside).parent().unwrap();
    let bin = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let mut built = BUILT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !built.iter().any(|b| b == name) {
        if let Some(mut cargo) = build_command(dir, name) {
            let out = cargo.output().unwrap_or_else(|e| panic!("{cargo:?}: {e}"));
            assert!(
                out.status.success(),
                "{cargo:?} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        built.push(name.to_owned());
    }
    assert!(
        bin.is_file(),
        "{} is missing: build it first (cargo build -p {name})",
        bin.display()
    );
    bin
}

/// `cargo build -p NAME` into the folder `dir` (`TARGET/PROFILE` or
/// `TARGET/TRIPLE/PROFILE`), or `None` when cargo is not at hand.
fn build_command(dir: &std::path::Path, name: &str) -> Option<Command> {
    // Cargo names the program that runs the tests; a test binary run by
    // hand may still find cargo on PATH.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(&cargo).arg("--version").output().ok()?;
    let profile = dir.file_name()?.to_str()?;
    let parent = dir.parent()?;
    let triple = parent
        .file_name()
        .and_then(|t| t.to_str())
        .filter(|t| t.starts_with(&format!("{}-", std::env::consts::ARCH)));
    let target_dir = if triple.is_some() {
        parent.parent()?
    } else {
        parent
    };
    let mut c = Command::new(cargo);
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(["build", "--quiet", "-p", name, "--bin", name])
        .arg("--target-dir")
        .arg(target_dir);
    // `debug` holds what `cargo test` builds, the test profile (the dev
    // profile would rebuild the tool at the next `cargo test --workspace`).
    match profile {
        "debug" => c.args(["--profile", "test"]),
        p => c.args(["--profile", p]),
    };
    if let Some(t) = triple {
        c.args(["--target", t]);
    }
    Some(c)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    fn args(dir: &str) -> Vec<String> {
        let c = super::build_command(Path::new(dir), "pcap-replay").unwrap();
        c.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn the_tool_is_built_where_the_test_build_put_its_own_binaries() {
        let plain = args("/w/target/debug");
        let at =
            |a: &[String], flag: &str| a[a.iter().position(|x| x == flag).unwrap() + 1].clone();
        assert_eq!(at(&plain, "--target-dir"), "/w/target");
        assert_eq!(at(&plain, "--profile"), "test");
        assert_eq!(at(&plain, "-p"), "pcap-replay");
        assert!(!plain.contains(&"--target".to_owned()), "{plain:?}");
        let triple = format!("{}-pc-windows-gnu", std::env::consts::ARCH);
        let cross = args(&format!("/w/out/{triple}/release"));
        assert_eq!(at(&cross, "--target-dir"), "/w/out");
        assert_eq!(at(&cross, "--target"), triple);
        assert_eq!(at(&cross, "--profile"), "release");
    }
}
