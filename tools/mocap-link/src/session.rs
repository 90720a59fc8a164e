//! The Zenoh side every subcommand shares: `--mode`, `--connect`,
//! `--listen ENDPOINT`, `--zenoh-config FILE`, turned into one Zenoh
//! configuration; and the warning for endpoints that leave this machine
//! without TLS.

use std::path::PathBuf;

use clap::ValueEnum;
use mocap_cli::prelude::*;
use zenoh::Wait as _;

/// A Zenoh error in words for the user: Zenoh ends its messages with the
/// source file and line that raised them (` at /…/endpoint.rs:674.`), which
/// is cut here.
pub(crate) fn said(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    match text.rsplit_once(" at ") {
        Some((words, place)) if place.contains(".rs:") => words.to_owned(),
        _ => text,
    }
}

/// How a session joins the Zenoh network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mode {
    /// Direct links to other peers (found by multicast scouting on a LAN, or
    /// --connect), and to routers.
    Peer,
    /// Through one router only (`mocap-link router`, or zenohd).
    Client,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Peer => "peer",
            Self::Client => "client",
        }
    }
}

/// A Zenoh endpoint as given on the command line: `PROTO/ADDRESS[#…]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Endpoint(pub(crate) String);

/// The transports this build carries.
const PROTOCOLS: [&str; 4] = ["tcp", "udp", "quic", "tls"];

impl Endpoint {
    /// `tcp/host:7447`, `quic/[::1]:7447`, … (the transports of this build).
    pub(crate) fn parse(text: &str) -> Result<Self, mocap_cli::args::ValueError> {
        match text.split_once('/') {
            Some((proto, addr)) if PROTOCOLS.contains(&proto) && !addr.is_empty() => {
                // A malformed one is a usage error now, not a session that
                // fails to open later: Zenoh's own reading of it, and a
                // HOST:PORT address (Zenoh's reading leaves that to the link).
                text.parse::<zenoh::config::EndPoint>().map_err(|e| {
                    mocap_cli::args::ValueError(format!(
                        "not a Zenoh endpoint: {text:?}: {}",
                        said(&e)
                    ))
                })?;
                let e = Self(text.to_owned());
                let port = e.address().rsplit_once(':').map(|(_, p)| p.parse::<u16>());
                if e.host().is_empty()
                    || e.host().contains(char::is_whitespace)
                    || !matches!(port, Some(Ok(_)))
                {
                    return Err(mocap_cli::args::ValueError(format!(
                        "expected PROTO/HOST:PORT, such as tcp/192.168.1.10:7447, got {text:?}"
                    )));
                }
                Ok(e)
            }
            _ => Err(mocap_cli::args::ValueError(format!(
                "expected a Zenoh endpoint such as tcp/192.168.1.10:7447 (tcp, udp, quic or tls), got {text:?}"
            ))),
        }
    }

    fn proto(&self) -> &str {
        self.0.split_once('/').map_or("", |(p, _)| p)
    }

    /// The address part, without `?` metadata or `#` options.
    fn address(&self) -> &str {
        let addr = self.0.split_once('/').map_or("", |(_, a)| a);
        addr.split(['#', '?']).next().unwrap_or(addr)
    }

    /// The host part, without port or brackets.
    fn host(&self) -> &str {
        let addr = self.address();
        let host = match addr.rsplit_once(':') {
            Some((h, _)) => h,
            None => addr,
        };
        host.trim_start_matches('[').trim_end_matches(']')
    }

    /// Whether traffic through it is encrypted: TLS, and QUIC (TLS 1.3 inside).
    fn encrypted(&self) -> bool {
        matches!(self.proto(), "tls" | "quic")
    }

