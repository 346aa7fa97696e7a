//! `hurray_reader._native.File`: a parsed file (`SharedFile`) and what the
//! Python layer asks of it. Descriptions come back as plain dicts and
//! lists; arrays are made in Python from the `Bytes` object and the
//! offsets given here.

use std::path::PathBuf;

use hurray_reader::{
    descriptor_flags, statistics_mask, Buffer, BufferRole, ElementType, HurrayFile, KvArray, KvValue, Layout, Mode,
    Options, QuantScheme, SharedFile, Tensor, DYNAMIC,
};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::decode;
use crate::error::ReadResult;
use crate::product::{self, Matrices};
use crate::storage::Bytes;

/// Maps (or reads) and parses a Hurray file: header, trailer, footer index
/// and KV section, nothing proportional to the data.
#[pyfunction]
pub fn open_file(py: Python<'_>, path: PathBuf, permissive: bool, mmap: bool, threads: usize) -> PyResult<File> {
    let mode = if permissive { Mode::Permissive } else { Mode::Strict };
    let options = Options::strict().with_threads(threads);
    let options = if mode == Mode::Permissive {
        Options::permissive().with_threads(threads)
    } else {
        options
    };
    let shared = py.detach(|| {
        if mmap {
            SharedFile::open(&path, options)
        } else {
            SharedFile::read(&path, options)
        }
    });
    let shared = shared.map_err(|e| match e {
        hurray_reader::Error::Io { kind, message } => crate::error::os_error(kind, None, message.into(), Some(&path)),
        e => crate::error::ReadError(e).into(),
    })?;
    let storage = Py::new(py, Bytes::file(shared.clone()))?;
    Ok(File {
        shared,
        storage,
        matrices: Matrices::default(),
    })
}

/// A parsed file. Frozen: nothing in it changes after `open_file`.
#[pyclass(frozen, module = "hurray_reader._native")]
pub struct File {
    shared: SharedFile,
    storage: Py<Bytes>,
    /// The matrix handles of `matvec`, scanned once each.
    matrices: Matrices,
}

impl File {
    fn tensor(&self, name: &str) -> ReadResult<Tensor<'_>> {
        Ok(self.shared.file().tensor(name)?)
    }
}

#[pymethods]
impl File {
    /// The file's bytes, for `numpy.frombuffer`.
    #[getter]
    fn storage(&self, py: Python<'_>) -> Py<Bytes> {
        self.storage.clone_ref(py)
    }

    /// Tensor names in file order (by `descriptor_offset`).
    fn names(&self) -> Vec<&str> {
        self.shared.file().entries_in_file_order().map(|e| e.name()).collect()
    }

    fn __len__(&self) -> usize {
        self.shared.file().len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.shared.file().entry(name).is_some()
    }

