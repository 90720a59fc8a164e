//! `mocap-link`: carry mocap datagrams between sites over Zenoh, unchanged,
//! latest frame first.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use mocap_cli::prelude::*;

mod acl;
mod datagrams;
mod delay;
mod key;
mod publish;
mod router;
mod runtime;
mod session;
mod shared;
mod streams;
mod subscribe;
mod watch;

use session::{Endpoint, Mode, ZenohArgs};

const TOOL: &str = "mocap-link";

const EXAMPLES: &str = "\
Examples:
  mocap-link publish -l 0.0.0.0:12351 --name alice
      a mocopi suit on this LAN, as mocap/default/alice/mocopi, to every
      subscriber on the LAN (peers find each other by multicast)
  mocap-link subscribe --to 127.0.0.1:12351
      every stream of the room, each sender from a socket of its own
  mocap-link publish -l 0.0.0.0:39539 -l 0.0.0.0:12351 --name alice --room show \\
      --mode client --connect tls/studio.example:7447 --zenoh-config home.json5
      a performer at home into the studio's router, over TLS
  mocap-link subscribe --room show --to vmc=127.0.0.1:39539 --to mocopi=127.0.0.1:12351
      at the studio: VMC to VSeeFace, mocopi to mocopi-dump
  mocap-link router -l tcp/0.0.0.0:7447
      a Zenoh router (the same code as zenohd) for sites that cannot reach each other
  mocap-link acl --room show --performer alice --performer bob --watcher studio
      the router's access control: alice and bob publish only as themselves
      (paste it into the router's --zenoh-config, with the users file)
  mocap-link subscribe --room show --to 127.0.0.1:39539 --datagrams 0.0.0.0:7448 \\
      --advertise 203.0.113.7:7448 --mode client --connect tls/router.example:7447
      across a lossy internet path: the samples come by sealed datagrams too
  mocap-link subscribe 'mocap/show/*/vmc' --format json | jq -c .age_ms
      one protocol of every performer, one record per sample

Keys are mocap/<room>/<performer>/<protocol> (mocopi, vmc, ifacialmocap,
livelink, vrchat, vmt or unknown); payloads are the datagrams' bytes,
unchanged; any Zenoh application can subscribe to them (docs/link.md).";

/// Carry any mocap stream between sites over Zenoh: datagrams in on UDP,
/// published unchanged under mocap/<room>/<performer>/<protocol>, and sent
/// on to local UDP receivers at the far end, one source socket per remote
/// sender; real-time delivery (drop, never queue stale frames), health per
/// performer and protocol, and link delay.
#[derive(Debug, Parser)]
#[command(version, after_help = format!("{EXAMPLES}\n\n{}", mocap_cli::exit::exit_codes_help()))]
struct Args {
    #[command(subcommand)]
    command: Command,

    #[command(flatten)]
    _generate: mocap_cli::generate::GenerateArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Publish the datagrams received on UDP addresses.
    Publish(PublishArgs),
    /// Send the samples of a key expression on to local UDP receivers.
    Subscribe(SubscribeArgs),
    /// Run a Zenoh router (as zenohd does) until Ctrl-C.
    Router(RouterArgs),
    /// Print the router's access control for a show: each performer may
    /// publish only under their own user name, watchers see the room.
    Acl(AclArgs),
}

#[derive(Debug, clap::Args)]
struct AclArgs {
    /// The room the rules are for.
    #[arg(long, value_name = "ROOM", default_value = "default", value_parser = key::parse_chunk)]
    room: String,

    /// A user who performs, publishing as `--name` their user name (repeatable).
    #[arg(long, value_name = "USER", value_parser = key::parse_chunk)]
    performer: Vec<String>,

    /// A user who watches the whole room: the studio's subscriber (repeatable).
    #[arg(long, value_name = "USER", value_parser = key::parse_chunk)]
    watcher: Vec<String>,
}

/// `-l`: a UDP address (publish) or a Zenoh endpoint (`PROTO/ADDRESS`).
#[derive(Clone, Debug)]
enum Listen {
    Udp(SocketAddr),
    Zenoh(Endpoint),
}

fn parse_listen(text: &str) -> Result<Listen, mocap_cli::args::ValueError> {
    if text.contains('/') {
        Endpoint::parse(text).map(Listen::Zenoh)
    } else {
        mocap_cli::addr::parse_listen(text).map(Listen::Udp)
    }
}

fn split_listen(all: &[Listen]) -> (Vec<SocketAddr>, Vec<Endpoint>) {
    let mut udp = Vec::new();
    let mut zenoh = Vec::new();
    for l in all {
        match l {
            Listen::Udp(a) => udp.push(*a),
            Listen::Zenoh(e) => zenoh.push(e.clone()),
        }
    }
    (udp, zenoh)
}

#[derive(Debug, clap::Args)]
struct PublishArgs {
    /// Where to listen (repeatable): a UDP address such as 0.0.0.0:39539 for
    /// datagrams to publish, or a Zenoh endpoint such as tcp/0.0.0.0:7447
    /// for other Zenoh sessions to connect to.
    #[arg(short, long, value_name = "ADDR|ENDPOINT", required = true, value_parser = parse_listen)]
    listen: Vec<Listen>,

    /// The performer: the third chunk of the keys.
    #[arg(long, value_name = "PERFORMER", value_parser = key::parse_chunk)]
    name: String,

    /// The room (second chunk of the keys): sessions of one show share it.
    #[arg(long, value_name = "ROOM", default_value = "default", value_parser = key::parse_chunk)]
    room: String,

    /// How this session joins the Zenoh network.
    #[arg(long, value_enum, default_value = "peer")]
    mode: Mode,

    #[command(flatten)]
    zenoh: ZenohArgs,

    #[command(flatten)]
    allow: mocap_cli::allow::AllowArgs,

    /// Output format of the stats and summary (human: status lines on
    /// stderr every --stats-interval, default 5s).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    #[command(flatten)]
    stop: StopArgs,

    #[command(flatten)]
    log: LogArgs,
}

#[derive(Debug, clap::Args)]
struct SubscribeArgs {
    /// Key expression to receive [default: mocap/<room>/**].
    #[arg(value_name = "KEY_EXPR", value_parser = key::parse_key_expr)]
    key: Option<String>,

    /// Send payloads to HOST:PORT (repeatable); `vmc=HOST:PORT` takes one
    /// protocol, `alice=HOST:PORT` one performer, `alice/vmc=HOST:PORT` both.
    #[arg(long, value_name = "[SEL=]HOST:PORT", value_parser = subscribe::Route::parse)]
    to: Vec<subscribe::Route>,

    /// The room whose streams are received, and whose publishers are probed.
    #[arg(long, value_name = "ROOM", default_value = "default", value_parser = key::parse_chunk)]
    room: String,

    /// Samples arriving later than this, against the stream's quickest
    /// lately, are counted and not sent on (a backlog after a stall); 0 sends
    /// everything.
    #[arg(long, value_name = "DUR", default_value = "100ms", value_parser = mocap_cli::args::parse_duration)]
    max_lag: Duration,

    /// Samples larger than this many bytes are counted (`oversize`) and not
    /// sent on: a mocopi frame is 1.6 kB, the largest VMC bundles seen about
    /// 8 kB; a stranger's megabyte samples stop here. 0: no limit.
    #[arg(long, value_name = "BYTES", default_value_t = 16_384)]
    max_size: usize,

    /// Also take the samples as sealed UDP datagrams on this address, each
    /// lost or reordered alone as plain UDP is (Zenoh's transport loses
    /// every sample that a later one overtook): for lossy, reordering
    /// internet paths. Publishers of the room learn the address and key
    /// over Zenoh and send both copies; the first to come is sent on.
    #[arg(long, value_name = "ADDR", value_parser = mocap_cli::addr::parse_listen)]
    datagrams: Option<SocketAddr>,

    /// The address publishers send the datagrams to (this machine's public
    /// address and a forwarded port, say) when it is not --datagrams's own.
    #[arg(long, value_name = "HOST:PORT", value_parser = mocap_cli::addr::parse_dest, requires = "datagrams")]
    advertise: Option<SocketAddr>,

    /// How often to measure the round trip to each publisher; 0: never.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = mocap_cli::args::parse_duration)]
    probe_interval: Duration,

    /// Zenoh endpoint to listen on for other sessions, e.g. tcp/0.0.0.0:7447 (repeatable).
    #[arg(short, long, value_name = "ENDPOINT", value_parser = Endpoint::parse)]
    listen: Vec<Endpoint>,

    /// How this session joins the Zenoh network.
    #[arg(long, value_enum, default_value = "peer")]
    mode: Mode,

    #[command(flatten)]
    zenoh: ZenohArgs,

    /// Output format: human (status lines on stderr every --stats-interval,
    /// default 5s) or json (a link.sample record per sample, stats, summary).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    #[command(flatten)]
    stop: StopArgs,

    #[command(flatten)]
    log: LogArgs,
}

#[derive(Debug, clap::Args)]
struct RouterArgs {
    /// Zenoh endpoint to listen on (repeatable) [default: tcp/[::]:7447].
    #[arg(short, long, value_name = "ENDPOINT", value_parser = Endpoint::parse)]
    listen: Vec<Endpoint>,

    #[command(flatten)]
    zenoh: ZenohArgs,

    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    /// Stop after this long, e.g. 500ms, 10s, 2m.
    #[arg(long, value_name = "DUR", value_parser = mocap_cli::args::parse_duration)]
    duration: Option<Duration>,

    #[command(flatten)]
    log: LogArgs,
}

fn positive(d: Duration) -> Option<Duration> {
    (!d.is_zero()).then_some(d)
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let args: Args = mocap_cli::generate::parse();
    // Before Zenoh (or anything) starts a thread.
    runtime::ensure();
    let result = match args.command {
        Command::Publish(a) => {
            let (udp, listen) = split_listen(&a.listen);
            if udp.is_empty() {
                let e =
                    UsageError("publish needs a UDP address to listen on: -l 0.0.0.0:PORT".into());
                return exit(Err(e.into()), TOOL);
            }
            publish::run(&publish::Options {
                udp,
                room: a.room,
                name: a.name,
                mode: a.mode,
                listen,
                zenoh: a.zenoh,
                allow: a.allow,
                format: a.format,
                stop: a.stop,
                log: a.log,
            })
        }
        Command::Subscribe(a) => {
            if a.to.is_empty() && a.format == Format::Human {
                let e = UsageError(
                    "subscribe sends to local receivers: give --to HOST:PORT (or --format json to only watch)"
                        .into(),
                );
                return exit(Err(e.into()), TOOL);
            }
            subscribe::run(&subscribe::Options {
                key: a
                    .key
                    .unwrap_or_else(|| format!("{}/{}/**", key::ROOT, a.room)),
                room: a.room,
                to: a.to,
                max_lag: positive(a.max_lag),
                max_size: (a.max_size > 0).then_some(a.max_size),
                datagrams: a.datagrams,
                advertise: a.advertise,
                probe: positive(a.probe_interval),
                mode: a.mode,
                listen: a.listen,
                zenoh: a.zenoh,
                format: a.format,
                stop: a.stop,
                log: a.log,
            })
        }
        Command::Acl(a) => {
            if a.performer.is_empty() && a.watcher.is_empty() {
                let e = UsageError("give at least one --performer USER or --watcher USER".into());
                return exit(Err(e.into()), TOOL);
            }
            let show = acl::Show {
                room: a.room,
                performers: a.performer,
                watchers: a.watcher,
            };
            let doc = serde_json::json!({ "access_control": acl::rules(&show) });
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            let mut out = std::io::stdout().lock();
            std::io::Write::write_all(&mut out, format!("{text}\n").as_bytes())
                .map_err(anyhow::Error::from)
        }
        Command::Router(a) => router::run(&router::Options {
            listen: a.listen,
            zenoh: a.zenoh,
            format: a.format,
            duration: a.duration,
            log: a.log,
        }),
    };
    exit(result, TOOL)
}

#[cfg(test)]
mod tests {
    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        super::Args::command().debug_assert();
    }
}
