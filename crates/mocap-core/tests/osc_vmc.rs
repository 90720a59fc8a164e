//! OSC vectors (the OSC 1.0 specification's examples, nesting, malformed
//! packets), VMC typing and encoding, and no-panic sweeps over the decoder.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::osc::{self, Arg, EncodeErrorKind, Error, ErrorKind, Message, PacketRepr};
use mocap_core::vmc;
use mocap_testutil::{Rng, sweep};

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.replace(' ', "")).unwrap()
}

/// A bundle holding `elements` (already encoded), timetag "immediately".
fn bundle_of(elements: &[Vec<u8>]) -> Vec<u8> {
    let mut b = b"#bundle\0".to_vec();
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]);
    for e in elements {
        b.extend_from_slice(&(e.len() as i32).to_be_bytes());
        b.extend_from_slice(e);
    }
    b
}

#[test]
fn osc_spec_examples() {
    let one = osc::decode(&unhex(
        "2f6f7363 696c6c61 746f722f 342f6672 65717565 6e637900 2c660000 43dc0000",
    ))
    .unwrap();
    assert_eq!(
        one,
        PacketRepr::Message(Message::new(
            "/oscillator/4/frequency",
            vec![Arg::Float(440.0)]
        ))
    );
    let two_bytes = unhex(
        "2f666f6f 00000000 2c696973 66660000 000003e8 ffffffff 68656c6c 6f000000 3f9df3b6 40b5b22d",
    );
    let two = osc::decode(&two_bytes).unwrap();
    let want = Message::new(
        "/foo",
        vec![
            Arg::Int(1000),
            Arg::Int(-1),
            Arg::String("hello".into()),
            Arg::Float(1.234),
            Arg::Float(5.678),
        ],
    );
    assert_eq!(two, PacketRepr::Message(want.clone()));
    assert_eq!(osc::message(&want).unwrap(), two_bytes);
}

#[test]
fn vmc_blend_vectors_are_byte_exact() {
    let val = Message::new(
        "/VMC/Ext/Blend/Val",
        vec![Arg::String("A".into()), Arg::Float(0.5)],
    );
    assert_eq!(
        osc::message(&val).unwrap(),
        unhex("2F564D432F4578742F426C656E642F56616C0000 2C736600 41000000 3F000000")
    );
    assert_eq!(
        osc::message(&Message::new("/VMC/Ext/Blend/Apply", vec![]))
            .unwrap()
            .len(),
        28
    );
}

#[test]
fn nested_bundles_flatten_in_wire_order() {
    let m = |a: &str| osc::message(&Message::new(a, vec![Arg::Int(1)])).unwrap();
    let inner = bundle_of(&[m("/b"), m("/c")]);
    let outer = bundle_of(&[m("/a"), inner, m("/d")]);
    let p = osc::decode(&outer).unwrap();
    let addrs: Vec<_> = p.messages().iter().map(|m| m.address.clone()).collect();
    assert_eq!(addrs, ["/a", "/b", "/c", "/d"]);
    // Re-encoding gives the same bytes.
    assert_eq!(p.to_bytes().unwrap(), outer);
}

