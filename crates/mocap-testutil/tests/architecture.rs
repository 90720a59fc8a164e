//! docs/architecture.md names every source file of the workspace, one line
//! each, and names no file that is gone: the layout a newcomer reads stays
//! the layout there is. No two source files of a crate use each other,
//! directly or around a circle.
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

/// A source file's code with comments, string and character literals blanked
/// to spaces (newlines kept, so lines still count): what is left names only
/// real paths.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, s: &[char]| {
        out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let rest = &c[i..];
        let end = if rest.starts_with(&['/', '/']) {
            rest.iter().position(|&ch| ch == '\n').unwrap_or(rest.len())
        } else if rest.starts_with(&['/', '*']) {
            let (mut depth, mut j) = (0, 0);
            while j < rest.len() {
                if rest[j..].starts_with(&['/', '*']) {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with(&['*', '/']) {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            j
        } else if rest[0] == 'r'
            && (i == 0 || !ident(c[i - 1]) || (c[i - 1] == 'b' && (i < 2 || !ident(c[i - 2]))))
            && {
                let hashes = rest[1..].iter().take_while(|&&ch| ch == '#').count();
                rest.get(1 + hashes) == Some(&'"')
            }
        {
            let hashes = rest[1..].iter().take_while(|&&ch| ch == '#').count();
            let mut j = 2 + hashes;
            while j < rest.len()
                && !(rest[j] == '"' && rest[j + 1..].iter().take(hashes).all(|&ch| ch == '#'))
            {
                j += 1;
            }
            (j + 1 + hashes).min(rest.len())
        } else if rest[0] == '"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != '"' {
                j += if rest[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(rest.len())
        } else if rest[0] == '\'' && rest.get(1) == Some(&'\\') {
            // `'\''`, `'\\'`, `'\u{…}'`: the quote that ends it comes after the escaped character.
            3 + rest.iter().skip(3).position(|&ch| ch == '\'').unwrap_or(0) + 1
        } else if rest[0] == '\'' && rest.get(2) == Some(&'\'') {
            3
        } else {
            out.push(rest[0]);
            i += 1;
            continue;
        };
        blank(&mut out, &rest[..end.max(1)]);
        i += end.max(1);
    }
    out
}

/// A token of code and its line.
struct Tok {
    text: String,
    line: usize,
}

fn tokens(code: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let c: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < c.len() {
            let start = i;
            if c[i].is_alphanumeric() || c[i] == '_' {
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            } else if c[i].is_whitespace() {
                i += 1;
                continue;
            } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
                i += 2;
            } else {
                i += 1;
            }
            toks.push(Tok {
                text: c[start..i].iter().collect(),
                line: n + 1,
            });
        }
    }
    toks
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|ch| ch.is_alphabetic() || ch == '_')
}

