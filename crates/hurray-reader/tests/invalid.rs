//! The malformed-file corpus `fixtures/invalid/` (written by
//! `cargo run -p hurray-writer --example make_invalid -- fixtures/invalid`):
//! every file breaks exactly one rule, and `manifest.json` says at which
//! stage a strict reader must reject it and with which error.
//!
//! The error must also cite the rule the file breaks: its `rule()` (which
//! `support::corpus::located` requires to end the message) equals the
//! manifest's `spec`, or begins with it and goes on with a separator (`;`,
//! `:`, `,`, a space) — e.g. a NOTES.md decision appended to the spec
//! section.
//!
//! Stages: `open` (`HurrayFile::parse` fails), `tensor` (`file.tensor(name)`
//! fails), `data` (`tensor.validate_data()` fails), `file` (only
//! `file.validate()` fails). Entries carrying `known_gap` document a place
//! where the reader does not (yet) give the expected answer; they are
//! reported, not failed. Set `HURRAY_INVALID_VERBOSE=1` to print every
//! file's outcome.

mod support {
    pub mod corpus;
}

#[allow(dead_code)]
#[path = "../../hurray-writer/examples/make_invalid/main.rs"]
mod make_invalid;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use hurray_reader::{AlignedBytes, Error, Field, HurrayFile, Location, Number, Options, Scope};
use serde_json::Value as Json;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid")
}

/// What happened to a file: the stage that failed and its error, or `None`
/// when every stage passed.
fn outcome(bytes: &[u8], offending: Option<&str>) -> Option<(&'static str, Error)> {
    let file = match HurrayFile::parse(bytes, Options::strict()) {
        Ok(f) => f,
        Err(e) => return Some(("open", e)),
    };
    // The offending tensor first, then every other one in index order.
    let mut names: Vec<&str> = offending.into_iter().collect();
    names.extend(
        file.entries()
            .iter()
            .map(|e| e.name())
            .filter(|n| Some(*n) != offending),
    );
    let mut tensors = Vec::new();
    for name in &names {
        match file.tensor(name) {
            Ok(t) => tensors.push(t),
            Err(e) => return Some(("tensor", e)),
        }
    }
    for t in &tensors {
        if let Err(e) = t.validate_data() {
            return Some(("data", e));
        }
    }
    file.validate().err().map(|e| ("file", e))
}

/// The variant name: the `Debug` form up to the first space or `{`.
fn variant(e: &Error) -> String {
    let debug = format!("{e:?}");
    debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned()
}

/// Whether the cited rule is the manifest's `spec`, or that reference
/// followed by more text after a separator.
fn cites(rule: &str, spec: &str) -> bool {
    match rule.strip_prefix(spec) {
        Some(rest) => rest.is_empty() || rest.starts_with([';', ':', ',', ' ']),
        None => false,
    }
}

#[test]
fn cites_needs_the_whole_section_name() {
    assert!(cites(
        "file-format.md § Index Section; NOTES.md 'data_length'",
        "file-format.md § Index Section"
    ));
    assert!(!cites("metadata.md § Buffer Tables", "metadata.md § Buffer Table"));
    // A subsection path cites its section too.
    assert!(cites(
        "file-format.md § Index Section › Index Encoding",
        "file-format.md § Index Section"
    ));
}

