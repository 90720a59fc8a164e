//! What the tools recognise before decoding: `protocol::recognise` on a
//! datagram and `filekind::sniff` on a file's head; and what every row of
//! the registry does with any datagram.
//!
//! Neither panics; `recognise` names the protocol whose own `sniff` is the
//! most confident (no other is more sure); a verdict depends only on the
//! bytes (two calls agree). Every row's decode, stamp, face and
//! renumbering read run on the bytes, and the stamp alone is the decode's. A file's kind does not change when bytes are
//! added past the 64 KiB a tool reads (pcap, pcapng and the wrapped formats
//! are told by their first bytes alone).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mocap_core::filekind::{self, FileKind};
use mocap_core::protocol::{self, NoView, Protocol};

fuzz_target!(|data: &[u8]| {
    let best = protocol::recognise(data);
    assert_eq!(best, protocol::recognise(data));
    match best {
        Some((p, c)) => {
            assert_eq!(p.sniff(data), Some(c));
            for q in Protocol::ALL {
                assert!(q.sniff(data).is_none_or(|d| d <= c), "{q} beats {p}");
            }
            assert!(!p.name().is_empty() && !p.default_ports().is_empty());
        }
        None => {
            for q in Protocol::ALL {
                assert_eq!(q.sniff(data), None, "{q}");
            }
        }
    }

    for q in Protocol::ALL {
        assert_eq!(q.stamp(data), q.decode(data, &mut NoView), "{q}");
        let _ = q.spec().face.map(|f| f(data));
        let _ = q.spec().renumber.map(|r| (r.read)(data));
    }

    let kind = filekind::sniff(data);
    assert_eq!(kind, filekind::sniff(data));
    if matches!(kind, FileKind::Pcap | FileKind::PcapNg | FileKind::Foreign { .. }) {
        let mut longer = data.to_vec();
        longer.extend_from_slice(b"\0\xff tail");
        assert_eq!(filekind::sniff(&longer), kind);
    }
});
