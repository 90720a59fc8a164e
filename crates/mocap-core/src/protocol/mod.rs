//! The protocols this crate speaks, as a table of what each can do. Every
//! protocol module fills one [`Spec`] (its `SPEC` constant): name, key,
//! default ports, a content sniff (`bytes -> confidence`), a decode into a
//! generic [`View`] that also returns the datagram's frame [`Stamp`] for
//! stream health, the face pose where it has one, the tool that reads it and
//! its Wireshark dissector. Tools read the table and never match on a
//! protocol, so a new one is its module and one line of `registry!`.
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

mod ask;
mod spec;

pub use ask::{Answer, AnswerOf, Ask, Asking, Due, Resend};
pub(crate) use spec::writes_back;
pub use spec::{
    Args, Carries, Confidence, FaceOf, Fact, MAX_LABEL, NoView, Numbers, Renumbering, Spec, Stamp,
    View, part_of,
};

/// Declares [`Protocol`] from `Variant => module::SPEC` lines: the enum, its
/// [`ALL`](Protocol::ALL) in that order, and [`Protocol::spec`].
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident => $spec:path,)+) => {
        /// A protocol of the registry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        // Other crates' code reads the table ([`Protocol::spec`]) and
        // never needs a match; a match written anyway must not break when
        // a protocol is added.
        #[non_exhaustive]
        pub enum Protocol {
            $($(#[$doc])* $variant,)+
        }

        impl Protocol {
            /// Every protocol, in the order [`recognise`] prefers on a tie.
            pub const ALL: [Self; <[&str]>::len(&[$(stringify!($variant)),+])] =
                [$(Self::$variant),+];

            /// What the protocol's module says it is and can do.
            #[must_use]
            pub fn spec(self) -> &'static Spec {
                match self {
                    $(Self::$variant => &$spec,)+
                }
            }
        }
    };
}

registry! {
    /// Sony mocopi's motion stream ([`crate::smf`]).
    Mocopi => crate::smf::SPEC,
    /// VMC, and OSC in general ([`crate::vmc`], [`crate::osc`]).
    Vmc => crate::vmc::SPEC,
    /// iFacialMocap / Facemotion3d face frames ([`crate::ifm`]).
    IFacialMocap => crate::ifm::SPEC,
    /// Epic's Live Link Face ([`crate::livelink`]).
    LiveLink => crate::livelink::SPEC,
    /// VRChat's OSC input: avatar parameters, trackers, chatbox
    /// ([`crate::vmc::trackers`] writes its trackers).
    Vrchat => crate::vmc::VRCHAT_SPEC,
    /// The VMT driver's OSC trackers inside SteamVR ([`crate::vmc::trackers`]).
    Vmt => crate::vmc::VMT_SPEC,
    /// OpenSeeFace's face tracking stream ([`crate::openseeface`]).
    OpenSeeFace => crate::openseeface::SPEC,
    /// VTube Studio's phone tracking ([`crate::vtubestudio`]).
    VTubeStudio => crate::vtubestudio::SPEC,
    /// SlimeVR's IMU trackers and server ([`crate::slimevr`]).
    SlimeVr => crate::slimevr::SPEC,
    /// Rokoko Studio Live's actors: suits, gloves, faces ([`crate::rokoko`]).
    Rokoko => crate::rokoko::SPEC,
}

