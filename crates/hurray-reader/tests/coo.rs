//! COO (`layouts/coo.md`): the worked example asserted value by value
//! through `CooView`, and one test per rule of the section that no other
//! test asserted with an exact value or error variant.
//! `docs/sparse-rules.md` maps every rule to its code and tests (CSR's
//! counterpart is `tests/csr.rs`).

mod support {
    pub mod locate;
    pub mod sparse_parts;
}

use hurray_reader::{Error, Field, HurrayFile, Layout, Location, Options, Scope};
use hurray_writer::{ElementType, Statistics, TensorDescriptor};
use support::locate::{buffer_offset, field_offset};
use support::sparse_parts::{
    assert_alignment_refused, assert_names, assert_statistics_nnz_refused, buffer_table, build, coo, coo_error,
    coo_example, csr_example, open_coo, set_nnz, table, u64s, Parts,
};

// ---------------------------------------------------------------------------
// COO: the worked example.

#[test]
fn coo_worked_example_descriptor_and_buffers() {
    let bytes = build(coo_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.layout(), Layout::Coo);
    assert_eq!(bytes[field_offset(&bytes, "layout_tag") as usize], 0x06);
    assert_eq!(bytes[field_offset(&bytes, "is_sorted") as usize], 0x01);
    assert_eq!(t.shape().collect::<Vec<_>>(), [4, 4]);
    assert_eq!(t.nnz(), Some(3));
    assert_eq!(t.descriptor().byte_offset(), 0);
    // values: 12 bytes (3 float32); indices: 3 × 2 × 8 = 48 bytes.
    assert_eq!(
        buffer_table(&bytes),
        table(&[("values", "float32", 3, 12), ("indices", "uint64", 6, 48)])
    );
    let a = t.coo::<f32>().unwrap();
    assert_eq!(a.nnz(), 3);
    assert_eq!(a.values(), [1.5, -0.5, 2.0]);
    let s = a.structure();
    assert!(s.is_sorted() && s.is_validated());
    assert_eq!((s.shape(), s.rank(), s.nnz()), (&[4u64, 4][..], 2, 3));
    assert_eq!(s.indices(), [0, 1, 2, 0, 3, 3]);
    // Entry i: indices[i * rank + d].
    let entries: Vec<&[u64]> = (0..3).map(|i| s.coordinates(i).unwrap()).collect();
    assert_eq!(entries, [&[0, 1][..], &[2, 0], &[3, 3]]);
    assert_eq!(s.coordinates(3), None);
    assert_eq!(s.coordinates(u64::MAX), None);
    let listed: Vec<(Vec<u64>, f32)> = a.iter().unwrap().map(|(c, v)| (c.to_vec(), *v)).collect();
    assert_eq!(listed, [(vec![0, 1], 1.5), (vec![2, 0], -0.5), (vec![3, 3], 2.0)]);
}

/// § Element Lookup: all sixteen positions, by binary search (sorted) and
/// by linear scan (the same entries, unsorted); positions as stored.
#[test]
fn coo_worked_example_get_all_sixteen_positions() {
    let dense = [
        [0.0, 1.5, 0.0, 0.0],
        [0.0; 4],
        [-0.5, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 2.0],
    ];
    let unsorted = coo(&[4, 4], &[2.0, 1.5, -0.5], &[3, 3, 0, 1, 2, 0], false);
    for (p, positions) in [(coo_example(), [0u64, 1, 2]), (unsorted, [1, 2, 0])] {
        let bytes = build(p);
        let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
        let a = file.tensor("A").unwrap().coo::<f32>().unwrap();
        let mut found = Vec::new();
        for (r, row) in dense.iter().enumerate() {
            for (c, &want) in row.iter().enumerate() {
                let index = [r as u64, c as u64];
                let got = a.get(&index).unwrap().copied();
                assert_eq!(got.unwrap_or(0.0), want, "{index:?}");
                assert_eq!(got.is_some(), want != 0.0, "{index:?}");
                if let Some(position) = a.structure().position(&index).unwrap() {
                    found.push(position);
                }
            }
        }
        assert_eq!(found, positions);
    }
}

