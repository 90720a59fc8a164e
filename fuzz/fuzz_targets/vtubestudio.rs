//! VTube Studio datagrams: `vtubestudio::parse`, warnings, the registry
//! row (sniff, decode, stamp, face). A datagram that parses as data keeps
//! at most `MAX_BLENDSHAPES`; its warnings are inside the datagram; the
//! decode's stamp is the stamp's. A request the encoder accepts is written
//! again and reads back the same, without warnings.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mocap_core::protocol::{NoView, Protocol};
use mocap_core::vtubestudio::{self, MAX_BLENDSHAPES, Packet};

fuzz_target!(|data: &[u8]| {
    let p = Protocol::VTubeStudio;
    let _ = p.sniff(data);
    assert_eq!(p.decode(data, &mut NoView), p.stamp(data));
    let _ = p.spec().face.map(|f| f(data));
    let Ok(packet) = vtubestudio::parse(data) else {
        return;
    };
    for w in packet.warnings() {
        assert!(w.offset <= data.len());
        let _ = w.to_string();
    }
    match packet {
        Packet::Data(t) => assert!(t.blendshapes.len() <= MAX_BLENDSHAPES),
        Packet::Request(r) => {
            let Some(time) = r.time.and_then(|t| Duration::try_from_secs_f64(t).ok()) else {
                return;
            };
            let name = r.sent_by.as_deref().unwrap_or("");
            if let Ok(again) = vtubestudio::request(time, name, &r.ports) {
                let Ok(Packet::Request(back)) = vtubestudio::parse(&again) else {
                    panic!("our request does not read back");
                };
                assert_eq!((back.sent_by, back.ports), (r.sent_by, r.ports));
                assert_eq!(back.time, Some(time.as_secs_f64()));
                assert!(back.warnings.is_empty());
            }
        }
    }
});
