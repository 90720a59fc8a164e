//! Input of the datagram tools: a socket, a capture file, hex or text lines,
//! stdin; `-w` recording; a capture paced at its recorded timing; [`run`],
//! the run loop over such a [`Source`].

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};

use crate::allow::Guard;
use crate::args::{Budget, StopArgs};
use crate::inbox::Inbox;
use crate::net;
use crate::runner::{Feed, FeedHandler, Flow, Step, Stopped, drive};
use mocap_core::filekind::{self, FileKind};
use mocap_core::pcap::{
    CaptureError, CaptureStats, Datagrams, Pace, PcapNgWriter, ReadErrorKind, Schedule,
};
use mocap_core::textcap::TextDecoder;

/// Where datagrams come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A UDP socket bound to this address.
    Listen(SocketAddr),
    /// A file: pcap/pcapng, a raw one-datagram `.bin`, or hex text; `-` is stdin.
    Read(PathBuf),
}

/// How text input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextInput {
    /// Hex lines (or a `.mocopipackets` capture): binary protocols.
    Hex,
    /// Each line is one datagram's text: text protocols (iFacialMocap).
    Literal,
}

/// One datagram, borrowed from the source until the next call.
#[derive(Clone, Copy, Debug)]
pub struct Datagram<'a> {
    /// UDP source address (live input and captures).
    pub src: Option<SocketAddr>,
    /// UDP destination address (the bound address when live; captures).
    pub dst: Option<SocketAddr>,
    /// Receive time in seconds: Unix time when live or from a capture; as the file records it otherwise.
    pub arrival: Option<f64>,
    /// The same time exactly, to the capture's own resolution (an f64 of
    /// Unix seconds keeps only about 0.24 µs): what records print as `ts_us`
    /// and `-w` writes.
    pub ts: Option<Duration>,
    /// The UDP payload.
    pub payload: &'a [u8],
}

/// Input that could not be turned into a datagram; reading goes on (or ends, for a damaged capture).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// Line of a text input.
    pub line: Option<usize>,
    /// Character column in that line.
    pub column: Option<usize>,
    /// Byte offset in a capture file.
    pub file_offset: Option<u64>,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.reason)
    }
}

/// What the source produced.
#[derive(Debug)]
pub enum Event<'a> {
    /// A datagram.
    Datagram(Datagram<'a>),
    /// Input that could not be turned into a datagram.
    Unreadable(InputError),
}

/// A stream of datagrams from a socket or a file, optionally recorded to pcapng.
pub struct Source {
    kind: Kind,
    buf: Vec<u8>,
    /// Bytes of `buf` that hold the current datagram (a socket's buffer stays
    /// full size, so receiving never clears or reallocates it).
    len: usize,
    recorder: Option<Recorder>,
    /// Where a `-w` failure is said, and what it was: the recording stops,
    /// the run goes on, and [`Source::finish`] returns it.
    recording_log: Option<crate::output::Log>,
    recording_failed: Option<String>,
    /// Why a capture file could not be read to its end, when it was damaged
    /// (or ended before its first record): [`Source::finish`] returns it.
    damaged: Option<String>,
    /// Records read from a capture file.
    records: u64,
    pacing: Option<Pacing>,
    /// A paced datagram read but not yet due (it stays in `buf`).
    held: Option<(Got, Instant)>,
    /// Receives that only reported an ICMP "port unreachable" for something
    /// sent from this socket (Windows), skipped.
    port_unreachable: u64,
    /// Who may send (`--allow`); open unless [`Source::guard_with`] set it.
    guard: Guard,
    /// [`Source::pace_recorded`] was asked before a stream's kind was known.
    pace_when_open: bool,
}

/// Longest capture gap played as recorded when pacing file input; longer idle
/// gaps are cut to this (a capture paused for minutes need not be waited out).
pub(crate) const MAX_PACED_GAP: Duration = Duration::from_secs(1);

/// Recorded timing for file input that a tool sends on: the replay's own
/// [`Schedule`], so every tool paces one way.
struct Pacing {
    schedule: Schedule,
    start: Option<Instant>,
}

impl Pacing {
    /// When the datagram captured at `arrival` is due (`None`: at once).
    fn due(&mut self, arrival: f64) -> Option<Instant> {
        let ts = Duration::try_from_secs_f64(arrival).unwrap_or_default();
        let deadline = self.schedule.deadline(ts);
        let start = *self.start.get_or_insert_with(Instant::now);
        start.checked_add(deadline)
    }
}

/// A pcapng file that received datagrams are written to, before any
/// decoding: `-w` of every tool (through [`Source::record_to`]) and of tools
/// that read sockets of their own.
pub struct Recorder {
    path: PathBuf,
    writer: PcapNgWriter<BufWriter<File>>,
    skipped: u64,
    /// Destination port for datagrams without addresses.
    port: u16,
}

enum Kind {
    Udp {
        socket: UdpSocket,
        /// The bound address, read once (the destination of every datagram).
        local: Option<SocketAddr>,
    },
    /// Several listening sockets, each read on a thread of its own.
    Many {
        inbox: Inbox,
        /// Each socket's bound address and a second handle on it, by index.
        sockets: Vec<(SocketAddr, UdpSocket)>,
    },
    Raw(Option<Vec<u8>>),
    Text {
        lines: Lines,
        decoder: TextDecoder,
        done: bool,
    },
    Capture(Box<Datagrams<Box<dyn Read + Send>>>),
    /// Stdin or a FIFO being opened and sniffed on a thread: both block
    /// until a writer comes (or writes), and a blocked main thread would
    /// miss Ctrl-C.
    Opening(Receiver<anyhow::Result<Self>>),
}

