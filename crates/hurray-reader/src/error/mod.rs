//! The crate's one error type, [`Error`].
//!
//! Every variant about the file's bytes carries one [`Location`]: *where*
//! (the tensor or KV key when there is one, the field and the absolute byte
//! offset in the file) and *which rule* was broken (spec file and section);
//! the accessors [`Error::location`], [`Error::tensor`], [`Error::field`],
//! [`Error::offset`] and [`Error::rule`] give the same without parsing the
//! message. Errors about a request (a name not in the index, a view of the
//! wrong element type, a column past the end) and I/O errors name what was
//! asked. The `Display` form is one line:
//!
//! ```text
//! tensor 'A': col_ptr[3] at offset 12312: 2 is less than col_ptr[2] = 3 (must be non-decreasing) (layouts/csc.md § Storage Invariants (2))
//! ```
//!
//! Errors are built only on the failure path, so the variants that carry a
//! name (`Box<str>`) cost nothing while parsing succeeds.
//!
//! Here the enum and the helpers of its messages; beside it:
//!
//! - `location.rs`: [`Location`] and its parts ([`Scope`], [`Field`]), and
//!   [`Number`];
//! - `access.rs`: the accessors;
//! - `rule.rs`: the spec citations, in one place;
//! - `shown.rs`: how messages show names, paths and byte counts.

mod access;
mod location;
pub(crate) mod rule;
mod shown;

pub use location::{Field, Location, Number, Scope};
pub(crate) use shown::shown_bytes;
pub use shown::{shown_name, shown_path};

/// Shorthand for `Result<T, hurray_reader::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An I/O error about `path`: `PATH: what: the system's message`.
pub(crate) fn io_error(path: &std::path::Path, what: &str, e: &std::io::Error) -> Error {
    Error::Io {
        kind: e.kind(),
        message: format!("{}: {what}: {e}", shown_path(path)).into(),
    }
}

