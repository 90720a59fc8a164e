//! Benchmark helper: receives the datagrams of a replay and reports how far
//! each inter-arrival gap is from the capture's own gap.
//!
//! `recv_timing ADDR CAPTURE [SPEED]` binds ADDR, waits for as many datagrams
//! as CAPTURE holds (or 3 s of silence after the first), and prints one JSON
//! object: received, expected, and the gap error p50/p99/max in µs.

#![allow(
    missing_docs,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark helper run by hand"
)]

use std::fs::File;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use mocap_core::net;
use mocap_core::pcap::Datagrams;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (addr, capture, speed) = match args.as_slice() {
        [a, c] => (a, c, 1.0),
        [a, c, s] => (a, c, s.parse::<f64>().context("SPEED")?),
        _ => bail!("usage: recv_timing ADDR CAPTURE [SPEED]"),
    };
    let mut d = Datagrams::new(File::open(capture)?).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut stamps = Vec::new();
    while let Some(r) = d.next_datagram() {
        stamps.push(r.map_err(|e| anyhow::anyhow!("{e}"))?.ts);
    }
    let socket = net::bind_udp(addr.parse()?, Some(Duration::from_millis(100)))?;
    eprintln!("recv_timing: listening on {}", socket.local_addr()?);
    let mut buf = vec![0u8; net::MAX_DATAGRAM];
    let mut arrivals: Vec<Instant> = Vec::with_capacity(stamps.len());
    let mut last = Instant::now();
    while arrivals.len() < stamps.len() {
        match socket.recv_from(&mut buf) {
            Ok(_) => {
                last = Instant::now();
                arrivals.push(last);
            }
            Err(e) if net::is_timeout(&e) => {
                if !arrivals.is_empty() && last.elapsed() > Duration::from_secs(3) {
                    break;
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    let mut errors: Vec<u64> = arrivals
        .windows(2)
        .zip(stamps.windows(2))
        .filter_map(|(a, s)| {
            let (a0, a1) = (a.first()?, a.get(1)?);
            let (s0, s1) = (s.first()?, s.get(1)?);
            let got = a1.duration_since(*a0).as_secs_f64();
            let want = s1.saturating_sub(*s0).as_secs_f64() / speed;
            Some(((got - want).abs() * 1e6).round() as u64)
        })
        .collect();
    errors.sort_unstable();
    let pct = |p: f64| {
        let i = ((p * errors.len() as f64).ceil() as usize).clamp(1, errors.len().max(1)) - 1;
        errors.get(i).copied().unwrap_or(0)
    };
    println!(
        "{{\"received\":{},\"expected\":{},\"gap_error_us\":{{\"p50\":{},\"p99\":{},\"max\":{}}}}}",
        arrivals.len(),
        stamps.len(),
        pct(0.50),
        pct(0.99),
        errors.last().copied().unwrap_or(0)
    );
    Ok(())
}
