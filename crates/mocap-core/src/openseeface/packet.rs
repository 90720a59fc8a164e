//! The checked, zero-copy view of one OpenSeeFace datagram ([`parse`]).

use super::{Error, ErrorKind, FACE_LEN, FEATURES, Field, Result, Warning, WarningKind};
use crate::wire::Cursor;

/// Byte offsets inside a face.
mod at {
    pub(super) const TIME: usize = 0;
    pub(super) const ID: usize = 8;
    pub(super) const RESOLUTION: usize = 12;
    pub(super) const EYES: usize = 20;
    pub(super) const SUCCESS: usize = 28;
    pub(super) const FIT_ERROR: usize = 29;
    pub(super) const QUATERNION: usize = 33;
    pub(super) const EULER: usize = 49;
    pub(super) const TRANSLATION: usize = 61;
    /// The end of the fixed head of a face: what a sniff of a cut datagram reads.
    pub(super) const HEADER_END: usize = 73;
    pub(super) const CONFIDENCE: usize = HEADER_END;
    pub(super) const LANDMARKS: usize = CONFIDENCE + 4 * super::super::LANDMARKS;
    pub(super) const POINTS_3D: usize = LANDMARKS + 8 * super::super::LANDMARKS;
    pub(super) const FEATURES: usize = POINTS_3D + 12 * super::super::POINTS_3D;
}

const _: () = assert!(at::FEATURES + 4 * FEATURES.len() == FACE_LEN);

/// A checked view of one datagram: whole faces, every accessor infallible.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet<'a> {
    faces: &'a [[u8; FACE_LEN]],
}

/// One face, read in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Face<'a> {
    bytes: &'a [u8; FACE_LEN],
}

/// Reads a datagram of whole faces.
///
/// # Errors
/// [`ErrorKind::Empty`] for no bytes, [`ErrorKind::Truncated`] at the offset
/// of a face that is cut (or of bytes after the last whole face).
pub fn parse(datagram: &[u8]) -> Result<Packet<'_>> {
    if datagram.is_empty() {
        return Err(Error::new(0, Field::Face, ErrorKind::Empty));
    }
    let (faces, rest) = datagram.as_chunks::<FACE_LEN>();
    if !rest.is_empty() {
        Cursor::at(rest, faces.len().saturating_mul(FACE_LEN)).bytes(FACE_LEN, Field::Face)?;
    }
    Ok(Packet { faces })
}

/// Whether `bytes` start with a face head whose values are all believable:
/// the check a sniff of a cut datagram makes, and a whole face's
/// [`Face::plausible`].
pub(super) fn plausible_head(bytes: &[u8]) -> bool {
    let mut odd = false;
    head_warnings(bytes, 0, &mut |_| odd = true).is_some() && !odd
}

/// The warnings of a face head at `base` in its datagram; `None` when the
/// head does not fit in `bytes`.
fn head_warnings(bytes: &[u8], base: usize, warn: &mut dyn FnMut(Warning)) -> Option<()> {
    let time = f64::from_le_bytes(*bytes.get(at::TIME..)?.first_chunk::<8>()?);
    let [w, h] = floats(bytes, at::RESOLUTION)?;
    let eyes: [f32; 2] = floats(bytes, at::EYES)?;
    let success = *bytes.get(at::SUCCESS)?;
    if bytes.len() < at::HEADER_END {
        return None;
    }
    let mut odd = |offset: usize, field, kind| warn(Warning::new(base + offset, field, kind));
    if !(time.is_finite() && time >= 0.0) {
        odd(at::TIME, Field::Time, WarningKind::Time);
    }
    let size = |v: f32| (1.0..=65536.0).contains(&v) && v.fract() == 0.0;
    if !(size(w) && size(h)) {
        odd(at::RESOLUTION, Field::Resolution, WarningKind::Resolution);
    }
    if !eyes.iter().all(|e| (0.0..=1.0).contains(e)) {
        odd(at::EYES, Field::EyeOpen, WarningKind::EyeOpen);
    }
    if success > 1 {
        odd(at::SUCCESS, Field::Success, WarningKind::Success(success));
    }
    Some(())
}

/// `N` little-endian `f32` from `at`, if they fit.
fn floats<const N: usize>(bytes: &[u8], at: usize) -> Option<[f32; N]> {
    let (chunks, _) = bytes.get(at..)?.as_chunks::<4>();
    let mut out = [0.0; N];
    for (o, c) in out.iter_mut().zip(chunks) {
        *o = f32::from_le_bytes(*c);
    }
    (chunks.len() >= N).then_some(out)
}

