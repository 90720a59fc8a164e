//! What happened to the datagrams sent to each destination: how many the
//! kernel took, how many it refused, and how often the destination answered
//! that nothing listens there. The first failure is logged once, in words;
//! every one is counted for `stats` and `summary` records (`sends`).

use std::fmt;
use std::io;
use std::net::SocketAddr;

use serde::Serialize;

use mocap_core::protocol::Protocol;
use mocap_core::vmc::{self, trackers};

use crate::output::Log;

/// The kind of program expected at a destination, to say what to check
/// when nothing listens there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Receiver {
    /// A VMC receiver (VSeeFace, Warudo, Virtual Motion Capture…).
    Vmc,
    /// VRChat's OSC input.
    Vrchat,
    /// The VMT driver in SteamVR.
    Vmt,
    /// An app asked to stream (a phone's face app: `mocap-dump --ask`).
    App,
}

impl Receiver {
    /// What to check, by the port first (a VMC stream sent to 9000 is
    /// meant for VRChat), then by what is sent.
    fn hint(self, port: u16) -> &'static str {
        match (port, self) {
            (_, Self::App) => "is the app open, and on this machine's network?",
            (vmc::PERFORMER_PORT, _) => "is the VMC performer's receiver on?",
            (vmc::MARIONETTE_PORT, _) => "is VSeeFace's receiver on?",
            (trackers::VRCHAT_PORT, _) => "is VRChat running with OSC on?",
            (trackers::VMT_PORT, _) => "is SteamVR running with the VMT driver?",
            (_, Self::Vmc) => "is VSeeFace's receiver on?",
            (_, Self::Vrchat) => "is VRChat running with OSC on?",
            (_, Self::Vmt) => "is SteamVR running with the VMT driver?",
        }
    }

    /// The receiver of a stream of `p` passed on unchanged (mocap-link):
    /// VRChat's and VMT's own, else a VMC receiver, since every other
    /// protocol a relay forwards as it came is read by VMC apps or by tools
    /// that say so themselves.
    #[must_use]
    pub fn for_protocol(p: Protocol) -> Self {
        [(Protocol::Vrchat, Self::Vrchat), (Protocol::Vmt, Self::Vmt)]
            .into_iter()
            .find_map(|(q, r)| (q == p).then_some(r))
            .unwrap_or(Self::Vmc)
    }
}

/// One destination's counts, as `stats` and `summary` records carry them
/// (`"sends":[{"to":"[::1]:39539","sent":240,"failed":0,"unreachable":0}]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct SendRecord {
    /// The destination.
    pub to: SocketAddr,
    /// Datagrams the kernel took.
    pub sent: u64,
    /// Datagrams the kernel refused (not sent).
    pub failed: u64,
    /// Times the destination answered "port unreachable": nothing listens
    /// there. Linux and macOS report it by refusing the next send (so it is
    /// also in `failed`); Windows reports it apart.
    pub unreachable: u64,
}

/// The human lines of a tool's `sends`: one per destination.
///
/// # Errors
/// The formatter's.
pub fn write_sends(f: &mut fmt::Formatter<'_>, sends: &[SendRecord]) -> fmt::Result {
    for s in sends {
        write!(
            f,
            "\n  sent to {}: {} datagrams, {} failed",
            s.to, s.sent, s.failed
        )?;
        if s.unreachable > 0 {
            write!(f, " ({} times nothing was listening)", s.unreachable)?;
        }
    }
    Ok(())
}

/// The counts of one destination, and whether its first failure was told.
#[derive(Debug)]
pub struct SendCounts {
    record: SendRecord,
    receiver: Receiver,
    told: bool,
}

impl SendCounts {
    /// Nothing sent yet to `to`, where a `receiver` is expected.
    pub fn new(to: SocketAddr, receiver: Receiver) -> Self {
        Self {
            record: SendRecord {
                to,
                sent: 0,
                failed: 0,
                unreachable: 0,
            },
            receiver,
            told: false,
        }
    }

    /// `n` datagrams the kernel took.
    #[inline]
    pub fn sent(&mut self, n: u64) {
        self.record.sent += n;
    }

    /// One datagram the kernel refused with `err`; the first failure of
    /// this destination is logged.
    pub fn failed(&mut self, err: &io::Error, log: &Log) {
        self.record.failed += 1;
        if is_port_unreachable(err) {
            self.record.unreachable += 1;
        }
        self.tell(err, log);
    }

    /// A "port unreachable" reported apart from any send (Windows).
    pub fn unreachable(&mut self, log: &Log) {
        self.record.unreachable += 1;
        self.tell(&io::ErrorKind::ConnectionReset.into(), log);
    }

