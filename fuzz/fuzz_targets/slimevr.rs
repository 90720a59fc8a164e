//! SlimeVR datagrams of either direction: `slimevr::parse`, its warnings,
//! a bundle's packets, and the registry row's sniff, decode and stamp. A
//! bundle that parses walks again to as many packets as it counted, none of
//! them a bundle; the stamp alone is the decode's.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::protocol::{NoView, Protocol};
use mocap_core::slimevr::{self, Message};

fuzz_target!(|data: &[u8]| {
    let _ = Protocol::SlimeVr.sniff(data);
    assert_eq!(
        Protocol::SlimeVr.stamp(data),
        Protocol::SlimeVr.decode(data, &mut NoView)
    );
    let Ok(p) = slimevr::parse(data) else {
        return;
    };
    let _ = (p.kind(), p.warnings(), p.message.name(), p.message.is_known());
    if let Message::Bundle(b) = p.message {
        assert_eq!(b.messages().count(), b.len());
        assert!(b.messages().all(|m| !matches!(m, Message::Bundle(_))));
    }
});
