//! The two wire messages of DLP3D's `orchestrator_v4` package, declared from
//! its field table (numbers, types, the two oneofs). One flat message per
//! direction; `class_name` says which fields matter.

/// Browser → server.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Request {
    /// Request kind, one of [`super::class`]'s request names.
    #[prost(string, tag = "1")]
    pub class_name: String,
    /// Speech-recognition backend key.
    #[prost(string, tag = "2")]
    pub asr_adapter: String,
    /// PCM channels of uploaded microphone audio.
    #[prost(int32, tag = "3")]
    pub n_channels: i32,
    /// PCM bytes per sample of uploaded audio.
    #[prost(int32, tag = "4")]
    pub sample_width: i32,
    /// PCM sample rate of uploaded audio, Hz.
    #[prost(int32, tag = "5")]
    pub frame_rate: i32,
    /// Classification backend key.
    #[prost(string, tag = "6")]
    pub classification_adapter: String,
    /// LLM backend key.
    #[prost(string, tag = "7")]
    pub conversation_adapter: String,
    /// Agent name.
    #[prost(string, tag = "8")]
    pub agent_name: String,
    /// Reaction backend key.
    #[prost(string, tag = "9")]
    pub reaction_adapter: String,
    /// Text-to-speech backend key.
    #[prost(string, tag = "10")]
    pub tts_adapter: String,
    /// Voice.
    #[prost(string, tag = "11")]
    pub voice_name: String,
    /// Voice speed.
    #[prost(float, tag = "12")]
    pub voice_speed: f32,
    /// audio2face model.
    #[prost(string, tag = "13")]
    pub face_model: String,
    /// Motion avatar id.
    #[prost(string, tag = "14")]
    pub avatar: String,
    /// User id.
    #[prost(string, tag = "15")]
    pub user_id: String,
    /// Seconds motion may start before the audio.
    #[prost(float, tag = "16")]
    pub max_front_extension_duration: f32,
    /// Seconds motion may run past the audio.
    #[prost(float, tag = "17")]
    pub max_rear_extension_duration: f32,
    /// Ask for a fast first body.
    #[prost(bool, tag = "18")]
    pub first_body_fast_response: bool,
    /// Text input.
    #[prost(string, tag = "19")]
    pub speech_text: String,
    /// PCM payload of an `AudioChunkBody` request.
    #[prost(bytes = "vec", tag = "20")]
    pub data: Vec<u8>,
    /// `babylon` or `python_backend`.
    #[prost(string, tag = "21")]
    pub app_name: String,
    /// Language.
    #[prost(string, tag = "22")]
    pub language: String,
    /// Character id.
    #[prost(string, tag = "23")]
    pub character_id: String,
}

/// Server → browser.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    /// Response kind, one of [`super::class`]'s response names.
    #[prost(string, tag = "1")]
    pub class_name: String,
    /// `RequestIDResponse`: the request's id.
    #[prost(string, tag = "2")]
    pub request_id: String,
    /// Motion/face start: numpy dtype name (`float16`, `float32`; clients also read `float64`).
    #[prost(string, tag = "3")]
    pub dtype: String,
    /// `FailedResponse`: the error text.
    #[prost(string, tag = "4")]
    pub message: String,
    /// `MotionChunkStart`: the joints, in body order.
    #[prost(string, repeated, tag = "5")]
    pub motion_joint_names: Vec<String>,
    /// `MotionChunkStart`: the rest pose the joints refer to.
    #[prost(string, tag = "6")]
    pub motion_restpose_name: String,
    /// `MotionChunkStart`: frame offset against the audio, or explicitly none.
    #[prost(oneof = "TimelineStart", tags = "7, 8")]
    pub motion_timeline_start_idx: Option<TimelineStart>,
    /// `FaceChunkStart`: the blendshapes, in body order.
    #[prost(string, repeated, tag = "9")]
    pub face_blendshape_names: Vec<String>,
    /// `AudioChunkStart`: channels.
    #[prost(int32, tag = "10")]
    pub audio_n_channels: i32,
    /// `AudioChunkStart`: bytes per sample.
    #[prost(int32, tag = "11")]
    pub audio_sample_width: i32,
    /// `AudioChunkStart`: sample rate, Hz.
    #[prost(int32, tag = "12")]
    pub audio_frame_rate: i32,
    /// Chunk bodies: PCM, or packed motion/face scalars.
    #[prost(bytes = "vec", tag = "13")]
    pub data: Vec<u8>,
    /// `FaceChunkStart`: frame offset against the audio, or explicitly none.
    #[prost(oneof = "FaceTimelineStart", tags = "14, 15")]
    pub face_timeline_start_idx: Option<FaceTimelineStart>,
}

/// The `motion_timeline_start_idx` oneof: a nullable int in proto3 clothing.
#[derive(Clone, Copy, PartialEq, Eq, prost::Oneof)]
pub enum TimelineStart {
    /// Frames between the first motion frame and the first audio frame.
    #[prost(int32, tag = "7")]
    Value(i32),
    /// Explicitly no offset.
    #[prost(bool, tag = "8")]
    IsNone(bool),
}

/// The `face_timeline_start_idx` oneof.
#[derive(Clone, Copy, PartialEq, Eq, prost::Oneof)]
pub enum FaceTimelineStart {
    /// Frames between the first face frame and the first audio frame.
    #[prost(int32, tag = "14")]
    Value(i32),
    /// Explicitly no offset.
    #[prost(bool, tag = "15")]
    IsNone(bool),
}