/// A `use` tree from `toks[*i]` to its end, as (path, name bound) pairs; a
/// glob binds no name. `prefix` is the path above this subtree.
fn use_tree(
    toks: &[Tok],
    i: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    let mut path = prefix.to_vec();
    while let Some(t) = toks.get(*i) {
        match t.text.as_str() {
            "::" => *i += 1,
            "{" => {
                *i += 1;
                while toks.get(*i).is_some_and(|t| t.text != "}") {
                    use_tree(toks, i, &path, out);
                    if toks.get(*i).is_some_and(|t| t.text == ",") {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            "*" => {
                *i += 1;
                out.push((path, None));
                return;
            }
            "self" if !path.is_empty() && toks.get(*i + 1).is_none_or(|t| t.text != "::") => {
                *i += 1;
                let name = path.last().cloned();
                out.push((path, name));
                return;
            }
            "as" => {
                let name = toks.get(*i + 1).map(|t| t.text.clone());
                *i += 2;
                out.push((path, name.filter(|n| n != "_")));
                return;
            }
            s if is_ident(s) => {
                path.push(s.to_owned());
                *i += 1;
                if toks
                    .get(*i)
                    .is_none_or(|t| t.text != "::" && t.text != "as")
                {
                    let name = path.last().cloned();
                    out.push((path, name));
                    return;
                }
            }
            _ => return,
        }
    }
}

/// A path as written in one file: the module it is written in, its
/// segments, and where.
struct Written {
    module: Vec<String>,
    path: Vec<String>,
    line: usize,
}

/// One source file of a crate: its module path and the paths it writes.
struct Unit {
    file: String,
    module: Vec<String>,
    written: Vec<Written>,
    /// Names its top-level `use` declarations bind, as written.
    bound: Vec<(String, Written)>,
    /// Its `#[cfg(test)] mod name;` files.
    tests: Vec<Vec<String>>,
}

fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn unit(root: &Path, src: &Path, file: &Path, modules: &[Vec<String>]) -> Unit {
    let code = code_only(&fs::read_to_string(file).unwrap());
    let toks = tokens(&code);
    let module = module_of(src, file);
    let mut written = Vec::new();
    let mut bound = Vec::new();
    let mut tests = Vec::new();
    // Inline modules (`mod tests { … }`) and the brace depth each opened at.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending = None;
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let here: Vec<String> = module
            .iter()
            .chain(inline.iter().map(|(m, _)| m))
            .cloned()
            .collect();
        let prev = i.checked_sub(1).map(|p| toks[p].text.as_str());
        let text = toks[i].text.as_str();
        let next = toks.get(i + 1).map(|t| t.text.as_str());
        let cfg_test = ["#", "[", "cfg", "(", "test", ")", "]"];
        if toks.len() > i + cfg_test.len()
            && cfg_test.iter().zip(&toks[i..]).all(|(a, t)| *a == t.text)
        {
            // Test code is left out: a test may use whatever it checks.
            i += cfg_test.len();
            let item = toks[i..]
                .iter()
                .position(|t| t.text == ";" || t.text == "{")
                .unwrap_or(toks.len() - i);
            if toks[i..i + item].iter().any(|t| t.text == "mod")
                && toks.get(i + item).is_some_and(|t| t.text == ";")
            {
                let mut child = here.clone();
                child.push(toks[i + item - 1].text.clone());
                tests.push(child);
            }
            i += item;
            if toks.get(i).is_some_and(|t| t.text == "{") {
                let mut open = 0;
                while let Some(t) = toks.get(i) {
                    open += usize::from(t.text == "{");
                    open -= usize::from(t.text == "}");
                    i += 1;
                    if open == 0 {
                        break;
                    }
                }
            } else {
                i += 1;
            }
            continue;
        }
        match text {
            "mod" if toks.get(i + 2).is_some_and(|t| t.text == "{") => {
                pending = next.map(str::to_owned);
            }
            "{" => {
                depth += 1;
                if let Some(m) = pending.take() {
                    inline.push((m, depth));
                }
            }
            "}" => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "use" => {
                let line = toks[i].line;
                let mut tree = Vec::new();
                i += 1;
                use_tree(&toks, &mut i, &[], &mut tree);
                for (path, name) in tree {
                    let w = Written {
                        module: here.clone(),
                        path,
                        line,
                    };
                    match name {
                        Some(name) if inline.is_empty() => bound.push((name, w)),
                        _ => written.push(w),
                    }
                }
                continue;
            }
            _ if next == Some("::")
                && !matches!(prev, Some("::" | "$" | "."))
                && (matches!(text, "crate" | "super" | "self") || {
                    let mut child = here.clone();
                    child.push(text.to_owned());
                    modules.contains(&child)
                }) =>
            {
                let line = toks[i].line;
                let mut path = vec![text.to_owned()];
                while toks.get(i + 1).is_some_and(|t| t.text == "::")
                    && toks.get(i + 2).is_some_and(|t| is_ident(&t.text))
                {
                    path.push(toks[i + 2].text.clone());
                    i += 2;
                }
                written.push(Written {
                    module: here,
                    path,
                    line,
                });
            }
            _ => {}
        }
        i += 1;
    }
    let file = file
        .strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/");
    Unit {
        file,
        module,
        written,
        bound,
        tests,
    }
}

/// `w`'s path from the crate root, or `None` when it leaves the crate (std,
/// a dependency).
fn absolute(w: &Written, modules: &[Vec<String>]) -> Option<Vec<String>> {
    let first = w.path.first()?;
    let (base, rest) = match first.as_str() {
        "crate" => (Vec::new(), &w.path[1..]),
        "self" => (w.module.clone(), &w.path[1..]),
        "super" => {
            let ups = w.path.iter().take_while(|s| *s == "super").count();
            let keep = w.module.len().checked_sub(ups)?;
            (w.module[..keep].to_vec(), &w.path[ups..])
        }
        _ => {
            let mut child = w.module.clone();
            child.push(first.clone());
            if !modules.contains(&child) {
                return None;
            }
            (w.module.clone(), &w.path[..])
        }
    };
    Some(base.into_iter().chain(rest.iter().cloned()).collect())
}

/// The file `path` (from the crate root) lands in: the deepest module with a
/// file of its own, following a `use` there that re-exports the next name
/// (`crate::Log` is `output.rs`'s when `lib.rs` says `pub use output::Log`).
fn landing<'a>(
    units: &'a [Unit],
    modules: &[Vec<String>],
    path: &[String],
    hops: usize,
) -> Option<&'a Unit> {
    let unit = (0..=path.len())
        .rev()
        .find_map(|n| units.iter().find(|u| u.module == path[..n]))?;
    let next = path.get(unit.module.len());
    let via = next.and_then(|name| unit.bound.iter().find(|(b, _)| b == name));
    match via.and_then(|(_, w)| absolute(w, modules)) {
        Some(target) if hops < 8 => {
            let further: Vec<String> = target
                .into_iter()
                .chain(path[unit.module.len() + 1..].iter().cloned())
                .collect();
            landing(units, modules, &further, hops + 1).or(Some(unit))
        }
        _ => Some(unit),
    }
}

