//! Helpers for this workspace's tests (a dev-dependency only): seeded mutation
//! input and child processes with bounded waits. Not for production use.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test support: a panic is how a test reports"
)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::thread;
use std::time::{Duration, Instant};

/// Signals for [`Proc::signal`], so tests need no nix of their own.
#[cfg(unix)]
pub use nix::sys::signal::Signal;

/// How long any wait on a child may take before the test fails.
pub const LIMIT: Duration = Duration::from_secs(20);

/// xorshift64*: reproducible choices for mutation sweeps.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    #[allow(
        clippy::should_implement_trait,
        reason = "named as in the sweeps' own copies; an endless Iterator adds nothing"
    )]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A number of the kinds that break time arithmetic: zero, signs, NaN,
    /// infinities, the smallest and largest, and any bit pattern.
    pub fn any_f64(&mut self) -> f64 {
        const EDGES: [f64; 12] = [
            0.0,
            -0.0,
            -5.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            5e-324,
            1e-9,
            f64::MAX,
            f64::MIN,
            30.0,
        ];
        match self.below(3) {
            0 => EDGES[self.below(EDGES.len())],
            1 => f64::from_bits(self.next()),
            _ => (self.next() % 100_000) as f64 / 100.0,
        }
    }

    /// A clock reading of the kinds that break time arithmetic: zero, the
    /// largest, just below it, and any count of nanoseconds or seconds.
    pub fn any_duration(&mut self) -> Duration {
        match self.below(5) {
            0 => Duration::ZERO,
            1 => Duration::MAX,
            2 => Duration::MAX - Duration::from_nanos(self.next() % 1_000_000_000),
            3 => Duration::from_secs(self.next()),
            _ => Duration::from_nanos(self.next()),
        }
    }

    /// One to `most` edits of the kinds that break binary framing: a byte
    /// replaced, a byte inserted, four bytes made a small big-endian size
    /// (bundle element and blob sizes), the tail cut.
    pub fn mutate(&mut self, v: &mut Vec<u8>, most: u64) {
        for _ in 0..1 + self.next() % most.max(1) {
            let at = self.below(v.len() + 1);
            match self.next() % 4 {
                0 if at < v.len() => v[at] = self.next() as u8,
                1 => v.insert(at, self.next() as u8),
                2 if at + 4 <= v.len() => {
                    v[at..at + 4].copy_from_slice(&(self.next() as i32 % 2048).to_be_bytes());
                }
                _ => v.truncate(at),
            }
        }
    }
}

/// A file of the workspace's bundled `captures/` (e.g. `vmc/body-60hz.pcapng`).
pub fn capture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../captures")
        .join(name)
}

/// The UDP payloads of a bundled capture, in order.
pub fn capture_payloads(name: &str) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(capture(name)).unwrap();
    let mut d = mocap_core::pcap::Datagrams::new(file).unwrap();
    let mut out = Vec::new();
    while let Some(c) = d.next_datagram() {
        out.push(c.unwrap().payload.to_vec());
    }
    out
}

/// One output pipe, read into lines on a thread so a full pipe never blocks the child.
#[derive(Debug)]
struct Lines {
    rx: Receiver<String>,
    seen: Vec<String>,
    /// Lines before this index were already handed out by [`Lines::next_with`].
    next: usize,
}