    /// Container facts: version, flags, alignment, size, mapping, mode.
    fn container<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let file = self.shared.file();
        let d = PyDict::new(py);
        d.set_item("container_version", file.container_version())?;
        d.set_item("file_flags", file.file_flags())?;
        d.set_item("data_buffer_alignment", file.data_buffer_alignment())?;
        d.set_item("size", self.shared.bytes().len())?;
        d.set_item("mapped", self.shared.is_mapped())?;
        d.set_item("strict", file.options().is_strict())?;
        d.set_item("threads", file.options().threads())?;
        Ok(d)
    }

    /// The KV section as a dict of Python values, in file order.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for entry in self.shared.file().kv() {
            d.set_item(entry.key(), kv_value(py, entry.value())?)?;
        }
        Ok(d)
    }

    /// Checks the whole file (`HurrayFile::validate`), without the GIL.
    fn validate(&self, py: Python<'_>) -> ReadResult<()> {
        Ok(py.detach(|| self.shared.file().validate())?)
    }

    /// Findings the reader reports for a tensor it accepts, one line each,
    /// as `hurray-inspect --validate` prints them: a statistics `nnz`
    /// other than the descriptor's or a statistics field rule broken
    /// (permissive mode only: strict mode rejects both), a
    /// `sparsity_ratio` that disagrees with `nnz`, a GPU buffer declaring
    /// less than page alignment ([`Tensor::warnings`]). Reads the
    /// descriptor only.
    fn warnings(&self, name: &str) -> ReadResult<Vec<String>> {
        Ok(self.tensor(name)?.warnings())
    }

    /// A tensor's description: see `describe`.
    fn tensor_info<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
        if self.shared.file().entry(name).is_none() {
            return Err(PyKeyError::new_err(name.to_owned()));
        }
        describe(py, self.shared.file(), &self.tensor(name)?)
    }

    /// Runs every check that reads the tensor's data
    /// (`Tensor::validate_data`: the storage invariant scan and more),
    /// without the GIL, on the file's threads.
    fn check(&self, py: Python<'_>, name: &str) -> ReadResult<()> {
        py.detach(|| Ok(self.tensor(name)?.validate_data()?))
    }

    /// Runs the storage-invariant scan of the outer slices `start..stop`
    /// alone (the columns of a CSC tensor, the rows of a CSR one), without
    /// the GIL, on up to the file's threads.
    fn check_block(&self, py: Python<'_>, name: &str, start: u64, stop: u64) -> ReadResult<()> {
        py.detach(|| -> ReadResult<()> {
            let t = self.tensor(name)?;
            // As strict views do (`Options::threads`): no more threads than
            // 256 Ki entries of the arrays each.
            let most = t.options().threads();
            let threads = |entries: u64| usize::try_from(entries >> 18).unwrap_or(usize::MAX).clamp(1, most);
            if t.layout() == Layout::Csc {
                let b = t.csc_structure()?.column_block(start..stop)?;
                b.validate_parallel(threads(b.nnz().saturating_add(b.ncols())))?;
            } else {
                let b = t.csr_structure()?.row_block(start..stop)?;
                b.validate_parallel(threads(b.nnz().saturating_add(b.nrows())))?;
            }
            Ok(())
        })
    }

    /// A dense tensor's elements in logical row-major order, decoded (or
    /// dequantized) into a new array: `(Bytes, numpy dtype name)`.
    fn decode_dense(&self, py: Python<'_>, name: &str, dequantize: bool) -> PyResult<(Bytes, &'static str)> {
        let decoded = py.detach(|| decode::dense(&self.tensor(name)?, dequantize))?;
        let dtype = decoded.dtype();
        Ok((Bytes::decoded(decoded), dtype))
    }

    /// A sparse tensor's stored values, decoded (or dequantized) into a new
    /// array: `(Bytes, numpy dtype name)`. With `block` (`(start, stop)`),
    /// only the values of those columns (CSC) or rows (CSR).
    #[pyo3(signature = (name, dequantize, block=None))]
    fn decode_values(
        &self,
        py: Python<'_>,
        name: &str,
        dequantize: bool,
        block: Option<(u64, u64)>,
    ) -> PyResult<(Bytes, &'static str)> {
        let block = block.map(|(start, stop)| start..stop);
        let decoded = py.detach(|| decode::values(&self.tensor(name)?, dequantize, block))?;
        let dtype = decoded.dtype();
        Ok((Bytes::decoded(decoded), dtype))
    }

    /// A CSF tensor's coordinates, `nnz × rank` `int64` in leaf order, after
    /// its scan, without the GIL.
    fn csf_coordinates(&self, py: Python<'_>, name: &str) -> PyResult<Bytes> {
        Ok(Bytes::decoded(
            py.detach(|| decode::csf_coordinates(&self.tensor(name)?))?,
        ))
    }

    /// `y = A·x` for a CSC or CSR tensor of `float32` or `float64` (`Aᵀ·x`
    /// with `transposed`; of the outer slices `start..stop` alone with a
    /// `block`) on up to `threads` threads, without the GIL: a new array of
    /// `rows` elements (see `product.rs`).
    #[pyo3(signature = (name, transposed, x, rows, threads, block=None))]
    #[allow(clippy::too_many_arguments)]
    fn matvec<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        transposed: bool,
        x: &Bound<'py, PyAny>,
        rows: usize,
        threads: usize,
        block: Option<(u64, u64)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        product::matvec(
            py,
            (&self.shared, &self.matrices),
            (name, transposed, block),
            (x, rows),
            threads,
        )
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.shared)
    }
}

