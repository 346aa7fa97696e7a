//! The container (`file-format.md`): header, trailer, footer index, KV
//! section, and the placement of every region in the file.

use zerocopy::FromBytes;

use crate::cursor::{align_up, to_u64, Cursor};
use crate::error::{rule, Error, Field, Result, Scope};
use crate::kv::{self, KvEntry};
use crate::raw;

/// The 8 bytes every Hurray file starts with (`file-format.md` § File Header).
pub const FILE_MAGIC: &[u8; 8] = b"HRRYFILE";
const TRAILER_MAGIC: &[u8; 4] = b"HRRY";
const HEADER_LEN: u64 = 64;
const TRAILER_LEN: u64 = 40;
/// `name_length` (2) + the 32-byte fixed tail: the smallest an entry can
/// be, even with the (invalid) empty name, so an empty name is reported as
/// such rather than as a count that cannot fit.
const MIN_INDEX_ENTRY: u64 = 34;
/// The container major version this reader implements.
pub const CONTAINER_VERSION_MAJOR: u8 = 1;
/// The container minor version this reader implements: a file of a newer
/// minor version is read, content it may add after the last index or KV
/// entry skipped (`versioning.md` § Compatibility Matrix).
pub const CONTAINER_VERSION_MINOR: u8 = 0;

/// How strictly the reader applies the spec's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Reject everything the spec forbids (the default).
    #[default]
    Strict,
    /// Accept what the spec lets a reader accept: unknown layout, type and
    /// quantization tags and extension layout ids (the descriptor is kept,
    /// its data is never interpreted), sparse invariant scans skipped,
    /// oversized dense and parameter buffers (the layout buffers of CSC,
    /// CSR, COO and CSF must have their exact size in both modes), extra
    /// bytes after the last field of a descriptor, the index or the KV
    /// section (both modes skip them in a newer minor version), gaps and
    /// non-zero padding between regions, a data region not at the first
    /// boundary after its descriptor, a statistics `nnz` that disagrees
    /// with the descriptor's (the descriptor's is used;
    /// [`Tensor::statistics_nnz_mismatch`](crate::Tensor::statistics_nnz_mismatch)
    /// reports it), a negative or NaN statistics `value_stddev` or an
    /// `nm_n` above `nm_m`
    /// ([`Tensor::statistics_rule_violation`](crate::Tensor::statistics_rule_violation)
    /// reports it). Regions still never overlap.
    /// Bounds, overflow and alignment checks stay on: permissive never means
    /// unsafe. A torn composite is an error in both modes (its members are
    /// readable alone in both).
    Permissive,
}

/// Options for [`HurrayFile::parse`] and [`MappedFile::open`](crate::MappedFile::open).
///
/// ```
/// use hurray_reader::{Mode, Options};
/// let options = Options::strict().with_threads(4);
/// assert_eq!((options.mode, options.threads()), (Mode::Strict, 4));
/// assert_eq!(Options::default().threads(), 1);
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Strict (default) or permissive.
    pub mode: Mode,
    /// See [`threads`](Self::threads).
    threads: usize,
    /// See [`with_extension_layouts`](Self::with_extension_layouts).
    extension_layouts: &'static [u64],
}

impl Default for Options {
    fn default() -> Self {
        Options::strict()
    }
}

impl Options {
    /// Strict mode: every rule of the spec enforced; one thread.
    pub fn strict() -> Self {
        Options {
            mode: Mode::Strict,
            threads: 1,
            extension_layouts: &[],
        }
    }

    /// Permissive mode (see [`Mode::Permissive`]); one thread.
    pub fn permissive() -> Self {
        Options {
            mode: Mode::Permissive,
            ..Options::strict()
        }
    }

    /// These options with at most `threads` threads for the O(nnz)
    /// invariant scans; `0` counts as 1, more than 64 as 64. See
    /// [`threads`](Self::threads).
    #[must_use]
    pub fn with_threads(self, threads: usize) -> Self {
        Options {
            threads: threads.clamp(1, crate::kernels::threads::MAX_THREADS),
            ..self
        }
    }

