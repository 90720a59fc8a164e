//! The library's error types keep room to grow: every public error struct
//! and enum, and every error kind, is `#[non_exhaustive]` (a new field or
//! variant is then not a breaking change), implements `Display` and
//! `std::error::Error`. Read from the sources, so a new error type is held
//! to it the day it is written (docs/architecture.md, "One vocabulary").
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code: a panic is how a test reports"
)]

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `(file, type name, attributes above it)` of every `pub struct|enum`
/// whose name ends in `Error` or `ErrorKind`.
fn error_types() -> Vec<(String, String, Vec<String>)> {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut found = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line
                .strip_prefix("pub struct ")
                .or_else(|| line.strip_prefix("pub enum "))
            else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !(name.ends_with("Error") || name.ends_with("ErrorKind")) {
                continue;
            }
            let attrs = lines[..i]
                .iter()
                .rev()
                .take_while(|l| l.starts_with("#[") || l.starts_with("///"))
                .filter(|l| l.starts_with("#["))
                .map(|l| (*l).to_owned())
                .collect();
            found.push((f.display().to_string(), name, attrs));
        }
    }
    found
}

#[test]
fn every_public_error_type_is_non_exhaustive() {
    let all = error_types();
    assert!(all.len() >= 20, "found only {} error types", all.len());
    let open: Vec<String> = all
        .iter()
        .filter(|(_, _, attrs)| !attrs.iter().any(|a| a == "#[non_exhaustive]"))
        .map(|(f, n, _)| format!("{n} in {f}"))
        .collect();
    assert!(open.is_empty(), "not #[non_exhaustive]: {open:#?}");
}

#[test]
fn every_public_error_type_is_an_error() {
    // Kinds are described by their error's Display; the errors themselves
    // must go through `?` into anyhow or a Box<dyn Error>.
    let all = error_types();
    let sources: String = all
        .iter()
        .map(|(f, _, _)| f.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|f| fs::read_to_string(f).unwrap())
        .collect();
    let missing: Vec<&String> = all
        .iter()
        .filter(|(_, n, _)| !n.ends_with("Kind"))
        .map(|(_, n, _)| n)
        .filter(|n| {
            !sources.contains(&format!("impl std::error::Error for {n}"))
                && !sources.contains(&format!("impl Error for {n}"))
                && !sources.contains(&format!("impl std::error::Error for {n}<"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "no std::error::Error impl: {missing:#?}"
    );
}

/// The body of a `pub struct NAME {` (or `pub struct NAME<…> {`, the located
/// `wire::Error` of every binary protocol) in `text`: the lines up to its
/// closing brace.
fn struct_body(text: &str, name: &str) -> Option<String> {
    let start = text
        .find(&format!("pub struct {name} {{"))
        .or_else(|| text.find(&format!("pub struct {name}<")))?;
    let rest = &text[start..];
    if !rest.lines().next()?.ends_with('{') {
        return None;
    }
    Some(rest[..rest.find("\n}")?].to_owned())
}

#[test]
fn error_structs_have_one_shape() {
    // What is wrong is a kind enum; where and in what are fields beside it.
    // Two wrappers carry another library's words, not a kind of ours.
    let wrappers = ["DecodeError", "PatternError"];
    let all = error_types();
    let mut checked = 0;
    for (file, name, _) in &all {
        let text = fs::read_to_string(file).unwrap();
        let Some(body) = struct_body(&text, name) else {
            continue;
        };
        if wrappers.contains(&name.as_str()) {
            continue;
        }
        checked += 1;
        assert!(
            body.contains("    pub kind: "),
            "{name} in {file} has no `pub kind` field"
        );
    }
    // Live Link's, SMF's, iFacialMocap's and OSC's errors are aliases of
    // wire::Error, checked once as it.
    assert!(checked >= 8, "checked only {checked} error structs");
}

#[test]
fn error_enums_are_only_for_text_a_person_wrote() {
    // A protocol's refusal is a struct (kind, where, context). Enums remain
    // for flags and files a person writes, whose variants carry their own
    // line or name, and for `CaptureError`, a transparent choice of two
    // shaped errors. A new one for bytes off the wire fails here.
    let text_inputs = [
        "CaptureError",
        "BakeError",
        "MappingError",
        "HeadAxesError",
        "SelectionError",
        "RigError",
        "WavError",
        "ImpairError",
        // The values of a VTube Studio request a tool is asked to write
        // (its flags), not bytes off the wire.
        "RequestError",
    ];
    let enums: Vec<String> = error_types()
        .into_iter()
        .filter(|(f, n, _)| {
            !n.ends_with("Kind")
                && fs::read_to_string(f)
                    .unwrap()
                    .contains(&format!("pub enum {n} {{"))
        })
        .map(|(_, n, _)| n)
        .filter(|n| !text_inputs.contains(&n.as_str()))
        .collect();
    assert!(enums.is_empty(), "error enums outside the list: {enums:?}");
}
