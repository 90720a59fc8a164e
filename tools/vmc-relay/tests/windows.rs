//! The Windows build of `vmc-relay` under Wine: python-osc sends, the relay
//! forwards to two Linux receivers on 127.0.0.1, and every datagram arrives
//! byte for byte as python-osc built it. `scripts/test-windows.sh` builds the
//! `.exe` files and runs these.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::process::Command;
use std::time::{Duration, Instant};

use mocap_testutil::wine;

const BIN: &str = env!("CARGO_BIN_EXE_vmc-relay");

#[test]
#[ignore = "needs wine: scripts/test-all.sh"]
fn version_help_and_usage_errors_are_the_linux_builds() {
    for args in [
        &["--version"][..],
        &["--help"],
        &["-h"],
        &["--generate", "complete-powershell"],
    ] {
        wine::same_as(BIN, "vmc-relay", args);
    }
    let usage = wine::same_as(BIN, "vmc-relay", &["--to", "nowhere"]);
    assert_eq!(usage.status.code(), Some(2));
}

/// Datagrams until `n` arrived; a lost one fails the test after a bounded wait.
fn collect(rx: &UdpSocket, n: usize) -> Vec<Vec<u8>> {
    rx.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut out = Vec::new();
    let mut buf = vec![0u8; 65_535];
    let start = Instant::now();
    while out.len() < n && start.elapsed() < mocap_testutil::LIMIT {
        if let Ok((len, _)) = rx.recv_from(&mut buf) {
            out.push(buf[..len].to_vec());
        }
    }
    out
}

#[test]
#[ignore = "needs wine and python-osc: scripts/test-all.sh"]
fn forwards_python_osc_traffic_unchanged() {
    let (a, b) = (
        UdpSocket::bind("127.0.0.1:0").unwrap(),
        UdpSocket::bind("127.0.0.1:0").unwrap(),
    );
    let to = |s: &UdpSocket| s.local_addr().unwrap().to_string();
    let mut relay = wine::spawn(
        "vmc-relay",
        &[
            "-l",
            "127.0.0.1:0",
            "--to",
            &to(&a),
            "--to",
            &to(&b),
            "-n",
            "3",
            "--format",
            "json",
        ],
        None,
    );
    let (_, at) = relay.log_line("listening on");
    let at = at.unwrap();
    // The raw path's batches are Linux's: here the portable loop says so.
    relay.log_line("Linux-only");
    // python-osc builds and sends a bundle and two messages, and prints the
    // bytes of each as hex, so the test knows exactly what left.
    let client = format!(
        "from pythonosc import udp_client, osc_bundle_builder as bb, osc_message_builder as mb\n\
         c = udp_client.SimpleUDPClient('127.0.0.1', {})\n\
         b = bb.OscBundleBuilder(bb.IMMEDIATELY)\n\
         m = mb.OscMessageBuilder(address='/VMC/Ext/Bone/Pos')\n\
         m.add_arg('Head')\n\
         for v in (0.5, 1.25, -0.25, 0.0, 0.0, 0.6, 0.8): m.add_arg(v, 'f')\n\
         b.add_content(m.build())\n\
         m = mb.OscMessageBuilder(address='/VMC/Ext/Blend/Val')\n\
         m.add_arg('Joy')\n\
         m.add_arg(0.75, 'f')\n\
         b.add_content(m.build())\n\
         sent = [b.build().dgram]\n\
         m = mb.OscMessageBuilder(address='/VMC/Ext/Blend/Apply')\n\
         sent.append(m.build().dgram)\n\
         m = mb.OscMessageBuilder(address='/VMC/Ext/T')\n\
         m.add_arg(3.5, 'f')\n\
         sent.append(m.build().dgram)\n\
         for d in sent:\n\
         \x20   c._sock.sendto(d, ('127.0.0.1', {}))\n\
         \x20   print(d.hex())\n",
        at.port(),
        at.port()
    );
    let py = mocap_testutil::output({
        let mut c = Command::new("python3");
        c.args(["-c", &client]);
        c
    });
    assert!(
        py.status.success(),
        "python-osc: {}",
        String::from_utf8_lossy(&py.stderr)
    );
    let sent: Vec<Vec<u8>> = String::from_utf8(py.stdout)
        .unwrap()
        .lines()
        .map(|l| hex::decode(l).unwrap())
        .collect();
    assert_eq!(sent.len(), 3);
    assert!(sent[0].starts_with(b"#bundle\0"));
    for rx in [&a, &b] {
        assert_eq!(collect(rx, 3), sent, "at {}", to(rx));
    }
    let done = relay.finish();
    assert_eq!(done.code, Some(0), "{}", done.stderr);
    let summary = done.json().pop().unwrap();
    assert_eq!(
        (summary["type"].as_str(), summary["stopped"].as_str()),
        (Some("summary"), Some("count"))
    );
}
