//! The iFacialMocap start handshake (`ifm::handshake::Handshake`), driven by
//! any sequence of events: time passing, timeouts, frames, TCP connections
//! opening and closing, stop.
//!
//! A model written here from the module's rules predicts every action: the
//! start command is due on UDP when neither a frame nor a send came for
//! `keepalive`, on TCP when no connection is up and nothing was sent for
//! `keepalive` (at once after the phone's connection drops); a newer
//! connection drops the older; stop sends the stop command on TCP. Also
//! asserted: `poll_timeout` says a send is due exactly when one is, and
//! after a timeout is handled the next one is in the future (no spinning).
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::ifm::{self, Command};
use mocap_core::ifm::handshake::{Action, ConnId, Handshake, Transport};

struct Model {
    tcp: bool,
    keepalive: Duration,
    last_send: Option<Duration>,
    last_frame: Option<Duration>,
    conn: Option<ConnId>,
}

impl Model {
    fn due(&self, now: Duration) -> bool {
        let since = |t: Option<Duration>| t.is_none_or(|t| now - t >= self.keepalive);
        if self.tcp {
            self.conn.is_none() && since(self.last_send)
        } else {
            since(self.last_frame) && since(self.last_send)
        }
    }
}

fn drain(h: &mut Handshake) -> Vec<Action> {
    std::iter::from_fn(|| h.poll_action()).collect()
}

fuzz_target!(|data: &[u8]| {
    let [t, k, c, ops @ ..] = data else {
        return;
    };
    let tcp = t & 1 == 1;
    let keepalive = Duration::from_millis(1 + u64::from(*k));
    let start = match (tcp, c % 3) {
        (true, _) => Command::StartTcp { version: if c & 4 != 0 { ifm::Version::V2 } else { ifm::Version::V1 } },
        (false, 2) => Command::FacemotionStart,
        (false, _) => Command::StartUdp { version: if c & 4 != 0 { ifm::Version::V2 } else { ifm::Version::V1 } },
    };
    let transport = if tcp { Transport::Tcp } else { Transport::Udp };
    let mut now = Duration::from_millis(u64::from(*c));
    let mut h = Handshake::new(transport, start, keepalive, now);
    let mut m = Model { tcp, keepalive, last_send: Some(now), last_frame: None, conn: None };
    assert_eq!(drain(&mut h), [Action::Send { command: start, again: false }]);
    let mut next_id: ConnId = 0;
    for op in ops.chunks_exact(2) {
        let (kind, arg) = (op[0] % 6, op[1]);
        let mut want = Vec::new();
        match kind {
            0 => now += Duration::from_millis(u64::from(arg)),
            1 => {
                let due = m.due(now);
                assert_eq!(h.poll_timeout().is_some_and(|t| t <= now), due, "poll_timeout disagrees at {now:?}");
                h.handle_timeout(now);
                if due {
                    want.push(Action::Send { command: start, again: m.last_send.is_some() });
                    m.last_send = Some(now);
                }
                assert!(h.poll_timeout().is_none_or(|t| t > now), "due again at once: it would spin");
            }
            2 => {
                h.handle_frame(now);
                m.last_frame = Some(now);
            }
            3 if tcp => {
                next_id += 1;
                h.handle_connected(next_id);
                if let Some(old) = m.conn.replace(next_id) {
                    want.push(Action::Drop(old));
                }
            }
            4 if tcp => {
                let id = ConnId::from(arg) % (next_id + 1);
                h.handle_disconnected(id);
                if m.conn == Some(id) {
                    m.conn = None;
                    m.last_send = None;
                }
            }
            5 => {
                h.stop();
                if tcp {
                    want.push(Action::Send { command: Command::StopTcp, again: false });
                }
            }
            _ => {}
        }
        assert_eq!(drain(&mut h), want, "after op {kind} at {now:?}");
        assert_eq!(h.connection(), m.conn);
    }
});
