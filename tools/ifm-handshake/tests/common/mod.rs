//! The emulated phone shared by this tool's test files: its command socket
//! on 127.0.0.2, its TCP connections, and real frames.

#![allow(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    dead_code,
    reason = "test code: a panic is how a test reports; each file uses a part"
)]

use std::net::{SocketAddr, TcpStream, UdpSocket};

use mocap_testutil::LIMIT;

pub(crate) const FRAMES: &str =
    include_str!("../../../../captures/ifacialmocap/v1_minbitt_head_sample_data.txt");

/// The emulated phone's command socket.
pub(crate) fn phone() -> (UdpSocket, String) {
    let s = UdpSocket::bind("127.0.0.2:0").unwrap();
    s.set_read_timeout(Some(LIMIT)).unwrap();
    let port = s.local_addr().unwrap().port().to_string();
    (s, port)
}

pub(crate) fn recv_command(phone: &UdpSocket) -> (String, SocketAddr) {
    let mut buf = [0u8; 2048];
    let (n, from) = phone
        .recv_from(&mut buf)
        .expect("a command within the limit");
    (String::from_utf8(buf[..n].to_vec()).unwrap(), from)
}

/// A TCP connection to `to` from the emulated phone's address (127.0.0.2):
/// with a phone given, the tool takes connections from it only.
pub(crate) fn connect_from_phone(to: SocketAddr) -> TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&SocketAddr::from(([127, 0, 0, 2], 0)).into())
        .unwrap();
    s.connect(&to.into()).unwrap();
    s.into()
}

pub(crate) fn frames(n: usize) -> Vec<&'static str> {
    FRAMES.lines().take(n).collect()
}
