//! `tools/wireshark/vtubestudio.lua` against our decoder, in tshark: on
//! every datagram of the bundled capture the same kind (request, data, or
//! refused), the same members (timestamp, face found, sender name, time,
//! ports, blendshape names and values); and no prefix or byte flip of a
//! request or a frame makes the script fail.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::path::PathBuf;

use mocap_core::vtubestudio::{self, Packet};
use mocap_testutil::tshark;

fn script() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tools/wireshark/vtubestudio.lua"
    ))
}

fn capture_path() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../captures/vtubestudio/phone-60fps.pcap"
    ))
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn every_datagram_of_the_capture_reads_as_ours() {
    let rows = tshark::fields(
        &script(),
        &capture_path(),
        // The data found by content (the heuristic), not by a port.
        &[],
        &[
            "vtubestudio.kind",
            "vtubestudio.timestamp",
            "vtubestudio.face_found",
            "vtubestudio.sent_by",
            "vtubestudio.time",
            "vtubestudio.port",
            "vtubestudio.blendshape.name",
            "vtubestudio.blendshape.value",
        ],
    );
    let ours = mocap_testutil::capture_payloads("vtubestudio/phone-60fps.pcap");
    assert_eq!(rows.len(), ours.len());
    for (i, (row, d)) in rows.iter().zip(&ours).enumerate() {
        let cell = |k: usize| row[k].as_str();
        match vtubestudio::parse(d) {
            Err(_) => assert_eq!(cell(0), "malformed", "{i}"),
            Ok(Packet::Request(r)) => {
                assert_eq!(cell(0), "request", "{i}");
                assert_eq!(Some(cell(3)), r.sent_by.as_deref(), "{i}");
                assert_eq!(cell(4).parse::<f64>().ok(), r.time, "{i}");
                let ports: Vec<u16> = tshark::list(cell(5))
                    .iter()
                    .map(|p| p.parse().unwrap())
                    .collect();
                assert_eq!(ports, r.ports, "{i}");
            }
            Ok(Packet::Data(t)) => {
                assert_eq!(cell(0), "data", "{i}");
                assert_eq!(cell(1).parse::<i64>().ok(), t.timestamp, "{i}");
                let found = t.face_found.map(|f| if f { "1" } else { "0" });
                assert_eq!(Some(cell(2)), found, "{i}");
                let names = tshark::list(cell(6));
                let values = tshark::list(cell(7));
                assert_eq!(names.len(), t.blendshapes.len(), "{i}");
                for ((n, v), (name, value)) in names.iter().zip(&values).zip(&t.blendshapes) {
                    assert_eq!(n, name, "{i}");
                    assert_eq!(v.parse::<f64>().unwrap(), *value, "{i} {name}");
                }
            }
        }
    }
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn no_prefix_or_flip_breaks_the_script() {
    let ours = mocap_testutil::capture_payloads("vtubestudio/phone-60fps.pcap");
    let ends = (
        "192.168.1.20:50000".parse().unwrap(),
        "192.168.1.30:21412".parse().unwrap(),
    );
    for (k, seed) in [&ours[0], &ours[1]].into_iter().enumerate() {
        let scratch = tshark::scratch("vtubestudio", &format!("sweep-{k}.pcapng"));
        let rows = tshark::sweep(&script(), &scratch, seed, ends, "vtubestudio.kind");
        assert_eq!(rows.len(), 2 * seed.len() - 1);
        // A cut datagram is never taken for a whole one.
        for (cut, row) in rows.iter().take(seed.len() - 1).enumerate() {
            assert!(
                row.starts_with("malformed"),
                "prefix of {} bytes: {row}",
                cut + 1
            );
        }
    }
}
