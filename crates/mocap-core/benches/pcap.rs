//! Capture reading speed: UDP datagrams per second out of a pcapng held in
//! memory (Ethernet/IPv4/UDP, 1605-byte mocopi frames), whole and fragmented.
//! Run with `cargo bench -p mocap-core --bench pcap`.

#![allow(clippy::unwrap_used, missing_docs, reason = "benchmark harness")]

use std::io::Cursor;
use std::net::SocketAddr;
use std::time::Duration;

use divan::Bencher;
use divan::counter::ItemsCount;
use mocap_core::pcap::{Datagrams, PcapNgWriter};

const N: usize = 100_000;
const FRAME: &[u8] = include_bytes!("../../../captures/mocopi/t-34400/sample_fram.bin");

fn capture(mtu: Option<usize>) -> Vec<u8> {
    let mut w = PcapNgWriter::new(Vec::with_capacity(N * 1700)).unwrap();
    if let Some(m) = mtu {
        w = w.fragment(m);
    }
    let src: SocketAddr = "192.168.1.20:50012".parse().unwrap();
    let dst: SocketAddr = "192.168.1.10:12351".parse().unwrap();
    for i in 0..N {
        let ts = Duration::from_secs(1_764_417_600) + Duration::from_micros(16_667 * i as u64);
        w.write(ts, src, dst, FRAME).unwrap();
    }
    w.into_inner()
}

fn read_all(bytes: &[u8]) -> usize {
    let mut d = Datagrams::new(Cursor::new(bytes)).unwrap();
    let mut total = 0;
    while let Some(r) = d.next_datagram() {
        total += r.unwrap().payload.len();
    }
    total
}

#[divan::bench(sample_count = 20)]
fn pcapng_whole_datagrams(bencher: Bencher<'_, '_>) {
    let bytes = capture(None);
    bencher
        .counter(ItemsCount::new(N))
        .bench(|| read_all(divan::black_box(&bytes)));
}

#[divan::bench(sample_count = 20)]
fn pcapng_fragmented_mtu_1500(bencher: Bencher<'_, '_>) {
    let bytes = capture(Some(1500));
    bencher
        .counter(ItemsCount::new(N))
        .bench(|| read_all(divan::black_box(&bytes)));
}

fn main() {
    divan::main();
}
