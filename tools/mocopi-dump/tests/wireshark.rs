//! Differential test: our Lua dissector for Wireshark (`tools/wireshark/
//! mocopi.lua`, run by tshark) and `mocopi-dump` are two independent
//! decoders; on every bundled capture they must agree on every field of
//! every packet, and on the reason for every datagram we refuse. Then no
//! prefix or byte flip of a real frame makes the Lua script fail. Needs
//! Debian's tshark (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::path::{Path, PathBuf};

use mocap_testutil::{Proc, tshark};
use serde_json::Value;
use tshark::list;

const BIN: &str = env!("CARGO_BIN_EXE_mocopi-dump");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn script() -> PathBuf {
    Path::new(ROOT).join("tools/wireshark/mocopi.lua")
}

fn tmp(name: &str) -> PathBuf {
    tshark::scratch("mocopi", name)
}

const FIELDS: [&str; 17] = [
    "mocopi.kind",
    "mocopi.fnum",
    "mocopi.time",
    "mocopi.uttm",
    "mocopi.ipad",
    "mocopi.rcvp",
    "mocopi.bone.id",
    "mocopi.bone.name",
    "mocopi.bone.parent",
    "mocopi.bone.qx",
    "mocopi.bone.qy",
    "mocopi.bone.qz",
    "mocopi.bone.qw",
    "mocopi.bone.px",
    "mocopi.bone.py",
    "mocopi.bone.pz",
    "_ws.expert.message",
];

/// One row of fields per packet that carries mocopi.
fn tshark(pcap: &Path) -> Vec<Vec<String>> {
    tshark::fields(&script(), pcap, &["-Y", "mocopi"], &FIELDS)
}

/// Ours are exact, tshark prints 15 significant digits.
fn same_number(ours: &Value, theirs: &str, what: &str) {
    tshark::close(ours, theirs, 1e-13, 1e-300, what);
}

fn compare(name: &str, pcap: &Path, records: &[Value]) -> usize {
    let rows = tshark(pcap);
    // Wireshark hands an empty UDP payload to no dissector, so our
    // "empty datagram" error has no row to compare with.
    let records: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] != "summary" && r["len"] != 0)
        .collect();
    assert_eq!(rows.len(), records.len(), "{name}: packets");
    for (k, (row, rec)) in rows.iter().zip(&records).enumerate() {
        let at = format!("{name} #{k}");
        let col = |f: &str| row[FIELDS.iter().position(|x| *x == f).unwrap()].as_str();
        let experts = list(col("_ws.expert.message"));
        if rec["type"] == "error" {
            // The same reason, offset and chunk as our decoder's error.
            let mut want = format!(
                "{} at offset {}",
                rec["reason"].as_str().unwrap(),
                rec["offset"]
            );
            if let Some(tag) = rec["tag"].as_str() {
                want.push_str(&format!(" in `{tag}`"));
            }
            assert!(
                experts.contains(&want.as_str()),
                "{at}: {experts:?} vs {want}"
            );
            assert_eq!(col("mocopi.kind"), "", "{at}: decoded a refused datagram");
            continue;
        }
        let kind = match rec["type"].as_str().unwrap() {
            "mocopi.frame" => "frame",
            "mocopi.skeleton" => "skeleton",
            _ => "sensor",
        };
        assert_eq!(col("mocopi.kind"), kind, "{at}");
        // Warnings we give are expert info there too.
        let warnings = rec["warnings"].as_array().map_or(0, Vec::len);
        let odd = experts
            .iter()
            .filter(|m| {
                m.contains("clock value")
                    || m.contains("non-finite")
                    || m.contains("unit quaternion")
            })
            .count();
        assert_eq!(odd, warnings, "{at}: {experts:?}");
        match rec["sender_ip"].as_str() {
            Some(ip) => assert_eq!(col("mocopi.ipad"), ip, "{at}"),
            None => assert_eq!(col("mocopi.ipad"), "", "{at}"),
        }
        if !rec["sender_port"].is_null() {
            assert_eq!(col("mocopi.rcvp"), rec["sender_port"].to_string(), "{at}");
        }
        if kind == "sensor" {
            continue;
        }
        if kind == "frame" {
            assert_eq!(col("mocopi.fnum"), rec["fnum"].to_string(), "{at}");
            if rec["time"].is_number() {
                same_number(&rec["time"], col("mocopi.time"), &at);
            }
            if rec["uttm"].is_number() {
                same_number(&rec["uttm"], col("mocopi.uttm"), &at);
            }
        }
        let bones = rec["bones"].as_array().unwrap();
        let ids = list(col("mocopi.bone.id"));
        assert_eq!(ids.len(), bones.len(), "{at}");
        let names = list(col("mocopi.bone.name"));
        let parents = list(col("mocopi.bone.parent"));
        for (i, b) in bones.iter().enumerate() {
            assert_eq!(ids[i], b["id"].to_string(), "{at} bone {i}");
            assert_eq!(names[i], b["name"].as_str().unwrap_or(""), "{at} bone {i}");
            if kind == "skeleton" {
                assert_eq!(parents[i], b["parent"].to_string(), "{at} bone {i}");
            }
            for (j, f) in ["qx", "qy", "qz", "qw"].iter().enumerate() {
                let v = list(col(&format!("mocopi.bone.{f}")))[i];
                if b["rot"][j].is_number() {
                    same_number(&b["rot"][j], v, &format!("{at} bone {i} {f}"));
                }
            }
            for (j, f) in ["px", "py", "pz"].iter().enumerate() {
                let v = list(col(&format!("mocopi.bone.{f}")))[i];
                if b["pos"][j].is_number() {
                    same_number(&b["pos"][j], v, &format!("{at} bone {i} {f}"));
                }
            }
        }
    }
    rows.len()
}

