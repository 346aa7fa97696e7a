//! Annotated descriptors: every byte of every descriptor is named, in order,
//! and the fields decode to the values the views report.

mod support {
    pub mod corpus;
}

use std::path::Path;

use hurray_reader::{AlignedBytes, ElementType, Error, Field, HurrayFile, Layout, Location, Options};
use support::corpus::{corpus, read};

/// The fields of a valid descriptor tile it exactly: contiguous, in order,
/// from its first byte to its last.
fn assert_tiles(file: &HurrayFile<'_>, what: &str) {
    for e in file.entries() {
        let dump = file.dump_descriptor(e.name()).unwrap();
        assert!(dump.error.is_none(), "{what}/{}: {:?}", e.name(), dump.error);
        let mut at = e.descriptor_offset();
        for f in &dump.fields {
            assert_eq!(f.offset, at, "{what}/{}: gap or overlap before {}", e.name(), f.field);
            at += f.bytes.len() as u64;
        }
        assert_eq!(
            at,
            e.descriptor_offset() + e.descriptor_length(),
            "{what}/{}: not every byte named",
            e.name()
        );
    }
}

#[test]
fn worked_example_fields() {
    let bytes = AlignedBytes::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/csc_worked_example.hry"))
        .unwrap();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let dump = file.dump_descriptor("A").unwrap();
    let find = |f: Field| {
        dump.fields
            .iter()
            .find(|a| a.field == f)
            .unwrap_or_else(|| panic!("{f}"))
    };
    let rows: Vec<(String, u64, String)> = dump
        .fields
        .iter()
        .take(12)
        .map(|f| (f.field.to_string(), f.offset, f.meaning.clone()))
        .collect();
    let want: Vec<(String, u64, String)> = [
        ("magic", 64, "\"HRRY\""),
        ("version_major", 68, "1"),
        ("version_minor", 69, "0"),
        ("descriptor_length", 70, "109 bytes"),
        ("flags", 74, "none"),
        ("type_tag", 78, "float32"),
        ("layout_tag", 79, "csc"),
        ("rank", 80, "2"),
        ("shape[0]", 84, "4"),
        ("shape[1]", 92, "5"),
        ("byte_offset", 100, "0 bytes"),
        ("nnz", 108, "5"),
    ]
    .iter()
    .map(|&(n, o, m)| (n.to_owned(), o, m.to_owned()))
    .collect();
    assert_eq!(rows, want);
    assert_eq!(find(Field::member("buffer", 2, "byte_size")).meaning, "48 bytes");
    assert_eq!(find(Field::member("buffer", 2, "byte_size")).offset, 157);
    assert_eq!(find(Field::member("buffer", 1, "device_tag")).meaning, "CPU");
    assert_eq!(find(Field::new("buffer_count")).bytes, [3]);
    assert!(dump.tensor.is_some());
    assert_tiles(&file, "csc_worked_example");
}

