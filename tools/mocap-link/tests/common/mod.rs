//! What the mocap-link test binaries share: a loopback endpoint, a router,
//! a publisher whose session is open.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "each test binary uses part of this; test code: a panic is how a test reports"
)]

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::time::Duration;

use mocap_testutil::Proc;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_mocap-link");

/// A loopback Zenoh endpoint (`tcp`, `tls`, …) on a port free a moment ago.
pub(crate) fn endpoint(scheme: &str) -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("{scheme}/127.0.0.1:{port}")
}

/// `mocap-link router` listening on `ep`, with a Zenoh configuration file
/// if given, once it says it is up.
pub(crate) fn router(ep: &str, config: Option<&str>) -> Proc {
    let mut args = vec!["router", "-l", ep, "--no-multicast"];
    if let Some(c) = config {
        args.extend(["--zenoh-config", c]);
    }
    let mut p = Proc::spawn(BIN, &args, None);
    p.log_line("router");
    p
}

/// `mocap-link publish` on an ephemeral UDP port, its summary in JSON on
/// stdout, once its Zenoh session is open (`publishing as`); and the port.
pub(crate) fn publisher(room: &str, name: &str, extra: &[&str]) -> (Proc, SocketAddr) {
    let mut args = vec![
        "publish",
        "--room",
        room,
        "--name",
        name,
        "-l",
        "127.0.0.1:0",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let mut p = Proc::spawn(BIN, &args, None);
    let (_, addr) = p.log_line("listening on");
    p.log_line("publishing as");
    (p, addr.unwrap())
}

/// `mocap-link subscribe` sending to `to`, probing every 100 ms, records
/// in JSON on stdout, once it has subscribed.
pub(crate) fn subscriber(room: &str, to: &str, extra: &[&str]) -> Proc {
    let mut p = Proc::spawn(BIN, &subscriber_args(room, to, extra), None);
    p.log_line("subscribed to");
    p
}

/// The arguments [`subscriber`] runs `mocap-link` with.
pub(crate) fn subscriber_args<'a>(room: &'a str, to: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "subscribe",
        "--room",
        room,
        "--to",
        to,
        "--probe-interval",
        "100ms",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    args
}

/// A loopback UDP receiver whose reads give up after 100 ms (a lost datagram
/// fails a test's deadline, never hangs it), and its address as text.
pub(crate) fn receiver() -> (UdpSocket, String) {
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let to = rx.local_addr().unwrap().to_string();
    (rx, to)
}