    /// Whether it stays on this machine.
    fn is_loopback(&self) -> bool {
        let h = self.host();
        h == "localhost"
            || h.parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// The Zenoh flags of `publish`, `subscribe` and `router`.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct ZenohArgs {
    /// Connect to this Zenoh endpoint, e.g. tcp/studio.example:7447 (a
    /// router, or a peer that listens); repeatable.
    #[arg(long, value_name = "ENDPOINT", value_parser = Endpoint::parse)]
    pub(crate) connect: Vec<Endpoint>,

    /// Zenoh configuration file (JSON5): TLS certificates, user/password,
    /// access control, scouting (docs/link.md has recipes); the flags here
    /// are applied on top of it.
    #[arg(long, value_name = "FILE")]
    pub(crate) zenoh_config: Option<PathBuf>,

    /// Do not look for peers by multicast on the LAN: only --connect and
    /// --listen (tests, networks where multicast is unwanted).
    #[arg(long)]
    pub(crate) no_multicast: bool,
}

/// Builds the session configuration: the file, then the flags.
///
/// # Errors
/// An unreadable or invalid configuration file.
pub(crate) fn config(
    args: &ZenohArgs,
    mode: &str,
    listen: &[Endpoint],
) -> anyhow::Result<zenoh::Config> {
    let mut config = match &args.zenoh_config {
        Some(path) => zenoh::Config::from_file(path)
            .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), said(&e)))?,
        None => zenoh::Config::default(),
    };
    let set = |config: &mut zenoh::Config, key: &str, value: serde_json::Value| {
        config
            .insert_json5(key, &value.to_string())
            .map_err(|e| anyhow::anyhow!("zenoh configuration {key}: {}", said(&e)))
    };
    // A mode given in the file stays unless a flag asked for one.
    if args.zenoh_config.is_none() || mode != Mode::Peer.name() {
        set(&mut config, "mode", mode.into())?;
    }
    let list =
        |e: &[Endpoint]| serde_json::Value::from(e.iter().map(|e| e.0.clone()).collect::<Vec<_>>());
    if !args.connect.is_empty() {
        set(&mut config, "connect/endpoints", list(&args.connect))?;
    }
    if !listen.is_empty() {
        set(&mut config, "listen/endpoints", list(listen))?;
    }
    if args.no_multicast {
        set(&mut config, "scouting/multicast/enabled", false.into())?;
    }
    // Express samples take a transmit batch each, and Zenoh keeps two per
    // priority: a third datagram of one burst (a VMC sender's bundles of one
    // frame, several senders at once) waits for the link task, and is
    // dropped after 1 ms of a busy CPU. Sixteen small batches absorb a burst
    // and still hold no backlog worth a frame. A size the file sets stays.
    // Zenoh retries a lost router after 1 s, then 2, then every 4: a router
    // back after a restart waited for up to 4 s. Every 250 ms at first and
    // at most each second costs a dead address nothing. A retry section
    // the file has stays.
    if matches!(
        config.get_json("connect/retry").ok().as_deref(),
        None | Some("null")
    ) {
        set(
            &mut config,
            "connect/retry",
            serde_json::json!({
                "period_init_ms": 250,
                "period_max_ms": 1000,
                "period_increase_factor": 2,
            }),
        )?;
    }
    let depth = config.get_json(QUEUE_DEPTH).ok();
    if depth.as_deref() == Some(ZENOH_QUEUE_DEPTH) {
        set(&mut config, QUEUE_DEPTH, BURST_DEPTH.into())?;
    }
    Ok(config)
}

/// The transmit queue of the priority mocap-link publishes at.
const QUEUE_DEPTH: &str = "transport/link/tx/queue/size/interactive_high";
/// Zenoh's default for it, as `get_json` prints it.
const ZENOH_QUEUE_DEPTH: &str = "2";
/// Zenoh's largest queue.
const BURST_DEPTH: u64 = 16;

