//! Getting the file's bytes: a memory map for regular files, an in-memory
//! copy for standard input and other streams (a pipe cannot be mapped).

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
            Input::Stdin => Ok(Source::Memory(
                read_stream(std::io::stdin().lock(), "<stdin>")?,
                options,
            )),
            Input::Path(path) => {
                // A FIFO or device (e.g. `<(cat f.hry)`, `/dev/stdin`) cannot be mapped.
                let is_stream = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
                if is_stream {
                    if let Ok(stream) = File::open(path) {
                        return Ok(Source::Memory(
                            read_stream(stream, &path.display().to_string())?,
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
    let failed = |e: std::io::Error| hurray_reader::Error::Io {
        kind: e.kind(),
        message: format!("{name}: cannot read: {e}").into(),
    };
    let mut bytes = Vec::new();
    (&mut stream).take(PROBE).read_to_end(&mut bytes).map_err(failed)?;
    if bytes.starts_with(FILE_MAGIC) {
        stream.read_to_end(&mut bytes).map_err(failed)?;
    }
    Ok(AlignedBytes::from_slice(&bytes))
}
