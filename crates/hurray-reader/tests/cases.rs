//! The bug-class cases (`HURRAY_CASES_DIR`): small files modelled on bugs
//! that real readers of tensor and sparse formats have shipped. Accept cases
//! must read right element by element; reject cases must fail with the
//! error for their `rule_id`, and the message must mention what the
//! manifest's `error_should_name` lists.

mod support {
    pub mod corpus;
}

use hurray_reader::{Error, Field, HurrayFile, Options};
use support::corpus::{
    cites_section, compare_container, compare_tensor, corpus, full_check, located, mentions, offset_agrees, read,
};

/// The error variant (and field, for generic variants) each rule maps to.
fn matches_rule(rule_id: &str, e: &Error) -> bool {
    let field = e.field().unwrap_or(Field::new(""));
    let name = field.name;
    let member = field.member.unwrap_or(field.name);
    match rule_id {
        "file.too_small" => matches!(e, Error::FileTooSmall { .. }),
        "index.too_short" => matches!(e, Error::Invalid { .. }) && name == "index_length",
        "trailer.magic" => matches!(e, Error::BadMagic { .. }) && name == "trailer_magic",
        "index.count_exceeds_length" => matches!(e, Error::CountTooLarge { .. }) && name == "index_entry_count",
        "kv.count_exceeds_length" => matches!(e, Error::CountTooLarge { .. }) && name == "kv_count",
        "kv.array_exceeds_length" => matches!(e, Error::CountTooLarge { .. }) && member == "element count",
        "kv.string_exceeds_length" => matches!(e, Error::CountTooLarge { .. }) && member == "string length",
        "entry.descriptor_range" => matches!(e, Error::OutOfRange { .. }) && member == "descriptor_offset",
        "entry.data_range" => matches!(e, Error::OutOfRange { .. }) && member == "data_length",
        "entry.descriptor_length_mismatch" => matches!(e, Error::DescriptorLengthMismatch { .. }),
        "descriptor.length_too_small" => matches!(e, Error::Invalid { value: 19, .. }) && name == "descriptor_length",
        "descriptor.overlaps_data" => matches!(e, Error::Layout { .. }) && member == "descriptor_length",
        "index.range_into_trailer" => matches!(e, Error::SectionRange { .. }) && name == "index_offset",
        "header.data_buffer_alignment" => {
            matches!(e, Error::Invalid { .. }) && name == "data_buffer_alignment" && e.offset() == Some(16)
        }
        "buffer.alignment_invalid" => matches!(e, Error::Invalid { .. }) && member == "alignment",
        "data.offset_misaligned" => matches!(e, Error::DataOffsetMisaligned { .. }),
        "buffer.alignment_not_delivered" => matches!(e, Error::AlignmentNotDelivered { .. }),
        "entry.duplicate_name" => matches!(e, Error::DuplicateName { .. }),
        "entry.name_invalid_utf8" => matches!(e, Error::InvalidUtf8 { .. }) && member == "name",
        "entry.name_empty" => matches!(e, Error::Invalid { value: 0, .. }) && member == "name_length",
        "kv.key_empty" => matches!(e, Error::Invalid { value: 0, .. }) && member == "key_length",
        "kv.duplicate_key" => matches!(e, Error::DuplicateKey { .. }),
        "kv.string_invalid_utf8" => matches!(e, Error::InvalidUtf8 { .. }) && member == "string bytes",
        "kv.bool_invalid" => matches!(e, Error::Invalid { value: 2, .. }) && member == "bool value",
        "kv.reserved_tag" => matches!(e, Error::UnknownTag { why: "reserved", .. }),
        "kv.invalid_tag" => matches!(e, Error::UnknownTag { why: "invalid", .. }),
        "shape.overflow" => matches!(e, Error::Overflow { .. }) && name == "shape",
        "sparse.size_overflow" => matches!(e, Error::Overflow { .. }) && name == "nnz",
        "csc.col_ptr_size_overflow" => matches!(e, Error::Overflow { .. }) && field == Field::at("shape", 1),
        "shape.dynamic_dimension" => matches!(e, Error::DynamicDimension { .. }) && field == Field::at("shape", 1),
        "csc.buffer_size" | "coo.buffer_size" => matches!(e, Error::BufferSize { .. }),
        "dense.buffer_too_small" => matches!(e, Error::BufferSize { role: "data", .. }),
        // A pointer above nnz before the last is named itself (PtrTooLarge),
        // as the manifest's `field` does, rather than the smaller one after it.
        "csc.col_ptr_decreasing" => {
            matches!(e, Error::PtrDecreasing { .. } | Error::PtrTooLarge { .. }) && name == "col_ptr"
        }
        "csc.col_ptr_first" => matches!(e, Error::PtrFirst { .. }) && name == "col_ptr",
        "csc.col_ptr_last" => matches!(e, Error::PtrLast { .. }) && name == "col_ptr",
        "csc.row_index_out_of_bounds" => matches!(e, Error::IndexOutOfBounds { .. }) && name == "row_indices",
        "csc.rows_not_increasing" => matches!(e, Error::NotIncreasing { slice: "column", .. }) && name == "row_indices",
        other => panic!("no expectation for rule_id {other}: add one"),
    }
}

#[test]
fn bug_cases_agree_with_the_manifest() {
    let Some((dir, manifest)) = corpus("HURRAY_CASES_DIR") else {
        return;
    };
    let mut problems = Vec::new();
    for entry in manifest["files"].as_array().expect("files") {
        let name = entry["file"].as_str().unwrap();
        let bytes = read(&dir, name);
        match (entry["expect"].as_str().unwrap(), full_check(&bytes)) {
            ("accept", Ok(())) => {
                let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
                problems.extend(
                    compare_container(&file, entry)
                        .into_iter()
                        .map(|p| format!("{name}: {p}")),
                );
                for t in entry["tensors"].as_array().unwrap() {
                    problems.extend(compare_tensor(&file, t).into_iter().map(|p| format!("{name}: {p}")));
                }
            }
            ("accept", Err(e)) => problems.push(format!("{name}: valid file rejected: {e}")),
            ("reject", Ok(())) => problems.push(format!("{name}: invalid file accepted ({})", entry["rule_id"])),
            ("reject", Err(e)) => {
                let rule_id = entry["rule_id"].as_str().unwrap();
                if !matches_rule(rule_id, &e) {
                    problems.push(format!("{name}: {rule_id}: wrong error {e:?}"));
                }
                if let Err(why) = located(&e) {
                    problems.push(format!("{name}: {why}"));
                }
                if let Err(why) = offset_agrees(name, &e, entry) {
                    problems.push(format!("{name}: {why}"));
                }
                if let Err(why) = cites_section(&e, entry) {
                    problems.push(format!("{name}: {why}"));
                }
                let message = e.to_string();
                for hint in entry["error_should_name"].as_array().into_iter().flatten() {
                    let hint = hint.as_str().unwrap();
                    if !mentions(&message, hint) {
                        problems.push(format!("{name}: message does not mention '{hint}': {message}"));
                    }
                }
            }
            (other, _) => panic!("{name}: unknown expectation {other}"),
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
