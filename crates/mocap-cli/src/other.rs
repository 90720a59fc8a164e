//! Datagrams of another protocol on a tool's port (VMC sent to
//! mocopi-dump, mocopi to vmc-relay): recognised by content through
//! [`mocap_core::protocol`], named once per sender with the tool to use
//! instead, and counted for the summary.

use std::net::SocketAddr;

use mocap_core::protocol::{self, Protocol};

use crate::output::Log;
use crate::senders::Senders;

/// The other protocols one tool met; `other_protocol` in its summary.
#[derive(Debug)]
pub struct OtherProtocols {
    own: Protocol,
    /// Senders already told about (bounded as every per-sender map).
    told: Senders<()>,
    count: u64,
}

/// The count, flattened into a summary record (left out while 0).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct OtherProtocolCount {
    /// Datagrams that did not decode and looked like another protocol.
    #[serde(skip_serializing_if = "is_zero")]
    pub other_protocol: u64,
}

// serde's skip_serializing_if passes a reference.
#[expect(clippy::trivially_copy_pass_by_ref, reason = "serde's signature")]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl OtherProtocolCount {
    /// `; N datagrams of another protocol` for a human summary, or nothing.
    #[must_use]
    pub fn human(&self) -> String {
        match self.other_protocol {
            0 => String::new(),
            n => format!("; {n} datagrams of another protocol"),
        }
    }
}

impl OtherProtocols {
    /// For a tool that reads `own`.
    #[must_use]
    pub fn new(own: Protocol) -> Self {
        Self {
            own,
            told: Senders::new(),
            count: 0,
        }
    }

    /// A datagram from `src` that did not decode as the tool's protocol:
    /// when it looks like another one, counts it and, the first time for
    /// this sender, logs what it is and what reads it. Returns the protocol.
    pub fn check(
        &mut self,
        src: Option<SocketAddr>,
        payload: &[u8],
        log: &Log,
    ) -> Option<Protocol> {
        let (p, _) = protocol::recognise(payload).filter(|(p, _)| *p != self.own)?;
        self.count += 1;
        // Past the bound on senders, strangers are counted but not named.
        if self.told.admits(&src) && self.told.get_mut(&src).is_none() {
            self.told.get_or_insert_with(&src, || ());
            log.info(format_args!("{}", sentence(p, src)));
        }
        Some(p)
    }

    /// What the summary shows.
    #[must_use]
    pub fn summary(&self) -> OtherProtocolCount {
        OtherProtocolCount {
            other_protocol: self.count,
        }
    }
}

/// "this looks like VMC (OSC) from 127.0.0.1:50012 — try vmc-relay --dump".
fn sentence(p: Protocol, src: Option<SocketAddr>) -> String {
    let from = src.map_or_else(String::new, |a| format!(" from {a}"));
    format!(
        "this looks like {}{from}, not what this tool reads — try {}",
        p.name(),
        p.spec().tool
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn told_once_per_sender_and_counted_every_time() {
        let vmc = mocap_core::osc::message(&mocap_core::osc::Message::new(
            "/VMC/Ext/OK",
            vec![mocap_core::osc::Arg::Int(1)],
        ))
        .unwrap();
        let log = Log::new("t", true, false);
        let mut o = OtherProtocols::new(Protocol::Mocopi);
        let a: SocketAddr = "127.0.0.1:50012".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:50013".parse().unwrap();
        for src in [a, a, b, a] {
            assert_eq!(o.check(Some(src), &vmc, &log), Some(Protocol::Vmc));
        }
        assert_eq!(o.check(Some(a), b"garbage", &log), None);
        assert_eq!(o.summary().other_protocol, 4);
        assert_eq!(o.told.iter().count(), 2);
        // The tool's own protocol is no stranger (a damaged datagram of it).
        let mut own = OtherProtocols::new(Protocol::Vmc);
        assert_eq!(own.check(Some(a), &vmc, &log), None);
        assert_eq!(own.summary().other_protocol, 0);
        assert_eq!(
            sentence(Protocol::Vmc, Some(a)),
            "this looks like VMC (OSC) from 127.0.0.1:50012, not what this tool reads — try vmc-relay --dump"
        );
    }
}
