//! `mocap-top`: every mocap stream arriving on this machine, live, in one terminal.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mocap_cli::args::WriteArgs;
use mocap_cli::prelude::*;

mod content;
mod pictures;
mod run;
mod screen;
mod state;
mod svg;
mod term;
mod window;

/// The examples of `--help`; the first lists the registry's ports.
fn examples() -> String {
    let ports = textwrap_ports(&mocap_core::protocol::port_list());
    format!(
        "Examples:\n  mocap-top\n      listen on every protocol's default port:\n{ports}\n{EXAMPLES}"
    )
}

/// `list` indented as the examples are, in lines of at most 78 columns,
/// broken between entries.
fn textwrap_ports(list: &str) -> String {
    let mut lines = vec![String::from("     ")];
    for word in list.split_inclusive(", ") {
        let word = word.trim_end();
        if lines.last().is_some_and(|l| l.len() + 1 + word.len() > 78) {
            lines.push(String::from("     "));
        }
        if let Some(l) = lines.last_mut() {
            l.push(' ');
            l.push_str(word);
        }
    }
    lines.join("\n")
}

const EXAMPLES: &str = "  mocap-top -l 39539 --to 127.0.0.1:39541
      watch VMC on 39539 and pass every datagram on to VSeeFace moved to 39541
  sudo tcpdump -i any -U -w - udp 2>/dev/null | mocap-top -r -
      watch what other programs receive, without taking their ports
      (tcpdump's stderr would write over the screen)
  mocap-top -r take1.pcapng
      a capture at its recorded timing
  mocap-top -r take1.pcapng --svg pose.svg --at 3.5s
      the stick figure of each body stream 3.5 s in, as an SVG (or --at frame:210)
  mocap-top --format json --duration 10s | jq -c 'select(.type==\"top.stream\")'
      one top.stream record per stream every second, then a summary

Keys: Up/Down/PgUp/PgDn/Home/End pick a row, Enter drills down (Tab: next
view), Esc back, / filters, c clears quiet rows, p pauses the screen, w
records to a pcapng, Ctrl-L redraws, ? lists the keys, q or Ctrl-C quits.";

/// The whole rig, live, in one terminal: every mocap stream on every port,
/// recognised by content (mocopi, VMC, iFacialMocap, Live Link Face, VRChat
/// OSC, VMT, unknown bytes), one row per listen address, sender and
/// protocol, with rate over the last second, jitter, loss, age and errors;
/// drill down into bones, faces, OSC addresses and trackers. JSON Lines
/// snapshots instead when stdout is not a terminal.
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{}\n\n{}", examples(), mocap_cli::exit::exit_codes_help()))]
struct Args {
    /// UDP address to listen on (repeatable) instead of every protocol's
    /// default port; a bare port listens on all interfaces.
    #[arg(short, long, value_name = "ADDR", value_parser = mocap_cli::addr::parse_listen)]
    listen: Vec<SocketAddr>,

    /// Read datagrams from FILE at its recorded timing instead: a
    /// .pcap/.pcapng capture (also a live one on stdin: `-`), a raw .bin or
    /// hex lines.
    #[arg(short, long, value_name = "FILE", conflicts_with = "listen")]
    read: Option<PathBuf>,

    /// Pass every datagram of the N-th -l address on, unchanged, to the
    /// N-th --to (repeatable; sends are counted, failures logged).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest, requires = "listen")]
    to: Vec<SocketAddr>,

    /// Output format [default: human (the screen) on a terminal, json otherwise].
    #[arg(long, value_enum)]
    format: Option<Format>,

    /// How often JSON mode writes its top.stream records.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = mocap_cli::args::parse_interval)]
    interval: Duration,

    /// Remove a stream from the table once it has sent nothing for DUR
    /// (5s or more: it is quiet after 5 s); the `c` key removes every quiet
    /// one at once.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = parse_expire)]
    expire: Duration,

    /// Write the stick figure (front and side) of every body stream of the
    /// -r capture at --at to FILE as one SVG, and exit.
    #[arg(long, value_name = "FILE", requires_all = ["read", "at"], conflicts_with = "write")]
    svg: Option<PathBuf>,

    /// The moment --svg draws: a time since the capture's first datagram
    /// (3.5s, 1500ms) or each body stream's N-th body frame, counted from 0
    /// (frame:1200).
    #[arg(long, value_name = "WHEN", value_parser = svg::parse_at, requires = "svg")]
    at: Option<svg::At>,

    #[command(flatten)]
    record: WriteArgs,

    #[command(flatten)]
    allow: mocap_cli::allow::AllowArgs,

    #[command(flatten)]
    stop: StopArgs,

    #[command(flatten)]
    log: LogArgs,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

/// `--expire`: a duration of at least [`state::QUIET`].
fn parse_expire(text: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    let d = mocap_cli::args::parse_duration(text)?;
    if d < state::QUIET {
        return Err(mocap_cli::args::ValueError(format!(
            "{text:?} is too short: 5s or more (a stream is quiet after 5 s)"
        )));
    }
    Ok(d)
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    exit(start(args), run::TOOL)
}

fn start(args: Args) -> anyhow::Result<()> {
    if let (Some(out), Some(at), Some(read)) = (&args.svg, args.at, &args.read) {
        return svg::write(&svg::Request {
            read: read.clone(),
            out: out.clone(),
            at,
        });
    }
    if args.to.len() > args.listen.len() {
        return Err(UsageError(format!(
            "{} --to for {} -l: each --to passes on the -l address in the same place",
            args.to.len(),
            args.listen.len()
        ))
        .into());
    }
    let terminal = std::io::stdout().is_terminal();
    let screen = match args.format {
        Some(Format::Json) => false,
        Some(Format::Human) if !terminal => {
            return Err(UsageError(
                "--format human draws a screen: stdout must be a terminal (use --format json in a pipe)"
                    .into(),
            )
            .into());
        }
        Some(Format::Human) => true,
        None => terminal,
    };
    run::run(&run::Options {
        listen: args.listen,
        read: args.read,
        to: args.to,
        screen,
        interval: args.interval,
        expire: args.expire,
        write: args.record.write,
        record_refused: args.record.record_refused,
        allow: args.allow,
        stop: args.stop,
        log: args.log,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn expire_is_at_least_the_quiet_time() {
        use std::time::Duration;
        assert_eq!(super::parse_expire("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(super::parse_expire("2m"), Ok(Duration::from_secs(120)));
        for bad in ["0", "4.9s", "100ms", "x"] {
            assert!(super::parse_expire(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
