//! The terminal: raw mode and the alternate screen while the view is up,
//! given back however the run ends (a drop guard), and keys read without
//! waiting.

use std::io::{self, Stdout};
use std::time::Duration;

use mocap_cli::SendRecord;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyEvent};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};

use crate::screen::{self, View};
use crate::state::Top;

/// The terminal while the screen is up.
pub(crate) struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl Screen {
    /// Raw mode, the alternate screen, no cursor.
    pub(crate) fn open() -> io::Result<Self> {
        enable_raw_mode()?;
        let mut out = io::stdout();
        if let Err(e) = execute!(out, EnterAlternateScreen, cursor::Hide) {
            let _ = disable_raw_mode();
            return Err(e);
        }
        let terminal = match Terminal::new(CrosstermBackend::new(out)) {
            Ok(t) => t,
            Err(e) => {
                restore();
                return Err(e);
            }
        };
        Ok(Self { terminal })
    }

    /// Draws the model as the view says.
    pub(crate) fn draw(
        &mut self,
        top: &Top,
        view: &View,
        now: Duration,
        sends: &[SendRecord],
    ) -> io::Result<()> {
        self.terminal
            .draw(|f| screen::draw(f, top, view, now, sends))?;
        Ok(())
    }

    /// The keys pressed since the last call, without waiting (a resize
    /// is taken by the next draw).
    pub(crate) fn keys(&mut self) -> io::Result<Vec<KeyEvent>> {
        let mut keys = Vec::new();
        // Bounded: a held key repeats a few dozen times a second at most.
        for _ in 0..256 {
            if !event::poll(Duration::ZERO)? {
                break;
            }
            if let Event::Key(k) = event::read()? {
                keys.push(k);
            }
        }
        Ok(keys)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

fn restore() {
    let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
    let _ = disable_raw_mode();
}
