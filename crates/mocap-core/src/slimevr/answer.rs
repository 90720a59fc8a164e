//! The server's side of the handshake, for watching trackers without the
//! SlimeVR server: a tracker streams only to a server that answered its
//! handshake, and gives the server up (handshaking again) after 3 s without
//! a packet from it. [`Answerer`] answers each tracker's handshake, feature
//! flags and sensor states as the server does and sends it a heartbeat
//! every half second while it is heard. I/O-free: datagrams and `now` in,
//! datagrams out through [`Answerer::poll_transmit`].

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

use crate::protocol::Answer;

use super::packet::{GREETING, Message, parse};
use super::{HEADER_LEN, kind};

/// How often the server sends each tracker a heartbeat.
pub const HEARTBEAT: Duration = Duration::from_millis(500);
/// A tracker not heard for this long is no longer answered.
pub const FORGET: Duration = Duration::from_secs(10);
/// Trackers answered at once; the least recently heard gives way.
pub const MAX_TRACKERS: usize = 64;
/// Datagrams waiting to be sent; the oldest gives way (a tracker repeats
/// what is not answered).
pub const MAX_QUEUED: usize = 256;

/// The server's feature flags: it reads bundles (type 100). Compact bundles
/// are not announced: the tracker would then pack rotations as type 23.
const SERVER_FLAGS: u8 = 0b01;

/// The answer to a handshake: its type in one byte, the greeting and the
/// protocol version, padded as the server pads it.
#[must_use]
pub fn handshake_answer() -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.push(u8::try_from(kind::HANDSHAKE).unwrap_or(3));
    out.extend_from_slice(GREETING);
    out.extend_from_slice(b" 5");
    out.resize(64, 0);
    out
}

/// A server packet: its type, packet number 0, then `body`.
fn server(kind: u32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&kind.to_be_bytes());
    out.extend_from_slice(&0u64.to_be_bytes());
    out.extend_from_slice(body);
    out
}

/// One tracker that handshook.
#[derive(Clone, Copy, Debug)]
struct Tracker {
    at: SocketAddr,
    heard: Duration,
    beat: Duration,
}

/// Answers trackers as the SlimeVR server would, as far as they need to
/// stream: handshake, feature flags, sensor states, heartbeats.
#[derive(Debug, Default)]
pub struct Answerer {
    trackers: Vec<Tracker>,
    out: VecDeque<(SocketAddr, Vec<u8>)>,
    dropped: u64,
}

impl Answerer {
    /// An answerer that knows no tracker yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Trackers answered now.
    #[must_use]
    pub fn trackers(&self) -> usize {
        self.trackers.len()
    }

    /// Datagrams dropped because the queue was full.
    #[must_use]
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    fn queue(&mut self, to: SocketAddr, d: Vec<u8>) {
        if self.out.len() >= MAX_QUEUED {
            self.out.pop_front();
            self.dropped += 1;
        }
        self.out.push_back((to, d));
    }

    fn tracker(&mut self, at: SocketAddr) -> Option<&mut Tracker> {
        self.trackers.iter_mut().find(|t| t.at == at)
    }
}