impl Source {
    /// Opens the input.
    ///
    /// # Errors
    /// Bind failures (with advice when the port is taken), unreadable files.
    pub fn open(input: &Input) -> anyhow::Result<Self> {
        Self::open_as(input, TextInput::Hex)
    }

    /// Opens the input, reading text files as `text` says.
    ///
    /// # Errors
    /// Bind failures (with advice when the port is taken), unreadable files.
    pub fn open_as(input: &Input, text: TextInput) -> anyhow::Result<Self> {
        let kind = match input {
            Input::Listen(addr) => {
                let socket = bind_listen(*addr)?;
                let local = socket.local_addr().ok();
                Kind::Udp { socket, local }
            }
            Input::Read(path) if path.as_os_str() == "-" => opening(move || open_stdin(text)),
            Input::Read(path) if is_fifo(path) => {
                let path = path.clone();
                opening(move || open_file(&path, text, true))
            }
            Input::Read(path) => open_file(path, text, false)?,
        };
        Ok(Self::with_kind(kind))
    }

    fn with_kind(kind: Kind) -> Self {
        let buf = if matches!(kind, Kind::Udp { .. }) {
            vec![0; mocap_core::MAX_DATAGRAM]
        } else {
            Vec::new()
        };
        Self {
            kind,
            buf,
            len: 0,
            recorder: None,
            recording_log: None,
            recording_failed: None,
            damaged: None,
            records: 0,
            pacing: None,
            held: None,
            port_unreachable: 0,
            guard: Guard::default(),
            pace_when_open: false,
        }
    }

    /// Listens on `sockets` (bound with [`bind_listen`]) as one input: one
    /// is read as [`Input::Listen`] reads it, several each on a thread of
    /// its own; a datagram's `dst` is the socket it came to.
    #[must_use]
    pub fn listening(mut sockets: Vec<UdpSocket>) -> Self {
        let kind = if sockets.len() == 1
            && let Some(socket) = sockets.pop()
        {
            let local = socket.local_addr().ok();
            Kind::Udp { socket, local }
        } else {
            let handles = sockets
                .iter()
                .filter_map(|s| Some((s.local_addr().ok()?, s.try_clone().ok()?)))
                .collect();
            Kind::Many {
                inbox: Inbox::new(sockets),
                sockets: handles,
            }
        };
        Self::with_kind(kind)
    }

