//! Motion, face and audio chunks: builders for what a server sends, and a
//! checked decoder for what a client receives (class, order, dtype, whole
//! frames).

use std::fmt;

use prost::Message as _;

use super::class;
use super::proto::{FaceTimelineStart, Response, TimelineStart};

/// Scalar type of motion and face bodies, little-endian on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dtype {
    /// IEEE binary16: small, and jittery (about 3 significant digits).
    F16,
    /// IEEE binary32: what DLP3D recommends and sends by default.
    #[default]
    F32,
    /// IEEE binary64: read by the web client (narrowed to f32), never sent by us.
    F64,
}

impl Dtype {
    /// The numpy name written in `dtype`.
    pub fn name(self) -> &'static str {
        match self {
            Self::F16 => "float16",
            Self::F32 => "float32",
            Self::F64 => "float64",
        }
    }

    /// Reads a numpy dtype name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "float16" => Some(Self::F16),
            "float32" => Some(Self::F32),
            "float64" => Some(Self::F64),
            _ => None,
        }
    }

    /// Bytes per scalar.
    pub fn width(self) -> usize {
        match self {
            Self::F16 => 2,
            Self::F32 => 4,
            Self::F64 => 8,
        }
    }

    /// Appends `values` in this dtype, little-endian. float16 rounds to
    /// nearest, ties to even.
    pub fn encode(self, values: &[f32], out: &mut Vec<u8>) {
        out.reserve(values.len() * self.width());
        for v in values {
            match self {
                Self::F16 => out.extend_from_slice(&half::f16::from_f32(*v).to_le_bytes()),
                Self::F32 => out.extend_from_slice(&v.to_le_bytes()),
                Self::F64 => out.extend_from_slice(&f64::from(*v).to_le_bytes()),
            }
        }
    }

    /// The scalars of `bytes`; a trailing partial scalar is ignored (the
    /// decoder refuses such bodies before getting here).
    pub fn decode(self, bytes: &[u8]) -> Vec<f32> {
        match self {
            Self::F16 => bytes
                .chunks_exact(2)
                .filter_map(|c| c.try_into().ok())
                .map(|c| half::f16::from_le_bytes(c).to_f32())
                .collect(),
            Self::F32 => bytes
                .chunks_exact(4)
                .filter_map(|c| c.try_into().ok())
                .map(f32::from_le_bytes)
                .collect(),
            Self::F64 => bytes
                .chunks_exact(8)
                .filter_map(|c| c.try_into().ok())
                .map(|c| f64::from_le_bytes(c) as f32)
                .collect(),
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Scalars per motion frame for `joints` joints: a row-major 3×3 per joint,
/// the root translation, three metadata scalars.
pub fn motion_frame_len(joints: usize) -> usize {
    9 * joints + 6
}

/// Appends one motion frame's scalars to `out`.
pub fn push_motion_frame(
    rotations: &[[f32; 9]],
    root: [f32; 3],
    meta: [f32; 3],
    out: &mut Vec<f32>,
) {
    for r in rotations {
        out.extend_from_slice(r);
    }
    out.extend_from_slice(&root);
    out.extend_from_slice(&meta);
}

fn control(class_name: &str) -> Response {
    Response {
        class_name: class_name.to_owned(),
        ..Response::default()
    }
}

/// `RequestIDResponse`.
pub fn request_id(id: &str) -> Response {
    Response {
        request_id: id.to_owned(),
        ..control(class::REQUEST_ID)
    }
}

/// `NormalResponse`.
pub fn normal() -> Response {
    control(class::NORMAL)
}

/// `FailedResponse` with its reason.
pub fn failed(message: &str) -> Response {
    Response {
        message: message.to_owned(),
        ..control(class::FAILED)
    }
}

/// `LeaveResponse`.
pub fn leave() -> Response {
    control(class::LEAVE)
}

/// `MotionChunkStart`. `timeline` `None` is written as the explicit "none".
pub fn motion_start(
    joints: &[String],
    restpose: &str,
    dtype: Dtype,
    timeline: Option<i32>,
) -> Response {
    Response {
        dtype: dtype.name().to_owned(),
        motion_joint_names: joints.to_vec(),
        motion_restpose_name: restpose.to_owned(),
        motion_timeline_start_idx: Some(
            timeline.map_or(TimelineStart::IsNone(true), TimelineStart::Value),
        ),
        ..control(class::MOTION_START)
    }
}

/// `FaceChunkStart`.
pub fn face_start(names: &[String], dtype: Dtype, timeline: Option<i32>) -> Response {
    Response {
        dtype: dtype.name().to_owned(),
        face_blendshape_names: names.to_vec(),
        face_timeline_start_idx: Some(
            timeline.map_or(FaceTimelineStart::IsNone(true), FaceTimelineStart::Value),
        ),
        ..control(class::FACE_START)
    }
}

/// `AudioChunkStart`.
pub fn audio_start(rate: i32, channels: i32, width: i32) -> Response {
    Response {
        audio_frame_rate: rate,
        audio_n_channels: channels,
        audio_sample_width: width,
        ..control(class::AUDIO_START)
    }
}

fn body(class_name: &str, data: Vec<u8>) -> Response {
    Response {
        data,
        ..control(class_name)
    }
}

/// `MotionChunkBody` holding `scalars` (whole frames) in `dtype`.
pub fn motion_body(dtype: Dtype, scalars: &[f32]) -> Response {
    let mut data = Vec::new();
    dtype.encode(scalars, &mut data);
    body(class::MOTION_BODY, data)
}

/// `FaceChunkBody` holding `weights` (whole frames) in `dtype`.
pub fn face_body(dtype: Dtype, weights: &[f32]) -> Response {
    let mut data = Vec::new();
    dtype.encode(weights, &mut data);
    body(class::FACE_BODY, data)
}

/// `AudioChunkBody` holding interleaved PCM.
pub fn audio_body(pcm: Vec<u8>) -> Response {
    body(class::AUDIO_BODY, pcm)
}

/// `MotionChunkEnd`, `FaceChunkEnd` or `AudioChunkEnd`.
pub fn end(stream: Stream) -> Response {
    control(match stream {
        Stream::Motion => class::MOTION_END,
        Stream::Face => class::FACE_END,
        Stream::Audio => class::AUDIO_END,
    })
}

/// One of the three chunked streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stream {
    /// Joint rotations and root translation.
    Motion,
    /// Blendshape weights.
    Face,
    /// PCM audio.
    Audio,
}

impl Stream {
    /// Lower-case name for records.
    pub fn name(self) -> &'static str {
        match self {
            Self::Motion => "motion",
            Self::Face => "face",
            Self::Audio => "audio",
        }
    }
}

