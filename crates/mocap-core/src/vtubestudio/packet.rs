//! One VTube Studio datagram read from its JSON ([`parse`]): a request or
//! a frame of tracking data, with the odd values found in it.

use serde_json::{Map, Value};

use super::{Error, ErrorKind, Field, MAX_BLENDSHAPES, REQUEST_TYPE, Result, Warning, WarningKind};
use crate::json::{self, NotObject};

/// One datagram.
#[derive(Clone, Debug, PartialEq)]
pub enum Packet {
    /// A PC asking the phone for data.
    Request(Request),
    /// One frame of tracking data from the phone.
    Data(TrackingData),
}

/// A PC's `iOSTrackingDataRequest`. Members that are absent or not of their
/// type are `None` (or left out of `ports`), with a warning.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Seconds the phone is asked to send for (`time`).
    pub time: Option<f64>,
    /// The asking app's name (`sentBy`).
    pub sent_by: Option<String>,
    /// The ports the phone is asked to send to (`ports`), in order.
    pub ports: Vec<u16>,
    /// Odd values, in member order.
    pub warnings: Vec<Warning>,
}

/// One frame of the phone's tracking data. Members that are absent or not
/// of their type are `None`, with a warning. Numbers are as an `f64` reader
/// of the JSON text gets them.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackingData {
    /// The phone's clock when it tracked the frame, Unix milliseconds.
    pub timestamp: Option<i64>,
    /// The on-screen hotkey pressed, -1 for none.
    pub hotkey: Option<i64>,
    /// Whether the phone sees a face.
    pub face_found: Option<bool>,
    /// Head rotation `x`, `y`, `z` in degrees, as sent.
    pub rotation: Option<[f64; 3]>,
    /// Head position `x`, `y`, `z`, as sent.
    pub position: Option<[f64; 3]>,
    /// Left eye rotation `x`, `y`, `z` in degrees, as sent.
    pub eye_left: Option<[f64; 3]>,
    /// Right eye rotation, like `eye_left`.
    pub eye_right: Option<[f64; 3]>,
    /// Blendshapes as sent (`k`, `v`), at most [`MAX_BLENDSHAPES`].
    pub blendshapes: Vec<(String, f64)>,
    /// Odd values, in member order.
    pub warnings: Vec<Warning>,
}

impl Packet {
    /// The odd values found while decoding.
    pub fn warnings(&self) -> &[Warning] {
        match self {
            Self::Request(r) => &r.warnings,
            Self::Data(d) => &d.warnings,
        }
    }
}

/// The members a frame of tracking data has, by which a datagram without
/// `messageType` is known as one.
const DATA_KEYS: [Field; 8] = [
    Field::Timestamp,
    Field::Hotkey,
    Field::FaceFound,
    Field::Rotation,
    Field::Position,
    Field::BlendShapes,
    Field::EyeLeft,
    Field::EyeRight,
];

/// Reads a datagram: a request when its `messageType` is
/// `iOSTrackingDataRequest`, tracking data when it has no `messageType` and
/// at least one of the data's members. Members no one documented are
/// ignored (the app may add some).
///
/// # Errors
/// [`ErrorKind::Json`] at the byte where the text stops being JSON (or is
/// not UTF-8), [`ErrorKind::NotAnObject`], [`ErrorKind::OtherMessage`] for
/// another `messageType`, [`ErrorKind::NoTrackingData`] for an object of
/// neither shape, [`ErrorKind::TooLong`] past a UDP datagram's size.
pub fn parse(datagram: &[u8]) -> Result<Packet> {
    if datagram.len() > crate::MAX_DATAGRAM {
        return Err(Error::new(
            0,
            Field::Datagram,
            ErrorKind::TooLong(datagram.len()),
        ));
    }
    let members = json::object(datagram).map_err(|e| match e {
        NotObject::Json { at, kind } => Error::new(at, Field::Datagram, ErrorKind::Json(kind)),
        NotObject::Other { at } => Error::new(at, Field::Datagram, ErrorKind::NotAnObject),
    })?;
    let text = Text(datagram);
    if let Some(kind) = members.get("messageType") {
        if kind.as_str() != Some(REQUEST_TYPE) {
            return Err(Error::new(
                text.at(Field::MessageType),
                Field::MessageType,
                ErrorKind::OtherMessage,
            ));
        }
        return Ok(Packet::Request(request(&members, text)));
    }
    if !DATA_KEYS
        .iter()
        .any(|f| f.key().is_some_and(|k| members.contains_key(k)))
    {
        return Err(Error::new(0, Field::Datagram, ErrorKind::NoTrackingData));
    }
    Ok(Packet::Data(data(&members, text)))
}

