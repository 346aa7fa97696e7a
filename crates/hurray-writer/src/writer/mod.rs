//! The single-pass file writer (`file-format.md` § Writer Protocol), one
//! file per concern: [`options`] (what the caller chooses, file-level
//! constants), [`file_writer`] (placing tensors), [`out`] (the staged byte
//! stream), [`composite`] (composite heads waiting for members),
//! [`entry`] (index entries, the unchecked path) and [`container`] (header,
//! KV section, index and trailer as bytes).

mod composite;
mod container;
mod entry;
mod file_writer;
mod options;
mod out;

pub use entry::{IndexEntry, RawTensor};
pub use file_writer::FileWriter;
pub use options::{
    RawFileFields, WriterOptions, DEFAULT_DATA_BUFFER_ALIGNMENT, FILE_MAGIC, HAS_INDEX_CRC32C, HAS_KV_METADATA,
    HEADER_LEN, SORTED_INDEX, TRAILER_LEN, TRAILER_MAGIC, UNKNOWN_TENSOR_COUNT,
};
