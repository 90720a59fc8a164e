//! `--svg FILE --at WHEN`: the stick figure of every body stream of a
//! capture at one moment, front and side, as one SVG (for bug reports and
//! docs). The capture is read as fast as it can be, not at its timing; the
//! figures are [`mocap_core::figure`]'s, as the screen draws them. Every
//! joint is a circle that carries its bone's name and world position
//! (`data-bone`, `data-world`: metres, Unity's axes), so a script (or a
//! test) can read the pose back.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use mocap_cli::prelude::*;
use mocap_cli::runner::{Feed as _, Step};
use mocap_cli::source::{Event, Input, Source};
use mocap_core::bridge::{BodyPose, BodyReader};
use mocap_core::figure::{Figure, Fit, Side, View};
use mocap_core::protocol::{self, Protocol};
use mocap_core::vmc::HUMAN_BODY_BONES;

use crate::state::MAX_STREAMS;

/// A view's square, in SVG pixels.
const PANEL: f64 = 300.0;
/// The caption line above each stream's views.
const CAPTION: f64 = 24.0;
const JOINT_RADIUS: f64 = 2.5;

/// The moment `--at` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum At {
    /// Time since the capture's first datagram: each stream's newest body
    /// frame by then.
    Time(Duration),
    /// Each body stream's N-th body frame, counted from 0.
    Frame(u64),
}

/// `--at`: a duration (`3.5s`, `1500ms`, `2m`) or `frame:N`.
pub(crate) fn parse_at(text: &str) -> Result<At, mocap_cli::args::ValueError> {
    let bad = || {
        mocap_cli::args::ValueError(format!(
            "{text:?} is not a moment: give a time since the capture's first datagram \
             (e.g. 3.5s, 1500ms, 2m) or a body frame counted from 0 (e.g. frame:1200)"
        ))
    };
    match text.trim().strip_prefix("frame:") {
        Some(n) => n.trim().parse().map(At::Frame).map_err(|_| bad()),
        None => mocap_cli::args::parse_duration(text)
            .map(At::Time)
            .map_err(|_| bad()),
    }
}

/// What `--svg` was asked for.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) read: PathBuf,
    pub(crate) out: PathBuf,
    pub(crate) at: At,
}

/// One sender's body stream up to the moment.
struct Stream {
    protocol: Protocol,
    reader: Box<dyn BodyReader>,
    /// The newest frame by the moment, its number and arrival time.
    pose: Option<(BodyPose, u64, Duration)>,
    frames: u64,
}

/// Listen address, sender, the protocol's key.
type Key = (Option<SocketAddr>, Option<SocketAddr>, &'static str);

/// Reads the capture up to the moment and writes the SVG. A moment the
/// capture does not reach is a usage error (exit 2).
pub(crate) fn write(req: &Request) -> anyhow::Result<()> {
    let mut source = Source::open(&Input::Read(req.read.clone()))?;
    let mut streams: BTreeMap<Key, Stream> = BTreeMap::new();
    let mut first = None;
    let mut end = Duration::ZERO;
    let mut reached = false;
    loop {
        let d = match source.next(mocap_cli::runner::POLL)? {
            Step::Item(Event::Datagram(d)) => d,
            Step::Item(Event::Unreadable(_)) | Step::Idle => continue,
            Step::End(_) => break,
        };
        let t = match (req.at, d.ts) {
            (At::Time(_), None) => {
                return Err(UsageError(format!(
                    "{} has no arrival times: use --at frame:N",
                    req.read.display()
                ))
                .into());
            }
            (_, ts) => {
                let ts = ts.unwrap_or_default();
                ts.saturating_sub(*first.get_or_insert(ts))
            }
        };
        end = end.max(t);
        if let At::Time(at) = req.at
            && t > at
        {
            reached = true;
            break;
        }
        let Some((protocol, _)) = protocol::recognise(d.payload) else {
            continue;
        };
        let Some(make) = protocol.spec().body else {
            continue;
        };
        let key = (d.dst, d.src, protocol.key());
        if !streams.contains_key(&key) && streams.len() >= MAX_STREAMS {
            continue;
        }
        let s = streams.entry(key).or_insert_with(|| Stream {
            protocol,
            reader: make(),
            pose: None,
            frames: 0,
        });
        if let At::Frame(n) = req.at
            && s.frames > n
        {
            continue;
        }
        if let Some(pose) = s.reader.datagram(d.payload) {
            s.pose = Some((pose, s.frames, t));
            s.frames += 1;
        }
    }
    let shown: Vec<(String, Figure)> = streams
        .iter()
        .filter_map(|((dst, src, _), s)| {
            let (pose, n, t) = s.pose.as_ref()?;
            if let At::Frame(want) = req.at
                && *n != want
            {
                return None;
            }
            let caption = format!(
                "{} from {} to {}: body frame {n} at {:.3} s",
                s.protocol.name(),
                src.map_or_else(|| "-".into(), |a| a.to_string()),
                dst.map_or_else(|| "-".into(), |a| a.to_string()),
                t.as_secs_f64()
            );
            Some((caption, Figure::of(pose)?))
        })
        .collect();
    match req.at {
        At::Time(at) if !reached => {
            return Err(UsageError(format!(
                "--at {:.3}s is past the end of {} (its last datagram is at {:.3} s)",
                at.as_secs_f64(),
                req.read.display(),
                end.as_secs_f64()
            ))
            .into());
        }
        At::Frame(n) if shown.is_empty() => {
            let most = streams.values().map(|s| s.frames).max().unwrap_or(0);
            return Err(UsageError(format!(
                "--at frame:{n}: no body stream of {} reaches it (the longest has {most} body \
                 frames, frame:0 to frame:{})",
                req.read.display(),
                most.saturating_sub(1)
            ))
            .into());
        }
        _ => {}
    }
    if shown.is_empty() {
        anyhow::bail!(
            "{} has no body (mocopi, VMC bones) by then to draw",
            req.read.display()
        );
    }
    let text = svg(&shown);
    write_file(&req.out, &text)
}

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("failed to write {}", path.display()))
}

