//! Who may send: `--allow CIDR` on every tool that receives. A datagram from
//! outside the ranges is refused before anything else sees it (not decoded,
//! not forwarded, not recorded unless `--record-refused`), counted per
//! source, and logged at a bounded rate ([`crate::refusals`]).

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::args::ValueError;
use crate::output::Log;
use crate::refusals::{REFUSAL_LOG_INTERVAL, RefusalLog, unsaid_line};
use crate::senders::Senders;

/// An address range for `--allow`: `192.168.1.0/24`, `fe80::/10`, or one
/// address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `10.0.0.0/8`, `::1/128`, or a single address.
    ///
    /// # Errors
    /// A message naming the accepted forms.
    pub fn parse(text: &str) -> Result<Self, ValueError> {
        let (ip, prefix) = match text.split_once('/') {
            Some((ip, p)) => (ip, Some(p)),
            None => (text, None),
        };
        let net: IpAddr = ip.parse().map_err(|_| {
            ValueError(format!(
                "expected an address or CIDR range such as 192.168.1.0/24, got {text:?}"
            ))
        })?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| ValueError(format!("bad prefix length in {text:?}")))?,
            None => max,
        };
        Ok(Self { net, prefix })
    }

    /// The range of one address.
    pub fn host(ip: IpAddr) -> Self {
        let prefix = if ip.is_ipv4() { 32 } else { 128 };
        Self { net: ip, prefix }
    }

    /// Whether `ip` is in the range (IPv4-mapped IPv6 addresses count as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        let v4 = |ip: IpAddr| match ip {
            IpAddr::V4(a) => Some(a),
            IpAddr::V6(a) => a.to_ipv4_mapped(),
        };
        match self.net {
            IpAddr::V4(net) => v4(ip).is_some_and(|a| {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(a) & mask == u32::from(net) & mask
            }),
            IpAddr::V6(net) => {
                let a = match ip {
                    IpAddr::V6(a) => a,
                    IpAddr::V4(a) => a.to_ipv6_mapped(),
                };
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(a) & mask == u128::from(net) & mask
            }
        }
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.net, self.prefix)
    }
}

/// `--allow`, the same in every receiving tool (`--record-refused` is with
/// `-w` in [`crate::args::WriteArgs`]).
#[derive(Clone, Debug, Default, clap::Args)]
pub struct AllowArgs {
    /// Accept datagrams only from this address or range (repeatable; IPv4
    /// or IPv6, e.g. 192.168.1.0/24); others are refused and counted
    #[arg(long = "allow", value_name = "CIDR", value_parser = Cidr::parse)]
    pub allow: Vec<Cidr>,
}

/// The sender check of one tool: the ranges, and what was refused. Clones
/// share their counts: the input keeps one to check with, the tool another
/// for its stats and summary.
#[derive(Clone)]
pub struct Guard {
    ranges: Arc<[Cidr]>,
    record_refused: bool,
    state: Arc<Mutex<Refused>>,
    log: Option<Arc<Log>>,
}

struct Refused {
    by_source: Senders<u64>,
    total: u64,
    /// Which refusals are logged: per address, once per interval.
    lines: RefusalLog,
    /// When the addresses' counted-only refusals are next looked at.
    next_look: Option<Instant>,
}

impl Default for Refused {
    fn default() -> Self {
        Self {
            by_source: Senders::default(),
            total: 0,
            lines: RefusalLog::new(REFUSAL_LOG_INTERVAL),
            next_look: None,
        }
    }
}

/// How often the counted-only refusals are looked at (a pass over at most
/// 257 addresses), so a flood does not pay for it per datagram.
const LOOK_EVERY: Duration = Duration::from_secs(1);

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("ranges", &self.ranges)
            .field("refused", &self.refused())
            .finish_non_exhaustive()
    }
}

impl Default for Guard {
    /// Everyone may send.
    fn default() -> Self {
        Self::only(Vec::new(), None)
    }
}

impl Guard {
    /// Everyone is allowed when `args` names no range. `log` gets one line
    /// for the first refusal of each source.
    pub fn new(args: &AllowArgs, log: Option<Log>) -> Self {
        Self::only(args.allow.clone(), log)
    }

    /// The same guard, with refused datagrams going to the `-w` recording.
    #[must_use]
    pub fn recording_refused(mut self) -> Self {
        self.record_refused = true;
        self
    }

    /// Only the senders in `ranges` (everyone when empty).
    pub fn only(ranges: Vec<Cidr>, log: Option<Log>) -> Self {
        Self {
            ranges: ranges.into(),
            record_refused: false,
            state: Arc::default(),
            log: log.map(Arc::new),
        }
    }

