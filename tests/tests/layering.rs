//! The modules of each library crate (`framework`, `net`, `game`) form layers: no module
//! reaches, through `crate::` paths, a module that reaches back to it. Names imported from
//! the crate root are traced to the module that defines them (through the root's `pub use`
//! lines), so a re-export does not hide a cycle. Modules are compared at the top level
//! (`record::format` counts as `record`), as a reader of the crate's folders sees them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every module file, by module path ("group", "record::replay").
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(src.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let full = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}::{name}")
            };
            if path.is_dir() {
                stack.push((path, full));
            } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" {
                let module = if name == "mod" { prefix.clone() } else { full };
                out.insert(module, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

/// The source with comments and test modules cut away.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths after each `crate::` in `text`, braces expanded one level:
/// `crate::{a::B, C}` gives "a::B" and "C".
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + 7..];
        if let Some(inner) = rest.strip_prefix('{') {
            let end = inner.find('}').unwrap_or(inner.len());
            for item in inner[..end].split(',') {
                let item = item.trim();
                if !item.is_empty() {
                    out.push(item.to_owned());
                }
            }
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            out.push(rest[..end].trim_end_matches(':').to_owned());
        }
    }
    out
}

/// The module a `crate::` path leads to: the longest module-path prefix, or, for a name
/// the root re-exports, the module it comes from.
fn target(
    path: &str,
    mods: &BTreeMap<String, String>,
    root: &BTreeMap<String, String>,
) -> Option<String> {
    let segments: Vec<&str> = path.split("::").map(str::trim).collect();
    for n in (1..=segments.len()).rev() {
        let candidate = segments[..n].join("::");
        if mods.contains_key(&candidate) {
            return Some(candidate);
        }
    }
    root.get(segments[0]).cloned()
}

/// The import graph between the top-level modules of the crate in `dir` (`framework`,
/// `net`, `game`), from the source text.
fn graph(dir: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(dir)
        .join("src");
    let mods = modules(&src);
    // Names the crate root re-exports, and the module each comes from.
    let lib = code(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let mut root = BTreeMap::new();
    for stmt in lib.split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        if !mods.contains_key(module) {
            continue;
        }
        for name in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            root.insert(name.trim().to_owned(), module.to_owned());
        }
    }
    let top = |m: &str| m.split("::").next().unwrap_or(m).to_owned();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, text) in &mods {
        let deps = edges.entry(top(module)).or_default();
        for p in crate_paths(&code(text)) {
            if let Some(t) = target(&p, &mods, &root)
                && top(&t) != top(module)
            {
                deps.insert(top(&t));
            }
        }
    }
    edges
}

/// Depth-first search for a cycle in `edges`, returning it.
fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.to_owned());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_owned());
        for d in edges.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|m| visit(m, edges, &mut Vec::new(), &mut done))
}

/// Fails on an import cycle among the top-level modules of the crate in `dir`; `edge` is
/// one import the scan must find (so a scan that reads nothing cannot pass).
fn assert_layered(dir: &str, edge: (&str, &str)) {
    let edges = graph(dir);
    assert!(
        edges.get(edge.0).is_some_and(|d| d.contains(edge.1)),
        "the dependency scan of {dir} did not find {} -> {}: {edges:#?}",
        edge.0,
        edge.1
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!(
            "import cycle in {dir}/src: {}\nall edges: {edges:#?}",
            cycle.join(" -> ")
        );
    }
}

#[test]
fn framework_modules_have_no_import_cycle() {
    assert_layered("framework", ("group", "controller"));
}

#[test]
fn net_modules_have_no_import_cycle() {
    assert_layered("net", ("manager", "connection"));
}

#[test]
fn game_modules_have_no_import_cycle() {
    assert_layered("game", ("game", "kinds"));
}

#[test]
fn a_cycle_is_found() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
