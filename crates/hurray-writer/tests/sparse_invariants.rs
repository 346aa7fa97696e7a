//! Every checked helper refuses each broken storage invariant with the
//! matching error variant (one test per rule).

use hurray_writer::{Coo, Csc, Csf, CsfLevel, Csr, Dense, ElementType, Error, Values};

const V5: [f32; 5] = [1.0, 4.0, 3.0, 2.0, 5.0];
const ROWS: [u64; 5] = [0, 2, 1, 0, 2];
const PTR: [u64; 6] = [0, 1, 2, 3, 4, 5];

// ---- CSC (layouts/csc.md) ----

#[test]
fn csc_valid() {
    let c = Csc::new(4, 5, &V5, &ROWS, &PTR).unwrap();
    assert_eq!(c.nnz(), 5);
    // Empty columns and nnz = 0 are fine.
    Csc::new(3, 4, &[] as &[f32], &[], &[0, 0, 0, 0, 0]).unwrap();
    Csc::new(5, 0, &[] as &[f32], &[], &[0]).unwrap();
    Csc::new(4, 2, &[1.0f64, 2.0, 3.0], &[0, 3, 1], &[0, 2, 3]).unwrap();
}

#[test]
fn csc_col_ptr_length() {
    let e = Csc::new(4, 5, &V5, &ROWS, &PTR[..5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerLength { array: "col_ptr", expected: 6, actual: 5, rule } if rule.starts_with("layouts/csc.md")
        ),
        "{e}"
    );
}