// ---------------------------------------------------------------------------
// COO: one test per rule.

#[test]
fn coo_the_unbroken_parts_are_valid() {
    for options in [Options::strict(), Options::permissive()] {
        assert_eq!(open_coo(&build(coo_example()), options), Ok(()));
    }
}

/// Layout tag `0x06` (NOTES.md "Layout tag numbers": older copies number
/// COO `0x07`, which is CSR here); the COO example tagged `0x07` is checked
/// as CSR and refused (3 buffers), never viewed as COO.
#[test]
fn coo_rule_layout_tag_is_0x06() {
    assert_eq!(Layout::from_tag(0x06), Layout::Coo);
    assert_eq!(Layout::Coo.tag(), 0x06);
    assert_eq!(Layout::Coo.as_str(), "coo");
    let mut p = coo_example();
    p.descriptor.layout_tag = 0x07;
    let bytes = build(p);
    let e = HurrayFile::parse(&bytes, Options::default())
        .unwrap()
        .tensor("A")
        .map(drop)
        .unwrap_err();
    // Checked as CSR: its `_reserved` bytes (COO's is_sorted = 1 among them)
    // or its buffer table, never COO's rules.
    assert!(e.rule().is_some_and(|r| r.starts_with("layouts/csr.md")), "{e:?}");
    let bytes = build(csr_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert!(matches!(
        t.coo_structure(),
        Err(Error::LayoutMismatch { requested: "coo", .. })
    ));
}

/// § Validity Constraints: COO MUST NOT be rank 0 (`data-model.md` §
/// Scalar Tensors); § Description: any other rank (1, 3, 5 here).
#[test]
fn coo_rule_rank_0_is_refused_other_ranks_accepted() {
    let mut p = coo(&[4], &[1.0], &[2], true);
    p.descriptor.shape = vec![];
    let bytes = build(p);
    for options in [Options::strict(), Options::permissive()] {
        let e = open_coo(&bytes, options).unwrap_err();
        assert!(
            matches!(
                e,
                Error::RankNotAllowed {
                    rank: 0,
                    layout: "coo",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_names(
            &e,
            "rank",
            field_offset(&bytes, "rank"),
            "data-model.md § Scalar Tensors",
        );
    }
    // Rank 1: a sparse vector.
    let bytes = build(coo(&[10], &[1.0, 2.0, 3.0], &[1, 4, 9], true));
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().coo::<f32>().unwrap();
    let got: Vec<Option<f32>> = (0..10).map(|i| a.get(&[i]).unwrap().copied()).collect();
    let mut want = vec![None; 10];
    (want[1], want[4], want[9]) = (Some(1.0), Some(2.0), Some(3.0));
    assert_eq!(got, want);
    // Rank 5: one entry per corner of a 2 × 2 × 2 × 2 × 3 box (nnz × 5 indices).
    let shape = [2u64, 2, 2, 2, 3];
    let tuples: Vec<[u64; 5]> = vec![[0, 0, 0, 0, 0], [0, 1, 0, 1, 2], [1, 0, 1, 1, 1], [1, 1, 1, 1, 2]];
    let indices: Vec<u64> = tuples.concat();
    let bytes = build(coo(&shape, &[1.0, 2.0, 3.0, 4.0], &indices, true));
    assert_eq!(
        buffer_table(&bytes)[1],
        ("indices".to_owned(), "uint64".to_owned(), 20, 160)
    );
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().coo::<f32>().unwrap();
    assert_eq!(a.structure().rank(), 5);
    for (i, t) in tuples.iter().enumerate() {
        assert_eq!(a.structure().coordinates(i as u64), Some(&t[..]));
        assert_eq!(a.get(t).unwrap(), Some(&(i as f32 + 1.0)));
    }
    assert_eq!(a.get(&[1, 1, 1, 1, 1]).unwrap(), None);
}

/// A rank-3 unsorted COO (`is_sorted = 0`) like the interop corpus's
/// `coo_unsorted_rank3_int32.hry`: any order, lookups by linear scan, each
/// tuple `indices[3i..3i + 3]`, iteration in storage order.
#[test]
fn coo_rank_3_unsorted() {
    let indices = [2, 0, 1, 0, 2, 3, 1, 1, 0, 0, 0, 0, 2, 2, 3];
    let values = [10i32, 20, 30, 40, 50];
    let d = TensorDescriptor::coo(ElementType::Int32, vec![3, 3, 4], 5, false)
        .unwrap()
        .to_raw();
    let p = Parts {
        descriptor: d,
        buffers: vec![values.iter().flat_map(|v| v.to_le_bytes()).collect(), u64s(&indices)],
    };
    let bytes = build(p);
    assert_eq!(bytes[field_offset(&bytes, "is_sorted") as usize], 0x00);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().coo::<i32>().unwrap();
    assert!(!a.structure().is_sorted());
    let mut stored = 0;
    for i in 0..3u64 {
        for j in 0..3u64 {
            for k in 0..4u64 {
                let want = indices.chunks(3).position(|t| t == [i, j, k]).map(|p| values[p]);
                assert_eq!(a.get(&[i, j, k]).unwrap().copied(), want, "[{i}, {j}, {k}]");
                stored += usize::from(want.is_some());
            }
        }
    }
    assert_eq!(stored, 5);
    let listed: Vec<(Vec<u64>, i32)> = a.iter().unwrap().map(|(c, v)| (c.to_vec(), *v)).collect();
    let want: Vec<(Vec<u64>, i32)> = indices.chunks(3).map(<[u64]>::to_vec).zip(values).collect();
    assert_eq!(listed, want);
}

/// § Buffer Table: `buffer_count = 2`, in both modes.
#[test]
fn coo_rule_buffer_count_must_be_2() {
    for count in [1usize, 3] {
        let mut p = coo_example();
        if count == 1 {
            p.descriptor.buffers.truncate(1);
        } else {
            p.descriptor.buffers.push(p.descriptor.buffers[1]);
            p.buffers.push(u64s(&[0, 1, 2, 0, 3, 3]));
        }
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_coo(&bytes, options).unwrap_err();
            assert!(
                matches!(e, Error::Invalid { value, expected: "2 (values, indices)", .. } if value == count as u64),
                "{e:?}"
            );
            assert_names(
                &e,
                "buffer_count",
                field_offset(&bytes, "buffer_count"),
                "layouts/coo.md § Buffer Table",
            );
        }
    }
}

/// § Additional Descriptor Fields: `is_sorted` is `0x00` or `0x01` (any
/// other value refused, both modes); the 7 `_reserved` bytes MUST be 0.
#[test]
fn coo_rule_is_sorted_and_reserved_fields() {
    for value in [0x02u8, 0xFF] {
        let mut p = coo_example();
        p.descriptor.layout_fields[8] = value;
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_coo(&bytes, options).unwrap_err();
            assert!(
                matches!(e, Error::Invalid { value: v, expected: "0x00 or 0x01", .. } if v == u64::from(value)),
                "{e:?}"
            );
            assert_names(
                &e,
                "is_sorted",
                field_offset(&bytes, "is_sorted"),
                "layouts/coo.md § Additional Descriptor Fields",
            );
        }
    }
    for byte in 9..16 {
        let mut p = coo_example();
        p.descriptor.layout_fields[byte] = 0x01;
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_coo(&bytes, options).unwrap_err();
            assert!(matches!(e, Error::Reserved { .. }), "{e:?}");
            assert_eq!(e.field(), Some(Field::new("_reserved")));
            assert_eq!(e.rule(), Some("layouts/coo.md § Additional Descriptor Fields"));
            let start = field_offset(&bytes, "_reserved");
            assert!(e.offset().is_some_and(|o| (start..start + 7).contains(&o)), "{e}");
        }
    }
}

/// § Buffer Size note: "For COO tensors, `byte_offset` MUST be set to 0",
/// in both modes.
#[test]
fn coo_rule_byte_offset_must_be_zero() {
    let mut p = coo_example();
    p.descriptor.byte_offset = 4;
    let bytes = build(p);
    for options in [Options::strict(), Options::permissive()] {
        let e = open_coo(&bytes, options).unwrap_err();
        assert!(matches!(e, Error::Invalid { value: 4, .. }), "{e:?}");
        assert_names(
            &e,
            "byte_offset",
            field_offset(&bytes, "byte_offset"),
            "memory-layout.md § Common Fields › byte_offset",
        );
    }
}

/// § Buffer Size: `values` `nnz × 4`, `indices` `nnz × rank × 8` bytes,
/// exactly, in both modes (NOTES.md "Buffer larger than required"); a
/// descriptor `nnz` the two buffers agree against is named itself.
#[test]
fn coo_rule_buffer_sizes_are_exact_in_both_modes() {
    for (buffer, role, width, expected) in [(0usize, "values", 4u64, 12u64), (1, "indices", 8, 48)] {
        for size in [expected - width, expected + width] {
            let mut p = coo_example();
            p.descriptor.buffers[buffer].byte_size = size;
            p.buffers[buffer].resize(size as usize, 0);
            let bytes = build(p);
            for options in [Options::strict(), Options::permissive()] {
                let e = open_coo(&bytes, options).unwrap_err();
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
                assert_names(&e, &field, field_offset(&bytes, &field), "layouts/coo.md § Buffer Size");
            }
        }
    }
    // indices sized for rank 2 (48 bytes) in a rank-3 tensor: nnz × 3 × 8 = 72.
    let mut p = coo_example();
    p.descriptor.shape = vec![4, 4, 4];
    let e = coo_error(p);
    assert!(
        matches!(
            e,
            Error::BufferSize {
                at: Location {
                    field: Field { index: Some(1), .. },
                    ..
                },
                role: "indices",
                byte_size: 48,
                expected: 72,
                ..
            }
        ),
        "{e:?}"
    );
    // nnz = 2 while both buffers hold 3 entries: nnz is named.
    let mut p = coo_example();
    set_nnz(&mut p, 2);
    let bytes = build(p);
    let e = open_coo(&bytes, Options::permissive()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::NnzMismatch {
                nnz: 2,
                held: 3,
                buffers: "values and indices",
                ..
            }
        ),
        "{e:?}"
    );
    assert_names(&e, "nnz", field_offset(&bytes, "nnz"), "layouts/coo.md § Buffer Size");
    // Packed values: ceil(nnz / 2) bytes for int4.
    let d = TensorDescriptor::coo(ElementType::Int4, vec![4, 4], 3, true)
        .unwrap()
        .to_raw();
    assert_eq!(d.buffers[0].byte_size, 2);
}