impl<'a> Packet<'a> {
    /// The faces, in the order the tracker sent them.
    pub fn faces(&self) -> impl ExactSizeIterator<Item = Face<'a>> + 'a {
        self.faces.iter().map(|bytes| Face { bytes })
    }

    /// How many faces the datagram carries (at least one).
    pub fn len(&self) -> usize {
        self.faces.len()
    }

    /// Always `false`: [`parse`] refuses an empty datagram.
    pub fn is_empty(&self) -> bool {
        self.faces.is_empty()
    }

    /// The odd values of every face, in wire order.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut w = Vec::new();
        for (i, face) in self.faces().enumerate() {
            let base = i.saturating_mul(FACE_LEN);
            head_warnings(face.bytes, base, &mut |x| w.push(x));
            for (index, v) in face.features().map(|(_, v)| v).enumerate() {
                if !v.is_finite() {
                    let offset = base + at::FEATURES + 4 * index;
                    w.push(Warning::new(
                        offset,
                        Field::Features,
                        WarningKind::NonFinite { index },
                    ));
                }
            }
        }
        w
    }
}

impl<'a> Face<'a> {
    /// The sender's clock when it sent the frame, seconds since 1970.
    pub fn time(&self) -> f64 {
        self.bytes
            .first_chunk::<8>()
            .map_or(f64::NAN, |b| f64::from_le_bytes(*b))
    }

    /// The tracker's id of this face, stable while it stays in view.
    pub fn id(&self) -> i32 {
        self.bytes
            .get(at::ID..)
            .and_then(<[u8]>::first_chunk::<4>)
            .map_or(0, |b| i32::from_le_bytes(*b))
    }

    /// The camera's width and height in pixels.
    pub fn resolution(&self) -> [f32; 2] {
        self.floats(at::RESOLUTION)
    }

    /// Right and left eye openness, 1 open to 0 shut (the person's right
    /// and left).
    pub fn eyes_open(&self) -> [f32; 2] {
        self.floats(at::EYES)
    }

    /// The success byte as sent.
    pub fn success_byte(&self) -> u8 {
        self.bytes.get(at::SUCCESS).copied().unwrap_or_default()
    }

    /// Whether the 3D fit succeeded: the pose and 3D points mean something.
    pub fn success(&self) -> bool {
        self.success_byte() != 0
    }

    /// The 3D fit's error.
    pub fn fit_error(&self) -> f32 {
        let [e] = self.floats(at::FIT_ERROR);
        e
    }

    /// The head rotation quaternion `[x, y, z, w]`, in the tracker's camera
    /// frame.
    pub fn quaternion(&self) -> [f32; 4] {
        self.floats(at::QUATERNION)
    }

    /// The head's Euler angles x, y, z in degrees, as the tracker's
    /// decomposition gives them (the Unity receiver offsets x by 180° and z
    /// by −90° to face the camera).
    pub fn euler(&self) -> [f32; 3] {
        self.floats(at::EULER)
    }

    /// The head's translation x, y, z in the tracker's camera frame.
    pub fn translation(&self) -> [f32; 3] {
        self.floats(at::TRANSLATION)
    }

