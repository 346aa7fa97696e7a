//! The committed malformed-file corpus (`fixtures/invalid/`) is exactly what
//! the generator writes today: a change to the writer (or the generator)
//! that moves a byte fails here until
//! `cargo run -p hurray-writer --example make_invalid -- fixtures/invalid`
//! is rerun and the new files are reviewed and committed.

#[allow(dead_code)]
#[path = "../examples/make_invalid.rs"]
mod make_invalid;

use std::path::Path;

#[test]
fn committed_invalid_corpus_matches_the_generator() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    let fresh = tempfile::tempdir().expect("tempdir");
    let manifest = make_invalid::generate(fresh.path()).expect("generate");
    let mut names: Vec<String> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["file"].as_str().expect("file").to_owned())
        .collect();
    names.push("manifest.json".into());
    for name in &names {
        let want = std::fs::read(fresh.path().join(name)).expect("fresh file");
        let got = std::fs::read(committed.join(name)).unwrap_or_else(|e| panic!("fixtures/invalid/{name}: {e}"));
        assert!(
            got == want,
            "fixtures/invalid/{name} differs from the generator's output: regenerate the corpus"
        );
    }
    // No stale files: everything committed is something the generator writes.
    for entry in std::fs::read_dir(&committed).expect("fixtures/invalid") {
        let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
        assert!(
            name == "README.md" || names.contains(&name),
            "fixtures/invalid/{name} is not written by the generator: remove it or regenerate"
        );
    }
}
