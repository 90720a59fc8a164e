//! `motion-stream dump`: a DLP3D client that prints (and records) the streams.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::{Bytes, Message};

use crate::TOOL;
use crate::framing::{read_delimited, write_delimited};
use crate::records::{DumpSummary, EventBody, EventRecord, MotionFrame, error, wide_rows};
use crate::ws::close;
use crate::ws::{self};
use mocap_cli::net;
use mocap_cli::output::{report, round3};
use mocap_cli::prelude::*;
use mocap_cli::runner::{Feed, Step};
use mocap_core::dlp3d::{self, Decoder, Event, Request, Stream};

/// Everything `motion-stream dump` was asked to do.
#[derive(Clone, Debug)]
pub(crate) struct DumpOptions {
    /// `ws://…` or `wss://…`; `None` with `read`.
    pub(crate) url: Option<String>,
    /// `-r`: recorded messages (length-delimited) instead of a connection.
    pub(crate) read: Option<PathBuf>,
    /// `-w`: record every message received, length-delimited.
    pub(crate) write: Option<PathBuf>,
    /// CA certificate(s) to trust for wss.
    pub(crate) ca: Option<PathBuf>,
    /// The start request to send.
    pub(crate) request: Request,
    /// Print matrices and weights too.
    pub(crate) frames: bool,
    /// Output format.
    pub(crate) format: Format,
    /// `--count` (messages), `--duration`.
    pub(crate) stop: StopArgs,
    /// `--quiet`.
    pub(crate) log: LogArgs,
}

/// Every stream the server started has ended.
const STREAMS_ENDED: Stopped = Stopped::Tool("streams ended");
/// The server closed the connection.
const CLOSED_BY_SERVER: Stopped = Stopped::Tool("closed by server");
/// The server sent a message the client refused.
const BAD_MESSAGE: Stopped = Stopped::Tool("bad message");

#[derive(Default)]
struct DumpStats {
    messages: u64,
    errors: u64,
    motion_frames: u64,
    face_frames: u64,
    audio_seconds: f64,
    bodies: BTreeMap<&'static str, u64>,
}

/// Connects (or reads a recording), decodes every message and prints it.
///
/// # Errors
/// Connection, file and output errors.
pub(crate) fn dump(opts: &DumpOptions) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Log::new(TOOL, opts.log.quiet, opts.url.is_some());
    let mut out = Output::stdout(opts.url.is_some());
    let mut writer = match &opts.write {
        Some(p) => Some(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => None,
    };
    let d = Dumper {
        opts,
        decoder: Decoder::new(),
        stats: DumpStats::default(),
        joints: 0,
        names: 0,
    };
    let started = Instant::now();
    let (stopped, d, damaged) = if let Some(path) = &opts.read {
        // Linux opens a directory and fails only at the first read, which
        // would read as a damaged recording.
        if path.is_dir() {
            bail!(
                "{} is a directory; dump -r reads one recording written by dump -w",
                path.display()
            );
        }
        let mut feed = Messages::Recording {
            reader: BufReader::new(
                File::open(path).with_context(|| format!("cannot open {}", path.display()))?,
            ),
            path: path.clone(),
        };
        // A recording is read whole: all Ends seen, what follows is still printed.
        let mut client = Client {
            d,
            out: &mut out,
            log: &log,
            writer: None,
            until_ended: false,
            damaged: None,
        };
        let stopped = drive(&mut feed, opts.stop.duration, None, &mut client)?;
        (stopped, client.d, client.damaged)
    } else {
        let url = opts.url.as_deref().context("a URL or -r FILE")?;
        let mut socket = ws::connect(url, opts.ca.as_deref(), Duration::from_secs(10))
            .map_err(anyhow::Error::msg)?;
        socket
            .send(Message::Binary(Bytes::from(dlp3d::encode_request(
                &opts.request,
            ))))
            .context("sending the start request")?;
        log.info(format_args!("connected to {url}, start request sent"));
        let _ = socket
            .get_ref()
            .set_read_timeout(Some(Duration::from_millis(100)));
        let mut feed = Messages::Socket(socket);
        let mut client = Client {
            d,
            out: &mut out,
            log: &log,
            writer: writer.as_mut(),
            until_ended: true,
            damaged: None,
        };
        let stopped = drive(&mut feed, opts.stop.duration, None, &mut client);
        if let Messages::Socket(socket) = &mut feed {
            close(socket, CloseCode::Normal, "done");
        }
        (stopped?, client.d, None)
    };
    if let Some(w) = &mut writer {
        w.flush()?;
    }
    let s = &d.stats;
    let rec = DumpSummary {
        kind: "summary",
        tool: TOOL,
        messages: s.messages,
        errors: s.errors,
        motion_frames: s.motion_frames,
        face_frames: s.face_frames,
        audio_s: round3(s.audio_seconds),
        bodies: &s.bodies,
        complete: d.decoder.finished(),
        elapsed_s: round3(started.elapsed().as_secs_f64()),
        stopped,
    };
    report(&mut out, &log, opts.format == Format::Json, &rec, true)?;
    if let Some(why) = damaged {
        bail!("the recording cannot be read to its end: {why}");
    }
    if s.errors > 0 && stopped == BAD_MESSAGE {
        match &opts.read {
            Some(p) => bail!(
                "the recording {} holds a message we refused (see the error record)",
                p.display()
            ),
            None => bail!("the stream carried a message we refused (see the error record)"),
        }
    }
    Ok(())
}