#[test]
fn malformed_descriptor_keeps_what_was_read() {
    // The interop file whose tensor_b has a reserved type tag 0x47.
    let Some((dir, _)) = corpus("HURRAY_INTEROP_DIR") else {
        return;
    };
    let bytes = read(&dir, "invalid_type_tag_reserved_0x47.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let dump = file.dump_descriptor("tensor_b").unwrap();
    // The whole fixed header is read before its values are judged.
    let names: Vec<String> = dump.fields.iter().map(|f| f.field.to_string()).collect();
    assert_eq!(
        names,
        [
            "magic",
            "version_major",
            "version_minor",
            "descriptor_length",
            "flags",
            "type_tag",
            "layout_tag",
            "rank",
            // The rest of the descriptor, where the parse stopped.
            "(unread)"
        ]
    );
    let unread = dump.fields.last().unwrap();
    let entry = file.entry("tensor_b").unwrap();
    assert_eq!(
        unread.offset + unread.bytes.len() as u64,
        entry.descriptor_offset() + entry.descriptor_length()
    );
    let tag = dump.fields.iter().find(|f| f.field == Field::new("type_tag")).unwrap();
    assert_eq!((tag.bytes, tag.meaning.as_str()), (&[0x47][..], "unknown(0x47)"));
    assert!(dump.error.unwrap().to_string().contains("type_tag"));
}

#[test]
fn every_interop_descriptor_is_named_byte_for_byte() {
    let Some((dir, manifest)) = corpus("HURRAY_INTEROP_DIR") else {
        return;
    };
    for entry in manifest["files"].as_array().unwrap() {
        if entry["expect"] != "accept" {
            continue;
        }
        let name = entry["file"].as_str().unwrap();
        let bytes = read(&dir, name);
        let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
        assert_tiles(&file, name);
    }
}

/// `descriptor_at` reads a descriptor whose tensor does not resolve (a
/// values buffer 4 bytes short): what it says, and nothing past the end.
#[test]
fn descriptor_at_reads_what_tensor_at_rejects() {
    let bytes =
        AlignedBytes::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid/csc_values_size.hry"))
            .unwrap();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    assert!(matches!(
        file.tensor_at(0),
        Err(Error::BufferSize {
            at: Location {
                field: Field { index: Some(0), .. },
                ..
            },
            byte_size: 16,
            expected: 20,
            ..
        })
    ));
    let d = file.descriptor_at(0).unwrap();
    assert_eq!(d.element_type(), Some(ElementType::Float32));
    assert_eq!(d.layout(), Layout::Csc);
    assert_eq!(d.shape().collect::<Vec<_>>(), [4, 5]);
    assert_eq!(d.layout_fields().nnz(), Some(5));
    assert!(matches!(
        file.descriptor_at(1),
        Err(Error::PositionNotFound { position: 1, count: 1 })
    ));
}

/// An error inside a descriptor points at the start of a field the dump
/// lists and names it as the dump does (`quantization.block_size at offset 153`): the
/// error line can be matched with the bytes (`hurray-inspect --tensor`).
/// Over every file of `fixtures/invalid/`.
#[test]
fn descriptor_errors_point_into_a_listed_field() {
    let mut checked = 0;
    let mut problems = Vec::new();
    each_invalid_file(|path, file| {
        for entry in file.entries() {
            let dump = file.dump_descriptor(entry.name()).unwrap();
            let Some(at) = dump.error.as_ref().and_then(Error::offset) else {
                continue;
            };
            let start = entry.descriptor_offset();
            if at < start || at >= start + entry.descriptor_length() {
                continue; // a buffer, the index: not the descriptor's bytes
            }
            checked += 1;
            let error = dump.error.as_ref().unwrap().to_string();
            let listed = dump
                .fields
                .iter()
                .find(|f| f.offset <= at && at < f.offset + f.bytes.len() as u64);
            match listed {
                None => problems.push(format!("{}: {error} (offset {at}): no listed field", path.display())),
                // The error names the field as the dump lists it (an
                // error about a whole array, `shape`, names the array).
                Some(f) if f.field.name != "(unread)" && f.offset != at => problems.push(format!(
                    "{}: {error}: inside {} (at offset {}), not at its start",
                    path.display(),
                    f.field,
                    f.offset
                )),
                Some(f) if f.field.name != "(unread)" => {
                    let name = f.field.to_string();
                    let array = (f.field.index.is_some() && f.field.member.is_none()).then_some(f.field.name);
                    // `buffer[1].byte_size (row_indices) at offset 141`
                    let named =
                        |n: &str| error.contains(&format!("{n} at offset {at}")) || error.contains(&format!("{n} ("));
                    if !named(&name) && !array.is_some_and(named) {
                        problems.push(format!("{}: {error}: listed as {name}", path.display()));
                    }
                }
                Some(_) => {}
            }
        }
    });
    assert!(checked > 50, "only {checked} descriptor errors seen");
    assert!(
        problems.is_empty(),
        "{} errors point outside the listed fields or name them otherwise:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// A composite error names the member's field that breaks the rule, at the
/// offset where the member's dump lists it (`--tensor MEMBER`). Over every
/// file of `fixtures/invalid/`.
#[test]
fn composite_errors_point_at_the_members_field() {
    let mut checked = 0;
    let mut problems = Vec::new();
    each_invalid_file(|path, file| {
        for entry in file.entries() {
            let Err(e) = file.tensor(entry.name()) else {
                continue;
            };
            let Error::Composite {
                at: Location { field, offset, .. },
                member,
                ..
            } = &e
            else {
                continue;
            };
            checked += 1;
            let dump = file.dump_descriptor(member).unwrap();
            // A whole array (`shard_offset`) is listed by its elements.
            let same = |f: &Field| f == field || (field.index.is_none() && f.name == field.name && f.index == Some(0));
            if !dump.fields.iter().any(|f| f.offset == *offset && same(&f.field)) {
                problems.push(format!("{}: {e}", path.display()));
            }
        }
    });
    assert!(checked >= 8, "only {checked} composite errors seen");
    assert!(
        problems.is_empty(),
        "not listed in the member's dump:\n{}",
        problems.join("\n")
    );
}

/// Calls `f` with every file of `fixtures/invalid/` whose container opens
/// (strict).
fn each_invalid_file(mut f: impl FnMut(&Path, &HurrayFile<'_>)) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    for path in std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()) {
        if path.extension().is_none_or(|x| x != "hry") {
            continue;
        }
        // A file without the file magic is refused by the read itself.
        let Ok(bytes) = AlignedBytes::read(&path) else { continue };
        if let Ok(file) = HurrayFile::parse(&bytes, Options::strict()) {
            f(&path, &file);
        }
    }
}
