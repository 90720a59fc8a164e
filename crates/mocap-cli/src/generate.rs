//! `--generate KIND`: shell completions and a man page from a tool's clap
//! definition, printed on stdout (as ripgrep does). The generators are the
//! kept `clap_complete` and `clap_mangen` crates, so what they print always
//! matches the flags the tool parses.

use std::ffi::OsString;
use std::io::{self, Write as _};
use std::process::ExitCode;

use clap::CommandFactory;

/// What `--generate` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Generate {
    /// Bash completions (source it, or put it in ~/.local/share/bash-completion/completions/TOOL).
    CompleteBash,
    /// Zsh completions (put it in a directory of $fpath as _TOOL).
    CompleteZsh,
    /// Fish completions (~/.config/fish/completions/TOOL.fish).
    CompleteFish,
    /// PowerShell completions (dot-source it from $PROFILE).
    CompletePowershell,
    /// A roff man page (man -l -, or ~/.local/share/man/man1/TOOL.1).
    Man,
}

/// The `--generate` flag, flattened into every tool's arguments so that
/// `--help` lists it (`-h` does not).
#[derive(Clone, Debug, Default, clap::Args)]
// Without this, clap takes the doc comment as the about text of a command
// that has none of its own.
#[command(about = None, long_about = None)]
pub struct GenerateArgs {
    /// Print shell completions or a man page on stdout, and exit.
    #[arg(
        long,
        value_enum,
        value_name = "KIND",
        hide_short_help = true,
        exclusive = true
    )]
    pub generate: Option<Generate>,
}

/// Answers `TOOL --generate KIND` before the tool's own parsing (which would
/// otherwise ask for required arguments or a subcommand): `Some(exit code)`
/// when the command line was exactly that, `None` otherwise. Any other use
/// of the flag reaches clap, which reports it as a usage error.
#[must_use]
pub fn generated<A: CommandFactory>() -> Option<ExitCode> {
    let kind = requested(std::env::args_os().skip(1))?;
    let mut out = io::stdout().lock();
    let written = write(&mut A::command(), kind, &mut out).and_then(|()| out.flush());
    Some(match written {
        Ok(()) => ExitCode::from(crate::exit::EXIT_OK),
        // A closed pipe (`| head`) is the reader's choice, not an error.
        Err(e) if crate::exit::is_closed_pipe(&e) => ExitCode::from(crate::exit::EXIT_OK),
        Err(e) => {
            #[expect(clippy::print_stderr, reason = "a generator's only error path")]
            {
                eprintln!("error: --generate: {e}");
            }
            ExitCode::from(crate::exit::EXIT_RUNTIME)
        }
    })
}

/// Parses the command line as `A`, as `A::parse()` does, but names the
/// program by its tool name rather than by how it was started: on Windows
/// that is `mocopi-dump.exe`, and help, usage and errors would read
/// differently from Linux and macOS.
#[must_use]
pub fn parse<A: clap::Parser>() -> A {
    try_parse_from(std::env::args_os()).unwrap_or_else(|e| e.exit())
}

/// `A`'s clap command with the program named by the tool (see [`parse`]),
/// for a tool that reads the matches itself.
#[must_use]
pub fn command<A: CommandFactory>() -> clap::Command {
    let cmd = A::command();
    let name = cmd.get_name().to_owned();
    cmd.bin_name(name)
}

