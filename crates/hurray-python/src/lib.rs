//! `hurray_reader._native`: the Rust half of the `hurray_reader` Python
//! package. A thin layer: it maps `hurray-reader` and `hurray-writer` types
//! to Python ones; what a Python user calls is in `python/hurray_reader/`.
//!
//! Two `unsafe` blocks: `Bytes::__getbuffer__` (`storage.rs`), which hands
//! numpy a read-only pointer into bytes the exporting object owns, and
//! `product::zeros`, a call of numpy's C API (`PyArray_Zeros`) that makes
//! the products' `y`.

mod decode;
mod error;
mod file;
mod product;
mod save;
mod storage;

use numpy::PyArrayMethods;
use pyo3::prelude::*;

/// Frees the scratch the products keep for the process
/// (`hurray_reader::release_scratch`); its size in bytes.
#[pyfunction]
fn release_scratch() -> usize {
    hurray_reader::release_scratch()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let format_error = m.py().get_type::<error::FormatError>();
    // Class defaults, so `FormatError("...").tensor` is None rather than missing.
    for attribute in ["tensor", "field", "offset", "rule"] {
        format_error.setattr(attribute, m.py().None())?;
    }
    m.add("FormatError", format_error)?;
    m.add_class::<file::File>()?;
    m.add_class::<storage::Bytes>()?;
    m.add_function(wrap_pyfunction!(file::open_file, m)?)?;
    m.add_function(wrap_pyfunction!(save::save, m)?)?;
    m.add_function(wrap_pyfunction!(release_scratch, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The numpy crate sets itself up on first use (numpy's C API table,
    // its borrow checking), importing modules and so running any import
    // hook: here, at import, rather than inside the first product.
    product::zeros::<f32>(m.py(), 0)?.try_readwrite()?;
    Ok(())
}
