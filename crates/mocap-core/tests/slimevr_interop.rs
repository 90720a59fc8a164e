//! SlimeVR datagrams against SlimeVR's own decoder: the npm package
//! `@slimevr/firmware-protocol` (pinned in `scripts/js/package-lock.json`,
//! loaded through its ESM build by `scripts/js/slimevr-interop.mjs`) decodes
//! every datagram of the bundled capture, both directions, and each field
//! it reads equals ours. The package has no encoder for bundles, so the
//! check is one way: its reading of bytes packed from the firmware's and
//! the server's layouts. Needs `npm ci --prefix scripts/js`.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::Command;

use mocap_core::slimevr::{self, Message};
use serde_json::{Value, json};

const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 168, 1, 10));

/// (to the tracker, payload) of every datagram of the capture.
fn capture() -> Vec<(bool, Vec<u8>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../captures/slimevr/tracker-100hz.pcap"
    );
    let mut d = mocap_core::pcap::Datagrams::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(c) = d.next_datagram() {
        let c = c.unwrap();
        out.push((c.src.ip() == SERVER, c.payload.to_vec()));
    }
    out
}

/// Theirs is ours widened: JavaScript reads an `f32` into a double.
fn same(theirs: &Value, ours: f32) -> bool {
    theirs.as_f64() == Some(f64::from(ours))
}

