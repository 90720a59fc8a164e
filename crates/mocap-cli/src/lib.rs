//! What every tool shares around the protocols of [`mocap_core`], a module
//! per job: sockets ([`net`], and what sends did: [`sends`]), inputs
//! ([`source`], [`inbox`], [`accept`]), the run loop ([`runner`]), output
//! and records ([`output`], [`records`]), the shared flags ([`args`],
//! [`addr`], [`allow`]), takes ([`take`]), exit codes and Ctrl-C ([`exit`]).
//! What nearly every tool uses is also in the [`prelude`]. The protocols
//! themselves stay I/O-free in `mocap-core`; a tool's own application code
//! lives in `tools/<tool>/src/`.
#![warn(missing_docs, clippy::print_stdout, clippy::print_stderr)]

pub mod accept;
pub mod addr;
pub mod allow;
pub mod args;
pub mod dump;
pub mod exit;
pub mod generate;
pub mod inbox;
pub mod net;
pub mod other;
pub mod output;
pub mod prelude;
#[cfg(feature = "realtime")]
pub mod realtime;
pub mod records;
pub mod refusals;
pub mod runner;
pub mod senders;
pub mod sends;
pub mod source;
pub mod status;
pub mod streams;
pub mod take;
pub mod view;
