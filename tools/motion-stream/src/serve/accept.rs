//! One connection: the HTTP head, the viewer page or the WebSocket upgrade,
//! the start request; then its writer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self};
use std::time::Duration;

use tungstenite::Message;
use tungstenite::protocol::frame::coding::CloseCode;

use super::access::Verdict;
use super::writer::write_loop;
use super::{Bytes, Context, Joined, MAX_CLIENT_MESSAGE, SEND_BUFFER, VIEWER, close};
use crate::http::{self, BadUpgrade, Replay, WS_VERSION};
use crate::ws;
use mocap_cli::net;
use mocap_core::dlp3d::{self, class};
use std::net::TcpStream;
use std::time::Instant;

/// One accepted TCP connection, from the request head to the close.
pub(super) fn connection(
    id: u64,
    tcp: TcpStream,
    accepted: Instant,
    ctx: &Context,
    join: &mpsc::Sender<Joined>,
) {
    let peer = tcp
        .peer_addr()
        .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)));
    let _ = tcp.set_nodelay(true);
    // A bounded kernel buffer (the kernel doubles it): a client that stops
    // reading fills it within seconds and is then dropped, instead of
    // megabytes of autotuned buffer hiding it.
    let _ = net::set_send_buffer(&tcp, SEND_BUFFER);
    let refuse = |args: std::fmt::Arguments<'_>| ctx.refuse(peer, |_| {}, args);
    let Ok(mut conn) = ws::accept_tls(tcp, ctx.tls.as_ref()) else {
        return;
    };
    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
    // The TLS handshake and the whole head within --head-timeout of the
    // connection, each read waiting only for what is left: a client that
    // sends a byte now and then cannot hold its place before any check.
    let deadline = accepted + ctx.head_timeout;
    let (head_bytes, head) = match http::read_head_by(&mut conn.until(deadline), Some(deadline)) {
        Ok(h) => h,
        Err(e) if net::is_timeout(&e) => {
            ctx.refuse(
                peer,
                |s| s.head_timeouts += 1,
                format_args!(
                    "{peer}: no complete request head within {:?} (--head-timeout)",
                    ctx.head_timeout
                ),
            );
            return;
        }
        Err(e) => {
            refuse(format_args!("{peer}: {e}"));
            return;
        }
    };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    match ctx.access.check(&head) {
        Verdict::Allow => {}
        refused => {
            let (status, why) = match refused {
                Verdict::NoToken => ("401 Unauthorized", "a missing or wrong token"),
                _ => (
                    "403 Forbidden",
                    "a page of another origin (--allow-origin admits one)",
                ),
            };
            ctx.refuse(
                peer,
                |s| match refused {
                    Verdict::NoToken => s.unauthorized += 1,
                    _ => s.forbidden += 1,
                },
                format_args!(
                    "{peer}: refused {} {} from {}: {why}",
                    if head.websocket {
                        "WebSocket"
                    } else {
                        "request"
                    },
                    head.path,
                    head.origin.as_deref().unwrap_or("no origin"),
                ),
            );
            let body = format!("{status}: {why}\n");
            let _ = http::respond(&mut conn, status, "text/plain", body.as_bytes());
            return;
        }
    }
    let stream_route = dlp3d::ROUTES.contains(&head.path.as_str());
    if !head.websocket {
        let (status, kind, body): (&str, &str, &[u8]) =
            match (head.method.as_str(), head.path.as_str()) {
                ("GET", "/" | "/index.html") => {
                    ("200 OK", "text/html; charset=utf-8", VIEWER.as_bytes())
                }
                ("GET", "/rig.json") => ("200 OK", "application/json", ctx.page.as_bytes()),
                // A browser or curl pointed at a stream's URL: say what it takes.
                ("GET", _) if stream_route => (
                    "426 Upgrade Required",
                    "text/plain",
                    b"this is a WebSocket endpoint: connect with ws:// or wss:// (Upgrade: websocket)\n",
                ),
                ("GET", _) => ("404 Not Found", "text/plain", b"not found\n"),
                _ => ("405 Method Not Allowed", "text/plain", b"GET only\n"),
            };
        if status.starts_with("200") {
            if let Ok(mut s) = ctx.shared.lock() {
                s.pages += 1;
            }
        } else {
            // Not logged: browsers ask for /favicon.ico and the like.
            ctx.count(peer, |_| {});
        }
        let upgrade: &[(&str, &str)] = if status.starts_with("426") {
            &[
                ("Upgrade", "websocket"),
                ("Sec-WebSocket-Version", WS_VERSION),
            ]
        } else {
            &[]
        };
        let _ = http::respond_with(&mut conn, status, upgrade, kind, body);
        return;
    }
    // The handshake library closes without an answer on a request it
    // refuses: check first, and answer 400 or 426 (RFC 6455 §4.2.1-2).
    if let Err(bad) = head.check_upgrade() {
        let (status, why, fields): (_, _, &[(&str, &str)]) = match bad {
            BadUpgrade::Malformed(why) => ("400 Bad Request", why, &[]),
            BadUpgrade::Version => (
                "426 Upgrade Required",
                "this server speaks WebSocket version 13",
                &[("Sec-WebSocket-Version", WS_VERSION)],
            ),
        };
        refuse(format_args!(
            "{peer}: WebSocket upgrade on {}: {status}: {why}",
            head.path
        ));
        let body = format!("{status}: {why}\n");
        let _ = http::respond_with(&mut conn, status, fields, "text/plain", body.as_bytes());
        return;
    }
    let route = head.path.clone();
    let known = stream_route;
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
            refuse(format_args!(
                "{peer}: WebSocket handshake on {}: {e}",
                head.path
            ));
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
            refuse(format_args!("{peer}: {reason}"));
            let _ = socket.send(Message::Binary(Bytes::from(dlp3d::encode_response(
                &dlp3d::failed(&reason),
            ))));
            close(&mut socket, CloseCode::Policy, &reason);
            return;
        }
    };
    let (tx, rx) = mpsc::sync_channel(ctx.queue);
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
