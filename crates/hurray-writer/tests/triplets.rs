//! `TripletCsc` and `TripletCsr`: CSC and CSR arrays from unsorted
//! `(row, col, value)` triplets, duplicates rejected or summed. Exact
//! arrays and errors on hand-made cases; against a sorted-map model on
//! random triplets (never a panic, whatever the coordinates and shape).

use std::collections::BTreeMap;

use hurray_writer::{Duplicates, Error, FileWriter, TripletCsc, TripletCsr, WriterOptions};
use proptest::prelude::*;

/// The worked example of `layouts/csc.md` (4 × 5), shuffled.
const EXAMPLE: [(u64, u64, f32); 5] = [(2, 4, 5.0), (0, 3, 2.0), (1, 2, 3.0), (0, 0, 1.0), (2, 1, 4.0)];

#[test]
fn the_worked_example_from_shuffled_triplets() {
    for duplicates in [Duplicates::Reject, Duplicates::Sum] {
        let a = TripletCsc::from_triplets(4, 5, &EXAMPLE, duplicates).unwrap();
        assert_eq!(a.shape(), [4, 5]);
        assert_eq!(a.nnz(), 5);
        assert_eq!(a.col_ptr(), [0, 1, 2, 3, 4, 5]);
        assert_eq!(a.row_indices(), [0, 2, 1, 0, 2]);
        assert_eq!(a.values(), [1.0, 4.0, 3.0, 2.0, 5.0]);
        let r = TripletCsr::from_triplets(4, 5, &EXAMPLE, duplicates).unwrap();
        assert_eq!(r.row_ptr(), [0, 2, 3, 5, 5]);
        assert_eq!(r.col_indices(), [0, 3, 2, 1, 4]);
        assert_eq!(r.values(), [1.0, 2.0, 3.0, 4.0, 5.0]);
    }
    // The checked views write as the hand-made arrays do.
    let a = TripletCsc::from_triplets(4, 5, &EXAMPLE, Duplicates::Reject).unwrap();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_csc("A", &a.csc().unwrap()).unwrap();
    let ours = w.finish().unwrap();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let csc = hurray_writer::Csc::new(
        4,
        5,
        &[1.0f32, 4.0, 3.0, 2.0, 5.0][..],
        &[0, 2, 1, 0, 2],
        &[0, 1, 2, 3, 4, 5],
    )
    .unwrap();
    w.write_csc("A", &csc).unwrap();
    assert_eq!(ours, w.finish().unwrap());
    let r = TripletCsr::from_triplets(4, 5, &EXAMPLE, Duplicates::Reject).unwrap();
    assert_eq!(r.csr().unwrap().nnz(), 5);
}

#[test]
fn duplicates_are_rejected_or_summed_in_input_order() {
    // (1, 2) three times; (0, 0) twice.
    let triplets = [(1, 2, 1e16f64), (0, 0, 1.0), (1, 2, 1.0), (0, 0, 2.0), (1, 2, -1e16)];
    let e = TripletCsc::from_triplets(2, 3, &triplets, Duplicates::Reject).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DuplicateEntry {
                row: 0,
                col: 0,
                first: 1,
                second: 3
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "triplets 1 and 3 are both at (row 0, col 0): a compressed matrix stores each element once \
         (layouts/csc.md § Storage Invariants (3), layouts/csr.md § Storage Invariants (3))"
    );
    // CSR meets (0, 0) first too.
    let e = TripletCsr::from_triplets(2, 3, &triplets, Duplicates::Reject).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DuplicateEntry {
                row: 0,
                col: 0,
                first: 1,
                second: 3
            }
        ),
        "{e:?}"
    );

    let a = TripletCsc::from_triplets(2, 3, &triplets, Duplicates::Sum).unwrap();
    assert_eq!(a.col_ptr(), [0, 1, 1, 2]);
    assert_eq!(a.row_indices(), [0, 1]);
    // In input order: (1e16 + 1) + -1e16 = 0 in f64 (1 is lost), not 1.
    assert_eq!(a.values(), [3.0, 0.0]);
    let r = TripletCsr::from_triplets(2, 3, &triplets, Duplicates::Sum).unwrap();
    assert_eq!(
        (r.row_ptr(), r.col_indices(), r.values()),
        (&[0, 1, 2][..], &[0, 2][..], &[3.0, 0.0][..])
    );

    let ints = [(0u64, 0u64, 100i8), (0, 0, 27), (1, 1, -5)];
    let a = TripletCsc::from_triplets(2, 2, &ints, Duplicates::Sum).unwrap();
    assert_eq!(a.values(), [127, -5]);
    let over = [(0u64, 1u64, 100i8), (0, 1, 28)];
    let e = TripletCsc::from_triplets(2, 2, &over, Duplicates::Sum).unwrap_err();
    assert!(matches!(e, Error::SumOverflow { row: 0, col: 1 }), "{e:?}");
    assert_eq!(
        e.to_string(),
        "the values summed at (row 0, col 1) overflow their integer type"
    );
}

