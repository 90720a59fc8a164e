//! BVH motion files, written from streams and read back (issue "Record
//! takes": the core part; tools stream frames into it). Pure: text in and
//! out, no files.
//!
//! ```
//! use mocap_core::bvh::{self, FrameEncoder, Joint};
//!
//! let joints = vec![
//!     Joint { name: "Hips".into(), parent: None, offset: [0.0, 95.0, 0.0] },
//!     Joint { name: "Spine".into(), parent: Some(0), offset: [0.0, 8.0, 0.0] },
//! ];
//! let mut text = bvh::header(&joints, 1.0 / 60.0)?.text;
//! let mut enc = FrameEncoder::new(&joints);
//! text.push_str(&enc.line(&[[0.0, 95.0, 0.0]; 2], &[[0.0, 0.0, 0.0, 1.0]; 2]));
//! let take = bvh::parse(&text)?;
//! assert_eq!(take.joints.len(), 2);
//! assert_eq!(take.frames.len(), 1);
//! assert_eq!(take.frames[0].len(), 12); // six channels per joint
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Every joint has six channels, `Xposition Yposition Zposition Zrotation
//! Xrotation Yrotation`, as the mocopi app writes them: rotations are
//! `R = Rz(z)·Rx(x)·Ry(y)` on column vectors, in degrees. Each frame's angles
//! are chosen, among the two Euler triples of a rotation and their ±360°
//! turns, as the one nearest the previous frame's, so a steady turn never
//! jumps by 360° or flips between the two solutions.
//!
//! The header's `Frames:` count is written fixed-width ([`FRAMES_WIDTH`]
//! digits) at a known byte offset ([`Header::frames_at`]), so a recorder can
//! patch it when the take ends, and a take cut short still reads up to its
//! last whole line.

use std::f64::consts::PI;
use std::fmt::Write as _;

/// A joint: its name, parent (an earlier joint; `None` for the root) and
/// offset from the parent in the file's units.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// Name as written after `ROOT`/`JOINT`.
    pub name: String,
    /// Index of the parent joint; parents come before their children.
    pub parent: Option<usize>,
    /// Offset from the parent.
    pub offset: [f64; 3],
}

/// Digits of the patchable `Frames:` count.
pub const FRAMES_WIDTH: usize = 10;

/// Why a skeleton cannot be written, or a text is not a BVH we can read:
/// what, and where (the joint for a skeleton, the line for a text).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Error {
    /// What is wrong.
    pub kind: ErrorKind,
    /// Writing: the joint at fault (its index in the skeleton).
    pub joint: Option<usize>,
    /// Reading: the line at fault (1-based).
    pub line: Option<usize>,
}

/// The reasons a skeleton or a text is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No joints.
    Empty,
    /// A joint's parent is not an earlier joint, or a second root.
    BadParent,
    /// A joint name that would break the file (empty, or with white space).
    BadName,
    /// Reading: something else stands where this was expected.
    Syntax {
        /// What was expected there.
        expected: &'static str,
    },
}

impl Error {
    fn joint(kind: ErrorKind, joint: usize) -> Self {
        Self {
            kind,
            joint: Some(joint),
            line: None,
        }
    }

    /// `line` counts from 0 here, from 1 in the error.
    fn syntax(line: usize, expected: &'static str) -> Self {
        Self {
            kind: ErrorKind::Syntax { expected },
            joint: None,
            line: Some(line + 1),
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if let Some(joint) = self.joint {
            write!(f, "joint {joint}: ")?;
        }
        match self.kind {
            ErrorKind::Empty => f.write_str("a skeleton needs at least one joint"),
            ErrorKind::BadParent => f.write_str("parent must be an earlier joint"),
            ErrorKind::BadName => f.write_str("name is empty or has white space"),
            ErrorKind::Syntax { expected } => write!(f, "expected {expected}"),
        }
    }
}

impl std::error::Error for Error {}

/// The header text and where its frame count sits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// `HIERARCHY … MOTION`, `Frames:` and `Frame Time:` lines.
    pub text: String,
    /// Byte offset in `text` of the [`FRAMES_WIDTH`]-digit frame count.
    pub frames_at: usize,
}

/// The frame count as written in the header (right-aligned, zero-padded).
pub fn frames_field(count: u64) -> String {
    format!("{count:0FRAMES_WIDTH$}")
}

