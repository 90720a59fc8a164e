//! Tracker slots as VRChat numbers them, and the `--trackers` selection.

use std::fmt;
use std::str::FromStr;

use super::{
    CHEST, HIPS, HUMAN_BODY_BONES, LEFT_FOOT, LEFT_LOWER_ARM, LEFT_LOWER_LEG, RIGHT_FOOT,
    RIGHT_LOWER_ARM, RIGHT_LOWER_LEG, SLOTS, UPPER_CHEST,
};

/// A tracker slot, numbered as SlimeVR numbers VRChat's trackers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// 1: Hips.
    Hips,
    /// 2: LeftFoot.
    LeftFoot,
    /// 3: RightFoot.
    RightFoot,
    /// 4: LeftLowerLeg (the knee).
    LeftKnee,
    /// 5: RightLowerLeg.
    RightKnee,
    /// 6: Chest, or UpperChest when the sender has no Chest.
    Chest,
    /// 7: LeftLowerArm (the elbow).
    LeftElbow,
    /// 8: RightLowerArm.
    RightElbow,
}

impl Slot {
    /// Every slot, in number order.
    pub const ALL: [Self; SLOTS] = [
        Self::Hips,
        Self::LeftFoot,
        Self::RightFoot,
        Self::LeftKnee,
        Self::RightKnee,
        Self::Chest,
        Self::LeftElbow,
        Self::RightElbow,
    ];

    /// Position in [`Slot::ALL`] (0–7): the VMT index less the base.
    pub fn index(self) -> usize {
        self as usize
    }

    /// VRChat's tracker number (1–8).
    pub fn number(self) -> u8 {
        self as u8 + 1
    }

    /// The HumanBodyBones name of the bone the tracker sits on (for Chest,
    /// the preferred one).
    pub fn bone(self) -> &'static str {
        HUMAN_BODY_BONES
            .get(self.bones().0)
            .copied()
            .unwrap_or("Hips")
    }

    /// The bone, and the one to use when the sender has not sent it.
    pub(super) fn bones(self) -> (usize, Option<usize>) {
        match self {
            Self::Hips => (HIPS, None),
            Self::LeftFoot => (LEFT_FOOT, None),
            Self::RightFoot => (RIGHT_FOOT, None),
            Self::LeftKnee => (LEFT_LOWER_LEG, None),
            Self::RightKnee => (RIGHT_LOWER_LEG, None),
            // Chest is optional in Unity's humanoid; UpperChest is the
            // nearest place a chest puck could be. Spine would be the waist.
            Self::Chest => (CHEST, Some(UPPER_CHEST)),
            Self::LeftElbow => (LEFT_LOWER_ARM, None),
            Self::RightElbow => (RIGHT_LOWER_ARM, None),
        }
    }

    /// VRChat's position and rotation addresses (built once, not per frame).
    pub(super) fn addresses(self) -> (&'static str, &'static str) {
        match self {
            Self::Hips => (
                "/tracking/trackers/1/position",
                "/tracking/trackers/1/rotation",
            ),
            Self::LeftFoot => (
                "/tracking/trackers/2/position",
                "/tracking/trackers/2/rotation",
            ),
            Self::RightFoot => (
                "/tracking/trackers/3/position",
                "/tracking/trackers/3/rotation",
            ),
            Self::LeftKnee => (
                "/tracking/trackers/4/position",
                "/tracking/trackers/4/rotation",
            ),
            Self::RightKnee => (
                "/tracking/trackers/5/position",
                "/tracking/trackers/5/rotation",
            ),
            Self::Chest => (
                "/tracking/trackers/6/position",
                "/tracking/trackers/6/rotation",
            ),
            Self::LeftElbow => (
                "/tracking/trackers/7/position",
                "/tracking/trackers/7/rotation",
            ),
            Self::RightElbow => (
                "/tracking/trackers/8/position",
                "/tracking/trackers/8/rotation",
            ),
        }
    }
}

/// The groups a [`Selection`] is written with, in display order.
const GROUPS: [(&str, &[Slot]); 5] = [
    ("hips", &[Slot::Hips]),
    ("feet", &[Slot::LeftFoot, Slot::RightFoot]),
    ("knees", &[Slot::LeftKnee, Slot::RightKnee]),
    ("chest", &[Slot::Chest]),
    ("elbows", &[Slot::LeftElbow, Slot::RightElbow]),
];

/// Which slots to send: parsed from group names separated by commas
/// (`hips`, `feet`, `knees`, `chest`, `elbows`, `all`; any case, spaces
/// around names allowed). The default is all eight.
///
/// ```
/// use mocap_core::vmc::trackers::{Selection, Slot};
///
/// let s: Selection = "hips, feet".parse()?;
/// assert!(s.contains(Slot::RightFoot) && !s.contains(Slot::Chest));
/// assert_eq!(s.to_string(), "hips,feet");
/// assert!("hips,tail".parse::<Selection>().is_err());
/// # Ok::<(), mocap_core::vmc::trackers::SelectionError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Selection(u8);

impl Selection {
    /// All eight slots.
    pub const ALL: Self = Self(0xff);

    /// Whether `slot` is selected.
    pub fn contains(self, slot: Slot) -> bool {
        self.0 & (1 << slot.index()) != 0
    }

    /// The selected slots, in number order.
    pub fn slots(self) -> impl Iterator<Item = Slot> {
        Slot::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// How many slots are selected.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// No slot selected (parsing never gives this).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn with(self, slots: &[Slot]) -> Self {
        Self(slots.iter().fold(self.0, |b, s| b | 1 << s.index()))
    }
}

impl Default for Selection {
    fn default() -> Self {
        Self::ALL
    }
}

impl FromStr for Selection {
    type Err = SelectionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut out = Self(0);
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name.eq_ignore_ascii_case("all") {
                out = Self::ALL;
                continue;
            }
            let (_, slots) = GROUPS
                .iter()
                .find(|(g, _)| g.eq_ignore_ascii_case(name))
                .ok_or_else(|| SelectionError::Unknown(name.to_owned()))?;
            out = out.with(slots);
        }
        if out.is_empty() {
            return Err(SelectionError::Empty);
        }
        Ok(out)
    }
}

impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::ALL {
            return f.write_str("all");
        }
        let mut sep = "";
        for (name, slots) in GROUPS {
            if slots.iter().all(|s| self.contains(*s)) {
                write!(f, "{sep}{name}")?;
                sep = ",";
            }
        }
        Ok(())
    }
}

/// Why a tracker selection does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectionError {
    /// No group named.
    Empty,
    /// A name that is not a group.
    Unknown(String),
}

impl fmt::Display for SelectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("no tracker group given"),
            Self::Unknown(name) => write!(f, "unknown tracker group {name:?}"),
        }?;
        f.write_str(" (expected a comma-separated list of hips, feet, knees, chest, elbows, all)")
    }
}

impl std::error::Error for SelectionError {}