    /// Whether no range is set (then everyone may send).
    pub fn is_open(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether `src` may send; a refusal is counted, and logged at a
    /// bounded rate: the first of an address, then one count line per
    /// address every [`REFUSAL_LOG_INTERVAL`] while it goes on (a flood from
    /// many source ports of one host costs a line per 10 s, not one per
    /// port). Input without a sender (text lines, a raw datagram) is never
    /// refused.
    pub fn admit(&self, src: Option<SocketAddr>) -> bool {
        self.admit_at(src, Instant::now())
    }

    fn admit_at(&self, src: Option<SocketAddr>, now: Instant) -> bool {
        let Some(addr) = src else {
            return true;
        };
        if self.ranges.is_empty() || self.ranges.iter().any(|c| c.contains(addr.ip())) {
            return true;
        }
        let (say, unsaid) = {
            let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            st.total += 1;
            *st.by_source.get_or_insert_with(&src, || 0) += 1;
            let say = st.lines.count(addr.ip(), now);
            let unsaid = if st.next_look.is_none_or(|t| now >= t) {
                st.next_look = now.checked_add(LOOK_EVERY);
                st.lines.due(now)
            } else {
                Vec::new()
            };
            (say, unsaid)
        };
        if let Some(log) = &self.log {
            if say {
                log.info(format_args!(
                    "refused datagrams from {addr}: not in --allow (counted; an address is named here once every {} s)",
                    REFUSAL_LOG_INTERVAL.as_secs()
                ));
            }
            for (ip, n) in unsaid {
                log.info(format_args!("{}", unsaid_line(ip, n, "datagram")));
            }
        }
        false
    }

    /// Whether refused datagrams go to the `-w` recording.
    pub fn records_refused(&self) -> bool {
        self.record_refused
    }

    /// Datagrams refused in all.
    pub fn refused(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    /// Refused datagrams of `src` (0 for a sender that was never refused).
    pub fn refused_from(&self, src: Option<SocketAddr>) -> u64 {
        let st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.by_source.get(&src).copied().unwrap_or(0)
    }

    /// The summary's part about refused senders (past the senders' bound,
    /// those refused least recently are forgotten; `refused` keeps them).
    pub fn summary(&self) -> Refusals {
        let st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Refusals {
            refused: st.total,
            refused_senders: st
                .by_source
                .iter()
                .map(|(src, n)| RefusedSender {
                    src: *src,
                    datagrams: *n,
                })
                .collect(),
        }
    }
}

/// What a summary says of refused senders: nothing at all when none was.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Refusals {
    /// Datagrams refused by `--allow`.
    #[serde(skip_serializing_if = "is_zero")]
    pub refused: u64,
    /// Each refused sender and how many of its datagrams were refused.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused_senders: Vec<RefusedSender>,
}

/// One refused sender.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RefusedSender {
    /// Its address (`null`: senders past the bound of 256, together).
    pub src: Option<SocketAddr>,
    /// Its datagrams refused.
    pub datagrams: u64,
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "serde's skip_serializing_if passes a reference"
)]
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Refusals {
    /// For a human summary line: `; N datagrams refused (not in --allow)`,
    /// or nothing.
    pub fn human(&self) -> String {
        if self.refused == 0 {
            return String::new();
        }
        format!(
            "; {} datagrams refused from {} senders (not in --allow)",
            self.refused,
            self.refused_senders.len()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cidr(text: &str) -> Cidr {
        Cidr::parse(text).unwrap()
    }

    #[test]
    fn ranges() {
        let c = cidr("192.168.1.0/24");
        assert!(c.contains("192.168.1.77".parse().unwrap()));
        assert!(!c.contains("192.168.2.1".parse().unwrap()));
        assert!(cidr("127.0.0.1").contains("127.0.0.1".parse().unwrap()));
        assert!(!cidr("127.0.0.1").contains("127.0.0.2".parse().unwrap()));
        assert!(cidr("0.0.0.0/0").contains("8.8.8.8".parse().unwrap()));
        // IPv4 senders seen through a dual-stack socket.
        assert!(c.contains("::ffff:192.168.1.5".parse().unwrap()));
        let v6 = cidr("fe80::/10");
        assert!(v6.contains("fe80::1".parse().unwrap()));
        assert!(!v6.contains("2001:db8::1".parse().unwrap()));
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert!(Cidr::parse("nope").is_err());
        assert_eq!(cidr("10.1.2.3").to_string(), "10.1.2.3/32");
        assert_eq!(Cidr::host("10.1.2.3".parse().unwrap()), cidr("10.1.2.3"));
        assert_eq!(Cidr::host("::1".parse().unwrap()), cidr("::1/128"));
    }

    #[test]
    fn refusals_are_counted_per_source() {
        let args = AllowArgs {
            allow: vec![cidr("127.0.0.1")],
        };
        let g = Guard::new(&args, None);
        let ok: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let stranger: SocketAddr = "127.0.0.9:5000".parse().unwrap();
        let other: SocketAddr = "[::1]:7".parse().unwrap();
        assert!(g.admit(Some(ok)));
        assert!(!g.admit(Some(stranger)));
        assert!(!g.admit(Some(stranger)));
        assert!(!g.admit(Some(other)));
        assert!(g.admit(None), "file input has no sender to refuse");
        assert_eq!(g.refused(), 3);
        assert_eq!(g.refused_from(Some(stranger)), 2);
        assert_eq!(g.refused_from(Some(ok)), 0);
        assert_eq!(g.summary().refused_senders.len(), 2);
        let view = g.clone();
        assert!(!view.admit(Some(stranger)));
        assert_eq!(g.refused(), 4, "clones share the counts");
        let json = serde_json::to_string(&g.summary()).unwrap();
        assert_eq!(
            json,
            r#"{"refused":4,"refused_senders":[{"src":"127.0.0.9:5000","datagrams":3},{"src":"[::1]:7","datagrams":1}]}"#
        );
        assert_eq!(
            serde_json::to_string(&Guard::default().summary()).unwrap(),
            "{}"
        );
        let open = Guard::new(&AllowArgs::default(), None);
        assert!(open.is_open() && open.admit(Some(stranger)));
        assert_eq!(open.refused(), 0);
    }
}