    /// Records every datagram, before any decoding, to a new pcapng file.
    /// Datagrams whose addresses the input does not give (a raw `.bin`, hex
    /// or text lines) are written from 0.0.0.0:0 to 0.0.0.0:`port`, the
    /// protocol's own port, so Wireshark dissects the recording (it hands a
    /// datagram between two port-0 ends to no dissector).
    ///
    /// A write that fails later (a full disk) stops the recording with one
    /// line on `log` (even under `--quiet`); the run goes on, and
    /// [`Source::finish`] returns the failure so the tool exits 1 after its
    /// summary.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn record_to(
        &mut self,
        path: &Path,
        port: u16,
        log: crate::output::Log,
    ) -> anyhow::Result<()> {
        self.recorder = Some(Recorder::create(path, port)?);
        self.recording_log = Some(log);
        Ok(())
    }

    /// A `-w` write failed: the recording ends here, said once; what follows
    /// is still read, decoded and forwarded.
    fn stop_recording(&mut self, e: &anyhow::Error) {
        if self.recorder.take().is_none() {
            return;
        }
        let what = format!("{e:#}");
        if let Some(log) = &self.recording_log {
            log.always(format_args!(
                "error: {what}: RECORDING STOPPED, the rest of the run is not recorded \
                 (the run goes on; exit status 1 at the end)"
            ));
        }
        self.recording_failed = Some(what);
    }

    /// Delivers file input at its recorded timing (idle gaps over 1 s cut
    /// to 1 s), for tools that send what they read to a
    /// socket; a no-op for live input. Input without timestamps (a raw
    /// `.bin`, hex lines) comes at once.
    pub fn pace_recorded(&mut self) {
        if matches!(self.kind, Kind::Opening(_)) {
            self.pace_when_open = true;
        } else if !self.is_live() {
            self.pacing = Some(Pacing {
                schedule: Schedule::new(Pace::Recorded {
                    speed: 1.0,
                    max_gap: Some(MAX_PACED_GAP),
                }),
                start: None,
            });
        }
    }

    /// Whether datagrams arrive live (a socket, or text on stdin or a FIFO)
    /// rather than from a file; live output is flushed per record. Stdin and
    /// FIFOs count as live while they are being opened.
    pub fn is_live(&self) -> bool {
        matches!(
            self.kind,
            Kind::Udp { .. }
                | Kind::Many { .. }
                | Kind::Opening(_)
                | Kind::Text {
                    lines: Lines::Thread(_),
                    ..
                }
        )
    }

    /// The bound address of a live source (the real port when bound to
    /// port 0); `None` for several sockets ([`Source::sockets`]).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match &self.kind {
            Kind::Udp { local, .. } => *local,
            _ => None,
        }
    }

    /// A second handle on a live source's socket, for sending from the port
    /// it listens on (handshakes that the peer answers to that port).
    pub fn socket(&self) -> Option<UdpSocket> {
        match &self.kind {
            Kind::Udp { socket, .. } => socket.try_clone().ok(),
            _ => None,
        }
    }

    /// Every listening socket's bound address and a second handle on it,
    /// for sending from the port a peer answers to; empty for file input.
    pub fn sockets(&self) -> Vec<(SocketAddr, UdpSocket)> {
        match &self.kind {
            Kind::Udp {
                socket,
                local: Some(local),
            } => socket
                .try_clone()
                .map(|s| vec![(*local, s)])
                .unwrap_or_default(),
            Kind::Many { sockets, .. } => sockets
                .iter()
                .filter_map(|(a, s)| Some((*a, s.try_clone().ok()?)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// What reading a capture file met (non-UDP, fragments, …), for capture input.
    pub fn capture_stats(&self) -> Option<CaptureStats> {
        match &self.kind {
            Kind::Capture(d) => Some(d.stats()),
            _ => None,
        }
    }

    /// Logs where a live source listens, and warns when the kernel granted a
    /// smaller receive buffer than asked for (bursts may then be dropped).
    pub fn announce(&self, log: &crate::output::Log) {
        if let Kind::Udp {
            local: Some(addr), ..
        } = &self.kind
        {
            log.info(format_args!("listening on {addr} (UDP); Ctrl-C to stop"));
        }
        if let Kind::Many { sockets, .. } = &self.kind {
            let at: Vec<String> = sockets.iter().map(|(a, _)| a.to_string()).collect();
            log.info(format_args!(
                "listening on {} (UDP); Ctrl-C to stop",
                at.join(" ")
            ));
        }
        if let Some(r) = &self.recorder {
            log.info(format_args!("recording to {}", r.path.display()));
        }
        let Kind::Udp { socket, .. } = &self.kind else {
            return;
        };
        if let Ok(granted) = net::recv_buffer_size(socket)
            && granted < net::RECV_BUFFER
        {
            log.info(format_args!(
                "receive buffer is {} KiB, below the {} KiB asked for (kernel limit \
                 net.core.rmem_max); raise it with `sysctl -w net.core.rmem_max={}` if bursts are lost",
                granted / 1024,
                net::RECV_BUFFER / 1024,
                2 * net::RECV_BUFFER
            ));
        }
    }

    /// Refuses datagrams from senders `guard` does not admit, from now on
    /// (live and from captures, which keep their senders).
    pub fn guard_with(&mut self, guard: Guard) {
        self.guard = guard;
    }

    /// The sender check and what it refused.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// Flushes the recording, if any, and reports datagrams it could not hold.
    /// Call it before the summary, and return its error after: a recording
    /// that failed (now or earlier) is a failed run, but the summary of
    /// what was received still comes.
    ///
    /// # Errors
    /// The recording failed.
    pub fn finish(&mut self, log: &crate::output::Log) -> anyhow::Result<()> {
        if self.port_unreachable > 0 {
            log.info(format_args!(
                "{} receives reported only an ICMP port unreachable for a datagram sent earlier; skipped",
                self.port_unreachable
            ));
        }
        if let Some(r) = &mut self.recorder
            && let Err(e) = r.finish(log)
        {
            self.stop_recording(&e);
        }
        if let Some(what) = &self.recording_failed {
            bail!("the -w recording stopped early: {what}");
        }
        self.damage()
    }

    /// Whether the capture file read was damaged (or ended before its first
    /// record), so the run is to end in error once its summary is out.
    ///
    /// # Errors
    /// The damage, in words.
    pub fn damage(&self) -> anyhow::Result<()> {
        match &self.damaged {
            Some(what) => bail!("the capture could not be read to its end: {what}"),
            None => Ok(()),
        }
    }

    /// The next datagram, or why there is none: [`Step::Idle`] when a live
    /// socket was quiet for its poll interval or paced file input has nothing
    /// due within `wait` (the same datagram comes next time),
    /// [`Step::End`] at the end of the input.
    ///
    /// # Errors
    /// Socket and read errors, recording errors, and capture files of a link
    /// type that cannot be read.
    fn next_event(&mut self, wait: Duration) -> anyhow::Result<Step<Event<'_>>> {
        if let Some((got, due)) = self.held.take() {
            return self.deliver_at(got, due, wait);
        }
        let event = match &mut self.kind {
            Kind::Opening(rx) => match rx.recv_timeout(wait.min(crate::runner::POLL)) {
                Ok(opened) => {
                    self.kind = opened?;
                    if std::mem::take(&mut self.pace_when_open) {
                        self.pace_recorded();
                    }
                    return self.next_event(wait);
                }
                Err(RecvTimeoutError::Timeout) => Got::Idle,
                Err(RecvTimeoutError::Disconnected) => bail!("the input's opening thread ended"),
            },
            Kind::Udp { socket, local } => match socket.recv_from(&mut self.buf) {
                Ok((n, src)) => {
                    self.len = n;
                    let now = unix_time();
                    Got::Datagram {
                        src: Some(src),
                        dst: *local,
                        arrival: Some(now.as_secs_f64()),
                        ts: Some(now),
                    }
                }
                Err(e) => match net::recv_failure(&e) {
                    net::RecvFailure::Idle => {
                        self.flush_recording();
                        Got::Idle
                    }
                    net::RecvFailure::PortUnreachable => {
                        self.port_unreachable += 1;
                        Got::Idle
                    }
                    net::RecvFailure::Fatal => return Err(e).context("failed to receive"),
                },
            },
            Kind::Many { inbox, sockets } => match inbox.next(wait)? {
                Step::Item(r) => {
                    self.buf.clear();
                    self.buf.extend_from_slice(r.bytes);
                    self.len = self.buf.len();
                    let at = unix_time().saturating_sub(r.at.elapsed());
                    Got::Datagram {
                        src: Some(r.from),
                        dst: sockets.get(r.socket).map(|(a, _)| *a),
                        arrival: Some(at.as_secs_f64()),
                        ts: Some(at),
                    }
                }
                Step::Idle => {
                    self.flush_recording();
                    Got::Idle
                }
                Step::End(_) => bail!("every listening socket failed"),
            },
            Kind::Raw(data) => match data.take() {
                Some(bytes) => {
                    self.buf = bytes;
                    self.len = self.buf.len();
                    Got::Datagram {
                        src: None,
                        dst: None,
                        arrival: None,
                        ts: None,
                    }
                }
                None => Got::End,
            },
            Kind::Text {
                lines,
                decoder,
                done,
            } => loop {
                if let Some(item) = decoder.pop() {
                    break match item {
                        Ok(d) => {
                            self.buf = d.payload;
                            self.len = self.buf.len();
                            Got::Datagram {
                                src: None,
                                dst: None,
                                arrival: d.arrival,
                                ts: d.arrival.and_then(|a| Duration::try_from_secs_f64(a).ok()),
                            }
                        }
                        Err(e) => Got::Unreadable(InputError {
                            line: Some(e.line),
                            column: e.column,
                            file_offset: None,
                            reason: e.to_string(),
                        }),
                    };
                }
                if *done {
                    break Got::End;
                }
                match lines.next()? {
                    Some(Line::Text(bytes)) => decoder.push_line(&String::from_utf8_lossy(&bytes)),
                    Some(Line::TooLong(len)) => decoder.skip_line(len),
                    Some(Line::Waiting) => break Got::Idle,
                    None => {
                        decoder.finish();
                        *done = true;
                    }
                }
            },
            Kind::Capture(d) => match d.next_datagram() {
                None => Got::End,
                Some(Ok(c)) => {
                    self.records += 1;
                    self.buf.clear();
                    self.buf.extend_from_slice(c.payload);
                    self.len = self.buf.len();
                    Got::Datagram {
                        src: Some(c.src),
                        dst: Some(c.dst),
                        arrival: Some(c.ts.as_secs_f64()),
                        ts: Some(c.ts),
                    }
                }
                // A damaged capture: what came before was delivered; report and
                // end, and the run ends in error (a capture cut short while
                // it was written, after its first record, is only reported).
                Some(Err(CaptureError::Read(e))) => {
                    let cut = matches!(e.kind, ReadErrorKind::Truncated { .. }) && self.records > 0;
                    if !cut {
                        self.damaged = Some(with_causes(&e));
                    }
                    Got::Unreadable(InputError {
                        line: None,
                        column: None,
                        file_offset: Some(e.offset),
                        reason: with_causes(&e),
                    })
                }
                Some(Err(e)) => return Err(e.into()),
            },
        };
        if let (
            Got::Datagram {
                arrival: Some(at), ..
            },
            Some(p),
        ) = (&event, &mut self.pacing)
            && let Some(due) = p.due(*at)
        {
            return self.deliver_at(event, due, wait);
        }
        self.deliver(event)
    }

    /// A quiet socket: what `-w` holds is written out, so a recording read
    /// while the run goes on is whole up to now.
    fn flush_recording(&mut self) {
        if let Some(r) = &mut self.recorder
            && let Err(e) = r.writer.flush()
        {
            let e = anyhow::Error::new(e).context(format!("failed to write {}", r.path.display()));
            self.stop_recording(&e);
        }
    }

    /// Delivers `got` at `due`, or holds it and idles if `due` is more than
    /// `wait` away.
    fn deliver_at(
        &mut self,
        got: Got,
        due: Instant,
        wait: Duration,
    ) -> anyhow::Result<Step<Event<'_>>> {
        let now = Instant::now();
        if due > now {
            if due - now > wait {
                thread::sleep(wait);
                self.held = Some((got, due));
                return Ok(Step::Idle);
            }
            thread::sleep(due - now);
        }
        self.deliver(got)
    }

    fn deliver(&mut self, got: Got) -> anyhow::Result<Step<Event<'_>>> {
        Ok(match got {
            Got::Datagram {
                src,
                dst,
                arrival,
                ts,
            } => {
                // Refused before anything else sees it, the recording included.
                let admitted = self.guard.admit(src);
                if let Some(r) = &mut self.recorder
                    && (admitted || self.guard.records_refused())
                    && let Err(e) =
                        r.record(src, dst, ts, self.buf.get(..self.len).unwrap_or_default())
                {
                    self.stop_recording(&e);
                }
                let payload = self.buf.get(..self.len).unwrap_or_default();
                if !admitted {
                    return Ok(Step::Idle);
                }
                Step::Item(Event::Datagram(Datagram {
                    src,
                    dst,
                    arrival,
                    ts,
                    payload,
                }))
            }
            Got::Unreadable(e) => Step::Item(Event::Unreadable(e)),
            Got::Idle => Step::Idle,
            Got::End => Step::End(Stopped::EndOfInput),
        })
    }
}