/// Everything that can go wrong while reading a Hurray file.
///
/// Every variant about the file's bytes carries one [`Location`], its `at`
/// field: the scope (the tensor or KV key, or the file as a whole), the
/// field as the spec spells it, the absolute byte offset (for
/// [`HurrayFile::parse`] over a slice: in that slice) and the spec rule
/// broken. Its message starts with the location and ends with the rule.
/// [`location`](Self::location) gives it, and [`tensor`](Self::tensor),
/// [`field`](Self::field), [`offset`](Self::offset) and
/// [`rule`](Self::rule) its parts, the same way for all variants. The other
/// variants are about a request (a name not in the index, a view of the
/// wrong element type, a column past the end) or the system (I/O,
/// allocation), and name what was asked:
///
/// ```
/// use hurray_reader::{Error, HurrayFile, Options};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/invalid/csc_indices_unsorted.hry");
/// let bytes = hurray_reader::AlignedBytes::read(path)?;
/// let file = HurrayFile::parse(&bytes, Options::strict())?;
/// // The strict view runs the storage invariant scan, which fails.
/// let e = file.tensor("t")?.csc::<f32>().unwrap_err();
/// assert!(matches!(e, Error::NotIncreasing { .. }));
/// assert_eq!(e.location().map(|at| at.offset), Some(8200));
/// assert_eq!(e.tensor(), Some("t"));
/// assert_eq!(e.field().map(|f| f.to_string()).as_deref(), Some("row_indices[1]"));
/// assert_eq!(e.offset(), Some(8200));
/// assert_eq!(e.rule(), Some("layouts/csc.md § Storage Invariants (3)"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// [`HurrayFile::parse`]: crate::HurrayFile::parse
#[non_exhaustive]
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file cannot even hold the 64-byte header and the 40-byte trailer.
    /// Its offset is the file size: where the missing bytes would start.
    #[error(
        "file size {size}: the file ends at offset {size}, below the minimum {minimum} bytes (64-byte header + 40-byte trailer) ({})",
        rule::FILE_LAYOUT
    )]
    FileTooSmall {
        /// File size in bytes.
        size: u64,
        /// The minimum, 104 bytes.
        minimum: u64,
    },

    /// A structure runs past the end of the bytes that contain it (the
    /// index, the KV section, a descriptor's `descriptor_length`, ...).
    #[error("{at}: needs {need} bytes but only {have} remain in the {section} ({})", .at.rule)]
    Truncated {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Bytes the field needs.
        need: u64,
        /// Bytes left in the section.
        have: u64,
        /// The enclosing section (`index`, `KV section`, `descriptor`, ...).
        section: &'static str,
    },

    /// A magic number does not match.
    #[error("{at}: expected {expected}, found \"{found}\" ({})", .at.rule)]
    BadMagic {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The expected bytes, as text.
        expected: &'static str,
        /// The bytes found there, ASCII with the others escaped (`\x03`).
        found: String,
    },

    /// A major version other than the one this reader supports: newer
    /// (`versioning.md` § Compatibility Matrix, `R.major < W.major`) or older
    /// (`R.major > W.major`, no migration path defined); for a quantization
    /// `scheme_version`, a version other than the one defined.
    #[error("{at}: version {found} is {} the supported major version {supported} ({})", newer_or_older(*.found, *.supported), .at.rule)]
    UnsupportedVersion {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The version in the file.
        found: u8,
        /// The highest major version this reader supports.
        supported: u8,
    },

    /// A field holds a value the spec does not allow.
    #[error("{at}: value {value} is not allowed, expected {expected} ({})", .at.rule)]
    Invalid {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The value found (integers as is, floats as their bits).
        value: u64,
        /// What the spec allows, in words.
        expected: &'static str,
    },

    /// A number the spec does not allow where it is shown as a number: a
    /// quantization scale (`NaN`, `inf`, `0.0`) or zero point (`-200`).
    #[error("{at}: value {value} is not allowed, expected {expected} ({})", .at.rule)]
    InvalidNumber {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The value found.
        value: Number,
        /// What the spec allows, in words.
        expected: &'static str,
    },

    /// Reserved bytes or flag bits, or padding, are not zero.
    #[error("{at}: {} ({})", not_zero(.at, *.value, *.byte), .at.rule)]
    Reserved {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The offending bits (for flags) or the first non-zero byte.
        value: u64,
        /// For a field of reserved bytes: which of its bytes (from 0) is the
        /// first non-zero one.
        byte: Option<u64>,
    },

    /// A tag this reader does not recognise (strict mode), or one the spec
    /// reserves or forbids.
    #[error("{at}: tag 0x{value:02x} is {why} ({})", .at.rule)]
    UnknownTag {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The tag.
        value: u8,
        /// `reserved`, `invalid` or `not recognised`.
        why: &'static str,
    },

    /// The index CRC-32C does not match the index bytes.
    #[error("{at}: stored 0x{stored:08x} but the index bytes give 0x{computed:08x} ({})", .at.rule)]
    IndexCrcMismatch {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The CRC stored in the trailer.
        stored: u32,
        /// The CRC of the index bytes.
        computed: u32,
    },

    /// A section located by the trailer (index, KV) is not inside the file
    /// area where it belongs.
    #[error("{at}: the {section} at {start} with length {length} does not lie within [{lower}, {upper}) ({})", .at.rule)]
    SectionRange {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// `index` or `KV section`.
        section: &'static str,
        /// Section start.
        start: u64,
        /// Section length in bytes.
        length: u64,
        /// First byte the section may occupy.
        lower: u64,
        /// One past the last byte it may occupy.
        upper: u64,
    },

    /// A count read from the file is larger than the bytes that should hold
    /// it can contain; rejected before anything is allocated for it.
    #[error("{at}: {count} cannot fit, at most {max} fit in the {section} ({})", .at.rule)]
    CountTooLarge {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The count found.
        count: u64,
        /// The largest count the remaining bytes allow.
        max: u64,
        /// The enclosing section.
        section: &'static str,
    },

    /// A length-delimited section holds bytes after its last field.
    #[error("{at}: {count} unexpected bytes after the last field ({})", .at.rule)]
    TrailingBytes {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// How many there are.
        count: u64,
    },

    /// A name, key or string is not valid UTF-8.
    #[error("{at}: not valid UTF-8 ({})", .at.rule)]
    InvalidUtf8 {
        /// Where: the scope, field, offset and rule.
        at: Location,
    },

    /// Two index entries carry the same tensor name.
    #[error("{at}: duplicate name '{}' (entries {first} and {second}) ({})", shown_name(.name), .at.rule)]
    DuplicateName {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The repeated name.
        name: Box<str>,
        /// Position of the first entry with that name.
        first: u64,
        /// Position of the second.
        second: u64,
    },

    /// Two KV entries carry the same key.
    #[error("{at}: duplicate key '{}' (KV entries {first} and {second}) ({})", shown_name(.key), .at.rule)]
    DuplicateKey {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The repeated key.
        key: Box<str>,
        /// Position of the first entry with that key.
        first: u64,
        /// Position of the second.
        second: u64,
    },

    /// `SORTED_INDEX` is set but the entries are not in UTF-8 byte order.
    #[error("{at}: '{}' sorts before the previous name '{}' although SORTED_INDEX is set ({})", shown_name(.name), shown_name(.previous), .at.rule)]
    IndexNotSorted {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Its name.
        name: Box<str>,
        /// The previous entry's name.
        previous: Box<str>,
    },

    /// A range given by the file (a descriptor, a data region, a buffer)
    /// does not lie where it must.
    #[error("{at}: [{start}, {end}) is outside [{lower}, {upper}) ({})", .at.rule)]
    OutOfRange {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Range start (absolute).
        start: u64,
        /// Range end (absolute, exclusive): start + length, which may pass
        /// `u64::MAX` when the length is wrong.
        end: u128,
        /// Lower bound of the allowed area.
        lower: u64,
        /// Upper bound (exclusive).
        upper: u64,
    },

    /// Regions are not laid out as the container requires: an overlap, a
    /// gap that is not one of the two allowed paddings, a misplaced start.
    #[error("{at}: found {found}, expected {expected} ({})", .at.rule)]
    Layout {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The value found.
        found: u64,
        /// What was expected, in words with numbers.
        expected: Box<str>,
    },

    /// A tensor's first data buffer is not on a `data_buffer_alignment` boundary.
    #[error("{at}: {data_offset} is not a multiple of data_buffer_alignment {alignment} ({})", .at.rule)]
    DataOffsetMisaligned {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The data offset.
        data_offset: u64,
        /// The header's `data_buffer_alignment`.
        alignment: u64,
    },

    /// The index's `descriptor_length` differs from the descriptor's own.
    /// Reported at the index entry's field: the index delimits the
    /// descriptor's bytes, and the message gives where the descriptor's
    /// copy is.
    #[error("{at}: the index says {index_value}, the descriptor (its descriptor_length at offset {descriptor_offset}) says {descriptor_value} ({})", .at.rule)]
    DescriptorLengthMismatch {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Offset of the descriptor's own `descriptor_length` field.
        descriptor_offset: u64,
        /// Value in the footer index.
        index_value: u64,
        /// Value in the descriptor.
        descriptor_value: u64,
    },

    /// The index's `data_length` differs from what the buffer table implies.
    #[error("{at}: the index says {index_value}, the buffer table spans {expected} bytes ({})", .at.rule)]
    DataLengthMismatch {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Value in the footer index.
        index_value: u64,
        /// Span of the buffers, first byte of buffer 0 to last byte of the last.
        expected: u64,
    },

    /// A rank the layout does not allow.
    #[error("{at}: rank {rank} is not allowed for layout {layout}, expected {expected} ({})", .at.rule)]
    RankNotAllowed {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The rank.
        rank: u32,
        /// The layout's name.
        layout: &'static str,
        /// The allowed ranks, in words.
        expected: &'static str,
    },

    /// A shape carries the dynamic-dimension sentinel where a size is needed.
    #[error("{at}: dynamic dimension (0xFFFFFFFFFFFFFFFF) in a stored tensor; buffer sizes cannot be computed from it ({})", .at.rule)]
    DynamicDimension {
        /// Where: the scope, field, offset and rule.
        at: Location,
    },

    /// A size computed from file fields overflows `u64`.
    #[error("{at}: {what} overflows 64 bits ({})", .at.rule)]
    Overflow {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The computation, e.g. `element count (product of shape)`.
        what: &'static str,
    },

    /// A buffer's `byte_size` is not what the layout and element type require.
    #[error("{}{} ({role}) at offset {}: byte_size {byte_size}, expected {}{expected} ({})", .at.scope, .at.field, .at.offset, if *.exact { "" } else { "at least " }, .at.rule)]
    BufferSize {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The buffer's name in the layout (`values`, `row_indices`, ...).
        role: &'static str,
        /// The declared size.
        byte_size: u64,
        /// The required size.
        expected: u64,
        /// Whether the size must be exact (sparse) or a minimum (dense).
        exact: bool,
    },

    /// A sparse tensor's `nnz` field disagrees with its `values` and index
    /// buffers, whose sizes agree with each other on another count (the
    /// layout's § Buffer Size derives both from `nnz`, which is
    /// authoritative). Reported instead of [`Error::BufferSize`] when the
    /// strict size check fails that way.
    #[error("{at}: {nnz}, but {buffers} both hold {held} entries ({})", .at.rule)]
    NnzMismatch {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The descriptor's `nnz`.
        nnz: u64,
        /// The entries the buffers hold, by their `byte_size`.
        held: u64,
        /// The buffers, e.g. `values and row_indices`.
        buffers: &'static str,
    },

    /// A buffer's file offset is not a multiple of its declared alignment.
    #[error("{at}: declares {alignment} but the buffer starts at file offset {file_offset} ({})", .at.rule)]
    AlignmentNotDelivered {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The declared alignment.
        alignment: u64,
        /// Where the buffer actually starts.
        file_offset: u64,
    },

    /// A pointer array does not start at 0 (CSC `col_ptr`, CSR `row_ptr`,
    /// CSF `pos_L`, block-paged `seq_ptr`).
    #[error("{at}: is {value}, must be 0 ({})", .at.rule)]
    PtrFirst {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The value found.
        value: u64,
    },

    /// A pointer array's last entry is not the stored count (`nnz`, ...).
    #[error("{at}: is {value}, must be {expected_name} = {expected} ({})", .at.rule)]
    PtrLast {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The value found.
        value: u64,
        /// What it must be (`nnz`, `n_L`, ...).
        expected_name: &'static str,
        /// The required value (or bound).
        expected: u64,
    },

    /// A pointer array decreases.
    #[error("{at}: {value} is less than {} = {previous} (must be non-decreasing) ({})", before(&.at.field), .at.rule)]
    PtrDecreasing {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Its value.
        value: u64,
        /// The value before it.
        previous: u64,
    },

    /// A pointer before the last is above the stored count while the last
    /// is the count, so the array decreases after it: reported at this
    /// entry, the damaged one, rather than at the smaller one after it (CSC
    /// `col_ptr`, CSR `row_ptr`). When the last entry is not the count
    /// either, that is [`Error::PtrLast`].
    #[error("{at}: {value} is greater than {} ({})", too_large(&.at.field, *.nnz, *.last, *.next), .at.rule)]
    PtrTooLarge {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Its value.
        value: u64,
        /// The stored count.
        nnz: u64,
        /// Position of the array's last element.
        last: u64,
        /// The entry right after it, when that one is smaller (the pair
        /// that decreases).
        next: Option<u64>,
    },

    /// Indices within one compressed slice (a CSC column, a CSR row, a CSF
    /// parent) are not strictly increasing: unsorted or duplicated.
    #[error("{at}: in {slice} {slice_index}, {value} at {} position {} {} (indices must be strictly increasing, no duplicates) ({})", .at.field.name, .at.field.index.unwrap_or_default(), out_of_order(*.value, *.previous), .at.rule)]
    NotIncreasing {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// `column`, `row` or `parent`.
        slice: &'static str,
        /// Which column/row/parent.
        slice_index: u64,
        /// Its value.
        value: u64,
        /// The element before it in the same slice.
        previous: u64,
    },

    /// A stored index is not below its dimension's size.
    #[error("{at}: index {value} is out of bounds, must be < {bound_name} = {bound} ({})", .at.rule)]
    IndexOutOfBounds {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Its value.
        value: u64,
        /// The exclusive bound (the dimension's size).
        bound: u64,
        /// What the bound is (`nrows`, `ncols`, `shape[2]`, `num_pages`).
        bound_name: Field,
    },

    /// COO: two entries share a coordinate, or `is_sorted` is set and the
    /// entries are not in strictly increasing lexicographic order.
    #[error("{at}: entry {position}: {what} ({})", .at.rule)]
    CooOrder {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Position of the offending entry (an entry is `rank` coordinates).
        position: u64,
        /// What is wrong, in words.
        what: &'static str,
    },

    /// The statistics section's `nnz` disagrees with the descriptor's.
    #[error("{at}: {statistics_nnz} differs from the descriptor's nnz {nnz} ({})", .at.rule)]
    StatisticsNnzMismatch {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The statistics value.
        statistics_nnz: u64,
        /// The authoritative descriptor value.
        nnz: u64,
    },

    /// Fewer tensors follow a composite head than its `member_count`.
    #[error("{at}: the head declares {member_count} members but only {found} tensors follow it ({})", .at.rule)]
    TornComposite {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// Declared members.
        member_count: u64,
        /// Tensors that follow.
        found: u64,
    },

    /// A composite's members break a composition rule.
    #[error("{}member '{}': {} at offset {}: {what} ({})", .at.scope, shown_name(.member), .at.field, .at.offset, .at.rule)]
    Composite {
        /// Where: the scope, field, offset and rule.
        at: Location,
        /// The member concerned.
        member: Box<str>,
        /// What is wrong, in words.
        what: &'static str,
    },

    /// A view was asked for an element type that is not the tensor's.
    #[error("tensor '{}': type_tag: the tensor holds {actual}, not {requested}; a view never reinterprets bytes", shown_name(.tensor))]
    TypeMismatch {
        /// The tensor.
        tensor: Box<str>,
        /// The requested element type.
        requested: &'static str,
        /// The tensor's element type.
        actual: &'static str,
    },

    /// A view was asked for a layout that is not the tensor's.
    #[error("tensor '{}': layout_tag: the tensor is {actual}, not {requested}", shown_name(.tensor))]
    LayoutMismatch {
        /// The tensor.
        tensor: Box<str>,
        /// The requested layout (`csc`, ..., or `a dense layout` for the
        /// dense accessors, which read every dense layout).
        requested: &'static str,
        /// The tensor's layout.
        actual: &'static str,
    },

    /// The bytes handed to [`HurrayFile::parse`](crate::HurrayFile::parse)
    /// do not start at an address aligned enough for a typed view.
    #[error("tensor '{}': buffer[{buffer}] ({role}) at offset {offset}: its address is not aligned to {align} bytes for a typed view; parse from an aligned buffer (MappedFile::open, or AlignedBytes::read / AlignedBytes::from_slice) or read the bytes (Buffer::bytes)", shown_name(.tensor))]
    Misaligned {
        /// The tensor.
        tensor: Box<str>,
        /// Position in the buffer table.
        buffer: u8,
        /// The buffer's role.
        role: &'static str,
        /// File offset of the buffer.
        offset: u64,
        /// Alignment the element type needs.
        align: u64,
    },

    /// The tensor's data may not be interpreted (an unknown tag accepted in
    /// permissive mode, a composite head, an extension type, ...).
    #[error("tensor '{}': {why}", shown_name(.tensor))]
    NotViewable {
        /// The tensor.
        tensor: Box<str>,
        /// Why, with the rule.
        why: &'static str,
    },

    /// A row, column or element index passed to an accessor is out of range.
    #[error("tensor '{}': {what} {index} is out of range, the {what} count is {bound}", shown_name(.tensor))]
    IndexArgument {
        /// The tensor.
        tensor: Box<str>,
        /// `row`, `column`, `element`, `buffer`, ...; on a transposed view
        /// (`transpose()` of a CSC or CSR view), `transpose's row` or
        /// `transpose's column`.
        what: &'static str,
        /// The index passed.
        index: u64,
        /// The exclusive bound.
        bound: u64,
    },

    /// A coordinate of a lookup's index lies outside the tensor's shape.
    #[error("tensor '{}': coordinate {axis} is {value}, must be < shape[{axis}] = {bound}", shown_name(.tensor))]
    CoordinateArgument {
        /// The tensor.
        tensor: Box<str>,
        /// Which coordinate (the dimension).
        axis: u64,
        /// Its value.
        value: u64,
        /// The dimension's size.
        bound: u64,
    },

    /// A vector passed to a computation (e.g. [`CscView::mul_vec`](crate::CscView::mul_vec))
    /// has the wrong number of entries for the matrix, or a lookup's index
    /// the wrong number of coordinates for the tensor's rank.
    #[error("tensor '{}': {what} has length {len}, expected {expected_name} = {expected}", shown_name(.tensor))]
    LengthMismatch {
        /// The tensor.
        tensor: Box<str>,
        /// Which argument: `x` or `y`, or a lookup's `index`.
        what: &'static str,
        /// Its length.
        len: u64,
        /// What its length must equal: `nrows`, `ncols` or `rank`; on a
        /// transposed view (`transpose()` of a CSC or CSR view), `nrows of
        /// the transpose` or `ncols of the transpose`.
        expected_name: &'static str,
        /// That length.
        expected: u64,
    },

    /// A block of columns (rows) asked of a CSC (CSR) view
    /// ([`CscView::column_block`](crate::CscView::column_block)) that is
    /// reversed or reaches past the last one.
    #[error("tensor '{}': {what} block {start}..{end} is not within 0..{bound}", shown_name(.tensor))]
    BlockArgument {
        /// The tensor.
        tensor: Box<str>,
        /// `column` or `row` (on a transposed view, `transpose's column`
        /// or `transpose's row`).
        what: &'static str,
        /// The block's first column (row).
        start: u64,
        /// One past its last.
        end: u64,
        /// The view's number of columns (rows).
        bound: u64,
    },

    /// An explicitly requested owned copy (e.g. [`CscView::to_csr`](crate::CscView::to_csr))
    /// is larger than the allocator can provide.
    #[error("tensor '{}': {what}: cannot allocate {} for the copy", shown_name(.tensor), shown_bytes(*.bytes))]
    AllocationFailed {
        /// The tensor.
        tensor: Box<str>,
        /// What was being built.
        what: &'static str,
        /// Bytes requested; `u64::MAX` when the size does not fit in a
        /// `u64` (shown as "2^64 bytes or more").
        bytes: u64,
    },

    /// No tensor has this name.
    #[error("no tensor named '{}' in the index", shown_name(.name))]
    NotFound {
        /// The name looked up.
        name: Box<str>,
    },

    /// No index entry at this position (e.g.
    /// [`HurrayFile::tensor_at`](crate::HurrayFile::tensor_at)).
    #[error("no index entry at position {position}: the index has {count} entries")]
    PositionNotFound {
        /// The position asked for.
        position: u64,
        /// The index's entry count.
        count: u64,
    },

    /// Opening or mapping the file failed.
    #[error("{message}")]
    Io {
        /// The kind of I/O error.
        kind: std::io::ErrorKind,
        /// The error's message, with the path.
        message: Box<str>,
    },
}

