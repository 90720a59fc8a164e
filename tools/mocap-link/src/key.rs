//! The key layout: `mocap/<room>/<performer>/<protocol>`, one Zenoh key per
//! performer and protocol, so any Zenoh application can pick streams with a
//! plain key expression (`mocap/studio/**`, `mocap/*/alice/vmc`).

use mocap_core::protocol::{self, Protocol};

/// The first chunk of every key.
pub(crate) const ROOT: &str = "mocap";

/// The last chunk of a datagram the registry does not recognise.
pub(crate) const UNKNOWN: &str = "unknown";

/// The last chunk of the publisher's round-trip probe (a queryable, so it
/// never shows up among the samples a subscriber of `mocap/**` receives).
pub(crate) const PROBE: &str = "_probe";

/// The protocol chunk for a datagram: the registry's content sniff.
pub(crate) fn protocol_of(datagram: &[u8]) -> &'static str {
    protocol::recognise(datagram).map_or(UNKNOWN, |(p, _)| p.key())
}

/// The protocol a protocol chunk names, if it is one of the registry's.
pub(crate) fn protocol_named(chunk: &str) -> Option<Protocol> {
    Protocol::from_key(chunk)
}

/// A room or performer name usable as one key chunk: not empty, no `/`, and
/// none of the characters Zenoh reserves for wildcards and verbatim chunks.
pub(crate) fn parse_chunk(text: &str) -> Result<String, mocap_cli::args::ValueError> {
    let bad = text.is_empty()
        || text.starts_with('@')
        || text.starts_with('_')
        || text.contains(['/', '*', '$', '?', '#']);
    if bad {
        Err(mocap_cli::args::ValueError(format!(
            "a name is one key chunk: not empty, no / * $ ? #, not starting with @ or _; got {text:?}"
        )))
    } else {
        Ok(text.to_owned())
    }
}

/// A key expression `subscribe` can take (`mocap/show/**`,
/// `mocap/*/alice/vmc`): checked here, so a wrong one is a usage error.
pub(crate) fn parse_key_expr(text: &str) -> Result<String, mocap_cli::args::ValueError> {
    match zenoh::key_expr::KeyExpr::try_from(text) {
        Ok(_) => Ok(text.to_owned()),
        Err(e) => Err(mocap_cli::args::ValueError(format!(
            "not a Zenoh key expression ({}); e.g. mocap/show/** or mocap/*/alice/vmc",
            crate::session::said(&e)
        ))),
    }
}

/// The key of one performer's stream of one protocol.
pub(crate) fn stream(room: &str, performer: &str, protocol: &str) -> String {
    format!("{ROOT}/{room}/{performer}/{protocol}")
}

/// The probe key of one performer.
/// Where a subscriber hands out its datagram path: `mocap/<room>/_datagrams/<zid>`.
pub(crate) fn datagrams(room: &str, zid: &str) -> String {
    format!("{ROOT}/{room}/{DATAGRAMS}/{zid}")
}

/// The third chunk of the datagram path's keys (no performer name starts
/// with `_`).
pub(crate) const DATAGRAMS: &str = "_datagrams";

pub(crate) fn probe(room: &str, performer: &str) -> String {
    format!("{ROOT}/{room}/{performer}/{PROBE}")
}

/// The room, performer and protocol chunks of a stream key
/// (`mocap/<room>/<performer>/<protocol>`); a key of another shape (a Python
/// publisher's own) has no room, its whole text as the performer and
/// `unknown` as the protocol.
pub(crate) fn split(key: &str) -> (Option<&str>, &str, &str) {
    let mut chunks = key.split('/');
    match (
        chunks.next(),
        chunks.next(),
        chunks.next(),
        chunks.next(),
        chunks.next(),
    ) {
        (Some(ROOT), Some(room), Some(performer), Some(protocol), None) => {
            (Some(room), performer, protocol)
        }
        _ => (None, key, UNKNOWN),
    }
}

/// `<room>/<performer>` of a stream key, borrowed from it: how a performer
/// of another room than the subscriber's is named.
pub(crate) fn room_and_performer(key: &str) -> Option<&str> {
    let (_, rest) = key.split_once('/')?;
    rest.rsplit_once('/')
        .map(|(room_performer, _)| room_performer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_back_into_their_chunks() {
        let k = stream("studio", "alice", "vmc");
        assert_eq!(k, "mocap/studio/alice/vmc");
        assert_eq!(split(&k), (Some("studio"), "alice", "vmc"));
        assert_eq!(room_and_performer(&k), Some("studio/alice"));
        assert_eq!(split("robots/arm"), (None, "robots/arm", UNKNOWN));
        assert_eq!(split("mocap/a/b/c/d"), (None, "mocap/a/b/c/d", UNKNOWN));
        assert_eq!(probe("r", "p"), "mocap/r/p/_probe");
    }

    #[test]
    fn key_expressions_are_checked_as_zenoh_does() {
        for good in [
            "mocap/**",
            "mocap/*/alice/vmc",
            "mocap/show/**",
            "robots/arm",
        ] {
            assert_eq!(parse_key_expr(good).unwrap(), good);
        }
        for bad in [
            "",
            "mocap//x",
            "mocap/",
            "/mocap",
            "mocap/**/**",
            "mocap/a#b",
        ] {
            assert!(parse_key_expr(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn names_are_single_plain_chunks() {
        assert_eq!(parse_chunk("alice-2").unwrap(), "alice-2");
        for bad in ["", "a/b", "a*", "$x", "@admin", "_probe", "a?b", "a#"] {
            assert!(parse_chunk(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_protocol_chunk_comes_from_the_content_sniff() {
        let vmc = mocap_core::osc::message(&mocap_core::osc::Message::new(
            "/VMC/Ext/OK",
            vec![mocap_core::osc::Arg::Int(1)],
        ))
        .unwrap();
        assert_eq!(protocol_of(&vmc), "vmc");
        assert_eq!(protocol_of(b"hello"), UNKNOWN);
        assert_eq!(protocol_named("mocopi"), Some(Protocol::Mocopi));
        assert_eq!(protocol_named(UNKNOWN), None);
    }
}
