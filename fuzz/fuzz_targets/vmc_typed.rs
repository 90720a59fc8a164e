//! Typed VMC messages: every message `vmc::decode` types re-encodes
//! (`to_osc`) and types back to itself, and `vmc::pack` (the bundler the
//! senders use) keeps them in order: its bundles decode to the same list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::vmc;

fuzz_target!(|data: &[u8]| {
    let Ok(messages) = vmc::decode(data) else {
        return;
    };
    let typed: Vec<vmc::Message> = messages.into_iter().filter_map(Result::ok).collect();
    let mut encoded = Vec::with_capacity(typed.len());
    for m in &typed {
        let _ = (m.ends_frame(), m.end_rank());
        let o = m.to_osc();
        let back = vmc::Message::from_osc(&o).expect("a typed message types again");
        assert_eq!(format!("{back:?}"), format!("{m:?}"));
        encoded.push(o);
    }
    let mut bundles = Vec::new();
    vmc::pack(&encoded, vmc::MAX_BUNDLE, &mut bundles).unwrap();
    let mut again = Vec::with_capacity(typed.len());
    for b in &bundles {
        let ms = vmc::decode(b).expect("a packed bundle decodes");
        again.extend(ms.into_iter().map(|m| m.expect("a packed message types")));
    }
    assert_eq!(format!("{again:?}"), format!("{typed:?}"), "pack keeps every message, in order");
});
