//! The checked, zero-copy view of one mocopi datagram ([`parse`]): header,
//! sender, and a skeleton, frame or sensor body.

use std::net::Ipv4Addr;

use super::{Chunk, Chunks, Error, ErrorKind, HEADER_LEN, Result, Tag, Warning, WarningKind};

/// The only value `ftyp` has ever carried.
pub const FORMAT_TYPE: &[u8; 18] = b"sony motion format";
/// The only format version seen on the wire; others are refused, not misread.
pub const VERSION: u8 = 1;

/// A decoded datagram: header, sender definition and one payload.
///
/// Built by [`parse`], which validates every chunk it reads; accessors never fail.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Packet<'a> {
    /// `vrsn` (always [`VERSION`] once parsed).
    pub version: u8,
    /// `sndf`, when present.
    pub sender: Option<Sender>,
    /// The payload.
    pub body: Body<'a>,
    unknown: u32,
    datagram: &'a [u8],
}

/// The sender definition (`sndf`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sender {
    /// `ipad` as on the wire: an IPv4 address packed in decimal (a·10⁹ + b·10⁶ + c·10³ + d).
    pub ipad: u64,
    /// `rcvp`: the port the app was told to send to.
    pub rcvp: u16,
}

impl Sender {
    /// `ipad` as an address, when it is a valid decimal packing.
    pub fn ip(&self) -> Option<Ipv4Addr> {
        unpack_ipv4(self.ipad)
    }
}

/// Reads a decimal-packed IPv4 address: 172020010007 is 172.20.10.7.
pub fn unpack_ipv4(packed: u64) -> Option<Ipv4Addr> {
    if packed >= 1_000_000_000_000 {
        return None;
    }
    let octet = |div: u64| u8::try_from(packed / div % 1000).ok();
    Some(Ipv4Addr::new(
        octet(1_000_000_000)?,
        octet(1_000_000)?,
        octet(1_000)?,
        octet(1)?,
    ))
}

/// Packs an IPv4 address in decimal, as the app writes `ipad`.
pub fn pack_ipv4(ip: Ipv4Addr) -> u64 {
    ip.octets()
        .iter()
        .fold(0, |acc, &o| acc * 1000 + u64::from(o))
}

/// The payload of a datagram.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Body<'a> {
    /// `fram`: one frame of motion.
    Frame(Frame<'a>),
    /// `skdf`: the skeleton definition (rest pose and hierarchy).
    Skeleton(Skeleton<'a>),
    /// `sndt`: sensor data, whose layout is not published; children are kept raw.
    Sensor(Sensor<'a>),
}

impl Body<'_> {
    /// `"frame"`, `"skeleton"` or `"sensor"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Frame(_) => "frame",
            Self::Skeleton(_) => "skeleton",
            Self::Sensor(_) => "sensor",
        }
    }
}

/// One frame (`fram`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame<'a> {
    /// `fnum`: frames since the app started.
    pub fnum: u32,
    /// `time`: sender clock in seconds (early apps: Unix seconds).
    pub time: f32,
    /// `uttm`: sender Unix time in seconds (newer apps).
    pub uttm: Option<f64>,
    /// `tmcd`: timecode (newest apps; all zero means none).
    pub timecode: Option<Timecode>,
    bones: BoneList<'a>,
    /// Offsets of the `time` and `uttm` chunks, for warnings.
    time_at: usize,
    uttm_at: usize,
}

impl<'a> Frame<'a> {
    /// Number of bone transforms (`btdt`); 27 for the mocopi rig.
    pub fn bone_count(&self) -> usize {
        self.bones.count
    }

    /// The bone transforms in wire order.
    pub fn bones(&self) -> Bones<'a> {
        let list = &self.bones;
        Bones(if list.canonical {
            BonesInner::Fixed(list.chunk.value.chunks_exact(BTDT_RECORD))
        } else {
            BonesInner::Walk(list.chunk.children())
        })
    }
}

/// Iterator over a frame's bone transforms.
#[derive(Clone, Debug)]
pub struct Bones<'a>(BonesInner<'a>);

