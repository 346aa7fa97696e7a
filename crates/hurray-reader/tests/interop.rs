//! The interop corpus (`HURRAY_INTEROP_DIR`): files written by the
//! independent reference implementation. Every valid file must open and
//! agree with `manifest.json` element by element; every invalid file must be
//! rejected with the error variant for its rule.

mod support {
    pub mod corpus;
}

use hurray_reader::{Error, Field, HurrayFile, Location, Number, Options};
use support::corpus::{
    cites_section, compare_container, compare_tensor, corpus, full_check, located, offset_agrees, read,
};

/// The error each invalid file must produce: its variant, and for generic
/// variants the field named.
fn expected(file: &str, e: &Error) -> bool {
    let field = |f: &Field| f.name;
    let member = |f: &Field| f.member.unwrap_or(f.name);
    match file {
        "invalid_csc_unsorted_rows.hry" | "invalid_csc_duplicate_row.hry" => {
            matches!(
                e,
                Error::NotIncreasing {
                    at: Location {
                        field: Field {
                            name: "row_indices",
                            ..
                        },
                        ..
                    },
                    slice: "column",
                    slice_index: 3,
                    ..
                }
            )
        }
        "invalid_csc_row_index_out_of_bounds.hry" => {
            matches!(
                e,
                Error::IndexOutOfBounds {
                    at: Location {
                        field: Field {
                            name: "row_indices",
                            ..
                        },
                        ..
                    },
                    value: 4,
                    bound: 4,
                    ..
                }
            )
        }
        "invalid_csc_col_ptr_decreasing.hry" => {
            matches!(
                e,
                Error::PtrDecreasing {
                    at: Location {
                        field: Field {
                            name: "col_ptr",
                            index: Some(3),
                            ..
                        },
                        offset: 12312,
                        ..
                    },
                    ..
                }
            )
        }
        "invalid_csc_col_ptr_first_nonzero.hry" => matches!(
            e,
            Error::PtrFirst {
                at: Location {
                    field: Field { name: "col_ptr", .. },
                    ..
                },
                value: 1,
                ..
            }
        ),
        "invalid_csc_col_ptr_last_gt_nnz.hry" => {
            matches!(
                e,
                Error::PtrLast {
                    at: Location {
                        field: Field { name: "col_ptr", .. },
                        ..
                    },
                    value: 8,
                    expected: 7,
                    ..
                }
            )
        }
        // The descriptor nnz (6) disagrees with values and row_indices,
        // both sized for 7: the size check names the nnz field.
        "invalid_csc_descriptor_nnz_mismatch.hry" => {
            matches!(
                e,
                Error::NnzMismatch {
                    nnz: 6,
                    held: 7,
                    buffers: "values and row_indices",
                    ..
                }
            )
        }
        "invalid_csc_rank3.hry" => matches!(
            e,
            Error::RankNotAllowed {
                rank: 3,
                layout: "csc",
                ..
            }
        ),
        "invalid_csc_buffer_count_2.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 2,
                ..
            } if field(f) == "buffer_count")
        }
        "invalid_csc_nonzero_byte_offset.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 4,
                ..
            } if field(f) == "byte_offset")
        }
        "invalid_csc_reserved_nonzero.hry" => {
            matches!(e, Error::Reserved {
                at: Location { field: f, offset: 116, .. },
                ..
            } if field(f) == "_reserved")
        }
        "invalid_csc_values_too_short.hry" => matches!(
            e,
            Error::BufferSize {
                at: Location {
                    field: Field { index: Some(0), .. },
                    ..
                },
                byte_size: 24,
                expected: 28,
                ..
            }
        ),
        "invalid_csc_statistics_nnz_mismatch.hry" => {
            matches!(
                e,
                Error::StatisticsNnzMismatch {
                    statistics_nnz: 6,
                    nnz: 7,
                    ..
                }
            )
        }
        "invalid_file_magic.hry" => {
            matches!(e, Error::BadMagic {
                at: Location { field: f, offset: 0, .. },
                found,
                ..
            } if field(f) == "magic" && found == "HRRYFILX")
        }
        "invalid_trailer_magic.hry" => {
            matches!(e, Error::BadMagic {
                at: Location { field: f, .. },
                found,
                ..
            } if field(f) == "trailer_magic" && found == "HRRZ")
        }
        "invalid_truncated_file.hry" => {
            matches!(e, Error::BadMagic {
                at: Location { field: f, .. },
                found,
                ..
            }
                if field(f) == "trailer_magic" && found == "\\x00\\x00\\x00\\x00")
        }
        "invalid_index_crc_mismatch.hry" => matches!(e, Error::IndexCrcMismatch { .. }),
        "invalid_index_offset_past_eof.hry" => {
            matches!(e, Error::SectionRange {
                at: Location { field: f, .. },
                ..
            } if field(f) == "index_offset")
        }
        "invalid_index_descriptor_length_too_large.hry" | "invalid_index_descriptor_length_too_small.hry" => {
            matches!(e, Error::DescriptorLengthMismatch { .. })
        }
        "invalid_buffer_past_eof.hry" => matches!(e, Error::OutOfRange {
            at: Location { field: f, .. },
            ..
        } if member(f) == "data_length"),
        "invalid_truncated_tiny.hry" => matches!(
            e,
            Error::FileTooSmall {
                size: 100,
                minimum: 104
            }
        ),
        "invalid_reserved_file_flag_bits.hry" => {
            matches!(e, Error::Reserved {
                at: Location { field: f, .. },
                value: 8,
                ..
            } if field(f) == "file_flags")
        }
        "invalid_duplicate_tensor_names.hry" => matches!(
            e,
            Error::DuplicateName {
                first: 0,
                second: 1,
                ..
            }
        ),
        "invalid_container_version_2.hry" => matches!(e, Error::UnsupportedVersion { found: 2, .. }),
        "invalid_data_buffer_alignment_not_pow2.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 6144,
                ..
            } if field(f) == "data_buffer_alignment")
        }
        "invalid_header_reserved_nonzero.hry" => {
            matches!(e, Error::Reserved {
                at: Location { field: f, offset: 36, .. },
                byte: Some(4),
                ..
            } if field(f) == "_reserved_header")
        }
        "invalid_index_entry_flags_nonzero.hry" => {
            matches!(e, Error::Reserved {
                at: Location { field: f, .. },
                ..
            } if member(f) == "flags")
        }
        "invalid_index_entry_count_too_large.hry" => {
            matches!(e, Error::CountTooLarge {
                at: Location { field: f, .. },
                count: 3,
                ..
            } if field(f) == "index_entry_count")
        }
        "invalid_kv_duplicate_key.hry" => matches!(
            e,
            Error::DuplicateKey {
                first: 0,
                second: 1,
                ..
            }
        ),
        "invalid_kv_reserved_value_tag.hry" => matches!(
            e,
            Error::UnknownTag {
                value: 0x08,
                why: "reserved",
                ..
            }
        ),
        "invalid_kv_bool_byte_2.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 2,
                ..
            } if member(f) == "bool value")
        }
        "invalid_kv_offset_past_eof.hry" => {
            matches!(e, Error::SectionRange {
                at: Location { field: f, .. },
                ..
            } if field(f) == "kv_offset")
        }
        "invalid_sorted_flag_on_unsorted_index.hry" => matches!(
            e,
            Error::IndexNotSorted {
                at: Location {
                    field: Field { index: Some(1), .. },
                    ..
                },
                ..
            }
        ),
        "invalid_descriptor_magic.hry" => {
            matches!(e, Error::BadMagic {
                at: Location { field: f, offset: 12336, .. },
                found,
                ..
            } if field(f) == "magic" && found == "HRRX")
        }
        "invalid_descriptor_reserved_flag_bit.hry" => {
            matches!(e, Error::Reserved {
                at: Location { field: f, .. },
                value: 0x20,
                ..
            } if field(f) == "flags")
        }
        "invalid_type_tag_reserved_0x47.hry" => {
            matches!(e, Error::UnknownTag {
                at: Location { field: f, .. },
                value: 0x47,
                ..
            } if field(f) == "type_tag")
        }
        "invalid_layout_tag_unassigned_0x0c.hry" => {
            matches!(e, Error::UnknownTag {
                at: Location { field: f, .. },
                value: 0x0C,
                ..
            } if field(f) == "layout_tag")
        }
        "invalid_handle_device_tag_ff.hry" => {
            matches!(e, Error::UnknownTag {
                at: Location { field: f, offset: 153, .. },
                value: 0xFF,
                ..
            } if member(f) == "device_tag")
        }
        "invalid_handle_memory_class_reserved.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 4,
                ..
            } if member(f) == "memory_class")
        }
        "invalid_handle_reserved_byte15.hry" => {
            matches!(e, Error::Reserved {
                at: Location { field: f, offset: 172, .. },
                ..
            } if member(f) == "_reserved")
        }
        "invalid_handle_alignment_32.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 32,
                ..
            } if member(f) == "alignment")
        }
        "invalid_handle_alignment_not_pow2.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 96,
                ..
            } if member(f) == "alignment")
        }
        "invalid_shard_out_of_bounds.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, offset: 141, .. },
                value: 5,
                ..
            } if field(f) == "shard_offset")
        }
        "invalid_csf_mode_order_not_permutation.hry" => {
            matches!(e, Error::Invalid {
                at: Location { field: f, .. },
                value: 1,
                ..
            } if field(f) == "mode_order")
        }
        "invalid_quant_scale_zero.hry" => {
            matches!(e, Error::InvalidNumber {
                at: Location { field: f, offset: 125, .. },
                value: Number::Float(0),
                ..
            } if *f == Field::sub("quantization", "scale"))
        }
        "invalid_torn_composite.hry" => matches!(
            e,
            Error::TornComposite {
                member_count: 3,
                found: 2,
                ..
            }
        ),
        other => panic!("no expectation for {other}: add one"),
    }
}

