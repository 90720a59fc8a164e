//! `mocap-dump`: sniff and decode any protocol of the registry by content.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use mocap_cli::args::ValueError;
use mocap_cli::prelude::*;
use mocap_core::protocol::Protocol;

mod dump;

const EXAMPLES: &str = "\
Examples:
  mocap-dump
      listen on every protocol's default port (those another program holds are
      skipped, and said), one line per datagram, named by what it is
  mocap-dump -r captures/openseeface/face-32fps.pcap --format json
      a capture, JSON Lines: a `frame` record per datagram with its decoded values
  mocap-dump -l 11573 --vmc 127.0.0.1:39539
      OpenSeeFace's tracker to a VMC receiver (blinks; a status line every 5 s)
  mocap-dump --ask 192.168.1.23 --vmc 127.0.0.1:39539
      ask the phone's apps to stream here (iFacialMocap's start command, resent
      while no frame comes), bridged to VMC perfect sync
  mocap-dump -l 127.0.0.1:0 --protocol ifacialmocap --ask 127.0.0.1:49983
      one protocol only, asked from an ephemeral port (a phone emulator here)
  mocap-dump -w take1.pcapng --duration 2m
      record two minutes of whatever arrives while decoding it";

/// Sniff and decode every protocol the toolkit knows (mocopi, VMC/OSC,
/// VRChat OSC, VMT, iFacialMocap, Live Link Face, OpenSeeFace, …), each
/// datagram recognised by its content: one line or JSON record per
/// datagram with its decoded values, stream health per sender and
/// protocol, faces bridged to VMC; apps that stream only when asked are
/// asked (--ask).
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help()))]
struct Args {
    /// UDP address to listen on (repeatable; a bare port listens on every
    /// interface) [default: every default port of --protocol, or of every
    /// protocol; ports another program holds are skipped].
    #[arg(short, long, value_name = "ADDR", value_parser = mocap_cli::addr::parse_listen)]
    listen: Vec<SocketAddr>,

    /// Read datagrams from FILE instead: a .pcap/.pcapng capture, a raw
    /// one-datagram .bin, or hex lines (one datagram per line); `-` is stdin.
    #[arg(short, long, value_name = "FILE", conflicts_with_all = ["listen", "ask", "answer"])]
    read: Option<PathBuf>,

    /// Decode every datagram as this protocol instead of recognising each
    /// by its content; also the default ports to listen on.
    #[arg(long, value_name = "KEY", value_parser = protocol_parser())]
    protocol: Option<Protocol>,

    /// Output format: human (one line per datagram: protocol, frame, what it
    /// carries, sender) or json (`frame`, `error`, `stats`, `summary`)
    /// [default: human; with --vmc, none: a status line every
    /// --stats-interval (default 5s) on stderr instead of a line per datagram].
    #[arg(long, value_enum)]
    format: Option<Format>,

    /// Also send every face (of a protocol that has one) as VMC perfect
    /// sync to HOST:PORT (repeatable).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest)]
    vmc: Vec<SocketAddr>,

    /// Ask the app on HOST to stream here, for protocols whose sender must
    /// be asked (phone apps: iFacialMocap, …): each protocol's request to
    /// its own port, or to PORT (the protocol whose port it is, else every
    /// one; --protocol chooses). Sent from the port listened on, again as
    /// the protocol needs.
    #[arg(long, value_name = "HOST[:PORT]", value_parser = parse_ask)]
    ask: Option<AskArg>,

    /// Stand in for the program senders stream to, for protocols whose
    /// sender streams only once answered (SlimeVR trackers: their handshake,
    /// feature flags and sensor states answered and a heartbeat every half
    /// second, as the SlimeVR server does). Not beside the real server.
    #[arg(long)]
    answer: bool,

    /// Also send every tracker slot's rotation (a protocol whose row
    /// carries trackers: SlimeVR's sensors) as a VMT tracker to HOST:PORT
    /// (SteamVR's VMT driver listens on 39570), one index per sender and
    /// slot from --vmt-base, standing in a row 0.25 m apart (repeatable).
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest)]
    vmt: Vec<SocketAddr>,

    /// The first VMT index --vmt uses (0–57).
    #[arg(long, value_name = "BASE", default_value_t = 0, requires = "vmt",
          value_parser = clap::value_parser!(u8).range(..=i64::from(mocap_core::vmc::trackers::VMT_MAX_INDEX)))]
    vmt_base: u8,

    #[command(flatten)]
    face: mocap_cli::args::FaceArgs,

    #[command(flatten)]
    common: mocap_cli::dump::DumpArgs,

    #[command(flatten)]
    smooth: mocap_cli::args::SmoothArgs,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

/// `--ask HOST[:PORT]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AskArg {
    host: IpAddr,
    port: Option<u16>,
}

/// `--protocol`: the registry's keys, so completions offer them.
fn protocol_parser() -> impl clap::builder::TypedValueParser<Value = Protocol> {
    PossibleValuesParser::new(Protocol::ALL.map(Protocol::key))
        .try_map(|k| Protocol::from_key(&k).ok_or_else(|| ValueError(format!("no protocol {k}"))))
}

