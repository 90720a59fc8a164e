//! JSON input that did not read, in the crate's own error shape: a kind and
//! where (line and column), so no `serde_json` type is part of the API.

use std::fmt;

/// What was wrong with the JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonErrorKind {
    /// Not JSON at all (a syntax error).
    Syntax,
    /// JSON, but not the shape asked for (e.g. a number where a string goes).
    Shape,
    /// The text ends inside a value.
    Eof,
}

/// JSON that did not read: what, and at which line and column (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct JsonError {
    /// What was wrong.
    pub kind: JsonErrorKind,
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
}

impl From<serde_json::Error> for JsonError {
    fn from(e: serde_json::Error) -> Self {
        use serde_json::error::Category;
        let kind = match e.classify() {
            Category::Data => JsonErrorKind::Shape,
            Category::Eof => JsonErrorKind::Eof,
            Category::Syntax | Category::Io => JsonErrorKind::Syntax,
        };
        Self {
            kind,
            line: e.line(),
            column: e.column(),
        }
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            JsonErrorKind::Syntax => "not JSON",
            JsonErrorKind::Shape => "not the expected JSON shape",
            JsonErrorKind::Eof => "JSON that ends early",
        };
        write!(f, "{what} at line {}, column {}", self.line, self.column)
    }
}

impl std::error::Error for JsonError {}

/// The byte of `text` at serde_json's `line` (from 1) and `column` (from 1,
/// in bytes), within the text: where a JSON protocol's refusal points.
pub(crate) fn byte_offset(text: &[u8], line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match text
            .get(start..)
            .and_then(|r| r.iter().position(|b| *b == b'\n'))
        {
            Some(nl) => start += nl + 1,
            None => break,
        }
    }
    start
        .saturating_add(column.saturating_sub(1))
        .min(text.len())
}

/// Why a datagram's text is not a JSON object, and where (a byte of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NotObject {
    /// The text does not read as JSON; the text's length when it ends early.
    Json { at: usize, kind: JsonErrorKind },
    /// JSON, but another value than an object; at its first byte.
    Other { at: usize },
}

/// Reads `text` as one JSON object: the shape of the JSON protocols' datagrams
/// (VTube Studio, Rokoko), whose refusals point at the byte.
///
/// Numbers read as correctly rounded f64 (the workspace's `float_roundtrip`);
/// serde_json nests at most 128 deep, and a datagram's value is a small
/// multiple of its 64 KiB.
pub(crate) fn object(text: &[u8]) -> Result<serde_json::Map<String, serde_json::Value>, NotObject> {
    let value: serde_json::Value = serde_json::from_slice(text).map_err(|e| {
        let e = JsonError::from(e);
        let at = match e.kind {
            JsonErrorKind::Eof => text.len(),
            _ => byte_offset(text, e.line, e.column),
        };
        NotObject::Json { at, kind: e.kind }
    })?;
    match value {
        serde_json::Value::Object(members) => Ok(members),
        _ => Err(NotObject::Other {
            at: text
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(0),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_or_where_it_is_not_one() {
        assert_eq!(object(br#" {"a": 1}"#).map(|m| m.len()), Ok(1));
        assert_eq!(object(b"  [1]"), Err(NotObject::Other { at: 2 }));
        assert_eq!(
            object(b"{\"a\": 1"),
            Err(NotObject::Json {
                at: 7,
                kind: JsonErrorKind::Eof
            })
        );
        assert_eq!(
            object(b"{\n  \"a\": x}"),
            Err(NotObject::Json {
                at: 9,
                kind: JsonErrorKind::Syntax
            })
        );
    }

    #[test]
    fn kinds_and_places() {
        let e =
            |text: &str| JsonError::from(serde_json::from_str::<Vec<String>>(text).unwrap_err());
        assert_eq!(
            e("[\"a\",\n  }"),
            JsonError {
                kind: JsonErrorKind::Syntax,
                line: 2,
                column: 3
            }
        );
        assert_eq!(e("[1]").kind, JsonErrorKind::Shape);
        assert_eq!(e("[\"a\"").kind, JsonErrorKind::Eof);
        assert_eq!(
            e("[1]").to_string(),
            "not the expected JSON shape at line 1, column 2"
        );
    }
}
