//! The protocols this crate speaks, as a registry: each with its name, its
//! default UDP ports and a content sniff (`bytes -> confidence`) that looks
//! at the shape of a datagram without decoding it, so a tool can say what
//! arrived on its port when it is not its own protocol.
//!
//! ```
//! use mocap_core::protocol::{Confidence, Protocol, recognise};
//!
//! use mocap_core::osc::{Arg, Message, message};
//!
//! let vmc = message(&Message::new("/VMC/Ext/OK", vec![Arg::Int(1)]))?;
//! assert_eq!(recognise(&vmc), Some((Protocol::Vmc, Confidence::Certain)));
//! assert_eq!(Protocol::Vmc.name(), "VMC (OSC)");
//! assert_eq!(recognise(b"hello"), None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::{ifm, livelink, smf, vmc};

/// A protocol of the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Protocol {
    /// Sony mocopi's motion stream ([`smf`]).
    Mocopi,
    /// VMC, and OSC in general ([`vmc`], [`crate::osc`]).
    Vmc,
    /// iFacialMocap / Facemotion3d face frames ([`ifm`]).
    IFacialMocap,
    /// Epic's Live Link Face ([`livelink`]).
    LiveLink,
    /// VRChat's OSC input: avatar parameters, trackers, chatbox
    /// ([`vmc::trackers`] writes its trackers).
    Vrchat,
    /// The VMT driver's OSC trackers inside SteamVR ([`vmc::trackers`]).
    Vmt,
}

/// How sure a sniff is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Confidence {
    /// The start has the protocol's shape, the rest was not checked or does
    /// not add up (a cut or damaged datagram of it, perhaps).
    Likely,
    /// The framing adds up over the whole datagram.
    Certain,
}

impl Protocol {
    /// Every protocol, in the order [`recognise`] prefers on a tie.
    pub const ALL: [Self; 6] = [
        Self::Mocopi,
        Self::Vmc,
        Self::IFacialMocap,
        Self::LiveLink,
        Self::Vrchat,
        Self::Vmt,
    ];

    /// The name people know it by.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Mocopi => "mocopi",
            Self::Vmc => "VMC (OSC)",
            Self::IFacialMocap => "iFacialMocap",
            Self::LiveLink => "Live Link Face",
            Self::Vrchat => "VRChat OSC",
            Self::Vmt => "VMT",
        }
    }

    /// A short lowercase name for keys and JSON fields (`mocopi`, `vmc`,
    /// `ifacialmocap`, `livelink`, `vrchat`, `vmt`); stable.
    #[must_use]
    pub fn key(self) -> &'static str {
        match self {
            Self::Mocopi => "mocopi",
            Self::Vmc => "vmc",
            Self::IFacialMocap => "ifacialmocap",
            Self::LiveLink => "livelink",
            Self::Vrchat => "vrchat",
            Self::Vmt => "vmt",
        }
    }

    /// The protocol whose [`key`](Self::key) is `key`.
    #[must_use]
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.key() == key)
    }

    /// The UDP ports its receivers listen on by default.
    #[must_use]
    pub fn default_ports(self) -> &'static [u16] {
        match self {
            Self::Mocopi => &[smf::DEFAULT_PORT],
            Self::Vmc => &[vmc::MARIONETTE_PORT, vmc::PERFORMER_PORT],
            Self::IFacialMocap => &[ifm::PC_UDP_PORT],
            Self::LiveLink => &[livelink::DEFAULT_PORT],
            Self::Vrchat => &[vmc::trackers::VRCHAT_PORT],
            Self::Vmt => &[vmc::trackers::VMT_PORT],
        }
    }

    /// Whether `datagram` has this protocol's shape, and how sure that is.
    /// Never panics; no decode.
    #[must_use]
    pub fn sniff(self, datagram: &[u8]) -> Option<Confidence> {
        match self {
            Self::Mocopi => sniff_mocopi(datagram),
            Self::Vmc => sniff_osc(datagram, OscFamily::Other),
            Self::IFacialMocap => sniff_ifm(datagram),
            Self::LiveLink => sniff_livelink(datagram),
            Self::Vrchat => sniff_osc(datagram, OscFamily::Vrchat),
            Self::Vmt => sniff_osc(datagram, OscFamily::Vmt),
        }
    }
}