#[derive(Clone, Debug)]
enum BonesInner<'a> {
    /// Every record in the app's own layout: fixed stride, no walk needed.
    Fixed(std::slice::ChunksExact<'a, u8>),
    Walk(Chunks<'a>),
}

impl Iterator for Bones<'_> {
    type Item = Bone;

    #[inline]
    fn next(&mut self) -> Option<Bone> {
        match &mut self.0 {
            BonesInner::Fixed(records) => {
                let rec = records.next()?;
                rec.get(HEADER_LEN..).and_then(canonical_btdt)
            }
            BonesInner::Walk(chunks) => loop {
                let c = chunks.next()?.ok()?;
                if c.tag != Tag::BTDT {
                    continue;
                }
                if let Some(bone) = canonical_btdt(c.value) {
                    return Some(bone);
                }
                let mut id = None;
                let mut tran = None;
                for child in c.children().flatten() {
                    match child.tag {
                        Tag::BNID => id = read_u16(&child).ok(),
                        Tag::TRAN => tran = read_tran(&child).ok(),
                        _ => {}
                    }
                }
                if let (Some(id), Some((rot, pos))) = (id, tran) {
                    return Some(Bone { id, rot, pos });
                }
            },
        }
    }
}

/// The skeleton definition (`skdf`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Skeleton<'a> {
    bones: BoneList<'a>,
}

impl<'a> Skeleton<'a> {
    /// Number of bone definitions (`bndt`); 27 for the mocopi rig.
    pub fn bone_count(&self) -> usize {
        self.bones.count
    }

    /// The bone definitions in wire order.
    pub fn bones(&self) -> impl Iterator<Item = BoneDef> + 'a {
        self.bones.records(Tag::BNDT).filter_map(|c| {
            let mut id = None;
            let mut parent = None;
            let mut tran = None;
            for child in c.children().flatten() {
                match child.tag {
                    Tag::BNID => id = read_u16(&child).ok(),
                    Tag::PBID => parent = read_u16(&child).ok().map(|p| p.cast_signed()),
                    Tag::TRAN => tran = read_tran(&child).ok(),
                    _ => {}
                }
            }
            let (rot, pos) = tran?;
            Some(BoneDef {
                id: id?,
                parent: parent?,
                rot,
                pos,
            })
        })
    }
}

/// Sensor data (`sndt`): recognised, kept as raw children.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sensor<'a> {
    chunk: Chunk<'a>,
}

impl<'a> Sensor<'a> {
    /// The children of `sndt` (`snad`, `snnm`, `snji`, `snvl`, …), raw.
    pub fn children(&self) -> impl Iterator<Item = Chunk<'a>> + 'a {
        self.chunk.children().flatten()
    }
}

/// One bone's pose in a frame: rotation local to the parent, position (root: absolute).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bone {
    /// `bnid`.
    pub id: u16,
    /// Quaternion x, y, z, w.
    pub rot: [f32; 4],
    /// Position x, y, z in metres.
    pub pos: [f32; 3],
}

/// One bone of the skeleton definition: hierarchy and rest pose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoneDef {
    /// `bnid`.
    pub id: u16,
    /// `pbid`: parent id, -1 for the root.
    pub parent: i16,
    /// Rest rotation, quaternion x, y, z, w.
    pub rot: [f32; 4],
    /// Rest offset from the parent in metres.
    pub pos: [f32; 3],
}

/// The six `tmcd` bytes: hour, minute, second, frame, frame rate, drop-frame flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timecode(pub [u8; 6]);

impl Timecode {
    /// Hours.
    pub fn hour(&self) -> u8 {
        self.0[0]
    }
    /// Minutes.
    pub fn minute(&self) -> u8 {
        self.0[1]
    }
    /// Seconds.
    pub fn second(&self) -> u8 {
        self.0[2]
    }
    /// Frame within the second.
    pub fn frame(&self) -> u8 {
        self.0[3]
    }
    /// Frame rate byte (meaning of values not yet observed).
    pub fn rate(&self) -> u8 {
        self.0[4]
    }
    /// Drop-frame flag (non-zero = true).
    pub fn drop_frame(&self) -> bool {
        self.0[5] != 0
    }
}

/// A validated `btrs` or `bons` list.
#[derive(Clone, Copy, Debug, PartialEq)]
struct BoneList<'a> {
    chunk: Chunk<'a>,
    count: usize,
    /// Every record is in the app's own fixed layout.
    canonical: bool,
}

impl<'a> BoneList<'a> {
    fn records(&self, tag: Tag) -> impl Iterator<Item = Chunk<'a>> + 'a {
        self.chunk
            .children()
            .flatten()
            .filter(move |c| c.tag == tag)
    }
}

