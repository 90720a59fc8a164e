//! What `--vmc` sends for one stream: the pose its registry row gives, as
//! VMC messages, smoothed when asked. A face goes through the one face
//! bridge; a kind of pose the registry gains (a body) is one more
//! [`Source`] variant here.

use std::time::Duration;

use mocap_core::bridge::FaceBridge;
use mocap_core::protocol::{FaceOf, Protocol};
use mocap_core::vmc::{self, Message};

use super::VmcOut;

/// Where a stream's pose comes from.
enum Source {
    /// [`Spec::face`](mocap_core::protocol::Spec::face), through the face bridge.
    Face { face: FaceOf, bridge: FaceBridge },
}

/// One stream's pose, bridged to VMC.
pub(super) struct Pose {
    source: Source,
    smoother: Option<vmc::Smoother>,
}

impl Pose {
    /// The bridge for a stream of `p`; `None` when its row gives no pose.
    pub(super) fn new(p: Protocol, v: &VmcOut) -> Option<Self> {
        let source = Source::Face {
            face: p.spec().face?,
            bridge: FaceBridge::new(v.face.clone()),
        };
        Some(Self {
            source,
            smoother: v.smooth.clone().map(vmc::Smoother::new),
        })
    }

    /// The messages of one datagram received at `at` (empty when it holds
    /// no pose, or the bridge holds it back).
    pub(super) fn messages(&mut self, datagram: &[u8], at: Duration) -> Vec<Message> {
        let mut messages = match &mut self.source {
            Source::Face { face, bridge } => match face(datagram) {
                Some(pose) => bridge.pose(&pose),
                None => Vec::new(),
            },
        };
        if let Some(s) = &mut self.smoother
            && !messages.is_empty()
        {
            s.handle_frame(at, &mut messages);
        }
        messages
    }
}
