//! iFacialMocap / Facemotion3d text frames.
//!
//! A frame is fields separated by `|`: blendshape entries `name-value` (v1)
//! or `name&value` (v2, Facemotion3d), then `=head#rx,ry,rz,px,py,pz`,
//! `rightEye#rx,ry,rz`, `leftEye#rx,ry,rz`, and a trailing `|`. Real traffic
//! adds `trackingStatus`, a fake entry (`hapihapi-0`, `none-0`), changes key
//! order between frames, and sometimes leaves junk after the last block.

use std::fmt::Write as _;

use super::error::{Entry, Error, ErrorKind, Warning, WarningKind};
use super::names::{ARKIT, arkit_index, wire_name};
use super::{MAX_FRAME, Version};

/// Head rotation (degrees, X pitch, Y yaw, Z roll) and position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Head {
    /// Euler angles in degrees.
    pub rot: [f32; 3],
    /// Position (metres, relative to the app's calibration).
    pub pos: [f32; 3],
}

/// One decoded frame, borrowing unknown names from the text.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame<'a> {
    /// `trackingStatus`: whether a face is found (`None` in older app versions).
    pub tracking: Option<bool>,
    /// Blendshape values as sent (percent; v2 may be negative or above 100),
    /// indexed like [`ARKIT`]; `None` when the frame did not carry the key.
    pub blendshapes: [Option<i32>; 52],
    /// `head#` block.
    pub head: Option<Head>,
    /// `rightEye#` block, degrees.
    pub right_eye: Option<[f32; 3]>,
    /// `leftEye#` block, degrees.
    pub left_eye: Option<[f32; 3]>,
    /// Entries with names outside ARKit (`hapihapi`, `none`, `FM_*`), in order.
    pub unknown: Vec<(&'a str, i32)>,
    /// Fields that could not be used; the rest of the frame is still good.
    pub warnings: Vec<Warning<'a>>,
    /// Entries written `name&value`.
    pub v2_entries: usize,
    /// Entries written `name-value`.
    pub v1_entries: usize,
}

impl Frame<'_> {
    /// The ARKit blendshapes present, with values divided by 100.
    pub fn arkit(&self) -> impl Iterator<Item = (&'static str, f32)> + '_ {
        ARKIT
            .iter()
            .zip(&self.blendshapes)
            .filter_map(|(n, v)| v.map(|v| (*n, v as f32 / 100.0)))
    }

    /// Number of ARKit blendshapes present.
    pub fn arkit_count(&self) -> usize {
        self.blendshapes.iter().flatten().count()
    }
}

/// Decodes one frame from the bytes of a datagram (or of one TCP frame).
///
/// Keys may come in any order and any number; unknown names are kept apart;
/// fields that cannot be used become [`Warning`]s. Never panics.
///
/// # Errors
/// [`Error`] when the bytes are not a frame at all.
pub fn parse(bytes: &[u8]) -> Result<Frame<'_>, Error> {
    if bytes.is_empty() {
        return Err(ErrorKind::Empty.into());
    }
    if bytes.len() > MAX_FRAME {
        return Err(ErrorKind::TooLong { len: bytes.len() }.into());
    }
    if super::is_command(bytes) {
        return Err(ErrorKind::Command.into());
    }
    let text = std::str::from_utf8(bytes).map_err(|e| Error::not_utf8(e.valid_up_to()))?;
    parse_str(text)
}

