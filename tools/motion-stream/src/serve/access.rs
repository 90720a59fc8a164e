//! Who may open the viewer page and the streams: the token (`--token`) and
//! the `Origin` check on every WebSocket upgrade. Pure: a request head in, a
//! verdict out, so the rules are tested without sockets.
//!
//! Browsers do not apply the same-origin rule to WebSockets, so any page the
//! user opens may try `ws://127.0.0.1:8765`; the browser does say which page
//! it is (`Origin`), and only a page the user gave the token to knows it.

use crate::http::Head;

/// The rules `serve` was started with.
#[derive(Clone, Debug, Default)]
pub(crate) struct Access {
    /// Every request must carry it (`?token=` or `Authorization: Bearer`).
    pub(crate) token: Option<String>,
    /// Origins allowed besides the server's own (`--allow-origin`), as
    /// `scheme://host[:port]`, without a trailing slash.
    pub(crate) origins: Vec<String>,
    /// `https`/`wss` rather than `http`/`ws`: the scheme of our own origin.
    pub(crate) tls: bool,
}

/// What to answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Allow,
    /// 401: the token is missing or wrong.
    NoToken,
    /// 403: a browser page of another origin.
    ForeignOrigin,
}

impl Access {
    /// The verdict on a request (`head.websocket` says whether it upgrades).
    pub(crate) fn check(&self, head: &Head) -> Verdict {
        if let Some(want) = &self.token {
            return match &head.token {
                Some(got) if same_secret(got.as_bytes(), want.as_bytes()) => Verdict::Allow,
                _ => Verdict::NoToken,
            };
        }
        if !head.websocket {
            return Verdict::Allow;
        }
        match &head.origin {
            // Not a browser: motion-stream dump, DLP3D's Python tools, curl.
            None => Verdict::Allow,
            Some(origin) if self.is_own(origin, head.host.as_deref()) => Verdict::Allow,
            Some(origin)
                if self
                    .origins
                    .iter()
                    .any(|o| o.eq_ignore_ascii_case(origin.trim_end_matches('/'))) =>
            {
                Verdict::Allow
            }
            Some(_) => Verdict::ForeignOrigin,
        }
    }

    /// Whether `origin` is this server's (the viewer page): the scheme and
    /// the `Host` the browser connected to. Only for a host given as an IP
    /// address or `localhost`: a name could be a rebinding attacker's, whose
    /// page then has the same origin as its target.
    fn is_own(&self, origin: &str, host: Option<&str>) -> bool {
        let Some(host) = host else {
            return false;
        };
        let scheme = if self.tls { "https://" } else { "http://" };
        let Some(rest) = origin.strip_prefix(scheme) else {
            return false;
        };
        rest.eq_ignore_ascii_case(host) && is_literal_host(host)
    }
}

/// `127.0.0.1:8765`, `[::1]:8765`, `localhost:8765`, `192.168.1.5`.
fn is_literal_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !h.ends_with(':') => h,
        _ => host,
    };
    let name = name.trim_start_matches('[').trim_end_matches(']');
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok()
}

/// Compares two secrets in time that depends on their lengths only.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A new random token: 128 bits from the operating system, as 32 hex digits.
///
/// # Errors
/// When the system's random source fails.
pub(crate) fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(websocket: bool, origin: Option<&str>, host: &str, token: Option<&str>) -> Head {
        Head {
            method: "GET".into(),
            path: "/".into(),
            websocket,
            origin: origin.map(str::to_owned),
            host: Some(host.to_owned()),
            token: token.map(str::to_owned),
            version: "HTTP/1.1".into(),
            connection_upgrade: websocket,
            ws_key: None,
            ws_version: None,
        }
    }

    #[test]
    fn origins_without_a_token() {
        let a = Access {
            origins: vec!["https://app.dlp3d.example".into()],
            ..Access::default()
        };
        let ws = |origin, host| a.check(&head(true, origin, host, None));
        assert_eq!(ws(None, "127.0.0.1:8765"), Verdict::Allow);
        assert_eq!(
            ws(Some("http://127.0.0.1:8765"), "127.0.0.1:8765"),
            Verdict::Allow
        );
        assert_eq!(
            ws(Some("http://localhost:8765"), "localhost:8765"),
            Verdict::Allow
        );
        assert_eq!(ws(Some("http://[::1]:8765"), "[::1]:8765"), Verdict::Allow);
        assert_eq!(
            ws(Some("http://evil.example"), "127.0.0.1:8765"),
            Verdict::ForeignOrigin
        );
        // DNS rebinding: the attacker's name pointed at us, same "origin".
        assert_eq!(
            ws(Some("http://rebind.example:8765"), "rebind.example:8765"),
            Verdict::ForeignOrigin
        );
        assert_eq!(
            ws(Some("https://127.0.0.1:8765"), "127.0.0.1:8765"),
            Verdict::ForeignOrigin
        );
        // A sandboxed frame or a file:// page of any site says `null`.
        assert_eq!(ws(Some("null"), "127.0.0.1:8765"), Verdict::ForeignOrigin);
        assert_eq!(
            ws(Some("https://app.dlp3d.example"), "127.0.0.1:8765"),
            Verdict::Allow
        );
        assert_eq!(
            ws(Some("https://app.dlp3d.example/"), "127.0.0.1:8765"),
            Verdict::Allow
        );
        // Pages are not WebSockets: a foreign page may load the viewer, it cannot read it.
        assert_eq!(
            a.check(&head(false, Some("http://evil.example"), "x", None)),
            Verdict::Allow
        );
    }

    #[test]
    fn a_token_is_needed_everywhere_and_lets_any_origin_in() {
        let a = Access {
            token: Some("s3cret".into()),
            ..Access::default()
        };
        for websocket in [false, true] {
            let check = |origin, token| a.check(&head(websocket, origin, "127.0.0.1:8765", token));
            assert_eq!(check(None, None), Verdict::NoToken);
            assert_eq!(check(None, Some("s3cre")), Verdict::NoToken);
            assert_eq!(check(None, Some("s3cret!")), Verdict::NoToken);
            assert_eq!(check(None, Some("s3cret")), Verdict::Allow);
            assert_eq!(
                check(Some("https://app.dlp3d.example"), Some("s3cret")),
                Verdict::Allow
            );
            assert_eq!(check(Some("http://127.0.0.1:8765"), None), Verdict::NoToken);
        }
    }

    #[test]
    fn secrets_and_tokens() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"ab"));
        let (t, u) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(t.len(), 32);
        assert!(t.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(t, u);
    }
}
