//! The accessors and messages of a few errors built by hand.

use super::{rule, Error, Field, Location, Scope};

/// Positions past 2^32 (a 35 GB `row_indices`) keep their value in
/// `field()`: it used to saturate at `u32::MAX`.
#[test]
fn field_of_a_position_past_u32() {
    let position = 5_000_000_000;
    let e = Error::IndexOutOfBounds {
        at: Location {
            scope: Scope::Tensor("A".into()),
            field: Field::at("row_indices", position),
            offset: 40_000_012_288,
            rule: rule::CSC_INV4,
        },
        value: 7,
        bound: 4,
        bound_name: Field::new("nrows"),
    };
    let field = e.field().map(|f| f.to_string());
    assert_eq!(field.as_deref(), Some("row_indices[5000000000]"));
    assert!(
        e.to_string().contains("row_indices[5000000000] at offset 40000012288"),
        "{e}"
    );
}

#[test]
fn accessors_name_offset_and_tensor() {
    let e = Error::PtrFirst {
        at: Location {
            scope: Scope::Tensor("A".into()),
            field: Field::at("col_ptr", 0),
            offset: 12288,
            rule: rule::CSC_INV1,
        },
        value: 1,
    };
    assert_eq!((e.offset(), e.tensor()), (Some(12288), Some("A")));
    assert_eq!(e.field(), Some(Field::at("col_ptr", 0)));
    assert_eq!(e.rule(), Some("layouts/csc.md § Storage Invariants (1)"));
    // A variant whose rule is fixed: the accessor and the message agree.
    let e = Error::DataOffsetMisaligned {
        at: Location {
            scope: Scope::Tensor("A".into()),
            field: Field::member("index_entry", 2, "data_offset"),
            offset: 16500,
            rule: rule::DATA_PLACEMENT,
        },
        data_offset: 4100,
        alignment: 4096,
    };
    assert_eq!(
        e.field().map(|f| f.to_string()).as_deref(),
        Some("index_entry[2].data_offset")
    );
    assert_eq!(e.rule(), Some("file-format.md § Tensor Region › Data Buffer Placement"));
    assert!(
        e.to_string()
            .ends_with("(file-format.md § Tensor Region › Data Buffer Placement)"),
        "{e}"
    );
    // Argument errors have no field, offset or rule.
    let e = Error::IndexArgument {
        tensor: "A".into(),
        what: "column",
        index: 9,
        bound: 5,
    };
    assert_eq!((e.field(), e.offset(), e.rule()), (None, None, None));
    // A long name is cut in the message (a 65535-byte name made a
    // 65 KB error line), and kept whole in the error.
    let long = "L".repeat(65535);
    let e = Error::IndexArgument {
        tensor: long.as_str().into(),
        what: "column",
        index: 9,
        bound: 5,
    };
    assert_eq!(
        e.to_string(),
        format!(
            "tensor '{}... (65535 bytes)': column 9 is out of range, the column count is 5",
            "L".repeat(64)
        )
    );
    assert_eq!(e.tensor(), Some(long.as_str()));
    let e = Error::Invalid {
        at: Location {
            scope: Scope::Key(long.as_str().into()),
            field: Field::new("value"),
            offset: 7,
            rule: "metadata.md",
        },
        value: 1,
        expected: "0",
    };
    assert!(
        e.to_string()
            .starts_with(&format!("KV key '{}... (65535 bytes)': ", "L".repeat(64))),
        "{e}"
    );
    let e = Error::Reserved {
        at: Location {
            scope: Scope::File,
            field: Field::new("file_flags"),
            offset: 12,
            rule: rule::FILE_FLAGS,
        },
        value: 8,
        byte: None,
    };
    assert_eq!((e.offset(), e.tensor()), (Some(12), None));
    assert_eq!(Error::NotFound { name: "x".into() }.offset(), None);
    assert_eq!(Error::NotFound { name: "x".into() }.tensor(), Some("x"));
    assert_eq!(e.to_string(), "file_flags at offset 12: reserved bits/bytes are set (0x08); they must be zero (file-format.md § File Header › File Flags)");
    // A field of reserved bytes: its offset, and which byte is set.
    let e = Error::Reserved {
        at: Location {
            scope: Scope::File,
            field: Field::new("_reserved_header"),
            offset: 36,
            rule: rule::FILE_HEADER,
        },
        value: 1,
        byte: Some(4),
    };
    assert_eq!(
        e.to_string(),
        "_reserved_header at offset 36: reserved bits/bytes are set (its byte 4, at offset 40, is 0x01); they must be zero (file-format.md § File Header)"
    );
}
