//! Running our Lua dissectors in tshark (the differential Wireshark tests of
//! mocopi-dump, ifm-handshake and vmc-relay; tshark comes from
//! `scripts/test-all.sh`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use mocap_core::pcap::PcapNgWriter;

/// A file in this test process's scratch directory for `tool`.
pub fn scratch(tool: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{tool}-wireshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `datagrams` from `src` to `dst` as a pcapng at `path`, 1 ms apart.
pub fn write_pcap(path: &Path, src: SocketAddr, dst: SocketAddr, datagrams: &[Vec<u8>]) {
    let mut w = PcapNgWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for (i, d) in datagrams.iter().enumerate() {
        w.write(Duration::from_millis(i as u64), src, dst, d)
            .unwrap();
    }
    w.flush().unwrap();
}

/// tshark with `script` loaded reads `pcap` (`extra`: a display filter,
/// decode-as rules) and prints `fields` per packet: one row per packet,
/// one cell per field, repeated values joined by `;`. Fails the test when
/// tshark fails or the script raised a Lua error.
pub fn fields(script: &Path, pcap: &Path, extra: &[&str], fields: &[&str]) -> Vec<Vec<String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", script.display()))
        .arg("-r")
        .arg(pcap)
        .args(extra)
        .args(["-T", "fields", "-E", "separator=|", "-E", "aggregator=;"]);
    for f in fields {
        cmd.args(["-e", f]);
    }
    let out = cmd
        .output()
        .expect("tshark runs (scripts/test-all.sh installs it)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("Lua"), "{stderr}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('|').map(str::to_owned).collect())
        .collect()
}

/// The values of a repeated field's cell.
pub fn list(cell: &str) -> Vec<&str> {
    if cell.is_empty() {
        Vec::new()
    } else {
        cell.split(';').collect()
    }
}

/// A number tshark printed against ours: tshark prints doubles with 15
/// significant digits, ours are exact; equal within `rel` of the larger
/// of |ours| and `floor`.
pub fn close(ours: &Value, theirs: &str, rel: f64, floor: f64, what: &str) {
    let t: f64 = theirs
        .parse()
        .unwrap_or_else(|e| panic!("{what}: {theirs:?}: {e}"));
    let o = ours.as_f64().unwrap_or_else(|| panic!("{what}: {ours}"));
    assert!(
        o == t || (o - t).abs() <= rel * o.abs().max(floor),
        "{what}: ours {o}, tshark {t}"
    );
}

/// Every prefix and every byte flip of `seed`, sent `src` → `dst`, through
/// the dissector: no Lua error and no dissector error on any of them.
/// Returns one `kind_field|expert messages` row per packet.
pub fn sweep(
    script: &Path,
    scratch: &Path,
    seed: &[u8],
    (src, dst): (SocketAddr, SocketAddr),
    kind_field: &str,
) -> Vec<String> {
    let mut all = Vec::new();
    for cut in 1..seed.len() {
        all.push(seed[..cut].to_vec());
    }
    for i in 0..seed.len() {
        let mut v = seed.to_vec();
        v[i] ^= 0xff;
        all.push(v);
    }
    write_pcap(scratch, src, dst, &all);
    let out = Command::new("tshark")
        .arg("-n")
        .arg("-X")
        .arg(format!("lua_script:{}", script.display()))
        .arg("-r")
        .arg(scratch)
        .args(["-T", "fields", "-e", kind_field, "-e", "_ws.expert.message"])
        .args(["-E", "separator=|"])
        .output()
        .expect("tshark runs (scripts/test-all.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !text.contains("Lua Error") && !stderr.contains("Lua Error"),
        "{stderr}"
    );
    assert!(!text.contains("dissector error"), "{text}");
    let rows: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(rows.len(), all.len(), "one row per packet");
    rows
}
