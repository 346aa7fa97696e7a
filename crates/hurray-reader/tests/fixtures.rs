//! The project's own fixtures (`fixtures/`, written by `hurray-writer`'s
//! `make_fixtures` example) read back exactly as their manifest says.

mod support {
    pub mod corpus;
}

use std::path::Path;

use hurray_reader::{Error, HurrayFile, Options};
use support::corpus::{compare_container, compare_tensor, full_check, read};

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

/// A position past the index is its own error: no tensor is named (it used
/// to read `tensor '': index position 5 is out of range`).
#[test]
fn tensor_at_past_the_index_names_no_tensor() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let bytes = read(&dir, "csc_worked_example.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    assert_eq!(file.len(), 1);
    let e = file.tensor_at(5).unwrap_err();
    assert_eq!(e, Error::PositionNotFound { position: 5, count: 1 });
    assert_eq!(e.tensor(), None);
    assert_eq!(e.to_string(), "no index entry at position 5: the index has 1 entries");
    assert_eq!(
        file.descriptor_at(1).unwrap_err(),
        Error::PositionNotFound { position: 1, count: 1 }
    );
    assert_eq!(file.tensor_at(0).unwrap().name(), "A");
}

/// A lookup with the wrong number of coordinates names the rank (it used to
/// read `coordinate count 1 is out of range, the coordinate count count is 2`).
#[test]
fn lookups_outside_the_shape_name_the_rank_or_the_dimension() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let bytes = read(&dir, "sparse_formats.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let wrong = |tensor: &str, len: u64, expected: u64| Error::LengthMismatch {
        tensor: tensor.into(),
        what: "index",
        len,
        expected_name: "rank",
        expected,
    };
    let coo = file.tensor("m.coo").unwrap().coo::<f64>().unwrap();
    let e = coo.get(&[1]).unwrap_err();
    assert_eq!(e, wrong("m.coo", 1, 2));
    assert_eq!(e.to_string(), "tensor 'm.coo': index has length 1, expected rank = 2");
    assert_eq!(coo.get(&[0, 3]).unwrap(), Some(&-2.0));
    let dense = file.tensor("m.dense").unwrap().dense::<f64>().unwrap();
    assert_eq!(dense.get(&[1, 2, 3]).unwrap_err(), wrong("m.dense", 3, 2));
    assert_eq!(dense.get(&[1, 2]).unwrap(), &3.25);
    let csf = file.tensor("csf").unwrap().csf::<f32>().unwrap();
    assert_eq!(csf.get(&[0, 0]).unwrap_err(), wrong("csf", 2, 3));
    assert_eq!(csf.get(&[0, 0, 1]).unwrap(), Some(&1.0));

    // A coordinate outside the shape names its dimension (it used to read
    // `coordinate 6 is out of range, the coordinate count is 6`).
    let outside = |tensor: &str, axis, value, bound| Error::CoordinateArgument {
        tensor: tensor.into(),
        axis,
        value,
        bound,
    };
    let e = coo.get(&[5, 0]).unwrap_err();
    assert_eq!(e, outside("m.coo", 0, 5, 5));
    assert_eq!(
        e.to_string(),
        "tensor 'm.coo': coordinate 0 is 5, must be < shape[0] = 5"
    );
    assert_eq!(dense.get(&[1, 6]).unwrap_err(), outside("m.dense", 1, 6, 6));
    assert_eq!(csf.get(&[1, 3, 0]).unwrap_err(), outside("csf", 1, 3, 3));
    assert_eq!(e.tensor(), Some("m.coo"));
    assert_eq!((e.field(), e.offset(), e.rule()), (None, None, None));
}
