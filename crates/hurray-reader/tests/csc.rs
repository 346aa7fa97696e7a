//! CSC (`layouts/csc.md`): the worked example asserted value by value, and
//! one test per rule of the section, each with an input that breaks it.
//! `docs/csc-rules.md` maps every rule of `layouts/csc.md` to its code and
//! tests.

use hurray_reader::{AlignedBytes, Error, Field, HurrayFile, Location, Options, Scope};
use hurray_writer::{
    BufferData, ElementType, FileWriter, RawDescriptor, RawTensor, Statistics, TensorDescriptor, WriterOptions,
};

mod support {
    pub mod locate;
    pub mod worked_example;
}

use support::locate::{field_offset, At};
use support::worked_example::{DENSE, FIXTURE};

fn worked_example() -> AlignedBytes {
    AlignedBytes::read(FIXTURE).expect("fixtures/csc_worked_example.hry")
}

#[test]
fn worked_example_descriptor_and_buffers() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.layout().as_str(), "csc");
    assert_eq!(t.element_type().unwrap().as_str(), "float32");
    assert_eq!(t.shape().collect::<Vec<_>>(), [4, 5]);
    assert_eq!(t.nnz(), Some(5));
    let roles: Vec<String> = t.buffers().iter().map(|b| b.role().to_string()).collect();
    assert_eq!(roles, ["values", "row_indices", "col_ptr"]);
    let a = t.csc::<f32>().unwrap();
    assert!(a.is_validated());
    assert_eq!((a.nrows(), a.ncols(), a.nnz()), (4, 5, 5));
    assert_eq!(a.values(), [1.0, 4.0, 3.0, 2.0, 5.0]);
    assert_eq!(a.row_indices(), [0, 2, 1, 0, 2]);
    assert_eq!(a.col_ptr(), [0, 1, 2, 3, 4, 5]);
}

#[test]
fn worked_example_get_all_twenty_positions() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    for (r, row) in DENSE.iter().enumerate() {
        for (c, &want) in row.iter().enumerate() {
            let got = a.get(r as u64, c as u64).unwrap();
            if want == 0.0 {
                assert_eq!(got, None, "({r}, {c}) is an implicit zero");
            } else {
                assert_eq!(got, Some(&want), "({r}, {c})");
            }
        }
    }
}

#[test]
fn worked_example_columns() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    let columns: Vec<Vec<(u64, f32)>> = (0..5)
        .map(|j| a.column(j).unwrap().map(|(r, v)| (r, *v)).collect())
        .collect();
    assert_eq!(
        columns,
        [
            vec![(0, 1.0)],
            vec![(2, 4.0)],
            vec![(1, 3.0)],
            vec![(0, 2.0)],
            vec![(2, 5.0)]
        ]
    );
    // col_ptr[j+1] - col_ptr[j] entries per column.
    assert!((0..5).all(|j| a.column(j).unwrap().len() == 1));
    let all: Vec<(u64, u64, f32)> = a.iter().unwrap().map(|(r, c, v)| (r, c, *v)).collect();
    assert_eq!(all, [(0, 0, 1.0), (2, 1, 4.0), (1, 2, 3.0), (0, 3, 2.0), (2, 4, 5.0)]);
}

#[test]
fn worked_example_columns_without_a_result_per_column() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    let columns = a.columns().unwrap();
    assert_eq!(columns.len(), 5);
    let got: Vec<(u64, Vec<u64>, Vec<f32>)> = columns.map(|(j, r, v)| (j, r.to_vec(), v.to_vec())).collect();
    assert_eq!(
        got,
        [
            (0, vec![0], vec![1.0]),
            (1, vec![2], vec![4.0]),
            (2, vec![1], vec![3.0]),
            (3, vec![0], vec![2.0]),
            (4, vec![2], vec![5.0]),
        ]
    );
    // Borrowed from the file: column 4's rows are row_indices[4..5].
    let (_, rows, values) = a.columns().unwrap().next_back().unwrap();
    assert_eq!(rows.as_ptr(), a.row_indices()[4..].as_ptr());
    assert_eq!(values.as_ptr(), a.values()[4..].as_ptr());
    // The rows of Aᵀ are the columns of A, the same slices.
    let rows_of_at: Vec<_> = a.transpose().rows().unwrap().collect();
    let columns_of_a: Vec<_> = a.columns().unwrap().collect();
    assert_eq!(rows_of_at, columns_of_a);
    // From the back, and from both ends: each column once, numbered right.
    let mut backwards: Vec<_> = a.columns().unwrap().rev().collect();
    backwards.reverse();
    assert_eq!(backwards, columns_of_a);
    let mut both = a.columns().unwrap();
    let (first, last) = (both.next().unwrap(), both.next_back().unwrap());
    assert_eq!((first.0, last.0, both.len()), (0, 4, 3));
    assert_eq!(both.map(|(j, _, _)| j).collect::<Vec<_>>(), [1, 2, 3]);
}

#[test]
fn columns_yields_empty_columns() {
    // Column 2 empty: col_ptr = [0, 1, 2, 2, 3, 5], rows [0, 2, 0, 1, 2].
    let mut p = parts();
    p.col_ptr = vec![0, 1, 2, 2, 3, 5];
    p.row_indices = vec![0, 2, 0, 1, 2];
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    let lengths: Vec<(u64, usize)> = a.columns().unwrap().map(|(j, r, _)| (j, r.len())).collect();
    assert_eq!(lengths, [(0, 1), (1, 1), (2, 0), (3, 1), (4, 2)]);
    let (_, rows, values) = a.columns().unwrap().nth(4).unwrap();
    assert_eq!((rows, values), (&[1u64, 2][..], &[2.0f32, 5.0][..]));
}

#[test]
fn worked_example_transpose_is_csr_of_the_transpose() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    let at = a.transpose();
    assert_eq!((at.nrows(), at.ncols(), at.nnz()), (5, 4, 5));
    // Same slices, no copy.
    assert_eq!(at.row_ptr().as_ptr(), a.col_ptr().as_ptr());
    assert_eq!(at.col_indices().as_ptr(), a.row_indices().as_ptr());
    assert_eq!(at.values().as_ptr(), a.values().as_ptr());
    for (r, row) in DENSE.iter().enumerate() {
        for (c, &want) in row.iter().enumerate() {
            assert_eq!(at.get(c as u64, r as u64).unwrap().copied().unwrap_or(0.0), want);
        }
    }
    let rows: Vec<Vec<(u64, f32)>> = (0..5)
        .map(|i| at.row(i).unwrap().map(|(c, v)| (c, *v)).collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec![(0, 1.0)],
            vec![(2, 4.0)],
            vec![(1, 3.0)],
            vec![(0, 2.0)],
            vec![(2, 5.0)]
        ]
    );
    // And back again.
    assert_eq!(at.transpose().get(2, 4).unwrap(), Some(&5.0));
}

