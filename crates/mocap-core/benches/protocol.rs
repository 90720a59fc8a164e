//! What recognising and decoding one datagram of each bundled capture costs
//! through the registry: `recognise` (every row's sniff), each protocol's
//! own parser alone, and the row's `decode` into a view (what mocap-top
//! does per datagram) and its stamp alone (what mocap-link does). Run with
//! `cargo bench -p mocap-core --bench protocol`; `recognise` and `parse`
//! exist in older builds too, for a side-by-side ratio.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness"
)]

use divan::Bencher;
use divan::counter::ItemsCount;
use mocap_core::protocol::{self, Protocol};
use mocap_core::{ifm, livelink, smf, vmc};

fn main() {
    divan::main();
}

const CAPTURES: [&str; 4] = [
    "mocopi/wave-60hz.pcapng",
    "vmc/body-60hz.pcapng",
    "ifacialmocap/face-60fps.pcapng",
    "livelink/face-60fps.pcapng",
];

/// Every datagram of a bundled capture.
fn datagrams(capture: &str) -> Vec<Vec<u8>> {
    mocap_testutil::capture_payloads(capture)
}

#[divan::bench(args = CAPTURES)]
fn recognise(bencher: Bencher<'_, '_>, capture: &str) {
    let d = datagrams(capture);
    bencher.counter(ItemsCount::new(d.len())).bench(|| {
        d.iter()
            .filter(|d| protocol::recognise(d).is_some())
            .count()
    });
}

/// The protocol's own parser, as the tools called it before the registry.
#[divan::bench(args = CAPTURES)]
fn parse(bencher: Bencher<'_, '_>, capture: &str) {
    let d = datagrams(capture);
    let ok = |p: &[u8]| match capture.split('/').next() {
        Some("mocopi") => smf::parse(p).is_ok(),
        Some("vmc") => vmc::decode_borrowed(p).is_ok(),
        Some("ifacialmocap") => ifm::parse(p).is_ok(),
        _ => livelink::parse(p).is_ok(),
    };
    bencher
        .counter(ItemsCount::new(d.len()))
        .bench(|| d.iter().filter(|p| ok(p)).count());
}

/// A view that counts what it is given, as a drill-down would take it.
#[derive(Default)]
struct Count(usize);

impl protocol::View for Count {
    fn bone(&mut self, _: &str, _: [f32; 4], _: [f32; 3]) {
        self.0 += 1;
    }
    fn face(&mut self, _: &str, _: f32) {
        self.0 += 1;
    }
    fn message(&mut self, _: &str, _: Option<&str>, _: protocol::Args<'_>) {
        self.0 += 1;
    }
}

fn protocol_of(capture: &str) -> Protocol {
    let key = capture.split('/').next().unwrap();
    Protocol::from_key(key).unwrap()
}

#[divan::bench(args = CAPTURES)]
fn decode(bencher: Bencher<'_, '_>, capture: &str) {
    let d = datagrams(capture);
    let p = protocol_of(capture);
    bencher.counter(ItemsCount::new(d.len())).bench(|| {
        let mut view = Count::default();
        for datagram in &d {
            p.decode(datagram, &mut view);
        }
        view.0
    });
}

#[divan::bench(args = CAPTURES)]
fn stamp(bencher: Bencher<'_, '_>, capture: &str) {
    let d = datagrams(capture);
    let p = protocol_of(capture);
    bencher.counter(ItemsCount::new(d.len())).bench(|| {
        d.iter()
            .filter(|datagram| p.stamp(datagram) != protocol::Stamp::Error)
            .count()
    });
}
