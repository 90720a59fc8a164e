//! The tracker outputs' cost per frame: a 55-bone VMC frame through
//! `vmc::trackers::TrackerSolver`, then encoded for VRChat (eight trackers
//! and the head reference) and for VMT. Run with
//! `cargo bench -p mocap-core --bench trackers`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness"
)]

use divan::Bencher;
use divan::counter::ItemsCount;
use mocap_core::vmc::trackers::{
    TrackerSolver, Trackers, VmtOptions, VrchatOptions, vmt_datagrams, vrchat_datagrams,
};
use mocap_core::vmc::{self, MAX_BUNDLE, Message};

/// Frame `k` as a full-body sender writes it: Root/Pos, all 55 bones, T.
fn frame(k: u32) -> Vec<Message> {
    let t = k as f32 / 60.0;
    let mut f = vec![Message::RootPos {
        name: "root".into(),
        pos: [t * 0.1, 0.0, 0.0],
        rot: [0.0, (t * 0.2).sin(), 0.0, (t * 0.2).cos()],
        mr: None,
    }];
    f.extend(vmc::HUMAN_BODY_BONES.iter().enumerate().map(|(i, b)| {
        let h = (t + i as f32 * 0.1).sin() * 0.3;
        Message::BonePos {
            name: (*b).into(),
            pos: [0.0, if i == 0 { 0.9 } else { 0.1 }, 0.0],
            rot: [h.sin() * 0.6, h.sin() * 0.8, 0.0, h.cos()],
        }
    }));
    f.push(Message::Time(t));
    f
}

fn head() -> VrchatOptions {
    VrchatOptions {
        head: true,
        ..VrchatOptions::default()
    }
}

/// Solving only: 55 bones pushed by name, nine world poses.
#[divan::bench]
fn solve(bencher: Bencher<'_, '_>) {
    let mut s = TrackerSolver::new(Some(1.7));
    let mut k = 0u32;
    bencher
        .counter(ItemsCount::new(1usize))
        .with_inputs(|| {
            k += 1;
            frame(k)
        })
        .bench_local_refs(|f| s.solve(f));
}

fn trackers() -> Trackers {
    TrackerSolver::new(None).solve(&frame(7)).unwrap()
}

/// Encoding only: sixteen tracker messages and the head's, one bundle.
#[divan::bench]
fn encode_vrchat(bencher: Bencher<'_, '_>) {
    let (t, opts) = (trackers(), head());
    bencher.bench_local(|| vrchat_datagrams(divan::black_box(&t), &opts, MAX_BUNDLE));
}

/// Encoding only: eight `/VMT/Room/Unity` messages, one bundle.
#[divan::bench]
fn encode_vmt(bencher: Bencher<'_, '_>) {
    let (t, opts) = (trackers(), VmtOptions::default());
    bencher.bench_local(|| vmt_datagrams(divan::black_box(&t), &opts, MAX_BUNDLE));
}

/// One frame end to end: solve, then both encoders.
#[divan::bench]
fn solve_and_encode(bencher: Bencher<'_, '_>) {
    let mut s = TrackerSolver::new(Some(1.7));
    let opts = head();
    let mut k = 0u32;
    bencher
        .counter(ItemsCount::new(1usize))
        .with_inputs(|| {
            k += 1;
            frame(k)
        })
        .bench_local_refs(|f| {
            let t = s.solve(f).unwrap();
            (
                vrchat_datagrams(&t, &opts, MAX_BUNDLE),
                vmt_datagrams(&t, &VmtOptions::default(), MAX_BUNDLE),
            )
        });
}

fn main() {
    divan::main();
}