/// A host alone (its port is each protocol's own) or HOST:PORT.
fn parse_ask(text: &str) -> Result<AskArg, ValueError> {
    let t = text.trim();
    if let Ok(host) = t.trim_start_matches('[').trim_end_matches(']').parse() {
        return Ok(AskArg { host, port: None });
    }
    if t.contains(':') {
        let a = mocap_cli::addr::parse_dest(t)?;
        return Ok(AskArg {
            host: a.ip(),
            port: Some(a.port()),
        });
    }
    // A name: resolved as an address flag resolves it.
    let a = mocap_cli::addr::parse_host_port(&format!("{t}:1"))
        .map_err(|e| ValueError(e.0.replace(":1", "")))?;
    Ok(AskArg {
        host: a.ip(),
        port: None,
    })
}

/// Which protocols `--ask` asks, and where: `--protocol`'s when given, else
/// every protocol that must be asked, each at its own port. A PORT given
/// that is one of them's own asks that one; any other PORT (an emulator's,
/// an app moved) gets every protocol's request, which the others' apps
/// ignore, so one command covers whichever app listens there.
fn asked(ask: AskArg, forced: Option<Protocol>) -> Result<Vec<(Protocol, SocketAddr)>, UsageError> {
    let askable: Vec<Protocol> = Protocol::ALL
        .into_iter()
        .filter(|p| p.spec().ask.is_some())
        .collect();
    let keys = || {
        askable
            .iter()
            .map(|p| p.key())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen = match forced {
        Some(p) if askable.contains(&p) => vec![p],
        Some(p) => {
            return Err(UsageError(format!(
                "--ask: {} streams without being asked (asked are: {})",
                p.key(),
                keys()
            )));
        }
        None => {
            let own: Vec<Protocol> = askable
                .iter()
                .copied()
                .filter(|p| {
                    ask.port
                        .is_some_and(|port| p.spec().ask.is_some_and(|a| a.port == port))
                })
                .collect();
            if own.len() == 1 { own } else { askable }
        }
    };
    Ok(chosen
        .into_iter()
        .filter_map(|p| {
            let port = ask.port.or_else(|| p.spec().ask.map(|a| a.port))?;
            Some((p, SocketAddr::new(ask.host, port)))
        })
        .collect())
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    exit(run(args), dump::TOOL)
}

fn run(args: Args) -> anyhow::Result<()> {
    if args.smooth.smooth && args.vmc.is_empty() {
        return Err(
            UsageError("--smooth smooths what --vmc sends: give --vmc HOST:PORT".into()).into(),
        );
    }
    let ask = match args.ask {
        Some(a) => asked(a, args.protocol)?,
        None => Vec::new(),
    };
    let input = match args.read {
        Some(path) => dump::In::Read(path),
        None if args.listen.is_empty() => dump::In::Listen {
            addrs: dump::default_listen(args.protocol),
            given: false,
        },
        None => dump::In::Listen {
            addrs: args.listen,
            given: true,
        },
    };
    let opts = dump::Options {
        input,
        protocol: args.protocol,
        common: args.common,
        // Bridging is a background job: no line per datagram unless asked.
        mode: mocap_cli::dump::Mode::resolve(
            args.format,
            !args.vmc.is_empty() || !args.vmt.is_empty(),
        ),
        vmc: (!args.vmc.is_empty()).then(|| dump::VmcOut {
            to: args.vmc,
            face: args.face.options(),
            smooth: args.smooth.options(),
        }),
        ask,
        vmt: (!args.vmt.is_empty()).then_some((args.vmt, args.vmt_base)),
        answer: args.answer.then(|| match args.protocol {
            Some(p) => vec![p],
            None => Protocol::ALL.to_vec(),
        }),
    };
    dump::run(&opts)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        Args::command().debug_assert();
    }

    #[test]
    fn ask_takes_a_host_or_host_and_port() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            parse_ask("192.168.1.23").unwrap(),
            AskArg {
                host: ip("192.168.1.23"),
                port: None
            }
        );
        assert_eq!(parse_ask("[::1]").unwrap().host, ip("::1"));
        assert_eq!(parse_ask("127.0.0.1:21412").unwrap().port, Some(21412));
        assert_eq!(parse_ask("localhost").unwrap().port, None);
        assert!(parse_ask("127.0.0.1:0").is_err());
        assert!(parse_ask("127.0.0.1:99999").is_err());
    }

    #[test]
    fn ask_chooses_the_protocols_asked() {
        let host = "10.0.0.2".parse().unwrap();
        let to = |p: u16| SocketAddr::new(host, p);
        let ifm = mocap_core::ifm::PHONE_PORT;
        let all = asked(AskArg { host, port: None }, None).unwrap();
        assert!(all.contains(&(Protocol::IFacialMocap, to(ifm))), "{all:?}");
        assert!(all.iter().all(|(p, _)| p.spec().ask.is_some()));
        let forced = AskArg {
            host,
            port: Some(4000),
        };
        assert_eq!(
            asked(forced, Some(Protocol::IFacialMocap)).unwrap(),
            [(Protocol::IFacialMocap, to(4000))]
        );
        let e = asked(forced, Some(Protocol::Mocopi)).unwrap_err().0;
        assert!(e.contains("mocopi streams without being asked"), "{e}");
        // A port of no protocol: every asked protocol's request goes there.
        let any = asked(forced, None).unwrap();
        assert_eq!(any.len(), all.len());
        assert!(any.iter().all(|(_, a)| *a == to(4000)));
        // A protocol's own port: that protocol only.
        let own = AskArg {
            host,
            port: Some(ifm),
        };
        assert_eq!(
            asked(own, None).unwrap(),
            [(Protocol::IFacialMocap, to(ifm))]
        );
    }
}
