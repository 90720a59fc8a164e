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

#[cfg(test)]
mod tests {
    use super::*;

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
