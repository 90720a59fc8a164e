//! Unity HumanBodyBones names (the `Bone/Pos` name) and VRM expression names.

/// The longest bone or blendshape name a receiver keeps state for (the
/// longest real one is under 40 bytes): state keyed by longer names, which
/// only a hostile sender makes, is skipped, so a name costs bounded memory.
pub const MAX_NAME_LEN: usize = 128;

/// Unity's `HumanBodyBones`, indexed by the enum value (UpperChest, added
/// later, is 54). `LastBone` (55) is never valid on the wire.
pub const HUMAN_BODY_BONES: [&str; 55] = [
    "Hips",
    "LeftUpperLeg",
    "RightUpperLeg",
    "LeftLowerLeg",
    "RightLowerLeg",
    "LeftFoot",
    "RightFoot",
    "Spine",
    "Chest",
    "Neck",
    "Head",
    "LeftShoulder",
    "RightShoulder",
    "LeftUpperArm",
    "RightUpperArm",
    "LeftLowerArm",
    "RightLowerArm",
    "LeftHand",
    "RightHand",
    "LeftToes",
    "RightToes",
    "LeftEye",
    "RightEye",
    "Jaw",
    "LeftThumbProximal",
    "LeftThumbIntermediate",
    "LeftThumbDistal",
    "LeftIndexProximal",
    "LeftIndexIntermediate",
    "LeftIndexDistal",
    "LeftMiddleProximal",
    "LeftMiddleIntermediate",
    "LeftMiddleDistal",
    "LeftRingProximal",
    "LeftRingIntermediate",
    "LeftRingDistal",
    "LeftLittleProximal",
    "LeftLittleIntermediate",
    "LeftLittleDistal",
    "RightThumbProximal",
    "RightThumbIntermediate",
    "RightThumbDistal",
    "RightIndexProximal",
    "RightIndexIntermediate",
    "RightIndexDistal",
    "RightMiddleProximal",
    "RightMiddleIntermediate",
    "RightMiddleDistal",
    "RightRingProximal",
    "RightRingIntermediate",
    "RightRingDistal",
    "RightLittleProximal",
    "RightLittleIntermediate",
    "RightLittleDistal",
    "UpperChest",
];

/// The `HumanBodyBones` value of a bone name (case-sensitive, as Unity parses it).
pub fn bone_index(name: &str) -> Option<usize> {
    HUMAN_BODY_BONES.iter().position(|b| *b == name)
}

/// VRM 0.x preset expressions, as VMC senders write them.
pub const VRM0_PRESETS: [&str; 17] = [
    "Neutral",
    "A",
    "I",
    "U",
    "E",
    "O",
    "Blink",
    "Joy",
    "Angry",
    "Sorrow",
    "Fun",
    "LookUp",
    "LookDown",
    "LookLeft",
    "LookRight",
    "Blink_L",
    "Blink_R",
];

/// VRM 1.0 preset expressions.
pub const VRM1_PRESETS: [&str; 18] = [
    "happy",
    "angry",
    "sad",
    "relaxed",
    "surprised",
    "aa",
    "ih",
    "ou",
    "ee",
    "oh",
    "blink",
    "blinkLeft",
    "blinkRight",
    "lookUp",
    "lookDown",
    "lookLeft",
    "lookRight",
    "neutral",
];

/// The VMC specification's VRM0 → VRM1 mapping (names with the same
/// meaning); the reverse direction is the same table read backwards.
pub const VRM0_TO_VRM1: [(&str, &str); 17] = [
    ("Neutral", "neutral"),
    ("A", "aa"),
    ("I", "ih"),
    ("U", "ou"),
    ("E", "ee"),
    ("O", "oh"),
    ("Blink", "blink"),
    ("Joy", "happy"),
    ("Angry", "angry"),
    ("Sorrow", "sad"),
    ("Fun", "relaxed"),
    ("LookUp", "lookUp"),
    ("LookDown", "lookDown"),
    ("LookLeft", "lookLeft"),
    ("LookRight", "lookRight"),
    ("Blink_L", "blinkLeft"),
    ("Blink_R", "blinkRight"),
];

/// The VRM1 name of a VRM0 preset (other names, e.g. PerfectSync's ARKit
/// names, are returned unchanged).
pub fn vrm0_to_vrm1(name: &str) -> &str {
    VRM0_TO_VRM1
        .iter()
        .find(|(v0, _)| *v0 == name)
        .map_or(name, |(_, v1)| v1)
}

/// The VRM0 name of a VRM1 preset (`surprised` has no VRM0 preset and is kept).
pub fn vrm1_to_vrm0(name: &str) -> &str {
    VRM0_TO_VRM1
        .iter()
        .find(|(_, v1)| *v1 == name)
        .map_or(name, |(v0, _)| v0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        assert_eq!(bone_index("Hips"), Some(0));
        assert_eq!(bone_index("Head"), Some(10));
        assert_eq!(bone_index("UpperChest"), Some(54));
        assert_eq!(bone_index("LeftLittleDistal"), Some(38));
        assert_eq!(bone_index("head"), None);
        assert_eq!(vrm0_to_vrm1("Joy"), "happy");
        assert_eq!(vrm1_to_vrm0("blinkLeft"), "Blink_L");
        assert_eq!(vrm0_to_vrm1("eyeBlinkLeft"), "eyeBlinkLeft");
        for (v0, v1) in VRM0_TO_VRM1 {
            assert!(VRM0_PRESETS.contains(&v0) && VRM1_PRESETS.contains(&v1));
            assert_eq!(vrm1_to_vrm0(vrm0_to_vrm1(v0)), v0);
        }
    }
}
