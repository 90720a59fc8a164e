//! HTTP/1.1 as far as the server needs it: the request head read before
//! choosing between the viewer page and a WebSocket upgrade, the bytes of
//! that head given back to the WebSocket handshake, and plain responses.

use std::io::{self, Read, Write};

/// Largest HTTP request head we read (browsers send a few hundred bytes).
pub(crate) const MAX_HEAD: usize = 16 * 1024;

/// A stream that first gives back bytes already read from it (the request
/// head we looked at), so the WebSocket handshake sees the whole request.
#[derive(Debug)]
pub(crate) struct Replay<S> {
    head: Vec<u8>,
    pos: usize,
    inner: S,
}

impl<S> Replay<S> {
    /// `head` is read again before `inner`.
    pub(crate) fn new(head: Vec<u8>, inner: S) -> Self {
        Self {
            head,
            pos: 0,
            inner,
        }
    }

    /// The stream underneath.
    pub(crate) fn get_ref(&self) -> &S {
        &self.inner
    }
}

impl<S: Read> Read for Replay<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(rest) = self.head.get(self.pos..).filter(|r| !r.is_empty()) {
            let n = rest.len().min(buf.len());
            if let (Some(dst), Some(src)) = (buf.get_mut(..n), rest.get(..n)) {
                dst.copy_from_slice(src);
            }
            self.pos += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

impl<S: Write> Write for Replay<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The parts of an HTTP request head we route on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    /// `GET`, …
    pub(crate) method: String,
    /// The path, without the query.
    pub(crate) path: String,
    /// Whether it asks for a WebSocket upgrade.
    pub(crate) websocket: bool,
    /// The page a browser sent it from (`Origin`).
    pub(crate) origin: Option<String>,
    /// The `Host` it was sent to.
    pub(crate) host: Option<String>,
    /// The `token` query parameter, or an `Authorization: Bearer` value.
    pub(crate) token: Option<String>,
    /// The protocol version of the request line (`HTTP/1.1`).
    pub(crate) version: String,
    /// Whether the (first) `Connection` header names `upgrade`.
    pub(crate) connection_upgrade: bool,
    /// `Sec-WebSocket-Key` (the first).
    pub(crate) ws_key: Option<String>,
    /// `Sec-WebSocket-Version` (the first).
    pub(crate) ws_version: Option<String>,
}

/// Why a WebSocket upgrade cannot be accepted (RFC 6455 §4.2.1, §4.2.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BadUpgrade {
    /// A part is missing or malformed: 400 Bad Request.
    Malformed(&'static str),
    /// A protocol version other than 13: 426 Upgrade Required, naming 13.
    Version,
}

/// The WebSocket protocol version this server speaks.
pub(crate) const WS_VERSION: &str = "13";

impl Head {
    /// Whether this upgrade request is one the WebSocket handshake accepts.
    /// The same rules as the handshake library's, checked first so that a
    /// request it would refuse gets an HTTP answer rather than a silent close.
    pub(crate) fn check_upgrade(&self) -> Result<(), BadUpgrade> {
        if self.method != "GET" {
            return Err(BadUpgrade::Malformed(
                "a WebSocket upgrade is a GET request",
            ));
        }
        if self.version != "HTTP/1.1" {
            return Err(BadUpgrade::Malformed("a WebSocket upgrade needs HTTP/1.1"));
        }
        if !self.connection_upgrade {
            return Err(BadUpgrade::Malformed(
                "a WebSocket upgrade needs `Connection: Upgrade`",
            ));
        }
        match self.ws_version.as_deref() {
            None => {
                return Err(BadUpgrade::Malformed(
                    "a WebSocket upgrade needs `Sec-WebSocket-Version: 13`",
                ));
            }
            Some(WS_VERSION) => {}
            Some(_) => return Err(BadUpgrade::Version),
        }
        match self.ws_key.as_deref() {
            Some(k) if is_ws_key(k) => Ok(()),
            _ => Err(BadUpgrade::Malformed(
                "a WebSocket upgrade needs a `Sec-WebSocket-Key` of 16 bytes in base64",
            )),
        }
    }
}

/// 16 bytes in canonical base64: 22 digits, the last with its low 4 bits
/// clear, and `==`.
fn is_ws_key(key: &str) -> bool {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let b = key.as_bytes();
    let (Some(digits), Some(b"==")) = (b.get(..22), b.get(22..)) else {
        return false;
    };
    digits.iter().all(|c| digit(*c).is_some())
        && digits
            .last()
            .and_then(|c| digit(*c))
            .is_some_and(|v| v & 0x0f == 0)
}