    /// At most how many threads the O(nnz) invariant scans use (1 by
    /// default, at most 64): the CSC and CSR scan of a strict view
    /// ([`Tensor::csc`](crate::Tensor::csc), [`Tensor::csr`](crate::Tensor::csr)),
    /// and the CSC, CSR and sorted-COO scans of
    /// [`Tensor::validate_data`](crate::Tensor::validate_data) and
    /// [`HurrayFile::validate`]. The index array is cut into ranges of
    /// equal length, one per thread (`std::thread::scope`; a cut may fall
    /// inside a column), and arrays of fewer than 256 Ki entries per thread
    /// get fewer threads. Verdicts and errors do not depend on it: a
    /// failure is named by a sequential exact pass. With one thread the
    /// scans allocate nothing; with more, starting the threads allocates a
    /// constant amount (their handles and stacks), never anything
    /// proportional to the data. A thread the OS refuses to start (a limit
    /// on threads, no memory for its stack) fails nothing: its range is
    /// scanned on the calling thread.
    pub fn threads(&self) -> usize {
        self.threads.max(1)
    }

    /// True in strict mode.
    pub fn is_strict(&self) -> bool {
        self.mode == Mode::Strict
    }

    /// These options with the `extension_layout_id`s of the
    /// implementation-private layouts (layout tags `0xF0`–`0xFE`) that the
    /// caller recognises. Strict mode rejects a descriptor with any other
    /// id (`metadata.md` § Layout-Specific Fields › Extension Layouts: a
    /// reader that does not recognise the id MUST reject it unless
    /// permissive); by default the list is empty. Either way this crate
    /// does not interpret the data of such a tensor
    /// ([`Tensor::not_viewable`](crate::Tensor::not_viewable)): the caller
    /// reads its buffers' bytes ([`Tensor::buffers`](crate::Tensor::buffers))
    /// and its `extension_data`.
    ///
    /// ```
    /// use hurray_reader::Options;
    /// const OURS: &[u64] = &[7];
    /// let options = Options::strict().with_extension_layouts(OURS);
    /// assert!(options.recognises_extension_layout(7));
    /// assert!(!Options::strict().recognises_extension_layout(7));
    /// ```
    #[must_use]
    pub fn with_extension_layouts(self, ids: &'static [u64]) -> Self {
        Options {
            extension_layouts: ids,
            ..self
        }
    }

    /// Whether `extension_layout_id` is one of
    /// [`with_extension_layouts`](Self::with_extension_layouts)' ids.
    pub fn recognises_extension_layout(&self, extension_layout_id: u64) -> bool {
        self.extension_layouts.contains(&extension_layout_id)
    }
}

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

/// One entry of the footer index: a tensor's name and where its descriptor
/// and data lie. All offsets are absolute, in bytes.
#[derive(Clone, Copy)]
pub struct IndexEntry<'data> {
    position: usize,
    name: &'data str,
    /// Offset of the entry's `name_length` field.
    offset: u64,
    tail: &'data raw::IndexEntryTail,
}

/// The entry's fields, its name cut after a few dozen characters.
impl std::fmt::Debug for IndexEntry<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexEntry")
            .field("position", &self.position)
            .field("name", &crate::debug::Text(self.name))
            .field("offset", &self.offset)
            .field("descriptor_offset", &self.descriptor_offset())
            .field("descriptor_length", &self.descriptor_length())
            .field("data_offset", &self.data_offset())
            .field("data_length", &self.data_length())
            .finish()
    }
}

