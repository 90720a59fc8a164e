//! One Rokoko Studio datagram read ([`parse`]): inflated when it is an LZ4
//! frame, then its JSON v3 scene, with the odd values found in it.

use std::borrow::Cow;
use std::io::Read;

use serde_json::{Map, Value};

use super::{
    Error, ErrorKind, Field, LZ4_MAGIC, MAX_ACTORS, MAX_FACE, MAX_INFLATED, MAX_PROPS,
    MAX_SEGMENTS, Result, Warning, WarningKind,
};
use crate::json::{self, NotObject};

/// One frame of Studio's scene.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Whether the datagram was an LZ4 frame.
    pub compressed: bool,
    /// `version` as sent (3 for JSON v3).
    pub version: Option<f64>,
    /// `fps`: Studio's frame rate for the stream.
    pub fps: Option<f64>,
    /// `scene.timestamp`: Studio's clock, seconds.
    pub timestamp: Option<f64>,
    /// `scene.actors`, at most [`MAX_ACTORS`].
    pub actors: Vec<Actor>,
    /// `scene.props`, at most [`MAX_PROPS`], as named poses.
    pub props: Vec<Item>,
    /// Odd values, in the order read.
    pub warnings: Vec<Warning>,
}

/// One actor (a suit, gloves, a face).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Actor {
    /// `name`: the actor's profile name in Studio.
    pub name: Option<String>,
    /// `meta`: what the actor has.
    pub meta: Meta,
    /// `body`'s segments in the order sent, at most [`MAX_SEGMENTS`].
    pub body: Vec<Item>,
    /// `face`'s blendshapes (name, percent 0 to 100) in the order sent,
    /// `faceId` left out; at most [`MAX_FACE`].
    pub face: Vec<(String, f64)>,
}

/// An actor's `meta` flags; `None` where absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meta {
    /// `hasBody`: a suit.
    pub has_body: Option<bool>,
    /// `hasFace`.
    pub has_face: Option<bool>,
    /// `hasGloves`.
    pub has_gloves: Option<bool>,
}

/// A named pose: a body segment or a prop, world position (metres) and
/// rotation `[x, y, z, w]`, in Unity's frame as Studio sends them.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// The segment's name (`leftUpperArm`) or the prop's `name`.
    pub name: String,
    /// `position`.
    pub position: [f64; 3],
    /// `rotation`.
    pub rotation: [f64; 4],
}

/// The JSON text of a datagram: the datagram itself, or what its LZ4 frame
/// inflates to (at most [`MAX_INFLATED`] bytes).
///
/// # Errors
/// [`ErrorKind::Lz4`] for a frame that does not inflate,
/// [`ErrorKind::Lz4BlockSize`] for one declaring 4 MiB blocks,
/// [`ErrorKind::Inflated`] past the bound.
pub fn inflate(datagram: &[u8]) -> Result<Cow<'_, [u8]>> {
    if !datagram.starts_with(&LZ4_MAGIC) {
        return Ok(Cow::Borrowed(datagram));
    }
    // The frame descriptor's BD byte: block size 7 is 4 MiB, for which the
    // decoder would reserve 8 MiB before reading a byte of it.
    if datagram.get(5).is_some_and(|bd| (bd >> 4) & 7 == 7) {
        return Err(Error::new(5, Field::Datagram, ErrorKind::Lz4BlockSize));
    }
    let mut out = Vec::new();
    let limit = u64::try_from(MAX_INFLATED).unwrap_or(u64::MAX) + 1;
    lz4_flex::frame::FrameDecoder::new(datagram)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|_| Error::new(0, Field::Datagram, ErrorKind::Lz4))?;
    if out.len() > MAX_INFLATED {
        return Err(Error::new(0, Field::Datagram, ErrorKind::Inflated));
    }
    Ok(Cow::Owned(out))
}

