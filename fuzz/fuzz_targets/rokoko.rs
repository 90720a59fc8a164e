//! Rokoko Studio Live datagrams: LZ4 inflation (bounded), `rokoko::parse`,
//! warnings, the body conversion, the registry row (sniff, decode, stamp,
//! face, body). A frame keeps at most its bounds of actors, props,
//! segments and face values; the decode's stamp is the stamp's; every bone
//! the conversion gives is finite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::protocol::{NoView, Protocol};
use mocap_core::rokoko::{self, MAX_ACTORS, MAX_FACE, MAX_INFLATED, MAX_PROPS, MAX_SEGMENTS};

fuzz_target!(|data: &[u8]| {
    let p = Protocol::Rokoko;
    let _ = p.sniff(data);
    assert_eq!(p.decode(data, &mut NoView), p.stamp(data));
    let _ = p.spec().face.map(|f| f(data));
    let _ = p.spec().body.map(|b| b().datagram(data));
    if let Ok(text) = rokoko::inflate(data) {
        assert!(text.len() <= MAX_INFLATED.max(data.len()));
    }
    let Ok(frame) = rokoko::parse(data) else {
        return;
    };
    for w in &frame.warnings {
        let _ = w.to_string();
    }
    assert!(frame.actors.len() <= MAX_ACTORS && frame.props.len() <= MAX_PROPS);
    for a in &frame.actors {
        assert!(a.body.len() <= MAX_SEGMENTS && a.face.len() <= MAX_FACE);
        if let Some(pose) = rokoko::pose(a) {
            for (_, b) in pose.named() {
                assert!(b.rot.iter().chain(&b.pos).all(|v| v.is_finite()));
            }
        }
    }
});
