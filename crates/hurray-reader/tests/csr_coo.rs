//! CSR (`layouts/csr.md`) and COO (`layouts/coo.md`): each worked example
//! asserted value by value through `CsrView` and `CooView`, and one test per
//! rule of the two sections that no other test asserted with an exact value
//! or error variant. `docs/sparse-rules.md` maps every rule of both files to
//! its code and tests (the CSC counterpart is `tests/csc.rs`).

use hurray_reader::{AlignedBytes, Error, Field, HurrayFile, Layout, Options, Value};
use hurray_writer::{
    BufferData, ElementType, FileWriter, RawDescriptor, RawTensor, Statistics, TensorDescriptor, WriterOptions,
};

mod support {
    pub mod locate;
    pub mod worked_example;
}

use support::locate::{buffer_offset, field_offset, At};
use support::worked_example::{DENSE, FIXTURE};

// ---------------------------------------------------------------------------
// Files built through the writer's unchecked path, ready to be broken.

/// A descriptor and its buffers' bytes.
#[derive(Clone)]
struct Parts {
    descriptor: RawDescriptor,
    buffers: Vec<Vec<u8>>,
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A `float32` CSR matrix.
fn csr(nrows: u64, ncols: u64, values: &[f32], col_indices: &[u64], row_ptr: &[u64]) -> Parts {
    Parts {
        descriptor: TensorDescriptor::csr(ElementType::Float32, nrows, ncols, values.len() as u64)
            .unwrap()
            .to_raw(),
        buffers: vec![f32s(values), u64s(col_indices), u64s(row_ptr)],
    }
}

/// `layouts/csr.md` § Example: `[4, 5]` float32, nnz 5.
fn csr_example() -> Parts {
    csr(4, 5, &[1.0, 2.0, 3.0, 4.0, 5.0], &[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5])
}

/// A `float32` COO tensor; `indices` has `values.len() × shape.len()` entries.
fn coo(shape: &[u64], values: &[f32], indices: &[u64], is_sorted: bool) -> Parts {
    Parts {
        descriptor: TensorDescriptor::coo(ElementType::Float32, shape.to_vec(), values.len() as u64, is_sorted)
            .unwrap()
            .to_raw(),
        buffers: vec![f32s(values), u64s(indices)],
    }
}

/// `layouts/coo.md` § Example: `[4, 4]` float32, 3 non-zeros, sorted.
fn coo_example() -> Parts {
    coo(&[4, 4], &[1.5, -0.5, 2.0], &[0, 1, 2, 0, 3, 3], true)
}

fn build(p: Parts) -> AlignedBytes {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let mut buffers: Vec<BufferData<'_>> = p.buffers.iter().map(|b| BufferData::Bytes(b)).collect();
    buffers.truncate(p.descriptor.buffers.len());
    w.write_tensor_unchecked(RawTensor::new("A", p.descriptor.encode().unwrap(), buffers))
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// Sets the descriptor's `nnz` field (layout fields bytes 0..8).
fn set_nnz(p: &mut Parts, nnz: u64) {
    p.descriptor.layout_fields[..8].copy_from_slice(&nnz.to_le_bytes());
}

/// Opens `A` in `options` and gets its CSR view.
fn open_csr(bytes: &[u8], options: Options) -> Result<(), Error> {
    HurrayFile::parse(bytes, options)?.tensor("A")?.csr::<f32>().map(drop)
}

/// Opens `A` in `options` and gets its COO view.
fn open_coo(bytes: &[u8], options: Options) -> Result<(), Error> {
    HurrayFile::parse(bytes, options)?.tensor("A")?.coo::<f32>().map(drop)
}

fn csr_error(p: Parts) -> Error {
    open_csr(&build(p), Options::strict()).expect_err("the broken CSR file must be rejected")
}

fn coo_error(p: Parts) -> Error {
    open_coo(&build(p), Options::strict()).expect_err("the broken COO file must be rejected")
}

/// `(role, element type, elements, bytes)` of every buffer of `A`.
fn buffer_table(bytes: &[u8]) -> Vec<(String, String, u64, u64)> {
    let file = HurrayFile::parse(bytes, Options::default()).unwrap();
    let t = file.tensor("A").unwrap();
    t.buffers()
        .iter()
        .map(|b| {
            (
                b.role().to_string(),
                b.element_type().unwrap().as_str().to_owned(),
                b.len(),
                b.byte_size(),
            )
        })
        .collect()
}

fn table(rows: &[(&str, &str, u64, u64)]) -> Vec<(String, String, u64, u64)> {
    rows.iter()
        .map(|&(r, t, n, b)| (r.to_owned(), t.to_owned(), n, b))
        .collect()
}

/// Asserts that `e` names `field` at `offset` and cites `rule`, in its
/// accessors and its message.
fn assert_names(e: &Error, field: &str, offset: u64, rule: &str) {
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

/// Open signature of [`open_csr`] and [`open_coo`].
type Open = fn(&[u8], Options) -> Result<(), Error>;

/// Statistics `nnz` (marked valid) of `statistics_nnz` against the
/// descriptor's `nnz`: strict refuses naming `statistics.nnz` and `rule`.
fn assert_statistics_nnz_refused(bytes: &[u8], open: Open, statistics_nnz: u64, nnz: u64, rule: &str) {
    let e = open(bytes, Options::strict()).unwrap_err();
    assert!(
        matches!(e, Error::StatisticsNnzMismatch { statistics_nnz: s, nnz: n, .. } if s == statistics_nnz && n == nnz),
        "{e:?}"
    );
    assert_names(&e, "statistics.nnz", field_offset(bytes, "statistics.nnz"), rule);
}

/// A non-empty buffer declaring `alignment` (below what buffer-protocol.md
/// requires) is refused in both modes, naming `buffer[i].alignment`.
fn assert_alignment_refused(bytes: &[u8], open: Open, buffer: usize, alignment: u64) {
    for options in [Options::strict(), Options::permissive()] {
        let e = open(bytes, options).unwrap_err();
        assert!(matches!(e, Error::Invalid { value, .. } if value == alignment), "{e:?}");
        let field = format!("buffer[{buffer}].alignment");
        assert_eq!(e.field().map(|f| f.to_string()), Some(field.clone()));
        assert_eq!(e.offset(), Some(field_offset(bytes, &field)));
        assert!(e.rule().is_some_and(|r| r.starts_with("buffer-protocol.md")), "{e}");
    }
}

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
                buffer: 2,
                role: "col_ptr",
                byte_size: 40,
                expected: 48,
                rule: "layouts/csc.md § Buffer Size",
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
                    matches!(&e, Error::BufferSize { buffer: b, role: r, byte_size, expected: x, exact: true, .. }
                        if usize::from(*b) == buffer && *r == role && *byte_size == size && *x == expected),
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
                matches!(e, Error::BufferSize { buffer: 0, byte_size, expected: x, .. } if byte_size == bytes_wrong && x == expected),
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
            tensor: "A".into(),
            array: "row_ptr",
            offset: ptr_at,
            value: 1,
            rule: "layouts/csr.md § Storage Invariants (1)",
        }
    );
    assert_names(&e, "row_ptr[0]", ptr_at, &inv(1));

