//! The status-line rule every listening tool follows once its stream goes
//! quiet: `stats` lines say `no datagrams for N s` (not the rate since the
//! start), and the socket's silence is explained once.

use std::net::SocketAddr;

/// The lines of `stderr` that contain `what`.
#[must_use]
pub fn told<'a>(stderr: &'a str, what: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.contains(what)).collect()
}

/// Checks that a run whose sender stopped early said so in at least
/// `quiet` stats lines without a rate since the start, and explained the
/// silence on `at` exactly once (its port's firewall, the app's address);
/// returns that explanation.
pub fn assert_went_quiet(stderr: &str, at: SocketAddr, quiet: usize) -> &str {
    let lines = told(stderr, "stats: no datagrams for ");
    assert!(lines.len() >= quiet, "{stderr}");
    assert!(lines.iter().all(|l| !l.contains(" fps")), "{lines:?}");
    let hint = told(stderr, &format!("no datagrams on {at} for 5 s"));
    assert_eq!(hint.len(), 1, "{stderr}");
    assert!(hint[0].contains("the sender stopped"), "{}", hint[0]);
    assert!(hint[0].contains(&format!("firewall blocks UDP port {}", at.port())));
    assert!(hint[0].contains("another IPv4 address of this machine"));
    hint[0]
}
