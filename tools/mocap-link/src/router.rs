//! `mocap-link router`: a Zenoh session in router mode (what zenohd runs),
//! for the tests and for sites without zenohd installed.

use std::fmt;
use std::time::{Duration, Instant};

use mocap_cli::prelude::*;
use serde::Serialize;
use zenoh::Wait as _;

use crate::session::{self, Endpoint, ZenohArgs};

#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) listen: Vec<Endpoint>,
    pub(crate) zenoh: ZenohArgs,
    pub(crate) format: Format,
    pub(crate) duration: Option<Duration>,
    pub(crate) log: LogArgs,
}

/// Runs the router until `--duration` or Ctrl-C.
///
/// # Errors
/// Zenoh could not listen.
pub(crate) fn run(o: &Options) -> anyhow::Result<()> {
    install_ctrlc()?;
    let log = Log::new(crate::TOOL, o.log.quiet, true);
    let config = session::config(&o.zenoh, "router", &o.listen)?;
    let session = session::open(config, &log)?;
    let started = Instant::now();
    log.info(format_args!("router {} up", session.zid()));
    let clock = mocap_cli::runner::RunClock::new(o.duration, None);
    let stopped = loop {
        if let Some(why) = clock.stopped() {
            break why;
        }
        std::thread::sleep(mocap_cli::runner::POLL);
    };
    let _ = session.close().wait();
    let r = RouterRecord {
        kind: "summary",
        stopped,
        seconds: mocap_cli::output::round3(started.elapsed().as_secs_f64()),
    };
    mocap_cli::output::report(
        &mut Output::stdout(true),
        &log,
        o.format == Format::Json,
        &r,
        true,
    )?;
    Ok(())
}

#[derive(Debug, Serialize)]
struct RouterRecord {
    #[serde(rename = "type")]
    kind: &'static str,
    stopped: Stopped,
    seconds: f64,
}

impl Record for RouterRecord {
    fn human(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: routed for {:.1} s",
            mocap_cli::output::summary_head(Some(self.stopped)),
            self.seconds,
        )
    }
}