/// NOTES.md "Overflow in range checks": `nnz × rank` and `× 8` never
/// wrap; the dynamic sentinel in any dimension is refused.
#[test]
fn coo_rule_sizes_are_computed_without_overflow() {
    for (nnz, shape) in [
        (1u64 << 62, vec![4u64, 4]),
        (u64::MAX / 2 + 1, vec![4, 4]),
        (1 << 61, vec![4]),
    ] {
        let mut p = coo_example();
        p.descriptor.shape = shape;
        set_nnz(&mut p, nnz);
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let e = open_coo(&bytes, options).unwrap_err();
            assert!(matches!(e, Error::Overflow { .. }), "{nnz}: {e:?}");
            assert_names(&e, "nnz", field_offset(&bytes, "nnz"), "layouts/coo.md § Buffer Size");
        }
    }
    let mut p = coo_example();
    p.descriptor.shape = vec![4, 4, u64::MAX];
    let bytes = build(p);
    let e = open_coo(&bytes, Options::strict()).unwrap_err();
    assert!(matches!(e, Error::DynamicDimension { .. }), "{e:?}");
    assert_eq!(e.field(), Some(Field::at("shape", 2)));
    assert_eq!(e.offset(), Some(field_offset(&bytes, "shape[2]")));
}

/// § Validity Constraints (1): every coordinate below its dimension; the
/// error names `indices[i × rank + d]`, its offset and `shape[d]`.
#[test]
fn coo_rule_validity_1_coordinates_in_bounds() {
    let base = build(coo_example());
    let at = buffer_offset(&base, 1);
    for sorted in [true, false] {
        for (k, value, dim) in [(1usize, 4u64, 1u64), (4, 4, 0), (5, u64::MAX, 1)] {
            let mut indices = [0u64, 1, 2, 0, 3, 3];
            indices[k] = value;
            let e = coo_error(coo(&[4, 4], &[1.5, -0.5, 2.0], &indices, sorted));
            assert_eq!(
                e,
                Error::IndexOutOfBounds {
                    at: Location {
                        scope: Scope::Tensor("A".into()),
                        field: Field::at("indices", k as u64),
                        offset: at + 8 * k as u64,
                        rule: "layouts/coo.md § Validity Constraints",
                    },
                    value,
                    bound: 4,
                    bound_name: Field::at("shape", dim),
                },
                "sorted {sorted}"
            );
            assert_names(
                &e,
                &format!("indices[{k}]"),
                at + 8 * k as u64,
                "layouts/coo.md § Validity Constraints",
            );
        }
    }
    // Bounds are per dimension: [2, 9] is inside [3, 10].
    assert_eq!(
        open_coo(&build(coo(&[3, 10], &[1.0], &[2, 9], true)), Options::strict()),
        Ok(())
    );
}

