//! The 52 ARKit blendshapes, and how iFacialMocap spells them on the wire.

/// ARKit's blendshape names (`ARFaceAnchor.BlendShapeLocation`), in Apple's
/// documented order. iFacialMocap sends the sided ones with `_L`/`_R` instead
/// of `Left`/`Right`; Facemotion3d sends them as here.
pub const ARKIT: [&str; 52] = [
    "eyeBlinkLeft",
    "eyeLookDownLeft",
    "eyeLookInLeft",
    "eyeLookOutLeft",
    "eyeLookUpLeft",
    "eyeSquintLeft",
    "eyeWideLeft",
    "eyeBlinkRight",
    "eyeLookDownRight",
    "eyeLookInRight",
    "eyeLookOutRight",
    "eyeLookUpRight",
    "eyeSquintRight",
    "eyeWideRight",
    "jawForward",
    "jawLeft",
    "jawRight",
    "jawOpen",
    "mouthClose",
    "mouthFunnel",
    "mouthPucker",
    "mouthLeft",
    "mouthRight",
    "mouthSmileLeft",
    "mouthSmileRight",
    "mouthFrownLeft",
    "mouthFrownRight",
    "mouthDimpleLeft",
    "mouthDimpleRight",
    "mouthStretchLeft",
    "mouthStretchRight",
    "mouthRollLower",
    "mouthRollUpper",
    "mouthShrugLower",
    "mouthShrugUpper",
    "mouthPressLeft",
    "mouthPressRight",
    "mouthLowerDownLeft",
    "mouthLowerDownRight",
    "mouthUpperUpLeft",
    "mouthUpperUpRight",
    "browDownLeft",
    "browDownRight",
    "browInnerUp",
    "browOuterUpLeft",
    "browOuterUpRight",
    "cheekPuff",
    "cheekSquintLeft",
    "cheekSquintRight",
    "noseSneerLeft",
    "noseSneerRight",
    "tongueOut",
];

/// ARKit names that end in Left/Right but are not one side of a pair: the
/// jaw and mouth moving sideways. iFacialMocap sends them as they are.
const SIDEWAYS: [&str; 4] = ["jawLeft", "jawRight", "mouthLeft", "mouthRight"];

/// The index in [`ARKIT`] of a name as either app sends it: `eyeBlink_L`
/// (iFacialMocap) or `eyeBlinkLeft` (Facemotion3d, ARKit).
pub fn arkit_index(wire: &str) -> Option<usize> {
    // A match compiles to length and byte comparisons: no scan, no allocation.
    Some(match wire {
        "eyeBlinkLeft" | "eyeBlink_L" => 0,
        "eyeLookDownLeft" | "eyeLookDown_L" => 1,
        "eyeLookInLeft" | "eyeLookIn_L" => 2,
        "eyeLookOutLeft" | "eyeLookOut_L" => 3,
        "eyeLookUpLeft" | "eyeLookUp_L" => 4,
        "eyeSquintLeft" | "eyeSquint_L" => 5,
        "eyeWideLeft" | "eyeWide_L" => 6,
        "eyeBlinkRight" | "eyeBlink_R" => 7,
        "eyeLookDownRight" | "eyeLookDown_R" => 8,
        "eyeLookInRight" | "eyeLookIn_R" => 9,
        "eyeLookOutRight" | "eyeLookOut_R" => 10,
        "eyeLookUpRight" | "eyeLookUp_R" => 11,
        "eyeSquintRight" | "eyeSquint_R" => 12,
        "eyeWideRight" | "eyeWide_R" => 13,
        "jawForward" => 14,
        "jawLeft" => 15,
        "jawRight" => 16,
        "jawOpen" => 17,
        "mouthClose" => 18,
        "mouthFunnel" => 19,
        "mouthPucker" => 20,
        "mouthLeft" => 21,
        "mouthRight" => 22,
        "mouthSmileLeft" | "mouthSmile_L" => 23,
        "mouthSmileRight" | "mouthSmile_R" => 24,
        "mouthFrownLeft" | "mouthFrown_L" => 25,
        "mouthFrownRight" | "mouthFrown_R" => 26,
        "mouthDimpleLeft" | "mouthDimple_L" => 27,
        "mouthDimpleRight" | "mouthDimple_R" => 28,
        "mouthStretchLeft" | "mouthStretch_L" => 29,
        "mouthStretchRight" | "mouthStretch_R" => 30,
        "mouthRollLower" => 31,
        "mouthRollUpper" => 32,
        "mouthShrugLower" => 33,
        "mouthShrugUpper" => 34,
        "mouthPressLeft" | "mouthPress_L" => 35,
        "mouthPressRight" | "mouthPress_R" => 36,
        "mouthLowerDownLeft" | "mouthLowerDown_L" => 37,
        "mouthLowerDownRight" | "mouthLowerDown_R" => 38,
        "mouthUpperUpLeft" | "mouthUpperUp_L" => 39,
        "mouthUpperUpRight" | "mouthUpperUp_R" => 40,
        "browDownLeft" | "browDown_L" => 41,
        "browDownRight" | "browDown_R" => 42,
        "browInnerUp" => 43,
        "browOuterUpLeft" | "browOuterUp_L" => 44,
        "browOuterUpRight" | "browOuterUp_R" => 45,
        "cheekPuff" => 46,
        "cheekSquintLeft" | "cheekSquint_L" => 47,
        "cheekSquintRight" | "cheekSquint_R" => 48,
        "noseSneerLeft" | "noseSneer_L" => 49,
        "noseSneerRight" | "noseSneer_R" => 50,
        "tongueOut" => 51,
        _ => return None,
    })
}

/// How iFacialMocap spells an ARKit name on the wire (`eyeBlinkLeft` → `eyeBlink_L`).
pub fn wire_name(arkit: &str) -> String {
    if SIDEWAYS.contains(&arkit) {
        return arkit.to_owned();
    }
    if let Some(s) = arkit.strip_suffix("Left") {
        format!("{s}_L")
    } else if let Some(s) = arkit.strip_suffix("Right") {
        format!("{s}_R")
    } else {
        arkit.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_spellings_map_to_arkit() {
        assert_eq!(arkit_index("eyeBlink_L"), Some(0));
        assert_eq!(arkit_index("eyeBlinkLeft"), Some(0));
        assert_eq!(arkit_index("mouthRight"), Some(22));
        assert_eq!(arkit_index("mouthSmile_R"), Some(24));
        assert_eq!(arkit_index("jawOpen"), Some(17));
        assert_eq!(arkit_index("browInnerUp_L"), None);
        assert_eq!(arkit_index("hapihapi"), None);
        assert_eq!(arkit_index("_L"), None);
        for (i, n) in ARKIT.iter().enumerate() {
            assert_eq!(arkit_index(n), Some(i));
            assert_eq!(arkit_index(&wire_name(n)), Some(i), "{n}");
        }
        assert_eq!(wire_name("mouthLeft"), "mouthLeft");
        assert_eq!(arkit_index("mouth_L"), None);
        assert_eq!(wire_name("mouthSmileLeft"), "mouthSmile_L");
    }
}
