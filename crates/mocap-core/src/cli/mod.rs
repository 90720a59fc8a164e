//! Glue shared by every tool: input sources, output sinks, the shared flags,
//! the run loop, exit codes and Ctrl-C. Per-tool pieces (record shapes, human
//! lines) sit next to it, one file per tool.

mod args;
pub mod average;
mod exit;
mod generate;
pub mod ifm;
pub mod mocopi;
mod output;
pub mod relay;
pub mod replay;
mod runner;
mod source;
pub mod stream;
mod take;
mod timing;

pub use args::{
    Format, LogArgs, PaceArgs, RecordArgs, STATUS_INTERVAL, SmoothArgs, StopArgs, parse_duration,
    parse_host_port, parse_non_negative, parse_positive, smooth_options,
};
pub use exit::{EXIT_CODES_HELP, UsageError, exit, install_ctrlc, interrupted};
pub use generate::{Generate, GenerateArgs, generated};
pub use output::{Log, Output};
pub use runner::{Handler, Pacer, Stopped, run};
pub use source::{Datagram, Event, Input, InputError, Source, TextInput};
pub use take::{BvhArgs, BvhOut};
