//! Golden tests on real and reference bytes from `captures/mocopi/`.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

mod fixtures;

use fixtures::*;
use mocap_core::smf::{self, Body, ErrorKind, Tag};

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-5
}

#[test]
fn seed_frame_decodes_to_the_values_seed_000_prints() {
    assert_eq!(SEED.len(), 1575);
    let p = smf::parse(SEED).unwrap();
    let f = p.frame().expect("a frame packet");
    assert_eq!(f.fnum, 4977);
    assert_eq!(f.uttm, None);
    assert_eq!(f.timecode, None);
    // Early apps sent Unix seconds as f32.
    assert!((f.time - 1.674e9).abs() < 1e6, "time {}", f.time);
    assert_eq!(f.time.to_le_bytes(), [0x7a, 0x9c, 0xc7, 0x4e]);
    let bones: Vec<_> = f.bones().collect();
    assert_eq!(bones.len(), 27);
    assert!(
        bones
            .iter()
            .enumerate()
            .all(|(i, b)| usize::from(b.id) == i)
    );
    let root = bones[0];
    let rot = [-0.20435, 0.09860, 0.06234, 0.97192];
    let pos = [-0.52335, 0.71737, -0.74662];
    assert!(
        root.rot.iter().zip(rot).all(|(&a, b)| close(a, b)),
        "{:?}",
        root.rot
    );
    assert!(
        root.pos.iter().zip(pos).all(|(&a, b)| close(a, b)),
        "{:?}",
        root.pos
    );
    let sender = p.sender.unwrap();
    assert_eq!(sender.ipad, 172_020_010_007);
    assert_eq!(sender.ip(), Some("172.20.10.7".parse().unwrap()));
    assert_eq!(sender.rcvp, 12351);
    assert_eq!(p.unknown_count(), 0);
}

#[test]
fn t34400_frame_has_uttm_and_identity_pose() {
    assert_eq!(T34400_FRAM.len(), 1591);
    let p = smf::parse(T34400_FRAM).unwrap();
    let f = p.frame().unwrap();
    assert_eq!((f.fnum, f.time), (1, 0.0));
    assert!((f.uttm.unwrap() - 1_703_810_998.551346).abs() < 1e-5);
    assert_eq!(f.timecode, None);
    assert_eq!(f.bone_count(), 27);
    for b in f.bones() {
        // Identity written Unity-negated: (-0, 0, -0, -1).
        assert_eq!(b.rot.map(f32::abs), [0.0, 0.0, 0.0, 1.0]);
    }
    assert_eq!(p.sender.unwrap().ip(), Some("192.168.1.1".parse().unwrap()));
}

#[test]
fn t34400_skeleton_carries_the_mocopi_hierarchy() {
    assert_eq!(T34400_SKDF.len(), 1821);
    let p = smf::parse(T34400_SKDF).unwrap();
    let Body::Skeleton(s) = p.body else {
        panic!("not a skeleton")
    };
    let bones: Vec<_> = s.bones().collect();
    assert_eq!(bones.len(), 27);
    for (b, info) in bones.iter().zip(smf::BONES) {
        assert_eq!((b.id, b.parent), (info.id, info.parent), "{}", info.name);
    }
    // The root rest translation is the hips height.
    assert!(bones[0].pos[1] > 0.5 && bones[0].pos[1] < 1.5);
}

#[test]
fn animu_sphere_good_captures_all_decode() {
    for (name, text, frames, skeletons) in [
        ("neutral", NEUTRAL, 5, 1),
        ("arms", ARMS, 3, 1),
        ("loss", LOSS, 7, 1),
    ] {
        let (mut nf, mut ns) = (0, 0);
        for d in datagrams(text) {
            let p = smf::parse(&d).unwrap_or_else(|e| panic!("{name}: {e}"));
            match p.body {
                Body::Frame(f) => {
                    assert_eq!(d.len(), 1605);
                    assert!(f.uttm.is_some());
                    assert_eq!(f.timecode.map(|t| t.0), Some([0; 6]));
                    assert_eq!(f.bones().count(), 27);
                    nf += 1;
                }
                Body::Skeleton(s) => {
                    assert_eq!(d.len(), 1821);
                    assert_eq!(s.bones().count(), 27);
                    ns += 1;
                }
                Body::Sensor(_) => panic!("no sensor packets here"),
            }
        }
        assert_eq!((nf, ns), (frames, skeletons), "{name}");
    }
}

