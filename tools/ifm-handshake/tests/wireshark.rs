//! Differential test: our Lua dissector for Wireshark (`tools/wireshark/
//! ifacialmocap.lua`, run by tshark) and `ifm-handshake -r` agree on every
//! frame of every bundled capture: blendshapes (ARKit names, values), head,
//! eyes, tracking, unknown keys, and which fields were skipped and where;
//! what we refuse the dissector marks as a command or malformed. No prefix or
//! byte flip of a frame makes the script fail. Needs Debian's tshark
//! (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use mocap_testutil::{Proc, tshark};
use serde_json::Value;
use tshark::list;

const BIN: &str = env!("CARGO_BIN_EXE_ifm-handshake");
const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures/ifacialmocap");
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tools/wireshark/ifacialmocap.lua"
);

fn tmp(name: &str) -> PathBuf {
    tshark::scratch("ifm", name)
}

/// The phone's and our end of the UDP stream.
fn ends() -> (SocketAddr, SocketAddr) {
    (
        "127.0.0.2:49983".parse().unwrap(),
        "127.0.0.1:49983".parse().unwrap(),
    )
}

/// Datagrams as a pcapng, phone 127.0.0.2:49983 → 127.0.0.1:49983.
fn pcap(name: &str, datagrams: &[Vec<u8>]) -> PathBuf {
    let out = tmp(&format!("{name}.pcapng"));
    let (src, dst) = ends();
    tshark::write_pcap(&out, src, dst, datagrams);
    out
}

const FIELDS: [&str; 14] = [
    "ifacialmocap.kind",
    "ifacialmocap.tracking",
    "ifacialmocap.blendshape.name",
    "ifacialmocap.blendshape.value",
    "ifacialmocap.head.rx",
    "ifacialmocap.head.ry",
    "ifacialmocap.head.rz",
    "ifacialmocap.head.px",
    "ifacialmocap.head.py",
    "ifacialmocap.head.pz",
    "ifacialmocap.right_eye",
    "ifacialmocap.left_eye",
    "ifacialmocap.unknown.name",
    "_ws.expert.message",
];

fn tshark(path: &Path) -> Vec<Vec<String>> {
    tshark::fields(Path::new(SCRIPT), path, &["-Y", "ifacialmocap"], &FIELDS)
}

fn close(ours: &Value, theirs: &str, what: &str) {
    tshark::close(ours, theirs, 1e-12, 1.0, what);
}

