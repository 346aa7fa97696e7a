//! Column blocks of CSC views and row blocks of CSR views: every block of
//! the fixtures' matrices agrees with its parent, method by method; a block
//! of an unvalidated view scans its own columns alone and names the file's
//! columns and positions; a bad range is an error, never a panic.

use hurray_reader::{AlignedBytes, CscView, Error, Field, HurrayFile, Location, Options};

fn fixture(name: &str) -> AlignedBytes {
    AlignedBytes::read(format!("{}/../../fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The dense matrix of a view, by `get`.
fn dense(a: &CscView<'_, f64>) -> Vec<Vec<f64>> {
    (0..a.nrows())
        .map(|i| {
            (0..a.ncols())
                .map(|j| a.get(i, j).unwrap().copied().unwrap_or(0.0))
                .collect()
        })
        .collect()
}

#[test]
fn every_block_agrees_with_its_parent() {
    let bytes = fixture("sparse_formats.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("m.csc").unwrap().csc::<f64>().unwrap(); // 5 x 6, empty columns 1 and 4
    let whole = dense(&a);
    let x: Vec<f64> = (0..6).map(|j| f64::from(j) * 0.5 - 1.0).collect();
    let mut blocks = 0;
    for j0 in 0..=6usize {
        for j1 in j0..=6usize {
            let b = a.column_block(j0..j1).unwrap();
            let (p0, p1) = (a.col_ptr()[j0] as usize, a.col_ptr()[j1] as usize);
            assert!(b.is_validated(), "a block of a validated view is validated");
            assert_eq!((b.nrows(), b.ncols(), b.nnz()), (5, (j1 - j0) as u64, (p1 - p0) as u64));
            assert_eq!(b.values(), &a.values()[p0..p1]);
            assert_eq!(b.row_indices(), &a.row_indices()[p0..p1]);
            assert_eq!(b.col_ptr(), &a.col_ptr()[j0..=j1]);
            let got = dense(&b);
            for (i, row) in whole.iter().enumerate() {
                assert_eq!(got[i], row[j0..j1], "rows of block {j0}..{j1}");
            }
            // columns(): the parent's columns j0..j1, numbered from 0.
            let cols: Vec<(u64, Vec<u64>, Vec<f64>)> = b
                .columns()
                .unwrap()
                .map(|(j, r, v)| (j, r.to_vec(), v.to_vec()))
                .collect();
            let want: Vec<(u64, Vec<u64>, Vec<f64>)> = a
                .columns()
                .unwrap()
                .skip(j0)
                .take(j1 - j0)
                .map(|(j, r, v)| (j - j0 as u64, r.to_vec(), v.to_vec()))
                .collect();
            assert_eq!(cols, want);
            assert_eq!(b.iter().unwrap().count() as u64, b.nnz());
            for (j, col) in (0..b.ncols()).map(|j| (j, b.column(j).unwrap())) {
                assert_eq!(col.len(), a.column(j + j0 as u64).unwrap().len());
            }
            // y = A[:, j0..j1] x[j0..j1], in the same order as a plain scatter.
            let mut y = vec![f64::NAN; 5];
            b.mul_vec(&x[j0..j1], &mut y).unwrap();
            let mut want = vec![0.0; 5];
            for (j, rows, values) in b.columns().unwrap() {
                for (&r, v) in rows.iter().zip(values) {
                    want[r as usize] += v * x[j0 + j as usize];
                }
            }
            assert_eq!(y, want);
            let mut y2 = vec![f64::NAN; 5];
            b.mul_vec_parallel(&x[j0..j1], &mut y2, 3).unwrap();
            assert_eq!(y2, want);
            // The transpose is the CSR of A[:, j0..j1]ᵀ = the rows j0..j1 of Aᵀ.
            let t = b.transpose();
            assert_eq!((t.nrows(), t.ncols(), t.nnz()), ((j1 - j0) as u64, 5, b.nnz()));
            for i in 0..t.nrows() {
                for j in 0..5 {
                    assert_eq!(t.get(i, j).unwrap(), b.get(j, i).unwrap());
                }
            }
            let r = a.transpose().row_block(j0..j1).unwrap();
            assert_eq!(
                (t.nrows(), t.ncols(), t.values(), t.col_indices(), t.row_ptr()),
                (r.nrows(), r.ncols(), r.values(), r.col_indices(), r.row_ptr())
            );
            let owned = b.to_csr().unwrap();
            assert_eq!(owned.row_ptr().len(), 6);
            assert_eq!(owned.values().len() as u64, b.nnz());
            // A block of a block is a block.
            if j1 > j0 {
                let (bb, ab) = (b.column_block(1..j1 - j0).unwrap(), a.column_block(j0 + 1..j1).unwrap());
                assert_eq!(
                    (bb.ncols(), bb.values(), bb.row_indices(), bb.col_ptr()),
                    (ab.ncols(), ab.values(), ab.row_indices(), ab.col_ptr())
                );
            }
            blocks += 1;
        }
    }
    assert_eq!(blocks, 28);
}

#[test]
fn bad_ranges_are_errors() {
    let bytes = fixture("csc_worked_example.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap(); // 4 x 5
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = a.column_block(3..2).unwrap_err();
    assert_eq!(
        reversed,
        Error::BlockArgument {
            tensor: "A".into(),
            what: "column",
            start: 3,
            end: 2,
            bound: 5
        }
    );
    assert_eq!(reversed.to_string(), "tensor 'A': column block 3..2 is not within 0..5");
    assert_eq!(
        a.column_block(4..6).unwrap_err().to_string(),
        "tensor 'A': column block 4..6 is not within 0..5"
    );
    let huge = a.column_block(0..usize::MAX).unwrap_err();
    assert!(matches!(huge, Error::BlockArgument { bound: 5, .. }), "{huge:?}");
    let t = a.transpose();
    assert_eq!(
        t.row_block(1..9).unwrap_err().to_string(),
        "tensor 'A': transpose's row block 1..9 is not within 0..5"
    );
    let empty = a.column_block(5..5).unwrap();
    assert_eq!((empty.ncols(), empty.nnz(), empty.values().len()), (0, 0, 0));
    let mut y = vec![1.0f32; 4];
    empty.mul_vec(&[], &mut y).unwrap();
    assert_eq!(y, [0.0; 4]);
    assert_eq!(empty.columns().unwrap().count(), 0);
    // Lengths of a block's product are the block's.
    let e = a.column_block(1..3).unwrap().mul_vec(&[1.0; 5], &mut y).unwrap_err();
    assert_eq!(e.to_string(), "tensor 'A': x has length 5, expected ncols = 2");
}

/// The unscanned view of a file whose column 0 holds rows [3, 1]: a block
/// without column 0 validates; a block with it fails with the file's
/// position, as the whole scan does.
#[test]
fn a_block_scans_its_own_columns() {
    let bytes = fixture("invalid/csc_indices_unsorted.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("t").unwrap();
    let a = t.csc_unscanned::<f32>().unwrap();
    let whole = a.validate().unwrap_err();
    let ncols = a.ncols() as usize;
    let clean = a.column_block(1..ncols).unwrap();
    assert!(!clean.is_validated());
    clean.validate().unwrap();
    let block = a.column_block(0..2).unwrap();
    let e = block.validate().unwrap_err();
    assert_eq!(e, whole);
    assert_eq!(
        (e.field().unwrap().to_string(), e.offset()),
        ("row_indices[1]".to_string(), Some(8200))
    );
    // The block validates under threads too.
    let s = a.structure().column_block(0..ncols as u64).unwrap();
    assert_eq!(s.validate_parallel(4).unwrap_err(), whole);
    assert!(a.column_block(1..ncols).unwrap().validated().unwrap().is_validated());
}

/// `col_ptr = [0, 1, 3, 2, 4, 5]` over the rows `[0, 2, 1, 0, 2]`: the
/// decrease at 3 is found by a block that holds it, and every error is
/// named by the file's positions.
#[test]
fn a_blocks_pointers_are_named_by_the_files_positions() {
    let bytes = fixture("invalid/csc_ptr_decreasing.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("t").unwrap().csc_unscanned::<f32>().unwrap();
    let whole = a.validate().unwrap_err();
    assert!(
        matches!(
            whole,
            Error::PtrDecreasing {
                at: Location {
                    field: Field { index: Some(3), .. },
                    ..
                },
                ..
            }
        ),
        "{whole:?}"
    );
    assert_eq!(a.column_block(1..4).unwrap().validate().unwrap_err(), whole);
    assert_eq!(a.column_block(2..4).unwrap().validate().unwrap_err(), whole);
    // Column 1 of the patched pointers runs over positions 1..3, whose
    // rows (written for col_ptr [0, 1, 2, ...]) descend at position 2.
    let e = a.column_block(0..2).unwrap().validate().unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotIncreasing {
                at: Location {
                    field: Field { index: Some(2), .. },
                    ..
                },
                slice_index: 1,
                ..
            }
        ),
        "{e:?}"
    );
    let e = a.column_block(3..5).unwrap().validate().unwrap_err();
    assert!(
        matches!(
            e,
            Error::NotIncreasing {
                at: Location {
                    field: Field { index: Some(3), .. },
                    ..
                },
                slice_index: 3,
                ..
            }
        ),
        "{e:?}"
    );
    a.column_block(4..5).unwrap().validate().unwrap();
    a.column_block(0..1).unwrap().validate().unwrap();
    // A block ending below where it starts is refused when it is made.
    let e = a.column_block(2..3).unwrap_err();
    assert!(
        matches!(
            e,
            Error::PtrDecreasing {
                at: Location {
                    field: Field { index: Some(3), .. },
                    ..
                },
                ..
            }
        ),
        "{e:?}"
    );
    // The ends of the file's col_ptr are checked when a block is made.
    let bytes = fixture("invalid/csc_ptr_last_not_nnz.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("t").unwrap().csc_unscanned::<f32>().unwrap();
    assert_eq!(a.column_block(0..1).unwrap_err(), a.validate().unwrap_err());
}

#[test]
fn csr_row_blocks() {
    let bytes = fixture("sparse_formats.hry");
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("m.csr").unwrap().csr::<f64>().unwrap(); // 5 x 6
    let c = file.tensor("m.csc").unwrap().csc::<f64>().unwrap();
    for i0 in 0..=5usize {
        for i1 in i0..=5usize {
            let b = a.row_block(i0..i1).unwrap();
            assert_eq!((b.nrows(), b.ncols()), ((i1 - i0) as u64, 6));
            for i in 0..b.nrows() {
                for j in 0..6 {
                    assert_eq!(b.get(i, j).unwrap(), c.get(i + i0 as u64, j).unwrap());
                }
            }
            let rows: Vec<u64> = b.rows().unwrap().map(|(i, _, _)| i).collect();
            assert_eq!(rows, (0..(i1 - i0) as u64).collect::<Vec<_>>());
            let x = [1.0, -2.0, 0.5, 4.0, 0.25, -1.0];
            let mut y = vec![0.0; i1 - i0];
            b.mul_vec(&x, &mut y).unwrap();
            let mut whole = vec![0.0; 5];
            a.mul_vec(&x, &mut whole).unwrap();
            assert_eq!(y, whole[i0..i1]);
        }
    }
}

mod property {
    use hurray_reader::{AlignedBytes, HurrayFile, Options};
    use hurray_writer::{BufferData, ElementType, FileWriter, TensorDescriptor, WriterOptions};
    use proptest::prelude::*;

    /// A CSC `A` of `nrows` rows from `columns` (each a sorted row set),
    /// then `damage` applied to `row_indices` (position, value), written as
    /// is (the writer checks the descriptor, not the data).
    fn file(nrows: u64, columns: &[Vec<u64>], damage: Option<(usize, u64)>) -> AlignedBytes {
        let mut rows: Vec<u64> = columns.concat();
        if let Some((p, v)) = damage {
            if let Some(r) = rows.get_mut(p) {
                *r = v;
            }
        }
        let mut col_ptr = vec![0u64];
        for c in columns {
            col_ptr.push(col_ptr.last().unwrap() + c.len() as u64);
        }
        let values = vec![1.0f32; rows.len()];
        let d = TensorDescriptor::csc(ElementType::Float32, nrows, columns.len() as u64, rows.len() as u64).unwrap();
        let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        w.write_tensor(
            "A",
            &d,
            [
                BufferData::from_slice(&values),
                BufferData::from_slice(&rows),
                BufferData::from_slice(&col_ptr),
            ],
        )
        .unwrap();
        AlignedBytes::from_slice(&w.finish().unwrap())
    }

    fn matrices() -> impl Strategy<Value = (u64, Vec<Vec<u64>>)> {
        (1u64..40).prop_flat_map(|nrows| {
            let column = proptest::collection::btree_set(0..nrows, 0..(nrows as usize).min(12))
                .prop_map(|s| s.into_iter().collect::<Vec<u64>>());
            (Just(nrows), proptest::collection::vec(column, 0..30))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// Whatever the damage, a block's scan (1 or 3 threads) fails
        /// exactly when one of its own columns breaks invariant 3 or 4, and
        /// then names a position inside the block.
        #[test]
        fn a_blocks_verdict_is_its_columns(
            (nrows, columns) in matrices(),
            damage in proptest::option::of((0usize..400, 0u64..50)),
            cut in (0usize..31, 0usize..31),
            threads in prop_oneof![Just(1usize), Just(3)],
        ) {
            let bytes = file(nrows, &columns, damage);
            let f = HurrayFile::parse(&bytes, Options::default()).unwrap();
            let a = f.tensor("A").unwrap().csc_unscanned::<f32>().unwrap();
            let ncols = columns.len();
            let (j0, j1) = (cut.0.min(ncols), cut.1.min(ncols));
            let (j0, j1) = (j0.min(j1), j0.max(j1));
            let b = a.column_block(j0..j1).unwrap();
            let (p0, p1) = (a.col_ptr()[j0] as usize, a.col_ptr()[j1] as usize);
            let rows = a.row_indices();
            let bad = (j0..j1).any(|j| {
                let s = &rows[a.col_ptr()[j] as usize..a.col_ptr()[j + 1] as usize];
                s.windows(2).any(|w| w[1] <= w[0]) || s.iter().any(|&r| r >= nrows)
            });
            let verdict = b.structure().validate_parallel(threads);
            prop_assert_eq!(verdict.is_err(), bad, "{:?}", verdict);
            if let Err(e) = verdict {
                let offset = e.offset().unwrap();
                let start = f.tensor("A").unwrap().buffer(1).unwrap().file_offset();
                let position = ((offset - start) / 8) as usize;
                prop_assert!((p0..p1).contains(&position), "{} not in {}..{}", position, p0, p1);
                prop_assert_eq!(e, b.validate().unwrap_err());
            }
        }
    }
}