/// Their flags: every position they know is set exactly where ours is.
fn flags_agree(theirs: &Value, ours: &[u8]) {
    let enabled: Vec<u64> = theirs["enabled"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    for p in theirs["known"].as_array().unwrap() {
        let p = p.as_u64().unwrap();
        let bit = ours
            .get(usize::try_from(p / 8).unwrap())
            .is_some_and(|b| b & (1 << (p % 8)) != 0);
        assert_eq!(enabled.contains(&p), bit, "flag {p}");
    }
}

fn rotation_agrees(t: &Value, m: &Message<'_>) {
    let Message::RotationData {
        sensor,
        data_type,
        quat,
        accuracy,
    } = *m
    else {
        panic!("{m:?}")
    };
    assert_eq!(t["name"], "ServerBoundRotationDataPacket");
    assert_eq!(
        (&t["sensorId"], &t["dataType"], &t["accuracyInfo"]),
        (&json!(sensor), &json!(data_type), &json!(accuracy))
    );
    for (theirs, ours) in t["rotation"].as_array().unwrap().iter().zip(quat) {
        assert!(same(theirs, ours), "{theirs} {ours}");
    }
}

/// One datagram `d`: their packet `t` (fields as they read them) against
/// ours, `p`.
fn agrees(t: &Value, p: &slimevr::Packet<'_>, d: &[u8]) {
    let name = t["name"].as_str().unwrap();
    match p.message {
        Message::Handshake(h) => {
            assert_eq!(name, "ServerBoundHandshakePacket");
            assert_eq!(t["boardType"], json!(h.board.unwrap()));
            assert_eq!(t["mcuType"], json!(h.mcu.unwrap()));
            assert_eq!(t["firmwareBuild"], json!(h.build.unwrap()));
            let firmware = std::str::from_utf8(h.firmware.unwrap()).unwrap();
            assert_eq!(t["firmware"], json!(firmware));
            assert_eq!(t["mac"], json!(h.mac.unwrap()));
            // Its IMU table ends at 9 (BNO086): the BMI270 (11) reads as
            // unknown there, as the raw number here.
            assert_eq!((t["imuType"].as_u64(), h.imu), (Some(0), Some(11)));
        }
        Message::HandshakeAnswer { .. } => assert_eq!(name, "DeviceBoundHandshakePacket"),
        Message::FeatureFlags { flags } => {
            assert!(name.ends_with("FeatureFlagsPacket"), "{name}");
            flags_agree(&t["flags"], flags);
        }
        Message::SensorInfo(s) => {
            assert_eq!(name, "ServerBoundSensorInfoPacket");
            assert_eq!(
                (&t["sensorId"], &t["sensorStatus"]),
                (&json!(s.sensor), &json!(s.status))
            );
        }
        Message::SensorAck { sensor, status } => {
            assert_eq!(name, "DeviceBoundSensorInfoPacket");
            // The package reads these two from the start of the datagram,
            // the type's zero bytes (its parse does not skip the type for
            // this packet); the firmware reads them after the type, as we
            // do (connection.cpp copies from m_Packet + 4).
            assert_eq!((&t["sensorId"], &t["sensorStatus"]), (&json!(0), &json!(0)));
            assert_eq!((sensor, status), (d[4], d[5]));
        }
        Message::Bundle(b) => {
            assert_eq!(name, "ServerBoundBundlePacket");
            let theirs = t["packets"].as_array().unwrap();
            assert_eq!(theirs.len(), b.len());
            for (t, m) in theirs.iter().zip(b.messages()) {
                rotation_agrees(t, &m);
            }
        }
        Message::Battery { volts, level } => {
            assert_eq!(name, "ServerBoundBatteryLevelPacket");
            assert!(same(&t["voltage"], volts.unwrap()));
            // It reports a percentage: the fraction on the wire times 100.
            assert_eq!(t["percentage"].as_f64(), Some(f64::from(level) * 100.0));
        }
        Message::Signal { sensor, dbm } => {
            assert_eq!(name, "ServerBoundSignalStrengthPacket");
            assert_eq!(
                (&t["sensorId"], &t["signalStrength"]),
                (&json!(sensor), &json!(dbm))
            );
        }
        Message::Temperature { sensor, celsius } => {
            assert_eq!(name, "ServerBoundTemperaturePacket");
            assert_eq!(t["sensorId"], json!(sensor));
            assert!(same(&t["temperature"], celsius));
        }
        Message::Heartbeat => assert_eq!(name, "ServerBoundHeartbeatPacket"),
        Message::ServerHeartbeat => assert_eq!(name, "DeviceBoundHeartbeatPacket"),
        Message::Ping { id } => {
            assert!(name == "DeviceBoundPingPacket" || name == "ServerBoundPongPacket");
            assert_eq!(t["id"], json!(id));
        }
        ref other => panic!("not in the capture: {other:?}"),
    }
}

#[test]
#[ignore = "needs node + @slimevr/firmware-protocol: scripts/test-all.sh"]
fn slimevrs_package_reads_every_field_as_we_do() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let js = root.join("scripts/js");
    assert!(
        js.join("node_modules/@slimevr/firmware-protocol").exists(),
        "@slimevr/firmware-protocol is not installed: run scripts/test-all.sh (or `npm ci --prefix scripts/js`)"
    );
    let datagrams = capture();
    let cases: Vec<Value> = datagrams
        .iter()
        .map(|(to_tracker, d)| json!({"hex": hex::encode(d), "to_tracker": to_tracker}))
        .collect();
    let dir = std::env::temp_dir().join(format!("slimevr-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (input, output) = (dir.join("in.json"), dir.join("out.json"));
    std::fs::write(&input, json!({ "cases": cases }).to_string()).unwrap();
    let run = Command::new("node")
        .arg(js.join("slimevr-interop.mjs"))
        .arg(&input)
        .arg(&output)
        .output()
        .expect("node runs");
    assert!(
        run.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let decoded = out["decoded"].as_array().unwrap();
    assert_eq!(decoded.len(), datagrams.len());
    let mut refused = 0;
    for (i, ((_, d), theirs)) in datagrams.iter().zip(decoded).enumerate() {
        match slimevr::parse(d) {
            Ok(p) => {
                assert!(theirs.get("error").is_none(), "{i}: {theirs}");
                // The answer and the acknowledgement carry no number: 0 there.
                let number = p.number.unwrap_or(0).to_string();
                assert_eq!(theirs["number"], json!(number), "{i}");
                agrees(&theirs["packet"], &p, d);
            }
            Err(e) => {
                // The cut bundle: it throws where we refuse.
                assert!(theirs["error"].is_string(), "{i}: {e} but {theirs}");
                refused += 1;
            }
        }
    }
    assert_eq!(refused, 1);
    let _ = std::fs::remove_dir_all(&dir);
}
