//! `--bvh`: one take per sender in the mocopi app's layout; lost frames
//! held, late and duplicate ones skipped.

use super::{Body, BvhOut, Dump, Log, Packet};
use mocap_core::smf;
use std::net::SocketAddr;

/// One sender's BVH take: the file, joint index → bone id, the last frame number.
pub(super) struct BvhTake {
    pub(super) take: mocap_cli::Take,
    /// Joint index by bone id.
    pub(super) index: Vec<Option<usize>>,
    /// One frame's values by joint index, reused from frame to frame.
    pub(super) positions: Vec<[f64; 3]>,
    pub(super) rotations: Vec<[f64; 4]>,
    pub(super) last_fnum: Option<u32>,
    pub(super) held: u64,
}

/// Lost frames held (repeated) to keep a take's timeline; longer gaps (a
/// restart, a pause) are not filled.
const MAX_HELD: u32 = 60;

impl Dump<'_> {
    /// `--bvh`: a skeleton starts the sender's take; frames are appended,
    /// lost ones held, late and duplicate ones skipped.
    pub(super) fn take_packet(
        &mut self,
        log: &Log,
        b: &BvhOut,
        src: Option<SocketAddr>,
        p: &Packet<'_>,
    ) -> anyhow::Result<()> {
        match &p.body {
            Body::Skeleton(s) if !self.takes.contains_key(&src) => {
                // A new sender past the bound gets no take (and no file).
                if !self.takes.admits(&src) {
                    if !self.takes_full_logged {
                        self.takes_full_logged = true;
                        mocap_cli::log_no_take(log, src);
                    }
                    return Ok(());
                }
                let defs: Vec<_> = s.bones().collect();
                let ids: Vec<u16> = defs.iter().map(|d| d.id).collect();
                let joints: Vec<mocap_core::bvh::Joint> = defs
                    .iter()
                    .map(|d| mocap_core::bvh::Joint {
                        name: smf::bone_name(d.id)
                            .map_or_else(|| format!("bone_{}", d.id), str::to_owned),
                        parent: u16::try_from(d.parent)
                            .ok()
                            .and_then(|pid| ids.iter().position(|&i| i == pid)),
                        offset: d.pos.map(|v| f64::from(v) * 100.0),
                    })
                    .collect();
                let path = mocap_cli::path_for(&b.path, src, self.takes.is_empty());
                let take = mocap_cli::Take::create(&path, b.force, &joints, 1.0 / 60.0)?;
                log.info(format_args!(
                    "recording a BVH take{} to {}",
                    src.map_or_else(String::new, |s| format!(" of {s}")),
                    take.path().display()
                ));
                let mut index = Vec::new();
                for (i, &id) in ids.iter().enumerate() {
                    let id = usize::from(id);
                    if index.len() <= id {
                        index.resize(id + 1, None);
                    }
                    if let Some(slot) = index.get_mut(id) {
                        *slot = Some(i);
                    }
                }
                self.takes.get_or_insert_with(&src, || BvhTake {
                    take,
                    index,
                    positions: vec![[0.0; 3]; ids.len()],
                    rotations: vec![[0.0, 0.0, 0.0, 1.0]; ids.len()],
                    last_fnum: None,
                    held: 0,
                });
            }
            Body::Frame(f) => {
                let Some(t) = self.takes.get_mut(&src) else {
                    return Ok(());
                };
                if let Some(last) = t.last_fnum {
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
                t.last_fnum = Some(f.fnum);
                // Bones the frame lacks keep the rest pose.
                t.positions.fill([0.0; 3]);
                t.rotations.fill([0.0, 0.0, 0.0, 1.0]);
                for b in f.bones() {
                    let Some(Some(i)) = t.index.get(usize::from(b.id)) else {
                        continue;
                    };
                    if let (Some(p), Some(r)) = (t.positions.get_mut(*i), t.rotations.get_mut(*i)) {
                        *p = b.pos.map(|v| f64::from(v) * 100.0);
                        *r = b.rot.map(f64::from);
                    }
                }
                t.take.frame(&t.positions, &t.rotations)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Patches and closes every take, with the sender's measured frame time.
    pub(super) fn finish_takes(&mut self, log: &Log) -> anyhow::Result<()> {
        for (src, t) in std::mem::take(&mut self.takes).into_entries() {
            let fps = self
                .senders
                .get(&src)
                .and_then(|s| s.health.report().sender_fps);
            let (path, frames) = t.take.finish(fps.map(|f| 1.0 / f))?;
            log.always(format_args!(
                "BVH take: {} frames ({} lost frames held) in {}",
                frames,
                t.held,
                path.display()
            ));
            self.takes_done.push(mocap_cli::TakeSummary {
                src,
                path,
                frames,
                held: t.held,
            });
        }
        Ok(())
    }
}
