//! CSR (`layouts/csr.md`): the worked example asserted value by value
//! through `CsrView`, and one test per rule of the section that no other
//! test asserted with an exact value or error variant.
//! `docs/sparse-rules.md` maps every rule to its code and tests (the CSC
//! counterpart is `tests/csc.rs`, COO's `tests/coo.rs`).

mod support {
    pub mod locate;
    pub mod sparse_parts;
    pub mod worked_example;
}

use hurray_reader::{AlignedBytes, Error, Field, HurrayFile, Layout, Location, Options, Scope, Value};
use hurray_writer::{ElementType, Statistics, TensorDescriptor};
use support::locate::{buffer_offset, field_offset, At};
use support::sparse_parts::{
    assert_alignment_refused, assert_names, assert_statistics_nnz_refused, buffer_table, build, csr, csr_error,
    csr_example, open_csr, set_nnz, table, u64s, Parts,
};
use support::worked_example::{DENSE, FIXTURE};

// ---------------------------------------------------------------------------
// CSR: the worked example.

#[test]
fn csr_worked_example_descriptor_and_buffers() {
    let bytes = build(csr_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.layout(), Layout::Csr);
    assert_eq!(bytes[field_offset(&bytes, "layout_tag") as usize], 0x07);
    assert_eq!(t.element_type().unwrap().as_str(), "float32");
    assert_eq!(t.shape().collect::<Vec<_>>(), [4, 5]);
    assert_eq!(t.nnz(), Some(5));
    assert_eq!(t.descriptor().byte_offset(), 0);
    // Buffer table: values (nnz float32), col_indices (nnz u64), row_ptr
    // (nrows + 1 u64); byte sizes nnz × 4, nnz × 8, (nrows + 1) × 8.
    assert_eq!(
        buffer_table(&bytes),
        table(&[
            ("values", "float32", 5, 20),
            ("col_indices", "uint64", 5, 40),
            ("row_ptr", "uint64", 5, 40),
        ])
    );
    let a = t.csr::<f32>().unwrap();
    assert!(a.is_validated());
    assert_eq!((a.nrows(), a.ncols(), a.nnz()), (4, 5, 5));
    assert_eq!(a.values(), [1.0, 2.0, 3.0, 4.0, 5.0]);
    assert_eq!(a.col_indices(), [0, 3, 2, 1, 4]);
    assert_eq!(a.row_ptr(), [0, 2, 3, 5, 5]);
    let s = a.structure();
    assert_eq!((s.nrows(), s.ncols(), s.nnz()), (4, 5, 5));
    assert_eq!((s.row_ptr(), s.col_indices()), (a.row_ptr(), a.col_indices()));
}

