//! iFacialMocap over TCP: the `___iFacialMocap` splitter and the baked
//! recording parser.
//!
//! The first two bytes choose the splitter's cap (16 to 4096 bytes, so
//! over-long frames are reachable) and the read size; the rest is the
//! stream. Asserted: feeding the stream in reads of any size gives the
//! same frames and drop count as feeding it at once; no frame is longer
//! than the cap or holds a terminator; the splitter never holds more than
//! the cap. Every frame goes through `ifm::parse`. The whole input is also
//! read as a recording, and what `parse_recording` returns survives
//! `write_recording` unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::ifm::{self, Splitter};

fn split(stream: &[u8], cap: usize, read: usize) -> (Vec<Vec<u8>>, u64) {
    let mut s = Splitter::new(cap);
    let mut frames = Vec::new();
    for chunk in stream.chunks(read.max(1)) {
        s.push(chunk, &mut |f: &[u8]| frames.push(f.to_vec()));
        assert!(s.pending() <= cap.max(ifm::TERMINATOR.len()), "holds {} over cap {cap}", s.pending());
    }
    (frames, s.dropped())
}

fuzz_target!(|data: &[u8]| {
    if let Ok(frames) = ifm::parse_recording(data) {
        for f in &frames {
            let _ = ifm::parse(f.as_bytes());
        }
        let written = ifm::write_recording(&frames);
        assert_eq!(ifm::parse_recording(&written).expect("a written recording reads"), frames);
    }
    let [c, r, stream @ ..] = data else {
        return;
    };
    let cap = 16 + usize::from(*c) * 16;
    let (whole, dropped) = split(stream, cap, stream.len());
    let (parts, dropped_parts) = split(stream, cap, 1 + usize::from(*r));
    assert_eq!(parts, whole, "frames depend on read sizes");
    assert_eq!(dropped_parts, dropped);
    let term = ifm::TERMINATOR.as_bytes();
    for f in &whole {
        assert!(f.len() <= cap, "a frame of {} bytes passed cap {cap}", f.len());
        assert!(!f.windows(term.len()).any(|w| w == term));
        let _ = ifm::parse(f);
    }
});
