//! `{:?}` of everything that holds file bytes is a summary of a few
//! hundred bytes, whatever the file's size (issue 31, item 10): on a
//! 1.2 GB file `format!("{file:?}")` once built a 4.6 GB string. Exact
//! strings on the worked example; bounded lengths and the summary's
//! fields on a file of about 50 MB, read into memory and mapped.

use hurray_reader::{AlignedBytes, HurrayFile, MappedFile, Options};
use hurray_writer::{Coo, Csc, Csf, CsfLevel, Csr, Dense, FileWriter, KvArray, WriterOptions};

/// The longest summary allowed, in bytes (pretty-printed: `{:#?}`, which
/// adds indentation and line breaks, gets twice as much).
const MAX: usize = 800;

const LONG_NAME_LEN: usize = 300;

/// About 50 MB: a CSC and a CSR matrix of 2 M non-zeros (40 MB together
/// with their pointers), a dense tensor of 1 M `f64`, a COO and a CSF
/// tensor, a tensor with a 300-byte name, and KV entries of 1 MB each.
fn large_file() -> Vec<u8> {
    const NNZ: u64 = 2_000_000;
    const NCOLS: u64 = 500_000;
    let values: Vec<f32> = (0..NNZ).map(|i| i as f32).collect();
    let rows: Vec<u64> = (0..NNZ).map(|i| i % 4).collect();
    let ptr: Vec<u64> = (0..=NCOLS).map(|j| j * 4).collect();
    let csc = Csc::new(4, NCOLS, &values[..], &rows, &ptr).unwrap();
    let csr = Csr::new(NCOLS, 4, &values[..], &rows, &ptr).unwrap();
    let dense_values: Vec<f64> = (0..1_000_000).map(f64::from).collect();
    let dense = Dense::row_major(&[1000, 1000], &dense_values[..]).unwrap();
    let coo_indices: Vec<u64> = (0..100_000u64).flat_map(|i| [i, i % 7]).collect();
    let coo_values = vec![1.5f32; 100_000];
    let coo = Coo::new(&[100_000, 7], &coo_values[..], &coo_indices, true).unwrap();
    let csf_values = [1.0f32, 2.0];
    let pos0 = [0u64, 1];
    let crd0 = [1u64];
    let pos1 = [0u64, 1];
    let crd1 = [2u64];
    let pos2 = [0u64, 2];
    let crd2 = [0u64, 3];
    let levels = [
        CsfLevel { pos: &pos0, crd: &crd0 },
        CsfLevel { pos: &pos1, crd: &crd1 },
        CsfLevel { pos: &pos2, crd: &crd2 },
    ];
    let csf = Csf::new(&[2, 3, 4], &[0, 1, 2], &csf_values[..], &levels).unwrap();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.add_kv("big_string", "s".repeat(1 << 20)).unwrap();
    w.add_kv("big_bytes", vec![7u8; 1 << 20]).unwrap();
    w.add_kv("big_array", KvArray::Int64((0..131_072).collect())).unwrap();
    w.write_csc("A", &csc).unwrap();
    w.write_csr("B", &csr).unwrap();
    w.write_dense("D", &dense).unwrap();
    w.write_coo("C", &coo).unwrap();
    w.write_csf("F", &csf).unwrap();
    w.write_dense(
        &"n".repeat(LONG_NAME_LEN),
        &Dense::row_major(&[1], &[0.5f32][..]).unwrap(),
    )
    .unwrap();
    w.finish().unwrap()
}

/// `{value:?}` is at most [`MAX`] bytes (`{value:#?}` twice that) and
/// contains every one of `fields`.
fn check(what: &str, debug: String, pretty: String, fields: &[&str]) {
    assert!(debug.len() <= MAX, "{what}: {} bytes: {debug}", debug.len());
    assert!(
        pretty.len() <= 2 * MAX,
        "{what} pretty: {} bytes: {pretty}",
        pretty.len()
    );
    for field in fields {
        assert!(debug.contains(field), "{what}: no {field:?} in {debug}");
    }
}