#[test]
fn csc_col_ptr_first_nonzero() {
    let e = Csc::new(4, 5, &V5, &ROWS, &[1, 1, 2, 3, 4, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerStart {
                array: "col_ptr",
                value: 1,
                rule: "layouts/csc.md § Storage Invariants (1)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csc_col_ptr_last_not_nnz() {
    let e = Csc::new(4, 5, &V5, &ROWS, &[0, 1, 2, 3, 4, 4]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerEnd {
                array: "col_ptr",
                position: 5,
                value: 4,
                expected: 5,
                rule: "layouts/csc.md § Storage Invariants (1)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csc_col_ptr_decreasing() {
    let e = Csc::new(4, 5, &V5, &ROWS, &[0, 1, 3, 2, 4, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerDecreasing {
                array: "col_ptr",
                position: 2,
                value: 3,
                next: 2,
                rule: "layouts/csc.md § Storage Invariants (2)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csc_rows_unsorted_in_column() {
    // Column 0 holds rows [2, 0].
    let e = Csc::new(4, 2, &[1.0f32, 2.0, 3.0], &[2, 0, 1], &[0, 2, 3]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndicesNotIncreasing {
                array: "row_indices",
                position: 1,
                previous: 2,
                value: 0,
                rule: "layouts/csc.md § Storage Invariants (3)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csc_duplicate_row_in_column() {
    let e = Csc::new(4, 2, &[1.0f32, 2.0, 3.0], &[1, 1, 0], &[0, 2, 3]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndicesNotIncreasing {
                array: "row_indices",
                position: 1,
                previous: 1,
                value: 1,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csc_rows_may_restart_in_next_column() {
    // Decreasing across a column boundary is fine.
    Csc::new(4, 2, &[1.0f32, 2.0, 3.0], &[2, 3, 0], &[0, 2, 3]).unwrap();
}

#[test]
fn csc_row_out_of_bounds() {
    let e = Csc::new(4, 5, &V5, &[0, 2, 1, 0, 4], &PTR).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                array: "row_indices",
                position: 4,
                value: 4,
                bound: 4,
                rule: "layouts/csc.md § Storage Invariants (4)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csc_values_length() {
    let e = Csc::new(4, 5, &V5[..4], &ROWS, &PTR).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ValueCount {
                expected: 5,
                actual: 4,
                ..
            }
        ),
        "{e}"
    );
}

// ---- CSR (layouts/csr.md) ----

const CSR_V: [f32; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];
const CSR_COLS: [u64; 5] = [0, 3, 2, 1, 4];

#[test]
fn csr_valid() {
    assert_eq!(Csr::new(4, 5, &CSR_V, &CSR_COLS, &[0, 2, 3, 5, 5]).unwrap().nnz(), 5);
}

#[test]
fn csr_row_ptr_length() {
    let e = Csr::new(4, 5, &CSR_V, &CSR_COLS, &[0, 2, 3, 5, 5, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerLength {
                array: "row_ptr",
                expected: 5,
                actual: 6,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csr_row_ptr_first_nonzero() {
    let e = Csr::new(4, 5, &CSR_V, &CSR_COLS, &[1, 2, 3, 5, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerStart {
                array: "row_ptr",
                value: 1,
                rule: "layouts/csr.md § Storage Invariants (1)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csr_row_ptr_last_not_nnz() {
    let e = Csr::new(4, 5, &CSR_V, &CSR_COLS, &[0, 2, 3, 5, 6]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerEnd {
                array: "row_ptr",
                value: 6,
                expected: 5,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csr_row_ptr_decreasing() {
    let e = Csr::new(4, 5, &CSR_V, &CSR_COLS, &[0, 3, 2, 5, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerDecreasing {
                array: "row_ptr",
                position: 1,
                value: 3,
                next: 2,
                rule: "layouts/csr.md § Storage Invariants (2)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csr_cols_unsorted_in_row() {
    let e = Csr::new(4, 5, &CSR_V, &[3, 0, 2, 1, 4], &[0, 2, 3, 5, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndicesNotIncreasing {
                array: "col_indices",
                position: 1,
                previous: 3,
                value: 0,
                rule: "layouts/csr.md § Storage Invariants (3)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csr_col_out_of_bounds() {
    let e = Csr::new(4, 5, &CSR_V, &[0, 3, 2, 1, 5], &[0, 2, 3, 5, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                array: "col_indices",
                position: 4,
                value: 5,
                bound: 5,
                rule: "layouts/csr.md § Storage Invariants (4)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csr_values_length() {
    let e = Csr::new(4, 5, &[1.0f32; 6], &CSR_COLS, &[0, 2, 3, 5, 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ValueCount {
                expected: 5,
                actual: 6,
                ..
            }
        ),
        "{e}"
    );
}

// ---- COO (layouts/coo.md) ----

const COO_V: [f32; 3] = [1.5, -0.5, 2.0];

#[test]
fn coo_valid() {
    Coo::new(&[4, 4], &COO_V, &[0, 1, 2, 0, 3, 3], true).unwrap();
    Coo::new(&[4, 4], &COO_V, &[3, 3, 0, 1, 2, 0], false).unwrap();
    Coo::new(&[4], &[] as &[f32], &[], true).unwrap();
}

#[test]
fn coo_index_out_of_bounds() {
    let e = Coo::new(&[4, 4], &COO_V, &[0, 1, 2, 4, 3, 3], false).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                array: "indices",
                position: 3,
                value: 4,
                bound: 4,
                rule: "layouts/coo.md § Validity Constraints (1)"
            }
        ),
        "{e}"
    );
}

#[test]
fn coo_duplicate_unsorted() {
    let e = Coo::new(&[4, 4], &COO_V, &[3, 3, 0, 1, 3, 3], false).unwrap_err();
    assert!(matches!(e, Error::DuplicateCoordinate { first: 0, second: 2 }), "{e}");
}

#[test]
fn coo_duplicate_sorted() {
    let e = Coo::new(&[4, 4], &COO_V, &[0, 1, 0, 1, 3, 3], true).unwrap_err();
    assert!(matches!(e, Error::DuplicateCoordinate { first: 0, second: 1 }), "{e}");
}

#[test]
fn coo_sorted_claim_false() {
    let e = Coo::new(&[4, 4], &COO_V, &[2, 0, 0, 1, 3, 3], true).unwrap_err();
    assert!(matches!(e, Error::CoordinatesNotSorted { position: 1 }), "{e}");
}

#[test]
fn coo_indices_length() {
    let e = Coo::new(&[4, 4], &COO_V, &[0, 1, 2, 0, 3], false).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexLength {
                array: "indices",
                expected: 6,
                actual: 5,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn coo_rank_zero() {
    let e = Coo::new(&[], &COO_V[..1], &[], false).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankNotAllowed {
                layout: "coo",
                rank: 0,
                ..
            }
        ),
        "{e}"
    );
}

// ---- CSF (layouts/csf.md) ----

const CSF_V: [f32; 4] = [1.0, 2.0, 3.0, 4.0];

fn csf_levels<'a>(pos: [&'a [u64]; 3], crd: [&'a [u64]; 3]) -> [CsfLevel<'a>; 3] {
    [
        CsfLevel {
            pos: pos[0],
            crd: crd[0],
        },
        CsfLevel {
            pos: pos[1],
            crd: crd[1],
        },
        CsfLevel {
            pos: pos[2],
            crd: crd[2],
        },
    ]
}

const POS: [&[u64]; 3] = [&[0, 2], &[0, 2, 3], &[0, 1, 2, 4]];
const CRD: [&[u64]; 3] = [&[0, 1], &[0, 2, 1], &[1, 3, 0, 2]];

#[test]
fn csf_valid() {
    let c = Csf::new(&[2, 3, 4], &[0, 1, 2], &CSF_V, &csf_levels(POS, CRD)).unwrap();
    assert_eq!(c.nnz(), 4);
    assert_eq!(c.descriptor().unwrap().buffers.len(), 7);
    // nnz = 0: pos_0 = [0, 0], deeper pos = [0].
    Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &[] as &[f32],
        &csf_levels([&[0, 0], &[0], &[0]], [&[], &[], &[]]),
    )
    .unwrap();
    // Non-identity mode order: level bounds follow it.
    Csf::new(&[4, 3, 2], &[2, 1, 0], &CSF_V, &csf_levels(POS, CRD)).unwrap();
}

#[test]
fn csf_rank_below_three() {
    let e = Csf::new(&[2, 3], &[0, 1], &CSF_V, &csf_levels(POS, CRD)[..2]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::RankNotAllowed {
                layout: "csf",
                rank: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_mode_order_not_permutation() {
    let e = Csf::new(&[2, 3, 4], &[0, 1, 1], &CSF_V, &csf_levels(POS, CRD)).unwrap_err();
    assert!(
        matches!(e, Error::ModeOrderNotPermutation { position: 2, value: 1 }),
        "{e}"
    );
}

#[test]
fn csf_mode_order_length() {
    let e = Csf::new(&[2, 3, 4], &[0, 1], &CSF_V, &csf_levels(POS, CRD)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::FieldLength {
                what: "mode_order",
                expected: 3,
                actual: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_level_count() {
    let e = Csf::new(&[2, 3, 4], &[0, 1, 2], &CSF_V, &csf_levels(POS, CRD)[..2]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::FieldLength {
                expected: 3,
                actual: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_pos_length() {
    let e = Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &CSF_V,
        &csf_levels([&[0, 2], &[0, 2], &[0, 1, 2, 4]], CRD),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerLength {
                array: "pos_1",
                expected: 3,
                actual: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_pos_first_nonzero() {
    let e = Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &CSF_V,
        &csf_levels([&[0, 2], &[1, 2, 3], &[0, 1, 2, 4]], CRD),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerStart {
                array: "pos_1",
                value: 1,
                rule: "layouts/csf.md § Storage Invariants (1)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_pos_decreasing() {
    let e = Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &CSF_V,
        &csf_levels([&[0, 2], &[0, 2, 3], &[0, 3, 2, 4]], CRD),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerDecreasing {
                array: "pos_2",
                position: 1,
                value: 3,
                next: 2,
                rule: "layouts/csf.md § Storage Invariants (2)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_pos_end_not_node_count() {
    let e = Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &CSF_V,
        &csf_levels([&[0, 1], &[0, 2, 3], &[0, 1, 2, 4]], CRD),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::PointerEnd {
                array: "pos_0",
                position: 1,
                value: 1,
                expected: 2,
                rule: "layouts/csf.md § Storage Invariants (3)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_siblings_unsorted() {
    let e = Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &CSF_V,
        &csf_levels(POS, [&[0, 1], &[2, 0, 1], &[1, 3, 0, 2]]),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndicesNotIncreasing {
                array: "crd_1",
                position: 1,
                previous: 2,
                value: 0,
                rule: "layouts/csf.md § Storage Invariants (4)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_duplicate_sibling() {
    let e = Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &CSF_V,
        &csf_levels(POS, [&[0, 1], &[0, 2, 1], &[1, 3, 2, 2]]),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndicesNotIncreasing {
                array: "crd_2",
                position: 3,
                previous: 2,
                value: 2,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_coordinate_out_of_bounds() {
    let e = Csf::new(
        &[2, 3, 4],
        &[0, 1, 2],
        &CSF_V,
        &csf_levels(POS, [&[0, 1], &[0, 3, 1], &[1, 3, 0, 2]]),
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                array: "crd_1",
                position: 1,
                value: 3,
                bound: 3,
                rule: "layouts/csf.md § Storage Invariants (5)"
            }
        ),
        "{e}"
    );
}

#[test]
fn csf_values_count() {
    let e = Csf::new(&[2, 3, 4], &[0, 1, 2], &CSF_V[..3], &csf_levels(POS, CRD)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ValueCount {
                expected: 4,
                actual: 3,
                ..
            }
        ),
        "{e}"
    );
}

// ---- Dense and values ----

#[test]
fn dense_element_count() {
    let e = Dense::row_major(&[2, 3], &[1.0f32; 5]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ValueCount {
                expected: 6,
                actual: 5,
                ..
            }
        ),
        "{e}"
    );
    let e = Dense::column_major(&[2, 3], &[1i16; 7]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::ValueCount {
                expected: 6,
                actual: 7,
                ..
            }
        ),
        "{e}"
    );
    Dense::row_major(&[], &[3.0f64]).unwrap();
    Dense::row_major(&[3, 0, 5], &[] as &[f32]).unwrap();
}

#[test]
fn dense_sub_byte_sizes() {
    // uint4 [3] = [5, 12, 3] -> C5 03 (element-types.md example).
    let v = Values::new(ElementType::UInt4, 3, &[0xC5, 0x03]).unwrap();
    let d = Dense::row_major(&[3], v).unwrap();
    assert_eq!(d.descriptor().unwrap().buffers[0].byte_size, 2);
    let v = Values::new(ElementType::Bool, 5, &[0x0D]).unwrap();
    assert_eq!(
        Dense::column_major(&[5], v).unwrap().descriptor().unwrap().buffers[0].byte_size,
        1
    );
    let v = Values::new(ElementType::Float6E3M2, 5, &[0; 6]).unwrap();
    assert_eq!(
        Dense::row_major(&[5], v).unwrap().descriptor().unwrap().buffers[0].byte_size,
        6
    );
    assert!(matches!(
        Values::new(ElementType::Int2, 5, &[0]),
        Err(Error::ValuesLength {
            count: 5,
            expected: 2,
            actual: 1
        })
    ));
    assert!(matches!(
        Values::new(ElementType::UInt2, 3, &[0xC0]),
        Err(Error::NonZeroPaddingBits { byte: 0 })
    ));
    assert!(matches!(
        Values::new(ElementType::Other(0xF3), 1, &[0]),
        Err(Error::UnknownElementType { tag: 0xF3 })
    ));
}

#[test]
fn typed_slices_of_every_primitive() {
    Dense::row_major(&[1], &[1u8]).unwrap();
    Dense::row_major(&[1], &[1u16]).unwrap();
    Dense::row_major(&[1], &[1u32]).unwrap();
    Dense::row_major(&[1], &[1u64]).unwrap();
    Dense::row_major(&[1], &[1i8]).unwrap();
    Dense::row_major(&[1], &[1i16]).unwrap();
    Dense::row_major(&[1], &[1i32]).unwrap();
    Dense::row_major(&[1], &[1i64]).unwrap();
    let halves = [half::f16::from_f32(1.0)];
    let h = Dense::row_major(&[1], &halves).unwrap();
    assert_eq!(h.descriptor().unwrap().element_type, ElementType::Float16);
    let brains = vec![half::bf16::ONE; 2];
    let b = Dense::row_major(&[2], &brains).unwrap();
    assert_eq!(b.descriptor().unwrap().buffers[0].byte_size, 4);
}
