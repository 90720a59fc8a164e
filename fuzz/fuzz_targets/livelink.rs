//! Live Link Face datagrams: `livelink::parse`, warnings and accessors, and
//! the `PacketRepr` round trip: `PacketRepr::parse(&p).to_bytes()` parses
//! back to the same bytes; a packet without warnings re-encodes to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::livelink::{self, Body, PacketRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(p) = livelink::parse(data) else {
        return;
    };
    let _ = (p.device(), p.subject(), p.time.fps(), p.time.seconds(), p.count_offset());
    let warnings = p.warnings();
    if let Body::Face(f) = &p.body {
        assert_eq!(f.values().count(), f.count());
        assert!(f.blendshapes().count() <= 52);
        let _ = (f.head(), f.left_eye(), f.right_eye(), f.extra().count());
    }
    let bytes = PacketRepr::parse(&p).to_bytes();
    let again = livelink::parse(&bytes).expect("a re-encoded packet decodes");
    assert_eq!(PacketRepr::parse(&again).to_bytes(), bytes);
    if warnings.is_empty() {
        assert_eq!(bytes, data, "a packet without warnings re-encodes to itself");
    }
});
