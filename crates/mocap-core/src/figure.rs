//! A body frame as a stick figure: the world positions of its bones by the
//! forward kinematics of [`crate::vmc::fk`], one segment from each drawn
//! bone's parent to it, and two flat views of it fitted to a box, for the
//! terminal (mocap-top's body view) and for SVG alike.
//!
//! ```
//! use mocap_core::bridge::{BodyPose, BonePose};
//! use mocap_core::figure::{Figure, Side, View};
//!
//! let bone = |pos| BonePose { pos, rot: [0.0, 0.0, 0.0, 1.0] };
//! let mut pose = BodyPose::default();
//! pose.set("Hips", bone([0.0, 0.9, 0.0]));
//! pose.set("LeftUpperLeg", bone([-0.1, -0.05, 0.0]));
//! pose.set("LeftLowerLeg", bone([0.0, -0.4, 0.0]));
//! pose.set("LeftFoot", bone([0.0, -0.4, 0.0]));
//! let figure = Figure::of(&pose).expect("a hip and a leg");
//! assert!((figure.ground - 0.05).abs() < 1e-6);
//! let fit = figure.fit(100.0, 100.0);
//! let foot = figure.joint("LeftFoot").unwrap();
//! let [_, y] = fit.point(View::Front, foot);
//! assert!((y - fit.ground()).abs() < 1e-9, "the foot stands on the ground line");
//! assert!(figure.segments.iter().all(|s| s.side == Side::Left || s.bone == 0));
//! ```
//!
//! - Drawn: the body's bones, Hips to Head and toes, with UpperChest and
//!   the shoulders when sent; eyes, jaw and fingers are left out (a finger
//!   is a dot at a terminal's resolution). A bone the frame lacks is
//!   skipped: its child hangs off the nearest sent ancestor, as in the
//!   kinematics. The head is a segment of [`HEAD_LENGTH`] along the Head
//!   bone's up axis, so a nod shows.
//! - Sides: a bone whose name begins with `Left` is [`Side::Left`] (the
//!   avatar's own left), `Right` is [`Side::Right`], the rest
//!   [`Side::Centre`].
//! - Views: [`View::Front`] looks at the avatar's face, as a person
//!   standing in front of it sees it — not a mirror: its left hand is on
//!   the right of the picture. Unity's avatars face +Z with their left at
//!   −X, so the picture's horizontal is −X. [`View::Side`] looks at the
//!   avatar's right side, its face to the right of the picture: the
//!   picture's horizontal is +Z. Up is +Y in both.
//! - Fit ([`Figure::fit`]): the scale comes from the rest pose (every
//!   rotation identity), not the current one, so raising an arm moves that
//!   arm alone; it leaves room for arms above the head ([`REACH`]). The
//!   lowest foot or toe stands on a ground line near the bottom, and the
//!   hips are centred across the box.

use crate::bridge::{BodyPose, HUMANOID_BONES};
use crate::quat::rotate;
use crate::vmc::HUMAN_BODY_BONES;
use crate::vmc::fk::Skeleton;

/// The head drawn above the Head bone (which sits at the top of the
/// neck), metres along its up axis.
pub const HEAD_LENGTH: f64 = 0.2;

/// The box holds this many rest-pose heights (or arm spans): arms raised
/// above the head stay inside it.
pub const REACH: f64 = 1.2;

/// Part of each side of the box left empty.
const MARGIN: f64 = 0.04;

/// A rest-pose size below this (metres) is no body: the current pose's
/// size is taken instead.
const MIN_SIZE: f64 = 0.05;

const HEAD: usize = 10;
/// The feet and toes: the ground is under the lowest.
const FEET: [usize; 4] = [5, 6, 19, 20];

/// Which side of the avatar a segment is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The avatar's own left.
    Left,
    /// Its right.
    Right,
    /// Spine, neck, head.
    Centre,
}

impl Side {
    /// The side of a `HumanBodyBones` index, by its name.
    #[must_use]
    pub fn of(bone: usize) -> Self {
        match HUMAN_BODY_BONES.get(bone) {
            Some(n) if n.starts_with("Left") => Self::Left,
            Some(n) if n.starts_with("Right") => Self::Right,
            _ => Self::Centre,
        }
    }
}

/// One line of the figure, in world positions (metres, Unity's axes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    /// The bone it ends at (the Head for the head itself).
    pub bone: usize,
    /// The parent's position (the Head's for the head).
    pub from: [f64; 3],
    /// The bone's position (the top of the head for the head).
    pub to: [f64; 3],
    /// The side it is on.
    pub side: Side,
}

