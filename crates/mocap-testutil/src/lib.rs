//! Helpers for this workspace's tests (a dev-dependency only): seeded
//! mutation sweeps over real datagrams, child processes with bounded waits,
//! the workspace's other tools built on demand, the bundled captures, and
//! the outside programs tests compare against. Not for production use.
//!
//! The modules are by concern; the names tests use most are re-exported
//! here, so `mocap_testutil::Proc` and `mocap_testutil::process::Proc` are
//! the same thing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "test support: a panic is how a test reports"
)]

pub mod captures;
pub mod flags;
pub mod humanoid;
pub mod process;
pub mod rng;
pub mod samples;
pub mod status;
pub mod sweep;
pub mod tshark;
pub mod wine;

pub use captures::{capture, capture_payloads};
pub use flags::{
    HOSTILE_VALUES, check_generate, check_generate_with_shell_and_man, number_flags,
    sweep_number_flags,
};
#[cfg(unix)]
pub use process::Signal;
pub use process::{Finished, LIMIT, Proc, output, tool};
pub use rng::Rng;
