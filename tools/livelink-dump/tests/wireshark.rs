//! Differential test: our Lua dissector (`tools/wireshark/livelink.lua`, run
//! by tshark) and `livelink-dump -r` agree on every field of every packet of
//! the bundled capture and of damaged datagrams: kind, device, subject, frame
//! time, the 52 blendshapes, head and eyes, and the malformed and odd-value
//! reasons with their offsets. No prefix or byte flip makes the script fail.
//! Needs Debian's tshark (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use mocap_core::livelink::PacketRepr;
use mocap_testutil::{Proc, tshark};
use serde_json::Value;
use tshark::list;

const BIN: &str = env!("CARGO_BIN_EXE_livelink-dump");
const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/livelink/face-60fps.pcapng"
);
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tools/wireshark/livelink.lua"
);

const FIELDS: [&str; 18] = [
    "livelink.kind",
    "livelink.device",
    "livelink.subject",
    "livelink.frame",
    "livelink.subframe",
    "livelink.rate.num",
    "livelink.rate.den",
    "livelink.blendshape.name",
    "livelink.blendshape.value",
    "livelink.head.yaw",
    "livelink.head.pitch",
    "livelink.head.roll",
    "livelink.left_eye.yaw",
    "livelink.left_eye.pitch",
    "livelink.left_eye.roll",
    "livelink.right_eye.yaw",
    "livelink.right_eye.pitch",
    "_ws.expert.message",
];

fn ours(path: &Path) -> Vec<Value> {
    let done = Proc::spawn(
        BIN,
        &["-q", "-r", path.to_str().unwrap(), "--format", "json"],
        None,
    )
    .finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    done.json()
        .into_iter()
        .filter(|r| r["type"] != "summary")
        .collect()
}

/// A number tshark printed against ours; NaN and infinities are `null` in
/// our JSON (JSON has no such numbers) and must be non-finite in tshark's.
fn close(ours: &Value, theirs: &str, what: &str) {
    if ours.is_null() {
        let t: f64 = theirs.trim_start_matches('-').parse().unwrap_or(0.0);
        assert!(!t.is_finite(), "{what}: ours null, tshark {theirs}");
    } else {
        tshark::close(ours, theirs, 1e-12, 1.0, what);
    }
}