#[test]
fn arms_lowered_rotations_keep_component_order() {
    // Upstream: about 85 degrees on the two upper arms, opposite directions,
    // carried in the third imaginary component (z).
    let ds = datagrams(ARMS);
    let p = smf::parse(&ds[1]).unwrap();
    let bones: Vec<_> = p.frame().unwrap().bones().collect();
    let (l, r) = (bones[12].rot, bones[16].rot);
    assert!(
        l[2].abs() > 0.6 && l[0].abs() < 1e-6 && l[1].abs() < 1e-6,
        "{l:?}"
    );
    assert!((l[2] + r[2]).abs() < 1e-6, "{l:?} {r:?}");
    let angle = 2.0 * l[3].clamp(-1.0, 1.0).acos().to_degrees();
    assert!((angle - 85.0).abs() < 1.0, "{angle}");
}

#[test]
fn frame_loss_capture_health() {
    let mut h = mocap_core::health::Health::new();
    for d in datagrams(LOSS) {
        if let Body::Frame(f) = smf::parse(&d).unwrap().body {
            h.frame(
                f.fnum,
                mocap_core::health::sender_clock(f.uttm.unwrap()),
                None,
            );
        }
    }
    let r = h.report();
    assert_eq!((r.frames, r.lost, r.duplicates, r.restarts), (7, 2, 1, 1));
}

#[test]
fn malformed_containers_are_refused_with_reasons() {
    let ds = datagrams(BAD_CONTAINER);
    let got: Vec<_> = ds.iter().map(|d| smf::parse(d).unwrap_err()).collect();
    assert_eq!(got[0].kind, ErrorKind::Empty);
    assert_eq!(got[1].kind, ErrorKind::TruncatedHeader { have: 4 });
    assert_eq!(
        got[2].kind,
        ErrorKind::Overrun {
            len: 0x1000,
            have: 16
        }
    );
    assert_eq!(got[2].field, Some(Tag::FRAM));
    assert_eq!(
        (got[3].offset, got[3].kind),
        (43, ErrorKind::TruncatedHeader { have: 3 })
    );
    assert!(matches!(got[4].kind, ErrorKind::Overrun { .. }));
    assert_eq!(got.len(), 5);
}

