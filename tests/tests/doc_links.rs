//! Every link in the README, the book (`docs/src/`) and the changelog resolves: a relative
//! link names a file of the repository (and, after `#`, a heading in it), and every
//! `{{#include}}` of the book names a file (and, after `:`, an anchor in it). The README's
//! links are all relative, so they resolve on a clone with no network; the book's links to
//! other sites are left alone (no test here resolves a host name).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// The Markdown of `text` outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The targets of the inline links `[label](target)` and reference definitions
/// `[label]: target` in `text`, with inline code left out.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text).lines() {
        let line: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        if let Some(rest) = line.strip_prefix('[')
            && let Some((_, target)) = rest.split_once("]: ")
        {
            out.push(target.trim().to_owned());
            continue;
        }
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push(after[..end].to_owned());
            rest = &after[end..];
        }
    }
    out
}

/// A heading's anchor as GitHub and mdBook make it.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    prose(&text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| slug(h.trim_start_matches('#')))
        .collect()
}

/// The broken links of the Markdown file `file` (relative to the root); `external`: whether
/// links to other sites are allowed.
fn broken(file: &str, external: bool) -> Vec<String> {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let dir = path.parent().expect("a folder");
    let mut bad = Vec::new();
    for link in links(&text) {
        if link.starts_with("http://") || link.starts_with("https://") {
            if !external {
                bad.push(format!("{file}: {link} is not in the repository"));
            }
            continue;
        }
        let (target, anchor) = link.split_once('#').unwrap_or((&link, ""));
        let target = if target.is_empty() {
            path.clone()
        } else {
            dir.join(target)
        };
        if !target.exists() {
            bad.push(format!("{file}: {link}: no such file"));
        } else if !anchor.is_empty() && !anchors(&target).contains(&anchor.to_owned()) {
            bad.push(format!("{file}: {link}: no such heading"));
        }
    }
    for include in text.split("{{#include ").skip(1) {
        let spec = include.split("}}").next().unwrap_or_default().trim();
        let (target, anchor) = spec.split_once(':').unwrap_or((spec, ""));
        let target = dir.join(target);
        let body = std::fs::read_to_string(&target).unwrap_or_default();
        if !target.exists() {
            bad.push(format!("{file}: includes {spec}: no such file"));
        } else if !anchor.is_empty() && !body.contains(&format!("ANCHOR: {anchor}")) {
            bad.push(format!("{file}: includes {spec}: no such anchor"));
        }
    }
    bad
}

#[test]
fn every_link_in_the_readme_resolves_in_the_repository() {
    let bad = broken("README.md", false);
    assert!(bad.is_empty(), "{bad:#?}");
    assert!(
        links(&std::fs::read_to_string(root().join("README.md")).unwrap()).len() >= 10,
        "the link finder found too few links to be working"
    );
}

#[test]
fn every_link_and_include_in_the_book_and_the_changelog_resolves() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    let mut files = vec!["CHANGELOG.md".to_owned(), "docs/src/SUMMARY.md".to_owned()];
    files.extend(links(&summary).iter().map(|l| format!("docs/src/{l}")));
    assert!(files.len() >= 8, "the book lists {files:?}");
    let bad: Vec<String> = files.iter().flat_map(|f| broken(f, true)).collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn the_link_finder_sees_a_broken_link() {
    let text = "see [a](no/such/file.md) and `[b](in/code.md)`\n```\n[c](fenced.md)\n```\n";
    assert_eq!(links(text), vec!["no/such/file.md".to_owned()]);
    assert_eq!(slug("Playing from a browser"), "playing-from-a-browser");
    assert_eq!(
        slug("Push what you touch: hand-off"),
        "push-what-you-touch-hand-off"
    );
}

#[test]
fn the_readme_is_a_front_page_of_at_most_250_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let n = readme.lines().count();
    assert!(n <= 250, "the README has {n} lines");
}
