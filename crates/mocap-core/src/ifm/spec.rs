//! iFacialMocap's row of the registry ([`crate::protocol`]).

use std::time::Duration;

use crate::bridge::FacePose;
use crate::protocol::{Ask, Carries, Confidence, Resend, Spec, Stamp, View};

use super::{ARKIT, Command, PC_UDP_PORT, PHONE_PORT, Version, parse};

/// iFacialMocap / Facemotion3d face frames in the registry.
pub const SPEC: Spec = Spec {
    name: "iFacialMocap",
    key: "ifacialmocap",
    label: "ifm",
    ports: &[PC_UDP_PORT],
    sniff,
    decode,
    stamp,
    face: Some(face),
    body: None,
    renumber: None,
    carries: Carries::Face,
    ask: Some(Ask {
        port: PHONE_PORT,
        request: start_udp,
        // Again after ifm-handshake's default --keepalive without a frame,
        // as its UDP handshake does (handshake.rs).
        resend: Resend::WhileSilent(Duration::from_secs(3)),
    }),
    answer: None,
    tool: "ifm-handshake",
    dissector: Some("ifacialmocap"),
};

/// The UDP start command (v1 frames). The phone streams to the address the
/// command came from; it takes no ports or name.
fn start_udp(_ports: &[u16], _name: &str) -> Vec<u8> {
    Command::StartUdp {
        version: Version::V1,
    }
    .text()
    .into_bytes()
}

/// ASCII fields split by `|`, most of them `name-value` (v1) or
/// `name&value` (v2), the head after `=head#`. Three named values decide:
/// a frame's other fifty are left to [`decode`] (this runs on every
/// datagram a live view receives).
fn sniff(d: &[u8]) -> Option<Confidence> {
    if d.is_empty() || !d.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        return None;
    }
    let text = std::str::from_utf8(d).ok()?;
    if text.contains("=head#") {
        return Some(Confidence::Certain);
    }
    let named = text
        .split('|')
        .filter(|f| {
            f.split_once(['-', '&']).is_some_and(|(name, value)| {
                !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && value.parse::<f64>().is_ok()
            })
        })
        .take(3)
        .count();
    if named >= 3 {
        Some(Confidence::Certain)
    } else if named >= 1 && text.contains('|') {
        Some(Confidence::Likely)
    } else {
        None
    }
}

/// Blendshapes (percent on the wire, shown 0 to 1) and head and eye
/// angles in degrees. Frames are not numbered: a datagram is one.
fn decode(d: &[u8], view: &mut dyn View) -> Stamp {
    let Ok(frame) = parse(d) else {
        return Stamp::Error;
    };
    for (name, v) in ARKIT.iter().zip(frame.blendshapes) {
        if let Some(v) = v {
            #[expect(clippy::cast_precision_loss, reason = "percent values are small")]
            view.face(name, v as f32 / 100.0);
        }
    }
    if let Some(h) = frame.head {
        view.angle("head", h.rot, "deg");
    }
    if let Some(e) = frame.left_eye {
        view.angle("left eye", e, "deg");
    }
    if let Some(e) = frame.right_eye {
        view.angle("right eye", e, "deg");
    }
    Stamp::Unnumbered { ends_frame: true }
}

fn stamp(d: &[u8]) -> Stamp {
    match parse(d) {
        Ok(_) => Stamp::Unnumbered { ends_frame: true },
        Err(_) => Stamp::Error,
    }
}

/// The face as the bridges read it.
fn face(d: &[u8]) -> Option<FacePose> {
    parse(d).ok().map(|f| FacePose::from(&f))
}