/// The upstream "malformed" set: what cannot be decoded (structure, widths)
/// is refused with its reason and offset; odd values (NaN or negative clocks,
/// a NaN rest pose) decode with a warning and every bone intact.
#[test]
fn malformed_packets_are_refused_or_warned_with_reasons() {
    use mocap_core::smf::WarningKind;
    enum Want {
        Refused(Option<Tag>, ErrorKind),
        Warned(Tag, WarningKind),
    }
    use Want::{Refused, Warned};
    let ds = datagrams(BAD_PACKETS);
    let want = [
        Refused(Some(Tag::FTYP), ErrorKind::FormatType),
        Refused(Some(Tag::VRSN), ErrorKind::Version(2)),
        Refused(None, ErrorKind::Missing(Tag::HEAD)),
        Refused(Some(Tag::SKDF), ErrorKind::SeveralPayloads),
        Refused(None, ErrorKind::NoPayload),
        Refused(Some(Tag::FNUM), ErrorKind::Duplicate),
        Refused(
            Some(Tag::FNUM),
            ErrorKind::BadWidth {
                expected: 4,
                actual: 2,
            },
        ),
        Refused(
            Some(Tag::TRAN),
            ErrorKind::BadWidth {
                expected: 28,
                actual: 24,
            },
        ),
        Warned(Tag::TIME, WarningKind::NonFiniteClock),
        Warned(Tag::TIME, WarningKind::NegativeClock),
        Warned(Tag::UTTM, WarningKind::NonFiniteClock),
        Refused(
            Some(Tag::TMCD),
            ErrorKind::BadWidth {
                expected: 6,
                actual: 4,
            },
        ),
        Warned(Tag::BONS, WarningKind::NonFiniteBone { bone: 7 }),
    ];
    assert_eq!(ds.len(), want.len());
    for (i, (d, want)) in ds.iter().zip(want).enumerate() {
        match (smf::parse(d), want) {
            (Err(e), Refused(tag, kind)) => {
                assert_eq!((e.field, e.kind), (tag, kind), "datagram {i}: {e}");
                // The offset points at a chunk header carrying that tag.
                if let Some(tag) = tag {
                    assert_eq!(&d[e.offset + 4..e.offset + 8], &tag.0, "datagram {i}");
                }
                if i == 5 {
                    assert_eq!(e.offset, 97, "the second fnum");
                }
            }
            (Ok(p), Warned(tag, kind)) => {
                let w = p.warnings();
                assert_eq!(w.len(), 1, "datagram {i}: {w:?}");
                assert_eq!((w[0].field, w[0].kind), (tag, kind), "datagram {i}");
                assert_eq!(&d[w[0].offset + 4..w[0].offset + 8], &tag.0, "datagram {i}");
                let (bones, records) = match &p.body {
                    Body::Frame(f) => (f.bones().count(), f.bone_count()),
                    Body::Skeleton(s) => (s.bones().count(), s.bone_count()),
                    Body::Sensor(_) => (0, 1),
                };
                assert!(bones >= 1, "datagram {i}");
                assert_eq!(bones, records, "datagram {i}: every bone decoded");
            }
            (got, _) => panic!("datagram {i}: {:?}", got.map(|p| p.warnings())),
        }
    }
}

/// A negative clock loses nothing: the frame decodes with every bone and one
/// warning naming the `time` chunk; the good seed frame has none.
#[test]
fn a_negative_clock_is_a_warning_on_a_decoded_frame() {
    use mocap_core::smf::{BodyRepr, WarningKind};
    assert!(smf::parse(SEED).unwrap().warnings().is_empty());
    let mut repr = smf::PacketRepr::parse(&smf::parse(SEED).unwrap());
    let BodyRepr::Frame(f) = &mut repr.body else {
        panic!("the seed is a frame")
    };
    f.time = -3.5;
    f.bones[4].rot = [0.0, 0.0, 0.0, 2.0];
    let bytes = repr.to_bytes();
    let p = smf::parse(&bytes).unwrap();
    let Body::Frame(frame) = &p.body else {
        panic!("not a frame")
    };
    assert_eq!(frame.time, -3.5);
    assert_eq!(frame.bones().count(), 27);
    let kinds: Vec<_> = p.warnings().iter().map(|w| w.kind).collect();
    assert_eq!(
        kinds,
        [
            WarningKind::NegativeClock,
            WarningKind::NonUnitRotation { bone: 4 }
        ]
    );
    assert_eq!(smf::PacketRepr::parse(&p), repr);
}

#[test]
fn every_good_datagram_round_trips_through_the_encoder() {
    let mut all = vec![SEED.to_vec(), T34400_FRAM.to_vec(), T34400_SKDF.to_vec()];
    for text in [NEUTRAL, ARMS, LOSS] {
        all.extend(datagrams(text));
    }
    for d in &all {
        let p = smf::parse(d).unwrap();
        let repr = smf::PacketRepr::parse(&p);
        assert_eq!(repr.buffer_len(), d.len());
        // Our encoder writes exactly what the app writes.
        assert_eq!(&repr.to_bytes(), d);
        assert_eq!(
            smf::PacketRepr::parse(&smf::parse(&repr.to_bytes()).unwrap()),
            repr
        );
    }
}