/// Reads a datagram: plain JSON text or an LZ4 frame of it, an object with
/// a `scene`. Members no one documented are ignored.
///
/// # Errors
/// Those of [`inflate`]; [`ErrorKind::Json`] at the byte where the text
/// stops being JSON (in the inflated text for an LZ4 datagram),
/// [`ErrorKind::NotAnObject`], [`ErrorKind::NoScene`],
/// [`ErrorKind::TooLong`] past a UDP datagram's size.
pub fn parse(datagram: &[u8]) -> Result<Frame> {
    if datagram.len() > crate::MAX_DATAGRAM {
        return Err(Error::new(
            0,
            Field::Datagram,
            ErrorKind::TooLong(datagram.len()),
        ));
    }
    let text = inflate(datagram)?;
    let compressed = matches!(text, Cow::Owned(_));
    let members = json::object(&text).map_err(|e| match e {
        NotObject::Json { at, kind } => Error::new(at, Field::Datagram, ErrorKind::Json(kind)),
        NotObject::Other { at } => Error::new(at, Field::Datagram, ErrorKind::NotAnObject),
    })?;
    let mut odd = Odd::new(&text);
    let Some(Value::Object(scene)) = members.get("scene") else {
        return Err(Error::new(
            odd.at(Field::Scene),
            Field::Scene,
            ErrorKind::NoScene,
        ));
    };
    let version = odd.typed(&members, Field::Version, "a number", Value::as_f64);
    let fps = odd.typed(&members, Field::Fps, "a number", Value::as_f64);
    let timestamp = odd.typed(scene, Field::Timestamp, "a number", Value::as_f64);
    if timestamp.is_some_and(|t| !(t >= 0.0 && t.is_finite())) {
        odd.warn(Field::Timestamp, WarningKind::Timestamp);
    }
    let mut actors = Vec::new();
    if let Some(listed) = odd.typed(scene, Field::Actors, "a list", Value::as_array) {
        odd.bound(Field::Actors, listed.len(), MAX_ACTORS);
        for (i, a) in listed.iter().take(MAX_ACTORS).enumerate() {
            match a {
                Value::Object(a) => actors.push(actor(a, i, &mut odd)),
                _ => odd.warn(Field::Actors, WarningKind::Actor(i)),
            }
        }
    }
    let mut props = Vec::new();
    if let Some(listed) = odd.typed(scene, Field::Props, "a list", Value::as_array) {
        odd.bound(Field::Props, listed.len(), MAX_PROPS);
        for (i, p) in listed.iter().take(MAX_PROPS).enumerate() {
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
            match item(name, p) {
                Some(p) => props.push(p),
                None => odd.warn(Field::Props, WarningKind::Pose { actor: 0, index: i }),
            }
        }
    }
    Ok(Frame {
        compressed,
        version,
        fps,
        timestamp,
        actors,
        props,
        warnings: odd.warnings,
    })
}

fn actor(members: &Map<String, Value>, i: usize, odd: &mut Odd<'_>) -> Actor {
    let name = odd.typed(members, Field::Name, "a string", Value::as_str);
    let meta = odd
        .typed(members, Field::Meta, "an object", Value::as_object)
        .map(|m| {
            let flag = |k: &str| m.get(k).and_then(Value::as_bool);
            Meta {
                has_body: flag("hasBody"),
                has_face: flag("hasFace"),
                has_gloves: flag("hasGloves"),
            }
        })
        .unwrap_or_default();
    // Studio sends `body` and `face` whatever the actor has; their values
    // mean something only when `meta` says so (zeros otherwise).
    let mut body = Vec::new();
    if let Some(segments) = odd.typed(members, Field::Body, "an object", Value::as_object) {
        odd.bound(Field::Body, segments.len(), MAX_SEGMENTS);
        for (index, (name, v)) in segments.iter().take(MAX_SEGMENTS).enumerate() {
            match item(name, v) {
                Some(s) => body.push(s),
                None => odd.warn(Field::Body, WarningKind::Pose { actor: i, index }),
            }
        }
    }
    let mut face = Vec::new();
    if let Some(values) = odd.typed(members, Field::Face, "an object", Value::as_object) {
        odd.bound(Field::Face, values.len(), MAX_FACE);
        for (index, (name, v)) in values.iter().take(MAX_FACE).enumerate() {
            if name == "faceId" || name == "parentName" {
                continue;
            }
            match v.as_f64() {
                Some(v) => face.push((name.clone(), v)),
                None => odd.warn(Field::Face, WarningKind::FaceValue { actor: i, index }),
            }
        }
    }
    Actor {
        name: name.map(str::to_owned),
        meta,
        body,
        face,
    }
}

