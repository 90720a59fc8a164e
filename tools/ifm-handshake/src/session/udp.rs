//! UDP mode: frames on the shared source (a socket or a capture), the
//! start command sent and resent as the handshake says.

use super::{
    Datagram, Decoder, ErrorRecord, Handshake, HandshakeAction, Input, InputError, Options,
    OutputFormat, Source, StopArgs, TextInput, Transport, phone_guard, send,
};
use mocap_cli::{Event, FeedHandler, Flow, Stopped};
use mocap_core::ifm;
use std::net::SocketAddr;
use std::net::UdpSocket;
use std::time::Duration;
use std::time::Instant;

/// UDP mode on the shared source: live socket or capture file.
struct UdpMode<'o> {
    dec: Decoder<'o>,
    socket: Option<UdpSocket>,
    phone: Option<SocketAddr>,
    /// When to (re)send the start command; `None` when listening only.
    handshake: Option<Handshake>,
    started: Instant,
    /// A socket or stdin, not a file.
    live: bool,
}

impl UdpMode<'_> {
    /// Sends what the handshake asks for.
    fn act(&mut self) -> anyhow::Result<()> {
        let (Some(socket), Some(phone), Some(h)) = (&self.socket, self.phone, &mut self.handshake)
        else {
            return Ok(());
        };
        while let Some(a) = h.poll_action() {
            if let HandshakeAction::Send { command, again } = a {
                if !send(socket, phone, command)? {
                    self.dec.refused(phone);
                } else if again {
                    self.dec.log.info(format_args!(
                        "no frames yet; sent the start command to {phone} again"
                    ));
                } else {
                    self.dec
                        .log
                        .info(format_args!("sent {:?} to {phone}", command.text()));
                }
            }
        }
        Ok(())
    }
}

impl UdpMode<'_> {
    fn datagram(&mut self, d: Datagram<'_>) -> anyhow::Result<()> {
        let before = self.dec.frames;
        self.dec.frame_bytes(d.src, d.arrival, d.ts, d.payload)?;
        if let Some(h) = &mut self.handshake
            && self.dec.frames > before
        {
            h.frame(self.started.elapsed());
        }
        Ok(())
    }

    fn unreadable(&mut self, e: &InputError) -> anyhow::Result<()> {
        self.dec.sources.get_or_default(None).errors += 1;
        match self.dec.opts.format {
            OutputFormat::Json => {
                self.dec.out.json(&ErrorRecord::from(e))?;
            }
            OutputFormat::Status => {}
            _ => self.dec.out.text(format_args!("error  {e}\n"))?,
        }
        Ok(())
    }
}

impl FeedHandler<Source> for UdpMode<'_> {
    fn item(&mut self, event: Event<'_>) -> anyhow::Result<Flow> {
        match event {
            Event::Datagram(d) => self.datagram(d)?,
            Event::Unreadable(e) => self.unreadable(&e)?,
        }
        Ok(Flow::Continue)
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        self.dec.summary(None, None)
    }

    fn idle(&mut self) -> anyhow::Result<()> {
        // Silence means a live phone went quiet; a paced capture's gap is not news.
        if self.live {
            self.dec.check_silence();
        }
        if let Some(h) = &mut self.handshake {
            h.handle_timeout(self.started.elapsed());
        }
        if let Err(e) = self.act() {
            self.dec.log.info(format_args!("{e:#}"));
        }
        Ok(())
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        let done = {
            self.dec
                .opts
                .stop
                .count
                .is_some_and(|n| self.dec.frames >= n)
        };
        Ok(done.then_some(Stopped::Count))
    }
}

pub(super) fn run_udp(opts: &Options) -> anyhow::Result<()> {
    // Text files hold one frame per line, as the captures of this protocol do.
    let mut source = Source::open_as(&opts.input, TextInput::Literal)?;
    if let Some(path) = &opts.record.write {
        source.record_to(path, ifm::PC_UDP_PORT)?;
    }
    // Sending to a socket from a capture plays it at its recorded timing.
    if opts.vmc.is_some() && !opts.topspeed {
        source.pace_recorded();
    }
    let live = source.is_live();
    let dec = Decoder::new(opts, live)?;
    source.announce(&dec.log);
    let start = opts.start_command(false);
    let phone = if live { opts.phone_addr(start) } else { None };
    let guard = phone_guard(opts, phone, &dec.log);
    source.guard_with(guard.clone());
    let mut dec = dec;
    dec.guard = guard;
    let socket = source.socket();
    let started = Instant::now();
    let handshake = (socket.is_some() && phone.is_some())
        .then(|| Handshake::new(Transport::Udp, start, opts.keepalive, Duration::ZERO));
    if handshake.is_none() && matches!(opts.input, Input::Listen(_)) {
        dec.log.info(format_args!(
            "no phone given: listening only (for apps set to send to this address)"
        ));
    }
    let mut mode = UdpMode {
        dec,
        socket,
        phone,
        handshake,
        started,
        live: source.is_live(),
    };
    mode.act()?;
    // `--count` counts frames here, not datagrams: commands looped back do not count.
    let limits = StopArgs {
        count: None,
        duration: opts.stop.duration,
    };
    let stopped = mocap_cli::run(&mut source, &limits, opts.stats_every(), &mut mode)?;
    mode.dec.log.finish();
    source.finish(&mode.dec.log)?;
    mode.dec.summary(Some(stopped), None)
}