    fn tell(&mut self, err: &io::Error, log: &Log) {
        if !self.told {
            self.told = true;
            log.info(format_args!("{}", self.sentence(err)));
        }
    }

    /// The log line for a failure: what it means, and what to check.
    #[must_use]
    pub fn sentence(&self, err: &io::Error) -> String {
        let to = self.record.to;
        if is_port_unreachable(err) {
            format!(
                "nothing is listening at {to} ({}); further failures are only counted",
                self.receiver.hint(to.port())
            )
        } else {
            format!("cannot send to {to}: {err}; further failures are only counted")
        }
    }

    /// The counts so far.
    #[must_use]
    pub fn record(&self) -> SendRecord {
        self.record
    }

    /// Whether a failure has been logged (or [`Self::hush`] was called).
    #[must_use]
    pub fn told(&self) -> bool {
        self.told
    }

    /// Failures from now on are only counted: another socket to the same
    /// destination has said it already.
    pub fn hush(&mut self) {
        self.told = true;
    }
}

/// Whether a UDP send or receive failed only because an ICMP "port
/// unreachable" came back for an earlier datagram (see
/// [`RecvFailure::PortUnreachable`](crate::net::RecvFailure::PortUnreachable)); Windows may report it on the next
/// `sendto` as well. The socket still works: the next try may succeed.
#[must_use]
pub fn is_port_unreachable(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionRefused
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn to(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_refused_send_is_counted_and_said_in_words() {
        let log = Log::new("test", true, false);
        let mut c = SendCounts::new(to("127.0.0.1:39599"), Receiver::Vmc);
        c.sent(3);
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(
            c.sentence(&refused),
            "nothing is listening at 127.0.0.1:39599 (is VSeeFace's receiver on?); further failures are only counted"
        );
        c.failed(&refused, &log);
        c.failed(&io::Error::from(io::ErrorKind::InvalidInput), &log);
        c.unreachable(&log);
        assert_eq!(
            c.record(),
            SendRecord {
                to: to("127.0.0.1:39599"),
                sent: 3,
                failed: 2,
                unreachable: 2
            }
        );
        assert!(
            c.sentence(&io::Error::from(io::ErrorKind::InvalidInput))
                .starts_with("cannot send to 127.0.0.1:39599: "),
        );
    }

    #[test]
    fn a_hushed_destination_counts_without_telling() {
        let log = Log::new("test", true, false);
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        let mut c = SendCounts::new(to("127.0.0.1:39599"), Receiver::Vmc);
        assert!(!c.told());
        c.failed(&refused, &log);
        assert!(c.told(), "the first failure is told");
        let mut quiet = SendCounts::new(to("127.0.0.1:39599"), Receiver::Vmc);
        quiet.hush();
        assert!(quiet.told());
        quiet.failed(&refused, &log);
        assert_eq!(quiet.record().failed, 1, "still counted");
    }

    #[test]
    fn the_hint_names_what_usually_listens_on_the_port() {
        let hint = |port, r| {
            SendCounts::new(SocketAddr::from(([127, 0, 0, 1], port)), r)
                .sentence(&io::ErrorKind::ConnectionRefused.into())
        };
        assert!(hint(9000, Receiver::Vmc).contains("VRChat"));
        assert!(hint(39570, Receiver::Vmc).contains("VMT"));
        assert!(hint(39539, Receiver::Vmt).contains("VSeeFace"));
        assert!(hint(39540, Receiver::Vmc).contains("performer"));
        assert!(hint(1234, Receiver::Vrchat).contains("VRChat"));
        assert!(hint(1234, Receiver::Vmt).contains("VMT"));
        assert_eq!(Receiver::for_protocol(Protocol::Vrchat), Receiver::Vrchat);
        assert_eq!(Receiver::for_protocol(Protocol::Vmt), Receiver::Vmt);
        assert_eq!(Receiver::for_protocol(Protocol::LiveLink), Receiver::Vmc);
    }

    #[test]
    fn records_read_as_documented() {
        let r = SendRecord {
            to: to("[::1]:39539"),
            sent: 240,
            failed: 0,
            unreachable: 0,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"to":"[::1]:39539","sent":240,"failed":0,"unreachable":0}"#
        );
        struct Lines<'a>(&'a [SendRecord]);
        impl fmt::Display for Lines<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write_sends(f, self.0)
            }
        }
        let bad = SendRecord {
            to: to("127.0.0.1:9"),
            sent: 5,
            failed: 4,
            unreachable: 4,
        };
        assert_eq!(
            Lines(&[r, bad]).to_string(),
            "\n  sent to [::1]:39539: 240 datagrams, 0 failed\
             \n  sent to 127.0.0.1:9: 5 datagrams, 4 failed (4 times nothing was listening)"
        );
    }
}