impl<'data> IndexEntry<'data> {
    /// The tensor's name.
    pub fn name(&self) -> &'data str {
        self.name
    }

    /// Position of this entry in the footer index.
    pub fn position(&self) -> usize {
        self.position
    }

    /// Offset of the descriptor, in bytes from the start of the file.
    pub fn descriptor_offset(&self) -> u64 {
        self.tail.descriptor_offset.get()
    }

    /// Length of the descriptor, in bytes.
    pub fn descriptor_length(&self) -> u64 {
        u64::from(self.tail.descriptor_length.get())
    }

    /// Offset of the first data buffer, in bytes from the start of the file.
    pub fn data_offset(&self) -> u64 {
        self.tail.data_offset.get()
    }

    /// Bytes from the first byte of buffer 0 to the last byte of the last buffer.
    pub fn data_length(&self) -> u64 {
        self.tail.data_length.get()
    }

    /// Offset of this entry (its `name_length` field) in the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Absolute offset (bytes) of a field of the fixed part that follows
    /// the name (`file-format.md` § Index Section), for pointing at it.
    pub fn field_offset(&self, field: EntryField) -> u64 {
        let name_len = to_u64(self.name.len());
        let tail = self.offset.saturating_add(2).saturating_add(name_len);
        tail.saturating_add(match field {
            EntryField::DescriptorOffset => 0,
            EntryField::DescriptorLength => 8,
            EntryField::DataOffset => 12,
            EntryField::DataLength => 20,
            EntryField::Flags => 28,
        })
    }

    /// The value of a field of the fixed part.
    pub fn field_value(&self, field: EntryField) -> u64 {
        match field {
            EntryField::DescriptorOffset => self.tail.descriptor_offset.get(),
            EntryField::DescriptorLength => u64::from(self.tail.descriptor_length.get()),
            EntryField::DataOffset => self.tail.data_offset.get(),
            EntryField::DataLength => self.tail.data_length.get(),
            EntryField::Flags => u64::from(self.tail.flags.get()),
        }
    }

    /// The raw fixed part of the entry.
    pub fn raw(&self) -> &'data raw::IndexEntryTail {
        self.tail
    }

    /// One past the last descriptor byte (checked at open).
    pub(crate) fn descriptor_end(&self) -> u64 {
        self.descriptor_offset().saturating_add(self.descriptor_length())
    }

    /// One past the last data byte (checked at open).
    pub(crate) fn data_end(&self) -> u64 {
        self.data_offset().saturating_add(self.data_length())
    }

    /// One past the last byte the entry's region occupies: the end of its
    /// data, or with no data bytes the end of its descriptor. An empty
    /// tensor's `data_offset` names a boundary it takes no bytes from: the
    /// next descriptor may follow the descriptor padded to 8 bytes or to
    /// `data_buffer_alignment` (NOTES.md 'Padding after a descriptor whose
    /// tensor is empty').
    pub(crate) fn region_end(&self) -> u64 {
        if self.data_length() == 0 {
            self.descriptor_end()
        } else {
            self.data_end()
        }
    }
}

/// The fields of an index entry after its name
/// ([`IndexEntry::field_offset`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryField {
    /// `descriptor_offset` (u64).
    DescriptorOffset,
    /// `descriptor_length` (u32).
    DescriptorLength,
    /// `data_offset` (u64).
    DataOffset,
    /// `data_length` (u64).
    DataLength,
    /// `flags` (u32, must be zero).
    Flags,
}

impl EntryField {
    /// Every field, in file order.
    pub const ALL: [EntryField; 5] = [
        EntryField::DescriptorOffset,
        EntryField::DescriptorLength,
        EntryField::DataOffset,
        EntryField::DataLength,
        EntryField::Flags,
    ];

