//! What every tool shares around the protocols of [`mocap_core`]: sockets
//! ([`net`]), input sources, output sinks and records, the shared flags, the
//! run loop, takes, exit codes and Ctrl-C. The protocols themselves stay
//! I/O-free in `mocap-core`; a tool's own application code lives in
//! `tools/<tool>/src/`.
#![warn(missing_docs, clippy::print_stdout, clippy::print_stderr)]

mod accept;
mod addr;
mod allow;
mod args;
pub mod dump;
mod exit;
mod generate;
mod inbox;
pub mod net;
mod other;
mod output;
#[cfg(feature = "realtime")]
mod realtime;
mod records;
pub mod refusals;
mod runner;
mod senders;
mod sends;
mod source;
mod status;
pub mod take;
mod view;

pub use accept::Accept;
pub use addr::{any_ipv4, parse_addr, parse_dest, parse_host_port, parse_listen};
pub use allow::{AllowArgs, Cidr, Guard, Refusals, RefusedSender};
pub use args::{
    BlendCaseArg, Budget, FaceArgs, Format, LogArgs, OnLostArg, PaceArgs, STATUS_INTERVAL,
    SmoothArgs, StopArgs, TrackerArgs, ValueError, WriteArgs, parse_beta, parse_cutoff,
    parse_duration, parse_duration_within, parse_height, parse_interval, parse_pps, parse_rate,
    parse_speed, parse_within, smooth_options,
};
pub use exit::{
    EXIT_INTERRUPTED_TWICE, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, UsageError, exit, exit_codes_help,
    install_ctrlc, interrupted, is_closed_pipe,
};
pub use generate::{Generate, GenerateArgs, command, generated, parse};
pub use inbox::{Drops, Inbox, Listeners, Received, UdpFeed};
pub use other::{OtherProtocolCount, OtherProtocols, tool_for};
pub use output::{
    Human, Log, Output, Record, fps_text, plural, report, round3, summary_head, summary_kind,
};
#[cfg(feature = "realtime")]
pub use realtime::{Tuned, tune_current_thread};
pub use records::{ArgRecord, ErrorRecord, VmcOut, VmcRecord, ts_us};
pub use runner::{Feed, FeedHandler, Flow, POLL, RunClock, Step, Stopped, drive};
pub use senders::{MAX_SENDERS, Pair, Senders, pair};
pub use sends::{Receiver, SendCounts, SendRecord, is_port_unreachable, write_sends};
pub use source::{
    Datagram, Event, Input, InputError, Recorder, Source, TextInput, run, unix_now, unix_time,
};
pub use status::{Activity, Interval, SILENCE, Silence};
pub use take::{
    BvhArgs, BvhOut, MAX_TAKES, TAKE_QUIET, Take, TakeFile, TakeSlot, TakeSlots, TakeSummary,
    VmcTakes, path_for,
};
pub use view::{FrameView, MAX_FRAME_TEXT, Pace, TERMINAL_FPS, ViewArgs};
