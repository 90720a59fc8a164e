//! `motion-stream`: live motion as a DLP3D stream (protobuf over WebSocket),
//! and DLP3D streams dumped as JSON Lines.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use mocap_cli::prelude::*;
use mocap_core::dlp3d::{self, Dtype, Request, Rig};

/// The tool's name, as it prefixes log lines.
const TOOL: &str = "motion-stream";

mod dump;
mod framing;
mod http;
mod records;
mod serve;
mod ws;

const EXAMPLES: &str = "\
Examples:
  motion-stream serve
      VMC on 0.0.0.0:39539 in, DLP3D streams on ws://127.0.0.1:8765/api/v4/…
      (this machine only), a live viewer at http://127.0.0.1:8765/
  motion-stream serve -l 0.0.0.0:8765 --token auto
      serve the network; the printed viewer URL carries the token
  motion-stream serve --token auto --allow-origin https://app.example:8080
      a web client served from its own origin (give it the token too)
  mocopi-dump -q --vmc 127.0.0.1:39539 & motion-stream serve --segment 20s
      a mocopi suit into a DLP3D client, one 20-second clip after another
  motion-stream serve -l 0.0.0.0:8765 --token auto --max-per-address 4 --head-timeout 2s
      on a shared network: each device holds at most 4 connections, and a
      request head must arrive within 2 s
  motion-stream serve --tls-cert cert.pem --tls-key key.pem -l 0.0.0.0:8443
      wss, as the DLP3D web client dials
  motion-stream dump ws://127.0.0.1:8765/api/v4/text_generate --text hello
      act as the client: every response as a JSON Lines record
  motion-stream dump ws://127.0.0.1:8765/api/v4/text_generate -w take.dlp3d --frames
      record the raw messages while printing matrices and weights
  motion-stream dump -r take.dlp3d --format human
      a recording, read back";

/// Serve live motion (VMC in) as DLP3D motion, face and audio streams over
/// WebSocket, or dump such a stream as JSON Lines.
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
    /// Serve VMC input as DLP3D streams (and a live viewer page).
    Serve(ServeArgs),
    /// Connect as a DLP3D client (or read a recording) and print every message.
    Dump(DumpArgs),
}

/// A token that can stand in a URL unescaped.
fn parse_token(text: &str) -> Result<String, mocap_cli::args::ValueError> {
    let ok = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    if ok {
        Ok(text.to_owned())
    } else {
        Err(mocap_cli::args::ValueError(format!(
            "a token is letters, digits and -._~ (or `auto`), got {text:?}"
        )))
    }
}

