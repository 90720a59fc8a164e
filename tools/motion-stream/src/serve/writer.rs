//! A client's writer thread: what the main thread queues, pings, close.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Bytes, Message, WebSocket};

use super::{KEEPALIVE, Out, close};
use crate::http::Replay;
use crate::ws::Conn;
use mocap_cli::net;

/// Writes what the main thread queues, a batch per flush; every 50 ms reads
/// (and drops) what the client sends, answering pings; ends on a close
/// either way.
pub(super) fn write_loop(
    socket: &mut WebSocket<Replay<Conn>>,
    rx: &Receiver<Out>,
    kicked: &AtomicBool,
) {
    let _ = socket
        .get_ref()
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(1)));
    let poll = mocap_cli::runner::POLL;
    let mut last_read = Instant::now();
    let mut last_write = Instant::now();
    loop {
        // A client waiting for input gets nothing to read; a ping now and
        // then finds out whether it is still there.
        if last_write.elapsed() >= KEEPALIVE {
            last_write = Instant::now();
            if socket.send(Message::Ping(Bytes::new())).is_err() {
                kicked.store(true, Ordering::Relaxed);
                return;
            }
        }
        if kicked.load(Ordering::Relaxed) {
            close(
                socket,
                CloseCode::Policy,
                "too slow: the stream's queue filled up",
            );
            return;
        }
        let first = match rx.recv_timeout(poll) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                close(socket, CloseCode::Away, "server stopping");
                return;
            }
        };
        // Everything queued now goes out with one flush.
        let first_sent = first.is_some();
        let mut next = first;
        while let Some(m) = next.take() {
            match m {
                Out::Msg(b) => {
                    if socket.write(Message::Binary(b)).is_err() {
                        kicked.store(true, Ordering::Relaxed);
                        return;
                    }
                }
                Out::Close(code, reason) => {
                    let _ = socket.flush();
                    close(socket, code, &reason);
                    return;
                }
            }
            next = rx.try_recv().ok();
        }
        if socket.flush().is_err() {
            kicked.store(true, Ordering::Relaxed);
            return;
        }
        if first_sent {
            last_write = Instant::now();
        }
        if last_read.elapsed() < poll {
            continue;
        }
        last_read = Instant::now();
        match socket.read() {
            Ok(Message::Close(_))
            | Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                kicked.store(true, Ordering::Relaxed);
                return;
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if net::is_timeout(&e) => {}
            Err(_) => {
                kicked.store(true, Ordering::Relaxed);
                return;
            }
        }
    }
}
