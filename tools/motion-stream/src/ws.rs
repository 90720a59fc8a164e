//! TCP connections for HTTP and WebSocket, plain or TLS: one stream type with
//! timeouts, TLS configurations from PEM files, WebSocket connect and close.

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

    /// This connection, each read waiting at most until `deadline`: a client
    /// that sends a byte now and then still runs out of time (a TLS
    /// handshake underneath counts against the same deadline).
    pub(crate) fn until(&mut self, deadline: Instant) -> ReadBy<'_> {
        ReadBy {
            conn: self,
            deadline,
        }
    }
}

/// See [`Conn::until`].
#[derive(Debug)]
pub(crate) struct ReadBy<'a> {
    conn: &'a mut Conn,
    deadline: Instant,
}

impl Read for ReadBy<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::ErrorKind::TimedOut.into());
        }
        self.conn.set_read_timeout(Some(left))?;
        self.conn.read(buf)
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
            Err(tungstenite::Error::Io(e)) if mocap_cli::net::is_timeout(&e) => {}
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
}
