//! One connection: the HTTP head, the viewer page or the WebSocket upgrade,
//! the start request; then its writer.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self};
use std::time::Duration;

use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Message, WebSocket};

use super::access::Verdict;
use super::writer::write_loop;
use super::{Bytes, Context, Joined, MAX_CLIENT_MESSAGE, SEND_BUFFER, VIEWER, close};
use crate::http::{self, BadUpgrade, Head, Replay, WS_VERSION};
use crate::ws::{self, Conn};
use mocap_cli::net;
use mocap_core::dlp3d::{self, class};
use std::net::TcpStream;
use std::time::Instant;

/// A client's WebSocket after the handshake.
type Socket = WebSocket<Replay<Conn>>;

/// One accepted TCP connection, from the request head to the close: each
/// step below answers or refuses on its own, and says whether to go on.
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
    let Ok(mut conn) = ws::accept_tls(tcp, ctx.tls.as_ref()) else {
        return;
    };
    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
    let Some((head_bytes, head)) = read_head(&mut conn, id, peer, accepted, ctx) else {
        return;
    };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    if !admitted(&mut conn, peer, &head, ctx) {
        return;
    }
    let stream_route = dlp3d::ROUTES.contains(&head.path.as_str());
    if !head.websocket {
        serve_page(&mut conn, peer, &head, stream_route, ctx);
        return;
    }
    if !upgrade_well_formed(&mut conn, peer, &head, ctx) {
        return;
    }
    let Some(mut socket) = handshake(conn, head_bytes, &head, stream_route, peer, ctx) else {
        return;
    };
    let Some(request) = start_request(&mut socket, peer, ctx) else {
        return;
    };
    let (tx, rx) = mpsc::sync_channel(ctx.queue);
    let kicked = Arc::new(AtomicBool::new(false));
    if join
        .send(Joined {
            id,
            addr: peer,
            route: head.path,
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

/// The TLS handshake and the whole head within --head-timeout of the
/// connection, each read waiting only for what is left: a client that sends
/// a byte now and then cannot hold its place before any check.
fn read_head(
    conn: &mut Conn,
    id: u64,
    peer: SocketAddr,
    accepted: Instant,
    ctx: &Context,
) -> Option<(Vec<u8>, Head)> {
    let deadline = accepted
        .checked_add(ctx.head_timeout)
        .unwrap_or_else(Instant::now);
    let read = http::read_head_by(&mut conn.until(deadline), Some(deadline));
    // Finished or not, it no longer waits; one given up to make room was
    // counted and logged by the acceptor, and its socket is shut.
    let kept = ctx.heads.lock().map(|mut h| h.finished(id)).unwrap_or(true);
    match read {
        _ if !kept => None,
        Ok(h) => Some(h),
        Err(e) if net::is_timeout(&e) => {
            ctx.refuse(
                peer,
                |s| s.head_timeouts += 1,
                format_args!(
                    "{peer}: no complete request head within {:?} (--head-timeout)",
                    ctx.head_timeout
                ),
            );
            None
        }
        Err(e) => {
            ctx.refuse(peer, |_| {}, format_args!("{peer}: {e}"));
            None
        }
    }
}

/// The token and origin checks (`--token`, `--allow-origin`); a refused
/// request gets its 401 or 403 here.
fn admitted(conn: &mut Conn, peer: SocketAddr, head: &Head, ctx: &Context) -> bool {
    let refused = ctx.access.check(head);
    if refused == Verdict::Allow {
        return true;
    }
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
    let _ = http::respond(conn, status, "text/plain", body.as_bytes());
    false
}

/// A plain HTTP request: the viewer, the rig, or a word on what a stream's
/// URL takes.
fn serve_page(conn: &mut Conn, peer: SocketAddr, head: &Head, stream_route: bool, ctx: &Context) {
    let (status, kind, body): (&str, &str, &[u8]) = match (head.method.as_str(), head.path.as_str())
    {
        ("GET", "/" | "/index.html") => ("200 OK", "text/html; charset=utf-8", VIEWER.as_bytes()),
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
    let _ = http::respond_with(conn, status, upgrade, kind, body);
}

/// The handshake library closes without an answer on a request it refuses:
/// check first, and answer 400 or 426 (RFC 6455 §4.2.1-2).
fn upgrade_well_formed(conn: &mut Conn, peer: SocketAddr, head: &Head, ctx: &Context) -> bool {
    let Err(bad) = head.check_upgrade() else {
        return true;
    };
    let (status, why, fields): (_, _, &[(&str, &str)]) = match bad {
        BadUpgrade::Malformed(why) => ("400 Bad Request", why, &[]),
        BadUpgrade::Version => (
            "426 Upgrade Required",
            "this server speaks WebSocket version 13",
            &[("Sec-WebSocket-Version", WS_VERSION)],
        ),
    };
    ctx.refuse(
        peer,
        |_| {},
        format_args!(
            "{peer}: WebSocket upgrade on {}: {status}: {why}",
            head.path
        ),
    );
    let body = format!("{status}: {why}\n");
    let _ = http::respond_with(conn, status, fields, "text/plain", body.as_bytes());
    false
}

/// The WebSocket handshake over the head already read; a path with no
/// stream is answered 404 with the routes there are.
fn handshake(
    conn: Conn,
    head_bytes: Vec<u8>,
    head: &Head,
    known: bool,
    peer: SocketAddr,
    ctx: &Context,
) -> Option<Socket> {
    let route = head.path.as_str();
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
    match tungstenite::accept_hdr_with_config(replay, callback, Some(config)) {
        Ok(s) => Some(s),
        Err(e) => {
            ctx.refuse(
                peer,
                |_| {},
                format_args!("{peer}: WebSocket handshake on {route}: {e}"),
            );
            None
        }
    }
}

/// The first message, which must be a start request; anything else is
/// answered with a failed response and a policy close.
fn start_request(socket: &mut Socket, peer: SocketAddr, ctx: &Context) -> Option<dlp3d::Request> {
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
    match request {
        Ok(r) => Some(r),
        Err(reason) => {
            ctx.refuse(peer, |_| {}, format_args!("{peer}: {reason}"));
            let _ = socket.send(Message::Binary(Bytes::from(dlp3d::encode_response(
                &dlp3d::failed(&reason),
            ))));
            close(socket, CloseCode::Policy, &reason);
            None
        }
    }
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