/// § Element Lookup: all twenty positions, stored or implicit zero, by
/// `CsrView::get` and `CsrStructure::position`.
#[test]
fn csr_worked_example_get_all_twenty_positions() {
    let bytes = build(csr_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csr::<f32>().unwrap();
    let mut stored = 0;
    for (r, row) in DENSE.iter().enumerate() {
        for (c, &want) in row.iter().enumerate() {
            let (r, c) = (r as u64, c as u64);
            let got = a.get(r, c).unwrap();
            let position = a.structure().position(r, c).unwrap();
            if want == 0.0 {
                assert_eq!((got, position), (None, None), "({r}, {c}) is an implicit zero");
            } else {
                assert_eq!(got, Some(&want), "({r}, {c})");
                // values[j] with col_indices[j] = c, j in row_ptr[r]..row_ptr[r+1].
                let j = position.unwrap();
                assert_eq!(a.col_indices()[j], c);
                assert!(a.row_ptr()[r as usize] as usize <= j && j < a.row_ptr()[r as usize + 1] as usize);
                stored += 1;
            }
        }
    }
    assert_eq!(stored, 5);
}

/// § Row Iteration, and `row_ptr[3] = row_ptr[4] = 5`: row 3 is empty.
#[test]
fn csr_worked_example_rows() {
    let bytes = build(csr_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csr::<f32>().unwrap();
    let rows: Vec<Vec<(u64, f32)>> = (0..4)
        .map(|i| a.row(i).unwrap().map(|(c, v)| (c, *v)).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec![(0, 1.0), (3, 2.0)],
            vec![(2, 3.0)],
            vec![(1, 4.0), (4, 5.0)],
            vec![]
        ]
    );
    let ranges: Vec<_> = (0..4).map(|i| a.structure().row_range(i).unwrap()).collect();
    assert_eq!(ranges, [0..2, 2..3, 3..5, 5..5]);
    let all: Vec<(u64, Vec<u64>, Vec<f32>)> = a.rows().unwrap().map(|(i, c, v)| (i, c.to_vec(), v.to_vec())).collect();
    assert_eq!(
        all,
        [
            (0, vec![0, 3], vec![1.0, 2.0]),
            (1, vec![2], vec![3.0]),
            (2, vec![1, 4], vec![4.0, 5.0]),
            (3, vec![], vec![]),
        ]
    );
    // Borrowed from the file: row 2 is col_indices[3..5], values[3..5].
    let (_, cols, values) = a.rows().unwrap().nth(2).unwrap();
    assert_eq!(cols.as_ptr(), a.col_indices()[3..].as_ptr());
    assert_eq!(values.as_ptr(), a.values()[3..].as_ptr());
    let entries: Vec<(u64, u64, f32)> = a.iter().unwrap().map(|(r, c, v)| (r, c, *v)).collect();
    assert_eq!(
        entries,
        [(0, 0, 1.0), (0, 3, 2.0), (1, 2, 3.0), (2, 1, 4.0), (2, 4, 5.0)]
    );
    // A·[1, 2, 3, 4, 5] row by row.
    let mut y = [0f32; 4];
    a.mul_vec(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut y).unwrap();
    assert_eq!(y, [9.0, 9.0, 33.0, 0.0]);
}

/// `layouts/csc.md` § Relationship to CSR, seen from CSR: the CSR arrays
/// of A are the CSC arrays of Aᵀ (shape swapped, no copy), and converting
/// Aᵀ back to CSR gives the CSC example's arrays (those of A in CSC).
#[test]
fn csr_worked_example_transpose_is_csc_of_the_transpose() {
    let bytes = build(csr_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csr::<f32>().unwrap();
    let at = a.transpose();
    assert_eq!((at.nrows(), at.ncols(), at.nnz()), (5, 4, 5));
    assert_eq!(at.col_ptr().as_ptr(), a.row_ptr().as_ptr());
    assert_eq!(at.row_indices().as_ptr(), a.col_indices().as_ptr());
    assert_eq!(at.values().as_ptr(), a.values().as_ptr());
    for (r, row) in DENSE.iter().enumerate() {
        for (c, &want) in row.iter().enumerate() {
            assert_eq!(at.get(c as u64, r as u64).unwrap().copied().unwrap_or(0.0), want);
        }
    }
    assert_eq!(a.structure().transpose().col_ptr(), [0, 2, 3, 5, 5]);
    // CSR of Aᵀ = CSC of A: layouts/csc.md § Example.
    let owned = at.to_csr().unwrap();
    assert_eq!((owned.nrows(), owned.ncols()), (5, 4));
    assert_eq!(owned.row_ptr(), [0, 1, 2, 3, 4, 5]);
    assert_eq!(owned.col_indices(), [0, 2, 1, 0, 2]);
    assert_eq!(owned.values(), [1.0, 4.0, 3.0, 2.0, 5.0]);
    // Errors on Aᵀ (5 x 4) name tensor A (4 x 5): they say the transpose's.
    let e = at.get(0, 4).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor 'A': transpose's column 4 is out of range, the transpose's column count is 4"
    );
    let e = at.mul_vec(&[1.0; 5], &mut [0.0; 5]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor 'A': x has length 5, expected ncols of the transpose = 4"
    );
    // And back: the transpose of the transpose is A.
    assert_eq!(at.transpose().get(2, 4).unwrap(), Some(&5.0));
    assert_eq!(at.transpose().row_ptr(), a.row_ptr());
}

/// The two worked examples are one matrix (`layouts/csc.md` § Example:
/// "the same matrix as in the CSR example"): the CSR example and
/// `fixtures/csc_worked_example.hry` agree on all twenty elements, the CSC
/// fixture converted to CSR has the CSR example's arrays, and each one's
/// transpose has the other's arrays.
#[test]
fn csr_and_csc_worked_examples_are_the_same_matrix() {
    let csc_bytes = AlignedBytes::read(FIXTURE).unwrap();
    let csc_file = HurrayFile::parse(&csc_bytes, Options::default()).unwrap();
    let c = csc_file.tensor("A").unwrap().csc::<f32>().unwrap();
    let csr_bytes = build(csr_example());
    let csr_file = HurrayFile::parse(&csr_bytes, Options::default()).unwrap();
    let r = csr_file.tensor("A").unwrap().csr::<f32>().unwrap();
    for row in 0..4 {
        for col in 0..5 {
            assert_eq!(r.get(row, col).unwrap(), c.get(row, col).unwrap(), "({row}, {col})");
        }
    }
    let owned = c.to_csr().unwrap();
    assert_eq!(
        (owned.row_ptr(), owned.col_indices(), owned.values()),
        (r.row_ptr(), r.col_indices(), r.values())
    );
    let ct = c.transpose();
    assert_eq!((ct.nrows(), ct.ncols()), (5, 4));
    assert_eq!((ct.row_ptr(), ct.col_indices()), (c.col_ptr(), c.row_indices()));
    let rt = r.transpose();
    assert_eq!((rt.nrows(), rt.ncols()), (5, 4));
    assert_eq!((rt.col_ptr(), rt.row_indices()), (r.row_ptr(), r.col_indices()));
}

// ---------------------------------------------------------------------------
// CSR: one test per rule.

#[test]
fn csr_the_unbroken_parts_are_valid() {
    for options in [Options::strict(), Options::permissive()] {
        assert_eq!(open_csr(&build(csr_example()), options), Ok(()));
    }
}

/// Layout tag `0x07` (`memory-layout.md`; NOTES.md "Layout tag numbers":
/// not the `0x08` of older copies, which is CSC here). The same bytes
/// tagged `0x08` are checked as CSC (`col_ptr` must then have 6 entries)
/// and never viewed as CSR.
#[test]
fn csr_rule_layout_tag_is_0x07() {
    assert_eq!(Layout::from_tag(0x07), Layout::Csr);
    assert_eq!(Layout::Csr.tag(), 0x07);
    assert_eq!(Layout::Csr.as_str(), "csr");
    let mut p = csr_example();
    p.descriptor.layout_tag = 0x08;
    let bytes = build(p);
    let e = HurrayFile::parse(&bytes, Options::default())
        .unwrap()
        .tensor("A")
        .map(drop)
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::BufferSize {
                at: Location {
                    field: Field { index: Some(2), .. },
                    rule: "layouts/csc.md § Buffer Size",
                    ..
                },
                role: "col_ptr",
                byte_size: 40,
                expected: 48,
                ..
            }
        ),
        "{e:?}"
    );
    // A square matrix tagged 0x08 is a valid CSC: the CSR view is refused.
    let mut p = csr(5, 5, &[1.0], &[0], &[0, 1, 1, 1, 1, 1]);
    p.descriptor.layout_tag = 0x08;
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert!(matches!(
        t.csr::<f32>(),
        Err(Error::LayoutMismatch {
            requested: "csr",
            actual: "csc",
            ..
        })
    ));
    assert!(matches!(t.csr_structure(), Err(Error::LayoutMismatch { .. })));
    assert!(matches!(t.csr_unscanned::<f32>(), Err(Error::LayoutMismatch { .. })));
}

