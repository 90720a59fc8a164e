//! UDP mode: frames on the shared source (a socket or a capture), the
//! start command sent and resent as the handshake says.

use super::{
    Datagram, Decoder, ErrorRecord, Handshake, HandshakeAction, Input, InputError, Options,
    OutputFormat, Source, StopArgs, TextInput, Transport, phone_guard, send,
};
use mocap_cli::prelude::*;
use mocap_cli::source::Event;
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
        let now = self.dec.now();
        self.dec.activity.datagrams(now, 1);
        let before = self.dec.frames;
        self.dec.frame_bytes(d.src, d.arrival, d.ts, d.payload)?;
        if let Some(h) = &mut self.handshake
            && self.dec.frames > before
        {
            h.handle_frame(self.started.elapsed());
        }
        Ok(())
    }

    fn unreadable(&mut self, e: &InputError) -> anyhow::Result<()> {
        self.dec.sources.get_or_default(&None).errors += 1;
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
        let interval = self.dec.activity.interval(self.dec.now());
        self.dec.summary(None, None, Some(interval))
    }

    fn idle(&mut self) -> anyhow::Result<()> {
        // Silence means a live phone went quiet; a paced capture's gap is not news.
        if self.live {
            self.dec.check_silence();
            // Once: where this socket listens and why nothing may arrive.
            if let Some(silence) = self.dec.activity.silence(self.dec.now()) {
                self.dec.log.info(format_args!("{silence}"));
            }
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

/// Where to listen when the phone is on this machine: a phone emulator there
/// (`pcap-replay --trigger 127.0.0.1:49983`) has the phone's port, which the
/// default address would take too; a free port on the phone's loopback
/// address instead (the emulator answers to the port the command came from).
/// `None`: listen where asked.
fn one_machine_listen(listen: SocketAddr, given: bool, phone: SocketAddr) -> Option<SocketAddr> {
    let clash = listen.port() == phone.port()
        && (listen.ip().is_unspecified() || listen.ip() == phone.ip());
    (!given && phone.ip().is_loopback() && clash).then(|| SocketAddr::new(phone.ip(), 0))
}

pub(super) fn run_udp(opts: &Options) -> anyhow::Result<()> {
    let start = opts.start_command(false);
    let moved = match (&opts.input, opts.phone_addr(start)) {
        (Input::Listen(l), Some(p)) => one_machine_listen(*l, opts.listen_given, p),
        _ => None,
    };
    let input = moved.map_or_else(|| opts.input.clone(), Input::Listen);
    // Text files hold one frame per line, as the captures of this protocol do.
    let mut source = Source::open_as(&input, TextInput::Literal)?;
    if let Some(path) = &opts.record.write {
        source.record_to(
            path,
            ifm::PC_UDP_PORT,
            Log::new(super::TOOL, opts.log.quiet, false),
        )?;
    }
    // Sending to a socket from a capture plays it at its recorded timing.
    if opts.vmc.is_some() && !opts.topspeed {
        source.pace_recorded();
    }
    let live = source.is_live();
    let dec = Decoder::new(opts, live)?;
    if moved.is_some()
        && let (Input::Listen(l), Some(at)) = (&opts.input, source.local_addr())
    {
        dec.log.info(format_args!(
            "the phone is on this machine and has UDP port {}: listening on {at} instead of {l} \
             (-l chooses)",
            l.port()
        ));
    }
    source.announce(&dec.log);
    let phone = if live { opts.phone_addr(start) } else { None };
    let guard = phone_guard(opts, phone, &dec.log);
    source.guard_with(guard.clone());
    let mut dec = dec;
    dec.guard = guard;
    // A socket's silence is explained (a file's or stdin's is the input's own).
    if let (true, Some(at)) = (matches!(input, Input::Listen(_)), source.local_addr()) {
        dec.activity = mocap_cli::status::Activity::new(dec.now(), Some(at));
    }
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
    let stopped = mocap_cli::source::run(&mut source, &limits, opts.stats_every(), &mut mode)?;
    mode.dec.log.finish();
    let recorded = source.finish(&mode.dec.log);
    mode.dec.summary(Some(stopped), None, None)?;
    recorded
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_phone_on_loopback_moves_the_default_listening_port_only() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        let default = a("0.0.0.0:49983");
        assert_eq!(
            one_machine_listen(default, false, a("127.0.0.1:49983")),
            Some(a("127.0.0.1:0"))
        );
        assert_eq!(
            one_machine_listen(a("127.0.0.1:49983"), false, a("127.0.0.1:49983")),
            Some(a("127.0.0.1:0"))
        );
        // Asked for (-l), or no clash, or a real phone: as asked.
        assert_eq!(
            one_machine_listen(default, true, a("127.0.0.1:49983")),
            None
        );
        assert_eq!(
            one_machine_listen(default, false, a("127.0.0.1:40000")),
            None
        );
        assert_eq!(
            one_machine_listen(a("127.0.0.2:49983"), false, a("127.0.0.1:49983")),
            None
        );
        assert_eq!(
            one_machine_listen(default, false, a("192.168.1.23:49983")),
            None
        );
    }
}