    // (1) row_ptr[nrows] = nnz, below and above.
    for last in [4u64, 6] {
        let mut p = csr_example();
        p.buffers[2] = u64s(&[0, 2, 3, 4.min(last), last]);
        let e = csr_error(p);
        assert!(
            matches!(e, Error::PtrLast { array: "row_ptr", position: 4, value, expected: 5, .. } if value == last),
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
                array: "row_ptr",
                position: 2,
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
                tensor: "A".into(),
                array: "col_indices",
                slice: "row",
                slice_index: 0,
                position: 1,
                offset: cols_at + 8,
                value,
                previous,
                rule: "layouts/csr.md § Storage Invariants (3)",
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
                Error::IndexOutOfBounds { array: "col_indices", position: 4, value: v, bound: 5, bound_name, .. }
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
                    position: 2,
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
                array: "col_indices",
                position: 0,
                value: 0,
                bound: 0,
                ..
            }
        ),
        "{e:?}"
    );
    let e = csr_error(csr(1, 1, &[1.0, 2.0], &[0, 0], &[0, 2]));
    assert!(matches!(e, Error::NotIncreasing { position: 1, .. }), "{e:?}");
    let e = csr_error(csr(0, 4, &[1.0], &[0], &[0]));
    assert!(
        matches!(
            e,
            Error::PtrLast {
                position: 0,
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
                    matches!(&e, Error::BufferSize { buffer: b, role: r, byte_size, expected: x, exact: true, .. }
                        if usize::from(*b) == buffer && *r == role && *byte_size == size && *x == expected),
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
                buffer: 1,
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
                    tensor: "A".into(),
                    array: "indices",
                    position: k as u64,
                    offset: at + 8 * k as u64,
                    value,
                    bound: 4,
                    bound_name: Field::at("shape", dim),
                    rule: "layouts/coo.md § Validity Constraints",
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
        tensor: "A".into(),
        position,
        element: position * 2,
        offset: at + position * 16,
        what,
        rule: "layouts/coo.md § Validity Constraints",
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
            Error::CooOrder { element, .. } => *element,
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
                position: 1,
                element: 3,
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
        matches!(&e, Error::IndexOutOfBounds { position: 1, value: 0, bound: 0, bound_name, .. } if *bound_name == Field::at("shape", 1)),
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
