//! A file's bytes read into aligned memory.

use std::io::Read;
use std::ops::Deref;
use std::path::Path;

use hurray_format::container::{HEADER_LEN, TRAILER_LEN};
use zerocopy::IntoBytes;

use crate::cursor::to_u64;
use crate::error::{io_error, Error, Result};
use crate::file::{check_ends, check_file_magic};

/// Bytes [`AlignedBytes::read`] and [`AlignedBytes::read_stream`] read
/// before deciding whether to read the rest: the smallest Hurray file (the
/// 64-byte header and the 40-byte trailer). The first 8, the magic, decide.
const PROBE: usize = 104;
const _: () = assert!(HEADER_LEN + TRAILER_LEN == 104);

/// A file's bytes in memory, aligned to 8 bytes so typed views of every
/// element type work: the path for streams (stdin) and for files that may
/// change while read (see the mapping hazard of `MappedFile`).
///
/// [`read`](Self::read) (a path) and [`read_stream`](Self::read_stream)
/// (a reader) read a Hurray file: they read its first 104 bytes, and the
/// rest only when those start with the file magic, so that a file that is
/// not a Hurray file is rejected at once, not after reading all of it.
/// [`from_reader`](Self::from_reader) and [`from_slice`](Self::from_slice)
/// take any bytes.
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
    /// Reads the Hurray file at `path` into memory: its first 104 bytes
    /// (the smallest file: header and trailer), then, when they start with
    /// the file magic `HRRYFILE` (`file-format.md` § File Header), the rest,
    /// straight into the aligned storage (one copy of the file). A file
    /// that does not start with the magic is rejected after those 104
    /// bytes, with the error [`HurrayFile::parse`](crate::HurrayFile::parse)
    /// gives for the whole file (and the mapped path, through
    /// [`MappedFile::file`](crate::MappedFile::file)): a 2 GB file that is
    /// not a Hurray file costs one small read, not 2 GB of memory. Before
    /// the rest, its header (64 bytes) and trailer (the last 40) are
    /// checked as the parse checks them first, the trailer's offsets
    /// against the file's size: a file cut short, or corrupt at either
    /// end, is rejected from those bytes alone, with the parse's error.
    ///
    /// Only a regular file is read, and nothing waits: a FIFO, a socket or
    /// a device is refused at once, as by
    /// [`MappedFile::open`](crate::MappedFile::open) (read a stream with
    /// [`read_stream`](Self::read_stream)). A file that reports size 0
    /// (those of `/proc` and `/sys`) is read to its end.
    ///
    /// The bytes read are not otherwise checked: parse them with
    /// [`HurrayFile::parse`](crate::HurrayFile::parse). For the bytes of a
    /// file that may not be a Hurray file, use
    /// [`from_reader`](Self::from_reader).
    ///
    /// # Errors
    /// - [`Error::BadMagic`] (field `magic`, offset 0) when the file does
    ///   not start with `HRRYFILE` (a file shorter than 8 bytes: with the
    ///   start of it). A shorter file that does is read, and left to the
    ///   parse ([`Error::FileTooSmall`]).
    /// - The parse's errors of the header and the trailer (a bad
    ///   `trailer_magic`, an index or KV section past the end, ...).
    /// - [`Error::Io`] if it cannot be read: `PATH: cannot read: is a
    ///   directory`, `PATH: cannot read: not a regular file (a FIFO)`, the
    ///   OS's error, or kind `OutOfMemory` when the file is larger than the
    ///   memory the allocator gives.
    pub fn read(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let (file, metadata) = crate::open::open_regular(path, "cannot read")?;
        // A file that reports no size may still have content (those of
        // /proc and /sys): read it to its end.
        let len = match metadata.len() {
            0 => None,
            len => Some(usize::try_from(len).unwrap_or(usize::MAX)),
        };
        let failed = |e| io_error(path, "cannot read", &e);
        let mut file = file;
        if let Some(len) = len {
            check_ends_of(&mut file, len, failed)?;
        }
        read_probed(file, len, failed)
    }

    /// Reads a Hurray file from `reader` (e.g. stdin), as [`read`](Self::read)
    /// reads a path: its first 104 bytes, then, only when they start with
    /// the file magic, the rest, to the end, straight into aligned storage
    /// (growing as [`from_reader`](Self::from_reader) does). A stream that
    /// is not a Hurray file (`/dev/zero`, a stray pipe) is rejected after
    /// at most 104 bytes, never read to its end. Bound the stream with
    /// [`Read::take`] to bound the memory.
    ///
    /// # Errors
    /// [`Error::BadMagic`] as [`read`](Self::read); [`Error::Io`] if
    /// reading fails or memory runs out, its message `cannot read: ...` (a
    /// stream has no path to name).
    pub fn read_stream(reader: impl Read) -> Result<Self> {
        read_probed(reader, None, stream_error)
    }

    /// Reads everything from `reader` straight into aligned storage,
    /// whatever it holds: one copy of the bytes, which grows by a quarter at
    /// a time, so memory peaks at about 1.25 times the stream's length
    /// (reading into a `Vec<u8>` and then [`from_slice`](Self::from_slice)
    /// would hold two copies). For a Hurray file,
    /// [`read_stream`](Self::read_stream) stops early on one that is not.
    ///
    /// # Errors
    /// [`Error::Io`] if reading fails or memory runs out; its message is
    /// `cannot read: ...` (a stream has no path to name).
    pub fn from_reader(reader: impl Read) -> Result<Self> {
        read_to_end(reader, stream_error)
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

/// An I/O error of a stream, which has no path to name.
fn stream_error(e: std::io::Error) -> Error {
    Error::Io {
        kind: e.kind(),
        message: format!("cannot read: {e}").into(),
    }
}

/// Reads a Hurray file from `reader`: its first [`PROBE`] bytes (or all of
/// a shorter one), checked against the file magic, then, only when they
/// pass, the rest: `len` bytes in all when the size is known (one
/// allocation of that size, filled by `read_exact`), or else to the end.
/// Nothing is allocated in proportion to the file before the magic
/// passes. `failed` words an I/O error.
fn read_probed(
    mut reader: impl Read,
    len: Option<usize>,
    failed: impl Fn(std::io::Error) -> Error,
) -> Result<AlignedBytes> {
    let mut buffer = [0u8; PROBE];
    let want = len.map_or(PROBE, |len| len.min(PROBE));
    let probe = buffer.get_mut(..want).unwrap_or_default();
    let got = fill(&mut reader, probe).map_err(&failed)?;
    let probe = probe.get(..got).unwrap_or_default();
    check_file_magic(probe)?;
    let Some(len) = len else {
        return read_to_end(Read::chain(probe, reader), failed);
    };
    let mut words: Vec<u64> = Vec::new();
    words.try_reserve_exact(len.div_ceil(8)).map_err(|_| {
        failed(std::io::Error::new(
            std::io::ErrorKind::OutOfMemory,
            "not enough memory to hold the file",
        ))
    })?;
    words.resize(len.div_ceil(8), 0);
    let bytes = words.as_mut_bytes().get_mut(..len).unwrap_or_default();
    // `got <= want <= len`: the probe is the start of the file's bytes.
    if let Some(head) = bytes.get_mut(..got) {
        head.copy_from_slice(probe);
    }
    let rest = bytes.get_mut(got..).unwrap_or_default();
    // A file that ended early (shrunk since its size was read) fails here,
    // an `UnexpectedEof`, as it did before the probe.
    reader.read_exact(rest).map_err(failed)?;
    Ok(AlignedBytes { words, len })
}

/// Before a file of `len` bytes is read whole: its header (the magic
/// first) and trailer checked as the parse checks them first
/// ([`check_ends`]: the trailer's offsets against `len`), from their 64
/// and 40 bytes alone, so that a file cut short or corrupt at either end
/// costs what mapping it costs. Leaves `file` at its start. A file shorter
/// than header and trailer is left to the read and the parse.
fn check_ends_of(file: &mut std::fs::File, len: usize, failed: impl Fn(std::io::Error) -> Error) -> Result<()> {
    use std::io::{Seek, SeekFrom};
    let size = to_u64(len);
    if size < HEADER_LEN + TRAILER_LEN {
        return Ok(());
    }
    let mut header = [0u8; HEADER_LEN as usize];
    let mut trailer = [0u8; TRAILER_LEN as usize];
    file.read_exact(&mut header).map_err(&failed)?;
    file.seek(SeekFrom::Start(size - TRAILER_LEN)).map_err(&failed)?;
    file.read_exact(&mut trailer).map_err(&failed)?;
    file.seek(SeekFrom::Start(0)).map_err(&failed)?;
    check_ends(&header, &trailer, size).map(|_| ())
}

/// Reads into `buffer` until it is full or `reader` ends; the bytes read.
fn fill(reader: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0usize;
    while let Some(free) = buffer.get_mut(got..).filter(|free| !free.is_empty()) {
        match reader.read(free) {
            Ok(0) => break,
            Ok(n) => got = got.saturating_add(n).min(buffer.len()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
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

    /// A file of /proc reports size 0 but has content: it is read, not
    /// taken as empty (a user's `--no-mmap` on such a file once got "file
    /// size 0"); not being a Hurray file, it is rejected on its magic,
    /// which names its first 8 bytes.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_that_reports_size_zero_is_read_not_taken_as_empty() {
        let content = std::fs::read("/proc/version").unwrap();
        assert_eq!(std::fs::metadata("/proc/version").unwrap().len(), 0);
        assert!(content.len() >= 8);
        let e = AlignedBytes::read("/proc/version").unwrap_err();
        assert!(matches!(e, Error::BadMagic { .. }), "{e:?}");
        let found = content[..8].escape_ascii().to_string();
        assert!(e.to_string().contains(&format!("found \"{found}\"")), "{e}");
    }

    /// A reader of `len` zero bytes (`usize::MAX`: endless) that fails the
    /// test if asked for more than `most` bytes in all, and counts what it
    /// gave. It hands out 7 bytes at a time, interrupted before each, so
    /// the probe's loop is exercised.
    struct Counted {
        len: usize,
        most: usize,
        pulled: usize,
        interrupt: bool,
    }

    impl Counted {
        fn zeros(len: usize, most: usize) -> Self {
            Counted {
                len,
                most,
                pulled: 0,
                interrupt: true,
            }
        }
    }

    impl Read for Counted {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            assert!(
                self.pulled + buf.len() <= self.most,
                "asked for {} bytes after {}: more than {}",
                buf.len(),
                self.pulled,
                self.most
            );
            self.interrupt = !self.interrupt;
            if !self.interrupt {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            let n = buf.len().min(7).min(self.len - self.pulled);
            buf[..n].fill(0);
            self.pulled += n;
            Ok(n)
        }
    }

    fn is_file_magic_error(e: &Error, found: &str) -> bool {
        let Error::BadMagic { at, expected, found: f } = e else {
            return false;
        };
        *expected == "HRRYFILE"
            && f == found
            && at.field.to_string() == "magic"
            && at.offset == 0
            && at.rule == "file-format.md § File Header"
    }

    /// A stream or a file that is not a Hurray file is rejected after the
    /// 104-byte probe, never read further, with the magic error: an
    /// endless stream, and a 1 GiB file (its size known: nothing is
    /// allocated for it). The reader fails the test if asked for byte 105.
    #[test]
    fn a_non_hurray_input_is_rejected_after_the_probe() {
        let zeros = "\\x00".repeat(8);
        let mut endless = Counted::zeros(usize::MAX, PROBE);
        let e = AlignedBytes::read_stream(&mut endless).unwrap_err();
        assert!(is_file_magic_error(&e, &zeros), "{e:?}");
        assert_eq!(endless.pulled, PROBE);

        let gib = 1usize << 30;
        for len in [Some(gib), None] {
            let mut file = Counted::zeros(gib, PROBE);
            let e = read_probed(&mut file, len, stream_error).unwrap_err();
            assert!(is_file_magic_error(&e, &zeros), "{len:?}: {e:?}");
            assert_eq!(file.pulled, PROBE, "{len:?}");
        }
        // Shorter than the probe: all of it, 3 bytes.
        let e = AlignedBytes::read_stream(&mut Counted::zeros(3, PROBE)).unwrap_err();
        assert!(is_file_magic_error(&e, &"\\x00".repeat(3)), "{e:?}");
    }

    /// A sparse 1 GiB file of zeros (no disk used), read by path: rejected
    /// with the error the mapped path gives, after one small read. (Before
    /// the probe this read all of it into a 1 GiB allocation.)
    #[test]
    fn a_large_non_hurray_file_is_rejected_as_the_mapped_path_rejects_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("zeros.hry");
        std::fs::File::create(&path).unwrap().set_len(1 << 30).unwrap();
        let e = AlignedBytes::read(&path).unwrap_err();
        assert!(is_file_magic_error(&e, &"\\x00".repeat(8)), "{e:?}");
        let mapped = crate::MappedFile::open(&path, crate::Options::default()).unwrap();
        assert_eq!(mapped.file().unwrap_err(), e);
        let shared = crate::SharedFile::read(&path, crate::Options::default()).unwrap_err();
        assert_eq!(shared, e);
        assert_eq!(
            e.to_string(),
            r#"magic at offset 0: expected HRRYFILE, found "\x00\x00\x00\x00\x00\x00\x00\x00" (file-format.md § File Header)"#
        );
    }

    /// A valid header followed by 1 GiB of zeros (a file cut short and
    /// padded; no disk used): rejected on its trailer from the two ends
    /// alone, with the mapped path's error (before `check_ends_of`, read
    /// whole: 22 s and 3.1 GB for 3 GiB). A valid file still reads whole.
    #[test]
    fn a_large_file_with_a_bad_trailer_is_rejected_from_its_ends() {
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
        let valid = std::fs::read(fixture).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.hry");
        std::fs::write(&path, &valid[..64]).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let e = AlignedBytes::read(&path).unwrap_err();
        let mapped = crate::MappedFile::open(&path, crate::Options::default()).unwrap();
        assert_eq!(mapped.file().unwrap_err(), e);
        assert_eq!(
            crate::SharedFile::read(&path, crate::Options::default()).unwrap_err(),
            e
        );
        assert_eq!(
            e.to_string(),
            r#"trailer_magic at offset 1073741820: expected HRRY as the file's last 4 bytes (a file cut short, or with bytes appended, ends otherwise), found "\x00\x00\x00\x00" (file-format.md § Trailer)"#
        );
        assert_eq!(&AlignedBytes::read(fixture).unwrap()[..], &valid[..]);
    }

    /// Whatever the input, reading it as a Hurray file either gives every
    /// byte or fails with the very error the parse of every byte gives:
    /// prefixes of a valid file (the short ones are left to the parse), a
    /// wrong magic at each length, a valid file with its magic damaged.
    #[test]
    fn read_stream_gives_every_byte_or_the_parse_error() {
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
        let valid = std::fs::read(fixture).unwrap();
        let mut damaged = valid.clone();
        damaged[7] = b'X';
        let mut inputs: Vec<Vec<u8>> = vec![damaged, valid.clone(), vec![0; 104], vec![0; 105], vec![0; 200]];
        // A zip archive's start, over and over.
        let other: Vec<u8> = b"PK\x03\x04".iter().copied().cycle().take(4096).collect();
        for n in [0, 1, 4, 7, 8, 9, 63, 64, 103, 104, 105, 4096] {
            inputs.push(valid[..n].to_vec());
            inputs.push(other[..n].to_vec());
        }
        for input in &inputs {
            let parsed = crate::HurrayFile::parse(&AlignedBytes::from_slice(input), crate::Options::default()).err();
            let reader = Trickle {
                bytes: input,
                chunk: 5,
                interrupted: false,
            };
            match AlignedBytes::read_stream(reader) {
                Ok(read) => assert_eq!(&read[..], &input[..]),
                Err(e) => assert_eq!(Some(e), parsed, "{} bytes", input.len()),
            }
            // The same through a path, whose size is known.
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.hry");
            std::fs::write(&path, input).unwrap();
            match AlignedBytes::read(&path) {
                Ok(read) => {
                    assert_eq!(&read[..], &input[..]);
                    assert_eq!(read.as_ptr() as usize % 8, 0);
                }
                Err(e) => assert_eq!(Some(e), parsed, "{} bytes", input.len()),
            }
        }
        // The valid file reads whole, and parses as the mapped file does.
        let read = AlignedBytes::read(fixture).unwrap();
        assert_eq!(&read[..], &valid[..]);
        assert_eq!(read.words.len(), valid.len().div_ceil(8));
        let mapped = crate::MappedFile::open(fixture, crate::Options::default()).unwrap();
        let (a, b) = (
            crate::HurrayFile::parse(&read, crate::Options::default()).unwrap(),
            mapped.file().unwrap(),
        );
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        let va = a.tensor("A").unwrap().csc::<f32>().unwrap();
        let vb = b.tensor("A").unwrap().csc::<f32>().unwrap();
        assert_eq!(
            (va.values(), va.row_indices(), va.col_ptr()),
            (vb.values(), vb.row_indices(), vb.col_ptr())
        );
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