/// § Description: rank must be 2; § Validity Constraints: rank 0 too is
/// refused. The error names `rank` at descriptor byte 16 and the section.
#[test]
fn csr_rule_rank_must_be_2() {
    for shape in [vec![], vec![20], vec![1, 4, 5]] {
        let rank = shape.len() as u32;
        let mut p = csr_example();
        p.descriptor.shape = shape;
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_csr(&bytes, options).unwrap_err();
            assert!(
                matches!(e, Error::RankNotAllowed { rank: r, layout: "csr", expected: "2", .. } if r == rank),
                "{e:?}"
            );
            assert_names(&e, "rank", field_offset(&bytes, "rank"), "layouts/csr.md § Description");
        }
    }
}

/// § Buffer Table: `buffer_count = 3`, in both modes.
#[test]
fn csr_rule_buffer_count_must_be_3() {
    for count in [2usize, 4] {
        let mut p = csr_example();
        if count == 2 {
            p.descriptor.buffers.truncate(2);
        } else {
            p.descriptor.buffers.push(p.descriptor.buffers[2]);
            p.buffers.push(u64s(&[0, 2, 3, 5, 5]));
        }
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_csr(&bytes, options).unwrap_err();
            assert!(
                matches!(e, Error::Invalid { value, expected: "3 (values, col_indices, row_ptr)", .. } if value == count as u64),
                "{e:?}"
            );
            assert_names(
                &e,
                "buffer_count",
                field_offset(&bytes, "buffer_count"),
                "layouts/csr.md § Buffer Table",
            );
        }
    }
}