/// Every crate's file-level `use` graph, as (from, to, line of `from`)
/// edges between source files of one crate.
fn use_edges() -> Vec<Vec<(String, String, usize)>> {
    let root = root();
    let mut crates = Vec::new();
    for group in ["crates", "tools"] {
        for krate in fs::read_dir(root.join(group)).unwrap().flatten() {
            let src = krate.path().join("src");
            let mut files = Vec::new();
            rust_files(&src, &mut files);
            if files.is_empty() {
                continue;
            }
            files.sort();
            let modules: Vec<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
            let units: Vec<Unit> = files
                .iter()
                .map(|f| unit(&root, &src, f, &modules))
                .collect();
            let tests: Vec<&Vec<String>> = units.iter().flat_map(|u| &u.tests).collect();
            let mut edges = Vec::new();
            for u in &units {
                if tests.iter().any(|t| u.module.starts_with(t)) {
                    continue;
                }
                let all = u.written.iter().chain(u.bound.iter().map(|(_, w)| w));
                for w in all {
                    let Some(path) = absolute(w, &modules) else {
                        continue;
                    };
                    if let Some(to) = landing(&units, &modules, &path, 0)
                        && to.file != u.file
                        && !u.module.starts_with(&to.module)
                        && !edges.iter().any(|(f, t, _)| *f == u.file && *t == to.file)
                    {
                        edges.push((u.file.clone(), to.file.clone(), w.line));
                    }
                }
            }
            crates.push(edges);
        }
    }
    crates
}

