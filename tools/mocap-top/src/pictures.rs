//! Pictures instead of numbers: a body stream's stick figure in braille,
//! front and side by side ([`mocap_core::figure`]), and a stream's rate over
//! the last minute as a sparkline (a column of the wide table, and a larger
//! one with its minimum and maximum under every drill-down); the head's turn
//! as three gauges, and tracker slots seen from above.

use mocap_core::bridge::BodyPose;
use mocap_core::figure::{Figure, Side, View};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::{Marker, bar};
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Line as Stroke};
use ratatui::widgets::{Paragraph, RenderDirection, Sparkline, SparklineBar};

/// The avatar's left limbs.
pub(crate) const LEFT: Color = Color::Cyan;
/// Its right limbs and spine.
const BODY: Color = Color::White;
const GROUND: Color = Color::DarkGray;
/// A second without a frame in a sparkline.
const DROP: Color = Color::Red;
/// A second without a frame, in the table's sparkline.
const DROP_MARK: &str = "·";

/// The front and side views of `pose`, side by side in `area`, in one
/// scale: braille dots (two across, four down a cell, about square).
pub(crate) fn figure(f: &mut Frame<'_>, area: Rect, pose: &BodyPose) {
    let Some(fig) = Figure::of(pose) else {
        f.render_widget(
            Paragraph::new(" the newest frame has no body to draw"),
            area,
        );
        return;
    };
    let [front, side] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(area);
    // Both views in the smaller one's box: the same scale.
    let w = f64::from(front.width.min(side.width)) * 2.0;
    let h = f64::from(area.height) * 4.0;
    let fit = fig.fit(w, h);
    for (at, view, label) in [
        (front, View::Front, "front · its left in cyan"),
        (side, View::Side, "side · facing →"),
    ] {
        let canvas = Canvas::default()
            .marker(Marker::Braille)
            .x_bounds([0.0, w])
            .y_bounds([0.0, h])
            .paint(|ctx| {
                let g = fit.ground();
                ctx.draw(&Stroke::new(0.0, g, w, g, GROUND));
                // The left side last: where limbs cross, it shows.
                for left in [false, true] {
                    for s in fig
                        .segments
                        .iter()
                        .filter(|s| (s.side == Side::Left) == left)
                    {
                        let [x1, y1] = fit.point(view, s.from);
                        let [x2, y2] = fit.point(view, s.to);
                        let color = if left { LEFT } else { BODY };
                        ctx.draw(&Stroke::new(x1, y1, x2, y2, color));
                    }
                }
                ctx.print(0.0, h, Span::styled(label, Style::new().fg(GROUND)));
            });
        f.render_widget(canvas, at);
    }
}

/// The last minute's rate as a sparkline `width` cells wide, two seconds a
/// cell (the lower of the two, so a drop shows), newest at the right; a
/// cell with a second without frames is a red dot.
pub(crate) fn spark_text(history: &[u32], width: usize) -> Line<'static> {
    let cells: Vec<u32> = history
        .rchunks(2)
        .take(width)
        .map(|c| c.iter().copied().min().unwrap_or(0))
        .collect();
    let top = cells.iter().copied().max().unwrap_or(0).max(1);
    let mut spans = vec![Span::raw(" ".repeat(width.saturating_sub(cells.len())))];
    for c in cells.iter().rev() {
        spans.push(if *c == 0 {
            Span::styled(DROP_MARK, Style::new().fg(DROP))
        } else {
            Span::raw(level(*c, top))
        });
    }
    Line::from(spans)
}

