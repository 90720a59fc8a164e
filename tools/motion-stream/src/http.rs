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
    first.next().filter(|v| v.starts_with("HTTP/"))?;
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut token = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(str::to_owned);
    let (mut websocket, mut origin, mut host) = (false, None, None);
    for (k, v) in lines.filter_map(|l| l.split_once(':')) {
        let (k, v) = (k.trim(), v.trim());
        if k.eq_ignore_ascii_case("upgrade") && v.eq_ignore_ascii_case("websocket") {
            websocket = true;
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
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
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

    #[test]
    fn replay_gives_the_head_back_first() {
        let mut r = Replay::new(b"abc".to_vec(), &b"def"[..]);
        let mut out = String::new();
        r.read_to_string(&mut out).unwrap();
        assert_eq!(out, "abcdef");
    }
}