/// A decoded response, checked against what came before it.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `RequestIDResponse`.
    RequestId(String),
    /// `NormalResponse`.
    Normal,
    /// `FailedResponse`.
    Failed(String),
    /// `LeaveResponse`.
    Leave,
    /// `MotionChunkStart`.
    MotionStart {
        /// Joint names (J = their count).
        joints: Vec<String>,
        /// Rest pose id.
        restpose: String,
        /// Scalar type.
        dtype: Dtype,
        /// Frame offset against the audio.
        timeline: Option<i32>,
    },
    /// `FaceChunkStart`.
    FaceStart {
        /// Blendshape names (B = their count).
        names: Vec<String>,
        /// Scalar type.
        dtype: Dtype,
        /// Frame offset against the audio.
        timeline: Option<i32>,
    },
    /// `AudioChunkStart`.
    AudioStart {
        /// Sample rate, Hz.
        rate: u32,
        /// Channels.
        channels: u32,
        /// Bytes per sample.
        width: u32,
    },
    /// A motion or face body: whole frames of `scalars.len() / frames` each.
    Body {
        /// Motion or face.
        stream: Stream,
        /// Frames in the body.
        frames: usize,
        /// Every scalar, widened to f32.
        scalars: Vec<f32>,
    },
    /// An audio body.
    AudioBody {
        /// PCM bytes.
        bytes: usize,
        /// Its duration, seconds.
        seconds: f64,
    },
    /// A stream's End.
    End(Stream),
}

