//! `File.matvec`: `y = A·x` (or `Aᵀ·x`) for a CSC or CSR tensor of
//! `float32` or `float64`, by the Rust kernels (`CscView::mul_vec_parallel`,
//! `CsrView::mul_vec_parallel`) over the mapped buffers, without the GIL.
//!
//! Each tensor's matrix handle, and each block's where the whole tensor
//! was never scanned, is made once per file and kept ([`Matrices`]): its
//! storage invariants are scanned then, in either mode (the kernels need
//! them), and never again. The kernels read a copy of
//! `x` (another thread could change the caller's array meanwhile), made
//! into a vector the file keeps for the next product, and write `y` into a
//! new array made by numpy's C API and returned; the matrix is read in
//! place.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use hurray_reader::{Element, ElementType, Float, Layout, Result, SharedCsc, SharedCsr, SharedFile, SharedTensor};
use numpy::npyffi::npy_intp;
use numpy::{PyArray1, PyArrayDescrMethods, PyArrayMethods, PY_ARRAY_API};
use pyo3::buffer::{Element as BufferElement, PyBuffer};
use pyo3::exceptions::{PyMemoryError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use zerocopy::{FromBytes, IntoBytes};

use crate::error::ReadError;

/// A tensor's validated matrix handle, by layout and element type.
#[derive(Clone)]
enum Matrix {
    CscF32(SharedCsc<f32>),
    CscF64(SharedCsc<f64>),
    CsrF32(SharedCsr<f32>),
    CsrF64(SharedCsr<f64>),
}

impl Matrix {
    /// The handle of tensor `name`, with `scan` its invariants scanned (on
    /// the file's threads; without, unscanned in either mode, for a block
    /// scanned alone); `TypeError` for other layouts and element types.
    fn new(file: &SharedFile, name: &str, scan: bool) -> PyResult<Matrix> {
        let tensor = file.tensor(name).map_err(ReadError)?;
        let (layout, element_type) = (tensor.get().layout(), tensor.get().element_type());
        let matrix = match (layout, element_type) {
            (Layout::Csc, Some(ElementType::Float32)) => csc_handle(&tensor, scan).map(Matrix::CscF32),
            (Layout::Csc, Some(ElementType::Float64)) => csc_handle(&tensor, scan).map(Matrix::CscF64),
            (Layout::Csr, Some(ElementType::Float32)) => csr_handle(&tensor, scan).map(Matrix::CsrF32),
            (Layout::Csr, Some(ElementType::Float64)) => csr_handle(&tensor, scan).map(Matrix::CsrF64),
            _ => {
                let element_type = element_type.map_or("an unknown element type", |e| e.as_str());
                return Err(PyTypeError::new_err(format!(
                    "tensor '{name}': matvec is for CSC and CSR tensors of float32 or float64, not {} of {element_type}",
                    layout.as_str()
                )));
            }
        };
        Ok(matrix.map_err(ReadError)?)
    }

    /// The handle of the file's outer slices `start..stop` (a CSC
    /// tensor's columns, a CSR one's rows): validated if this one is.
    fn block(&self, (start, stop): (u64, u64)) -> Result<Matrix> {
        let outer = to_index(start)..to_index(stop);
        Ok(match self {
            Matrix::CscF32(a) => Matrix::CscF32(a.column_block(outer)?),
            Matrix::CscF64(a) => Matrix::CscF64(a.column_block(outer)?),
            Matrix::CsrF32(a) => Matrix::CsrF32(a.row_block(outer)?),
            Matrix::CsrF64(a) => Matrix::CsrF64(a.row_block(outer)?),
        })
    }

    /// This handle, its view's invariants scanned unless they were.
    fn validated(self) -> Result<Matrix> {
        Ok(match self {
            Matrix::CscF32(a) => Matrix::CscF32(a.validated()?),
            Matrix::CscF64(a) => Matrix::CscF64(a.validated()?),
            Matrix::CsrF32(a) => Matrix::CsrF32(a.validated()?),
            Matrix::CsrF64(a) => Matrix::CsrF64(a.validated()?),
        })
    }
}

/// A CSC handle: validated (scanned now unless a strict open did), or
/// unscanned.
fn csc_handle<T: Element>(tensor: &SharedTensor, scan: bool) -> Result<SharedCsc<T>> {
    match scan {
        true => tensor.csc().and_then(SharedCsc::validated),
        false => tensor.csc_unscanned(),
    }
}

/// A CSR handle; see [`csc_handle`].
fn csr_handle<T: Element>(tensor: &SharedTensor, scan: bool) -> Result<SharedCsr<T>> {
    match scan {
        true => tensor.csr().and_then(SharedCsr::validated),
        false => tensor.csr_unscanned(),
    }
}

/// What [`matvec`] keeps for a file: the handles it has made (by tensor
/// name; a block's by name and bounds), and the copy of `x` the last
/// product read.
#[derive(Default)]
pub struct Matrices {
    handles: Mutex<HashMap<String, Matrix>>,
    /// Blocks scanned on their own (the whole tensor never was), up to
    /// [`BLOCKS_KEPT`]: a Dask worker multiplies the same blocks again
    /// and again, and a scan took a fifth of a block's product.
    blocks: Mutex<HashMap<(String, u64, u64), Matrix>>,
    /// Reused by the next product (copying a 64 MiB `x` into a new vector
    /// took 5 to 112 ms on the benchmark VM, by its page faults); one a
    /// file, so a product that finds it in use, on another thread, copies
    /// into a vector of its own. `u64`s, aligned for `f32` and `f64`
    /// alike.
    x: Mutex<Vec<u64>>,
}

/// How many block handles a file keeps; past it, one is let go for each
/// new one.
const BLOCKS_KEPT: usize = 4096;

impl Matrices {
    /// Tensor `name`'s handle, or its `block`'s: kept, or made (without
    /// the GIL, no lock held, so that another thread's product never waits
    /// on this scan while it holds the GIL) and kept. A block of a tensor
    /// scanned whole is cut from its handle, no scan; otherwise the block
    /// alone is scanned, once.
    fn get(&self, py: Python<'_>, file: &SharedFile, name: &str, block: Option<(u64, u64)>) -> PyResult<Matrix> {
        let whole = || self.handles.lock().unwrap_or_else(PoisonError::into_inner);
        let blocks = || self.blocks.lock().unwrap_or_else(PoisonError::into_inner);
        let kept = whole().get(name).cloned();
        let Some(bounds) = block else {
            if let Some(kept) = kept {
                return Ok(kept);
            }
            let made = py.detach(|| Matrix::new(file, name, true))?;
            return Ok(whole().entry(name.to_owned()).or_insert(made).clone());
        };
        if let Some(kept) = kept {
            return Ok(kept.block(bounds).map_err(ReadError)?);
        }
        let key = (name.to_owned(), bounds.0, bounds.1);
        if let Some(kept) = blocks().get(&key) {
            return Ok(kept.clone());
        }
        let unscanned = Matrix::new(file, name, false)?;
        let made = py
            .detach(|| unscanned.block(bounds).and_then(Matrix::validated))
            .map_err(ReadError)?;
        let mut blocks = blocks();
        if blocks.len() >= BLOCKS_KEPT && !blocks.contains_key(&key) {
            // One let go, whichever the map gives first: the others stay.
            if let Some(any) = blocks.keys().next().cloned() {
                blocks.remove(&any);
            }
        }
        Ok(blocks.entry(key).or_insert(made).clone())
    }
}

/// `y = A·x` for tensor `name` (`Aᵀ·x` with `transposed`) on up to
/// `threads` threads: a new `numpy.ndarray` of `rows` elements of the
/// tensor's element type. With `block`, `(start, stop)`, the product of
/// the file's outer slices `start..stop` alone (its columns for a CSC
/// tensor, its rows for a CSR one; of `A` or of `Aᵀ` alike), that block
/// scanned on its first product unless the whole tensor was. `x` is a
/// one-dimensional buffer of that type; the Python layer has checked its
/// length, `rows` and `block` against the shape, and the kernels check
/// them again (`IndexError`, `ValueError`).
pub fn matvec<'py>(
    py: Python<'py>,
    (file, matrices): (&SharedFile, &Matrices),
    (name, transposed, block): (&str, bool, Option<(u64, u64)>),
    (x, rows): (&Bound<'py, PyAny>, usize),
    threads: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let kept = &matrices.x;
    match matrices.get(py, file, name, block)? {
        Matrix::CscF32(a) => run(py, (x, rows), kept, |x, y| csc(&a, transposed, (x, y), threads)),
        Matrix::CscF64(a) => run(py, (x, rows), kept, |x, y| csc(&a, transposed, (x, y), threads)),
        Matrix::CsrF32(a) => run(py, (x, rows), kept, |x, y| csr(&a, transposed, (x, y), threads)),
        Matrix::CsrF64(a) => run(py, (x, rows), kept, |x, y| csr(&a, transposed, (x, y), threads)),
    }
}

/// A block bound as the views take it (`usize::MAX` past the address
/// space: the view refuses it, `BlockArgument`).
fn to_index(bound: u64) -> usize {
    usize::try_from(bound).unwrap_or(usize::MAX)
}

/// `y = A·x` for a CSC handle (a block's too), or `Aᵀ·x` (the CSR of its
/// transpose).
fn csc<T: Float>(a: &SharedCsc<T>, transposed: bool, (x, y): (&[T], &mut [T]), threads: usize) -> Result<()> {
    let a = a.view()?;
    match transposed {
        false => a.mul_vec_parallel(x, y, threads),
        true => a.transpose().mul_vec_parallel(x, y, threads),
    }
}

/// `y = A·x` for a CSR handle (a block's too), or `Aᵀ·x` (the CSC of its
/// transpose).
fn csr<T: Float>(a: &SharedCsr<T>, transposed: bool, (x, y): (&[T], &mut [T]), threads: usize) -> Result<()> {
    let a = a.view()?;
    match transposed {
        false => a.mul_vec_parallel(x, y, threads),
        true => a.transpose().mul_vec_parallel(x, y, threads),
    }
}

/// Copies `x` (with the GIL held) into `kept`, or into a vector of its
/// own if another thread holds `kept`; makes `y` ([`zeros`]); runs
/// `product` without the GIL on them, and returns `y`: no Python code can
/// touch `y` while the kernels write it. An `x` of another type, or
/// misaligned, is a `BufferError` from `PyBuffer`; a `y` numpy cannot
/// allocate, a `MemoryError` (a `ValueError` past `isize::MAX` bytes).
fn run<'py, T: Float + BufferElement + IntoBytes + numpy::Element>(
    py: Python<'py>,
    (x, rows): (&Bound<'py, PyAny>, usize),
    kept: &Mutex<Vec<u64>>,
    product: impl FnOnce(&[T], &mut [T]) -> Result<()> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let mut kept = kept.try_lock().ok();
    let mut own = Vec::new();
    let copy = copy_of(py, &PyBuffer::<T>::get(x)?, kept.as_deref_mut().unwrap_or(&mut own))?;
    let y = zeros::<T>(py, rows)?;
    let mut out = y.try_readwrite()?;
    let out = out.as_slice_mut()?;
    py.detach(|| product(copy, out)).map_err(ReadError)?;
    Ok(y.into_any())
}

/// `x`'s elements copied into `words` (grown to hold them if need be).
fn copy_of<'w, T: BufferElement + FromBytes + IntoBytes>(
    py: Python<'_>,
    x: &PyBuffer<T>,
    words: &'w mut Vec<u64>,
) -> PyResult<&'w mut [T]> {
    let bytes = x.len_bytes();
    let needed = bytes.div_ceil(8);
    if words.len() < needed {
        words
            .try_reserve_exact(needed - words.len())
            .map_err(|_| PyMemoryError::new_err(format!("matvec: no memory for a copy of x ({bytes} bytes)")))?;
        words.resize(needed, 0);
    }
    let copy = words
        .as_mut_bytes()
        .get_mut(..bytes)
        .and_then(|b| <[T]>::mut_from_bytes(b).ok())
        .ok_or_else(|| PyValueError::new_err("matvec: x does not fit its copy"))?; // cannot happen: sized above
    x.copy_to_slice(py, copy)?;
    Ok(copy)
}

