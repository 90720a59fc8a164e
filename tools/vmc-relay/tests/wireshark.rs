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

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mocap_core::vmc::{self, Message};
use mocap_testutil::{Proc, tshark};
use serde_json::Value;
use tshark::list;

const BIN: &str = env!("CARGO_BIN_EXE_vmc-relay");
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn script() -> PathBuf {
    Path::new(ROOT).join("tools/wireshark/vmc.lua")
}

fn tmp(name: &str) -> PathBuf {
    tshark::scratch("vmc", name)
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
        out.extend(vmc::frame_datagrams(&f, vmc::MAX_BUNDLE).unwrap());
    }
    // Not OSC, and a bundle nested too deep: refused by both.
    out.push(b"\x00garbage!".to_vec());
    let mut bomb = mocap_core::osc::message(&mocap_core::osc::Message::new("/x", vec![])).unwrap();
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

fn close(ours: &Value, theirs: &str, what: &str) {
    tshark::close(ours, theirs, 1e-13, 1e-300, what);
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
    // The relay listened on an ephemeral port: decode it as VMC.
    let decode = format!("udp.port=={port},vmc");
    let rows = tshark::fields(&script(), &cap, &["-d", &decode, "-Y", "vmc"], &FIELDS);
    assert_eq!(rows.len(), input.len());
    let mut next = recs.iter();
    let mut bones_seen = 0;
    for (k, row) in rows.iter().enumerate() {
        let col = |f: &str| row[FIELDS.iter().position(|x| *x == f).unwrap()].as_str();
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
    let ends = (
        "127.0.0.1:50000".parse().unwrap(),
        "127.0.0.1:39539".parse().unwrap(),
    );
    let rows = tshark::sweep(
        &script(),
        &tmp("mutations.pcapng"),
        &bundle,
        ends,
        "vmc.messages",
    );
    assert_eq!(rows.len(), 2 * bundle.len() - 1);
}

/// The tracker outputs (`--as vrchat` to 9000, `--as vmt` to 39570) through
/// the dissector: every tracker's id, position and Euler angles, every VMT
/// message's index, enable, time offset, position and quaternion, as our own
/// decoder reads the same datagrams.
#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn dissector_reads_vrchat_and_vmt_trackers_as_we_do() {
    use mocap_core::osc::{self, Arg};
    use mocap_core::vmc::trackers::{VmtOptions, VrchatOptions};
    use mocap_core::vmc::{TrackerFormat, TrackerOptions, TrackerStream};
    use mocap_testutil::humanoid;
    let floats = |m: &&osc::Message| -> Vec<Value> {
        m.args
            .iter()
            .filter_map(|a| match a {
                Arg::Float(f) => Some(Value::from(f64::from(*f))),
                _ => None,
            })
            .collect()
    };
    for (format, port) in [
        (
            TrackerFormat::Vrchat(VrchatOptions {
                head: true,
                ..VrchatOptions::default()
            }),
            9000,
        ),
        (
            TrackerFormat::Vmt(VmtOptions {
                base: 3,
                ..VmtOptions::default()
            }),
            39570,
        ),
    ] {
        // No height: the humanoid has no right foot to measure it by.
        let mut s = TrackerStream::new(TrackerOptions {
            format,
            height: None,
            rate: None,
        });
        let mut datagrams: Vec<Vec<u8>> = Vec::new();
        for k in 0..20 {
            s.handle_frame(
                Duration::from_secs_f64(f64::from(k) / 60.0),
                &humanoid::frame(k, 60.0),
            );
            datagrams.extend(std::iter::from_fn(|| s.poll_transmit()));
        }
        assert_eq!(datagrams.len(), 20);
        let cap = tmp(&format!("trackers-{port}.pcapng"));
        tshark::write_pcap(
            &cap,
            "127.0.0.1:50000".parse().unwrap(),
            format!("127.0.0.1:{port}").parse().unwrap(),
            &datagrams,
        );
        let fields = [
            "vmc.tracker.id",
            "vmc.tracker.px",
            "vmc.tracker.py",
            "vmc.tracker.pz",
            "vmc.tracker.rx",
            "vmc.tracker.ry",
            "vmc.tracker.rz",
            "vmc.vmt.index",
            "vmc.vmt.enable",
            "vmc.vmt.timeoffset",
            "vmc.vmt.px",
            "vmc.vmt.py",
            "vmc.vmt.pz",
            "vmc.vmt.qx",
            "vmc.vmt.qy",
            "vmc.vmt.qz",
            "vmc.vmt.qw",
            "_ws.expert.message",
        ];
        let rows = tshark::fields(&script(), &cap, &[], &fields);
        assert_eq!(rows.len(), datagrams.len(), "port {port}");
        for (k, (row, d)) in rows.iter().zip(&datagrams).enumerate() {
            let col = |f: &str| list(&row[fields.iter().position(|x| *x == f).unwrap()]);
            assert!(col("_ws.expert.message").is_empty(), "{port} #{k}: {row:?}");
            let packet = osc::decode(d).unwrap();
            let msgs = packet.messages();
            if port == 9000 {
                // Position and rotation per tracker: ids once each, in order.
                let ids: Vec<String> = msgs
                    .iter()
                    .filter(|m| m.address.ends_with("/position"))
                    .map(|m| m.address.split('/').nth(3).unwrap().to_owned())
                    .collect();
                assert!(ids.contains(&"head".to_owned()));
                let shown = col("vmc.tracker.id");
                let mut unique: Vec<&str> = Vec::new();
                for id in shown {
                    if unique.last() != Some(&id) {
                        unique.push(id);
                    }
                }
                assert_eq!(unique, ids, "{port} #{k}");
                let pos: Vec<Value> = msgs
                    .iter()
                    .filter(|m| m.address.ends_with("/position"))
                    .flat_map(floats)
                    .collect();
                let rot: Vec<Value> = msgs
                    .iter()
                    .filter(|m| m.address.ends_with("/rotation"))
                    .flat_map(floats)
                    .collect();
                let theirs_pos: Vec<&str> = col("vmc.tracker.px")
                    .into_iter()
                    .zip(col("vmc.tracker.py"))
                    .zip(col("vmc.tracker.pz"))
                    .flat_map(|((x, y), z)| [x, y, z])
                    .collect();
                let theirs_rot: Vec<&str> = col("vmc.tracker.rx")
                    .into_iter()
                    .zip(col("vmc.tracker.ry"))
                    .zip(col("vmc.tracker.rz"))
                    .flat_map(|((x, y), z)| [x, y, z])
                    .collect();
                assert_eq!(theirs_pos.len(), pos.len(), "{port} #{k}");
                assert_eq!(theirs_rot.len(), rot.len(), "{port} #{k}");
                for (o, t) in pos
                    .iter()
                    .zip(&theirs_pos)
                    .chain(rot.iter().zip(&theirs_rot))
                {
                    close(o, t, &format!("{port} #{k}"));
                }
            } else {
                let idx: Vec<String> = msgs
                    .iter()
                    .map(|m| match m.args[0] {
                        Arg::Int(i) => i.to_string(),
                        _ => panic!(),
                    })
                    .collect();
                assert_eq!(col("vmc.vmt.index"), idx, "{port} #{k}");
                assert!(col("vmc.vmt.enable").iter().all(|e| *e == "1"));
                let ours: Vec<Value> = msgs.iter().flat_map(floats).collect();
                let names = [
                    "vmc.vmt.timeoffset",
                    "vmc.vmt.px",
                    "vmc.vmt.py",
                    "vmc.vmt.pz",
                    "vmc.vmt.qx",
                    "vmc.vmt.qy",
                    "vmc.vmt.qz",
                    "vmc.vmt.qw",
                ];
                let columns: Vec<Vec<&str>> = names.iter().map(|n| col(n)).collect();
                for (i, chunk) in ours.chunks(8).enumerate() {
                    for (j, o) in chunk.iter().enumerate() {
                        close(o, columns[j][i], &format!("{port} #{k} {}", names[j]));
                    }
                }
            }
        }
    }
}