/// [`parse`] for text already known to be UTF-8.
///
/// # Errors
/// [`ErrorKind::NoFrameData`] when nothing of a frame is found.
pub fn parse_str(text: &str) -> Result<Frame<'_>, Error> {
    let mut f = Frame {
        tracking: None,
        blendshapes: [None; 52],
        head: None,
        right_eye: None,
        left_eye: None,
        unknown: Vec::new(),
        warnings: Vec::new(),
        v2_entries: 0,
        v1_entries: 0,
    };
    let mut offset = 0;
    let mut after_last_block = false;
    let mut found = false;
    for field in text.split('|') {
        let at = offset;
        offset += field.len() + 1;
        if field.is_empty() {
            continue;
        }
        let after_was_set = after_last_block;
        // After `leftEye` (the last block in every capture) anything that
        // still parses is kept; what does not is junk, reported as such.
        let warnings_before = f.warnings.len();
        // `=` starts the transform part; it may follow an entry in the same field.
        let (entry, block) = match field.split_once('=') {
            Some((e, b)) => (e, Some((b, at + e.len() + 1))),
            None => (field, None),
        };
        if !entry.is_empty() {
            let block_hint = block.is_some() || looks_like_block(entry);
            found |= read_entry(&mut f, entry, at, block_hint, &mut after_last_block);
        }
        if let Some((b, b_at)) = block {
            found |= read_block(&mut f, b, b_at, &mut after_last_block);
        }
        if after_was_set {
            for w in f.warnings.iter_mut().skip(warnings_before) {
                w.kind = WarningKind::JunkAfterLastBlock;
            }
        }
    }
    if found {
        Ok(f)
    } else {
        Err(ErrorKind::NoFrameData.into())
    }
}

fn looks_like_block(field: &str) -> bool {
    field.contains('#')
}

/// Reads a `name-value` / `name&value` entry, or a block written without `=`.
fn read_entry<'a>(
    f: &mut Frame<'a>,
    field: &'a str,
    at: usize,
    block_hint: bool,
    after_last: &mut bool,
) -> bool {
    if block_hint && field.contains('#') {
        return read_block(f, field, at, after_last);
    }
    let split = field
        .find('&')
        .map(|i| (i, true))
        .or_else(|| field.find('-').map(|i| (i, false)));
    let Some((i, amp)) = split else {
        f.warnings.push(Warning {
            offset: at,
            field: Entry(field),
            kind: WarningKind::NotAnEntry,
        });
        return false;
    };
    let name = field.get(..i).unwrap_or_default();
    let value = field.get(i + 1..).unwrap_or_default();
    if name.is_empty()
        || name
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || c == '#')
    {
        f.warnings.push(Warning {
            offset: at,
            field: Entry(field),
            kind: WarningKind::NotAnEntry,
        });
        return false;
    }
    let Ok(v) = value.trim().parse::<i32>() else {
        f.warnings.push(Warning {
            offset: at,
            field: Entry(field),
            kind: WarningKind::BadValue,
        });
        return false;
    };
    if amp {
        f.v2_entries += 1;
    } else {
        f.v1_entries += 1;
    }
    let duplicate = if name == "trackingStatus" {
        f.tracking.replace(v != 0).is_some()
    } else if let Some(idx) = arkit_index(name) {
        f.blendshapes
            .get_mut(idx)
            .and_then(|slot| slot.replace(v))
            .is_some()
    } else {
        let dup = f.unknown.iter().any(|(n, _)| *n == name);
        f.unknown.retain(|(n, _)| *n != name);
        f.unknown.push((name, v));
        dup
    };
    if duplicate {
        f.warnings.push(Warning {
            offset: at,
            field: Entry(field),
            kind: WarningKind::Duplicate,
        });
    }
    true
}

