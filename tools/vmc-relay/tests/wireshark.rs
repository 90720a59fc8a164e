//! Differential test: our Lua dissector for Wireshark (`tools/wireshark/
//! vmc.lua`, run by tshark) and `vmc-relay --dump` agree on every message of
//! a capture recorded by `vmc-relay -w` (bundles of 55 bones as the reference
//! sender makes them, Root, blendshapes, Apply, OK, T), and both refuse the
//! same datagrams; no prefix or byte flip of a bundle makes the script fail.
//! Needs Debian's tshark (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use mocap_core::pcap::PcapNgWriter;
use mocap_core::testutil::Proc;
use mocap_core::vmc::{self, Message};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_vmc-relay");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn script() -> PathBuf {
    Path::new(ROOT).join("tools/wireshark/vmc.lua")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vmc-wireshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Frames as a VMC sender makes them, with values that are not round.
fn datagrams() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for k in 0..20u32 {
        let t = k as f32 / 60.0;
        let mut f: Vec<Message> = vmc::HUMAN_BODY_BONES
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let a = (i as f32 * 0.37 + t).sin() * 0.7;
                let (s, c) = a.sin_cos();
                Message::BonePos {
                    name: (*b).into(),
                    pos: [i as f32 * 0.013, t * 1.7, -0.21 * a],
                    rot: [s * 0.6, s * 0.8, 0.0, c],
                }
            })
            .collect();
        f.insert(
            0,
            Message::RootPos {
                name: "root".into(),
                pos: [t, 0.0, -t / 3.0],
                rot: [0.0, 0.0, 0.0, 1.0],
                mr: None,
            },
        );
        for (j, n) in ["Joy", "A", "Blink_L"].iter().enumerate() {
            f.push(Message::BlendVal {
                name: (*n).into(),
                value: (t * 3.1 + j as f32).fract(),
            });
        }
        f.push(Message::BlendApply);
        f.push(Message::Available {
            loaded: 1,
            calibration: None,
            tracking: None,
        });
        f.push(Message::Time(t + 1234.5678));
        out.extend(vmc::frame_datagrams(&f, vmc::MAX_BUNDLE));
    }
    // Not OSC, and a bundle nested too deep: refused by both.
    out.push(b"\x00garbage!".to_vec());
    let mut bomb = mocap_core::osc::message(&mocap_core::osc::Message::new("/x", vec![]));
    for _ in 0..12 {
        let mut b = b"#bundle\0\0\0\0\0\0\0\0\x01".to_vec();
        b.extend_from_slice(&(bomb.len() as i32).to_be_bytes());
        b.extend_from_slice(&bomb);
        bomb = b;
    }
    out.push(bomb);
    out
}

/// The datagrams sent through a live `vmc-relay -w`, so the capture is one
/// our recorder wrote from real sockets.
fn record(input: &[Vec<u8>]) -> (PathBuf, u16) {
    let cap = tmp("relay.pcapng");
    let mut p = Proc::spawn(
        BIN,
        &[
            "-l",
            "127.0.0.1:0",
            "--dump",
            "-w",
            cap.to_str().unwrap(),
            "-n",
            &input.len().to_string(),
        ],
        None,
    );
    let (_, at) = p.log_line("listening on");
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    for d in input {
        tx.send_to(d, at.unwrap()).unwrap();
        std::thread::sleep(Duration::from_micros(300));
    }
    let done = p.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    (cap, at.unwrap().port())
}

const FIELDS: [&str; 16] = [
    "vmc.messages",
    "vmc.address",
    "vmc.bone.name",
    "vmc.bone.px",
    "vmc.bone.py",
    "vmc.bone.pz",
    "vmc.bone.qx",
    "vmc.bone.qy",
    "vmc.bone.qz",
    "vmc.bone.qw",
    "vmc.root.name",
    "vmc.blend.name",
    "vmc.blend.value",
    "vmc.time",
    "vmc.ok.loaded",
    "_ws.expert.message",
];

fn list(cell: &str) -> Vec<&str> {
    if cell.is_empty() {
        Vec::new()
    } else {
        cell.split(';').collect()
    }
}