/// How [`Error::UnsupportedVersion`] places the version found against the
/// supported one: `newer than` or `older than` (never equal: equal is
/// supported).
fn newer_or_older(found: u8, supported: u8) -> &'static str {
    if found > supported {
        "newer than"
    } else {
        "older than"
    }
}

/// How [`Error::NotIncreasing`]'s index stands against the one before it
/// in its slice: `repeats the index before it, 1` (a duplicate) or
/// `is smaller than the index before it, 2` (unsorted).
fn out_of_order(value: u64, previous: u64) -> String {
    let how = if value == previous {
        "repeats"
    } else {
        "is smaller than"
    };
    format!("{how} the index before it, {previous}")
}

/// The entry before `field`'s (`col_ptr[2]` for `col_ptr[3]`), as
/// [`Error::PtrDecreasing`] names the entry it is less than.
fn before(field: &Field) -> Field {
    Field {
        index: field.index.map(|i| i.saturating_sub(1)),
        ..*field
    }
}

/// What [`Error::PtrTooLarge`]'s entry (`field`) is greater than: the
/// smaller entry right after it, if any, and `nnz`, which the last entry
/// must equal (`the entry after it, col_ptr[3] = 3 (must be
/// non-decreasing), and than nnz = 5, ...`).
fn too_large(field: &Field, nnz: u64, last: u64, next: Option<u64>) -> String {
    let array = field.name;
    let nnz = format!("nnz = {nnz}, which {array}[{last}] must equal");
    match next {
        Some(v) => format!(
            "the entry after it, {array}[{}] = {v} (must be non-decreasing), and than {nnz}",
            field.index.unwrap_or_default().saturating_add(1)
        ),
        None => format!("{nnz}, so the array decreases after it (must be non-decreasing)"),
    }
}

/// What [`Error::Reserved`] found: a padding byte (`padding`), padding
/// bits (`buffer[0].padding bits`), or reserved bits or bytes, with the
/// value and, in a field of several reserved bytes, which byte.
fn not_zero(at: &Location, value: u64, byte: Option<u64>) -> String {
    let set = match byte {
        Some(i) => format!(
            "its byte {i}, at offset {}, is 0x{value:02x}",
            at.offset.saturating_add(i)
        ),
        None => format!("0x{value:02x}"),
    };
    match (at.field.name, at.field.member) {
        ("padding", None) => format!("a padding byte is {set}; padding must be 0x00"),
        (_, Some("padding bits")) => format!("padding bits are set ({set}); they must be zero"),
        _ => format!("reserved bits/bytes are set ({set}); they must be zero"),
    }
}

#[cfg(test)]
mod tests;
