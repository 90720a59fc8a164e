//! The screen, drawn from the state model: a header, what is listened on,
//! the main table (one row per stream), or a drill-down into one stream
//! (bones, face bars, OSC addresses, tracker slots), and a help line. Keys
//! change only the [`View`]; drawing is a function of the model, the view
//! and `now`, so it is tested on ratatui's `TestBackend`.

use std::net::SocketAddr;
use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row as TableRow, Table};

use mocap_cli::SendRecord;

use crate::content::Content;
use crate::run::Taken;
use crate::state::{Key, Kind, Liveness, Row, Top};

/// A line under the header: a port listened on (and where it is passed
/// on), or a default port that is not.
#[derive(Clone, Debug)]
pub(crate) enum Note {
    Listening(SocketAddr, Option<SocketAddr>),
    Taken(Taken),
}

/// What a key asks of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    None,
    Quit,
    ToggleRecording,
}

/// The drill-down views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tab {
    Bones,
    Face,
    Addresses,
    Trackers,
}

impl Tab {
    const ALL: [Self; 4] = [Self::Bones, Self::Face, Self::Addresses, Self::Trackers];

    fn title(self) -> &'static str {
        match self {
            Self::Bones => "bones",
            Self::Face => "face",
            Self::Addresses => "addresses",
            Self::Trackers => "trackers",
        }
    }

    fn has(self, c: &Content) -> bool {
        match self {
            Self::Bones => !c.bones.is_empty(),
            Self::Face => !c.face.is_empty(),
            Self::Addresses => !c.addresses.is_empty(),
            Self::Trackers => !c.slots.is_empty(),
        }
    }
}

/// One stream drilled into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Drill {
    pub(crate) key: Key,
    pub(crate) tab: Option<Tab>,
    pub(crate) scroll: usize,
}

/// What the person chose to look at.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// The row the cursor is on.
    pub(crate) selected: Option<Key>,
    pub(crate) drill: Option<Drill>,
    /// A frozen copy of the model and its time, while paused.
    pub(crate) paused: Option<(Top, Duration)>,
    /// The file being recorded to.
    pub(crate) recording: Option<String>,
    pub(crate) notes: Vec<Note>,
}

impl View {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The model and time to draw: the frozen ones while paused.
    fn shown<'a>(&'a self, top: &'a Top, now: Duration) -> (&'a Top, Duration) {
        match &self.paused {
            Some((t, at)) => (t, *at),
            None => (top, now),
        }
    }

    /// Applies one key.
    pub(crate) fn key(&mut self, key: KeyEvent, top: &Top, now: Duration) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Char('c') if ctrl => return Action::Quit,
            KeyCode::Char('q') => return Action::Quit,
            KeyCode::Char('w') => return Action::ToggleRecording,
            KeyCode::Char('p' | ' ') => {
                self.paused = match self.paused.take() {
                    Some(_) => None,
                    None => Some((top.clone(), now)),
                };
                return Action::None;
            }
            _ => {}
        }
        let paused = self.paused.take();
        match &paused {
            Some((frozen, at)) => self.navigate(key, frozen, *at),
            None => self.navigate(key, top, now),
        }
        self.paused = paused;
        Action::None
    }

    /// Moves the cursor, drills down, scrolls.
    fn navigate(&mut self, key: KeyEvent, shown: &Top, at: Duration) {
        let rows = shown.rows(at);
        if let Some(d) = &mut self.drill {
            match key.code {
                KeyCode::Esc | KeyCode::Backspace | KeyCode::Left => self.drill = None,
                KeyCode::Tab => {
                    if let Some(s) = shown.stream(&d.key) {
                        d.tab = next_tab(&s.content, d.tab);
                        d.scroll = 0;
                    }
                }
                KeyCode::Down | KeyCode::Char('j') => d.scroll = d.scroll.saturating_add(1),
                KeyCode::Up | KeyCode::Char('k') => d.scroll = d.scroll.saturating_sub(1),
                KeyCode::PageDown => d.scroll = d.scroll.saturating_add(10),
                KeyCode::PageUp => d.scroll = d.scroll.saturating_sub(10),
                _ => {}
            }
            return;
        }
        let at_row = self
            .selected
            .and_then(|k| rows.iter().position(|r| r.key == k));
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => {
                let i = at_row.map_or(0, |i| (i + 1).min(rows.len().saturating_sub(1)));
                self.selected = rows.get(i).map(|r| r.key);
            }
            KeyCode::Up | KeyCode::Char('k') => {
                let i = at_row.map_or(0, |i| i.saturating_sub(1));
                self.selected = rows.get(i).map(|r| r.key);
            }
            KeyCode::Enter | KeyCode::Right => {
                let key = at_row
                    .and_then(|i| rows.get(i))
                    .or_else(|| rows.first())
                    .map(|r| r.key);
                if let Some(key) = key {
                    self.selected = Some(key);
                    let tab = shown
                        .stream(&key)
                        .and_then(|s| first_tab(key.kind, &s.content));
                    self.drill = Some(Drill {
                        key,
                        tab,
                        scroll: 0,
                    });
                }
            }
            _ => {}
        }
    }
}

