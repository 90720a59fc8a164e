//! Differential test: our Lua dissector (`tools/wireshark/slimevr.lua`, run
//! by tshark) and `mocap_core::slimevr::parse` agree on every packet of the
//! bundled capture (kind, number, sensors, quaternions, battery, signal,
//! temperature, handshake fields, the malformed reason with its offset),
//! and on the kind and every message of each prefix and byte flip of a
//! handshake, a bundle, the server's answer and its acknowledgement, none
//! of which makes the script fail. Needs Debian's tshark
//! (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::SocketAddr;
use std::path::Path;

use mocap_core::slimevr::{self, Message, Packet};
use mocap_testutil::tshark::{self, list};
use serde_json::json;

const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/slimevr/tracker-100hz.pcap"
);
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tools/wireshark/slimevr.lua"
);

const FIELDS: [&str; 16] = [
    "slimevr.kind",
    "slimevr.number",
    "slimevr.sensor",
    "slimevr.quat.x",
    "slimevr.quat.y",
    "slimevr.quat.z",
    "slimevr.quat.w",
    "slimevr.battery.volts",
    "slimevr.battery.level",
    "slimevr.rssi",
    "slimevr.temperature",
    "slimevr.board",
    "slimevr.build",
    "slimevr.firmware",
    "slimevr.mac",
    "_ws.expert.message",
];

/// Our kind, as the dissector's `slimevr.kind`.
fn kind(p: &Result<Packet<'_>, slimevr::Error>) -> &'static str {
    match p {
        Ok(p) => match p.message {
            Message::SensorAck { .. } => "sensor ack",
            ref m => m.name(),
        },
        Err(_) => "malformed",
    }
}

/// The expert messages we would give: the refusal, or the warnings.
fn messages(p: &Result<Packet<'_>, slimevr::Error>) -> Vec<String> {
    match p {
        Ok(p) => p.warnings().iter().map(ToString::to_string).collect(),
        Err(e) => vec![e.to_string()],
    }
}

/// Sensors and quaternions of a packet, bundles walked.
fn rotations(m: &Message<'_>, sensors: &mut Vec<u8>, quats: &mut Vec<[f32; 4]>) {
    match *m {
        Message::RotationData { sensor, quat, .. } | Message::Rotation { sensor, quat } => {
            sensors.push(sensor);
            quats.push(quat);
        }
        Message::Bundle(b) => b.messages().for_each(|m| rotations(&m, sensors, quats)),
        Message::Signal { sensor, .. }
        | Message::Temperature { sensor, .. }
        | Message::SensorAck { sensor, .. }
        | Message::SensorInfo(slimevr::SensorInfo { sensor, .. }) => sensors.push(sensor),
        _ => {}
    }
}

fn numbers(cell: &str) -> Vec<f64> {
    list(cell).iter().map(|v| v.parse().unwrap()).collect()
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn dissector_and_decoder_agree_on_the_capture() {
    let datagrams = mocap_testutil::capture_payloads("slimevr/tracker-100hz.pcap");
    let rows = tshark::fields(Path::new(SCRIPT), Path::new(CAPTURE), &[], &FIELDS);
    assert_eq!(rows.len(), datagrams.len());
    let mut seen = std::collections::BTreeSet::new();
    for (i, (d, row)) in datagrams.iter().zip(&rows).enumerate() {
        let p = slimevr::parse(d);
        let what = format!("datagram {i}");
        assert_eq!(row[0], kind(&p), "{what}");
        seen.insert(row[0].clone());
        assert_eq!(list(&row[15]), messages(&p), "{what}");
        let Ok(p) = p else { continue };
        let number = p
            .number
            .filter(|_| !matches!(p.message, Message::SensorAck { .. }));
        assert_eq!(
            row[1],
            number.map_or(String::new(), |n| n.to_string()),
            "{what}"
        );
        let (mut sensors, mut quats) = (Vec::new(), Vec::new());
        rotations(&p.message, &mut sensors, &mut quats);
        let theirs: Vec<u8> = list(&row[2]).iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(theirs, sensors, "{what}");
        for (k, column) in (3..7).enumerate() {
            let theirs = numbers(&row[column]);
            assert_eq!(theirs.len(), quats.len(), "{what}");
            for (t, q) in theirs.iter().zip(&quats) {
                tshark::close(&json!(q[k]), &t.to_string(), 1e-12, 1.0, &what);
            }
        }
        match p.message {
            Message::Battery { volts, level } => {
                tshark::close(&json!(volts.unwrap()), &row[7], 1e-12, 1.0, &what);
                tshark::close(&json!(level), &row[8], 1e-12, 1.0, &what);
            }
            Message::Signal { dbm, .. } => assert_eq!(row[9], dbm.to_string(), "{what}"),
            Message::Temperature { celsius, .. } => {
                tshark::close(&json!(celsius), &row[10], 1e-12, 1.0, &what);
            }
            Message::Handshake(h) => {
                assert_eq!(row[11], h.board.unwrap().to_string(), "{what}");
                assert_eq!(row[12], h.build.unwrap().to_string(), "{what}");
                assert_eq!(row[13].as_bytes(), h.firmware.unwrap(), "{what}");
                let mac: Vec<String> = h.mac.unwrap().iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(row[14], mac.join(":"), "{what}");
            }
            _ => {}
        }
    }
    let kinds: Vec<&str> = seen.iter().map(String::as_str).collect();
    assert_eq!(
        kinds,
        [
            "battery",
            "bundle",
            "feature flags",
            "handshake",
            "handshake answer",
            "heartbeat",
            "malformed",
            "ping",
            "sensor ack",
            "sensor info",
            "signal",
            "temperature"
        ]
    );
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn every_prefix_and_flip_agrees_and_never_fails_the_script() {
    let datagrams = mocap_testutil::capture_payloads("slimevr/tracker-100hz.pcap");
    let ends: (SocketAddr, SocketAddr) = (
        "192.168.1.51:6969".parse().unwrap(),
        "192.168.1.10:6969".parse().unwrap(),
    );
    // Handshake, answer, bundle, acknowledgement, battery (a flip makes its
    // level no fraction), and a signal packet with a byte too many.
    let mut seeds: Vec<Vec<u8>> = [130, 64, 62, 6, 20]
        .iter()
        .map(|len| datagrams.iter().find(|d| d.len() == *len).unwrap().clone())
        .collect();
    let mut long = datagrams.iter().find(|d| d.len() == 14).unwrap().clone();
    long.push(0);
    seeds.push(long);
    let mut warned = 0;
    for seed in &seeds {
        let len = seed.len();
        let scratch = tshark::scratch("slimevr", &format!("sweep-{len}.pcapng"));
        let rows = tshark::sweep(Path::new(SCRIPT), &scratch, seed, ends, "slimevr.kind");
        let mut mutants: Vec<Vec<u8>> = (1..seed.len()).map(|n| seed[..n].to_vec()).collect();
        for i in 0..seed.len() {
            let mut m = seed.clone();
            m[i] ^= 0xff;
            mutants.push(m);
        }
        for (m, row) in mutants.iter().zip(&rows) {
            let p = slimevr::parse(m);
            let (k, experts) = row.split_once('|').unwrap();
            assert_eq!(k, kind(&p), "{m:02x?}");
            assert_eq!(experts, messages(&p).join(","), "{m:02x?}");
            warned += usize::from(p.is_ok_and(|p| !p.warnings().is_empty()));
        }
    }
    assert!(warned > 0);
}
