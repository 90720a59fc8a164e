//! Glue shared by every tool: input sources, output sinks, the shared flags,
//! the run loop, exit codes and Ctrl-C. Per-tool pieces (record shapes, human
//! lines) sit next to it, one file per tool.

mod args;
mod exit;
pub mod mocopi;
mod output;
mod runner;
mod source;

pub use args::{Format, LogArgs, StopArgs, parse_duration};
pub use exit::{EXIT_CODES_HELP, exit, install_ctrlc, interrupted};
pub use output::{Log, Output};
pub use runner::{Handler, Stopped, run};
pub use source::{Datagram, Event, Input, Source};
