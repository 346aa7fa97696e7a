//! `hurray_reader.save` underneath: tensors the Python layer has put in
//! storage form (canonical sparse arrays, `uint64` indices, packed bools,
//! contiguous bytes) written through `hurray-writer`, checked with the
//! reader, and only then moved to the target path.

use std::path::{Path, PathBuf};

use hurray_reader::{Options, SharedFile};
use hurray_writer::{BufferData, ElementType, FileWriter, KvArray, KvValue, TensorDescriptor, WriterOptions};
use pyo3::buffer::PyBuffer;

use crate::error::io_error;
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PySlice, PyString, PyTuple};

/// One tensor, as `hurray_reader._save` prepares it (a dict).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct Spec {
    name: String,
    /// `row_major`, `col_major`, `csc`, `csr` or `coo`.
    layout: String,
    /// The spec's element type name.
    element_type: String,
    shape: Vec<u64>,
    nnz: u64,
    is_sorted: bool,
    /// The layout's buffers in buffer-table order: one-dimensional
    /// memoryviews of bytes (format `B`).
    buffers: Vec<Py<PyAny>>,
}

fn writer_error(e: hurray_writer::Error) -> PyErr {
    match e {
        hurray_writer::Error::Io(io) => PyErr::from(io),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn element_type(name: &str) -> PyResult<ElementType> {
    (0..=u8::MAX)
        .find(|&tag| hurray_reader::ElementType::from_tag(tag).is_some_and(|t| t.as_str() == name))
        .map(ElementType::from_tag)
        .ok_or_else(|| PyTypeError::new_err(format!("no Hurray element type is called {name:?}")))
}

fn descriptor(spec: &Spec) -> PyResult<TensorDescriptor> {
    let et = element_type(&spec.element_type)?;
    let shape = spec.shape.clone();
    let matrix = || match shape.as_slice() {
        &[nrows, ncols] => Ok((nrows, ncols)),
        _ => Err(PyValueError::new_err(format!(
            "tensor '{}': a {} matrix has two dimensions",
            spec.name, spec.layout
        ))),
    };
    let d = match spec.layout.as_str() {
        "row_major" => TensorDescriptor::row_major(et, shape),
        "col_major" => TensorDescriptor::column_major(et, shape),
        "csc" => {
            let (nrows, ncols) = matrix()?;
            TensorDescriptor::csc(et, nrows, ncols, spec.nnz)
        }
        "csr" => {
            let (nrows, ncols) = matrix()?;
            TensorDescriptor::csr(et, nrows, ncols, spec.nnz)
        }
        "coo" => TensorDescriptor::coo(et, shape, spec.nnz, spec.is_sorted),
        other => return Err(PyValueError::new_err(format!("cannot write layout {other:?}"))),
    };
    d.map_err(writer_error)
}

/// Python values to KV values: `bool`, `int` (`int64`, or `uint64` past
/// `2**63 - 1`), `float`, `str`, `bytes`, and lists or tuples of one of
/// those.
fn kv_value(v: &Bound<'_, PyAny>) -> PyResult<KvValue> {
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
        let scalars: Vec<KvValue> = items.iter().map(kv_value).collect::<PyResult<_>>()?;
        return kv_array(scalars).map(KvValue::Array);
    }
    Ok(if v.is_instance_of::<PyBool>() {
        KvValue::Bool(v.extract()?)
    } else if v.is_instance_of::<PyInt>() {
        match v.extract::<i64>() {
            Ok(i) => KvValue::Int64(i),
            Err(_) => KvValue::UInt64(
                v.extract()
                    .map_err(|_| PyOverflowError::new_err("a KV integer must fit in int64 or uint64"))?,
            ),
        }
    } else if v.is_instance_of::<PyFloat>() {
        KvValue::Float64(v.extract()?)
    } else if v.is_instance_of::<PyString>() {
        KvValue::String(v.extract()?)
    } else if v.is_instance_of::<PyBytes>() {
        KvValue::Bytes(v.extract()?)
    } else {
        return Err(PyTypeError::new_err(format!(
            "a KV value is bool, int, float, str, bytes or a list of one of those, not {}",
            v.get_type().name()?
        )));
    })
}

/// A list of scalars as one typed array: all of one type, except that
/// integers mix as `int64` when all fit and `uint64` otherwise.
fn kv_array(values: Vec<KvValue>) -> PyResult<KvArray> {
    let mixed = || PyTypeError::new_err("a KV list holds values of one type (bool, int, float, str or bytes)");
    let first = values.first().map(KvValue::tag);
    Ok(match first {
        None | Some(0x01) => KvArray::String(
            values
                .into_iter()
                .map(|v| {
                    if let KvValue::String(s) = v {
                        Ok(s)
                    } else {
                        Err(mixed())
                    }
                })
                .collect::<PyResult<_>>()?,
        ),
        Some(0x02 | 0x03) => {
            let ints: Vec<i128> = values
                .into_iter()
                .map(|v| match v {
                    KvValue::Int64(i) => Ok(i128::from(i)),
                    KvValue::UInt64(u) => Ok(i128::from(u)),
                    _ => Err(mixed()),
                })
                .collect::<PyResult<_>>()?;
            match ints.iter().map(|&i| i64::try_from(i)).collect::<Result<Vec<_>, _>>() {
                Ok(i) => KvArray::Int64(i),
                Err(_) => KvArray::UInt64(
                    ints.iter()
                        .map(|&i| u64::try_from(i))
                        .collect::<Result<_, _>>()
                        .map_err(|_| PyOverflowError::new_err("a KV integer list must fit in int64 or in uint64"))?,
                ),
            }
        }
        Some(0x04) => KvArray::Float64(
            values
                .into_iter()
                .map(|v| {
                    if let KvValue::Float64(f) = v {
                        Ok(f)
                    } else {
                        Err(mixed())
                    }
                })
                .collect::<PyResult<_>>()?,
        ),
        Some(0x05) => KvArray::Bool(
            values
                .into_iter()
                .map(|v| if let KvValue::Bool(b) = v { Ok(b) } else { Err(mixed()) })
                .collect::<PyResult<_>>()?,
        ),
        Some(0x06) => KvArray::Bytes(
            values
                .into_iter()
                .map(|v| if let KvValue::Bytes(b) = v { Ok(b) } else { Err(mixed()) })
                .collect::<PyResult<_>>()?,
        ),
        Some(_) => return Err(PyTypeError::new_err("a KV list cannot hold lists")),
    })
}

/// Writes `tensors` and `metadata` to a temporary file beside `path`,
/// checks it with the reader (`HurrayFile::validate`), and renames it to
/// `path`. On any error nothing is left at `path` (an existing file there
/// is untouched) and the temporary file is removed.
#[pyfunction]
pub fn save(
    py: Python<'_>,
    path: PathBuf,
    tensors: Vec<Spec>,
    metadata: Vec<(String, Bound<'_, PyAny>)>,
) -> PyResult<()> {
    let kv: Vec<(String, KvValue)> = metadata
        .iter()
        .map(|(k, v)| Ok((k.clone(), kv_value(v)?)))
        .collect::<PyResult<_>>()?;
    // Write where a symbolic link points, as `open(path, "wb")` would.
    let target = std::fs::canonicalize(&path).unwrap_or(path);
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hurray-").suffix(".tmp");
    // A new file gets 0o666 less the umask (as `open` gives it); one that
    // replaces a file keeps that file's permissions.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let existing = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let tmp = builder
        .tempfile_in(&dir)
        .map_err(|e| io_error(&e, "cannot create a temporary file in its folder", &target))?;
    let mut writer =
        FileWriter::new(tmp, WriterOptions::default().kv_metadata(!kv.is_empty())).map_err(writer_error)?;
    for (key, value) in kv {
        writer.add_kv(&key, value).map_err(writer_error)?;
    }
    for spec in &tensors {
        write_tensor(py, &mut writer, spec)?;
    }
    let tmp = writer.finish().map_err(writer_error)?;
    py.detach(|| check(tmp.path())).map_err(|e| {
        // What save() prepared broke a rule: a bug of this package, not the caller's.
        PyValueError::new_err(format!(
            "{}: the file written did not pass validation and was removed (please report this): {e}",
            target.display()
        ))
    })?;
    if let Some(permissions) = existing {
        std::fs::set_permissions(tmp.path(), permissions)
            .map_err(|e| io_error(&e, "cannot set permissions", &target))?;
    }
    tmp.as_file()
        .sync_all()
        .map_err(|e| io_error(&e, "cannot sync", &target))?;
    tmp.persist(&target)
        .map_err(|e| io_error(&e.error, "cannot rename into place", &target))?;
    Ok(())
}

/// The written file, read back strictly and validated whole.
fn check(path: &Path) -> PyResult<()> {
    let shared = SharedFile::open(path, Options::strict()).map_err(crate::error::ReadError)?;
    shared.file().validate().map_err(crate::error::ReadError)?;
    Ok(())
}

fn write_tensor<W: hurray_writer::Sink>(py: Python<'_>, writer: &mut FileWriter<W>, spec: &Spec) -> PyResult<()> {
    let descriptor = descriptor(spec)?;
    let sources: Vec<Bound<'_, PyAny>> = spec.buffers.iter().map(|b| b.bind(py).clone()).collect();
    let lengths: Vec<u64> = sources
        .iter()
        .map(|b| Ok(PyBuffer::<u8>::get(b)?.len_bytes() as u64))
        .collect::<PyResult<_>>()?;
    // Each buffer is copied a chunk at a time, as the writer asks for it,
    // from a slice of the caller's memoryview: no copy of the whole array.
    let mut fills: Vec<_> = sources
        .iter()
        .map(|source| {
            move |offset: u64, chunk: &mut [u8]| -> std::io::Result<()> {
                let end = offset.saturating_add(chunk.len() as u64);
                let part = PySlice::new(py, to_isize(offset)?, to_isize(end)?, 1);
                source
                    .get_item(part)
                    .and_then(|part| PyBuffer::<u8>::get(&part)?.copy_to_slice(py, chunk))
                    .map_err(std::io::Error::other)
            }
        })
        .collect();
    let data: Vec<BufferData<'_>> = fills
        .iter_mut()
        .zip(&lengths)
        .map(|(fill, &len)| BufferData::generate(len, fill))
        .collect();
    writer.write_tensor(&spec.name, &descriptor, data).map_err(writer_error)
}

fn to_isize(n: u64) -> std::io::Result<isize> {
    isize::try_from(n).map_err(std::io::Error::other)
}
