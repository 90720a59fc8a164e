//! Hex-text captures (hex lines and `.mocopipackets`): `textcap::decode_all`,
//! the line-at-a-time `TextDecoder` (normal and literal), `decode_hex_into`.
//!
//! Asserted: `decode_all` is the streaming decoder fed line by line; no
//! datagram is larger than `MAX_DATAGRAM`; line numbers never pass the
//! input's; a literal decoder gives one result per non-empty line (no more).
//! Decoded payloads also go through `smf::parse`, as `mocopi-dump` does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::{smf, textcap};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let all = textcap::decode_all(&text);
    let mut d = textcap::TextDecoder::new();
    let mut streamed = Vec::new();
    for l in text.lines() {
        d.push_line(l);
        streamed.extend(std::iter::from_fn(|| d.pop()));
    }
    d.finish();
    streamed.extend(std::iter::from_fn(|| d.pop()));
    assert_eq!(format!("{streamed:?}"), format!("{all:?}"));
    let lines = text.lines().count();
    for r in &all {
        match r {
            Ok(dg) => {
                assert!(dg.payload.len() <= mocap_core::MAX_DATAGRAM);
                assert!(dg.line >= 1 && dg.line <= lines, "line {} of {lines}", dg.line);
                let _ = smf::parse(&dg.payload);
            }
            Err(e) => {
                assert!(e.line <= lines + 1, "error line {} of {lines}", e.line);
                let _ = e.to_string();
            }
        }
    }
    let mut lit = textcap::TextDecoder::literal();
    let mut n = 0;
    for l in text.lines() {
        lit.push_line(l);
        n += std::iter::from_fn(|| lit.pop()).count();
    }
    lit.finish();
    n += std::iter::from_fn(|| lit.pop()).count();
    assert!(n <= lines);
    let mut out = Vec::new();
    if textcap::decode_hex_into(&text, &mut out).is_ok() {
        assert!(out.len() <= text.len() / 2);
    }
});