    /// The spec's name of the field.
    pub fn name(self) -> &'static str {
        match self {
            EntryField::DescriptorOffset => "descriptor_offset",
            EntryField::DescriptorLength => "descriptor_length",
            EntryField::DataOffset => "data_offset",
            EntryField::DataLength => "data_length",
            EntryField::Flags => "flags",
        }
    }
}

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
    /// Parses the container: header, trailer, footer index and KV section,
    /// and checks where every region lies.
    ///
    /// `data` is the whole file: an mmap, a `Vec<u8>`, `include_bytes!`.
    /// Typed views need `data` aligned like the file's buffers (any mmap is;
    /// a `Vec<u8>` usually is to 8 or 16 bytes); a misaligned buffer gives
    /// [`Error::Misaligned`] when a typed view is requested, never UB.
    ///
    /// # Errors
    /// Every rule of `file-format.md` the container breaks, e.g.
    /// [`Error::FileTooSmall`], [`Error::BadMagic`],
    /// [`Error::IndexCrcMismatch`], [`Error::DuplicateName`],
    /// [`Error::OutOfRange`], [`Error::Layout`].
    ///
    /// # Example
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// assert_eq!(file.len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn parse(data: &'data [u8], options: Options) -> Result<Self> {
        let size = to_u64(data.len());
        let minimum = HEADER_LEN + TRAILER_LEN;
        if size < minimum {
            // What is there of the magic decides: a short file that does
            // not even start like a Hurray file is reported as such.
            let prefix = data.get(..FILE_MAGIC.len()).unwrap_or(data);
            if !FILE_MAGIC.starts_with(prefix) {
                return Err(bad_file_magic(prefix));
            }
            return Err(Error::FileTooSmall { size, minimum });
        }
        let header = raw::FileHeader::ref_from_prefix(data)
            .map(|(h, _)| h)
            .map_err(|_| Error::FileTooSmall { size, minimum })?;
        check_header(header)?;
        let trailer_offset = size - TRAILER_LEN;
        let trailer = data
            .get(data.len().saturating_sub(40)..)
            .and_then(|b| raw::Trailer::ref_from_bytes(b).ok())
            .ok_or(Error::FileTooSmall { size, minimum })?;
        check_trailer(header, trailer, trailer_offset)?;

        let index_bytes = section(
            data,
            trailer.index_offset.get(),
            trailer.index_length.get(),
            trailer_offset,
            "index",
            Field::new("index_offset"),
            trailer_offset,
        )?;
        let flags = header.file_flags.get();
        if flags & file_flags::HAS_INDEX_CRC32C != 0 {
            let computed = crc32c::crc32c(index_bytes);
            let stored = trailer.index_crc32c.get();
            if computed != stored {
                return Err(Error::IndexCrcMismatch {
                    offset: trailer_offset + 28,
                    stored,
                    computed,
                });
            }
        }
        // Bytes after the last index entry and after the last KV entry:
        // content a newer container minor version may add, skipped by the
        // section's length (versioning.md § Compatibility Matrix); in our
        // own minor version, an error unless permissive (NOTES.md 'Unknown
        // trailing content in the index and KV sections').
        let newer_minor = header.container_version_minor > CONTAINER_VERSION_MINOR;
        let reject_trailing = options.is_strict() && !newer_minor;
        let entries = parse_index(index_bytes, trailer.index_offset.get(), reject_trailing)?;

        let kv = match kv_section(data, header, trailer, trailer_offset)? {
            Some((bytes, base)) => kv::parse(bytes, base, reject_trailing)?,
            None => Vec::new(),
        };

        let by_name = sort_by_name(&entries)?;
        if flags & file_flags::SORTED_INDEX != 0 {
            check_sorted(&entries)?;
        }
        let mut by_offset: Vec<usize> = (0..entries.len()).collect();
        by_offset.sort_by_key(|&i| entries.get(i).map(IndexEntry::descriptor_offset));

        let file = HurrayFile {
            data,
            options,
            header,
            trailer,
            entries,
            by_name,
            by_offset,
            kv,
        };
        file.check_regions()?;
        Ok(file)
    }

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

    /// Checks every region's placement, from the index alone: descriptors
    /// and data inside the tensor area, data on `data_buffer_alignment`
    /// boundaries right after their descriptor, and (strict) regions in file
    /// order with only the allowed padding between them.
    fn check_regions(&self) -> Result<()> {
        let lower = self.header.first_descriptor_offset.get();
        let upper = self.tensor_area_end();
        if lower > upper && !self.entries.is_empty() {
            // No descriptor can fit: blame the header, not the first entry.
            return Err(Error::Layout {
                scope: Scope::File,
                field: Field::new("first_descriptor_offset"),
                offset: 20,
                found: lower,
                expected: format!(
                    "at most {upper}, where the tensor region ends (the KV section or, without one, the index starts)"
                )
                .into(),
                rule: rule::TENSOR_REGION,
            });
        }
        let dba = self.data_buffer_alignment();
        for e in &self.entries {
            let scope = || Scope::tensor(e.name);
            let d = e.descriptor_offset();
            let d_end = d.checked_add(e.descriptor_length());
            if d % 8 != 0 {
                return Err(Error::Invalid {
                    scope: scope(),
                    field: Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                    offset: e.field_offset(EntryField::DescriptorOffset),
                    value: d,
                    expected: "a multiple of 8",
                    rule: rule::DESCRIPTOR_PLACEMENT,
                });
            }
            match d_end {
                Some(end) if d >= lower && end <= upper => {}
                _ => {
                    return Err(Error::OutOfRange {
                        scope: scope(),
                        field: Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                        offset: e.field_offset(EntryField::DescriptorOffset),
                        start: d,
                        end: u128::from(d) + u128::from(e.descriptor_length()),
                        lower,
                        upper,
                        rule: rule::TENSOR_REGION,
                    })
                }
            }
            let d_end = d_end.unwrap_or(u64::MAX);
            let data_start = e.data_offset();
            let data_end = data_start.checked_add(e.data_length());
            // No data bytes: the offset takes none from the regions after
            // (see `region_end`) and may be the boundary after the
            // descriptor even where the tensor area or the file ends before.
            let upper = if e.data_length() == 0 {
                align_up(d_end, dba).unwrap_or(u64::MAX).max(upper)
            } else {
                upper
            };
            if data_start > upper || data_start < lower {
                return Err(Error::OutOfRange {
                    scope: scope(),
                    field: Field::member("index_entry", to_u64(e.position), "data_offset"),
                    offset: e.field_offset(EntryField::DataOffset),
                    start: data_start,
                    end: u128::from(data_start) + u128::from(e.data_length()),
                    lower,
                    upper,
                    rule: rule::TENSOR_REGION,
                });
            }
            if data_end.is_none_or(|end| end > upper) {
                return Err(Error::OutOfRange {
                    scope: scope(),
                    field: Field::member("index_entry", to_u64(e.position), "data_length"),
                    offset: e.field_offset(EntryField::DataLength),
                    start: data_start,
                    end: u128::from(data_start) + u128::from(e.data_length()),
                    lower,
                    upper,
                    rule: rule::TENSOR_REGION,
                });
            }
            if d_end > data_start {
                return Err(Error::Layout {
                    scope: scope(),
                    field: Field::member("index_entry", to_u64(e.position), "descriptor_length"),
                    offset: e.field_offset(EntryField::DescriptorLength),
                    found: e.descriptor_length(),
                    expected: format!(
                        "the descriptor to end by data_offset {data_start} (descriptor_offset {d} + descriptor_length <= data_offset)"
                    )
                    .into(),
                    rule: rule::DATA_PLACEMENT,
                });
            }
            if e.data_length() > 0 && data_start % dba != 0 {
                return Err(Error::DataOffsetMisaligned {
                    tensor: e.name.into(),
                    position: to_u64(e.position),
                    offset: e.field_offset(EntryField::DataOffset),
                    data_offset: data_start,
                    alignment: dba,
                });
            }
            if self.options.is_strict() {
                self.check_data_placement(e, d_end)?;
            }
        }
        if self.options.is_strict() {
            self.check_order()
        } else {
            self.check_disjoint()
        }
    }

    /// Permissive mode's part of [`check_order`](Self::check_order): the
    /// tensors' regions (descriptor to data end) do not overlap, whatever
    /// the gaps between them. Not a rule the spec states for permissive
    /// reading, but index entries aliasing one region would have
    /// `validate` scan its data once per entry: a million entries at 38
    /// bytes each, a million scans.
    fn check_disjoint(&self) -> Result<()> {
        let mut previous_end: Option<u64> = None;
        for e in self.entries_in_file_order() {
            let start = e.descriptor_offset();
            if let Some(end) = previous_end.filter(|&end| start < end) {
                return Err(Error::Layout {
                    scope: Scope::tensor(e.name),
                    field: Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                    offset: e.field_offset(EntryField::DescriptorOffset),
                    found: start,
                    expected: format!(
                        "at least {end}, where the previous tensor's region ends (regions never overlap, in either mode)"
                    )
                    .into(),
                    rule: rule::LAYOUT_ORDER,
                });
            }
            previous_end = Some(e.region_end().max(start));
        }
        Ok(())
    }

    /// Data starts at the first `data_buffer_alignment` boundary after the
    /// descriptor. A tensor with no data bytes may also be a composite head,
    /// whose data offset the writer may leave unpadded.
    fn check_data_placement(&self, e: &IndexEntry<'data>, d_end: u64) -> Result<()> {
        let dba = self.data_buffer_alignment();
        let aligned = align_up(d_end, dba).unwrap_or(u64::MAX);
        let data_start = e.data_offset();
        let ok = data_start == aligned
            || (e.data_length() == 0 && (data_start == d_end || Some(data_start) == align_up(d_end, 8)));
        if ok {
            return Ok(());
        }
        Err(Error::Layout {
            scope: Scope::tensor(e.name),
            field: Field::member("index_entry", to_u64(e.position), "data_offset"),
            offset: e.field_offset(EntryField::DataOffset),
            found: data_start,
            expected: format!(
                "{aligned}, the first data_buffer_alignment ({dba}) boundary after the descriptor's end {d_end}"
            )
            .into(),
            rule: rule::DATA_PLACEMENT,
        })
    }

    /// Regions follow each other in file order — tensors (by descriptor
    /// offset), then the KV section, then the index, then the trailer — each
    /// starting where the previous one ends, padded to 8 bytes or to
    /// `data_buffer_alignment` (NOTES.md: both writers' paddings are accepted).
    fn check_order(&self) -> Result<()> {
        let dba = self.data_buffer_alignment();
        let first = self.header.first_descriptor_offset.get();
        // `previous_end` is None before the first region.
        let check = |previous_end: Option<u64>, start: u64, scope: Scope, field: Field, offset: u64| -> Result<()> {
            let ok = match previous_end {
                None => start == first,
                Some(end) => {
                    start == align_up(end, 8).unwrap_or(u64::MAX) || start == align_up(end, dba).unwrap_or(u64::MAX)
                }
            };
            if ok {
                return Ok(());
            }
            let expected = match previous_end {
                None => format!("first_descriptor_offset {first}"),
                Some(end) => format!(
                    "the previous region's end {end} padded to 8 ({}) or to data_buffer_alignment ({})",
                    align_up(end, 8).unwrap_or(u64::MAX),
                    align_up(end, dba).unwrap_or(u64::MAX)
                ),
            };
            Err(Error::Layout {
                scope,
                field,
                offset,
                found: start,
                expected: expected.into(),
                rule: rule::LAYOUT_ORDER,
            })
        };
        let mut previous_end: Option<u64> = None;
        for e in self.entries_in_file_order() {
            check(
                previous_end,
                e.descriptor_offset(),
                Scope::tensor(e.name),
                Field::member("index_entry", to_u64(e.position), "descriptor_offset"),
                e.field_offset(EntryField::DescriptorOffset),
            )?;
            previous_end = Some(e.region_end());
        }
        // With no tensors, the next section may start at the first descriptor offset.
        let mut previous_end = previous_end.unwrap_or(first);
        let trailer_offset = to_u64(self.data.len()).saturating_sub(TRAILER_LEN);
        if let Some((start, end)) = self.kv_range() {
            check(
                Some(previous_end),
                start,
                Scope::File,
                Field::new("kv_offset"),
                trailer_offset + 16,
            )?;
            previous_end = end;
        }
        let index_start = self.trailer.index_offset.get();
        check(
            Some(previous_end),
            index_start,
            Scope::File,
            Field::new("index_offset"),
            trailer_offset,
        )?;
        let index_end = index_start.saturating_add(self.trailer.index_length.get());
        if index_end != trailer_offset {
            return Err(Error::Layout {
                scope: Scope::File,
                field: Field::new("index_length"),
                offset: trailer_offset + 8,
                found: self.trailer.index_length.get(),
                expected: format!("the index to end where the trailer starts, at {trailer_offset}").into(),
                rule: rule::LAYOUT_ORDER,
            });
        }
        Ok(())
    }
}

