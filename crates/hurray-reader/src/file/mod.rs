//! The container (`file-format.md`): header, trailer, footer index, KV
//! section, and the placement of every region in the file.
//!
//! - `options`: how strictly the rules apply, and how many threads;
//! - `container`: the header, the trailer and the sections they locate;
//! - `index`: the footer index and its entries;
//! - `parse`: [`HurrayFile::parse`], the whole container in one pass;
//! - `regions`: where each tensor's descriptor and data lie.

mod container;
mod index;
mod options;
mod parse;
mod regions;

use hurray_format::container as format;

use crate::kv::KvEntry;
use crate::raw;

pub use container::file_flags;
pub(crate) use container::{check_ends, check_file_magic, reserved_zero};
pub use index::{EntryField, IndexEntry};
pub use options::{Mode, Options};

/// The 8 bytes every Hurray file starts with (`file-format.md` § File Header).
pub const FILE_MAGIC: &[u8; 8] = &format::FILE_MAGIC;
const TRAILER_MAGIC: &[u8; 4] = &format::TRAILER_MAGIC;
const HEADER_LEN: u64 = format::HEADER_LEN;
const TRAILER_LEN: u64 = format::TRAILER_LEN;
/// `name_length` (2) + the 32-byte fixed tail: the smallest an entry can
/// be, even with the (invalid) empty name, so an empty name is reported as
/// such rather than as a count that cannot fit.
const MIN_INDEX_ENTRY: u64 = 34;
/// The container major version this reader implements.
pub const CONTAINER_VERSION_MAJOR: u8 = format::CONTAINER_VERSION_MAJOR;
/// The container minor version this reader implements: a file of a newer
/// minor version is read, content it may add after the last index or KV
/// entry skipped (`versioning.md` § Compatibility Matrix).
pub const CONTAINER_VERSION_MINOR: u8 = format::CONTAINER_VERSION_MINOR;

/// A parsed Hurray file over borrowed bytes.
///
/// [`parse`](Self::parse) reads the header, the trailer, the footer index and
/// the KV section — nothing else — so its cost grows with the number of
/// tensors and the KV size, never with the size of the data. Descriptors
/// are read and checked when a tensor is requested ([`tensor`](Self::tensor)).
///
/// Every view handed out borrows `'data`, the bytes given to `parse`.
pub struct HurrayFile<'data> {
    data: &'data [u8],
    options: Options,
    header: &'data raw::FileHeader,
    trailer: &'data raw::Trailer,
    entries: Vec<IndexEntry<'data>>,
    /// Entry positions ordered by name bytes (for lookup by binary search).
    by_name: Vec<usize>,
    /// Entry positions ordered by descriptor offset (the physical order).
    by_offset: Vec<usize>,
    kv: Vec<KvEntry<'data>>,
}

/// The header's facts, the file's length and the first few tensor names
/// and KV keys with their counts: never the bytes, whatever the file's size.
impl std::fmt::Debug for HurrayFile<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::debug::{few_of, Text};
        let names = self.entries.iter().map(|e| Text(e.name));
        let keys = self.kv.iter().map(|e| Text(e.key()));
        f.debug_struct("HurrayFile")
            .field("len", &self.data.len())
            .field("options", &self.options)
            .field("container_version", &self.container_version())
            .field("file_flags", &self.file_flags())
            .field("data_buffer_alignment", &self.data_buffer_alignment())
            .field("tensors", &few_of(names, self.entries.len()))
            .field("kv", &few_of(keys, self.kv.len()))
            .finish()
    }
}

impl<'data> HurrayFile<'data> {
    /// The bytes the file was parsed from.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// The options the file was opened with.
    pub fn options(&self) -> Options {
        self.options
    }

    /// The raw 64-byte header.
    pub fn header(&self) -> &'data raw::FileHeader {
        self.header
    }

    /// The raw 40-byte trailer.
    pub fn trailer(&self) -> &'data raw::Trailer {
        self.trailer
    }

    /// `(container_version_major, container_version_minor)`.
    pub fn container_version(&self) -> (u8, u8) {
        (self.header.container_version_major, self.header.container_version_minor)
    }

    /// The header's `file_flags`.
    pub fn file_flags(&self) -> u32 {
        self.header.file_flags.get()
    }

    /// The header's `data_buffer_alignment`, in bytes.
    pub fn data_buffer_alignment(&self) -> u64 {
        u64::from(self.header.data_buffer_alignment.get())
    }

    /// Number of tensors (index entries).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the file holds no tensors.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The footer index entries, in index order.
    pub fn entries(&self) -> &[IndexEntry<'data>] {
        &self.entries
    }

    /// The index entries in the order their tensors lie in the file
    /// (ascending `descriptor_offset`), which is the order composite
    /// membership follows.
    pub fn entries_in_file_order(&self) -> impl Iterator<Item = &IndexEntry<'data>> + '_ {
        self.by_offset.iter().filter_map(|&i| self.entries.get(i))
    }

    /// The KV metadata entries, in file order.
    pub fn kv(&self) -> &[KvEntry<'data>] {
        &self.kv
    }

    /// Finds an index entry by name: a binary search over the names (the
    /// index's own order when `SORTED_INDEX` is set, a sorted copy of the
    /// positions otherwise).
    pub fn entry(&self, name: &str) -> Option<&IndexEntry<'data>> {
        let found = self
            .by_name
            .binary_search_by(|&i| {
                self.entries
                    .get(i)
                    .map_or(std::cmp::Ordering::Less, |e| e.name.as_bytes().cmp(name.as_bytes()))
            })
            .ok()?;
        self.by_name.get(found).and_then(|&i| self.entries.get(i))
    }

    /// The index positions of the entries that follow the entry at
    /// `position` physically (by descriptor offset), nearest first. A binary
    /// search: a composite head asks once, and a file may hold many heads.
    pub(crate) fn following(&self, position: usize) -> &[usize] {
        let offset_of = |i: usize| self.entries.get(i).map(IndexEntry::descriptor_offset);
        let key = offset_of(position);
        let first = self.by_offset.partition_point(|&i| offset_of(i) < key);
        // Entries share an offset only beside an empty region (permissive
        // mode, `descriptor_length` 0 and no data); index order ranks them.
        let start = self
            .by_offset
            .get(first..)
            .unwrap_or_default()
            .iter()
            .position(|&i| i == position)
            .map_or(self.by_offset.len(), |p| first.saturating_add(p).saturating_add(1));
        self.by_offset.get(start..).unwrap_or_default()
    }

    /// End of the area tensors may occupy: the KV section or the index.
    fn tensor_area_end(&self) -> u64 {
        match self.kv_range() {
            Some((start, _)) => start,
            None => self.trailer.index_offset.get(),
        }
    }

    fn kv_range(&self) -> Option<(u64, u64)> {
        let start = self.trailer.kv_offset.get();
        let len = u64::from(self.trailer.kv_length.get());
        (start != 0 || len != 0).then_some((start, start.saturating_add(len)))
    }
}