/// A flat view of the figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// From the front, facing the viewer (not a mirror): −X across, Y up.
    Front,
    /// From the avatar's right side, its face to the right: +Z across, Y up.
    Side,
}

impl View {
    /// A world position seen in this view: across, up (metres).
    #[must_use]
    pub fn flat(self, [x, y, z]: [f64; 3]) -> [f64; 2] {
        match self {
            Self::Front => [-x, y],
            Self::Side => [z, y],
        }
    }
}

/// One body frame as a stick figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// World positions of the drawn bones by `HumanBodyBones` index.
    pub joints: [Option<[f64; 3]>; HUMANOID_BONES],
    /// A segment per drawn bone with a drawn parent, and the head.
    pub segments: Vec<Segment>,
    /// The height of the lowest foot or toe (of the lowest joint when the
    /// frame has no feet): the ground line.
    pub ground: f64,
    /// The rest pose's size: its height or arm span, whichever is larger
    /// (metres).
    pub size: f64,
}

/// Whether a bone is drawn: not an eye, the jaw or a finger.
fn drawn(bone: usize) -> bool {
    bone <= 20 || bone == 54
}

impl Figure {
    /// The figure of one body frame; `None` when it has fewer than two
    /// drawn bones.
    #[must_use]
    pub fn of(pose: &BodyPose) -> Option<Self> {
        Self::of_skeleton(&Skeleton::of(pose))
    }

    /// The figure of a skeleton's bones.
    #[must_use]
    pub fn of_skeleton(s: &Skeleton) -> Option<Self> {
        let mut joints = [None; HUMANOID_BONES];
        let mut rest: Vec<[f64; 3]> = Vec::with_capacity(HUMANOID_BONES);
        for (b, j) in joints.iter_mut().enumerate().filter(|(b, _)| drawn(*b)) {
            *j = s
                .world(b)
                .map(|w| w.pos)
                .filter(|p| p.iter().all(|v| v.is_finite()));
            if j.is_some()
                && let Some(r) = s.rest(b)
            {
                rest.push(r);
            }
        }
        if joints.iter().flatten().count() < 2 {
            return None;
        }
        let mut segments = Vec::with_capacity(HUMANOID_BONES);
        for (b, to) in joints.iter().enumerate() {
            let (Some(to), Some(from)) = (to, s.parent(b).and_then(|p| *joints.get(p)?)) else {
                continue;
            };
            segments.push(Segment {
                bone: b,
                from,
                to: *to,
                side: Side::of(b),
            });
        }
        let head_tip = s.world(HEAD).and_then(|w| {
            let [ux, uy, uz] = rotate(w.rot, [0.0, HEAD_LENGTH, 0.0]);
            let [x, y, z] = w.pos;
            let tip = [x + ux, y + uy, z + uz];
            tip.iter().all(|v| v.is_finite()).then_some((w.pos, tip))
        });
        if let Some((from, to)) = head_tip {
            segments.push(Segment {
                bone: HEAD,
                from,
                to,
                side: Side::Centre,
            });
        }
        let lowest = |bones: &mut dyn Iterator<Item = [f64; 3]>| {
            bones
                .map(|[_, y, _]| y)
                .fold(None, |m: Option<f64>, y| Some(m.map_or(y, |m| m.min(y))))
        };
        let ground = lowest(&mut FEET.iter().filter_map(|b| *joints.get(*b)?))
            .or_else(|| lowest(&mut joints.iter().flatten().copied()))
            .unwrap_or(0.0);
        let span = |pts: &[[f64; 3]], axis: usize| {
            let vals = pts.iter().filter_map(|p| p.get(axis).copied());
            let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
            if hi >= lo { hi - lo } else { 0.0 }
        };
        let mut size = span(&rest, 1).max(span(&rest, 0));
        if !(size.is_finite() && size >= MIN_SIZE) {
            let now: Vec<[f64; 3]> = joints.iter().flatten().copied().collect();
            size = span(&now, 0).max(span(&now, 1)).max(span(&now, 2));
        }
        // A head on top of the rest height.
        let size = (size + HEAD_LENGTH).max(MIN_SIZE);
        Some(Self {
            joints,
            segments,
            ground,
            size,
        })
    }

    /// A drawn bone's world position, by `HumanBodyBones` name.
    #[must_use]
    pub fn joint(&self, name: &str) -> Option<[f64; 3]> {
        crate::vmc::bone_index(name).and_then(|b| *self.joints.get(b)?)
    }