/// Reads an HTTP request head (up to the blank line), at most [`MAX_HEAD`]
/// bytes; returns the bytes read and what they say.
///
/// # Errors
/// I/O errors, a head too long, or not HTTP.
#[cfg(test)]
pub(crate) fn read_head(conn: &mut impl Read) -> io::Result<(Vec<u8>, Head)> {
    read_head_by(conn, None)
}

/// [`read_head`], giving up at `deadline`: a client that sends a byte now
/// and then must not hold a connection for hours before any check.
///
/// # Errors
/// As [`read_head`], and `TimedOut` past the deadline.
pub(crate) fn read_head_by(
    conn: &mut impl Read,
    deadline: Option<std::time::Instant>,
) -> io::Result<(Vec<u8>, Head)> {
    let mut buf = Vec::with_capacity(1024);
    let mut byte = [0u8; 512];
    loop {
        if deadline.is_some_and(|d| std::time::Instant::now() > d) {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "HTTP request head not complete in time",
            ));
        }
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let text = String::from_utf8_lossy(buf.get(..end).unwrap_or_default()).into_owned();
            return parse_head(&text)
                .map(|h| (buf, h))
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not an HTTP request"));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "HTTP request head too long",
            ));
        }
        let n = conn.read(&mut byte)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(byte.get(..n).unwrap_or_default());
    }
}

fn parse_head(text: &str) -> Option<Head> {
    let mut lines = text.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let target = first.next()?;
    let version = first.next().filter(|v| v.starts_with("HTTP/"))?.to_owned();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut token = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(str::to_owned);
    let (mut websocket, mut origin, mut host) = (false, None, None);
    let (mut connection, mut ws_key, mut ws_version) = (None, None, None);
    for (k, v) in lines.filter_map(|l| l.split_once(':')) {
        let (k, v) = (k.trim(), v.trim());
        if k.eq_ignore_ascii_case("upgrade") && v.eq_ignore_ascii_case("websocket") {
            websocket = true;
        } else if k.eq_ignore_ascii_case("connection") {
            connection.get_or_insert_with(|| {
                v.split([' ', ','])
                    .any(|o| o.eq_ignore_ascii_case("upgrade"))
            });
        } else if k.eq_ignore_ascii_case("sec-websocket-key") {
            ws_key.get_or_insert_with(|| v.to_owned());
        } else if k.eq_ignore_ascii_case("sec-websocket-version") {
            ws_version.get_or_insert_with(|| v.to_owned());
        } else if k.eq_ignore_ascii_case("origin") {
            // `null` is a browser too (a sandboxed frame, a file:// page):
            // kept, so it is checked like any other origin.
            origin = Some(v.to_owned());
        } else if k.eq_ignore_ascii_case("host") {
            host = Some(v.to_owned());
        } else if k.eq_ignore_ascii_case("authorization")
            && let Some(t) = v
                .strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        {
            token.get_or_insert_with(|| t.trim().to_owned());
        }
    }
    Some(Head {
        method,
        path: path.to_owned(),
        websocket,
        origin,
        host,
        token,
        version,
        connection_upgrade: connection.unwrap_or(false),
        ws_key,
        ws_version,
    })
}

/// Writes a complete HTTP/1.1 response and flushes.
///
/// # Errors
/// Write errors.
pub(crate) fn respond(
    conn: &mut impl Write,
    status: &str,
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    respond_with(conn, status, &[], content_type, body)
}

