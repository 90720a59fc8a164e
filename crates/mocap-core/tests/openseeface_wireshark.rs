//! Differential test: our Lua dissector (`tools/wireshark/openseeface.lua`,
//! run by tshark) and `mocap_core::openseeface::parse` agree on every
//! datagram of the bundled capture (kind, every field of every face, the
//! refusal with its offset, the warnings), and on the kind and every message
//! of each prefix and byte flip of a one-face and a two-face datagram, none
//! of which makes the script fail. Needs Debian's tshark
//! (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::SocketAddr;
use std::path::Path;

use mocap_core::openseeface::{self, FEATURES, Packet};
use mocap_testutil::tshark::{self, list};

const CAPTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../captures/openseeface/face-32fps.pcap"
);
const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tools/wireshark/openseeface.lua"
);

/// The f32 fields, in the order [`f32s`] gives our values.
const FLOATS: [&str; 24] = [
    "openseeface.width",
    "openseeface.height",
    "openseeface.eye_open_r",
    "openseeface.eye_open_l",
    "openseeface.fit_error",
    "openseeface.quat.x",
    "openseeface.quat.y",
    "openseeface.quat.z",
    "openseeface.quat.w",
    "openseeface.euler.x",
    "openseeface.euler.y",
    "openseeface.euler.z",
    "openseeface.translation.x",
    "openseeface.translation.y",
    "openseeface.translation.z",
    "openseeface.confidence",
    "openseeface.landmark.column",
    "openseeface.landmark.row",
    "openseeface.point.x",
    "openseeface.point.y",
    "openseeface.point.z",
    "openseeface.feature.value",
    // Not floats, read as text: kept last.
    "openseeface.feature.name",
    "_ws.expert.message",
];

/// Our values of each field of [`FLOATS`], every face in turn.
fn f32s(p: &Packet<'_>) -> Vec<Vec<f32>> {
    let mut out = vec![Vec::new(); 22];
    for f in p.faces() {
        let [w, h] = f.resolution();
        let [r, l] = f.eyes_open();
        let q = f.quaternion();
        let e = f.euler();
        let t = f.translation();
        let head = [
            w,
            h,
            r,
            l,
            f.fit_error(),
            q[0],
            q[1],
            q[2],
            q[3],
            e[0],
            e[1],
            e[2],
            t[0],
            t[1],
            t[2],
        ];
        for (column, v) in out.iter_mut().zip(head) {
            column.push(v);
        }
        out[15].extend(f.confidences());
        for [c, r] in f.landmarks() {
            out[16].push(c);
            out[17].push(r);
        }
        for [x, y, z] in f.points_3d() {
            out[18].push(x);
            out[19].push(y);
            out[20].push(z);
        }
        out[21].extend(f.features().map(|(_, v)| v));
    }
    out
}

/// The expert messages we would give: the refusal, or the warnings.
fn messages(p: &openseeface::Result<Packet<'_>>) -> Vec<String> {
    match p {
        Ok(p) => p.warnings().iter().map(ToString::to_string).collect(),
        Err(e) => vec![e.to_string()],
    }
}

fn kind(p: &openseeface::Result<Packet<'_>>) -> &'static str {
    if p.is_ok() { "frame" } else { "malformed" }
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn dissector_and_decoder_agree_on_the_capture() {
    let datagrams = mocap_testutil::capture_payloads("openseeface/face-32fps.pcap");
    let mut fields = vec![
        "openseeface.kind",
        "openseeface.faces",
        "openseeface.time",
        "openseeface.id",
        "openseeface.success",
    ];
    fields.extend(FLOATS);
    let rows = tshark::fields(Path::new(SCRIPT), Path::new(CAPTURE), &[], &fields);
    assert_eq!(rows.len(), datagrams.len());
    let mut two = 0;
    for (i, (d, row)) in datagrams.iter().zip(&rows).enumerate() {
        let p = openseeface::parse(d);
        let what = format!("datagram {i}");
        assert_eq!(row[0], kind(&p), "{what}");
        assert_eq!(list(&row[5 + 23]), messages(&p), "{what}");
        let Ok(p) = p else { continue };
        two += usize::from(p.len() == 2);
        assert_eq!(row[1], p.len().to_string(), "{what}");
        let times: Vec<f64> = list(&row[2]).iter().map(|v| v.parse().unwrap()).collect();
        let ours: Vec<f64> = p.faces().map(|f| f.time()).collect();
        assert_eq!(times, ours, "{what}");
        let ids: Vec<String> = p.faces().map(|f| f.id().to_string()).collect();
        assert_eq!(list(&row[3]), ids, "{what}");
        let success: Vec<String> = p.faces().map(|f| f.success_byte().to_string()).collect();
        assert_eq!(list(&row[4]), success, "{what}");
        for (k, ours) in f32s(&p).iter().enumerate() {
            // Shown as doubles with 15 digits: each reads back as its f32.
            #[allow(clippy::cast_possible_truncation, reason = "back to the wire's f32")]
            let theirs: Vec<f32> = list(&row[5 + k])
                .iter()
                .map(|v| v.parse::<f64>().unwrap() as f32)
                .collect();
            assert_eq!(&theirs, ours, "{what}: {}", FLOATS[k]);
        }
        let names: Vec<&str> = p.faces().flat_map(|_| FEATURES).collect();
        assert_eq!(list(&row[5 + 22]), names, "{what}");
    }
    assert_eq!(two, 5, "datagrams 10 to 14 carry two faces");
    assert_eq!(rows.last().unwrap()[0], "malformed");
}

#[test]
#[ignore = "needs tshark: scripts/test-all.sh"]
fn every_prefix_and_flip_agrees_and_never_fails_the_script() {
    let datagrams = mocap_testutil::capture_payloads("openseeface/face-32fps.pcap");
    let ends: (SocketAddr, SocketAddr) = (
        "127.0.0.1:50573".parse().unwrap(),
        "127.0.0.1:11573".parse().unwrap(),
    );
    let one = &datagrams[0];
    let two = datagrams.iter().find(|d| d.len() == 2 * 1785).unwrap();
    let mut warned = 0;
    for seed in [one, two] {
        let len = seed.len();
        let scratch = tshark::scratch("openseeface", &format!("sweep-{len}.pcapng"));
        let rows = tshark::sweep(Path::new(SCRIPT), &scratch, seed, ends, "openseeface.kind");
        let mut mutants: Vec<Vec<u8>> = (1..len).map(|n| seed[..n].to_vec()).collect();
        for i in 0..len {
            let mut m = seed.clone();
            m[i] ^= 0xff;
            mutants.push(m);
        }
        for (m, row) in mutants.iter().zip(&rows) {
            let p = openseeface::parse(m);
            let (k, experts) = row.split_once('|').unwrap();
            let what = format!("{} bytes, {:02x?}…", m.len(), &m[..m.len().min(40)]);
            assert_eq!(k, kind(&p), "{what}");
            assert_eq!(experts, messages(&p).join(","), "{what}");
            warned += usize::from(p.is_ok_and(|p| !p.warnings().is_empty()));
        }
    }
    assert!(warned > 0);
}