/// The file does not start with `HRRYFILE`; `found` is what it starts with
/// (fewer than 8 bytes in a shorter file).
fn bad_file_magic(found: &[u8]) -> Error {
    Error::BadMagic {
        scope: Scope::File,
        field: Field::new("magic"),
        offset: 0,
        expected: "HRRYFILE",
        found: found.escape_ascii().to_string(),
        rule: rule::FILE_HEADER,
    }
}

fn check_header(h: &raw::FileHeader) -> Result<()> {
    if &h.magic != FILE_MAGIC {
        return Err(bad_file_magic(&h.magic));
    }
    if h.container_version_major != CONTAINER_VERSION_MAJOR {
        return Err(Error::UnsupportedVersion {
            scope: Scope::File,
            field: Field::new("container_version_major"),
            offset: 8,
            found: h.container_version_major,
            supported: CONTAINER_VERSION_MAJOR,
            rule: rule::FILE_HEADER,
        });
    }
    reserved_zero(&h.reserved, Field::new("_reserved"), 10, rule::FILE_HEADER, Scope::File)?;
    let flags = h.file_flags.get();
    if flags & !file_flags::KNOWN != 0 {
        return Err(Error::Reserved {
            scope: Scope::File,
            field: Field::new("file_flags"),
            offset: 12,
            value: u64::from(flags & !file_flags::KNOWN),
            byte: None,
            rule: rule::FILE_FLAGS,
        });
    }
    let dba = h.data_buffer_alignment.get();
    if !dba.is_power_of_two() || !(4096..=2 * 1024 * 1024).contains(&dba) {
        return Err(Error::Invalid {
            scope: Scope::File,
            field: Field::new("data_buffer_alignment"),
            offset: 16,
            value: u64::from(dba),
            expected: "a power of two in [4096, 2097152]",
            rule: rule::FILE_HEADER,
        });
    }
    let first = h.first_descriptor_offset.get();
    if first < HEADER_LEN || !first.is_multiple_of(8) {
        return Err(Error::Invalid {
            scope: Scope::File,
            field: Field::new("first_descriptor_offset"),
            offset: 20,
            value: first,
            expected: "a multiple of 8, at least 64",
            rule: rule::FILE_HEADER,
        });
    }
    reserved_zero(
        &h.reserved_header,
        Field::new("_reserved_header"),
        36,
        rule::FILE_HEADER,
        Scope::File,
    )
}

