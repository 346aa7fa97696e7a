//! The writer's options and the file-level constants
//! (`file-format.md` § File Header).

use hurray_format::container;

/// File magic at offset 0.
pub const FILE_MAGIC: [u8; 8] = container::FILE_MAGIC;
/// Trailer magic in the last 4 bytes.
pub const TRAILER_MAGIC: [u8; 4] = container::TRAILER_MAGIC;
/// Size of the file header in bytes.
pub const HEADER_LEN: u64 = container::HEADER_LEN;
/// Size of the trailer in bytes.
pub const TRAILER_LEN: u64 = container::TRAILER_LEN;
/// File flag bit 0: a KV section is present.
pub const HAS_KV_METADATA: u32 = container::file_flags::HAS_KV_METADATA;
/// File flag bit 1: index entries are sorted by name bytes.
pub const SORTED_INDEX: u32 = container::file_flags::SORTED_INDEX;
/// File flag bit 2: the trailer carries the index CRC-32C.
pub const HAS_INDEX_CRC32C: u32 = container::file_flags::HAS_INDEX_CRC32C;
/// Default `data_buffer_alignment` in bytes.
pub const DEFAULT_DATA_BUFFER_ALIGNMENT: u32 = 4096;
/// `tensor_count_hint` value meaning "unknown".
pub const UNKNOWN_TENSOR_COUNT: u64 = container::UNKNOWN_TENSOR_COUNT;

/// Header and trailer fields that the normal options do not let you break,
/// for building invalid files. Everything defaults to "write the correct
/// value".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawFileFields {
    /// Replaces the computed `file_flags` in the header.
    pub file_flags: Option<u32>,
    /// Replaces `container_version_major` / `_minor` (`[1, 0]`).
    pub container_version: Option<[u8; 2]>,
    /// Header bytes 10–11.
    pub header_reserved: Option<[u8; 2]>,
    /// Header bytes 36–63.
    pub header_reserved_tail: Option<[u8; 28]>,
    /// Value written to the header's `data_buffer_alignment` field; padding
    /// still follows [`WriterOptions::data_buffer_alignment`].
    pub header_data_buffer_alignment: Option<u32>,
    /// Value written as `tensor_count_hint` (bypasses the count check).
    pub tensor_count_hint: Option<u64>,
    /// Value written as `index_entry_count`.
    pub index_entry_count: Option<u64>,
    /// Clears `HAS_INDEX_CRC32C` and writes `index_crc32c = 0` (a valid file
    /// without index checksum).
    pub omit_index_crc: bool,
    /// Value written as `index_crc32c` instead of the computed CRC.
    pub index_crc32c: Option<u32>,
    /// Value written as the trailer's `index_offset`.
    pub trailer_index_offset: Option<u64>,
    /// Value written as the trailer's `index_length`.
    pub trailer_index_length: Option<u64>,
    /// Value written as the trailer's `kv_offset`.
    pub trailer_kv_offset: Option<u64>,
    /// Value written as the trailer's `kv_length`.
    pub trailer_kv_length: Option<u32>,
    /// Trailer bytes 32–35.
    pub trailer_reserved: Option<[u8; 4]>,
    /// Trailer bytes 36–39.
    pub trailer_magic: Option<[u8; 4]>,
}

/// Options of a [`FileWriter`](crate::FileWriter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriterOptions {
    pub(crate) data_buffer_alignment: u32,
    pub(crate) first_descriptor_offset: u64,
    pub(crate) tensor_count_hint: Option<u64>,
    pub(crate) sorted_index: bool,
    pub(crate) kv_metadata: bool,
    pub(crate) sync_on_commit: bool,
    pub(crate) raw: RawFileFields,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            data_buffer_alignment: DEFAULT_DATA_BUFFER_ALIGNMENT,
            first_descriptor_offset: HEADER_LEN,
            tensor_count_hint: None,
            sorted_index: false,
            kv_metadata: false,
            sync_on_commit: true,
            raw: RawFileFields::default(),
        }
    }
}

impl WriterOptions {
    /// The defaults: alignment 4096, first descriptor at 64, count unknown,
    /// index in write order, sync before rename in path-based writes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Alignment of every data buffer, in bytes: a power of two in
    /// `[4096, 2097152]` (checked by [`FileWriter::new`](crate::FileWriter::new)).
    #[must_use]
    pub fn data_buffer_alignment(mut self, bytes: u32) -> Self {
        self.data_buffer_alignment = bytes;
        self
    }

    /// Absolute offset of the first descriptor (>= 64, multiple of 8); the
    /// gap after the header is zero-filled.
    #[must_use]
    pub fn first_descriptor_offset(mut self, offset: u64) -> Self {
        self.first_descriptor_offset = offset;
        self
    }

    /// Declares how many tensors will be written (header
    /// `tensor_count_hint`); [`FileWriter::finish`](crate::FileWriter::finish) checks it.
    #[must_use]
    pub fn tensor_count_hint(mut self, count: u64) -> Self {
        self.tensor_count_hint = Some(count);
        self
    }

    /// Writes index entries sorted by the UTF-8 bytes of their names and sets
    /// `SORTED_INDEX`. Tensors stay in write order in the tensor region.
    #[must_use]
    pub fn sorted_index(mut self, sorted: bool) -> Self {
        self.sorted_index = sorted;
        self
    }

    /// Announces a KV section up front: sets `HAS_KV_METADATA` and always
    /// writes a KV section (possibly with zero entries). Without it, the flag
    /// is set only if KV entries are added before the first tensor.
    #[must_use]
    pub fn kv_metadata(mut self, present: bool) -> Self {
        self.kv_metadata = present;
        self
    }

    /// For path-based writing: `fsync` the temporary file before renaming it
    /// into place (default `true`).
    #[must_use]
    pub fn sync_on_commit(mut self, sync: bool) -> Self {
        self.sync_on_commit = sync;
        self
    }

    /// Overrides header / trailer fields (for invalid test files).
    #[must_use]
    pub fn raw(mut self, raw: RawFileFields) -> Self {
        self.raw = raw;
        self
    }

    /// The configured `data_buffer_alignment` in bytes.
    pub fn get_data_buffer_alignment(&self) -> u32 {
        self.data_buffer_alignment
    }

    /// Whether fsync-before-rename is on.
    pub fn get_sync_on_commit(&self) -> bool {
        self.sync_on_commit
    }
}
