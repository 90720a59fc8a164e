//! Bake mode: the recorded animation, fetched over TCP.

use mocap_cli::prelude::*;

use super::feed::{Tcp, TcpFeed};

use anyhow::{Context as _, bail};

use super::{
    BAKE_STALL, Command, Log, MAX_RECORDING, Options, Output, OutputFormat, RecordingRecord,
    Stopped, TOOL, command_socket, phone_guard, round3, send,
};
use mocap_cli::net;
use mocap_core::ifm;
use std::fs;
use std::net::SocketAddr;
use std::net::UdpSocket;
use std::path::PathBuf;
use std::time::Instant;

/// Bake mode: ask for the recorded animation and receive it on TCP.
pub(super) fn run_bake(
    opts: &Options,
    listen: SocketAddr,
    out_path: Option<&PathBuf>,
) -> anyhow::Result<()> {
    let listener =
        net::listen_tcp(listen).with_context(|| format!("failed to listen on TCP {listen}"))?;
    let log = Log::new(TOOL, opts.log.quiet, true);
    log.info(format_args!(
        "listening on TCP {} for the recording",
        listener.local_addr()?
    ));
    let Some(phone) = opts.phone_addr(Command::Bake) else {
        bail!("--bake needs the phone's address (PHONE_HOST)");
    };
    let mut bake = Bake {
        opts,
        log: &log,
        commands: command_socket(opts)?,
        phone,
        last_send: None,
        last_byte: None,
        data: Vec::new(),
    };
    // The phone's connection is kept: a stray connection must not cut the recording.
    // Only the phone (and --allow) may deliver it.
    let guard = phone_guard(opts, Some(phone), &log);
    let mut feed = TcpFeed::new(listener).first_wins().guarded(guard);
    let stopped = drive(&mut feed, opts.stop.duration, None, &mut bake)?;
    if matches!(stopped, Stopped::Interrupted | Stopped::Duration) {
        if bake.last_byte.is_none() {
            log.always(format_args!("stopped before the phone sent a recording"));
        } else {
            log.always(format_args!(
                "stopped with the recording incomplete ({} bytes received)",
                bake.data.len()
            ));
        }
        return Ok(());
    }
    let data = bake.data;
    let term = ifm::TERMINATOR.as_bytes();
    let frames = ifm::parse_recording(&data)?;
    let bad = frames
        .iter()
        .filter(|f| ifm::parse(f.as_bytes()).is_err())
        .count();
    let json = data.strip_suffix(term).unwrap_or(&data);
    if let Some(path) = out_path {
        fs::write(path, json).with_context(|| format!("failed to write {}", path.display()))?;
    }
    let duration = frames.len() as f64 / ifm::RECORDING_FPS;
    let mut out = Output::stdout(false);
    match opts.format {
        OutputFormat::Json => out.json(&RecordingRecord {
            kind: "ifm.recording",
            frames: frames.len(),
            bad_frames: bad,
            duration_s: round3(duration),
            bytes: json.len(),
            out: out_path.map(|p| p.display().to_string()),
        })?,
        _ => out.text(format_args!(
            "recording: {} frames ({bad} unreadable), {duration:.2} s at 60 fps, {} bytes{}\n",
            frames.len(),
            json.len(),
            out_path.map_or_else(String::new, |p| format!(", written to {}", p.display()))
        ))?,
    }
    out.flush()?;
    Ok(())
}

/// Fetching the recording on the run loop: the bake command is re-sent every
/// `--keepalive` until the phone connects; the recording ends at the
/// terminator or when the phone closes.
struct Bake<'o> {
    opts: &'o Options,
    log: &'o Log,
    commands: UdpSocket,
    phone: SocketAddr,
    last_send: Option<Instant>,
    /// When the last byte came (`None`: the phone has not connected yet).
    last_byte: Option<Instant>,
    data: Vec<u8>,
}

impl FeedHandler<TcpFeed> for Bake<'_> {
    fn item(&mut self, item: Tcp<'_>) -> anyhow::Result<Flow> {
        match item {
            Tcp::Connected { .. } => self.last_byte = Some(Instant::now()),
            Tcp::Data { bytes, .. } => {
                self.last_byte = Some(Instant::now());
                self.data.extend_from_slice(bytes);
                if self.data.len() > MAX_RECORDING {
                    bail!("the recording is larger than {MAX_RECORDING} bytes");
                }
                if self.data.ends_with(ifm::TERMINATOR.as_bytes()) {
                    return Ok(Flow::Stop(Stopped::EndOfInput));
                }
            }
            Tcp::Closed { error: None, .. } => return Ok(Flow::Stop(Stopped::EndOfInput)),
            Tcp::Closed { error: Some(e), .. } => {
                return Err(e).context("failed to receive the recording");
            }
        }
        Ok(Flow::Continue)
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        match self.last_byte {
            // Waiting for the phone: the command is re-sent every --keepalive.
            None => {
                if self
                    .last_send
                    .is_none_or(|t| t.elapsed() >= self.opts.keepalive)
                {
                    if send(&self.commands, self.phone, Command::Bake)? {
                        self.log
                            .info(format_args!("sent the bake command to {}", self.phone));
                    } else {
                        self.log.info(format_args!(
                            "{} refused the bake command (ICMP port unreachable: is the app open?); sending it again",
                            self.phone
                        ));
                    }
                    self.last_send = Some(Instant::now());
                }
            }
            // A phone that stops sending mid-recording would otherwise hang us.
            Some(t) if t.elapsed() >= BAKE_STALL => bail!(
                "the phone stopped sending the recording ({} bytes received, nothing for {:?})",
                self.data.len(),
                BAKE_STALL
            ),
            Some(_) => {}
        }
        Ok(None)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.last_send
            .filter(|_| self.last_byte.is_none())
            .map(|t| t + self.opts.keepalive)
    }
}
