use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, bail};

use crate::net;
use crate::textcap::{LineError, TextDecoder};

/// How often a live source wakes up to check Ctrl-C and deadlines.
const POLL: Duration = Duration::from_millis(50);

/// Where datagrams come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// A UDP socket bound to this address.
    Listen(SocketAddr),
    /// A file: a raw one-datagram `.bin`, or hex text; `-` is stdin.
    Read(PathBuf),
}

/// One datagram, borrowed from the source until the next call.
#[derive(Clone, Copy, Debug)]
pub struct Datagram<'a> {
    /// UDP source address (live input only).
    pub src: Option<SocketAddr>,
    /// Receive time in seconds: Unix time when live; as the file records it otherwise.
    pub arrival: Option<f64>,
    /// The UDP payload.
    pub payload: &'a [u8],
}

/// What the source produced.
#[derive(Debug)]
pub enum Event<'a> {
    /// A datagram.
    Datagram(Datagram<'a>),
    /// Input that could not be turned into a datagram (a bad hex line).
    Unreadable(LineError),
    /// Nothing arrived within the poll interval (live input).
    Idle,
    /// The input is exhausted.
    End,
}

/// A stream of datagrams from a socket or a file.
pub struct Source {
    kind: Kind,
    buf: Vec<u8>,
}

enum Kind {
    Udp(UdpSocket),
    Raw(Option<Vec<u8>>),
    Text {
        reader: Box<dyn BufRead>,
        decoder: TextDecoder,
        line: String,
        done: bool,
    },
}

impl Source {
    /// Opens the input.
    ///
    /// # Errors
    /// Bind failures (with advice when the port is taken), unreadable files,
    /// and capture formats this build cannot read.
    pub fn open(input: &Input) -> anyhow::Result<Self> {
        let kind = match input {
            Input::Listen(addr) => Kind::Udp(bind(*addr)?),
            Input::Read(path) if path.as_os_str() == "-" => {
                text(Box::new(BufReader::new(io::stdin())))
            }
            Input::Read(path) => open_file(path)?,
        };
        Ok(Self {
            kind,
            buf: Vec::new(),
        })
    }

    /// Whether datagrams arrive live (a socket) rather than from a file.
    pub fn is_live(&self) -> bool {
        matches!(self.kind, Kind::Udp(_))
    }

    /// The bound address of a live source (the real port when bound to port 0).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match &self.kind {
            Kind::Udp(s) => s.local_addr().ok(),
            _ => None,
        }
    }

    /// Logs where a live source listens, and warns when the kernel granted a
    /// smaller receive buffer than asked for (bursts may then be dropped).
    pub fn announce(&self, log: &super::Log) {
        let Kind::Udp(socket) = &self.kind else {
            return;
        };
        if let Ok(addr) = socket.local_addr() {
            log.info(format_args!("listening on {addr} (UDP); Ctrl-C to stop"));
        }
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

    /// The next datagram, or why there is none.
    ///
    /// # Errors
    /// Socket and read errors.
    pub fn next_event(&mut self) -> anyhow::Result<Event<'_>> {
        match &mut self.kind {
            Kind::Udp(socket) => {
                self.buf.resize(net::MAX_DATAGRAM, 0);
                match socket.recv_from(&mut self.buf) {
                    Ok((n, src)) => Ok(Event::Datagram(Datagram {
                        src: Some(src),
                        arrival: Some(unix_now()),
                        payload: self.buf.get(..n).unwrap_or_default(),
                    })),
                    Err(e) if net::is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                        Ok(Event::Idle)
                    }
                    Err(e) => Err(e).context("failed to receive"),
                }
            }
            Kind::Raw(data) => match data.take() {
                Some(bytes) => {
                    self.buf = bytes;
                    Ok(Event::Datagram(Datagram {
                        src: None,
                        arrival: None,
                        payload: &self.buf,
                    }))
                }
                None => Ok(Event::End),
            },
            Kind::Text {
                reader,
                decoder,
                line,
                done,
            } => loop {
                if let Some(item) = decoder.pop() {
                    return Ok(match item {
                        Ok(d) => {
                            self.buf = d.payload;
                            Event::Datagram(Datagram {
                                src: None,
                                arrival: d.arrival,
                                payload: &self.buf,
                            })
                        }
                        Err(e) => Event::Unreadable(e),
                    });
                }
                if *done {
                    return Ok(Event::End);
                }
                line.clear();
                let n = reader.read_line(line).context("failed to read input")?;
                if n == 0 {
                    decoder.finish();
                    *done = true;
                } else {
                    decoder.push_line(line.trim_end_matches(['\n', '\r']));
                }
            },
        }
    }
}

fn bind(addr: SocketAddr) -> anyhow::Result<UdpSocket> {
    net::bind_udp(addr, Some(POLL)).map_err(|e| {
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

fn open_file(path: &Path) -> anyhow::Result<Kind> {
    let file = File::open(path).with_context(|| format!("failed to open {}", path.display()))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let head = reader
        .fill_buf()
        .with_context(|| format!("failed to read {}", path.display()))?;
    if is_pcap(head) || has_extension(path, &["pcap", "pcapng"]) {
        bail!(
            "{}: pcap/pcapng input is not supported yet; export the UDP payloads as hex lines, \
             e.g. `tshark -r FILE -Y udp -T fields -e data.data`, and pipe them to `-r -`",
            path.display()
        );
    }
    if has_extension(path, &["bin"]) || !looks_like_text(head) {
        let mut data = Vec::new();
        reader
            .take(net::MAX_DATAGRAM as u64 + 1)
            .read_to_end(&mut data)
            .with_context(|| format!("failed to read {}", path.display()))?;
        if data.len() > net::MAX_DATAGRAM {
            bail!(
                "{}: a raw datagram file holds one datagram of at most {} bytes",
                path.display(),
                net::MAX_DATAGRAM
            );
        }
        return Ok(Kind::Raw(Some(data)));
    }
    Ok(text(Box::new(reader)))
}

fn text(reader: Box<dyn BufRead>) -> Kind {
    Kind::Text {
        reader,
        decoder: TextDecoder::new(),
        line: String::new(),
        done: false,
    }
}

fn has_extension(path: &Path, exts: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

fn is_pcap(head: &[u8]) -> bool {
    const MAGICS: [[u8; 4]; 5] = [
        [0xd4, 0xc3, 0xb2, 0xa1],
        [0xa1, 0xb2, 0xc3, 0xd4],
        [0x4d, 0x3c, 0xb2, 0xa1],
        [0xa1, 0xb2, 0x3c, 0x4d],
        [0x0a, 0x0d, 0x0d, 0x0a],
    ];
    head.first_chunk::<4>().is_some_and(|m| MAGICS.contains(m))
}

/// Hex text is ASCII; a binary datagram has NULs and high bytes early on.
fn looks_like_text(head: &[u8]) -> bool {
    head.iter()
        .take(512)
        .all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}