impl Feed for Source {
    type Item<'a> = Event<'a>;

    fn next(&mut self, wait: Duration) -> anyhow::Result<Step<Event<'_>>> {
        self.next_event(wait)
    }
}

/// An error and its causes on one line, as `{:#}` writes an anyhow chain.
fn with_causes(e: &dyn std::error::Error) -> String {
    std::iter::successors(Some(e), |e| e.source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

enum Got {
    Datagram {
        src: Option<SocketAddr>,
        dst: Option<SocketAddr>,
        arrival: Option<f64>,
        ts: Option<Duration>,
    },
    Unreadable(InputError),
    Idle,
    End,
}

impl Recorder {
    /// A new pcapng file at `path`. Datagrams without addresses are written
    /// from 0.0.0.0:0 to 0.0.0.0:`port` (see [`Source::record_to`]).
    ///
    /// # Errors
    /// The file cannot be created or written.
    pub fn create(path: &Path, port: u16) -> anyhow::Result<Self> {
        let file =
            File::create(path).with_context(|| format!("failed to create {}", path.display()))?;
        let writer = PcapNgWriter::new(BufWriter::new(file))
            .with_context(|| format!("failed to write {}", path.display()))?;
        Ok(Self {
            path: path.to_owned(),
            writer,
            skipped: 0,
            port,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the file and reports datagrams it could not hold.
    ///
    /// # Errors
    /// Write errors.
    pub fn finish(&mut self, log: &crate::output::Log) -> anyhow::Result<()> {
        self.writer
            .flush()
            .with_context(|| format!("failed to write {}", self.path.display()))?;
        if self.skipped > 0 {
            log.info(format_args!(
                "{} datagrams too large for one IP packet were not recorded",
                self.skipped
            ));
        }
        Ok(())
    }

    /// Writes one datagram (at `ts` since the Unix epoch, now if `None`);
    /// one too large for an IP packet is counted and skipped.
    ///
    /// # Errors
    /// Write errors.
    pub fn record(
        &mut self,
        src: Option<SocketAddr>,
        dst: Option<SocketAddr>,
        ts: Option<Duration>,
        payload: &[u8],
    ) -> anyhow::Result<()> {
        let unspecified = SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0));
        let ts = ts.unwrap_or_else(unix_time);
        let to_port = SocketAddr::from((Ipv4Addr::UNSPECIFIED, self.port));
        match self.writer.write(
            ts,
            src.unwrap_or(unspecified),
            dst.unwrap_or(to_port),
            payload,
        ) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                self.skipped += 1;
                Ok(())
            }
            Err(e) => Err(e).with_context(|| format!("failed to write {}", self.path.display())),
        }
    }
}

/// A UDP socket bound to `addr` to listen on, as [`Input::Listen`] binds
/// it (for [`Source::listening`]), with advice when that fails (the port
/// taken, an address not of this machine).
///
/// # Errors
/// The bind failed.
pub fn bind_listen(addr: SocketAddr) -> anyhow::Result<UdpSocket> {
    net::bind_udp(addr, Some(crate::runner::POLL)).map_err(|e| {
        let hint = match e.kind() {
            io::ErrorKind::AddrInUse => format!(
                "UDP port {} is already in use by another program; close it or listen elsewhere with -l ADDR",
                addr.port()
            ),
            io::ErrorKind::AddrNotAvailable => {
                format!("{} is not an address of this machine; try -l 0.0.0.0:{}", addr.ip(), addr.port())
            }
            io::ErrorKind::PermissionDenied => {
                format!("not allowed to bind {addr}; ports below 1024 need privileges")
            }
            _ => format!("failed to bind UDP {addr}"),
        };
        anyhow::Error::new(e).context(hint)
    })
}

/// Opens a stream input on a thread: [`Kind::Opening`] until it is ready.
fn opening(open: impl FnOnce() -> anyhow::Result<Kind> + Send + 'static) -> Kind {
    let (tx, rx) = sync_channel(1);
    thread::spawn(move || {
        // The receiver is gone only when the run ended first.
        let _ = tx.send(open());
    });
    Kind::Opening(rx)
}

/// A named pipe: opening it waits for a writer.
#[cfg(unix)]
fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

/// Windows' named pipes are not opened by path here.
#[cfg(not(unix))]
fn is_fifo(_: &Path) -> bool {
    false
}

fn open_file(path: &Path, text: TextInput, stream: bool) -> anyhow::Result<Kind> {
    let file = File::open(path).with_context(|| format!("failed to open {}", path.display()))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader
        .fill_buf()
        .with_context(|| format!("failed to read {}", path.display()))?;
    let name = path.display().to_string();
    let what = sniff(
        head,
        has_extension(path, &["pcap", "pcapng", "cap"]),
        has_extension(path, &["bin"]),
        text,
        &name,
    )?;
    open_as(what, Box::new(reader), &name, stream, text)
}

/// Stdin may be a capture (`tcpdump -w - | …`), hex text, or one raw datagram.
fn open_stdin(text: TextInput) -> anyhow::Result<Kind> {
    let mut reader = BufReader::with_capacity(64 * 1024, io::stdin());
    let head = reader.fill_buf().context("failed to read stdin")?;
    let what = sniff(head, false, false, text, "stdin")?;
    open_as(what, Box::new(reader), "stdin", true, text)
}

#[derive(Clone, Copy)]
enum Sniffed {
    Capture,
    Raw,
    Text,
}

/// How to read a file, from its first bytes (the core's [`filekind`]) and
/// its extension; a file no tool reads is refused with what was expected.
fn sniff(
    head: &[u8],
    capture_ext: bool,
    bin_ext: bool,
    text: TextInput,
    name: &str,
) -> anyhow::Result<Sniffed> {
    Ok(match filekind::sniff(head) {
        FileKind::Foreign { what, advice } => bail!("{name} is {what}: {advice}"),
        FileKind::Pcap | FileKind::PcapNg => Sniffed::Capture,
        _ if capture_ext => Sniffed::Capture,
        _ if bin_ext => Sniffed::Raw,
        FileKind::MocopiPackets | FileKind::HexLines => Sniffed::Text,
        FileKind::Text { .. } if text == TextInput::Literal => Sniffed::Text,
        FileKind::Text { line } => bail!(
            "{name} is in no known format (line {line} is text, not hex); {}",
            FileKind::EXPECTED
        ),
        _ => Sniffed::Raw,
    })
}

fn open_as(
    what: Sniffed,
    mut reader: Box<dyn BufRead + Send>,
    name: &str,
    stream: bool,
    text: TextInput,
) -> anyhow::Result<Kind> {
    Ok(match what {
        Sniffed::Capture => {
            let d = Datagrams::new(Box::new(reader) as Box<dyn Read + Send>)
                .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
            Kind::Capture(Box::new(d))
        }
        Sniffed::Raw => {
            let mut data = Vec::new();
            (&mut reader)
                .take(mocap_core::MAX_DATAGRAM as u64 + 1)
                .read_to_end(&mut data)
                .with_context(|| format!("failed to read {name}"))?;
            if data.len() > mocap_core::MAX_DATAGRAM {
                bail!(
                    "{name}: a raw datagram holds at most {} bytes; is this a capture or hex text?",
                    mocap_core::MAX_DATAGRAM
                );
            }
            Kind::Raw(Some(data))
        }
        Sniffed::Text => Kind::Text {
            // The mark is no part of the first line.
            lines: {
                if reader.fill_buf().is_ok_and(|h| h.starts_with(UTF8_BOM)) {
                    reader.consume(UTF8_BOM.len());
                }
                if stream {
                    Lines::thread(reader)
                } else {
                    Lines::Direct(reader, Vec::new())
                }
            },
            decoder: match text {
                TextInput::Hex => TextDecoder::new(),
                TextInput::Literal => TextDecoder::literal(),
            },
            done: false,
        },
    })
}

/// Longest text line read whole: room for a 65,535-byte datagram written
/// with separators (`aa:bb:` is three characters a byte).
const MAX_LINE: usize = 4 * mocap_core::MAX_DATAGRAM;

enum Line {
    Text(Vec<u8>),
    /// A line longer than [`MAX_LINE`] (its length so far); the rest was skipped.
    TooLong(usize),
    /// Nothing yet from a stream (stdin); check for Ctrl-C and come back.
    Waiting,
}

/// Text lines from a file, or from stdin through a thread so that waiting
/// for input never blocks Ctrl-C or `--duration`.
enum Lines {
    Direct(Box<dyn BufRead + Send>, Vec<u8>),
    Thread(Receiver<io::Result<Option<Line>>>),
}

impl Lines {
    fn thread(mut reader: Box<dyn BufRead + Send>) -> Self {
        let (tx, rx) = sync_channel(1024);
        thread::spawn(move || {
            let mut buf = Vec::new();
            loop {
                let item = read_line_bounded(&mut reader, &mut buf);
                let end = !matches!(item, Ok(Some(_)));
                if tx.send(item).is_err() || end {
                    break;
                }
            }
        });
        Self::Thread(rx)
    }

    fn next(&mut self) -> anyhow::Result<Option<Line>> {
        match self {
            Self::Direct(r, buf) => read_line_bounded(r, buf).context("failed to read input"),
            Self::Thread(rx) => match rx.recv_timeout(crate::runner::POLL) {
                Ok(item) => item.context("failed to read stdin"),
                Err(RecvTimeoutError::Timeout) => Ok(Some(Line::Waiting)),
                Err(RecvTimeoutError::Disconnected) => Ok(None),
            },
        }
    }
}

/// Reads one line (without its end) of at most [`MAX_LINE`] bytes; longer
/// lines are skipped to their end and reported. `None` at the end of input.
fn read_line_bounded(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<Option<Line>> {
    buf.clear();
    let mut seen = 0usize;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(match (seen, seen > MAX_LINE) {
                (0, _) => None,
                (n, true) => Some(Line::TooLong(n)),
                _ => Some(Line::Text(std::mem::take(buf))),
            });
        }
        let (part, found) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (chunk.get(..i).unwrap_or_default(), Some(i + 1)),
            None => (chunk, None),
        };
        if seen + part.len() <= MAX_LINE {
            buf.extend_from_slice(part);
        }
        seen += part.len();
        let used = found.unwrap_or(chunk.len());
        r.consume(used);
        if found.is_some() {
            if seen > MAX_LINE {
                return Ok(Some(Line::TooLong(seen)));
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Some(Line::Text(std::mem::take(buf))));
        }
    }
}