macro_rules! check {
    ($value:expr, $($field:expr),* $(,)?) => {
        check(stringify!($value), format!("{:?}", $value), format!("{:#?}", $value), &[$($field),*])
    };
}

/// Every public type that holds the file's bytes, on `file`.
fn check_all(file: &HurrayFile<'_>) {
    check!(
        file,
        "tensors: [\"A\", \"B\", \"D\", \"C\", .. (6 in all)]",
        "kv: [\"big_string\"",
        "container_version: (1, 0)"
    );
    check!(file.entries()[0], "name: \"A\"", "data_offset: ");
    for kv in file.kv() {
        check!(kv, "key: ");
    }
    check!(
        file.kv()[0],
        "String(\"ssssssssssssssssssssssssssssssssssssssssssssssss\" .. (1048576 bytes))"
    );
    check!(file.kv()[1], "Bytes([7, 7, 7, 7, .. (1048576 in all)])");
    check!(
        file.kv()[2],
        "values: [Int64(0), Int64(1), Int64(2), Int64(3), .. (131072 in all)]"
    );

    let a = file.tensor("A").unwrap();
    check!(
        a,
        "name: \"A\"",
        "layout: Csc",
        "shape: [4, 500000]",
        "nnz: Some(2000000)",
        "values float32 x 2000000 at "
    );
    check!(
        a.descriptor(),
        "layout: Csc",
        "shape: [4, 500000]",
        "buffer_count: Some(3)"
    );
    check!(
        a.buffer(0).unwrap(),
        "role: Values",
        "len: 2000000",
        "values: [Float(0.0), Float(1.0), Float(2.0), Float(3.0), .. (2000000 in all)]"
    );
    let csc = a.csc::<f32>().unwrap();
    check!(
        csc,
        "nrows: 4",
        "ncols: 500000",
        "nnz: 2000000",
        "col_ptr: [0, 4, 8, 12, .. (500001 in all)]",
        "values: [0.0, 1.0, 2.0, 3.0, .. (2000000 in all)]",
        "validated: true"
    );
    check!(csc.structure(), "row_indices: [0, 1, 2, 3, .. (2000000 in all)]");
    check!(csc.transpose(), "nrows: 500000", "transposed: true");
    check!(
        csc.column(7).unwrap(),
        "rows: [0, 1, 2, 3]",
        "values: [28.0, 29.0, 30.0, 31.0]"
    );
    check!(csc.columns().unwrap(), "remaining: 500000");
    check!(csc.iter().unwrap(), "col: 0");
    let owned = csc.to_csr().unwrap();
    check!(
        owned,
        "nrows: 4",
        "row_ptr: [0, 500000, 1000000, 1500000, .. (5 in all)]"
    );
    check!(owned.view(), "row_ptr: [0, 500000");
    check!(
        file.tensor("B").unwrap().csr::<f32>().unwrap(),
        "nrows: 500000",
        "col_indices: [0, 1, 2, 3, .. (2000000 in all)]"
    );

    let d = file.tensor("D").unwrap();
    check!(d, "layout: RowMajor", "shape: [1000, 1000]");
    let dense = d.dense::<f64>().unwrap();
    check!(
        dense,
        "shape: [1000, 1000]",
        "elements: [0.0, 1.0, 2.0, 3.0, .. (1000000 in all)]"
    );
    check!(dense.addressing(), "layout: RowMajor");

    let coo = file.tensor("C").unwrap().coo::<f32>().unwrap();
    check!(
        coo,
        "shape: [100000, 7]",
        "nnz: 100000",
        "indices: [0, 0, 1, 1, .. (200000 in all)]",
        "is_sorted: true"
    );
    check!(coo.structure(), "nnz: 100000");

    let csf = file.tensor("F").unwrap().csf::<f32>().unwrap();
    check!(csf, "shape: [2, 3, 4]", "nnz: 2", "levels: [CsfLevel");
    check!(csf.structure().entries().unwrap(), "next: 0", "end: 2");

    let long = "n".repeat(LONG_NAME_LEN);
    let t = file.tensor(&long).unwrap();
    check!(t, &format!("name: \"{}\" .. ({LONG_NAME_LEN} bytes)", "n".repeat(48)));
    check!(file.dump_descriptor(&long).unwrap(), "fields: [AnnotatedField");
}

