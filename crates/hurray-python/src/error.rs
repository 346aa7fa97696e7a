//! `hurray_reader::Error` as Python exceptions: one class, `FormatError`,
//! for everything about the file's bytes; the built-in classes Python users
//! expect for the rest.

use hurray_reader::Error;
use pyo3::exceptions::{
    PyFileNotFoundError, PyIndexError, PyIsADirectoryError, PyKeyError, PyMemoryError, PyNotADirectoryError, PyOSError,
    PyPermissionError, PyTypeError, PyValueError,
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
            Error::Io { kind, .. } => os_error(*kind, None, message, None),
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

/// The `OSError` subclass Python raises for `kind`, as
/// `OSError(errno, message, filename)`: `errno` given, else the number the
/// message ends with (`... (os error 19)`, as `std::io::Error` prints one),
/// else the usual one for `kind` (none of them: a plain `OSError(message)`).
pub fn os_error(
    kind: std::io::ErrorKind,
    errno: Option<i32>,
    message: String,
    filename: Option<&std::path::Path>,
) -> PyErr {
    use std::io::ErrorKind::*;
    let usual = match kind {
        NotFound => Some(2),          // ENOENT
        PermissionDenied => Some(13), // EACCES
        AlreadyExists => Some(17),    // EEXIST
        NotADirectory => Some(20),    // ENOTDIR
        IsADirectory => Some(21),     // EISDIR
        InvalidInput => Some(22),     // EINVAL
        StorageFull => Some(28),      // ENOSPC
        OutOfMemory => return PyMemoryError::new_err(message),
        _ => None,
    };
    let Some(errno) = errno.or_else(|| errno_in(&message)).or(usual) else {
        return PyOSError::new_err(message);
    };
    // Python prints `[Errno N] message: 'filename'`: the path and the
    // number once each.
    let message = match filename {
        Some(path) => without_path_and_errno(&message, path),
        None => message,
    };
    let args = (errno, message, filename.map(|p| p.to_string_lossy().into_owned()));
    match kind {
        NotFound => PyFileNotFoundError::new_err(args),
        PermissionDenied => PyPermissionError::new_err(args),
        IsADirectory => PyIsADirectoryError::new_err(args),
        NotADirectory => PyNotADirectoryError::new_err(args),
        _ => PyOSError::new_err(args),
    }
}

/// The OS error number at the end of `message`: `std::io::Error` prints an
/// OS error as `description (os error N)`, and the reader's `Error::Io`
/// keeps that text and the error's kind, not the number.
fn errno_in(message: &str) -> Option<i32> {
    const MARK: &str = "(os error ";
    let rest = &message[message.rfind(MARK)? + MARK.len()..];
    rest[..rest.find(')')?].parse().ok()
}

/// `message` without the `path: ` it starts with and the ` (os error N)`
/// it ends with, where it has them (the reader's and `io_error`'s
/// messages: `path: what: description (os error N)`).
fn without_path_and_errno(message: &str, path: &std::path::Path) -> String {
    let shown = format!("{}: ", hurray_reader::shown_path(path));
    let rest = message.strip_prefix(shown.as_str()).unwrap_or(message);
    let rest = match rest.rfind(" (os error ") {
        Some(at) if rest.ends_with(')') => &rest[..at],
        _ => rest,
    };
    rest.to_owned()
}

/// An `std::io::Error` about `path` as Python's `OSError`.
pub fn io_error(e: &std::io::Error, what: &str, path: &std::path::Path) -> PyErr {
    os_error(
        e.kind(),
        e.raw_os_error(),
        format!("{}: {what}: {e}", hurray_reader::shown_path(path)),
        Some(path),
    )
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
