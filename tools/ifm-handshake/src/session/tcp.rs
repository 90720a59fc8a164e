//! TCP mode: the phone connects to us; the newest connection wins.

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
    let mut dec = Decoder::new(opts, true)?;
    dec.log.info(format_args!(
        "listening on TCP {} for the phone; Ctrl-C to stop",
        listener.local_addr()?
    ));
    let start = opts.start_command(true);
    let phone = opts.phone_addr(start);
    if phone.is_none() {
        dec.log.info(format_args!(
            "no phone given: no start or stop command is sent; waiting for a phone that connects by itself"
        ));
    }
    let commands = command_socket(opts)?;
    let mut pacer = mocap_core::cli::Pacer::new(opts.stop.duration, opts.stats_every());
    let started = Instant::now();
    let mut handshake = Handshake::new(Transport::Tcp, start, opts.keepalive, Duration::ZERO);
    let mut conn: Option<(TcpStream, SocketAddr, ConnId)> = None;
    let mut splitter = ifm::Splitter::new(ifm::MAX_FRAME + ifm::TERMINATOR.len());
    let mut connections = 0u64;
    let mut buf = vec![0u8; 64 * 1024];
    let mut frames: Vec<Vec<u8>> = Vec::new();
    // Sends what the handshake asks for (commands only with a phone address).
    let act = |h: &mut Handshake, dec: &Decoder<'_>| -> anyhow::Result<()> {
        while let Some(a) = h.poll_action() {
            if let HandshakeAction::Send { command, .. } = a
                && let Some(p) = opts.phone_addr(command)
            {
                send(&commands, p, command)?;
                if command == Command::StopTcp {
                    dec.log.info(format_args!("sent the stop command to {p}"));
                } else {
                    dec.log
                        .info(format_args!("sent {:?} to {p}", command.text()));
                }
            }
        }
        Ok(())
    };
    let stopped = loop {
        if let Some(why) = pacer.stopped() {
            break why;
        }
        if opts.stop.count.is_some_and(|n| dec.frames >= n) {
            break Stopped::Count;
        }
        if pacer.stats_due() {
            dec.summary(None, Some(("connections", connections)))?;
        }
        handshake.handle_timeout(started.elapsed());
        act(&mut handshake, &dec)?;
        match listener.accept() {
            Ok((s, peer)) => {
                s.set_nonblocking(false)?;
                s.set_read_timeout(Some(POLL))?;
                connections += 1;
                handshake.connected(connections);
                if conn.is_some() {
                    dec.log.info(format_args!(
                        "phone connected again from {peer}; dropping the old connection"
                    ));
                } else {
                    dec.log.info(format_args!("phone connected from {peer}"));
                }
                // The newest connection wins: the handshake says which to drop.
                while let Some(a) = handshake.poll_action() {
                    if let HandshakeAction::Drop(old) = a
                        && conn.as_ref().is_some_and(|c| c.2 == old)
                    {
                        conn = None;
                    }
                }
                splitter = ifm::Splitter::new(ifm::MAX_FRAME + ifm::TERMINATOR.len());
                conn = Some((s, peer, connections));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e).context("failed to accept the phone's connection"),
        }
        let Some((stream, peer, id)) = &mut conn else {
            std::thread::sleep(POLL);
            continue;
        };
        let (peer, id) = (*peer, *id);
        match stream.read(&mut buf) {
            Ok(0) => {
                dec.log.info(format_args!(
                    "phone {peer} disconnected; waiting for it to connect again"
                ));
                conn = None;
                handshake.disconnected(id);
            }
            Ok(n) => {
                frames.clear();
                splitter.push(buf.get(..n).unwrap_or_default(), &mut |f| {
                    frames.push(f.to_vec())
                });
                for f in &frames {
                    dec.frame_bytes(Some(peer), Some(unix_now()), f)?;
                    if opts.stop.count.is_some_and(|c| dec.frames >= c) {
                        break;
                    }
                }
            }
            Err(e) if net::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                dec.check_silence();
            }
            Err(e) => {
                dec.log.info(format_args!(
                    "connection from {peer} failed: {e}; waiting for it to connect again"
                ));
                conn = None;
                handshake.disconnected(id);
            }
        }
    };
    handshake.stop();
    act(&mut handshake, &dec)?;
    if splitter.dropped() > 0 {
        dec.log.info(format_args!(
            "{} over-long frames were dropped",
            splitter.dropped()
        ));
    }
    dec.summary(Some(stopped), Some(("connections", connections)))
}