#[test]
fn debug_of_a_large_file_is_a_summary() {
    let bytes = large_file();
    assert!(bytes.len() > 45_000_000, "{}", bytes.len());
    let aligned = AlignedBytes::from_slice(&bytes);
    check!(aligned, &format!("len: {}", bytes.len()), "bytes: [72, 82, 82, 89, ..");
    check_all(&HurrayFile::parse(&aligned, Options::default()).unwrap());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.hry");
    std::fs::write(&path, &bytes).unwrap();
    let mapped = MappedFile::open(&path, Options::default()).unwrap();
    assert_eq!(
        format!("{mapped:?}"),
        format!(
            "MappedFile {{ len: {}, options: Options {{ mode: Strict, threads: 1, extension_layouts: [] }} }}",
            bytes.len()
        )
    );
    check_all(&mapped.file().unwrap());
}

/// The exact summaries of the worked example of `layouts/csc.md`.
#[test]
fn debug_of_the_worked_example() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
    let bytes = AlignedBytes::read(path).unwrap();
    let file = HurrayFile::parse(&bytes, Options::default()).unwrap();
    assert_eq!(
        format!("{file:?}"),
        "HurrayFile { len: 16467, options: Options { mode: Strict, threads: 1, extension_layouts: [] }, \
         container_version: (1, 0), file_flags: 4, data_buffer_alignment: 4096, tensors: [\"A\"], kv: [] }"
    );
    let t = file.tensor("A").unwrap();
    assert_eq!(
        format!("{t:?}"),
        "Tensor { name: \"A\", position: 0, element_type: Some(Float32), layout: Csc, shape: [4, 5], \
         nnz: Some(5), descriptor_offset: 64, data_offset: 4096, data_length: 8240, buffers: \
         [values float32 x 5 at 4096, row_indices uint64 x 5 at 8192, col_ptr uint64 x 6 at 12288], \
         not_viewable: None, members: [] }"
    );
    assert_eq!(
        format!("{:?}", t.buffer(2).unwrap()),
        "Buffer { tensor: \"A\", index: 2, role: ColPtr, element_type: Some(Uint64), file_offset: 12288, \
         byte_size: 48, alignment: 64, element_start: 0, len: 6, values: [UInt(0), UInt(1), UInt(2), UInt(3), \
         .. (6 in all)] }"
    );
    let a = t.csc::<f32>().unwrap();
    assert_eq!(
        format!("{a:?}"),
        "CscView { tensor: \"A\", nrows: 4, ncols: 5, nnz: 5, col_ptr: [0, 1, 2, 3, .. (6 in all)], \
         row_indices: [0, 2, 1, 0, .. (5 in all)], values: [1.0, 4.0, 3.0, 2.0, .. (5 in all)], \
         validated: true, transposed: false }"
    );
    assert_eq!(
        format!("{:?}", a.transpose().structure()),
        "CsrStructure { tensor: \"A\", nrows: 5, ncols: 4, nnz: 5, row_ptr: [0, 1, 2, 3, .. (6 in all)], \
         col_indices: [0, 2, 1, 0, .. (5 in all)], validated: true, transposed: true }"
    );
    assert_eq!(
        format!("{:?}", a.column(1).unwrap()),
        "Column { rows: [2], values: [4.0] }"
    );
}
