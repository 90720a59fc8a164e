//! One connection: the HTTP head, the viewer page or the WebSocket upgrade,
//! the start request; then its writer.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tungstenite::Message;
use tungstenite::protocol::frame::coding::CloseCode;

use super::access::{Access, Verdict};
use super::writer::write_loop;
use super::{Bytes, Joined, MAX_CLIENT_MESSAGE, SEND_BUFFER, Shared, VIEWER, close};
use crate::http::{self, Replay};
use crate::ws;
use mocap_cli::Log;
use mocap_cli::net;
use mocap_core::dlp3d::{self, class};
use std::net::TcpStream;
use std::time::Instant;

/// One accepted TCP connection, from the request head to the close.
#[allow(clippy::too_many_arguments, reason = "one thread's whole context")]
pub(super) fn connection(
    id: u64,
    tcp: TcpStream,
    tls: Option<&Arc<rustls::ServerConfig>>,
    queue: usize,
    join: &mpsc::Sender<Joined>,
    log: &Mutex<Log>,
    shared: &Mutex<Shared>,
    page: &str,
    access: &Access,
) {
    let peer = tcp
        .peer_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let _ = tcp.set_nodelay(true);
    // A bounded kernel buffer (the kernel doubles it): a client that stops
    // reading fills it within seconds and is then dropped, instead of
    // megabytes of autotuned buffer hiding it.
    let _ = net::set_send_buffer(&tcp, SEND_BUFFER);
    let say = |args: std::fmt::Arguments<'_>| {
        if let Ok(l) = log.lock() {
            l.info(args);
        }
    };
    let refuse = || {
        if let Ok(mut s) = shared.lock() {
            s.refused += 1;
        }
    };
    let Ok(mut conn) = ws::accept_tls(tcp, tls) else {
        return;
    };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
    // Each read waits at most the read timeout; the whole head, 10 s.
    let deadline = Instant::now() + Duration::from_secs(10);
    let (head_bytes, head) = match http::read_head_by(&mut conn, Some(deadline)) {
        Ok(h) => h,
        Err(e) => {
            say(format_args!("{peer}: {e}"));
            refuse();
            return;
        }
    };
    match access.check(&head) {
        Verdict::Allow => {}
        refused => {
            let (status, why) = match refused {
                Verdict::NoToken => ("401 Unauthorized", "a missing or wrong token"),
                _ => (
                    "403 Forbidden",
                    "a page of another origin (--allow-origin admits one)",
                ),
            };
            say(format_args!(
                "{peer}: refused {} {} from {}: {why}",
                if head.websocket {
                    "WebSocket"
                } else {
                    "request"
                },
                head.path,
                head.origin.as_deref().unwrap_or("no origin"),
            ));
            refuse();
            if let Ok(mut s) = shared.lock() {
                match refused {
                    Verdict::NoToken => s.unauthorized += 1,
                    _ => s.forbidden += 1,
                }
            }
            let body = format!("{status}: {why}\n");
            let _ = http::respond(&mut conn, status, "text/plain", body.as_bytes());
            return;
        }
    }
    if !head.websocket {
        let (status, kind, body): (&str, &str, &[u8]) =
            match (head.method.as_str(), head.path.as_str()) {
                ("GET", "/" | "/index.html") => {
                    ("200 OK", "text/html; charset=utf-8", VIEWER.as_bytes())
                }
                ("GET", "/rig.json") => ("200 OK", "application/json", page.as_bytes()),
                ("GET", _) => ("404 Not Found", "text/plain", b"not found\n"),
                _ => ("405 Method Not Allowed", "text/plain", b"GET only\n"),
            };
        if status.starts_with("200") {
            if let Ok(mut s) = shared.lock() {
                s.pages += 1;
            }
        } else {
            refuse();
        }
        let _ = http::respond(&mut conn, status, kind, body);
        return;
    }
    let route = head.path.clone();
    let known = dlp3d::ROUTES.contains(&route.as_str());
    let replay = Replay::new(head_bytes, conn);
    #[allow(clippy::result_large_err, reason = "tungstenite's callback signature")]
    let callback = |_req: &tungstenite::handshake::server::Request,
                    resp: tungstenite::handshake::server::Response| {
        if known {
            Ok(resp)
        } else {
            let mut r = tungstenite::handshake::server::ErrorResponse::new(Some(format!(
                "no stream on {route}; try {}\n",
                dlp3d::ROUTES.join(", ")
            )));
            *r.status_mut() = tungstenite::http::StatusCode::NOT_FOUND;
            Err(r)
        }
    };
    let config = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(MAX_CLIENT_MESSAGE))
        .max_frame_size(Some(MAX_CLIENT_MESSAGE));
    let mut socket = match tungstenite::accept_hdr_with_config(replay, callback, Some(config)) {
        Ok(s) => s,
        Err(e) => {
            say(format_args!(
                "{peer}: WebSocket handshake on {}: {e}",
                head.path
            ));
            refuse();
            return;
        }
    };
    // The first message must be a start request.
    let request = match socket.read() {
        Ok(Message::Binary(b)) => dlp3d::decode_request(b.as_ref())
            .map_err(|e| format!("not an OrchestratorV4Request: {e}")),
        Ok(other) => Err(format!(
            "expected a binary start request, got a {} message",
            kind(&other)
        )),
        Err(e) => Err(format!("no start request: {e}")),
    }
    .and_then(|r| {
        if class::START_REQUESTS.contains(&r.class_name.as_str()) {
            Ok(r)
        } else {
            Err(format!(
                "expected a start request ({}), got class_name {:?}",
                class::START_REQUESTS.join(", "),
                r.class_name
            ))
        }
    });
    let request = match request {
        Ok(r) => r,
        Err(reason) => {
            say(format_args!("{peer}: {reason}"));
            refuse();
            let _ = socket.send(Message::Binary(Bytes::from(dlp3d::encode_response(
                &dlp3d::failed(&reason),
            ))));
            close(&mut socket, CloseCode::Policy, &reason);
            return;
        }
    };
    let (tx, rx) = mpsc::sync_channel(queue);
    let kicked = Arc::new(AtomicBool::new(false));
    if join
        .send(Joined {
            id,
            addr: peer,
            route,
            request,
            tx,
            kicked: Arc::clone(&kicked),
        })
        .is_err()
    {
        return;
    }
    write_loop(&mut socket, &rx, &kicked);
}

fn kind(m: &Message) -> &'static str {
    match m {
        Message::Text(_) => "text",
        Message::Binary(_) => "binary",
        Message::Ping(_) => "ping",
        Message::Pong(_) => "pong",
        Message::Close(_) => "close",
        Message::Frame(_) => "raw frame",
    }
}
