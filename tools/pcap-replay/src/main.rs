//! `pcap-replay`: not built yet; its issue brings it.

use std::process::ExitCode;

fn main() -> ExitCode {
    #[expect(clippy::print_stderr, reason = "the whole program is this one message")]
    {
        eprintln!("pcap-replay: not implemented yet (see the project's open issues)");
    }
    ExitCode::from(2)
}