    /// How to draw either view in a box `width` by `height` (any unit,
    /// y up); the same scale for both views.
    #[must_use]
    pub fn fit(&self, width: f64, height: f64) -> Fit {
        let m = MARGIN * width.min(height);
        let room = (width - 2.0 * m).min(height - 2.0 * m).max(0.0);
        let hips = self.joints.first().copied().flatten().or_else(|| {
            let n = self.joints.iter().flatten().count() as f64;
            let sum = self
                .joints
                .iter()
                .flatten()
                .fold([0.0; 3], |a, p| [a[0] + p[0], a[1] + p[1], a[2] + p[2]]);
            Some(sum.map(|v| v / n))
        });
        Fit {
            scale: room / (REACH * self.size),
            centre: hips.unwrap_or([0.0; 3]),
            floor: self.ground,
            width,
            bottom: m,
        }
    }
}

/// A figure's placement in a box: positions in, box coordinates out.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Box units per metre.
    pub scale: f64,
    centre: [f64; 3],
    /// The world height of the ground.
    floor: f64,
    width: f64,
    bottom: f64,
}

impl Fit {
    /// A world position in `view`, in the box: x across, y up from the
    /// box's bottom. The hips are at mid-width, the ground at
    /// [`Self::ground`]. Points of an extreme pose may fall outside.
    #[must_use]
    pub fn point(&self, view: View, p: [f64; 3]) -> [f64; 2] {
        let [u, v] = view.flat(p);
        let [cu, _] = view.flat(self.centre);
        [
            self.width / 2.0 + (u - cu) * self.scale,
            self.bottom + (v - self.floor) * self.scale,
        ]
    }