#[test]
fn coordinates_outside_the_shape_are_refused() {
    let e = TripletCsc::from_triplets(4, 5, &[(0, 0, 1.0f32), (4, 0, 1.0)], Duplicates::Sum).unwrap_err();
    assert_eq!(
        e.to_string(),
        "row[1] = 4 is out of bounds for size 4 (layouts/csc.md § Storage Invariants (4))"
    );
    let e = TripletCsr::from_triplets(4, 5, &[(3, 5, 1.0f32)], Duplicates::Sum).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                array: "col",
                position: 0,
                value: 5,
                bound: 5,
                ..
            }
        ),
        "{e:?}"
    );
    let e = TripletCsc::from_triplets(0, 0, &[(0, 0, 1u8)], Duplicates::Reject).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                array: "row",
                bound: 0,
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn empty_and_huge_shapes() {
    let none: [(u64, u64, f32); 0] = [];
    let a = TripletCsc::from_triplets(3, 4, &none, Duplicates::Reject).unwrap();
    assert_eq!((a.col_ptr(), a.nnz()), (&[0, 0, 0, 0, 0][..], 0));
    let a = TripletCsc::from_triplets(0, 0, &none, Duplicates::Reject).unwrap();
    assert_eq!(a.col_ptr(), [0]);
    assert!(a.csc().is_ok());
    // `ncols + 1` pointers that cannot exist: an error, never an abort.
    let e = TripletCsc::from_triplets(1, u64::MAX, &none, Duplicates::Reject).unwrap_err();
    assert!(
        matches!(e, Error::Overflow { .. } | Error::AllocationFailed { .. }),
        "{e:?}"
    );
    let e = TripletCsr::from_triplets(1 << 60, 1, &[(5, 0, 1.0f64)], Duplicates::Sum).unwrap_err();
    assert!(
        matches!(e, Error::AllocationFailed { what: "pointer array", count } if count == (1 << 60) + 1),
        "{e:?}"
    );
    // A wide shape with few entries costs its pointers only.
    let a = TripletCsc::from_triplets(
        u64::MAX,
        1_000_000,
        &[(u64::MAX - 1, 999_999, 7u32)],
        Duplicates::Reject,
    )
    .unwrap();
    assert_eq!(a.col_ptr().len(), 1_000_001);
    assert_eq!((a.col_ptr()[999_999], a.col_ptr()[1_000_000]), (0, 1));
    assert_eq!(a.row_indices(), [u64::MAX - 1]);
}

/// The arrays a sorted map of the triplets gives (`Sum`: values added in
/// input order), by column (`csc`) or by row.
fn model(nrows: u64, ncols: u64, triplets: &[(u64, u64, i64)], csc: bool) -> (Vec<u64>, Vec<u64>, Vec<i64>) {
    let mut map: BTreeMap<(u64, u64), i64> = BTreeMap::new();
    for &(row, col, v) in triplets {
        let key = if csc { (col, row) } else { (row, col) };
        *map.entry(key).or_insert(0) += v;
    }
    let outer = if csc { ncols } else { nrows };
    let mut ptr = vec![0u64; outer as usize + 1];
    for &(o, _) in map.keys() {
        ptr[o as usize + 1] += 1;
    }
    for i in 1..ptr.len() {
        ptr[i] += ptr[i - 1];
    }
    (ptr, map.keys().map(|k| k.1).collect(), map.values().copied().collect())
}

proptest! {
    #[test]
    fn random_triplets_match_a_sorted_map(
        nrows in 0u64..12,
        ncols in 0u64..12,
        raw in proptest::collection::vec((0u64..14, 0u64..14, -1000i64..1000), 0..60),
    ) {
        let in_shape = raw.iter().all(|&(r, c, _)| r < nrows && c < ncols);
        let distinct = {
            let mut keys: Vec<(u64, u64)> = raw.iter().map(|&(r, c, _)| (r, c)).collect();
            keys.sort_unstable();
            keys.windows(2).all(|w| w[0] != w[1])
        };
        for csc in [true, false] {
            let built = if csc {
                TripletCsc::from_triplets(nrows, ncols, &raw, Duplicates::Sum)
                    .map(|a| (a.col_ptr().to_vec(), a.row_indices().to_vec(), a.values().to_vec()))
            } else {
                TripletCsr::from_triplets(nrows, ncols, &raw, Duplicates::Sum)
                    .map(|a| (a.row_ptr().to_vec(), a.col_indices().to_vec(), a.values().to_vec()))
            };
            let rejecting = if csc {
                TripletCsc::from_triplets(nrows, ncols, &raw, Duplicates::Reject).map(|a| a.nnz())
            } else {
                TripletCsr::from_triplets(nrows, ncols, &raw, Duplicates::Reject).map(|a| a.nnz())
            };
            if !in_shape {
                let refused = matches!(built, Err(Error::IndexOutOfBounds { .. }))
                    && matches!(rejecting, Err(Error::IndexOutOfBounds { .. }));
                prop_assert!(refused, "{:?} {:?}", built, rejecting);
                continue;
            }
            prop_assert_eq!(built.unwrap(), model(nrows, ncols, &raw, csc));
            match rejecting {
                Ok(nnz) => prop_assert!(distinct && nnz == raw.len()),
                Err(e) => {
                    let duplicate = matches!(e, Error::DuplicateEntry { .. });
                    prop_assert!(!distinct && duplicate, "{:?}", e);
                }
            }
        }
        // Whatever it built, the checked view accepts it.
        if let Ok(a) = TripletCsc::from_triplets(nrows, ncols, &raw, Duplicates::Sum) {
            prop_assert!(a.csc().is_ok());
        }
    }
}
