//! The screen, drawn from the state model: a header, what is listened on,
//! the main table (one row per stream), or a drill-down into one stream
//! (bones, face bars, OSC addresses, tracker slots), and a help line. Keys
//! change only the [`View`]; drawing is a function of the model, the view
//! and `now`, so it is tested on ratatui's `TestBackend`.

use std::cell::Cell;
use std::net::SocketAddr;
use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell as TableCell, Paragraph, Row as TableRow, Table, TableState};

use mocap_cli::sends::SendRecord;

use crate::content::{Content, FactValue};
use crate::pictures;
use crate::state::{self, Key, Kind, Liveness, Row, Taken, Top};
use mocap_core::figure::Figure;

/// Longest `/` filter: an address with its port is 47 characters.
const MAX_FILTER: usize = 64;
/// The table's rate sparkline: from this width, this many cells (two
/// seconds each: the last minute).
const SPARK_FROM: u16 = 150;
const SPARK_CELLS: u16 = 30;

/// A line under the header: a port listened on (and where it is passed
/// on), or a default port that is not.
#[derive(Clone, Debug)]
pub(crate) enum Note {
    Listening(SocketAddr, Option<SocketAddr>),
    Taken(Taken),
    /// A recording that failed (a full disk) and stopped; the run goes on.
    RecordingStopped(String),
}

/// What a key asks of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    None,
    Quit,
    ToggleRecording,
    /// Paint the whole screen again (Ctrl-L).
    Redraw,
    /// Remove the quiet rows (`c`).
    ClearQuiet,
}

/// The drill-down views.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tab {
    /// The stick figure of the newest body frame.
    Figure,
    Bones,
    Face,
    Addresses,
    Trackers,
}

impl Tab {
    const ALL: [Self; 5] = [
        Self::Figure,
        Self::Bones,
        Self::Face,
        Self::Addresses,
        Self::Trackers,
    ];