impl Event {
    /// The record `type` for JSON Lines.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::RequestId(_) => "dlp3d.request_id",
            Self::Normal => "dlp3d.normal",
            Self::Failed(_) => "dlp3d.failed",
            Self::Leave => "dlp3d.leave",
            Self::MotionStart { .. } => "dlp3d.motion_start",
            Self::FaceStart { .. } => "dlp3d.face_start",
            Self::AudioStart { .. } => "dlp3d.audio_start",
            Self::Body {
                stream: Stream::Motion,
                ..
            } => "dlp3d.motion_body",
            Self::Body { .. } => "dlp3d.face_body",
            Self::AudioBody { .. } => "dlp3d.audio_body",
            Self::End(Stream::Motion) => "dlp3d.motion_end",
            Self::End(Stream::Face) => "dlp3d.face_end",
            Self::End(Stream::Audio) => "dlp3d.audio_end",
        }
    }
}

/// Why a response was refused: what, in which message (its `class_name`)
/// and which stream.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Error {
    /// What is wrong.
    pub kind: ErrorKind,
    /// The message's `class_name` as it came (empty when it is not protobuf).
    pub class_name: String,
    /// The stream the message belongs to, where its class names one.
    pub stream: Option<Stream>,
}

/// The reasons a response is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Not a protobuf `OrchestratorV4Response`.
    NotProtobuf(super::DecodeError),
    /// A `class_name` the client does not know.
    UnknownClass,
    /// A dtype other than float16/32/64.
    UnknownDtype(String),
    /// A body or End before its Start.
    BeforeStart,
    /// A second Start, or anything after the End.
    OutOfOrder,
    /// A body that does not hold whole frames.
    PartialFrame {
        /// Body length in bytes.
        len: usize,
        /// Bytes per frame.
        frame_bytes: usize,
    },
    /// An audio start with a zero or negative rate, channel count or width.
    BadAudioFormat,
}

impl Error {
    fn new(kind: ErrorKind, class_name: &str, stream: Option<Stream>) -> Self {
        Self {
            kind,
            class_name: class_name.to_owned(),
            stream,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let stream = self.stream.map_or("a", Stream::name);
        match &self.kind {
            ErrorKind::NotProtobuf(e) => write!(f, "not an OrchestratorV4Response: {}", e.0),
            ErrorKind::UnknownClass => write!(f, "unknown class_name {:?}", self.class_name),
            ErrorKind::UnknownDtype(d) => {
                write!(f, "unknown dtype {d:?} (float16, float32 or float64)")
            }
            ErrorKind::BeforeStart => write!(f, "{stream} chunk before its start"),
            ErrorKind::OutOfOrder => {
                write!(f, "{} out of order in the {stream} stream", self.class_name)
            }
            ErrorKind::PartialFrame { len, frame_bytes } => write!(
                f,
                "{stream} body of {len} bytes is not whole frames of {frame_bytes} bytes"
            ),
            ErrorKind::BadAudioFormat => {
                f.write_str("audio start with a zero or negative rate, channel count or width")
            }
        }
    }
}

impl std::error::Error for Error {}

#[derive(Clone, Debug, Default, PartialEq)]
enum State {
    #[default]
    Idle,
    Open {
        /// Motion and face; audio bodies are raw PCM.
        dtype: Option<Dtype>,
        /// Bytes per frame (audio: one sample on every channel).
        frame_bytes: usize,
        /// Frames per second.
        rate: u32,
    },
    Ended,
}

/// Checks a response stream the way the web client reads it: every body
/// after its Start, whole frames only, nothing after End.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    /// Frames per second of motion and face bodies.
    fps: u32,
    motion: State,
    face: State,
    audio: State,
}

impl Decoder {
    /// A decoder before any Start.
    pub fn new() -> Self {
        Self {
            fps: super::FPS,
            ..Self::default()
        }
    }

    /// Whether all three streams have ended.
    pub fn finished(&self) -> bool {
        [&self.motion, &self.face, &self.audio]
            .iter()
            .all(|s| **s == State::Ended)
    }

    fn state(&mut self, s: Stream) -> &mut State {
        match s {
            Stream::Motion => &mut self.motion,
            Stream::Face => &mut self.face,
            Stream::Audio => &mut self.audio,
        }
    }

