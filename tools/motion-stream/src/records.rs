//! What motion-stream prints: records shared by serve and dump.

use std::io;

use mocap_core::cli::{Format, Output};
use serde_json::json;

/// An `error` record (or line).
pub(crate) fn error(out: &mut Output, format: Format, reason: &str) -> io::Result<()> {
    match format {
        Format::Json => out.json(&json!({"type": "error", "reason": reason})),
        Format::Human => out.text(format_args!("error                {reason}\n")),
    }
}
