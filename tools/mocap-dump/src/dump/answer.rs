//! `--answer`: stand in for the program a sender streams to, for protocols
//! whose registry row gives an [`Answer`] (SlimeVR trackers stream only to
//! a server that answered their handshake). Replies go out from the socket
//! the sender's datagram came to; sends are counted per destination.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mocap_cli::output::Log;
use mocap_cli::sends::{Receiver, SendCounts, SendRecord};
use mocap_core::protocol::{Answer, Protocol};

/// Destinations counted apart; the rest share the last entry's counts
/// (the answerers bound their own peers).
const MAX_DESTINATIONS: usize = 64;

/// Every protocol `--answer` answers for.
#[derive(Default)]
pub(super) struct Answerers {
    answerers: Vec<(Protocol, Box<dyn Answer>)>,
    sockets: Vec<(SocketAddr, UdpSocket)>,
    /// The local socket each peer was last heard on, bounded as `counts`.
    via: Vec<(SocketAddr, SocketAddr)>,
    counts: Vec<SendCounts>,
}

impl Answerers {
    /// Answerers for `protocols` (those without one are skipped), sending
    /// from `sockets`.
    pub(super) fn open(protocols: &[Protocol], sockets: Vec<(SocketAddr, UdpSocket)>) -> Self {
        let answerers = protocols
            .iter()
            .filter_map(|p| p.spec().answer.map(|make| (*p, make())))
            .collect();
        Self {
            answerers,
            sockets,
            ..Self::default()
        }
    }

    /// A datagram of `p` from `src` came to `dst` at `now`.
    pub(super) fn handle_datagram(
        &mut self,
        p: Protocol,
        src: Option<SocketAddr>,
        dst: Option<SocketAddr>,
        payload: &[u8],
        now: Duration,
    ) {
        let Some(src) = src else { return };
        let Some((_, a)) = self.answerers.iter_mut().find(|(q, _)| *q == p) else {
            return;
        };
        a.handle_datagram(now, src, payload);
        if let Some(dst) = dst {
            match self.via.iter_mut().find(|(peer, _)| *peer == src) {
                Some(v) => v.1 = dst,
                None => {
                    if self.via.len() >= MAX_DESTINATIONS {
                        self.via.remove(0);
                    }
                    self.via.push((src, dst));
                }
            }
        }
    }

    /// Sends what is due at `now`.
    pub(super) fn tick(&mut self, now: Duration, log: &Log) {
        for (_, a) in &mut self.answerers {
            a.handle_timeout(now);
            while let Some((to, d)) = a.poll_transmit() {
                let local = self.via.iter().find(|(peer, _)| *peer == to).map(|v| v.1);
                let socket = self
                    .sockets
                    .iter()
                    .find(|(at, _)| Some(*at) == local)
                    .or_else(|| self.sockets.first());
                let Some((_, socket)) = socket else { continue };
                let i = match self.counts.iter().position(|c| c.record().to == to) {
                    Some(i) => i,
                    None if self.counts.len() < MAX_DESTINATIONS => {
                        self.counts.push(SendCounts::new(to, Receiver::App));
                        self.counts.len() - 1
                    }
                    None => self.counts.len() - 1,
                };
                let Some(c) = self.counts.get_mut(i) else {
                    continue;
                };
                match socket.send_to(&d, to) {
                    Ok(_) => c.sent(1),
                    Err(e) => c.failed(&e, log),
                }
            }
        }
    }

    /// When [`tick`](Self::tick) next has something to send.
    pub(super) fn poll_timeout(&self) -> Option<Duration> {
        self.answerers
            .iter()
            .filter_map(|(_, a)| a.poll_timeout())
            .min()
    }

    /// Each destination's send counts.
    pub(super) fn sends(&self) -> impl Iterator<Item = SendRecord> + '_ {
        self.counts.iter().map(SendCounts::record)
    }
}