impl<'a> Packet<'a> {
    /// The datagram this packet was parsed from.
    pub fn bytes(&self) -> &'a [u8] {
        self.datagram
    }

    /// Number of chunks this decoder does not know (kept, skipped, reported).
    pub fn unknown_count(&self) -> u32 {
        self.unknown
    }

    /// Every unknown chunk with its parent tag, in wire order.
    pub fn unknown_chunks(&self) -> Vec<(Option<Tag>, Chunk<'a>)> {
        let mut out = Vec::new();
        if self.unknown > 0 {
            collect_unknown(Chunks::top(self.datagram), None, &mut out);
        }
        out
    }

    /// Odd values in a packet that decoded: negative or non-finite clocks,
    /// non-finite bone values, rotations that are not unit quaternions. The
    /// packet is still good to use; tools report these and go on.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut out = Vec::new();
        match &self.body {
            Body::Frame(f) => {
                clock_warning(f.time_at, Tag::TIME, f64::from(f.time), &mut out);
                if let Some(u) = f.uttm {
                    clock_warning(f.uttm_at, Tag::UTTM, u, &mut out);
                }
                let list = f.bones.chunk.offset;
                out.extend(
                    f.bones()
                        .filter_map(|b| bone_warning(list, Tag::BTRS, b.id, b.rot, b.pos)),
                );
            }
            Body::Skeleton(s) => {
                let list = s.bones.chunk.offset;
                out.extend(
                    s.bones()
                        .filter_map(|b| bone_warning(list, Tag::BONS, b.id, b.rot, b.pos)),
                );
            }
            Body::Sensor(_) => {}
        }
        out
    }

    /// The frame, if this is a frame packet.
    pub fn frame(&self) -> Option<&Frame<'a>> {
        match &self.body {
            Body::Frame(f) => Some(f),
            _ => None,
        }
    }

    /// The skeleton, if this is a skeleton packet.
    pub fn skeleton(&self) -> Option<&Skeleton<'a>> {
        match &self.body {
            Body::Skeleton(s) => Some(s),
            _ => None,
        }
    }
}

fn collect_unknown<'a>(
    chunks: Chunks<'a>,
    parent: Option<Tag>,
    out: &mut Vec<(Option<Tag>, Chunk<'a>)>,
) {
    for c in chunks.flatten() {
        if !c.tag.is_known_in(parent) {
            out.push((parent, c));
        } else if c.tag.is_container() && parent != Some(Tag::SNDT) {
            collect_unknown(c.children(), Some(c.tag), out);
        }
    }
}

/// Decodes one datagram.
///
/// Chunks are found by tag, never by offset or datagram size; every length is
/// checked against what its parent holds, and children must fill their parent
/// exactly. Unknown chunks are skipped and counted. Never panics.
///
/// # Errors
/// An [`Error`] naming the offset, the chunk and the reason, for the first
/// fault found.
pub fn parse(datagram: &[u8]) -> Result<Packet<'_>> {
    if datagram.is_empty() {
        return Err(Error::new(0, None, ErrorKind::Empty));
    }
    let mut unknown = 0u32;
    let mut head = None;
    let mut sndf = None;
    let mut payload: Option<Chunk<'_>> = None;
    for c in Chunks::top(datagram) {
        let c = c?;
        match c.tag {
            Tag::HEAD => once(&mut head, c)?,
            Tag::SNDF => once(&mut sndf, c)?,
            Tag::FRAM | Tag::SKDF | Tag::SNDT => {
                if let Some(first) = payload {
                    let kind = if first.tag == c.tag {
                        ErrorKind::Duplicate
                    } else {
                        ErrorKind::SeveralPayloads
                    };
                    return Err(c.error(kind));
                }
                payload = Some(c);
            }
            _ => unknown += 1,
        }
    }
    let top_missing = |kind| Error::new(0, None, kind);
    let head = head.ok_or_else(|| top_missing(ErrorKind::Missing(Tag::HEAD)))?;
    let version = parse_head(&head, &mut unknown)?;
    let sender = sndf.map(|c| parse_sender(&c, &mut unknown)).transpose()?;
    let payload = payload.ok_or_else(|| top_missing(ErrorKind::NoPayload))?;
    let body = match payload.tag {
        Tag::FRAM => Body::Frame(parse_frame(&payload, &mut unknown)?),
        Tag::SKDF => Body::Skeleton(parse_skeleton(&payload, &mut unknown)?),
        _ => {
            for c in payload.children() {
                c?;
            }
            Body::Sensor(Sensor { chunk: payload })
        }
    };
    Ok(Packet {
        version,
        sender,
        body,
        unknown,
        datagram,
    })
}

fn once<'a>(slot: &mut Option<Chunk<'a>>, c: Chunk<'a>) -> Result<()> {
    if slot.is_some() {
        return Err(c.error(ErrorKind::Duplicate));
    }
    *slot = Some(c);
    Ok(())
}

