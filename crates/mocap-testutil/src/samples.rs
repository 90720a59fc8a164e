//! Real datagrams of every protocol of the registry, by its key: the
//! bundled captures, and for VRChat's and VMT's OSC (no capture of them is
//! bundled) messages written from their documentation (docs/trackers.md).
//! Tests over `Protocol::ALL` use it, so a protocol added to the registry
//! without datagrams here fails them. Keys, not `Protocol`, because
//! mocap-core's own unit tests use this crate.

use mocap_core::osc::{self, Arg, Message};

/// The datagrams of the protocol whose registry key is `key`, or `None` for
/// a key nothing is known of yet.
pub fn of(key: &str) -> Option<Vec<Vec<u8>>> {
    let floats = |v: &[f32]| v.iter().map(|f| Arg::Float(*f)).collect::<Vec<_>>();
    Some(match key {
        "mocopi" => crate::capture_payloads("mocopi/wave-60hz.pcapng"),
        "vmc" => crate::capture_payloads("vmc/body-60hz.pcapng"),
        "ifacialmocap" => crate::capture_payloads("ifacialmocap/face-60fps.pcapng"),
        // One datagram of it is cut on purpose (docs/livelink.md).
        "livelink" => crate::capture_payloads("livelink/face-60fps.pcapng"),
        // Its last datagram is cut on purpose (captures/README.md).
        "openseeface" => crate::capture_payloads("openseeface/face-32fps.pcap"),
        // Requests and tracking data; the last datagram is cut on purpose
        // (captures/README.md).
        "vtubestudio" => crate::capture_payloads("vtubestudio/phone-60fps.pcap"),
        // Both directions; its last datagram is cut on purpose (captures/README.md).
        "slimevr" => crate::capture_payloads("slimevr/tracker-100hz.pcap"),
        // Plain and LZ4 frames; the last datagram is cut on purpose
        // (captures/README.md).
        "rokoko" => crate::capture_payloads("rokoko/studio-60fps.pcap"),
        // Tracker 1's position and rotation (Euler degrees), 60 frames.
        "vrchat" => (0u8..60)
            .map(|i| {
                let y = 0.9 + f32::from(i) / 600.0;
                osc::bundle(&[
                    Message::new("/tracking/trackers/1/position", floats(&[0.0, y, 0.1])),
                    Message::new("/tracking/trackers/1/rotation", floats(&[0.0, 90.0, 0.0])),
                ])
                .unwrap()
            })
            .collect(),
        // Index, enable, time offset, position, rotation quaternion.
        "vmt" => (0u8..60)
            .map(|i| {
                let mut args = vec![Arg::Int(3), Arg::Int(1)];
                let z = f32::from(i) / 60.0;
                args.extend(floats(&[0.0, 1.0, z, 3.0, 0.0, 0.0, 0.0, 1.0]));
                osc::message(&Message::new("/VMT/Room/Unity", args)).unwrap()
            })
            .collect(),
        _ => return None,
    })
}
