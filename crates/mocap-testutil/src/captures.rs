//! The repository's bundled captures (`captures/`): real datagrams as seeds
//! and inputs.

/// A file of the workspace's bundled `captures/` (e.g. `vmc/body-60hz.pcapng`).
pub fn capture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../captures")
        .join(name)
}

/// The UDP payloads of a bundled capture, in order.
pub fn capture_payloads(name: &str) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(capture(name)).unwrap();
    let mut d = mocap_core::pcap::Datagrams::new(file).unwrap();
    let mut out = Vec::new();
    while let Some(c) = d.next_datagram() {
        out.push(c.unwrap().payload.to_vec());
    }
    out
}