/// `scheme://host[:port]`, as browsers send it in `Origin`.
fn parse_origin(text: &str) -> Result<String, mocap_cli::args::ValueError> {
    let t = text.trim_end_matches('/');
    let rest = t
        .strip_prefix("http://")
        .or_else(|| t.strip_prefix("https://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains('/') => Ok(t.to_owned()),
        _ => Err(mocap_cli::args::ValueError(format!(
            "expected an origin such as https://app.example:8080 (scheme, host, port; no path), got {text:?}"
        ))),
    }
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// HTTP/WebSocket address. This machine only by default; -l 0.0.0.0:8765
    /// serves the network (then give --token).
    #[arg(short, long, value_name = "ADDR", default_value = "127.0.0.1:8765", value_parser = mocap_cli::addr::parse_host_port)]
    listen: SocketAddr,

    /// Every page and stream must present this token (`?token=T` in the URL,
    /// or `Authorization: Bearer T`); `auto` makes one and prints the viewer
    /// URL with it. Letters, digits and `-._~` only.
    #[arg(long, value_name = "T|auto", value_parser = parse_token)]
    token: Option<String>,

    /// Also accept WebSocket upgrades from pages of this origin (repeatable),
    /// e.g. https://app.example:8080; without a token, pages of other origins
    /// get 403 (clients that send no Origin, like motion-stream dump, are
    /// always accepted).
    #[arg(long = "allow-origin", value_name = "URL", value_parser = parse_origin)]
    allow_origin: Vec<String>,

    /// VMC (OSC over UDP) input address.
    #[arg(long, value_name = "ADDR", default_value_t = mocap_cli::addr::any_ipv4(mocap_core::vmc::MARIONETTE_PORT), value_parser = mocap_cli::addr::parse_listen)]
    vmc: SocketAddr,

    // --allow applies to VMC senders and to WebSocket/HTTP connections alike.
    #[command(flatten)]
    allow: mocap_cli::allow::AllowArgs,

    /// A connection must finish its request head (and any TLS handshake)
    /// within this long or it is closed, so that idle or trickling
    /// connections cannot hold the server's places; 1ms to 10m.
    #[arg(long, value_name = "DUR", value_parser = parse_head_timeout, default_value = "5s")]
    head_timeout: Duration,

    /// Connections one address may have open at once (pages, handshakes,
    /// streams); more are closed unread, so that one host cannot take the
    /// server's 256 places.
    #[arg(long, value_name = "N", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..))]
    max_per_address: u16,

    /// Joints file: one joint per line, optionally with its parent-relative
    /// rest rotation `qx qy qz qw` (default: Unity's 55 HumanBodyBones at identity).
    #[arg(long, value_name = "FILE")]
    joints: Option<PathBuf>,

    /// `motion_restpose_name` sent with the motion start.
    #[arg(long, value_name = "NAME", default_value = "mocap-tools-humanoid")]
    restpose: String,

    /// Blendshape names, one per line (default: the names seen on the VMC input).
    #[arg(long, value_name = "FILE")]
    blendshapes: Option<PathBuf>,

    /// Scalar type of motion and face bodies.
    #[arg(long, value_enum, default_value = "float32")]
    dtype: DtypeArg,

    /// A WAV file played as the audio stream (else silence), converted to 16 kHz mono.
    #[arg(long, value_name = "FILE.wav")]
    audio: Option<PathBuf>,

    /// End each client's streams after this long (DLP3D clients expect
    /// finite clips); 100ms to 24h.
    #[arg(long, value_name = "DUR", value_parser = parse_segment)]
    segment: Option<Duration>,

    /// Input silent this long ends the streaming clients' streams; 1ms to 1h.
    #[arg(long, value_name = "DUR", value_parser = parse_idle, default_value = "1s")]
    idle: Duration,

    /// Messages queued per client before it is dropped as too slow (3 per
    /// frame); 8 to 1000000 (each client's queue is allocated when it
    /// joins, about 50 bytes a message).
    #[arg(long, value_name = "N", default_value_t = 90,
          value_parser = clap::value_parser!(u32).range(8..=1_000_000))]
    queue: u32,

    /// How long the input runs before streams start, so every sender's
    /// blendshape names are in the face start (not with --blendshapes); 0 to 60s.
    #[arg(long, value_name = "DUR", value_parser = parse_learn, default_value = "500ms")]
    learn: Duration,

    /// Resample on the VMC sender's clock (`/VMC/Ext/T` in each frame's
    /// datagram) rather than on arrival times: steadier over Wi-Fi.
    #[arg(long)]
    sender_clock: bool,

    /// TLS certificate chain (PEM): serve wss:// and https://.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,

    /// TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,

    /// Output format of the client records and the summary.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,

    #[command(flatten)]
    stop: StopArgs,

    #[command(flatten)]
    log: LogArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DtypeArg {
    /// IEEE binary32 (recommended).
    Float32,
    /// IEEE binary16 (half the size; jittery).
    Float16,
}

#[derive(Debug, clap::Args)]
struct DumpArgs {
    /// ws://HOST:PORT/api/v4/… or wss://…
    #[arg(
        value_name = "URL",
        required_unless_present = "read",
        conflicts_with = "read"
    )]
    url: Option<String>,

    /// Read recorded messages (length-delimited, as -w writes) instead.
    #[arg(short, long, value_name = "FILE")]
    read: Option<PathBuf>,

    /// Record every message received (length-delimited protobuf).
    #[arg(short, long, value_name = "FILE")]
    write: Option<PathBuf>,

    /// Trust the certificate(s) in this PEM file for wss (e.g. a self-signed server).
    #[arg(long, value_name = "FILE")]
    ca: Option<PathBuf>,

    /// `speech_text` of the start request.
    #[arg(long, value_name = "TEXT", default_value = "")]
    text: String,

    /// `class_name` of the start request.
    #[arg(long, value_name = "CLASS", default_value = dlp3d::class::DIRECT_GENERATION)]
    class: String,

    /// Adapters and ids of the start request: KEY=VALUE with KEY one of asr,
    /// classification, conversation, reaction, tts, voice, face_model, avatar,
    /// user, character, language, agent (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,

    /// Print the frames: per-joint matrices, root, metadata, face weights.
    #[arg(long)]
    frames: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,

    #[command(flatten)]
    stop: StopArgs,

    #[command(flatten)]
    log: LogArgs,
}

fn read_lines(path: &PathBuf) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    let names: Vec<String> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    if names.is_empty() {
        return Err(UsageError(format!("{}: no names in it", path.display())).into());
    }
    Ok(names)
}

const MS: Duration = Duration::from_millis(1);
const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

/// Zero would close every connection before its head.
fn parse_head_timeout(text: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_duration_within(text, MS, 10 * MINUTE, "1ms to 10m")
}

/// Below 100 ms a segment rounds to no 30 fps frame at all.
fn parse_segment(text: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_duration_within(text, 100 * MS, 24 * HOUR, "100ms to 24h")
}

/// Zero would take the input as idle as soon as it arrives: nothing streams.
fn parse_idle(text: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_duration_within(text, MS, HOUR, "1ms to 1h")
}

