//! The one parser behind every address flag (`-l`, `--to`, `--vmc`, …): a
//! bare port takes the flag's default host, host names resolve (IPv4
//! preferred), IPv6 is written `[v6]:port`, and an unbracketed `::1:12351`
//! is refused with its correct spelling, since the last group could as well
//! be part of the address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs as _};

use crate::args::ValueError;

/// What every address message ends with: the accepted forms, by example.
const FORMS: &str = "expected PORT, HOST:PORT or [IPv6]:PORT, e.g. 12351, 127.0.0.1:12351, \
                     localhost:12351, [::1]:12351";

/// Every IPv4 interface at `port`: the default listen address of a tool,
/// with the port from its protocol's module (one place for each number).
#[must_use]
pub const fn any_ipv4(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port)
}

/// A destination or a host-specific address: a bare port means
/// 127.0.0.1 (this machine).
///
/// # Errors
/// A message naming the accepted forms when the text is none of them, or
/// the name does not resolve.
pub fn parse_host_port(text: &str) -> Result<SocketAddr, ValueError> {
    parse_addr(text, IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// A destination (`--to`, `--vmc`, …): [`parse_host_port`], but not port 0,
/// which no receiver listens on (every send to it fails).
///
/// # Errors
/// As [`parse_host_port`], and for port 0.
pub fn parse_dest(text: &str) -> Result<SocketAddr, ValueError> {
    let a = parse_host_port(text)?;
    if a.port() == 0 {
        return Err(ValueError(format!(
            "{text:?}: port 0 is no receiver's port (1 to 65535)"
        )));
    }
    Ok(a)
}

/// A listening address: a bare port means 0.0.0.0 (every interface), as
/// the tools' default `-l` does.
///
/// # Errors
/// As [`parse_host_port`].
pub fn parse_listen(text: &str) -> Result<SocketAddr, ValueError> {
    parse_addr(text, IpAddr::V4(Ipv4Addr::UNSPECIFIED))
}

/// `text` as a socket address, a bare port meaning `default_host`.
///
/// # Errors
/// As [`parse_host_port`].
pub fn parse_addr(text: &str, default_host: IpAddr) -> Result<SocketAddr, ValueError> {
    let t = text.trim();
    if t.is_empty() {
        return Err(ValueError(format!("empty address: {FORMS}")));
    }
    if t.bytes().all(|b| b.is_ascii_digit()) {
        return port(t, text).map(|p| SocketAddr::new(default_host, p));
    }
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Ok(a);
    }
    if t.starts_with('[') {
        return Err(ValueError(format!("{text:?} is not an address: {FORMS}")));
    }
    if t.matches(':').count() > 1 {
        return Err(ValueError(unbracketed_v6(t, text)));
    }
    let Some((host, p)) = t.rsplit_once(':') else {
        return Err(ValueError(match t.parse::<IpAddr>() {
            Ok(_) => format!("{text:?} has no port: write {t}:PORT ({FORMS})"),
            Err(_) => format!("{text:?} has no port: {FORMS}"),
        }));
    };
    let p = port(p, text)?;
    if host.is_empty() {
        return Err(ValueError(format!("{text:?} has no host: {FORMS}")));
    }
    let addrs: Vec<SocketAddr> = (host, p)
        .to_socket_addrs()
        .map_err(|e| ValueError(format!("cannot resolve {host:?} in {text:?}: {e}")))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| ValueError(format!("{host:?} resolves to no address")))
}

fn port(p: &str, text: &str) -> Result<u16, ValueError> {
    p.parse().map_err(|_| {
        ValueError(format!(
            "{p:?} in {text:?} is not a port (0 to 65535): {FORMS}"
        ))
    })
}

/// The message for IPv6 without brackets: the bracketed spelling when a
/// port can be split off, else what is wrong.
fn unbracketed_v6(t: &str, text: &str) -> String {
    if let Some((host, p)) = t.rsplit_once(':')
        && let (Ok(ip), Ok(p)) = (host.parse::<Ipv6Addr>(), p.parse::<u16>())
    {
        let whole = t.parse::<Ipv6Addr>().is_ok();
        return format!(
            "{text:?} is ambiguous: IPv6 takes brackets around the address; write [{ip}]:{p}{}",
            if whole {
                format!(" (or [{t}]:PORT if all of it is the address)")
            } else {
                String::new()
            }
        );
    }
    match t.parse::<Ipv6Addr>() {
        Ok(_) => format!("{text:?} has no port: write [{t}]:PORT ({FORMS})"),
        Err(_) => format!("{text:?} is not an address: {FORMS}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> String {
        parse_listen(text).unwrap().to_string()
    }

    fn err(text: &str) -> String {
        parse_host_port(text).unwrap_err().0
    }

    #[test]
    fn a_destination_has_a_port() {
        assert!(parse_dest("127.0.0.1:0").unwrap_err().0.contains("port 0"));
        assert!(parse_dest("0").is_err());
        assert_eq!(parse_dest("39540").unwrap().to_string(), "127.0.0.1:39540");
        assert_eq!(
            parse_host_port("127.0.0.1:0").unwrap().port(),
            0,
            "a listener may take any port"
        );
    }

    #[test]
    fn a_bare_port_takes_the_flags_default_host() {
        assert_eq!(ok("12352"), "0.0.0.0:12352");
        assert_eq!(
            parse_host_port("39539").unwrap().to_string(),
            "127.0.0.1:39539"
        );
        assert_eq!(
            parse_addr("8765", IpAddr::V6(Ipv6Addr::LOCALHOST))
                .unwrap()
                .to_string(),
            "[::1]:8765"
        );
        assert!(err("65536").contains("not a port"), "{}", err("65536"));
    }

    #[test]
    fn literal_and_resolved_hosts() {
        assert_eq!(ok("127.0.0.1:12351"), "127.0.0.1:12351");
        assert_eq!(ok("[::1]:12351"), "[::1]:12351");
        assert_eq!(ok(" 127.0.0.2:5 "), "127.0.0.2:5");
        // localhost is in every hosts file; IPv4 is preferred.
        assert_eq!(ok("localhost:12352"), "127.0.0.1:12352");
        assert!(err("no-such-host.invalid:1").contains("cannot resolve"));
    }

    #[test]
    fn unbracketed_ipv6_is_refused_with_its_spelling() {
        let e = err("::1:12351");
        assert!(e.contains("[::1]:12351"), "{e}");
        assert!(e.contains("ambiguous"), "{e}");
        // Also a whole address by itself: both readings are named.
        let e = err("fe80::1:1234");
        assert!(
            e.contains("[fe80::1]:1234") && e.contains("[fe80::1:1234]:PORT"),
            "{e}"
        );
        assert!(err("::1").contains("[::1]:PORT"), "{}", err("::1"));
        assert!(err("[::1]").contains("[::1]:12351"), "the forms are shown");
    }

    #[test]
    fn every_refusal_shows_the_forms() {
        for bad in [
            "",
            "127.0.0.1",
            "localhost",
            ":12351",
            "host:port",
            "1:2:3",
            "[::1",
        ] {
            let e = err(bad);
            assert!(e.contains("e.g. 12351"), "{bad:?}: {e}");
        }
        assert!(err("127.0.0.1").contains("write 127.0.0.1:PORT"));
    }
}
