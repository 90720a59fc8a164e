//! Interop with a Zenoh client no one here wrote: the Python bindings
//! (`eclipse-zenoh` on PyPI). A Python subscriber of `mocap/**` receives
//! the exact datagram bytes under our keys, with the sender as attachment;
//! a Python publisher's samples come out of `mocap-link subscribe`
//! unchanged.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use mocap_testutil::{LIMIT, Proc};

mod common;
use common::BIN;

/// A Python session connected to ENDPOINT. `sub KEY N`: prints `ready`, then
/// one line per sample (key, payload hex, attachment). `pub KEY HEX…`:
/// prints `ready`, waits for a line on stdin, publishes each payload.
const SCRIPT: &str = r#"
import json, sys, time
import zenoh
endpoint, role, key = sys.argv[1], sys.argv[2], sys.argv[3]
conf = zenoh.Config()
conf.insert_json5("mode", '"peer"')
conf.insert_json5("connect/endpoints", json.dumps([endpoint]))
conf.insert_json5("scouting/multicast/enabled", "false")
session = zenoh.open(conf)
if role == "sub":
    sub = session.declare_subscriber(key)
    print("ready", flush=True)
    for _ in range(int(sys.argv[4])):
        s = sub.recv()
        att = s.attachment.to_string() if s.attachment is not None else ""
        print(str(s.key_expr), s.payload.to_bytes().hex(), att, flush=True)
else:
    pub = session.declare_publisher(key)
    print("ready", flush=True)
    sys.stdin.readline()
    for h in sys.argv[4:]:
        pub.put(bytes.fromhex(h))
        time.sleep(0.01)
    time.sleep(0.5)
session.close()
"#;

fn endpoint() -> String {
    common::endpoint("tcp")
}

/// The interop script, given on the command line (no file left behind).
fn python(args: &[&str]) -> Proc {
    let mut all = vec!["-c", SCRIPT];
    all.extend_from_slice(args);
    Proc::spawn("python3", &all, None)
}

fn datagrams() -> Vec<Vec<u8>> {
    (0..10u8)
        .map(|i| (0..=i).map(|b| b.wrapping_mul(37)).collect())
        .collect()
}

#[test]
#[ignore = "needs eclipse-zenoh: scripts/test-all.sh"]
fn a_python_subscriber_receives_the_exact_datagrams() {
    let ep = endpoint();
    let room = format!("py-{}", std::process::id());
    let mut publ = Proc::spawn(
        BIN,
        &[
            "publish",
            "--room",
            &room,
            "--name",
            "alice",
            "-l",
            "127.0.0.1:0",
            "-l",
            &ep,
            "--no-multicast",
        ],
        None,
    );
    let (_, addr) = publ.log_line("listening on");
    let addr = addr.unwrap();
    let want = datagrams();
    let n = want.len().to_string();
    let mut py = python(&[&ep, "sub", "mocap/**", &n]);
    py.stdout_line("ready");
    // The Python subscription reaches the publisher shortly after it connects.
    std::thread::sleep(Duration::from_millis(500));
    let phone = UdpSocket::bind("127.0.0.1:0").unwrap();
    for d in &want {
        phone.send_to(d, addr).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    let from = phone.local_addr().unwrap().to_string();
    for d in &want {
        let line = py.stdout_line("mocap/");
        let mut parts = line.split(' ');
        assert_eq!(
            parts.next(),
            Some(format!("mocap/{room}/alice/unknown").as_str()),
            "{line}"
        );
        assert_eq!(parts.next(), Some(hex(d).as_str()), "{line}");
        assert_eq!(parts.next(), Some(from.as_str()), "{line}");
    }
    assert_eq!(py.finish().code, Some(0));
    publ.interrupt();
    assert_eq!(publ.finish().code, Some(0));
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
#[ignore = "needs eclipse-zenoh: scripts/test-all.sh"]
fn a_python_publisher_comes_out_of_subscribe_unchanged() {
    let ep = endpoint();
    let room = format!("pyp-{}", std::process::id());
    let (rx, to) = common::receiver();
    let mut sub = Proc::spawn(
        BIN,
        &[
            "subscribe",
            "--room",
            &room,
            "--to",
            &to,
            "-l",
            &ep,
            "--no-multicast",
        ],
        None,
    );
    sub.log_line("subscribed to");
    let want = datagrams();
    let hexes: Vec<String> = want.iter().map(|d| hex(d)).collect();
    let key = format!("mocap/{room}/bob/vmc");
    let mut args = vec![ep.as_str(), "pub", key.as_str()];
    args.extend(hexes.iter().map(String::as_str));
    let (mut py, mut stdin) = {
        let mut all = vec!["-c", SCRIPT];
        all.extend_from_slice(&args);
        Proc::spawn_with_stdin("python3", &all)
    };
    py.stdout_line("ready");
    std::thread::sleep(Duration::from_millis(500));
    use std::io::Write as _;
    stdin.write_all(b"go\n").unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + LIMIT;
    while got.len() < want.len() {
        assert!(Instant::now() < deadline, "got {got:?}");
        if let Ok(n) = rx.recv(&mut buf) {
            got.push(buf[..n].to_vec());
        }
    }
    assert_eq!(got, want);
    assert_eq!(py.finish().code, Some(0));
    sub.interrupt();
    let f = sub.finish();
    assert_eq!(f.code, Some(0), "{}", f.stderr);
    assert!(f.stderr.contains("bob/vmc: 10 datagrams"), "{}", f.stderr);
}
