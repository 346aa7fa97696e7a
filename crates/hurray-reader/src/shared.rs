//! An owned, reference-counted, parsed file: for programs that cannot hold
//! a borrow (a struct that keeps the file and hands out views, another
//! thread, a Python object).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::aligned::AlignedBytes;
use crate::error::Result;
use crate::file::{HurrayFile, Options};
#[cfg(feature = "mmap")]
use crate::mmap::MappedFile;

/// Where a [`SharedFile`]'s bytes live.
enum Storage {
    #[cfg(feature = "mmap")]
    Mapped(MappedFile),
    Memory(AlignedBytes),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            #[cfg(feature = "mmap")]
            Storage::Mapped(m) => m.bytes(),
            Storage::Memory(b) => b,
        }
    }
}

type Parsed<'data> = HurrayFile<'data>;

self_cell::self_cell!(
    /// The bytes and the container parsed from them, in one allocation
    /// (`self_cell` keeps the borrow sound: the bytes are never moved or
    /// dropped while the parsed file borrows them).
    struct Cell {
        owner: Storage,
        #[covariant]
        dependent: Parsed,
    }
);

/// A parsed Hurray file that owns its bytes (a mapping or an in-memory
/// copy) behind an [`Arc`]: clone it freely, keep it in a struct, send it
/// to another thread (`SharedFile` is `Send + Sync`).
///
/// [`file`](Self::file) gives the [`HurrayFile`], parsed once when the
/// `SharedFile` was made; tensors and views borrow the `SharedFile` they
/// came from. The bytes are unmapped (or freed) when the last clone is
/// dropped. [`open`](Self::open) maps the file and carries the mapping
/// hazard of [`MappedFile`]; [`read`](Self::read) reads it into memory.
///
/// ```
/// use hurray_reader::{Options, SharedFile};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
/// let shared = SharedFile::open(path, Options::default())?;
/// let worker = {
///     let shared = shared.clone();
///     std::thread::spawn(move || -> hurray_reader::Result<f32> {
///         let a = shared.file().tensor("A")?.csc::<f32>()?;
///         Ok(a.values().iter().sum())
///     })
/// };
/// assert_eq!(worker.join().unwrap()?, 15.0);
/// assert_eq!(shared.file().len(), 1);
/// # Ok::<(), hurray_reader::Error>(())
/// ```
#[derive(Clone)]
pub struct SharedFile {
    cell: Arc<Cell>,
}

impl SharedFile {
    /// Maps the file at `path` read-only and parses its container, as
    /// [`MappedFile::open`] followed by [`MappedFile::file`].
    ///
    /// # Errors
    /// As [`MappedFile::open`] and [`HurrayFile::parse`].
    #[cfg(feature = "mmap")]
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Self> {
        Self::new(Storage::Mapped(MappedFile::open(path, options)?), options)
    }

    /// Reads the file at `path` into memory ([`AlignedBytes::read`]) and
    /// parses its container: no mapping hazard, at the cost of reading every
    /// byte.
    ///
    /// # Errors
    /// As [`AlignedBytes::read`] and [`HurrayFile::parse`].
    pub fn read(path: impl AsRef<Path>, options: Options) -> Result<Self> {
        Self::from_bytes(AlignedBytes::read(path)?, options)
    }

    /// Parses bytes already in memory.
    ///
    /// # Errors
    /// As [`HurrayFile::parse`].
    pub fn from_bytes(bytes: AlignedBytes, options: Options) -> Result<Self> {
        Self::new(Storage::Memory(bytes), options)
    }

    fn new(storage: Storage, options: Options) -> Result<Self> {
        let cell = Cell::try_new(storage, |s| HurrayFile::parse(s.bytes(), options))?;
        Ok(SharedFile { cell: Arc::new(cell) })
    }

    /// The parsed container; tensors and views from it borrow `self`.
    pub fn file(&self) -> &HurrayFile<'_> {
        self.cell.borrow_dependent()
    }

    /// The whole file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.cell.borrow_owner().bytes()
    }

    /// True when the bytes are a mapping of the file, false when they were
    /// read into memory.
    pub fn is_mapped(&self) -> bool {
        match self.cell.borrow_owner() {
            #[cfg(feature = "mmap")]
            Storage::Mapped(_) => true,
            Storage::Memory(_) => false,
        }
    }
}

impl fmt::Debug for SharedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file();
        f.debug_struct("SharedFile")
            .field("bytes", &self.bytes().len())
            .field("mapped", &self.is_mapped())
            .field("tensors", &file.len())
            .field("kv_entries", &file.kv().len())
            .field("options", &file.options())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn shared_file_is_send_and_sync() {
        assert_send_sync::<SharedFile>();
    }

    #[test]
    fn views_outlive_other_clones() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
        for shared in [
            SharedFile::open(path, Options::default()).unwrap(),
            SharedFile::read(path, Options::default()).unwrap(),
        ] {
            let keep = shared.clone();
            drop(shared);
            let a = keep.file().tensor("A").unwrap().csc::<f32>().unwrap();
            assert_eq!(a.values(), [1.0, 4.0, 3.0, 2.0, 5.0]);
            assert_eq!(a.row_indices(), [0, 2, 1, 0, 2]);
            assert_eq!(keep.bytes().len(), std::fs::metadata(path).unwrap().len() as usize);
        }
    }

    #[test]
    fn debug_is_a_summary() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
        let shared = SharedFile::read(path, Options::default()).unwrap();
        let shown = format!("{shared:?}");
        assert!(shown.starts_with("SharedFile { bytes: 16467, "), "{shown}");
        assert!(shown.contains("mapped: false, tensors: 1, kv_entries: 0"), "{shown}");
    }
}