/// Everything the Python `Tensor` shows, from the descriptor and the
/// buffer table (no data byte is read):
///
/// `name`, `element_type` (spec name), `layout` (spec name), `shape` (list,
/// `None` for a dynamic dimension), `nnz`, `buffers` (list of dicts:
/// `role`, `index`, `offset` (absolute), `byte_size`, `count` (elements),
/// `element_type`), `quantization`, `statistics` (dicts or `None`),
/// `members` (a composite head's member names), `not_viewable` (why the
/// data cannot be read, or `None`), `dense` (for row-major, column-major
/// and strided tensors: `offset` of element `[0, ..., 0]` in bytes from the
/// file's start and element `strides`, else `None`), `descriptor_offset`,
/// `data_offset`, `data_length`.
fn describe<'py>(py: Python<'py>, file: &HurrayFile<'_>, t: &Tensor<'_>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", t.name())?;
    d.set_item("element_type", t.element_type().map(ElementType::as_str))?;
    d.set_item("layout", t.layout().as_str())?;
    let shape: Vec<Option<u64>> = t.shape().map(|n| (n != DYNAMIC).then_some(n)).collect();
    d.set_item("shape", shape)?;
    d.set_item("nnz", t.nnz())?;
    let buffers = PyList::empty(py);
    let mut roles: Vec<Buffer<'_>> = t.buffers().to_vec();
    if let Some(shared) = t
        .buffers()
        .iter()
        .position(|b| b.role() == BufferRole::ScalesAndZeroPoints)
    {
        // One buffer holding both arrays: give them as two, as the spec names them.
        roles.remove(shared);
        roles.extend(t.scales());
        roles.extend(t.zero_points());
    }
    for b in &roles {
        let entry = PyDict::new(py);
        entry.set_item("role", b.role().to_string())?;
        entry.set_item("index", b.index())?;
        entry.set_item("offset", b.file_offset())?;
        entry.set_item("byte_size", b.byte_size())?;
        entry.set_item("count", b.len())?;
        entry.set_item("element_type", b.element_type().map(ElementType::as_str))?;
        buffers.append(entry)?;
    }
    d.set_item("buffers", buffers)?;
    d.set_item("quantization", quantization(py, t)?)?;
    d.set_item("statistics", statistics(py, t)?)?;
    let members: Vec<&str> = t
        .composite_members()
        .iter()
        .filter_map(|&i| file.entries().get(i).map(|e| e.name()))
        .collect();
    d.set_item("members", members)?;
    d.set_item("not_viewable", t.not_viewable())?;
    d.set_item("dense", dense_strides(py, t)?)?;
    let entry = t.entry();
    d.set_item("descriptor_offset", entry.descriptor_offset())?;
    d.set_item("data_offset", entry.data_offset())?;
    d.set_item("data_length", entry.data_length())?;
    d.set_item(
        "composite_member",
        t.descriptor().flags() & descriptor_flags::HAS_COMPOSITE_MEMBER != 0,
    )?;
    Ok(d)
}

/// For a dense tensor of a whole-byte element type whose positions are
/// linear in the index: `{"offset": byte offset of element [0, ..., 0],
/// "strides": element strides}`.
fn dense_strides<'py>(py: Python<'py>, t: &Tensor<'_>) -> PyResult<Option<Bound<'py, PyDict>>> {
    if !t.layout().is_dense() || t.not_viewable().is_some() {
        return Ok(None);
    }
    let (Some(width), Ok(addressing), Ok(buffer)) = (
        t.element_type().and_then(ElementType::byte_width),
        t.addressing(),
        t.buffer(0),
    ) else {
        return Ok(None);
    };
    let (Some(strides), Some(origin)) = (addressing.strides(), t.element_origin()) else {
        return Ok(None);
    };
    let offset = origin
        .checked_mul(width)
        .and_then(|o| o.checked_add(buffer.element_start()))
        .and_then(|o| o.checked_add(buffer.file_offset()));
    let Some(offset) = offset else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("offset", offset)?;
    d.set_item("strides", strides)?;
    Ok(Some(d))
}