fn parse_learn(text: &str) -> Result<Duration, mocap_cli::args::ValueError> {
    mocap_cli::args::parse_duration_within(text, Duration::ZERO, MINUTE, "0 to 60s")
}

fn serve(a: ServeArgs) -> anyhow::Result<()> {
    let rig = match &a.joints {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| UsageError(format!("{}: {e}", p.display())))?;
            Rig::parse(&text).map_err(|e| UsageError(format!("{}: {e}", p.display())))?
        }
        None => Rig::humanoid(),
    };
    let audio = match &a.audio {
        Some(p) => {
            let bytes =
                std::fs::read(p).map_err(|e| UsageError(format!("{}: {e}", p.display())))?;
            Some(Arc::new(
                dlp3d::wav_to_pcm16k(&bytes)
                    .map_err(|e| UsageError(format!("{}: {e}", p.display())))?,
            ))
        }
        None => None,
    };
    let tls = match (&a.tls_cert, &a.tls_key) {
        (Some(c), Some(k)) => Some(ws::server_tls(c, k).map_err(UsageError)?),
        _ => None,
    };
    let opts = serve::ServeOptions {
        listen: a.listen,
        vmc: a.vmc,
        session: dlp3d::server::Config {
            rig,
            restpose: a.restpose,
            blendshapes: a.blendshapes.as_ref().map(read_lines).transpose()?,
            dtype: match a.dtype {
                DtypeArg::Float32 => Dtype::F32,
                DtypeArg::Float16 => Dtype::F16,
            },
            audio,
            segment: a.segment,
            idle: a.idle,
            sender_clock: a.sender_clock,
            learn: a.learn,
        },
        queue: usize::try_from(a.queue).unwrap_or(usize::MAX),
        allow: a.allow,
        head_timeout: a.head_timeout,
        max_per_address: usize::from(a.max_per_address),
        access: serve::Access {
            token: match a.token.as_deref() {
                Some("auto") => Some(serve::new_token()?),
                other => other.map(str::to_owned),
            },
            origins: a.allow_origin,
            tls: tls.is_some(),
        },
        tls,
        format: a.format,
        stop: a.stop,
        log: a.log,
    };
    serve::serve(&opts)
}

fn dump(a: DumpArgs) -> anyhow::Result<()> {
    let mut request = Request {
        class_name: a.class,
        speech_text: a.text,
        app_name: "babylon".into(),
        n_channels: 1,
        sample_width: 2,
        frame_rate: 16_000,
        ..Request::default()
    };
    for kv in &a.set {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(UsageError(format!("--set {kv:?}: expected KEY=VALUE")).into());
        };
        let v = v.to_owned();
        match k {
            "asr" => request.asr_adapter = v,
            "classification" => request.classification_adapter = v,
            "conversation" => request.conversation_adapter = v,
            "reaction" => request.reaction_adapter = v,
            "tts" => request.tts_adapter = v,
            "voice" => request.voice_name = v,
            "face_model" => request.face_model = v,
            "avatar" => request.avatar = v,
            "user" => request.user_id = v,
            "character" => request.character_id = v,
            "language" => request.language = v,
            "agent" => request.agent_name = v,
            other => return Err(UsageError(format!("--set: unknown key {other:?}")).into()),
        }
    }
    let opts = dump::DumpOptions {
        url: a.url,
        read: a.read,
        write: a.write,
        ca: a.ca,
        request,
        frames: a.frames,
        format: a.format,
        stop: a.stop,
        log: a.log,
    };
    dump::dump(&opts)
}

fn main() -> ExitCode {
    if let Some(code) = mocap_cli::generate::generated::<Args>() {
        return code;
    }
    let result = match mocap_cli::generate::parse::<Args>().command {
        Command::Serve(a) => serve(a),
        Command::Dump(a) => dump(a),
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

    #[test]
    fn durations_are_held_to_their_ranges() {
        use super::*;
        assert_eq!(parse_head_timeout("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_learn("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_segment("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_idle("1s"), Ok(Duration::from_secs(1)));
        type Parse = fn(&str) -> Result<Duration, mocap_cli::args::ValueError>;
        for (parse, bad, range) in [
            (parse_head_timeout as Parse, "0", "1ms to 10m"),
            (parse_head_timeout, "100h", "1ms to 10m"),
            (parse_segment, "0", "100ms to 24h"),
            (parse_segment, "10ms", "100ms to 24h"),
            (parse_idle, "0", "1ms to 1h"),
            (parse_idle, "nan", "1ms to 1h"),
            (parse_learn, "2h", "0 to 60s"),
            (parse_learn, "-1s", "0 to 60s"),
        ] {
            let e = parse(bad).unwrap_err().0;
            assert!(e.contains(range), "{bad}: {e}");
        }
    }
}
