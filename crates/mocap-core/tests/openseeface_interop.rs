//! OpenSeeFace's reference receiver, re-created: the reads of
//! `Unity/OpenSee.cs` (emilianavt/OpenSeeFace, `OpenSeeData.readFromPacket`
//! and the receive loop) in their order and with their conversions, run on
//! the bundled capture and compared field by field with our decoder. The
//! receiver takes a datagram only when its length is a whole number of
//! faces, each `packetFrameSize` = 1785 bytes, read little-endian (.NET's
//! `BitConverter` on x86/ARM): time (double), id (int), camera resolution
//! (2 floats), right and left eye openness, the 3D flag (byte), fit error,
//! the raw quaternion (x, y, z, w), the raw Euler angles read as a vector
//! with y negated, the translation (3 floats), 68 confidences, 68 points
//! (2 floats each, as sent), 70 3D points read with y negated, 14 features.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::float_cmp,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::openseeface;
use mocap_testutil::capture_payloads;

/// `packetFrameSize` as OpenSee.cs writes it out.
const PACKET_FRAME_SIZE: usize = 8
    + 4
    + 2 * 4
    + 2 * 4
    + 1
    + 4
    + 3 * 4
    + 3 * 4
    + 4 * 4
    + 4 * 68
    + 4 * 2 * 68
    + 4 * 3 * 70
    + 4 * 14;

/// `OpenSeeData` as the receiver fills it.
#[derive(Debug)]
struct OpenSeeData {
    time: f64,
    id: i32,
    camera_resolution: [f32; 2],
    right_eye_open: f32,
    left_eye_open: f32,
    got_3d_points: bool,
    fit_3d_error: f32,
    raw_quaternion: [f32; 4],
    raw_euler: [f32; 3],
    /// The three floats before the receiver rearranges them to (−y, x, −z).
    translation_read: [f32; 3],
    confidence: Vec<f32>,
    points: Vec<[f32; 2]>,
    points_3d: Vec<[f32; 3]>,
    features: Vec<f32>,
}

struct Reader<'a> {
    b: &'a [u8],
    o: usize,
}

impl Reader<'_> {
    fn float(&mut self) -> f32 {
        let v = f32::from_le_bytes(self.b[self.o..self.o + 4].try_into().unwrap());
        self.o += 4;
        v
    }

    /// `readVector3`: x, then y negated, then z.
    fn vector3(&mut self) -> [f32; 3] {
        let x = self.float();
        let y = -self.float();
        let z = self.float();
        [x, y, z]
    }

    fn vector2(&mut self) -> [f32; 2] {
        [self.float(), self.float()]
    }
}

fn read_from_packet(b: &[u8], o: usize) -> OpenSeeData {
    let time = f64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    let id = i32::from_le_bytes(b[o + 8..o + 12].try_into().unwrap());
    let mut r = Reader { b, o: o + 12 };
    let camera_resolution = r.vector2();
    let right_eye_open = r.float();
    let left_eye_open = r.float();
    let got_3d_points = r.b[r.o] != 0;
    r.o += 1;
    let fit_3d_error = r.float();
    let raw_quaternion = [r.float(), r.float(), r.float(), r.float()];
    let raw_euler = r.vector3();
    let translation_read = [r.float(), r.float(), r.float()];
    let confidence = (0..68).map(|_| r.float()).collect();
    let points = (0..68).map(|_| r.vector2()).collect();
    let points_3d = (0..70).map(|_| r.vector3()).collect();
    let features = (0..14).map(|_| r.float()).collect();
    assert_eq!(r.o - o, PACKET_FRAME_SIZE, "the reads cover one face");
    OpenSeeData {
        time,
        id,
        camera_resolution,
        right_eye_open,
        left_eye_open,
        got_3d_points,
        fit_3d_error,
        raw_quaternion,
        raw_euler,
        translation_read,
        confidence,
        points,
        points_3d,
        features,
    }
}

/// The receive loop: a datagram of whole faces, each read at its offset;
/// anything else is dropped.
fn receive(datagram: &[u8]) -> Option<Vec<OpenSeeData>> {
    if datagram.is_empty() || !datagram.len().is_multiple_of(PACKET_FRAME_SIZE) {
        return None;
    }
    Some(
        (0..datagram.len())
            .step_by(PACKET_FRAME_SIZE)
            .map(|o| read_from_packet(datagram, o))
            .collect(),
    )
}

fn bits<const N: usize>(v: [f32; N]) -> [u32; N] {
    v.map(f32::to_bits)
}

#[test]
fn the_reference_receivers_reads_agree_field_by_field() {
    assert_eq!(PACKET_FRAME_SIZE, openseeface::FACE_LEN);
    let mut faces = 0;
    for (i, d) in capture_payloads("openseeface/face-32fps.pcap")
        .iter()
        .enumerate()
    {
        let ours = openseeface::parse(d);
        let Some(theirs) = receive(d) else {
            assert!(
                ours.is_err(),
                "datagram {i}: the receiver drops it, we decode it"
            );
            continue;
        };
        let ours = ours.unwrap();
        assert_eq!(ours.faces().len(), theirs.len(), "datagram {i}");
        for (o, t) in ours.faces().zip(&theirs) {
            assert_eq!(o.time().to_bits(), t.time.to_bits());
            assert_eq!(o.id(), t.id);
            assert_eq!(bits(o.resolution()), bits(t.camera_resolution));
            assert_eq!(
                bits(o.eyes_open()),
                bits([t.right_eye_open, t.left_eye_open])
            );
            assert_eq!(o.success(), t.got_3d_points);
            assert_eq!(o.fit_error().to_bits(), t.fit_3d_error.to_bits());
            assert_eq!(bits(o.quaternion()), bits(t.raw_quaternion));
            let [x, y, z] = o.euler();
            assert_eq!(bits([x, -y, z]), bits(t.raw_euler));
            assert_eq!(bits(o.translation()), bits(t.translation_read));
            let conf: Vec<u32> = o.confidences().map(f32::to_bits).collect();
            assert_eq!(
                conf,
                t.confidence.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            for (a, b) in o.landmarks().zip(&t.points) {
                assert_eq!(bits(a), bits(*b));
            }
            for (a, b) in o.points_3d().zip(&t.points_3d) {
                let [x, y, z] = a;
                assert_eq!(bits([x, -y, z]), bits(*b));
            }
            let feats: Vec<u32> = o.features().map(|(_, v)| v.to_bits()).collect();
            assert_eq!(
                feats,
                t.features.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            faces += 1;
        }
    }
    // 29 whole datagrams, five of them with two faces.
    assert_eq!(faces, 34);
}