/// The endpoints a configuration will use (flags and file alike).
///
/// Zenoh takes either a list or a list per mode (`{ peer: [...], router:
/// [...] }`); its own defaults are per mode (a peer listens on `tcp/[::]:0`,
/// every interface), so both shapes are read, the latter for this mode.
fn endpoints(config: &zenoh::Config) -> Vec<Endpoint> {
    let mode = config
        .get_json("mode")
        .ok()
        .and_then(|m| serde_json::from_str::<String>(&m).ok())
        .unwrap_or_else(|| Mode::Peer.name().to_owned());
    let mut all = Vec::new();
    for key in ["connect/endpoints", "listen/endpoints"] {
        let Some(value) = config
            .get_json(key)
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        else {
            continue;
        };
        let list = match value.get(mode.as_str()) {
            Some(for_mode) => for_mode.clone(),
            None => value,
        };
        if let Ok(list) = serde_json::from_value::<Vec<String>>(list) {
            all.extend(list.into_iter().map(Endpoint));
        }
    }
    all
}

/// The endpoints that carry the stream off this machine unencrypted.
pub(crate) fn unencrypted_remote(config: &zenoh::Config) -> Vec<Endpoint> {
    endpoints(config)
        .into_iter()
        .filter(|e| !e.encrypted() && !e.is_loopback())
        .collect()
}

/// Whether the configuration authenticates clients: a user and password
/// (a client's own, or a router's users file), or mutual TLS.
fn authenticates(config: &zenoh::Config) -> bool {
    let set = |k: &str| {
        config
            .get_json(k)
            .ok()
            .is_some_and(|v| v != "null" && v != "false")
    };
    set("transport/auth/usrpwd/user")
        || set("transport/auth/usrpwd/dictionary_file")
        || set("transport/link/tls/enable_mtls")
}

/// The encrypted endpoints off this machine of a configuration that
/// authenticates no client: TLS alone lets anyone with the CA file (every
/// client has it) read the show.
pub(crate) fn unauthenticated_tls(config: &zenoh::Config) -> Vec<Endpoint> {
    if authenticates(config) {
        return Vec::new();
    }
    endpoints(config)
        .into_iter()
        .filter(|e| e.encrypted() && !e.is_loopback())
        .collect()
}

/// Zenoh's low-latency transport: no transmit queue, each sample written
/// to the socket on the thread that sends it, and no time limit on that.
const LOWLATENCY: &str = "transport/unicast/lowlatency";

/// Whether the configuration asks for the low-latency transport, which
/// blocks a sender behind a stalled receiver (docs/link.md).
pub(crate) fn blocks_behind_a_stall(config: &zenoh::Config) -> bool {
    config.get_json(LOWLATENCY).ok().as_deref() == Some("true")
}

