//! The 27 joints of the mocopi skeleton, as Sony's skeleton definition names them.

/// One joint of the mocopi skeleton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoneInfo {
    /// Bone id on the wire (`bnid`).
    pub id: u16,
    /// Sony's name for the joint.
    pub name: &'static str,
    /// Parent id (`pbid`); -1 for the root.
    pub parent: i16,
}

const fn bone(id: u16, name: &'static str, parent: i16) -> BoneInfo {
    BoneInfo { id, name, parent }
}

/// Number of joints in the mocopi skeleton.
pub const BONE_COUNT: usize = 27;

/// The mocopi skeleton, indexed by bone id. Parents are those every skeleton
/// packet carries; `l_*` is the performer's left.
pub const BONES: [BoneInfo; BONE_COUNT] = [
    bone(0, "root", -1),
    bone(1, "torso_1", 0),
    bone(2, "torso_2", 1),
    bone(3, "torso_3", 2),
    bone(4, "torso_4", 3),
    bone(5, "torso_5", 4),
    bone(6, "torso_6", 5),
    bone(7, "torso_7", 6),
    bone(8, "neck_1", 7),
    bone(9, "neck_2", 8),
    bone(10, "head", 9),
    bone(11, "l_shoulder", 7),
    bone(12, "l_up_arm", 11),
    bone(13, "l_low_arm", 12),
    bone(14, "l_hand", 13),
    bone(15, "r_shoulder", 7),
    bone(16, "r_up_arm", 15),
    bone(17, "r_low_arm", 16),
    bone(18, "r_hand", 17),
    bone(19, "l_up_leg", 0),
    bone(20, "l_low_leg", 19),
    bone(21, "l_foot", 20),
    bone(22, "l_toes", 21),
    bone(23, "r_up_leg", 0),
    bone(24, "r_low_leg", 23),
    bone(25, "r_foot", 24),
    bone(26, "r_toes", 25),
];

/// The joint with this wire id, if it is one of the 27.
pub fn bone_info(id: u16) -> Option<&'static BoneInfo> {
    BONES.get(usize::from(id))
}

/// Sony's name for the joint with this wire id.
pub fn bone_name(id: u16) -> Option<&'static str> {
    bone_info(id).map(|b| b.name)
}

/// The id of the joint with this name.
pub fn bone_id(name: &str) -> Option<u16> {
    BONES.iter().find(|b| b.name == name).map(|b| b.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_id_and_parents_come_first() {
        for (i, b) in BONES.iter().enumerate() {
            assert_eq!(usize::from(b.id), i);
            assert!(b.parent < b.id as i16, "{} has a later parent", b.name);
        }
        assert_eq!(bone_name(10), Some("head"));
        assert_eq!(bone_id("r_toes"), Some(26));
        assert_eq!(bone_name(27), None);
    }
}
