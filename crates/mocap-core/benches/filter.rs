//! The 1€ filters' cost: per sample for each variant, and per bone for a
//! whole 55-bone VMC frame through `vmc::Smoother` (rotation + position per
//! bone). Run with `cargo bench -p mocap-core --bench filter`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness"
)]

use divan::Bencher;
use divan::counter::ItemsCount;
use mocap_core::filter::{Params, Rotation, Scalar, Vector};
use mocap_core::vmc::{self, Message, SmoothOptions, Smoother};

#[divan::bench]
fn scalar(bencher: Bencher<'_, '_>) {
    let mut f = Scalar::new(Params::BLEND, 60.0);
    let mut t = 0.0f64;
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        t += 1.0 / 60.0;
        f.filter(divan::black_box(0.5 + (t * 7.0f64).sin() * 0.01), Some(t))
    });
}

#[divan::bench]
fn vector(bencher: Bencher<'_, '_>) {
    let mut f = Vector::new(Params::POSITION, 60.0);
    let mut t = 0.0f64;
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        t += 1.0 / 60.0;
        f.filter(divan::black_box([t.sin(), 1.0, 0.1]), Some(t))
    });
}

#[divan::bench]
fn rotation(bencher: Bencher<'_, '_>) {
    let mut f = Rotation::new(Params::ROTATION, 60.0);
    let mut t = 0.0f64;
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        t += 1.0 / 60.0;
        let h = (t * 3.0).sin() * 0.4;
        f.filter(divan::black_box([0.0, h.sin(), 0.0, h.cos()]), Some(t))
    });
}

/// Per bone: a 55-bone frame (and its T) through one stream's smoother.
#[divan::bench]
fn smoother_per_bone(bencher: Bencher<'_, '_>) {
    let mut s = Smoother::new(SmoothOptions::default());
    let bones = vmc::HUMAN_BODY_BONES.len();
    let mut k = 0u32;
    bencher
        .counter(ItemsCount::new(bones))
        .with_inputs(|| {
            k += 1;
            let t = k as f32 / 60.0;
            let mut f: Vec<Message> = vmc::HUMAN_BODY_BONES
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let h = (t + i as f32 * 0.1).sin() * 0.3;
                    Message::BonePos {
                        name: (*b).into(),
                        pos: [0.0, 0.1, 0.0],
                        rot: [0.0, h.sin(), 0.0, h.cos()],
                    }
                })
                .collect();
            f.push(Message::Time(t));
            (f, std::time::Duration::from_secs_f64(f64::from(t)))
        })
        .bench_local_refs(|(frame, at)| s.handle_frame(*at, frame));
}

fn main() {
    divan::main();
}
