//! The Windows builds of the tools, run under Wine on this machine
//! (`scripts/test-windows.sh` cross-builds them and prepares the Wine prefix).
//!
//! The environment names them: `MOCAP_WINDOWS_BIN`, the folder of the `.exe`
//! files; `MOCAP_WINE`, the Wine loader (default `wine64` on `PATH`, else
//! Debian's `/usr/lib/wine/wine64`); `WINEPREFIX` as Wine reads it. A test
//! that finds none of it fails, saying how to run it: it never passes
//! without having run the Windows build.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::process::{self, Proc};

/// The Wine loader and the `.exe` of `tool`.
///
/// # Panics
/// When `MOCAP_WINDOWS_BIN` is unset or holds no `tool.exe`.
#[must_use]
pub fn program(tool: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::var_os("MOCAP_WINDOWS_BIN").unwrap_or_else(|| {
        panic!("MOCAP_WINDOWS_BIN is not set: run the Windows tests with scripts/test-windows.sh")
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
/// (no line splitting: a stray `\r` shows), bounded as [`process::output`].
#[must_use]
pub fn output(tool: &str, args: &[&str]) -> std::process::Output {
    let (wine, exe) = program(tool);
    let mut c = Command::new(wine);
    c.arg(exe).args(args);
    process::output(c)
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
    let linux = process::output(linux);
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
