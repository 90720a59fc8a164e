//! Capture files: `pcap::Datagrams` (the pcap/pcapng reader, link-layer
//! decoding and IP reassembly) over a `Cursor`, read to the end.
//!
//! Asserted: it ends (every record consumes bytes); nothing comes after an
//! error; every payload, reassembled or not, is made of bytes of the file,
//! so it is no longer than the input; the `datagrams` counter counts what
//! was delivered. Memory is bounded by the reader's record cap and the
//! reassembly limits, which libFuzzer's `-rss_limit_mb` checks.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use mocap_core::pcap::{CaptureReader, Datagrams};

fuzz_target!(|data: &[u8]| {
    if let Ok(mut r) = CaptureReader::new(Cursor::new(data)) {
        let _ = (r.format(), r.link_type());
        while let Some(rec) = r.next_packet() {
            match rec {
                Ok(rec) => assert!(rec.data.len() <= data.len()),
                Err(e) => {
                    let _ = e.to_string();
                    break;
                }
            }
        }
    }
    let Ok(mut d) = Datagrams::new(Cursor::new(data)) else {
        return;
    };
    let mut delivered = 0u64;
    let mut failed = false;
    while let Some(item) = d.next_datagram() {
        assert!(!failed, "a datagram after an error");
        match item {
            Ok(c) => {
                assert!(c.payload.len() <= data.len(), "{} payload bytes from {} input bytes", c.payload.len(), data.len());
                delivered += 1;
            }
            Err(e) => {
                let _ = e.to_string();
                failed = true;
            }
        }
    }
    assert!(d.next_datagram().is_none());
    assert_eq!(d.stats().datagrams, delivered);
});
