//! `--vmt`: every tracker slot's rotation (a protocol whose row carries
//! trackers: SlimeVR's sensors) as a VMT tracker in SteamVR, for testing
//! trackers without their own server. Each (sender, slot) gets the next VMT
//! index from `--vmt-index`; the trackers stand in a row 0.25 m apart at
//! 1 m height (the orientation is what is tested), in one
//! `/VMT/Room/Unity` message per slot update.

use std::net::SocketAddr;

use mocap_cli::net::Fanout;
use mocap_cli::output::Log;
use mocap_core::osc::{self, Arg, Message};
use mocap_core::protocol::View;
use mocap_core::vmc::trackers::{VMT_MAX_INDEX, unity_quat};

/// Metres between neighbouring trackers.
const SPACING: f32 = 0.25;

/// The slots a datagram's decode gives, with their rotations (Unity Euler
/// degrees, as a registry view gets them).
#[derive(Default)]
pub(super) struct Slots(pub(super) Vec<(String, [f32; 3])>);

impl View for Slots {
    fn slot(&mut self, name: &str, _pos: Option<[f32; 3]>, rot: Option<[f32; 3]>) {
        // A datagram carries a handful of slots; a stranger's cannot grow
        // this past what one datagram holds.
        if let Some(r) = rot
            && self.0.len() < usize::from(VMT_MAX_INDEX) + 1
        {
            self.0.push((name.to_owned(), r));
        }
    }
}

/// Where `--vmt` sends, and which VMT index each slot has.
pub(super) struct VmtSink {
    pub(super) out: Fanout,
    first: u8,
    indices: Vec<((Option<SocketAddr>, String), u8)>,
    /// Slot updates sent.
    pub(super) updates: u64,
    /// Slots beyond the last VMT index, not sent.
    pub(super) unplaced: u64,
}

impl VmtSink {
    pub(super) fn new(out: Fanout, first: u8) -> Self {
        Self {
            out,
            first,
            indices: Vec::new(),
            updates: 0,
            unplaced: 0,
        }
    }

    /// Sends each of `slots` from `src` as its VMT tracker.
    pub(super) fn send(&mut self, src: Option<SocketAddr>, slots: &Slots, log: &Log) {
        for (name, euler) in &slots.0 {
            let key = (src, name.clone());
            let index = match self.indices.iter().find(|(k, _)| *k == key) {
                Some((_, i)) => *i,
                None => {
                    let next = u8::try_from(self.indices.len())
                        .ok()
                        .and_then(|n| self.first.checked_add(n))
                        .filter(|i| *i <= VMT_MAX_INDEX);
                    let Some(i) = next else {
                        self.unplaced += 1;
                        continue;
                    };
                    self.indices.push((key, i));
                    i
                }
            };
            let q = unity_quat(euler.map(f64::from)).map(|v| v as f32);
            let x = f32::from(index - self.first) * SPACING;
            let m = Message::new(
                "/VMT/Room/Unity",
                vec![
                    Arg::Int(i32::from(index)),
                    Arg::Int(1),
                    Arg::Float(0.0),
                    Arg::Float(x),
                    Arg::Float(1.0),
                    Arg::Float(0.0),
                    Arg::Float(q[0]),
                    Arg::Float(q[1]),
                    Arg::Float(q[2]),
                    Arg::Float(q[3]),
                ],
            );
            if let Ok(d) = osc::message(&m) {
                self.out.send(&d, log);
                self.updates += 1;
            }
        }
    }
}
