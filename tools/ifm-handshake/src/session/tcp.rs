//! TCP mode: the phone connects to us; the newest connection wins.

use std::collections::VecDeque;

use mocap_core::cli::{Feed, FeedHandler, Flow, Step};

use super::*;

/// TCP mode: the phone connects to us; frames end in `___iFacialMocap`.
pub(super) fn run_tcp(opts: &Options, listen: SocketAddr) -> anyhow::Result<()> {
    let listener = TcpListener::bind(listen).map_err(|e| {
        let hint = if e.kind() == io::ErrorKind::AddrInUse {
            format!(
                "TCP port {} is already in use by another program",
                listen.port()
            )
        } else {
            format!("failed to listen on TCP {listen}")
        };
        anyhow::Error::new(e).context(hint)
    })?;
    listener.set_nonblocking(true)?;
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
    let mut feed = PhoneFeed::new(listener);
    let mut mode = TcpMode {
        dec,
        commands: command_socket(opts)?,
        handshake: Handshake::new(Transport::Tcp, start, opts.keepalive, Duration::ZERO),
        started: Instant::now(),
        connected: false,
        connections: 0,
    };
    let stopped =
        mocap_core::cli::drive(&mut feed, opts.stop.duration, opts.stats_every(), &mut mode)?;
    mode.handshake.stop();
    mode.act()?;
    if feed.splitter.dropped() > 0 {
        mode.dec.log.info(format_args!(
            "{} over-long frames were dropped",
            feed.splitter.dropped()
        ));
    }
    mode.dec.summary(Some(stopped), Some(mode.connections))
}

/// What the listener and the phone's connection produce.
enum Phone<'a> {
    /// A phone connected (`replaced`: an older connection was dropped for it).
    Connected {
        id: ConnId,
        peer: SocketAddr,
        replaced: bool,
    },
    /// One frame, terminator removed.
    Frame(SocketAddr, &'a [u8]),
    /// The connection ended: closed by the phone (`None`) or failed.
    Disconnected {
        id: ConnId,
        peer: SocketAddr,
        error: Option<io::Error>,
    },
}

/// The listener and at most one connection: the newest, as the handshake
/// rules ([`Handshake::connected`] drops the older one).
struct PhoneFeed {
    listener: TcpListener,
    conn: Option<(TcpStream, SocketAddr, ConnId)>,
    connections: u64,
    splitter: ifm::Splitter,
    buf: Vec<u8>,
    /// Frames split from the last read, not yet handed out.
    frames: VecDeque<Vec<u8>>,
    /// The frame handed out last (items borrow it).
    current: Vec<u8>,
}

impl PhoneFeed {
    fn new(listener: TcpListener) -> Self {
        Self {
            listener,
            conn: None,
            connections: 0,
            splitter: new_splitter(),
            buf: vec![0u8; 64 * 1024],
            frames: VecDeque::new(),
            current: Vec::new(),
        }
    }
}

fn new_splitter() -> ifm::Splitter {
    ifm::Splitter::new(ifm::MAX_FRAME + ifm::TERMINATOR.len())
}

impl Feed for PhoneFeed {
    type Item<'a> = Phone<'a>;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Phone<'_>>> {
        if let (Some(f), Some((_, peer, _))) = (self.frames.pop_front(), &self.conn) {
            self.current = f;
            return Ok(Step::Item(Phone::Frame(*peer, &self.current)));
        }
        match self.listener.accept() {
            Ok((s, peer)) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(POLL))?;
                self.connections += 1;
                let id = self.connections;
                let replaced = self.conn.replace((s, peer, id)).is_some();
                self.splitter = new_splitter();
                self.frames.clear();
                return Ok(Step::Item(Phone::Connected { id, peer, replaced }));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e).context("failed to accept the phone's connection"),
        }
        let Some((stream, peer, id)) = &mut self.conn else {
            std::thread::sleep(wait.min(POLL));
            return Ok(Step::Idle);
        };
        let (peer, id) = (*peer, *id);
        let error = match stream.read(&mut self.buf) {
            Ok(0) => None,
            Ok(n) => {
                let frames = &mut self.frames;
                self.splitter
                    .push(self.buf.get(..n).unwrap_or_default(), &mut |f| {
                        frames.push_back(f.to_vec());
                    });
                return match self.frames.pop_front() {
                    Some(f) => {
                        self.current = f;
                        Ok(Step::Item(Phone::Frame(peer, &self.current)))
                    }
                    None => Ok(Step::Idle),
                };
            }
            Err(e) if net::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                return Ok(Step::Idle);
            }
            Err(e) => Some(e),
        };
        self.conn = None;
        Ok(Step::Item(Phone::Disconnected { id, peer, error }))
    }
}

/// The decoder and the handshake on the run loop.
struct TcpMode<'o> {
    dec: Decoder<'o>,
    commands: UdpSocket,
    handshake: Handshake,
    started: Instant,
    connected: bool,
    connections: u64,
}

impl TcpMode<'_> {
    /// Sends what the handshake asks for (commands only with a phone address).
    /// Its `Drop` of an older connection is already done: the feed keeps the newest only.
    fn act(&mut self) -> anyhow::Result<()> {
        while let Some(a) = self.handshake.poll_action() {
            if let HandshakeAction::Send { command, .. } = a
                && let Some(p) = self.dec.opts.phone_addr(command)
            {
                send(&self.commands, p, command)?;
                if command == Command::StopTcp {
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

impl FeedHandler<PhoneFeed> for TcpMode<'_> {
    fn item(&mut self, item: Phone<'_>) -> anyhow::Result<Flow> {
        match item {
            Phone::Connected { id, peer, replaced } => {
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
                self.handshake.connected(id);
                self.act()?;
            }
            Phone::Frame(peer, f) => {
                self.dec.frame_bytes(Some(peer), Some(unix_now()), f)?;
            }
            Phone::Disconnected { id, peer, error } => {
                match error {
                    None => self.dec.log.info(format_args!(
                        "phone {peer} disconnected; waiting for it to connect again"
                    )),
                    Some(e) => self.dec.log.info(format_args!(
                        "connection from {peer} failed: {e}; waiting for it to connect again"
                    )),
                }
                self.connected = false;
                self.handshake.disconnected(id);
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
        self.dec.summary(None, Some(self.connections))
    }
}