/// A new zeroed `numpy.ndarray` of `len` elements of `T`, made by numpy's
/// C API (`PyArray_Zeros`: numpy's allocator, so zero pages and huge pages
/// as any large numpy array gets them), not by a Python-level function any
/// code could replace; a `MemoryError` where numpy cannot allocate it (a
/// `ValueError` past `isize::MAX` bytes). No Python code holds it until
/// the caller hands it out.
#[allow(unsafe_code)]
pub(crate) fn zeros<T: numpy::Element>(py: Python<'_>, len: usize) -> PyResult<Bound<'_, PyArray1<T>>> {
    let mut dims =
        [npy_intp::try_from(len).map_err(|_| PyMemoryError::new_err(format!("matvec: y of {len} elements")))?];
    // SAFETY: the GIL is held (`py`); `dims` is one valid dimension, read
    // during the call only; the descriptor is a new reference, which
    // `PyArray_Zeros` steals, as its documentation says; 0 asks for C
    // order. The result is a new reference or null with a Python error
    // set, which `from_owned_ptr_or_err` turns into that error.
    let array = unsafe {
        let ptr = PY_ARRAY_API.PyArray_Zeros(py, 1, dims.as_mut_ptr(), T::get_dtype(py).into_dtype_ptr(), 0);
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    Ok(array.cast_into::<PyArray1<T>>()?)
}