/// § Additional Descriptor Fields: each of the 8 `_reserved` bytes after
/// `nnz` MUST be 0, in both modes.
#[test]
fn csr_rule_reserved_bytes_must_be_zero() {
    for byte in 8..16 {
        let mut p = csr_example();
        p.descriptor.layout_fields[byte] = 0x80;
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_csr(&bytes, options).unwrap_err();
            assert!(matches!(e, Error::Reserved { .. }), "{e:?}");
            assert_eq!(e.field(), Some(Field::new("_reserved")));
            assert_eq!(e.rule(), Some("layouts/csr.md § Additional Descriptor Fields"));
            let start = field_offset(&bytes, "_reserved");
            assert!(e.offset().is_some_and(|o| (start..start + 8).contains(&o)), "{e}");
        }
    }
}

/// § Buffer Size: "For CSR tensors, `byte_offset` MUST be set to 0", in
/// both modes.
#[test]
fn csr_rule_byte_offset_must_be_zero() {
    for byte_offset in [1u64, 4, 8] {
        let mut p = csr_example();
        p.descriptor.byte_offset = byte_offset;
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_csr(&bytes, options).unwrap_err();
            assert!(
                matches!(e, Error::Invalid { value, .. } if value == byte_offset),
                "{e:?}"
            );
            assert_names(
                &e,
                "byte_offset",
                field_offset(&bytes, "byte_offset"),
                "memory-layout.md § Common Fields › byte_offset",
            );
        }
    }
}

/// § Buffer Size: `values` `nnz × 4`, `col_indices` `nnz × 8`, `row_ptr`
/// `(nrows + 1) × 8` bytes, exactly (NOTES.md "Buffer larger than
/// required"): one element short or one too many is refused in both modes.
#[test]
fn csr_rule_buffer_sizes_are_exact_in_both_modes() {
    for (buffer, role, width, expected) in [
        (0usize, "values", 4u64, 20u64),
        (1, "col_indices", 8, 40),
        (2, "row_ptr", 8, 40),
    ] {
        for size in [expected - width, expected + width] {
            let mut p = csr_example();
            p.descriptor.buffers[buffer].byte_size = size;
            p.buffers[buffer].resize(size as usize, 0);
            let bytes = build(p);
            for options in [Options::strict(), Options::permissive()] {
                let e = open_csr(&bytes, options).unwrap_err();
                assert!(
                    matches!(&e, Error::BufferSize {
                        role: r,
                        byte_size,
                        expected: x,
                        exact: true,
                        ..
                    }
                        if *r == role && *byte_size == size && *x == expected),
                    "{options:?}: {e:?}"
                );
                let field = format!("buffer[{buffer}].byte_size");
                assert_names(&e, &field, field_offset(&bytes, &field), "layouts/csr.md § Buffer Size");
            }
        }
    }
    // row_ptr follows nrows = shape[0], not ncols: a 2 × 7 matrix has 3 pointers.
    let bytes = build(csr(2, 7, &[1.0], &[6], &[0, 0, 1]));
    assert_eq!(
        buffer_table(&bytes),
        table(&[
            ("values", "float32", 1, 4),
            ("col_indices", "uint64", 1, 8),
            ("row_ptr", "uint64", 3, 24),
        ])
    );
}

/// § Buffer Size: sub-byte values take `ceil(nnz / packing_factor)` bytes
/// (int4: 3 bytes for 5; float6: `ceil(5 / 4) × 3` = 6, NOTES.md), exactly.
#[test]
fn csr_rule_packed_values_buffer_size() {
    let nib = |v: i8| (v as u8) & 0x0F;
    let mut p = csr_example();
    p.descriptor = TensorDescriptor::csr(ElementType::Int4, 4, 5, 5).unwrap().to_raw();
    assert_eq!(p.descriptor.buffers[0].byte_size, 3);
    p.buffers[0] = vec![nib(1) | nib(-2) << 4, nib(3) | nib(-4) << 4, nib(5)];
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    let s = t.csr_structure().unwrap().validated().unwrap();
    assert_eq!(s.position(2, 4).unwrap(), Some(4));
    let values = t.buffer(0).unwrap().packed().unwrap();
    let decoded: Vec<Value> = (0..5).map(|i| values.get(i).unwrap()).collect();
    assert_eq!(
        decoded,
        [1, -2, 3, -4, 5].map(Value::Int).to_vec(),
        "values in row order"
    );
    assert!(matches!(t.csr::<i8>(), Err(Error::TypeMismatch { actual: "int4", .. })));
    for (ty, bytes_wrong, expected) in [(ElementType::Int4, 5u64, 3u64), (ElementType::Float6E2M3, 4, 6)] {
        let mut p = csr_example();
        p.descriptor = TensorDescriptor::csr(ty, 4, 5, 5).unwrap().to_raw();
        assert_eq!(p.descriptor.buffers[0].byte_size, expected);
        p.descriptor.buffers[0].byte_size = bytes_wrong;
        p.buffers[0] = vec![0; bytes_wrong as usize];
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = HurrayFile::parse(&bytes, options)
                .unwrap()
                .tensor("A")
                .map(drop)
                .unwrap_err();
            assert!(
                matches!(e, Error::BufferSize {
                    at: Location { field: Field { index: Some(0), .. }, .. },
                    byte_size,
                    expected: x,
                    ..
                } if byte_size == bytes_wrong && x == expected),
                "{e:?}"
            );
        }
    }
}

