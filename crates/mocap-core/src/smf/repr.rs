//! An owned mocopi packet: built from a view, written back to the same bytes.

use super::{
    Body, Bone, BoneDef, FORMAT_TYPE, Packet, Sender, Tag, Timecode, VERSION, chunk::HEADER_LEN,
};

/// An owned packet, for building datagrams from values (tests, captures, emulators).
#[derive(Clone, Debug, PartialEq)]
pub struct PacketRepr {
    /// `sndf`, written after the header when present.
    pub sender: Option<Sender>,
    /// The payload.
    pub body: BodyRepr,
}

/// An owned payload.
#[derive(Clone, Debug, PartialEq)]
pub enum BodyRepr {
    /// A frame packet.
    Frame(FrameRepr),
    /// A skeleton packet.
    Skeleton(Vec<BoneDef>),
    /// A sensor packet: the raw children of `sndt`.
    Sensor(Vec<(Tag, Vec<u8>)>),
}

/// An owned frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRepr {
    /// `fnum`.
    pub fnum: u32,
    /// `time`.
    pub time: f32,
    /// `uttm`, written only when present (apps since late 2023).
    pub uttm: Option<f64>,
    /// `tmcd`, written only when present (newest apps).
    pub timecode: Option<Timecode>,
    /// The bone transforms, in wire order.
    pub bones: Vec<Bone>,
}

impl PacketRepr {
    /// Number of bytes [`emit`](Self::emit) appends.
    pub fn buffer_len(&self) -> usize {
        let leaf = |n: usize| HEADER_LEN + n;
        let head = leaf(leaf(FORMAT_TYPE.len()) + leaf(1));
        let sndf = self.sender.map_or(0, |_| leaf(leaf(8) + leaf(2)));
        let body = match &self.body {
            BodyRepr::Frame(f) => leaf(
                leaf(4)
                    + leaf(4)
                    + f.uttm.map_or(0, |_| leaf(8))
                    + f.timecode.map_or(0, |_| leaf(6))
                    + leaf(f.bones.len() * leaf(leaf(2) + leaf(28))),
            ),
            BodyRepr::Skeleton(b) => leaf(leaf(b.len() * leaf(leaf(2) + leaf(2) + leaf(28)))),
            BodyRepr::Sensor(c) => leaf(c.iter().map(|(_, v)| leaf(v.len())).sum()),
        };
        head + sndf + body
    }

    /// Appends the datagram to `out`.
    ///
    /// Values are written as given, including ones [`parse`](super::parse)
    /// refuses (a NaN or negative clock, a non-finite rest pose), so tests can
    /// build the malformed packets a receiver must survive; `decode(encode(x))
    /// == x` holds for the values `parse` accepts.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.reserve(self.buffer_len());
        container(out, Tag::HEAD, |out| {
            leaf(out, Tag::FTYP, FORMAT_TYPE);
            leaf(out, Tag::VRSN, &[VERSION]);
        });
        if let Some(s) = &self.sender {
            container(out, Tag::SNDF, |out| {
                leaf(out, Tag::IPAD, &s.ipad.to_le_bytes());
                leaf(out, Tag::RCVP, &s.rcvp.to_le_bytes());
            });
        }
        match &self.body {
            BodyRepr::Frame(f) => container(out, Tag::FRAM, |out| {
                leaf(out, Tag::FNUM, &f.fnum.to_le_bytes());
                leaf(out, Tag::TIME, &f.time.to_le_bytes());
                if let Some(t) = f.uttm {
                    leaf(out, Tag::UTTM, &t.to_le_bytes());
                }
                if let Some(t) = f.timecode {
                    leaf(out, Tag::TMCD, &t.0);
                }
                container(out, Tag::BTRS, |out| {
                    for b in &f.bones {
                        container(out, Tag::BTDT, |out| {
                            leaf(out, Tag::BNID, &b.id.to_le_bytes());
                            tran(out, b.rot, b.pos);
                        });
                    }
                });
            }),
            BodyRepr::Skeleton(bones) => container(out, Tag::SKDF, |out| {
                container(out, Tag::BONS, |out| {
                    for b in bones {
                        container(out, Tag::BNDT, |out| {
                            leaf(out, Tag::BNID, &b.id.to_le_bytes());
                            leaf(out, Tag::PBID, &b.parent.to_le_bytes());
                            tran(out, b.rot, b.pos);
                        });
                    }
                });
            }),
            BodyRepr::Sensor(children) => container(out, Tag::SNDT, |out| {
                for (tag, value) in children {
                    leaf(out, *tag, value);
                }
            }),
        }
    }

    /// The datagram as a new vector.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.emit(&mut out);
        out
    }
}

impl PacketRepr {
    /// The owned form of a packet; `parse(&PacketRepr::parse(&p).to_bytes())`
    /// gives back an equal packet when the datagram held no unknown chunks.
    pub fn parse(p: &Packet<'_>) -> Self {
        let body = match &p.body {
            Body::Frame(f) => BodyRepr::Frame(FrameRepr {
                fnum: f.fnum,
                time: f.time,
                uttm: f.uttm,
                timecode: f.timecode,
                bones: f.bones().collect(),
            }),
            Body::Skeleton(s) => BodyRepr::Skeleton(s.bones().collect()),
            Body::Sensor(s) => {
                BodyRepr::Sensor(s.children().map(|c| (c.tag, c.value.to_vec())).collect())
            }
        };
        Self {
            sender: p.sender,
            body,
        }
    }
}

fn header(out: &mut Vec<u8>, tag: Tag, len: usize) {
    // Lengths above u32::MAX cannot be represented; a datagram never gets near.
    let len = u32::try_from(len).unwrap_or(u32::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&tag.0);
}

fn leaf(out: &mut Vec<u8>, tag: Tag, value: &[u8]) {
    header(out, tag, value.len());
    out.extend_from_slice(value);
}

fn tran(out: &mut Vec<u8>, rot: [f32; 4], pos: [f32; 3]) {
    header(out, Tag::TRAN, 28);
    for v in rot.iter().chain(&pos) {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn container(out: &mut Vec<u8>, tag: Tag, body: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    header(out, tag, 0);
    body(out);
    let len = u32::try_from(out.len() - start - HEADER_LEN).unwrap_or(u32::MAX);
    if let Some(slot) = out.get_mut(start..start + 4) {
        slot.copy_from_slice(&len.to_le_bytes());
    }
}
