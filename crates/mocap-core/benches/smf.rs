//! Frames decoded per second on one core: our SMF decoder against the
//! `mocopi_parser` crate, side by side on the same inputs. `mocopi_parser`
//! only reads the 1575-byte form (no `uttm`/`tmcd`), so it runs on that one.
//! Run with `scripts/bench-smf.sh`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    missing_docs,
    reason = "benchmark harness"
)]

use divan::Bencher;
use divan::counter::ItemsCount;
use mocap_core::{smf, textcap};

const SEED_1575: &[u8] = include_bytes!("../../../captures/mocopi/seed-frame-1575.bin");
const T34400_1591: &[u8] = include_bytes!("../../../captures/mocopi/t-34400/sample_fram.bin");
const NEUTRAL: &str =
    include_str!("../../../captures/mocopi/animu-sphere/neutral-standing-60hz.mocopipackets");

fn frame_1605() -> Vec<u8> {
    textcap::decode_all(NEUTRAL)
        .into_iter()
        .map(|r| r.unwrap().payload)
        .find(|d| d.len() == 1605)
        .expect("a 1605-byte frame")
}

fn input(size: usize) -> Vec<u8> {
    match size {
        1575 => SEED_1575.to_vec(),
        1591 => T34400_1591.to_vec(),
        _ => frame_1605(),
    }
}

/// Parse and read every bone's rotation and position, as a tool does.
fn ours(bytes: &[u8]) -> f32 {
    let p = smf::parse(bytes).unwrap();
    let f = p.frame().unwrap();
    let mut acc = f.time;
    for b in f.bones() {
        acc += b.rot[0] + b.rot[3] + b.pos[1] + f32::from(b.id);
    }
    acc
}

#[divan::bench(args = [1575, 1591, 1605])]
fn mocap_core_smf(bencher: Bencher<'_, '_>, size: usize) {
    let bytes = input(size);
    assert_eq!(bytes.len(), size);
    bencher
        .counter(ItemsCount::new(1usize))
        .bench(|| ours(divan::black_box(&bytes)));
}

#[divan::bench(args = [1575])]
fn mocopi_parser_crate(bencher: Bencher<'_, '_>, size: usize) {
    let bytes = input(size);
    // It takes `&mut [u8]`; copying the datagram into a reused buffer is part of the cost
    // a caller pays, and is small next to the parse.
    let mut buf = bytes.clone();
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        buf.copy_from_slice(&bytes);
        match mocopi_parser::parse(divan::black_box(&mut buf)) {
            Ok(mocopi_parser::SkeletonOrFrame::Frame(f)) => {
                let mut acc = 0.0f32;
                for b in &f.frame.bones {
                    acc += b.trans.rot.x + b.trans.rot.w + b.trans.pos.y;
                }
                acc
            }
            _ => panic!("mocopi_parser failed on the {size}-byte frame"),
        }
    });
}

fn main() {
    // State plainly which inputs the baseline cannot read, so the table is not misread.
    for size in [1591, 1605] {
        let mut b = input(size);
        if let Err(e) = mocopi_parser::parse(&mut b) {
            eprintln!("mocopi_parser cannot parse the {size}-byte frame: {e}");
        }
    }
    divan::main();
}