/// The datagram's text, for the offsets of warnings: a member's offset is
/// where its quoted key first appears (the parsed value keeps no places).
#[derive(Clone, Copy)]
struct Text<'a>(&'a [u8]);

impl Text<'_> {
    fn at(self, field: Field) -> usize {
        let Some(key) = field.key() else { return 0 };
        let key = key.as_bytes();
        self.0
            .windows(key.len() + 2)
            .position(|w| {
                w.first() == Some(&b'"')
                    && w.last() == Some(&b'"')
                    && w.get(1..=key.len()) == Some(key)
            })
            .unwrap_or(0)
    }
}

/// Collects a datagram's warnings with their offsets.
struct Odd<'a> {
    text: Text<'a>,
    warnings: Vec<Warning>,
    /// Each member's offset once looked up: a list of thousands of bad
    /// ports must not search the datagram once per port.
    offsets: [Option<usize>; 16],
}

impl<'a> Odd<'a> {
    fn new(text: Text<'a>) -> Self {
        Self {
            text,
            warnings: Vec::new(),
            offsets: [None; 16],
        }
    }

    fn warn(&mut self, field: Field, kind: WarningKind) {
        let text = self.text;
        let at = match self.offsets.get_mut(field as usize) {
            Some(slot) => *slot.get_or_insert_with(|| text.at(field)),
            None => text.at(field),
        };
        self.warnings.push(Warning::new(at, field, kind));
    }

    /// The member `field`, warning when it is absent.
    fn member<'m>(&mut self, members: &'m Map<String, Value>, field: Field) -> Option<&'m Value> {
        let v = members.get(field.key()?);
        if v.is_none() {
            self.warn(field, WarningKind::Missing);
        }
        v
    }

    /// `read` of the member `field`, warning that it is not `expected` when
    /// `read` gives nothing.
    fn typed<'m, T>(
        &mut self,
        members: &'m Map<String, Value>,
        field: Field,
        expected: &'static str,
        read: impl FnOnce(&'m Value) -> Option<T>,
    ) -> Option<T> {
        let v = self.member(members, field)?;
        let out = read(v);
        if out.is_none() {
            self.warn(field, WarningKind::Type { expected });
        }
        out
    }
}

fn request(members: &Map<String, Value>, text: Text<'_>) -> Request {
    let mut odd = Odd::new(text);
    let time = odd.typed(members, Field::Time, "a number", Value::as_f64);
    if time.is_some_and(|t| !(0.5..=10.0).contains(&t)) {
        odd.warn(Field::Time, WarningKind::TimeRange);
    }
    let sent_by = odd.typed(members, Field::SentBy, "a string", Value::as_str);
    if let Some(n) = sent_by.map(|s| s.chars().count())
        && !(1..=64).contains(&n)
    {
        odd.warn(Field::SentBy, WarningKind::SentByLength(n));
    }
    let listed = odd.typed(members, Field::Ports, "a list", Value::as_array);
    let mut ports = Vec::new();
    if let Some(listed) = listed {
        if !(1..=32).contains(&listed.len()) {
            odd.warn(Field::Ports, WarningKind::PortCount(listed.len()));
        }
        let (mut count, mut first) = (0, 0);
        for (i, p) in listed.iter().enumerate() {
            match p.as_u64().and_then(|p| u16::try_from(p).ok()) {
                Some(p) if p > 0 => ports.push(p),
                _ => {
                    first = if count == 0 { i } else { first };
                    count += 1;
                }
            }
        }
        if count > 0 {
            odd.warn(Field::Ports, WarningKind::Ports { count, first });
        }
    }
    Request {
        time,
        sent_by: sent_by.map(str::to_owned),
        ports,
        warnings: odd.warnings,
    }
}