impl Answer for Answerer {
    fn handle_datagram(&mut self, now: Duration, from: SocketAddr, datagram: &[u8]) {
        let Ok(p) = parse(datagram) else { return };
        if let Message::Handshake(_) = p.message {
            match self.tracker(from) {
                Some(t) => t.heard = now,
                None => {
                    if self.trackers.len() >= MAX_TRACKERS
                        && let Some(i) = (0..self.trackers.len())
                            .min_by_key(|i| self.trackers.get(*i).map(|t| t.heard))
                    {
                        self.trackers.swap_remove(i);
                    }
                    self.trackers.push(Tracker {
                        at: from,
                        heard: now,
                        beat: now,
                    });
                }
            }
            self.queue(from, handshake_answer());
            return;
        }
        // Only a tracker that handshook is answered: the server's own
        // packets (numbered 0 too) are never taken for a tracker's.
        let Some(t) = self.tracker(from) else { return };
        t.heard = now;
        match p.message {
            Message::FeatureFlags { .. } => {
                self.queue(from, server(kind::FEATURE_FLAGS, &[SERVER_FLAGS]));
            }
            Message::SensorInfo(s) => {
                let mut ack = kind::SENSOR_INFO.to_be_bytes().to_vec();
                ack.extend_from_slice(&[s.sensor, s.status]);
                self.queue(from, ack);
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, now: Duration) {
        self.trackers
            .retain(|t| now.saturating_sub(t.heard) < FORGET);
        let due: Vec<SocketAddr> = self
            .trackers
            .iter_mut()
            .filter(|t| now.saturating_sub(t.beat) >= HEARTBEAT)
            .map(|t| {
                t.beat = now;
                t.at
            })
            .collect();
        for at in due {
            self.queue(at, server(kind::SERVER_HEARTBEAT, &[]));
        }
    }

    fn poll_timeout(&self) -> Option<Duration> {
        self.trackers
            .iter()
            .map(|t| {
                t.beat
                    .saturating_add(HEARTBEAT)
                    .min(t.heard.saturating_add(FORGET))
            })
            .min()
    }

    fn poll_transmit(&mut self) -> Option<(SocketAddr, Vec<u8>)> {
        self.out.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([192, 168, 1, 51], port))
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A tracker's handshake as the firmware packs it: type 3, number 0,
    /// board, IMU, MCU, three reserved ints, build, firmware, MAC.
    fn handshake() -> Vec<u8> {
        let mut d = vec![0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0];
        for v in [10i32, 8, 2, 0, 0, 0, 17] {
            d.extend_from_slice(&v.to_be_bytes());
        }
        d.push(6);
        d.extend_from_slice(b"0.5.0a");
        d.extend_from_slice(&[1, 2, 3, 4, 5, 6]);
        d
    }

    fn all(a: &mut Answerer) -> Vec<(SocketAddr, Vec<u8>)> {
        std::iter::from_fn(|| a.poll_transmit()).collect()
    }

    #[test]
    fn a_handshake_is_answered_and_the_tracker_gets_heartbeats() {
        let mut a = Answerer::new();
        a.handle_datagram(ms(0), addr(6969), &handshake());
        let out = all(&mut a);
        assert_eq!(out.len(), 1);
        // What the firmware checks: byte 3, then the greeting with version 5.
        assert_eq!(out[0].1[0], 3);
        assert_eq!(&out[0].1[1..13], b"Hey OVR =D 5");
        assert_eq!(out[0].1.len(), 64);
        assert_eq!(a.poll_timeout(), Some(ms(500)));
        a.handle_timeout(ms(499));
        assert!(all(&mut a).is_empty());
        a.handle_timeout(ms(500));
        assert_eq!(
            all(&mut a),
            [(addr(6969), vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0])]
        );
        // Not heard for 10 s: forgotten, no more heartbeats.
        a.handle_timeout(ms(10_000));
        assert_eq!(a.trackers(), 0);
        assert!(all(&mut a).is_empty());
        assert_eq!(a.poll_timeout(), None);
    }

    #[test]
    fn flags_and_sensor_states_of_a_tracker_that_handshook_are_answered() {
        let mut a = Answerer::new();
        let flags = [0, 0, 0, 22, 0, 0, 0, 0, 0, 0, 0, 1, 0x06];
        let info = [0, 0, 0, 15, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 8, 0, 3, 1, 0, 0];
        // A stranger's flags before any handshake: nothing.
        a.handle_datagram(ms(0), addr(1), &flags);
        assert!(all(&mut a).is_empty());
        a.handle_datagram(ms(0), addr(1), &handshake());
        all(&mut a);
        a.handle_datagram(ms(5), addr(1), &flags);
        a.handle_datagram(ms(6), addr(1), &info);
        let out = all(&mut a);
        assert_eq!(out[0].1, [0, 0, 0, 22, 0, 0, 0, 0, 0, 0, 0, 0, 0x01]);
        assert_eq!(out[1].1, [0, 0, 0, 15, 1, 1]);
        // Our answers read back as the server's.
        assert!(matches!(
            parse(&out[1].1).unwrap().message,
            Message::SensorAck {
                sensor: 1,
                status: 1
            }
        ));
    }

    #[test]
    fn trackers_and_the_queue_are_bounded() {
        let mut a = Answerer::new();
        for p in 0..300u16 {
            a.handle_datagram(ms(u64::from(p)), addr(p), &handshake());
        }
        assert_eq!(a.trackers(), MAX_TRACKERS);
        assert_eq!(all(&mut a).len(), MAX_QUEUED);
        assert_eq!(a.dropped(), 300 - MAX_QUEUED as u64);
    }
}