/// One of the eight bar heights for `v` of `top` (never empty above 0).
fn level(v: u32, top: u32) -> &'static str {
    const BARS: [&str; 8] = [
        bar::ONE_EIGHTH,
        bar::ONE_QUARTER,
        bar::THREE_EIGHTHS,
        bar::HALF,
        bar::FIVE_EIGHTHS,
        bar::THREE_QUARTERS,
        bar::SEVEN_EIGHTHS,
        bar::FULL,
    ];
    let i = (u64::from(v) * 8).div_ceil(u64::from(top.max(1)));
    let i = usize::try_from(i).unwrap_or(8).clamp(1, 8) - 1;
    BARS.get(i).copied().unwrap_or(bar::FULL)
}

/// Rows [`rate_graph`] takes.
pub(crate) const GRAPH_ROWS: u16 = 3;

/// The last minute's rate under a drill-down: a line with its minimum,
/// maximum and newest second, and a sparkline of a bar a second, newest at
/// the right; seconds without frames are red marks on the baseline.
pub(crate) fn rate_graph(f: &mut Frame<'_>, area: Rect, history: &[u32]) {
    let [label, graph] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let text = match (history.iter().min(), history.iter().max(), history.last()) {
        (Some(lo), Some(hi), Some(now)) => format!(
            " frames/s, last {} s: min {lo}  max {hi}  newest second {now}",
            history.len()
        ),
        _ => " frames/s: a second has not passed yet".into(),
    };
    let drops = history.iter().filter(|c| **c == 0).count();
    let mut spans = vec![Span::raw(text)];
    if drops > 0 {
        spans.push(Span::styled(
            format!("  {drops} s without a frame"),
            Style::new().fg(DROP),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), label);
    let bars = history.iter().rev().map(|c| {
        if *c == 0 {
            SparklineBar::from(None)
        } else {
            SparklineBar::from(u64::from(*c))
        }
    });
    f.render_widget(
        Sparkline::default()
            .data(bars)
            .direction(RenderDirection::RightToLeft)
            .style(Style::new().fg(Color::Green))
            .absent_value_symbol(bar::ONE_EIGHTH)
            .absent_value_style(Style::new().fg(DROP)),
        graph,
    );
}

/// Cells of one head gauge: −90° at the left end, +90° at the right.
const GAUGE: usize = 15;

/// The head's turn as three gauges (−90° to +90° each, a mark at the
/// angle, a bar at 0): yaw, pitch and roll for Live Link Face (radians on
/// its wire, shown in degrees), the x, y and z angles in degrees for the
/// others. An angle past ±90° sits red at the end.
pub(crate) fn head_gauges(v: [f32; 3], unit: &str) -> Line<'static> {
    let (names, radians) = if unit == "yaw/pitch/roll" {
        (["yaw", "pitch", "roll"], true)
    } else {
        (["x", "y", "z"], false)
    };
    let mut spans = vec![Span::raw("           ")];
    for (name, a) in names.iter().zip(v) {
        let deg = if radians {
            f64::from(a).to_degrees()
        } else {
            f64::from(a)
        };
        spans.push(Span::raw(format!(" {name:>5} ")));
        let half = (GAUGE / 2) as f64;
        let at = (deg / 90.0 * half).round();
        let out = at.abs() > half;
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to the gauge first"
        )]
        let mark = (!deg.is_nan()).then(|| (at.clamp(-half, half) + half) as usize);
        let cells: String = (0..GAUGE)
            .map(|i| match i {
                _ if Some(i) == mark => '●',
                _ if i == GAUGE / 2 => '│',
                _ => '─',
            })
            .collect();
        let style = if out {
            Style::new().fg(DROP)
        } else {
            Style::new().fg(Color::Cyan)
        };
        spans.push(Span::styled(cells, style));
    }
    Line::from(spans)
}

