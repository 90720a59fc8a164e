//! The request a PC sends the phone, written ([`request`]): what a tool
//! that asks for data (`--ask`) sends every [`RESEND`].

use std::fmt;
use std::fmt::Write as _;
use std::time::Duration;

use super::REQUEST_TYPE;

/// How often a PC repeats its request while it wants data.
pub const RESEND: Duration = Duration::from_secs(1);
/// The `time` a PC asks for: three resends' worth, so two lost requests in a
/// row do not stop the phone, and it stops within three seconds of the PC.
pub const REQUEST_TIME: Duration = Duration::from_secs(3);
/// The `sentBy` name of our tools (the phone logs it).
pub const SENT_BY: &str = "mocap-dump";
/// The shortest `time` the app accepts.
pub const MIN_TIME: Duration = Duration::from_millis(500);
/// The longest `time` the app accepts.
pub const MAX_TIME: Duration = Duration::from_secs(10);
/// The most ports [`request`] writes: what every version of the app accepts
/// (16 before its 2024-02-18 change, 32 since).
pub const MAX_PORTS: usize = 16;
/// The longest `sentBy` [`request`] writes, in characters (32 before the
/// app's 2024-02-18 change, 64 since).
pub const MAX_SENT_BY: usize = 32;

/// A request [`request`] will not write: the app (some version of it) would
/// ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestError {
    /// `time` outside [`MIN_TIME`] to [`MAX_TIME`].
    Time(Duration),
    /// No ports, or more than [`MAX_PORTS`].
    PortCount(usize),
    /// Port 0 listed.
    PortZero,
    /// `sentBy` empty or longer than [`MAX_SENT_BY`] characters.
    SentBy(usize),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Time(t) => write!(f, "time {t:?} (expected 0.5 s to 10 s)"),
            Self::PortCount(n) => write!(f, "{n} ports (expected 1 to {MAX_PORTS})"),
            Self::PortZero => write!(f, "port 0 (expected 1 to 65535)"),
            Self::SentBy(n) => write!(f, "a name of {n} characters (expected 1 to {MAX_SENT_BY})"),
        }
    }
}

impl std::error::Error for RequestError {}

/// The request asking the phone to send tracking data to `ports` of the
/// sender's address for `time`, named `sent_by`: one line of JSON laid out
/// as DenchiSoft's reference client writes it.
///
/// ```
/// use std::time::Duration;
/// use mocap_core::vtubestudio::{Packet, REQUEST_TIME, SENT_BY, parse, request};
///
/// let bytes = request(REQUEST_TIME, SENT_BY, &[50510])?;
/// assert_eq!(
///     bytes,
///     br#"{"messageType":"iOSTrackingDataRequest","time":3.0,"sentBy":"mocap-dump","ports":[50510]}"#
/// );
/// let Packet::Request(r) = parse(&bytes)? else { unreachable!() };
/// assert_eq!((r.time, r.ports), (Some(3.0), vec![50510]));
/// assert!(request(Duration::from_secs(11), "x", &[1]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// A [`RequestError`] for a value outside what every version of the app
/// accepts.
pub fn request(time: Duration, sent_by: &str, ports: &[u16]) -> Result<Vec<u8>, RequestError> {
    if !(MIN_TIME..=MAX_TIME).contains(&time) {
        return Err(RequestError::Time(time));
    }
    if !(1..=MAX_PORTS).contains(&ports.len()) {
        return Err(RequestError::PortCount(ports.len()));
    }
    if ports.contains(&0) {
        return Err(RequestError::PortZero);
    }
    let chars = sent_by.chars().count();
    if !(1..=MAX_SENT_BY).contains(&chars) {
        return Err(RequestError::SentBy(chars));
    }
    // `{:?}` writes the shortest text that reads back as the same f64, with
    // a decimal point: 3.0, 0.5, 2.25.
    let mut out = format!(
        r#"{{"messageType":"{REQUEST_TYPE}","time":{:?},"sentBy":""#,
        time.as_secs_f64()
    );
    for c in sent_by.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push_str(r#"","ports":["#);
    for (i, p) in ports.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{p}");
    }
    out.push_str("]}");
    Ok(out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vtubestudio::{Packet, parse};

    #[test]
    fn what_is_written_reads_back() {
        let name = "PC \"studio\" \\ \u{1}é";
        let bytes = request(Duration::from_millis(2250), name, &[1, 65535, 21413]).unwrap();
        let Ok(Packet::Request(r)) = parse(&bytes) else {
            panic!("{}", String::from_utf8_lossy(&bytes));
        };
        assert_eq!(r.time, Some(2.25));
        assert_eq!(r.sent_by.as_deref(), Some(name));
        assert_eq!(r.ports, [1, 65535, 21413]);
        assert_eq!(r.warnings, []);
    }

    #[test]
    fn values_some_app_would_ignore_are_refused() {
        let ok = |t, n: &str, p: &[u16]| request(t, n, p).map(|_| ());
        let s = Duration::from_secs;
        assert_eq!(ok(MIN_TIME, "a", &[1]), Ok(()));
        assert_eq!(ok(MAX_TIME, &"a".repeat(32), &[1; 16]), Ok(()));
        assert_eq!(
            ok(Duration::from_millis(499), "a", &[1]),
            Err(RequestError::Time(Duration::from_millis(499)))
        );
        assert_eq!(ok(s(11), "a", &[1]), Err(RequestError::Time(s(11))));
        assert_eq!(ok(s(3), "a", &[]), Err(RequestError::PortCount(0)));
        assert_eq!(ok(s(3), "a", &[1; 17]), Err(RequestError::PortCount(17)));
        assert_eq!(ok(s(3), "a", &[0]), Err(RequestError::PortZero));
        assert_eq!(ok(s(3), "", &[1]), Err(RequestError::SentBy(0)));
        assert_eq!(
            ok(s(3), &"é".repeat(33), &[1]),
            Err(RequestError::SentBy(33))
        );
        assert_eq!(
            RequestError::PortCount(17).to_string(),
            "17 ports (expected 1 to 16)"
        );
    }
}