impl Protocol {
    /// The name people know it by.
    #[must_use]
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// A short lowercase name for keys and JSON fields (`mocopi`, `vmc`,
    /// `ifacialmocap`, `livelink`, `vrchat`, `vmt`); stable.
    #[must_use]
    pub fn key(self) -> &'static str {
        self.spec().key
    }

    /// The protocol whose [`key`](Self::key) is `key`.
    #[must_use]
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.key() == key)
    }

    /// The UDP ports its receivers listen on by default.
    #[must_use]
    pub fn default_ports(self) -> &'static [u16] {
        self.spec().ports
    }

    /// Whether `datagram` has this protocol's shape, and how sure that is.
    /// Never panics.
    #[must_use]
    pub fn sniff(self, datagram: &[u8]) -> Option<Confidence> {
        (self.spec().sniff)(datagram)
    }

    /// Decodes `datagram` into `view` and says what it was for the
    /// stream's health. Never panics.
    pub fn decode(self, datagram: &[u8], view: &mut dyn View) -> Stamp {
        (self.spec().decode)(datagram, view)
    }

    /// The frame stamp of `datagram` alone, the same as [`decode`](Self::decode)
    /// returns, for less.
    #[must_use]
    pub fn stamp(self, datagram: &[u8]) -> Stamp {
        (self.spec().stamp)(datagram)
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

/// Every protocol's default ports as help texts and docs list them:
/// `mocopi 12351, VMC (OSC) 39539/39540, …` in the registry's order.
#[must_use]
pub fn port_list() -> String {
    let mut out = String::new();
    for (i, p) in Protocol::ALL.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(p.name());
        for (j, port) in p.default_ports().iter().enumerate() {
            out.push(if j == 0 { ' ' } else { '/' });
            out.push_str(&port.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{livelink, smf};
    use mocap_testutil::capture_payloads as capture;

    const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

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
    fn the_port_list_is_the_tables() {
        let list = port_list();
        assert!(
            list.starts_with("mocopi 12351, VMC (OSC) 39539/39540, iFacialMocap 49983, "),
            "{list}"
        );
        let entries: Vec<&str> = list.split(", ").collect();
        assert_eq!(entries.len(), Protocol::ALL.len());
        for (entry, p) in entries.iter().zip(Protocol::ALL) {
            let ports: Vec<String> = p.default_ports().iter().map(u16::to_string).collect();
            assert_eq!(*entry, format!("{} {}", p.name(), ports.join("/")));
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

    /// Every row of the table is filled by its module and holds on that
    /// protocol's real datagrams: each is recognised as it, decodes to a
    /// stamp that is not an error (or is cut on purpose: only likely, and
    /// an error), faces come from face protocols, and the tool and the
    /// dissector it names exist.
    #[test]
    fn every_row_holds_on_its_own_real_datagrams() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
        let mut keys = std::collections::HashSet::new();
        for p in Protocol::ALL {
            let spec = p.spec();
            assert!(keys.insert(spec.key), "{p}: key used twice");
            assert!(
                spec.key
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
                "{p}: a key is lowercase letters and digits"
            );
            assert!(!spec.ports.is_empty(), "{p}");
            assert!(
                !spec.label.is_empty() && spec.label.chars().count() <= MAX_LABEL,
                "{p}: label {:?}",
                spec.label
            );
            let tool = spec.tool.split(' ').next().unwrap();
            assert!(
                std::path::Path::new(&format!("{root}/tools/{tool}/Cargo.toml")).exists(),
                "{p}: no tool {tool}"
            );
            if let Some(d) = spec.dissector {
                let lua = format!("{root}/tools/wireshark/{d}.lua");
                assert!(std::path::Path::new(&lua).exists(), "{p}: no {lua}");
            }
            // A body protocol may carry faces too (Rokoko's actors).
            assert_eq!(
                spec.face.is_some(),
                spec.carries == Carries::Face
                    || (spec.carries == Carries::Body && spec.face.is_some()),
                "{p}"
            );
            assert_eq!(spec.body.is_some(), spec.carries == Carries::Body, "{p}");
            let samples = mocap_testutil::samples::of(spec.key)
                .unwrap_or_else(|| panic!("{p}: add its datagrams to mocap_testutil::samples"));
            let mut faces = 0;
            let (mut body, mut bodies) = (spec.body.map(|b| b()), 0);
            for (i, d) in samples.iter().enumerate() {
                let stamp = p.stamp(d);
                assert_eq!(stamp, p.decode(d, &mut NoView), "{p}: datagram {i}");
                match recognise(d) {
                    Some((q, Confidence::Certain)) if q == p => {
                        assert_ne!(stamp, Stamp::Error, "{p}: datagram {i}");
                    }
                    Some((q, Confidence::Likely)) if q == p => {
                        assert_eq!(stamp, Stamp::Error, "{p}: cut datagram {i}");
                    }
                    other => panic!("{p}: datagram {i} recognised as {other:?}"),
                }
                faces += spec.face.and_then(|f| f(d)).is_some() as usize;
                bodies += body.as_mut().and_then(|b| b.datagram(d)).is_some() as usize;
            }
            if spec.face.is_some() {
                assert!(faces > 0, "{p}: no face decoded");
            }
            if spec.body.is_some() {
                assert!(bodies > 0, "{p}: no body decoded");
            }
        }
    }

    /// iFacialMocap is asked as ifm-handshake asks it: its UDP start command
    /// to the phone's command port, again while no frame comes.
    #[test]
    fn ifacialmocap_is_asked_with_its_start_command() {
        use crate::ifm::{Command, PHONE_PORT, Version};
        let ask = Protocol::IFacialMocap.spec().ask.expect("ifm is asked");
        assert_eq!(ask.port, PHONE_PORT);
        assert_eq!(
            Command::parse(&(ask.request)(&[49983, 12345], "mocap-dump")),
            Ok(Command::StartUdp {
                version: Version::V1
            })
        );
        assert!(matches!(ask.resend, Resend::WhileSilent(p) if p.as_secs() == 3));
        for p in [Protocol::Mocopi, Protocol::Vmc, Protocol::LiveLink] {
            assert!(p.spec().ask.is_none(), "{p} sends unasked");
        }
    }

    #[test]
    fn stamps_carry_the_frame_numbers_of_the_wire() {
        let mocopi = capture("mocopi/wave-60hz.pcapng");
        let frame = mocopi
            .iter()
            .find_map(|d| {
                smf::parse(d)
                    .ok()?
                    .frame()
                    .map(|f| (d.clone(), f.fnum, f.uttm))
            })
            .unwrap();
        assert_eq!(
            Protocol::Mocopi.stamp(&frame.0),
            Stamp::Numbered {
                frame: frame.1,
                clock: crate::health::sender_clock(frame.2.unwrap()),
                part: 0,
            }
        );
        let live = capture("livelink/face-60fps.pcapng");
        let p = livelink::parse(&live[0]).unwrap();
        let Stamp::Numbered { frame, part, .. } = Protocol::LiveLink.stamp(&live[0]) else {
            panic!("not numbered");
        };
        assert_eq!(frame, p.time.frame.cast_unsigned());
        assert_eq!(part, part_of(&[p.device_bytes(), p.subject_bytes()]));
    }

    /// Sniffs, decodes, stamps, faces and renumbering reads of every row on
    /// mutants of every protocol's real datagrams; the stamp alone always
    /// agrees with the decode's.
    #[test]
    fn no_panic_on_any_bytes() {
        let seeds: Vec<Vec<u8>> = Protocol::ALL
            .iter()
            .filter_map(|p| mocap_testutil::samples::of(p.key())?.into_iter().next())
            .collect();
        assert_eq!(seeds.len(), Protocol::ALL.len());
        let rounds = 20_000 * seeds.len();
        mocap_testutil::sweep::mutants(&seeds, mocap_testutil::Rng(11), rounds, |d| {
            let _ = recognise(d);
            for p in Protocol::ALL {
                // The cheap stamp is the decode's, whatever the bytes.
                assert_eq!(p.stamp(d), p.decode(d, &mut NoView), "{p}");
                let _ = p.spec().face.map(|f| f(d));
                let _ = p.spec().renumber.map(|r| (r.read)(d));
            }
        });
    }
}
