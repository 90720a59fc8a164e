//! What `--vmc` sends for one stream: the pose its registry row gives, as
//! VMC messages, smoothed when asked. A face goes through the one face
//! bridge; a body is the row's body reader's pose written as one VMC frame
//! (`BodyPose::to_vmc`: Root/Pos, Bone/Pos per bone, OK, time). A row with
//! both (Rokoko's actors) sends one frame of both: the face's messages go
//! before the body's OK and time.

use std::time::Duration;

use mocap_core::bridge::{BodyReader, FaceBridge};
use mocap_core::protocol::{FaceOf, Protocol};
use mocap_core::vmc::{self, Message};

use super::VmcOut;

/// One stream's pose, bridged to VMC.
pub(super) struct Pose {
    /// [`Spec::face`](mocap_core::protocol::Spec::face), through the face bridge.
    face: Option<(FaceOf, FaceBridge)>,
    /// [`Spec::body`](mocap_core::protocol::Spec::body): one reader per
    /// stream, since a body may need earlier datagrams (mocopi's skeleton).
    body: Option<Box<dyn BodyReader>>,
    smoother: Option<vmc::Smoother>,
    /// When the stream's first pose came: a body frame's VMC time counts
    /// from it (as mocopi-dump's), since an f32 cannot hold a Unix time.
    first: Option<Duration>,
}

impl Pose {
    /// The bridge for a stream of `p`; `None` when its row gives no pose.
    pub(super) fn new(p: Protocol, v: &VmcOut) -> Option<Self> {
        let spec = p.spec();
        if spec.face.is_none() && spec.body.is_none() {
            return None;
        }
        Some(Self {
            face: spec
                .face
                .map(|face| (face, FaceBridge::new(v.face.clone()))),
            body: spec.body.map(|body| body()),
            smoother: v.smooth.clone().map(vmc::Smoother::new),
            first: None,
        })
    }

    /// The messages of one datagram received at `at` (empty when it holds
    /// no pose, or the bridge holds it back).
    pub(super) fn messages(&mut self, datagram: &[u8], at: Duration) -> Vec<Message> {
        let mut messages = match self.body.as_mut().and_then(|r| r.datagram(datagram)) {
            Some(pose) => {
                let first = *self.first.get_or_insert(at);
                pose.to_vmc(None, at.saturating_sub(first).as_secs_f32())
            }
            None => Vec::new(),
        };
        if let Some((face, bridge)) = &mut self.face
            && let Some(pose) = face(datagram)
        {
            let face = bridge.pose(&pose);
            let end = messages
                .iter()
                .position(|m| matches!(m, Message::Available { .. }))
                .unwrap_or(messages.len());
            messages.splice(end..end, face);
        }
        if let Some(s) = &mut self.smoother
            && !messages.is_empty()
        {
            s.handle_frame(at, &mut messages);
        }
        messages
    }
}
