//! Frame numbers carried on across the passes of a looped replay, so that a
//! capture played over and over reads as one endless stream rather than the
//! same frames again (which a receiver counts as duplicates).
//!
//! Pure: the replayer hands over each datagram of a pass and calls
//! [`Renumber::next_pass`] between passes. Each protocol reads and writes
//! its own numbers (its registry row's [`Renumbering`]: its parser, its
//! `Repr`, `emit`); this module does the arithmetic for all of them:
//!
//! | protocol | renumbered | how |
//! |---|---|---|
//! | mocopi (`smf`) | frame packets | `fnum`, and the clocks `time` and `uttm`, move on by one pass's span; skeleton and sensor packets and `tmcd` are left alone |
//! | Live Link Face | face and no-face packets | the frame number moves on per device and subject (the subframe and rate stay) |
//! | iFacialMocap, VMC, anything else | — | no frame number: sent as captured |
//!
//! A stream is one protocol, sender and (Live Link) device and subject. Pass
//! *k* adds *k* × (last − first + 1) to its frame numbers, so the first frame
//! of a pass follows the last one of the pass before; gaps, duplicates and
//! restarts inside the capture stay as they were. The first pass is sent as
//! captured. A datagram is rewritten only when its `Repr` writes back exactly
//! the captured bytes (no unknown chunks, no text that is not UTF-8);
//! otherwise, and past [`MAX_STREAMS`], it goes out unchanged and is counted
//! as `kept`.
//!
//! ```
//! use mocap_core::pcap::Renumber;
//! use mocap_core::smf::{self, BodyRepr, FrameRepr, PacketRepr};
//!
//! let frame = |fnum| PacketRepr {
//!     sender: None,
//!     body: BodyRepr::Frame(FrameRepr { fnum, time: 0.0, uttm: None, timecode: None, bones: vec![] }),
//! }
//! .to_bytes();
//! let mut r = Renumber::new();
//! let mut got = Vec::new();
//! for _pass in 0..3 {
//!     for fnum in 10..13 {
//!         let mut d = frame(fnum);
//!         r.datagram(None, &mut d);
//!         got.push(smf::parse(&d)?.frame().map(|f| f.fnum));
//!     }
//!     r.next_pass();
//! }
//! assert_eq!(got, (10..19).map(Some).collect::<Vec<_>>());
//! # Ok::<(), smf::Error>(())
//! ```

use std::net::SocketAddr;

use crate::protocol::{Numbers, Protocol, Renumbering};

/// Streams followed at once; datagrams of further streams go out unchanged.
pub const MAX_STREAMS: usize = 256;

/// What [`Renumber`] did, for a summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RenumberCounters {
    /// Datagrams written with new numbers.
    pub renumbered: u64,
    /// Numbered datagrams sent as captured after the first pass: their
    /// `Repr` does not write back the same bytes, or too many streams.
    pub kept: u64,
}

/// What happened to one datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renumbered {
    /// Rewritten with new numbers.
    Changed,
    /// Sent as captured: no frame number, or the first pass.
    Unchanged,
    /// It has a frame number but could not be rewritten (counted as `kept`).
    Kept,
}

/// One stream's frame numbers and clocks as the first pass had them.
#[derive(Clone, Debug)]
struct Stream {
    protocol: Protocol,
    src: Option<SocketAddr>,
    /// Which of the sender's sequences (Live Link's device and subject,
    /// hashed: bounded whatever they hold).
    part: u64,
    first: u32,
    last: u32,
    /// The protocol's clocks (mocopi's `time` and `uttm`) over the first pass.
    clocks: [Clock; 2],
}

/// A sender clock over the first pass.
#[derive(Clone, Copy, Debug, Default)]
struct Clock {
    first: Option<f64>,
    last: f64,
    n: u64,
}

impl Clock {
    fn see(&mut self, t: f64) {
        self.first.get_or_insert(t);
        self.last = t;
        self.n += 1;
    }

    /// How far this clock moves on per pass: its span plus one mean step.
    fn per_pass(&self) -> f64 {
        let Some(first) = self.first else {
            return 0.0;
        };
        let span = self.last - first;
        let step = if self.n > 1 {
            span / (self.n - 1) as f64
        } else {
            0.0
        };
        let d = span + step;
        if d.is_finite() { d } else { 0.0 }
    }
}

