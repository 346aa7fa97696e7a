//! The committed generated files are exactly what the generators write
//! today: a change to the writer (or a generator) that moves a byte fails
//! here until the generator is rerun and the new files are reviewed and
//! committed:
//!
//! ```text
//! cargo run -p hurray-writer --example make_fixtures -- fixtures
//! cargo run -p hurray-writer --example make_invalid -- fixtures/invalid
//! ```

#[allow(dead_code)]
#[path = "../examples/make_fixtures.rs"]
mod make_fixtures;

#[allow(dead_code)]
#[path = "../examples/make_invalid/main.rs"]
mod make_invalid;

use std::error::Error;
use std::path::Path;

use serde_json::Value;

/// Regenerates into a temporary folder and compares, file by file, with
/// the committed `folder`; also rejects committed files no generator writes.
fn assert_fresh(folder: &str, generate: fn(&Path) -> Result<Value, Box<dyn Error>>) {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(folder);
    let fresh = tempfile::tempdir().expect("tempdir");
    let manifest = generate(fresh.path()).expect("generate");
    let mut names: Vec<String> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["file"].as_str().expect("file").to_owned())
        .collect();
    names.push("manifest.json".into());
    for name in &names {
        let want = std::fs::read(fresh.path().join(name)).expect("fresh file");
        let got = std::fs::read(committed.join(name)).unwrap_or_else(|e| panic!("{folder}/{name}: {e}"));
        assert!(
            got == want,
            "{folder}/{name} differs from the generator's output: regenerate it"
        );
    }
    for entry in std::fs::read_dir(&committed).expect(folder) {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        let generated_elsewhere = entry.path().is_dir() || name == "README.md";
        assert!(
            generated_elsewhere || names.contains(&name),
            "{folder}/{name} is not written by the generator: remove it or regenerate"
        );
    }
}

#[test]
fn committed_fixtures_match_the_generator() {
    assert_fresh("fixtures", make_fixtures::generate);
}

#[test]
fn committed_invalid_corpus_matches_the_generator() {
    assert_fresh("fixtures/invalid", make_invalid::generate);
}
