//! Live Link Face against an independent implementation: PyPI's
//! `pylivelinkface` builds datagrams that we decode f32-exact, and decodes
//! the datagrams our encoder builds. Needs python3 with pylivelinkface
//! (scripts/test-all.sh installs it).

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::io::Write as _;
use std::process::{Command, Stdio};

use mocap_core::livelink::{self, PacketRepr};
use mocap_testutil::Rng;

fn python(script: &str, input: &str) -> String {
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "is pylivelinkface installed? (pip install pylivelinkface): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Values as the f32 bit patterns both sides must agree on.
fn values(rng: &mut Rng) -> Vec<f32> {
    (0..61)
        .map(|i| {
            let unit = (rng.next() % 1_000_001) as f32 / 1_000_000.0;
            if i < 52 { unit } else { unit * 2.0 - 1.0 }
        })
        .collect()
}

#[test]
#[ignore = "needs python3 + pylivelinkface: scripts/test-all.sh"]
fn we_decode_what_pylivelinkface_encodes() {
    let mut rng = Rng(61);
    let frames: Vec<Vec<f32>> = (0..20).map(|_| values(&mut rng)).collect();
    let mut input = String::new();
    for v in &frames {
        let bits: Vec<String> = v.iter().map(|x| format!("{:08x}", x.to_bits())).collect();
        input.push_str(&bits.join(" "));
        input.push('\n');
    }
    // Values go in as float32 bit patterns; encode() packs them as '!61f'.
    let script = "\
import sys, struct
from pylivelinkface.pylivelinkface import PyLiveLinkFace, FaceBlendShape
face = PyLiveLinkFace(name='Zoe iPhone', uuid='4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F', fps=60)
for line in sys.stdin.read().splitlines():
    for i, h in enumerate(line.split()):
        v = struct.unpack('>f', bytes.fromhex(h))[0]
        face.set_blendshape(FaceBlendShape(i), v, no_filter=True)
    print(face.encode().hex())
";
    let out = python(script, &input);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), frames.len());
    for (want, line) in frames.iter().zip(lines) {
        let bytes = hex::decode(line).unwrap();
        let p = livelink::parse(&bytes).expect("their datagram decodes");
        // Its "$" prefix is the low byte of our length field (36).
        assert_eq!(p.device(), "4DC9E2B8-0A5C-4F7C-9D0E-6A1B2C3D4E5F");
        assert_eq!(p.subject(), "Zoe iPhone");
        assert_eq!(p.time.rate, [60, 1]);
        assert!(p.warnings().is_empty(), "{:?}", p.warnings());
        let face = p.face().expect("a face");
        let got: Vec<u32> = face.values().map(f32::to_bits).collect();
        let want: Vec<u32> = want.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, want);
        // And the bytes are exactly what our encoder writes for those values.
        assert_eq!(PacketRepr::parse(&p).to_bytes(), bytes);
    }
}

#[test]
#[ignore = "needs python3 + pylivelinkface: scripts/test-all.sh"]
fn pylivelinkface_decodes_what_we_encode() {
    let mut rng = Rng(62);
    let mut input = String::new();
    let mut reprs = Vec::new();
    for k in 0..20 {
        let repr = PacketRepr {
            // pylivelinkface reads 37 bytes as the id: the low byte of our
            // length (36 = '$') and a 36-character UUID.
            device: "1E2D3C4B-5A69-7887-96A5-B4C3D2E1F0AB".into(),
            subject: format!("phone {k}"),
            frame: 1_000_000 + k,
            subframe: 0.25,
            rate: [60, 1],
            values: Some(values(&mut rng)),
        };
        input.push_str(&hex::encode(repr.to_bytes()));
        input.push('\n');
        reprs.push(repr);
    }
    let script = "\
import sys, struct
from pylivelinkface.pylivelinkface import PyLiveLinkFace
for line in sys.stdin.read().splitlines():
    ok, face = PyLiveLinkFace.decode(bytes.fromhex(line))
    bits = ' '.join(struct.pack('>f', v).hex() for v in face._blend_shapes)
    print(ok, face.name, face._frames, face.fps, face._denominator, bits)
";
    let out = python(script, &input);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), reprs.len());
    for (r, line) in reprs.iter().zip(lines) {
        let (ok, rest) = line.split_once(' ').unwrap();
        assert_eq!(ok, "True");
        let fields: Vec<&str> = rest.rsplitn(65, ' ').collect();
        // rsplitn: 61 values, denominator, fps, frame, then the name.
        let name = fields[64];
        assert_eq!(name, r.subject);
        assert_eq!(fields[63], r.frame.to_string());
        assert_eq!(fields[62], "60");
        assert_eq!(fields[61], "1");
        let theirs: Vec<u32> = fields[..61]
            .iter()
            .rev()
            .map(|h| u32::from_str_radix(h, 16).unwrap())
            .collect();
        let ours: Vec<u32> = r
            .values
            .as_ref()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(theirs, ours);
    }
}
