//! Zenoh's thread layout, chosen before Zenoh starts.
//!
//! Zenoh reads the layout of its runtimes once, from the `ZENOH_RUNTIME`
//! environment variable. By default it receives on two threads of their
//! own, sends from a third, and the sockets a listener accepts are driven
//! by the acceptor's thread, so a sample crosses threads two or three times
//! on its way in and once more on its way out (a router does both): 3.2
//! context switches a sample in a subscriber of eight performers. Handing
//! the receive, accept, transmit and network runtimes over to the
//! application runtime keeps a sample on one thread (one switch a sample):
//! that took a third off the subscriber's CPU and, with the transmit side
//! too, about 0.3× off the router's (docs/link.md, "Measured delay").
//!
//! Setting an environment variable in a running program is `unsafe` in Rust
//! 2024 (another thread may be reading the environment). On Unix the
//! process instead replaces itself with the same program and arguments and
//! the variable set (`exec`: same process id, same streams, before any
//! thread exists). A `ZENOH_RUNTIME` given by the user is kept as it is.
//! Windows has no `exec`: there Zenoh's default layout stays unless the user
//! sets the variable (docs/link.md).

/// Zenoh's environment variable for its runtime layout.
#[cfg(unix)]
const VAR: &str = "ZENOH_RUNTIME";

/// Receive, accept, transmit and network tasks on the application runtime
/// (one worker thread).
#[cfg(unix)]
const LAYOUT: &str =
    "(rx: (handover: app), acc: (handover: app), tx: (handover: app), net: (handover: app))";

/// Makes sure Zenoh will read a layout: returns at once when `ZENOH_RUNTIME`
/// is set; else (Unix) runs this program again with it set, in place. If
/// that cannot be done, returns, and Zenoh uses its default layout.
#[cfg(unix)]
pub(crate) fn ensure() {
    use std::os::unix::process::CommandExt as _;
    if std::env::var_os(VAR).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut again = std::process::Command::new(exe);
    if let Some(name) = args.next() {
        again.arg0(name);
    }
    // Only returns if the exec failed (the binary was replaced meanwhile,
    // say): then this process goes on as it is.
    let _failed = again.args(args).env(VAR, LAYOUT).exec();
}

/// Windows: no `exec`; Zenoh's default layout unless the user set one.
#[cfg(not(unix))]
pub(crate) fn ensure() {}
