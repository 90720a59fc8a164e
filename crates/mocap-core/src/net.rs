//! UDP sockets with the options every tool wants. No protocol logic here.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

/// Largest UDP payload; receive buffers are this big so nothing is cut.
pub const MAX_DATAGRAM: usize = 65_535;
/// Kernel receive buffer we ask for, so bursts (Wi-Fi catching up) are not dropped.
pub const RECV_BUFFER: usize = 4 * 1024 * 1024;

/// Binds a UDP socket for receiving: `SO_REUSEADDR`, broadcast allowed, a
/// receive buffer of at least [`RECV_BUFFER`] where the kernel allows it, and
/// `poll` as read timeout so callers can check for Ctrl-C and deadlines.
///
/// A unicast port that another socket already holds is refused with
/// `AddrInUse`, even though `SO_REUSEADDR` would let Linux bind it: two
/// receivers on one unicast port silently split (or steal) the stream.
///
/// # Errors
/// The OS error from creating or binding the socket. A smaller receive buffer
/// than asked for is not an error (the kernel caps it at `rmem_max`).
pub fn bind_udp(addr: SocketAddr, poll: Option<Duration>) -> io::Result<UdpSocket> {
    if addr.port() != 0 && !addr.ip().is_multicast() {
        // A plain bind fails if any socket has the port; it is closed at once.
        drop(UdpSocket::bind(addr)?);
    }
    let socket = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    socket.set_reuse_address(true)?;
    if addr.is_ipv4() {
        socket.set_broadcast(true)?;
    }
    // Best effort: unprivileged processes cannot exceed rmem_max.
    let _ = socket.set_recv_buffer_size(RECV_BUFFER);
    socket.bind(&addr.into())?;
    let socket: UdpSocket = socket.into();
    socket.set_read_timeout(poll)?;
    Ok(socket)
}

/// The receive buffer size the kernel actually granted.
///
/// # Errors
/// The OS error from `getsockopt`.
pub fn recv_buffer_size(socket: &UdpSocket) -> io::Result<usize> {
    socket2::SockRef::from(socket).recv_buffer_size()
}

/// Whether an I/O error is a read timeout rather than a failure.
pub fn is_timeout(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_ephemeral_loopback_and_receives() {
        let rx = bind_udp("127.0.0.1:0".parse().unwrap(), Some(Duration::from_secs(2))).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.send_to(b"hello", rx.local_addr().unwrap()).unwrap();
        let mut buf = [0; MAX_DATAGRAM];
        let (n, from) = rx.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"hello");
        assert_eq!(from, tx.local_addr().unwrap());
        assert!(recv_buffer_size(&rx).unwrap() > 0);
    }

    #[test]
    fn a_taken_port_is_refused_despite_reuseaddr() {
        let first = bind_udp("127.0.0.1:0".parse().unwrap(), None).unwrap();
        let err = bind_udp(first.local_addr().unwrap(), None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    }

    #[test]
    fn read_timeout_is_recognised() {
        let rx = bind_udp(
            "127.0.0.1:0".parse().unwrap(),
            Some(Duration::from_millis(10)),
        )
        .unwrap();
        let mut buf = [0; 16];
        let err = rx.recv_from(&mut buf).unwrap_err();
        assert!(is_timeout(&err));
    }
}
