//! TCP connections for HTTP and WebSocket, plain or TLS: one stream type with
//! timeouts, the request head read before deciding between a page and a
//! WebSocket upgrade, TLS configurations from PEM files.

use std::fs;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{
    ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection, StreamOwned,
};
use tungstenite::WebSocket;
use tungstenite::protocol::CloseFrame;
use tungstenite::protocol::frame::coding::CloseCode;

/// Largest HTTP request head we read (browsers send a few hundred bytes).
pub(crate) const MAX_HEAD: usize = 16 * 1024;

/// A TCP connection, plain or TLS.
#[derive(Debug)]
pub(crate) enum Conn {
    /// `ws://`, `http://`.
    Plain(TcpStream),
    /// Our side of `wss://`, `https://`.
    TlsServer(Box<StreamOwned<ServerConnection, TcpStream>>),
    /// A `wss://` connection we made.
    TlsClient(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Conn {
    /// The TCP socket underneath.
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Self::Plain(s) => s,
            Self::TlsServer(s) => &s.sock,
            Self::TlsClient(s) => &s.sock,
        }
    }

    /// Sets the read timeout (`None` blocks).
    ///
    /// # Errors
    /// The OS error.
    pub(crate) fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.tcp().set_read_timeout(t)
    }

    /// Sets the write timeout (`None` blocks).
    ///
    /// # Errors
    /// The OS error.
    pub(crate) fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        self.tcp().set_write_timeout(t)
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.read(buf),
            Self::TlsServer(s) => s.read(buf),
            Self::TlsClient(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Plain(s) => s.write(buf),
            Self::TlsServer(s) => s.write(buf),
            Self::TlsClient(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Plain(s) => s.flush(),
            Self::TlsServer(s) => s.flush(),
            Self::TlsClient(s) => s.flush(),
        }
    }
}

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
}

/// Reads an HTTP request head (up to the blank line), at most [`MAX_HEAD`]
/// bytes; returns the bytes read and what they say.
///
/// # Errors
/// I/O errors, a head too long, or not HTTP.
pub(crate) fn read_head(conn: &mut impl Read) -> io::Result<(Vec<u8>, Head)> {
    let mut buf = Vec::with_capacity(1024);
    let mut byte = [0u8; 512];
    loop {
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
    let path = target.split('?').next().unwrap_or(target).to_owned();
    let websocket = lines.any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("upgrade") && v.trim().eq_ignore_ascii_case("websocket")
        })
    });
    Some(Head {
        method,
        path,
        websocket,
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

/// A TLS server configuration from a PEM certificate chain and key.
///
/// # Errors
/// Unreadable files, no certificate, no key, a key that does not fit.
pub(crate) fn server_tls(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("{}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no certificate in it", cert.display()));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| format!("certificate and key: {e}"))?;
    Ok(Arc::new(config))
}

/// A TLS client configuration trusting the public web roots and, if given,
/// the certificates in a PEM file (e.g. a self-signed server's).
///
/// # Errors
/// An unreadable or invalid CA file.
pub(crate) fn client_tls(ca: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(ca) = ca {
        let text = fs::read(ca).map_err(|e| format!("{}: {e}", ca.display()))?;
        for cert in CertificateDer::pem_slice_iter(&text) {
            let cert = cert.map_err(|e| format!("{}: {e}", ca.display()))?;
            roots
                .add(cert)
                .map_err(|e| format!("{}: {e}", ca.display()))?;
        }
    }
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Wraps an accepted TCP stream in TLS when a configuration is given.
///
/// # Errors
/// A TLS session that cannot be created.
pub(crate) fn accept_tls(tcp: TcpStream, tls: Option<&Arc<ServerConfig>>) -> io::Result<Conn> {
    match tls {
        None => Ok(Conn::Plain(tcp)),
        Some(config) => {
            let session = ServerConnection::new(Arc::clone(config)).map_err(io::Error::other)?;
            Ok(Conn::TlsServer(Box::new(StreamOwned::new(session, tcp))))
        }
    }
}

/// Opens a WebSocket to a `ws://` or `wss://` URL.
///
/// # Errors
/// A bad URL, a failed connection, TLS or handshake.
pub(crate) fn connect(
    url: &str,
    ca: Option<&Path>,
    timeout: Duration,
) -> Result<WebSocket<Conn>, String> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("wss://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("ws://") {
        (false, r)
    } else {
        return Err(format!("{url}: expected ws://HOST:PORT/PATH or wss://…"));
    };
    let authority = rest.split('/').next().unwrap_or(rest);
    let (host, port) = split_authority(authority, if tls { 443 } else { 80 })
        .ok_or_else(|| format!("{url}: bad host or port"))?;
    let addr = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("{host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}: no address"))?;
    let tcp = TcpStream::connect_timeout(&addr, timeout).map_err(|e| format!("{addr}: {e}"))?;
    tcp.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    tcp.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    let conn = if tls {
        let config = client_tls(ca)?;
        let name = ServerName::try_from(host.to_owned()).map_err(|e| format!("{host}: {e}"))?;
        let session = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
        Conn::TlsClient(Box::new(StreamOwned::new(session, tcp)))
    } else {
        Conn::Plain(tcp)
    };
    let (ws, _) = tungstenite::client(url, conn)
        .map_err(|e| format!("WebSocket handshake with {url}: {e}"))?;
    Ok(ws)
}

/// `host`, `host:port`, `[v6]` or `[v6]:port` → (host, port).
fn split_authority(authority: &str, default_port: u16) -> Option<(&str, u16)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((host, p.parse().ok()?)),
            None if after.is_empty() => Some((host, default_port)),
            None => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => Some((h, p.parse().ok()?)),
        Some(_) => None,
        None if !authority.is_empty() => Some((authority, default_port)),
        None => None,
    }
}

/// Closes a WebSocket with `code` and waits (up to 2 s) for the peer's close.
pub(crate) fn close<S: Read + Write>(socket: &mut WebSocket<S>, code: CloseCode, reason: &str) {
    let _ = socket.close(Some(CloseFrame {
        code,
        reason: reason.chars().take(120).collect::<String>().into(),
    }));
    // Read until the peer's close (or a timeout), so the close is clean.
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        match socket.read() {
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if mocap_core::net::is_timeout(&e) => {}
            Err(_) => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_with_and_without_ports() {
        assert_eq!(
            split_authority("a.example:8765", 80),
            Some(("a.example", 8765))
        );
        assert_eq!(split_authority("localhost", 443), Some(("localhost", 443)));
        assert_eq!(split_authority("[::1]", 80), Some(("::1", 80)));
        assert_eq!(split_authority("[::1]:9000", 80), Some(("::1", 9000)));
        for bad in ["", "h:x", "[::1", "[::1]x", "::1:80", "h:99999"] {
            assert_eq!(split_authority(bad, 80), None, "{bad}");
        }
    }

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
