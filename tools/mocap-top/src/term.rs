//! The terminal: raw mode and the alternate screen while the view is up,
//! given back however the run ends (a drop guard), and keys read on a
//! thread of their own, so the run never waits on the terminal.
//!
//! crossterm's reader loops for ever on a terminal that hung up (a read
//! of 0 bytes, or EIO, is retried without end): a closed tmux pane or ssh
//! session left mocap-top spinning at 40 % of a core, holding its ports.
//! The reading thread may spin there, but the run checks every turn that
//! its terminal is still one and ends like `q` when it is not; the process
//! exits with the thread.

use std::io::{self, IsTerminal as _, Stdout};
use std::sync::mpsc::{Receiver, TryRecvError, sync_channel};
use std::time::Duration;

use mocap_cli::sends::SendRecord;
use ratatui::Terminal;
use ratatui::backend::{Backend as _, CrosstermBackend};
use ratatui::crossterm::event::{self, Event, KeyEvent};
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::crossterm::{cursor, execute};

use crate::screen::{self, View};
use crate::state::Top;

/// Keys waiting to be taken: a held key repeats a few dozen times a second
/// at most, and the run takes them ten times a second.
const KEY_QUEUE: usize = 256;

/// The terminal while the screen is up.
pub(crate) struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    keys: Receiver<io::Result<KeyEvent>>,
}

/// What the terminal said since the last look.
pub(crate) enum Heard {
    Keys(Vec<KeyEvent>),
    /// The terminal hung up (or its input ended).
    Gone,
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
        let (tx, keys) = sync_channel(KEY_QUEUE);
        let spawned = std::thread::Builder::new()
            .name("keys".into())
            .spawn(move || {
                loop {
                    let sent = match event::read() {
                        Ok(Event::Key(k)) => tx.send(Ok(k)),
                        // A resize is taken by the next draw.
                        Ok(_) => Ok(()),
                        Err(e) => {
                            let _ = tx.send(Err(e));
                            return;
                        }
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
        if let Err(e) = spawned {
            restore();
            return Err(e);
        }
        Ok(Self { terminal, keys })
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

    /// Forgets what is on the screen, so the next draw paints every cell
    /// (Ctrl-L: another program wrote over it).
    pub(crate) fn clear(&mut self) -> io::Result<()> {
        // Not `Terminal::clear`: it asks the terminal where the cursor is,
        // and the answer goes to the keys thread's reader (an error after
        // 2 s). An empty frame makes the next draw one of every cell.
        self.terminal.draw(|_| {})?;
        self.terminal.backend_mut().clear()
    }

    /// The keys pressed since the last call, without waiting; or that the
    /// terminal is gone.
    pub(crate) fn input(&mut self) -> Heard {
        if !still_there() {
            return Heard::Gone;
        }
        let mut keys = Vec::new();
        for _ in 0..KEY_QUEUE {
            match self.keys.try_recv() {
                Ok(Ok(k)) => keys.push(k),
                Err(TryRecvError::Empty) => break,
                Ok(Err(_)) | Err(TryRecvError::Disconnected) => return Heard::Gone,
            }
        }
        Heard::Keys(keys)
    }
}

/// Whether the screen's terminal is still there: a hung-up terminal
/// answers no terminal request (EIO), so it no longer counts as one.
fn still_there() -> bool {
    io::stdout().is_terminal()
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
