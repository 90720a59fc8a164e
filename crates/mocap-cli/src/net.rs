//! Sockets with the options every tool wants. No protocol logic here.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

/// Asks for a kernel send buffer of `size` bytes on a TCP connection (the
/// kernel may cap it).
///
/// # Errors
/// The OS error.
pub fn set_send_buffer(tcp: &std::net::TcpStream, size: usize) -> io::Result<()> {
    socket2::SockRef::from(tcp).set_send_buffer_size(size)
}

/// Listens on TCP at `addr`, non-blocking (accepts are polled with
/// [`wait_acceptable`]); a port in use says so.
///
/// # Errors
/// The OS error, with the port named when another program holds it.
pub fn listen_tcp(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(addr).map_err(|e| {
        if e.kind() == io::ErrorKind::AddrInUse {
            io::Error::new(
                e.kind(),
                format!(
                    "TCP port {} is already in use by another program",
                    addr.port()
                ),
            )
        } else {
            e
        }
    })?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Waits until `listener` has a connection to accept or `wait` has passed;
/// `true` when an accept should follow.
///
/// # Errors
/// The OS error from waiting.
#[cfg(target_os = "linux")]
pub fn wait_acceptable(listener: &std::net::TcpListener, wait: Duration) -> io::Result<bool> {
    use std::os::fd::AsFd as _;
    wait_fd(listener.as_fd(), wait)
}

/// Waits until `listener` may have a connection (here: a short sleep, the
/// listener being non-blocking); `true` when an accept should follow.
///
/// # Errors
/// None here; the signature matches Linux's.
#[cfg(not(target_os = "linux"))]
pub fn wait_acceptable(_listener: &std::net::TcpListener, wait: Duration) -> io::Result<bool> {
    std::thread::sleep(wait.min(Duration::from_millis(5)));
    Ok(true)
}

#[cfg(target_os = "linux")]
fn wait_fd(fd: std::os::fd::BorrowedFd<'_>, wait: Duration) -> io::Result<bool> {
    use nix::poll::{PollFd, PollFlags, ppoll};
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    match ppoll(
        &mut fds,
        Some(nix::sys::time::TimeSpec::from_duration(wait)),
        None,
    ) {
        Ok(n) => Ok(n > 0),
        Err(nix::errno::Errno::EINTR) => Ok(false),
        Err(e) => Err(io::Error::from(e)),
    }
}

/// A UDP socket for sending only, on an ephemeral port of every interface of
/// the family of `to` (IPv4 may broadcast). Senders keep their own socket: an
/// ICMP "port unreachable" from a dead receiver must not surface as an error
/// on a listening socket.
///
/// # Errors
/// The OS error from binding.
pub fn sender_udp(to: std::net::IpAddr) -> io::Result<UdpSocket> {
    let any: std::net::IpAddr = if to.is_ipv4() {
        std::net::Ipv4Addr::UNSPECIFIED.into()
    } else {
        std::net::Ipv6Addr::UNSPECIFIED.into()
    };
    sender_udp_from(any)
}

/// A UDP socket for sending only, on an ephemeral port of `local` (commands
/// that must leave from the interface a tool listens on).
///
/// # Errors
/// The OS error from binding.
pub fn sender_udp_from(local: std::net::IpAddr) -> io::Result<UdpSocket> {
    let socket = UdpSocket::bind(SocketAddr::new(local, 0))?;
    if local.is_ipv4() {
        // Best effort: broadcast targets need it, others do not care.
        let _ = socket.set_broadcast(true);
    }
    Ok(socket)
}

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
    // On Windows SO_REUSEADDR lets a later socket take over a port another
    // one holds, so there it is kept for multicast, where sharing is the point.
    if !cfg!(windows) || addr.ip().is_multicast() {
        socket.set_reuse_address(true)?;
    }
    // `[::]` takes IPv4 too, as on Linux and macOS (Windows defaults to IPv6 only).
    if addr.is_ipv6() && addr.ip().is_unspecified() {
        let _ = socket.set_only_v6(false);
    }
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

/// One unbound-port UDP socket sending every datagram to a fixed list of
/// receivers (a bridge's `--vmc` targets), counting what the kernel took.
#[derive(Debug)]
pub struct Fanout {
    socket: UdpSocket,
    to: Vec<SocketAddr>,
    sent: u64,
}

impl Fanout {
    /// A socket on an ephemeral port of every interface.
    ///
    /// # Errors
    /// The OS error from binding it.
    pub fn new(to: Vec<SocketAddr>) -> io::Result<Self> {
        let any = SocketAddr::from(([0, 0, 0, 0], 0));
        Ok(Self {
            socket: UdpSocket::bind(any)?,
            to,
            sent: 0,
        })
    }

    /// Sends `datagram` to every receiver. A receiver that is not up yet
    /// (ICMP refused) must not stop the stream, so errors only go uncounted.
    pub fn send(&mut self, datagram: &[u8]) {
        for to in &self.to {
            if self.socket.send_to(datagram, to).is_ok() {
                self.sent += 1;
            }
        }
    }

    /// The receivers.
    pub fn targets(&self) -> &[SocketAddr] {
        &self.to
    }

    /// Datagrams sent so far (one per receiver).
    pub fn sent(&self) -> u64 {
        self.sent
    }
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

/// What a failed UDP receive means to a receiver that keeps running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvFailure {
    /// Nothing arrived in time, or a signal interrupted the wait: read again.
    Idle,
    /// An ICMP "port unreachable" answered a datagram this socket sent
    /// earlier, reported on this receive instead: count it, read again.
    /// Windows does this to every UDP socket (`WSAECONNRESET`, 10054, on the
    /// next `recvfrom`) when it sent to a port where nothing listens, e.g. a
    /// handshake to a phone whose app is not open yet; Linux and macOS do
    /// it to connected sockets only (`ECONNREFUSED`).
    PortUnreachable,
    /// The socket itself failed: the run ends with this error.
    Fatal,
}

/// Sorts a UDP receive error (see [`RecvFailure`]).
#[must_use]
pub fn recv_failure(err: &io::Error) -> RecvFailure {
    match err.kind() {
        _ if is_timeout(err) => RecvFailure::Idle,
        io::ErrorKind::Interrupted => RecvFailure::Idle,
        _ if is_port_unreachable(err) => RecvFailure::PortUnreachable,
        _ => RecvFailure::Fatal,
    }
}

/// Whether a UDP send or receive failed only because an ICMP "port
/// unreachable" came back for an earlier datagram (see
/// [`RecvFailure::PortUnreachable`]); Windows may report it on the next
/// `sendto` as well. The socket still works: the next try may succeed.
#[must_use]
pub fn is_port_unreachable(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionRefused
    )
}

