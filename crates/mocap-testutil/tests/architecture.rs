//! docs/architecture.md names every source file of the workspace, one line
//! each, and names no file that is gone: the layout a newcomer reads stays
//! the layout there is.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code: a panic is how a test reports"
)]

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `.rs` file under `crates/*/src` and `tools/*/src`, relative to the root.
fn sources() -> Vec<String> {
    let root = root();
    let mut files = Vec::new();
    for group in ["crates", "tools"] {
        for krate in fs::read_dir(root.join(group)).unwrap().flatten() {
            rust_files(&krate.path().join("src"), &mut files);
        }
    }
    let mut names: Vec<String> = files
        .iter()
        .map(|p| {
            p.strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .collect();
    names.sort();
    names
}

/// The paths the layout block names: lines starting with `crates/` or `tools/`
/// and a `.rs` file.
fn named() -> Vec<String> {
    let doc = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    doc.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| (w.starts_with("crates/") || w.starts_with("tools/")) && w.ends_with(".rs"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_source_file_is_named_once() {
    let named = named();
    let sources = sources();
    assert!(
        sources.len() > 50,
        "found only {} source files",
        sources.len()
    );
    let missing: Vec<&String> = sources.iter().filter(|s| !named.contains(s)).collect();
    assert!(
        missing.is_empty(),
        "not named in docs/architecture.md (add a line each): {missing:#?}"
    );
    let mut seen = std::collections::HashSet::new();
    let twice: Vec<&String> = named.iter().filter(|n| !seen.insert(*n)).collect();
    assert!(twice.is_empty(), "named more than once: {twice:#?}");
}

#[test]
fn every_named_file_exists() {
    let gone: Vec<String> = named()
        .into_iter()
        .filter(|n| !root().join(n).is_file())
        .collect();
    assert!(
        gone.is_empty(),
        "docs/architecture.md names files that are gone: {gone:#?}"
    );
}