/// § Validity Constraints (2): no two entries share a tuple (unsorted: the
/// later one is named), and (3): with `is_sorted = 1`, strictly increasing
/// lexicographic order, dimension 0 major — a tie or a decrease is named
/// at the entry that breaks it (NOTES.md "COO is_sorted = 1": a false
/// claim is an error).
#[test]
fn coo_rule_validity_2_and_3_duplicates_and_order() {
    let base = build(coo_example());
    let at = buffer_offset(&base, 1);
    let order = |position: u64, what: &'static str| Error::CooOrder {
        at: Location {
            scope: Scope::Tensor("A".into()),
            field: Field::at("indices", position * 2),
            offset: at + position * 16,
            rule: "layouts/coo.md § Validity Constraints",
        },
        position,
        what,
    };
    const DUPLICATE: &str = "duplicate coordinates";
    const UNSORTED: &str = "entries are not in strictly increasing lexicographic order although is_sorted = 1";
    for (indices, sorted, expected) in [
        // (2) unsorted with a duplicate: (3,3) at entries 0 and 2.
        ([3u64, 3, 0, 1, 3, 3], false, order(2, DUPLICATE)),
        // (2)/(3) sorted with a tie.
        ([0, 1, 0, 1, 3, 3], true, order(1, UNSORTED)),
        // (3) dimension 0 decreases.
        ([2, 0, 0, 1, 3, 3], true, order(1, UNSORTED)),
        // (3) same row, column decreases.
        ([0, 1, 3, 3, 3, 0], true, order(2, UNSORTED)),
    ] {
        let e = coo_error(coo(&[4, 4], &[1.5, -0.5, 2.0], &indices, sorted));
        assert_eq!(e, expected, "{indices:?} sorted {sorted}");
        let position = match &e {
            Error::CooOrder {
                at:
                    Location {
                        field: Field {
                            index: Some(element), ..
                        },
                        ..
                    },
                ..
            } => *element,
            _ => unreachable!(),
        };
        assert_names(
            &e,
            &format!("indices[{position}]"),
            at + position * 8,
            "layouts/coo.md § Validity Constraints",
        );
    }
    // Dimension 0 is major: (0, 3) < (1, 0); the same entries unsorted
    // with is_sorted = 0 are valid (no ordering guarantee).
    assert_eq!(
        open_coo(
            &build(coo(&[4, 4], &[1.0, 2.0], &[0, 3, 1, 0], true)),
            Options::strict()
        ),
        Ok(())
    );
    assert_eq!(
        open_coo(
            &build(coo(&[4, 4], &[2.0, 1.0], &[1, 0, 0, 3], false)),
            Options::strict()
        ),
        Ok(())
    );
    // Rank 3: the second coordinate decides when the first ties.
    let e = coo_error(coo(&[2, 3, 4], &[1.0, 2.0], &[0, 2, 0, 0, 1, 3], true));
    assert!(
        matches!(
            e,
            Error::CooOrder {
                at: Location {
                    field: Field { index: Some(3), .. },
                    ..
                },
                position: 1,
                ..
            }
        ),
        "{e:?}"
    );
}

