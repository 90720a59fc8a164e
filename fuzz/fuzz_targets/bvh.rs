//! BVH files as `mocopi-dump --bvh` writes them: `bvh::parse` on UTF-8 input.
//!
//! Asserted: every motion line kept has six values per joint; a joint's
//! parent comes before it. When `bvh::header` accepts the parsed joints
//! (one root, names without white space), `file_order` is a permutation of
//! them, and the header plus one `FrameEncoder` line parse back to the same
//! joint names and parents with one frame (offsets and frame time are
//! written with six decimals, so they are not compared).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::bvh;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(b) = bvh::parse(text) else {
        return;
    };
    let per_line = b.joints.len() * 6;
    assert!(b.frames.iter().all(|f| f.len() == per_line));
    for (i, j) in b.joints.iter().enumerate() {
        assert!(j.parent.is_none_or(|p| p < i), "joint {i} has parent {:?}", j.parent);
    }
    let Ok(h) = bvh::header(&b.joints, b.frame_time) else {
        return;
    };
    let n = b.joints.len();
    let mut order = bvh::file_order(&b.joints);
    order.sort_unstable();
    assert_eq!(order, (0..n).collect::<Vec<_>>());
    let mut enc = bvh::FrameEncoder::new(&b.joints);
    let text = h.text + &enc.line(&vec![[0.0; 3]; n], &vec![[0.0, 0.0, 0.0, 1.0]; n]);
    let again = bvh::parse(&text).expect("a written BVH parses");
    let shape = |j: &[bvh::Joint]| j.iter().map(|j| (j.name.clone(), j.parent)).collect::<Vec<_>>();
    assert_eq!(shape(&again.joints), shape(&b.joints));
    assert_eq!(again.frames.len(), 1);
    assert_eq!(again.frames_declared, 0);
});