fn data(members: &Map<String, Value>, text: Text<'_>) -> TrackingData {
    let mut odd = Odd::new(text);
    let timestamp = odd.typed(members, Field::Timestamp, "an integer", Value::as_i64);
    if timestamp.is_some_and(|t| t < 0) {
        odd.warn(Field::Timestamp, WarningKind::Timestamp);
    }
    let hotkey = odd.typed(members, Field::Hotkey, "an integer", Value::as_i64);
    if let Some(h) = hotkey
        && h != -1
        && !(1..=8).contains(&h)
    {
        odd.warn(Field::Hotkey, WarningKind::Hotkey(h));
    }
    let face_found = odd.typed(members, Field::FaceFound, "a boolean", Value::as_bool);
    let mut vector = |field| odd.typed(members, field, "an object of numbers x, y, z", xyz);
    let rotation = vector(Field::Rotation);
    let position = vector(Field::Position);
    let listed = odd.typed(members, Field::BlendShapes, "a list", Value::as_array);
    let mut blendshapes = Vec::new();
    if let Some(listed) = listed {
        if listed.len() > MAX_BLENDSHAPES {
            odd.warn(
                Field::BlendShapes,
                WarningKind::TooManyBlendShapes(listed.len()),
            );
        }
        blendshapes.reserve(listed.len().min(MAX_BLENDSHAPES));
        for (i, entry) in listed.iter().take(MAX_BLENDSHAPES).enumerate() {
            let k = entry.get("k").and_then(Value::as_str);
            let v = entry.get("v").and_then(Value::as_f64);
            match (k, v) {
                (Some(k), Some(v)) => blendshapes.push((k.to_owned(), v)),
                _ => odd.warn(Field::BlendShapes, WarningKind::Entry(i)),
            }
        }
    }
    let mut vector = |field| odd.typed(members, field, "an object of numbers x, y, z", xyz);
    let eye_left = vector(Field::EyeLeft);
    let eye_right = vector(Field::EyeRight);
    TrackingData {
        timestamp,
        hotkey,
        face_found,
        rotation,
        position,
        eye_left,
        eye_right,
        blendshapes,
        warnings: odd.warnings,
    }
}