/// `mocopi-dump -r FILE --format json`, and a pcapng of the same datagrams
/// (`-w`: what the tool received, so text captures get a pcap too).
fn dump(file: &str) -> (Vec<Value>, PathBuf) {
    let pcap = tmp(&format!("{}.pcapng", file.replace('/', "_")));
    let run = Proc::spawn(
        BIN,
        &[
            "-r",
            &format!("{ROOT}/captures/mocopi/{file}"),
            "--format",
            "json",
            "-w",
            pcap.to_str().unwrap(),
        ],
        None,
    )
    .finish();
    assert_eq!(run.code, Some(0), "{file}: {}", run.stderr);
    (run.json(), pcap)
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn lua_dissector_agrees_with_mocopi_dump_on_every_capture() {
    let mut packets = 0;
    for file in [
        "mocopi-sizes.pcapng",
        "mocopi-sizes-fragmented.pcapng",
        "mocopi-frame-loss.pcapng",
        "wave-60hz.pcapng",
        "tcpdump-lo-ethernet.pcap",
        "tcpdump-any-sll2.pcap",
        "tcpdump-lo-mtu1500-fragmented.pcap",
        "recorded-by-mocopi-dump.pcapng",
        "seed-frame-1575.bin",
        "t-34400/sample_fram.bin",
        "t-34400/sample_skdf.bin",
        "animu-sphere/neutral-standing-60hz.mocopipackets",
        "animu-sphere/arms-lowered-60hz.mocopipackets",
        "animu-sphere/frame-loss-60hz.mocopipackets",
        "animu-sphere/malformed-packets.mocopipackets",
        "animu-sphere/malformed-container.mocopipackets",
    ] {
        let (records, recorded) = dump(file);
        let direct = format!("{ROOT}/captures/mocopi/{file}");
        if file.ends_with(".pcap") || file.ends_with(".pcapng") {
            // As they are, and as our -w wrote them back.
            packets += compare(file, Path::new(&direct), &records);
            packets += compare(&format!("{file} (-w)"), &recorded, &records);
        } else {
            // Datagrams without addresses: our -w writes them to port 12351.
            packets += compare(&format!("{file} (-w)"), &recorded, &records);
        }
    }
    // 16 files, pcap files twice: every packet of every bundled capture.
    assert!(packets >= 600, "{packets}");
}

/// The golden files of `golden_json_for_every_capture` are our own output
/// once reviewed; here they meet an independent decoder. Every record of
/// every golden file must agree with the Lua dissector on the same capture
/// (text captures through the pcapng `-w` writes of the same datagrams), so
/// a golden file blessed from a wrong decoder fails here.
#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn golden_files_agree_with_the_lua_dissector() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut files = 0;
    let mut packets = 0;
    for entry in std::fs::read_dir(&golden).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some(capture) = name.strip_suffix(".jsonl") else {
            continue;
        };
        let capture = capture.replace("__", "/");
        let records: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let at = format!("golden {name}");
        if capture.ends_with(".pcap") || capture.ends_with(".pcapng") {
            let direct = format!("{ROOT}/captures/mocopi/{capture}");
            packets += compare(&at, Path::new(&direct), &records);
        } else {
            let (_, recorded) = dump(&capture);
            packets += compare(&at, &recorded, &records);
        }
        files += 1;
    }
    assert_eq!(
        files, 9,
        "one golden file per capture of golden_json_for_every_capture"
    );
    // 7 captures of 8 records, 13 of the malformed one, 1 raw frame.
    assert_eq!(packets, 7 * 8 + 13 + 1);
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn no_prefix_or_byte_flip_makes_the_lua_script_fail() {
    let seed = std::fs::read(format!("{ROOT}/captures/mocopi/seed-frame-1575.bin")).unwrap();
    let ends = (
        "127.0.0.1:50000".parse().unwrap(),
        "127.0.0.1:12351".parse().unwrap(),
    );
    let rows = tshark::sweep(
        &script(),
        &tmp("mutations.pcapng"),
        &seed,
        ends,
        "mocopi.kind",
    );
    assert_eq!(rows.len(), 2 * seed.len() - 1);
    // Every packet is either decoded or says why not.
    for (i, row) in rows.iter().enumerate() {
        let (kind, experts) = row.split_once('|').unwrap();
        assert!(!kind.is_empty() || !experts.is_empty(), "packet {i}: {row}");
    }
}
