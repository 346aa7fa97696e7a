//! CSR and COO files built through the writer's unchecked path, ready to
//! be broken (`csr.rs`, `coo.rs`), and the assertions both make on the
//! errors: field, offset and rule named, statistics `nnz`, alignment.
#![allow(dead_code)] // each test file uses its own subset

use hurray_reader::{AlignedBytes, Error, HurrayFile, Options};
use hurray_writer::{BufferData, ElementType, FileWriter, RawDescriptor, RawTensor, TensorDescriptor, WriterOptions};

use super::locate::field_offset;

/// A descriptor and its buffers' bytes.
#[derive(Clone)]
pub struct Parts {
    pub descriptor: RawDescriptor,
    pub buffers: Vec<Vec<u8>>,
}

pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn u64s(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A `float32` CSR matrix.
pub fn csr(nrows: u64, ncols: u64, values: &[f32], col_indices: &[u64], row_ptr: &[u64]) -> Parts {
    Parts {
        descriptor: TensorDescriptor::csr(ElementType::Float32, nrows, ncols, values.len() as u64)
            .unwrap()
            .to_raw(),
        buffers: vec![f32s(values), u64s(col_indices), u64s(row_ptr)],
    }
}

/// `layouts/csr.md` § Example: `[4, 5]` float32, nnz 5.
pub fn csr_example() -> Parts {
    csr(4, 5, &[1.0, 2.0, 3.0, 4.0, 5.0], &[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5])
}

/// A `float32` COO tensor; `indices` has `values.len() × shape.len()` entries.
pub fn coo(shape: &[u64], values: &[f32], indices: &[u64], is_sorted: bool) -> Parts {
    Parts {
        descriptor: TensorDescriptor::coo(ElementType::Float32, shape.to_vec(), values.len() as u64, is_sorted)
            .unwrap()
            .to_raw(),
        buffers: vec![f32s(values), u64s(indices)],
    }
}

/// `layouts/coo.md` § Example: `[4, 4]` float32, 3 non-zeros, sorted.
pub fn coo_example() -> Parts {
    coo(&[4, 4], &[1.5, -0.5, 2.0], &[0, 1, 2, 0, 3, 3], true)
}

pub fn build(p: Parts) -> AlignedBytes {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let mut buffers: Vec<BufferData<'_>> = p.buffers.iter().map(|b| BufferData::Bytes(b)).collect();
    buffers.truncate(p.descriptor.buffers.len());
    w.write_tensor_unchecked(RawTensor::new("A", p.descriptor.encode().unwrap(), buffers))
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// Sets the descriptor's `nnz` field (layout fields bytes 0..8).
pub fn set_nnz(p: &mut Parts, nnz: u64) {
    p.descriptor.layout_fields[..8].copy_from_slice(&nnz.to_le_bytes());
}

/// Opens `A` in `options` and gets its CSR view.
pub fn open_csr(bytes: &[u8], options: Options) -> Result<(), Error> {
    HurrayFile::parse(bytes, options)?.tensor("A")?.csr::<f32>().map(drop)
}

/// Opens `A` in `options` and gets its COO view.
pub fn open_coo(bytes: &[u8], options: Options) -> Result<(), Error> {
    HurrayFile::parse(bytes, options)?.tensor("A")?.coo::<f32>().map(drop)
}

pub fn csr_error(p: Parts) -> Error {
    open_csr(&build(p), Options::strict()).expect_err("the broken CSR file must be rejected")
}

pub fn coo_error(p: Parts) -> Error {
    open_coo(&build(p), Options::strict()).expect_err("the broken COO file must be rejected")
}

/// `(role, element type, elements, bytes)` of every buffer of `A`.
pub fn buffer_table(bytes: &[u8]) -> Vec<(String, String, u64, u64)> {
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

pub fn table(rows: &[(&str, &str, u64, u64)]) -> Vec<(String, String, u64, u64)> {
    rows.iter()
        .map(|&(r, t, n, b)| (r.to_owned(), t.to_owned(), n, b))
        .collect()
}

/// Asserts that `e` names `field` at `offset` and cites `rule`, in its
/// accessors and its message.
pub fn assert_names(e: &Error, field: &str, offset: u64, rule: &str) {
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
pub type Open = fn(&[u8], Options) -> Result<(), Error>;

/// Statistics `nnz` (marked valid) of `statistics_nnz` against the
/// descriptor's `nnz`: strict refuses naming `statistics.nnz` and `rule`.
pub fn assert_statistics_nnz_refused(bytes: &[u8], open: Open, statistics_nnz: u64, nnz: u64, rule: &str) {
    let e = open(bytes, Options::strict()).unwrap_err();
    assert!(
        matches!(e, Error::StatisticsNnzMismatch { statistics_nnz: s, nnz: n, .. } if s == statistics_nnz && n == nnz),
        "{e:?}"
    );
    assert_names(&e, "statistics.nnz", field_offset(bytes, "statistics.nnz"), rule);
}

/// A non-empty buffer declaring `alignment` (below what buffer-protocol.md
/// requires) is refused in both modes, naming `buffer[i].alignment`.
pub fn assert_alignment_refused(bytes: &[u8], open: Open, buffer: usize, alignment: u64) {
    for options in [Options::strict(), Options::permissive()] {
        let e = open(bytes, options).unwrap_err();
        assert!(matches!(e, Error::Invalid { value, .. } if value == alignment), "{e:?}");
        let field = format!("buffer[{buffer}].alignment");
        assert_eq!(e.field().map(|f| f.to_string()), Some(field.clone()));
        assert_eq!(e.offset(), Some(field_offset(bytes, &field)));
        assert!(e.rule().is_some_and(|r| r.starts_with("buffer-protocol.md")), "{e}");
    }
}
