//! iFacialMocap / Facemotion3d text frames: `ifm::parse`, its accessors and
//! warnings, and the round trip through `FrameRepr` (with the blocks the
//! frame has): the text written in v2 form (`name&value`) parses back to
//! the same repr, and so does the v1 form (`name-value`) unless an unknown
//! name holds a `-` (v2 text `a-b&5` names `a-b`; written as v1, `a-b-5`
//! cannot say where the name ends). Floats are written by `Display`, which
//! round-trips f32.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::ifm::{self, FrameRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(f) = ifm::parse(data) else {
        if let Err(e) = ifm::parse(data) {
            let _ = (e.offset, e.to_string());
        }
        return;
    };
    assert_eq!(f.arkit().count(), f.arkit_count());
    for w in &f.warnings {
        let _ = w.to_string();
    }
    let repr = FrameRepr::parse(&f);
    let v1_ok = !repr.extra.iter().any(|(n, _)| n.contains('-'));
    for version in [ifm::Version::V2, ifm::Version::V1] {
        if version == ifm::Version::V1 && !v1_ok {
            continue;
        }
        let bytes = repr.to_bytes(version);
        let g = match ifm::parse(&bytes) {
            Ok(g) => g,
            // What no frame can say: nothing of a frame (only extras or a
            // tracking status), or an unknown first name that reads as the
            // start command.
            Err(ifm::Error { kind: ifm::ErrorKind::Empty | ifm::ErrorKind::NoFrameData, .. }) => {
                assert!(repr.blendshapes.is_empty() && repr.head.is_none(), "{repr:?}");
                assert!(repr.left_eye.is_none() && repr.right_eye.is_none(), "{repr:?}");
                continue;
            }
            Err(ifm::Error { kind: ifm::ErrorKind::Command, .. }) => {
                assert!(repr.tracking.is_none() && repr.blendshapes.is_empty(), "{repr:?}");
                continue;
            }
            Err(e) => panic!("a written frame parses: {e}: {}", String::from_utf8_lossy(&bytes)),
        };
        let back = FrameRepr::parse(&g);
        assert_eq!(format!("{back:?}"), format!("{repr:?}"), "{version:?}: {}", String::from_utf8_lossy(&bytes));
    }
});
