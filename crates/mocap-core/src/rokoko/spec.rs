//! Rokoko Studio Live's row of the registry ([`crate::protocol`]).

use std::time::Duration;

use crate::bridge::FacePose;
use crate::ifm::arkit_index;
use crate::protocol::{Carries, Confidence, Fact, Spec, Stamp, View};

use super::body::RokokoBody;
use super::{Actor, DEFAULT_PORT, Frame, LZ4_MAGIC, parse};

/// Rokoko Studio Live in the registry. It has no dump tool of its own:
/// mocap-dump reads it, and its `--vmc` sends the bodies and faces on.
pub const SPEC: Spec = Spec {
    name: "Rokoko Studio Live",
    key: "rokoko",
    label: "rokoko",
    ports: &[DEFAULT_PORT],
    sniff,
    decode,
    stamp,
    face: Some(face),
    body: Some(RokokoBody::boxed),
    carries: Carries::Body,
    renumber: None,
    ask: None,
    answer: None,
    tool: "mocap-dump",
    dissector: Some("rokoko"),
};

/// How far into a cut datagram its telling names are looked for.
const HEAD: usize = 512;

/// Certain when it decodes; likely for an LZ4 frame that does not inflate
/// (a cut one: the magic is telling) and for JSON whose start names a
/// scene's actors. Anything else is refused at its first byte.
fn sniff(d: &[u8]) -> Option<Confidence> {
    let lz4 = d.starts_with(&LZ4_MAGIC);
    let start = d.iter().position(|b| !b.is_ascii_whitespace())?;
    if !lz4 && d.get(start) != Some(&b'{') {
        return None;
    }
    if parse(d).is_ok() {
        return Some(Confidence::Certain);
    }
    if lz4 {
        return Some(Confidence::Likely);
    }
    let head = d.get(..HEAD).unwrap_or(d);
    let has = |name: &[u8]| head.windows(name.len()).any(|w| w == name);
    (has(b"\"scene\"") && has(b"\"actors\"")).then_some(Confidence::Likely)
}

/// Every actor (a member of the frame) with its segments as bones (world
/// pose as sent) and its face as values (blendshapes 0 to 1), then the
/// props as bones; the frame's `fps` and `version` as device facts; names are the
/// actor's `name/segment` when the frame has several actors, and
/// `prop/name` for props.
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(frame) = parse(d) else {
        return Stamp::Error;
    };
    let several = frame.actors.len() > 1;
    let mut name = String::new();
    let mut named = |prefix: Option<&str>, n: &str| -> String {
        name.clear();
        if let Some(p) = prefix {
            name.push_str(p);
            name.push('/');
        }
        name.push_str(n);
        name.clone()
    };
    if let Some(fps) = frame.fps {
        view.device("fps", Fact::Number(fps));
    }
    if let Some(v) = frame.version {
        view.device("version", Fact::Number(v));
    }
    for a in &frame.actors {
        view.member(a.name.as_deref().unwrap_or("?"));
        let prefix = several.then(|| a.name.as_deref().unwrap_or("?"));
        for s in &a.body {
            view.bone(
                &named(prefix, &s.name),
                s.rotation.map(f32s),
                s.position.map(f32s),
            );
        }
        for (n, v) in &a.face {
            view.face(&named(prefix, n), f32s(*v / 100.0));
        }
    }
    for p in &frame.props {
        view.bone(
            &named(Some("prop"), &p.name),
            p.rotation.map(f32s),
            p.position.map(f32s),
        );
    }
    stamp_of(&frame)
}

fn stamp(d: &[u8]) -> Stamp {
    parse(d).map_or(Stamp::Error, |f| stamp_of(&f))
}

/// A datagram is one frame of Studio's scene on Studio's clock: one stream
/// per sender, whatever the actors (they share the frame's timestamp, so
/// an actor's own health would repeat the scene's). Without a timestamp
/// that is a time, a frame without a number.
fn stamp_of(frame: &Frame) -> Stamp {
    frame
        .timestamp
        .and_then(|t| Duration::try_from_secs_f64(t).ok())
        .map_or(Stamp::Unnumbered { ends_frame: true }, |clock| {
            Stamp::Clocked { clock, part: 0 }
        })
}

/// The first actor with a face (`hasFace`; a frame without `meta` counts
/// as having one) as the bridges read it: ARKit blendshapes from percent to
/// 0–1. Studio sends no head or eye angles in the face.
fn face(d: &[u8]) -> Option<FacePose> {
    let frame = parse(d).ok()?;
    frame
        .actors
        .iter()
        .find(|a| a.meta.has_face.unwrap_or(true) && !a.face.is_empty())
        .map(face_pose)
}

fn face_pose(a: &Actor) -> FacePose {
    let mut pose = FacePose::default();
    for (name, v) in &a.face {
        if let Some(slot) = arkit_index(name).and_then(|i| pose.blendshapes.get_mut(i)) {
            *slot = Some(f32s(*v / 100.0));
        }
    }
    pose
}

/// An `f64` from the JSON as the `f32` views and bridges carry.
#[expect(
    clippy::cast_possible_truncation,
    reason = "values for views and bridges"
)]
fn f32s(v: f64) -> f32 {
    v as f32
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::indexing_slicing,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    /// What a decode says, in order.
    #[derive(Default)]
    struct Said(Vec<String>);

    impl View for Said {
        fn bone(&mut self, name: &str, _: [f32; 4], _: [f32; 3]) {
            self.0.push(format!("bone {name}"));
        }
        fn face(&mut self, name: &str, value: f32) {
            self.0.push(format!("face {name} {value}"));
        }
        fn device(&mut self, what: &'static str, value: Fact<'_>) {
            self.0.push(format!("{what} {value:?}"));
        }
        fn member(&mut self, name: &str) {
            self.0.push(format!("member {name}"));
        }
    }

    #[test]
    fn each_actor_is_a_member_before_its_segments_and_face() {
        let frame = br#"{"version":3,"fps":60,"scene":{"timestamp":1.5,"actors":[
            {"name":"alice","body":{"hip":{"position":{"x":0,"y":1,"z":0},
              "rotation":{"x":0,"y":0,"z":0,"w":1}}},"face":{"jawOpen":50}},
            {"name":"bob","body":{"hip":{"position":{"x":1,"y":1,"z":0},
              "rotation":{"x":0,"y":0,"z":0,"w":1}}}}],
            "props":[{"name":"cam","position":{"x":0,"y":0,"z":0},
              "rotation":{"x":0,"y":0,"z":0,"w":1}}]}}"#;
        let mut said = Said::default();
        assert_eq!(
            decode(frame, &mut said),
            Stamp::Clocked {
                clock: Duration::from_millis(1500),
                part: 0
            }
        );
        assert_eq!(
            said.0,
            [
                "fps Number(60.0)",
                "version Number(3.0)",
                "member alice",
                "bone alice/hip",
                "face alice/jawOpen 0.5",
                "member bob",
                "bone bob/hip",
                "bone prop/cam",
            ]
        );
    }
}
