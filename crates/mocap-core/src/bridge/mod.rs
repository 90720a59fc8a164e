//! Bridges from tracker protocols into VMC. Pure: frames in, VMC messages out
//! (iFacialMocap face; mocopi body retargeting).
//! See `docs/bridges.md`.

mod body;
mod face;

pub use body::{
    ANIMU_SPHERE_MAPPING, BodyBridge, BodyOptions, Mapping, MappingTable, Retarget, SONY_MAPPING,
    SkeletonEvent, default_parents, parse_mapping, pos_to_unity, rot_to_unity,
};
pub use face::{
    BlendCase, FaceBridge, FaceOptions, HeadAxes, OnLost, arkit_to_unity, euler_to_quat,
};

/// Hamilton product of quaternions (x, y, z, w): `a · b` applies `b` first.
fn quat_mul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}
