//! A file's bytes read into aligned memory.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;

use zerocopy::IntoBytes;

use crate::error::{Error, Result};

fn io_error(path: &Path, what: &str, e: &std::io::Error) -> Error {
    Error::Io {
        kind: e.kind(),
        message: format!("{}: {what}: {e}", path.display()).into(),
    }
}

/// A file's bytes in memory, aligned to 8 bytes so typed views of every
/// element type work: the path for streams (stdin) and for files that may
/// change while read (see the mapping hazard of `MappedFile`).
#[derive(Debug, Clone, Default)]
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBytes {
    /// Reads the whole file at `path`.
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be read.
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let mut file = File::open(path).map_err(|e| io_error(path, "cannot open", &e))?;
        let len = file
            .metadata()
            .map_err(|e| io_error(path, "cannot stat", &e))
            .map(|m| usize::try_from(m.len()).unwrap_or(usize::MAX))?;
        let mut words = vec![0u64; len.div_ceil(8)];
        let bytes = words.as_mut_bytes().get_mut(..len).unwrap_or_default();
        file.read_exact(bytes).map_err(|e| io_error(path, "cannot read", &e))?;
        Ok(AlignedBytes { words, len })
    }

    /// Reads everything from `reader` (e.g. stdin).
    ///
    /// # Errors
    /// [`Error::Io`] if reading fails.
    pub fn from_reader(mut reader: impl Read) -> Result<Self> {
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(Path::new("-"), "cannot read", &e))?;
        Ok(Self::from_slice(&bytes))
    }

    /// Copies `bytes` into aligned storage.
    pub fn from_slice(bytes: &[u8]) -> Self {
        let mut words = vec![0u64; bytes.len().div_ceil(8)];
        if let Some(dst) = words.as_mut_bytes().get_mut(..bytes.len()) {
            dst.copy_from_slice(bytes);
        }
        AlignedBytes {
            words,
            len: bytes.len(),
        }
    }
}

impl Deref for AlignedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.words.as_bytes().get(..self.len).unwrap_or_default()
    }
}
