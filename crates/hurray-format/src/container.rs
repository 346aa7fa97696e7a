//! File-level constants (`file-format.md`).

/// The 8 bytes every Hurray file starts with (`file-format.md` § File Header).
pub const FILE_MAGIC: [u8; 8] = *b"HRRYFILE";
/// The last 4 bytes of a file (`file-format.md` § Trailer).
pub const TRAILER_MAGIC: [u8; 4] = *b"HRRY";
/// Size of the file header in bytes.
pub const HEADER_LEN: u64 = 64;
/// Size of the trailer in bytes.
pub const TRAILER_LEN: u64 = 40;
/// The container major version of this spec.
pub const CONTAINER_VERSION_MAJOR: u8 = 1;
/// The container minor version of this spec.
pub const CONTAINER_VERSION_MINOR: u8 = 0;
/// `tensor_count_hint` when the count is not known.
pub const UNKNOWN_TENSOR_COUNT: u64 = u64::MAX;

/// File flag bits (`file-format.md` § File Header › File Flags).
pub mod file_flags {
    /// A KV metadata section is present.
    pub const HAS_KV_METADATA: u32 = 1 << 0;
    /// Index entries are sorted by the UTF-8 bytes of their names.
    pub const SORTED_INDEX: u32 = 1 << 1;
    /// The trailer carries a CRC-32C of the index.
    pub const HAS_INDEX_CRC32C: u32 = 1 << 2;
    /// Every bit this version defines.
    pub const KNOWN: u32 = HAS_KV_METADATA | SORTED_INDEX | HAS_INDEX_CRC32C;
    /// Names of the defined bits, in bit order.
    pub const NAMES: [(u32, &str); 3] = [
        (HAS_KV_METADATA, "HAS_KV_METADATA"),
        (SORTED_INDEX, "SORTED_INDEX"),
        (HAS_INDEX_CRC32C, "HAS_INDEX_CRC32C"),
    ];
}