/// The circles of a graph, one shortest circle per strongly connected part.
fn circles(edges: &[(String, String, usize)]) -> Vec<Vec<(String, usize)>> {
    let nodes: Vec<&String> = {
        let mut n: Vec<&String> = edges.iter().flat_map(|(f, t, _)| [f, t]).collect();
        n.sort();
        n.dedup();
        n
    };
    let reach = |from: &String| -> Option<Vec<(String, usize)>> {
        // Breadth first from `from` back to itself: the shortest circle through it.
        let mut prev: Vec<(&String, &String, usize)> = Vec::new();
        let mut frontier = vec![from];
        let mut seen = vec![from];
        while !frontier.is_empty() {
            let mut next = Vec::new();
            for n in frontier {
                for (f, t, line) in edges.iter().filter(|(f, _, _)| f == n) {
                    if t == from {
                        let mut circle = vec![(f.clone(), *line)];
                        let mut at = f;
                        while let Some(&(p, _, l)) = prev.iter().find(|(_, to, _)| *to == at) {
                            circle.push((p.clone(), l));
                            at = p;
                        }
                        circle.reverse();
                        return Some(circle);
                    }
                    if !seen.contains(&t) {
                        seen.push(t);
                        prev.push((f, t, *line));
                        next.push(t);
                    }
                }
            }
            frontier = next;
        }
        None
    };
    let mut found: Vec<Vec<(String, usize)>> = Vec::new();
    for n in nodes {
        if found.iter().any(|c| c.iter().any(|(f, _)| f == n)) {
            continue;
        }
        if let Some(c) = reach(n) {
            found.push(c);
        }
    }
    found
}

/// No two source files of a crate use each other, directly or around a
/// circle. The nodes are files; a use of a name lands in the file that
/// defines it (re-exports are followed). Two things are not counted:
/// - a file using the module it belongs to (`lib.rs`, `main.rs`, its
///   `mod.rs`, or `relay.rs` for `relay/*.rs`): that file is the module's
///   front, which names its children and re-exports them, so counting it
///   would call every `use super::Error` in a protocol module a circle
///   (counted, it found 28, each through a `mod.rs` or `main.rs`); circles
///   between siblings are still found;
/// - test code (`#[cfg(test)]` items and `mod x;` files): a test may use
///   whatever it checks.
#[test]
fn no_source_file_uses_one_that_uses_it_back() {
    let crates = use_edges();
    let edges: usize = crates.iter().map(Vec::len).sum();
    assert!(edges > 100, "found only {edges} uses between source files");
    let found: Vec<String> = crates
        .iter()
        .flat_map(|edges| circles(edges))
        .map(|c| {
            let first = &c[0].0;
            let steps: Vec<String> = c.iter().map(|(f, line)| format!("{f}:{line}")).collect();
            format!("{} -> {first}", steps.join(" -> "))
        })
        .collect();
    assert!(
        found.is_empty(),
        "source files that use each other (file:line of each use; move the shared item to \
         where it belongs, or to a module both use): {found:#?}"
    );
}

/// The `key = value` entries of each `[prefix.*]` table of a Cargo.toml, by
/// table name after the prefix, with comments and spaces left out (a value
/// over several lines joined).
fn toml_tables(text: &str, prefix: &str) -> Vec<(String, Vec<String>)> {
    let mut tables: Vec<(String, Vec<String>)> = Vec::new();
    let mut inside = false;
    let mut pending = String::new();
    for line in text.lines() {
        let mut quoted = false;
        let code: String = line
            .chars()
            .take_while(|&ch| {
                quoted ^= ch == '"';
                quoted || ch != '#'
            })
            .filter(|ch| !ch.is_whitespace())
            .collect();
        if pending.is_empty() && code.starts_with('[') {
            let name = code.trim_matches(|ch| ch == '[' || ch == ']');
            inside = name
                .strip_prefix(prefix)
                .is_some_and(|n| n.starts_with('.'));
            if inside {
                tables.push((name[prefix.len() + 1..].to_owned(), Vec::new()));
            }
            continue;
        }
        if !inside || code.is_empty() {
            continue;
        }
        pending.push_str(&code);
        let open = pending.matches(['[', '{']).count();
        let close = pending.matches([']', '}']).count();
        if open == close {
            tables
                .last_mut()
                .unwrap()
                .1
                .push(std::mem::take(&mut pending));
        }
    }
    for (_, entries) in &mut tables {
        entries.sort();
    }
    tables.sort();
    tables
}

