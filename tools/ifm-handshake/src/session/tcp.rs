//! TCP mode: the phone connects to us; the newest connection wins.

use mocap_cli::prelude::*;

use super::feed::{Tcp, TcpFeed};

use anyhow::Context as _;

use super::{
    Command, Decoder, Handshake, HandshakeAction, Options, Stopped, Transport, command_socket,
    phone_guard, send, unix_time,
};
use mocap_cli::net;
use mocap_core::ifm;
use std::net::SocketAddr;
use std::net::UdpSocket;
use std::time::Duration;
use std::time::Instant;

/// TCP mode: the phone connects to us; frames end in `___iFacialMocap`.
pub(super) fn run_tcp(opts: &Options, listen: SocketAddr) -> anyhow::Result<()> {
    let listener =
        net::listen_tcp(listen).with_context(|| format!("failed to listen on TCP {listen}"))?;
    let dec = Decoder::new(opts, true)?;
    dec.log.info(format_args!(
        "listening on TCP {} for the phone; Ctrl-C to stop",
        listener.local_addr()?
    ));
    let start = opts.start_command(true);
    if opts.phone_addr(start).is_none() {
        dec.log.info(format_args!(
            "no phone given: no start or stop command is sent; waiting for a phone that connects by itself"
        ));
    }
    let mut dec = dec;
    dec.guard = phone_guard(opts, opts.phone_addr(start), &dec.log);
    let mut feed = TcpFeed::new(listener).guarded(dec.guard.clone());
    let mut mode = TcpMode {
        dec,
        commands: command_socket(opts)?,
        handshake: Handshake::new(Transport::Tcp, start, opts.keepalive, Duration::ZERO),
        started: Instant::now(),
        connected: false,
        connections: 0,
        splitter: new_splitter(),
        frames: Vec::new(),
    };
    let stopped = drive(&mut feed, opts.stop.duration, opts.stats_every(), &mut mode)?;
    mode.handshake.stop();
    mode.act()?;
    if mode.splitter.dropped() > 0 {
        mode.dec.log.info(format_args!(
            "{} over-long frames were dropped",
            mode.splitter.dropped()
        ));
    }
    mode.dec
        .summary(Some(stopped), Some(mode.connections), None)
}

fn new_splitter() -> ifm::Splitter {
    ifm::Splitter::new(ifm::MAX_FRAME + ifm::TERMINATOR.len())
}

/// The decoder and the handshake on the run loop.
struct TcpMode<'o> {
    dec: Decoder<'o>,
    commands: UdpSocket,
    handshake: Handshake,
    started: Instant,
    connected: bool,
    connections: u64,
    /// Frames end in the terminator, anywhere in the byte stream.
    splitter: ifm::Splitter,
    /// Frames split from the last read (kept to reuse its allocation).
    frames: Vec<Vec<u8>>,
}

impl TcpMode<'_> {
    /// Sends what the handshake asks for (commands only with a phone address).
    /// Its `Drop` of an older connection is already done: the feed keeps the newest only.
    fn act(&mut self) -> anyhow::Result<()> {
        while let Some(a) = self.handshake.poll_action() {
            if let HandshakeAction::Send { command, .. } = a
                && let Some(p) = self.dec.opts.phone_addr(command)
            {
                if !send(&self.commands, p, command)? {
                    self.dec.refused(p);
                } else if command == Command::StopTcp {
                    self.dec
                        .log
                        .info(format_args!("sent the stop command to {p}"));
                } else {
                    self.dec
                        .log
                        .info(format_args!("sent {:?} to {p}", command.text()));
                }
            }
        }
        Ok(())
    }
}

impl FeedHandler<TcpFeed> for TcpMode<'_> {
    fn item(&mut self, item: Tcp<'_>) -> anyhow::Result<Flow> {
        match item {
            Tcp::Connected { id, peer, replaced } => {
                if replaced {
                    self.dec.log.info(format_args!(
                        "phone connected again from {peer}; dropping the old connection"
                    ));
                } else {
                    self.dec
                        .log
                        .info(format_args!("phone connected from {peer}"));
                }
                self.connected = true;
                self.connections += 1;
                self.splitter = new_splitter();
                self.handshake.handle_connected(id);
                self.act()?;
            }
            Tcp::Data { peer, bytes } => {
                let frames = &mut self.frames;
                frames.clear();
                self.splitter.push(bytes, &mut |f| frames.push(f.to_vec()));
                for f in &self.frames {
                    let now = unix_time();
                    self.dec
                        .frame_bytes(Some(peer), Some(now.as_secs_f64()), Some(now), f)?;
                    // `--count` frames: the rest of this read is not printed.
                    if self
                        .dec
                        .opts
                        .stop
                        .count
                        .is_some_and(|n| self.dec.frames >= n)
                    {
                        return Ok(Flow::Stop(Stopped::Count));
                    }
                }
            }
            Tcp::Closed { id, peer, error } => {
                match error {
                    None => self.dec.log.info(format_args!(
                        "phone {peer} disconnected; waiting for it to connect again"
                    )),
                    Some(e) => self.dec.log.info(format_args!(
                        "connection from {peer} failed: {e}; waiting for it to connect again"
                    )),
                }
                self.connected = false;
                self.handshake.handle_disconnected(id);
            }
        }
        Ok(Flow::Continue)
    }

    fn idle(&mut self) -> anyhow::Result<()> {
        if self.connected {
            self.dec.check_silence();
        }
        Ok(())
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        self.handshake.handle_timeout(self.started.elapsed());
        self.act()?;
        Ok(self
            .dec
            .opts
            .stop
            .count
            .is_some_and(|n| self.dec.frames >= n)
            .then_some(Stopped::Count))
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        self.dec.summary(None, Some(self.connections), None)
    }
}