/// The header for `joints`, `frame_time` seconds per frame, frame count 0.
/// A leaf gets an `End Site` half its own offset further along.
///
/// # Errors
/// An empty skeleton, parents out of order, names that would break the file.
pub fn header(joints: &[Joint], frame_time: f64) -> Result<Header, Error> {
    if joints.is_empty() {
        return Err(Error {
            kind: ErrorKind::Empty,
            joint: None,
            line: None,
        });
    }
    for (i, j) in joints.iter().enumerate() {
        let ok = match j.parent {
            None => i == 0,
            Some(p) => p < i,
        };
        if !ok {
            return Err(Error::joint(ErrorKind::BadParent, i));
        }
        if j.name.is_empty() || j.name.chars().any(char::is_whitespace) {
            return Err(Error::joint(ErrorKind::BadName, i));
        }
    }
    let mut text = String::from("HIERARCHY\n");
    write_joint(joints, 0, 0, &mut text);
    text.push_str("MOTION\nFrames: ");
    let frames_at = text.len();
    text.push_str(&frames_field(0));
    let _ = writeln!(text, "\nFrame Time: {frame_time:.6}");
    Ok(Header { text, frames_at })
}

fn write_joint(joints: &[Joint], i: usize, depth: usize, out: &mut String) {
    let Some(j) = joints.get(i) else {
        return;
    };
    let pad = "  ".repeat(depth);
    let kind = if depth == 0 { "ROOT" } else { "JOINT" };
    let [x, y, z] = j.offset;
    let _ = writeln!(out, "{pad}{kind} {}\n{pad}{{", j.name);
    let _ = writeln!(out, "{pad}  OFFSET {x:.6} {y:.6} {z:.6}");
    let _ = writeln!(
        out,
        "{pad}  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
    );
    let children: Vec<usize> = (0..joints.len())
        .filter(|&c| joints.get(c).is_some_and(|cj| cj.parent == Some(i)))
        .collect();
    if children.is_empty() {
        let [x, y, z] = j.offset.map(|v| v * 0.5);
        let _ = writeln!(
            out,
            "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET {x:.6} {y:.6} {z:.6}\n{pad}  }}"
        );
    }
    for c in children {
        write_joint(joints, c, depth + 1, out);
    }
    let _ = writeln!(out, "{pad}}}");
}

/// The order joints appear in the file (depth first, children in index
/// order): the order of a frame's channel values.
pub fn file_order(joints: &[Joint]) -> Vec<usize> {
    fn visit(joints: &[Joint], i: usize, out: &mut Vec<usize>) {
        out.push(i);
        for c in 0..joints.len() {
            if joints.get(c).is_some_and(|j| j.parent == Some(i)) {
                visit(joints, c, out);
            }
        }
    }
    let mut out = Vec::with_capacity(joints.len());
    if !joints.is_empty() {
        visit(joints, 0, &mut out);
    }
    out
}

/// Turns poses into motion lines, keeping each joint's angles continuous.
#[derive(Clone, Debug)]
pub struct FrameEncoder {
    order: Vec<usize>,
    previous: Vec<Option<[f64; 3]>>,
}

impl FrameEncoder {
    /// An encoder for `joints` (as given to [`header`]).
    pub fn new(joints: &[Joint]) -> Self {
        Self {
            order: file_order(joints),
            previous: vec![None; joints.len()],
        }
    }

    /// One motion line: for each joint (by index in `positions`/`rotations`,
    /// written in file order) its position and its rotation `[x, y, z, w]`
    /// as Z, X, Y degrees. Missing entries write the rest pose.
    pub fn line(&mut self, positions: &[[f64; 3]], rotations: &[[f64; 4]]) -> String {
        let mut out = String::with_capacity(self.order.len() * 6 * 11);
        for &i in &self.order {
            let p = positions.get(i).copied().unwrap_or([0.0; 3]);
            let q = rotations.get(i).copied().unwrap_or([0.0, 0.0, 0.0, 1.0]);
            let prev = self.previous.get(i).copied().flatten();
            let zxy = continuous_zxy(q, prev);
            if let Some(slot) = self.previous.get_mut(i) {
                *slot = Some(zxy);
            }
            for v in p.into_iter().chain(zxy) {
                if !out.is_empty() {
                    out.push(' ');
                }
                let _ = write!(out, "{v:.6}");
            }
        }
        out.push('\n');
        out
    }
}

