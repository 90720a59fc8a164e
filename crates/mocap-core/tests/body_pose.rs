//! The registry's body capability on real captures, against oracles that
//! share no code with the readers: VMC's bones as rosc decodes the same
//! datagrams, and mocopi's retargeted bones checked by what retargeting
//! promises — every humanoid bone ends with the world orientation of its
//! mocopi joint — with the world orientations composed here along each
//! skeleton's own parent table.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::float_cmp,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::bridge::{BodyPose, HUMANOID_BONES};
use mocap_core::protocol::Protocol;
use mocap_core::quat::{dot, mul, wide};
use mocap_core::smf::{self, Body};
use mocap_core::vmc::HUMAN_BODY_BONES;
use mocap_core::vmc::humanoid::humanoid_parent;
use mocap_testutil::capture_payloads;

/// Bone/Pos and Root/Pos per frame as rosc reads them; a frame ends with
/// `/VMC/Ext/OK` or `/VMC/Ext/T` — and, until a sender's first such mark,
/// with every datagram (it may be one that never marks its frames).
fn rosc_frames(datagrams: &[Vec<u8>]) -> Vec<Vec<(String, Vec<f32>)>> {
    fn walk(p: rosc::OscPacket, out: &mut Vec<rosc::OscMessage>) {
        match p {
            rosc::OscPacket::Message(m) => out.push(m),
            rosc::OscPacket::Bundle(b) => b.content.into_iter().for_each(|p| walk(p, out)),
        }
    }
    let mut frames = Vec::new();
    let mut frame = Vec::new();
    let mut marks = false;
    for d in datagrams {
        let (_, packet) = rosc::decoder::decode_udp(d).unwrap();
        let mut messages = Vec::new();
        walk(packet, &mut messages);
        let mut ends = false;
        for m in messages {
            let floats: Vec<f32> = m
                .args
                .iter()
                .filter_map(|a| match a {
                    rosc::OscType::Float(f) => Some(*f),
                    _ => None,
                })
                .collect();
            match (m.addr.as_str(), m.args.first()) {
                ("/VMC/Ext/Bone/Pos", Some(rosc::OscType::String(n))) => {
                    frame.push((n.clone(), floats));
                }
                ("/VMC/Ext/Root/Pos", _) => frame.push(("(root)".into(), floats[..7].to_vec())),
                ("/VMC/Ext/OK" | "/VMC/Ext/T", _) => ends = true,
                _ => {}
            }
        }
        marks |= ends;
        if ends || !marks {
            // A frame without bones (faces only, or the root alone) is no body.
            let frame = std::mem::take(&mut frame);
            if frame.iter().any(|(n, _)| n != "(root)") {
                frames.push(frame);
            }
        }
    }
    frames
}

fn flat(pose: &BodyPose) -> Vec<(String, Vec<f32>)> {
    let mut out = Vec::new();
    if let Some(r) = pose.root {
        out.push(("(root)".into(), [&r.pos[..], &r.rot[..]].concat()));
    }
    for (name, b) in pose.named() {
        out.push((name.into(), [&b.pos[..], &b.rot[..]].concat()));
    }
    out
}

#[test]
fn vmc_poses_are_the_bones_rosc_reads_frame_by_frame() {
    let datagrams = capture_payloads("vmc/body-60hz.pcapng");
    let mut reader = (Protocol::Vmc.spec().body.unwrap())();
    let ours: Vec<BodyPose> = datagrams
        .iter()
        .filter_map(|d| reader.datagram(d))
        .collect();
    let theirs = rosc_frames(&datagrams);
    assert!(theirs.len() > 100, "{} frames", theirs.len());
    assert_eq!(ours.len(), theirs.len());
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        let mut t = t.clone();
        // The pose is in HumanBodyBones order, the root first.
        t.sort_by_key(|(n, _)| HUMAN_BODY_BONES.iter().position(|b| b == n));
        let o = flat(o);
        assert_eq!(o.len(), t.len(), "frame {i}");
        for ((on, ov), (tn, tv)) in o.iter().zip(&t) {
            assert_eq!(on, tn, "frame {i}");
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(ov), bits(tv), "frame {i} {on}");
        }
    }
}

/// World orientation of each index along `parent`, from local rotations.
fn world(local: &[Option<[f64; 4]>], parent: impl Fn(usize) -> Option<usize>) -> Vec<[f64; 4]> {
    (0..local.len())
        .map(|i| {
            let mut chain = vec![i];
            while let Some(p) = parent(*chain.last().unwrap()) {
                chain.push(p);
            }
            chain.iter().rev().fold([0.0, 0.0, 0.0, 1.0], |q, j| {
                mul(q, local[*j].unwrap_or([0.0, 0.0, 0.0, 1.0]))
            })
        })
        .collect()
}

#[test]
fn mocopi_poses_keep_every_joints_world_orientation() {
    let datagrams = capture_payloads("mocopi/wave-60hz.pcapng");
    let mut reader = (Protocol::Mocopi.spec().body.unwrap())();
    let mut parents = smf::BONES.map(|b| b.parent);
    let (mut checked, mut skeletons) = (0, 0);
    for d in &datagrams {
        let pose = reader.datagram(d);
        let packet = smf::parse(d).unwrap();
        let frame = match &packet.body {
            Body::Skeleton(s) => {
                skeletons += 1;
                for b in s.bones() {
                    parents[usize::from(b.id)] = b.parent;
                }
                assert!(pose.is_none());
                continue;
            }
            Body::Frame(f) => f,
            Body::Sensor(_) => continue,
        };
        if skeletons == 0 {
            assert!(pose.is_none(), "no pose before a skeleton");
            continue;
        }
        let pose = pose.unwrap();
        let mut joints = [None; smf::BONE_COUNT];
        for b in frame.bones() {
            joints[usize::from(b.id)] = Some(wide(b.rot));
        }
        let joint_world = world(&joints, |j| usize::try_from(parents[j]).ok());
        let local: Vec<Option<[f64; 4]>> =
            pose.bones.iter().map(|b| b.map(|b| wide(b.rot))).collect();
        assert_eq!(local.len(), HUMANOID_BONES);
        let bone_world = world(&local, humanoid_parent);
        // Sony's mapping, as the reader uses (bridge::SONY_MAPPING).
        for (bone, joint) in mocap_core::bridge::SONY_MAPPING {
            let i = HUMAN_BODY_BONES.iter().position(|b| *b == bone).unwrap();
            let [x, y, z, w] = joint_world[joint];
            // Unity mirrors X: (x, y, z, w) → (−x, y, z, −w).
            let want = [-x, y, z, -w];
            let d = dot(bone_world[i], want).abs();
            assert!((d - 1.0).abs() < 1e-4, "{bone}: |dot| {d}");
        }
        // Hips carry the root joint's position, mirrored.
        let hips = pose.bone("Hips").unwrap();
        let root = frame.bones().find(|b| b.id == 0).unwrap().pos;
        assert_eq!(hips.pos, [-root[0], root[1], root[2]]);
        checked += 1;
    }
    assert!(
        skeletons > 0 && checked > 100,
        "{skeletons} skeletons, {checked} frames"
    );
}
