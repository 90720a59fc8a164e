//! Captures and loopback receivers shared by this tool's test files.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    dead_code,
    reason = "test code: a panic is how a test reports; each file uses a part"
)]

use std::fs::File;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use mocap_core::pcap::Datagrams;
use mocap_testutil::LIMIT;

pub(crate) const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures/mocopi");

pub(crate) fn capture(name: &str) -> String {
    format!("{CAPTURES}/{name}")
}

/// The payloads a capture holds, read by the core (what a replay must deliver).
pub(crate) fn payloads(name: &str) -> Vec<Vec<u8>> {
    let mut d = Datagrams::new(File::open(capture(name)).unwrap()).unwrap();
    let mut out = Vec::new();
    while let Some(r) = d.next_datagram() {
        out.push(r.unwrap().payload.to_vec());
    }
    out
}

pub(crate) fn receiver() -> UdpSocket {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s
}

/// Receives until `n` datagrams arrived or nothing came for a while.
pub(crate) fn collect(rx: &UdpSocket, n: usize) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65_535];
    let start = Instant::now();
    while out.len() < n && start.elapsed() < LIMIT {
        if let Ok((len, from)) = rx.recv_from(&mut buf) {
            out.push((from, buf[..len].to_vec()));
        }
    }
    out
}

/// Another tool of the workspace, built first when this test build did not
/// (`cargo test -p pcap-replay` builds pcap-replay only).
pub(crate) fn sibling(tool: &str) -> String {
    mocap_testutil::tool(env!("CARGO_BIN_EXE_pcap-replay"), tool)
        .to_string_lossy()
        .into_owned()
}
