//! Getting the file's bytes: a memory map for regular files, an in-memory
//! copy for standard input and other streams (a pipe cannot be mapped).

use std::fs::File;

use hurray_reader::{AlignedBytes, HurrayFile, MappedFile, Options};

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
                AlignedBytes::from_reader(std::io::stdin().lock())?,
                options,
            )),
            Input::Path(path) => {
                // A FIFO or device (e.g. `<(cat f.hry)`, `/dev/stdin`) cannot be mapped.
                let is_stream = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
                if is_stream {
                    if let Ok(stream) = File::open(path) {
                        return Ok(Source::Memory(AlignedBytes::from_reader(stream)?, options));
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
