//! iFacialMocap / Facemotion3d text frames: `ifm::parse`, its accessors and
//! warnings, and the round trip through `FrameRepr` where the frame has all
//! three blocks: the text written in v2 form (`name&value`) parses back to
//! the same repr, and so does the v1 form (`name-value`) unless an unknown
//! name holds a `-` (v2 text `a-b&5` names `a-b`; written as v1, `a-b-5`
//! cannot say where the name ends). Floats are written by `Display`, which
//! round-trips f32.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::ifm;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = ifm::parse(data) else {
        if let Err(e) = ifm::parse(data) {
            let _ = (e.offset(), e.to_string());
        }
        return;
    };
    assert_eq!(f.arkit().count(), f.arkit_count());
    for w in &f.warnings {
        let _ = w.to_string();
    }
    let Some(repr) = f.to_repr() else {
        return;
    };
    let v1_ok = !repr.extra.iter().any(|(n, _)| n.contains('-'));
    for v2 in [true, false] {
        if !v2 && !v1_ok {
            continue;
        }
        let text = repr.text(v2);
        let g = ifm::parse(text.as_bytes()).expect("a written frame parses");
        let back = g.to_repr().expect("a written frame has all three blocks");
        assert_eq!(format!("{back:?}"), format!("{repr:?}"), "v2={v2}: {text}");
    }
});
