//! A baked recording: a JSON array of frame strings, then `___iFacialMocap`.

use super::command::TERMINATOR;

/// Why a recording could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum BakeError {
    /// Not a JSON array of strings.
    Json(crate::json::JsonError),
}

impl std::fmt::Display for BakeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Json(e) => write!(f, "recording is not a JSON array of frame strings: {e}"),
        }
    }
}

/// The cause is shown by `Display`, so it is not returned again by
/// `source()` (an error chain would print it twice).
impl std::error::Error for BakeError {}

/// The frame strings of a recording (with or without its terminator).
///
/// # Errors
/// [`BakeError::Json`] when the payload is not a JSON array of strings.
pub fn parse_recording(bytes: &[u8]) -> Result<Vec<String>, BakeError> {
    let body = bytes.strip_suffix(TERMINATOR.as_bytes()).unwrap_or(bytes);
    serde_json::from_slice(body.trim_ascii()).map_err(|e| BakeError::Json(e.into()))
}

/// Writes frames as a recording payload, terminator included.
pub fn write_recording(frames: &[String]) -> Vec<u8> {
    let mut out = serde_json::to_vec(frames).unwrap_or_else(|_| b"[]".to_vec());
    out.extend_from_slice(TERMINATOR.as_bytes());
    out
}

/// Recordings are always 60 frames per second.
pub const RECORDING_FPS: f64 = 60.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let frames = vec![
            "a-1|=head#1,2,3,4,5,6|".to_owned(),
            "b\"quoted\"".to_owned(),
        ];
        let bytes = write_recording(&frames);
        assert!(bytes.ends_with(b"___iFacialMocap"));
        assert_eq!(parse_recording(&bytes).unwrap(), frames);
        assert!(parse_recording(b"{\"no\":1}___iFacialMocap").is_err());
    }
}