fn try_parse_from<A: clap::Parser>(
    args: impl IntoIterator<Item = OsString>,
) -> Result<A, clap::Error> {
    let mut cmd = command::<A>();
    let matches = cmd.try_get_matches_from_mut(args)?;
    A::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// The kind asked for when the arguments are `--generate KIND` or
/// `--generate=KIND` alone, with a KIND this module knows.
fn requested(args: impl Iterator<Item = OsString>) -> Option<Generate> {
    let args: Vec<OsString> = args.collect();
    let value = match args.as_slice() {
        [flag, value] if flag == "--generate" => value.to_str()?,
        [one] => one.to_str()?.strip_prefix("--generate=")?,
        _ => return None,
    };
    <Generate as clap::ValueEnum>::from_str(value, false).ok()
}

/// Writes the completions or man page of `cmd` to `out`.
///
/// # Errors
/// When `out` fails.
fn write(cmd: &mut clap::Command, kind: Generate, out: &mut dyn io::Write) -> io::Result<()> {
    use clap_complete::Shell;
    let shell = match kind {
        Generate::CompleteBash => Shell::Bash,
        Generate::CompleteZsh => Shell::Zsh,
        Generate::CompleteFish => Shell::Fish,
        Generate::CompletePowershell => Shell::PowerShell,
        Generate::Man => return clap_mangen::Man::new(cmd.clone()).render(out),
    };
    let name = cmd.get_name().to_owned();
    // clap_complete writes with `write_all(..).expect(..)`; render to memory
    // first so that a failing stdout is an error here, not a panic there.
    let mut buf = Vec::new();
    clap_complete::generate(shell, cmd, name, &mut buf);
    out.write_all(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Option<Generate> {
        requested(list.iter().map(OsString::from))
    }

    #[test]
    fn only_the_flag_alone_is_answered_early() {
        assert_eq!(args(&["--generate", "man"]), Some(Generate::Man));
        assert_eq!(
            args(&["--generate=complete-zsh"]),
            Some(Generate::CompleteZsh)
        );
        assert_eq!(args(&["--generate", "nroff"]), None);
        assert_eq!(args(&["--generate"]), None);
        assert_eq!(args(&["-r", "x", "--generate", "man"]), None);
        assert_eq!(args(&[]), None);
    }

    #[derive(clap::Parser)]
    #[command(name = "demo", version)]
    struct Demo {
        file: String,
        #[command(flatten)]
        generate: GenerateArgs,
    }

    #[test]
    fn every_kind_renders_and_clap_refuses_it_mixed_with_other_flags() {
        use clap::Parser as _;
        for kind in [
            Generate::CompleteBash,
            Generate::CompleteZsh,
            Generate::CompleteFish,
            Generate::CompletePowershell,
            Generate::Man,
        ] {
            let mut out = Vec::new();
            write(&mut Demo::command(), kind, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains("demo"), "{kind:?}: {text}");
            assert!(text.contains("generate"), "{kind:?}: {text}");
        }
        // Exclusive: with another argument it is a usage error.
        assert!(Demo::try_parse_from(["demo", "x", "--generate", "man"]).is_err());
        // Hidden from -h, listed in --help.
        let short = Demo::command().render_help().to_string();
        let long = Demo::command().render_long_help().to_string();
        assert!(!short.contains("--generate"), "{short}");
        assert!(long.contains("--generate"), "{long}");
    }

    #[test]
    fn the_program_is_named_by_the_tool_not_by_its_file() {
        let started_as = |argv0: &str, rest: &[&str]| {
            std::iter::once(argv0)
                .chain(rest.iter().copied())
                .map(OsString::from)
                .collect::<Vec<_>>()
        };
        let d: Demo = try_parse_from(started_as("/opt/tools/demo.exe", &["x"])).unwrap();
        assert_eq!(d.file, "x");
        for argv0 in ["/opt/tools/demo.exe", "demo.exe", "./demo"] {
            let err = try_parse_from::<Demo>(started_as(argv0, &[]))
                .err()
                .unwrap();
            let text = err.to_string();
            assert!(text.contains("Usage: demo <FILE>"), "{argv0}: {text}");
            assert!(!text.contains(".exe"), "{argv0}: {text}");
        }
        // clap's own parse names the program by its file.
        use clap::Parser as _;
        let err = Demo::try_parse_from(started_as("/opt/tools/demo.exe", &[]))
            .err()
            .unwrap();
        assert!(err.to_string().contains("demo.exe"), "{err}");
    }
}
