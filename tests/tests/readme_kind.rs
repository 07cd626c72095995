//! The README's stateful kind (a pose, a seeded decision, saved state, its limits) stays short: at
//! most 40 lines of code once `rustfmt` has formatted it (blank lines and comments not
//! counted), from its `use` lines to its registration. It also runs, as a doctest.

use std::process::Command;

#[test]
fn the_readmes_stateful_kind_is_at_most_40_formatted_lines() {
    let readme = include_str!("../../README.md");
    let intro = readme
        .find("A kind with a pose, a seeded decision and saved state")
        .expect("the README introduces the stateful kind");
    let start = readme[intro..].find("```rust").unwrap() + intro + "```rust".len();
    let end = readme[start..].find("```").unwrap() + start;
    // The kind: its lines up to the world that uses it, hidden doctest lines left out.
    let lines: Vec<&str> = readme[start..end]
        .lines()
        .filter(|l| !l.starts_with("# "))
        .take_while(|l| !l.starts_with("let mut world"))
        .collect();
    let first_statement = lines
        .iter()
        .position(|l| l.starts_with("let mut kinds"))
        .expect("the kind is registered");
    // Items stay at the top; the registration goes into a function, as the doctest does.
    let source = format!(
        "{}\nfn main() -> Result<(), lanyard::Error> {{\n{}\nOk(())\n}}\n",
        lines[..first_statement].join("\n"),
        lines[first_statement..].join("\n")
    );
    let path = std::env::temp_dir().join(format!("lanyard-readme-kind-{}.rs", std::process::id()));
    std::fs::write(&path, source).unwrap();
    let status = Command::new("rustfmt")
        .args(["--edition", "2024"])
        .arg(&path)
        .status()
        .expect("rustfmt runs (it comes with the toolchain)");
    assert!(status.success());
    let formatted = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let code: Vec<&str> = formatted
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("//"))
        .collect();
    // Less the three lines of the function around the registration.
    let count = code.len() - 3;
    eprintln!("the README's stateful kind: {count} formatted lines");
    assert!(count <= 40, "{count} lines:\n{formatted}");
    assert!(
        count >= 25,
        "the kind was not found whole: {count} lines:\n{formatted}"
    );
}