    fn title(self) -> &'static str {
        match self {
            Self::Figure => "figure",
            Self::Bones => "bones",
            Self::Face => "face",
            Self::Addresses => "addresses",
            Self::Trackers => "trackers",
        }
    }

    fn has(self, c: &Content) -> bool {
        match self {
            Self::Figure => c.pose().is_some_and(|p| Figure::of(p).is_some()),
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
    /// The `/` filter, lower case: rows whose protocol, port or sender
    /// hold it.
    pub(crate) filter: String,
    /// Keys go to the filter (after `/`, until Enter or Esc).
    pub(crate) editing: bool,
    /// The key list (`?`) is up.
    pub(crate) help: bool,
    /// What the last draw found: the first table row on screen, how many
    /// rows fit, and how far the drill-down can scroll. Keys page by it
    /// and keep the selection on screen.
    offset: Cell<usize>,
    page: Cell<usize>,
    drill_max: Cell<usize>,
    /// The file being recorded to.
    pub(crate) recording: Option<String>,
    /// The capture read with `-r` has ended (the screen stays until `q`).
    pub(crate) ended: bool,
    pub(crate) notes: Vec<Note>,
}

impl View {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The rows the table shows: the model's, through the filter.
    fn rows(&self, shown: &Top, at: Duration) -> Vec<Row> {
        let mut rows = shown.rows(at);
        rows.retain(|r| state::matches(r, &self.filter));
        rows
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
            KeyCode::Char('l') if ctrl => return Action::Redraw,
            _ if self.help => {
                self.help = false;
                return Action::None;
            }
            _ if self.editing => {
                match key.code {
                    KeyCode::Enter => self.editing = false,
                    KeyCode::Esc => {
                        self.editing = false;
                        self.filter.clear();
                    }
                    KeyCode::Backspace => {
                        self.filter.pop();
                    }
                    KeyCode::Char(c) if !ctrl && self.filter.chars().count() < MAX_FILTER => {
                        self.filter.extend(c.to_lowercase());
                    }
                    _ => {}
                }
                return Action::None;
            }
            KeyCode::Char('?') => {
                self.help = true;
                return Action::None;
            }
            KeyCode::Char('/') if self.drill.is_none() => {
                self.editing = true;
                return Action::None;
            }
            KeyCode::Esc if self.drill.is_none() && !self.filter.is_empty() => {
                self.filter.clear();
                return Action::None;
            }
            KeyCode::Char('c') if self.drill.is_none() => return Action::ClearQuiet,
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
        let page = self.page.get().max(1);
        if let Some(d) = &mut self.drill {
            let max = self.drill_max.get();
            match key.code {
                KeyCode::Esc | KeyCode::Backspace | KeyCode::Left => self.drill = None,
                KeyCode::Tab => {
                    if let Some(s) = shown.stream(&d.key) {
                        d.tab = next_tab(&s.content, d.tab);
                        d.scroll = 0;
                    }
                }
                KeyCode::Down | KeyCode::Char('j') => d.scroll = (d.scroll + 1).min(max),
                KeyCode::Up | KeyCode::Char('k') => d.scroll = d.scroll.saturating_sub(1),
                KeyCode::PageDown => d.scroll = d.scroll.saturating_add(page).min(max),
                KeyCode::PageUp => d.scroll = d.scroll.saturating_sub(page),
                KeyCode::Home => d.scroll = 0,
                KeyCode::End => d.scroll = max,
                _ => {}
            }
            return;
        }
        let rows = self.rows(shown, at);
        let last = rows.len().saturating_sub(1);
        // With no row picked (or it went), the cursor starts from the top
        // row on screen: whatever it lands on can be seen.
        let at_row = self
            .selected
            .and_then(|k| rows.iter().position(|r| r.from.key == k));
        let from = at_row.unwrap_or_else(|| self.offset.get().min(last));
        let to = match key.code {
            KeyCode::Down | KeyCode::Char('j') => at_row.map_or(from, |i| (i + 1).min(last)),
            KeyCode::Up | KeyCode::Char('k') => at_row.map_or(from, |i| i.saturating_sub(1)),
            KeyCode::PageDown => from.saturating_add(page).min(last),
            KeyCode::PageUp => from.saturating_sub(page),
            KeyCode::Home => 0,
            KeyCode::End => last,
            _ => from,
        };
        match key.code {
            KeyCode::Down
            | KeyCode::Char('j' | 'k')
            | KeyCode::Up
            | KeyCode::PageDown
            | KeyCode::PageUp
            | KeyCode::Home
            | KeyCode::End => self.selected = rows.get(to).map(|r| r.from.key),
            KeyCode::Enter | KeyCode::Right => {
                let key = rows.get(from).map(|r| r.from.key);
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
    use mocap_core::protocol::Carries;
    let preferred = match kind {
        Kind::Known(p) => match p.spec().carries {
            Carries::Face => Tab::Face,
            Carries::Trackers => Tab::Trackers,
            Carries::Body => Tab::Figure,
        },
        Kind::Unknown => Tab::Bones,
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
    let all = shown.rows(at);
    let rate = shown.datagrams_per_s(at);
    f.render_widget(Paragraph::new(header(&all, rate, view)), head);
    f.render_widget(Paragraph::new(notes), notes_area);
    let mut rows = all;
    rows.retain(|r| state::matches(r, &view.filter));
    // Rows of the table or the drill-down list under their header line.
    view.page
        .set(usize::from(body.height.saturating_sub(2)).max(1));
    if view.help {
        keys_help(f, body);
    } else {
        match view.drill {
            Some(d) => drill(f, body, shown, &rows, d, at, view),
            None => table(f, body, &rows, view),
        }
    }
    let help_text = if view.editing {
        " filter: type a protocol, port or sender  Enter keep  Esc clear"
    } else if view.drill.is_some() {
        " Esc back  Tab next view  ↑↓ PgUp PgDn scroll  p pause  w record  ? keys  q quit"
    } else {
        " ↑↓ PgUp PgDn select  Enter drill down  / filter  c clear quiet  ? keys  q quit"
    };
    f.render_widget(
        Paragraph::new(help_text).style(Style::new().add_modifier(Modifier::REVERSED)),
        help,
    );
}

/// Every key, for `?`.
const KEYS: [(&str, &str); 13] = [
    ("Up/Down, j/k", "pick a row; in a drill-down, scroll"),
    ("PgUp/PgDn", "a page up or down"),
    ("Home/End", "the first or last row"),
    ("Enter", "drill down into the row"),
    ("Tab", "the drill-down's next view"),
    ("Esc", "back to the table; clears the filter"),
    ("/", "filter by protocol, port or sender (Enter keeps it)"),
    ("c", "clear the quiet rows"),
    ("p, Space", "pause the screen (counting goes on)"),
    ("w", "start or stop recording to a pcapng"),
    ("Ctrl-L", "paint the screen afresh"),
    ("?", "this list (any key closes it)"),
    ("q, Ctrl-C", "quit"),
];

fn keys_help(f: &mut Frame<'_>, area: Rect) {
    let rows = KEYS
        .iter()
        .map(|(k, what)| TableRow::new(vec![format!(" {k}"), (*what).to_owned()]));
    f.render_widget(
        Table::new(rows, [Constraint::Length(14), Constraint::Fill(1)]).header(
            TableRow::new(vec![" KEY", "WHAT IT DOES"])
                .style(Style::new().add_modifier(Modifier::BOLD)),
        ),
        area,
    );
}

fn header(rows: &[Row], rate: f64, view: &View) -> Line<'static> {
    let live = rows
        .iter()
        .filter(|r| r.own.state == Liveness::Live)
        .count();
    // + 0.0: no "-0".
    let rate = rate.max(0.0) + 0.0;
    let mut spans = vec![
        Span::styled("mocap-top", Style::new().add_modifier(Modifier::BOLD)),
        Span::raw(format!(
            "  {} ({live} live)  {rate:.0} datagrams/s",
            mocap_cli::output::plural(rows.len() as u64, "stream", "streams"),
        )),
    ];
    if !view.filter.is_empty() || view.editing {
        let shown = rows
            .iter()
            .filter(|r| state::matches(r, &view.filter))
            .count();
        let cursor = if view.editing { "_" } else { "" };
        spans.push(Span::styled(
            format!("  /{}{cursor} ({shown} shown)", view.filter),
            Style::new().fg(Color::Cyan),
        ));
    }
    if view.paused.is_some() {
        spans.push(Span::styled("  PAUSED", Style::new().fg(Color::Yellow)));
    }
    if view.ended {
        spans.push(Span::styled(
            "  END OF INPUT (q quits)",
            Style::new().fg(Color::Yellow),
        ));
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
            Note::Taken(t) => lines.extend(
                wrap(&t.advice(), usize::from(width))
                    .into_iter()
                    .map(|l| Line::styled(l, Style::new().fg(Color::Yellow))),
            ),
            Note::RecordingStopped(why) => lines.extend(
                wrap(why, usize::from(width))
                    .into_iter()
                    .map(|l| Line::styled(l, Style::new().fg(Color::Red))),
            ),
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

/// `text` in lines of at most `width` characters, broken at spaces (a word
/// longer than a line is broken where the line ends).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        if len > 0 && len + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
            len = 0;
        }
        if len > 0 {
            line.push(' ');
            len += 1;
        }
        while len + word.len() > width {
            let rest = word.split_off(width - len);
            line.extend(word);
            lines.push(std::mem::take(&mut line));
            len = 0;
            word = rest;
        }
        len += word.len();
        line.extend(word);
    }
    if !line.is_empty() {
        lines.push(line);
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
/// The protocol's label for the narrow PROTO column (the registry's).
fn short(kind: Kind) -> &'static str {
    match kind {
        Kind::Known(p) => p.spec().label,
        Kind::Unknown => kind.key(),
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
    let s = r.own.age_ms as f64 / 1000.0;
    if s >= 100.0 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

/// A fact's value as text: numbers as sent, shortest form.
fn fact_text(v: &FactValue) -> String {
    match v {
        FactValue::Number(n) => format!("{n}"),
        FactValue::Text(t) => t.clone(),
    }
}

fn fact<'a>(facts: &'a [(&'static str, FactValue)], what: &str) -> Option<&'a FactValue> {
    facts.iter().find(|f| f.0 == what).map(|f| &f.1)
}

fn number(v: Option<&FactValue>) -> Option<f64> {
    match v {
        Some(FactValue::Number(n)) => Some(*n),
        _ => None,
    }
}

/// A row's member and device in a few words for NOTE: `alice`, or
/// `bat 50% -61dBm 2 sensors`.
fn facts_short(r: &Row) -> String {
    let mut parts = Vec::new();
    if let Some(a) = &r.from.actor {
        parts.push(a.clone());
    }
    let d = &r.own.device;
    if let Some(level) = number(fact(d, "battery_level")) {
        parts.push(format!("bat {:.0}%", level * 100.0));
    }
    if let Some(dbm) = number(fact(d, "rssi_dbm")) {
        parts.push(format!("{dbm}dBm"));
    }
    if !d.is_empty() && !r.own.slots.is_empty() {
        let n = r.own.slots.len();
        parts.push(format!("{n} sensor{}", if n == 1 { "" } else { "s" }));
    }
    parts.join(" ")
}

/// Every device fact, for the drill-down: `board SlimeVR · battery 50%
/// (3.75 V) · signal -61 dBm · …`.
fn facts_long(facts: &[(&'static str, FactValue)]) -> String {
    let mut out = Vec::new();
    for (what, v) in facts {
        out.push(match (*what, v) {
            ("battery_level", FactValue::Number(l)) => {
                let volts = number(fact(facts, "battery_v"))
                    .map_or_else(String::new, |v| format!(" ({v:.2} V)"));
                format!("battery {:.0}%{volts}", l * 100.0)
            }
            ("battery_v", _) => continue,
            ("rssi_dbm", FactValue::Number(n)) => format!("signal {n} dBm"),
            ("temperature_c", FactValue::Number(n)) => format!("{n:.1} °C"),
            (w, v) => format!("{} {}", w.replace('_', " "), fact_text(v)),
        });
    }
    out.join(" · ")
}

/// How much of a row the table's width has room for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Width {
    /// 120 columns and more: every column, full names.
    Wide,
    /// 80 and more.
    Normal,
    /// Under 80: protocol, port, rate, age and as much of the sender as fits.
    Narrow,
}

fn table(f: &mut Frame<'_>, area: Rect, rows: &[Row], view: &View) {
    let width = match area.width {
        120.. => Width::Wide,
        80.. => Width::Normal,
        _ => Width::Narrow,
    };
    // From 150 columns, the last minute's rate too, before NOTE.
    let spark = width == Width::Wide && area.width >= SPARK_FROM;
    let (header, lengths): (Vec<&str>, &[u16]) = match width {
        Width::Wide if spark => (
            vec![
                "PROTOCOL", "PORT", "SENDER", "RATE/s", "JITTER", "LOST", "DUP", "REORD", "RST",
                "AGE", "ERR", "BYTES/s", "LAST 60s", "NOTE",
            ],
            &[14, 5, 21, 7, 6, 6, 5, 5, 4, 6, 5, 8, SPARK_CELLS],
        ),
        Width::Wide => (
            vec![
                "PROTOCOL", "PORT", "SENDER", "RATE/s", "JITTER", "LOST", "DUP", "REORD", "RST",
                "AGE", "ERR", "BYTES/s", "NOTE",
            ],
            &[14, 5, 21, 7, 6, 6, 5, 5, 4, 6, 5, 8],
        ),
        Width::Normal => (
            vec![
                "PROTO", "PORT", "SENDER", "RATE", "JIT", "LOST", "AGE", "ERR", "B/s", "NOTE",
            ],
            &[8, 5, 21, 6, 5, 5, 5, 4, 6],
        ),
        Width::Narrow => (
            vec!["PROTO", "PORT", "RATE", "AGE", "SENDER"],
            &[8, 5, 6, 6],
        ),
    };
    let widths: Vec<Constraint> = lengths
        .iter()
        .copied()
        .map(Constraint::Length)
        .chain([Constraint::Fill(1)])
        .collect();
    // The sender's cell, cut with an ellipsis rather than by the table.
    let fixed: u16 = lengths.iter().sum::<u16>() + u16::try_from(lengths.len()).unwrap_or(0);
    let sender_w = match width {
        Width::Narrow => usize::from(area.width.saturating_sub(fixed)),
        Width::Wide | Width::Normal => 21,
    };
    let selected = view.selected;
    let body: Vec<TableRow<'_>> = rows
        .iter()
        .map(|r| {
            let port = r
                .from
                .listen
                .map_or_else(|| "-".into(), |l| l.port().to_string());
            let sender = truncate(
                &r.from.sender.map_or_else(|| "-".into(), |s| s.to_string()),
                sender_w,
            );
            let jitter = r
                .jitter_ms
                .map_or_else(|| "-".into(), |j| format!("{j:.1}"));
            let note = if r.own.shared {
                if width == Width::Wide {
                    "2+ SENDERS on this port".into()
                } else {
                    "SHARED".into()
                }
            } else if let Some(bone) = &r.own.non_unit_bone {
                format!("|q|≠1 {bone}")
            } else if let (Some(size), Some(hex)) = (r.own.size, &r.own.head_hex) {
                format!("{size}B {hex}")
            } else {
                let state = match r.own.state {
                    Liveness::Live => "",
                    Liveness::Stale => "stale",
                    Liveness::Quiet => "quiet",
                };
                let facts = facts_short(r);
                match (state, facts.as_str()) {
                    ("", f) => f.to_owned(),
                    (s, "") => s.to_owned(),
                    (s, f) => format!("{s} · {f}"),
                }
            };
            let rate = format!("{:.1}", r.rate_hz.unwrap_or_default());
            let cells: Vec<TableCell<'_>> = match width {
                Width::Wide => {
                    let mut cells: Vec<TableCell<'_>> = [
                        r.from.key.kind.name().into(),
                        port,
                        sender,
                        rate,
                        jitter,
                        r.counts.lost.to_string(),
                        r.counts.duplicates.to_string(),
                        r.counts.reordered.to_string(),
                        r.counts.restarts.to_string(),
                        age_text(r),
                        r.counts.errors.to_string(),
                        si(r.own.bytes_per_s),
                    ]
                    .into_iter()
                    .map(TableCell::from)
                    .collect();
                    if spark {
                        cells.push(TableCell::from(pictures::spark_text(
                            &r.own.history,
                            usize::from(SPARK_CELLS),
                        )));
                    }
                    cells.push(TableCell::from(note));
                    cells
                }
                Width::Normal => [
                    short(r.from.key.kind).into(),
                    port,
                    sender,
                    rate,
                    jitter,
                    r.counts.lost.to_string(),
                    age_text(r),
                    r.counts.errors.to_string(),
                    si(r.own.bytes_per_s),
                    note,
                ]
                .into_iter()
                .map(TableCell::from)
                .collect(),
                Width::Narrow => [
                    short(r.from.key.kind).into(),
                    port,
                    rate,
                    age_text(r),
                    sender,
                ]
                .into_iter()
                .map(TableCell::from)
                .collect(),
            };
            let mut style = match r.own.state {
                Liveness::Live => Style::new(),
                Liveness::Stale => Style::new().fg(Color::Yellow),
                Liveness::Quiet => Style::new().fg(Color::DarkGray),
            };
            if r.own.shared {
                style = style.fg(Color::Red);
            }
            if Some(r.from.key) == selected {
                style = style.add_modifier(Modifier::REVERSED);
            }
            TableRow::new(cells).style(style)
        })
        .collect();
    // The selection is kept on screen: the table scrolls to it, from where
    // the last draw left off.
    let at = selected.and_then(|k| rows.iter().position(|r| r.from.key == k));
    let mut state = TableState::new()
        .with_offset(view.offset.get().min(rows.len().saturating_sub(1)))
        .with_selected(at);
    let empty = rows.is_empty();
    let t = Table::new(body, widths)
        .header(TableRow::new(header).style(Style::new().add_modifier(Modifier::BOLD)));
    f.render_stateful_widget(t, area, &mut state);
    view.offset.set(state.offset());
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

fn drill(
    f: &mut Frame<'_>,
    area: Rect,
    top: &Top,
    rows: &[Row],
    d: Drill,
    now: Duration,
    view: &View,
) {
    let [title, body] = Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(area);
    let row = rows.iter().find(|r| r.from.key == d.key);
    let actor = row
        .and_then(|r| r.from.actor.as_ref())
        .map_or_else(String::new, |a| format!(" ({a})"));
    let mut spans = vec![Span::styled(
        format!(
            "{}{actor} on {} from {}",
            d.key.kind.name(),
            d.key.listen.map_or_else(|| "-".into(), |a| a.to_string()),
            d.key.sender.map_or_else(|| "-".into(), |a| a.to_string()),
        ),
        Style::new().add_modifier(Modifier::BOLD),
    )];
    if let Some(r) = row {
        spans.push(Span::raw(format!(
            "  {:.1}/s",
            r.rate_hz.unwrap_or_default()
        )));
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
    // What the device says of itself, above every view.
    let facts = u16::from(!c.device.is_empty());
    let [facts_area, body] =
        Layout::vertical([Constraint::Length(facts), Constraint::Fill(1)]).areas(body);
    if facts > 0 {
        f.render_widget(
            Paragraph::new(format!(" {}", facts_long(&c.device))),
            facts_area,
        );
    }
    // The rate's last minute under every view, when there is room.
    let graph = if body.height >= 4 * pictures::GRAPH_ROWS {
        pictures::GRAPH_ROWS
    } else {
        0
    };
    let [body, graph_area] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(graph)]).areas(body);
    if let Some(r) = row.filter(|_| graph > 0) {
        pictures::rate_graph(f, graph_area, &r.own.history);
    }
    // A list scrolls no further than its last line at the bottom.
    let max = match d.tab {
        Some(Tab::Figure) => {
            if let Some(pose) = c.pose() {
                pictures::figure(f, body, pose);
            }
            0
        }
        Some(Tab::Bones) => bones(f, body, c, d.scroll),
        Some(Tab::Face) => face(f, body, c, d.scroll),
        Some(Tab::Addresses) => addresses(f, body, c, d.scroll, now),
        Some(Tab::Trackers) => trackers(f, body, c, d.scroll, now),
        None => {
            let text = match (d.key.kind, stream.last_size()) {
                (Kind::Unknown, size) => format!(
                    " unknown bytes: newest datagram {size} bytes, starting {}",
                    state::hex_head(stream.head())
                ),
                _ => " nothing decoded yet".into(),
            };
            f.render_widget(
                Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
                body,
            );
            0
        }
    };
    view.drill_max.set(max);
}

/// How far a list of `len` lines under a header line can scroll in `area`.
fn scroll_max(len: usize, area: Rect) -> usize {
    len.saturating_sub(usize::from(area.height.saturating_sub(1)))
}

fn f3(v: f32) -> String {
    format!("{v:.3}")
}

fn bones(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize) -> usize {
    let max = scroll_max(c.bones.len(), area);
    let header = TableRow::new(vec![
        "BONE", "ROT X°", "ROT Y°", "ROT Z°", "POS X", "POS Y", "POS Z", "NOTE",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = c.bones.iter().skip(scroll.min(max)).map(|b| {
        let e = b.euler();
        let row = TableRow::new(vec![
            b.name.clone(),
            format!("{:.1}", e[0]),
            format!("{:.1}", e[1]),
            format!("{:.1}", e[2]),
            f3(b.pos[0]),
            f3(b.pos[1]),
            f3(b.pos[2]),
            if b.unit() {
                String::new()
            } else {
                format!("not a unit quaternion: |q|={:.3}", b.norm())
            },
        ]);
        if b.unit() {
            row
        } else {
            row.style(Style::new().fg(Color::Red))
        }
    });
    let widths = [
        Constraint::Length(20),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Fill(1),
    ];
    f.render_widget(Table::new(rows, widths).header(header), area);
    max
}

fn face(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize) -> usize {
    let mut lines: Vec<Line<'_>> = Vec::with_capacity(c.angles.len() + 1);
    for (what, v, unit) in &c.angles {
        lines.push(Line::raw(format!(
            " {what:<10} {:>8.2} {:>8.2} {:>8.2}  {unit}",
            v[0], v[1], v[2]
        )));
        // The head's turn at a glance, under its numbers.
        if *what == "head" {
            lines.push(pictures::head_gauges(*v, unit));
        }
    }
    let angle_lines = u16::try_from(lines.len()).unwrap_or(0).min(area.height / 3);
    let [angles, bars] =
        Layout::vertical([Constraint::Length(angle_lines), Constraint::Fill(1)]).areas(area);
    f.render_widget(Paragraph::new(lines), angles);
    // Columns of about 40 cells: a name, a bar, the value.
    let cols = usize::from((bars.width / 40).max(1));
    let cell = usize::from(bars.width) / cols;
    let height = usize::from(bars.height);
    if height == 0 {
        return 0;
    }
    // ARKit's longest name (`MouthLowerDownRight`) is 19 characters; a
    // space keeps it off its bar.
    let name_w = 19.min(cell.saturating_sub(9));
    let bar_w = cell.saturating_sub(name_w + 9);
    // Scrolled a line (one value of each column) at a time, no further
    // than the last line at the bottom.
    let max = c.face.len().div_ceil(cols).saturating_sub(height);
    let values: Vec<&(String, f32)> = c.face.iter().skip(scroll.min(max) * cols).collect();
    // Columns filled evenly, top to bottom, as far as the height allows.
    let height = height.min(values.len().div_ceil(cols)).max(1);
    let mut lines = Vec::with_capacity(height);
    for r in 0..height {
        let mut spans = Vec::new();
        for k in 0..cols {
            let Some((name, v)) = values.get(k * height + r) else {
                continue;
            };
            let filled = bar_cells(*v, bar_w);
            spans.push(Span::raw(format!(" {:<name_w$} ", truncate(name, name_w))));
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
    max
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

fn addresses(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize, now: Duration) -> usize {
    let max = scroll_max(c.addresses.len(), area);
    let scroll = scroll.min(max);
    let header = TableRow::new(vec!["ADDRESS", "VALUE", "RATE/s", "COUNT"])
        .style(Style::new().add_modifier(Modifier::BOLD));
    let rows = c.addresses.iter().skip(scroll).map(|a| {
        TableRow::new(vec![
            a.key.clone(),
            a.value(),
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
    max
}

fn trackers(f: &mut Frame<'_>, area: Rect, c: &Content, scroll: usize, now: Duration) -> usize {
    // The slots seen from above, beside the table when there is room.
    let placed: Vec<(&str, [f32; 3])> = c
        .slots
        .iter()
        .filter_map(|s| Some((s.name.as_str(), s.pos?)))
        .collect();
    let above = if placed.is_empty() || area.width < 100 {
        0
    } else {
        area.width - 64
    };
    let [area, map] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(above)]).areas(area);
    if above > 0 {
        pictures::trackers_above(f, map, &placed);
    }
    let max = scroll_max(c.slots.len(), area);
    let scroll = scroll.min(max);
    let header = TableRow::new(vec![
        "SLOT", "POS X", "POS Y", "POS Z", "ROT X", "ROT Y", "ROT Z", "RATE/s",
    ])
    .style(Style::new().add_modifier(Modifier::BOLD));
    let three = |v: Option<[f32; 3]>| -> [String; 3] {
        v.map_or_else(|| ["-".into(), "-".into(), "-".into()], |v| v.map(f3))
    };
    let rows = c.slots.iter().skip(scroll).map(|s| {
        let [px, py, pz] = three(s.pos);
        let [rx, ry, rz] = three(s.rot);
        let rate = format!("{:.1}", s.rate(now));
        TableRow::new(vec![s.name.clone(), px, py, pz, rx, ry, rz, rate])
    });
    let widths = [
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
    ];
    f.render_widget(Table::new(rows, widths).header(header), area);
    max
}

#[cfg(test)]
mod tests {
    use super::*;
    use mocap_core::osc::{self, Arg, Message};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::KeyEvent;

    const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

    fn capture(path: &str) -> Vec<Vec<u8>> {
        let file = std::fs::File::open(format!("{CAPTURES}/{path}")).unwrap();
        let mut d = mocap_core::pcap::Datagrams::new(file).unwrap();
        let mut out = Vec::new();
        while let Some(c) = d.next_datagram() {
            out.push(c.unwrap().payload.to_vec());
        }
        out
    }

    fn addr(s: &str) -> Option<SocketAddr> {
        Some(s.parse().unwrap())
    }

    /// The rig of the end-to-end test at 60 Hz for two seconds, plus a
    /// second VMC sender on the VMC port and a VRChat tracker stream.
    fn rig() -> (Top, Duration) {
        let mut top = Top::new();
        let mut play = |file: &str, per_frame: usize, port: u16, sender: &str| {
            let d = capture(file);
            for (i, p) in d.iter().take(120 * per_frame).enumerate() {
                let t = Duration::from_secs_f64(i as f64 / (60.0 * per_frame as f64));
                top.handle_datagram(t, addr(&format!("0.0.0.0:{port}")), addr(sender), p);
            }
        };
        play("mocopi/wave-60hz.pcapng", 1, 12351, "192.168.1.20:50012");
        play("livelink/face-60fps.pcapng", 1, 11111, "192.168.1.21:61000");
        play(
            "ifacialmocap/face-60fps.pcapng",
            1,
            49983,
            "192.168.1.22:49983",
        );
        play("vmc/body-60hz.pcapng", 3, 39539, "192.168.1.23:40000");
        let blend = osc::message(&Message::new(
            "/VMC/Ext/Blend/Val",
            vec![Arg::String("Joy".into()), Arg::Float(0.5)],
        ))
        .unwrap();
        let vrc = osc::bundle(&[Message::new(
            "/tracking/trackers/1/position",
            vec![Arg::Float(0.0), Arg::Float(0.9), Arg::Float(0.1)],
        )])
        .unwrap();
        for i in 0..60u32 {
            let t = Duration::from_secs_f64(1.0 + f64::from(i) / 60.0);
            top.handle_datagram(t, addr("0.0.0.0:39539"), addr("192.168.1.99:5555"), &blend);
            top.handle_datagram(t, addr("0.0.0.0:9000"), addr("192.168.1.24:9001"), &vrc);
        }
        (top, Duration::from_secs_f64(119.0 / 60.0))
    }

    /// Draws and returns the screen as lines of text.
    fn screen(top: &Top, view: &View, now: Duration, w: u16, h: u16) -> Vec<String> {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, top, view, now, &[])).unwrap();
        let buf = t.backend().buffer().clone();
        assert_eq!((buf.area.width, buf.area.height), (w, h));
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| buf.cell((x, y)).unwrap().symbol().to_owned())
                    .collect::<String>()
            })
            .collect()
    }

    fn press(view: &mut View, top: &Top, now: Duration, code: KeyCode) {
        view.key(KeyEvent::from(code), top, now);
    }

    fn line_with<'a>(lines: &'a [String], needle: &str) -> &'a str {
        lines
            .iter()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", lines.join("\n")))
    }

    #[test]
    fn main_table_at_80x24() {
        let (top, now) = rig();
        let view = View::new();
        let s = screen(&top, &view, now, 80, 24);
        assert!(
            s[0].starts_with("mocap-top  6 streams (6 live)"),
            "{}",
            s[0]
        );
        let cols: Vec<&str> = line_with(&s, "PROTO").split_whitespace().collect();
        assert_eq!(
            cols,
            [
                "PROTO", "PORT", "SENDER", "RATE", "JIT", "LOST", "AGE", "ERR", "B/s", "NOTE"
            ]
        );
        // Rows sorted by port; rates over the last second.
        let rows: Vec<Vec<&str>> = s[2..8]
            .iter()
            .map(|l| l.split_whitespace().collect())
            .collect();
        let got: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[1], r[3])).collect();
        assert_eq!(
            got,
            [
                ("vrchat", "9000", "60.0"),
                ("livelink", "11111", "60.0"),
                ("mocopi", "12351", "60.0"),
                ("vmc", "39539", "60.0"),
                ("vmc", "39539", "60.0"),
                ("ifm", "49983", "60.0"),
            ]
        );
        // Two senders on 39539: both flagged.
        assert!(s[5].trim_end().ends_with("SHARED"), "{}", s[5]);
        assert!(s[6].trim_end().ends_with("SHARED"), "{}", s[6]);
        assert!(!s[3].contains("SHARED"));
        assert!(
            s[23].contains("Enter drill down") && s[23].contains("q quit"),
            "{}",
            s[23]
        );
        assert!(s[8..23].iter().all(|l| l.trim().is_empty()));
    }

    #[test]
    fn main_table_at_160x45_names_protocols_and_health() {
        let (top, now) = rig();
        let mut view = View::new();
        view.notes = vec![
            Note::Listening("0.0.0.0:12351".parse().unwrap(), None),
            Note::Taken(Taken {
                listen: "0.0.0.0:39540".parse().unwrap(),
                protocol: "VMC (OSC)",
                reason: "another program has it".into(),
                program: None,
            }),
        ];
        let s = screen(&top, &view, now, 160, 45);
        assert!(s[1].starts_with("listening on 0.0.0.0:12351"), "{}", s[1]);
        assert!(
            s[2].starts_with(
                "VMC (OSC) port 39540 not watched: another program has it; to watch it anyway"
            ),
            "{}",
            s[2]
        );
        let head: Vec<&str> = line_with(&s, "PROTOCOL").split_whitespace().collect();
        assert_eq!(
            head,
            [
                "PROTOCOL", "PORT", "SENDER", "RATE/s", "JITTER", "LOST", "DUP", "REORD", "RST",
                "AGE", "ERR", "BYTES/s", "LAST", "60s", "NOTE"
            ]
        );
        let live = line_with(&s, "Live Link Face");
        assert!(live.contains("192.168.1.21:61000"), "{live}");
        assert!(line_with(&s, "iFacialMocap").contains("49983"));
        assert!(line_with(&s, "192.168.1.99:5555").contains("2+ SENDERS on this port"));
        assert!(line_with(&s, "VRChat OSC").contains("9000"));
        assert!(s[44].contains("q quit"));
    }

    #[test]
    fn stale_and_quiet_rows_say_so() {
        let (top, now) = rig();
        let s = screen(&top, &View::new(), now + Duration::from_secs(2), 160, 45);
        let mocopi = line_with(&s, "mocopi");
        assert!(mocopi.contains(" 2.0s "), "{mocopi:?}");
        assert!(mocopi.trim_end().ends_with("stale"), "{mocopi:?}");
        let s = screen(&top, &View::new(), now + Duration::from_secs(6), 160, 45);
        assert!(line_with(&s, "mocopi").trim_end().ends_with("quiet"));
        // Quiet senders no longer share the port.
        assert!(!s.iter().any(|l| l.contains("SENDERS")));
    }

    #[test]
    fn drill_down_into_bones_and_back() {
        let (top, now) = rig();
        let mut view = View::new();
        // Down to mocopi (the third row), Enter: its figure; Tab: bones.
        for _ in 0..3 {
            press(&mut view, &top, now, KeyCode::Down);
        }
        press(&mut view, &top, now, KeyCode::Enter);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Figure));
        press(&mut view, &top, now, KeyCode::Tab);
        for (w, h) in [(80, 24), (160, 45)] {
            let s = screen(&top, &view, now, w, h);
            assert!(
                s[1].starts_with("mocopi on 0.0.0.0:12351 from 192.168.1.20:50012"),
                "{}",
                s[1]
            );
            let head: Vec<&str> = s[2].split_whitespace().collect();
            assert_eq!(
                head,
                [
                    "BONE", "ROT", "X°", "ROT", "Y°", "ROT", "Z°", "POS", "X", "POS", "Y", "POS",
                    "Z", "NOTE"
                ]
            );
            // The left upper arm is raised 70° sideways in this capture.
            let arm: Vec<&str> = line_with(&s, "l_up_arm").split_whitespace().collect();
            assert_eq!(arm[3], "70.0", "{arm:?}");
            assert!(s[usize::from(h) - 1].contains("Esc back"));
        }
        press(&mut view, &top, now, KeyCode::Esc);
        let s = screen(&top, &view, now, 80, 24);
        assert!(line_with(&s, "mocopi").contains("12351"));
        assert!(line_with(&s, "PROTO").starts_with("PROTO"));
    }

    #[test]
    fn drill_down_into_a_face_shows_bars_and_angles() {
        let (top, now) = rig();
        let mut view = View::new();
        press(&mut view, &top, now, KeyCode::Down); // vrchat
        press(&mut view, &top, now, KeyCode::Down); // livelink
        press(&mut view, &top, now, KeyCode::Enter);
        let key = view.drill.unwrap().key;
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Face));
        let values = &top.stream(&key).unwrap().content.face;
        for (w, h) in [(80, 24), (160, 45)] {
            let s = screen(&top, &view, now, w, h);
            assert!(
                s[1].contains("Live Link Face") && s[1].contains("face"),
                "{}",
                s[1]
            );
            assert!(s[2].trim_start().starts_with("head"), "{}", s[2]);
            // Each bar is as long as its value says, its value beside it.
            let (name, v) = values.iter().find(|(n, _)| n == "JawOpen").unwrap();
            let line = line_with(&s, name);
            let at = line.find(name.as_str()).unwrap();
            let cell = &line[at..];
            assert!(cell.contains(&format!("{v:.2}")), "{cell}");
            let cols = usize::from(w / 40);
            let bar_w = usize::from(w) / cols - 19 - 9;
            let filled = cell.chars().filter(|c| *c == '█').count();
            assert!(filled >= bar_cells(*v, bar_w), "{cell}");
        }
        // At 160×45 all 52 fit (four columns).
        let s = screen(&top, &view, now, 160, 45);
        let missing: Vec<_> = values
            .iter()
            .filter(|(n, _)| !s.iter().any(|l| l.contains(n.as_str())))
            .collect();
        assert!(missing.is_empty(), "{missing:?}\n{}", s.join("\n"));
        assert_eq!(values.len(), 52);
    }

    #[test]
    fn vmc_address_list_and_tracker_slots() {
        let (top, now) = rig();
        let mut view = View::new();
        for _ in 0..4 {
            press(&mut view, &top, now, KeyCode::Down);
        }
        press(&mut view, &top, now, KeyCode::Enter);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Figure));
        press(&mut view, &top, now, KeyCode::Tab);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Bones));
        // The bridge sends no blendshapes: Tab goes from bones to addresses.
        press(&mut view, &top, now, KeyCode::Tab);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Addresses));
        let s = screen(&top, &view, now, 160, 45);
        let head: Vec<&str> = s[2].split_whitespace().collect();
        assert_eq!(head, ["ADDRESS", "VALUE", "RATE/s", "COUNT"]);
        let ok: Vec<&str> = line_with(&s, "/VMC/Ext/OK").split_whitespace().collect();
        assert_eq!(ok[ok.len() - 2], "60.0", "{ok:?}");
        assert_eq!(ok[ok.len() - 1], "120", "{ok:?}");
        assert!(line_with(&s, "/VMC/Ext/Bone/Pos Hips").contains("60.0"));
        // VRChat: tracker slots.
        press(&mut view, &top, now, KeyCode::Esc);
        press(&mut view, &top, now, KeyCode::Up);
        press(&mut view, &top, now, KeyCode::Up);
        press(&mut view, &top, now, KeyCode::Up);
        press(&mut view, &top, now, KeyCode::Up);
        press(&mut view, &top, now, KeyCode::Enter);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Trackers));
        let s = screen(&top, &view, now, 80, 24);
        let slot: Vec<&str> = s[3].split_whitespace().collect();
        assert_eq!(
            slot,
            ["1", "0.000", "0.900", "0.100", "-", "-", "-", "60.0"]
        );
    }

    #[test]
    fn pause_freezes_the_numbers_and_q_quits() {
        let (mut top, now) = rig();
        let mut view = View::new();
        assert_eq!(
            view.key(KeyEvent::from(KeyCode::Char('p')), &top, now),
            Action::None
        );
        // More arrives while paused; the screen still shows the frozen copy.
        let d = capture("mocopi/wave-60hz.pcapng");
        top.handle_datagram(
            now + Duration::from_secs(3),
            addr("0.0.0.0:7"),
            addr("1.2.3.4:5"),
            &d[1],
        );
        let s = screen(&top, &view, now + Duration::from_secs(3), 80, 24);
        assert!(
            s[0].contains("6 streams") && s[0].contains("PAUSED"),
            "{}",
            s[0]
        );
        assert!(line_with(&s, "mocopi").contains("60.0"));
        view.key(KeyEvent::from(KeyCode::Char('p')), &top, now);
        let s = screen(&top, &view, now + Duration::from_secs(3), 80, 24);
        assert!(
            s[0].contains("7 streams") && !s[0].contains("PAUSED"),
            "{}",
            s[0]
        );
        let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert_eq!(view.key(ctrl_c, &top, now), Action::Quit);
        assert_eq!(
            view.key(KeyEvent::from(KeyCode::Char('q')), &top, now),
            Action::Quit
        );
        assert_eq!(
            view.key(KeyEvent::from(KeyCode::Char('w')), &top, now),
            Action::ToggleRecording
        );
        // Ctrl-L paints the screen afresh (another program wrote over it).
        let ctrl_l = KeyEvent::new(KeyCode::Char('l'), KeyModifiers::CONTROL);
        assert_eq!(view.key(ctrl_l, &top, now), Action::Redraw);
    }

    /// `n` VMC senders on port 39539, each one datagram at `t`.
    fn strangers(top: &mut Top, n: u16, t: f64) {
        let m = osc::message(&Message::new("/x", vec![])).unwrap();
        for i in 0..n {
            let sender = SocketAddr::from(([10, 0, 0, 9], 1000 + i));
            top.handle_datagram(
                Duration::from_secs_f64(t),
                addr("0.0.0.0:39539"),
                Some(sender),
                &m,
            );
        }
    }

    #[test]
    fn the_header_counts_right() {
        // No "-0 datagrams/s", no "1 streams".
        let s = screen(&Top::new(), &View::new(), Duration::ZERO, 80, 24);
        assert!(
            s[0].starts_with("mocap-top  0 streams (0 live)  0 datagrams/s"),
            "{}",
            s[0]
        );
        let mut top = Top::new();
        strangers(&mut top, 1, 0.0);
        let s = screen(&top, &View::new(), Duration::from_secs(10), 80, 24);
        assert!(
            s[0].starts_with("mocap-top  1 stream (0 live)  0 datagrams/s"),
            "{}",
            s[0]
        );
        // The rate is of every datagram: 300 senders, 256 kept.
        let mut top = Top::new();
        strangers(&mut top, 300, 0.5);
        let s = screen(&top, &View::new(), Duration::from_secs(1), 80, 24);
        assert!(
            s[0].starts_with("mocap-top  256 streams (256 live)  300 datagrams/s"),
            "{}",
            s[0]
        );
    }

    #[test]
    fn a_long_face_name_keeps_a_gap_before_its_bar() {
        // ARKit's longest name, its bar full.
        let m = osc::message(&Message::new(
            "/VMC/Ext/Blend/Val",
            vec![Arg::String("MouthLowerDownRight".into()), Arg::Float(1.0)],
        ))
        .unwrap();
        let mut top = Top::new();
        top.handle_datagram(
            Duration::ZERO,
            addr("0.0.0.0:39539"),
            addr("10.0.0.5:1"),
            &m,
        );
        let mut view = View::new();
        press(&mut view, &top, Duration::ZERO, KeyCode::Enter);
        for (w, h) in [(40, 10), (80, 24), (160, 45)] {
            let s = screen(&top, &view, Duration::ZERO, w, h);
            let line = line_with(&s, "MouthLowerDownRight");
            let after = line.split("MouthLowerDownRight").nth(1).unwrap();
            assert!(after.starts_with(" █"), "{w}: {line:?}");
        }
    }

    #[test]
    fn at_40_columns_a_port_is_whole_and_a_sender_ends_in_an_ellipsis() {
        let (top, now) = rig();
        let s = screen(&top, &View::new(), now, 40, 12);
        let cols: Vec<&str> = line_with(&s, "PROTO").split_whitespace().collect();
        assert_eq!(cols, ["PROTO", "PORT", "RATE", "AGE", "SENDER"]);
        let live: Vec<&str> = line_with(&s, "livelink").split_whitespace().collect();
        assert_eq!(live[..3], ["livelink", "11111", "60.0"], "{live:?}");
        // 40 - 29 columns for the sender, the last an ellipsis.
        assert_eq!(live[4], "192.168.1.…", "{live:?}");
        // At 80 and 120 the port is whole too.
        for w in [80, 120] {
            let s = screen(&top, &View::new(), now, w, 24);
            assert!(line_with(&s, "192.168.1.21:61000").contains(" 11111 "));
        }
    }

    #[test]
    fn the_drill_down_scrolls_no_further_than_its_end() {
        let (top, now) = rig();
        let mut view = View::new();
        for _ in 0..3 {
            press(&mut view, &top, now, KeyCode::Down);
        }
        press(&mut view, &top, now, KeyCode::Enter);
        press(&mut view, &top, now, KeyCode::Tab);
        let bones = &top.stream(&view.drill.unwrap().key).unwrap().content.bones;
        let last = &bones.last().unwrap().name;
        screen(&top, &view, now, 80, 24);
        for _ in 0..100 {
            press(&mut view, &top, now, KeyCode::Down);
        }
        let s = screen(&top, &view, now, 80, 24);
        // The last bone on the last line of the list (above the rate's
        // three lines), no empty lines under it.
        assert!(s[19].starts_with(last.as_str()), "{}", s.join("\n"));
        assert!(s[20].starts_with(" frames/s, last 1 s"), "{}", s.join("\n"));
        // One Up moves the list at once (no presses to take back).
        press(&mut view, &top, now, KeyCode::Up);
        let s = screen(&top, &view, now, 80, 24);
        assert!(!s[19].starts_with(last.as_str()), "{}", s.join("\n"));
        press(&mut view, &top, now, KeyCode::End);
        let s = screen(&top, &view, now, 80, 24);
        assert!(s[19].starts_with(last.as_str()), "{}", s.join("\n"));
        press(&mut view, &top, now, KeyCode::Home);
        let s = screen(&top, &view, now, 80, 24);
        assert!(s[3].starts_with("root"), "{}", s.join("\n"));
    }

    #[test]
    fn the_table_scrolls_and_the_selection_stays_on_screen() {
        let mut top = Top::new();
        strangers(&mut top, 100, 0.0);
        let now = Duration::from_secs_f64(0.5);
        let mut view = View::new();
        let on_screen =
            |s: &[String], port: u16| s.iter().any(|l| l.contains(&format!(":{port} ")));
        screen(&top, &view, now, 80, 24);
        press(&mut view, &top, now, KeyCode::End);
        let s = screen(&top, &view, now, 80, 24);
        assert!(on_screen(&s, 1099), "{}", s.join("\n"));
        assert!(!on_screen(&s, 1000));
        press(&mut view, &top, now, KeyCode::PageUp);
        let s = screen(&top, &view, now, 80, 24);
        let selected = view.selected.unwrap().sender.unwrap().port();
        assert_eq!(selected, 1099 - 20, "a page is the 20 rows that fit");
        assert!(on_screen(&s, selected), "{}", s.join("\n"));
        // Enter opens the row the cursor is on, which is on screen.
        press(&mut view, &top, now, KeyCode::Enter);
        let s = screen(&top, &view, now, 80, 24);
        assert!(
            s[1].contains(&format!("from 10.0.0.9:{selected}")),
            "{}",
            s[1]
        );
        press(&mut view, &top, now, KeyCode::Esc);
        press(&mut view, &top, now, KeyCode::Home);
        let s = screen(&top, &view, now, 80, 24);
        assert!(on_screen(&s, 1000));
        for _ in 0..30 {
            press(&mut view, &top, now, KeyCode::Down);
            let s = screen(&top, &view, now, 80, 24);
            let at = view.selected.unwrap().sender.unwrap().port();
            assert!(on_screen(&s, at), "{at}\n{}", s.join("\n"));
        }
        press(&mut view, &top, now, KeyCode::PageDown);
        let s = screen(&top, &view, now, 80, 24);
        let at = view.selected.unwrap().sender.unwrap().port();
        assert_eq!(at, 1030 + 20);
        assert!(on_screen(&s, at));
    }

    #[test]
    fn a_filter_shows_the_rows_it_matches_and_typing_it_is_not_keys() {
        let (top, now) = rig();
        let mut view = View::new();
        for c in ['/', 'v', 'm', 'q'] {
            assert_eq!(
                view.key(KeyEvent::from(KeyCode::Char(c)), &top, now),
                Action::None
            );
        }
        assert!(view.editing);
        let s = screen(&top, &view, now, 80, 24);
        assert!(s[0].contains("/vmq_ (0 shown)"), "{}", s[0]);
        press(&mut view, &top, now, KeyCode::Backspace);
        press(&mut view, &top, now, KeyCode::Char('C'));
        press(&mut view, &top, now, KeyCode::Enter);
        assert!(!view.editing);
        let s = screen(&top, &view, now, 80, 24);
        assert!(
            s[0].contains("6 streams") && s[0].contains("/vmc (2 shown)"),
            "{}",
            s[0]
        );
        let rows: Vec<&String> = s[2..22].iter().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(rows.len(), 2, "{}", s.join("\n"));
        assert!(rows.iter().all(|l| l.starts_with("vmc")));
        // By sender and by port.
        view.filter = "192.168.1.22".into();
        let s = screen(&top, &view, now, 80, 24);
        assert!(line_with(&s, "(1 shown)").contains("mocap-top"));
        assert!(line_with(&s, "ifm").contains("49983"));
        view.filter = "11111".into();
        let s = screen(&top, &view, now, 80, 24);
        assert!(line_with(&s, "livelink").contains("11111"));
        // Esc clears it.
        press(&mut view, &top, now, KeyCode::Esc);
        assert!(view.filter.is_empty());
        assert_eq!(
            view.key(KeyEvent::from(KeyCode::Char('q')), &top, now),
            Action::Quit
        );
    }

    #[test]
    fn question_mark_lists_the_keys_and_c_clears_quiet_rows() {
        let (top, now) = rig();
        let mut view = View::new();
        press(&mut view, &top, now, KeyCode::Char('?'));
        let s = screen(&top, &view, now, 80, 24);
        for (k, _) in KEYS {
            assert!(
                s.iter().any(|l| l.starts_with(&format!(" {k} "))),
                "{k}\n{}",
                s.join("\n")
            );
        }
        // Any key closes it, and does nothing else.
        assert_eq!(
            view.key(KeyEvent::from(KeyCode::Char('q')), &top, now),
            Action::None
        );
        let s = screen(&top, &view, now, 80, 24);
        assert!(line_with(&s, "PROTO").starts_with("PROTO"));
        assert_eq!(
            view.key(KeyEvent::from(KeyCode::Char('c')), &top, now),
            Action::ClearQuiet
        );
    }

    #[test]
    fn a_rotation_that_is_not_a_unit_quaternion_is_flagged() {
        let m = osc::message(&Message::new(
            "/VMC/Ext/Bone/Pos",
            vec![
                Arg::String("Spine".into()),
                Arg::Float(0.0),
                Arg::Float(1.0),
                Arg::Float(0.0),
                Arg::Float(10.0),
                Arg::Float(20.0),
                Arg::Float(0.0),
                Arg::Float(1.0),
            ],
        ))
        .unwrap();
        let mut top = Top::new();
        top.handle_datagram(
            Duration::ZERO,
            addr("0.0.0.0:39539"),
            addr("10.0.0.5:1"),
            &m,
        );
        let mut view = View::new();
        // At 80 columns NOTE has room for the mark, at 120 for the bone.
        let s = screen(&top, &view, Duration::ZERO, 80, 24);
        assert!(
            line_with(&s, "vmc").trim_end().ends_with("|q|≠1"),
            "{}",
            s.join("\n")
        );
        let s = screen(&top, &view, Duration::ZERO, 120, 24);
        assert!(
            line_with(&s, "VMC").trim_end().ends_with("|q|≠1 Spine"),
            "{}",
            s.join("\n")
        );
        press(&mut view, &top, Duration::ZERO, KeyCode::Enter);
        let s = screen(&top, &view, Duration::ZERO, 120, 24);
        assert!(
            line_with(&s, "Spine")
                .trim_end()
                .ends_with("not a unit quaternion: |q|=22.383"),
            "{}",
            s.join("\n")
        );
    }

    #[test]
    fn the_taken_port_line_wraps_and_names_the_program() {
        let (top, now) = rig();
        let mut view = View::new();
        let taken = Taken {
            listen: "0.0.0.0:39539".parse().unwrap(),
            protocol: "VMC (OSC)",
            reason: "another program has it".into(),
            program: Some("VSeeFace.exe (pid 4242)".into()),
        };
        let advice = taken.advice();
        assert!(
            advice.starts_with(
                "VMC (OSC) port 39539 not watched: another program has it (VSeeFace.exe \
                 (pid 4242)); to watch it anyway"
            ),
            "{advice}"
        );
        view.notes = vec![Note::Taken(taken)];
        for (w, h) in [(80, 24), (160, 45)] {
            let s = screen(&top, &view, now, w, h);
            let lines: Vec<&str> = s
                .iter()
                .skip(1)
                .take_while(|l| !l.starts_with("PROTO"))
                .map(|l| l.trim_end())
                .collect();
            assert!(lines.len() > 1, "{w}: {lines:?}");
            assert_eq!(lines.join(" "), advice, "{w}");
            assert!(lines.iter().all(|l| l.chars().count() <= usize::from(w)));
        }
    }

    #[test]
    fn wrap_breaks_at_spaces_and_cuts_a_word_longer_than_a_line() {
        assert_eq!(wrap("ab cd ef", 5), ["ab cd", "ef"]);
        assert_eq!(wrap("abcdefgh ij", 3), ["abc", "def", "gh", "ij"]);
        assert_eq!(wrap("", 3), Vec::<String>::new());
        assert_eq!(wrap("a b", 0), ["a", "b"]);
    }

    /// A VRM-like T-pose as a VMC sender sends it (Unity's axes: facing
    /// +Z, its left at −X), its left upper arm turned by `arm`.
    fn t_pose(arm: [f32; 4]) -> Vec<Vec<u8>> {
        use mocap_core::bridge::{BodyPose, BonePose};
        let mut p = BodyPose::default();
        for (name, pos) in [
            ("Hips", [0.0, 0.9, 0.0]),
            ("Spine", [0.0, 0.1, 0.0]),
            ("Chest", [0.0, 0.15, 0.0]),
            ("Neck", [0.0, 0.25, 0.0]),
            ("Head", [0.0, 0.1, 0.0]),
            ("LeftUpperLeg", [-0.1, -0.05, 0.0]),
            ("LeftLowerLeg", [0.0, -0.4, 0.0]),
            ("LeftFoot", [0.0, -0.4, 0.0]),
            ("LeftToes", [0.0, -0.05, 0.1]),
            ("RightUpperLeg", [0.1, -0.05, 0.0]),
            ("RightLowerLeg", [0.0, -0.4, 0.0]),
            ("RightFoot", [0.0, -0.4, 0.0]),
            ("RightToes", [0.0, -0.05, 0.1]),
            ("LeftUpperArm", [-0.2, 0.2, 0.0]),
            ("LeftLowerArm", [-0.3, 0.0, 0.0]),
            ("LeftHand", [-0.25, 0.0, 0.0]),
            ("RightUpperArm", [0.2, 0.2, 0.0]),
            ("RightLowerArm", [0.3, 0.0, 0.0]),
            ("RightHand", [0.25, 0.0, 0.0]),
        ] {
            let rot = if name == "LeftUpperArm" {
                arm
            } else {
                [0.0, 0.0, 0.0, 1.0]
            };
            p.set(name, BonePose { pos, rot });
        }
        mocap_core::vmc::frame_datagrams(&p.to_vmc(None, 0.0), mocap_core::vmc::MAX_BUNDLE).unwrap()
    }

    /// The screen's cells: symbol and foreground colour.
    fn cells(top: &Top, view: &View, now: Duration, w: u16, h: u16) -> Vec<Vec<(String, Color)>> {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| draw(f, top, view, now, &[])).unwrap();
        let buf = t.backend().buffer().clone();
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| {
                        let c = buf.cell((x, y)).unwrap();
                        (c.symbol().to_owned(), c.fg)
                    })
                    .collect()
            })
            .collect()
    }

    fn braille(cell: &(String, Color)) -> bool {
        cell.0
            .chars()
            .next()
            .is_some_and(|c| ('\u{2801}'..='\u{28ff}').contains(&c))
    }

    /// A VMC T-pose drilled into at `w`×`h`: its screen, and the rows and
    /// columns of the front view.
    fn figure_screen(arm: [f32; 4], w: u16, h: u16) -> Vec<Vec<(String, Color)>> {
        let mut top = Top::new();
        // Twice: a VMC sender's frame ends are known after its first frame.
        for d in [t_pose(arm), t_pose(arm)].concat() {
            top.handle_datagram(
                Duration::ZERO,
                addr("0.0.0.0:39539"),
                addr("10.0.0.5:1"),
                &d,
            );
        }
        let mut view = View::new();
        press(&mut view, &top, Duration::ZERO, KeyCode::Enter);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Figure));
        cells(&top, &view, Duration::ZERO, w, h)
    }

    const ID: [f32; 4] = [0.0, 0.0, 0.0, 1.0];

    #[test]
    fn a_t_pose_is_drawn_arms_either_side_of_the_spine_feet_on_the_ground() {
        for (w, h) in [(80, 24), (160, 45)] {
            let s = figure_screen(ID, w, h);
            // The front view: the left half, between the title and the rate.
            let rows = 2..usize::from(h) - 4;
            let front = |y: usize| &s[y][..usize::from(w / 2)];
            let dots = |y: usize| -> Vec<(usize, Color)> {
                front(y)
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| braille(c))
                    .map(|(x, c)| (x, c.1))
                    .collect()
            };
            let drawn: Vec<usize> = rows.clone().filter(|y| !dots(*y).is_empty()).collect();
            let (top_row, ground) = (drawn[0], *drawn.last().unwrap());
            // The top of the head is on the spine.
            let spine = dots(top_row)[0].0;
            // The ground line runs across; both feet stand on it, the
            // left one (cyan) on the picture's right: it faces the viewer.
            let g = dots(ground);
            assert!(g.len() > usize::from(w / 2) - 4, "{w}: {g:?}");
            assert!(
                g.iter().any(|(x, c)| *x > spine && *c == pictures::LEFT),
                "{g:?}"
            );
            assert!(
                g.iter().any(|(x, c)| *x < spine && *c == Color::White),
                "{g:?}"
            );
            // The arms: the widest row above the ground.
            let arms = (top_row..ground).max_by_key(|y| dots(*y).len()).unwrap();
            let a = dots(arms);
            let cyan: Vec<usize> = a
                .iter()
                .filter(|(_, c)| *c == pictures::LEFT)
                .map(|(x, _)| *x)
                .collect();
            let white: Vec<usize> = a
                .iter()
                .filter(|(_, c)| *c == Color::White)
                .map(|(x, _)| *x)
                .collect();
            assert!(cyan.len() >= 3 && white.len() >= 3, "{w}: {a:?}");
            assert!(cyan.iter().all(|x| *x > spine), "{w}: spine {spine}, {a:?}");
            assert!(
                white.iter().filter(|x| **x != spine).all(|x| *x < spine),
                "{a:?}"
            );
            assert!(
                *cyan.iter().max().unwrap() > spine + 3 && *white.iter().min().unwrap() + 3 < spine,
                "{w}: arms reach out: {a:?}"
            );
        }
    }

    #[test]
    fn raising_the_left_arm_changes_only_the_left_side() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        for (w, ht) in [(80, 24), (160, 45)] {
            let t = figure_screen(ID, w, ht);
            // −90° about Z turns the left arm (−X) up.
            let up = figure_screen([0.0, 0.0, -h, h], w, ht);
            let mut changed = 0;
            for (y, (a, b)) in t.iter().zip(&up).enumerate() {
                for (x, (ca, cb)) in a.iter().zip(b).enumerate() {
                    if ca != cb {
                        changed += 1;
                        assert!(
                            ca.1 == pictures::LEFT || cb.1 == pictures::LEFT,
                            "{w}: ({x}, {y}) {ca:?} → {cb:?} is not the left side"
                        );
                    }
                }
            }
            assert!(changed >= 4, "{w}: {changed}");
        }
    }

    #[test]
    fn the_last_minute_of_rate_is_a_sparkline_with_its_drops() {
        let (top, now) = rig();
        // Two seconds of 60 Hz, then two without a frame.
        let later = now + Duration::from_secs(3);
        let s = cells(&top, &View::new(), later, 160, 45);
        let text = |y: usize| s[y].iter().map(|c| c.0.as_str()).collect::<String>();
        let head = (0..45).find(|y| text(*y).starts_with("PROTOCOL")).unwrap();
        let col = text(head).find("LAST 60s").unwrap();
        let y = (0..45).find(|y| text(*y).starts_with("mocopi")).unwrap();
        // Byte offset to cell: the header is ASCII up to the column.
        let cell: Vec<&(String, Color)> = s[y][col..col + 30].iter().collect();
        let shown: String = cell.iter().map(|c| c.0.as_str()).collect();
        assert!(shown.trim_end().ends_with("█·"), "{shown:?}");
        assert_eq!(
            cell.iter()
                .filter(|c| c.0 == "·")
                .map(|c| c.1)
                .collect::<Vec<_>>(),
            [Color::Red]
        );
        // Under 150 columns there is no room for it.
        let s = screen(&top, &View::new(), later, 120, 24);
        assert!(!line_with(&s, "PROTOCOL").contains("LAST"));
        // The drill-down's: minimum, maximum, and how many seconds were empty.
        let mut view = View::new();
        for _ in 0..3 {
            press(&mut view, &top, later, KeyCode::Down);
        }
        press(&mut view, &top, later, KeyCode::Enter);
        for (w, h) in [(80, 24), (160, 45)] {
            let s = screen(&top, &view, later, w, h);
            let label = &s[usize::from(h) - 4];
            assert!(
                label.starts_with(
                    " frames/s, last 4 s: min 0  max 60  newest second 0  2 s without a frame"
                ),
                "{label}"
            );
            // Two full bars, then two marks on the baseline, at the right.
            let bars = s[usize::from(h) - 2].trim_end();
            assert!(bars.ends_with("██▁▁"), "{bars:?}");
        }
    }

    #[test]
    fn the_head_turn_is_three_gauges_under_its_numbers() {
        let (top, now) = rig();
        for (downs, names) in [(2, ["yaw", "pitch", "roll"]), (6, ["x", "y", "z"])] {
            let mut view = View::new();
            for _ in 0..downs {
                press(&mut view, &top, now, KeyCode::Down);
            }
            press(&mut view, &top, now, KeyCode::Enter);
            assert_eq!(view.drill.unwrap().tab, Some(Tab::Face));
            let s = screen(&top, &view, now, 80, 24);
            assert!(s[2].trim_start().starts_with("head"), "{}", s.join("\n"));
            let words: Vec<&str> = s[3].split_whitespace().collect();
            assert_eq!(
                (words[0], words[2], words[4]),
                (names[0], names[1], names[2]),
                "{}",
                s[3]
            );
            assert_eq!(s[3].matches('●').count(), 3, "{}", s[3]);
            assert!(s[4].trim_start().starts_with("left eye"), "{}", s[4]);
        }
    }

    #[test]
    fn tracker_slots_are_seen_from_above_beside_their_table() {
        let mut top = Top::new();
        let slot = |n: u8, p: [f32; 3]| {
            Message::new(
                format!("/tracking/trackers/{n}/position"),
                p.map(Arg::Float).to_vec(),
            )
        };
        let vrc = osc::bundle(&[
            slot(1, [0.0, 0.9, 0.0]),
            slot(2, [-0.5, 0.1, 0.3]),
            slot(3, [0.5, 0.1, -0.3]),
        ])
        .unwrap();
        top.handle_datagram(
            Duration::ZERO,
            addr("0.0.0.0:9000"),
            addr("10.0.0.5:1"),
            &vrc,
        );
        let mut view = View::new();
        press(&mut view, &top, Duration::ZERO, KeyCode::Enter);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Trackers));
        let s = screen(&top, &view, Duration::ZERO, 160, 45);
        let map = 160 - 96;
        assert!(
            s[2][..].contains("from above · front ↑"),
            "{}",
            s.join("\n")
        );
        // Where each slot's name is printed in the map: (column, row).
        let at = |name: &str| -> (usize, usize) {
            s.iter()
                .enumerate()
                .find_map(|(y, l)| {
                    let cells: Vec<char> = l.chars().collect();
                    (map..cells.len())
                        .find(|x| cells[*x].to_string() == name && !cells[*x - 1].is_alphanumeric())
                        .map(|x| (x, y))
                })
                .unwrap_or_else(|| panic!("{name} not in the map:\n{}", s.join("\n")))
        };
        let (one, two, three) = (at("1"), at("2"), at("3"));
        // +X right, +Z (forward) up.
        assert!(
            two.0 < one.0 && one.0 < three.0,
            "{one:?} {two:?} {three:?}"
        );
        assert!(
            two.1 < one.1 && one.1 < three.1,
            "{one:?} {two:?} {three:?}"
        );
        // At 80 columns the table has the width alone.
        let s = screen(&top, &view, Duration::ZERO, 80, 24);
        assert!(!s.iter().any(|l| l.contains("from above")));
        assert!(line_with(&s, "SLOT").starts_with("SLOT"));
    }

    /// Issue 61: a tracker's battery, signal and sensors in its row's NOTE;
    /// everything it said of itself above its drill-down, with each
    /// sensor's rate.
    #[test]
    fn a_trackers_battery_and_signal_are_in_its_row_and_drill_down() {
        let mut top = Top::new();
        state::slimevr_tracker(&mut top);
        let now = Duration::from_secs(2);
        let mut view = View::new();
        let s = screen(&top, &view, now, 160, 20);
        assert!(
            line_with(&s, "SlimeVR")
                .trim_end()
                .ends_with("bat 87% -58dBm 2 sensors"),
            "{}",
            s.join("\n")
        );
        press(&mut view, &top, now, KeyCode::Enter);
        assert_eq!(view.drill.unwrap().tab, Some(Tab::Trackers));
        let s = screen(&top, &view, now, 160, 20);
        assert_eq!(
            s[2].trim_end(),
            " board SlimeVR · mcu ESP32 · imu LSM6DS3TR-C · firmware build 22 · firmware 0.6.3 · \
             mac 3c:61:05:12:34:56 · battery 87% (3.90 V) · signal -58 dBm"
        );
        let rate = |slot: &str| -> String {
            let l = s.iter().find(|l| l.starts_with(slot)).unwrap();
            l.split_whitespace().last().unwrap().to_owned()
        };
        assert_eq!((rate("0 "), rate("1 ")), ("100.0".into(), "50.0".into()));
    }

    #[test]
    fn empty_and_tiny_screens_draw_without_panic() {
        let top = Top::new();
        let s = screen(&top, &View::new(), Duration::ZERO, 80, 24);
        assert!(line_with(&s, "no datagrams yet").contains("IPv4"));
        let (top, now) = rig();
        let mut view = View::new();
        for (w, h) in [(1, 1), (10, 3), (30, 6)] {
            screen(&top, &view, now, w, h);
        }
        press(&mut view, &top, now, KeyCode::Enter);
        for (w, h) in [(1, 1), (10, 3), (30, 6)] {
            screen(&top, &view, now, w, h);
        }
    }
}
