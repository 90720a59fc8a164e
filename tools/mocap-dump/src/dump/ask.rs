//! `--ask`: each asked protocol's request (its registry row's
//! [`Ask`](mocap_core::protocol::Ask)) sent from a listening socket, since a
//! sender may stream to the request's source address, and sent again as
//! [`Asking`] times it. Every send is counted per destination.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mocap_cli::output::Log;
use mocap_cli::sends::{Receiver, SendCounts, SendRecord};
use mocap_core::protocol::{Asking, Due, Protocol, Resend};
use serde::Serialize;

use super::TOOL;

/// The name a request gives for us, where the protocol takes one.
const NAME: &str = TOOL;

/// One protocol asked of one sender.
struct Asked {
    protocol: Protocol,
    to: SocketAddr,
    from: SocketAddr,
    socket: UdpSocket,
    request: Vec<u8>,
    asking: Asking,
    /// Resent only after silence: a resend is news worth a line.
    quiet_resend: bool,
    counts: SendCounts,
}

/// What `--ask` sent, for the summary.
#[derive(Serialize)]
pub(super) struct AskRecord {
    pub(super) protocol: &'static str,
    pub(super) to: SocketAddr,
    pub(super) from: SocketAddr,
    pub(super) requests: u64,
}

/// Every protocol `--ask` asks.
pub(super) struct Askers(Vec<Asked>);

impl Askers {
    /// Requests to `asked` (protocol and sender), each sent from the socket
    /// listening on its protocol's port (with `-l` given, the first socket),
    /// naming those ports.
    ///
    /// # Errors
    /// No socket to send from (file input).
    pub(super) fn open(
        asked: &[(Protocol, SocketAddr)],
        sockets: &[(SocketAddr, UdpSocket)],
        listen_given: bool,
    ) -> anyhow::Result<Self> {
        let mut all = Vec::new();
        for (p, to) in asked {
            let Some(ask) = p.spec().ask else { continue };
            let (ports, from, socket) = choose(*p, sockets, listen_given)
                .ok_or_else(|| anyhow::anyhow!("--ask needs a socket to listen on"))?;
            all.push(Asked {
                protocol: *p,
                to: *to,
                from,
                socket,
                request: (ask.request)(&ports, NAME),
                asking: Asking::new(ask.resend),
                quiet_resend: matches!(ask.resend, Resend::WhileSilent(_)),
                counts: SendCounts::new(*to, Receiver::App),
            });
        }
        Ok(Self(all))
    }

    /// Sends what is due at `now` (on the run's clock).
    pub(super) fn tick(&mut self, now: Duration, log: &Log) {
        for a in &mut self.0 {
            let Some(due) = a.asking.handle_timeout(now) else {
                continue;
            };
            match a.socket.send_to(&a.request, a.to) {
                Ok(_) => {
                    a.counts.sent(1);
                    match due {
                        Due::First => log.info(format_args!(
                            "asked {} for {} (from {})",
                            a.to,
                            a.protocol.name(),
                            a.from
                        )),
                        Due::Again if a.quiet_resend => log.info(format_args!(
                            "no {} frames yet; asked {} again",
                            a.protocol.name(),
                            a.to
                        )),
                        Due::Again => {}
                    }
                }
                Err(e) => a.counts.failed(&e, log),
            }
        }
    }

    /// A frame of `p` from `src` arrived at `now`: the sender asked is
    /// streaming (frames of the asked host count, from any port).
    pub(super) fn handle_frame(&mut self, p: Protocol, src: Option<SocketAddr>, now: Duration) {
        for a in &mut self.0 {
            if a.protocol == p && src.is_some_and(|s| s.ip() == a.to.ip()) {
                a.asking.handle_frame(now);
            }
        }
    }

    /// When [`tick`](Self::tick) next has a request to send.
    pub(super) fn poll_timeout(&self) -> Option<Duration> {
        self.0.iter().filter_map(|a| a.asking.poll_timeout()).min()
    }

    /// Each destination's send counts.
    pub(super) fn sends(&self) -> impl Iterator<Item = SendRecord> + '_ {
        self.0.iter().map(|a| a.counts.record())
    }

    /// What was asked of whom.
    pub(super) fn records(&self) -> Vec<AskRecord> {
        self.0
            .iter()
            .map(|a| AskRecord {
                protocol: a.protocol.key(),
                to: a.to,
                from: a.from,
                requests: a.counts.record().sent,
            })
            .collect()
    }
}

/// The ports a request for `p` names and the socket it is sent from: with
/// `-l` given, every port listened on and the first socket; on the default
/// ports, `p`'s own (every one, when all of `p`'s were taken).
fn choose(
    p: Protocol,
    sockets: &[(SocketAddr, UdpSocket)],
    listen_given: bool,
) -> Option<(Vec<u16>, SocketAddr, UdpSocket)> {
    let own = |a: &SocketAddr| listen_given || p.default_ports().contains(&a.port());
    let mine: Vec<&(SocketAddr, UdpSocket)> = match sockets.iter().filter(|(a, _)| own(a)).count() {
        0 => sockets.iter().collect(),
        _ => sockets.iter().filter(|(a, _)| own(a)).collect(),
    };
    let (from, socket) = mine.first()?;
    let ports = mine.iter().map(|(a, _)| a.port()).collect();
    Some((ports, *from, socket.try_clone().ok()?))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    fn bound(n: usize) -> Vec<(SocketAddr, UdpSocket)> {
        (0..n)
            .map(|_| {
                let s = UdpSocket::bind("127.0.0.1:0").unwrap();
                (s.local_addr().unwrap(), s)
            })
            .collect()
    }

    #[test]
    fn given_ports_are_all_named_and_the_first_sends() {
        let sockets = bound(2);
        let (ports, from, _) = choose(Protocol::IFacialMocap, &sockets, true).unwrap();
        assert_eq!(ports, [sockets[0].0.port(), sockets[1].0.port()]);
        assert_eq!(from, sockets[0].0);
        // Default ports, none of them the protocol's (taken): all of them.
        let (ports, _, _) = choose(Protocol::IFacialMocap, &sockets, false).unwrap();
        assert_eq!(ports.len(), 2);
        assert!(choose(Protocol::IFacialMocap, &[], true).is_none());
    }
}
