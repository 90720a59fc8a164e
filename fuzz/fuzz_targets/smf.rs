//! SMF (mocopi) datagrams: `smf::parse`, every accessor a tool touches, and
//! the round trip: what is accepted re-encodes, and the re-encoded bytes
//! parse to the same repr (compared as bytes, so NaN payloads compare too).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::smf;

fuzz_target!(|data: &[u8]| {
    let Ok(p) = smf::parse(data) else {
        return;
    };
    let _ = (p.unknown_count(), p.unknown_chunks(), p.warnings(), p.body.kind());
    let _ = p.sender.map(|s| s.ip());
    match &p.body {
        smf::Body::Frame(f) => {
            assert_eq!(f.bones().count(), f.bone_count());
            let _ = f.timecode.map(|t| (t.hour(), t.minute(), t.second(), t.frame(), t.rate(), t.drop_frame()));
        }
        smf::Body::Skeleton(s) => assert_eq!(s.bones().count(), s.bone_count()),
        smf::Body::Sensor(s) => {
            let _ = s.children().count();
        }
    }
    let _ = (p.frame(), p.skeleton());
    let repr = smf::PacketRepr::parse(&p);
    let bytes = repr.to_bytes();
    assert_eq!(bytes.len(), repr.buffer_len());
    let again = smf::parse(&bytes).expect("a re-encoded packet decodes");
    assert_eq!(smf::PacketRepr::parse(&again).to_bytes(), bytes, "re-encoded bytes parse to the same repr");
});