#[test]
fn worked_example_to_csr_matches_the_csr_example() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let csr = file.tensor("A").unwrap().csc::<f32>().unwrap().to_csr().unwrap();
    // layouts/csr.md § Example: the same matrix in CSR.
    assert_eq!((csr.tensor(), csr.nrows(), csr.ncols()), ("A", 4, 5));
    assert_eq!(csr.row_ptr(), [0, 2, 3, 5, 5]);
    assert_eq!(csr.col_indices(), [0, 3, 2, 1, 4]);
    assert_eq!(csr.values(), [1.0, 2.0, 3.0, 4.0, 5.0]);
    let v = csr.view();
    assert_eq!(v.get(2, 4).unwrap(), Some(&5.0));
    assert_eq!(v.get(3, 0).unwrap(), None);
    // The copy's errors name the tensor it was copied from.
    let e = v.get(9, 0).unwrap_err();
    assert_eq!(
        (e.tensor(), e.to_string().as_str()),
        (Some("A"), "tensor 'A': row 9 is out of range, the row count is 4")
    );
    // The same matrix copied from a tensor named B is equal: == compares
    // shapes and arrays, not names. Values may change, the structure not.
    let bytes_b = build_named(parts(), "B");
    let file_b = HurrayFile::parse(&bytes_b, Options::default()).unwrap();
    let mut b = file_b.tensor("B").unwrap().csc::<f32>().unwrap().to_csr().unwrap();
    assert_eq!((b.tensor(), b == csr), ("B", true));
    b.values_mut()[4] *= 2.0;
    assert_eq!(b.view().get(2, 4).unwrap(), Some(&10.0));
    assert_ne!(b, csr);
    let ((nrows, ncols), row_ptr, col_indices, values) = csr.into_parts();
    assert_eq!((nrows, ncols), (4, 5));
    assert_eq!((row_ptr, col_indices), (vec![0, 2, 3, 5, 5], vec![0, 3, 2, 1, 4]));
    assert_eq!(values, [1.0, 2.0, 3.0, 4.0, 5.0]);
}

/// `to_csr` allocates `row_ptr` by `nrows`, which the file size does not
/// bound: a shape too large for memory is an error naming the size, never
/// an abort, and a size past `u64` reads as such.
#[test]
fn to_csr_too_large_for_memory_is_an_error() {
    for (nrows, bytes, shown) in [
        // 2^50 + 1 pointers of 8 bytes: a size, but more than the address
        // space (even where the kernel overcommits).
        (1u64 << 50, (1u64 << 53) + 8, "9007199254741000 bytes"),
        // (nrows + 1) × 8 overflows (u64::MAX itself is a dynamic dimension).
        (u64::MAX - 1, u64::MAX, "2^64 bytes or more"),
        (1u64 << 62, u64::MAX, "2^64 bytes or more"),
    ] {
        let bytes_in_file = build(matrix(nrows, 1, &[1.0], &[nrows - 1], &[0, 1]));
        let file = HurrayFile::parse(&bytes_in_file, Options::default()).unwrap();
        let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
        assert_eq!(a.get(nrows - 1, 0).unwrap(), Some(&1.0));
        let e = a.to_csr().unwrap_err();
        assert_eq!(
            e,
            Error::AllocationFailed {
                tensor: "A".into(),
                what: "row_ptr",
                bytes
            },
            "nrows {nrows}"
        );
        assert_eq!(
            e.to_string(),
            format!("tensor 'A': row_ptr: cannot allocate {shown} for the copy")
        );
    }
}

#[test]
fn lookups_out_of_range_are_errors() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    assert!(matches!(
        a.get(4, 0),
        Err(Error::IndexArgument {
            what: "row",
            index: 4,
            bound: 4,
            ..
        })
    ));
    assert!(matches!(
        a.get(0, 5),
        Err(Error::IndexArgument {
            what: "column",
            index: 5,
            bound: 5,
            ..
        })
    ));
    assert!(matches!(a.column(5), Err(Error::IndexArgument { what: "column", .. })));
    assert!(matches!(
        file.tensor("A").unwrap().csc::<f64>(),
        Err(Error::TypeMismatch {
            requested: "float64",
            actual: "float32",
            ..
        })
    ));
    assert!(matches!(
        file.tensor("A").unwrap().csr::<f32>(),
        Err(Error::LayoutMismatch { .. })
    ));
}

// ---------------------------------------------------------------------------
// One test per rule, each on a file built through the writer's unchecked
// path from the worked example with one thing broken.

/// The worked example's descriptor and buffers, ready to be broken.
struct Parts {
    descriptor: RawDescriptor,
    values: Vec<u8>,
    row_indices: Vec<u64>,
    col_ptr: Vec<u64>,
}

