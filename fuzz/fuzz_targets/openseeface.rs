//! OpenSeeFace datagrams: `openseeface::parse`, every face's accessors and
//! warnings. A datagram that parses is whole faces; each face gives its
//! fixed counts of confidences, landmarks, 3D points and features.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::openseeface;

fuzz_target!(|data: &[u8]| {
    let Ok(p) = openseeface::parse(data) else {
        return;
    };
    assert!(!p.is_empty());
    assert_eq!(p.faces().len(), p.len());
    let _ = p.warnings();
    for f in p.faces() {
        let _ = (f.time(), f.id(), f.resolution(), f.eyes_open(), f.success(), f.fit_error());
        let _ = (f.quaternion(), f.euler(), f.translation(), f.plausible());
        assert_eq!(f.confidences().len(), 68);
        assert_eq!(f.landmarks().len(), 68);
        assert_eq!(f.points_3d().len(), 70);
        assert_eq!(f.features().len(), 14);
    }
});
