//! Both directions of VTube Studio's phone protocol against the reference
//! client no one here wrote: DenchiSoft's `VTubeStudioBlendshapeUDPReceiverTest`
//! (read at commit `cd1a748`, February 2024). The field names, their types
//! and their order below are those of its `VTubeStudioUDPDataRequest.cs` (the
//! request: `messageType`, `time` float, `sentBy`, `ports` int[]) and
//! `VTubeStudioRawTrackingData.cs` (the data: `Timestamp` long, `Hotkey` int,
//! `FaceFound` bool, `Rotation` and `Position` Vector3, `BlendShapes` a list
//! of `k` string / `v` float, `EyeLeft`, `EyeRight` Vector3), written the way
//! Unity's `JsonUtility.ToJson` writes those classes (members in declaration
//! order, a Vector3 as `{"x","y","z"}`, floats such as `2.5` and `1E-05`);
//! the blendshape names are its `VTSARKitBlendshape` enum's.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::time::Duration;

use mocap_core::protocol::{Confidence, Protocol, Stamp, recognise};
use mocap_core::vtubestudio::{self, Packet};
use serde_json::Value;

/// What the reference client sends (`new VTubeStudioUDPDataRequest("MyApp",
/// 1, 11125)` through `JsonUtility.ToJson`).
const REQUEST: &str =
    r#"{"messageType":"iOSTrackingDataRequest","time":1.0,"sentBy":"MyApp","ports":[11125]}"#;

/// A frame as the reference receiver's class reads it.
const DATA: &str = r#"{"Timestamp":1708300000123,"Hotkey":-1,"FaceFound":true,"Rotation":{"x":12.5,"y":-3.25,"z":1E-05},"Position":{"x":-0.75,"y":2.0,"z":-41.5},"BlendShapes":[{"k":"EyeBlinkLeft","v":0.03125},{"k":"JawOpen","v":0.4375},{"k":"TongueOut","v":0.0}],"EyeLeft":{"x":2.5,"y":-4.0,"z":0.0},"EyeRight":{"x":2.25,"y":-3.5,"z":0.0}}"#;

#[test]
fn the_reference_clients_request_decodes() {
    let Packet::Request(r) = vtubestudio::parse(REQUEST.as_bytes()).unwrap() else {
        panic!("not a request");
    };
    assert_eq!((r.time, r.sent_by.as_deref()), (Some(1.0), Some("MyApp")));
    assert_eq!((r.ports, r.warnings), (vec![11125], vec![]));
    assert_eq!(
        recognise(REQUEST.as_bytes()),
        Some((Protocol::VTubeStudio, Confidence::Certain))
    );
}

/// Our request has exactly the reference class's members, of its types,
/// in its order, and the same bytes for the same values.
#[test]
fn our_request_is_the_reference_classes() {
    let ours = vtubestudio::request(Duration::from_secs(1), "MyApp", &[11125]).unwrap();
    assert_eq!(ours, REQUEST.as_bytes());
    let v: Value = serde_json::from_slice(&ours).unwrap();
    let members: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(members, ["messageType", "time", "sentBy", "ports"]);
    assert!(v["time"].is_f64() && v["sentBy"].is_string());
    assert!(v["ports"].as_array().unwrap().iter().all(Value::is_u64));
}

#[test]
fn the_reference_classes_data_decodes() {
    let Packet::Data(t) = vtubestudio::parse(DATA.as_bytes()).unwrap() else {
        panic!("not data");
    };
    assert_eq!(t.timestamp, Some(1_708_300_000_123));
    assert_eq!((t.hotkey, t.face_found), (Some(-1), Some(true)));
    assert_eq!(t.rotation, Some([12.5, -3.25, 1e-5]));
    assert_eq!(t.position, Some([-0.75, 2.0, -41.5]));
    assert_eq!(t.eye_left, Some([2.5, -4.0, 0.0]));
    assert_eq!(t.eye_right, Some([2.25, -3.5, 0.0]));
    assert_eq!(
        t.blendshapes,
        [
            ("EyeBlinkLeft".to_owned(), 0.03125),
            ("JawOpen".to_owned(), 0.4375),
            ("TongueOut".to_owned(), 0.0)
        ]
    );
    assert_eq!(t.warnings, []);
    assert_eq!(
        Protocol::VTubeStudio.stamp(DATA.as_bytes()),
        Stamp::Clocked {
            clock: Duration::from_millis(1_708_300_000_123),
            part: 0
        }
    );
    let pose = (Protocol::VTubeStudio.spec().face.unwrap())(DATA.as_bytes()).unwrap();
    assert_eq!(pose.blendshapes[0], Some(0.03125));
    assert_eq!(pose.blendshapes[17], Some(0.4375));
    assert_eq!(pose.blendshapes[51], Some(0.0));
    assert_eq!(pose.tracking, Some(true));
}

/// The app may add members (its README says so): they are ignored.
#[test]
fn members_added_later_are_ignored() {
    let more = DATA.replacen('{', r#"{"SomethingNew":[1,{"a":null}],"#, 1);
    let Packet::Data(t) = vtubestudio::parse(more.as_bytes()).unwrap() else {
        panic!("not data");
    };
    assert_eq!((t.timestamp, t.warnings), (Some(1_708_300_000_123), vec![]));
}