/// The children of `parent` with the given tags, each at most once; any other
/// tag is counted as unknown.
fn children<'a, const N: usize>(
    parent: &Chunk<'a>,
    tags: [Tag; N],
    unknown: &mut u32,
) -> Result<[Option<Chunk<'a>>; N]> {
    let mut slots = [None; N];
    for c in parent.children() {
        let c = c?;
        match tags
            .iter()
            .position(|t| *t == c.tag)
            .and_then(|i| slots.get_mut(i))
        {
            Some(slot) => once(slot, c)?,
            None => *unknown += 1,
        }
    }
    Ok(slots)
}

fn required<'a>(slot: Option<Chunk<'a>>, parent: &Chunk<'_>, tag: Tag) -> Result<Chunk<'a>> {
    slot.ok_or_else(|| parent.error(ErrorKind::Missing(tag)))
}

fn parse_head(head: &Chunk<'_>, unknown: &mut u32) -> Result<u8> {
    let [ftyp, vrsn] = children(head, [Tag::FTYP, Tag::VRSN], unknown)?;
    let ftyp = required(ftyp, head, Tag::FTYP)?;
    if ftyp.value != FORMAT_TYPE {
        return Err(ftyp.error(ErrorKind::FormatType));
    }
    let vrsn = required(vrsn, head, Tag::VRSN)?;
    let [version] = vrsn.fixed::<1>()?;
    if version != VERSION {
        return Err(vrsn.error(ErrorKind::Version(version)));
    }
    Ok(version)
}

fn parse_sender(sndf: &Chunk<'_>, unknown: &mut u32) -> Result<Sender> {
    let [ipad, rcvp] = children(sndf, [Tag::IPAD, Tag::RCVP], unknown)?;
    let ipad = required(ipad, sndf, Tag::IPAD)?.fixed::<8>()?;
    let rcvp = read_u16(&required(rcvp, sndf, Tag::RCVP)?)?;
    Ok(Sender {
        ipad: u64::from_le_bytes(ipad),
        rcvp,
    })
}

fn parse_frame<'a>(fram: &Chunk<'a>, unknown: &mut u32) -> Result<Frame<'a>> {
    let [fnum, time, uttm, tmcd, btrs] = children(
        fram,
        [Tag::FNUM, Tag::TIME, Tag::UTTM, Tag::TMCD, Tag::BTRS],
        unknown,
    )?;
    let fnum = u32::from_le_bytes(required(fnum, fram, Tag::FNUM)?.fixed::<4>()?);
    // Odd clock values (negative, NaN) are warnings, not errors: nothing
    // needs the value to use the bones.
    let time_chunk = required(time, fram, Tag::TIME)?;
    let time = f32::from_le_bytes(time_chunk.fixed::<4>()?);
    let uttm_at = uttm.map_or(0, |c| c.offset);
    let uttm = uttm
        .map(|c| c.fixed::<8>().map(f64::from_le_bytes))
        .transpose()?;
    let timecode = tmcd.map(|c| c.fixed::<6>().map(Timecode)).transpose()?;
    let btrs = required(btrs, fram, Tag::BTRS)?;
    let (count, canonical) = match canonical_btrs(btrs.value) {
        Some(count) => (count, true),
        None => {
            let count = check_bone_list(&btrs, Tag::BTDT, unknown, |btdt, unknown| {
                let [id, tran] = children(btdt, [Tag::BNID, Tag::TRAN], unknown)?;
                read_u16(&required(id, btdt, Tag::BNID)?)?;
                // A non-finite bone value spoils one bone, not the frame: it is
                // decoded as is and shows up as null in JSON.
                read_tran(&required(tran, btdt, Tag::TRAN)?)?;
                Ok(())
            })?;
            (count, false)
        }
    };
    Ok(Frame {
        fnum,
        time,
        uttm,
        timecode,
        bones: BoneList {
            chunk: btrs,
            count,
            canonical,
        },
        time_at: time_chunk.offset,
        uttm_at,
    })
}

fn parse_skeleton<'a>(skdf: &Chunk<'a>, unknown: &mut u32) -> Result<Skeleton<'a>> {
    let [bons] = children(skdf, [Tag::BONS], unknown)?;
    let bons = required(bons, skdf, Tag::BONS)?;
    let count = check_bone_list(&bons, Tag::BNDT, unknown, |bndt, unknown| {
        let [id, parent, tran] = children(bndt, [Tag::BNID, Tag::PBID, Tag::TRAN], unknown)?;
        read_u16(&required(id, bndt, Tag::BNID)?)?;
        read_u16(&required(parent, bndt, Tag::PBID)?)?;
        // A non-finite rest pose is decoded with a warning; users of the
        // skeleton (the VMC bridge) decide whether they can build on it.
        read_tran(&required(tran, bndt, Tag::TRAN)?)?;
        Ok(())
    })?;
    Ok(Skeleton {
        bones: BoneList {
            chunk: bons,
            count,
            canonical: false,
        },
    })
}