/// Unity's `Vector3` as JsonUtility writes it: `{"x": …, "y": …, "z": …}`.
fn xyz(v: &Value) -> Option<[f64; 3]> {
    let axis = |name: &str| v.get(name).and_then(Value::as_f64);
    Some([axis("x")?, axis("y")?, axis("z")?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonErrorKind;

    #[test]
    fn json_errors_are_located_in_bytes() {
        let e = parse(b"{\"Timestamp\":\n  x}").unwrap_err();
        assert_eq!(
            (e.offset, e.kind),
            (16, ErrorKind::Json(JsonErrorKind::Syntax))
        );
        let e = parse(b"{\"FaceFound\":tr").unwrap_err();
        assert_eq!(
            (e.offset, e.kind),
            (15, ErrorKind::Json(JsonErrorKind::Eof))
        );
        assert_eq!(e.to_string(), "JSON that ends early at offset 15");
        let e = parse(b"\xff").unwrap_err();
        assert_eq!(e.offset, 0);
        let e = parse(b"  [1]").unwrap_err();
        assert_eq!((e.offset, e.kind), (2, ErrorKind::NotAnObject));
        assert_eq!(e.to_string(), "JSON that is not an object at offset 2");
    }

    #[test]
    fn other_messages_and_other_objects_are_refused() {
        let e = parse(br#"{"messageType":"VTubeStudioAPIStateBroadcast","data":{}}"#).unwrap_err();
        assert_eq!((e.offset, e.kind), (1, ErrorKind::OtherMessage));
        assert_eq!(
            e.to_string(),
            "not a tracking data request at offset 1 in `messageType`"
        );
        let e = parse(br#"{"name":"x"}"#).unwrap_err();
        assert_eq!(e.kind, ErrorKind::NoTrackingData);
        let big = vec![b' '; crate::MAX_DATAGRAM + 1];
        assert_eq!(parse(&big).unwrap_err().kind, ErrorKind::TooLong(65_536));
    }

    #[test]
    fn odd_values_are_warnings_on_a_record_that_decodes() {
        let Packet::Request(r) = parse(
            br#"{"messageType":"iOSTrackingDataRequest","time":0.25,"sentBy":"","ports":[0,70000,5.5,21413]}"#,
        )
        .unwrap() else {
            panic!("not a request");
        };
        assert_eq!((r.time, r.sent_by.as_deref()), (Some(0.25), Some("")));
        assert_eq!(r.ports, [21413]);
        let kinds: Vec<_> = r.warnings.iter().map(|w| w.kind).collect();
        assert_eq!(
            kinds,
            [
                WarningKind::TimeRange,
                WarningKind::SentByLength(0),
                WarningKind::Ports { count: 3, first: 0 },
            ]
        );
        assert_eq!(
            r.warnings[0].to_string(),
            "time outside 0.5 to 10 s at offset 40 in `time`"
        );

        let Packet::Data(d) = parse(
            br#"{"FaceFound":"yes","Hotkey":9,"Rotation":{"x":1,"y":2},"BlendShapes":[{"k":"JawOpen","v":0.5},{"k":1}]}"#,
        )
        .unwrap() else {
            panic!("not data");
        };
        assert_eq!((d.face_found, d.hotkey, d.rotation), (None, Some(9), None));
        assert_eq!(d.blendshapes, [("JawOpen".to_owned(), 0.5)]);
        let kinds: Vec<_> = d.warnings.iter().map(|w| (w.field, w.kind)).collect();
        assert_eq!(
            kinds,
            [
                (Field::Timestamp, WarningKind::Missing),
                (Field::Hotkey, WarningKind::Hotkey(9)),
                (
                    Field::FaceFound,
                    WarningKind::Type {
                        expected: "a boolean"
                    }
                ),
                (
                    Field::Rotation,
                    WarningKind::Type {
                        expected: "an object of numbers x, y, z"
                    }
                ),
                (Field::Position, WarningKind::Missing),
                (Field::BlendShapes, WarningKind::Entry(1)),
                (Field::EyeLeft, WarningKind::Missing),
                (Field::EyeRight, WarningKind::Missing),
            ]
        );
    }

    /// A request of a datagram's worth of bad ports after a long unknown
    /// member: one warning for them all, at the offset of `ports` (a warning
    /// each searched the text for its key once per port: 0.1 s a datagram).
    #[test]
    fn thousands_of_bad_ports_are_cheap() {
        let mut text = String::from(r#"{"messageType":"iOSTrackingDataRequest","pad":""#);
        text.push_str(&"p".repeat(40_000));
        text.push_str(r#"","ports":["#);
        let ports_at = text.len() - 9;
        while text.len() < 65_000 {
            text.push_str("0,");
        }
        text.push_str("0]}");
        let start = std::time::Instant::now();
        let Packet::Request(r) = parse(text.as_bytes()).unwrap() else {
            panic!("not a request");
        };
        assert!(r.ports.is_empty());
        let kinds: Vec<_> = r.warnings.iter().map(|w| w.kind).collect();
        assert_eq!(
            kinds,
            [
                WarningKind::Missing,
                WarningKind::Missing,
                WarningKind::PortCount(12_472),
                WarningKind::Ports {
                    count: 12_472,
                    first: 0
                },
            ]
        );
        assert_eq!(r.warnings[3].offset, ports_at);
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn blendshapes_past_the_bound_are_left_out_with_a_warning() {
        let mut text = String::from(r#"{"BlendShapes":["#);
        for i in 0..300 {
            if i > 0 {
                text.push(',');
            }
            text.push_str(r#"{"k":"a","v":1}"#);
        }
        text.push_str("]}");
        let Packet::Data(d) = parse(text.as_bytes()).unwrap() else {
            panic!("not data");
        };
        assert_eq!(d.blendshapes.len(), MAX_BLENDSHAPES);
        assert!(
            d.warnings
                .iter()
                .any(|w| w.kind == WarningKind::TooManyBlendShapes(300))
        );
    }

    /// JSON numbers are what an `f64` reader of the text gets (Rust's own
    /// correctly rounded `parse`), digits beyond `f64` included.
    #[test]
    fn numbers_read_as_an_f64_reader_reads_them() {
        for text in [
            "0.1",
            "0.30000000000000004",
            "1.0000000000000002",
            "2.2250738585072014e-308",
            "0.123456789012345678901234567890",
            "-1e-7",
        ] {
            let json = format!(r#"{{"BlendShapes":[{{"k":"a","v":{text}}}]}}"#);
            let Packet::Data(d) = parse(json.as_bytes()).unwrap() else {
                panic!("not data");
            };
            assert_eq!(d.blendshapes[0].1, text.parse::<f64>().unwrap(), "{text}");
        }
    }
}
