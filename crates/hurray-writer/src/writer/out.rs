//! Staged, position-tracking output: every byte the writer emits goes
//! through here.

use std::io;

use crate::data::BufferData;
use crate::error::{Error, Result};
use crate::num::{add, len64, round_up};
use crate::sink::Sink;

/// Bytes gathered before a write reaches the sink; larger writes bypass it.
const STAGE_LEN: usize = 256 * 1024;
/// Chunk size used to pull data from reader and generator sources.
const CHUNK_LEN: usize = 1 << 20;

/// Staged, position-tracking output over a [`Sink`].
pub(crate) struct Out<S> {
    pub(crate) sink: S,
    pub(crate) pos: u64,
    stage: Vec<u8>,
    /// Scratch for reader and generator sources.
    chunk: Vec<u8>,
}

impl<S: Sink> Out<S> {
    /// An empty output over `sink`, at position 0.
    pub(crate) fn new(sink: S) -> Self {
        Self {
            sink,
            pos: 0,
            stage: Vec::new(),
            chunk: Vec::new(),
        }
    }

    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let new_pos = add(self.pos, len64(bytes.len())?, "file offset")?;
        if bytes.len() >= STAGE_LEN {
            self.flush_stage()?;
            self.sink.write_all(bytes)?;
        } else {
            if self.stage.len().saturating_add(bytes.len()) > STAGE_LEN {
                self.flush_stage()?;
            }
            self.stage.extend_from_slice(bytes);
        }
        self.pos = new_pos;
        Ok(())
    }

    pub(crate) fn zeros(&mut self, len: u64) -> Result<()> {
        let new_pos = add(self.pos, len, "file offset")?;
        match usize::try_from(len) {
            Ok(n) if n < STAGE_LEN => {
                if self.stage.len().saturating_add(n) > STAGE_LEN {
                    self.flush_stage()?;
                }
                self.stage.resize(self.stage.len().saturating_add(n), 0);
            }
            _ => {
                self.flush_stage()?;
                self.sink.write_zeros(len)?;
            }
        }
        self.pos = new_pos;
        Ok(())
    }

    pub(crate) fn pad_to(&mut self, align: u64) -> Result<()> {
        let target = round_up(self.pos, align)?;
        self.zeros(target.saturating_sub(self.pos))
    }

    pub(crate) fn flush_stage(&mut self) -> io::Result<()> {
        if !self.stage.is_empty() {
            self.sink.write_all(&self.stage)?;
            self.stage.clear();
        }
        Ok(())
    }

    /// Writes one buffer's bytes from `src`.
    ///
    /// # Errors
    /// [`Error::SourceTooShort`] when a reader ends early; I/O errors.
    pub(crate) fn write_source(&mut self, buffer: u64, src: BufferData<'_>) -> Result<()> {
        let mut chunk = std::mem::take(&mut self.chunk);
        let result = self.write_source_with(buffer, src, &mut chunk);
        self.chunk = chunk;
        result
    }

    fn write_source_with(&mut self, buffer: u64, src: BufferData<'_>, scratch: &mut Vec<u8>) -> Result<()> {
        match src {
            BufferData::Bytes(b) => self.write(b),
            BufferData::Zeros(n) => self.zeros(n),
            BufferData::Reader { reader, len } => {
                let mut done = 0u64;
                while done < len {
                    let want = chunk_len(len.saturating_sub(done));
                    let chunk = chunk_buf(scratch, want);
                    let mut filled = 0usize;
                    while filled < want {
                        let Some(dst) = chunk.get_mut(filled..) else {
                            break;
                        };
                        match reader.read(dst) {
                            Ok(0) => {
                                return Err(Error::SourceTooShort {
                                    buffer,
                                    expected: len,
                                    actual: add(done, len64(filled)?, "source length")?,
                                })
                            }
                            Ok(n) => filled = filled.saturating_add(n),
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e.into()),
                        }
                    }
                    self.write(chunk)?;
                    done = add(done, len64(want)?, "source length")?;
                }
                Ok(())
            }
            BufferData::Generate { len, fill } => {
                let mut done = 0u64;
                while done < len {
                    let want = chunk_len(len.saturating_sub(done));
                    let chunk = chunk_buf(scratch, want);
                    fill(done, chunk)?;
                    self.write(chunk)?;
                    done = add(done, len64(want)?, "source length")?;
                }
                Ok(())
            }
        }
    }
}

fn chunk_len(left: u64) -> usize {
    usize::try_from(left).map_or(CHUNK_LEN, |l| l.min(CHUNK_LEN))
}

fn chunk_buf(chunk: &mut Vec<u8>, want: usize) -> &mut [u8] {
    if chunk.len() < want {
        chunk.resize(want, 0);
    }
    let len = chunk.len();
    chunk.get_mut(..want.min(len)).unwrap_or_default()
}