    /// Decodes one WebSocket message. A refused message leaves the state as
    /// it was.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn decode(&mut self, bytes: &[u8]) -> Result<Event, Error> {
        let r = Response::decode(bytes)
            .map_err(|e| Error::new(ErrorKind::NotProtobuf(super::DecodeError(e)), "", None))?;
        self.response(r)
    }

    /// Checks one decoded response.
    ///
    /// # Errors
    /// See [`Error`].
    pub fn response(&mut self, r: Response) -> Result<Event, Error> {
        match r.class_name.as_str() {
            class::REQUEST_ID => Ok(Event::RequestId(r.request_id)),
            class::NORMAL => Ok(Event::Normal),
            class::FAILED => Ok(Event::Failed(r.message)),
            class::LEAVE => Ok(Event::Leave),
            class::MOTION_START => self.open_motion(r),
            class::FACE_START => self.open_face(r),
            class::AUDIO_START => self.open_audio(&r),
            class::MOTION_BODY => self.body(Stream::Motion, &r),
            class::FACE_BODY => self.body(Stream::Face, &r),
            class::AUDIO_BODY => self.body(Stream::Audio, &r),
            class::MOTION_END => self.close(Stream::Motion, &r.class_name),
            class::FACE_END => self.close(Stream::Face, &r.class_name),
            class::AUDIO_END => self.close(Stream::Audio, &r.class_name),
            other => Err(Error::new(ErrorKind::UnknownClass, other, None)),
        }
    }

    /// Opens stream `s` as `open`: only a stream not started yet starts.
    fn start(&mut self, s: Stream, open: State, class_name: &str) -> Result<(), Error> {
        let state = self.state(s);
        if *state != State::Idle {
            return Err(Error::new(ErrorKind::OutOfOrder, class_name, Some(s)));
        }
        *state = open;
        Ok(())
    }

    /// A motion or face stream of `d` scalars, `frame_bytes` a frame.
    fn scalars(&self, d: Dtype, frame_bytes: usize) -> State {
        State::Open {
            dtype: Some(d),
            frame_bytes,
            rate: self.fps,
        }
    }

    /// MotionChunkStart: a frame is the joints' rotations and the root.
    fn open_motion(&mut self, r: Response) -> Result<Event, Error> {
        let d = dtype(&r, Stream::Motion)?;
        let frame_bytes = motion_frame_len(r.motion_joint_names.len()) * d.width();
        self.start(Stream::Motion, self.scalars(d, frame_bytes), &r.class_name)?;
        Ok(Event::MotionStart {
            joints: r.motion_joint_names,
            restpose: r.motion_restpose_name,
            dtype: d,
            timeline: match r.motion_timeline_start_idx {
                Some(TimelineStart::Value(v)) => Some(v),
                _ => None,
            },
        })
    }

    /// FaceChunkStart: a frame is one weight per blendshape.
    fn open_face(&mut self, r: Response) -> Result<Event, Error> {
        let d = dtype(&r, Stream::Face)?;
        let frame_bytes = r.face_blendshape_names.len() * d.width();
        self.start(Stream::Face, self.scalars(d, frame_bytes), &r.class_name)?;
        Ok(Event::FaceStart {
            names: r.face_blendshape_names,
            dtype: d,
            timeline: match r.face_timeline_start_idx {
                Some(FaceTimelineStart::Value(v)) => Some(v),
                _ => None,
            },
        })
    }

    /// AudioChunkStart: a frame is one sample on every channel, at a
    /// positive rate.
    fn open_audio(&mut self, r: &Response) -> Result<Event, Error> {
        let bad_audio = || {
            Error::new(
                ErrorKind::BadAudioFormat,
                class::AUDIO_START,
                Some(Stream::Audio),
            )
        };
        let (Ok(rate), Ok(channels), Ok(width)) = (
            u32::try_from(r.audio_frame_rate),
            u32::try_from(r.audio_n_channels),
            u32::try_from(r.audio_sample_width),
        ) else {
            return Err(bad_audio());
        };
        if rate == 0 || channels == 0 || width == 0 {
            return Err(bad_audio());
        }
        let frame_bytes =
            usize::try_from(u64::from(channels) * u64::from(width)).map_err(|_| bad_audio())?;
        let open = State::Open {
            dtype: None,
            frame_bytes,
            rate,
        };
        self.start(Stream::Audio, open, &r.class_name)?;
        Ok(Event::AudioStart {
            rate,
            channels,
            width,
        })
    }

    /// A body of stream `s`: after its start, before its end, whole frames.
    fn body(&mut self, s: Stream, r: &Response) -> Result<Event, Error> {
        let (d, frame_bytes, rate) = match self.state(s) {
            State::Open {
                dtype,
                frame_bytes,
                rate,
            } => (*dtype, *frame_bytes, *rate),
            State::Idle => {
                return Err(Error::new(ErrorKind::BeforeStart, &r.class_name, Some(s)));
            }
            State::Ended => {
                return Err(Error::new(ErrorKind::OutOfOrder, &r.class_name, Some(s)));
            }
        };
        let len = r.data.len();
        if frame_bytes == 0 && len > 0 || frame_bytes > 0 && !len.is_multiple_of(frame_bytes) {
            return Err(Error::new(
                ErrorKind::PartialFrame { len, frame_bytes },
                &r.class_name,
                Some(s),
            ));
        }
        let frames = len.checked_div(frame_bytes).unwrap_or(0);
        Ok(match d {
            None => Event::AudioBody {
                bytes: len,
                seconds: frames as f64 / f64::from(rate.max(1)),
            },
            Some(d) => Event::Body {
                stream: s,
                frames,
                scalars: d.decode(&r.data),
            },
        })
    }

    /// The end of stream `s`: only an open stream ends.
    fn close(&mut self, s: Stream, class_name: &str) -> Result<Event, Error> {
        let state = self.state(s);
        match state {
            State::Open { .. } => {
                *state = State::Ended;
                Ok(Event::End(s))
            }
            State::Idle => Err(Error::new(ErrorKind::BeforeStart, class_name, Some(s))),
            State::Ended => Err(Error::new(ErrorKind::OutOfOrder, class_name, Some(s))),
        }
    }
}

