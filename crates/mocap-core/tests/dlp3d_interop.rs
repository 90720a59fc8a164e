//! DLP3D messages against an independent protobuf implementation:
//! protobufjs, reading `orchestrator_v4.proto` (written from the field table),
//! decodes what prost encodes and encodes what prost then decodes.
//! Needs `npm ci --prefix scripts/js` (done by `.ci/run`); fails without it.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is how a test reports"
)]

use std::path::Path;
use std::process::Command;

use mocap_core::dlp3d::{self, Dtype, Request, Response, Stream, class};
use prost::Message as _;
use serde_json::{Map, Value, json};

fn put(m: &mut Map<String, Value>, k: &str, v: Value) {
    let default = match &v {
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    if !default {
        m.insert(k.into(), v);
    }
}

fn response_json(r: &Response) -> Value {
    let mut m = Map::new();
    put(&mut m, "class_name", json!(r.class_name));
    put(&mut m, "request_id", json!(r.request_id));
    put(&mut m, "dtype", json!(r.dtype));
    put(&mut m, "message", json!(r.message));
    put(&mut m, "motion_joint_names", json!(r.motion_joint_names));
    put(
        &mut m,
        "motion_restpose_name",
        json!(r.motion_restpose_name),
    );
    // A oneof member is on the wire even at its default value.
    match r.motion_timeline_start_idx {
        Some(dlp3d::TimelineStart::Value(v)) => {
            m.insert("motion_timeline_start_idx_value".into(), json!(v));
        }
        Some(dlp3d::TimelineStart::IsNone(b)) => {
            m.insert("motion_timeline_start_idx_is_none".into(), json!(b));
        }
        None => {}
    }
    put(
        &mut m,
        "face_blendshape_names",
        json!(r.face_blendshape_names),
    );
    put(&mut m, "audio_n_channels", json!(r.audio_n_channels));
    put(&mut m, "audio_sample_width", json!(r.audio_sample_width));
    put(&mut m, "audio_frame_rate", json!(r.audio_frame_rate));
    put(&mut m, "data", json!(r.data));
    match r.face_timeline_start_idx {
        Some(dlp3d::FaceTimelineStart::Value(v)) => {
            m.insert("face_timeline_start_idx_value".into(), json!(v));
        }
        Some(dlp3d::FaceTimelineStart::IsNone(b)) => {
            m.insert("face_timeline_start_idx_is_none".into(), json!(b));
        }
        None => {}
    }
    Value::Object(m)
}

fn request_json(r: &Request) -> Value {
    let mut m = Map::new();
    for (k, v) in [
        ("class_name", json!(r.class_name)),
        ("asr_adapter", json!(r.asr_adapter)),
        ("n_channels", json!(r.n_channels)),
        ("sample_width", json!(r.sample_width)),
        ("frame_rate", json!(r.frame_rate)),
        ("classification_adapter", json!(r.classification_adapter)),
        ("conversation_adapter", json!(r.conversation_adapter)),
        ("agent_name", json!(r.agent_name)),
        ("reaction_adapter", json!(r.reaction_adapter)),
        ("tts_adapter", json!(r.tts_adapter)),
        ("voice_name", json!(r.voice_name)),
        ("voice_speed", json!(r.voice_speed)),
        ("face_model", json!(r.face_model)),
        ("avatar", json!(r.avatar)),
        ("user_id", json!(r.user_id)),
        (
            "max_front_extension_duration",
            json!(r.max_front_extension_duration),
        ),
        (
            "max_rear_extension_duration",
            json!(r.max_rear_extension_duration),
        ),
        (
            "first_body_fast_response",
            json!(r.first_body_fast_response),
        ),
        ("speech_text", json!(r.speech_text)),
        ("data", json!(r.data)),
        ("app_name", json!(r.app_name)),
        ("language", json!(r.language)),
        ("character_id", json!(r.character_id)),
    ] {
        put(&mut m, k, v);
    }
    Value::Object(m)
}

fn responses() -> Vec<Response> {
    let joints: Vec<String> = ["Hips", "Spine", "Head"].map(String::from).to_vec();
    let shapes: Vec<String> = ["jawOpen", "eyeBlinkLeft"].map(String::from).to_vec();
    let mut frame = Vec::new();
    for j in 0..3 {
        let r = dlp3d::quat_to_mat([0.1 * j as f32, 0.2, -0.3, 0.9]);
        frame.extend_from_slice(&r);
    }
    frame.extend_from_slice(&[12.5, 98.0, -3.25, 0.0, 0.0, 0.0]);
    vec![
        dlp3d::request_id("req-42"),
        dlp3d::normal(),
        dlp3d::failed("Audio queue is full"),
        dlp3d::leave(),
        dlp3d::motion_start(&joints, "mocap-tools-humanoid", Dtype::F32, None),
        dlp3d::motion_start(&joints, "", Dtype::F16, Some(0)),
        dlp3d::motion_start(&joints, "r", Dtype::F32, Some(-7)),
        dlp3d::face_start(&shapes, Dtype::F32, Some(3)),
        dlp3d::face_start(&shapes, Dtype::F16, None),
        dlp3d::audio_start(16_000, 1, 2),
        dlp3d::motion_body(Dtype::F32, &frame),
        dlp3d::motion_body(Dtype::F16, &frame),
        dlp3d::face_body(Dtype::F32, &[0.25, 1.0]),
        dlp3d::audio_body((0..=255).collect()),
        dlp3d::end(Stream::Motion),
        dlp3d::end(Stream::Face),
        dlp3d::end(Stream::Audio),
    ]
}

fn request() -> Request {
    Request {
        class_name: class::DIRECT_GENERATION.into(),
        asr_adapter: "asr".into(),
        n_channels: 1,
        sample_width: 2,
        frame_rate: 16_000,
        classification_adapter: "cls".into(),
        conversation_adapter: "llm".into(),
        agent_name: "agent".into(),
        reaction_adapter: "react".into(),
        tts_adapter: "tts".into(),
        voice_name: "voice".into(),
        voice_speed: 1.25,
        face_model: "face".into(),
        avatar: "avatar".into(),
        user_id: "user".into(),
        max_front_extension_duration: 0.5,
        max_rear_extension_duration: 1.5,
        first_body_fast_response: true,
        speech_text: "你好, mocap".into(),
        data: vec![0, 1, 254, 255],
        app_name: "babylon".into(),
        language: "zh".into(),
        character_id: "ch".into(),
    }
}

#[test]
#[ignore = "needs node + protobufjs: scripts/test-all.sh"]
fn protobufjs_agrees_with_prost_both_ways() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let js = root.join("scripts/js");
    assert!(
        js.join("node_modules/protobufjs").exists(),
        "protobufjs is not installed: run scripts/test-all.sh (or `npm ci --prefix scripts/js`)"
    );
    let responses = responses();
    let request = request();
    let mut cases: Vec<Value> = responses
        .iter()
        .map(|r| {
            json!({"message": "OrchestratorV4Response",
                   "hex": hex::encode(r.encode_to_vec()), "expect": response_json(r)})
        })
        .collect();
    cases.push(json!({"message": "OrchestratorV4Request",
                      "hex": hex::encode(request.encode_to_vec()), "expect": request_json(&request)}));
    let dir = std::env::temp_dir().join(format!("dlp3d-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.json");
    let output = dir.join("out.json");
    std::fs::write(&input, json!({ "cases": cases }).to_string()).unwrap();
    let run = Command::new("node")
        .arg(js.join("dlp3d-interop.mjs"))
        .arg(root.join("crates/mocap-core/src/dlp3d/orchestrator_v4.proto"))
        .arg(&input)
        .arg(&output)
        .output()
        .expect("node runs");
    assert!(
        run.status.success(),
        "protobufjs disagreed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let out: Value = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    assert_eq!(out["checked"].as_u64(), Some(cases.len() as u64));
    let encoded = out["encoded"].as_array().unwrap();
    assert_eq!(encoded.len(), responses.len() + 1);
    for (r, h) in responses.iter().zip(encoded) {
        let bytes = hex::decode(h.as_str().unwrap()).unwrap();
        assert_eq!(&Response::decode(bytes.as_slice()).unwrap(), r);
    }
    let bytes = hex::decode(encoded[responses.len()].as_str().unwrap()).unwrap();
    assert_eq!(Request::decode(bytes.as_slice()).unwrap(), request);
    let _ = std::fs::remove_dir_all(&dir);
}