/// What a stream client gets: a message, or why there are no more.
enum Incoming {
    /// A binary message (protobuf).
    Message(Bytes),
    /// A text message of this many bytes (DLP3D never sends one).
    Text(usize),
    /// The server's close frame, if it sent one.
    Closed(Option<(u16, String)>),
    /// A recording that cannot be read on.
    Damaged(String),
}

/// Where the messages come from.
enum Messages {
    /// A recording, length-delimited.
    Recording {
        reader: BufReader<File>,
        path: PathBuf,
    },
    /// A live connection (its read timeout bounds the wait).
    Socket(tungstenite::WebSocket<ws::Conn>),
}

impl Feed for Messages {
    type Item<'a> = Incoming;

    fn next(&mut self, _wait: Duration) -> anyhow::Result<Step<Incoming>> {
        match self {
            Self::Recording { reader, path } => Ok(next_recorded(reader, path)),
            Self::Socket(socket) => next_received(socket),
        }
    }
}

fn next_recorded(reader: &mut BufReader<File>, path: &std::path::Path) -> Step<Incoming> {
    match read_delimited(reader) {
        Ok(Some(m)) => Step::Item(Incoming::Message(Bytes::from(m))),
        Ok(None) => Step::End(Stopped::EndOfInput),
        Err(e) => Step::Item(Incoming::Damaged(format!("{}: {e}", path.display()))),
    }
}

fn next_received(socket: &mut tungstenite::WebSocket<ws::Conn>) -> anyhow::Result<Step<Incoming>> {
    Ok(match socket.read() {
        Ok(Message::Binary(b)) => Step::Item(Incoming::Message(b)),
        Ok(Message::Close(frame)) => Step::Item(Incoming::Closed(
            frame.map(|f| (u16::from(f.code), f.reason.to_string())),
        )),
        Ok(Message::Text(t)) => Step::Item(Incoming::Text(t.len())),
        Ok(_) => Step::Idle,
        Err(tungstenite::Error::Io(e)) if net::is_timeout(&e) => Step::Idle,
        Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
            Step::End(CLOSED_BY_SERVER)
        }
        Err(e) => return Err(e).context("reading the stream"),
    })
}

/// The dump on the run loop.
struct Client<'a, 'o> {
    d: Dumper<'o>,
    out: &'a mut Output,
    log: &'a Log,
    /// `-w`: every message received, as received.
    writer: Option<&'a mut BufWriter<File>>,
    /// Stop once every stream has ended (a connection; a recording is read whole).
    until_ended: bool,
    /// Why a recording could not be read on, for the last line.
    damaged: Option<String>,
}

impl FeedHandler<Messages> for Client<'_, '_> {
    fn item(&mut self, item: Incoming) -> anyhow::Result<Flow> {
        let format = self.d.opts.format;
        let why = match item {
            Incoming::Message(b) => {
                if let Some(w) = &mut self.writer {
                    write_delimited(w, &b)?;
                }
                if !self.d.message(&b, self.out)? {
                    BAD_MESSAGE
                } else if self.until_ended && self.d.decoder.finished() {
                    STREAMS_ENDED
                } else {
                    return Ok(Flow::Continue);
                }
            }
            Incoming::Closed(frame) => {
                if let Some((code, reason)) = frame {
                    self.log
                        .info(format_args!("server closed: {code} {reason}"));
                }
                CLOSED_BY_SERVER
            }
            Incoming::Text(len) => {
                self.d.stats.errors += 1;
                error(
                    self.out,
                    format,
                    &format!("a text message ({len} bytes); DLP3D sends binary protobuf only"),
                )?;
                BAD_MESSAGE
            }
            Incoming::Damaged(why) => {
                self.d.stats.errors += 1;
                error(self.out, format, &why)?;
                self.damaged = Some(why);
                BAD_MESSAGE
            }
        };
        Ok(Flow::Stop(why))
    }

