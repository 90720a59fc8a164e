//! Outages said out loud: whether this session reaches any other Zenoh
//! session (a router or a peer), and whether a publisher's samples have a
//! subscriber (Zenoh's matching status), polled from the run loop once a
//! second. Each change is said once, with how long the outage lasted; the
//! decisions ([`Watch`]) take `now` and are tested without Zenoh.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mocap_cli::prelude::*;
use zenoh::Wait as _;

/// How often the run loop asks Zenoh.
const EVERY: Duration = Duration::from_secs(1);
/// How long a connection or subscriber may take to come at the start
/// before its absence is said.
const GRACE: Duration = Duration::from_secs(2);

/// A change worth a line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Change {
    /// Not there `GRACE` after the start.
    NotYet,
    /// It was there and is gone.
    Lost,
    /// There again, after being missing this long (since the start, or
    /// since it was lost).
    Back(Duration),
}

/// One yes/no condition (reachable, matched) as it changes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Watch {
    started: Instant,
    /// `None` until it was first there or its absence was said.
    up: Option<bool>,
    /// Since when it is missing (start, or loss).
    missing_since: Instant,
    /// Since when it is there.
    up_since: Option<Instant>,
}

impl Watch {
    pub(crate) fn new(now: Instant) -> Self {
        Self {
            started: now,
            up: None,
            missing_since: now,
            up_since: None,
        }
    }

    /// How long it has been there at `now` (`None`: it is not).
    pub(crate) fn up_for(&self, now: Instant) -> Option<Duration> {
        self.up_since
            .filter(|_| self.up == Some(true))
            .map(|s| now.saturating_duration_since(s))
    }

    /// Whether it is known to be missing now.
    pub(crate) fn is_down(&self) -> bool {
        self.up == Some(false)
    }

    /// The condition as seen at `now`: the change to say, if any.
    pub(crate) fn observe(&mut self, up: bool, now: Instant) -> Option<Change> {
        match (self.up, up) {
            (None, true) => {
                self.up = Some(true);
                self.up_since = Some(now);
                None
            }
            (None, false) if now.saturating_duration_since(self.started) >= GRACE => {
                self.up = Some(false);
                Some(Change::NotYet)
            }
            (Some(true), false) => {
                self.up = Some(false);
                self.missing_since = now;
                Some(Change::Lost)
            }
            (Some(false), true) => {
                self.up = Some(true);
                self.up_since = Some(now);
                Some(Change::Back(
                    now.saturating_duration_since(self.missing_since),
                ))
            }
            _ => None,
        }
    }
}

/// `now + by`, or as late as it gets where that would overflow (a duration
/// from a flag can be any size): never a panic.
pub(crate) fn later(now: Instant, by: Duration) -> Instant {
    now.checked_add(by)
        .or_else(|| now.checked_add(Duration::from_secs(365 * 86_400)))
        .unwrap_or(now)
}

/// What Zenoh said at one asking ([`Outages::ask`]).
pub(crate) struct Seen {
    routers: usize,
    peers: usize,
    /// By key: whether a subscriber takes it.
    matching: Vec<(String, bool)>,
}

/// The session's routers and peers, and the publishers' subscribers.
pub(crate) struct Outages {
    next: Instant,
    reach: Watch,
    /// By key: whether a subscriber takes it, and samples published while
    /// none did.
    matched: BTreeMap<String, (Watch, u64)>,
    /// Probe questions answered (the publisher's queryable counts them),
    /// and whether their absence was said.
    asked: std::sync::Arc<std::sync::atomic::AtomicU64>,
    told_unasked: bool,
}

/// How long a publisher may have a subscriber without being probed before
/// it says its samples may be refused: mocap-link subscribers probe every
/// second by default.
const UNASKED: Duration = Duration::from_secs(5);

impl Outages {
    pub(crate) fn new() -> Self {
        let now = Instant::now();
        Self {
            next: now,
            reach: Watch::new(now),
            matched: BTreeMap::new(),
            asked: std::sync::Arc::default(),
            told_unasked: false,
        }
    }

    /// The counter the probe queryable adds each question to.
    pub(crate) fn asked(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        self.asked.clone()
    }

    /// Whether Zenoh is to be asked now (once a second); then schedules
    /// the next time.
    pub(crate) fn due(&mut self) -> bool {
        let now = Instant::now();
        if now < self.next {
            return false;
        }
        self.next = later(now, EVERY);
        true
    }

