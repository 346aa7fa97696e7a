//! The README's "library in five lines", compiled and run. The test reads
//! the README's `rust` block and checks that it is, line for line, the
//! body of [`snippet`] (between the markers, less four spaces of indent),
//! then runs `snippet` from the repository root, where the README's
//! relative path points. One test in this binary: it alone changes the
//! working directory.

use std::path::Path;

#[rustfmt::skip]
fn snippet() -> Result<(), hurray_reader::Error> {
    // README BEGIN
    use hurray_reader::{MappedFile, Options};

    let mapped = MappedFile::open("fixtures/csc_worked_example.hry", Options::default())?;
    let file = mapped.file()?;                        // header, trailer, index, KV: nothing else
    let a = file.tensor("A")?.csc::<f32>()?;          // strict: storage invariants checked once
    assert_eq!(a.get(2, 1)?, Some(&4.0));             // binary search; Ok(None) = implicit zero
    for (row, value) in a.column(3)? { println!("A[{row}, 3] = {value}"); }
    // README END
    Ok(())
}

/// The lines of `text` strictly between the line equal to `begin` and the
/// line equal to `end` (compared trimmed).
fn between<'t>(text: &'t str, begin: &str, end: &str) -> Vec<&'t str> {
    let mut lines = text.lines().skip_while(|l| l.trim() != begin);
    assert!(lines.next().is_some(), "no line {begin:?}");
    lines.take_while(|l| l.trim() != end).collect()
}

#[test]
fn readme_snippet_is_this_code_and_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let in_readme = between(&readme, "```rust", "```");
    let here = include_str!("readme.rs");
    let in_test: Vec<&str> = between(here, "// README BEGIN", "// README END")
        .into_iter()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect();
    assert_eq!(
        in_readme, in_test,
        "README.md's rust block and tests/readme.rs's snippet differ"
    );
    assert_eq!(in_readme.len(), 7);
    std::env::set_current_dir(&root).unwrap();
    snippet().unwrap();
}
