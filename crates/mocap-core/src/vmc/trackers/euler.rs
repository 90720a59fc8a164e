//! Unity's Euler angles (`Transform.eulerAngles`, `Quaternion.Euler`).

/// Below this cos(X) the Euler decomposition takes Z as 0 (X is then ±90°
/// within 1e-7 degrees, and Z is noise).
const GIMBAL: f64 = 1e-9;

/// Unity's Euler angles `[x, y, z]` in degrees of the rotation `q`, as
/// `Transform.eulerAngles` reads them: `q = q_y · q_x · q_z` (Z applied
/// first, then X, then Y). X is in [−90, 90], Y and Z in [−180, 180]. At
/// X = ±90° only Y ∓ Z is determined; Z is then 0. A quaternion that names
/// no rotation (zero, non-finite) gives `[0, 0, 0]`.
pub fn unity_euler(q: [f64; 4]) -> [f64; 3] {
    // Entries of R = Ry·Rx·Rz (column vectors): R12 = −sin X and
    // (R10, R11) = cos X · (sin Z, cos Z).
    let [[r00, r01, _], [r10, r11, r12], [r20, r21, _]] = crate::quat::to_mat3(q);
    let cos_x = r10.hypot(r11);
    // atan2 rather than asin: asin loses half its digits near ±90°.
    let ex = (-r12).atan2(cos_x);
    // Z from a row scaled by cos X is ill-conditioned near the pole, so Y
    // is solved given Z, from R·Rz(−Z) = Ry·Rx, whose first column is
    // (cos Y, 0, −sin Y) with no cos X factor: whatever Z came out (0 at
    // the pole), Y makes the rotation exact.
    let ez = if cos_x > GIMBAL { r10.atan2(r11) } else { 0.0 };
    let (sz, cz) = ez.sin_cos();
    let ey = (sz * r21 - cz * r20).atan2(cz * r00 - sz * r01);
    // + 0.0 turns −0 into 0, so a reader never sees "-0".
    [ex, ey, ez].map(|a| a.to_degrees() + 0.0)
}

/// The quaternion `[x, y, z, w]` of Unity Euler degrees (`Quaternion.Euler`):
/// `q_y · q_x · q_z`.
pub fn unity_quat(degrees: [f64; 3]) -> [f64; 4] {
    crate::quat::from_euler(crate::quat::EulerOrder::Yxz, degrees)
}
