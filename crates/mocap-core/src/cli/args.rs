use std::path::PathBuf;
use std::time::Duration;

/// Output format shared by every tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One readable line per record.
    Human,
    /// JSON Lines: one object per line with a `type` field.
    Json,
}

/// When to stop: `-n/--count` and `--duration`, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct StopArgs {
    /// Stop after this many packets (datagrams, counting undecodable ones).
    #[arg(short = 'n', long, value_name = "N")]
    pub count: Option<u64>,

    /// Stop after this long, e.g. 500ms, 10s, 2m.
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub duration: Option<Duration>,
}

/// Logging and periodic counters, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct LogArgs {
    /// Print counters every DUR (stderr in human format, `stats` records in json).
    #[arg(long, value_name = "DUR", value_parser = parse_duration)]
    pub stats_interval: Option<Duration>,

    /// No progress or log lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
}

/// How often a bridge (`--vmc` without `--format`) prints its status line
/// when `--stats-interval` is not given.
pub const STATUS_INTERVAL: Duration = Duration::from_secs(5);

/// Capture input that a tool sends on to sockets, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct PaceArgs {
    /// With -r and an output socket: send as fast as the file is read
    /// instead of at its recorded timing.
    #[arg(long)]
    pub topspeed: bool,
}

/// Recording what a sniffing tool receives, the same in every tool.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RecordArgs {
    /// Record every datagram received, before decoding, to FILE (pcapng).
    #[arg(short = 'w', long = "write", value_name = "FILE.pcapng")]
    pub write: Option<PathBuf>,
}

/// Parses `HOST:PORT` (a name is resolved; IPv4 is preferred).
///
/// # Errors
/// A message when the text is not `HOST:PORT` or the name does not resolve.
pub fn parse_host_port(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs as _;
    if let Ok(a) = text.parse() {
        return Ok(a);
    }
    let addrs: Vec<_> = text
        .to_socket_addrs()
        .map_err(|e| format!("expected HOST:PORT, got {text:?}: {e}"))?
        .collect();
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .copied()
        .ok_or_else(|| format!("{text:?} resolves to no address"))
}

/// Parses `500ms`, `10s`, `2m`, `1h`, `1.5s`, or a plain number of seconds.
///
/// # Errors
/// A message naming the accepted forms.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 500ms, 10s, 2m"))?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "us" | "µs" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "invalid duration unit {other:?} in {text:?}: use ms, s, m or h"
            ));
        }
    };
    let secs = value * scale;
    // A century is longer than any run; beyond it, clocks would overflow.
    if secs > 100.0 * 365.0 * 24.0 * 3600.0 {
        return Err(format!("duration {text:?} is too long (at most 100 years)"));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("invalid duration {text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("ten").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
        assert!(parse_duration("4000000000000000h").is_err());
    }
}