/// `[z, x, y]` degrees of `q` for `R = Rz(z)·Rx(x)·Ry(y)`, the solution (and
/// ±360° turn of each angle) nearest `prev`.
pub fn continuous_zxy(q: [f64; 4], prev: Option<[f64; 3]>) -> [f64; 3] {
    let [[_, r01, _], [_, r11, _], [r20, r21, r22]] = crate::quat::to_mat3(q);
    let b = r21.clamp(-1.0, 1.0).asin();
    let a = (-r01).atan2(r11);
    let c = (-r20).atan2(r22);
    let first = [a, b, c].map(f64::to_degrees);
    let second = [a + PI, PI - b, c + PI].map(f64::to_degrees);
    let Some(prev) = prev else {
        return first.map(wrap180);
    };
    let near = |s: [f64; 3]| -> [f64; 3] {
        let mut out = s;
        for (o, p) in out.iter_mut().zip(prev) {
            *o += 360.0 * ((p - *o) / 360.0).round();
        }
        out
    };
    let (f, s) = (near(first), near(second));
    let dist = |t: [f64; 3]| -> f64 { t.iter().zip(prev).map(|(a, b)| (a - b).abs()).sum() };
    if dist(s) < dist(f) { s } else { f }
}

fn wrap180(a: f64) -> f64 {
    a - 360.0 * ((a + 180.0) / 360.0).floor()
}

/// The quaternion `[x, y, z, w]` of Z, X, Y degrees (`Rz·Rx·Ry`).
pub fn quat_from_zxy([z, x, y]: [f64; 3]) -> [f64; 4] {
    crate::quat::from_euler(crate::quat::EulerOrder::Zxy, [x, y, z])
}

/// A BVH read back: joints (names, parents, offsets), the frame time, the
/// frame count the header gives, and the motion values of every whole line.
#[derive(Clone, Debug, PartialEq)]
pub struct Bvh {
    /// Joints in file order.
    pub joints: Vec<Joint>,
    /// Seconds per frame.
    pub frame_time: f64,
    /// The header's `Frames:` count.
    pub frames_declared: u64,
    /// Every complete motion line (six values per joint); a cut last line is dropped.
    pub frames: Vec<Vec<f64>>,
}

