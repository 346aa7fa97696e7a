//! Opening files: a memory map (the zero-copy path) or an aligned in-memory
//! copy (the path without the mapping hazard). This module holds the format
//! code's one `unsafe` block, the mapping. The others are the kernels'
//! (`kernels/`: the prefetch hint, and the calls of the SIMD copies of the
//! scan and the scatter once the CPU was found to have them) and the
//! hand-offs' (`interop.rs`: sprs's and faer's unchecked constructors on
//! scanned arrays), each with its SAFETY argument.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::Path;

use crate::error::{io_error, Result};
use crate::file::{HurrayFile, Options};
#[cfg(doc)]
use crate::AlignedBytes;

/// A Hurray file mapped read-only into memory.
///
/// [`open`](Self::open) maps the file; [`file`](Self::file) parses the
/// container from the mapping and hands out a [`HurrayFile`] whose views
/// borrow the mapped pages: nothing is read until a view touches it, and
/// nothing proportional to the data is copied. Parse once and keep the
/// `HurrayFile`.
///
/// Lifetimes: a `HurrayFile<'data>` borrows the `MappedFile` (`'data` is
/// the mapping's), and so do the [`Tensor`](crate::Tensor)s and views it
/// hands out — they borrow the mapped bytes, not the `HurrayFile`, so they
/// may outlive it. What must outlive them all is the `MappedFile`: keep it
/// in a longer-lived place than its views. A struct cannot hold a
/// `MappedFile` and views into it together (it would borrow itself): keep
/// the `MappedFile` and make views when needed (a view without the scan,
/// such as [`Tensor::csc_unscanned`](crate::Tensor::csc_unscanned), costs
/// no pass over the data), or, for a mapping that lasts as long as the
/// process, leak it once and keep `'static` views (second example).
///
/// ```
/// use hurray_reader::{CscView, MappedFile, Options};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
/// let mapped = MappedFile::open(path, Options::default())?;
/// let a: CscView<'_, f32> = {
///     let file = mapped.file()?; // dropped at the end of this block
///     file.tensor("A")?.csc()?
/// };
/// assert_eq!(a.get(0, 3)?, Some(&2.0)); // the view lives on with `mapped`
/// # Ok::<(), hurray_reader::Error>(())
/// ```
///
/// A view stored in a long-lived struct, over a mapping never unmapped:
///
/// ```
/// use hurray_reader::{CscView, MappedFile, Options};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
/// struct Model {
///     a: CscView<'static, f32>,
/// }
/// let mapped: &'static MappedFile = Box::leak(Box::new(MappedFile::open(path, Options::default())?));
/// let model = Model { a: mapped.file()?.tensor("A")?.csc()? };
/// assert_eq!(model.a.get(0, 3)?, Some(&2.0));
/// # Ok::<(), hurray_reader::Error>(())
/// ```
///
/// # The mapping hazard
///
/// A mapping shows the file as it is *now*. If another process truncates
/// the file while it is mapped, touching a page past the new end raises
/// `SIGBUS` and kills the process; if it rewrites bytes, views change under
/// your feet (a scan that passed may no longer hold, which Rust's
/// aliasing rules also treat as undefined behaviour). The reader cannot
/// detect either. Map only files that nothing else modifies while you read
/// them (write new files beside old ones and rename, as `hurray-writer`
/// does). When you cannot rule it out — files on shared or network
/// storage, files being written — read the file into memory with
/// [`AlignedBytes::read`] and parse that: same API, no hazard, at the cost
/// of reading every byte.
pub struct MappedFile {
    map: memmap2::Mmap,
    options: Options,
}

/// The file's length and options, not its bytes.
impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("len", &self.map.len())
            .field("options", &self.options)
            .finish()
    }
}

impl MappedFile {
    /// Maps the file at `path` read-only.
    ///
    /// Only a regular file is mapped, and nothing waits: a FIFO, a socket
    /// or a device is refused at once (opening a FIFO for reading would
    /// block until a writer comes). Read a stream with
    /// [`AlignedBytes::read_stream`].
    ///
    /// # Errors
    /// [`Error::Io`](crate::Error::Io) if the file cannot be opened or
    /// mapped: `PATH: cannot map: is a directory` (kind `IsADirectory`),
    /// `PATH: cannot map: not a regular file (a FIFO)` (a socket, a
    /// character or block device; kind `InvalidInput`), `PATH: cannot
    /// open: ...` with the OS's error.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Self> {
        let path = path.as_ref();
        let (file, _) = crate::open::open_regular(path, "cannot map")?;
        Self::map(&file, path, options)
    }

    /// Maps an open file read-only (e.g. standard input redirected from a
    /// regular file, `tool - < file.hry`); the whole file, whatever the
    /// handle's position. Errors name the file as `name`.
    ///
    /// # Errors
    /// [`Error::Io`](crate::Error::Io) if it cannot be mapped (a pipe, a directory).
    pub fn from_file(file: &File, name: &str, options: Options) -> Result<Self> {
        Self::map(file, Path::new(name), options)
    }

    fn map(file: &File, path: &Path, options: Options) -> Result<Self> {
        // SAFETY: `Mmap::map` is unsafe because the mapped bytes change (or
        // vanish, raising SIGBUS) if the file is modified or truncated while
        // mapped. The mapping is read-only and this crate never writes
        // through it; what remains is the caller's promise, documented above
        // on `MappedFile`, that no other process modifies the file while it
        // is mapped. Every offset and length read from the bytes is checked
        // before use, so a file that was already malformed when mapped
        // cannot cause an out-of-bounds access.
        let map = unsafe { memmap2::Mmap::map(file) }.map_err(|e| {
            // A device, FIFO or socket: the OS error alone ("No such
            // device") does not say why.
            let what = if file.metadata().is_ok_and(|m| !m.is_file()) {
                "cannot map (not a regular file; read it with AlignedBytes::read_stream)"
            } else {
                "cannot map"
            };
            io_error(path, what, &e)
        })?;
        Ok(MappedFile { map, options })
    }

    /// Parses the container from the mapping.
    ///
    /// # Errors
    /// As [`HurrayFile::parse`].
    pub fn file(&self) -> Result<HurrayFile<'_>> {
        HurrayFile::parse(&self.map, self.options)
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Advises the kernel that the mapping will be read sequentially (for a
    /// full validation scan). A hint only; errors are ignored.
    #[cfg(unix)]
    pub fn advise_sequential(&self) {
        let _ = self.map.advise(memmap2::Advice::Sequential);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;

    fn io_error(path: &str) -> (std::io::ErrorKind, String) {
        match MappedFile::open(path, Options::default()) {
            Err(Error::Io { kind, message }) => (kind, message.into()),
            other => panic!("{path}: expected an I/O error, got {other:?}"),
        }
    }

    #[test]
    fn paths_that_cannot_be_mapped_say_why() {
        let dir = std::env::temp_dir();
        let dir = dir.to_str().unwrap_or("/tmp");
        assert_eq!(
            io_error(dir),
            (
                std::io::ErrorKind::IsADirectory,
                format!("{dir}: cannot map: is a directory")
            )
        );
        let (kind, message) = io_error("/no/such/file.hry");
        assert_eq!(kind, std::io::ErrorKind::NotFound);
        assert!(message.starts_with("/no/such/file.hry: cannot open: "), "{message}");
        #[cfg(unix)]
        assert_eq!(
            io_error("/dev/null"),
            (
                std::io::ErrorKind::InvalidInput,
                "/dev/null: cannot map: not a regular file (a character device)".to_owned()
            )
        );
    }
}