#[test]
fn unknown_chunks_are_kept_and_reported() {
    // A newer app adding a chunk inside fram, inside each btdt, and at the top.
    let mut bytes = smf::PacketRepr::parse(&smf::parse(SEED).unwrap()).to_bytes();
    let extra = |tag: &[u8; 4]| {
        let mut c = 2u32.to_le_bytes().to_vec();
        c.extend_from_slice(tag);
        c.extend_from_slice(&[1, 2]);
        c
    };
    bytes.extend(extra(b"zzzz"));
    let p = smf::parse(&bytes).unwrap();
    assert_eq!(p.unknown_count(), 1);
    let unknown = p.unknown_chunks();
    assert_eq!(unknown[0].0, None);
    assert_eq!(unknown[0].1.tag, Tag(*b"zzzz"));
    assert_eq!(unknown[0].1.offset, 1575);
    assert_eq!(p.frame().unwrap().bones().count(), 27);
}

#[test]
fn bones_are_joined_by_id_not_position() {
    let p = smf::parse(SEED).unwrap();
    let mut repr = smf::PacketRepr::parse(&p);
    if let smf::BodyRepr::Frame(f) = &mut repr.body {
        f.bones.reverse();
    }
    let bytes = repr.to_bytes();
    let q = smf::parse(&bytes).unwrap();
    let ids: Vec<_> = q.frame().unwrap().bones().map(|b| b.id).collect();
    assert_eq!(ids, (0..27).rev().collect::<Vec<u16>>());
}

#[test]
fn sensor_packets_are_recognised_with_raw_children() {
    let repr = smf::PacketRepr {
        sender: None,
        body: smf::BodyRepr::Sensor(vec![
            (Tag::SNAD, b"AA:BB".to_vec()),
            (Tag::SNJI, 7u32.to_le_bytes().to_vec()),
        ]),
    };
    let bytes = repr.to_bytes();
    let p = smf::parse(&bytes).unwrap();
    let Body::Sensor(s) = p.body else { panic!() };
    let kids: Vec<_> = s.children().map(|c| (c.tag, c.value.to_vec())).collect();
    assert_eq!(kids[0], (Tag::SNAD, b"AA:BB".to_vec()));
    assert_eq!(smf::PacketRepr::parse(&p), repr);
    assert_eq!(p.sender, None);
}

#[test]
fn bone_records_in_any_layout_decode_the_same() {
    // Rewrite every btdt as tran-then-bnid with an unknown chunk in between:
    // the general walk must give the same bones as the app's own layout.
    let p = smf::parse(SEED).unwrap();
    let want: Vec<_> = p.frame().unwrap().bones().collect();
    let leaf = |tag: &[u8; 4], v: &[u8]| {
        let mut c = (v.len() as u32).to_le_bytes().to_vec();
        c.extend_from_slice(tag);
        c.extend_from_slice(v);
        c
    };
    let mut btrs = Vec::new();
    for b in &want {
        let mut tran = Vec::new();
        for v in b.rot.iter().chain(&b.pos) {
            tran.extend_from_slice(&v.to_le_bytes());
        }
        let mut body = leaf(b"tran", &tran);
        body.extend(leaf(b"newx", &[9, 9, 9]));
        body.extend(leaf(b"bnid", &b.id.to_le_bytes()));
        btrs.extend(leaf(b"btdt", &body));
    }
    let mut fram = leaf(b"fnum", &4977u32.to_le_bytes());
    fram.extend(leaf(b"time", &0.5f32.to_le_bytes()));
    fram.extend(leaf(b"btrs", &btrs));
    let mut bytes = SEED[..77].to_vec();
    bytes.extend(leaf(b"fram", &fram));
    let q = smf::parse(&bytes).unwrap();
    let got: Vec<_> = q.frame().unwrap().bones().collect();
    assert_eq!(got, want);
    assert_eq!(q.unknown_count(), 27);
    let unknown = q.unknown_chunks();
    assert!(
        unknown
            .iter()
            .all(|(parent, c)| *parent == Some(Tag::BTDT) && c.tag == Tag(*b"newx"))
    );
}