    /// The 68 landmark confidences.
    pub fn confidences(&self) -> impl ExactSizeIterator<Item = f32> + 'a {
        self.region(at::CONFIDENCE, at::LANDMARKS)
            .iter()
            .map(|b| f32::from_le_bytes(*b))
    }

    /// The 68 landmarks: pixel column, then row.
    pub fn landmarks(&self) -> impl ExactSizeIterator<Item = [f32; 2]> + 'a {
        let (pairs, _) = self.region(at::LANDMARKS, at::POINTS_3D).as_chunks::<2>();
        pairs.iter().map(|p| p.map(f32::from_le_bytes))
    }

    /// The 70 3D points `[x, y, z]` as sent: the landmarks, then the right
    /// and left eyeball centres; zeros when the fit failed.
    pub fn points_3d(&self) -> impl ExactSizeIterator<Item = [f32; 3]> + 'a {
        let (points, _) = self.region(at::POINTS_3D, at::FEATURES).as_chunks::<3>();
        points.iter().map(|p| p.map(f32::from_le_bytes))
    }

    /// The 14 features by name ([`FEATURES`]), in wire order.
    pub fn features(&self) -> impl ExactSizeIterator<Item = (&'static str, f32)> + 'a {
        FEATURES
            .iter()
            .copied()
            .zip(self.region(at::FEATURES, FACE_LEN))
            .map(|(name, b)| (name, f32::from_le_bytes(*b)))
    }

    /// Whether every value of the head is believable (no warning on it).
    pub fn plausible(&self) -> bool {
        plausible_head(self.bytes)
    }

    /// The bytes of the face.
    pub fn bytes(&self) -> &'a [u8; FACE_LEN] {
        self.bytes
    }

    fn floats<const N: usize>(&self, at: usize) -> [f32; N] {
        floats(self.bytes, at).unwrap_or([f32::NAN; N])
    }

    /// The `f32`s from `start` to `end`.
    fn region(&self, start: usize, end: usize) -> &'a [[u8; 4]] {
        let bytes: &'a [u8; FACE_LEN] = self.bytes;
        bytes.get(start..end).unwrap_or_default().as_chunks::<4>().0
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::indexing_slicing,
        clippy::unwrap_used,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    /// A face with believable values: a 640×480 camera, eyes open.
    fn face() -> Vec<u8> {
        let mut f = vec![0u8; FACE_LEN];
        f[..8].copy_from_slice(&1_765_000_000.0f64.to_le_bytes());
        f[12..16].copy_from_slice(&640f32.to_le_bytes());
        f[16..20].copy_from_slice(&480f32.to_le_bytes());
        f[20..24].copy_from_slice(&1f32.to_le_bytes());
        f[24..28].copy_from_slice(&1f32.to_le_bytes());
        f[28] = 1;
        f
    }

    #[test]
    fn whole_faces_decode_and_a_cut_one_is_refused_at_its_offset() {
        let mut two = face();
        two.extend(face());
        assert_eq!(parse(&two).unwrap().len(), 2);
        let e = parse(&two[..2 * FACE_LEN - 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "truncated: need 1785 bytes, have 1784 at offset 1785 in `face`"
        );
        let e = parse(&two[..FACE_LEN + 3]).unwrap_err();
        assert_eq!((e.offset, e.field), (FACE_LEN, Field::Face));
        assert_eq!(parse(&[]).unwrap_err().kind, ErrorKind::Empty);
        assert!(parse(&two[..72]).is_err());
    }

    #[test]
    fn odd_values_are_warnings_at_their_offsets() {
        let good = face();
        assert_eq!(parse(&good).unwrap().warnings(), []);
        let mut odd = good.clone();
        odd.extend(&good);
        let second = FACE_LEN;
        odd[second + 28] = 2;
        odd[second + 20..second + 24].copy_from_slice(&1.5f32.to_le_bytes());
        odd[second + 12..second + 16].copy_from_slice(&640.5f32.to_le_bytes());
        odd[second..second + 8].copy_from_slice(&f64::NAN.to_le_bytes());
        odd[FACE_LEN - 4..FACE_LEN].copy_from_slice(&f32::INFINITY.to_le_bytes());
        let p = parse(&odd).unwrap();
        let w: Vec<String> = p.warnings().iter().map(ToString::to_string).collect();
        assert_eq!(
            w,
            [
                "feature 13 is not finite at offset 1781 in `features`",
                "clock is not a time at offset 1785 in `time`",
                "resolution is not whole pixels from 1 to 65536 at offset 1797 in `resolution`",
                "eye openness is outside 0 to 1 at offset 1805 in `eye_open`",
                "success byte 2 (expected 0 or 1) at offset 1813 in `success`",
            ]
        );
        let plausible: Vec<bool> = p.faces().map(|f| f.plausible()).collect();
        assert_eq!(plausible, [true, false]);
        // A feature is no part of the head: only the second face is odd.
        assert!(plausible_head(&odd[..at::HEADER_END]));
        assert!(!plausible_head(&odd[..at::HEADER_END - 1]));
    }

    #[test]
    fn arrays_have_their_counts() {
        let bytes = face();
        let f = parse(&bytes).unwrap().faces().next().unwrap();
        assert_eq!(f.confidences().len(), 68);
        assert_eq!(f.landmarks().len(), 68);
        assert_eq!(f.points_3d().len(), 70);
        assert_eq!(f.features().len(), 14);
        assert!(f.success());
    }
}