/// § Validity Constraints: "MUST reject ... unless permissive". Permissive
/// mode opens the view without the check; `validate` still names the
/// violation, and a lookup or an iteration reports it instead of answering
/// (binary search over a false `is_sorted`, a second entry at the same
/// coordinates, a coordinate out of bounds).
#[test]
fn coo_permissive_skips_only_the_check_and_never_answers_wrongly() {
    for (indices, sorted) in [
        ([0u64, 1, 3, 3, 2, 0], true), // false claim: binary search would miss (2, 0)
        ([3, 3, 0, 1, 3, 3], false),   // duplicate (3, 3)
        ([0, 1, 2, 0, 3, 4], true),    // column 4 of a 4 × 4 tensor
    ] {
        let bytes = build(coo(&[4, 4], &[1.5, -0.5, 2.0], &indices, sorted));
        let e = open_coo(&bytes, Options::strict()).unwrap_err();
        let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
        let t = file.tensor("A").unwrap();
        let a = t.coo::<f32>().unwrap();
        assert!(!a.structure().is_validated());
        assert_eq!(a.structure().validate(), Err(e.clone()), "{indices:?}");
        assert_eq!(a.structure().validate_parallel(3), Err(e.clone()));
        assert_eq!(t.validate_data(), Err(e.clone()));
        assert!(a.iter().is_err());
        let index = [indices[0], indices[1]];
        let lookup = a.get(&index);
        assert!(lookup.is_err(), "{indices:?}: {index:?} answered {lookup:?}");
    }
    // Structural rules stay on in permissive mode (see the rule tests): the
    // permissive allowance names only the validity constraints.
}

