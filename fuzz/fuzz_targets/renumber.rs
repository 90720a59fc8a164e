//! `pcap-replay --loop --renumber`: `pcap::Renumber` over any datagrams
//! and any number of passes.
//!
//! Input: a pass count byte, then datagrams, each a `u16` length (big
//! endian) and its bytes. The same datagrams go through every pass, as a
//! looped replay sends them. The first pass changes nothing; a datagram
//! said to be `Changed` still decodes as the protocol it was; one said
//! `Unchanged` or `Kept` is byte for byte what came in; the counters are
//! the counts of `Changed` and `Kept`; streams stay within the bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::livelink;
use mocap_core::pcap::{Renumber, Renumbered};
use mocap_core::smf;
use mocap_fuzz::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut input = Bytes(data);
    let passes = input.u8().map_or(1, |p| 1 + p % 4);
    let mut datagrams = Vec::new();
    while let Some(len) = input.take::<2>() {
        let d = input.bytes(usize::from(u16::from_be_bytes(len)));
        datagrams.push(d.to_vec());
        if datagrams.len() >= 64 {
            break;
        }
    }
    let src = Some(std::net::SocketAddr::from(([127, 0, 0, 1], 50000)));
    let mut r = Renumber::new();
    let (mut changed, mut kept) = (0u64, 0u64);
    for pass in 0..passes {
        if pass > 0 {
            r.next_pass();
        }
        for d in &datagrams {
            let mut out = d.clone();
            match r.datagram(src, &mut out) {
                Renumbered::Changed => {
                    assert!(pass > 0, "the first pass changes nothing");
                    changed += 1;
                    let was_smf = smf::parse(d).is_ok();
                    let was_livelink = livelink::parse(d).is_ok();
                    assert!(
                        (was_smf && smf::parse(&out).is_ok())
                            || (was_livelink && livelink::parse(&out).is_ok()),
                        "a renumbered datagram decodes as what it was"
                    );
                }
                Renumbered::Unchanged => assert_eq!(&out, d),
                Renumbered::Kept => {
                    kept += 1;
                    assert_eq!(&out, d);
                }
            }
        }
    }
    let c = r.counters();
    assert_eq!((c.renumbered, c.kept), (changed, kept));
    assert!(r.streams() <= mocap_core::pcap::MAX_STREAMS);
});
