//! `--bvh`: one take per sender in the mocopi app's layout; lost frames
//! held, late and duplicate ones skipped. A sender's take (its slot, and the
//! plain `--bvh` name if it is the first) begins at its first frame after a
//! skeleton: a skeleton alone, a stranger's, takes neither.

use super::{Body, Dump, Log, Packet, SenderStats};
use mocap_cli::senders::Senders;
use mocap_cli::take::TakeSlot;
use mocap_core::smf;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// A sender's skeleton, kept until its first frame: each bone's id, parent
/// id and offset (bounded by the datagram it came in).
pub(super) struct Skeleton(Vec<(u16, i16, [f32; 3])>);

/// One sender's take state: joint index by bone id, one frame's values, the
/// last frame number.
pub(super) struct BvhTake {
    /// Joint index by bone id, sorted by id: a table indexed by id would
    /// take a megabyte for a stranger's bone 65535.
    index: Vec<(u16, usize)>,
    /// One frame's values by joint index, reused from frame to frame.
    positions: Vec<[f64; 3]>,
    rotations: Vec<[f64; 4]>,
    last_fnum: Option<u32>,
}

/// Lost frames held (repeated) to keep a take's timeline; longer gaps (a
/// restart, a pause) are not filled.
const MAX_HELD: u32 = 60;

/// The frame time a take is closed with: the sender's measured rate.
fn frame_time(senders: &Senders<SenderStats>, src: &Option<SocketAddr>) -> Option<f64> {
    senders
        .get(src)
        .and_then(|s| s.health.report().sender_fps)
        .map(|f| 1.0 / f)
}

impl Skeleton {
    fn new(s: &smf::Skeleton<'_>) -> Self {
        Self(s.bones().map(|d| (d.id, d.parent, d.pos)).collect())
    }

    /// The BVH joints and the take state that maps bone ids to them.
    fn joints(&self) -> (Vec<mocap_core::bvh::Joint>, BvhTake) {
        let ids: Vec<u16> = self.0.iter().map(|b| b.0).collect();
        let joints = self
            .0
            .iter()
            .map(|&(id, parent, pos)| mocap_core::bvh::Joint {
                name: smf::bone_name(id).map_or_else(|| format!("bone_{id}"), str::to_owned),
                parent: u16::try_from(parent)
                    .ok()
                    .and_then(|pid| ids.iter().position(|&i| i == pid)),
                offset: pos.map(|v| f64::from(v) * 100.0),
            })
            .collect();
        // A bone id sent twice maps to its last joint.
        let mut index: Vec<(u16, usize)> = ids
            .iter()
            .enumerate()
            .rev()
            .map(|(i, &id)| (id, i))
            .collect();
        index.sort_by_key(|&(id, _)| id);
        index.dedup_by_key(|&mut (id, _)| id);
        let take = BvhTake {
            index,
            positions: vec![[0.0; 3]; ids.len()],
            rotations: vec![[0.0, 0.0, 0.0, 1.0]; ids.len()],
            last_fnum: None,
        };
        (joints, take)
    }
}

impl Dump<'_> {
    /// `--bvh`: a skeleton is kept until the sender's first frame, which
    /// opens its take; frames are appended, lost ones held, late and
    /// duplicate ones skipped. `now` is the datagram's time.
    pub(super) fn take_packet(
        &mut self,
        log: &Log,
        src: Option<SocketAddr>,
        p: &Packet<'_>,
        now: Duration,
    ) {
        let Some(takes) = &mut self.takes else {
            return;
        };
        if !takes.recording() {
            return;
        }
        let senders = &self.senders;
        let ft = |src: &Option<SocketAddr>, _: &BvhTake| frame_time(senders, src);
        takes.sweep(now, log, ft);
        match &p.body {
            Body::Skeleton(s) if takes.get_mut(&src, now).is_none() => {
                *self
                    .skeletons
                    .get_or_insert_with(&src, || Skeleton(Vec::new())) = Skeleton::new(s);
            }
            Body::Frame(f) => {
                if takes.get_mut(&src, now).is_none() {
                    // A skeleton, then this frame: the sender may have a take.
                    let Some(skeleton) = self.skeletons.get(&src) else {
                        return;
                    };
                    let (joints, state) = skeleton.joints();
                    if takes.open(src, now, &joints, state, log, ft).is_none() {
                        return;
                    }
                    self.skeletons.remove(&src);
                }
                takes.write(&src, log, ft, |t| append(t, f));
            }
            _ => {}
        }
    }

    /// Closes every take, with the sender's measured frame time; a failed
    /// write is returned (after the summary: exit status 1).
    pub(super) fn finish_takes(&mut self, log: &Log) -> anyhow::Result<()> {
        let Some(takes) = self.takes.take() else {
            return Ok(());
        };
        let senders = &self.senders;
        let (done, result) = takes.finish(log, |src, _| frame_time(senders, src));
        self.takes_done = done;
        result
    }
}

/// Appends frame `f` to a take: lost frames before it held, a late or
/// duplicate one skipped.
fn append(t: &mut TakeSlot<BvhTake>, f: &smf::Frame<'_>) -> io::Result<()> {
    let s = &mut t.state;
    if let Some(last) = s.last_fnum {
        if f.fnum <= last && last - f.fnum < MAX_HELD {
            return Ok(()); // late or duplicate: already past it
        }
        let gap = f.fnum.wrapping_sub(last);
        if gap > 1 && gap <= MAX_HELD {
            for _ in 1..gap {
                t.take.repeat()?;
                t.held += 1;
            }
        }
    }
    s.last_fnum = Some(f.fnum);
    // Bones the frame lacks keep the rest pose.
    s.positions.fill([0.0; 3]);
    s.rotations.fill([0.0, 0.0, 0.0, 1.0]);
    for b in f.bones() {
        let Ok(k) = s.index.binary_search_by_key(&b.id, |&(id, _)| id) else {
            continue;
        };
        let Some(&(_, i)) = s.index.get(k) else {
            continue;
        };
        if let (Some(p), Some(r)) = (s.positions.get_mut(i), s.rotations.get_mut(i)) {
            *p = b.pos.map(|v| f64::from(v) * 100.0);
            *r = b.rot.map(f64::from);
        }
    }
    t.take.frame(&s.positions, &s.rotations)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    /// A stranger's bone 65535 costs one entry, not a table of 65536; a
    /// bone id sent twice maps to its last joint, as before.
    #[test]
    fn the_bone_index_holds_only_the_bones_sent() {
        let sk = Skeleton(vec![
            (0, -1, [0.0; 3]),
            (65535, 0, [0.0, 0.1, 0.0]),
            (7, 0, [0.0, 0.2, 0.0]),
            (7, 0, [0.0, 0.3, 0.0]),
        ]);
        let (joints, take) = sk.joints();
        assert_eq!(joints.len(), 4);
        assert_eq!(joints[1].parent, Some(0));
        assert_eq!(take.index, [(0, 0), (7, 3), (65535, 1)]);
    }
}