    /// What Zenoh says of the session's routers and peers and of
    /// `publishers`' subscribers. Zenoh's answers may wait on its runtime:
    /// asked without any lock the sample path takes.
    pub(crate) fn ask<'a>(
        session: &zenoh::Session,
        publishers: impl Iterator<Item = &'a zenoh::pubsub::Publisher<'static>>,
    ) -> Seen {
        let info = session.info();
        Seen {
            routers: info.routers_zid().wait().count(),
            peers: info.peers_zid().wait().count(),
            matching: publishers
                .filter_map(|p| {
                    let status = p.matching_status().wait().ok()?;
                    Some((p.key_expr().as_str().to_owned(), status.matching()))
                })
                .collect(),
        }
    }

    /// Says what changed since the last answer.
    pub(crate) fn observe(&mut self, seen: Seen, log: &Log) {
        let now = Instant::now();
        let Seen {
            routers,
            peers,
            matching,
        } = seen;
        match self.reach.observe(routers + peers > 0, now) {
            Some(Change::NotYet) => log.info(format_args!(
                "no Zenoh router or peer is connected yet: nothing is carried until one is \
                 (check --connect and that the other side listens; a router that refuses \
                 the user and password, or a TLS certificate, looks the same from here: its \
                 log says which; peers found by multicast are looked for only on the \
                 network interfaces that were up when mocap-link started: after Wi-Fi or a \
                 VPN comes up, start it again or --connect)"
            )),
            Some(Change::Lost) => log.info(format_args!(
                "the connection to every Zenoh router and peer is lost: nothing is carried \
                 until one is back"
            )),
            Some(Change::Back(after)) => log.info(format_args!(
                "connected again ({routers} router{}, {peers} peer{}) after {:.1} s without",
                if routers == 1 { "" } else { "s" },
                if peers == 1 { "" } else { "s" },
                after.as_secs_f64()
            )),
            None => {}
        }
        for (key, matching) in matching {
            let (watch, unmatched) = self
                .matched
                .entry(key.clone())
                .or_insert_with(|| (Watch::new(now), 0));
            match watch.observe(matching, now) {
                Some(Change::NotYet) => {
                    log.info(format_args!("no subscriber takes {key} yet"));
                }
                Some(Change::Lost) => log.info(format_args!(
                    "no subscriber takes {key} any more: its samples go nowhere"
                )),
                Some(Change::Back(after)) => {
                    log.info(format_args!(
                        "a subscriber takes {key} after {:.1} s without ({} samples published \
                         meanwhile went nowhere)",
                        after.as_secs_f64(),
                        *unmatched
                    ));
                    *unmatched = 0;
                }
                None => {}
            }
        }
        // The router's access control refuses samples silently, and the
        // rules that bind performers to their names let a performer see the
        // room's subscribers: a subscriber that never asks for us is the
        // sign that our samples do not reach it.
        let matched_long = self
            .matched
            .iter()
            .find(|(_, (w, _))| w.up_for(now).is_some_and(|d| d >= UNASKED));
        if let Some((key, _)) = matched_long
            && !self.told_unasked
            && self.asked.load(std::sync::atomic::Ordering::Relaxed) == 0
        {
            self.told_unasked = true;
            log.info(format_args!(
                "a subscriber takes {key}, but none has asked for this performer in {} s \
                 (mocap-link subscribers ask every second): the router's access control \
                 may not let this user publish under this name (mocap-link acl), or the \
                 subscriber asks less often (--probe-interval)",
                UNASKED.as_secs()
            ));
        }
    }

    /// One sample published under `key`: counted when no subscriber is
    /// known to take it. Returns whether it was.
    pub(crate) fn published(&mut self, key: &str) -> bool {
        match self.matched.get_mut(key) {
            Some((w, n)) if w.is_down() => {
                *n += 1;
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_change_is_said_once_with_how_long_it_lasted() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let mut w = Watch::new(t0);
        // Missing at first: said after the grace, once.
        assert_eq!(w.observe(false, at(1.0)), None);
        assert_eq!(w.observe(false, at(2.0)), Some(Change::NotYet));
        assert_eq!(w.observe(false, at(3.0)), None);
        assert!(w.is_down());
        assert_eq!(w.observe(true, at(4.5)), Some(Change::Back(at(4.5) - t0)));
        assert_eq!(w.observe(true, at(5.0)), None);
        // A 3 s outage.
        assert_eq!(w.observe(false, at(10.0)), Some(Change::Lost));
        assert_eq!(w.observe(false, at(11.0)), None);
        assert_eq!(
            w.observe(true, at(13.0)),
            Some(Change::Back(Duration::from_secs(3)))
        );
        // There from the start: nothing to say.
        let mut fine = Watch::new(t0);
        assert_eq!(fine.observe(true, at(0.5)), None);
        assert!(!fine.is_down());
    }

    #[test]
    fn samples_published_with_no_subscriber_are_counted() {
        let mut o = Outages::new();
        let t0 = Instant::now();
        o.matched
            .insert("mocap/show/alice/vmc".into(), (Watch::new(t0), 0));
        assert!(!o.published("mocap/show/alice/vmc"), "not known yet");
        let (w, _) = o.matched.get_mut("mocap/show/alice/vmc").unwrap();
        w.observe(false, t0 + GRACE);
        assert!(o.published("mocap/show/alice/vmc"));
        assert!(o.published("mocap/show/alice/vmc"));
        assert_eq!(o.matched["mocap/show/alice/vmc"].1, 2);
        assert!(!o.published("mocap/show/alice/mocopi"));
    }
}