/// Waits until `socket` has a datagram to read or `wait` has passed; `true`
/// when a read should follow. On Linux this waits with the timer's precision:
/// a socket read timeout is rounded up to the kernel tick (up to 4 ms), which
/// would make a 60 Hz mixer late by that much.
///
/// # Errors
/// The OS error from waiting.
#[cfg(target_os = "linux")]
pub fn wait_readable(socket: &UdpSocket, wait: Duration) -> io::Result<bool> {
    use std::os::fd::AsFd as _;
    wait_fd(socket.as_fd(), wait)
}

/// Waits until `socket` has a datagram to read or `wait` has passed; `true`
/// when a read should follow (here: always, bounded by a read timeout).
///
/// # Errors
/// The OS error from setting the read timeout.
#[cfg(not(target_os = "linux"))]
pub fn wait_readable(socket: &UdpSocket, wait: Duration) -> io::Result<bool> {
    // A zero timeout means "block forever" to the OS.
    socket.set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
    Ok(true)
}

/// Receiving and sending many datagrams per system call (`recvmmsg`,
/// `sendmmsg`), for relays that forward bytes as they are.
#[cfg(target_os = "linux")]
pub mod batch {
    use std::io::{self, IoSlice, IoSliceMut};
    use std::net::{SocketAddr, UdpSocket};
    use std::os::fd::AsRawFd as _;

    use nix::sys::socket::{MsgFlags, MultiHeaders, SockaddrStorage, recvmmsg, sendmmsg};

    /// Datagrams taken per call.
    pub const SIZE: usize = 32;

    /// Buffers for one batch, allocated once.
    pub struct Batch {
        bufs: Vec<Vec<u8>>,
        lens: [usize; SIZE],
        srcs: [Option<SocketAddr>; SIZE],
        count: usize,
        headers: MultiHeaders<SockaddrStorage>,
    }

    impl Default for Batch {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Batch {
        /// Buffers for [`SIZE`] datagrams of up to [`super::MAX_DATAGRAM`] bytes.
        pub fn new() -> Self {
            Self {
                bufs: (0..SIZE)
                    .map(|_| vec![0; mocap_core::MAX_DATAGRAM])
                    .collect(),
                lens: [0; SIZE],
                srcs: [None; SIZE],
                count: 0,
                headers: MultiHeaders::preallocate(SIZE, None),
            }
        }

        /// The datagrams received by the last [`recv`](Self::recv), with their sources.
        pub fn datagrams(&self) -> impl Iterator<Item = (&[u8], Option<SocketAddr>)> {
            self.bufs
                .iter()
                .zip(self.lens.iter().zip(&self.srcs))
                .take(self.count)
                .map(|(b, (len, src))| (b.get(..*len).unwrap_or_default(), *src))
        }

        /// Waits for at least one datagram (up to the socket's read timeout),
        /// then takes as many as are queued, up to [`SIZE`].
        ///
        /// # Errors
        /// The OS error; a timeout is `WouldBlock`.
        pub fn recv(&mut self, socket: &UdpSocket) -> io::Result<usize> {
            let mut slices: Vec<[IoSliceMut<'_>; 1]> =
                self.bufs.iter_mut().map(|b| [IoSliceMut::new(b)]).collect();
            let results = recvmmsg(
                socket.as_raw_fd(),
                &mut self.headers,
                slices.iter_mut(),
                MsgFlags::MSG_WAITFORONE,
                None,
            )
            .map_err(io::Error::from)?;
            let mut n = 0;
            for (i, r) in results.enumerate() {
                if let (Some(len), Some(src)) = (self.lens.get_mut(i), self.srcs.get_mut(i)) {
                    *len = r.bytes;
                    *src = r.address.and_then(|a: SockaddrStorage| {
                        a.as_sockaddr_in()
                            .map(|v4| SocketAddr::from(std::net::SocketAddrV4::from(*v4)))
                            .or_else(|| {
                                a.as_sockaddr_in6()
                                    .map(|v6| SocketAddr::from(std::net::SocketAddrV6::from(*v6)))
                            })
                    });
                    n = i + 1;
                }
            }
            self.count = n;
            Ok(n)
        }
    }