impl Stream {
    /// What pass `k` adds to this stream's frame numbers.
    fn offset(&self, k: u64) -> u32 {
        let per_pass = self.last.wrapping_sub(self.first).wrapping_add(1);
        // Modulo 2^32, as the numbers themselves wrap.
        per_pass.wrapping_mul(k as u32)
    }
}

/// Carries frame numbers on over the passes of a looped replay (see the
/// module's docs for the protocols and the rule).
#[derive(Clone, Debug, Default)]
pub struct Renumber {
    streams: Vec<Stream>,
    pass: u64,
    counters: RenumberCounters,
    scratch: Vec<u8>,
    out: Vec<u8>,
}

impl Renumber {
    /// Before the first pass.
    pub fn new() -> Self {
        Self::default()
    }

    /// The pass now played (0 = the first, sent as captured).
    pub fn pass(&self) -> u64 {
        self.pass
    }

    /// The next datagram comes from a new pass over the capture.
    pub fn next_pass(&mut self) {
        self.pass += 1;
    }

    /// Streams of numbered frames the first pass held.
    pub fn streams(&self) -> usize {
        self.streams.len()
    }

    /// What has been done so far.
    pub fn counters(&self) -> RenumberCounters {
        self.counters
    }

    /// Renumbers `payload` (sent from `src` in the capture) in place for the
    /// current pass.
    pub fn datagram(&mut self, src: Option<SocketAddr>, payload: &mut Vec<u8>) -> Renumbered {
        let found = Protocol::ALL.into_iter().find_map(|p| {
            let r = p.spec().renumber?;
            (r.read)(payload).map(|n| (p, r, n))
        });
        let Some((protocol, renumbering, numbers)) = found else {
            return Renumbered::Unchanged;
        };
        let Some(i) = self.stream(protocol, src, numbers.part, numbers.frame) else {
            return self.kept();
        };
        let pass = self.pass;
        let Some(s) = self.streams.get_mut(i) else {
            return self.kept();
        };
        if pass == 0 {
            s.last = numbers.frame;
            for (clock, t) in s.clocks.iter_mut().zip(numbers.clocks) {
                if let Some(t) = t {
                    clock.see(t);
                }
            }
            return Renumbered::Unchanged;
        }
        let k = pass as f64;
        let mut clocks = numbers.clocks;
        for (t, clock) in clocks.iter_mut().zip(&s.clocks) {
            *t = t.map(|t| t + k * clock.per_pass());
        }
        let next = Numbers {
            frame: numbers.frame.wrapping_add(s.offset(pass)),
            clocks,
            ..numbers
        };
        self.rewrite(renumbering, &next, payload)
    }

    fn rewrite(&mut self, r: Renumbering, n: &Numbers, payload: &mut Vec<u8>) -> Renumbered {
        if (r.write)(payload, n, &mut self.out, &mut self.scratch) {
            // The captured bytes' buffer is the next datagram's output.
            std::mem::swap(payload, &mut self.out);
            self.counters.renumbered += 1;
            Renumbered::Changed
        } else {
            self.kept()
        }
    }

    fn kept(&mut self) -> Renumbered {
        if self.pass > 0 {
            self.counters.kept += 1;
            Renumbered::Kept
        } else {
            Renumbered::Unchanged
        }
    }