impl Lines {
    fn read(r: impl Read + Send + 'static) -> Self {
        let (tx, rx) = channel();
        thread::spawn(move || {
            let mut r = BufReader::new(r);
            let mut buf = Vec::new();
            // Lossy, so a stray non-UTF-8 byte shows up in an assertion instead of ending the pipe.
            while matches!(r.read_until(b'\n', &mut buf), Ok(n) if n > 0) {
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
    pub fn finish(mut self) -> Finished {
        let deadline = Instant::now() + LIMIT;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                self.fail("did not stop");
            }
            thread::sleep(Duration::from_millis(10));
        };
        // The pipes close when the child exits, so this only drains what is buffered.
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

/// `BIN --generate KIND` for every kind: each exits 0 with the text its
/// format starts with, names the tool and `flag` (one of its own options),
/// and leaves stderr empty. Returns the outputs by kind for further checks.
pub fn check_generate(bin: &str, tool: &str, flag: &str) -> Vec<(&'static str, String)> {
    let kinds = [
        ("complete-bash", "complete -F"),
        ("complete-zsh", "#compdef"),
        ("complete-fish", "complete -c"),
        ("complete-powershell", "Register-ArgumentCompleter"),
        ("man", ".TH"),
    ];
    let mut outputs = Vec::new();
    for (kind, marker) in kinds {
        let run = Proc::spawn(bin, &["--generate", kind], None).finish();
        assert_eq!(run.code, Some(0), "--generate {kind}: {}", run.stderr);
        assert!(run.stderr.is_empty(), "--generate {kind}: {}", run.stderr);
        let text = run.text();
        assert!(text.contains(marker), "--generate {kind} lacks {marker:?}");
        assert!(text.contains(tool), "--generate {kind} lacks {tool}");
        // Man pages escape '-' as '\-'; fish names long flags `-l NAME`.
        let flag_seen = text.contains(flag)
            || text.contains(&flag.replace('-', "\\-"))
            || (kind == "complete-fish"
                && text.contains(&format!("-l {}", flag.trim_start_matches('-'))));
        assert!(flag_seen, "--generate {kind} lacks {flag}");
        outputs.push((kind, text));
    }
    // Mixed with other arguments it is a usage error, and -h does not list it.
    let run = Proc::spawn(bin, &["--generate", "man", "--format", "json"], None).finish();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let run = Proc::spawn(bin, &["--generate", "troff"], None).finish();
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    let short = Proc::spawn(bin, &["-h"], None).finish();
    assert!(!short.text().contains("--generate"), "-h lists --generate");
    let long = Proc::spawn(bin, &["--help"], None).finish();
    assert!(
        long.text().contains("--generate"),
        "--help omits --generate"
    );
    let version = Proc::spawn(bin, &["--version"], None).finish();
    assert_eq!(version.code, Some(0));
    assert!(
        version.text().starts_with(&format!("{tool} ")),
        "{}",
        version.text()
    );
    outputs
}

/// The outputs of [`check_generate`] read by their consumers: bash parses the
/// completions (`bash -n`) and man renders the page (`man -l`) without
/// warnings. Needs bash and man-db (scripts/test-all.sh installs man-db).
pub fn check_generate_with_shell_and_man(bin: &str, tool: &str, flag: &str) {
    let outputs = check_generate(bin, tool, flag);
    let dir = std::env::temp_dir().join(format!("generate-{tool}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (kind, text) in &outputs {
        let path = dir.join(kind);
        std::fs::write(&path, text).unwrap();
        let out = match *kind {
            "complete-bash" => Command::new("bash").arg("-n").arg(&path).output(),
            "man" => Command::new("man")
                .args(["--warnings", "-l"])
                .arg(&path)
                .env("MANPAGER", "cat")
                .env("MANWIDTH", "100")
                .env("LC_ALL", "C.UTF-8")
                .output(),
            _ => continue,
        }
        .unwrap_or_else(|e| panic!("{kind}: {e} (scripts/test-all.sh installs man-db)"));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{kind}: {stderr}");
        assert!(stderr.trim().is_empty(), "{kind}: {stderr}");
        if *kind == "man" {
            let page = String::from_utf8_lossy(&out.stdout);
            assert!(page.contains(flag), "rendered man page lacks {flag}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
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

/// Values that break number parsing and time arithmetic.
pub const HOSTILE_VALUES: [&str; 12] = [
    "0",
    "-5",
    "nan",
    "inf",
    "-inf",
    "1e-9",
    "0.001",
    "1e300",
    "18446744073709551616",
    "0ms",
    "0s",
    "99999999999h",
];

/// The value names (`--flag <NAME>`) of flags that take a number.
const NUMBER_VALUES: [&str; 11] = [
    "HZ", "N", "DUR", "M", "B", "BASE", "SPEED", "PORT", "MS", "W", "SECS",
];

/// The number-valued flags that `bin [sub] --help` lists (`--max-rate`, …).
#[must_use]
pub fn number_flags(bin: &str, sub: &[&str]) -> Vec<String> {
    let mut c = Command::new(bin);
    c.args(sub).arg("--help");
    let out = output(c);
    assert!(out.status.success(), "{bin} --help");
    let mut flags = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim_start();
        let line = line
            .strip_prefix('-')
            .and_then(|l| l.get(1..))
            .and_then(|l| l.strip_prefix(", "))
            .unwrap_or(line);
        let Some(rest) = line.strip_prefix("--") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(" <") else {
            continue;
        };
        let value = value.split('>').next().unwrap_or_default();
        if NUMBER_VALUES.contains(&value) {
            flags.push(format!("--{name}"));
        }
    }
    flags
}

/// Runs `bin sub… base… FLAG VALUE` for every number-valued flag of
/// `--help` and every [`HOSTILE_VALUES`] entry: no run may panic or hang.
/// A value the tool refuses exits 2 with a message naming the flag; one it
/// takes runs as `base` asks (which must end by itself: `-r` a capture, or
/// `--duration`). `which` picks the flags (`|_| true`: all of them), so
/// that a flag of `base` is swept with another base.
/// Returns how many runs there were.
pub fn sweep_number_flags(
    bin: &str,
    sub: &[&str],
    base: &[&str],
    which: impl Fn(&str) -> bool,
) -> usize {
    let flags: Vec<String> = number_flags(bin, sub)
        .into_iter()
        .filter(|f| which(f))
        .collect();
    assert!(!flags.is_empty(), "{bin}: no number-valued flag in --help");
    let runs: Vec<(&str, &str)> = flags
        .iter()
        .flat_map(|f| HOSTILE_VALUES.iter().map(move |v| (f.as_str(), *v)))
        .collect();
    let failures: Vec<String> = thread::scope(|s| {
        let workers: Vec<_> = runs
            .chunks(runs.len().div_ceil(4))
            .map(|chunk| {
                s.spawn(move || {
                    let mut bad = Vec::new();
                    for (flag, value) in chunk {
                        let mut c = Command::new(bin);
                        c.args(sub).args(base).arg(format!("{flag}={value}"));
                        let out = output(c);
                        let err = String::from_utf8_lossy(&out.stderr);
                        let code = out.status.code();
                        let name = flag.trim_start_matches('-');
                        if !matches!(code, Some(0..=2)) || err.contains("panicked") {
                            bad.push(format!("{flag}={value}: exit {code:?}: {err}"));
                        } else if code == Some(2) && !err.contains(name) && !err.contains("usage") {
                            bad.push(format!("{flag}={value}: exit 2 without naming it: {err}"));
                        }
                    }
                    bad
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{bin}:\n{}", failures.join("\n"));
    runs.len()
}

/// The Windows builds of the tools, run under Wine on this machine
/// (`scripts/test-windows.sh` cross-builds them and prepares the Wine prefix).
///
/// The environment names them: `MOCAP_WINDOWS_BIN`, the folder of the `.exe`
/// files; `MOCAP_WINE`, the Wine loader (default `wine64` on `PATH`, else
/// Debian's `/usr/lib/wine/wine64`); `WINEPREFIX` as Wine reads it. A test
/// that finds none of it fails, saying how to run it: it never passes
/// without having run the Windows build.
pub mod samples;

pub mod wine {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use super::Proc;

    /// The Wine loader and the `.exe` of `tool`.
    ///
    /// # Panics
    /// When `MOCAP_WINDOWS_BIN` is unset or holds no `tool.exe`.
    #[must_use]
    pub fn program(tool: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::var_os("MOCAP_WINDOWS_BIN").unwrap_or_else(|| {
            panic!(
                "MOCAP_WINDOWS_BIN is not set: run the Windows tests with scripts/test-windows.sh"
            )
        });
        let exe = Path::new(&dir).join(format!("{tool}.exe"));
        assert!(
            exe.is_file(),
            "{} is missing: scripts/test-windows.sh builds it",
            exe.display()
        );
        (loader(), exe)
    }

    fn loader() -> PathBuf {
        if let Some(w) = std::env::var_os("MOCAP_WINE") {
            return w.into();
        }
        let on_path = std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("wine64"))
                .find(|w| w.is_file())
        });
        on_path.unwrap_or_else(|| "/usr/lib/wine/wine64".into())
    }

    /// `tool.exe args` under Wine, its output drained and every wait bounded
    /// as for [`Proc::spawn`].
    #[must_use]
    pub fn spawn(tool: &str, args: &[&str], stdin: Option<Vec<u8>>) -> Proc {
        let (wine, exe) = program(tool);
        let exe = exe.to_string_lossy().into_owned();
        let all: Vec<&str> = std::iter::once(exe.as_str())
            .chain(args.iter().copied())
            .collect();
        Proc::spawn(&wine.to_string_lossy(), &all, stdin)
    }

    /// `tool.exe args` under Wine to its end, with its output byte for byte
    /// (no line splitting: a stray `\r` shows), bounded as [`super::output`].
    #[must_use]
    pub fn output(tool: &str, args: &[&str]) -> std::process::Output {
        let (wine, exe) = program(tool);
        let mut c = Command::new(wine);
        c.arg(exe).args(args);
        super::output(c)
    }

    /// Runs `args` on the Linux build `linux_bin` and on `tool.exe` and
    /// checks the Windows build gives the same exit code and the same bytes
    /// on stdout and stderr, none of them a carriage return. Returns the
    /// Windows run.
    #[allow(clippy::must_use_candidate, reason = "the checks are the point")]
    pub fn same_as(linux_bin: &str, tool: &str, args: &[&str]) -> std::process::Output {
        same_run(linux_bin, args, tool, args, true)
    }

    /// Runs `linux_args` on the Linux build and `windows_args` (the same,
    /// with Windows paths) on `tool.exe`: the same exit code, the same stdout
    /// (and with `stderr` the same stderr) but for the run time
    /// (`"elapsed_s":…`), and no carriage return. Returns the Windows run.
    #[allow(clippy::must_use_candidate, reason = "the checks are the point")]
    pub fn same_run(
        linux_bin: &str,
        linux_args: &[&str],
        tool: &str,
        windows_args: &[&str],
        stderr: bool,
    ) -> std::process::Output {
        let mut linux = Command::new(linux_bin);
        linux.args(linux_args);
        let linux = super::output(linux);
        let windows = output(tool, windows_args);
        let what = format!("{tool} {}", windows_args.join(" "));
        assert_eq!(
            windows.status.code(),
            linux.status.code(),
            "{what}: exit code\n--- Windows stderr:\n{}\n--- Linux stderr:\n{}",
            String::from_utf8_lossy(&windows.stderr),
            String::from_utf8_lossy(&linux.stderr)
        );
        let pipes = [
            (&windows.stdout, &linux.stdout, "stdout"),
            (&windows.stderr, &linux.stderr, "stderr"),
        ];
        for (w, l, pipe) in pipes.into_iter().take(if stderr { 2 } else { 1 }) {
            assert!(!w.contains(&b'\r'), "{what}: CR on {pipe}");
            assert_eq!(
                without_elapsed(&String::from_utf8_lossy(w)),
                without_elapsed(&String::from_utf8_lossy(l)),
                "{what}: {pipe} differs"
            );
        }
        windows
    }

    /// `text` without the one value that differs between two runs of the
    /// same input, the summary's `"elapsed_s":N`.
    #[must_use]
    pub fn without_elapsed(text: &str) -> String {
        text.split_inclusive('\n')
            .map(|l| match l.find("\"elapsed_s\":") {
                Some(i) => {
                    let rest = &l[i..];
                    let end = rest.find([',', '}']).unwrap_or(rest.len());
                    let cut = if rest[end..].starts_with(',') {
                        end + 1
                    } else {
                        end
                    };
                    format!("{}{}", &l[..i], &rest[cut..])
                }
                None => l.to_owned(),
            })
            .collect()
    }

    /// `path` as a Windows program under Wine names it: Wine's `Z:` drive is
    /// the Linux root, so `/tmp/a b.pcapng` is `Z:\tmp\a b.pcapng`.
    #[must_use]
    pub fn path(path: &Path) -> String {
        let abs = std::path::absolute(path).unwrap();
        format!("Z:{}", abs.to_string_lossy().replace('/', "\\"))
    }
}

/// The status-line rule every listening tool follows once its stream goes
/// quiet: `stats` lines say `no datagrams for N s` (not the rate since the
/// start), and the socket's silence is explained once.
pub mod status {
    use std::net::SocketAddr;

    /// The lines of `stderr` that contain `what`.
    #[must_use]
    pub fn told<'a>(stderr: &'a str, what: &str) -> Vec<&'a str> {
        stderr.lines().filter(|l| l.contains(what)).collect()
    }

    /// Checks that a run whose sender stopped early said so in at least
    /// `quiet` stats lines without a rate since the start, and explained the
    /// silence on `at` exactly once (its port's firewall, the app's address);
    /// returns that explanation.
    pub fn assert_went_quiet(stderr: &str, at: SocketAddr, quiet: usize) -> &str {
        let lines = told(stderr, "stats: no datagrams for ");
        assert!(lines.len() >= quiet, "{stderr}");
        assert!(lines.iter().all(|l| !l.contains(" fps")), "{lines:?}");
        let hint = told(stderr, &format!("no datagrams on {at} for 5 s"));
        assert_eq!(hint.len(), 1, "{stderr}");
        assert!(hint[0].contains("the sender stopped"), "{}", hint[0]);
        assert!(hint[0].contains(&format!("firewall blocks UDP port {}", at.port())));
        assert!(hint[0].contains("another IPv4 address of this machine"));
        hint[0]
    }
}

/// A small VMC humanoid for `--bvh` tests, with forward kinematics written
/// here apart from the code under test (its own quaternion product, its own
/// parent list, its own Z-X-Y Euler matrices), so the two can disagree.
pub mod humanoid {
    use mocap_core::vmc::Message;

    /// (bone, parent, Unity local position in metres). No UpperChest: Neck
    /// and the shoulders hang off Chest, as on many VRM models.
    pub const BONES: [(&str, Option<&str>, [f32; 3]); 17] = [
        ("Hips", None, [0.0, 0.95, 0.02]),
        ("Spine", Some("Hips"), [0.0, 0.08, -0.01]),
        ("Chest", Some("Spine"), [0.0, 0.12, 0.0]),
        ("Neck", Some("Chest"), [0.0, 0.2, 0.01]),
        ("Head", Some("Neck"), [0.0, 0.09, 0.0]),
        ("LeftShoulder", Some("Chest"), [-0.03, 0.16, 0.0]),
        ("LeftUpperArm", Some("LeftShoulder"), [-0.09, 0.0, 0.0]),
        ("LeftLowerArm", Some("LeftUpperArm"), [-0.25, 0.0, 0.0]),
        ("LeftHand", Some("LeftLowerArm"), [-0.24, 0.0, 0.0]),
        ("RightShoulder", Some("Chest"), [0.03, 0.16, 0.0]),
        ("RightUpperArm", Some("RightShoulder"), [0.09, 0.0, 0.0]),
        ("LeftUpperLeg", Some("Hips"), [-0.08, -0.05, 0.0]),
        ("LeftLowerLeg", Some("LeftUpperLeg"), [0.0, -0.42, 0.0]),
        ("LeftFoot", Some("LeftLowerLeg"), [0.0, -0.4, 0.0]),
        ("LeftToes", Some("LeftFoot"), [0.0, -0.05, 0.12]),
        ("RightUpperLeg", Some("Hips"), [0.08, -0.05, 0.0]),
        ("RightLowerLeg", Some("RightUpperLeg"), [0.0, -0.42, 0.0]),
    ];

    /// Frame `k`'s local rotation of bone `i`: about a tilted axis of its
    /// own, by an angle that grows with the frame (past ±180° for some).
    pub fn rotation(i: usize, k: u32) -> [f32; 4] {
        let a = (i as f64 * 1.3).sin_cos();
        let axis = [a.0, a.1, 0.3 + 0.1 * i as f64];
        let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
        let angle = (0.05 + 0.01 * i as f64) * f64::from(k) + 0.1 * i as f64;
        let (s, c) = (angle / 2.0).sin_cos();
        [
            (axis[0] / n * s) as f32,
            (axis[1] / n * s) as f32,
            (axis[2] / n * s) as f32,
            c as f32,
        ]
    }

    /// Frame `k`'s root: walking forward along Unity's +Z, turning about Y.
    pub fn root(k: u32) -> ([f32; 3], [f32; 4]) {
        let (s, c) = (0.01 * f64::from(k)).sin_cos();
        ([0.1, 0.0, 0.01 * k as f32], [0.0, s as f32, 0.0, c as f32])
    }

    /// Frame `k` as a sender writes it: Root/Pos, every bone, a blendshape,
    /// Apply, OK and T (`k / fps` seconds).
    pub fn frame(k: u32, fps: f32) -> Vec<Message> {
        let (pos, rot) = root(k);
        let mut f = vec![Message::RootPos {
            name: "root".into(),
            pos,
            rot,
            mr: None,
        }];
        for (i, (name, _, pos)) in BONES.iter().enumerate() {
            f.push(Message::BonePos {
                name: (*name).into(),
                pos: *pos,
                rot: rotation(i, k),
            });
        }
        f.push(Message::BlendVal {
            name: "A".into(),
            value: 0.5,
        });
        f.push(Message::BlendApply);
        f.push(Message::Available {
            loaded: 1,
            calibration: None,
            tracking: None,
        });
        f.push(Message::Time(k as f32 / fps));
        f
    }

    fn mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
        [
            a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
        ]
    }

    fn turn(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
        let p = mul(mul(q, [v[0], v[1], v[2], 0.0]), [-q[0], -q[1], -q[2], q[3]]);
        [p[0], p[1], p[2]]
    }

    /// World positions by Unity's (and SMF's) rules: a child sits at its
    /// parent's position plus the parent's world rotation applied to the
    /// child's local position; parents come first.
    pub fn forward(parents: &[Option<usize>], local: &[([f64; 3], [f64; 4])]) -> Vec<[f64; 3]> {
        let mut world: Vec<([f64; 3], [f64; 4])> = Vec::new();
        for (parent, (pos, rot)) in parents.iter().zip(local) {
            world.push(match parent {
                None => (*pos, *rot),
                Some(p) => {
                    let (pp, pr) = world[*p];
                    let d = turn(pr, *pos);
                    ([pp[0] + d[0], pp[1] + d[1], pp[2] + d[2]], mul(pr, *rot))
                }
            });
        }
        world.into_iter().map(|(p, _)| p).collect()
    }

    /// World positions of frame `k` by Unity's rules ([`forward`] from the
    /// root), then mirrored on X and in centimetres: what a BVH take of the
    /// stream must show.
    pub fn expected_world(k: u32) -> Vec<(&'static str, [f64; 3])> {
        let (rp, rr) = root(k);
        let wide = |q: [f32; 4]| q.map(f64::from);
        let mut parents = vec![None];
        let mut local = vec![(rp.map(f64::from), wide(rr))];
        for (i, (_, parent, pos)) in BONES.iter().enumerate() {
            let p = parent.map_or(0, |p| 1 + BONES.iter().position(|b| b.0 == p).unwrap());
            parents.push(Some(p));
            local.push((pos.map(f64::from), wide(rotation(i, k))));
        }
        let world = forward(&parents, &local);
        BONES
            .iter()
            .zip(&world[1..])
            .map(|((n, _, _), p)| (*n, [-p[0] * 100.0, p[1] * 100.0, p[2] * 100.0]))
            .collect()
    }

    /// A take frame's index and each joint's expected world position.
    pub type Expected = (usize, Vec<(String, [f64; 3])>);

    /// Which independent reader checks a take.
    #[derive(Clone, Copy, Debug)]
    pub enum Reader {
        /// PyPI `bvhio` (`scripts/bvh/check-bvhio.py`).
        Bvhio,
        /// Blender's own importer, headless (`scripts/bvh/check-blender.py`).
        Blender,
    }

    /// Has `reader` load `take` and compare its world positions with
    /// `expected` (by frame index: joint name and position in the file's
    /// axes and units). Returns the reader's JSON report: frame and joint
    /// counts, frame time or fps, `max_error` and where.
    pub fn read_with(
        reader: Reader,
        take: &std::path::Path,
        expected: &[Expected],
    ) -> serde_json::Value {
        let frames: serde_json::Map<String, serde_json::Value> = expected
            .iter()
            .map(|(f, joints)| {
                let j: serde_json::Map<String, serde_json::Value> = joints
                    .iter()
                    .map(|(n, p)| (n.clone(), serde_json::json!(p)))
                    .collect();
                (f.to_string(), serde_json::Value::Object(j))
            })
            .collect();
        let json = take.with_extension("expected.json");
        std::fs::write(&json, serde_json::json!({ "frames": frames }).to_string()).unwrap();
        let scripts = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/bvh");
        let out = match reader {
            Reader::Bvhio => std::process::Command::new("python3")
                .arg(format!("{scripts}/check-bvhio.py"))
                .arg(take)
                .arg(&json)
                .output(),
            Reader::Blender => std::process::Command::new("blender")
                .args(["-b", "--factory-startup", "--python"])
                .arg(format!("{scripts}/check-blender.py"))
                .arg("--")
                .arg(take)
                .arg(&json)
                .output(),
        }
        .unwrap_or_else(|e| panic!("{reader:?}: {e} (scripts/test-all.sh installs it)"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout
            .lines()
            .find_map(|l| {
                l.strip_prefix("RESULT ")
                    .or_else(|| l.starts_with('{').then_some(l))
            })
            .unwrap_or_else(|| {
                panic!(
                    "{reader:?} gave no result: {stdout}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        serde_json::from_str(line).unwrap()
    }

    fn matmul(a: [[f64; 3]; 3], b: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
        let mut m = [[0.0; 3]; 3];
        for (r, row) in m.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v = (0..3).map(|k| a[r][k] * b[k][c]).sum();
            }
        }
        m
    }

    /// World positions of every joint of a BVH frame (six channels per
    /// joint, positions replacing offsets as Blender reads them; rotations
    /// `Rz·Rx·Ry` of the Zrotation, Xrotation, Yrotation channels).
    pub fn bvh_world(take: &mocap_core::bvh::Bvh, frame: usize) -> Vec<(String, [f64; 3])> {
        let line = &take.frames[frame];
        let mut world: Vec<([f64; 3], [[f64; 3]; 3])> = Vec::new();
        for (j, joint) in take.joints.iter().enumerate() {
            let c = &line[j * 6..j * 6 + 6];
            let r = |deg: f64| deg.to_radians().sin_cos();
            let (sz, cz) = r(c[3]);
            let (sx, cx) = r(c[4]);
            let (sy, cy) = r(c[5]);
            let rz = [[cz, -sz, 0.0], [sz, cz, 0.0], [0.0, 0.0, 1.0]];
            let rx = [[1.0, 0.0, 0.0], [0.0, cx, -sx], [0.0, sx, cx]];
            let ry = [[cy, 0.0, sy], [0.0, 1.0, 0.0], [-sy, 0.0, cy]];
            let local = matmul(matmul(rz, rx), ry);
            let t = [c[0], c[1], c[2]];
            world.push(match joint.parent {
                None => (t, local),
                Some(p) => {
                    let (pp, pm) = world[p];
                    let d: Vec<f64> = (0..3)
                        .map(|r| (0..3).map(|k| pm[r][k] * t[k]).sum())
                        .collect();
                    (
                        [pp[0] + d[0], pp[1] + d[1], pp[2] + d[2]],
                        matmul(pm, local),
                    )
                }
            });
        }
        take.joints
            .iter()
            .zip(world)
            .map(|(j, (p, _))| (j.name.clone(), p))
            .collect()
    }

    /// The largest distance (centimetres) between a take's frame and
    /// [`expected_world`] of source frame `k`, over every bone.
    pub fn world_error(take: &mocap_core::bvh::Bvh, frame: usize, k: u32) -> f64 {
        let got = bvh_world(take, frame);
        expected_world(k)
            .iter()
            .map(|(name, want)| {
                let (_, p) = got
                    .iter()
                    .find(|(n, _)| n == name)
                    .unwrap_or_else(|| panic!("{name} not in the take"));
                (0..3).map(|i| (p[i] - want[i]).powi(2)).sum::<f64>().sqrt()
            })
            .fold(0.0, f64::max)
    }
}

/// Running our Lua dissectors in tshark (the differential Wireshark tests of
/// mocopi-dump, ifm-handshake and vmc-relay; tshark comes from
/// `scripts/test-all.sh`).
pub mod tshark {
    use std::net::SocketAddr;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::time::Duration;

    use serde_json::Value;

    use mocap_core::pcap::PcapNgWriter;

    /// A file in this test process's scratch directory for `tool`.
    pub fn scratch(tool: &str, name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("{tool}-wireshark-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// `datagrams` from `src` to `dst` as a pcapng at `path`, 1 ms apart.
    pub fn write_pcap(path: &Path, src: SocketAddr, dst: SocketAddr, datagrams: &[Vec<u8>]) {
        let mut w = PcapNgWriter::new(std::fs::File::create(path).unwrap()).unwrap();
        for (i, d) in datagrams.iter().enumerate() {
            w.write(Duration::from_millis(i as u64), src, dst, d)
                .unwrap();
        }
        w.flush().unwrap();
    }

    /// tshark with `script` loaded reads `pcap` (`extra`: a display filter,
    /// decode-as rules) and prints `fields` per packet: one row per packet,
    /// one cell per field, repeated values joined by `;`. Fails the test when
    /// tshark fails or the script raised a Lua error.
    pub fn fields(script: &Path, pcap: &Path, extra: &[&str], fields: &[&str]) -> Vec<Vec<String>> {
        let mut cmd = Command::new("tshark");
        cmd.arg("-n")
            .arg("-X")
            .arg(format!("lua_script:{}", script.display()))
            .arg("-r")
            .arg(pcap)
            .args(extra)
            .args(["-T", "fields", "-E", "separator=|", "-E", "aggregator=;"]);
        for f in fields {
            cmd.args(["-e", f]);
        }
        let out = cmd
            .output()
            .expect("tshark runs (scripts/test-all.sh installs it)");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("Lua"), "{stderr}");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split('|').map(str::to_owned).collect())
            .collect()
    }

    /// The values of a repeated field's cell.
    pub fn list(cell: &str) -> Vec<&str> {
        if cell.is_empty() {
            Vec::new()
        } else {
            cell.split(';').collect()
        }
    }

    /// A number tshark printed against ours: tshark prints doubles with 15
    /// significant digits, ours are exact; equal within `rel` of the larger
    /// of |ours| and `floor`.
    pub fn close(ours: &Value, theirs: &str, rel: f64, floor: f64, what: &str) {
        let t: f64 = theirs
            .parse()
            .unwrap_or_else(|e| panic!("{what}: {theirs:?}: {e}"));
        let o = ours.as_f64().unwrap_or_else(|| panic!("{what}: {ours}"));
        assert!(
            o == t || (o - t).abs() <= rel * o.abs().max(floor),
            "{what}: ours {o}, tshark {t}"
        );
    }

    /// Every prefix and every byte flip of `seed`, sent `src` → `dst`, through
    /// the dissector: no Lua error and no dissector error on any of them.
    /// Returns one `kind_field|expert messages` row per packet.
    pub fn sweep(
        script: &Path,
        scratch: &Path,
        seed: &[u8],
        (src, dst): (SocketAddr, SocketAddr),
        kind_field: &str,
    ) -> Vec<String> {
        let mut all = Vec::new();
        for cut in 1..seed.len() {
            all.push(seed[..cut].to_vec());
        }
        for i in 0..seed.len() {
            let mut v = seed.to_vec();
            v[i] ^= 0xff;
            all.push(v);
        }
        write_pcap(scratch, src, dst, &all);
        let out = Command::new("tshark")
            .arg("-n")
            .arg("-X")
            .arg(format!("lua_script:{}", script.display()))
            .arg("-r")
            .arg(scratch)
            .args(["-T", "fields", "-e", kind_field, "-e", "_ws.expert.message"])
            .args(["-E", "separator=|"])
            .output()
            .expect("tshark runs (scripts/test-all.sh installs it)");
        let text = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            !text.contains("Lua Error") && !stderr.contains("Lua Error"),
            "{stderr}"
        );
        assert!(!text.contains("dissector error"), "{text}");
        let rows: Vec<String> = text.lines().map(str::to_owned).collect();
        assert_eq!(rows.len(), all.len(), "one row per packet");
        rows
    }
}