/// Reads the files [`header`] and [`FrameEncoder`] write (and other BVH with
/// six channels per joint).
///
/// # Errors
/// [`ErrorKind::Syntax`] with the line and what was expected.
pub fn parse(text: &str) -> Result<Bvh, Error> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut joints: Vec<Joint> = Vec::new();
    let mut stack: Vec<Option<usize>> = Vec::new();
    let mut n = 0;
    let syntax = Error::syntax;
    let word = |i: usize| -> Vec<&str> {
        lines
            .get(i)
            .map(|l| l.split_whitespace().collect())
            .unwrap_or_default()
    };
    if word(0).first() != Some(&"HIERARCHY") {
        return Err(syntax(0, "HIERARCHY"));
    }
    n += 1;
    loop {
        let w = word(n);
        match w.as_slice() {
            ["ROOT" | "JOINT", name] => {
                let parent = stack.iter().rev().flatten().next().copied();
                joints.push(Joint {
                    name: (*name).to_owned(),
                    parent,
                    offset: [0.0; 3],
                });
                stack.push(Some(joints.len() - 1));
                n += 1;
                if word(n).first() != Some(&"{") {
                    return Err(syntax(n, "{"));
                }
            }
            ["End", "Site"] => {
                stack.push(None);
                n += 1;
                if word(n).first() != Some(&"{") {
                    return Err(syntax(n, "{"));
                }
            }
            ["OFFSET", x, y, z] => {
                let v: Option<Vec<f64>> = [x, y, z].iter().map(|s| s.parse().ok()).collect();
                let v = v.ok_or_else(|| syntax(n, "three numbers after OFFSET"))?;
                if let (Some(Some(j)), [x, y, z]) = (stack.last(), v.as_slice())
                    && let Some(joint) = joints.get_mut(*j)
                {
                    joint.offset = [*x, *y, *z];
                }
            }
            ["CHANNELS", "6", ..] => {}
            ["}"] => {
                stack.pop();
            }
            ["MOTION"] => break,
            _ => return Err(syntax(n, "a joint, OFFSET, CHANNELS 6, } or MOTION")),
        }
        n += 1;
        if n >= lines.len() {
            return Err(syntax(n, "MOTION"));
        }
    }
    n += 1;
    let frames_declared = match word(n).as_slice() {
        ["Frames:", count] => count.parse().map_err(|_| syntax(n, "a frame count"))?,
        _ => return Err(syntax(n, "Frames:")),
    };
    n += 1;
    let frame_time = match word(n).as_slice() {
        ["Frame", "Time:", t] => t.parse().map_err(|_| syntax(n, "a frame time"))?,
        _ => return Err(syntax(n, "Frame Time:")),
    };
    let per_line = joints.len() * 6;
    let mut frames = Vec::new();
    // The last piece after the final newline is either empty or a line cut
    // mid-write (a take killed while writing): never a frame.
    let complete = lines.len().saturating_sub(1);
    for i in n + 1..complete {
        let values: Option<Vec<f64>> = word(i).iter().map(|s| s.parse().ok()).collect();
        match values {
            Some(v) if v.len() == per_line => frames.push(v),
            Some(v) if v.is_empty() => {}
            _ => return Err(syntax(i, "a motion line of six values per joint")),
        }
    }
    Ok(Bvh {
        joints,
        frame_time,
        frames_declared,
        frames,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mocap_testutil::Rng;

    fn chain() -> Vec<Joint> {
        vec![
            Joint {
                name: "root".into(),
                parent: None,
                offset: [0.0, 93.29, 0.0],
            },
            Joint {
                name: "torso_1".into(),
                parent: Some(0),
                offset: [0.0, 5.0, -1.1],
            },
            Joint {
                name: "l_up_leg".into(),
                parent: Some(0),
                offset: [9.2, -4.2, 2.0],
            },
            Joint {
                name: "head".into(),
                parent: Some(1),
                offset: [0.0, 10.0, 0.5],
            },
        ]
    }

    fn same_rotation(a: [f64; 4], b: [f64; 4]) -> bool {
        let d: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        d.abs() > 1.0 - 1e-9
    }

    #[test]
    fn round_trip_hierarchy_offsets_and_rotations() {
        let joints = chain();
        let mut h = header(&joints, 1.0 / 60.0).unwrap();
        assert_eq!(
            &h.text[h.frames_at..h.frames_at + FRAMES_WIDTH],
            "0000000000"
        );
        let mut enc = FrameEncoder::new(&joints);
        let mut rng = Rng(4);
        let mut unit = || (rng.next() % 2_000_001) as f64 / 1_000_000.0 - 1.0;
        let mut poses = Vec::new();
        let mut body = String::new();
        for _ in 0..50 {
            let rots: Vec<[f64; 4]> = (0..4)
                .map(|_| {
                    let q = [unit(), unit(), unit(), unit()];
                    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
                    q.map(|v| v / n)
                })
                .collect();
            let pos: Vec<[f64; 3]> = (0..4).map(|_| [unit(), unit() + 90.0, unit()]).collect();
            body.push_str(&enc.line(&pos, &rots));
            poses.push((pos, rots));
        }
        h.text
            .replace_range(h.frames_at..h.frames_at + FRAMES_WIDTH, &frames_field(50));
        let bvh = parse(&(h.text + &body)).unwrap();
        assert_eq!(bvh.frames_declared, 50);
        assert!((bvh.frame_time - 0.016667).abs() < 1e-9);
        let order = file_order(&joints);
        let names: Vec<&str> = bvh.joints.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["root", "torso_1", "head", "l_up_leg"]);
        for (file_i, &i) in order.iter().enumerate() {
            let (jr, jw) = (&bvh.joints[file_i], &joints[i]);
            assert_eq!(jr.offset, jw.offset);
            let parent_name = |j: &Joint, all: &[Joint]| j.parent.map(|p| all[p].name.clone());
            assert_eq!(parent_name(jr, &bvh.joints), parent_name(jw, &joints));
        }
        for (line, (pos, rots)) in bvh.frames.iter().zip(&poses) {
            for (file_i, &i) in order.iter().enumerate() {
                let v = &line[file_i * 6..file_i * 6 + 6];
                for k in 0..3 {
                    assert!((v[k] - pos[i][k]).abs() < 1e-6);
                }
                let q = quat_from_zxy([v[3], v[4], v[5]]);
                // Six decimals of a degree: about 1e-8 rad.
                let d: f64 = q.iter().zip(rots[i]).map(|(a, b)| a * b).sum();
                assert!(d.abs() > 1.0 - 1e-10, "joint {i}: {q:?} vs {:?}", rots[i]);
            }
        }
    }

    #[test]
    fn euler_solutions_are_exact_and_continuous() {
        // Exact: both solutions give back the rotation.
        let mut rng = Rng(8);
        for _ in 0..1000 {
            let zxy = [0, 1, 2].map(|_| (rng.next() % 360_000) as f64 / 1000.0 - 180.0);
            let q = quat_from_zxy(zxy);
            let got = continuous_zxy(q, None);
            assert!(same_rotation(quat_from_zxy(got), q), "{zxy:?} -> {got:?}");
            let near = continuous_zxy(q, Some([700.0, 10.0, -500.0]));
            assert!(same_rotation(quat_from_zxy(near), q));
        }
        // Continuous: two turns about Y and a tumble through the X gimbal
        // pole never jump more than a few degrees between frames.
        let mut prev: Option<[f64; 3]> = None;
        for k in 0..=720 {
            let t = f64::from(k);
            let q = quat_from_zxy([20.0 * (t / 50.0).sin(), 89.0 * (t / 90.0).sin(), t]);
            let now = continuous_zxy(q, prev);
            if let Some(p) = prev {
                let step: f64 = now.iter().zip(p).map(|(a, b)| (a - b).abs()).sum();
                assert!(step < 10.0, "frame {k}: {p:?} -> {now:?}");
            }
            prev = Some(now);
        }
        assert!(prev.unwrap()[2] > 700.0, "Y kept turning: {prev:?}");
    }

    #[test]
    fn a_take_cut_mid_line_reads_up_to_the_last_whole_frame() {
        let joints = chain();
        let h = header(&joints, 0.02).unwrap();
        let mut enc = FrameEncoder::new(&joints);
        let mut text = h.text.clone();
        for _ in 0..3 {
            text.push_str(&enc.line(&[], &[]));
        }
        let cut = text.len() - 7;
        let bvh = parse(&text[..cut]).unwrap();
        assert_eq!(bvh.frames.len(), 2);
        assert_eq!(
            bvh.frames_declared, 0,
            "not patched: the recorder was killed"
        );
        assert_eq!(parse(&text).unwrap().frames.len(), 3);
    }

    #[test]
    fn bad_skeletons_are_refused() {
        let e = header(&[], 0.1).unwrap_err();
        assert_eq!((e.kind, e.joint, e.line), (ErrorKind::Empty, None, None));
        let mut j = chain();
        j[1].parent = Some(3);
        let e = header(&j, 0.1).unwrap_err();
        assert_eq!((e.kind, e.joint), (ErrorKind::BadParent, Some(1)));
        assert_eq!(e.to_string(), "joint 1: parent must be an earlier joint");
        let mut j = chain();
        j[2].name = "left leg".into();
        let e = header(&j, 0.1).unwrap_err();
        assert_eq!((e.kind, e.joint), (ErrorKind::BadName, Some(2)));
        for cut in 0..200 {
            let text = header(&chain(), 0.1).unwrap().text;
            let _ = parse(&text[..cut.min(text.len())]);
        }
    }

    #[test]
    fn bad_text_names_its_line() {
        let text = header(&chain(), 0.1).unwrap().text;
        let broken = text.replacen("OFFSET ", "OFFSET x", 1);
        let e = parse(&broken).unwrap_err();
        let first_offset = text.lines().position(|l| l.contains("OFFSET")).unwrap();
        assert_eq!(e.line, Some(first_offset + 1));
        assert_eq!(
            e.kind,
            ErrorKind::Syntax {
                expected: "three numbers after OFFSET"
            }
        );
        assert_eq!(
            e.to_string(),
            format!(
                "line {}: expected three numbers after OFFSET",
                first_offset + 1
            )
        );
        let e = parse("BVH\n").unwrap_err();
        assert_eq!(
            (e.kind, e.line),
            (
                ErrorKind::Syntax {
                    expected: "HIERARCHY"
                },
                Some(1)
            )
        );
    }
}
