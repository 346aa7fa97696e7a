//! Output sinks: where the writer's bytes go.
//!
//! [`Sink`] is [`std::io::Write`] plus a way to emit a run of zero bytes. The
//! default writes the zeros; [`std::fs::File`] (and
//! [`tempfile::NamedTempFile`]) skip long runs with a forward seek, leaving a
//! hole the file system does not allocate (zeros that would overwrite older
//! file content are written), and set the file length to the end of the
//! output in [`Sink::finish_sink`]. Any other writer can be used through [`WriteSink`].

use std::fs::File;
use std::io::{self, BufWriter, Cursor, Seek, SeekFrom, Write};

/// Zero runs shorter than this are written as bytes even by hole-capable
/// sinks: a seek plus a metadata call costs more than writing them.
pub const MIN_HOLE: u64 = 1 << 20;

static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// Writes `len` zero bytes to `w` with large writes.
pub fn write_zero_bytes<W: Write + ?Sized>(w: &mut W, len: u64) -> io::Result<()> {
    let mut left = len;
    while left > 0 {
        let n = usize::try_from(left).unwrap_or(usize::MAX).min(ZEROS.len());
        let chunk = ZEROS.get(..n).unwrap_or(&ZEROS);
        w.write_all(chunk)?;
        left = left.saturating_sub(u64::try_from(chunk.len()).unwrap_or(u64::MAX));
    }
    Ok(())
}

/// A byte destination for [`FileWriter`](crate::FileWriter).
///
/// The writer only ever appends; it never seeks backwards. Implementations
/// exist for `Vec<u8>`, `File`, `NamedTempFile`, `BufWriter<S>`,
/// `Cursor<Vec<u8>>`, `io::Sink`, `&mut S` and `Box<S>`; wrap any other
/// [`Write`] in [`WriteSink`].
pub trait Sink: Write {
    /// Appends `len` zero bytes. The default writes them; a sink may instead
    /// leave a hole that reads back as zeros.
    ///
    /// # Errors
    /// Any I/O error of the underlying writer.
    fn write_zeros(&mut self, len: u64) -> io::Result<()> {
        write_zero_bytes(self, len)
    }

    /// Called once after the last byte: flushes and, for a sink that left a
    /// hole at the end, fixes the length. The default flushes.
    ///
    /// # Errors
    /// Any I/O error of the underlying writer.
    fn finish_sink(&mut self) -> io::Result<()> {
        self.flush()
    }
}

impl Sink for Vec<u8> {
    fn write_zeros(&mut self, len: u64) -> io::Result<()> {
        let new_len = usize::try_from(len)
            .ok()
            .and_then(|n| self.len().checked_add(n))
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "zero run too long for a Vec"))?;
        self.resize(new_len, 0);
        Ok(())
    }
}

impl Sink for Cursor<Vec<u8>> {}
impl Sink for Cursor<&mut Vec<u8>> {}
impl Sink for io::Sink {
    fn write_zeros(&mut self, _len: u64) -> io::Result<()> {
        Ok(())
    }
}

/// Appends `len` zeros to a file: bytes that would overwrite existing file
/// content are written, the rest is skipped with a forward seek (a hole).
fn file_write_zeros(file: &mut File, len: u64) -> io::Result<()> {
    if len < MIN_HOLE {
        return write_zero_bytes(file, len);
    }
    let meta = file.metadata()?;
    if !meta.is_file() {
        return write_zero_bytes(file, len);
    }
    let pos = file.stream_position()?;
    let overlap = meta.len().saturating_sub(pos).min(len);
    write_zero_bytes(file, overlap)?;
    let rest = len.saturating_sub(overlap);
    if rest > 0 {
        let step = i64::try_from(rest).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "zero run too long"))?;
        file.seek(SeekFrom::Current(step))?;
    }
    Ok(())
}

/// Sets the file length to the current position: extends it if the output
/// ends in a hole, cuts off older content beyond the output.
fn file_finish(file: &mut File) -> io::Result<()> {
    file.flush()?;
    let meta = file.metadata()?;
    if meta.is_file() {
        let pos = file.stream_position()?;
        if meta.len() != pos {
            file.set_len(pos)?;
        }
    }
    Ok(())
}

impl Sink for File {
    fn write_zeros(&mut self, len: u64) -> io::Result<()> {
        file_write_zeros(self, len)
    }

    fn finish_sink(&mut self) -> io::Result<()> {
        file_finish(self)
    }
}

impl Sink for tempfile::NamedTempFile {
    fn write_zeros(&mut self, len: u64) -> io::Result<()> {
        file_write_zeros(self.as_file_mut(), len)
    }

    fn finish_sink(&mut self) -> io::Result<()> {
        file_finish(self.as_file_mut())
    }
}

impl<S: Sink> Sink for BufWriter<S> {
    fn write_zeros(&mut self, len: u64) -> io::Result<()> {
        if len < MIN_HOLE {
            return write_zero_bytes(self, len);
        }
        self.flush()?;
        self.get_mut().write_zeros(len)
    }

    fn finish_sink(&mut self) -> io::Result<()> {
        self.flush()?;
        self.get_mut().finish_sink()
    }
}

impl<S: Sink + ?Sized> Sink for &mut S {
    fn write_zeros(&mut self, len: u64) -> io::Result<()> {
        (**self).write_zeros(len)
    }

    fn finish_sink(&mut self) -> io::Result<()> {
        (**self).finish_sink()
    }
}

impl<S: Sink + ?Sized> Sink for Box<S> {
    fn write_zeros(&mut self, len: u64) -> io::Result<()> {
        (**self).write_zeros(len)
    }

    fn finish_sink(&mut self) -> io::Result<()> {
        (**self).finish_sink()
    }
}

/// Adapts any [`Write`] (socket, pipe, compressor, ...) into a [`Sink`] that
/// writes zero runs as bytes.
#[derive(Debug, Default)]
pub struct WriteSink<W>(pub W);

impl<W> WriteSink<W> {
    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.0
    }
}

impl<W: Write> Write for WriteSink<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<W: Write> Sink for WriteSink<W> {}
