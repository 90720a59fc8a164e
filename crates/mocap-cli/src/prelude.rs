//! What nearly every tool uses, for `use mocap_cli::prelude::*;`: the run
//! loop, the output and its records, the stop, log and format flags, and how
//! a tool ends. Everything else is named through its module
//! (`mocap_cli::net::Link`, `mocap_cli::source::Source`, …).

pub use crate::args::{Format, LogArgs, StopArgs};
pub use crate::exit::{UsageError, exit, exit_codes_help, install_ctrlc};
pub use crate::output::{Log, Output, Record};
pub use crate::runner::{FeedHandler, Flow, Stopped, drive};
