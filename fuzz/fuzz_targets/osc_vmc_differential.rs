//! The VMC fast path against the general decoder, on the same bytes.
//!
//! `vmc::decode_borrowed` (and `vmc::decode`) first try `vmc/fast.rs`, which
//! takes only canonical flat bundles and otherwise falls back; the general
//! decoder is `osc::decode` then `vmc::Message::from_osc` per message. The
//! fast module promises "both paths always give the same messages", so:
//! the same datagrams decode, to the same typed messages in the same order
//! (compared by `Debug`, as `fast.rs`'s own test does: NaN prints as NaN),
//! and where both refuse, with the same OSC error. Nothing is asserted
//! about which path was taken.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::{osc, vmc};

fuzz_target!(|data: &[u8]| {
    let general = osc::decode(data)
        .map(|p| p.messages().into_iter().map(vmc::Message::from_osc).collect::<Vec<_>>());
    let borrowed = vmc::decode_borrowed(data)
        .map(|es| es.into_iter().map(vmc::Element::into_owned).collect::<Vec<_>>());
    let typed = vmc::decode(data);
    match (&general, &borrowed) {
        (Ok(g), Ok(b)) => assert_eq!(format!("{b:?}"), format!("{g:?}"), "fast and general messages differ"),
        (Err(g), Err(b)) => assert_eq!(b, g),
        _ => panic!("one path decodes and the other refuses: general {general:?}, fast {borrowed:?}"),
    }
    assert_eq!(format!("{typed:?}"), format!("{borrowed:?}"), "vmc::decode and decode_borrowed differ");
});