fn has_extension(path: &Path, exts: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// The UTF-8 byte-order mark Windows editors (and PowerShell 7's `>`) put
/// at the start of a text file.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Seconds since the Unix epoch.
pub fn unix_now() -> f64 {
    unix_time().as_secs_f64()
}

/// Now since the Unix epoch, exactly (zero on a clock set before 1970).
pub fn unix_time() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// A datagram tool's handler on the run loop, with `--count` counted in
/// packets (datagrams and unreadable input alike) before the tool sees them.
struct Packets<'h, H: ?Sized> {
    handler: &'h mut H,
    count: Budget,
}

impl<H: FeedHandler<Source> + ?Sized> FeedHandler<Source> for Packets<'_, H> {
    fn item(&mut self, event: Event<'_>) -> anyhow::Result<Flow> {
        self.count.spend(1);
        self.handler.item(event)
    }

    fn idle(&mut self) -> anyhow::Result<()> {
        self.handler.idle()
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        if self.count.spent() {
            return Ok(Some(Stopped::Count));
        }
        self.handler.tick()
    }

    fn stats(&mut self) -> anyhow::Result<()> {
        self.handler.stats()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.handler.poll_timeout()
    }
}

/// Pulls datagrams from `source` into `handler` on the run loop ([`drive`])
/// until `--count` packets, the duration, Ctrl-C or the end of input (or
/// the handler's own `tick` says stop, e.g. `--count` frames).
///
/// # Errors
/// Source and handler errors.
pub fn run(
    source: &mut Source,
    stop: &StopArgs,
    stats_interval: Option<Duration>,
    handler: &mut impl FeedHandler<Source>,
) -> anyhow::Result<Stopped> {
    let mut packets = Packets {
        handler,
        count: stop.budget(),
    };
    drive(source, stop.duration, stats_interval, &mut packets)
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a panic is how a test reports"
    )]

    use super::*;

    const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../captures");

    /// Several listening sockets are one source: each datagram says which
    /// socket it came to, and each socket can be sent from.
    #[test]
    fn several_sockets_listen_as_one_source() {
        let any = "127.0.0.1:0".parse().unwrap();
        let (a, b) = (bind_listen(any).unwrap(), bind_listen(any).unwrap());
        let (pa, pb) = (a.local_addr().unwrap(), b.local_addr().unwrap());
        let mut source = Source::listening(vec![a, b]);
        assert!(source.is_live());
        let bound: Vec<SocketAddr> = source.sockets().iter().map(|(a, _)| *a).collect();
        assert_eq!(bound, [pa, pb]);
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.send_to(b"to a", pa).unwrap();
        tx.send_to(b"to b", pb).unwrap();
        let mut got = Vec::new();
        let until = Instant::now() + Duration::from_secs(10);
        while got.len() < 2 && Instant::now() < until {
            if let Step::Item(Event::Datagram(d)) = source.next_event(crate::runner::POLL).unwrap()
            {
                assert_eq!(d.src, tx.local_addr().ok());
                assert!(d.arrival.is_some() && d.ts.is_some());
                got.push((d.payload.to_vec(), d.dst.unwrap()));
            }
        }
        got.sort();
        assert_eq!(got, [(b"to a".to_vec(), pa), (b"to b".to_vec(), pb)]);
        // Sent from the second socket: the peer sees its port.
        let (_, b_handle) = &source.sockets()[1];
        b_handle.send_to(b"hi", tx.local_addr().unwrap()).unwrap();
        tx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0; 8];
        assert_eq!(tx.recv_from(&mut buf).unwrap().1, pb);
    }

    /// A reader that hands out at most `step` bytes per `fill_buf`, as a pipe does.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.fill_buf()?.len().min(out.len());
            out[..n].copy_from_slice(&self.data[..n]);
            self.consume(n);
            Ok(n)
        }
    }

    impl BufRead for Trickle<'_> {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            Ok(&self.data[..self.data.len().min(self.step)])
        }
        fn consume(&mut self, n: usize) {
            self.data = &self.data[n..];
        }
    }

    fn lines(data: &[u8], step: usize) -> Vec<Result<Vec<u8>, usize>> {
        let mut r = Trickle { data, step };
        let mut buf = Vec::new();
        let mut out = Vec::new();
        while let Some(line) = read_line_bounded(&mut r, &mut buf).unwrap() {
            out.push(match line {
                Line::Text(t) => Ok(t),
                Line::TooLong(n) => Err(n),
                Line::Waiting => unreachable!("a reader never waits"),
            });
        }
        out
    }

    #[test]
    fn lines_end_at_lf_or_crlf_and_the_last_needs_no_end() {
        for step in [1, 3, 4096] {
            assert_eq!(
                lines(b"ab\r\ncd\n\nef", step),
                [
                    Ok(b"ab".to_vec()),
                    Ok(b"cd".to_vec()),
                    Ok(Vec::new()),
                    Ok(b"ef".to_vec())
                ],
                "{step} bytes at a time"
            );
        }
        assert!(lines(b"", 10).is_empty());
    }

    #[test]
    fn an_over_long_line_is_skipped_to_its_end_and_reported() {
        let mut data = vec![b'a'; MAX_LINE + 10];
        data.extend_from_slice(b"\nnext\n");
        for step in [7, 64 * 1024] {
            assert_eq!(
                lines(&data, step),
                [Err(MAX_LINE + 10), Ok(b"next".to_vec())],
                "{step} bytes at a time"
            );
        }
        // One at the limit is whole; one past it without an end is reported.
        let at = vec![b'b'; MAX_LINE];
        assert_eq!(lines(&at, 1000), [Ok(at.clone())]);
        assert_eq!(lines(&vec![b'c'; MAX_LINE + 1], 1000), [Err(MAX_LINE + 1)]);
    }

    #[test]
    fn files_are_told_by_their_first_bytes_then_their_extension() {
        let kind = |head: &[u8], cap: bool, bin: bool, text: TextInput| {
            sniff(head, cap, bin, text, "f").map_err(|e| e.to_string())
        };
        let pcapng = std::fs::read(format!("{CAPTURES}/mocopi/mocopi-sizes.pcapng")).unwrap();
        let pcap = std::fs::read(format!("{CAPTURES}/mocopi/tcpdump-lo-ethernet.pcap")).unwrap();
        // The magic wins over a misleading extension.
        for head in [&pcapng[..64], &pcap[..64]] {
            assert!(matches!(
                kind(head, false, true, TextInput::Hex),
                Ok(Sniffed::Capture)
            ));
        }
        assert!(matches!(
            kind(b"0a0b0c\n0d0e\n", false, false, TextInput::Hex),
            Ok(Sniffed::Text)
        ));
        // A .pcap that is not one yet (a capture being written) is read as one.
        assert!(matches!(
            kind(b"", true, false, TextInput::Hex),
            Ok(Sniffed::Capture)
        ));
        assert!(matches!(
            kind(b"\x01\x02\x03", false, true, TextInput::Hex),
            Ok(Sniffed::Raw)
        ));
        // Prose is refused as hex, read as lines where lines are frames.
        let prose = b"hello world, this is not hex\n";
        let refused = kind(prose, false, false, TextInput::Hex).err().unwrap();
        assert!(refused.contains("no known format"), "{refused}");
        assert!(matches!(
            kind(prose, false, false, TextInput::Literal),
            Ok(Sniffed::Text)
        ));
        // A file no tool reads is named for what it is.
        let gzip = kind(b"\x1f\x8b\x08\x00\x00\x00", false, false, TextInput::Hex)
            .err()
            .unwrap();
        assert!(gzip.starts_with("f is "), "{gzip}");
    }

    #[test]
    fn extensions_are_matched_without_case() {
        assert!(has_extension(Path::new("a/b.PcapNG"), &["pcapng"]));
        assert!(has_extension(Path::new("x.cap"), &["pcap", "cap"]));
        assert!(!has_extension(Path::new("x.pcap.txt"), &["pcap"]));
        assert!(!has_extension(Path::new("pcap"), &["pcap"]));
    }

    /// Every event of a file input, read to its end.
    fn events(path: &Path) -> (Vec<Vec<u8>>, usize) {
        let mut s = Source::open(&Input::Read(path.to_owned())).unwrap();
        let (mut got, mut bad) = (Vec::new(), 0);
        loop {
            match s.next(Duration::ZERO).unwrap() {
                Step::Item(Event::Datagram(d)) => got.push(d.payload.to_vec()),
                Step::Item(Event::Unreadable(_)) => bad += 1,
                Step::Idle => {}
                Step::End(_) => return (got, bad),
            }
        }
    }

    fn scratch(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mocap-cli-source-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn hex_text_with_a_byte_order_mark_reads_every_line() {
        let p = scratch("bom.txt", b"\xEF\xBB\xBF0a0b\r\n0c 0d\nzz\n");
        let (got, bad) = events(&p);
        assert_eq!(got, [vec![0x0a, 0x0b], vec![0x0c, 0x0d]]);
        assert_eq!(bad, 1, "the line that is not hex is one unreadable item");
    }

    #[test]
    fn a_raw_datagram_file_is_one_datagram_and_no_more_than_one() {
        let p = scratch("one.bin", &[7; 100]);
        assert_eq!(events(&p), (vec![vec![7; 100]], 0));
        let big = scratch("big.bin", &vec![1; mocap_core::MAX_DATAGRAM + 1]);
        let e = Source::open(&Input::Read(big)).err().unwrap().to_string();
        assert!(e.contains("at most"), "{e}");
    }

    #[test]
    fn a_capture_gives_its_udp_payloads_in_order() {
        let (got, bad) = events(&PathBuf::from(format!(
            "{CAPTURES}/mocopi/mocopi-sizes.pcapng"
        )));
        assert_eq!(bad, 0);
        assert!(got.len() > 1);
        // Every payload is a mocopi datagram (the capture's one protocol).
        assert!(got.iter().all(|d| d.get(4..8) == Some(b"head")));
    }
}
