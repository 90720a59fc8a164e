//! DLP3D: `dlp3d::decode_request` (protobuf from the web client) and the
//! response-stream checker `dlp3d::Decoder` (what a client accepts from a
//! server), plus the rig and WAV readers the live bridge takes from files.
//!
//! The input is one request, and also a stream of responses framed as a
//! `u16` little-endian length then that many bytes (a short last frame
//! takes what is left). Asserted: a decoded request re-encodes to bytes that
//! decode and re-encode to the same bytes; a refused response leaves the
//! decoder's state as it was (its documented contract); a body holds whole
//! frames; `finished()` never goes back to false.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::dlp3d::{self, Decoder, Event};

fuzz_target!(|data: &[u8]| {
    if let Ok(r) = dlp3d::decode_request(data) {
        let bytes = dlp3d::encode_request(&r);
        let again = dlp3d::decode_request(&bytes).expect("a re-encoded request decodes");
        assert_eq!(dlp3d::encode_request(&again), bytes);
    }
    let mut d = Decoder::new();
    let mut rest = data;
    let mut finished = false;
    while let [lo, hi, tail @ ..] = rest {
        let len = usize::from(u16::from_le_bytes([*lo, *hi])).min(tail.len());
        let (msg, tail) = tail.split_at(len);
        rest = tail;
        let before = format!("{d:?}");
        match d.decode(msg) {
            Ok(e) => {
                let _ = e.kind();
                if let Event::Body { frames, scalars, .. } = &e
                    && *frames > 0
                {
                    assert_eq!(scalars.len() % frames, 0, "a body of part frames");
                }
            }
            Err(e) => {
                let _ = e.to_string();
                assert_eq!(format!("{d:?}"), before, "a refused response changed the state");
            }
        }
        assert!(!finished || d.finished(), "finished went back to false");
        finished = d.finished();
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = dlp3d::Rig::parse(text);
    }
    let _ = dlp3d::wav_to_pcm16k(data);
});