fn parts() -> Parts {
    Parts {
        descriptor: TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap().to_raw(),
        values: [1.0f32, 4.0, 3.0, 2.0, 5.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        row_indices: vec![0, 2, 1, 0, 2],
        col_ptr: vec![0, 1, 2, 3, 4, 5],
    }
}

fn build(p: Parts) -> AlignedBytes {
    build_named(p, "A")
}

fn build_named(p: Parts, name: &str) -> AlignedBytes {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let rows: Vec<u8> = p.row_indices.iter().flat_map(|v| v.to_le_bytes()).collect();
    let ptr: Vec<u8> = p.col_ptr.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut buffers = vec![
        BufferData::Bytes(&p.values),
        BufferData::Bytes(&rows),
        BufferData::Bytes(&ptr),
    ];
    buffers.truncate(p.descriptor.buffers.len());
    w.write_tensor_unchecked(RawTensor::new(name, p.descriptor.encode().unwrap(), buffers))
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// Opens the file and gets a strict CSC view of `A`.
fn strict(bytes: &[u8]) -> Result<(), Error> {
    let file = HurrayFile::parse(bytes, Options::default())?;
    file.tensor("A")?.csc::<f32>().map(|_| ())
}

fn error_of(p: Parts) -> Error {
    strict(&build(p)).expect_err("the broken file must be rejected")
}

#[test]
fn the_unbroken_parts_are_valid() {
    assert_eq!(strict(&build(parts())), Ok(()));
}

#[test]
fn rule_rank_must_be_2() {
    let mut p = parts();
    p.descriptor.shape = vec![1, 4, 5];
    assert!(matches!(
        error_of(p),
        Error::RankNotAllowed {
            rank: 3,
            layout: "csc",
            ..
        }
    ));
    let mut p = parts();
    p.descriptor.shape = vec![20];
    assert!(matches!(error_of(p), Error::RankNotAllowed { rank: 1, .. }));
}

#[test]
fn rule_buffer_count_must_be_3() {
    let mut p = parts();
    p.descriptor.buffers.truncate(2);
    assert!(matches!(
        error_of(p),
        Error::Invalid {
            at: Location {
                field: Field {
                    name: "buffer_count",
                    ..
                },
                ..
            },
            value: 2,
            ..
        }
    ));
}

#[test]
fn rule_reserved_bytes_after_nnz_must_be_zero() {
    let mut p = parts();
    p.descriptor.layout_fields[9] = 0x01;
    assert!(matches!(
        error_of(p),
        Error::Reserved {
            at: Location {
                field: Field { name: "_reserved", .. },
                ..
            },
            ..
        }
    ));
}

#[test]
fn rule_byte_offset_must_be_zero() {
    let mut p = parts();
    p.descriptor.byte_offset = 4;
    assert!(matches!(
        error_of(p),
        Error::Invalid {
            at: Location {
                field: Field {
                    name: "byte_offset",
                    ..
                },
                ..
            },
            value: 4,
            ..
        }
    ));
}

#[test]
fn rule_values_buffer_is_nnz_elements() {
    let mut p = parts();
    p.descriptor.buffers[0].byte_size = 16;
    p.values.truncate(16);
    assert!(matches!(
        error_of(p),
        Error::BufferSize {
            at: Location {
                field: Field { index: Some(0), .. },
                ..
            },
            role: "values",
            byte_size: 16,
            expected: 20,
            ..
        }
    ));
    // Larger is also refused in strict mode (sparse sizes are exact).
    let mut p = parts();
    p.descriptor.buffers[0].byte_size = 24;
    p.values.extend([0; 4]);
    assert!(matches!(
        error_of(p),
        Error::BufferSize {
            at: Location {
                field: Field { index: Some(0), .. },
                ..
            },
            byte_size: 24,
            expected: 20,
            exact: true,
            ..
        }
    ));
}

#[test]
fn rule_row_indices_buffer_is_nnz_u64() {
    let mut p = parts();
    p.descriptor.buffers[1].byte_size = 32;
    p.row_indices.truncate(4);
    assert!(matches!(
        error_of(p),
        Error::BufferSize {
            at: Location {
                field: Field { index: Some(1), .. },
                ..
            },
            role: "row_indices",
            expected: 40,
            ..
        }
    ));
}

#[test]
fn a_wrong_nnz_field_is_named_when_the_buffers_agree() {
    // nnz 4 in the descriptor, five entries in values, row_indices and
    // col_ptr[5]: the field is wrong, not the buffers.
    let mut p = parts();
    p.descriptor.layout_fields[..8].copy_from_slice(&4u64.to_le_bytes());
    let e = error_of(p);
    assert!(
        matches!(
            e,
            Error::NnzMismatch {
                at: Location {
                    rule: "layouts/csc.md § Buffer Size",
                    ..
                },
                nnz: 4,
                held: 5,
                buffers: "values and row_indices",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .contains(": 4, but values and row_indices both hold 5 entries"),
        "{e}"
    );
    // The same for CSR and for COO (rank 2: 16 index bytes per entry):
    // buffers for three entries, nnz 2.
    let f32s = |n: usize| vec![0u8; 4 * n];
    let u64s = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let (values, csr_cols, row_ptr, coo_indices) = (
        f32s(3),
        u64s(&[0, 1, 2]),
        u64s(&[0, 1, 2, 3]),
        u64s(&[0, 0, 1, 1, 2, 2]),
    );
    for (descriptor, buffers, expected) in [
        (
            TensorDescriptor::csr(ElementType::Float32, 3, 3, 3),
            vec![&values, &csr_cols, &row_ptr],
            "values and col_indices",
        ),
        (
            TensorDescriptor::coo(ElementType::Float32, vec![3, 3], 3, true),
            vec![&values, &coo_indices],
            "values and indices",
        ),
    ] {
        let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
        let buffers = buffers.into_iter().map(|b| BufferData::Bytes(b)).collect();
        let mut raw = descriptor.unwrap().to_raw();
        raw.layout_fields[..8].copy_from_slice(&2u64.to_le_bytes());
        w.write_tensor_unchecked(RawTensor::new("A", raw.encode().unwrap(), buffers))
            .unwrap();
        let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
        let e = HurrayFile::parse(&bytes, Options::default()).and_then(|f| f.tensor("A").map(|_| ()));
        assert!(
            matches!(e, Err(Error::NnzMismatch { nnz: 2, held: 3, buffers, .. }) if buffers == expected),
            "{e:?}"
        );
    }
}

#[test]
fn rule_col_ptr_buffer_is_ncols_plus_one_u64() {
    let mut p = parts();
    p.descriptor.buffers[2].byte_size = 40;
    p.col_ptr.truncate(5);
    assert!(matches!(
        error_of(p),
        Error::BufferSize {
            at: Location {
                field: Field { index: Some(2), .. },
                ..
            },
            role: "col_ptr",
            expected: 48,
            ..
        }
    ));
}

/// Only the descriptor's `byte_size` changed (the index still gives the
/// old `data_length`): the buffer is named, not the index, nor a later
/// buffer pushed out of the tensor's region (values grown to 4097 bytes
/// moves row_indices and col_ptr a page on), whichever buffer it is.
#[test]
fn a_wrong_byte_size_is_named_before_the_index_data_length() {
    for (buffer, role, byte_size, expected) in [
        (2u8, "col_ptr", 40u64, 48u64),
        (1, "row_indices", 0, 40),
        (0, "values", 4097, 20),
        (1, "row_indices", 4100, 40),
    ] {
        let good = build(parts());
        let file = HurrayFile::parse(&good, Options::default()).unwrap();
        let dump = file.dump_descriptor("A").unwrap();
        let field = Field::member("buffer", u64::from(buffer), "byte_size");
        let at = dump.fields.iter().find(|f| f.field == field).unwrap().offset as usize;
        let mut bytes = good.to_vec();
        bytes[at..at + 8].copy_from_slice(&byte_size.to_le_bytes());
        let err = strict(&AlignedBytes::from_slice(&bytes)).unwrap_err();
        assert!(
            matches!(&err, Error::BufferSize { role: r, byte_size: s, expected: e, .. }
                if *r == role && *s == byte_size && *e == expected),
            "{err}"
        );
        assert_eq!((err.field(), err.offset()), (Some(field), Some(at as u64)), "{err}");
    }
}

#[test]
fn rule_invariant_1_col_ptr_starts_at_zero() {
    let mut p = parts();
    p.col_ptr[0] = 1;
    assert!(matches!(
        error_of(p),
        Error::PtrFirst {
            at: Location {
                field: Field { name: "col_ptr", .. },
                offset: 12288,
                ..
            },
            value: 1,
            ..
        }
    ));
}

#[test]
fn rule_invariant_1_col_ptr_ends_at_nnz() {
    let mut p = parts();
    p.col_ptr[5] = 4;
    assert!(matches!(
        error_of(p),
        Error::PtrLast {
            at: Location {
                field: Field {
                    name: "col_ptr",
                    index: Some(5),
                    ..
                },
                offset: 12328,
                ..
            },
            value: 4,
            expected: 5,
            ..
        }
    ));
}

#[test]
fn rule_invariant_2_col_ptr_non_decreasing() {
    let mut p = parts();
    p.col_ptr = vec![0, 2, 1, 3, 4, 5];
    assert!(matches!(
        error_of(p),
        Error::PtrDecreasing {
            at: Location {
                field: Field {
                    name: "col_ptr",
                    index: Some(2),
                    ..
                },
                offset: 12304,
                ..
            },
            value: 1,
            previous: 2,
            ..
        }
    ));
}

#[test]
fn rule_invariant_3_rows_strictly_increasing_within_a_column() {
    // Column 0 holds rows [2, 0]: unsorted.
    let mut p = parts();
    p.col_ptr = vec![0, 2, 2, 3, 4, 5];
    p.row_indices = vec![2, 0, 1, 0, 2];
    let e = error_of(p);
    assert_eq!(
        e,
        Error::NotIncreasing {
            at: Location {
                scope: Scope::Tensor("A".into()),
                field: Field::at("row_indices", 1),
                offset: 8200,
                rule: "layouts/csc.md § Storage Invariants (3)",
            },
            slice: "column",
            slice_index: 0,
            value: 0,
            previous: 2,
        }
    );
    // A duplicate row breaks the same rule.
    let mut p = parts();
    p.col_ptr = vec![0, 2, 2, 3, 4, 5];
    p.row_indices = vec![1, 1, 1, 0, 2];
    assert!(matches!(
        error_of(p),
        Error::NotIncreasing {
            at: Location {
                field: Field { index: Some(1), .. },
                ..
            },
            slice_index: 0,
            value: 1,
            previous: 1,
            ..
        }
    ));
    // Rows may decrease across a column boundary.
    let mut p = parts();
    p.col_ptr = vec![0, 2, 2, 3, 4, 5];
    p.row_indices = vec![0, 3, 1, 0, 2];
    assert_eq!(strict(&build(p)), Ok(()));
}

#[test]
fn rule_invariant_4_rows_below_nrows() {
    let mut p = parts();
    p.row_indices[4] = 4;
    assert!(matches!(
        error_of(p),
        Error::IndexOutOfBounds {
            at: Location {
                field: Field {
                    name: "row_indices",
                    index: Some(4),
                    ..
                },
                offset: 8224,
                ..
            },
            value: 4,
            bound: 4,
            ..
        }
    ));
    let mut p = parts();
    p.row_indices[1] = u64::MAX;
    assert!(matches!(
        error_of(p),
        Error::IndexOutOfBounds {
            at: Location {
                field: Field { index: Some(1), .. },
                ..
            },
            value: u64::MAX,
            ..
        }
    ));
}

#[test]
fn rule_statistics_nnz_must_match() {
    let mut p = parts();
    p.descriptor.statistics = Some(Statistics::default().with_nnz(6));
    assert!(matches!(
        error_of(p),
        Error::StatisticsNnzMismatch {
            statistics_nnz: 6,
            nnz: 5,
            ..
        }
    ));
    // Permissive mode uses the descriptor's nnz and reports the statistics'.
    let mut p = parts();
    p.descriptor.statistics = Some(Statistics::default().with_nnz(6));
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.statistics_nnz_mismatch(), Some((6, 5)));
    assert_eq!(t.csc::<f32>().unwrap().nnz(), 5);
    // Matching nnz with a wrong sparsity_ratio is reported, not fatal.
    let mut p = parts();
    p.descriptor.statistics = Some(Statistics::default().with_nnz(5).with_sparsity_ratio(0.5));
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.sparsity_ratio_mismatch(), Some((0.5, 0.75)));
    assert!(t.csc::<f32>().is_ok());
    // The right ratio raises nothing.
    let mut p = parts();
    p.descriptor.statistics = Some(Statistics::default().with_nnz(5).with_sparsity_ratio(0.75));
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    assert_eq!(file.tensor("A").unwrap().sparsity_ratio_mismatch(), None);
    assert_eq!(file.tensor("A").unwrap().statistics_nnz_mismatch(), None);
}

#[test]
fn rule_sizes_are_computed_without_overflow() {
    let mut p = parts();
    p.descriptor.layout_fields[..8].copy_from_slice(&(1u64 << 61).to_le_bytes());
    assert!(matches!(
        error_of(p),
        Error::Overflow {
            at: Location {
                field: Field { name: "nnz", .. },
                ..
            },
            ..
        }
    ));
    let mut p = parts();
    p.descriptor.shape = vec![4, u64::MAX - 1];
    assert!(matches!(error_of(p), Error::Overflow { .. }));
    let mut p = parts();
    p.descriptor.shape = vec![4, u64::MAX];
    assert!(matches!(error_of(p), Error::DynamicDimension { .. }));
}

#[test]
fn scan_is_not_run_at_open_nor_without_asking() {
    // A damaged col_ptr: opening and resolving the tensor succeed (no scan);
    // the strict view and an explicit validate() report it.
    let mut p = parts();
    p.col_ptr[3] = 9;
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    let unscanned = t.csc_unscanned::<f32>().unwrap();
    assert!(!unscanned.is_validated());
    // col_ptr[3] = 9 > nnz = 5: named itself, not col_ptr[4] after it.
    assert!(matches!(
        unscanned.validate(),
        Err(Error::PtrTooLarge {
            at: Location {
                field: Field { index: Some(3), .. },
                ..
            },
            value: 9,
            nnz: 5,
            ..
        })
    ));
    assert!(matches!(t.csc::<f32>(), Err(Error::PtrTooLarge { .. })));
}

#[test]
fn permissive_views_never_answer_wrongly() {
    // Column 0 holds rows [2, 0] (unsorted): a binary search for row 0 could
    // miss it and answer 0.0. The unscanned view refuses instead.
    let mut p = parts();
    p.col_ptr = vec![0, 2, 2, 3, 4, 5];
    p.row_indices = vec![2, 0, 1, 0, 2];
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    assert!(!a.is_validated());
    assert!(matches!(a.get(0, 0), Err(Error::NotIncreasing { slice_index: 0, .. })));
    assert!(matches!(a.column(0), Err(Error::NotIncreasing { .. })));
    assert!(a.iter().is_err());
    // columns() scans an unvalidated view first: refused, never iterated.
    assert!(matches!(
        a.columns(),
        Err(Error::NotIncreasing {
            at: Location {
                field: Field { index: Some(1), .. },
                ..
            },
            slice_index: 0,
            ..
        })
    ));
    assert!(matches!(a.transpose().rows(), Err(Error::NotIncreasing { .. })));
    // Undamaged columns still answer.
    assert_eq!(a.get(1, 2).unwrap(), Some(&3.0));
    assert_eq!(a.get(3, 4).unwrap(), None);
}

/// A damaged CSC file read through `transpose()` (a CSR view of Aᵀ) is
/// still a CSC file: its errors name `row_indices`, the column and
/// `layouts/csc.md`, as the CSC view's do (they named `col_indices`, a row
/// and `layouts/csr.md`: found by a fresh-user review). Argument errors
/// speak of the view's rows and columns.
#[test]
fn a_transposed_view_names_the_files_csc_fields() {
    let mut p = parts();
    p.col_ptr = vec![0, 1, 2, 3, 5, 5];
    p.row_indices = vec![0, 2, 1, 3, 1];
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc_unscanned::<f32>().unwrap();
    let direct = a.get(1, 3).unwrap_err();
    let through_transpose = a.transpose().get(3, 1).unwrap_err();
    assert_eq!(through_transpose, direct);
    assert!(
        matches!(
            &through_transpose,
            Error::NotIncreasing {
                at: Location {
                    field: Field {
                        name: "row_indices",
                        index: Some(4),
                        ..
                    },
                    ..
                },
                slice: "column",
                slice_index: 3,
                ..
            }
        ),
        "{through_transpose:?}"
    );
    assert_eq!(
        through_transpose.rule(),
        Some("layouts/csc.md § Storage Invariants (3)")
    );
    assert_eq!(
        a.structure().transpose().validate().unwrap_err(),
        a.structure().validate().unwrap_err()
    );
    // Aᵀ is 5 x 4: row 5 does not exist, nor does column 4. The error
    // names tensor A (4 x 5), so it says whose row and column these are.
    let at = a.transpose();
    let e = at.row(5).map(|_| ()).unwrap_err();
    assert!(matches!(
        e,
        Error::IndexArgument {
            what: "transpose's row",
            index: 5,
            bound: 5,
            ..
        }
    ));
    assert_eq!(
        e.to_string(),
        "tensor 'A': transpose's row 5 is out of range, the transpose's row count is 5"
    );
    assert!(matches!(
        at.get(0, 4),
        Err(Error::IndexArgument {
            what: "transpose's column",
            index: 4,
            bound: 4,
            ..
        })
    ));
    assert!(matches!(
        a.column(5),
        Err(Error::IndexArgument {
            what: "column",
            index: 5,
            bound: 5,
            ..
        })
    ));
}

#[test]
fn unscanned_lookups_name_the_pointer_they_read() {
    // col_ptr[0] = 1: a lookup in column 0 names col_ptr[0], not col_ptr[1].
    let mut p = parts();
    p.col_ptr[0] = 1;
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    assert!(matches!(a.get(0, 0), Err(Error::PtrFirst { value: 1, .. })));
    // col_ptr[2] beyond nnz: a lookup in column 1 or 2 and the full check
    // name col_ptr[2] alike (the check used to name col_ptr[3], smaller
    // than it; the lookup in column 2 did too).
    let e = pointer_error(vec![0, 1, u64::MAX, 3, 4, 5], &[1, 2]);
    let expected = Error::PtrTooLarge {
        at: Location {
            scope: Scope::Tensor("A".into()),
            field: Field::at("col_ptr", 2),
            offset: e.offset().unwrap(),
            rule: "layouts/csc.md § Storage Invariants (2)",
        },
        value: u64::MAX,
        nnz: 5,
        last: 5,
        next: Some(3),
    };
    assert_eq!(e, expected);
    assert_eq!(
        e.to_string(),
        format!(
            "tensor 'A': col_ptr[2] at offset {}: 18446744073709551615 is greater than the entry after it, col_ptr[3] = 3 (must be non-decreasing), and than nnz = 5, which col_ptr[5] must equal (layouts/csc.md § Storage Invariants (2))",
            e.offset().unwrap()
        )
    );
    // The entry after it is not smaller (equal here): the message says the
    // array decreases later.
    let e = pointer_error(vec![0, 9, 9, 3, 4, 5], &[0, 1]);
    assert!(
        matches!(
            e,
            Error::PtrTooLarge {
                at: Location {
                    field: Field { index: Some(1), .. },
                    ..
                },
                value: 9,
                next: None,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "tensor 'A': col_ptr[1] at offset {}: 9 is greater than nnz = 5, which col_ptr[5] must equal, so the array decreases after it (must be non-decreasing) (layouts/csc.md § Storage Invariants (2))",
            e.offset().unwrap()
        )
    );
    // The last entry is wrong (invariant 1), whatever stands before it:
    // pointers above nnz that never decrease (found by the `compressed`
    // fuzz target: [0, 107, 107, 107], nnz 0); one above nnz, then a
    // decrease (a review found the check naming col_ptr[1] there); only
    // the last, above nnz or below it (a review found lookups in the last
    // column reading [4, 4) there: an empty column, 5.0 at (2, 4) lost).
    for (col_ptr, columns, value) in [
        (vec![0, 1, 7, 7, 7, 7], &[1, 3][..], 7),
        (vec![0, 9, 2, 3, 4, 6], &[0, 1][..], 6),
        (vec![0, 1, 2, 3, 4, 7], &[4][..], 7),
        (vec![0, 1, 2, 3, 4, 4], &[4][..], 4),
    ] {
        let e = pointer_error(col_ptr.clone(), columns);
        assert_eq!(
            (e.field().map(|f| f.to_string()), e.rule()),
            (
                Some("col_ptr[5]".to_owned()),
                Some("layouts/csc.md § Storage Invariants (1)")
            ),
            "{col_ptr:?}: {e}"
        );
        assert!(
            matches!(e, Error::PtrLast { value: v, expected: 5, .. } if v == value),
            "{col_ptr:?}: {e:?}"
        );
    }
}

/// The worked example with `col_ptr` replaced, opened permissive: the full
/// check's error, asserted equal to the lookups' in each of `columns`.
fn pointer_error(col_ptr: Vec<u64>, columns: &[u64]) -> Error {
    let mut p = parts();
    p.col_ptr = col_ptr;
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    let e = a.validate().unwrap_err();
    for &j in columns {
        assert_eq!(a.column(j).unwrap_err(), e, "column {j}");
    }
    // The pointers alone give the same error.
    assert_eq!(a.structure().validate_pointers(), Err(e.clone()));
    let csr = a.structure().transpose();
    assert_eq!(csr.validate_pointers(), csr.validate());
    e
}

#[test]
fn parse_over_a_misaligned_slice_is_an_error_not_a_panic() {
    // The file's bytes one byte past an 8-aligned start: every u64 buffer is
    // misaligned in memory although correctly placed in the file.
    let mut padded = vec![0u8];
    padded.extend(std::fs::read(FIXTURE).unwrap());
    let aligned = AlignedBytes::from_slice(&padded);
    let odd = &aligned[1..];
    let file = HurrayFile::parse(odd, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert!(matches!(
        t.csc::<f32>(),
        Err(Error::Misaligned {
            buffer: 2,
            role: "col_ptr",
            align: 8,
            ..
        })
    ));
    // The bytes stay readable element by element, without a typed slice.
    assert_eq!(t.buffer(0).unwrap().value(1), Some(hurray_reader::Value::Float(4.0)));
    assert_eq!(t.buffer(2).unwrap().value(5), Some(hurray_reader::Value::UInt(5)));
}

/// A `byte_size` so large that the buffer's end passes 2^64: the error
/// gives the true end, `start + byte_size`, not one clamped at `u64::MAX`.
/// Only a buffer that may be larger than required gets as far as being
/// placed: a dense one in permissive mode (a CSC buffer of the wrong size is
/// named at its `byte_size` in both modes, see
/// `rule_sparse_buffer_sizes_are_exact_in_permissive_mode_too`).
#[test]
fn buffer_end_past_u64_is_reported_exactly() {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let data = [0u8; 16];
    let d = TensorDescriptor::row_major(ElementType::Float32, vec![4]).unwrap();
    w.write_tensor("A", &d, vec![BufferData::Bytes(&data)]).unwrap();
    let good = AlignedBytes::from_slice(&w.finish().unwrap());
    let file = HurrayFile::parse(&good, Options::default()).unwrap();
    let start = file.tensor("A").unwrap().buffer(0).unwrap().file_offset();
    let dump = file.dump_descriptor("A").unwrap();
    let field = Field::member("buffer", 0, "byte_size");
    let at = dump.fields.iter().find(|f| f.field == field).unwrap().offset;
    let mut bytes = good.to_vec();
    let i = at as usize;
    bytes[i..i + 8].copy_from_slice(&(u64::MAX - 99).to_le_bytes());
    let bytes = AlignedBytes::from_slice(&bytes);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let e = file.tensor("A").unwrap_err();
    let want_end = u128::from(start) + u128::from(u64::MAX - 99);
    assert!(
        matches!(e, Error::OutOfRange {
            at: Location { offset, .. },
            start: s,
            end,
            ..
        } if s == start && end == want_end && offset == at),
        "{e:?}"
    );
    assert!(e.to_string().contains(&format!("[{start}, {want_end})")), "{e}");
}

/// NOTES.md "Buffer larger than required": sparse buffers must have exactly
/// the size `layouts/csc.md` § Buffer Size lists, in both modes (only dense
/// buffers may be larger, and only in permissive mode). Permissive mode
/// used to accept each of the three CSC buffers one element too large.
#[test]
fn rule_sparse_buffer_sizes_are_exact_in_permissive_mode_too() {
    for (buffer, role, extra, expected) in [
        (0u8, "values", 4u64, 20u64),
        (1, "row_indices", 8, 40),
        (2, "col_ptr", 8, 48),
    ] {
        let mut p = parts();
        let i = usize::from(buffer);
        p.descriptor.buffers[i].byte_size += extra;
        match buffer {
            0 => p.values.extend([0; 4]),
            1 => p.row_indices.push(0),
            _ => p.col_ptr.push(5),
        }
        let bytes = build(p);
        for options in [Options::strict(), Options::permissive()] {
            let file = HurrayFile::parse(&bytes, options).unwrap();
            let e = file.tensor("A").map(|_| ()).unwrap_err();
            assert!(
                matches!(&e, Error::BufferSize {
                    at: Location { field: Field { index: Some(b), .. }, .. },
                    role: r,
                    byte_size,
                    expected: x,
                    exact: true,
                    ..
                }
                    if *b == u64::from(buffer) && *r == role && *byte_size == expected + extra && *x == expected),
                "{options:?}: {e:?}"
            );
            assert_eq!(e.rule(), Some("layouts/csc.md § Buffer Size"));
        }
    }
}

// ---------------------------------------------------------------------------
// Rules audited against layouts/csc.md sentence by sentence
// (docs/csc-rules.md lists every rule with its code and tests).

/// A CSC matrix of `float32` with the given arrays, ready to be broken.
fn matrix(nrows: u64, ncols: u64, values: &[f32], row_indices: &[u64], col_ptr: &[u64]) -> Parts {
    let nnz = values.len() as u64;
    Parts {
        descriptor: TensorDescriptor::csc(ElementType::Float32, nrows, ncols, nnz)
            .unwrap()
            .to_raw(),
        values: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        row_indices: row_indices.to_vec(),
        col_ptr: col_ptr.to_vec(),
    }
}

/// § Description / memory-layout.md: the tag is 0x08 (not the 0x09 of
/// older copies, which is CSF here); a tensor with another tag is not
/// viewed as CSC.
#[test]
fn rule_layout_tag_is_0x08() {
    use hurray_reader::Layout;
    assert_eq!(Layout::from_tag(0x08), Layout::Csc);
    assert_eq!(Layout::Csc.tag(), 0x08);
    assert_eq!(Layout::from_tag(0x09), Layout::Csf);
    assert_eq!(Layout::from_tag(0x07), Layout::Csr);
    let bytes = worked_example();
    let at = field_offset(&bytes, "layout_tag") as usize;
    assert_eq!(bytes[at], 0x08);
    // The same descriptor tagged 0x09 is read as CSF (whose buffer table
    // is laid out differently) and rejected as such, never as CSC.
    let mut p = parts();
    p.descriptor.layout_tag = 0x09;
    let e = error_of(p);
    assert!(e.rule().is_some_and(|r| !r.contains("csc.md")), "{e:?}");
    // A 5 x 5 matrix tagged 0x07 is a valid CSR (row_ptr has 6 entries
    // too): the CSC view is refused, never a reinterpretation.
    let mut p = matrix(5, 5, &[1.0], &[0], &[0, 1, 1, 1, 1, 1]);
    p.descriptor.layout_tag = 0x07;
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert!(matches!(
        t.csc::<f32>(),
        Err(Error::LayoutMismatch {
            requested: "csc",
            actual: "csr",
            ..
        })
    ));
    assert!(matches!(t.csc_structure(), Err(Error::LayoutMismatch { .. })));
}

/// § Description and § Validity Constraints: rank 0 (scalar) is refused
/// like any rank other than 2, and the error names `rank` at descriptor
/// byte 16 and the CSC section.
#[test]
fn rule_rank_0_is_refused_with_field_offset_and_section() {
    for shape in [vec![], vec![20], vec![1, 4, 5]] {
        let rank = shape.len() as u32;
        let mut p = parts();
        p.descriptor.shape = shape;
        let bytes = build(p);
        let e = strict(&bytes).unwrap_err();
        assert!(
            matches!(e, Error::RankNotAllowed { rank: r, layout: "csc", expected: "2", .. } if r == rank),
            "{e:?}"
        );
        assert_eq!(e.field(), Some(Field::new("rank")));
        assert_eq!(e.offset(), Some(field_offset(&bytes, "rank")));
        assert_eq!(e.rule(), Some("layouts/csc.md § Description"));
    }
}

/// § Buffer Table: values hold the tensor's element type, `row_indices`
/// and `col_ptr` `uint64`; `nnz`, `nnz` and `ncols + 1` elements; sizes in
/// bytes `nnz × 4`, `nnz × 8`, `(ncols + 1) × 8`.
#[test]
fn rule_buffer_roles_element_types_and_lengths() {
    let bytes = worked_example();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    let got: Vec<(String, &str, u64, u64)> = t
        .buffers()
        .iter()
        .map(|b| {
            (
                b.role().to_string(),
                b.element_type().unwrap().as_str(),
                b.len(),
                b.byte_size(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("values".to_owned(), "float32", 5, 20),
            ("row_indices".to_owned(), "uint64", 5, 40),
            ("col_ptr".to_owned(), "uint64", 6, 48),
        ]
    );
    // A float64 matrix: values are float64 (8 bytes each); a view must
    // name the type it reads.
    let mut p = parts();
    p.descriptor = TensorDescriptor::csc(ElementType::Float64, 4, 5, 5).unwrap().to_raw();
    p.values = [1.0f64, 4.0, 3.0, 2.0, 5.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.buffer(0).unwrap().byte_size(), 40);
    assert_eq!(t.csc::<f64>().unwrap().get(2, 4).unwrap(), Some(&5.0));
    assert!(matches!(
        t.csc::<f32>(),
        Err(Error::TypeMismatch {
            requested: "float32",
            actual: "float64",
            ..
        })
    ));
}

/// § Buffer Size: sub-byte values take `ceil(nnz / packing_factor)` bytes
/// (int4: 2 per byte; float6: 4 per 3 bytes, NOTES.md "float6 buffer
/// size"); the structure is read as for any type, the values through
/// `Buffer::packed`. Exact size, both modes.
#[test]
fn rule_packed_values_buffer_size() {
    // int4 values 1, -4, 3, 2, -5: nibbles LSB first.
    let codes = [1i8, -4, 3, 2, -5];
    let nib = |v: i8| (v as u8) & 0x0F;
    let int4 = vec![nib(1) | nib(-4) << 4, nib(3) | nib(2) << 4, nib(-5)];
    let mut p = parts();
    p.descriptor = TensorDescriptor::csc(ElementType::Int4, 4, 5, 5).unwrap().to_raw();
    assert_eq!(p.descriptor.buffers[0].byte_size, 3);
    p.values = int4.clone();
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    let s = t.csc_structure().unwrap().validated().unwrap();
    assert_eq!(s.position(2, 4).unwrap(), Some(4));
    let values = t.buffer(0).unwrap().packed().unwrap();
    let decoded: Vec<hurray_reader::Value> = (0..5).map(|i| values.get(i).unwrap()).collect();
    let want: Vec<hurray_reader::Value> = codes.iter().map(|&c| hurray_reader::Value::Int(c.into())).collect();
    assert_eq!(decoded, want);
    // No typed slice over packed values.
    assert!(matches!(
        t.csc::<i8>(),
        Err(Error::TypeMismatch {
            requested: "int8",
            actual: "int4",
            ..
        })
    ));
    // 5 bytes (one per value) is refused in both modes.
    for options in [Options::strict(), Options::permissive()] {
        let mut p = parts();
        p.descriptor = TensorDescriptor::csc(ElementType::Int4, 4, 5, 5).unwrap().to_raw();
        p.descriptor.buffers[0].byte_size = 5;
        p.values = vec![0; 5];
        let bytes = build(p);
        let e = HurrayFile::parse(&bytes, options).unwrap().tensor("A").unwrap_err();
        assert!(
            matches!(
                e,
                Error::BufferSize {
                    at: Location {
                        field: Field { index: Some(0), .. },
                        ..
                    },
                    byte_size: 5,
                    expected: 3,
                    ..
                }
            ),
            "{e:?}"
        );
    }
    // float6_e2m3: five values in ceil(5 / 4) × 3 = 6 bytes.
    let d = TensorDescriptor::csc(ElementType::Float6E2M3, 4, 5, 5)
        .unwrap()
        .to_raw();
    assert_eq!(d.buffers[0].byte_size, 6);
    let mut p = parts();
    p.descriptor = d;
    p.values = vec![0; 6];
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    assert_eq!(file.tensor("A").unwrap().buffer(0).unwrap().len(), 5);
    let mut p = parts();
    p.descriptor = TensorDescriptor::csc(ElementType::Float6E2M3, 4, 5, 5)
        .unwrap()
        .to_raw();
    p.descriptor.buffers[0].byte_size = 4; // ceil(5 x 6 / 8), the other reading
    p.values = vec![0; 4];
    assert!(matches!(
        error_of(p),
        Error::BufferSize {
            at: Location {
                field: Field { index: Some(0), .. },
                ..
            },
            byte_size: 4,
            expected: 6,
            ..
        }
    ));
}

/// § Additional Descriptor Fields (nnz MAY be 0), data-model.md § Empty
/// Tensors: 0 × 0, 4 × 0, 0 × 5 and 4 × 5 with nothing stored are valid;
/// `col_ptr` has `ncols + 1` zeros (one for 0 columns), every column is
/// empty, every in-range lookup is an implicit zero.
#[test]
fn empty_matrices_and_nnz_zero_are_valid() {
    for (nrows, ncols) in [(0u64, 0u64), (4, 0), (0, 5), (4, 5)] {
        let col_ptr = vec![0u64; ncols as usize + 1];
        let bytes = build(matrix(nrows, ncols, &[], &[], &col_ptr));
        for options in [Options::strict(), Options::permissive()] {
            let file = HurrayFile::parse(&bytes, options).unwrap();
            let t = file.tensor("A").unwrap();
            let sizes: Vec<u64> = t.buffers().iter().map(|b| b.byte_size()).collect();
            assert_eq!(sizes, [0, 0, 8 * (ncols + 1)]);
            let a = t.csc::<f32>().unwrap().validated().unwrap();
            assert_eq!((a.nrows(), a.ncols(), a.nnz()), (nrows, ncols, 0));
            assert_eq!(
                (a.values(), a.row_indices(), a.col_ptr()),
                (&[][..], &[][..], &col_ptr[..])
            );
            assert_eq!(a.columns().unwrap().len() as u64, ncols);
            assert!(a.columns().unwrap().all(|(_, r, v)| r.is_empty() && v.is_empty()));
            assert_eq!(a.iter().unwrap().count(), 0);
            for c in 0..ncols {
                assert_eq!(a.column(c).unwrap().len(), 0);
                for r in 0..nrows {
                    assert_eq!(a.get(r, c).unwrap(), None);
                }
            }
            assert!(matches!(a.get(nrows, 0), Err(Error::IndexArgument { .. })));
            assert!(matches!(
                a.column(ncols),
                Err(Error::IndexArgument { what: "column", .. })
            ));
            let csr = a.to_csr().unwrap();
            assert_eq!(csr.row_ptr(), vec![0u64; nrows as usize + 1]);
            let at = a.transpose();
            assert_eq!((at.nrows(), at.ncols(), at.nnz()), (ncols, nrows, 0));
            let mut y = vec![1f32; nrows as usize];
            a.mul_vec(&vec![1.0; ncols as usize], &mut y).unwrap();
            assert!(y.iter().all(|&v| v == 0.0));
        }
    }
}

/// No rule bounds `nnz` by itself, but invariants (1), (3) and (4) do: at
/// most `nrows` distinct rows per column, so `nnz <= nrows × ncols`. A
/// matrix with no rows cannot store anything; two entries in a 1 × 1
/// matrix repeat a row; an `nnz` that `col_ptr` does not reach is named at
/// `col_ptr[ncols]`.
/// A CSC matrix stores its non-zeros, not its elements: a shape whose
/// element count does not fit in a `u64` is valid, the views work, and only
/// `element_count` (whose rule is the count, not a buffer size) says it
/// cannot answer.
#[test]
fn a_shape_beyond_u64_elements_is_valid_sparse() {
    let bytes = build(matrix(1 << 63, 4, &[7.0], &[(1 << 63) - 1], &[0, 0, 0, 1, 1]));
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    assert_eq!(file.validate(), Ok(()));
    let t = file.tensor("A").unwrap();
    let a = t.csc::<f32>().unwrap();
    assert_eq!(a.get((1 << 63) - 1, 2), Ok(Some(&7.0)));
    assert_eq!(a.get(0, 2), Ok(None));
    let e = t.element_count().unwrap_err();
    assert!(
        matches!(
            e,
            Error::Overflow {
                at: Location {
                    rule: "data-model.md § Shape › Total Element Count",
                    ..
                },
                what: "element count (product of shape)",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.field().map(|f| f.to_string()), Some("shape".into()));
}

#[test]
fn nnz_is_bounded_by_the_shape_through_the_invariants() {
    let e = error_of(matrix(0, 5, &[1.0], &[0], &[0, 1, 1, 1, 1, 1]));
    assert!(
        matches!(
            e,
            Error::IndexOutOfBounds {
                at: Location {
                    field: Field {
                        name: "row_indices",
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
    let e = error_of(matrix(1, 1, &[1.0, 2.0], &[0, 0], &[0, 2]));
    assert!(
        matches!(
            e,
            Error::NotIncreasing {
                at: Location {
                    field: Field { index: Some(1), .. },
                    ..
                },
                value: 0,
                previous: 0,
                ..
            }
        ),
        "{e:?}"
    );
    // 0 columns: col_ptr = [0] must equal nnz = 1.
    let e = error_of(matrix(4, 0, &[1.0], &[0], &[0]));
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
    // nnz = nrows × ncols, every cell stored: valid.
    assert_eq!(
        strict(&build(matrix(2, 2, &[1.0, 2.0, 3.0, 4.0], &[0, 1, 0, 1], &[0, 2, 4]))),
        Ok(())
    );
}

/// § Element Lookup: a binary search over a long column (every third row
/// stored): each stored row found at its position, each other row an
/// implicit zero, in a column and in the empty columns around it.
#[test]
fn lookup_in_a_long_column() {
    let rows: Vec<u64> = (0..1000).map(|k| 3 * k + 1).collect();
    let values: Vec<f32> = (0..1000).map(|k| k as f32).collect();
    let bytes = build(matrix(3001, 3, &values, &rows, &[0, 0, 1000, 1000]));
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    for r in 0..3001u64 {
        let want = (r % 3 == 1).then(|| ((r - 1) / 3) as f32);
        assert_eq!(a.get(r, 1).unwrap().copied(), want, "row {r}");
        assert_eq!(a.structure().position(r, 1).unwrap(), want.map(|v| v as usize));
        assert_eq!(a.get(r, 0).unwrap(), None);
        assert_eq!(a.get(r, 2).unwrap(), None);
    }
}

/// § Interaction with Statistics Section: only a statistics `nnz` marked
/// valid (`NNZ_VALID`) is compared (metadata.md § computed_mask); a
/// mismatch names `statistics.nnz` with its offset and the CSC section;
/// permissive mode accepts it and the descriptor's `nnz` stays
/// authoritative.
#[test]
fn rule_statistics_nnz_only_when_valid_and_descriptor_authoritative() {
    // nnz 6 but NNZ_VALID clear: unknown, not compared.
    let mut p = parts();
    p.descriptor.statistics = Some(Statistics {
        nnz: 6,
        ..Statistics::default()
    });
    assert_eq!(strict(&build(p)), Ok(()));
    let mut p = parts();
    p.descriptor.statistics = Some(Statistics::default().with_nnz(6));
    let bytes = build(p);
    let e = strict(&bytes).unwrap_err();
    assert_eq!(e.field(), Some(Field::sub("statistics", "nnz")));
    assert_eq!(e.offset(), Some(field_offset(&bytes, "statistics.nnz")));
    assert_eq!(e.rule(), Some("layouts/csc.md § Interaction with Statistics Section"));
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = file.tensor("A").unwrap();
    assert_eq!(t.nnz(), Some(5));
    let a = t.csc::<f32>().unwrap();
    assert_eq!((a.nnz(), a.values().len()), (5, 5));
    assert_eq!(a.validate(), Ok(()));
}

/// § Buffer Size: "All buffers MUST satisfy the alignment requirements in
/// buffer-protocol.md": a non-empty CSC buffer declaring 32 is refused (in
/// both modes), an empty one (nnz 0) may declare 1.
#[test]
fn rule_buffer_alignment() {
    for options in [Options::strict(), Options::permissive()] {
        let mut p = parts();
        p.descriptor.buffers[1].alignment = 32;
        let bytes = build(p);
        let e = HurrayFile::parse(&bytes, options).unwrap().tensor("A").unwrap_err();
        assert!(matches!(e, Error::Invalid { value: 32, .. }), "{e:?}");
        assert_eq!(e.field(), Some(Field::member("buffer", 1, "alignment")));
        assert_eq!(e.offset(), Some(field_offset(&bytes, "buffer[1].alignment")));
        assert!(e.rule().is_some_and(|r| r.starts_with("buffer-protocol.md")), "{e}");
    }
    let mut p = matrix(4, 5, &[], &[], &[0; 6]);
    p.descriptor.buffers[0].alignment = 1;
    p.descriptor.buffers[1].alignment = 1;
    assert_eq!(strict(&build(p)), Ok(()));
}

/// The dynamic-dimension sentinel in `shape[0]` (nrows) is refused like
/// in `shape[1]` (data-model.md § Dynamic Dimensions: no buffer size
/// without a concrete shape).
#[test]
fn rule_dynamic_nrows_is_refused() {
    let mut p = parts();
    p.descriptor.shape = vec![u64::MAX, 5];
    let bytes = build(p);
    let e = strict(&bytes).unwrap_err();
    assert!(matches!(e, Error::DynamicDimension { .. }), "{e:?}");
    assert_eq!(e.field(), Some(Field::at("shape", 0)));
    assert_eq!(e.offset(), Some(field_offset(&bytes, "shape[0]")));
}

/// § Storage Invariants: "MUST reject ... unless operating in permissive
/// mode". Permissive mode skips the scan (the view opens; `validate`
/// still names the violation); every other rule of the section stays on.
#[test]
fn permissive_skips_only_the_invariant_scan() {
    let mut p = parts();
    p.row_indices[4] = 4;
    let bytes = build(p);
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    assert!(!a.is_validated());
    assert!(matches!(
        a.validate(),
        Err(Error::IndexOutOfBounds {
            at: Location {
                field: Field { index: Some(4), .. },
                ..
            },
            ..
        })
    ));
    assert!(matches!(
        a.get(0, 4),
        Err(Error::IndexOutOfBounds {
            at: Location {
                field: Field { index: Some(4), .. },
                ..
            },
            ..
        })
    ));
    assert_eq!(a.get(0, 3).unwrap(), Some(&2.0));
    type Damage = fn(&mut Parts);
    let structural: [(&str, Damage); 6] = [
        ("rank", |p| p.descriptor.shape = vec![1, 4, 5]),
        ("buffer_count", |p| p.descriptor.buffers.truncate(2)),
        ("_reserved", |p| p.descriptor.layout_fields[15] = 1),
        ("byte_offset", |p| p.descriptor.byte_offset = 8),
        ("buffer[2].byte_size", |p| {
            p.descriptor.buffers[2].byte_size = 40;
            p.col_ptr.truncate(5);
        }),
        ("nnz", |p| {
            p.descriptor.layout_fields[..8].copy_from_slice(&4u64.to_le_bytes())
        }),
    ];
    for (field, damage) in structural {
        let mut p = parts();
        damage(&mut p);
        let bytes = build(p);
        let e = HurrayFile::parse(&bytes, Options::permissive())
            .unwrap()
            .tensor("A")
            .map(|_| ())
            .unwrap_err();
        assert_eq!(e.field().map(|f| f.to_string()).as_deref(), Some(field), "{e}");
    }
}

/// Every error for a broken CSC rule names the field (`Error::field`), its
/// absolute byte offset (`Error::offset`), the spec section
/// (`Error::rule`), and says all three in its message.
#[test]
fn every_csc_error_names_field_offset_and_section() {
    type Damage = fn(&mut Parts);
    // (damage, field, where the error points, rule)
    let cases: [(Damage, &str, At, &str); 13] = [
        (
            |p| p.descriptor.shape = vec![20],
            "rank",
            At::Field("rank"),
            "layouts/csc.md § Description",
        ),
        (
            |p| p.descriptor.buffers.truncate(2),
            "buffer_count",
            At::Field("buffer_count"),
            "layouts/csc.md § Buffer Table",
        ),
        (
            |p| p.descriptor.layout_fields[8] = 7,
            "_reserved",
            At::Field("_reserved"),
            "layouts/csc.md § Additional Descriptor Fields",
        ),
        (
            |p| p.descriptor.byte_offset = 4,
            "byte_offset",
            At::Field("byte_offset"),
            "memory-layout.md § Common Fields › byte_offset",
        ),
        (
            |p| {
                p.descriptor.buffers[0].byte_size = 16;
                p.values.truncate(16);
            },
            "buffer[0].byte_size",
            At::Field("buffer[0].byte_size"),
            "layouts/csc.md § Buffer Size",
        ),
        (
            |p| p.descriptor.layout_fields[..8].copy_from_slice(&4u64.to_le_bytes()),
            "nnz",
            At::Field("nnz"),
            "layouts/csc.md § Buffer Size",
        ),
        (
            |p| p.descriptor.layout_fields[..8].copy_from_slice(&(1u64 << 62).to_le_bytes()),
            "nnz",
            At::Field("nnz"),
            "layouts/csc.md § Buffer Size",
        ),
        (
            |p| p.col_ptr[0] = 1,
            "col_ptr[0]",
            At::Buffer(2, 0),
            "layouts/csc.md § Storage Invariants (1)",
        ),
        (
            |p| p.col_ptr[5] = 4,
            "col_ptr[5]",
            At::Buffer(2, 40),
            "layouts/csc.md § Storage Invariants (1)",
        ),
        (
            |p| p.col_ptr = vec![0, 1, 3, 2, 4, 5],
            "col_ptr[3]",
            At::Buffer(2, 24),
            "layouts/csc.md § Storage Invariants (2)",
        ),
        (
            |p| {
                p.col_ptr = vec![0, 2, 2, 3, 4, 5];
                p.row_indices = vec![3, 1, 1, 0, 2];
            },
            "row_indices[1]",
            At::Buffer(1, 8),
            "layouts/csc.md § Storage Invariants (3)",
        ),
        (
            |p| p.row_indices[2] = 4,
            "row_indices[2]",
            At::Buffer(1, 16),
            "layouts/csc.md § Storage Invariants (4)",
        ),
        (
            |p| p.descriptor.statistics = Some(Statistics::default().with_nnz(4)),
            "statistics.nnz",
            At::Field("statistics.nnz"),
            "layouts/csc.md § Interaction with Statistics Section",
        ),
    ];
    for (damage, field, at, rule) in cases {
        let mut p = parts();
        damage(&mut p);
        let bytes = build(p);
        let e = strict(&bytes).unwrap_err();
        let offset = at.offset(&bytes);
        assert_eq!(e.field().map(|f| f.to_string()).as_deref(), Some(field), "{e:?}");
        assert_eq!(e.offset(), Some(offset), "{field}: {e}");
        assert_eq!(e.rule(), Some(rule), "{field}: {e}");
        assert_eq!(e.tensor(), Some("A"));
        let message = e.to_string();
        assert!(
            message.starts_with("tensor 'A': ")
                && message.contains(field)
                && message.contains(&offset.to_string())
                && message.ends_with(&format!("({rule})")),
            "{message}"
        );
    }
}
