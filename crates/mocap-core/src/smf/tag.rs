//! The four-byte chunk tags of SMF and their names.

use std::fmt;

/// A four-byte chunk name such as `fram` or `btdt`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag(pub [u8; 4]);

impl Tag {
    /// Header container.
    pub const HEAD: Self = Self(*b"head");
    /// Format name, always `sony motion format`.
    pub const FTYP: Self = Self(*b"ftyp");
    /// Format version, `u8`.
    pub const VRSN: Self = Self(*b"vrsn");
    /// Sender definition container.
    pub const SNDF: Self = Self(*b"sndf");
    /// Decimal-packed IPv4 address, `u64`.
    pub const IPAD: Self = Self(*b"ipad");
    /// Port the app was told to send to, `u16`.
    pub const RCVP: Self = Self(*b"rcvp");
    /// Skeleton definition container.
    pub const SKDF: Self = Self(*b"skdf");
    /// List of bone definitions.
    pub const BONS: Self = Self(*b"bons");
    /// One bone definition.
    pub const BNDT: Self = Self(*b"bndt");
    /// Bone id, `u16`.
    pub const BNID: Self = Self(*b"bnid");
    /// Parent bone id, `i16` (root is -1).
    pub const PBID: Self = Self(*b"pbid");
    /// Transform: rotation x, y, z, w then position x, y, z, seven `f32`.
    pub const TRAN: Self = Self(*b"tran");
    /// Frame container.
    pub const FRAM: Self = Self(*b"fram");
    /// Frame number, `u32`.
    pub const FNUM: Self = Self(*b"fnum");
    /// Sender stream clock in seconds, `f32`.
    pub const TIME: Self = Self(*b"time");
    /// Sender Unix time in seconds, `f64` (newer apps).
    pub const UTTM: Self = Self(*b"uttm");
    /// Timecode, six bytes (newest apps).
    pub const TMCD: Self = Self(*b"tmcd");
    /// List of bone transforms.
    pub const BTRS: Self = Self(*b"btrs");
    /// One bone transform.
    pub const BTDT: Self = Self(*b"btdt");
    /// Sensor data container (third packet kind).
    pub const SNDT: Self = Self(*b"sndt");
    /// Sensor address.
    pub const SNAD: Self = Self(*b"snad");
    /// Sensor name.
    pub const SNNM: Self = Self(*b"snnm");
    /// Joint the sensor is attached to.
    pub const SNJI: Self = Self(*b"snji");
    /// Sensor value.
    pub const SNVL: Self = Self(*b"snvl");

    /// Tags whose payload is itself a sequence of chunks. The wire carries no
    /// flag for this, so a walker has to know the set.
    pub const CONTAINERS: [Self; 9] = [
        Self::HEAD,
        Self::SNDF,
        Self::SKDF,
        Self::BONS,
        Self::BNDT,
        Self::FRAM,
        Self::BTRS,
        Self::BTDT,
        Self::SNDT,
    ];

    /// Whether the payload of this tag is a sequence of chunks.
    pub fn is_container(self) -> bool {
        Self::CONTAINERS.contains(&self)
    }

    /// Whether `self` is a child this decoder reads inside `parent` (`None`:
    /// the top level). Children of `sndt` are all taken as they come.
    pub fn is_known_in(self, parent: Option<Self>) -> bool {
        let known: &[Self] = match parent {
            None => &[Self::HEAD, Self::SNDF, Self::FRAM, Self::SKDF, Self::SNDT],
            Some(Self::HEAD) => &[Self::FTYP, Self::VRSN],
            Some(Self::SNDF) => &[Self::IPAD, Self::RCVP],
            Some(Self::FRAM) => &[Self::FNUM, Self::TIME, Self::UTTM, Self::TMCD, Self::BTRS],
            Some(Self::BTRS) => &[Self::BTDT],
            Some(Self::BTDT) => &[Self::BNID, Self::TRAN],
            Some(Self::SKDF) => &[Self::BONS],
            Some(Self::BONS) => &[Self::BNDT],
            Some(Self::BNDT) => &[Self::BNID, Self::PBID, Self::TRAN],
            Some(Self::SNDT) => return true,
            Some(_) => &[],
        };
        known.contains(&self)
    }

    /// The tag as text, with non-printable bytes escaped (`\x00`).
    pub fn to_text(self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &b in &self.0 {
            if b.is_ascii_graphic() || b == b' ' {
                write!(f, "{}", char::from(b))?;
            } else {
                write!(f, "\\x{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tag({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_escapes_non_printable_bytes() {
        assert_eq!(Tag(*b"fram").to_string(), "fram");
        assert_eq!(Tag([b'a', 0, 0xff, b' ']).to_string(), "a\\x00\\xff ");
    }

    #[test]
    fn containers_are_known() {
        assert!(Tag::BTDT.is_container());
        assert!(!Tag::TRAN.is_container());
    }
}