/// `{"position":{x,y,z},"rotation":{x,y,z,w}}` named `name`.
fn item(name: &str, v: &Value) -> Option<Item> {
    let axes = |v: &Value, names: &[&str]| -> Option<Vec<f64>> {
        names
            .iter()
            .map(|n| v.get(*n).and_then(Value::as_f64))
            .collect()
    };
    let p = axes(v.get("position")?, &["x", "y", "z"])?;
    let r = axes(v.get("rotation")?, &["x", "y", "z", "w"])?;
    Some(Item {
        name: name.to_owned(),
        position: p.try_into().ok()?,
        rotation: r.try_into().ok()?,
    })
}

/// Collects a frame's warnings with their offsets: a member's offset is
/// where its quoted key first appears (the parsed value keeps no places),
/// looked up once per key, so a frame of many odd segments stays cheap.
struct Odd<'a> {
    text: &'a [u8],
    warnings: Vec<Warning>,
    offsets: [Option<usize>; 16],
}

impl<'a> Odd<'a> {
    fn new(text: &'a [u8]) -> Self {
        Self {
            text,
            warnings: Vec::new(),
            offsets: [None; 16],
        }
    }

    fn at(&mut self, field: Field) -> usize {
        let text = self.text;
        let find = || {
            let Some(key) = field.key().map(str::as_bytes) else {
                return 0;
            };
            text.windows(key.len() + 2)
                .position(|w| {
                    w.first() == Some(&b'"')
                        && w.last() == Some(&b'"')
                        && w.get(1..=key.len()) == Some(key)
                })
                .unwrap_or(0)
        };
        match self.offsets.get_mut(field as usize) {
            Some(slot) => *slot.get_or_insert_with(find),
            None => find(),
        }
    }

    fn warn(&mut self, field: Field, kind: WarningKind) {
        let at = self.at(field);
        self.warnings.push(Warning::new(at, field, kind));
    }

    /// A warning when `count` is past what is kept.
    fn bound(&mut self, field: Field, count: usize, kept: usize) {
        if count > kept {
            self.warn(field, WarningKind::TooMany(count));
        }
    }