#[test]
fn every_invalid_file_is_rejected_as_the_manifest_says() {
    let text = std::fs::read_to_string(dir().join("manifest.json")).expect("fixtures/invalid/manifest.json");
    let manifest: Json = serde_json::from_str(&text).expect("manifest JSON");
    let files = manifest["files"].as_array().expect("files");
    let verbose = std::env::var_os("HURRAY_INVALID_VERBOSE").is_some();

    let mut failures = Vec::new();
    let mut gaps = Vec::new();
    let mut fixed_gaps = Vec::new();
    for entry in files {
        let name = entry["file"].as_str().expect("file");
        let stage = entry["stage"].as_str().expect("stage");
        let want_variant = entry["expect_variant"].as_str().expect("expect_variant");
        let want_field = entry["expect_field"].as_str().expect("expect_field");
        let want_spec = entry["spec"].as_str().expect("spec");
        let offending = entry["offending_tensor"].as_str();
        let gap = entry["known_gap"].as_str();
        let bytes = support::corpus::bytes_of(&dir().join(name));

        let got = catch_unwind(AssertUnwindSafe(|| outcome(&bytes, offending)));
        let verdict = match &got {
            Err(_) => Err("the reader panicked".to_string()),
            Ok(None) => Err("accepted at every stage".to_string()),
            Ok(Some((got_stage, e))) => {
                let text = e.to_string();
                let got_variant = variant(e);
                let mut problems = Vec::new();
                if *got_stage != stage {
                    problems.push(format!("stage {got_stage}, expected {stage}"));
                }
                if got_variant != want_variant {
                    problems.push(format!("variant {got_variant}, expected {want_variant}"));
                }
                if let Err(why) = support::corpus::located(e) {
                    problems.push(why);
                }
                if !names(&text, want_field) {
                    problems.push(format!("the message does not name '{want_field}'"));
                }
                // `member 'm1': shard_offset`: the message names the member,
                // field() the field.
                let field_only = want_field.rsplit(": ").next().unwrap_or(want_field);
                let got_field = e.field().map(|f| f.to_string());
                if got_field.as_deref() != Some(field_only) {
                    problems.push(format!("field() is {got_field:?}, expected '{field_only}'"));
                }
                match e.rule() {
                    Some(rule) if cites(rule, want_spec) => {}
                    Some(rule) => problems.push(format!("the error cites '{rule}', the manifest '{want_spec}'")),
                    None => problems.push(format!("the error cites no rule, the manifest '{want_spec}'")),
                }
                if problems.is_empty() {
                    Ok(())
                } else {
                    Err(format!("{}: {text}", problems.join("; ")))
                }
            }
        };
        if verbose {
            match &got {
                Ok(Some((s, e))) => println!("{name}: [{s}] {} | {e}", variant(e)),
                Ok(None) => println!("{name}: ACCEPTED"),
                Err(_) => println!("{name}: PANIC"),
            }
        }
        match (verdict, gap) {
            (Ok(()), None) => {}
            (Ok(()), Some(_)) => fixed_gaps.push(name.to_owned()),
            (Err(why), Some(gap)) => gaps.push(format!("{name}: {gap}\n    now: {why}")),
            (Err(why), None) => failures.push(format!("{name}: {why}")),
        }
    }

    if !gaps.is_empty() {
        println!("known gaps ({}):", gaps.len());
        for g in &gaps {
            println!("  {g}");
        }
    }
    if !fixed_gaps.is_empty() {
        println!("known gaps that now pass (remove their known_gap): {fixed_gaps:?}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} files not rejected as expected:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    assert!(
        files.len() >= 100,
        "the corpus has {} files, expected at least 100",
        files.len()
    );
}

/// The bases the corpus breaks are valid: every stage passes, so each
/// corpus file breaks only the rule it names.
#[test]
fn the_unbroken_bases_are_valid() {
    for (name, bytes) in make_invalid::bases() {
        let bytes = AlignedBytes::from_slice(&bytes);
        if let Some((stage, e)) = outcome(&bytes, None) {
            panic!("base '{name}' is rejected at stage {stage}: {e}");
        }
    }
}

/// Quantization scales and zero points read as numbers in the message
/// (`inf`, `NaN`, `0.0`, `200`), not as their bits.
#[test]
fn quantization_numbers_are_shown_as_numbers() {
    for (file, value, shown) in [
        (
            "quant_per_tensor_scale_inf.hry",
            Number::float(f64::INFINITY),
            "value inf is not allowed",
        ),
        (
            "quant_per_tensor_scale_nan.hry",
            Number::float(f64::NAN),
            "value NaN is not allowed",
        ),
        (
            "quant_per_tensor_scale_zero.hry",
            Number::float(0.0),
            "value 0.0 is not allowed",
        ),
        (
            "quant_per_tensor_zero_point_range.hry",
            Number::Int(200),
            "value 200 is not allowed",
        ),
        (
            "quant_per_channel_scale_value_zero.hry",
            Number::float(0.0),
            "value 0.0 is not allowed",
        ),
    ] {
        let bytes = AlignedBytes::read(dir().join(file)).unwrap();
        let (_, err) = outcome(&bytes, Some("t")).expect(file);
        assert!(
            matches!(&err, Error::InvalidNumber { value: v, .. } if *v == value),
            "{file}: {err:?}"
        );
        assert!(err.to_string().contains(shown), "{file}: {err}");
    }
}

/// Whether `text` names `field` as whole words: alone or as a part of a
/// dotted or indexed name (`name_length` in `index_entry[0].name_length`,
/// `indices` in `indices[9]`), never as part of a word (`scale` in
/// `scales[1]`, `_reserved` in `statistics._reserved2`).
fn names(text: &str, field: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(field).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + field.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// The block table holds `seq_ptr[num_seqs]` entries, read from the data
/// once the buffers are placed: strict names a larger table's `byte_size`;
/// permissive accepts it, and the table holds the 2 entries the sequences
/// use, not the 3 its size would allow.
#[test]
fn block_table_is_sized_by_seq_ptr() {
    let bytes = AlignedBytes::read(dir().join("paged_block_table_size.hry")).unwrap();
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert!(matches!(
        strict.tensor("t"),
        Err(Error::BufferSize {
            at: Location {
                field: Field { index: Some(1), .. },
                ..
            },
            role: "block_table",
            byte_size: 12,
            expected: 8,
            exact: true,
            ..
        })
    ));
    let permissive = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = permissive.tensor("t").unwrap();
    assert_eq!(t.buffer(1).unwrap().len(), 2);
    t.validate_data().unwrap();
}

/// A data error that names an element, `seq_ptr[2] at offset 12296`, points
/// at that element: its buffer's offset plus `k` elements of the buffer's
/// width (buffers of whole-byte elements), over every `data` file of the
/// corpus.
#[test]
fn data_errors_point_at_the_element_they_name() {
    let text = std::fs::read_to_string(dir().join("manifest.json")).expect("fixtures/invalid/manifest.json");
    let manifest: Json = serde_json::from_str(&text).expect("manifest JSON");
    let (mut checked, mut problems) = (0, Vec::new());
    for entry in manifest["files"].as_array().expect("files") {
        if entry["stage"] != "data" {
            continue;
        }
        let name = entry["file"].as_str().expect("file");
        let bytes = AlignedBytes::read(dir().join(name)).unwrap();
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        let t = file.tensor(entry["offending_tensor"].as_str().unwrap_or("t")).unwrap();
        let Err(e) = t.validate_data() else {
            problems.push(format!("{name}: accepted"));
            continue;
        };
        // "<array>[<k>] at offset <n>"
        let text = e.to_string();
        let Some((array, k, n)) = text.split(": ").find_map(|part| {
            let (element, n) = part.split_once(" at offset ")?;
            let (array, k) = element.strip_suffix(']')?.split_once('[')?;
            Some((array, k.parse::<u64>().ok()?, n.parse::<u64>().ok()?))
        }) else {
            continue;
        };
        let Some(b) = t.buffers().iter().find(|b| b.role().as_str() == array) else {
            continue;
        };
        if b.is_empty() || b.byte_size() % b.len() != 0 {
            continue; // packed sub-byte elements
        }
        checked += 1;
        let want = b.file_offset() + k * (b.byte_size() / b.len());
        if n != want {
            problems.push(format!("{name}: {text} (element {k} of {array} is at {want})"));
        }
    }
    assert!(checked >= 15, "only {checked} element errors seen");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A non-zero padding byte anywhere in a gap is named at its own offset:
/// the check ORs the gap in chunks of 256 bytes, then finds the byte in
/// the first chunk that has one. The worked example's gap after `values`
/// is [4116, 8192); it follows tensor A's buffer, so the error names A. A
/// gap after the KV section names no tensor.
#[test]
fn padding_error_names_the_first_nonzero_byte_of_the_gap() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
    let clean = std::fs::read(path).unwrap();
    for (set, first) in [
        (&[4116][..], 4116),
        (&[4116 + 255], 4116 + 255),
        (&[4116 + 256], 4116 + 256),
        (&[5116, 7000], 5116),
        (&[8191], 8191),
    ] {
        let mut bytes = clean.clone();
        for &at in set {
            bytes[at] = 0x40;
        }
        let bytes = AlignedBytes::from_slice(&bytes);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        let e = file.check_padding().unwrap_err();
        assert!(
            matches!(e, Error::Reserved {
                at: Location { offset, .. },
                value: 0x40,
                ..
            } if offset == first),
            "{set:?}: {e:?}"
        );
        assert_eq!(e.tensor(), Some("A"));
        assert!(
            e.to_string()
                .starts_with(&format!("tensor 'A': padding at offset {first}: ")),
            "{e}"
        );
    }
    let bytes = AlignedBytes::read(dir().join("padding_after_kv_section.hry")).unwrap();
    let e = HurrayFile::parse(&bytes, Options::strict())
        .unwrap()
        .check_padding()
        .unwrap_err();
    assert_eq!(e.tensor(), None);
    assert!(e.to_string().starts_with("padding at offset 8209: "), "{e}");
}

/// Padding bits of a packed type: the error gives the padding bits that are
/// set (bit 7: 0x80), not the whole byte with the elements' bits (0x85).
#[test]
fn padding_bits_error_gives_only_the_padding_bits() {
    let bytes = AlignedBytes::read(dir().join("data_bool_padding_bits.hry")).unwrap();
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let e = file.tensor("t").unwrap().validate_data().unwrap_err();
    assert!(
        matches!(
            e,
            Error::Reserved {
                at: Location { offset: 4096, .. },
                value: 0x80,
                byte: None,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains("buffer[0].padding bits at offset 4096: padding bits are set (0x80); they must be zero"),
        "{e}"
    );
}

/// The index and the descriptor disagree on `descriptor_length`: the error
/// points at the index entry's field (8211, as both shared corpora do), and
/// gives where the descriptor's copy is (70).
#[test]
fn descriptor_length_mismatch_points_at_the_index_entry() {
    let bytes = AlignedBytes::read(dir().join("descriptor_length_differs_from_index.hry")).unwrap();
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let e = file.tensor("t").unwrap_err();
    assert_eq!(
        e,
        Error::DescriptorLengthMismatch {
            at: Location {
                scope: Scope::Tensor("t".into()),
                field: Field::member("index_entry", 0, "descriptor_length"),
                offset: 8211,
                rule: "file-format.md § Index Section › Index Encoding: they MUST agree",
            },
            descriptor_offset: 70,
            index_value: 69,
            descriptor_value: 61,
        }
    );
    assert_eq!(
        e.field().map(|f| f.to_string()).as_deref(),
        Some("index_entry[0].descriptor_length")
    );
    assert_eq!(
        file.entries()[0].field_offset(hurray_reader::EntryField::DescriptorLength),
        8211
    );
}