impl std::fmt::Display for Protocol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The protocol `datagram` most likely is: the highest confidence over the
/// registry, the first in [`Protocol::ALL`] on a tie.
#[must_use]
pub fn recognise(datagram: &[u8]) -> Option<(Protocol, Confidence)> {
    let mut best: Option<(Protocol, Confidence)> = None;
    for p in Protocol::ALL {
        if let Some(c) = p.sniff(datagram)
            && best.is_none_or(|(_, b)| c > b)
        {
            best = Some((p, c));
        }
    }
    best
}

/// SMF: a `head` chunk first, its little-endian length inside the datagram.
fn sniff_mocopi(d: &[u8]) -> Option<Confidence> {
    let (len, rest) = d.split_first_chunk::<4>()?;
    if !rest.starts_with(b"head") {
        return None;
    }
    let len = usize::try_from(u32::from_le_bytes(*len)).ok()?;
    Some(if len.checked_add(8).is_some_and(|end| end <= d.len()) {
        Confidence::Certain
    } else {
        Confidence::Likely
    })
}

/// Which OSC application a datagram speaks, from its (first) address: the
/// registry tells VRChat and VMT apart from VMC by address, since all three
/// are OSC.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OscFamily {
    Vrchat,
    Vmt,
    /// VMC and any other OSC.
    Other,
}

/// The address prefixes VRChat's OSC input reads (docs/trackers.md).
const VRCHAT_PREFIXES: [&[u8]; 6] = [
    b"/avatar/",
    b"/input/",
    b"/chatbox/",
    b"/tracking/",
    b"/usercamera/",
    b"/dolly/",
];

fn osc_family(address: &[u8]) -> OscFamily {
    if address.starts_with(b"/VMT/") {
        OscFamily::Vmt
    } else if VRCHAT_PREFIXES.iter().any(|p| address.starts_with(p)) {
        OscFamily::Vrchat
    } else {
        OscFamily::Other
    }
}

/// OSC of `family`: `#bundle\0` whose first element (if any) is a message
/// of that family, or an address `/…` NUL-padded to four bytes followed by
/// a `,` type tag string.
fn sniff_osc(d: &[u8], family: OscFamily) -> Option<Confidence> {
    if d.starts_with(b"#bundle\0") {
        // The first element's address decides; an empty bundle or one that
        // starts with a nested bundle counts as VMC/other OSC.
        let first = d.get(20..).filter(|e| e.first() == Some(&b'/'));
        let found = first.map_or(OscFamily::Other, |e| {
            osc_family(e.split(|&b| b == 0).next().unwrap_or_default())
        });
        if found != family {
            return None;
        }
        return Some(if d.len() >= 16 && d.len().is_multiple_of(4) {
            Confidence::Certain
        } else {
            Confidence::Likely
        });
    }
    if d.first() != Some(&b'/') {
        return None;
    }
    let Some(nul) = d.iter().position(|&b| b == 0) else {
        // An address without its end: a cut message at best.
        return (d.iter().all(u8::is_ascii_graphic) && osc_family(d) == family)
            .then_some(Confidence::Likely);
    };
    let address = d.get(..nul)?;
    if !address.iter().all(u8::is_ascii_graphic) || osc_family(address) != family {
        return None;
    }
    let tags_at = (nul / 4 + 1) * 4;
    Some(
        if d.get(tags_at) == Some(&b',') && d.len().is_multiple_of(4) {
            Confidence::Certain
        } else {
            Confidence::Likely
        },
    )
}

/// iFacialMocap: ASCII fields split by `|`, most of them `name-value` (v1)
/// or `name&value` (v2), the head after `=head#`.
fn sniff_ifm(d: &[u8]) -> Option<Confidence> {
    if d.is_empty() || !d.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        return None;
    }
    let text = std::str::from_utf8(d).ok()?;
    if text.contains("=head#") {
        return Some(Confidence::Certain);
    }
    // Three named values decide: a frame's other fifty are not parsed (this
    // runs on every datagram mocap-top receives).
    let named = text
        .split('|')
        .filter(|f| {
            f.split_once(['-', '&']).is_some_and(|(name, value)| {
                !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && value.parse::<f64>().is_ok()
            })
        })
        .take(3)
        .count();
    if named >= 3 {
        Some(Confidence::Certain)
    } else if named >= 1 && text.contains('|') {
        Some(Confidence::Likely)
    } else {
        None
    }
}