/// Reads `head#…`, `rightEye#…` or `leftEye#…`.
fn read_block<'a>(f: &mut Frame<'a>, field: &'a str, at: usize, after_last: &mut bool) -> bool {
    let Some((name, values)) = field.split_once('#') else {
        f.warnings.push(Warning {
            offset: at,
            field: Entry(field),
            kind: WarningKind::NotAnEntry,
        });
        return false;
    };
    let expected = match name {
        "head" => 6,
        "rightEye" | "leftEye" => 3,
        _ => {
            f.warnings.push(Warning {
                offset: at,
                field: Entry(field),
                kind: WarningKind::NotAnEntry,
            });
            return false;
        }
    };
    let mut v = [0f32; 6];
    let mut n = 0;
    let mut ok = true;
    for part in values.split(',') {
        match (v.get_mut(n), part.trim().parse::<f32>()) {
            (Some(slot), Ok(x)) => *slot = x,
            _ => ok = false,
        }
        n += 1;
    }
    if !ok || n != expected {
        f.warnings.push(Warning {
            offset: at,
            field: Entry(field),
            kind: WarningKind::BadBlock { expected },
        });
        return false;
    }
    let [a, b, c, d, e, g] = v;
    let slot_taken = match name {
        "head" => f
            .head
            .replace(Head {
                rot: [a, b, c],
                pos: [d, e, g],
            })
            .is_some(),
        "rightEye" => f.right_eye.replace([a, b, c]).is_some(),
        _ => {
            *after_last = true;
            f.left_eye.replace([a, b, c]).is_some()
        }
    };
    if slot_taken {
        f.warnings.push(Warning {
            offset: at,
            field: Entry(field),
            kind: WarningKind::Duplicate,
        });
    }
    true
}

/// An owned frame, for writing frames (tests, phone emulators).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRepr {
    /// `trackingStatus`, written first when present.
    pub tracking: Option<bool>,
    /// Blendshapes by ARKit name, percent, in the order to write them.
    pub blendshapes: Vec<(String, i32)>,
    /// Other entries (e.g. `hapihapi`), written just before the head block.
    pub extra: Vec<(String, i32)>,
    /// Head block, when the frame has one.
    pub head: Option<Head>,
    /// Right eye block, when the frame has one.
    pub right_eye: Option<[f32; 3]>,
    /// Left eye block, when the frame has one.
    pub left_eye: Option<[f32; 3]>,
}

impl FrameRepr {
    /// The owned form of a frame (blendshapes in ARKit order).
    pub fn parse(f: &Frame<'_>) -> Self {
        Self {
            tracking: f.tracking,
            blendshapes: ARKIT
                .iter()
                .zip(&f.blendshapes)
                .filter_map(|(n, v)| v.map(|v| ((*n).to_owned(), v)))
                .collect(),
            extra: f
                .unknown
                .iter()
                .map(|(n, v)| ((*n).to_owned(), *v))
                .collect(),
            head: f.head,
            right_eye: f.right_eye,
            left_eye: f.left_eye,
        }
    }

    /// Appends the frame as the app writes it in `version`: v1 with `-`, v2
    /// with `&`; iFacialMocap spellings (`eyeBlink_L`); the blocks the frame has.
    pub fn emit(&self, version: Version, out: &mut Vec<u8>) {
        out.extend_from_slice(self.text(version).as_bytes());
    }

    /// The frame's bytes, as [`emit`](Self::emit) writes them.
    pub fn to_bytes(&self, version: Version) -> Vec<u8> {
        self.text(version).into_bytes()
    }

    fn text(&self, version: Version) -> String {
        let sep = match version {
            Version::V1 => '-',
            Version::V2 => '&',
        };
        let mut s = String::with_capacity(1024);
        if let Some(t) = self.tracking {
            let _ = write!(s, "trackingStatus{sep}{}|", u8::from(t));
        }
        for (name, v) in &self.blendshapes {
            let _ = write!(s, "{}{sep}{v}|", wire_name(name));
        }
        for (name, v) in &self.extra {
            let _ = write!(s, "{name}{sep}{v}|");
        }
        if let Some(h) = self.head {
            let [a, b, c] = h.rot;
            let [d, e, g] = h.pos;
            let _ = write!(s, "=head#{a},{b},{c},{d},{e},{g}|");
        }
        if let Some([a, b, c]) = self.right_eye {
            let _ = write!(s, "rightEye#{a},{b},{c}|");
        }
        if let Some([a, b, c]) = self.left_eye {
            let _ = write!(s, "leftEye#{a},{b},{c}|");
        }
        s
    }
}
