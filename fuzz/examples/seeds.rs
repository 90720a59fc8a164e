//! Writes seed corpora for the fuzz targets: `cargo run --example seeds --
//! CAPTURES OUT` (run by `scripts/fuzz-corpus.sh`, on stable).
//!
//! Real data where the repository has it: every datagram of the pcap/pcapng
//! captures (by protocol), the `.bin` SMF datagrams, the datagrams of the
//! `.mocopipackets` captures, iFacialMocap text lines. Synthetic seeds from
//! our own encoders where it has none (VMC, DLP3D, BVH, TCP streams). The
//! pcap and textcap targets take whole files, copied by the script.

use std::fs;
use std::io::Cursor;
use std::path::{Path, PathBuf};

use mocap_core::{bridge, bvh, dlp3d, ifm, osc, pcap, smf, textcap, vmc};

struct Out(PathBuf);

impl Out {
    fn put(&self, target: &str, name: &str, bytes: &[u8]) {
        let dir = self.0.join(target);
        fs::create_dir_all(&dir).expect("create corpus directory");
        fs::write(dir.join(name), bytes).expect("write seed");
    }
}

fn datagrams(path: &Path) -> Vec<Vec<u8>> {
    let bytes = fs::read(path).expect("read capture");
    let mut d = pcap::Datagrams::new(Cursor::new(bytes)).expect("capture header");
    let mut out = Vec::new();
    while let Some(Ok(c)) = d.next_datagram() {
        out.push(c.payload.to_vec());
    }
    out
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == ext));
    v.sort();
    v
}

fn stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// At most `n` datagrams, skipping repeats of a size already taken (one per
/// shape keeps the corpus small without losing kinds).
fn pick(all: Vec<Vec<u8>>, n: usize) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::new();
    all.into_iter().filter(|d| seen.insert(d.len())).take(n).collect()
}