#[test]
fn interop_corpus_agrees_with_the_manifest() {
    let Some((dir, manifest)) = corpus("HURRAY_INTEROP_DIR") else {
        return;
    };
    let files = manifest["files"].as_array().expect("files");
    assert_eq!(files.len() as u64, manifest["file_count"].as_u64().unwrap());
    let mut problems = Vec::new();
    let (mut accepted, mut rejected) = (0, 0);
    for entry in files {
        let name = entry["file"].as_str().unwrap();
        let bytes = read(&dir, name);
        assert_eq!(bytes.len() as u64, entry["size_bytes"].as_u64().unwrap(), "{name} size");
        let verdict = full_check(&bytes);
        match (entry["expect"].as_str().unwrap(), verdict) {
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
                accepted += 1;
            }
            ("accept", Err(e)) => problems.push(format!("{name}: valid file rejected: {e}")),
            ("reject", Ok(())) => problems.push(format!("{name}: invalid file accepted ({})", entry["rule"])),
            ("reject", Err(e)) => {
                if !expected(name, &e) {
                    problems.push(format!("{name}: wrong error for '{}': {e:?}", entry["rule"]));
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
                rejected += 1;
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
    assert_eq!(accepted, manifest["valid_count"].as_u64().unwrap());
    assert_eq!(rejected, manifest["invalid_count"].as_u64().unwrap());
}