/// The view a stream opens on: what its protocol is mostly about.
fn first_tab(kind: Kind, c: &Content) -> Option<Tab> {
    use mocap_core::protocol::Protocol;
    let preferred = match kind {
        Kind::Known(Protocol::IFacialMocap | Protocol::LiveLink) => Tab::Face,
        Kind::Known(Protocol::Vrchat | Protocol::Vmt) => Tab::Trackers,
        _ => Tab::Bones,
    };
    if preferred.has(c) {
        Some(preferred)
    } else {
        next_tab(c, Some(preferred))
    }
}

fn next_tab(c: &Content, from: Option<Tab>) -> Option<Tab> {
    let start = from
        .and_then(|t| Tab::ALL.iter().position(|x| *x == t))
        .map_or(0, |i| i + 1);
    (0..Tab::ALL.len())
        .filter_map(|k| Tab::ALL.get((start + k) % Tab::ALL.len()).copied())
        .find(|t| t.has(c))
}

/// Draws the whole screen.
pub(crate) fn draw(f: &mut Frame<'_>, top: &Top, view: &View, now: Duration, sends: &[SendRecord]) {
    let (shown, at) = view.shown(top, now);
    let area = f.area();
    let notes = note_lines(view, sends, area.width);
    let note_height = u16::try_from(notes.len())
        .unwrap_or(u16::MAX)
        .min(area.height / 4);
    let [head, notes_area, body, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(note_height),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    let rows = shown.rows(at);
    f.render_widget(Paragraph::new(header(&rows, view)), head);
    f.render_widget(Paragraph::new(notes), notes_area);
    match view.drill {
        Some(d) => drill(f, body, shown, &rows, d, at),
        None => table(f, body, &rows, view.selected),
    }
    let help_text = if view.drill.is_some() {
        " Esc back  Tab next view  ↑↓ scroll  p pause  w record  q quit"
    } else {
        " ↑↓ select  Enter drill down  p pause  w record  q quit"
    };
    f.render_widget(
        Paragraph::new(help_text).style(Style::new().add_modifier(Modifier::REVERSED)),
        help,
    );
}

fn header(rows: &[Row], view: &View) -> Line<'static> {
    let live = rows.iter().filter(|r| r.state == Liveness::Live).count();
    let rate: f64 = rows.iter().map(|r| r.rate_hz).sum();
    let mut spans = vec![
        Span::styled("mocap-top", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!(
            "  {} streams ({live} live)  {rate:.0} datagrams/s",
            rows.len()
        )),
    ];
    if view.paused.is_some() {
        spans.push(Span::styled("  PAUSED", Style::new().fg(Color::Yellow)));
    }
    if let Some(path) = &view.recording {
        spans.push(Span::styled(
            format!("  REC {path}"),
            Style::new().fg(Color::Red),
        ));
    }
    Line::from(spans)
}

fn note_lines(view: &View, sends: &[SendRecord], width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut ports = Vec::new();
    for n in &view.notes {
        match n {
            Note::Listening(addr, to) => {
                ports.push(match (to, sends.iter().find(|s| Some(s.to) == *to)) {
                    (Some(to), Some(s)) if s.failed > 0 => {
                        format!("{addr}→{to} ({} sent, {} failed)", s.sent, s.failed)
                    }
                    (Some(to), _) => format!("{addr}→{to}"),
                    (None, _) => addr.to_string(),
                })
            }
            Note::Taken(t) => lines.push(Line::styled(
                truncate(&t.advice(), usize::from(width)),
                Style::new().fg(Color::Yellow),
            )),
        }
    }
    if !ports.is_empty() {
        lines.insert(
            0,
            Line::raw(truncate(
                &format!("listening on {}", ports.join(" ")),
                usize::from(width),
            )),
        );
    }
    lines
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Short protocol labels for narrow screens.
fn short(kind: Kind) -> &'static str {
    match kind.key() {
        "ifacialmocap" => "ifm",
        other => other,
    }
}

fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.1}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn age_text(r: &Row) -> String {
    let s = r.age_ms as f64 / 1000.0;
    if s >= 100.0 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

fn table(f: &mut Frame<'_>, area: Rect, rows: &[Row], selected: Option<Key>) {
    let wide = area.width >= 120;
    let header: Vec<&str> = if wide {
        vec![
            "PROTOCOL", "PORT", "SENDER", "RATE/s", "JITTER", "LOST", "DUP", "REORD", "RST", "AGE",
            "ERR", "BYTES/s", "NOTE",
        ]
    } else {
        vec![
            "PROTO", "PORT", "SENDER", "RATE", "JIT", "LOST", "AGE", "ERR", "B/s", "NOTE",
        ]
    };
    let widths: Vec<Constraint> = if wide {
        [12, 5, 21, 7, 6, 6, 5, 5, 4, 6, 5, 8]
            .into_iter()
            .map(Constraint::Length)
            .chain([Constraint::Fill(1)])
            .collect()
    } else {
        [8, 5, 21, 6, 5, 5, 5, 4, 6]
            .into_iter()
            .map(Constraint::Length)
            .chain([Constraint::Fill(1)])
            .collect()
    };
    let body: Vec<TableRow<'_>> = rows
        .iter()
        .map(|r| {
            let port = r
                .listen
                .map_or_else(|| "-".into(), |l| l.port().to_string());
            let sender = r.sender.map_or_else(|| "-".into(), |s| s.to_string());
            let jitter = r
                .jitter_ms
                .map_or_else(|| "-".into(), |j| format!("{j:.1}"));
            let note = if r.shared {
                if wide {
                    "2+ SENDERS on this port".into()
                } else {
                    "SHARED".into()
                }
            } else if let (Some(size), Some(hex)) = (r.size, &r.head_hex) {
                format!("{size}B {hex}")
            } else {
                match r.state {
                    Liveness::Live => String::new(),
                    Liveness::Stale => "stale".into(),
                    Liveness::Quiet => "quiet".into(),
                }
            };
            let cells: Vec<String> = if wide {
                vec![
                    r.key.kind.name().into(),
                    port,
                    sender,
                    format!("{:.1}", r.rate_hz),
                    jitter,
                    r.lost.to_string(),
                    r.duplicates.to_string(),
                    r.reordered.to_string(),
                    r.restarts.to_string(),
                    age_text(r),
                    r.errors.to_string(),
                    si(r.bytes_per_s),
                    note,
                ]
            } else {
                vec![
                    short(r.key.kind).into(),
                    port,
                    sender,
                    format!("{:.1}", r.rate_hz),
                    jitter,
                    r.lost.to_string(),
                    age_text(r),
                    r.errors.to_string(),
                    si(r.bytes_per_s),
                    note,
                ]
            };
            let mut style = match r.state {
                Liveness::Live => Style::new(),
                Liveness::Stale => Style::new().fg(Color::Yellow),
                Liveness::Quiet => Style::new().fg(Color::DarkGray),
            };
            if r.shared {
                style = style.fg(Color::Red);
            }
            if Some(r.key) == selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            TableRow::new(cells).style(style)
        })
        .collect();
    let empty = rows.is_empty();
    let t = Table::new(body, widths)
        .header(TableRow::new(header).style(Style::new().add_modifier(Modifier::BOLD)));
    f.render_widget(t, area);
    if empty && area.height > 2 {
        let msg = Paragraph::new(
            " no datagrams yet: is the app sending to this machine's IPv4 address and one of \
             the ports above? is a firewall in the way?",
        )
        .wrap(ratatui::widgets::Wrap { trim: true });
        f.render_widget(
            msg,
            Rect {
                y: area.y + 1,
                height: area.height - 1,
                ..area
            },
        );
    }
}

fn drill(f: &mut Frame<'_>, area: Rect, top: &Top, rows: &[Row], d: Drill, now: Duration) {
    let [title, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let row = rows.iter().find(|r| r.key == d.key);
    let mut spans = vec![Span::styled(
        format!(
            "{} on {} from {}",
            d.key.kind.name(),
            d.key.listen.map_or_else(|| "-".into(), |a| a.to_string()),
            d.key.sender.map_or_else(|| "-".into(), |a| a.to_string()),
        ),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    if let Some(r) = row {
        spans.push(Span::raw(format!("  {:.1}/s", r.rate_hz)));
    }
    let Some(stream) = top.stream(&d.key) else {
        f.render_widget(Paragraph::new(Line::from(spans)), title);
        f.render_widget(Paragraph::new(" this stream is gone (evicted)"), body);
        return;
    };
    let c = &stream.content;
    for t in Tab::ALL.iter().filter(|t| t.has(c)) {
        let style = if Some(*t) == d.tab {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        spans.push(Span::raw("  "));
        spans.push(Span::styled(t.title(), style));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), title);
    match d.tab {
        Some(Tab::Bones) => bones(f, body, c, d.scroll),
        Some(Tab::Face) => face(f, body, c, d.scroll),
        Some(Tab::Addresses) => addresses(f, body, c, d.scroll, now),
        Some(Tab::Trackers) => trackers(f, body, c, d.scroll),
        None => {
            let text = match (d.key.kind, stream.last_size()) {
                (Kind::Unknown, size) => format!(
                    " unknown bytes: newest datagram {size} bytes, starting {}",
                    crate::state::hex_head(stream.head())
                ),
                _ => " nothing decoded yet".into(),
            };
            f.render_widget(
                Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
                body,
            );
        }
    }
}

fn f3(v: f32) -> String {
    format!("{v:.3}")
}

fn bones(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize) {
    let header = TableRow::new(vec![
        "BONE", "ROT X°", "ROT Y°", "ROT Z°", "POS X", "POS Y", "POS Z",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = c.bones.iter().skip(scroll).map(|b| {
        let e = b.euler();
        TableRow::new(vec![
            b.name.clone(),
            format!("{:.1}", e[0]),
            format!("{:.1}", e[1]),
            format!("{:.1}", e[2]),
            f3(b.pos[0]),
            f3(b.pos[1]),
            f3(b.pos[2]),
        ])
    });
    let widths = [
        Constraint::Length(20),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
    ];
    f.render_widget(Table::new(rows, widths).header(header), area);
}

fn face(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize) {
    let angle_lines = u16::try_from(c.angles.len())
        .unwrap_or(0)
        .min(area.height / 3);
    let [angles, bars] =
        Layout::vertical([Constraint::Length(angle_lines), Constraint::Fill(1)]).areas(area);
    let lines: Vec<Line<'_>> = c
        .angles
        .iter()
        .map(|(what, v, unit)| {
            Line::raw(format!(
                " {what:<10} {:>8.2} {:>8.2} {:>8.2}  {unit}",
                v[0], v[1], v[2]
            ))
        })
        .collect();
    f.render_widget(Paragraph::new(lines), angles);
    // Columns of about 40 cells: a name, a bar, the value.
    let cols = usize::from((bars.width / 40).max(1));
    let cell = usize::from(bars.width) / cols;
    let height = usize::from(bars.height);
    if height == 0 {
        return;
    }
    let name_w = 16.min(cell.saturating_sub(8));
    let bar_w = cell.saturating_sub(name_w + 8);
    let values: Vec<&(String, f32)> = c.face.iter().skip(scroll * cols).collect();
    let mut lines = Vec::with_capacity(height);
    for r in 0..height {
        let mut spans = Vec::new();
        for k in 0..cols {
            let Some((name, v)) = values.get(k * height + r) else {
                continue;
            };
            let filled = bar_cells(*v, bar_w);
            spans.push(Span::raw(format!(" {:<name_w$}", truncate(name, name_w))));
            spans.push(Span::styled(
                "█".repeat(filled),
                Style::new().fg(Color::Cyan),
            ));
            spans.push(Span::raw(" ".repeat(bar_w - filled)));
            spans.push(Span::raw(format!("{v:>6.2} ")));
        }
        lines.push(Line::from(spans));
    }
    f.render_widget(Paragraph::new(lines), bars);
}

/// Cells of a bar `width` long filled for `v` in 0..1 (clamped; NaN empty).
pub(crate) fn bar_cells(v: f32, width: usize) -> usize {
    if v.is_nan() {
        return 0;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "clamped to 0..=width first"
    )]
    let n = (v.clamp(0.0, 1.0) * width as f32).round() as usize;
    n.min(width)
}

fn addresses(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize, now: Duration) {
    let header = TableRow::new(vec!["ADDRESS", "VALUE", "RATE/s", "COUNT"])
        .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = c.addresses.iter().skip(scroll).map(|a| {
        TableRow::new(vec![
            a.key.clone(),
            a.value.clone(),
            format!("{:.1}", a.rate(now)),
            a.count.to_string(),
        ])
    });
    let widths = [
        Constraint::Percentage(45),
        Constraint::Fill(1),
        Constraint::Length(7),
        Constraint::Length(8),
    ];
    f.render_widget(Table::new(rows, widths).header(header), area);
}

fn trackers(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize) {
    let header = TableRow::new(vec![
        "SLOT", "POS X", "POS Y", "POS Z", "ROT X", "ROT Y", "ROT Z",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let three = |v: Option<[f32; 3]>| -> [String; 3] {
        v.map_or_else(|| ["-".into(), "-".into(), "-".into()], |v| v.map(f3))
    };
    let rows = c.slots.iter().skip(scroll).map(|s| {
        let [px, py, pz] = three(s.pos);
        let [rx, ry, rz] = three(s.rot);
        TableRow::new(vec![s.name.clone(), px, py, pz, rx, ry, rz])
    });
    let widths = [
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
    ];
    f.render_widget(Table::new(rows, widths).header(header), area);
}
