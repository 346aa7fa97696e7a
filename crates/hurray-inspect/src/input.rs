//! Getting the file's bytes: a memory map for regular files (standard
//! input too, when redirected from one), or with `--no-mmap` a copy in
//! memory; an in-memory copy of a pipe on standard input, at most
//! `--stdin-limit` bytes. A path that is not a regular file is refused,
//! never waited on. Read into memory, a file or a stream that does not
//! start with the file magic is rejected after its first 104 bytes
//! ([`AlignedBytes::read`], [`AlignedBytes::read_stream`]).

use std::fs::File;
use std::io::Read;
use std::path::Path;

use hurray_reader::{AlignedBytes, HurrayFile, MappedFile, Options};

use crate::cli::Input;

/// Owns the bytes a [`HurrayFile`] borrows.
pub enum Source {
    Mapped(MappedFile),
    Memory(AlignedBytes, Options),
}

/// How to get the bytes.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// Map regular files (`false`: `--no-mmap`, read them into memory).
    pub map: bool,
    /// The most bytes read into memory from standard input (`--stdin-limit`).
    pub stdin_limit: u64,
}

impl Source {
    /// Maps a regular file, or reads it into memory (`reading.map` false);
    /// reads standard input into memory unless it is a regular file that
    /// can be mapped. A path that is not a regular file (a FIFO, a socket,
    /// a device) is refused at once: the library opens it without waiting.
    /// Read into memory, a file or stream that does not start with the
    /// file magic is rejected after its first 104 bytes, with the error the
    /// parse of a mapped file gives ([`hurray_reader::Error::BadMagic`]).
    ///
    /// # Errors
    /// The library's [`hurray_reader::Error::Io`] (it names the path), or
    /// one naming `<stdin>` when standard input holds more than
    /// `reading.stdin_limit` bytes; [`hurray_reader::Error::BadMagic`] as
    /// said.
    pub fn open(input: Input<'_>, options: Options, reading: Reading) -> hurray_reader::Result<Self> {
        match input {
            Input::Stdin => {
                // Redirected from a regular file (`- < file.hry`): mapped like
                // a path, when nothing of it has been read yet.
                if let Some(file) = stdin_file().filter(|_| reading.map) {
                    return Ok(Source::Mapped(MappedFile::from_file(&file, "<stdin>", options)?));
                }
                Ok(Source::Memory(
                    read_stream(std::io::stdin().lock(), "<stdin>", reading.stdin_limit)?,
                    options,
                ))
            }
            Input::Path(path) => {
                let opened = if reading.map {
                    MappedFile::open(path, options).map(Source::Mapped)
                } else {
                    AlignedBytes::read(path).map(|bytes| Source::Memory(bytes, options))
                };
                opened.map_err(|e| with_stream_hint(e, path))
            }
        }
    }

    /// Parses the container.
    ///
    /// # Errors
    /// As [`HurrayFile::parse`].
    pub fn file(&self) -> hurray_reader::Result<HurrayFile<'_>> {
        match self {
            Source::Mapped(mapped) => mapped.file(),
            Source::Memory(bytes, options) => HurrayFile::parse(bytes, *options),
        }
    }
}

/// The library's refusal of a path that is not a regular file or a
/// directory (`not a regular file (a FIFO)`), with what to do instead.
fn with_stream_hint(e: hurray_reader::Error, path: &Path) -> hurray_reader::Error {
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    match e {
        hurray_reader::Error::Io { kind, message } if special => hurray_reader::Error::Io {
            kind,
            message: format!("{message}: give a stream on standard input instead (hurray-inspect - < FILE)").into(),
        },
        other => other,
    }
}

/// Standard input as a [`File`] when it is a regular file at its start
/// (a pipe, a terminal, or a file partly read by someone before: `None`).
#[cfg(unix)]
fn stdin_file() -> Option<File> {
    use std::io::Seek;
    use std::os::fd::AsFd;
    let mut file = File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    (regular && file.stream_position().ok() == Some(0)).then_some(file)
}

#[cfg(not(unix))]
fn stdin_file() -> Option<File> {
    None
}

/// Reads a stream into memory, at most `limit` bytes, with
/// [`AlignedBytes::read_stream`]: when its first bytes are not a Hurray
/// header (`/dev/zero`, a stray pipe) it is rejected on the magic after
/// those (at most 104 bytes), instead of after reading an endless stream.
///
/// # Errors
/// The magic error, as the mapped file gives it;
/// [`hurray_reader::Error::Io`] naming the stream as `name` (as every other
/// message does: `<stdin>` or the path) when it cannot be read, or when it
/// holds more than `limit` bytes (kind `FileTooLarge`).
fn read_stream(stream: impl Read, name: &str, limit: u64) -> hurray_reader::Result<AlignedBytes> {
    let named = |e: hurray_reader::Error| match e {
        hurray_reader::Error::Io { kind, message } => hurray_reader::Error::Io {
            kind,
            message: format!("{name}: {message}").into(),
        },
        other => other,
    };
    // One byte past the limit tells a stream of exactly `limit` bytes from a longer one.
    let bytes = AlignedBytes::read_stream(stream.take(limit.saturating_add(1))).map_err(named)?;
    if u64::try_from(bytes.len()).map_or(true, |n| n > limit) {
        return Err(hurray_reader::Error::Io {
            kind: std::io::ErrorKind::FileTooLarge,
            message: format!(
                "{name}: more than {limit} bytes, the --stdin-limit: raise it (--stdin-limit SIZE, e.g. 16G) or give the file's path"
            )
            .into(),
        });
    }
    Ok(bytes)
}
