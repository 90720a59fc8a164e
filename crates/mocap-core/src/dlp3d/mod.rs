//! DLP3D's stream protocol (Digital Life Project 2, `orchestrator_v4`):
//! protobuf messages over a WebSocket carrying motion, face and audio chunks
//! (Start, Bodies, End) and control messages. Pure: messages in and out, the
//! rotation conversions its server uses, resampling to its fixed 30 fps.
//! See `docs/dlp3d.md`.
//!
//! ```
//! use mocap_core::dlp3d::{self, Request};
//!
//! let request = Request { class_name: "OrchestratorV4Request".into(), frame_rate: 16_000, ..Default::default() };
//! let bytes = dlp3d::encode_request(&request);
//! assert_eq!(dlp3d::decode_request(&bytes)?, request);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod chunk;
mod live;
mod math;
mod proto;
pub mod server;

pub use chunk::{
    Decoder, Dtype, Error, ErrorKind, Event, Stream, audio_body, audio_start, end, face_body,
    face_start, failed, leave, motion_body, motion_frame_len, motion_start, normal,
    push_motion_frame, request_id,
};
pub use live::{
    Live, MAX_BLENDSHAPES, Rig, RigError, WavError, samples_before_frame, samples_for_frame,
    wav_to_pcm16k,
};
pub use math::{
    IDENTITY3, IDENTITY4, MAX_TIME, Mat3, Mat4, Pose, Resampler, blender_to_babylon, invert_affine,
    mat_to_quat, orthonormalise, parent_relative, quat_to_mat, slerp, unity_to_babylon,
};
pub use proto::{FaceTimelineStart, Request, Response, TimelineStart};

/// A response as the protobuf bytes of one WebSocket binary message.
pub fn encode_response(r: &Response) -> Vec<u8> {
    prost::Message::encode_to_vec(r)
}

/// A request as the protobuf bytes of one WebSocket binary message.
pub fn encode_request(r: &Request) -> Vec<u8> {
    prost::Message::encode_to_vec(r)
}

/// A request from one WebSocket binary message.
///
/// # Errors
/// Bytes that are not an `OrchestratorV4Request`.
pub fn decode_request(bytes: &[u8]) -> Result<Request, DecodeError> {
    <Request as prost::Message>::decode(bytes).map_err(DecodeError)
}

/// Bytes that are not a DLP3D protobuf message. What protobuf found is in
/// the message; the decoder's own error type stays out of the API.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeError(prost::DecodeError);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a DLP3D message: {}", self.0)
    }
}

/// The cause is shown by `Display`, so it is not returned again by `source()`.
impl std::error::Error for DecodeError {}

/// Appends `len` as a protobuf varint (the prefix of length-delimited framing).
pub fn encode_length(len: u64, out: &mut Vec<u8>) {
    prost::encoding::encode_varint(len, out);
}

/// Motion and face frames per second: fixed by the protocol, never sent.
pub const FPS: u32 = 30;

/// What the server announces for audio: 16 kHz, mono, 16-bit.
pub const AUDIO_RATE: u32 = 16_000;
/// Audio channels.
pub const AUDIO_CHANNELS: u32 = 1;
/// Audio bytes per sample.
pub const AUDIO_WIDTH: u32 = 2;

/// The WebSocket routes of the orchestrator (the client picks one per mode).
pub const ROUTES: [&str; 5] = [
    "/api/v4/audio_chat_with_text_llm",
    "/api/v4/audio_chat_with_audio_llm",
    "/api/v4/text_generate",
    "/api/v4/text_chat_with_text_llm",
    "/api/v4/text_chat_with_audio_llm",
];

/// Every `class_name` value.
pub mod class {
    /// Response: the request's id, first.
    pub const REQUEST_ID: &str = "RequestIDResponse";
    /// Response: the utterance was accepted.
    pub const NORMAL: &str = "NormalResponse";
    /// Response: failure, with `message`.
    pub const FAILED: &str = "FailedResponse";
    /// Response: the user is leaving.
    pub const LEAVE: &str = "LeaveResponse";
    /// Response: audio stream start.
    pub const AUDIO_START: &str = "AudioChunkStart";
    /// Response (and request, for microphone PCM): audio body.
    pub const AUDIO_BODY: &str = "AudioChunkBody";
    /// Response: audio stream end.
    pub const AUDIO_END: &str = "AudioChunkEnd";
    /// Response: motion stream start.
    pub const MOTION_START: &str = "MotionChunkStart";
    /// Response: motion body.
    pub const MOTION_BODY: &str = "MotionChunkBody";
    /// Response: motion stream end.
    pub const MOTION_END: &str = "MotionChunkEnd";
    /// Response: face stream start.
    pub const FACE_START: &str = "FaceChunkStart";
    /// Response: face body.
    pub const FACE_BODY: &str = "FaceChunkBody";
    /// Response: face stream end.
    pub const FACE_END: &str = "FaceChunkEnd";

    /// Request: start an audio chat, complete mode.
    pub const AUDIO_CHAT_COMPLETE_START: &str = "AudioChatCompleteStartRequestV4";
    /// Request: start an audio chat, express mode.
    pub const AUDIO_CHAT_EXPRESS_START: &str = "AudioChatExpressStartRequestV4";
    /// Request: text → animation.
    pub const DIRECT_GENERATION: &str = "DirectGenerationRequest";
    /// Request: text chat, complete mode.
    pub const TEXT_CHAT_COMPLETE: &str = "TextChatCompleteRequestV4";
    /// Request: text chat, express mode.
    pub const TEXT_CHAT_EXPRESS: &str = "TextChatExpressRequestV4";
    /// Request: end of microphone audio, complete mode.
    pub const AUDIO_CHAT_COMPLETE_STOP: &str = "AudioChatCompleteStopRequestV4";
    /// Request: end of microphone audio, express mode.
    pub const AUDIO_CHAT_EXPRESS_STOP: &str = "AudioChatExpressStopRequestV4";

    /// The requests that open a conversation.
    pub const START_REQUESTS: [&str; 5] = [
        AUDIO_CHAT_COMPLETE_START,
        AUDIO_CHAT_EXPRESS_START,
        DIRECT_GENERATION,
        TEXT_CHAT_COMPLETE,
        TEXT_CHAT_EXPRESS,
    ];

    /// Every response class the web client handles.
    pub const RESPONSES: [&str; 13] = [
        REQUEST_ID,
        NORMAL,
        FAILED,
        LEAVE,
        AUDIO_START,
        AUDIO_BODY,
        AUDIO_END,
        MOTION_START,
        MOTION_BODY,
        MOTION_END,
        FACE_START,
        FACE_BODY,
        FACE_END,
    ];
}
