//! Live Link Face datagrams decoded per second on one core, side by side with
//! an iFacialMocap frame carrying the same face (52 blendshapes, head, eyes)
//! as text; and each through the face bridge to VMC datagrams, as `--vmc`
//! does per frame. Run with `cargo bench -p mocap-core --bench livelink`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness"
)]

use divan::Bencher;
use divan::counter::ItemsCount;
use mocap_core::bridge::{FaceBridge, FaceOptions, FacePose};
use mocap_core::livelink::AngleUnit;
use mocap_core::{ifm, livelink, vmc};

fn main() {
    divan::main();
}

fn livelink_datagram() -> Vec<u8> {
    livelink::PacketRepr {
        device: "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F".into(),
        subject: "Zoe's iPhone".into(),
        frame: 3_456_000,
        subframe: 0.255,
        rate: [60, 1],
        values: Some((0..61).map(|i| (i as f32 * 0.137).fract()).collect()),
    }
    .to_bytes()
}

/// The first real iFacialMocap frame of the bundled sample (every ARKit key).
fn ifm_frame() -> String {
    include_str!("../../../captures/ifacialmocap/v1_minbitt_head_sample_data.txt")
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap()
        .to_owned()
}

#[divan::bench]
fn livelink_parse(bencher: Bencher<'_, '_>) {
    let bytes = livelink_datagram();
    bencher.counter(ItemsCount::new(1usize)).bench(|| {
        let p = livelink::parse(divan::black_box(&bytes)).unwrap();
        let f = p.face().unwrap();
        f.values().sum::<f32>() + p.time.subframe
    });
}

#[divan::bench]
fn ifm_parse(bencher: Bencher<'_, '_>) {
    let text = ifm_frame();
    bencher.counter(ItemsCount::new(1usize)).bench(|| {
        let f = ifm::parse_str(divan::black_box(&text)).unwrap();
        f.arkit().map(|(_, v)| v).sum::<f32>() + f.head.map_or(0.0, |h| h.rot[0])
    });
}

#[divan::bench]
fn livelink_to_vmc_datagrams(bencher: Bencher<'_, '_>) {
    let bytes = livelink_datagram();
    let mut bridge = FaceBridge::new(FaceOptions::default());
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        let p = livelink::parse(divan::black_box(&bytes)).unwrap();
        let pose = FacePose::from_livelink(p.face(), AngleUnit::Radians);
        vmc::frame_datagrams(&bridge.pose(&pose), vmc::MAX_BUNDLE)
            .unwrap()
            .len()
    });
}

#[divan::bench]
fn ifm_to_vmc_datagrams(bencher: Bencher<'_, '_>) {
    let text = ifm_frame();
    let mut bridge = FaceBridge::new(FaceOptions::default());
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        let f = ifm::parse_str(divan::black_box(&text)).unwrap();
        vmc::frame_datagrams(&bridge.messages(&f), vmc::MAX_BUNDLE)
            .unwrap()
            .len()
    });
}
