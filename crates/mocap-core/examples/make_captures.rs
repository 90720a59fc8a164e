//! Builds the synthetic captures in `captures/` from the real bytes already
//! there, so they can be regenerated: `scripts/make-captures.sh`.
//!
//! `make_captures DIR` writes the committed files; `make_captures --long FILE
//! SECONDS` writes a long 60 Hz mocopi stream for benchmarks, and
//! `--long-livelink FILE SECONDS` a long 60 fps Live Link Face stream.

#![allow(
    missing_docs,
    clippy::print_stderr,
    reason = "a build script run by hand"
)]

use std::fs::{self, File};
use std::io::BufWriter;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};
use mocap_core::pcap::PcapNgWriter;
use mocap_core::smf::{self, BodyRepr};
use mocap_core::textcap;

/// 2026-11-29 12:00:00 UTC: a fixed base, so regenerated files are identical.
const BASE: Duration = Duration::from_secs(1_764_417_600);
const FRAME: Duration = Duration::from_nanos(16_666_667);

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, file, secs] if flag == "--long" => {
            let secs: u64 = secs.parse().context("SECONDS")?;
            long_stream(Path::new(file), secs)
        }
        [flag, file, secs] if flag == "--long-livelink" => {
            let secs: u64 = secs.parse().context("SECONDS")?;
            long_livelink(Path::new(file), secs)
        }
        [dir] => committed(Path::new(dir)),
        _ => bail!(
            "usage: make_captures CAPTURES_DIR | --long FILE SECONDS | --long-livelink FILE SECONDS"
        ),
    }
}

fn src() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 50_012))
}

fn dst() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], smf::DEFAULT_PORT))
}

fn read(dir: &Path, name: &str) -> anyhow::Result<Vec<u8>> {
    fs::read(dir.join(name)).with_context(|| format!("reading {name}"))
}

fn text_datagrams(dir: &Path, name: &str) -> anyhow::Result<Vec<(f64, Vec<u8>)>> {
    let text = fs::read_to_string(dir.join(name)).with_context(|| format!("reading {name}"))?;
    textcap::decode_all(&text)
        .into_iter()
        .map(|r| {
            let d = r.map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
            Ok((d.arrival.unwrap_or_default(), d.payload))
        })
        .collect()
}

fn writer(path: &Path) -> anyhow::Result<PcapNgWriter<BufWriter<File>>> {
    let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
    Ok(PcapNgWriter::new(BufWriter::new(f))?)
}

fn committed(dir: &Path) -> anyhow::Result<()> {
    let mocopi = dir.join("mocopi");
    let skdf = read(&mocopi, "t-34400/sample_skdf.bin")?;
    let f1575 = read(&mocopi, "seed-frame-1575.bin")?;
    let f1591 = read(&mocopi, "t-34400/sample_fram.bin")?;
    let neutral = text_datagrams(&mocopi, "animu-sphere/neutral-standing-60hz.mocopipackets")?;

    // Every packet kind and all three frame sizes, one datagram each 1/60 s.
    let mut sizes = vec![skdf, f1575, f1591];
    sizes.extend(
        neutral
            .into_iter()
            .map(|(_, d)| d)
            .filter(|d| d.len() == 1605),
    );
    for (name, mtu) in [
        ("mocopi-sizes.pcapng", None),
        ("mocopi-sizes-fragmented.pcapng", Some(1500)),
    ] {
        let mut w = writer(&mocopi.join(name))?;
        if let Some(m) = mtu {
            w = w.fragment(m);
        }
        for (i, d) in sizes.iter().enumerate() {
            w.write(BASE + FRAME * u32::try_from(i)?, src(), dst(), d)?;
        }
        w.flush()?;
        eprintln!("wrote {name}: {} datagrams", sizes.len());
    }

    // Loss, duplicate and restart, at the receive times the upstream capture records.
    let loss = text_datagrams(&mocopi, "animu-sphere/frame-loss-60hz.mocopipackets")?;
    let mut w = writer(&mocopi.join("mocopi-frame-loss.pcapng"))?;
    for (t, d) in &loss {
        w.write(BASE + Duration::from_secs_f64(*t), src(), dst(), d)?;
    }
    w.flush()?;
    eprintln!("wrote mocopi-frame-loss.pcapng: {} datagrams", loss.len());

    wave(&mocopi)?;
    face(dir)?;
    livelink(dir)?;
    Ok(())
}

/// Quaternion (x, y, z, w) for `deg` degrees about a unit axis.
fn about(axis: [f32; 3], deg: f32) -> [f32; 4] {
    let (s, c) = (deg.to_radians() / 2.0).sin_cos();
    [axis[0] * s, axis[1] * s, axis[2] * s, c]
}