/// A second, independent decoder as oracle: the `mocopi_parser` crate reads
/// the 1575-byte frame form (no `uttm`/`tmcd`). On the seed frame and on
/// frames re-encoded from it with seeded random bone values, both decoders
/// must agree bit for bit on the frame number and every bone's id, rotation
/// and position; the skeletons it reads must agree on the hierarchy too.
#[test]
fn mocopi_parser_crate_agrees_on_what_it_can_read() {
    use mocap_core::smf::BodyRepr;
    use mocap_testutil::Rng;
    let compare = |bytes: &[u8]| -> Option<&'static str> {
        let mut copy = bytes.to_vec();
        let theirs = mocopi_parser::parse(&mut copy).ok()?;
        let ours = smf::parse(bytes).unwrap();
        match (theirs, &ours.body) {
            (mocopi_parser::SkeletonOrFrame::Frame(t), Body::Frame(o)) => {
                assert_eq!(t.frame.num, o.fnum);
                let ob: Vec<_> = o.bones().collect();
                assert_eq!(t.frame.bones.len(), ob.len());
                for (tb, ob) in t.frame.bones.iter().zip(&ob) {
                    let (r, p) = (&tb.trans.rot, &tb.trans.pos);
                    assert_eq!(tb.id, ob.id);
                    assert_eq!(
                        [r.x, r.y, r.z, r.w].map(f32::to_bits),
                        ob.rot.map(f32::to_bits)
                    );
                    assert_eq!([p.x, p.y, p.z].map(f32::to_bits), ob.pos.map(f32::to_bits));
                }
                Some("frame")
            }
            (mocopi_parser::SkeletonOrFrame::Skeleton(t), Body::Skeleton(o)) => {
                let ob: Vec<_> = o.bones().collect();
                assert_eq!(t.skeleton.bones.len(), ob.len());
                for (tb, ob) in t.skeleton.bones.iter().zip(&ob) {
                    let (r, p) = (&tb.trans.rot, &tb.trans.pos);
                    assert_eq!((tb.id, tb.parent as i16), (ob.id, ob.parent));
                    assert_eq!(
                        [r.x, r.y, r.z, r.w].map(f32::to_bits),
                        ob.rot.map(f32::to_bits)
                    );
                    assert_eq!([p.x, p.y, p.z].map(f32::to_bits), ob.pos.map(f32::to_bits));
                }
                Some("skeleton")
            }
            (_, body) => panic!("the decoders disagree on the kind: ours {}", body.kind()),
        }
    };
    let mut frames = 0;
    for d in all() {
        if compare(&d) == Some("frame") {
            frames += 1;
        }
    }
    assert!(frames >= 1, "mocopi_parser read none of the fixtures");
    assert_eq!(compare(SEED), Some("frame"));
    // Random poses in the seed's layout.
    let mut rng = Rng(7);
    let mut unit = || (rng.next() % 2_000_001) as f32 / 1_000_000.0 - 1.0;
    let seed = smf::PacketRepr::parse(&smf::parse(SEED).unwrap());
    for k in 0..500u32 {
        let mut repr = seed.clone();
        let BodyRepr::Frame(f) = &mut repr.body else {
            panic!("the seed is a frame")
        };
        f.fnum = k.wrapping_mul(2_654_435_761);
        for b in &mut f.bones {
            b.rot = [unit(), unit(), unit(), unit()];
            b.pos = [unit() * 2.0, unit() * 2.0, unit() * 2.0];
        }
        let bytes = repr.to_bytes();
        assert_eq!(bytes.len(), 1575);
        assert_eq!(compare(&bytes), Some("frame"), "pose {k}");
    }
}
