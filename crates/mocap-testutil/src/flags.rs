//! The tools' command lines checked as a user meets them: `--generate`
//! outputs, and every number-valued flag given the values that break number
//! parsing and time arithmetic.

use std::process::Command;
use std::thread;

use crate::process::{Proc, output};

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