/// The scalar type a motion or face start names.
fn dtype(r: &Response, stream: Stream) -> Result<Dtype, Error> {
    Dtype::parse(&r.dtype).ok_or_else(|| {
        Error::new(
            ErrorKind::UnknownDtype(r.dtype.clone()),
            &r.class_name,
            Some(stream),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::super::proto::Request;
    use super::*;
    use mocap_testutil::Rng;

    fn names(n: usize, prefix: &str) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    fn wire(r: &Response) -> Vec<u8> {
        r.encode_to_vec()
    }

    #[test]
    fn every_class_round_trips_through_the_decoder() {
        let joints = names(3, "j");
        let shapes = names(2, "b");
        let mut d = Decoder::new();
        let mut frame = Vec::new();
        push_motion_frame(
            &[[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]; 3],
            [1.0, 2.0, 3.0],
            [0.0; 3],
            &mut frame,
        );
        let two_frames = [frame.clone(), frame].concat();
        let cases: Vec<(Response, Event)> = vec![
            (request_id("r-1"), Event::RequestId("r-1".into())),
            (normal(), Event::Normal),
            (failed("boom"), Event::Failed("boom".into())),
            (leave(), Event::Leave),
            (
                motion_start(&joints, "rest", Dtype::F32, Some(4)),
                Event::MotionStart {
                    joints: joints.clone(),
                    restpose: "rest".into(),
                    dtype: Dtype::F32,
                    timeline: Some(4),
                },
            ),
            (
                face_start(&shapes, Dtype::F16, None),
                Event::FaceStart {
                    names: shapes.clone(),
                    dtype: Dtype::F16,
                    timeline: None,
                },
            ),
            (
                audio_start(16_000, 1, 2),
                Event::AudioStart {
                    rate: 16_000,
                    channels: 1,
                    width: 2,
                },
            ),
            (
                motion_body(Dtype::F32, &two_frames),
                Event::Body {
                    stream: Stream::Motion,
                    frames: 2,
                    scalars: two_frames.clone(),
                },
            ),
            (
                face_body(Dtype::F16, &[0.25, 0.5, 1.0, 0.0]),
                Event::Body {
                    stream: Stream::Face,
                    frames: 2,
                    scalars: vec![0.25, 0.5, 1.0, 0.0],
                },
            ),
            (
                audio_body(vec![0; 3200]),
                Event::AudioBody {
                    bytes: 3200,
                    seconds: 0.1,
                },
            ),
            (end(Stream::Motion), Event::End(Stream::Motion)),
            (end(Stream::Face), Event::End(Stream::Face)),
            (end(Stream::Audio), Event::End(Stream::Audio)),
        ];
        let mut classes: Vec<String> = Vec::new();
        for (r, want) in cases {
            classes.push(r.class_name.clone());
            let bytes = wire(&r);
            assert_eq!(Response::decode(bytes.as_slice()).unwrap(), r);
            let got = d.decode(&bytes).unwrap();
            assert_eq!(got, want, "{}", r.class_name);
        }
        assert!(d.finished());
        classes.sort();
        let mut all = class::RESPONSES.map(str::to_owned).to_vec();
        all.sort();
        assert_eq!(classes, all, "every response class is covered");
    }

    #[test]
    fn requests_round_trip_with_every_field() {
        let r = Request {
            class_name: class::DIRECT_GENERATION.into(),
            asr_adapter: "a".into(),
            n_channels: 1,
            sample_width: 2,
            frame_rate: 16_000,
            classification_adapter: "c".into(),
            conversation_adapter: "l".into(),
            agent_name: "ag".into(),
            reaction_adapter: "re".into(),
            tts_adapter: "t".into(),
            voice_name: "v".into(),
            voice_speed: 1.25,
            face_model: "f".into(),
            avatar: "av".into(),
            user_id: "u".into(),
            max_front_extension_duration: 0.5,
            max_rear_extension_duration: 1.5,
            first_body_fast_response: true,
            speech_text: "こんにちは".into(),
            data: vec![1, 2, 3],
            app_name: "babylon".into(),
            language: "ja".into(),
            character_id: "c-1".into(),
        };
        let bytes = r.encode_to_vec();
        assert_eq!(Request::decode(bytes.as_slice()).unwrap(), r);
        // Field 19 (speech_text) is tag (19 << 3) | 2 = 0x9a 0x01 on the wire.
        assert!(bytes.windows(2).any(|w| w == [0x9a, 0x01]));
    }

    #[test]
    fn float16_stays_within_half_an_ulp() {
        let mut rng = Rng(0xf16);
        for _ in 0..10_000 {
            let v = (rng.next() as f64 / u64::MAX as f64 * 2.0 - 1.0) as f32;
            let mut b = Vec::new();
            Dtype::F16.encode(&[v], &mut b);
            let back = Dtype::F16.decode(&b)[0];
            // binary16 has 11 significant bits: relative error ≤ 2^-11 for
            // normal values, absolute ≤ 2^-25 below 2^-14.
            let bound = (v.abs() * 2f32.powi(-11)).max(2f32.powi(-25));
            assert!((back - v).abs() <= bound, "{v} → {back}");
        }
        let mut b = Vec::new();
        Dtype::F16.encode(&[1.0, -2.0, 65504.0], &mut b);
        assert_eq!(b, [0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b]);
    }

    #[test]
    fn bad_streams_are_refused_with_a_reason_and_the_state_kept() {
        let kind = |r: Result<Event, Error>| r.map(|_| ()).map_err(|e| e.kind);
        let mut d = Decoder::new();
        let e = d
            .decode(&wire(&motion_body(Dtype::F32, &[0.0; 15])))
            .unwrap_err();
        assert_eq!(
            (e.kind, e.class_name.as_str(), e.stream),
            (
                ErrorKind::BeforeStart,
                "MotionChunkBody",
                Some(Stream::Motion)
            )
        );
        let e = d.decode(&wire(&end(Stream::Face))).unwrap_err();
        assert_eq!(
            (e.kind.clone(), e.stream),
            (ErrorKind::BeforeStart, Some(Stream::Face))
        );
        assert_eq!(e.to_string(), "face chunk before its start");
        let mut bad = motion_start(&names(1, "j"), "", Dtype::F32, None);
        bad.dtype = "int8".into();
        let e = d.decode(&wire(&bad)).unwrap_err();
        assert_eq!(
            (e.kind.clone(), e.stream),
            (ErrorKind::UnknownDtype("int8".into()), Some(Stream::Motion))
        );
        assert_eq!(
            e.to_string(),
            "unknown dtype \"int8\" (float16, float32 or float64)"
        );
        d.decode(&wire(&motion_start(&names(1, "j"), "", Dtype::F32, None)))
            .unwrap();
        // One joint: 15 scalars, 60 bytes per frame; 16 scalars is not whole.
        let e = d
            .decode(&wire(&motion_body(Dtype::F32, &[0.0; 16])))
            .unwrap_err();
        assert_eq!(
            (e.kind.clone(), e.stream),
            (
                ErrorKind::PartialFrame {
                    len: 64,
                    frame_bytes: 60
                },
                Some(Stream::Motion)
            )
        );
        assert_eq!(
            e.to_string(),
            "motion body of 64 bytes is not whole frames of 60 bytes"
        );
        assert!(
            d.decode(&wire(&motion_body(Dtype::F32, &[0.0; 30])))
                .is_ok()
        );
        let e = d
            .decode(&wire(&motion_start(&names(1, "j"), "", Dtype::F32, None)))
            .unwrap_err();
        assert_eq!(
            (e.kind, e.class_name.as_str()),
            (ErrorKind::OutOfOrder, "MotionChunkStart")
        );
        d.decode(&wire(&end(Stream::Motion))).unwrap();
        assert_eq!(
            kind(d.decode(&wire(&motion_body(Dtype::F32, &[0.0; 15])))),
            Err(ErrorKind::OutOfOrder)
        );
        let e = d
            .decode(&wire(&Response {
                class_name: "Hello".into(),
                ..Response::default()
            }))
            .unwrap_err();
        assert_eq!(
            (e.kind, e.class_name.as_str()),
            (ErrorKind::UnknownClass, "Hello")
        );
        assert!(matches!(
            kind(d.decode(&[0xff, 0xff])),
            Err(ErrorKind::NotProtobuf(_))
        ));
        assert_eq!(
            kind(d.decode(&wire(&audio_start(0, 1, 2)))),
            Err(ErrorKind::BadAudioFormat)
        );
        d.decode(&wire(&audio_start(16_000, 2, 2))).unwrap();
        assert!(matches!(
            kind(d.decode(&wire(&audio_body(vec![0; 6])))),
            Err(ErrorKind::PartialFrame { frame_bytes: 4, .. })
        ));
    }

    #[test]
    fn decoder_survives_every_mutation() {
        let mut msgs: Vec<Vec<u8>> = vec![
            wire(&motion_start(&names(2, "j"), "r", Dtype::F16, Some(1))),
            wire(&face_start(&names(3, "b"), Dtype::F32, None)),
            wire(&audio_start(16_000, 1, 2)),
            wire(&motion_body(Dtype::F16, &[0.5; 48])),
            wire(&face_body(Dtype::F32, &[0.5; 6])),
            wire(&audio_body(vec![7; 64])),
            wire(&request_id("id")),
        ];
        for m in msgs.clone() {
            for i in 0..m.len() {
                msgs.push(m[..i].to_vec());
                let mut f = m.clone();
                f[i] ^= 0x55;
                msgs.push(f);
            }
        }
        let mut rng = Rng(0xd1b3d);
        for _ in 0..50_000 {
            let base = &msgs[rng.below(7)];
            let mut m = base.clone();
            for _ in 0..=rng.below(4) {
                if m.is_empty() {
                    break;
                }
                let i = rng.below(m.len());
                m[i] = rng.next() as u8;
            }
            msgs.push(m);
        }
        let mut d = Decoder::new();
        for m in &msgs {
            // Any result, never a panic; whole frames whenever accepted.
            if let Ok(Event::Body {
                frames, scalars, ..
            }) = d.decode(m)
            {
                assert!(frames == 0 || scalars.len() % frames == 0);
            }
        }
    }
}