#[test]
fn depth_bomb_is_refused_without_crashing() {
    let mut b = osc::message(&Message::new("/x", vec![])).unwrap();
    for _ in 0..3000 {
        b = bundle_of(&[b]);
    }
    let e = osc::decode(&b).unwrap_err();
    assert!(matches!(
        e,
        Error {
            kind: ErrorKind::TooDeep,
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        format!(
            "nesting deeper than {} levels at byte {}",
            osc::MAX_DEPTH,
            e.offset
        )
    );
    // Deep arrays in a type tag too.
    let mut tags = ",".to_owned();
    tags.push_str(&"[".repeat(5000));
    tags.push_str(&"]".repeat(5000));
    let mut msg = b"/x\0\0".to_vec();
    msg.extend_from_slice(tags.as_bytes());
    msg.resize((msg.len() + 4) & !3, 0);
    assert!(matches!(
        osc::decode(&msg),
        Err(Error {
            kind: ErrorKind::TooDeep,
            ..
        })
    ));
    // The depth the reference sender uses is fine.
    let mut ok = osc::message(&Message::new("/x", vec![])).unwrap();
    for _ in 0..3 {
        ok = bundle_of(&[ok]);
    }
    assert!(osc::decode(&ok).is_ok());
}

#[test]
fn truncated_leftover_and_malformed() {
    let m = osc::message(&Message::new("/VMC/Ext/T", vec![Arg::Float(1.0)])).unwrap();
    let full = bundle_of(&[m.clone(), m.clone()]);
    // rosc alone accepts a truncated bundle; we refuse it.
    let cut = &full[..full.len() - 6];
    // The second element's size field (16 header + 4 + message) is at fault.
    let e = osc::decode(cut).unwrap_err();
    assert_eq!(
        (&e.kind, e.offset),
        (&ErrorKind::BadSize, 20 + m.len()),
        "{e}"
    );
    // The wording tools print, kept when the error became wire::Error.
    assert_eq!(
        e.to_string(),
        format!("bundle element size out of range at byte {}", 20 + m.len())
    );
    let mut extra = m.clone();
    extra.extend_from_slice(&[0, 0, 0, 0]);
    let e = osc::decode(&extra).unwrap_err();
    assert_eq!(
        (&e.kind, e.offset),
        (&ErrorKind::Trailing { count: 4 }, m.len())
    );
    assert_eq!(e.to_string(), "4 bytes after the end of the packet");
    let mut bad_size = bundle_of(std::slice::from_ref(&m));
    bad_size[16..20].copy_from_slice(&(-4i32).to_be_bytes());
    assert!(matches!(
        osc::decode(&bad_size),
        Err(Error {
            kind: ErrorKind::BadSize,
            ..
        })
    ));
    let unknown_tag = unhex("2f780000 2c667800 3f800000 00000000");
    assert!(matches!(
        osc::decode(&unknown_tag),
        Err(Error {
            kind: ErrorKind::Malformed(_),
            ..
        })
    ));
    assert!(osc::decode(b"").is_err());
    assert!(osc::decode(b"not osc at all").is_err());
}

#[test]
fn vmc_typing_from_bytes() {
    let mut args = vec![Arg::String("Head".into())];
    args.extend([0.0, 1.5, 0.0, 0.0, 0.0, 0.0, 1.0].map(Arg::Float));
    args.push(Arg::Int(7)); // extra: ignored
    let bone = osc::message(&Message::new("/VMC/Ext/Bone/Pos", args)).unwrap();
    let doubles = osc::message(&Message::new(
        "/VMC/Ext/Bone/Pos",
        vec![
            Arg::String("Head".into()),
            Arg::Double(0.0),
            Arg::Double(1.0),
        ],
    ))
    .unwrap();
    let got = vmc::decode(&bundle_of(&[bone, doubles])).unwrap();
    assert_eq!(
        got[0],
        Ok(vmc::Message::BonePos {
            name: "Head".into(),
            pos: [0.0, 1.5, 0.0],
            rot: [0.0, 0.0, 0.0, 1.0]
        })
    );
    let e = got[1].clone().unwrap_err();
    assert_eq!((e.expected, e.got.as_str()), ("sfffffff", "sdd"));
}

#[test]
fn vmc_frame_round_trip() {
    let mut frame = vec![vmc::Message::RootPos {
        name: "root".into(),
        pos: [0.1, 0.9, -0.2],
        rot: [0.0, 0.6, 0.0, 0.8],
        mr: Some(([1.0; 3], [0.0; 3])),
    }];
    for b in vmc::HUMAN_BODY_BONES {
        frame.push(vmc::Message::BonePos {
            name: b.into(),
            pos: [0.0, 0.1, 0.0],
            rot: [0.1, 0.2, 0.3, 0.9],
        });
    }
    frame.push(vmc::Message::BlendVal {
        name: "Joy".into(),
        value: 1.0,
    });
    frame.push(vmc::Message::BlendApply);
    frame.push(vmc::Message::Available {
        loaded: 1,
        calibration: Some((3, 0)),
        tracking: Some(1),
    });
    frame.push(vmc::Message::Time(42.0));
    let datagrams = vmc::frame_datagrams(&frame, vmc::MAX_BUNDLE).unwrap();
    let mut back: Vec<vmc::Message> = Vec::new();
    for d in &datagrams {
        back.extend(vmc::decode(d).unwrap().into_iter().map(Result::unwrap));
    }
    let mut want = frame.clone();
    let mut got = back.clone();
    let key = |m: &vmc::Message| format!("{m:?}");
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got, want);
    assert_eq!(back.last(), Some(&vmc::Message::Time(42.0)));
}

fn corpus() -> Vec<Vec<u8>> {
    let bone = |n: &str| {
        let mut a = vec![Arg::String(n.into())];
        a.extend([0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 1.0].map(Arg::Float));
        Message::new("/VMC/Ext/Bone/Pos", a)
    };
    let mut c = vec![
        osc::bundle(&[bone("Hips"), bone("Head"), bone("LeftHand")]).unwrap(),
        osc::message(&Message::new(
            "/VMC/Ext/OK",
            vec![Arg::Int(1), Arg::Int(3), Arg::Int(0)],
        ))
        .unwrap(),
        osc::message(&Message::new(
            "/all",
            vec![
                Arg::Int(1),
                Arg::Float(2.0),
                Arg::String("s".into()),
                Arg::Blob(vec![1, 2, 3]),
                Arg::Long(4),
                Arg::Double(5.0),
                Arg::Bool(true),
                Arg::Nil,
                Arg::Inf,
                Arg::Time(1, 2),
                Arg::Char('c'),
                Arg::Color([1, 2, 3, 4]),
                Arg::Midi([5, 6, 7, 8]),
                Arg::Array(vec![Arg::Int(9), Arg::Array(vec![])]),
            ],
        ))
        .unwrap(),
    ];
    let inner = c[0].clone();
    c.push(bundle_of(&[inner, c[1].clone()]));
    c
}

#[test]
fn no_panic_sweeps() {
    let corpus = corpus();
    for c in &corpus {
        for n in 0..=c.len() {
            let _ = vmc::decode(&c[..n]);
        }
        let mut v = c.clone();
        for i in 0..v.len() {
            v[i] ^= 0xff;
            let _ = vmc::decode(&v);
            v[i] ^= 0xff;
        }
    }
    let count = sweep::rounds("OSC_SWEEP_MUTATIONS", 100_000);
    sweep::mutants(&corpus, Rng(0x05c0_0001), count, |v| {
        // What we accept re-encodes, and that decodes to the same bytes again.
        let written = |p: &PacketRepr| p.to_bytes().expect("what decodes can be written");
        if sweep::round_trip(v, osc::decode, written).is_some() {
            let _ = vmc::decode(v);
        }
    });
}

#[test]
fn what_osc_cannot_carry_is_refused_not_written() {
    // A NUL ends an OSC string: written, the name would end early and the
    // rest of the message would be read as garbage.
    let nul = Message::new(
        "/VMC/Ext/Blend/Val",
        vec![Arg::String("Jo\0y".into()), Arg::Float(1.0)],
    );
    let e = osc::message(&nul).unwrap_err();
    assert_eq!(e.kind, EncodeErrorKind::NulInString);
    assert_eq!(e.address, "/VMC/Ext/Blend/Val");
    assert!(e.to_string().contains("NUL"), "{e}");
    let addr = Message::new("/VMC/\0Ext", vec![]);
    assert_eq!(
        osc::message(&addr).unwrap_err().kind,
        EncodeErrorKind::NulInAddress
    );
    // Deeper than a reader accepts: refused on the way out too.
    let mut deep = PacketRepr::Message(Message::new("/x", vec![]));
    for _ in 0..=osc::MAX_DEPTH {
        deep = PacketRepr::Bundle {
            timetag: (0, 1),
            content: vec![deep],
        };
    }
    assert_eq!(deep.to_bytes().unwrap_err().kind, EncodeErrorKind::TooDeep);
    let PacketRepr::Bundle { content, .. } = deep else {
        unreachable!()
    };
    let ok = content.into_iter().next().unwrap();
    let bytes = ok.to_bytes().unwrap();
    assert_eq!(osc::decode(&bytes).unwrap(), ok);
    // emit leaves the buffer as it was on refusal.
    let mut out = b"keep".to_vec();
    assert!(PacketRepr::Message(nul).emit(&mut out).is_err());
    assert_eq!(out, b"keep");
}

#[test]
fn the_view_checks_framing_and_the_repr_the_rest() {
    let m = osc::message(&Message::new("/VMC/Ext/T", vec![Arg::Float(1.0)])).unwrap();
    let b = osc::bundle(&[Message::new("/a", vec![])]).unwrap();
    assert!(!osc::parse(&m).unwrap().is_bundle());
    assert!(osc::parse(&b).unwrap().is_bundle());
    assert_eq!(osc::parse(&b).unwrap().bytes(), &b[..]);
    // Framing passes, the argument is cut: the view is made, the repr refused.
    let cut = &m[..m.len() - 2];
    let view = osc::parse(cut).unwrap();
    assert!(matches!(
        PacketRepr::parse(&view),
        Err(Error {
            kind: ErrorKind::Malformed(_),
            ..
        })
    ));
    // Leftover bytes after a message are the repr's to find.
    let mut long = m.clone();
    long.extend_from_slice(&[0; 4]);
    assert!(matches!(
        PacketRepr::parse(&osc::parse(&long).unwrap()),
        Err(Error {
            kind: ErrorKind::Trailing { count: 4 },
            ..
        })
    ));
}

/// The datagrams `vmc-relay` sent for `bytes` before the lean path: the
/// packet decoded, each message through `Rules::apply`, then one datagram
/// per message (a single message in, or `flatten`) or `vmc::pack`'s bundles.
fn forwarded_by_decoding(rules: &vmc::Rules, bytes: &[u8], max: usize) -> (Vec<Vec<u8>>, u64) {
    let p = osc::decode(bytes).unwrap();
    let single = matches!(p, PacketRepr::Message(_));
    let all = p.messages();
    let kept: Vec<Message> = all.iter().filter_map(|m| rules.apply(m)).collect();
    let dropped = (all.len() - kept.len()) as u64;
    let mut out = Vec::new();
    if rules.flatten || single {
        out.extend(kept.iter().map(|m| osc::message(m).unwrap()));
    } else {
        vmc::pack(&kept, max, &mut out).unwrap();
    }
    (out, dropped)
}

fn lean_rules() -> Vec<vmc::Rules> {
    let pat = |p: &str| osc::Pattern::new(p).unwrap();
    vec![
        vmc::Rules {
            only: vec![pat("/VMC/Ext/{Bone,Blend}/*")],
            ..Default::default()
        },
        vmc::Rules {
            drop: vec![pat("/VMC/Ext/Root/*"), pat("/all")],
            drop_bones: vec!["LeftHand".into()],
            ..Default::default()
        },
        vmc::Rules {
            bones: Some(vec!["Hips".into(), "Head".into()]),
            rename: Some(vmc::Rename::Vrm0ToVrm1),
            ..Default::default()
        },
        vmc::Rules {
            rename: Some(vmc::Rename::Vrm1ToVrm0),
            flatten: true,
            ..Default::default()
        },
    ]
}

#[test]
fn the_lean_path_forwards_what_decoding_forwards() {
    let blend = |n: &str| {
        Message::new(
            "/VMC/Ext/Blend/Val",
            vec![Arg::String(n.into()), Arg::Float(0.5)],
        )
    };
    let mut corpus = corpus();
    corpus
        .push(osc::bundle(&[blend("Joy"), blend("happy"), blend("Blink_L"), blend("A")]).unwrap());
    corpus.push(osc::message(&blend("Joy")).unwrap());
    // Real VMC datagrams: the bundled capture of a 60 Hz body stream.
    let real = mocap_testutil::capture_payloads("vmc/body-60hz.pcapng");
    assert!(real.len() > 100, "{} datagrams in the capture", real.len());
    // Every real datagram takes the lean path: it is the common case.
    for d in &real {
        assert!(
            osc::Flat::parse(d).is_some(),
            "not flat: {}",
            hex::encode(d)
        );
    }
    let check = |bytes: &[u8], lean: &mut [vmc::Lean], max: usize| -> bool {
        let Some(flat) = osc::Flat::parse(bytes) else {
            return false;
        };
        // The lean path only takes what decodes.
        assert!(
            osc::decode(bytes).is_ok(),
            "flat but not decodable: {}",
            hex::encode(bytes)
        );
        for (rules, lean) in lean_rules().iter().zip(lean.iter_mut()) {
            let mut got = Vec::new();
            let done = lean
                .forward(rules, &flat, |b| got.push(b.to_vec()))
                .unwrap();
            let (want, dropped) = forwarded_by_decoding(rules, bytes, max);
            assert_eq!(got, want, "{rules:?} on {}", hex::encode(bytes));
            assert_eq!(done.dropped, dropped);
        }
        true
    };
    for max in [vmc::MAX_BUNDLE, 64] {
        let mut lean: Vec<vmc::Lean> = lean_rules().iter().map(|_| vmc::Lean::new(max)).collect();
        for d in real.iter().chain(&corpus) {
            check(d, &mut lean, max);
        }
    }
    // Mutated datagrams: whatever the lean path takes, it forwards as the
    // decoding path does, and it takes a share of them (not only the originals).
    let count = sweep::rounds("OSC_SWEEP_MUTATIONS", 100_000) / 4;
    let mut lean: Vec<vmc::Lean> = lean_rules()
        .iter()
        .map(|_| vmc::Lean::new(vmc::MAX_BUNDLE))
        .collect();
    let mut taken = 0;
    let sources: Vec<&Vec<u8>> = corpus.iter().chain(real.iter().take(50)).collect();
    sweep::mutants(&sources, Rng(0x1ea0_0040), count, |v| {
        taken += usize::from(check(v, &mut lean, vmc::MAX_BUNDLE));
    });
    assert!(
        taken * 50 > count,
        "the lean path took only {taken} of {count}"
    );
}
