//! VMC messages typed and written back per second on one core, over the
//! datagrams of a real capture (`captures/vmc/body-60hz.pcapng`): the
//! whole `vmc::decode` (its fast path where the packet allows), and
//! `Message::from_osc` / `Message::to_osc` on every message (the address
//! table both directions walk). Run with `cargo bench -p mocap-core --bench vmc`.

#![allow(clippy::unwrap_used, missing_docs, reason = "benchmark harness")]

use std::io::Cursor;

use divan::Bencher;
use divan::counter::ItemsCount;
use mocap_core::pcap::Datagrams;
use mocap_core::{osc, vmc};

const CAPTURE: &[u8] = include_bytes!("../../../captures/vmc/body-60hz.pcapng");

fn payloads() -> Vec<Vec<u8>> {
    let mut d = Datagrams::new(Cursor::new(CAPTURE)).unwrap();
    let mut out = Vec::new();
    while let Some(r) = d.next_datagram() {
        out.push(r.unwrap().payload.to_vec());
    }
    out
}

fn messages() -> Vec<osc::Message> {
    payloads()
        .iter()
        .flat_map(|p| {
            let packet = osc::decode(p).unwrap();
            packet.messages().into_iter().cloned().collect::<Vec<_>>()
        })
        .collect()
}

#[divan::bench(sample_count = 30)]
fn decode_datagrams(bencher: Bencher<'_, '_>) {
    let all = payloads();
    bencher.counter(ItemsCount::new(all.len())).bench(|| {
        all.iter()
            .map(|p| vmc::decode(divan::black_box(p)).unwrap().len())
            .sum::<usize>()
    });
}

#[divan::bench(sample_count = 30)]
fn from_osc_messages(bencher: Bencher<'_, '_>) {
    let all = messages();
    bencher.counter(ItemsCount::new(all.len())).bench(|| {
        all.iter()
            .filter(|m| vmc::Message::from_osc(divan::black_box(m)).is_ok())
            .count()
    });
}

#[divan::bench(sample_count = 30)]
fn to_osc_messages(bencher: Bencher<'_, '_>) {
    let typed: Vec<vmc::Message> = messages()
        .iter()
        .map(|m| vmc::Message::from_osc(m).unwrap())
        .collect();
    bencher.counter(ItemsCount::new(typed.len())).bench(|| {
        typed
            .iter()
            .map(|m| divan::black_box(m).to_osc().args.len())
            .sum::<usize>()
    });
}

fn main() {
    divan::main();
}