/// NOTES.md "Overflow in range checks": `nnz × 8`, `(nrows + 1) × 8` never
/// wrap; the field causing the overflow is named. The dynamic sentinel in
/// either dimension is refused (`data-model.md` § Dynamic Dimensions).
#[test]
fn csr_rule_sizes_are_computed_without_overflow() {
    let mut p = csr_example();
    set_nnz(&mut p, 1 << 61);
    let bytes = build(p);
    let e = open_csr(&bytes, Options::strict()).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e:?}");
    assert_names(&e, "nnz", field_offset(&bytes, "nnz"), "layouts/csr.md § Buffer Size");
    for nrows in [u64::MAX - 1, 1 << 61] {
        let mut p = csr_example();
        p.descriptor.shape = vec![nrows, 5];
        let bytes = build(p);
        let e = open_csr(&bytes, Options::permissive()).unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{e:?}");
        assert_names(
            &e,
            "shape[0]",
            field_offset(&bytes, "shape[0]"),
            "layouts/csr.md § Buffer Size",
        );
    }
    for axis in 0..2 {
        let mut p = csr_example();
        p.descriptor.shape[axis] = u64::MAX;
        let bytes = build(p);
        let e = open_csr(&bytes, Options::strict()).unwrap_err();
        assert!(matches!(e, Error::DynamicDimension { .. }), "{e:?}");
        let field = format!("shape[{axis}]");
        assert_eq!(e.field().map(|f| f.to_string()), Some(field.clone()));
        assert_eq!(e.offset(), Some(field_offset(&bytes, &field)));
    }
}

/// § Storage Invariants (1)–(4), each broken alone: the exact variant,
/// entry, value, byte offset and section.
#[test]
fn csr_rule_storage_invariants_exact_errors() {
    let base = build(csr_example());
    let (cols_at, ptr_at) = (buffer_offset(&base, 1), buffer_offset(&base, 2));
    let inv = |n: u8| format!("layouts/csr.md § Storage Invariants ({n})");

    // (1) row_ptr[0] = 0.
    let mut p = csr_example();
    p.buffers[2] = u64s(&[1, 2, 3, 5, 5]);
    let e = csr_error(p);
    assert_eq!(
        e,
        Error::PtrFirst {
            at: Location {
                scope: Scope::Tensor("A".into()),
                field: Field::at("row_ptr", 0),
                offset: ptr_at,
                rule: "layouts/csr.md § Storage Invariants (1)",
            },
            value: 1,
        }
    );
    assert_names(&e, "row_ptr[0]", ptr_at, &inv(1));

    // (1) row_ptr[nrows] = nnz, below and above.
    for last in [4u64, 6] {
        let mut p = csr_example();
        p.buffers[2] = u64s(&[0, 2, 3, 4.min(last), last]);
        let e = csr_error(p);
        assert!(
            matches!(e, Error::PtrLast {
                at: Location { field: Field { name: "row_ptr", index: Some(4), .. }, .. },
                value,
                expected: 5,
                ..
            } if value == last),
            "{e:?}"
        );
        assert_names(&e, "row_ptr[4]", ptr_at + 32, &inv(1));
    }

    // (2) non-decreasing.
    let mut p = csr_example();
    p.buffers[2] = u64s(&[0, 3, 2, 5, 5]);
    let e = csr_error(p);
    assert!(
        matches!(
            e,
            Error::PtrDecreasing {
                at: Location {
                    field: Field {
                        name: "row_ptr",
                        index: Some(2),
                        ..
                    },
                    ..
                },
                value: 2,
                previous: 3,
                ..
            }
        ),
        "{e:?}"
    );
    assert_names(&e, "row_ptr[2]", ptr_at + 16, &inv(2));

    // (3) strictly increasing within a row: unsorted, then a duplicate.
    for (cols, value, previous) in [([3u64, 0, 2, 1, 4], 0u64, 3u64), ([3, 3, 2, 1, 4], 3, 3)] {
        let mut p = csr_example();
        p.buffers[1] = u64s(&cols);
        let e = csr_error(p);
        assert_eq!(
            e,
            Error::NotIncreasing {
                at: Location {
                    scope: Scope::Tensor("A".into()),
                    field: Field::at("col_indices", 1),
                    offset: cols_at + 8,
                    rule: "layouts/csr.md § Storage Invariants (3)",
                },
                slice: "row",
                slice_index: 0,
                value,
                previous,
            }
        );
        assert_names(&e, "col_indices[1]", cols_at + 8, &inv(3));
    }
    // Columns may decrease from one row to the next (row 0 ends at 3, row 1
    // starts at 2): not a violation.
    assert_eq!(open_csr(&base, Options::strict()), Ok(()));

    // (4) every column < shape[1] = 5 (named with `ncols`).
    for value in [5u64, u64::MAX] {
        let mut p = csr_example();
        p.buffers[1] = u64s(&[0, 3, 2, 1, value]);
        let e = csr_error(p);
        assert!(
            matches!(
                &e,
                Error::IndexOutOfBounds {
                    at: Location { field: Field { name: "col_indices", index: Some(4), .. }, .. },
                    value: v,
                    bound: 5,
                    bound_name,
                    ..
                }
                    if *v == value && *bound_name == Field::new("ncols")
            ),
            "{e:?}"
        );
        assert_names(&e, "col_indices[4]", cols_at + 32, &inv(4));
    }
}