fn main() {
    let mut args = std::env::args_os().skip(1);
    let captures = PathBuf::from(args.next().expect("usage: seeds CAPTURES OUT"));
    let out = Out(PathBuf::from(args.next().expect("usage: seeds CAPTURES OUT")));

    // mocopi: .bin datagrams, pcap(ng) datagrams, .mocopipackets datagrams.
    let mocopi = captures.join("mocopi");
    for dir in [mocopi.clone(), mocopi.join("t-34400")] {
        for p in files(&dir, "bin") {
            out.put("smf", &stem(&p), &fs::read(&p).expect("read .bin"));
        }
    }
    for ext in ["pcapng", "pcap"] {
        for p in files(&mocopi, ext) {
            for (i, d) in pick(datagrams(&p), 8).iter().enumerate() {
                out.put("smf", &format!("{}-{i}", stem(&p)), d);
            }
        }
    }
    for p in files(&mocopi.join("animu-sphere"), "mocopipackets") {
        let text = fs::read_to_string(&p).expect("read text capture");
        let ds: Vec<Vec<u8>> = textcap::decode_all(&text).into_iter().flatten().map(|d| d.payload).collect();
        for (i, d) in pick(ds, 4).iter().enumerate() {
            out.put("smf", &format!("{}-{i}", stem(&p)), d);
        }
    }

    for (i, d) in pick(datagrams(&captures.join("livelink/face-60fps.pcapng")), 4).iter().enumerate() {
        out.put("livelink", &format!("face-60fps-{i}"), d);
    }

    // One face, two faces, a failed fit and the cut last datagram.
    for (i, d) in pick(datagrams(&captures.join("openseeface/face-32fps.pcap")), 4).iter().enumerate() {
        out.put("openseeface", &format!("face-32fps-{i}"), d);
    }

    // The first four of distinct sizes: a request, then frames of tracking data.
    for (i, d) in pick(datagrams(&captures.join("vtubestudio/phone-60fps.pcap")), 4).iter().enumerate() {
        out.put("vtubestudio", &format!("phone-60fps-{i}"), d);
    }
    // One datagram of each size: every packet type of both directions and the cut last.
    for (i, d) in pick(datagrams(&captures.join("slimevr/tracker-100hz.pcap")), 12).iter().enumerate() {
        out.put("slimevr", &format!("tracker-100hz-{i}"), d);
    }

    // A plain frame, an LZ4 frame and the cut LZ4 last.
    let rokoko = datagrams(&captures.join("rokoko/studio-60fps.pcap"));
    for i in [0, 90, 179] {
        if let Some(d) = rokoko.get(i) {
            out.put("rokoko", &format!("studio-60fps-{i}"), d);
        }
    }

    // iFacialMocap: text lines and UDP frames; TCP streams and a recording of them.
    let ifm_dir = captures.join("ifacialmocap");
    let mut lines = Vec::new();
    for p in files(&ifm_dir, "txt") {
        let text = fs::read_to_string(&p).expect("read text frames");
        for (i, l) in text.lines().filter(|l| !l.trim().is_empty()).take(3).enumerate() {
            out.put("ifm_frame", &format!("{}-{i}", stem(&p)), l.as_bytes());
            lines.push(l.to_owned());
        }
    }
    for (i, d) in pick(datagrams(&ifm_dir.join("face-60fps.pcapng")), 4).iter().enumerate() {
        out.put("ifm_frame", &format!("face-60fps-{i}"), d);
        lines.push(String::from_utf8_lossy(d).into_owned());
    }
    let mut stream = vec![255, 7];
    for l in lines.iter().take(3) {
        stream.extend_from_slice(l.as_bytes());
        stream.extend_from_slice(ifm::TERMINATOR.as_bytes());
    }
    out.put("ifm_tcp", "stream-3-frames", &stream);
    stream[0] = 8;
    out.put("ifm_tcp", "stream-small-cap", &stream);
    out.put("ifm_tcp", "recording", &ifm::write_recording(&lines[..lines.len().min(3)]));

    // VMC: a frame as the senders write it, a nested bundle, odd messages.
    let mut frame = vec![vmc::Message::RootPos {
        name: "root".into(),
        pos: [0.0, 1.0, 0.0],
        rot: [0.0, 0.0, 0.0, 1.0],
        mr: None,
    }];
    for (i, b) in vmc::HUMAN_BODY_BONES.iter().take(12).enumerate() {
        let x = i as f32 * 0.01;
        frame.push(vmc::Message::BonePos { name: (*b).into(), pos: [x, -x, 0.5], rot: [0.1, x, -0.2, 0.97] });
    }
    frame.push(vmc::Message::BlendVal { name: "Joy".into(), value: 0.25 });
    frame.push(vmc::Message::BlendApply);
    frame.push(vmc::Message::Available { loaded: 1, calibration: None, tracking: None });
    frame.push(vmc::Message::Time(12.5));
    let mut vmc_seeds = vmc::frame_datagrams(&frame, vmc::MAX_BUNDLE).expect("encodable");
    let all: Vec<osc::Message> = frame.iter().map(vmc::Message::to_osc).collect();
    let flat = osc::bundle(&all).expect("encodable");
    let nested = osc::PacketRepr::Bundle {
        timetag: (0, 1),
        content: vec![osc::decode(&flat).expect("own bundle decodes")],
    }
    .to_bytes()
    .expect("encodable");
    vmc_seeds.push(flat);
    vmc_seeds.push(nested);
    vmc_seeds.push(osc::message(&osc::Message::new("/VMC/Ext/Bone/Pos", vec![osc::Arg::String("Hips".into()), osc::Arg::Double(1.0)])).expect("encodable"));
    for (i, d) in vmc_seeds.iter().enumerate() {
        out.put("osc_vmc_differential", &format!("vmc-{i}"), d);
        out.put("vmc_typed", &format!("vmc-{i}"), d);
    }
    // vmc_route reads five option bytes (only, drop, flags, rate, pattern
    // length), then datagrams split by 0xff: a frame's datagrams, twice.
    for (name, head) in [("filters", [0x02u8, 0x10, 0x05, 30, 0]), ("raw-rate", [0, 0, 0, 60, 0])] {
        let mut route = head.to_vec();
        for _ in 0..2 {
            for d in &vmc_seeds[..vmc_seeds.len() - 3] {
                route.extend_from_slice(d);
                route.push(0xff);
            }
        }
        out.put("vmc_route", name, &route);
    }
    // vmc_mixer reads seven option bytes, then ops: a bone (op 0 + 7 bytes),
    // a blendshape (1), Apply (2), OK (3), T (4), time (5 + ms), poll (6).
    for (name, schedule) in [("frame", 0u8), ("tick", 1), ("window", 2)] {
        let mut mix = vec![schedule, 60, 10, 0, 100, 1, 3];
        for k in 0..4u8 {
            mix.extend_from_slice(&[0, k, 0, 20, 0, 10, 0, 60, 7, 0, 0, 0, 0, 0, 40, 1, 30, 3, 4, 5, 17, 6]);
        }
        out.put("vmc_mixer", name, &mix);
    }
    // ifm_handshake: transport, keepalive, start command, then (op, arg)
    // pairs: time, timeout, frame, connect, disconnect, stop.
    out.put("ifm_handshake", "udp", &[0, 99, 0, 0, 50, 1, 0, 2, 0, 0, 200, 1, 0, 0, 100, 1, 0, 5, 0]);
    out.put("ifm_handshake", "tcp", &[1, 99, 4, 1, 0, 3, 0, 0, 200, 1, 0, 3, 0, 4, 2, 1, 0, 4, 3, 1, 0, 5, 0]);
    // timers: a rate (f64 bits, big-endian), two durations (ns), the
    // mixer's, handshake's and pacer's choice bytes, then (clock, op) steps:
    // 60 Hz-ish steps through each op, one jump to Duration::MAX, the flush.
    let mut timers = Vec::new();
    timers.extend_from_slice(&30.0f64.to_bits().to_be_bytes());
    timers.extend_from_slice(&500_000_000u64.to_be_bytes());
    timers.extend_from_slice(&50_000_000u64.to_be_bytes());
    timers.extend_from_slice(&[1, 0, 0]);
    for op in 0..7u8 {
        timers.extend_from_slice(&[4, 17, op, 4, 17, op | 0x88]);
    }
    timers.extend_from_slice(&[0, 0, 1]);
    out.put("timers", "rate-30", &timers);
    // health: mode byte (even: model, odd: free), then frame numbers.
    let mut health = vec![0u8];
    for f in [0u16, 1, 2, 5, 3, 3, 4, 9, 8, 8, 10] {
        health.extend_from_slice(&f.to_le_bytes());
    }
    out.put("health", "model", &health);

    // smooth: mode byte (even: Smoother, odd: the filters), then ops: a
    // bone (op 0, pos and rot as f32), a blendshape (1), T (2), arrival (3).
    let mut smooth = vec![0u8];
    for k in 0..4u16 {
        let t = f32::from(k) / 60.0;
        smooth.push(0);
        for v in [0.0f32, 0.9, t, 0.0, t.sin(), 0.0, t.cos()] {
            smooth.extend_from_slice(&v.to_le_bytes());
        }
        smooth.push(1);
        smooth.extend_from_slice(&(t * 3.0).to_le_bytes());
        smooth.push(2);
        smooth.extend_from_slice(&t.to_le_bytes());
        smooth.push(3);
        smooth.extend_from_slice(&167u16.to_le_bytes());
    }
    out.put("smooth", "smoother", &smooth);
    // The filters: flags, rate, then (op, t, values) with f64 samples.
    let mut filters = vec![1u8, 0];
    filters.extend_from_slice(&60f64.to_le_bytes());
    for k in 0..4u8 {
        let t = f64::from(k) / 60.0;
        for (op, values) in [(0u8, vec![t]), (1, vec![t, 1.0, 0.0]), (2, vec![0.0, t.sin(), 0.0, t.cos()])] {
            filters.push(op);
            filters.extend_from_slice(&t.to_le_bytes());
            for v in values {
                filters.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
    out.put("smooth", "filters", &filters);
    // tracker_stream: mode (bit 0 VMT, bit 1 head, bit 7 whole frames),
    // groups, rate (tenths of Hz), height, then ops: bone (index * 4), root
    // (1), T (2), arrival (3).
    let skeleton: [(&str, [f32; 3]); 8] = [
        ("Hips", [0.0, 0.9, 0.0]),
        ("Spine", [0.0, 0.1, 0.0]),
        ("Chest", [0.0, 0.15, 0.0]),
        ("Neck", [0.0, 0.25, 0.0]),
        ("Head", [0.0, 0.1, 0.0]),
        ("LeftUpperLeg", [-0.1, -0.05, 0.0]),
        ("LeftLowerLeg", [0.0, -0.4, 0.0]),
        ("LeftFoot", [0.0, -0.4, 0.0]),
    ];
    for (name, header) in [("vrchat", [2u8, 0, 0, 0, 0]), ("vmt-frames-capped", [0x81, 0, 0x58, 0x02, 0])] {
        let mut ts = header.to_vec();
        for k in 0..3u8 {
            for (bone, pos) in skeleton {
                let i = vmc::bone_index(bone).expect("a HumanBodyBones name");
                ts.push(u8::try_from(i * 4).expect("55 bones fit"));
                for v in pos.into_iter().chain([0.0, 0.0, 0.0, 1.0]) {
                    ts.extend_from_slice(&v.to_le_bytes());
                }
            }
            ts.push(2);
            ts.extend_from_slice(&(f32::from(k) / 60.0).to_le_bytes());
            ts.push(3);
            ts.extend_from_slice(&167u16.to_le_bytes());
        }
        out.put("tracker_stream", name, &ts);
    }
    // impair: a spec, 0xff, then u16 gaps in ms.
    for (name, spec) in [("all", "loss=5%,burst=3@2%,dup=10%,reorder=10%,jitter=20ms,seed=7"), ("loss", "loss=50%,seed=1")] {
        let mut imp = spec.as_bytes().to_vec();
        imp.push(0xff);
        for _ in 0..64 {
            imp.extend_from_slice(&16u16.to_le_bytes());
        }
        out.put("impair", name, &imp);
    }

    // DLP3D: a request, and a whole response stream framed as the target reads it.
    let request = dlp3d::Request { class_name: "OrchestratorV4Request".into(), n_channels: 1, sample_width: 2, frame_rate: 16_000, ..Default::default() };
    out.put("dlp3d", "request", &dlp3d::encode_request(&request));
    let joints: Vec<String> = ["pelvis", "spine"].map(String::from).to_vec();
    let names: Vec<String> = ["jawOpen"].map(String::from).to_vec();
    let mut motion = Vec::new();
    dlp3d::push_motion_frame(&[[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]; 2], [0.0; 3], [0.0; 3], &mut motion);
    let responses = [
        dlp3d::request_id("r1"),
        dlp3d::motion_start(&joints, "default", dlp3d::Dtype::F16, Some(0)),
        dlp3d::face_start(&names, dlp3d::Dtype::F32, None),
        dlp3d::audio_start(16_000, 1, 2),
        dlp3d::motion_body(dlp3d::Dtype::F16, &motion),
        dlp3d::face_body(dlp3d::Dtype::F32, &[0.5]),
        dlp3d::audio_body(vec![0; 1066]),
        dlp3d::end(dlp3d::Stream::Motion),
        dlp3d::end(dlp3d::Stream::Face),
        dlp3d::end(dlp3d::Stream::Audio),
        dlp3d::leave(),
    ];
    let mut framed = Vec::new();
    for r in &responses {
        let b = dlp3d::encode_response(r);
        framed.extend_from_slice(&u16::try_from(b.len()).expect("small response").to_le_bytes());
        framed.extend_from_slice(&b);
    }
    out.put("dlp3d", "stream", &framed);

    // dlp3d_server: flags (bit 0 humanoid rig, 1 float32, 2 fixed names,
    // 3 segment, 4 sender clock, 5 audio), learn and idle (4 ms units),
    // segment (8 ms units), then ops (kind + 8 * detail): join (1), bone (2,
    // index, 7 floats), blendshape (3, f32), frame end with T (4, f32) or OK
    // (12), time (0, u16 in 50 µs), a raw datagram (5, length, bytes),
    // timeout (6), gone / refuse / refuse the next message / stop (7, 15,
    // 23, 31, then a client byte).
    let server_frames = |out: &mut Vec<u8>, bones: &[&str], n: u8| {
        for k in 0..n {
            let t = f32::from(k) / 60.0;
            for bone in bones {
                out.push(2);
                out.push(u8::try_from(vmc::bone_index(bone).expect("a HumanBodyBones name")).expect("55 bones fit"));
                for v in [0.0f32, 0.1, 0.0, 0.0, (t / 2.0).sin(), 0.0, (t / 2.0).cos()] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
            out.push(3);
            out.extend_from_slice(&t.to_le_bytes());
            out.push(4);
            out.extend_from_slice(&t.to_le_bytes());
            out.push(0);
            out.extend_from_slice(&333u16.to_le_bytes());
        }
    };
    let mut server = vec![0u8, 0, 50, 0, 1];
    server_frames(&mut server, &["Hips", "Spine", "Head"], 4);
    server.extend_from_slice(&[1, 6, 7, 1]);
    let raw = vmc::frame_datagrams(&[vmc::Message::BlendVal { name: "jawOpen".into(), value: 0.5 }, vmc::Message::BlendApply], vmc::MAX_BUNDLE).expect("a frame");
    for d in raw {
        server.push(5);
        server.push(u8::try_from(d.len()).expect("a short datagram"));
        server.extend_from_slice(&d);
    }
    server_frames(&mut server, &["Hips", "Spine", "Head"], 2);
    server.extend_from_slice(&[0, 0xff, 0xff, 6, 7 + 24, 2]);
    out.put("dlp3d_server", "two-clients-idle", &server);
    let mut segment = vec![1 | 2 | 8 | 16 | 32, 10, 50, 8, 1];
    server_frames(&mut segment, &["Hips", "Spine", "Chest", "LeftUpperArm"], 8);
    segment.extend_from_slice(&[1, 7 + 16, 2]);
    server_frames(&mut segment, &["Hips"], 3);
    segment.extend_from_slice(&[7 + 8 + 32, 1, 7 + 24, 0]);
    out.put("dlp3d_server", "humanoid-segment-audio-refusals", &segment);

    // parse_mapping: the built-in tables as mapping files, by joint name and
    // by id, and a small mixed one.
    for (name, table) in [("sony", bridge::SONY_MAPPING), ("animu-sphere", bridge::ANIMU_SPHERE_MAPPING)] {
        let by_name: Vec<String> = table.iter().map(|(b, j)| format!("\"{b}\": \"{}\"", smf::BONES[*j].name)).collect();
        out.put("parse_mapping", name, format!("{{{}}}", by_name.join(", ")).as_bytes());
        let by_id: Vec<String> = table.iter().map(|(b, j)| format!("\"{b}\": {j}")).collect();
        out.put("parse_mapping", &format!("{name}-ids"), format!("{{{}}}", by_id.join(",\n")).as_bytes());
    }
    out.put("parse_mapping", "mixed", br#"{"Hips": "root", "Spine": 3, "Head": "head"}"#);

    // BVH: a three-joint chain with two frames.
    let chain = vec![
        bvh::Joint { name: "root".into(), parent: None, offset: [0.0, 93.29, 0.0] },
        bvh::Joint { name: "torso_1".into(), parent: Some(0), offset: [0.0, 5.0, -1.1] },
        bvh::Joint { name: "l_up_leg".into(), parent: Some(0), offset: [8.0, -2.0, 0.0] },
    ];
    let mut text = bvh::header(&chain, 1.0 / 60.0).expect("valid chain").text;
    let mut enc = bvh::FrameEncoder::new(&chain);
    for k in 0..2 {
        let x = f64::from(k) * 0.1;
        text.push_str(&enc.line(&[[x, 93.0, 0.0]; 3], &[[0.0, x.sin(), 0.0, x.cos()]; 3]));
    }
    out.put("bvh", "chain", text.as_bytes());

    // sniff: every protocol's datagrams written above, and capture file heads.
    for target in ["smf", "livelink", "ifm_frame", "vmc_typed"] {
        let dir = out.0.join(target);
        let mut seeds: Vec<PathBuf> = fs::read_dir(&dir).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        seeds.sort();
        for p in seeds.iter().take(6) {
            out.put("sniff", &format!("{target}-{}", stem(p)), &fs::read(p).expect("read seed"));
        }
    }
    for p in files(&mocopi, "pcapng").iter().chain(&files(&mocopi, "pcap")) {
        let bytes = fs::read(p).expect("read capture");
        out.put("sniff", &format!("file-{}", stem(p)), bytes.get(..4096).unwrap_or(&bytes));
    }

    // renumber: a pass count, then length-prefixed datagrams of one stream.
    for (name, path) in [
        ("mocopi-wave", mocopi.join("wave-60hz.pcapng")),
        ("livelink-face", captures.join("livelink/face-60fps.pcapng")),
    ] {
        let mut seq = vec![2u8];
        for d in datagrams(&path).iter().take(6) {
            seq.extend_from_slice(&u16::try_from(d.len()).expect("a datagram fits u16").to_be_bytes());
            seq.extend_from_slice(d);
        }
        out.put("renumber", name, &seq);
    }
}
