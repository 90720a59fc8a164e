//! What the registry promises beyond its own module: nothing else in the
//! workspace matches on a protocol (tools read the table, so a new protocol
//! needs no arm anywhere and no `_ =>` hides one), and the port lists people
//! read (README, docs/top.md) are the registry's.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a panic is how a test reports"
)]

use mocap_core::protocol::{Protocol, port_list};

fn read(path: &str) -> String {
    let text =
        std::fs::read_to_string(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    // Prose wraps anywhere: compare with single spaces.
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn readme_and_the_live_view_docs_list_the_registrys_ports() {
    let list = port_list();
    // README lists them twice (mocap-top, the firewall note): each copy is
    // counted, so one left stale fails.
    for (doc, copies) in [("README.md", 2), ("docs/top.md", 1)] {
        let text = read(doc);
        assert_eq!(
            text.matches(&list).count(),
            copies,
            "{doc} must list {copies} times: {list}"
        );
    }
    // The firewall rule opens every one of them.
    let ports: Vec<String> = Protocol::ALL
        .iter()
        .flat_map(|p| p.default_ports())
        .map(u16::to_string)
        .collect();
    let rule = format!("-LocalPort {}", ports.join(","));
    assert!(read("README.md").contains(&rule), "README.md: {rule}");
}

/// Every `.rs` file under `dir`, `target/` directories left out.
fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_code_outside_the_registry_matches_on_a_protocol() {
    let root = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut files = Vec::new();
    for dir in ["crates", "tools", "fuzz"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{}", files.len());
    let registry = root.join("crates/mocap-core/src/protocol");
    let mut arms = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&registry)) {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            // A pattern naming a variant: `Protocol::Vmc =>`, `Protocol::Vmc |`,
            // `Some(Protocol::Vmc) =>`.
            for (at, _) in line.match_indices("Protocol::") {
                let rest = line.get(at + "Protocol::".len()..).unwrap_or_default();
                let name_len = rest
                    .find(|c: char| !c.is_alphanumeric())
                    .unwrap_or(rest.len());
                let (name, after) = rest.split_at(name_len);
                let after = after.trim_start_matches(')').trim_start();
                let variant = name.starts_with(|c: char| c.is_ascii_uppercase())
                    && name.bytes().any(|b| b.is_ascii_lowercase());
                if variant && (after.starts_with("=>") || after.starts_with('|')) {
                    arms.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        arms.is_empty(),
        "match arms on Protocol outside crates/mocap-core/src/protocol/ \
         (read Protocol::spec() instead):\n{}",
        arms.join("\n")
    );
}
