//! Pictures instead of numbers: a body stream's stick figure in braille,
//! front and side by side ([`mocap_core::figure`]), and a stream's rate over
//! the last minute as a sparkline (a column of the wide table, and a larger
//! one with its minimum and maximum under every drill-down).

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
}
