//! The bytes numpy arrays point into, exported through the buffer protocol.
//!
//! A `Bytes` object owns what its arrays read: a clone of the file's
//! `SharedFile` (the mapping, or the file read into memory) or a decoded
//! copy. `numpy.frombuffer(bytes, ...)` makes an array whose `base` holds
//! the `Bytes` object, so the array keeps the mapping alive on its own; the
//! export is read-only, so numpy refuses writes (`ValueError`) and refuses
//! to make the array writeable.

use std::ffi::c_int;

use hurray_reader::SharedFile;
use pyo3::prelude::*;
use pyo3::{exceptions::PyOverflowError, ffi};
use zerocopy::IntoBytes;

/// Decoded elements, in the type numpy reads them as.
pub enum Decoded {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F16(Vec<half::f16>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C64(Vec<[f32; 2]>),
    C128(Vec<[f64; 2]>),
}

impl Decoded {
    fn bytes(&self) -> &[u8] {
        match self {
            Decoded::Bool(v) => v.as_bytes(),
            Decoded::I8(v) => v.as_bytes(),
            Decoded::U8(v) => v.as_bytes(),
            Decoded::I16(v) => v.as_bytes(),
            Decoded::U16(v) => v.as_bytes(),
            Decoded::I32(v) => v.as_bytes(),
            Decoded::U32(v) => v.as_bytes(),
            Decoded::I64(v) => v.as_bytes(),
            Decoded::U64(v) => v.as_bytes(),
            Decoded::F16(v) => v.as_bytes(),
            Decoded::F32(v) => v.as_bytes(),
            Decoded::F64(v) => v.as_bytes(),
            Decoded::C64(v) => v.as_bytes(),
            Decoded::C128(v) => v.as_bytes(),
        }
    }

    /// numpy's name of the element type.
    pub fn dtype(&self) -> &'static str {
        match self {
            Decoded::Bool(_) => "bool",
            Decoded::I8(_) => "int8",
            Decoded::U8(_) => "uint8",
            Decoded::I16(_) => "int16",
            Decoded::U16(_) => "uint16",
            Decoded::I32(_) => "int32",
            Decoded::U32(_) => "uint32",
            Decoded::I64(_) => "int64",
            Decoded::U64(_) => "uint64",
            Decoded::F16(_) => "float16",
            Decoded::F32(_) => "float32",
            Decoded::F64(_) => "float64",
            Decoded::C64(_) => "complex64",
            Decoded::C128(_) => "complex128",
        }
    }
}

enum Owner {
    File(SharedFile),
    Decoded(Decoded),
}

/// Read-only bytes for numpy: a whole file, or a decoded copy.
#[pyclass(frozen, module = "hurray_reader._native")]
pub struct Bytes {
    owner: Owner,
}

impl Bytes {
    pub fn file(shared: SharedFile) -> Self {
        Bytes {
            owner: Owner::File(shared),
        }
    }

    pub fn decoded(decoded: Decoded) -> Self {
        Bytes {
            owner: Owner::Decoded(decoded),
        }
    }

    fn as_slice(&self) -> &[u8] {
        match &self.owner {
            Owner::File(shared) => shared.bytes(),
            Owner::Decoded(decoded) => decoded.bytes(),
        }
    }
}

#[pymethods]
impl Bytes {
    /// Exports the bytes read-only (`PyBUF_WRITABLE` requests fail with
    /// `BufferError`).
    ///
    /// # Safety
    /// Called by CPython with a `view` to fill, as the buffer protocol
    /// prescribes.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        let bytes = slf.get().as_slice();
        let len = ffi::Py_ssize_t::try_from(bytes.len())
            .map_err(|_| PyOverflowError::new_err("the file is larger than a Python buffer can be"))?;
        // SAFETY: `view` is the Py_buffer CPython passed in for this call.
        // The pointer and length describe `bytes`, which `slf` owns and
        // never changes or moves: a `SharedFile` (an `Arc` of the mapping
        // or of the in-memory copy) or a decoded vector, neither of which a
        // frozen pyclass can replace. `PyBuffer_FillInfo` stores a new
        // reference to `slf` in `view->obj`, so the bytes outlive every
        // consumer of the view (numpy keeps it as the array's base), and
        // with `readonly = 1` it refuses a writable request, so no consumer
        // writes through the pointer, which is cast to `*mut` only because
        // the C signature asks for it.
        let filled =
            unsafe { ffi::PyBuffer_FillInfo(view, slf.as_ptr(), bytes.as_ptr().cast_mut().cast(), len, 1, flags) };
        if filled == 0 {
            Ok(())
        } else {
            Err(PyErr::fetch(slf.py()))
        }
    }

    fn __len__(&self) -> usize {
        self.as_slice().len()
    }

    fn __repr__(&self) -> String {
        let what = match &self.owner {
            Owner::File(shared) if shared.is_mapped() => "mapped file",
            Owner::File(_) => "file in memory",
            Owner::Decoded(_) => "decoded copy",
        };
        format!("<hurray_reader bytes: {what}, {} bytes>", self.as_slice().len())
    }
}