fn check_trailer(h: &raw::FileHeader, t: &raw::Trailer, offset: u64) -> Result<()> {
    // The magic is checked before any other trailer field is trusted.
    if &t.trailer_magic != TRAILER_MAGIC {
        return Err(Error::BadMagic {
            scope: Scope::File,
            field: Field::new("trailer_magic"),
            offset: offset + 36,
            expected: "HRRY as the file's last 4 bytes (a file cut short, or with bytes appended, ends otherwise)",
            found: t.trailer_magic.escape_ascii().to_string(),
            rule: rule::TRAILER,
        });
    }
    reserved_zero(
        &t.reserved,
        Field::sub("trailer", "_reserved"),
        offset + 32,
        rule::TRAILER,
        Scope::File,
    )?;
    let flags = h.file_flags.get();
    if flags & file_flags::HAS_INDEX_CRC32C == 0 && t.index_crc32c.get() != 0 {
        return Err(Error::Invalid {
            scope: Scope::File,
            field: Field::new("index_crc32c"),
            offset: offset + 28,
            value: u64::from(t.index_crc32c.get()),
            expected: "0 when HAS_INDEX_CRC32C is clear",
            rule: rule::FILE_FLAGS,
        });
    }
    if t.index_length.get() < 8 {
        return Err(Error::Invalid {
            scope: Scope::File,
            field: Field::new("index_length"),
            offset: offset + 8,
            value: t.index_length.get(),
            expected: "at least 8 (room for index_entry_count)",
            rule: rule::INDEX,
        });
    }
    let kv_present = t.kv_offset.get() != 0 || t.kv_length.get() != 0;
    if flags & file_flags::HAS_KV_METADATA != 0 && !kv_present {
        return Err(Error::Invalid {
            scope: Scope::File,
            field: Field::new("kv_offset"),
            offset: offset + 16,
            value: 0,
            expected: "a KV section when HAS_KV_METADATA is set",
            rule: rule::KV_FLAG,
        });
    }
    Ok(())
}