/// 4 s of a performer waving with the left hand while swaying, at 60 Hz,
/// with a skeleton at 0 s and 3.5 s as the app sends them. Built on the
/// real neutral-standing frame and the t-34400 skeleton, so every byte
/// outside the poses is the app's.
fn wave(mocopi: &Path) -> anyhow::Result<()> {
    let skdf = read(mocopi, "t-34400/sample_skdf.bin")?;
    let neutral = text_datagrams(mocopi, "animu-sphere/neutral-standing-60hz.mocopipackets")?;
    let frame = neutral
        .iter()
        .map(|(_, d)| d)
        .find(|d| d.len() == 1605)
        .context("neutral capture lacks a frame")?;
    let mut repr = smf::PacketRepr::parse(&smf::parse(frame).map_err(|e| anyhow::anyhow!("{e}"))?);
    let name = "wave-60hz.pcapng";
    let mut w = writer(&mocopi.join(name))?;
    let frames = 240u32;
    for i in 0..frames {
        let ts = BASE + FRAME * i;
        if i % 210 == 0 {
            w.write(ts, src(), dst(), &skdf)?;
        }
        let t = i as f32 / 60.0;
        if let BodyRepr::Frame(f) = &mut repr.body {
            f.fnum = 20_000 + i;
            f.time = t;
            f.uttm = Some(ts.as_secs_f64());
            for b in &mut f.bones {
                let wave = (t * std::f32::consts::TAU).sin();
                match b.id {
                    // Root: a slow step forward (+Z) and a sway to the left (+X).
                    0 => {
                        b.pos[0] = 0.05 * (t * 1.5).sin();
                        b.pos[2] = 0.1 * t;
                    }
                    3 => b.rot = about([0.0, 1.0, 0.0], 10.0 * (t * 1.5).sin()),
                    10 => b.rot = about([1.0, 0.0, 0.0], 8.0 * wave),
                    // Left arm raised sideways (+X towards +Y is about +Z)
                    // and the forearm waving.
                    12 => b.rot = about([0.0, 0.0, 1.0], 70.0),
                    13 => b.rot = about([0.0, 0.0, 1.0], 30.0 + 25.0 * wave),
                    _ => {}
                }
            }
        }
        w.write(ts, src(), dst(), &repr.to_bytes())?;
    }
    w.flush()?;
    eprintln!("wrote {name}: {frames} frames, 2 skeletons");
    Ok(())
}

/// The 203 consecutive real iFacialMocap frames, as the phone sends them
/// (UDP 49983 → 49983) at 60 fps, for `pcap-replay --trigger`.
fn face(dir: &Path) -> anyhow::Result<()> {
    let text = fs::read_to_string(dir.join("ifacialmocap/v1_minbitt_head_sample_data.txt"))
        .context("reading the iFacialMocap sample")?;
    let phone = SocketAddr::from(([127, 0, 0, 2], mocap_core::ifm::PHONE_PORT));
    let pc = SocketAddr::from(([127, 0, 0, 1], mocap_core::ifm::PC_UDP_PORT));
    let name = "ifacialmocap/face-60fps.pcapng";
    let mut w = writer(&dir.join(name))?;
    let mut n = 0u32;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        w.write(BASE + FRAME * n, phone, pc, line.as_bytes())?;
        n += 1;
    }
    w.flush()?;
    eprintln!("wrote {name}: {n} frames");
    Ok(())
}

/// One Live Link Face value set: blinks, a talking jaw, a smile, the head
/// turning and nodding, the eyes following; angles in radians.
fn livelink_values(t: f32, phase: f32) -> Vec<f32> {
    use mocap_core::livelink::{HEAD, LEFT_EYE, RIGHT_EYE, VALUE_COUNT};
    let mut v = vec![0.0f32; VALUE_COUNT];
    let mut set = |i: usize, x: f32| {
        if let Some(slot) = v.get_mut(i) {
            *slot = x;
        }
    };
    // A blink every 1.5 s, 0.2 s long.
    let b = (t + phase) % 1.5;
    let blink = if b < 0.2 {
        1.0 - (b - 0.1).abs() * 10.0
    } else {
        0.0
    };
    set(0, blink);
    set(7, blink);
    set(17, 0.3 + 0.3 * (t * std::f32::consts::PI).sin()); // JawOpen
    set(23, 0.3); // MouthSmileLeft
    set(24, 0.3); // MouthSmileRight
    let yaw = 0.3 * (t * 0.8).sin();
    let pitch = 0.1 * (t * 1.3).sin();
    for (at, k) in [(HEAD, 1.0), (LEFT_EYE, 0.5), (RIGHT_EYE, 0.5)] {
        set(at, k * yaw);
        set(at + 1, k * pitch);
        set(at + 2, if at == HEAD { 0.05 } else { 0.0 });
    }
    v
}

