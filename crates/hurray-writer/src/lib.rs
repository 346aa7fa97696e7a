//! Streaming, single-pass writer for Hurray tensor files (`.hry`).
//!
//! A [`FileWriter`] emits a Hurray file strictly front to back over any
//! [`Sink`] (a `Vec<u8>`, a `File`, any `Write` through [`WriteSink`]):
//! the 64-byte header, then for each tensor its descriptor and data buffers
//! (every buffer aligned to `data_buffer_alignment`), then the optional KV
//! metadata section, the footer index (always with its CRC-32C) and the
//! 40-byte trailer. It keeps only one index entry per tensor in memory.
//!
//! Three ways to describe a tensor:
//!
//! * **Checked typed helpers** — [`Csc`], [`Csr`], [`Coo`], [`Csf`],
//!   [`Dense`] take in-memory arrays, check every storage invariant of their
//!   layout and compute all sizes; [`TripletCsc`] and [`TripletCsr`] build
//!   those arrays from unsorted `(row, col, value)` triplets.
//! * **Typed descriptors** — [`TensorDescriptor`] covers every element
//!   type, layout and optional section; [`FileWriter::write_tensor`]
//!   validates it (not the buffer contents) and streams the buffers from
//!   [`BufferData`] sources: byte slices, readers, generator callbacks or
//!   zero runs (holes on a `File`), so multi-gigabyte tensors never need to
//!   sit in memory.
//! * **Unchecked** — [`RawDescriptor`], [`RawTensor`],
//!   [`FileWriter::write_tensor_unchecked`], [`FileWriter::add_kv_raw`] and
//!   [`RawFileFields`] set any byte, for files that must be invalid.
//!
//! [`write_file`] / [`PathWriter`] write to a path atomically (temporary
//! file + rename).
//!
//! # Example
//!
//! The CSC example of `layouts/csc.md` (`float32`, shape `[4, 5]`) written
//! to memory:
//!
//! ```
//! use hurray_writer::{Csc, FileWriter, WriterOptions};
//!
//! # fn main() -> Result<(), hurray_writer::Error> {
//! let values = [1.0f32, 4.0, 3.0, 2.0, 5.0];
//! let row_indices = [0u64, 2, 1, 0, 2];
//! let col_ptr = [0u64, 1, 2, 3, 4, 5];
//! let csc = Csc::new(4, 5, &values, &row_indices, &col_ptr)?;
//!
//! let mut writer = FileWriter::new(Vec::new(), WriterOptions::default())?;
//! // KV entries go before the first tensor (or announce them with
//! // `WriterOptions::kv_metadata(true)`), so the header can carry the flag.
//! writer.add_kv("producer", "doc example")?;
//! writer.write_csc("csc_example", &csc)?;
//! let bytes: Vec<u8> = writer.finish()?;
//!
//! assert_eq!(&bytes[..8], b"HRRYFILE");
//! assert_eq!(&bytes[bytes.len() - 4..], b"HRRY");
//! // The descriptor follows the 64-byte header; buffer 0 starts at 4096.
//! assert_eq!(&bytes[64..68], b"HRRY");
//! assert_eq!(&bytes[4096..4100], &1.0f32.to_le_bytes());
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

#[cfg(target_endian = "big")]
compile_error!("hurray-writer writes typed slices as in-memory bytes and needs a little-endian target");

mod buffer;
mod data;
mod descriptor;
mod element_type;
mod error;
mod kv;
mod layout;
mod num;
mod path;
pub mod quant;
mod sections;
mod sink;
pub mod sparse;
mod triplets;
mod writer;

pub use buffer::BufferHandle;
pub use data::BufferData;
pub use descriptor::{
    RawDescriptor, TensorDescriptor, HAS_COMPOSITE_MEMBER, HAS_EXTENSION_TYPE, HAS_QUANTIZATION, HAS_SHARD,
    HAS_STATISTICS, MAX_RANK, MAX_TILING_DEPTH,
};
pub use element_type::{Element, ElementType, Packing, Values};
pub use error::{Error, Result};
pub use kv::{KvArray, KvValue};
pub use layout::{BlockPaged, CompositeHead, CompositionRule, Layout, TileInner, TileOrder, Tiled};
pub use path::{write_file, PathWriter};
pub use sections::{CompositeMember, ExtensionType, Shard, Statistics};
pub use sink::{write_zero_bytes, Sink, WriteSink, MIN_HOLE};
pub use sparse::{Coo, Csc, Csf, CsfLevel, Csr, Dense};
pub use triplets::{Duplicates, Summable, TripletCsc, TripletCsr};
pub use writer::{
    FileWriter, IndexEntry, RawFileFields, RawTensor, WriterOptions, DEFAULT_DATA_BUFFER_ALIGNMENT, FILE_MAGIC,
    HAS_INDEX_CRC32C, HAS_KV_METADATA, HEADER_LEN, SORTED_INDEX, TRAILER_LEN, TRAILER_MAGIC, UNKNOWN_TENSOR_COUNT,
};
