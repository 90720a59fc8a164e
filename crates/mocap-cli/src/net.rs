//! Sockets with the options every tool wants. No protocol logic here.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use socket2::{Domain, Protocol, Socket, Type};

use crate::output::Log;
use crate::sends::{Receiver, SendCounts, SendRecord, is_port_unreachable};

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

/// One destination with a socket of its own, of its address family (IPv6
/// destinations need an IPv6 socket), connected to it: a connected UDP socket
/// is told when nothing listens at the destination, which Linux and macOS
/// do by failing the next send with "connection refused". Windows tells
/// every UDP socket, on a later receive (see [`RecvFailure::PortUnreachable`]);
/// there the socket is read now and then for it. Every send is counted in
/// [`SendCounts`], the first failure logged.
#[derive(Debug)]
pub struct Link {
    socket: UdpSocket,
    connected: bool,
    counts: SendCounts,
    #[cfg(windows)]
    checked: std::time::Instant,
}

/// How often a Windows link reads its socket for "port unreachable" reports.
#[cfg(windows)]
const UNREACHABLE_CHECK: Duration = Duration::from_millis(100);

impl Link {
    /// A socket on an ephemeral port of every interface of `to`'s family,
    /// connected to `to`. A destination with no route yet (an interface
    /// still coming up) is no error here: sends to it fail and are counted.
    ///
    /// # Errors
    /// The OS error from opening the socket, with the destination named
    /// (an IPv6 destination on a host without IPv6).
    pub fn new(to: SocketAddr, receiver: Receiver) -> io::Result<Self> {
        let socket = sender_udp(to.ip()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open a socket to send to {to}: {e}"),
            )
        })?;
        let connected = socket.connect(to).is_ok();
        // Reading for reports must not wait.
        #[cfg(windows)]
        socket.set_nonblocking(true)?;
        Ok(Self {
            socket,
            connected,
            counts: SendCounts::new(to, receiver),
            #[cfg(windows)]
            checked: std::time::Instant::now(),
        })
    }

    /// Sends `datagram`, counts it, logs the first failure; `true` when
    /// the kernel took it. A failure never stops the caller: a receiver
    /// that is not up yet must not stop the stream.
    #[inline]
    pub fn send(&mut self, datagram: &[u8], log: &Log) -> bool {
        let result = if self.connected {
            self.socket.send(datagram)
        } else {
            self.socket.send_to(datagram, self.counts.record().to)
        };
        #[cfg(windows)]
        self.check_unreachable(log);
        match result {
            Ok(_) => {
                self.counts.sent(1);
                true
            }
            Err(e) => {
                self.counts.failed(&e, log);
                false
            }
        }
    }

    /// Counts the "port unreachable" reports Windows queued on the socket.
    #[cfg(windows)]
    fn check_unreachable(&mut self, log: &Log) {
        let now = std::time::Instant::now();
        if now.duration_since(self.checked) < UNREACHABLE_CHECK {
            return;
        }
        self.checked = now;
        let mut buf = [0u8; 1];
        // Bounded: one report per datagram at most, and a send is waiting.
        for _ in 0..64 {
            match self.socket.recv(&mut buf) {
                Err(e) if is_port_unreachable(&e) => self.counts.unreachable(log),
                // A reply from the destination is not ours to read.
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }

    /// The destination.
    pub fn to(&self) -> SocketAddr {
        self.counts.record().to
    }

    /// Its counts so far.
    pub fn record(&self) -> SendRecord {
        self.counts.record()
    }

    /// Whether this link has logged a failure (see [`SendCounts::told`]).
    pub fn told(&self) -> bool {
        self.counts.told()
    }

    /// Its failures are only counted from now on: several links send to
    /// one destination (one per remote sender) and one of them said it.
    pub fn hush(&mut self) {
        self.counts.hush();
    }
}

/// Every datagram to a fixed list of receivers (a bridge's `--vmc`
/// targets), one [`Link`] each, counted per destination.
#[derive(Debug)]
pub struct Fanout {
    links: Vec<Link>,
    to: Vec<SocketAddr>,
}

impl Fanout {
    /// A [`Link`] to each of `to`, where a `receiver` is expected.
    ///
    /// # Errors
    /// The OS error from opening a socket, with its destination named.
    pub fn new(to: Vec<SocketAddr>, receiver: Receiver) -> io::Result<Self> {
        Ok(Self {
            links: to
                .iter()
                .map(|a| Link::new(*a, receiver))
                .collect::<io::Result<_>>()?,
            to,
        })
    }

    /// Sends `datagram` to every receiver; failures are counted per
    /// receiver and the first of each logged.
    pub fn send(&mut self, datagram: &[u8], log: &Log) {
        for link in &mut self.links {
            link.send(datagram, log);
        }
    }

    /// The receivers.
    pub fn targets(&self) -> &[SocketAddr] {
        &self.to
    }

    /// Datagrams sent so far, all receivers together.
    pub fn sent(&self) -> u64 {
        self.links.iter().map(|l| l.record().sent).sum()
    }

    /// Each receiver's counts, for `stats` and `summary` records.
    pub fn sends(&self) -> impl Iterator<Item = SendRecord> + '_ {
        self.links.iter().map(Link::record)
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
/// `sendmmsg`), for relays that forward bytes as they are. Buffers and
/// headers are made once; a batch in or out allocates nothing.
#[cfg(target_os = "linux")]
pub mod batch {
    use std::io::{self, IoSlice, IoSliceMut};
    use std::net::{SocketAddr, UdpSocket};
    use std::os::fd::AsRawFd as _;

    use mocap_core::MAX_DATAGRAM;
    use nix::sys::socket::{MsgFlags, MultiHeaders, SockaddrStorage, recvmmsg, sendmmsg};

    /// Datagrams taken per call, at most.
    pub const SIZE: usize = 32;

    /// Slots offered to a receive after one that took a single datagram.
    const FEW: usize = 2;

    /// Buffers for one batch, allocated once.
    pub struct Batch {
        /// [`SIZE`] receive buffers of [`MAX_DATAGRAM`] bytes end to end:
        /// zeroed once here, then only written by the kernel.
        bufs: Vec<u8>,
        lens: [usize; SIZE],
        srcs: [Option<SocketAddr>; SIZE],
        count: usize,
        /// Slots the next receive offers: twice what the last one took.
        /// Every slot costs a header to set up and a slice to make, and a
        /// stream of a few thousand datagrams a second comes one at a time;
        /// a burst doubles it up to [`SIZE`] within a few calls.
        offer: usize,
        headers: MultiHeaders<SockaddrStorage>,
    }

    impl Default for Batch {
        fn default() -> Self {
            Self::new()
        }
    }

    impl Batch {
        /// Buffers for [`SIZE`] datagrams of up to [`MAX_DATAGRAM`] bytes.
        pub fn new() -> Self {
            Self {
                bufs: vec![0; SIZE * MAX_DATAGRAM],
                lens: [0; SIZE],
                srcs: [None; SIZE],
                count: 0,
                offer: SIZE,
                headers: MultiHeaders::preallocate(SIZE, None),
            }
        }

        /// The datagrams received by the last [`recv`](Self::recv), with their sources.
        #[inline]
        pub fn datagrams(&self) -> impl Iterator<Item = (&[u8], Option<SocketAddr>)> {
            self.bufs
                .chunks_exact(MAX_DATAGRAM)
                .zip(self.lens.iter().zip(&self.srcs))
                .take(self.count)
                .map(|(b, (len, src))| (b.get(..*len).unwrap_or_default(), *src))
        }

        /// How many datagrams the last [`recv`](Self::recv) took.
        #[inline]
        pub fn len(&self) -> usize {
            self.count
        }

        /// Whether the last [`recv`](Self::recv) took none.
        pub fn is_empty(&self) -> bool {
            self.count == 0
        }

        /// Waits for at least one datagram (up to the socket's read timeout),
        /// then takes as many as are queued, up to [`SIZE`] (fewer when
        /// the last call took few: see `offer`).
        ///
        /// # Errors
        /// The OS error; a timeout is `WouldBlock`.
        pub fn recv(&mut self, socket: &UdpSocket) -> io::Result<usize> {
            self.count = 0;
            let n = if self.offer <= FEW {
                self.recv_into::<FEW>(socket)?
            } else {
                self.recv_into::<SIZE>(socket)?
            };
            self.count = n;
            self.offer = (2 * n).clamp(FEW, SIZE);
            Ok(n)
        }

        /// One `recvmmsg` into the first `self.offer` buffers (at most `N`).
        fn recv_into<const N: usize>(&mut self, socket: &UdpSocket) -> io::Result<usize> {
            // The slices borrow the buffers for this call only, so they are
            // made here, on the stack.
            let mut bufs = self.bufs.chunks_exact_mut(MAX_DATAGRAM);
            let mut slices: [[IoSliceMut<'_>; 1]; N] =
                std::array::from_fn(|_| [IoSliceMut::new(bufs.next().unwrap_or_default())]);
            let results = recvmmsg(
                socket.as_raw_fd(),
                &mut self.headers,
                slices.iter_mut().take(self.offer),
                MsgFlags::MSG_WAITFORONE,
                None,
            )
            .map_err(io::Error::from)?;
            let mut n = 0;
            for (r, (len, src)) in results.zip(self.lens.iter_mut().zip(&mut self.srcs)) {
                *len = r.bytes;
                *src = r.address.and_then(|a: SockaddrStorage| {
                    a.as_sockaddr_in()
                        .map(|v4| SocketAddr::from(std::net::SocketAddrV4::from(*v4)))
                        .or_else(|| {
                            a.as_sockaddr_in6()
                                .map(|v6| SocketAddr::from(std::net::SocketAddrV6::from(*v6)))
                        })
                });
                n += 1;
            }
            Ok(n)
        }
    }

    /// Message headers for [`send_batch`], allocated once and reused. The
    /// links are connected, so the messages carry no address.
    pub struct SendHeaders {
        headers: MultiHeaders<()>,
    }

    impl Default for SendHeaders {
        fn default() -> Self {
            Self {
                headers: MultiHeaders::preallocate(SIZE, None),
            }
        }
    }

    /// Sends `datagrams` through `link` in as few calls as the kernel
    /// takes, counted as [`Link::send`](super::Link::send) counts: a failed
    /// datagram is counted and skipped, the rest still go. Returns the
    /// bytes the kernel took.
    #[inline]
    pub fn send_batch(
        link: &mut super::Link,
        datagrams: &[&[u8]],
        headers: &mut SendHeaders,
        log: &crate::output::Log,
    ) -> u64 {
        if datagrams.len() < 2 || !link.connected {
            // One datagram (a stream of a few thousand a second comes one
            // per batch), or a socket that could not connect (it needs the
            // address on each send): a plain send each.
            let mut bytes = 0;
            for d in datagrams {
                if link.send(d, log) {
                    bytes += d.len() as u64;
                }
            }
            return bytes;
        }
        let fd = link.socket.as_raw_fd();
        let none = [None::<()>; SIZE];
        let mut bytes = 0;
        for chunk in datagrams.chunks(SIZE) {
            // The slices on the stack, pointing at the caller's bytes.
            let mut slices = [[IoSlice::new(&[]); 1]; SIZE];
            for (slot, d) in slices.iter_mut().zip(chunk) {
                *slot = [IoSlice::new(d)];
            }
            let mut done = 0;
            while let Some(left) = slices.get(done..chunk.len()).filter(|c| !c.is_empty()) {
                match sendmmsg(fd, &mut headers.headers, left, none, [], MsgFlags::empty()) {
                    Ok(r) => {
                        let n = r.count();
                        if n == 0 {
                            break;
                        }
                        link.counts.sent(n as u64);
                        bytes += left.iter().take(n).map(|[d]| d.len() as u64).sum::<u64>();
                        done += n;
                    }
                    // The datagram at `done` failed: count it, go on after it.
                    Err(e) => {
                        link.counts.failed(&io::Error::from(e), log);
                        done += 1;
                    }
                }
            }
        }
        bytes
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

    /// A receiver on IPv6 loopback; a host without it fails the test
    /// rather than skip it.
    fn ipv6_receiver() -> UdpSocket {
        let rx = UdpSocket::bind("[::1]:0")
            .expect("IPv6 loopback (::1) is needed by this test and is unavailable here");
        rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        rx
    }

    /// A loopback port where nothing listens (bound, then closed).
    fn closed_port() -> SocketAddr {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap()
    }

    fn quiet() -> Log {
        Log::new("test", true, false)
    }

    #[test]
    fn a_fanout_reaches_ipv6_and_ipv4_receivers_alike() {
        let v6 = ipv6_receiver();
        let v4 = bind_udp("127.0.0.1:0".parse().unwrap(), Some(Duration::from_secs(2))).unwrap();
        let to = vec![v6.local_addr().unwrap(), v4.local_addr().unwrap()];
        let mut out = Fanout::new(to.clone(), Receiver::Vmc).unwrap();
        let log = quiet();
        for i in 0..20u8 {
            out.send(&[i; 8], &log);
        }
        let mut buf = [0; 16];
        for rx in [&v6, &v4] {
            for i in 0..20u8 {
                let n = rx.recv(&mut buf).unwrap();
                assert_eq!(&buf[..n], &[i; 8]);
            }
        }
        assert_eq!(out.sent(), 40);
        let sends: Vec<SendRecord> = out.sends().collect();
        assert_eq!(
            sends,
            to.iter()
                .map(|&to| SendRecord {
                    to,
                    sent: 20,
                    failed: 0,
                    unreachable: 0
                })
                .collect::<Vec<_>>()
        );
    }

    /// Nothing listening is reported (counted as unreachable), and the
    /// destinations that listen are not affected.
    #[test]
    fn a_fanout_counts_a_closed_port_apart() {
        let open = bind_udp("127.0.0.1:0".parse().unwrap(), Some(Duration::from_secs(2))).unwrap();
        let closed = closed_port();
        let mut out = Fanout::new(vec![closed, open.local_addr().unwrap()], Receiver::Vmc).unwrap();
        let log = quiet();
        // Spread over more than a Windows check interval.
        for i in 0..30u8 {
            out.send(&[i], &log);
            std::thread::sleep(Duration::from_millis(10));
        }
        let sends: Vec<SendRecord> = out.sends().collect();
        let (dead, live) = (sends[0], sends[1]);
        assert!(dead.unreachable > 0, "{dead:?}");
        if cfg!(not(windows)) {
            assert_eq!(dead.failed, dead.unreachable, "{dead:?}");
            assert_eq!(dead.sent + dead.failed, 30, "{dead:?}");
        }
        assert_eq!((live.sent, live.failed, live.unreachable), (30, 0, 0));
        let mut buf = [0; 4];
        for i in 0..30u8 {
            let n = open.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], &[i]);
        }
    }

    /// A receive offers twice what the last one took: a queue of 100 is
    /// read 2, 4, 8, 16, 32, 32, 6 (the first call offers every slot), in
    /// order, with each datagram's source; one datagram at a time keeps
    /// the offer at 2.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_batch_receive_grows_with_the_queue() {
        let rx = bind_udp("127.0.0.1:0".parse().unwrap(), Some(Duration::from_secs(2))).unwrap();
        let to = rx.local_addr().unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut batch = batch::Batch::new();
        tx.send_to(&[0, 0], to).unwrap();
        assert_eq!(batch.recv(&rx).unwrap(), 1);
        for i in 0..100u16 {
            tx.send_to(&i.to_be_bytes(), to).unwrap();
        }
        let mut sizes = Vec::new();
        let mut next = 0u16;
        while next < 100 {
            sizes.push(batch.recv(&rx).unwrap());
            for (d, src) in batch.datagrams() {
                assert_eq!(d, next.to_be_bytes());
                assert_eq!(src, Some(tx.local_addr().unwrap()));
                next += 1;
            }
        }
        assert_eq!(sizes, [2, 4, 8, 16, 32, 32, 6]);
        for i in 0..3u16 {
            tx.send_to(&i.to_be_bytes(), to).unwrap();
            assert_eq!(batch.recv(&rx).unwrap(), 1);
            assert_eq!(batch.datagrams().next().unwrap().0, i.to_be_bytes());
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_batch_reaches_ipv6_and_counts_a_closed_port() {
        let v6 = ipv6_receiver();
        let log = quiet();
        let mut headers = batch::SendHeaders::default();
        let datagrams: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 4]).collect();
        let slices: Vec<&[u8]> = datagrams.iter().map(Vec::as_slice).collect();
        let mut link = Link::new(v6.local_addr().unwrap(), Receiver::Vmc).unwrap();
        assert_eq!(
            batch::send_batch(&mut link, &slices, &mut headers, &log),
            160
        );
        let mut buf = [0; 8];
        for d in &datagrams {
            let n = v6.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], d.as_slice());
        }
        assert_eq!((link.record().sent, link.record().failed), (40, 0));
        // A batch of one goes as a plain send, counted the same.
        assert_eq!(
            batch::send_batch(&mut link, &slices[..1], &mut headers, &log),
            4
        );
        let n = v6.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], datagrams[0].as_slice());
        assert_eq!((link.record().sent, link.record().failed), (41, 0));
        let mut dead = Link::new(closed_port(), Receiver::Vmc).unwrap();
        for _ in 0..5 {
            batch::send_batch(&mut dead, &slices[..4], &mut headers, &log);
            std::thread::sleep(Duration::from_millis(5));
        }
        let r = dead.record();
        assert!(r.unreachable > 0 && r.failed == r.unreachable, "{r:?}");
        assert_eq!(r.sent + r.failed, 20, "{r:?}");
    }
}