fn check_bone_list(
    list: &Chunk<'_>,
    record: Tag,
    unknown: &mut u32,
    mut check: impl FnMut(&Chunk<'_>, &mut u32) -> Result<()>,
) -> Result<usize> {
    let mut count = 0;
    for c in list.children() {
        let c = c?;
        if c.tag == record {
            check(&c, unknown)?;
            count += 1;
        } else {
            *unknown += 1;
        }
    }
    Ok(count)
}

fn clock_warning(at: usize, tag: Tag, v: f64, out: &mut Vec<Warning>) {
    let kind = if !v.is_finite() {
        WarningKind::NonFiniteClock
    } else if v < 0.0 {
        WarningKind::NegativeClock
    } else {
        return;
    };
    out.push(Warning::new(at, tag, kind));
}

fn bone_warning(list: usize, tag: Tag, id: u16, rot: [f32; 4], pos: [f32; 3]) -> Option<Warning> {
    let kind = if !rot.iter().chain(&pos).all(|v| v.is_finite()) {
        WarningKind::NonFiniteBone { bone: id }
    } else if (rot.iter().map(|v| v * v).sum::<f32>().sqrt() - 1.0).abs() > super::UNIT_TOLERANCE {
        WarningKind::NonUnitRotation { bone: id }
    } else {
        return None;
    };
    Some(Warning::new(list, tag, kind))
}

/// Chunk headers of a `btdt` as every app writes it: `bnid` (2 bytes), then `tran` (28).
const BNID_HEADER: [u8; 8] = [2, 0, 0, 0, b'b', b'n', b'i', b'd'];
const TRAN_HEADER: [u8; 8] = [28, 0, 0, 0, b't', b'r', b'a', b'n'];

/// A `btdt` chunk as apps write it: 8-byte header, then 46 bytes of payload.
const BTDT_RECORD: usize = 54;
const BTDT_HEADER: [u8; 8] = [46, 0, 0, 0, b'b', b't', b'd', b't'];

/// The bone count when every record of a `btrs` payload is in the app's own
/// layout, so the whole list is checked by comparing headers at a fixed stride.
#[inline]
fn canonical_btrs(v: &[u8]) -> Option<usize> {
    if !v.len().is_multiple_of(BTDT_RECORD) {
        return None;
    }
    let ok = v.chunks_exact(BTDT_RECORD).all(|rec| {
        let parts = rec
            .split_first_chunk::<8>()
            .and_then(|(h0, r)| Some((h0, r.split_first_chunk::<8>()?)))
            .and_then(|(h0, (h1, r))| Some((h0, h1, r.get(2..)?.first_chunk::<8>()?)));
        matches!(parts, Some((h0, h1, h2)) if *h0 == BTDT_HEADER && *h1 == BNID_HEADER && *h2 == TRAN_HEADER)
    });
    ok.then_some(v.len() / BTDT_RECORD)
}

/// Reads a `btdt` payload laid out exactly as apps write it (`bnid` then
/// `tran`, nothing else). Anything else returns `None` and takes the general walk,
/// which accepts any order and unknown chunks.
#[inline]
fn canonical_btdt(v: &[u8]) -> Option<Bone> {
    let (h1, rest) = v.split_first_chunk::<8>()?;
    let (id, rest) = rest.split_first_chunk::<2>()?;
    let (h2, tran) = rest.split_first_chunk::<8>()?;
    let tran: &[u8; 28] = tran.try_into().ok()?;
    if *h1 != BNID_HEADER || *h2 != TRAN_HEADER {
        return None;
    }
    let (rot, pos) = floats(tran);
    Some(Bone {
        id: u16::from_le_bytes(*id),
        rot,
        pos,
    })
}

fn read_u16(c: &Chunk<'_>) -> Result<u16> {
    c.fixed::<2>().map(u16::from_le_bytes)
}

fn read_tran(c: &Chunk<'_>) -> Result<([f32; 4], [f32; 3])> {
    Ok(floats(&c.fixed::<28>()?))
}

#[inline]
fn floats(raw: &[u8; 28]) -> ([f32; 4], [f32; 3]) {
    let f = |i: usize| {
        raw.get(i * 4..i * 4 + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(f32::NAN, f32::from_le_bytes)
    };
    ([f(0), f(1), f(2), f(3)], [f(4), f(5), f(6)])
}
