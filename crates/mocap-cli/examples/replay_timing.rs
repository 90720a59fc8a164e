//! Benchmark helper for `scripts/bench-replay.sh`: how far the gaps between
//! replayed datagrams are from the gaps in the original capture.
//!
//! - `replay_timing recv ADDR CAPTURE` binds ADDR and timestamps each arrival
//!   (end to end, receiver wake-up included).
//! - `replay_timing compare CAPTURE OBSERVED` takes the timestamps of a
//!   capture taken while replaying (e.g. `tcpdump -i lo`), the same vantage
//!   point for any replay tool.
//!
//! Both print one JSON object: counts, the gap error (each gap between
//! consecutive datagrams against the capture's) and the schedule error (each
//! datagram's time since the first against the capture's: drift shows here),
//! p50/p99/max in µs.

#![allow(
    missing_docs,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark helper run by hand"
)]

use std::fs::File;
use std::time::{Duration, Instant};

use anyhow::bail;
use mocap_cli::net;
use mocap_core::pcap::Datagrams;

fn stamps(path: &str) -> anyhow::Result<Vec<Duration>> {
    let mut d = Datagrams::new(File::open(path)?).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
    let mut out = Vec::new();
    while let Some(r) = d.next_datagram() {
        out.push(r.map_err(|e| anyhow::anyhow!("{path}: {e}"))?.ts);
    }
    Ok(out)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (want, got): (Vec<Duration>, Vec<Duration>) = match args.as_slice() {
        [mode, addr, capture] if mode == "recv" => {
            let want = stamps(capture)?;
            (want.clone(), receive(addr, want.len())?)
        }
        [mode, capture, observed] if mode == "compare" => (stamps(capture)?, stamps(observed)?),
        _ => bail!("usage: replay_timing recv ADDR CAPTURE | compare CAPTURE OBSERVED"),
    };
    let us = |a: f64, b: f64| ((a - b).abs() * 1e6).round() as u64;
    let gaps: Vec<u64> = got
        .windows(2)
        .zip(want.windows(2))
        .filter_map(|(g, w)| {
            let got = g.get(1)?.saturating_sub(*g.first()?).as_secs_f64();
            let want = w.get(1)?.saturating_sub(*w.first()?).as_secs_f64();
            Some(us(got, want))
        })
        .collect();
    let (g0, w0) = (
        got.first().copied().unwrap_or_default(),
        want.first().copied().unwrap_or_default(),
    );
    let schedule: Vec<u64> = got
        .iter()
        .zip(&want)
        .map(|(g, w)| {
            us(
                g.saturating_sub(g0).as_secs_f64(),
                w.saturating_sub(w0).as_secs_f64(),
            )
        })
        .collect();
    println!(
        "{{\"expected\":{},\"observed\":{},\"gap_error_us\":{},\"schedule_error_us\":{}}}",
        want.len(),
        got.len(),
        percentiles(gaps),
        percentiles(schedule)
    );
    Ok(())
}

/// `{"p50":…,"p99":…,"max":…}` of a list of microseconds.
fn percentiles(mut v: Vec<u64>) -> String {
    v.sort_unstable();
    let pct = |p: f64| {
        let n = v.len();
        let i = ((p * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1;
        v.get(i).copied().unwrap_or(0)
    };
    format!(
        "{{\"p50\":{},\"p99\":{},\"max\":{}}}",
        pct(0.50),
        pct(0.99),
        v.last().copied().unwrap_or(0)
    )
}

/// Arrival times (as durations since the first) of up to `n` datagrams; stops
/// after 3 s of silence once something arrived.
fn receive(addr: &str, n: usize) -> anyhow::Result<Vec<Duration>> {
    let socket = net::bind_udp(addr.parse()?, Some(Duration::from_millis(100)))?;
    eprintln!("replay_timing: listening on {}", socket.local_addr()?);
    let mut buf = vec![0u8; mocap_core::MAX_DATAGRAM];
    let mut first: Option<Instant> = None;
    let mut out = Vec::with_capacity(n);
    let mut last = Instant::now();
    while out.len() < n {
        match socket.recv_from(&mut buf) {
            Ok(_) => {
                last = Instant::now();
                out.push(last.duration_since(*first.get_or_insert(last)));
            }
            Err(e) if net::is_timeout(&e) => {
                if first.is_some() && last.elapsed() > Duration::from_secs(3) {
                    break;
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}