/// § Additional Descriptor Fields (`nnz` MAY be 0), `data-model.md` §
/// Empty Tensors: nothing stored, in shapes with and without a zero
/// dimension, any rank; both buffers empty; every lookup an implicit zero.
#[test]
fn coo_empty_tensors_and_nnz_zero_are_valid() {
    for shape in [vec![0u64], vec![4, 4], vec![0, 3], vec![2, 0, 5], vec![1, 1, 1, 1]] {
        for sorted in [true, false] {
            let bytes = build(coo(&shape, &[], &[], sorted));
            for options in [Options::strict(), Options::permissive()] {
                let file = HurrayFile::parse(&bytes, options).unwrap();
                let t = file.tensor("A").unwrap();
                let sizes: Vec<u64> = t.buffers().iter().map(|b| b.byte_size()).collect();
                assert_eq!(sizes, [0, 0]);
                let a = t.coo::<f32>().unwrap();
                assert_eq!((a.nnz(), a.values().len(), a.structure().indices().len()), (0, 0, 0));
                assert_eq!(a.iter().unwrap().count(), 0);
                if !shape.contains(&0) {
                    assert_eq!(a.get(&vec![0; shape.len()]).unwrap(), None);
                }
            }
        }
    }
}

/// No rule bounds `nnz` by itself; (1) and (2) do: a tensor with a zero
/// dimension stores nothing, a `[1, 1]` tensor at most one entry.
#[test]
fn coo_nnz_is_bounded_by_the_shape_through_the_constraints() {
    let e = coo_error(coo(&[3, 0], &[1.0], &[0, 0], false));
    assert!(
        matches!(&e, Error::IndexOutOfBounds {
            at: Location { field: Field { index: Some(1), .. }, .. },
            value: 0,
            bound: 0,
            bound_name,
            ..
        } if *bound_name == Field::at("shape", 1)),
        "{e:?}"
    );
    let e = coo_error(coo(&[1, 1], &[1.0, 2.0], &[0, 0, 0, 0], false));
    assert!(
        matches!(
            e,
            Error::CooOrder {
                position: 1,
                what: "duplicate coordinates",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        open_coo(
            &build(coo(&[1, 2], &[1.0, 2.0], &[0, 0, 0, 1], true)),
            Options::strict()
        ),
        Ok(())
    );
}

/// § Element Lookup: an index with the wrong number of coordinates or
/// outside the shape is an argument error, never an out-of-bounds read.
#[test]
fn coo_lookups_out_of_range_are_errors() {
    let bytes = build(coo_example());
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().coo::<f32>().unwrap();
    for index in [&[][..], &[0], &[0, 1, 0]] {
        assert_eq!(
            a.get(index),
            Err(Error::LengthMismatch {
                tensor: "A".into(),
                what: "index",
                len: index.len() as u64,
                expected_name: "rank",
                expected: 2,
            })
        );
    }
    for (index, axis, value) in [([4u64, 0], 0u64, 4u64), ([0, u64::MAX], 1, u64::MAX)] {
        assert_eq!(
            a.get(&index),
            Err(Error::CoordinateArgument {
                tensor: "A".into(),
                axis,
                value,
                bound: 4,
            })
        );
    }
    assert!(matches!(
        file.tensor("A").unwrap().coo::<f64>(),
        Err(Error::TypeMismatch {
            requested: "float64",
            ..
        })
    ));
    assert!(matches!(
        file.tensor("A").unwrap().csr::<f32>(),
        Err(Error::LayoutMismatch {
            requested: "csr",
            actual: "coo",
            ..
        })
    ));
}

/// § Interaction with Statistics Section: statistics `nnz` (with
/// `NNZ_VALID`) MUST match; `sparsity_ratio` SHOULD be `1 − nnz /
/// total_elements` with `total_elements` the product of all of `shape`
/// (rank 3 here: 1 − 3 / 32): reported, never fatal.
#[test]
fn coo_rule_statistics() {
    let mut p = coo_example();
    p.descriptor.statistics = Some(Statistics::default().with_nnz(2));
    let bytes = build(p);
    assert_statistics_nnz_refused(
        &bytes,
        open_coo,
        2,
        3,
        "layouts/coo.md § Interaction with Statistics Section",
    );
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    assert_eq!(file.tensor("A").unwrap().coo::<f32>().unwrap().nnz(), 3);
    let indices = [0u64, 0, 1, 1, 2, 0, 3, 3, 1];
    for (ratio, mismatch) in [
        (1.0 - 3.0 / 16.0, Some((1.0 - 3.0 / 16.0, 1.0 - 3.0 / 32.0))),
        (1.0 - 3.0 / 32.0, None),
    ] {
        let mut p = coo(&[4, 4, 2], &[1.0, 2.0, 3.0], &indices, true);
        p.descriptor.statistics = Some(Statistics::default().with_nnz(3).with_sparsity_ratio(ratio));
        let bytes = build(p);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        let t = file.tensor("A").unwrap();
        assert_eq!(t.sparsity_ratio_mismatch(), mismatch);
        assert!(t.coo::<f32>().is_ok());
    }
}

/// § Buffer Size: "Both buffers MUST satisfy the alignment requirements in
/// buffer-protocol.md".
#[test]
fn coo_rule_buffer_alignment() {
    for buffer in 0..2 {
        let mut p = coo_example();
        p.descriptor.buffers[buffer].alignment = 16;
        assert_alignment_refused(&build(p), open_coo, buffer, 16);
    }
    let mut p = coo(&[4, 4], &[], &[], true);
    p.descriptor.buffers[0].alignment = 1;
    p.descriptor.buffers[1].alignment = 8;
    assert_eq!(open_coo(&build(p), Options::strict()), Ok(()));
}
