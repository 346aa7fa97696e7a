//! The project's own fixtures (`fixtures/`, written by `hurray-writer`'s
//! `make_fixtures` example) read back exactly as their manifest says.

mod common;

use std::path::Path;

use common::{compare_container, compare_tensor, full_check, read};
use hurray_reader::{HurrayFile, Options};

#[test]
fn fixtures_agree_with_their_manifest() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("fixtures/manifest.json");
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut problems = Vec::new();
    for entry in manifest["files"].as_array().unwrap() {
        let name = entry["file"].as_str().unwrap();
        let bytes = read(&dir, name);
        if let Err(e) = full_check(&bytes) {
            problems.push(format!("{name}: rejected: {e}"));
            continue;
        }
        let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
        problems.extend(
            compare_container(&file, entry)
                .into_iter()
                .map(|p| format!("{name}: {p}")),
        );
        let tensors = entry["tensors"].as_array().unwrap();
        assert_eq!(tensors.len(), file.len(), "{name}: tensor count");
        for t in tensors {
            problems.extend(compare_tensor(&file, t).into_iter().map(|p| format!("{name}: {p}")));
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
