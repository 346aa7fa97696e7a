//! A file's bytes read into aligned memory.

use std::io::Read;
use std::ops::Deref;
use std::path::Path;

use zerocopy::IntoBytes;

use crate::error::{io_error, Error, Result};

/// A file's bytes in memory, aligned to 8 bytes so typed views of every
/// element type work: the path for streams (stdin) and for files that may
/// change while read (see the mapping hazard of `MappedFile`).
#[derive(Clone, Default)]
pub struct AlignedBytes {
    words: Vec<u64>,
    len: usize,
}

/// The length and the first bytes, not every byte.
impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBytes")
            .field("len", &self.len)
            .field("bytes", &crate::debug::few::<u8>(self))
            .finish()
    }
}

impl AlignedBytes {
    /// Reads the whole file at `path`.
    ///
    /// Only a regular file is read, and nothing waits: a FIFO, a socket or
    /// a device is refused at once, as by
    /// [`MappedFile::open`](crate::MappedFile::open) (read a stream with
    /// [`from_reader`](Self::from_reader)). A file that reports size 0
    /// (those of `/proc` and `/sys`) is read to its end.
    ///
    /// # Errors
    /// [`Error::Io`] if it cannot be read: `PATH: cannot read: is a
    /// directory`, `PATH: cannot read: not a regular file (a FIFO)`, the
    /// OS's error, or kind `OutOfMemory` when the file is larger than the
    /// memory the allocator gives.
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let (mut file, metadata) = crate::open::open_regular(path, "cannot read")?;
        if metadata.len() == 0 {
            // A file that reports no size may still have content (those
            // of /proc and /sys): read it to its end.
            return read_to_end(file, |e| io_error(path, "cannot read", &e));
        }
        let len = usize::try_from(metadata.len()).unwrap_or(usize::MAX);
        let mut words: Vec<u64> = Vec::new();
        words.try_reserve_exact(len.div_ceil(8)).map_err(|_| {
            let e = std::io::Error::new(std::io::ErrorKind::OutOfMemory, "not enough memory to hold the file");
            io_error(path, "cannot read", &e)
        })?;
        words.resize(len.div_ceil(8), 0);
        let bytes = words.as_mut_bytes().get_mut(..len).unwrap_or_default();
        file.read_exact(bytes).map_err(|e| io_error(path, "cannot read", &e))?;
        Ok(AlignedBytes { words, len })
    }

    /// Reads everything from `reader` (e.g. stdin) straight into aligned
    /// storage: one copy of the bytes, which grows by a quarter at a time,
    /// so memory peaks at about 1.25 times the stream's length (reading into
    /// a `Vec<u8>` and then [`from_slice`](Self::from_slice) would hold two
    /// copies).
    ///
    /// # Errors
    /// [`Error::Io`] if reading fails or memory runs out; its message is
    /// `cannot read: ...` (a stream has no path to name).
    pub fn from_reader(reader: impl Read) -> Result<Self> {
        read_to_end(reader, |e| Error::Io {
            kind: e.kind(),
            message: format!("cannot read: {e}").into(),
        })
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

/// Reads everything from `reader` into aligned storage that grows by a
/// quarter at a time; `failed` words an I/O error.
fn read_to_end(mut reader: impl Read, failed: impl Fn(std::io::Error) -> Error) -> Result<AlignedBytes> {
    const MIN_GROWTH: usize = 1 << 13; // words: 64 KiB
    let mut words: Vec<u64> = Vec::new();
    let mut len = 0usize;
    loop {
        if len == words.len().saturating_mul(8) {
            let grow = (words.len() / 4).max(MIN_GROWTH);
            words
                .try_reserve_exact(grow)
                .map_err(|_| failed(std::io::ErrorKind::OutOfMemory.into()))?;
            words.resize(words.len().saturating_add(grow), 0);
        }
        let Some(free) = words.as_mut_bytes().get_mut(len..) else {
            break; // unreachable: `len` never passes the storage
        };
        match reader.read(free) {
            Ok(0) => break,
            Ok(n) => len = len.saturating_add(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(failed(e)),
        }
    }
    words.truncate(len.div_ceil(8));
    words.shrink_to_fit();
    Ok(AlignedBytes { words, len })
}

impl Deref for AlignedBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.words.as_bytes().get(..self.len).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of /proc reports size 0 but has content: it is read to its
    /// end, not taken as empty (a user's `--no-mmap` on such a file once
    /// got "file size 0").
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_that_reports_size_zero_is_read_to_its_end() {
        let expected = std::fs::read("/proc/version").unwrap();
        assert_eq!(std::fs::metadata("/proc/version").unwrap().len(), 0);
        let read = AlignedBytes::read("/proc/version").unwrap();
        assert!(!expected.is_empty());
        assert_eq!(&*read, expected.as_slice());
    }

    /// A reader that hands out at most `chunk` bytes per call and is
    /// interrupted once, as a pipe can be.
    struct Trickle<'a> {
        bytes: &'a [u8],
        chunk: usize,
        interrupted: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if !self.interrupted {
                self.interrupted = true;
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = self.chunk.min(buf.len()).min(self.bytes.len());
            let (head, rest) = self.bytes.split_at(n);
            buf[..n].copy_from_slice(head);
            self.bytes = rest;
            Ok(n)
        }
    }

    #[test]
    fn from_reader_keeps_every_byte_aligned() {
        // Lengths around the growth steps (64 KiB, then a quarter more).
        for len in [0usize, 1, 7, 8, 9, 65_535, 65_536, 65_537, 200_003] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            for chunk in [1, 4096, 70_000] {
                if chunk == 1 && len > 70_000 {
                    continue;
                }
                let reader = Trickle {
                    bytes: &bytes,
                    chunk,
                    interrupted: false,
                };
                let read = AlignedBytes::from_reader(reader).unwrap();
                assert_eq!(&read[..], &bytes[..], "len {len}, chunk {chunk}");
                assert_eq!(read.as_ptr() as usize % 8, 0);
                assert_eq!(read.words.len(), len.div_ceil(8));
            }
        }
    }

    #[test]
    fn from_reader_error_names_no_path() {
        struct Broken;
        impl Read for Broken {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("gone"))
            }
        }
        let e = AlignedBytes::from_reader(Broken).unwrap_err();
        assert_eq!(e.to_string(), "cannot read: gone");
    }
}
