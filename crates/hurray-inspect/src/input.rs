//! Getting the file's bytes: a memory map for regular files (standard
//! input too, when redirected from one), an in-memory copy for pipes and
//! other streams (they cannot be mapped).

use std::fs::File;
use std::io::Read;

use hurray_reader::{AlignedBytes, HurrayFile, MappedFile, Options, FILE_MAGIC};

use crate::cli::Input;

/// Owns the bytes a [`HurrayFile`] borrows.
pub enum Source {
    Mapped(MappedFile),
    Memory(AlignedBytes, Options),
}

impl Source {
    /// Maps a regular file; reads standard input, FIFOs and devices into memory.
    ///
    /// # Errors
    /// The library's [`hurray_reader::Error::Io`] (it names the path).
    pub fn open(input: Input<'_>, options: Options) -> hurray_reader::Result<Self> {
        match input {
            Input::Stdin => {
                // Redirected from a regular file (`- < file.hry`): mapped like
                // a path, when nothing of it has been read yet.
                if let Some(file) = stdin_file() {
                    return Ok(Source::Mapped(MappedFile::from_file(&file, "<stdin>", options)?));
                }
                Ok(Source::Memory(
                    read_stream(std::io::stdin().lock(), "<stdin>")?,
                    options,
                ))
            }
            Input::Path(path) => {
                // A FIFO or device (e.g. `<(cat f.hry)`, `/dev/stdin`) cannot be mapped.
                let is_stream = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
                if is_stream {
                    if let Ok(stream) = File::open(path) {
                        return Ok(Source::Memory(
                            read_stream(stream, &hurray_reader::shown_path(path))?,
                            options,
                        ));
                    }
                }
                // The library opens and maps the file, and names the path in its errors.
                Ok(Source::Mapped(MappedFile::open(path, options)?))
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

/// Bytes read before deciding whether a stream can be a Hurray file: the
/// smallest file (64-byte header and 40-byte trailer).
const PROBE: u64 = 104;

/// Reads a stream into memory; when its first bytes are not a Hurray header
/// (`/dev/zero`, a stray pipe) only those are kept, so the parse fails on
/// the magic at once instead of after reading an endless stream.
///
/// # Errors
/// [`hurray_reader::Error::Io`] naming the stream as `name` (as every other
/// message does: `<stdin>` or the path) when it cannot be read.
fn read_stream(mut stream: impl Read, name: &str) -> hurray_reader::Result<AlignedBytes> {
    let named = |e: hurray_reader::Error| match e {
        hurray_reader::Error::Io { kind, message } => hurray_reader::Error::Io {
            kind,
            message: format!("{name}: {message}").into(),
        },
        other => other,
    };
    let probe = AlignedBytes::from_reader((&mut stream).take(PROBE)).map_err(named)?;
    if probe.starts_with(FILE_MAGIC) {
        // The rest straight into aligned storage: one copy in memory.
        AlignedBytes::from_reader((&probe[..]).chain(stream)).map_err(named)
    } else {
        Ok(probe)
    }
}