    /// The ground line's height in the box.
    #[must_use]
    pub fn ground(&self) -> f64 {
        self.bottom
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bridge::BonePose;

    const ID: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

    /// A VRM-like humanoid in its T-pose: Unity's axes, facing +Z, its
    /// left at −X, as a VMC sender gives the bones (local offsets).
    pub(crate) fn t_pose() -> BodyPose {
        let mut p = BodyPose::default();
        for (name, pos) in [
            ("Hips", [0.0, 0.9, 0.0]),
            ("Spine", [0.0, 0.1, 0.0]),
            ("Chest", [0.0, 0.15, 0.0]),
            ("Neck", [0.0, 0.25, 0.0]),
            ("Head", [0.0, 0.1, 0.0]),
            ("LeftUpperLeg", [-0.1, -0.05, 0.0]),
            ("LeftLowerLeg", [0.0, -0.4, 0.0]),
            ("LeftFoot", [0.0, -0.4, 0.0]),
            ("LeftToes", [0.0, -0.05, 0.1]),
            ("RightUpperLeg", [0.1, -0.05, 0.0]),
            ("RightLowerLeg", [0.0, -0.4, 0.0]),
            ("RightFoot", [0.0, -0.4, 0.0]),
            ("RightToes", [0.0, -0.05, 0.1]),
            ("LeftUpperArm", [-0.2, 0.2, 0.0]),
            ("LeftLowerArm", [-0.3, 0.0, 0.0]),
            ("LeftHand", [-0.25, 0.0, 0.0]),
            ("RightUpperArm", [0.2, 0.2, 0.0]),
            ("RightLowerArm", [0.3, 0.0, 0.0]),
            ("RightHand", [0.25, 0.0, 0.0]),
            ("LeftIndexProximal", [-0.05, 0.0, 0.0]),
        ] {
            assert!(p.set(name, BonePose { pos, rot: ID }), "{name}");
        }
        p
    }

    /// The T-pose with the left upper arm turned by `q`.
    fn left_arm(q: [f32; 4]) -> BodyPose {
        let mut p = t_pose();
        let arm = p.bone("LeftUpperArm").unwrap();
        p.set("LeftUpperArm", BonePose { rot: q, ..arm });
        p
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn a_t_pose_has_horizontal_arms_its_left_on_the_pictures_right() {
        let f = Figure::of(&t_pose()).unwrap();
        let j = |n| f.joint(n).unwrap();
        // The toes are lowest: 0.9 - 0.05 - 0.8 - 0.05.
        assert!(close(f.ground, 0.0), "{}", f.ground);
        for (shoulder, hand) in [("LeftUpperArm", "LeftHand"), ("RightUpperArm", "RightHand")] {
            assert!(close(j(shoulder)[1], j(hand)[1]), "{hand} level");
        }
        // Unity: the left hand at −x.
        assert!(close(j("LeftHand")[0], -0.75));
        // Fingers are not drawn; every other bone is, each off its parent.
        assert_eq!(f.joint("LeftIndexProximal"), None);
        assert_eq!(f.segments.len(), 18 + 1, "{:?}", f.segments);
        let fit = f.fit(200.0, 100.0);
        let at = |view, n| fit.point(view, j(n));
        let [hips_x, _] = at(View::Front, "Hips");
        let [left_x, left_y] = at(View::Front, "LeftHand");
        let [right_x, right_y] = at(View::Front, "RightHand");
        // Facing the viewer: its left hand on the right of the picture.
        assert!(close(hips_x, 100.0));
        assert!(left_x > hips_x + 10.0 && right_x < hips_x - 10.0);
        assert!(close(left_y, right_y));
        // Feet on the ground line; the head below the top.
        assert!(close(at(View::Front, "LeftToes")[1], fit.ground()));
        assert!(at(View::Front, "LeftFoot")[1] > fit.ground());
        let top = f
            .segments
            .iter()
            .find(|s| s.bone == HEAD && s.to != j("Head"));
        let [_, top_y] = fit.point(View::Front, top.unwrap().to);
        assert!(top_y < 100.0 && top_y > 70.0, "{top_y}");
        // From its right side: the toes point right, the arms are at the hips.
        assert!(at(View::Side, "LeftToes")[0] > at(View::Side, "LeftFoot")[0]);
        assert!(close(
            at(View::Side, "LeftHand")[0],
            at(View::Side, "Hips")[0]
        ));
        // Sides come from the names.
        let side = |b| f.segments.iter().find(|s| s.bone == b).unwrap().side;
        assert_eq!(
            side(crate::vmc::bone_index("LeftHand").unwrap()),
            Side::Left
        );
        assert_eq!(
            side(crate::vmc::bone_index("RightFoot").unwrap()),
            Side::Right
        );
        assert_eq!(side(crate::vmc::bone_index("Spine").unwrap()), Side::Centre);
    }

    #[test]
    fn raising_the_left_arm_moves_only_left_segments_in_the_picture() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let t = Figure::of(&t_pose()).unwrap();
        // −90° about Z turns −X (the left arm) to +Y.
        let up = Figure::of(&left_arm([0.0, 0.0, -h, h])).unwrap();
        let hand = up.joint("LeftHand").unwrap();
        let shoulder = up.joint("LeftUpperArm").unwrap();
        assert!(close(hand[0], shoulder[0]) && close(hand[1], shoulder[1] + 0.55));
        let (ft, fu) = (t.fit(100.0, 100.0), up.fit(100.0, 100.0));
        assert_eq!(ft, fu, "the rest pose sets the fit");
        assert_eq!(t.segments.len(), up.segments.len());
        let mut moved = 0;
        for (a, b) in t.segments.iter().zip(&up.segments) {
            assert_eq!((a.bone, a.side), (b.bone, b.side));
            for view in [View::Front, View::Side] {
                let same = ft.point(view, a.from) == fu.point(view, b.from)
                    && ft.point(view, a.to) == fu.point(view, b.to);
                if !same {
                    assert_eq!(a.side, Side::Left, "{a:?} moved");
                    moved += 1;
                }
            }
        }
        assert!(moved >= 2, "{moved}");
    }

    #[test]
    fn a_frame_without_a_body_is_no_figure_and_extremes_do_not_panic() {
        assert_eq!(Figure::of(&BodyPose::default()), None);
        let mut p = BodyPose::default();
        p.set(
            "Hips",
            BonePose {
                pos: [0.0; 3],
                rot: ID,
            },
        );
        assert_eq!(Figure::of(&p), None);
        p.set(
            "Spine",
            BonePose {
                pos: [0.0; 3],
                rot: ID,
            },
        );
        let f = Figure::of(&p).unwrap();
        assert!(f.size > 0.0 && f.fit(0.0, 0.0).scale.is_finite());
        p.set(
            "Chest",
            BonePose {
                pos: [f32::MAX; 3],
                rot: ID,
            },
        );
        p.set(
            "Neck",
            BonePose {
                pos: [f32::MAX; 3],
                rot: ID,
            },
        );
        let f = Figure::of(&p).unwrap();
        let fit = f.fit(10.0, 10.0);
        for s in &f.segments {
            let _ = fit.point(View::Front, s.to);
        }
    }
}
