//! The VRChat OSC and VMT encoders: one frame's trackers as bundles.

use super::super::pack;
use super::{Pose, SLOTS, Selection, Trackers, VMT_MAX_INDEX, unity_euler};
use crate::osc::{Arg, Message as Osc};

/// What the VRChat encoder sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VrchatOptions {
    /// The slots to send.
    pub trackers: Selection,
    /// Also send the head reference (`/tracking/trackers/head/position` and
    /// `/rotation`), which VRChat aligns the trackers to every frame; without
    /// it the user aligns with "Auto-center OSC trackers".
    pub head: bool,
}

/// One frame's VRChat messages: position then rotation for each selected
/// slot whose pose fits f32, in number order, then the head reference.
pub fn vrchat_messages(trackers: &Trackers, opts: &VrchatOptions) -> Vec<Osc> {
    let mut out = Vec::with_capacity(2 * SLOTS + 2);
    let mut push = |(position, rotation): (&str, &str), pose: Option<Pose>| {
        if let Some(p) = pose.filter(Pose::fits_f32) {
            out.push(Osc::new(position, floats(p.pos)));
            out.push(Osc::new(rotation, floats(unity_euler(p.rot))));
        }
    };
    for slot in opts.trackers.slots() {
        push(slot.addresses(), trackers.get(slot));
    }
    if opts.head {
        push(
            (
                "/tracking/trackers/head/position",
                "/tracking/trackers/head/rotation",
            ),
            trackers.head,
        );
    }
    out
}

/// [`vrchat_messages`] bundled: one bundle, or more when it would pass `max`
/// bytes (eight trackers and the head take about 1 kB).
pub fn vrchat_datagrams(trackers: &Trackers, opts: &VrchatOptions, max: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    // Constant addresses and numbers: nothing here is beyond OSC, so the
    // encoder's refusal cannot happen.
    match pack(&vrchat_messages(trackers, opts), max, &mut out) {
        Ok(()) => out,
        Err(_) => Vec::new(),
    }
}

/// What the VMT encoder sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VmtOptions {
    /// The slots to send.
    pub trackers: Selection,
    /// VMT index of slot 1; slot N takes `base + N − 1`, whatever the
    /// selection, so a body part keeps its index (VMT fixes a device's type
    /// by its first message). At most [`VMT_MAX_BASE`](super::VMT_MAX_BASE); slots whose index
    /// would pass [`VMT_MAX_INDEX`] are not sent.
    pub base: u8,
}

/// One frame's VMT messages: `/VMT/Room/Unity` (index, enable 1 = tracker,
/// time offset 0, x, y, z, qx, qy, qz, qw) for each selected slot whose pose
/// fits f32, in number order.
pub fn vmt_messages(trackers: &Trackers, opts: &VmtOptions) -> Vec<Osc> {
    let mut out = Vec::with_capacity(SLOTS);
    for slot in opts.trackers.slots() {
        let index = usize::from(opts.base) + slot.index();
        let (Some(p), Ok(index)) = (
            trackers.get(slot).filter(Pose::fits_f32),
            i32::try_from(index),
        ) else {
            continue;
        };
        if index > i32::from(VMT_MAX_INDEX) {
            continue;
        }
        let [x, y, z] = p.pos;
        let [qx, qy, qz, qw] = p.rot;
        let mut args = vec![Arg::Int(index), Arg::Int(1), Arg::Float(0.0)];
        args.extend(floats([x, y, z, qx, qy, qz, qw]));
        out.push(Osc::new("/VMT/Room/Unity", args));
    }
    out
}

/// [`vmt_messages`] bundled, as [`vrchat_datagrams`].
pub fn vmt_datagrams(trackers: &Trackers, opts: &VmtOptions, max: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    // Constant addresses and numbers: nothing here is beyond OSC, so the
    // encoder's refusal cannot happen.
    match pack(&vmt_messages(trackers, opts), max, &mut out) {
        Ok(()) => out,
        Err(_) => Vec::new(),
    }
}

fn floats<const N: usize>(v: [f64; N]) -> Vec<Arg> {
    v.iter().map(|x| Arg::Float(*x as f32)).collect()
}