/// Errors if any byte of a reserved field is non-zero: at the field's offset,
/// naming the first non-zero byte.
pub(crate) fn reserved_zero(bytes: &[u8], field: Field, offset: u64, rule: &'static str, scope: Scope) -> Result<()> {
    match bytes.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(i) => Err(Error::Reserved {
            scope,
            field,
            offset,
            value: u64::from(bytes.get(i).copied().unwrap_or(0)),
            byte: Some(to_u64(i)),
            rule,
        }),
    }
}

/// The bytes of a section located by the trailer, which must be 8-aligned,
/// after the header and before `limit` (the trailer, or the index).
fn section<'a>(
    data: &'a [u8],
    start: u64,
    length: u64,
    limit: u64,
    name: &'static str,
    field: Field,
    trailer_offset: u64,
) -> Result<&'a [u8]> {
    let field_offset = match field.name {
        "kv_offset" => trailer_offset + 16,
        _ => trailer_offset,
    };
    let end = start.checked_add(length);
    let inside = end.is_some_and(|end| start >= HEADER_LEN && end <= limit);
    if !inside {
        return Err(Error::SectionRange {
            field,
            offset: field_offset,
            section: name,
            start,
            length,
            lower: HEADER_LEN,
            upper: limit,
            rule: if name == "index" {
                rule::TRAILER
            } else {
                rule::KV_SECTION
            },
        });
    }
    if !start.is_multiple_of(8) {
        return Err(Error::Invalid {
            scope: Scope::File,
            field,
            offset: field_offset,
            value: start,
            expected: "a multiple of 8",
            rule: if name == "index" {
                rule::INDEX_SECTION
            } else {
                rule::KV_SECTION
            },
        });
    }
    let range = usize::try_from(start)
        .ok()
        .zip(end.and_then(|e| usize::try_from(e).ok()));
    range.and_then(|(s, e)| data.get(s..e)).ok_or(Error::SectionRange {
        field,
        offset: field_offset,
        section: name,
        start,
        length,
        lower: HEADER_LEN,
        upper: limit,
        rule: rule::TRAILER,
    })
}