/// The tracker slots' positions seen from above: +X to the right, +Z (the
/// avatar's front, in Unity's axes) up, one scale across and up, fitted to
/// the slots (at least 1 m across), each slot a dot and its name, the
/// origin a grey cross.
pub(crate) fn trackers_above(f: &mut Frame<'_>, area: Rect, slots: &[(&str, [f32; 3])]) {
    let w = f64::from(area.width) * 2.0;
    let h = f64::from(area.height) * 4.0;
    if slots.is_empty() || w < 2.0 || h < 2.0 {
        return;
    }
    let xs = slots.iter().map(|(_, p)| f64::from(p[0]));
    let zs = slots.iter().map(|(_, p)| f64::from(p[2]));
    let span = |it: &mut dyn Iterator<Item = f64>| {
        it.filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (x0, x1) = span(&mut xs.clone());
    let (z0, z1) = span(&mut zs.clone());
    if !(x0.is_finite() && z0.is_finite()) {
        return;
    }
    let size = (x1 - x0).max(z1 - z0).max(1.0) * 1.3;
    let per_m = w.min(h) / size;
    let (cx, cz) = ((x0 + x1) / 2.0, (z0 + z1) / 2.0);
    let (hw, hh) = (w / 2.0 / per_m, h / 2.0 / per_m);
    let canvas = Canvas::default()
        .marker(Marker::Braille)
        .x_bounds([cx - hw, cx + hw])
        .y_bounds([cz - hh, cz + hh])
        .paint(|ctx| {
            let r = 0.05 * size;
            ctx.draw(&Stroke::new(-r, 0.0, r, 0.0, GROUND));
            ctx.draw(&Stroke::new(0.0, -r, 0.0, r, GROUND));
            ctx.print(
                cx - hw,
                cz + hh,
                Span::styled("from above · front ↑", Style::new().fg(GROUND)),
            );
            for (name, p) in slots {
                let (x, z) = (f64::from(p[0]), f64::from(p[2]));
                let d = 0.01 * size;
                ctx.draw(&Stroke::new(x - d, z, x + d, z, LEFT));
                ctx.draw(&Stroke::new(x, z - d, x, z + d, LEFT));
                ctx.print(x + 2.0 * d, z, Span::raw((*name).to_owned()));
            }
        });
    f.render_widget(canvas, area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_sparkline_is_newest_right_with_drops_red() {
        let h = [60, 60, 60, 60, 0, 60, 30, 60];
        let l = spark_text(&h, 6);
        let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        // Pairs from the newest: (30, 60) → 30, (0, 60) → drop, 60, 60.
        assert_eq!(text, format!("  {0}{0}·{1}", bar::FULL, bar::HALF));
        let red: Vec<&str> = l
            .spans
            .iter()
            .filter(|s| s.style.fg == Some(DROP))
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(red, ["·"]);
        // Cut to the width: the newest cells stay.
        let l = spark_text(&[1; 60], 4);
        let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, bar::FULL.repeat(4));
        assert_eq!(level(1, 60), bar::ONE_EIGHTH, "a trickle is not blank");
    }

    #[test]
    fn head_gauges_mark_the_angle_between_minus_and_plus_90_degrees() {
        let text = |l: &Line<'_>| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        };
        // Degrees (x, y, z): 0 in the middle, +45 halfway right, -90 at the left end.
        let l = head_gauges([0.0, 45.0, -90.0], "deg");
        let t = text(&l);
        assert!(t.contains("     x ───────●───────"), "{t}");
        assert!(t.contains("     y ───────│───●───"), "{t}");
        assert!(t.contains("     z ●──────│───────"), "{t}");
        // Live Link Face: radians, named yaw, pitch, roll; past 90° is red.
        let l = head_gauges([std::f32::consts::FRAC_PI_4, 0.0, 3.0], "yaw/pitch/roll");
        let t = text(&l);
        assert!(t.contains("   yaw ───────│───●───"), "{t}");
        assert!(t.contains("  roll ───────│──────●"), "{t}");
        assert_eq!(l.spans.last().unwrap().style.fg, Some(DROP));
        // NaN: no mark.
        let t = text(&head_gauges([f32::NAN, 0.0, 0.0], "deg"));
        assert!(t.contains("     x ───────│───────"), "{t}");
    }
}