/// Compares every row; returns how many were frames, no-face and malformed.
fn compare(name: &str, path: &Path) -> [usize; 3] {
    let rows = tshark::fields(Path::new(SCRIPT), path, &["-Y", "livelink"], &FIELDS);
    let recs = ours(path);
    assert_eq!(rows.len(), recs.len(), "{name}: packets");
    let mut kinds = [0; 3];
    for (k, (row, rec)) in rows.iter().zip(&recs).enumerate() {
        let at = format!("{name} #{k}");
        let col = |f: &str| row[FIELDS.iter().position(|x| *x == f).unwrap()].as_str();
        let experts = list(col("_ws.expert.message"));
        if rec["type"] == "error" {
            kinds[2] += 1;
            assert_eq!(col("livelink.kind"), "malformed", "{at}");
            let want = format!(
                "{} at offset {} in `{}`",
                rec["reason"].as_str().unwrap(),
                rec["offset"],
                rec["tag"].as_str().unwrap()
            );
            assert_eq!(experts, [want.as_str()], "{at}");
            continue;
        }
        assert_eq!(
            col("livelink.device"),
            rec["device"].as_str().unwrap(),
            "{at}"
        );
        assert_eq!(
            col("livelink.subject"),
            rec["subject"].as_str().unwrap(),
            "{at}"
        );
        assert_eq!(col("livelink.frame"), rec["frame"].to_string(), "{at}");
        close(&rec["subframe"], col("livelink.subframe"), &at);
        assert_eq!(col("livelink.rate.num"), rec["fps"][0].to_string(), "{at}");
        assert_eq!(col("livelink.rate.den"), rec["fps"][1].to_string(), "{at}");
        let odd: Vec<String> = rec["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .map(|w| {
                        format!(
                            "{} at offset {} in `{}`",
                            w["reason"].as_str().unwrap(),
                            w["offset"],
                            w["field"].as_str().unwrap()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        if rec["type"] == "livelink.noface" {
            kinds[1] += 1;
            assert_eq!(col("livelink.kind"), "noface", "{at}");
            let mut want = vec!["No face (the app lost the face)".to_owned()];
            want.extend(odd);
            assert_eq!(experts, want, "{at}");
            continue;
        }
        kinds[0] += 1;
        assert_eq!(rec["type"], "livelink.frame", "{at}");
        assert_eq!(col("livelink.kind"), "frame", "{at}");
        assert_eq!(experts, odd, "{at}");
        let names = list(col("livelink.blendshape.name"));
        let values = list(col("livelink.blendshape.value"));
        let blends = rec["blendshapes"].as_object().unwrap();
        let keys: Vec<&str> = blends.keys().map(String::as_str).collect();
        assert_eq!(names, keys, "{at}: names in wire order");
        for (n, v) in names.iter().zip(&values) {
            close(&blends[*n], v, &format!("{at} {n}"));
        }
        for (part, field) in [
            ("head", "head"),
            ("left_eye", "left_eye"),
            ("right_eye", "right_eye"),
        ] {
            for a in ["yaw", "pitch", "roll"] {
                let f = format!("livelink.{field}.{a}");
                let Some(i) = FIELDS.iter().position(|x| *x == f) else {
                    continue;
                };
                if rec[part].is_null() {
                    assert_eq!(row[i], "", "{at} {f}");
                } else {
                    close(&rec[part][a], &row[i], &format!("{at} {f}"));
                }
            }
        }
    }
    kinds
}

fn scratch(name: &str) -> PathBuf {
    tshark::scratch("livelink", name)
}

fn ends() -> (SocketAddr, SocketAddr) {
    (
        "127.0.0.3:50200".parse().unwrap(),
        "127.0.0.1:11111".parse().unwrap(),
    )
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn dissector_and_tool_agree_on_the_bundled_capture() {
    let kinds = compare("face-60fps", Path::new(CAPTURE));
    // 268 face frames, 30 no-face packets, 1 cut short (captures/README.md).
    assert_eq!(kinds, [268, 30, 1]);
}

fn repr(values: Option<Vec<f32>>) -> PacketRepr {
    PacketRepr {
        device: "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F".into(),
        subject: "Zoe's iPhone".into(),
        frame: 3_456_000,
        subframe: 0.255,
        rate: [60, 1],
        values,
    }
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn dissector_and_tool_agree_on_damaged_and_odd_datagrams() {
    let face = repr(Some((0..61).map(|i| i as f32 / 100.0).collect())).to_bytes();
    let mut odd_values: Vec<f32> = (0..12).map(|i| i as f32).collect();
    odd_values[3] = f32::NAN;
    odd_values[10] = f32::INFINITY;
    let mut odd = PacketRepr {
        rate: [60, 0],
        subframe: f32::NAN,
        ..repr(Some(odd_values))
    }
    .to_bytes();
    odd[6] = 0xc0; // the device id's first byte: an overlong form, not UTF-8
    odd.extend([1, 2, 3]);
    let mut noface_count0 = repr(None).to_bytes();
    noface_count0.extend([0, 9]);
    let long = repr(Some((0..70).map(|i| i as f32).collect())).to_bytes();
    let datagrams = vec![
        // (An empty datagram is left out: Wireshark hands no dissector an
        // empty UDP payload; the unit tests cover ours.)
        face.clone(),
        vec![5, 0, 0, 0, 0],
        vec![6, 0, 0],
        vec![6, 0, 0, 0, 9, b'x'],
        vec![6, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xfe],
        face[..face.len() - 250].to_vec(),
        face[..face.len() - 1].to_vec(),
        odd,
        noface_count0,
        long,
        repr(Some(vec![0.5; 53])).to_bytes(),
    ];
    let path = scratch("damaged.pcapng");
    let (src, dst) = ends();
    tshark::write_pcap(&path, src, dst, &datagrams);
    let kinds = compare("damaged", &path);
    assert_eq!(kinds, [4, 1, 6]);
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn no_prefix_or_flip_breaks_the_dissector() {
    let face = repr(Some((0..61).map(|i| i as f32 / 61.0).collect())).to_bytes();
    let rows = tshark::sweep(
        Path::new(SCRIPT),
        &scratch("sweep.pcapng"),
        &face,
        ends(),
        "livelink.kind",
    );
    assert!(rows.iter().any(|r| r.starts_with("frame|")));
    assert!(rows.iter().any(|r| r.starts_with("noface|")));
    assert!(rows.iter().any(|r| r.starts_with("malformed|")));
}