/// Opens the session, saying what it is.
///
/// # Errors
/// Zenoh refused the configuration or could not listen or connect.
pub(crate) fn open(config: zenoh::Config, log: &Log) -> anyhow::Result<zenoh::Session> {
    let with_user = config
        .get_json("transport/auth/usrpwd/user")
        .ok()
        .is_some_and(|u| u != "null");
    for e in unencrypted_remote(&config) {
        // User and password authenticate the session, not the stream.
        let how = if with_user {
            "unencrypted (the user and password are checked, but the stream can be read \
             on the way)"
        } else {
            "unencrypted and without authentication"
        };
        log.always(format_args!(
            "warning: {} carries the stream {how} beyond this machine; use tls/… or \
             quic/… with a --zenoh-config (docs/link.md)",
            e.0
        ));
    }
    for e in unauthenticated_tls(&config) {
        log.always(format_args!(
            "warning: {} is encrypted but authenticates no one: anyone with the CA file can \
             read and publish; add a user and password or mutual TLS (docs/link.md)",
            e.0
        ));
    }
    if blocks_behind_a_stall(&config) {
        log.always(format_args!(
            "warning: {LOWLATENCY} is on: with a peer that negotiates it too, a \
             stalled receiver blocks this process (no frames dropped, a backlog \
             sent late) instead of Zenoh dropping samples (docs/link.md)"
        ));
    }
    let session = zenoh::open(config).wait().map_err(|e| {
        let e = anyhow::anyhow!(said(&e));
        // Zenoh says the same when the router refused the user or its
        // password as when it was not there: say both.
        if with_user {
            e.context(
                "failed to open the Zenoh session: the router refused this user or its \
                 password (check --zenoh-config against the router's users file), or it \
                 could not be reached (check --connect and that it listens)",
            )
        } else {
            e.context("failed to open the Zenoh session")
        }
    })?;
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The configuration `config` builds from a file holding `text`.
    fn from_file(name: &str, text: &str) -> zenoh::Config {
        let dir = std::env::temp_dir().join(format!("link-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("zenoh.json5");
        std::fs::write(&file, text).unwrap();
        let args = ZenohArgs {
            zenoh_config: Some(file),
            ..ZenohArgs::default()
        };
        let c = config(&args, "peer", &[]).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        c
    }

    /// Issue 58: after a router restart the first fresh frame came 2.4 s
    /// later: Zenoh tries a lost router again after 1, 2, then 4 s. Ours
    /// try every 250 ms at first, at most a second apart; a file's values
    /// stay.
    #[test]
    fn a_lost_router_is_tried_again_within_a_second() {
        let c = config(&ZenohArgs::default(), "client", &[]).unwrap();
        let retry = |c: &zenoh::Config, k: &str| {
            let all: serde_json::Value =
                serde_json::from_str(&c.get_json("connect/retry").unwrap()).unwrap();
            all[k].as_f64().unwrap()
        };
        assert_eq!(retry(&c, "period_init_ms"), 250.0);
        assert_eq!(retry(&c, "period_max_ms"), 1000.0);
        let c = from_file(
            "retry",
            "{ connect: { retry: { period_init_ms: 5000, period_max_ms: 9000 } } }",
        );
        assert_eq!(retry(&c, "period_init_ms"), 5000.0);
        assert_eq!(retry(&c, "period_max_ms"), 9000.0);
    }

    /// Issue 58: TLS alone authenticates no client (every client has the
    /// CA file); a configuration with TLS and no user/password or mutual
    /// TLS is warned about, one with either is not.
    #[test]
    fn tls_without_client_authentication_is_warned_about() {
        let tls = from_file("tls", r#"{ listen: { endpoints: ["tls/0.0.0.0:7447"] } }"#);
        assert_eq!(
            unauthenticated_tls(&tls),
            [Endpoint("tls/0.0.0.0:7447".into())]
        );
        let with_users = from_file(
            "tls-users",
            r#"{ listen: { endpoints: ["tls/0.0.0.0:7447"] },
                 transport: { auth: { usrpwd: { dictionary_file: "users.txt" } } } }"#,
        );
        assert!(unauthenticated_tls(&with_users).is_empty());
        let mtls = from_file(
            "mtls",
            r#"{ listen: { endpoints: ["tls/0.0.0.0:7447"] },
                 transport: { link: { tls: { enable_mtls: true } } } }"#,
        );
        assert!(unauthenticated_tls(&mtls).is_empty());
        let local = from_file(
            "tls-local",
            r#"{ listen: { endpoints: ["tls/127.0.0.1:7447"] } }"#,
        );
        assert!(unauthenticated_tls(&local).is_empty());
    }

    #[test]
    fn zenoh_errors_lose_their_source_location() {
        let e = "Invalid Key Expr `a//b`: empty chunks are forbidden at /root/.cargo/registry/src/x/zenoh-keyexpr-1.10.2/src/key_expr/borrowed.rs:777.";
        assert_eq!(
            said(&e),
            "Invalid Key Expr `a//b`: empty chunks are forbidden"
        );
        assert_eq!(said(&"looked at it"), "looked at it");
    }

    #[test]
    fn endpoints_name_a_transport_of_this_build() {
        assert!(Endpoint::parse("tcp/127.0.0.1:7447").is_ok());
        assert!(Endpoint::parse("quic/[::1]:7447").is_ok());
        assert!(Endpoint::parse("tls/studio.example:7447#iface=eth0").is_ok());
        for bad in [
            "127.0.0.1:7447",
            "ws/host:80",
            "tcp/",
            "serial/dev",
            "tcp/host",
            "tcp/:7447",
            "tcp/a b:7447",
            "tcp/host:7447#",
            "tcp/host:99999",
            "quic/[::1]",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_plain_endpoints_off_this_machine_are_warned_about() {
        let args = ZenohArgs {
            connect: vec![
                Endpoint::parse("tcp/127.0.0.1:7447").unwrap(),
                Endpoint::parse("tcp/[::1]:7447").unwrap(),
                Endpoint::parse("tls/studio.example:7447").unwrap(),
                Endpoint::parse("quic/203.0.113.5:7447").unwrap(),
                Endpoint::parse("tcp/203.0.113.5:7447").unwrap(),
            ],
            ..ZenohArgs::default()
        };
        let listen = [Endpoint::parse("udp/0.0.0.0:7447").unwrap()];
        let c = config(&args, "client", &listen).unwrap();
        let warned: Vec<String> = unencrypted_remote(&c).into_iter().map(|e| e.0).collect();
        assert_eq!(warned, ["tcp/203.0.113.5:7447", "udp/0.0.0.0:7447"]);
    }

    /// Zenoh's defaults are per mode: a peer listens on every interface,
    /// a router on port 7447 of every interface; both are told.
    #[test]
    fn the_default_listeners_of_a_peer_and_a_router_are_warned_about() {
        let warned = |mode: &str| -> Vec<String> {
            let c = config(&ZenohArgs::default(), mode, &[]).unwrap();
            unencrypted_remote(&c).into_iter().map(|e| e.0).collect()
        };
        assert_eq!(warned("peer"), ["tcp/[::]:0"]);
        assert_eq!(warned("router"), ["tcp/[::]:7447"]);
        assert!(warned("client").is_empty());
        // A file's lists per mode: the one for this mode.
        let c = from_file(
            "permode",
            "{ listen: { endpoints: { peer: [\"tcp/192.0.2.7:7447\"], router: [\"tcp/127.0.0.1:7447\"] } } }",
        );
        let warned: Vec<String> = unencrypted_remote(&c).into_iter().map(|e| e.0).collect();
        assert_eq!(warned, ["tcp/192.0.2.7:7447"]);
    }

    #[test]
    fn bursts_get_a_deep_queue_unless_the_file_sets_one() {
        let c = config(&ZenohArgs::default(), "peer", &[]).unwrap();
        assert_eq!(c.get_json(QUEUE_DEPTH).unwrap(), "16");
        let c = from_file(
            "queue",
            "{ transport: { link: { tx: { queue: { size: { interactive_high: 4 } } } } } }",
        );
        assert_eq!(c.get_json(QUEUE_DEPTH).unwrap(), "4");
    }

    #[test]
    fn the_low_latency_transport_is_told_apart() {
        let c = config(&ZenohArgs::default(), "peer", &[]).unwrap();
        assert!(!blocks_behind_a_stall(&c));
        let c = from_file(
            "lowlat",
            "{ transport: { unicast: { lowlatency: true, qos: { enabled: false } } } }",
        );
        assert!(blocks_behind_a_stall(&c));
    }

    /// docs/link.md's recipe for a shorter freeze after a stall: Zenoh
    /// takes the keys (its TCP links then set the sockets' sizes).
    #[test]
    fn the_fixed_tcp_buffers_recipe_is_a_valid_configuration() {
        let c = from_file(
            "bufs",
            "{ transport: { link: { tcp: { so_sndbuf: 131072, so_rcvbuf: 131072 } } } }",
        );
        for key in ["so_sndbuf", "so_rcvbuf"] {
            let got = c.get_json(&format!("transport/link/tcp/{key}")).unwrap();
            assert_eq!(got, "131072", "{key}");
        }
        assert_eq!(
            c.get_json(QUEUE_DEPTH).unwrap(),
            "16",
            "the queue default stays"
        );
    }
}
