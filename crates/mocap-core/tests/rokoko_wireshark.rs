//! `tools/wireshark/rokoko.lua` against our decoder, in tshark: on every
//! datagram of the bundled capture the same kind (a plain frame, an LZ4
//! frame, or refused), the same timestamp, actor names and segment counts
//! for plain frames and, for LZ4 ones, the declared content size our
//! inflation gives; and no prefix or byte flip of a plain or an LZ4
//! datagram makes the script fail.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::path::PathBuf;

use mocap_core::rokoko;
use mocap_testutil::tshark;

fn script() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tools/wireshark/rokoko.lua"
    ))
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn every_datagram_of_the_capture_reads_as_ours() {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../captures/rokoko/studio-60fps.pcap"
    ));
    let rows = tshark::fields(
        &script(),
        &path,
        &[],
        &[
            "rokoko.kind",
            "rokoko.timestamp",
            "rokoko.actor",
            "rokoko.segments",
            "rokoko.lz4.content_size",
        ],
    );
    let ours = mocap_testutil::capture_payloads("rokoko/studio-60fps.pcap");
    assert_eq!(rows.len(), ours.len());
    let mut kinds = [0; 3];
    for (i, (row, d)) in rows.iter().zip(&ours).enumerate() {
        let cell = |k: usize| row[k].as_str();
        match rokoko::parse(d) {
            Ok(f) if f.compressed => {
                kinds[1] += 1;
                assert_eq!(cell(0), "lz4", "{i}");
                let size = rokoko::inflate(d).unwrap().len();
                assert_eq!(cell(4).parse::<usize>().ok(), Some(size), "{i}");
            }
            Ok(f) => {
                kinds[0] += 1;
                assert_eq!(cell(0), "frame", "{i}");
                let t: f64 = cell(1).parse().unwrap();
                assert!((t - f.timestamp.unwrap()).abs() < 1e-9, "{i}: {t}");
                let names: Vec<&str> = f
                    .actors
                    .iter()
                    .map(|a| a.name.as_deref().unwrap())
                    .collect();
                assert_eq!(tshark::list(cell(2)), names, "{i}");
                let counts: Vec<String> =
                    f.actors.iter().map(|a| a.body.len().to_string()).collect();
                assert_eq!(tshark::list(cell(3)), counts, "{i}");
            }
            // The cut LZ4 last: the script cannot inflate, so it shows the
            // frame's header, which is whole.
            Err(_) => {
                kinds[2] += 1;
                assert_eq!(cell(0), "lz4", "{i}");
            }
        }
    }
    assert_eq!(kinds, [90, 89, 1]);
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn no_prefix_or_flip_breaks_the_script() {
    let ours = mocap_testutil::capture_payloads("rokoko/studio-60fps.pcap");
    let ends = (
        "192.168.1.40:53000".parse().unwrap(),
        "192.168.1.10:14043".parse().unwrap(),
    );
    for (k, seed) in [&ours[0], &ours[90]].into_iter().enumerate() {
        let scratch = tshark::scratch("rokoko", &format!("sweep-{k}.pcapng"));
        let rows = tshark::sweep(&script(), &scratch, seed, ends, "rokoko.kind");
        assert_eq!(rows.len(), 2 * seed.len() - 1);
        if k == 0 {
            // A cut plain datagram is never taken for a whole one.
            for (cut, row) in rows.iter().take(seed.len() - 1).enumerate() {
                assert!(
                    row.starts_with("malformed"),
                    "prefix of {} bytes: {row}",
                    cut + 1
                );
            }
        }
    }
}