/// Live Link Face from two devices to one PC at 60 fps: "Zoe's iPhone" for
/// 4 s with a gap of 3 frames, half a second without a face, a duplicate and
/// one datagram cut short; "Studio iPad" for the first second.
fn livelink(dir: &Path) -> anyhow::Result<()> {
    use mocap_core::livelink::{DEFAULT_PORT, PacketRepr};
    let pc = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT));
    let phone = SocketAddr::from(([127, 0, 0, 3], 50_200));
    let ipad = SocketAddr::from(([127, 0, 0, 4], 50_201));
    fs::create_dir_all(dir.join("livelink"))?;
    let name = "livelink/face-60fps.pcapng";
    let mut w = writer(&dir.join(name))?;
    // 16:00:00:00 of a 60 fps timecode.
    let start = 16 * 3600 * 60;
    let packet = |device: &str, subject: &str, i: u32, values| PacketRepr {
        device: device.into(),
        subject: subject.into(),
        frame: start + i32::try_from(i).unwrap_or_default(),
        // ARKit samples are not locked to the timecode: the subframe drifts slowly.
        subframe: (0.255 + i as f32 * 0.001) % 1.0,
        rate: [60, 1],
        values,
    };
    let mut n = 0;
    for i in 0..240u32 {
        let ts = BASE + FRAME * i;
        let t = i as f32 / 60.0;
        if !(100..=102).contains(&i) {
            let values = (!(150..180).contains(&i)).then(|| livelink_values(t, 0.0));
            let p = packet(
                "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F",
                "Zoe's iPhone",
                i,
                values,
            );
            let times = if i == 200 { 2 } else { 1 };
            for _ in 0..times {
                w.write(ts, phone, pc, &p.to_bytes())?;
                n += 1;
            }
        }
        if i < 60 {
            let p = packet(
                "0C1D2E3F-4A5B-6C7D-8E9F-A0B1C2D3E4F5",
                "Studio iPad",
                i,
                Some(livelink_values(t, 0.7)),
            );
            w.write(ts + Duration::from_millis(8), ipad, pc, &p.to_bytes())?;
            n += 1;
        }
    }
    // A face packet cut short in the air: its 61 values do not fit.
    let p = packet(
        "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F",
        "Zoe's iPhone",
        240,
        Some(livelink_values(4.0, 0.0)),
    );
    let bytes = p.to_bytes();
    w.write(
        BASE + FRAME * 240,
        phone,
        pc,
        bytes.get(..bytes.len() - 10).unwrap_or_default(),
    )?;
    n += 1;
    w.flush()?;
    eprintln!("wrote {name}: {n} datagrams");
    Ok(())
}

/// A 60 Hz stream: a skeleton every 3.5 s and 1605-byte frames whose
/// `fnum`, `time`, `uttm` and root position move on each frame.
fn long_stream(path: &Path, secs: u64) -> anyhow::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../captures/mocopi");
    let neutral = text_datagrams(&dir, "animu-sphere/neutral-standing-60hz.mocopipackets")?;
    let (skdf, frame) = match (neutral.first(), neutral.get(1)) {
        (Some(s), Some(f)) => (s.1.clone(), f.1.clone()),
        _ => bail!("neutral capture lacks a skeleton and a frame"),
    };
    let mut repr = smf::PacketRepr::parse(&smf::parse(&frame).map_err(|e| anyhow::anyhow!("{e}"))?);
    let mut w = writer(path)?;
    let frames = secs * 60;
    for i in 0..frames {
        let ts = BASE + FRAME * u32::try_from(i)?;
        if i % 210 == 0 {
            w.write(ts, src(), dst(), &skdf)?;
        }
        if let BodyRepr::Frame(f) = &mut repr.body {
            f.fnum = 10_000 + u32::try_from(i)?;
            f.time = i as f32 / 60.0;
            f.uttm = Some(ts.as_secs_f64());
            if let Some(root) = f.bones.first_mut() {
                root.pos[0] = (i as f32 / 60.0).sin() * 0.1;
            }
        }
        w.write(ts, src(), dst(), &repr.to_bytes())?;
    }
    w.flush()?;
    eprintln!("wrote {}: {frames} frames over {secs} s", path.display());
    Ok(())
}

/// One iPhone's Live Link Face at 60 fps: a face in every packet, frame
/// numbers one apart, one datagram per frame (what the soak counts on).
fn long_livelink(path: &Path, secs: u64) -> anyhow::Result<()> {
    use mocap_core::livelink::{DEFAULT_PORT, PacketRepr};
    let pc = SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT));
    let phone = SocketAddr::from(([127, 0, 0, 3], 50_200));
    let mut w = writer(path)?;
    let frames = u32::try_from(secs * 60)?;
    for i in 0..frames {
        let p = PacketRepr {
            device: "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F".into(),
            subject: "Zoe's iPhone".into(),
            frame: 16 * 3600 * 60 + i32::try_from(i)?,
            subframe: 0.25,
            rate: [60, 1],
            values: Some(livelink_values(i as f32 / 60.0, 0.0)),
        };
        w.write(BASE + FRAME * i, phone, pc, &p.to_bytes())?;
    }
    w.flush()?;
    eprintln!("wrote {}: {frames} frames over {secs} s", path.display());
    Ok(())
}