fn quantization<'py>(py: Python<'py>, t: &Tensor<'_>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(q) = t.descriptor().quantization() else {
        return Ok(None);
    };
    let d = PyDict::new(py);
    d.set_item("scheme", q.scheme.as_str())?;
    d.set_item("scheme_version", q.header.scheme_version)?;
    d.set_item("flags", q.header.flags.get())?;
    match q.scheme {
        QuantScheme::PerTensorAffine(p) => {
            d.set_item("scale", p.scale.get())?;
            d.set_item("zero_point", p.zero_point.get())?;
        }
        QuantScheme::PerChannelAffine(p) => {
            d.set_item("axis", p.axis.get())?;
            d.set_item("scale_type", scale_type(p.scale_type_tag))?;
        }
        QuantScheme::PerBlockAffine(p) => {
            d.set_item("axis", p.axis.get())?;
            d.set_item("block_size", p.block_size.get())?;
            d.set_item("scale_type", scale_type(p.scale_type_tag))?;
        }
        QuantScheme::Nf4(p) | QuantScheme::Mxfp(p) => {
            d.set_item("axis", p.axis.get())?;
            d.set_item("block_size", p.block_size.get())?;
        }
        _ => {}
    }
    Ok(Some(d))
}

fn scale_type(tag: u8) -> Option<&'static str> {
    ElementType::from_tag(tag).map(ElementType::as_str)
}

/// The statistics fields whose `computed_mask` bit is set (the others are
/// unknown, so absent), or `None` without a statistics section.
fn statistics<'py>(py: Python<'py>, t: &Tensor<'_>) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(s) = t.descriptor().statistics() else {
        return Ok(None);
    };
    let mask = s.computed_mask.get();
    let d = PyDict::new(py);
    let valid = |bit| mask & bit != 0;
    if valid(statistics_mask::NNZ_VALID) {
        d.set_item("nnz", s.nnz.get())?;
    }
    if valid(statistics_mask::SPARSITY_VALID) {
        d.set_item("sparsity_ratio", s.sparsity_ratio.get())?;
    }
    if valid(statistics_mask::VALUE_RANGE_VALID) {
        d.set_item("value_min", s.value_min.get())?;
        d.set_item("value_max", s.value_max.get())?;
        d.set_item("value_abs_max", s.value_abs_max.get())?;
    }
    if valid(statistics_mask::VALUE_STATS_VALID) {
        d.set_item("value_mean", s.value_mean.get())?;
        d.set_item("value_stddev", s.value_stddev.get())?;
    }
    if valid(statistics_mask::NM_SPARSITY_VALID) {
        d.set_item("nm_n", s.nm_n)?;
        d.set_item("nm_m", s.nm_m)?;
    }
    if valid(statistics_mask::NAN_INF_VALID) {
        d.set_item("has_nan", s.has_nan != 0)?;
        d.set_item("has_inf", s.has_inf != 0)?;
    }
    Ok(Some(d))
}

fn kv_value<'py>(py: Python<'py>, v: KvValue<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        KvValue::String(s) => s.into_pyobject(py)?.into_any(),
        KvValue::Int64(i) => i.into_pyobject(py)?.into_any(),
        KvValue::Uint64(u) => u.into_pyobject(py)?.into_any(),
        KvValue::Float64(f) => f.into_pyobject(py)?.into_any(),
        KvValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        KvValue::Bytes(b) => PyBytes::new(py, b).into_any(),
        KvValue::Array(a) => kv_array(py, a)?.into_any(),
    })
}

fn kv_array<'py>(py: Python<'py>, a: KvArray<'_>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for v in a.iter() {
        list.append(kv_value(py, v)?)?;
    }
    Ok(list)
}
