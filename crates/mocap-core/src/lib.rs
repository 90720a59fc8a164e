//! Protocol logic shared by the motion-capture tools.
//!
//! Protocol modules are pure: they take bytes and return views, values or
//! errors, and never touch sockets, clocks or the terminal. Sockets live in
//! [`net`]; everything the binaries share (input sources, output formats, exit
//! codes, Ctrl-C) lives in `cli`, behind the `cli` feature.
//!
//! - [`ifm`]: iFacialMocap / Facemotion3d face streams (UDP 49983, TCP 49986).
//! - [`smf`]: Sony mocopi's motion stream (UDP 12351).
//! - [`livelink`]: Epic's Live Link Face app (UDP 11111).
//! - [`health`]: loss, duplicates, reordering, restarts, rate and jitter of a numbered frame stream.
//! - [`pcap`]: capture files in and out, fragment reassembly, replay scheduling.
//! - [`osc`]: OSC 1.0 through rosc, guarded against deep nesting and leftovers.
//! - [`vmc`]: typed VMC messages, name tables, frame encoder.
//! - [`net`]: UDP sockets with the options every tool wants.
//! - [`bridge`]: tracker frames turned into VMC (iFacialMocap face, mocopi body).
//! - [`dlp3d`]: DLP3D's motion/face/audio stream (protobuf over WebSocket).
//! - [`quat`]: the quaternion arithmetic the bridges and DLP3D share.
//! - [`textcap`]: datagrams written as hex text (hex lines, mocopi packet captures).
#![warn(missing_docs, clippy::print_stdout, clippy::print_stderr)]

pub mod bridge;
pub mod bvh;
#[cfg(feature = "cli")]
pub mod cli;
pub mod dlp3d;
pub mod filter;
pub mod health;
pub mod ifm;
pub mod livelink;
pub mod net;
pub mod osc;
pub mod pcap;
pub mod quat;
pub mod smf;
#[cfg(any(test, feature = "testutil"))]
pub mod testutil;
pub mod textcap;
pub mod vmc;