fn close(ours: &Value, theirs: &str, what: &str) {
    let t: f64 = theirs
        .parse()
        .unwrap_or_else(|e| panic!("{what}: {theirs:?}: {e}"));
    let o = ours.as_f64().unwrap();
    assert!(
        (o - t).abs() <= 1e-13 * o.abs().max(1e-300),
        "{what}: ours {o}, tshark {t}"
    );
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn lua_dissector_agrees_with_vmc_relay_dump() {
    let input = datagrams();
    let (cap, port) = record(&input);
    // Ours: every message of the capture, in order, errors included.
    let run = Proc::spawn(
        BIN,
        &["-r", cap.to_str().unwrap(), "--dump", "--format", "json"],
        None,
    )
    .finish();
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let recs: Vec<Value> = run
        .json()
        .into_iter()
        .filter(|r| r["type"] != "summary")
        .collect();
    let mut cmd = Command::new("tshark");
    cmd.arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", script().display()))
        .arg("-r")
        .arg(&cap)
        // The relay listened on an ephemeral port: decode it as VMC.
        .arg("-d")
        .arg(format!("udp.port=={port},vmc"))
        .args([
            "-Y",
            "vmc",
            "-T",
            "fields",
            "-E",
            "separator=|",
            "-E",
            "aggregator=;",
        ]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("tshark runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !stderr.contains("Lua"), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), input.len());
    let mut next = recs.iter();
    let mut bones_seen = 0;
    for (k, row) in rows.iter().enumerate() {
        let col = |f: &str| row[FIELDS.iter().position(|x| *x == f).unwrap()];
        let experts = list(col("_ws.expert.message"));
        let n: usize = col("vmc.messages").parse().unwrap_or(0);
        if n == 0 {
            let rec = next.next().unwrap();
            assert_eq!(rec["type"], "error", "#{k}");
            assert!(
                experts.iter().any(|e| e.starts_with("not OSC")),
                "#{k}: {experts:?}"
            );
            continue;
        }
        assert!(experts.is_empty(), "#{k}: {experts:?}");
        let addresses = list(col("vmc.address"));
        assert_eq!(addresses.len(), n);
        let (mut bones, mut blends) = (0, 0);
        for addr in addresses {
            let rec = next.next().unwrap();
            match rec["type"].as_str().unwrap() {
                "vmc.bone" => {
                    assert_eq!(addr, "/VMC/Ext/Bone/Pos");
                    assert_eq!(
                        list(col("vmc.bone.name"))[bones],
                        rec["name"].as_str().unwrap()
                    );
                    for (j, f) in ["px", "py", "pz"].iter().enumerate() {
                        close(
                            &rec["pos"][j],
                            list(col(&format!("vmc.bone.{f}")))[bones],
                            f,
                        );
                    }
                    for (j, f) in ["qx", "qy", "qz", "qw"].iter().enumerate() {
                        close(
                            &rec["rot"][j],
                            list(col(&format!("vmc.bone.{f}")))[bones],
                            f,
                        );
                    }
                    bones += 1;
                    bones_seen += 1;
                }
                "vmc.root" => {
                    assert_eq!(addr, "/VMC/Ext/Root/Pos");
                    assert_eq!(col("vmc.root.name"), rec["name"].as_str().unwrap());
                }
                "vmc.blend" => {
                    assert_eq!(addr, "/VMC/Ext/Blend/Val");
                    assert_eq!(
                        list(col("vmc.blend.name"))[blends],
                        rec["name"].as_str().unwrap()
                    );
                    close(&rec["value"], list(col("vmc.blend.value"))[blends], "blend");
                    blends += 1;
                }
                "vmc.apply" => assert_eq!(addr, "/VMC/Ext/Blend/Apply"),
                "vmc.ok" => {
                    assert_eq!(addr, "/VMC/Ext/OK");
                    assert_eq!(col("vmc.ok.loaded"), rec["loaded"].to_string());
                }
                "vmc.time" => {
                    assert_eq!(addr, "/VMC/Ext/T");
                    close(&rec["time"], col("vmc.time"), "time");
                }
                other => panic!("#{k}: {other}"),
            }
        }
    }
    assert!(next.next().is_none());
    assert_eq!(bones_seen, 20 * vmc::HUMAN_BODY_BONES.len());
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn no_prefix_or_byte_flip_makes_the_lua_script_fail() {
    let bundle = datagrams().remove(0);
    let path = tmp("mutations.pcapng");
    let mut w = PcapNgWriter::new(std::fs::File::create(&path).unwrap()).unwrap();
    let (src, dst): (SocketAddr, SocketAddr) = (
        "127.0.0.1:50000".parse().unwrap(),
        "127.0.0.1:39539".parse().unwrap(),
    );
    let mut n = 0u64;
    let mut put = |bytes: &[u8]| {
        n += 1;
        w.write(Duration::from_micros(n), src, dst, bytes).unwrap();
    };
    for cut in 1..bundle.len() {
        put(&bundle[..cut]);
    }
    for i in 0..bundle.len() {
        let mut v = bundle.clone();
        v[i] ^= 0xff;
        put(&v);
    }
    w.flush().unwrap();
    drop(w);
    let out = Command::new("tshark")
        .arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", script().display()))
        .arg("-r")
        .arg(&path)
        .args([
            "-T",
            "fields",
            "-e",
            "vmc.messages",
            "-e",
            "_ws.expert.message",
        ])
        .args(["-E", "separator=|"])
        .output()
        .expect("tshark runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !text.contains("Lua Error") && !stderr.contains("Lua Error"),
        "{stderr}"
    );
    assert!(!text.contains("dissector error"), "{text}");
    assert_eq!(text.lines().count(), 2 * bundle.len() - 1);
}