/// [`respond`] with more header fields. One naming `Upgrade` (a 426) makes
/// `Connection` name it too, as RFC 7230 §6.7 asks.
///
/// # Errors
/// Write errors.
pub(crate) fn respond_with(
    conn: &mut impl Write,
    status: &str,
    fields: &[(&str, &str)],
    content_type: &str,
    body: &[u8],
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status}\r\n");
    for (k, v) in fields {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    let upgrade = fields
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("upgrade"));
    let connection = if upgrade { "Upgrade, close" } else { "close" };
    head.push_str(&format!(
        "Content-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: {connection}\r\n\r\n",
        body.len()
    ));
    conn.write_all(head.as_bytes())?;
    conn.write_all(body)?;
    conn.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads_route_on_path_and_upgrade() {
        let (raw, head) = read_head(
            &mut &b"GET /api/v4/text_generate?x=1 HTTP/1.1\r\nHost: a\r\nUpgrade: WebSocket\r\n\r\nrest"[..],
        )
        .unwrap();
        assert!(raw.starts_with(b"GET"));
        assert_eq!(head.path, "/api/v4/text_generate");
        assert!(head.websocket);
        let (_, page) = read_head(&mut &b"GET / HTTP/1.1\r\n\r\n"[..]).unwrap();
        assert_eq!(
            (page.method.as_str(), page.path.as_str(), page.websocket),
            ("GET", "/", false)
        );
        let (_, h) = read_head(
            &mut &b"GET /x?a=1&token=abc HTTP/1.1\r\nHost: 127.0.0.1:8765\r\nOrigin: http://evil.example\r\n\r\n"[..],
        )
        .unwrap();
        assert_eq!(
            (
                h.path.as_str(),
                h.token.as_deref(),
                h.origin.as_deref(),
                h.host.as_deref()
            ),
            (
                "/x",
                Some("abc"),
                Some("http://evil.example"),
                Some("127.0.0.1:8765")
            )
        );
        let (_, h) = read_head(
            &mut &b"GET / HTTP/1.1\r\nAuthorization: Bearer t0k\r\nOrigin: null\r\n\r\n"[..],
        )
        .unwrap();
        assert_eq!(
            (h.token.as_deref(), h.origin.as_deref()),
            (Some("t0k"), Some("null"))
        );
        assert!(read_head(&mut &b"hello\r\n\r\n"[..]).is_err());
        assert!(read_head(&mut &b"GET / HTTP/1.1\r\n"[..]).is_err());
        let long = vec![b'a'; MAX_HEAD + 10];
        assert!(read_head(&mut long.as_slice()).is_err());
    }

    fn upgrade(extra: &str) -> Result<(), BadUpgrade> {
        let text = format!("GET /api/v4/text_generate HTTP/1.1\r\nHost: a{extra}\r\n\r\n");
        read_head(&mut text.as_bytes()).unwrap().1.check_upgrade()
    }

    #[test]
    fn upgrades_are_checked_as_the_handshake_would() {
        let good = "\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==";
        assert_eq!(upgrade(good), Ok(()));
        let malformed = |extra: &str| matches!(upgrade(extra), Err(BadUpgrade::Malformed(_)));
        assert!(malformed(
            &good.replace("keep-alive, Upgrade", "keep-alive")
        ));
        assert!(malformed(
            &good.replace("Sec-WebSocket-Version: 13\r\n", "")
        ));
        assert!(malformed(&good.replace("dGhlIHNhbXBsZSBub25jZQ==", "")));
        assert!(malformed(&good.replace(
            "dGhlIHNhbXBsZSBub25jZQ==",
            "dGhlIHNhbXBsZSBub25jZR=="
        )));
        assert!(malformed(&good.replace(
            "dGhlIHNhbXBsZSBub25jZQ==",
            "dGhlIHNhbXBsZSBub25j*Q=="
        )));
        assert!(malformed(
            &good.replace("dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZSBub25jZQ")
        ));
        assert_eq!(
            upgrade(&good.replace("Version: 13", "Version: 8")),
            Err(BadUpgrade::Version)
        );
        // Only the first of repeated fields counts, as in the handshake.
        assert_eq!(
            upgrade(&format!("{good}\r\nSec-WebSocket-Version: 8")),
            Ok(())
        );
        let post = format!("POST /x HTTP/1.1\r\n{}\r\n\r\n", &good[2..]);
        let (_, head) = read_head(&mut post.as_bytes()).unwrap();
        assert!(matches!(
            head.check_upgrade(),
            Err(BadUpgrade::Malformed(_))
        ));
        let old = format!("GET /x HTTP/1.0\r\n{}\r\n\r\n", &good[2..]);
        let (_, head) = read_head(&mut old.as_bytes()).unwrap();
        assert!(matches!(
            head.check_upgrade(),
            Err(BadUpgrade::Malformed(_))
        ));
    }

    #[test]
    fn a_426_names_the_upgrade_in_connection_too() {
        let mut out = Vec::new();
        respond_with(
            &mut out,
            "426 Upgrade Required",
            &[("Upgrade", "websocket")],
            "text/plain",
            b"x",
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("HTTP/1.1 426 Upgrade Required\r\nUpgrade: websocket\r\n"));
        assert!(
            text.contains("\r\nConnection: Upgrade, close\r\n"),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\nx"));
        let mut plain = Vec::new();
        respond(&mut plain, "200 OK", "text/plain", b"").unwrap();
        assert!(
            String::from_utf8(plain)
                .unwrap()
                .contains("Connection: close\r\n")
        );
    }

    #[test]
    fn replay_gives_the_head_back_first() {
        let mut r = Replay::new(b"abc".to_vec(), &b"def"[..]);
        let mut out = String::new();
        r.read_to_string(&mut out).unwrap();
        assert_eq!(out, "abcdef");
    }
}
