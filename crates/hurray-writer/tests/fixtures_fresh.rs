//! The committed fixtures are exactly what the generator writes today: a
//! change to the writer (or the generator) that moves a byte fails here
//! until `cargo run -p hurray-writer --example make_fixtures -- fixtures`
//! is rerun and the new files are reviewed and committed.

#[allow(dead_code)]
#[path = "../examples/make_fixtures.rs"]
mod make_fixtures;

use std::path::Path;

#[test]
fn committed_fixtures_match_the_generator() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let fresh = tempfile::tempdir().expect("tempdir");
    let manifest = make_fixtures::generate(fresh.path()).expect("generate");
    let mut names: Vec<String> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["file"].as_str().expect("file").to_owned())
        .collect();
    names.push("manifest.json".into());
    for name in names {
        let want = std::fs::read(fresh.path().join(&name)).expect("fresh file");
        let got = std::fs::read(committed.join(&name)).unwrap_or_else(|e| panic!("fixtures/{name}: {e}"));
        assert!(
            got == want,
            "fixtures/{name} differs from the generator's output: regenerate the fixtures"
        );
    }
}
