//! The TLS recipe of docs/link.md on loopback: a router listening on
//! `tls/…` with a certificate signed by a CA this test makes (rcgen), a
//! publisher and a subscriber that trust that CA; datagrams arrive
//! unchanged and nobody is warned about an unencrypted endpoint. A client
//! that does not trust the CA gets nothing.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mocap_testutil::{LIMIT, Proc};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

mod common;
use common::BIN;

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mocap-link-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `ca.pem`, and `server.pem` + `server-key.pem` for 127.0.0.1 and localhost.
fn certificates(dir: &Path) {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    std::fs::write(dir.join("server.pem"), server.pem()).unwrap();
    std::fs::write(dir.join("server-key.pem"), key.serialize_pem()).unwrap();
}

/// The two configuration files of the recipe, with this directory's paths.
fn configs(dir: &Path) -> (String, String) {
    let p = |f: &str| dir.join(f).to_string_lossy().replace('\\', "/");
    let router = format!(
        "{{ transport: {{ link: {{ tls: {{ listen_certificate: \"{}\", listen_private_key: \"{}\" }} }} }} }}\n",
        p("server.pem"),
        p("server-key.pem")
    );
    let client = format!(
        "{{ transport: {{ link: {{ tls: {{ root_ca_certificate: \"{}\" }} }} }} }}\n",
        p("ca.pem")
    );
    std::fs::write(dir.join("router.json5"), router).unwrap();
    std::fs::write(dir.join("client.json5"), client).unwrap();
    (p("router.json5"), p("client.json5"))
}

#[test]
#[cfg_attr(not(unix), ignore = "sends Ctrl-C as SIGINT: Unix only")]
fn the_tls_recipe_carries_datagrams_through_a_router() {
    let dir = scratch();
    certificates(&dir);
    let (router_conf, client_conf) = configs(&dir);
    let ep = common::endpoint("tls");
    let router = common::router(&ep, Some(&router_conf));
    let (rx, to) = common::receiver();
    let room = format!("tls-{}", std::process::id());
    let client = [
        "--mode",
        "client",
        "--connect",
        &ep,
        "--zenoh-config",
        &client_conf,
        "--no-multicast",
    ];
    let mut args = vec![
        "subscribe",
        "--room",
        &room,
        "--to",
        &to,
        "--probe-interval",
        "100ms",
    ];
    args.extend_from_slice(&client);
    let mut sub = Proc::spawn(BIN, &args, None);
    sub.log_line("subscribed to");
    let mut args = vec![
        "publish",
        "--room",
        &room,
        "--name",
        "alice",
        "-l",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(&client);
    let mut publ = Proc::spawn(BIN, &args, None);
    let (_, addr) = publ.log_line("listening on");
    let addr = addr.unwrap();
    sub.log_line("alice answers");
    let phone = UdpSocket::bind("127.0.0.1:0").unwrap();
    let datagrams: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 40 + usize::from(i)]).collect();
    let mut got = Vec::new();
    let mut buf = [0u8; 2048];
    for d in &datagrams {
        phone.send_to(d, addr).unwrap();
        let deadline = Instant::now() + LIMIT;
        loop {
            assert!(Instant::now() < deadline, "nothing came through TLS");
            if let Ok(n) = rx.recv(&mut buf) {
                got.push(buf[..n].to_vec());
                break;
            }
        }
    }
    assert_eq!(got, datagrams);
    // Without the CA the router's certificate is refused: no session.
    let untrusting = Proc::spawn(
        BIN,
        &[
            "subscribe",
            "--room",
            &room,
            "--format",
            "json",
            "--mode",
            "client",
            "--connect",
            &ep,
            "--no-multicast",
        ],
        None,
    )
    .finish();
    assert_eq!(untrusting.code, Some(1), "{}", untrusting.stderr);
    assert!(
        untrusting.stderr.contains("Zenoh session"),
        "{}",
        untrusting.stderr
    );
    for p in [publ, sub, router] {
        p.interrupt();
        let f = p.finish();
        assert_eq!(f.code, Some(0), "{}", f.stderr);
        assert!(!f.stderr.contains("unencrypted"), "{}", f.stderr);
    }
    let _ = std::fs::remove_dir_all(dir);
}