/// Live Link Face: version 6, two big-endian length-prefixed strings that
/// fit, a frame time, then nothing (no face) or a count and its floats.
fn sniff_livelink(d: &[u8]) -> Option<Confidence> {
    let (&version, rest) = d.split_first()?;
    if version != 6 {
        return None;
    }
    let rest = skip_string(rest)?;
    let rest = skip_string(rest)?;
    let Some((_time, rest)) = rest.split_at_checked(16) else {
        return Some(Confidence::Likely);
    };
    Some(match rest.split_first() {
        None => Confidence::Certain,
        Some((&n, values)) if values.len() == 4 * usize::from(n) => Confidence::Certain,
        Some(_) => Confidence::Likely,
    })
}

/// A big-endian `i32` length and that many bytes; `None` when they do not fit
/// or the length is implausible for a name.
fn skip_string(d: &[u8]) -> Option<&[u8]> {
    let (len, rest) = d.split_first_chunk::<4>()?;
    let len = usize::try_from(i32::from_be_bytes(*len)).ok()?;
    if len > 1024 {
        return None;
    }
    rest.get(len..)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcap::Datagrams;

    const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

    /// Every datagram of a capture in the repository.
    fn capture(path: &str) -> Vec<Vec<u8>> {
        let file = std::fs::File::open(format!("{CAPTURES}/{path}")).unwrap();
        let mut d = Datagrams::new(file).unwrap();
        let mut out = Vec::new();
        while let Some(c) = d.next_datagram() {
            out.push(c.unwrap().payload.to_vec());
        }
        assert!(!out.is_empty(), "{path}");
        out
    }

    /// Every datagram is `want`; `cut` of them (damaged on purpose in the
    /// capture) only likely so.
    fn all_are(datagrams: &[Vec<u8>], want: Protocol, cut: usize) {
        let mut likely = 0;
        for (i, d) in datagrams.iter().enumerate() {
            match recognise(d) {
                Some((p, Confidence::Certain)) if p == want => {}
                Some((p, Confidence::Likely)) if p == want => likely += 1,
                other => panic!("datagram {i} of {want}: {other:?}"),
            }
        }
        assert_eq!(likely, cut, "{want}");
    }

    #[test]
    fn real_datagrams_of_each_protocol() {
        all_are(&capture("mocopi/wave-60hz.pcapng"), Protocol::Mocopi, 0);
        all_are(&capture("mocopi/mocopi-sizes.pcapng"), Protocol::Mocopi, 0);
        // Its one datagram cut short (docs/livelink.md) is only likely.
        all_are(
            &capture("livelink/face-60fps.pcapng"),
            Protocol::LiveLink,
            1,
        );
        all_are(
            &capture("ifacialmocap/face-60fps.pcapng"),
            Protocol::IFacialMocap,
            0,
        );
        for name in ["v1_official_doc_sample.txt", "v2_vcam_test_sample.txt"] {
            let text = std::fs::read_to_string(format!("{CAPTURES}/ifacialmocap/{name}")).unwrap();
            let line = text.lines().next().unwrap();
            assert_eq!(
                recognise(line.as_bytes()),
                Some((Protocol::IFacialMocap, Confidence::Certain)),
                "{name}"
            );
        }
        // No VMC capture is in the repository: the encoder's datagrams are
        // what the reference sender writes (vmc::encode's own tests).
        use crate::vmc::{MAX_BUNDLE, Message, frame_datagrams};
        let mut frame = vec![Message::Time(12.5), Message::BlendApply];
        for name in ["Hips", "Spine", "Head"] {
            frame.push(Message::BonePos {
                name: name.into(),
                pos: [0.0, 1.0, 0.0],
                rot: [0.0, 0.0, 0.0, 1.0],
            });
        }
        all_are(
            &frame_datagrams(&frame, MAX_BUNDLE).unwrap(),
            Protocol::Vmc,
            0,
        );
        let ok = crate::osc::message(&crate::osc::Message::new(
            "/VMC/Ext/OK",
            vec![crate::osc::Arg::Int(1)],
        ))
        .unwrap();
        assert_eq!(recognise(&ok), Some((Protocol::Vmc, Confidence::Certain)));
    }

    #[test]
    fn vrchat_and_vmt_are_told_from_vmc_by_address() {
        use crate::osc::{Arg, Message, bundle, message};
        let one = |addr: &str| message(&Message::new(addr, vec![Arg::Float(0.5)])).unwrap();
        let cases = [
            ("/VMC/Ext/Blend/Val", Protocol::Vmc),
            ("/avatar/parameters/Smile", Protocol::Vrchat),
            ("/tracking/trackers/1/position", Protocol::Vrchat),
            ("/chatbox/input", Protocol::Vrchat),
            ("/VMT/Room/Unity", Protocol::Vmt),
            ("/some/app", Protocol::Vmc),
        ];
        for (addr, want) in cases {
            assert_eq!(
                recognise(&one(addr)),
                Some((want, Confidence::Certain)),
                "{addr}"
            );
            let b = bundle(&[Message::new(addr, vec![Arg::Int(1)])]).unwrap();
            assert_eq!(
                recognise(&b),
                Some((want, Confidence::Certain)),
                "bundle of {addr}"
            );
        }
    }

    #[test]
    fn cut_datagrams_are_likely_and_others_are_nothing() {
        let mocopi = capture("mocopi/wave-60hz.pcapng");
        let cut = &mocopi[0][..40];
        assert_eq!(recognise(cut), Some((Protocol::Mocopi, Confidence::Likely)));
        let live = capture("livelink/face-60fps.pcapng");
        let cut = &live[0][..live[0].len() - 3];
        assert_eq!(
            recognise(cut),
            Some((Protocol::LiveLink, Confidence::Likely))
        );
        for other in [
            &b""[..],
            b"hello",
            b"# README\n",
            b"\x00\x00\x00\x00",
            b"\x1f\x8b\x08",
        ] {
            assert_eq!(recognise(other), None, "{other:?}");
        }
    }

    #[test]
    fn names_and_ports_come_from_the_protocol_modules() {
        assert_eq!(Protocol::Mocopi.default_ports(), [12351]);
        assert_eq!(Protocol::Vmc.default_ports(), [39539, 39540]);
        assert_eq!(Protocol::IFacialMocap.default_ports(), [49983]);
        assert_eq!(Protocol::LiveLink.default_ports(), [11111]);
        assert_eq!(Protocol::Vrchat.default_ports(), [9000]);
        assert_eq!(Protocol::Vmt.default_ports(), [39570]);
        for p in Protocol::ALL {
            assert_eq!(Protocol::from_key(p.key()), Some(p));
        }
        let names: std::collections::HashSet<_> = Protocol::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), Protocol::ALL.len());
    }

    #[test]
    fn no_panic_on_any_bytes() {
        let seeds = [
            capture("mocopi/wave-60hz.pcapng").swap_remove(0),
            capture("livelink/face-60fps.pcapng").swap_remove(0),
            capture("ifacialmocap/face-60fps.pcapng").swap_remove(0),
            b"#bundle\0\0\0\0\0\0\0\0\x01\0\0\0\x10/VMC/Ext/OK\0,i\0\0\0\0\0\x01".to_vec(),
        ];
        let mut rng = mocap_testutil::Rng(11);
        for seed in &seeds {
            for _ in 0..20_000 {
                let mut d = seed.clone();
                for _ in 0..=rng.below(4) {
                    match rng.below(3) {
                        0 if !d.is_empty() => {
                            let i = rng.below(d.len());
                            d[i] = rng.next().to_le_bytes()[0];
                        }
                        1 => d.truncate(rng.below(d.len() + 1)),
                        _ => d.push(rng.next().to_le_bytes()[0]),
                    }
                }
                let _ = recognise(&d);
            }
        }
    }
}