fn kv_section<'a>(
    data: &'a [u8],
    _header: &raw::FileHeader,
    t: &raw::Trailer,
    trailer_offset: u64,
) -> Result<Option<(&'a [u8], u64)>> {
    let start = t.kv_offset.get();
    let length = u64::from(t.kv_length.get());
    if start == 0 && length == 0 {
        return Ok(None);
    }
    // NOTES.md 'HAS_KV_METADATA': the trailer fields are authoritative.
    let bytes = section(
        data,
        start,
        length,
        t.index_offset.get(),
        "KV section",
        Field::new("kv_offset"),
        trailer_offset,
    )?;
    Ok(Some((bytes, start)))
}

/// Parses the footer index; `reject_trailing`: bytes after the last entry
/// are an error rather than skipped.
fn parse_index(bytes: &[u8], base: u64, reject_trailing: bool) -> Result<Vec<IndexEntry<'_>>> {
    let mut c = Cursor::new(bytes, base, "index", rule::INDEX);
    let count = c.u64(Field::new("index_entry_count"))?;
    let max = to_u64(c.remaining()) / MIN_INDEX_ENTRY;
    if count > max {
        return Err(Error::CountTooLarge {
            scope: Scope::File,
            field: Field::new("index_entry_count"),
            offset: base,
            count,
            max,
            section: "index",
            rule: rule::INDEX,
        });
    }
    let mut entries = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for i in 0..count {
        let offset = c.offset();
        let name_length = c.u16(Field::member("index_entry", i, "name_length"))?;
        if name_length == 0 {
            return Err(Error::Invalid {
                scope: Scope::File,
                field: Field::member("index_entry", i, "name_length"),
                offset,
                value: 0,
                expected: "at least 1",
                rule: rule::INDEX,
            });
        }
        let name_offset = c.offset();
        let name_bytes = c.take(u64::from(name_length), Field::member("index_entry", i, "name"))?;
        let name = std::str::from_utf8(name_bytes).map_err(|_| Error::InvalidUtf8 {
            scope: Scope::File,
            field: Field::member("index_entry", i, "name"),
            offset: name_offset,
            rule: rule::INDEX,
        })?;
        let tail_offset = c.offset();
        let tail = c.read::<raw::IndexEntryTail>(Field::member("index_entry", i, "descriptor_offset"))?;
        if tail.flags.get() != 0 {
            return Err(Error::Reserved {
                scope: Scope::tensor(name),
                field: Field::member("index_entry", i, "flags"),
                offset: tail_offset + 28,
                value: u64::from(tail.flags.get()),
                byte: None,
                rule: rule::INDEX,
            });
        }
        entries.push(IndexEntry {
            position: usize::try_from(i).unwrap_or(usize::MAX),
            name,
            offset,
            tail,
        });
    }
    if reject_trailing && c.remaining() != 0 {
        return Err(Error::TrailingBytes {
            scope: Scope::File,
            section: "index",
            offset: c.offset(),
            count: to_u64(c.remaining()),
            rule: rule::INDEX,
        });
    }
    Ok(entries)
}

/// Orders entry positions by name bytes and rejects duplicate names.
fn sort_by_name(entries: &[IndexEntry<'_>]) -> Result<Vec<usize>> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|&a, &b| {
        let name = |i: usize| entries.get(i).map(|e| e.name.as_bytes());
        name(a).cmp(&name(b)).then(a.cmp(&b))
    });
    for pair in order.windows(2) {
        let (Some(a), Some(b)) = (
            pair.first().and_then(|&i| entries.get(i)),
            pair.get(1).and_then(|&i| entries.get(i)),
        ) else {
            continue;
        };
        if a.name == b.name {
            return Err(Error::DuplicateName {
                name: b.name.into(),
                first: to_u64(a.position),
                second: to_u64(b.position),
                offset: b.offset.saturating_add(2),
            });
        }
    }
    Ok(order)
}

/// With `SORTED_INDEX`, names must be strictly increasing in index order.
fn check_sorted(entries: &[IndexEntry<'_>]) -> Result<()> {
    for pair in entries.windows(2) {
        let (Some(a), Some(b)) = (pair.first(), pair.get(1)) else {
            continue;
        };
        if a.name.as_bytes() >= b.name.as_bytes() {
            return Err(Error::IndexNotSorted {
                entry: to_u64(b.position),
                name: b.name.into(),
                previous: a.name.into(),
                offset: b.offset.saturating_add(2),
            });
        }
    }
    Ok(())
}