    /// The index of a stream, made (in the first pass, within the bound)
    /// when new with `first` as its first frame number.
    fn stream(
        &mut self,
        protocol: Protocol,
        src: Option<SocketAddr>,
        part: u64,
        first: u32,
    ) -> Option<usize> {
        let found = self
            .streams
            .iter()
            .position(|s| s.protocol == protocol && s.src == src && s.part == part);
        if found.is_some() || self.pass > 0 || self.streams.len() >= MAX_STREAMS {
            return found;
        }
        self.streams.push(Stream {
            protocol,
            src,
            part,
            first,
            last: first,
            clocks: [Clock::default(); 2],
        });
        Some(self.streams.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;
    use crate::smf::{BodyRepr, Bone, FrameRepr, PacketRepr};
    use crate::{livelink, smf};

    fn mocopi(fnum: u32, time: f32, uttm: Option<f64>) -> Vec<u8> {
        PacketRepr {
            sender: Some(smf::Sender {
                ipad: 192_168_001_020,
                rcvp: smf::DEFAULT_PORT,
            }),
            body: BodyRepr::Frame(FrameRepr {
                fnum,
                time,
                uttm,
                timecode: None,
                bones: vec![Bone {
                    id: 0,
                    rot: [0.0, 0.0, 0.0, 1.0],
                    pos: [0.0, 0.9, 0.0],
                }],
            }),
        }
        .to_bytes()
    }

    fn skeleton() -> Vec<u8> {
        PacketRepr {
            sender: None,
            body: BodyRepr::Skeleton(vec![]),
        }
        .to_bytes()
    }

    fn live(subject: &str, frame: i32) -> Vec<u8> {
        livelink::PacketRepr {
            device: "D".into(),
            subject: subject.into(),
            frame,
            subframe: 0.25,
            rate: [60, 1],
            values: Some(vec![0.5; livelink::VALUE_COUNT]),
        }
        .to_bytes()
    }

    fn fnum(d: &[u8]) -> (u32, f32, Option<f64>) {
        let p = smf::parse(d).unwrap();
        let f = p.frame().unwrap();
        (f.fnum, f.time, f.uttm)
    }

    /// Plays `capture` `passes` times through one `Renumber`.
    fn play(capture: &[(Option<SocketAddr>, Vec<u8>)], passes: u64) -> (Vec<Vec<u8>>, Renumber) {
        let mut r = Renumber::new();
        let mut out = Vec::new();
        for pass in 0..passes {
            if pass > 0 {
                r.next_pass();
            }
            for (src, d) in capture {
                let mut d = d.clone();
                r.datagram(*src, &mut d);
                out.push(d);
            }
        }
        (out, r)
    }

    #[test]
    fn mocopi_frames_and_clocks_carry_on_from_the_pass_before() {
        let capture: Vec<_> = std::iter::once((None, skeleton()))
            .chain((0..4u32).map(|i| {
                let t = i as f32 / 60.0;
                (None, mocopi(100 + i, 10.0 + t, Some(1000.0 + f64::from(t))))
            }))
            .collect();
        let (out, r) = play(&capture, 3);
        // The first pass is as captured, skeletons always.
        assert_eq!(
            out[..5],
            capture.iter().map(|c| c.1.clone()).collect::<Vec<_>>()[..]
        );
        assert_eq!(out[5], skeleton());
        let got: Vec<_> = out
            .iter()
            .filter(|d| **d != skeleton())
            .map(|d| fnum(d))
            .collect();
        let nums: Vec<u32> = got.iter().map(|g| g.0).collect();
        assert_eq!(nums, (100..112).collect::<Vec<_>>());
        // Clocks move on at the capture's rate: 1/60 s a frame, across the seams too.
        for w in got.windows(2) {
            let dt = f64::from(w[1].1 - w[0].1);
            assert!((dt - 1.0 / 60.0).abs() < 1e-4, "{got:?}");
            let du = w[1].2.unwrap() - w[0].2.unwrap();
            assert!((du - 1.0 / 60.0).abs() < 1e-6, "{got:?}");
        }
        assert_eq!(
            r.counters(),
            RenumberCounters {
                renumbered: 8,
                kept: 0
            }
        );
    }

    #[test]
    fn gaps_and_restarts_inside_the_capture_stay_and_the_seam_is_continuous() {
        // 5, 6, 9 (two lost), then a restart at 1, 2.
        let capture: Vec<_> = [5, 6, 9, 1, 2]
            .iter()
            .map(|&n| (None, mocopi(n, 0.0, None)))
            .collect();
        let (out, _) = play(&capture, 2);
        let nums: Vec<u32> = out.iter().map(|d| fnum(d).0).collect();
        // Pass 2 adds last - first + 1 = 2 - 5 + 1 (mod 2^32): its 5 follows the 2.
        assert_eq!(&nums[..5], &[5, 6, 9, 1, 2]);
        assert_eq!(nums[5], 3);
        assert_eq!(nums[6], 4);
        assert_eq!(nums[7], 7);
        // The restart stays a restart: 1 and 2 less 2, modulo 2^32.
        assert_eq!(&nums[8..], &[u32::MAX, 0]);
    }

    #[test]
    fn streams_are_per_sender_and_per_live_link_subject() {
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2000".parse().unwrap();
        let capture = vec![
            (Some(a), mocopi(1, 0.0, None)),
            (Some(b), mocopi(500, 0.0, None)),
            (Some(a), mocopi(2, 0.0, None)),
            (Some(a), live("Zoe", 7000)),
            (Some(a), live("Max", 10)),
            (Some(a), live("Zoe", 7001)),
            (Some(a), live("Zoe", 7002)),
        ];
        let (out, r) = play(&capture, 2);
        let second = &out[capture.len()..];
        assert_eq!(fnum(&second[0]).0, 3);
        // One frame a pass: it moves on by one.
        assert_eq!(fnum(&second[1]).0, 501);
        assert_eq!(fnum(&second[2]).0, 4);
        let frame = |d: &[u8]| livelink::parse(d).unwrap().time.frame;
        assert_eq!(frame(&second[3]), 7003);
        assert_eq!(frame(&second[4]), 11);
        assert_eq!(frame(&second[6]), 7005);
        // Everything else is as captured.
        let p = livelink::parse(&second[3]).unwrap();
        let before = livelink::parse(&capture[3].1).unwrap();
        assert_eq!(p.subject(), "Zoe");
        assert_eq!((p.time.subframe, p.time.rate), (0.25, [60, 1]));
        assert_eq!(
            livelink::PacketRepr::parse(&p).values,
            livelink::PacketRepr::parse(&before).values
        );
        assert_eq!(r.counters().renumbered, 7);
    }

    #[test]
    fn what_has_no_frame_number_or_does_not_write_back_goes_out_as_captured() {
        let ifm = b"trackingStatus-1|jawOpen-12|=head#1,2,3,4,5,6|".to_vec();
        let vmc = crate::osc::message(&crate::osc::Message {
            address: "/VMC/Ext/OK".into(),
            args: vec![crate::osc::Arg::Int(1)],
        })
        .unwrap();
        let unnumbered = mocopi(crate::health::UNNUMBERED, 0.0, None);
        let capture = vec![
            (None, ifm.clone()),
            (None, vmc.clone()),
            (None, unnumbered.clone()),
            (None, b"".to_vec()),
        ];
        let (out, r) = play(&capture, 3);
        for (i, d) in out.iter().enumerate() {
            assert_eq!(*d, capture[i % capture.len()].1, "{i}");
        }
        assert_eq!(r.counters(), RenumberCounters::default());
        // A Live Link packet whose device is not UTF-8 does not write back:
        // kept as captured, and counted.
        let mut bad = live("Zoe", 1);
        let at = bad.iter().position(|&b| b == b'D').unwrap();
        bad[at] = 0xff;
        let (out, r) = play(&[(None, bad.clone())], 2);
        assert_eq!(out[1], bad);
        assert_eq!(
            r.counters(),
            RenumberCounters {
                renumbered: 0,
                kept: 1
            }
        );
        // A mocopi frame followed by a chunk the decoder skips: the Repr
        // would drop it, so the frame is kept whole.
        let mut odd = mocopi(1, 0.0, None);
        odd.extend_from_slice(&[4, 0, 0, 0, b'z', b'z', b'z', b'z', 1, 2, 3, 4]);
        assert!(smf::parse(&odd).is_ok());
        let (out, r) = play(&[(None, odd.clone())], 2);
        assert_eq!(out[1], odd);
        assert_eq!(
            r.counters(),
            RenumberCounters {
                renumbered: 0,
                kept: 1
            }
        );
    }

    #[test]
    fn streams_past_the_bound_are_kept() {
        let capture: Vec<_> = (0..=MAX_STREAMS as u16)
            .map(|p| {
                (
                    Some(SocketAddr::from(([127, 0, 0, 1], p + 1))),
                    mocopi(1, 0.0, None),
                )
            })
            .collect();
        let (out, r) = play(&capture, 2);
        assert_eq!(r.counters().renumbered, MAX_STREAMS as u64);
        assert_eq!(r.counters().kept, 1);
        assert_eq!(out.last(), capture.last().map(|c| &c.1));
    }

    #[test]
    fn no_panic_on_mutated_datagrams() {
        let seeds = [mocopi(3, 1.0, Some(2.0)), live("Zoe", 9), skeleton()];
        let mut r = Renumber::new();
        let mut round = 0;
        mocap_testutil::sweep::mutants(&seeds, mocap_testutil::Rng(0x9e37), 3000, |d| {
            round += 1;
            if round % 100 == 0 {
                r.next_pass();
            }
            r.datagram(None, &mut d.to_vec());
        });
    }
}
