//! Rokoko Studio Live against a reader no one here wrote: the Blender
//! add-on's `core/live_data_manager.py` (Rokoko's `rokoko-studio-live-blender`,
//! read at commit `1e87e6a`), which imports without Blender (json and
//! python-lz4's `lz4.frame` only) and decodes both plain and LZ4 datagrams
//! into actors, segments and faces. Every datagram of the bundled capture
//! goes through its `LiveData.init`; what it reads must be what we read,
//! number for number (both sides read the JSON text as correctly rounded
//! f64), and what it refuses we refuse.
//!
//! The add-on is on no package registry: the test needs python3 with lz4
//! (scripts/test-all.sh installs it) and `ROKOKO_BLENDER_ADDON`, the path of
//! a checkout of the add-on.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::io::Write as _;
use std::process::{Command, Stdio};

use mocap_core::rokoko;
use serde_json::Value;

/// Loads the add-on's module by path and prints, per hex datagram on stdin,
/// what `LiveData` read: version, fps, and per actor its name, segments
/// (position x y z, rotation x y z w) and face values; or `null` for a
/// datagram it refused.
const SCRIPT: &str = r#"
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("live_data_manager", sys.argv[1])
ldm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ldm)
assert ldm.loaded_lz4, "python-lz4 did not load"
for line in sys.stdin:
    d = ldm.LiveData()
    try:
        d.init(bytes.fromhex(line.strip()))
    except Exception:
        print("null")
        continue
    actors = []
    for a in d.actors:
        body = {k: [v["position"]["x"], v["position"]["y"], v["position"]["z"],
                    v["rotation"]["x"], v["rotation"]["y"], v["rotation"]["z"], v["rotation"]["w"]]
                for k, v in a["body"].items()}
        faces = [f for f in d.faces if f["parentName"] == a["name"]]
        face = {k: v for k, v in faces[0].items() if k not in ("faceId", "parentName")} if faces else {}
        actors.append({"name": a["name"], "body": body, "face": face})
    print(json.dumps({"version": d.version, "fps": d.fps, "props": len(d.props), "actors": actors}))
"#;

#[test]
#[ignore = "needs python3 + lz4 and ROKOKO_BLENDER_ADDON: scripts/test-all.sh"]
fn the_blender_addon_reads_what_we_read() {
    let addon = std::env::var("ROKOKO_BLENDER_ADDON")
        .expect("ROKOKO_BLENDER_ADDON: the path of a rokoko-studio-live-blender checkout");
    let module = std::path::Path::new(&addon).join("core/live_data_manager.py");
    assert!(module.exists(), "no {}", module.display());
    let capture = mocap_testutil::capture_payloads("rokoko/studio-60fps.pcap");
    let input: String = capture.iter().map(|d| hex::encode(d) + "\n").collect();
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT, module.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    // Written from a thread: the script answers as it reads, and both
    // directions outgrow a pipe's buffer.
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "is lz4 installed? (pip install lz4): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(theirs.len(), capture.len());
    let (mut compressed, mut refused) = (0, 0);
    for (k, (d, t)) in capture.iter().zip(&theirs).enumerate() {
        let Ok(ours) = rokoko::parse(d) else {
            assert!(t.is_null(), "{k}: we refuse what the add-on reads");
            refused += 1;
            continue;
        };
        assert!(!t.is_null(), "{k}: the add-on refuses what we read");
        compressed += usize::from(ours.compressed);
        assert_eq!(t["version"].as_f64(), ours.version, "{k}");
        assert_eq!(t["fps"].as_f64(), ours.fps, "{k}");
        assert_eq!(t["props"].as_u64(), Some(ours.props.len() as u64), "{k}");
        let actors = t["actors"].as_array().unwrap();
        assert_eq!(actors.len(), ours.actors.len(), "{k}");
        for (ta, a) in actors.iter().zip(&ours.actors) {
            assert_eq!(ta["name"].as_str(), a.name.as_deref());
            let body = ta["body"].as_object().unwrap();
            assert_eq!(body.len(), a.body.len(), "{k}");
            for s in &a.body {
                let v: Vec<f64> = body[&s.name]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                let mine: Vec<f64> = s.position.iter().chain(&s.rotation).copied().collect();
                assert_eq!(v, mine, "{k} {}", s.name);
            }
            let face = ta["face"].as_object().unwrap();
            assert_eq!(face.len(), a.face.len(), "{k}");
            for (name, v) in &a.face {
                assert_eq!(face[name].as_f64(), Some(*v), "{k} {name}");
            }
        }
    }
    assert_eq!((compressed, refused), (89, 1), "both forms and the cut one");
}
