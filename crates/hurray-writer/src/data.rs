//! The sources of a tensor's buffer bytes.

use std::io::{self, Read};

/// Where the bytes of one buffer come from. The length is in bytes.
pub enum BufferData<'a> {
    /// Bytes held by the caller.
    Bytes(&'a [u8]),
    /// A run of zero bytes; long runs become holes on hole-capable sinks.
    Zeros(u64),
    /// Exactly `len` bytes pulled from a reader (more are not read; fewer
    /// are an error).
    Reader {
        /// The source.
        reader: &'a mut dyn Read,
        /// Bytes to take.
        len: u64,
    },
    /// `len` bytes produced by a callback, in consecutive chunks: it is called
    /// with the byte offset of the chunk within the buffer and a chunk to
    /// fill completely. Every chunk but the last is 1 MiB.
    Generate {
        /// Total bytes.
        len: u64,
        /// Fills one chunk.
        fill: &'a mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>,
    },
}

impl std::fmt::Debug for BufferData<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferData::Bytes(b) => write!(f, "Bytes({} bytes)", b.len()),
            BufferData::Zeros(n) => write!(f, "Zeros({n})"),
            BufferData::Reader { len, .. } => write!(f, "Reader({len} bytes)"),
            BufferData::Generate { len, .. } => write!(f, "Generate({len} bytes)"),
        }
    }
}

impl<'a> BufferData<'a> {
    /// Bytes this source produces.
    pub fn len(&self) -> u64 {
        match self {
            BufferData::Bytes(b) => u64::try_from(b.len()).unwrap_or(u64::MAX),
            BufferData::Zeros(n) => *n,
            BufferData::Reader { len, .. } | BufferData::Generate { len, .. } => *len,
        }
    }

    /// Whether the source produces no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The in-memory bytes of a typed slice (`&[f32]`, `&[u64]`, ...).
    pub fn from_slice<T: crate::element_type::Element>(values: &'a [T]) -> Self {
        BufferData::Bytes(zerocopy::IntoBytes::as_bytes(values))
    }

    /// `len` bytes from `reader`.
    pub fn reader(reader: &'a mut dyn Read, len: u64) -> Self {
        BufferData::Reader { reader, len }
    }

    /// `len` bytes from a chunk-filling callback.
    pub fn generate(len: u64, fill: &'a mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>) -> Self {
        BufferData::Generate { len, fill }
    }
}

impl<'a> From<&'a [u8]> for BufferData<'a> {
    fn from(b: &'a [u8]) -> Self {
        BufferData::Bytes(b)
    }
}

impl<'a> From<&'a Vec<u8>> for BufferData<'a> {
    fn from(b: &'a Vec<u8>) -> Self {
        BufferData::Bytes(b.as_slice())
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for BufferData<'a> {
    fn from(b: &'a [u8; N]) -> Self {
        BufferData::Bytes(b.as_slice())
    }
}
