//! `hurray_reader::Error` as Python exceptions: one class, `FormatError`,
//! for everything about the file's bytes; the built-in classes Python users
//! expect for the rest.

use hurray_reader::Error;
use pyo3::exceptions::{
    PyFileNotFoundError, PyIndexError, PyIsADirectoryError, PyKeyError, PyMemoryError, PyOSError, PyPermissionError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;

pyo3::create_exception!(
    hurray_reader,
    FormatError,
    PyValueError,
    "The file breaks a rule of the Hurray spec.\n\n\
     Attributes ``tensor``, ``field``, ``offset`` and ``rule`` say where and\n\
     which (each ``None`` when it does not apply), as the Rust reader's\n\
     ``Error`` gives them: the tensor's name, the spec's field name\n\
     (``col_ptr[3]``), the absolute byte offset in the file, and the spec\n\
     file and section (``layouts/csc.md § Storage Invariants (2)``)."
);

/// A reader error on its way to Python (`?` converts it).
pub struct ReadError(pub Error);

impl From<Error> for ReadError {
    fn from(e: Error) -> Self {
        ReadError(e)
    }
}

impl From<ReadError> for PyErr {
    fn from(ReadError(e): ReadError) -> PyErr {
        let message = e.to_string();
        match &e {
            Error::Io { kind, .. } => match kind {
                std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
                std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
                std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(message),
                std::io::ErrorKind::OutOfMemory => PyMemoryError::new_err(message),
                _ => PyOSError::new_err(message),
            },
            Error::NotFound { name } => PyKeyError::new_err(name.to_string()),
            Error::PositionNotFound { .. }
            | Error::IndexArgument { .. }
            | Error::CoordinateArgument { .. }
            | Error::LengthMismatch { .. } => PyIndexError::new_err(message),
            Error::TypeMismatch { .. } | Error::LayoutMismatch { .. } | Error::NotViewable { .. } => {
                PyTypeError::new_err(message)
            }
            Error::AllocationFailed { .. } => PyMemoryError::new_err(message),
            _ if e.rule().is_none() => PyValueError::new_err(message),
            _ => Python::attach(|py| format_error(py, &e, message)),
        }
    }
}

fn format_error(py: Python<'_>, e: &Error, message: String) -> PyErr {
    let err = FormatError::new_err(message);
    let value = err.value(py);
    let set = || -> PyResult<()> {
        value.setattr("tensor", e.tensor())?;
        value.setattr("field", e.field().map(|f| f.to_string()))?;
        value.setattr("offset", e.offset())?;
        value.setattr("rule", e.rule())?;
        Ok(())
    };
    match set() {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

/// `Result` whose error converts to a Python exception.
pub type ReadResult<T> = Result<T, ReadError>;