    fn tick(&mut self) -> anyhow::Result<Option<Stopped>> {
        let n = self.d.stats.messages;
        Ok(self
            .d
            .opts
            .stop
            .count
            .is_some_and(|c| n >= c)
            .then_some(Stopped::Count))
    }
}

struct Dumper<'o> {
    opts: &'o DumpOptions,
    decoder: Decoder,
    stats: DumpStats,
    joints: usize,
    names: usize,
}

impl Dumper<'_> {
    /// Prints one message; `false` when it was refused (the dump stops).
    fn message(&mut self, bytes: &[u8], out: &mut Output) -> anyhow::Result<bool> {
        self.stats.messages += 1;
        let event = match self.decoder.decode(bytes) {
            Ok(e) => e,
            Err(e) => {
                self.stats.errors += 1;
                error(
                    out,
                    self.opts.format,
                    &format!("message {}: {e}", self.stats.messages),
                )?;
                return Ok(false);
            }
        };
        let kind = event.kind();
        *self.stats.bodies.entry(kind).or_default() += 1;
        let body = match &event {
            Event::RequestId(id) => EventBody::RequestId { request_id: id },
            Event::Normal | Event::Leave | Event::End(_) => EventBody::Empty {},
            Event::Failed(m) => EventBody::Failed { message: m },
            Event::MotionStart {
                joints,
                restpose,
                dtype,
                timeline,
            } => {
                self.joints = joints.len();
                EventBody::MotionStart {
                    joints,
                    restpose,
                    dtype: dtype.name(),
                    timeline_start: *timeline,
                }
            }
            Event::FaceStart {
                names,
                dtype,
                timeline,
            } => {
                self.names = names.len();
                EventBody::FaceStart {
                    blendshapes: names,
                    dtype: dtype.name(),
                    timeline_start: *timeline,
                }
            }
            Event::AudioStart {
                rate,
                channels,
                width,
            } => EventBody::AudioStart {
                rate: *rate,
                channels: *channels,
                width: *width,
            },
            Event::Body {
                stream: Stream::Motion,
                frames,
                scalars,
            } => {
                self.stats.motion_frames += *frames as u64;
                let per = dlp3d::motion_frame_len(self.joints);
                let j = self.joints;
                EventBody::Motion {
                    frames: *frames,
                    bytes: bytes.len(),
                    root: wide_rows(
                        scalars
                            .chunks(per.max(1))
                            .filter_map(|f| f.get(9 * j..9 * j + 3)),
                    ),
                    frame_data: self.opts.frames.then(|| {
                        scalars
                            .chunks(per.max(1))
                            .map(|f| MotionFrame {
                                rotations: wide_rows(f.get(..9 * j).unwrap_or_default().chunks(9)),
                                meta: f
                                    .get(9 * j + 3..)
                                    .unwrap_or_default()
                                    .iter()
                                    .map(|v| f64::from(*v))
                                    .collect(),
                            })
                            .collect()
                    }),
                }
            }
            Event::Body {
                frames, scalars, ..
            } => {
                self.stats.face_frames += *frames as u64;
                EventBody::Face {
                    frames: *frames,
                    bytes: bytes.len(),
                    weights: self
                        .opts
                        .frames
                        .then(|| wide_rows(scalars.chunks(self.names.max(1)))),
                }
            }
            Event::AudioBody { bytes, seconds } => {
                self.stats.audio_seconds += seconds;
                EventBody::Audio {
                    bytes: *bytes,
                    duration_s: (*seconds * 1e6).round() / 1e6,
                }
            }
        };
        match self.opts.format {
            Format::Json => out.json(&EventRecord { kind, body })?,
            Format::Human => {
                let detail = match &event {
                    Event::Body { frames, .. } => format!("{frames} frames"),
                    Event::AudioBody { seconds, .. } => format!("{:.3} s", seconds),
                    Event::MotionStart { joints, dtype, .. } => {
                        format!("{} joints, {dtype}", joints.len())
                    }
                    Event::FaceStart { names, dtype, .. } => {
                        format!("{} blendshapes, {dtype}", names.len())
                    }
                    Event::AudioStart {
                        rate,
                        channels,
                        width,
                    } => format!("{rate} Hz, {channels} ch, {width} B"),
                    Event::RequestId(id) => id.clone(),
                    Event::Failed(m) => m.clone(),
                    _ => String::new(),
                };
                out.text(format_args!(
                    "{:<20} {detail}\n",
                    kind.trim_start_matches("dlp3d.")
                ))?;
            }
        }
        Ok(true)
    }
}