/// The figures, a row each: its caption, then the front and side views.
pub(crate) fn svg(figures: &[(String, Figure)]) -> String {
    let width = 2.0 * PANEL;
    let height = figures.len() as f64 * (CAPTION + PANEL);
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">"#
    );
    out.push_str(
        "<style>line{stroke-width:2.5;stroke-linecap:round}.left{stroke:#0891b2;fill:#0891b2}\
         .right,.centre{stroke:#222;fill:#222}.ground{stroke:#999;stroke-width:1}\
         text{fill:#555}</style>\n",
    );
    let _ = writeln!(
        out,
        r##"<rect width="{width}" height="{height}" fill="#fff"/>"##
    );
    for (i, (caption, fig)) in figures.iter().enumerate() {
        let top = i as f64 * (CAPTION + PANEL);
        let _ = writeln!(
            out,
            r#"<text x="6" y="{:.1}">{}</text>"#,
            top + CAPTION - 7.0,
            escape(caption)
        );
        let fit = fig.fit(PANEL, PANEL);
        for (k, (view, label)) in [
            (View::Front, "front · its left in cyan"),
            (View::Side, "side · facing →"),
        ]
        .into_iter()
        .enumerate()
        {
            let left = k as f64 * PANEL;
            panel(&mut out, fig, &fit, view, label, left, top + CAPTION);
        }
    }
    out.push_str("</svg>\n");
    out
}

/// One view in the square at (`left`, `top`).
fn panel(out: &mut String, fig: &Figure, fit: &Fit, view: View, label: &str, left: f64, top: f64) {
    let at = |p: [f64; 3]| {
        let [x, y] = fit.point(view, p);
        (left + x, top + PANEL - y)
    };
    let name = match view {
        View::Front => "front",
        View::Side => "side",
    };
    let _ = writeln!(out, r#"<g class="view {name}">"#);
    let _ = writeln!(
        out,
        r##"<rect x="{left}" y="{top}" width="{PANEL}" height="{PANEL}" fill="none" stroke="#ddd"/>"##
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}">{label}</text>"#,
        left + 6.0,
        top + 16.0
    );
    let g = top + PANEL - fit.ground();
    let _ = writeln!(
        out,
        r#"<line class="ground" x1="{left}" y1="{g:.3}" x2="{:.3}" y2="{g:.3}"/>"#,
        left + PANEL
    );
    // The left side last, over the right where they cross, as on screen.
    for left_side in [false, true] {
        for s in fig
            .segments
            .iter()
            .filter(|s| (s.side == Side::Left) == left_side)
        {
            let ((x1, y1), (x2, y2)) = (at(s.from), at(s.to));
            let _ = writeln!(
                out,
                r#"<line class="{}" x1="{x1:.3}" y1="{y1:.3}" x2="{x2:.3}" y2="{y2:.3}"/>"#,
                side_class(s.side)
            );
        }
    }
    for (b, p) in fig
        .joints
        .iter()
        .enumerate()
        .filter_map(|(b, p)| Some((b, (*p)?)))
    {
        let Some(bone) = HUMAN_BODY_BONES.get(b) else {
            continue;
        };
        let (cx, cy) = at(p);
        let [x, y, z] = p;
        let _ = writeln!(
            out,
            r#"<circle class="joint {}" data-bone="{bone}" data-world="{x:.6} {y:.6} {z:.6}" cx="{cx:.3}" cy="{cy:.3}" r="{JOINT_RADIUS}"/>"#,
            side_class(Side::of(b))
        );
    }
    out.push_str("</g>\n");
}

fn side_class(side: Side) -> &'static str {
    match side {
        Side::Left => "left",
        Side::Right => "right",
        Side::Centre => "centre",
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_is_a_duration_or_a_frame_number() {
        assert_eq!(parse_at("3.5s"), Ok(At::Time(Duration::from_millis(3500))));
        assert_eq!(
            parse_at("1500ms"),
            Ok(At::Time(Duration::from_millis(1500)))
        );
        assert_eq!(parse_at("frame:1200"), Ok(At::Frame(1200)));
        assert_eq!(parse_at("0"), Ok(At::Time(Duration::ZERO)));
        for bad in [
            "",
            "frame:",
            "frame:-1",
            "frame:1.5",
            "3.5x",
            "-1s",
            "soon",
            "1e400s",
        ] {
            let e = parse_at(bad).unwrap_err();
            assert!(
                e.0.contains("frame:1200") && e.0.contains("3.5s"),
                "{bad}: {e:?}"
            );
        }
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b>&c"), "a&lt;b&gt;&amp;c");
    }
}
