//! The port lists people read (README, docs/top.md, `mocap-top --help`)
//! are the registry's: a protocol added to `mocap_core::protocol` fails
//! here until the prose says so too.

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
    for doc in ["README.md", "docs/top.md"] {
        let text = read(doc);
        assert!(text.contains(&list), "{doc} does not list: {list}");
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