/// § Storage Invariants: "MUST reject ... unless operating in permissive
/// mode". Permissive mode opens the view without the scan; `validate`
/// still names the violation, and lookups and iteration refuse damaged rows
/// instead of answering from them (binary search needs invariant 3).
#[test]
fn csr_permissive_skips_only_the_scan_and_never_answers_wrongly() {
    let mut p = csr_example();
    p.buffers[1] = u64s(&[3, 0, 2, 1, 4]); // row 0 unsorted: a search for column 0 could miss it
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = file.tensor("A").unwrap();
    let a = t.csr::<f32>().unwrap();
    assert!(!a.is_validated());
    let e = a.validate().unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotIncreasing {
                slice: "row",
                slice_index: 0,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(a.get(0, 0), Err(e.clone()));
    assert_eq!(a.row(0).err(), Some(e.clone()));
    assert_eq!(a.rows().err(), Some(e.clone()));
    assert_eq!(a.iter().err(), Some(e.clone()));
    assert_eq!(a.validated().err(), Some(e.clone()));
    let mut y = [0f32; 4];
    assert_eq!(a.mul_vec(&[1.0; 5], &mut y), Err(e.clone()));
    assert_eq!(t.validate_data(), Err(e.clone()));
    // Undamaged rows still answer.
    assert_eq!(a.get(2, 4).unwrap(), Some(&5.0));
    assert_eq!(a.get(3, 0).unwrap(), None);
    // csr_unscanned skips the scan in strict mode too.
    let strict = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let t = strict.tensor("A").unwrap();
    assert_eq!(t.csr::<f32>().err(), Some(e.clone()));
    assert!(!t.csr_unscanned::<f32>().unwrap().is_validated());
    // A pointer past nnz in permissive mode: named, never read past the end.
    let mut p = csr_example();
    p.buffers[2] = u64s(&[0, 2, 9, 5, 5]);
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let a = file.tensor("A").unwrap().csr::<f32>().unwrap();
    for row in [1, 2] {
        assert!(
            matches!(
                a.get(row, 0),
                Err(Error::PtrTooLarge {
                    at: Location {
                        field: Field { index: Some(2), .. },
                        ..
                    },
                    value: 9,
                    ..
                })
            ),
            "row {row}"
        );
    }
    assert_eq!(a.structure().validate_pointers(), a.validate());
}

/// § Additional Descriptor Fields (`nnz` MAY be 0), `data-model.md` §
/// Empty Tensors: `0 × 0`, `4 × 0`, `0 × 5` and `4 × 5` with nothing stored
/// are valid; `row_ptr` holds `nrows + 1` zeros; every row is empty.
#[test]
fn csr_empty_matrices_and_nnz_zero_are_valid() {
    for (nrows, ncols) in [(0u64, 0u64), (4, 0), (0, 5), (4, 5)] {
        let row_ptr = vec![0u64; nrows as usize + 1];
        let bytes = build(csr(nrows, ncols, &[], &[], &row_ptr));
        for options in [Options::strict(), Options::permissive()] {
            let file = HurrayFile::parse(&bytes, options).unwrap();
            let t = file.tensor("A").unwrap();
            let sizes: Vec<u64> = t.buffers().iter().map(|b| b.byte_size()).collect();
            assert_eq!(sizes, [0, 0, 8 * (nrows + 1)]);
            let a = t.csr::<f32>().unwrap().validated().unwrap();
            assert_eq!((a.nrows(), a.ncols(), a.nnz()), (nrows, ncols, 0));
            assert_eq!(a.row_ptr(), &row_ptr[..]);
            assert_eq!(a.rows().unwrap().len() as u64, nrows);
            assert_eq!(a.iter().unwrap().count(), 0);
            for r in 0..nrows {
                assert_eq!(a.row(r).unwrap().len(), 0);
                for c in 0..ncols {
                    assert_eq!(a.get(r, c).unwrap(), None);
                }
            }
            assert!(matches!(a.row(nrows), Err(Error::IndexArgument { what: "row", .. })));
            assert!(matches!(a.get(0, ncols), Err(Error::IndexArgument { .. })));
        }
    }
}

/// No rule bounds `nnz` by itself; invariants (1), (3), (4) do: a matrix
/// without columns stores nothing, a 1 × 1 matrix at most one element, and
/// an `nnz` that `row_ptr` does not reach is named at `row_ptr[nrows]`.
#[test]
fn csr_nnz_is_bounded_by_the_shape_through_the_invariants() {
    let e = csr_error(csr(3, 0, &[1.0], &[0], &[0, 1, 1, 1]));
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                at: Location {
                    field: Field {
                        name: "col_indices",
                        index: Some(0),
                        ..
                    },
                    ..
                },
                value: 0,
                bound: 0,
                ..
            }
        ),
        "{e:?}"
    );
    let e = csr_error(csr(1, 1, &[1.0, 2.0], &[0, 0], &[0, 2]));
    assert!(
        matches!(
            e,
            Error::NotIncreasing {
                at: Location {
                    field: Field { index: Some(1), .. },
                    ..
                },
                ..
            }
        ),
        "{e:?}"
    );
    let e = csr_error(csr(0, 4, &[1.0], &[0], &[0]));
    assert!(
        matches!(
            e,
            Error::PtrLast {
                at: Location {
                    field: Field { index: Some(0), .. },
                    ..
                },
                value: 0,
                expected: 1,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        open_csr(
            &build(csr(2, 2, &[1.0, 2.0, 3.0, 4.0], &[0, 1, 0, 1], &[0, 2, 4])),
            Options::strict()
        ),
        Ok(())
    );
}

/// § Element Lookup: coordinates outside the shape are argument errors
/// naming the row or column, never an out-of-bounds read.
#[test]
fn csr_lookups_out_of_range_are_errors() {
    let bytes = build(csr_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csr::<f32>().unwrap();
    for (r, c, what, index, bound) in [
        (4u64, 0u64, "row", 4u64, 4u64),
        (u64::MAX, 0, "row", u64::MAX, 4),
        (0, 5, "column", 5, 5),
        (3, u64::MAX, "column", u64::MAX, 5),
    ] {
        let e = a.get(r, c).unwrap_err();
        assert_eq!(
            e,
            Error::IndexArgument {
                tensor: "A".into(),
                what,
                index,
                bound,
            }
        );
    }
    assert!(matches!(a.row(4), Err(Error::IndexArgument { what: "row", .. })));
    assert!(matches!(
        file.tensor("A").unwrap().csr::<f64>(),
        Err(Error::TypeMismatch {
            requested: "float64",
            actual: "float32",
            ..
        })
    ));
    assert!(matches!(
        file.tensor("A").unwrap().coo::<f32>(),
        Err(Error::LayoutMismatch {
            requested: "coo",
            actual: "csr",
            ..
        })
    ));
}

/// § Interaction with Statistics Section: with `NNZ_VALID` the statistics
/// `nnz` MUST equal the descriptor's (strict); the descriptor stays
/// authoritative in permissive mode; `sparsity_ratio` SHOULD be
/// `1 − nnz / (nrows × ncols)` = 0.75: reported, never fatal.
#[test]
fn csr_rule_statistics() {
    let mut p = csr_example();
    p.descriptor.statistics = Some(Statistics::default().with_nnz(6));
    let bytes = build(p);
    assert_statistics_nnz_refused(
        &bytes,
        open_csr,
        6,
        5,
        "layouts/csr.md § Interaction with Statistics Section",
    );
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.nnz(), Some(5));
    assert_eq!(t.csr::<f32>().unwrap().values().len(), 5);
    // Not marked valid: unknown, not compared.
    let mut p = csr_example();
    p.descriptor.statistics = Some(Statistics {
        nnz: 6,
        ..Statistics::default()
    });
    assert_eq!(open_csr(&build(p), Options::strict()), Ok(()));
    for (ratio, mismatch) in [(0.5, Some((0.5, 0.75))), (0.75, None)] {
        let mut p = csr_example();
        p.descriptor.statistics = Some(Statistics::default().with_nnz(5).with_sparsity_ratio(ratio));
        let bytes = build(p);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        let t = file.tensor("A").unwrap();
        assert_eq!(t.sparsity_ratio_mismatch(), mismatch);
        assert!(t.csr::<f32>().is_ok());
    }
}

/// § Buffer Size: "All buffers MUST satisfy the alignment requirements in
/// buffer-protocol.md": a non-empty buffer declaring 32 is refused, an
/// empty one may declare any power of two.
#[test]
fn csr_rule_buffer_alignment() {
    for buffer in 0..3 {
        let mut p = csr_example();
        p.descriptor.buffers[buffer].alignment = 32;
        assert_alignment_refused(&build(p), open_csr, buffer, 32);
    }
    let mut p = csr(4, 5, &[], &[], &[0; 5]);
    p.descriptor.buffers[0].alignment = 1;
    p.descriptor.buffers[1].alignment = 2;
    assert_eq!(open_csr(&build(p), Options::strict()), Ok(()));
}

/// Every CSR rule's error names the field, its absolute byte offset and
/// the section (`Error::field`, `offset`, `rule`, and the message).
#[test]
fn every_csr_error_names_field_offset_and_section() {
    type Damage = fn(&mut Parts);
    let cases: [(Damage, &str, At, &str); 12] = [
        (
            |p| p.descriptor.shape = vec![20],
            "rank",
            At::Field("rank"),
            "layouts/csr.md § Description",
        ),
        (
            |p| p.descriptor.buffers.truncate(2),
            "buffer_count",
            At::Field("buffer_count"),
            "layouts/csr.md § Buffer Table",
        ),
        (
            |p| p.descriptor.layout_fields[8] = 7,
            "_reserved",
            At::Field("_reserved"),
            "layouts/csr.md § Additional Descriptor Fields",
        ),
        (
            |p| p.descriptor.byte_offset = 4,
            "byte_offset",
            At::Field("byte_offset"),
            "memory-layout.md § Common Fields › byte_offset",
        ),
        (
            |p| {
                p.descriptor.buffers[2].byte_size = 48;
                p.buffers[2].resize(48, 0);
            },
            "buffer[2].byte_size",
            At::Field("buffer[2].byte_size"),
            "layouts/csr.md § Buffer Size",
        ),
        (
            |p| set_nnz(p, 4),
            "nnz",
            At::Field("nnz"),
            "layouts/csr.md § Buffer Size",
        ),
        (
            |p| p.buffers[2] = u64s(&[2, 2, 3, 5, 5]),
            "row_ptr[0]",
            At::Buffer(2, 0),
            "layouts/csr.md § Storage Invariants (1)",
        ),
        (
            |p| p.buffers[2] = u64s(&[0, 2, 3, 4, 4]),
            "row_ptr[4]",
            At::Buffer(2, 32),
            "layouts/csr.md § Storage Invariants (1)",
        ),
        (
            |p| p.buffers[2] = u64s(&[0, 2, 1, 5, 5]),
            "row_ptr[2]",
            At::Buffer(2, 16),
            "layouts/csr.md § Storage Invariants (2)",
        ),
        (
            |p| p.buffers[1] = u64s(&[0, 3, 2, 4, 1]),
            "col_indices[4]",
            At::Buffer(1, 32),
            "layouts/csr.md § Storage Invariants (3)",
        ),
        (
            |p| p.buffers[1] = u64s(&[0, 3, 7, 1, 4]),
            "col_indices[2]",
            At::Buffer(1, 16),
            "layouts/csr.md § Storage Invariants (4)",
        ),
        (
            |p| p.descriptor.statistics = Some(Statistics::default().with_nnz(4)),
            "statistics.nnz",
            At::Field("statistics.nnz"),
            "layouts/csr.md § Interaction with Statistics Section",
        ),
    ];
    for (damage, field, at, rule) in cases {
        let mut p = csr_example();
        damage(&mut p);
        let bytes = build(p);
        let e = open_csr(&bytes, Options::strict()).unwrap_err();
        let offset = at.offset(&bytes);
        assert_names(&e, field, offset, rule);
    }
}