    /// Message headers for [`send_all`], allocated once and reused.
    pub struct SendHeaders(MultiHeaders<SockaddrStorage>);

    impl Default for SendHeaders {
        fn default() -> Self {
            Self(MultiHeaders::preallocate(SIZE, None))
        }
    }

    /// Sends every datagram to every destination in as few calls as the
    /// kernel takes; returns how many sends failed (a dead receiver must
    /// not stop the others).
    ///
    /// # Errors
    /// None are returned: failures are counted.
    pub fn send_all(
        socket: &UdpSocket,
        datagrams: &[&[u8]],
        destinations: &[SocketAddr],
        headers: &mut SendHeaders,
    ) -> u64 {
        let headers = &mut headers.0;
        let mut slices: Vec<[IoSlice<'_>; 1]> = Vec::with_capacity(SIZE);
        let mut addrs: Vec<Option<SockaddrStorage>> = Vec::with_capacity(SIZE);
        let mut failed = 0u64;
        let pairs: Vec<(&[u8], SockaddrStorage)> = datagrams
            .iter()
            .flat_map(|d| {
                destinations
                    .iter()
                    .map(move |a| (*d, SockaddrStorage::from(*a)))
            })
            .collect();
        for chunk in pairs.chunks(SIZE) {
            slices.clear();
            addrs.clear();
            for (d, a) in chunk {
                slices.push([IoSlice::new(d)]);
                addrs.push(Some(*a));
            }
            let mut sent = 0;
            while sent < chunk.len() {
                let (Some(s), Some(a)) = (slices.get(sent..), addrs.get(sent..)) else {
                    break;
                };
                match sendmmsg(socket.as_raw_fd(), headers, s, a, [], MsgFlags::empty()) {
                    Ok(r) => {
                        let n = r.count();
                        if n == 0 {
                            break;
                        }
                        sent += n;
                    }
                    // The datagram at `sent` failed; count it and go on after it.
                    Err(_) => {
                        failed += 1;
                        sent += 1;
                    }
                }
            }
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_ephemeral_loopback_and_receives() {
        let rx = bind_udp("127.0.0.1:0".parse().unwrap(), Some(Duration::from_secs(2))).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.send_to(b"hello", rx.local_addr().unwrap()).unwrap();
        let mut buf = [0; mocap_core::MAX_DATAGRAM];
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
        assert_eq!(recv_failure(&err), RecvFailure::Idle);
    }

    #[test]
    fn receive_errors_are_sorted_as_a_receiver_must_treat_them() {
        use io::ErrorKind as K;
        for (kind, want) in [
            (K::WouldBlock, RecvFailure::Idle),
            (K::TimedOut, RecvFailure::Idle),
            (K::Interrupted, RecvFailure::Idle),
            (K::ConnectionReset, RecvFailure::PortUnreachable),
            (K::ConnectionRefused, RecvFailure::PortUnreachable),
            (K::PermissionDenied, RecvFailure::Fatal),
            (K::InvalidInput, RecvFailure::Fatal),
            (K::NotConnected, RecvFailure::Fatal),
        ] {
            assert_eq!(recv_failure(&io::Error::from(kind)), want, "{kind:?}");
        }
        // Windows' own code for it, as the standard library reports it there.
        #[cfg(windows)]
        assert_eq!(
            recv_failure(&io::Error::from_raw_os_error(10054)),
            RecvFailure::PortUnreachable
        );
    }

    /// The same error for real: a connected socket that sent to a closed
    /// port is told so on its next receive (Linux reports it on connected
    /// sockets; Windows on every socket), and keeps receiving after it.
    #[test]
    fn a_port_unreachable_report_is_not_the_end_of_the_socket() {
        let closed = UdpSocket::bind("127.0.0.1:0").unwrap();
        let closed_addr = closed.local_addr().unwrap();
        drop(closed);
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.connect(closed_addr).unwrap();
        s.send(b"hello?").unwrap();
        let mut buf = [0; 16];
        let err = s.recv(&mut buf).unwrap_err();
        assert_eq!(recv_failure(&err), RecvFailure::PortUnreachable, "{err:?}");
        // Still a working socket: a datagram from the (re-opened) peer arrives.
        let peer = UdpSocket::bind(closed_addr).unwrap();
        peer.send_to(b"here", s.local_addr().unwrap()).unwrap();
        let n = s.recv(&mut buf).unwrap();
        assert_eq!(buf.get(..n), Some(&b"here"[..]));
    }
}