fn compare(name: &str, path: &Path, recs: &[Value]) -> usize {
    let rows = tshark(path);
    let recs: Vec<&Value> = recs.iter().filter(|r| r["type"] != "summary").collect();
    assert_eq!(rows.len(), recs.len(), "{name}: datagrams");
    for (k, (row, rec)) in rows.iter().zip(&recs).enumerate() {
        let at = format!("{name} #{k}");
        let col = |f: &str| row[FIELDS.iter().position(|x| *x == f).unwrap()].as_str();
        if rec["type"] == "error" {
            assert!(
                ["command", "malformed"].contains(&col("ifacialmocap.kind")),
                "{at}: {row:?}"
            );
            continue;
        }
        assert_eq!(col("ifacialmocap.kind"), "frame", "{at}");
        match rec["tracking"].as_bool() {
            Some(true) => assert_eq!(col("ifacialmocap.tracking"), "1", "{at}"),
            Some(false) => assert_eq!(col("ifacialmocap.tracking"), "0", "{at}"),
            None => assert_eq!(col("ifacialmocap.tracking"), "", "{at}"),
        }
        let names = list(col("ifacialmocap.blendshape.name"));
        let values = list(col("ifacialmocap.blendshape.value"));
        let ours = rec["blendshapes"].as_object().unwrap();
        assert_eq!(names.len(), ours.len(), "{at}");
        for (n, v) in names.iter().zip(&values) {
            close(&ours[*n], v, &format!("{at} {n}"));
        }
        if rec["head"].is_object() {
            for (j, a) in ["rx", "ry", "rz"].iter().enumerate() {
                close(
                    &rec["head"]["rot"][j],
                    col(&format!("ifacialmocap.head.{a}")),
                    &at,
                );
            }
            for (j, a) in ["px", "py", "pz"].iter().enumerate() {
                close(
                    &rec["head"]["pos"][j],
                    col(&format!("ifacialmocap.head.{a}")),
                    &at,
                );
            }
        } else {
            assert_eq!(col("ifacialmocap.head.rx"), "", "{at}");
        }
        for (key, field) in [
            ("right_eye", "ifacialmocap.right_eye"),
            ("left_eye", "ifacialmocap.left_eye"),
        ] {
            let theirs: Vec<&str> = col(field).split(',').filter(|s| !s.is_empty()).collect();
            match rec[key].as_array() {
                Some(v) => {
                    assert_eq!(theirs.len(), 3, "{at} {key}");
                    for (o, t) in v.iter().zip(&theirs) {
                        close(o, t, &format!("{at} {key}"));
                    }
                }
                None => assert!(theirs.is_empty(), "{at} {key}"),
            }
        }
        let mut unknown: Vec<&str> = list(col("ifacialmocap.unknown.name"));
        unknown.sort_unstable();
        let mut want: Vec<&str> = rec["unknown"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        want.sort_unstable();
        assert_eq!(unknown, want, "{at}");
        // The same skipped fields, with the same reason at the same byte.
        let experts = list(col("_ws.expert.message"));
        let warnings: Vec<&str> = rec["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(
            experts.len(),
            warnings.len(),
            "{at}: {experts:?} vs {warnings:?}"
        );
        for (e, w) in experts.iter().zip(&warnings) {
            assert!(w.starts_with(&format!("{e}:")), "{at}: {e:?} vs {w:?}");
        }
    }
    rows.len()
}

fn ours(path: &str) -> Vec<Value> {
    let run = Proc::spawn(BIN, &["-r", path, "--format", "json"], None).finish();
    assert_eq!(run.code, Some(0), "{path}: {}", run.stderr);
    run.json()
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn lua_dissector_agrees_with_ifm_handshake_on_every_capture() {
    let mut frames = 0;
    let cap = format!("{CAPTURES}/face-60fps.pcapng");
    frames += compare("face-60fps.pcapng", Path::new(&cap), &ours(&cap));
    for name in [
        "v1_corrupted_stale_tail.txt",
        "v1_minbitt_head_decode_example.txt",
        "v1_minbitt_head_sample_data.txt",
        "v1_minbitt_head_v2_eyebrow_testing_line1.txt",
        "v1_minbitt_head_v2_mouth_tune_lines10-11_key_order_change.txt",
        "v1_official_doc_sample.txt",
        "v2_vcam_test_sample.txt",
    ] {
        let path = format!("{CAPTURES}/{name}");
        let text = std::fs::read_to_string(&path).unwrap();
        // One datagram per line, as ifm-handshake reads text captures.
        let datagrams: Vec<Vec<u8>> = text
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| l.as_bytes().to_vec())
            .collect();
        frames += compare(name, &pcap(name, &datagrams), &ours(&path));
    }
    assert!(frames >= 203, "{frames}");
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn no_prefix_or_byte_flip_makes_the_lua_script_fail() {
    let text =
        std::fs::read_to_string(format!("{CAPTURES}/v1_minbitt_head_sample_data.txt")).unwrap();
    let frame = text.lines().next().unwrap().as_bytes().to_vec();
    let rows = tshark::sweep(
        Path::new(SCRIPT),
        &tmp("mutations.pcapng"),
        &frame,
        ends(),
        "ifacialmocap.kind",
    );
    assert_eq!(rows.len(), 2 * frame.len() - 1);
    // Every packet is either decoded or says why not.
    assert!(rows.iter().all(|l| !l.trim().is_empty() && l != "|"));
}

/// A classic pcap of one TCP stream, phone 127.0.0.2:50123 → 127.0.0.1:49986,
/// carrying `payload` in segments of `mss` bytes (Ethernet, IPv4, TCP with
/// PSH|ACK and running sequence numbers; checksums left zero, which
/// Wireshark does not verify by default).
fn tcp_pcap(name: &str, payload: &[u8], mss: usize) -> PathBuf {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65_535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes()); // Ethernet
    let mut seq = 1000u32;
    for (i, seg) in payload.chunks(mss).enumerate() {
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x08, 0x00]);
        let total = (20 + 20 + seg.len()) as u16;
        frame.extend_from_slice(&[
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ]);
        frame.extend_from_slice(&[127, 0, 0, 2, 127, 0, 0, 1]);
        frame.extend_from_slice(&50_123u16.to_be_bytes());
        frame.extend_from_slice(&49_986u16.to_be_bytes());
        frame.extend_from_slice(&seq.to_be_bytes());
        frame.extend_from_slice(&1u32.to_be_bytes());
        frame.extend_from_slice(&[0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        frame.extend_from_slice(seg);
        seq = seq.wrapping_add(seg.len() as u32);
        out.extend_from_slice(&(i as u32).to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&frame);
    }
    let path = tmp(&format!("{name}.pcap"));
    std::fs::write(&path, out).unwrap();
    path
}

/// TCP mode: frames followed by `___iFacialMocap`, cut into segments at
/// arbitrary places (several frames in one segment, one frame over several):
/// reassembled, every frame found once with its values.
#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn tcp_frames_are_reassembled_across_segments() {
    let text =
        std::fs::read_to_string(format!("{CAPTURES}/v1_minbitt_head_sample_data.txt")).unwrap();
    let frames: Vec<&str> = text.lines().filter(|l| !l.is_empty()).take(8).collect();
    let stream: String = frames
        .iter()
        .map(|f| format!("{f}___iFacialMocap"))
        .collect();
    for mss in [97, 1460, 3000] {
        let path = tcp_pcap(&format!("tcp-{mss}"), stream.as_bytes(), mss);
        let out = Command::new("tshark")
            .args(["-n", "-X"])
            .arg(format!("lua_script:{SCRIPT}"))
            .arg("-r")
            .arg(&path)
            .args(["-Y", "ifacialmocap", "-T", "fields", "-E", "aggregator=;"])
            .args(["-e", "ifacialmocap.kind", "-e", "ifacialmocap.head.rx"])
            .output()
            .expect("tshark runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !stderr.contains("Lua"), "{stderr}");
        let kinds: Vec<&str> = stdout
            .lines()
            .flat_map(|l| l.split('\t').next().unwrap_or("").split(';'))
            .filter(|k| !k.is_empty())
            .collect();
        assert_eq!(kinds, vec!["frame"; frames.len()], "mss {mss}: {stdout}");
        let heads: Vec<f64> = stdout
            .lines()
            .flat_map(|l| l.split('\t').nth(1).unwrap_or("").split(';'))
            .filter(|k| !k.is_empty())
            .map(|v| v.parse().unwrap())
            .collect();
        let want: Vec<f64> = frames
            .iter()
            .map(|f| {
                let at = f.find("head#").unwrap() + 5;
                f[at..].split(',').next().unwrap().parse().unwrap()
            })
            .collect();
        assert_eq!(heads, want, "mss {mss}");
    }
}