    /// `read` of the member `field` of `members`, warning when it is absent
    /// or `read` gives nothing.
    fn typed<'m, T>(
        &mut self,
        members: &'m Map<String, Value>,
        field: Field,
        expected: &'static str,
        read: impl FnOnce(&'m Value) -> Option<T>,
    ) -> Option<T> {
        let Some(v) = field.key().and_then(|k| members.get(k)) else {
            self.warn(field, WarningKind::Missing);
            return None;
        };
        let out = read(v);
        if out.is_none() {
            self.warn(field, WarningKind::Type { expected });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonErrorKind;

    fn lz4(text: &[u8]) -> Vec<u8> {
        // 64 KiB blocks, as Studio's and python-lz4's frames have.
        let info =
            lz4_flex::frame::FrameInfo::new().block_size(lz4_flex::frame::BlockSize::Max64KB);
        let mut out = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
        std::io::Write::write_all(&mut out, text).unwrap();
        out.finish().unwrap()
    }

    const SMALL: &[u8] =
        br#"{"version":3,"fps":60,"scene":{"timestamp":1.5,"actors":[],"props":[]}}"#;

    #[test]
    fn plain_and_lz4_read_the_same() {
        let plain = parse(SMALL).unwrap();
        let packed = parse(&lz4(SMALL)).unwrap();
        assert!(!plain.compressed && packed.compressed);
        assert_eq!(
            Frame {
                compressed: false,
                ..packed
            },
            plain
        );
        assert_eq!(plain.timestamp, Some(1.5));
        assert!(plain.warnings.is_empty());
    }

    #[test]
    fn refusals_are_located() {
        let e = parse(b"{\"version\":\n  x}").unwrap_err();
        assert_eq!(
            (e.offset, e.kind),
            (14, ErrorKind::Json(JsonErrorKind::Syntax))
        );
        let e = parse(br#"{"version":3,"timestamp":1}"#).unwrap_err();
        assert_eq!((e.offset, e.kind), (0, ErrorKind::NoScene));
        let e = parse(br#"{"version":3,"scene":[]}"#).unwrap_err();
        assert_eq!((e.offset, e.kind), (13, ErrorKind::NoScene));
        assert_eq!(
            e.to_string(),
            "an object without a scene at offset 13 in `scene`"
        );
        let e = parse(b" [3]").unwrap_err();
        assert_eq!((e.offset, e.kind), (1, ErrorKind::NotAnObject));
        let packed = lz4(SMALL);
        let e = parse(&packed[..packed.len() / 2]).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Lz4);
        let mut big = packed.clone();
        big[5] |= 0x70;
        assert_eq!(parse(&big).unwrap_err().kind, ErrorKind::Lz4BlockSize);
    }

    /// Two megabytes of spaces pack into a few kilobytes: refused at the
    /// bound, without holding more than it.
    #[test]
    fn inflation_is_bounded() {
        let mut text = SMALL.to_vec();
        text.resize(2 << 20, b' ');
        let packed = lz4(&text);
        assert!(packed.len() < crate::MAX_DATAGRAM, "{}", packed.len());
        assert_eq!(parse(&packed).unwrap_err().kind, ErrorKind::Inflated);
        text.truncate(MAX_INFLATED);
        assert!(parse(&lz4(&text)).is_ok(), "exactly the bound inflates");
    }

    #[test]
    fn odd_values_are_warnings_on_a_frame_that_decodes() {
        let f = parse(
            br#"{"fps":"60","scene":{"timestamp":-1,"actors":[7,{"name":"A","meta":{"hasBody":true},
            "body":{"hip":{"position":{"x":0,"y":1,"z":0},"rotation":{"x":0,"y":0,"z":0,"w":1}},"spine":{"position":{}}},
            "face":{"faceId":"x","jawOpen":50,"mouthClose":"no"}}]}}"#,
        )
        .unwrap();
        assert_eq!(f.actors.len(), 1);
        let a = &f.actors[0];
        assert_eq!(a.meta.has_body, Some(true));
        assert_eq!(a.body.len(), 1);
        assert_eq!(a.face, [("jawOpen".to_owned(), 50.0)]);
        let kinds: Vec<_> = f.warnings.iter().map(|w| (w.field, w.kind)).collect();
        assert_eq!(
            kinds,
            [
                (Field::Version, WarningKind::Missing),
                (
                    Field::Fps,
                    WarningKind::Type {
                        expected: "a number"
                    }
                ),
                (Field::Timestamp, WarningKind::Timestamp),
                (Field::Actors, WarningKind::Actor(0)),
                (Field::Body, WarningKind::Pose { actor: 1, index: 1 }),
                (Field::Face, WarningKind::FaceValue { actor: 1, index: 2 }),
                (Field::Props, WarningKind::Missing),
            ]
        );
        assert_eq!(f.warnings[1].offset, 1, "at the key `fps`");
    }

    #[test]
    fn lists_past_their_bound_are_cut_with_a_warning() {
        let mut text = String::from(r#"{"scene":{"timestamp":0,"props":[],"actors":["#);
        for i in 0..MAX_ACTORS + 4 {
            if i > 0 {
                text.push(',');
            }
            text.push_str(r#"{"name":"a"}"#);
        }
        text.push_str("]}}");
        let f = parse(text.as_bytes()).unwrap();
        assert_eq!(f.actors.len(), MAX_ACTORS);
        assert!(
            f.warnings
                .iter()
                .any(|w| w.kind == WarningKind::TooMany(MAX_ACTORS + 4))
        );
    }
}