/// mocap-link is a workspace of its own (Zenoh's build), so it cannot
/// inherit `[workspace.lints]`: its `[lints.*]` must say the same.
#[test]
fn mocap_link_lints_are_the_workspace_lints() {
    let read = |path: &str| fs::read_to_string(root().join(path)).unwrap();
    let workspace = toml_tables(&read("Cargo.toml"), "workspace.lints");
    let link = toml_tables(&read("tools/mocap-link/Cargo.toml"), "lints");
    assert!(
        workspace.iter().map(|(_, e)| e.len()).sum::<usize>() > 10,
        "found only {workspace:?} in Cargo.toml"
    );
    let flat = |tables: &[(String, Vec<String>)]| -> Vec<String> {
        tables
            .iter()
            .flat_map(|(t, entries)| entries.iter().map(move |e| format!("[{t}] {e}")))
            .collect()
    };
    let (workspace, link) = (flat(&workspace), flat(&link));
    let missing: Vec<&String> = workspace.iter().filter(|e| !link.contains(e)).collect();
    let extra: Vec<&String> = link.iter().filter(|e| !workspace.contains(e)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "tools/mocap-link/Cargo.toml's [lints.*] must be the root Cargo.toml's \
         [workspace.lints.*]; missing there: {missing:#?}; only there: {extra:#?}"
    );
}

/// mocap-cli's names are reached through their modules
/// (`mocap_cli::net::Link`) and the few in `mocap_cli::prelude`: its root
/// re-exports nothing, so a name has one path.
#[test]
fn mocap_cli_root_re_exports_nothing() {
    let lib = fs::read_to_string(root().join("crates/mocap-cli/src/lib.rs")).unwrap();
    let code = code_only(&lib);
    let flat: Vec<&str> = code
        .lines()
        .filter(|l| l.trim_start().starts_with("pub use"))
        .collect();
    assert!(
        flat.is_empty(),
        "crates/mocap-cli/src/lib.rs re-exports names (make them reachable through their \
         module, or add them to prelude.rs when nearly every tool uses them): {flat:#?}"
    );
    assert!(
        code.contains("pub mod prelude;"),
        "mocap-cli has no prelude"
    );
}

/// The circle test's reader, on code written to trip it: paths in strings,
/// comments and char literals are not paths; use trees bind what rustc binds.
#[test]
fn the_circle_reader_sees_paths_as_rustc_does() {
    let code = code_only(
        "let s = \"crate::x\"; // crate::y\nlet c = '\\''; let r = br#\"super::z\"#; crate::w::f();",
    );
    for hidden in ["crate::x", "crate::y", "super::z"] {
        assert!(!code.contains(hidden), "{hidden} in {code:?}");
    }
    assert!(code.contains("crate::w::f();"), "{code:?}");
    assert_eq!(code.lines().count(), 2);

    let toks = tokens("crate::{a::{self, B}, c as d, e::*, f as _};");
    let mut tree = Vec::new();
    use_tree(&toks, &mut 0, &[], &mut tree);
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    let name = |n: &str| Some(n.to_owned());
    assert_eq!(
        tree,
        [
            (path("crate::a"), name("a")),
            (path("crate::a::B"), name("B")),
            (path("crate::c"), name("d")),
            (path("crate::e"), None),
            (path("crate::f"), None),
        ]
    );

    let edge = |f: &str, t: &str, line| (f.to_owned(), t.to_owned(), line);
    let edges = [
        edge("a", "b", 1),
        edge("b", "c", 2),
        edge("c", "a", 3),
        edge("c", "d", 4),
    ];
    let found = circles(&edges);
    assert_eq!(
        found,
        [vec![
            ("a".to_owned(), 1),
            ("b".to_owned(), 2),
            ("c".to_owned(), 3)
        ]]
    );
    assert!(circles(&edges[1..]).is_empty());
}
