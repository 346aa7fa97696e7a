//! The crate's one error type.
//!
//! Every variant about the file's bytes says *where* (the tensor when there
//! is one, the field and the absolute byte offset in the file) and *which
//! rule* was broken (spec file and section); the accessors
//! [`Error::tensor`], [`Error::field`], [`Error::offset`] and
//! [`Error::rule`] give the same without parsing the message. Errors about a
//! request (a name not in the index, a view of the wrong element type, a
//! column past the end) and I/O errors name what was asked. The `Display`
//! form is one line:
//!
//! ```text
//! tensor 'A': col_ptr[3] at offset 12312: 2 is less than col_ptr[2] = 3 (must be non-decreasing) (layouts/csc.md § Storage Invariants (2))
//! ```
//!
//! Errors are built only on the failure path, so the few variants that carry
//! a name (`Box<str>`) cost nothing while parsing succeeds.

use std::fmt;

/// Shorthand for `Result<T, hurray_reader::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Names a field of the format, as the spec spells it: `shape[1]`,
/// `buffer[0].alignment`, `index_entry[2].name`, `col_ptr[3]`.
///
/// `name` is the spec's field name, `index` the element of an array field and
/// `member` a sub-field of that element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Field {
    /// The spec's field name, e.g. `"shape"` or `"buffer"`.
    pub name: &'static str,
    /// Which element of an array field, e.g. the `1` of `shape[1]`.
    pub index: Option<u64>,
    /// A sub-field of that element, e.g. the `alignment` of `buffer[0].alignment`.
    pub member: Option<&'static str>,
}

impl Field {
    /// A scalar field such as `descriptor_length`.
    pub const fn new(name: &'static str) -> Self {
        Field {
            name,
            index: None,
            member: None,
        }
    }

    /// One element of an array field, such as `shape[1]`.
    pub const fn at(name: &'static str, index: u64) -> Self {
        Field {
            name,
            index: Some(index),
            member: None,
        }
    }

    /// A sub-field of a section, such as `statistics.nnz`.
    pub const fn sub(name: &'static str, member: &'static str) -> Self {
        Field {
            name,
            index: None,
            member: Some(member),
        }
    }

    /// A sub-field of one element, such as `buffer[0].alignment`.
    pub const fn member(name: &'static str, index: u64, member: &'static str) -> Self {
        Field {
            name,
            index: Some(index),
            member: Some(member),
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)?;
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        if let Some(m) = self.member {
            write!(f, ".{m}")?;
        }
        Ok(())
    }
}

/// What an error is about, beyond the field: the whole file, one tensor, or
/// one KV entry. Displays as the message prefix (`tensor 'A': `).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// A container-level field (header, trailer, index framing).
    #[default]
    File,
    /// A tensor, by its name in the footer index.
    Tensor(Box<str>),
    /// A KV metadata entry, by its key.
    Key(Box<str>),
}

impl Scope {
    pub(crate) fn tensor(name: &str) -> Self {
        Scope::Tensor(name.into())
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::File => Ok(()),
            Scope::Tensor(name) => write!(f, "tensor '{}': ", shown_name(name)),
            Scope::Key(key) => write!(f, "KV key '{}': ", shown_name(key)),
        }
    }
}

/// A tensor name or KV key as error messages show it: escaped as
/// [`str::escape_debug`] does (control characters, quotes, backslashes),
/// and past 64 characters cut, with the name's size in bytes:
/// `layer.layer... (126 bytes)`. The error itself keeps the whole name
/// ([`Error::tensor`]).
///
/// ```
/// assert_eq!(hurray_reader::shown_name("a\0b"), "a\\0b");
/// // 64 characters are kept, not 64 bytes.
/// let long = "é".repeat(100);
/// assert_eq!(hurray_reader::shown_name(&long), format!("{}... (200 bytes)", "é".repeat(64)));
/// ```
pub fn shown_name(name: &str) -> String {
    const MAX: usize = 64;
    let escaped = name.escape_debug().to_string();
    match escaped.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}... ({} bytes)", escaped.get(..cut).unwrap_or_default(), name.len()),
        None => escaped,
    }
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

/// A byte count as [`Error::AllocationFailed`] shows it: `u64::MAX` stands
/// for a size that overflowed.
fn shown_bytes(bytes: u64) -> String {
    if bytes == u64::MAX {
        "2^64 bytes or more".to_owned()
    } else {
        format!("{bytes} bytes")
    }
}

/// A path as messages show it: as [`Path::display`](std::path::Path::display)
/// gives it, with control characters escaped (`\u{1b}`), so that a file
/// name cannot send escape sequences to a terminal.
///
/// ```
/// assert_eq!(hurray_reader::shown_path("a\x1b[31m b.hry".as_ref()), "a\\u{1b}[31m b.hry");
/// ```
pub fn shown_path(path: &std::path::Path) -> String {
    let mut shown = String::new();
    for c in path.display().to_string().chars() {
        if c.is_control() {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// An I/O error about `path`: `PATH: what: the system's message`.
pub(crate) fn io_error(path: &std::path::Path, what: &str, e: &std::io::Error) -> Error {
    Error::Io {
        kind: e.kind(),
        message: format!("{}: {what}: {e}", shown_path(path)).into(),
    }
}

/// A number read from the file, as an error shows it: integers exactly,
/// floats as `f64` (`NaN`, `inf`, `-0.0`, `1e-45`). A float is kept as its
/// bits so that errors compare equal exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Number {
    /// A signed integer.
    Int(i64),
    /// A float, by the bits of its `f64` widening ([`Number::float`]).
    Float(u64),
}

impl Number {
    /// `v` as a [`Number::Float`].
    pub fn float(v: f64) -> Self {
        Number::Float(v.to_bits())
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Number::Int(v) => write!(f, "{v}"),
            // Debug: shortest round-trip text, `NaN` and `inf` by name.
            Number::Float(bits) => write!(f, "{:?}", f64::from_bits(bits)),
        }
    }
}

/// Everything that can go wrong while reading a Hurray file.
///
/// Offsets are absolute byte positions in the file (for [`HurrayFile::parse`]
/// over a slice: positions in that slice). `tensor` fields hold the tensor's
/// name from the footer index. `rule` fields (and the text of the specific
/// variants) cite the spec file and section that was broken. The fields
/// differ from variant to variant; [`tensor`](Self::tensor),
/// [`field`](Self::field), [`offset`](Self::offset) and
/// [`rule`](Self::rule) read them the same way for all:
///
/// ```
/// use hurray_reader::{Error, HurrayFile, Options};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/invalid/csc_indices_unsorted.hry");
/// let bytes = hurray_reader::AlignedBytes::read(path)?;
/// let file = HurrayFile::parse(&bytes, Options::strict())?;
/// // The strict view runs the storage invariant scan, which fails.
/// let e = file.tensor("t")?.csc::<f32>().unwrap_err();
/// assert!(matches!(e, Error::NotIncreasing { .. }));
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
    #[error("{scope}{field} at offset {offset}: needs {need} bytes but only {have} remain in the {section} ({rule})")]
    Truncated {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// The field that does not fit.
        field: Field,
        /// Where the field starts.
        offset: u64,
        /// Bytes the field needs.
        need: u64,
        /// Bytes left in the section.
        have: u64,
        /// The enclosing section (`index`, `KV section`, `descriptor`, ...).
        section: &'static str,
        /// The rule that bounds the section.
        rule: &'static str,
    },

    /// A magic number does not match.
    #[error("{scope}{field} at offset {offset}: expected {expected}, found \"{found}\" ({rule})")]
    BadMagic {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// `magic`, `trailer_magic` or the descriptor's `magic`.
        field: Field,
        /// Where the magic starts.
        offset: u64,
        /// The expected bytes, as text.
        expected: &'static str,
        /// The bytes found there, ASCII with the others escaped (`\x03`).
        found: String,
        /// The rule.
        rule: &'static str,
    },

    /// A major version other than the one this reader supports: newer
    /// (`versioning.md` § Compatibility Matrix, `R.major < W.major`) or older
    /// (`R.major > W.major`, no migration path defined); for a quantization
    /// `scheme_version`, a version other than the one defined.
    #[error("{scope}{field} at offset {offset}: version {found} is {} the supported major version {supported} ({rule})", newer_or_older(*.found, *.supported))]
    UnsupportedVersion {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// `container_version_major` or `version_major`.
        field: Field,
        /// Where the field is.
        offset: u64,
        /// The version in the file.
        found: u8,
        /// The highest major version this reader supports.
        supported: u8,
        /// The rule.
        rule: &'static str,
    },

    /// A field holds a value the spec does not allow.
    #[error("{scope}{field} at offset {offset}: value {value} is not allowed, expected {expected} ({rule})")]
    Invalid {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// The field.
        field: Field,
        /// Where the field is.
        offset: u64,
        /// The value found (integers as is, floats as their bits).
        value: u64,
        /// What the spec allows, in words.
        expected: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// A number the spec does not allow where it is shown as a number: a
    /// quantization scale (`NaN`, `inf`, `0.0`) or zero point (`-200`).
    #[error("{scope}{field} at offset {offset}: value {value} is not allowed, expected {expected} ({rule})")]
    InvalidNumber {
        /// The tensor concerned.
        scope: Scope,
        /// The field, or the buffer element (`scales[3]`).
        field: Field,
        /// Where the value is.
        offset: u64,
        /// The value found.
        value: Number,
        /// What the spec allows, in words.
        expected: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// Reserved bytes or flag bits, or padding, are not zero.
    #[error("{scope}{field} at offset {offset}: {} ({rule})", not_zero(field, *.value, *.byte, *.offset))]
    Reserved {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// The field holding reserved bits or bytes (padding: the first
        /// non-zero byte).
        field: Field,
        /// Where the field is.
        offset: u64,
        /// The offending bits (for flags) or the first non-zero byte.
        value: u64,
        /// For a field of reserved bytes: which of its bytes (from 0) is the
        /// first non-zero one.
        byte: Option<u64>,
        /// The rule.
        rule: &'static str,
    },

    /// A tag this reader does not recognise (strict mode), or one the spec
    /// reserves or forbids.
    #[error("{scope}{field} at offset {offset}: tag 0x{value:02x} is {why} ({rule})")]
    UnknownTag {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// `type_tag`, `layout_tag`, `scheme_tag`, `value_tag`, ...
        field: Field,
        /// Where the tag is.
        offset: u64,
        /// The tag.
        value: u8,
        /// `reserved`, `invalid` or `not recognised`.
        why: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// The index CRC-32C does not match the index bytes.
    #[error(
        "index_crc32c at offset {offset}: stored 0x{stored:08x} but the index bytes give 0x{computed:08x} ({})",
        rule::INDEX_CRC
    )]
    IndexCrcMismatch {
        /// Offset of the `index_crc32c` trailer field.
        offset: u64,
        /// The CRC stored in the trailer.
        stored: u32,
        /// The CRC of the index bytes.
        computed: u32,
    },

    /// A section located by the trailer (index, KV) is not inside the file
    /// area where it belongs.
    #[error("{field} at offset {offset}: the {section} at {start} with length {length} does not lie within [{lower}, {upper}) ({rule})")]
    SectionRange {
        /// `index_offset` or `kv_offset`.
        field: Field,
        /// Offset of the trailer field.
        offset: u64,
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
        /// The rule.
        rule: &'static str,
    },

    /// A count read from the file is larger than the bytes that should hold
    /// it can contain; rejected before anything is allocated for it.
    #[error("{scope}{field} at offset {offset}: {count} cannot fit, at most {max} fit in the {section} ({rule})")]
    CountTooLarge {
        /// The KV key or tensor concerned, when there is one.
        scope: Scope,
        /// `index_entry_count`, `kv_count`, an array's element count, a
        /// string's length, ...
        field: Field,
        /// Where the count is.
        offset: u64,
        /// The count found.
        count: u64,
        /// The largest count the remaining bytes allow.
        max: u64,
        /// The enclosing section.
        section: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// A length-delimited section holds bytes after its last field.
    #[error("{scope}{section} at offset {offset}: {count} unexpected bytes after the last field ({rule})")]
    TrailingBytes {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// `index`, `KV section`, `descriptor`, `quantization descriptor`.
        section: &'static str,
        /// Where the unexpected bytes start.
        offset: u64,
        /// How many there are.
        count: u64,
        /// The rule.
        rule: &'static str,
    },

    /// A name, key or string is not valid UTF-8.
    #[error("{scope}{field} at offset {offset}: not valid UTF-8 ({rule})")]
    InvalidUtf8 {
        /// The KV key, when a string value is concerned.
        scope: Scope,
        /// The field.
        field: Field,
        /// Where the bytes start.
        offset: u64,
        /// The rule.
        rule: &'static str,
    },

    /// Two index entries carry the same tensor name.
    #[error("index_entry[{second}].name at offset {offset}: duplicate name '{}' (entries {first} and {second}) ({})", shown_name(.name), rule::UNIQUE_NAMES)]
    DuplicateName {
        /// The repeated name.
        name: Box<str>,
        /// Position of the first entry with that name.
        first: u64,
        /// Position of the second.
        second: u64,
        /// Offset of the second entry's name.
        offset: u64,
    },

    /// Two KV entries carry the same key.
    #[error("kv_entry[{second}].key at offset {offset}: duplicate key '{}' (KV entries {first} and {second}) ({})", shown_name(.key), rule::UNIQUE_KEYS)]
    DuplicateKey {
        /// The repeated key.
        key: Box<str>,
        /// Position of the first entry with that key.
        first: u64,
        /// Position of the second.
        second: u64,
        /// Offset of the second key.
        offset: u64,
    },

    /// `SORTED_INDEX` is set but the entries are not in UTF-8 byte order.
    #[error("index_entry[{entry}].name at offset {offset}: '{}' sorts before the previous name '{}' although SORTED_INDEX is set ({})", shown_name(.name), shown_name(.previous), rule::FILE_FLAGS)]
    IndexNotSorted {
        /// Position of the out-of-order entry.
        entry: u64,
        /// Its name.
        name: Box<str>,
        /// The previous entry's name.
        previous: Box<str>,
        /// Offset of its name.
        offset: u64,
    },

    /// A range given by the file (a descriptor, a data region, a buffer)
    /// does not lie where it must.
    #[error("{scope}{field} at offset {offset}: [{start}, {end}) is outside [{lower}, {upper}) ({rule})")]
    OutOfRange {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// The field that places the range.
        field: Field,
        /// Where that field is.
        offset: u64,
        /// Range start (absolute).
        start: u64,
        /// Range end (absolute, exclusive): start + length, which may pass
        /// `u64::MAX` when the length is wrong.
        end: u128,
        /// Lower bound of the allowed area.
        lower: u64,
        /// Upper bound (exclusive).
        upper: u64,
        /// The rule.
        rule: &'static str,
    },

    /// Regions are not laid out as the container requires: an overlap, a
    /// gap that is not one of the two allowed paddings, a misplaced start.
    #[error("{scope}{field} at offset {offset}: found {found}, expected {expected} ({rule})")]
    Layout {
        /// The tensor or KV key concerned, if any.
        scope: Scope,
        /// The field that places the region.
        field: Field,
        /// Where that field is.
        offset: u64,
        /// The value found.
        found: u64,
        /// What was expected, in words with numbers.
        expected: Box<str>,
        /// The rule.
        rule: &'static str,
    },

    /// A tensor's first data buffer is not on a `data_buffer_alignment` boundary.
    #[error("tensor '{}': index_entry[{position}].data_offset at offset {offset}: {data_offset} is not a multiple of data_buffer_alignment {alignment} ({})", shown_name(.tensor), rule::DATA_PLACEMENT)]
    DataOffsetMisaligned {
        /// The tensor.
        tensor: Box<str>,
        /// Its entry's position in the footer index.
        position: u64,
        /// Offset of the index entry's `data_offset` field.
        offset: u64,
        /// The data offset.
        data_offset: u64,
        /// The header's `data_buffer_alignment`.
        alignment: u64,
    },

    /// The index's `descriptor_length` differs from the descriptor's own.
    /// Reported at the index entry's field: the index delimits the
    /// descriptor's bytes, and the message gives where the descriptor's
    /// copy is.
    #[error("tensor '{}': index_entry[{position}].descriptor_length at offset {offset}: the index says {index_value}, the descriptor (its descriptor_length at offset {descriptor_offset}) says {descriptor_value} ({})", shown_name(.tensor), rule::DESCRIPTOR_LENGTH)]
    DescriptorLengthMismatch {
        /// The tensor.
        tensor: Box<str>,
        /// Its entry's position in the footer index.
        position: u64,
        /// Offset of the index entry's `descriptor_length` field.
        offset: u64,
        /// Offset of the descriptor's own `descriptor_length` field.
        descriptor_offset: u64,
        /// Value in the footer index.
        index_value: u64,
        /// Value in the descriptor.
        descriptor_value: u64,
    },

    /// The index's `data_length` differs from what the buffer table implies.
    #[error("tensor '{}': index_entry[{position}].data_length at offset {offset}: the index says {index_value}, the buffer table spans {expected} bytes ({})", shown_name(.tensor), rule::DATA_LENGTH)]
    DataLengthMismatch {
        /// The tensor.
        tensor: Box<str>,
        /// Its entry's position in the footer index.
        position: u64,
        /// Offset of the index entry's `data_length` field.
        offset: u64,
        /// Value in the footer index.
        index_value: u64,
        /// Span of the buffers, first byte of buffer 0 to last byte of the last.
        expected: u64,
    },

    /// A rank the layout does not allow.
    #[error("tensor '{}': rank at offset {offset}: rank {rank} is not allowed for layout {layout}, expected {expected} ({rule})", shown_name(.tensor))]
    RankNotAllowed {
        /// The tensor.
        tensor: Box<str>,
        /// Offset of the `rank` field.
        offset: u64,
        /// The rank.
        rank: u32,
        /// The layout's name.
        layout: &'static str,
        /// The allowed ranks, in words.
        expected: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// A shape carries the dynamic-dimension sentinel where a size is needed.
    #[error("tensor '{}': {field} at offset {offset}: dynamic dimension (0xFFFFFFFFFFFFFFFF) in a stored tensor; buffer sizes cannot be computed from it ({})", shown_name(.tensor), rule::DYNAMIC_DIMENSION)]
    DynamicDimension {
        /// The tensor.
        tensor: Box<str>,
        /// The `shape[i]` (or `parent_shape[i]`) field.
        field: Field,
        /// Where it is.
        offset: u64,
    },

    /// A size computed from file fields overflows `u64`.
    #[error("tensor '{}': {field} at offset {offset}: {what} overflows 64 bits ({rule})", shown_name(.tensor))]
    Overflow {
        /// The tensor.
        tensor: Box<str>,
        /// The field whose value makes the computation overflow.
        field: Field,
        /// Where it is.
        offset: u64,
        /// The computation, e.g. `element count (product of shape)`.
        what: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// A buffer's `byte_size` is not what the layout and element type require.
    #[error("tensor '{}': buffer[{buffer}].byte_size ({role}) at offset {offset}: byte_size {byte_size}, expected {}{expected} ({rule})", shown_name(.tensor), if *.exact { "" } else { "at least " })]
    BufferSize {
        /// The tensor.
        tensor: Box<str>,
        /// Position in the buffer table.
        buffer: u8,
        /// The buffer's name in the layout (`values`, `row_indices`, ...).
        role: &'static str,
        /// Offset of the handle's `byte_size` field.
        offset: u64,
        /// The declared size.
        byte_size: u64,
        /// The required size.
        expected: u64,
        /// Whether the size must be exact (sparse) or a minimum (dense).
        exact: bool,
        /// The rule.
        rule: &'static str,
    },

    /// A sparse tensor's `nnz` field disagrees with its `values` and index
    /// buffers, whose sizes agree with each other on another count (the
    /// layout's § Buffer Size derives both from `nnz`, which is
    /// authoritative). Reported instead of [`Error::BufferSize`] when the
    /// strict size check fails that way.
    #[error("tensor '{}': nnz at offset {offset}: {nnz}, but {buffers} both hold {held} entries ({rule})", shown_name(.tensor))]
    NnzMismatch {
        /// The tensor.
        tensor: Box<str>,
        /// Offset of the layout fields' `nnz`.
        offset: u64,
        /// The descriptor's `nnz`.
        nnz: u64,
        /// The entries the buffers hold, by their `byte_size`.
        held: u64,
        /// The buffers, e.g. `values and row_indices`.
        buffers: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// A buffer's file offset is not a multiple of its declared alignment.
    #[error("tensor '{}': buffer[{buffer}].alignment at offset {offset}: declares {alignment} but the buffer starts at file offset {file_offset} ({})", shown_name(.tensor), rule::ALIGNMENT_DELIVERED)]
    AlignmentNotDelivered {
        /// The tensor.
        tensor: Box<str>,
        /// Position in the buffer table.
        buffer: u8,
        /// Offset of the handle's `alignment` field.
        offset: u64,
        /// The declared alignment.
        alignment: u64,
        /// Where the buffer actually starts.
        file_offset: u64,
    },

    /// A pointer array does not start at 0 (CSC `col_ptr`, CSR `row_ptr`,
    /// CSF `pos_L`, block-paged `seq_ptr`).
    #[error("tensor '{}': {array}[0] at offset {offset}: is {value}, must be 0 ({rule})", shown_name(.tensor))]
    PtrFirst {
        /// The tensor.
        tensor: Box<str>,
        /// The array's name.
        array: &'static str,
        /// Offset of the element.
        offset: u64,
        /// The value found.
        value: u64,
        /// The rule.
        rule: &'static str,
    },

    /// A pointer array's last entry is not the stored count (`nnz`, ...).
    #[error("tensor '{}': {array}[{position}] at offset {offset}: is {value}, must be {expected_name} = {expected} ({rule})", shown_name(.tensor))]
    PtrLast {
        /// The tensor.
        tensor: Box<str>,
        /// The array's name.
        array: &'static str,
        /// Position of the last element.
        position: u64,
        /// Offset of that element.
        offset: u64,
        /// The value found.
        value: u64,
        /// What it must be (`nnz`, `n_L`, ...).
        expected_name: &'static str,
        /// The required value (or bound).
        expected: u64,
        /// The rule.
        rule: &'static str,
    },

    /// A pointer array decreases.
    #[error("tensor '{}': {array}[{position}] at offset {offset}: {value} is less than {array}[{}] = {previous} (must be non-decreasing) ({rule})", shown_name(.tensor), .position.saturating_sub(1))]
    PtrDecreasing {
        /// The tensor.
        tensor: Box<str>,
        /// The array's name.
        array: &'static str,
        /// Position of the element that is too small.
        position: u64,
        /// Its offset.
        offset: u64,
        /// Its value.
        value: u64,
        /// The value before it.
        previous: u64,
        /// The rule.
        rule: &'static str,
    },

    /// A pointer before the last is above the stored count while the last
    /// is the count, so the array decreases after it: reported at this
    /// entry, the damaged one, rather than at the smaller one after it (CSC
    /// `col_ptr`, CSR `row_ptr`). When the last entry is not the count
    /// either, that is [`Error::PtrLast`].
    #[error(
        "tensor '{}': {array}[{position}] at offset {offset}: {value} is greater than {} ({rule})",
        shown_name(.tensor),
        too_large(.array, *.position, *.nnz, *.last, *.next)
    )]
    PtrTooLarge {
        /// The tensor.
        tensor: Box<str>,
        /// The array's name.
        array: &'static str,
        /// Position of the element.
        position: u64,
        /// Its offset.
        offset: u64,
        /// Its value.
        value: u64,
        /// The stored count.
        nnz: u64,
        /// Position of the array's last element.
        last: u64,
        /// The entry right after it, when that one is smaller (the pair
        /// that decreases).
        next: Option<u64>,
        /// The rule.
        rule: &'static str,
    },

    /// Indices within one compressed slice (a CSC column, a CSR row, a CSF
    /// parent) are not strictly increasing: unsorted or duplicated.
    #[error("tensor '{}': {array}[{position}] at offset {offset}: in {slice} {slice_index}, {value} at {array} position {position} does not follow {previous} (indices must be strictly increasing, no duplicates) ({rule})", shown_name(.tensor))]
    NotIncreasing {
        /// The tensor.
        tensor: Box<str>,
        /// The index array (`row_indices`, `col_indices`, `crd_L`).
        array: &'static str,
        /// `column`, `row` or `parent`.
        slice: &'static str,
        /// Which column/row/parent.
        slice_index: u64,
        /// Position of the offending element in the array.
        position: u64,
        /// Its offset.
        offset: u64,
        /// Its value.
        value: u64,
        /// The element before it in the same slice.
        previous: u64,
        /// The rule.
        rule: &'static str,
    },

    /// A stored index is not below its dimension's size.
    #[error("tensor '{}': {array}[{position}] at offset {offset}: index {value} is out of bounds, must be < {bound_name} = {bound} ({rule})", shown_name(.tensor))]
    IndexOutOfBounds {
        /// The tensor.
        tensor: Box<str>,
        /// The index array.
        array: &'static str,
        /// Position of the element.
        position: u64,
        /// Its offset.
        offset: u64,
        /// Its value.
        value: u64,
        /// The exclusive bound (the dimension's size).
        bound: u64,
        /// What the bound is (`nrows`, `ncols`, `shape[2]`, `num_pages`).
        bound_name: Field,
        /// The rule.
        rule: &'static str,
    },

    /// COO: two entries share a coordinate, or `is_sorted` is set and the
    /// entries are not in strictly increasing lexicographic order.
    #[error("tensor '{}': indices[{element}] at offset {offset}: entry {position}: {what} ({rule})", shown_name(.tensor))]
    CooOrder {
        /// The tensor.
        tensor: Box<str>,
        /// Position of the offending entry (an entry is `rank` coordinates).
        position: u64,
        /// Its first coordinate's position in `indices`: `position × rank`.
        element: u64,
        /// Offset of its coordinates.
        offset: u64,
        /// What is wrong, in words.
        what: &'static str,
        /// The rule.
        rule: &'static str,
    },

    /// The statistics section's `nnz` disagrees with the descriptor's.
    #[error("tensor '{}': statistics.nnz at offset {offset}: {statistics_nnz} differs from the descriptor's nnz {nnz} ({rule})", shown_name(.tensor))]
    StatisticsNnzMismatch {
        /// The tensor.
        tensor: Box<str>,
        /// Offset of the statistics `nnz` field.
        offset: u64,
        /// The statistics value.
        statistics_nnz: u64,
        /// The authoritative descriptor value.
        nnz: u64,
        /// The rule (the layout's § Interaction with Statistics Section).
        rule: &'static str,
    },

    /// Fewer tensors follow a composite head than its `member_count`.
    #[error("tensor '{}': member_count at offset {offset}: the head declares {member_count} members but only {found} tensors follow it ({})", shown_name(.tensor), rule::TORN_COMPOSITE)]
    TornComposite {
        /// The head.
        tensor: Box<str>,
        /// Offset of `member_count`.
        offset: u64,
        /// Declared members.
        member_count: u64,
        /// Tensors that follow.
        found: u64,
    },

    /// A composite's members break a composition rule.
    #[error("tensor '{}': member '{}': {field} at offset {offset}: {what} ({})", shown_name(.tensor), shown_name(.member), rule::COMPOSITE_VALIDATION)]
    Composite {
        /// The head.
        tensor: Box<str>,
        /// The member concerned.
        member: Box<str>,
        /// The member's field that breaks the rule (`flags` for a missing
        /// section, `parent_shape[1]`, `shard_offset`, ...).
        field: Field,
        /// Offset of that field in the member's descriptor.
        offset: u64,
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

impl Error {
    /// The absolute byte offset the error points at, when it has one (every
    /// variant about the file's bytes does; argument and I/O errors do not).
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Truncated { offset, .. }
            | Error::BadMagic { offset, .. }
            | Error::UnsupportedVersion { offset, .. }
            | Error::Invalid { offset, .. }
            | Error::InvalidNumber { offset, .. }
            | Error::Reserved { offset, .. }
            | Error::UnknownTag { offset, .. }
            | Error::IndexCrcMismatch { offset, .. }
            | Error::SectionRange { offset, .. }
            | Error::CountTooLarge { offset, .. }
            | Error::TrailingBytes { offset, .. }
            | Error::InvalidUtf8 { offset, .. }
            | Error::DuplicateName { offset, .. }
            | Error::DuplicateKey { offset, .. }
            | Error::IndexNotSorted { offset, .. }
            | Error::OutOfRange { offset, .. }
            | Error::Layout { offset, .. }
            | Error::DataOffsetMisaligned { offset, .. }
            | Error::DescriptorLengthMismatch { offset, .. }
            | Error::DataLengthMismatch { offset, .. }
            | Error::RankNotAllowed { offset, .. }
            | Error::DynamicDimension { offset, .. }
            | Error::Overflow { offset, .. }
            | Error::BufferSize { offset, .. }
            | Error::AlignmentNotDelivered { offset, .. }
            | Error::PtrFirst { offset, .. }
            | Error::PtrLast { offset, .. }
            | Error::PtrDecreasing { offset, .. }
            | Error::PtrTooLarge { offset, .. }
            | Error::NotIncreasing { offset, .. }
            | Error::IndexOutOfBounds { offset, .. }
            | Error::CooOrder { offset, .. }
            | Error::StatisticsNnzMismatch { offset, .. }
            | Error::NnzMismatch { offset, .. }
            | Error::TornComposite { offset, .. }
            | Error::Composite { offset, .. }
            | Error::Misaligned { offset, .. } => Some(*offset),
            Error::FileTooSmall { size, .. } => Some(*size),
            _ => None,
        }
    }

    /// The tensor the error concerns, by its name in the footer index (for
    /// [`Error::NotFound`], the name looked up).
    pub fn tensor(&self) -> Option<&str> {
        match self {
            Error::Truncated {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::BadMagic {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::UnsupportedVersion {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::Invalid {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::InvalidNumber {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::Reserved {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::UnknownTag {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::CountTooLarge {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::TrailingBytes {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::InvalidUtf8 {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::OutOfRange {
                scope: Scope::Tensor(name),
                ..
            }
            | Error::Layout {
                scope: Scope::Tensor(name),
                ..
            } => Some(name),
            Error::DataOffsetMisaligned { tensor, .. }
            | Error::DescriptorLengthMismatch { tensor, .. }
            | Error::DataLengthMismatch { tensor, .. }
            | Error::RankNotAllowed { tensor, .. }
            | Error::DynamicDimension { tensor, .. }
            | Error::Overflow { tensor, .. }
            | Error::BufferSize { tensor, .. }
            | Error::NnzMismatch { tensor, .. }
            | Error::AlignmentNotDelivered { tensor, .. }
            | Error::PtrFirst { tensor, .. }
            | Error::PtrLast { tensor, .. }
            | Error::PtrDecreasing { tensor, .. }
            | Error::PtrTooLarge { tensor, .. }
            | Error::NotIncreasing { tensor, .. }
            | Error::IndexOutOfBounds { tensor, .. }
            | Error::CooOrder { tensor, .. }
            | Error::StatisticsNnzMismatch { tensor, .. }
            | Error::TornComposite { tensor, .. }
            | Error::Composite { tensor, .. }
            | Error::TypeMismatch { tensor, .. }
            | Error::LayoutMismatch { tensor, .. }
            | Error::Misaligned { tensor, .. }
            | Error::NotViewable { tensor, .. }
            | Error::IndexArgument { tensor, .. }
            | Error::BlockArgument { tensor, .. }
            | Error::CoordinateArgument { tensor, .. }
            | Error::LengthMismatch { tensor, .. }
            | Error::AllocationFailed { tensor, .. } => Some(tensor),
            // The name asked for, which no entry has.
            Error::NotFound { name } => Some(name),
            _ => None,
        }
    }

    /// The field the error names, as the spec spells it (`col_ptr[3]`,
    /// `buffer[1].byte_size`, `index_entry[0].data_offset`; displays as the
    /// message does). Every variant about the file's bytes has one, except
    /// [`Error::FileTooSmall`]; argument and I/O errors have none, but for
    /// [`Error::TypeMismatch`] (`type_tag`) and [`Error::LayoutMismatch`]
    /// (`layout_tag`), the descriptor fields they compare.
    pub fn field(&self) -> Option<Field> {
        let field = match self {
            Error::Truncated { field, .. }
            | Error::BadMagic { field, .. }
            | Error::UnsupportedVersion { field, .. }
            | Error::Invalid { field, .. }
            | Error::InvalidNumber { field, .. }
            | Error::Reserved { field, .. }
            | Error::UnknownTag { field, .. }
            | Error::SectionRange { field, .. }
            | Error::CountTooLarge { field, .. }
            | Error::InvalidUtf8 { field, .. }
            | Error::OutOfRange { field, .. }
            | Error::Layout { field, .. }
            | Error::DynamicDimension { field, .. }
            | Error::Overflow { field, .. }
            | Error::Composite { field, .. } => *field,
            Error::TrailingBytes { section, .. } => Field::new(section),
            Error::IndexCrcMismatch { .. } => Field::new("index_crc32c"),
            Error::DuplicateName { second, .. } => Field::member("index_entry", *second, "name"),
            Error::DuplicateKey { second, .. } => Field::member("kv_entry", *second, "key"),
            Error::IndexNotSorted { entry, .. } => Field::member("index_entry", *entry, "name"),
            Error::DataOffsetMisaligned { position, .. } => Field::member("index_entry", *position, "data_offset"),
            Error::DescriptorLengthMismatch { position, .. } => {
                Field::member("index_entry", *position, "descriptor_length")
            }
            Error::DataLengthMismatch { position, .. } => Field::member("index_entry", *position, "data_length"),
            Error::RankNotAllowed { .. } => Field::new("rank"),
            Error::BufferSize { buffer, .. } => Field::member("buffer", u64::from(*buffer), "byte_size"),
            Error::NnzMismatch { .. } => Field::new("nnz"),
            Error::AlignmentNotDelivered { buffer, .. } => Field::member("buffer", u64::from(*buffer), "alignment"),
            Error::PtrFirst { array, .. } => Field::at(array, 0),
            Error::PtrLast { array, position, .. }
            | Error::PtrDecreasing { array, position, .. }
            | Error::PtrTooLarge { array, position, .. }
            | Error::NotIncreasing { array, position, .. }
            | Error::IndexOutOfBounds { array, position, .. } => Field::at(array, *position),
            // One entry is `rank` elements of `indices`: its first (at the offset).
            Error::CooOrder { element, .. } => Field::at("indices", *element),
            Error::StatisticsNnzMismatch { .. } => Field::sub("statistics", "nnz"),
            Error::TornComposite { .. } => Field::new("member_count"),
            Error::Misaligned { buffer, .. } => Field::at("buffer", u64::from(*buffer)),
            Error::TypeMismatch { .. } => Field::new("type_tag"),
            Error::LayoutMismatch { .. } => Field::new("layout_tag"),
            _ => return None,
        };
        Some(field)
    }

    /// The spec rule the file breaks: the spec file and section, as the
    /// message cites it (`layouts/csc.md § Storage Invariants (2)`). Every
    /// variant about the file's bytes has one, except [`Error::Misaligned`]
    /// (the slice given to the reader, not the file, is misaligned) and
    /// [`Error::NotViewable`] (which gives its reason in words); argument
    /// and I/O errors have none.
    ///
    /// The form, for programs that read it: one or more citations joined by
    /// `"; "`. Each is a spec file, `" § "` and the heading path joined by
    /// `" › "` (`file-format.md § File Header › File Flags`), sometimes
    /// followed by `": "` and the rule's own words (`...: names are unique`),
    /// or `NOTES.md` and the names of its decision rows in quotes
    /// (`NOTES.md 'data_length'`). A cited section is a heading of that file, checked
    /// against the spec by the crate's tests.
    pub fn rule(&self) -> Option<&'static str> {
        match self {
            Error::Truncated { rule, .. }
            | Error::BadMagic { rule, .. }
            | Error::UnsupportedVersion { rule, .. }
            | Error::Invalid { rule, .. }
            | Error::InvalidNumber { rule, .. }
            | Error::Reserved { rule, .. }
            | Error::UnknownTag { rule, .. }
            | Error::SectionRange { rule, .. }
            | Error::CountTooLarge { rule, .. }
            | Error::TrailingBytes { rule, .. }
            | Error::InvalidUtf8 { rule, .. }
            | Error::OutOfRange { rule, .. }
            | Error::Layout { rule, .. }
            | Error::RankNotAllowed { rule, .. }
            | Error::Overflow { rule, .. }
            | Error::BufferSize { rule, .. }
            | Error::NnzMismatch { rule, .. }
            | Error::PtrFirst { rule, .. }
            | Error::PtrLast { rule, .. }
            | Error::PtrDecreasing { rule, .. }
            | Error::PtrTooLarge { rule, .. }
            | Error::NotIncreasing { rule, .. }
            | Error::IndexOutOfBounds { rule, .. }
            | Error::CooOrder { rule, .. }
            | Error::StatisticsNnzMismatch { rule, .. } => Some(rule),
            Error::FileTooSmall { .. } => Some(rule::FILE_LAYOUT),
            Error::IndexCrcMismatch { .. } => Some(rule::INDEX_CRC),
            Error::DuplicateName { .. } => Some(rule::UNIQUE_NAMES),
            Error::DuplicateKey { .. } => Some(rule::UNIQUE_KEYS),
            Error::IndexNotSorted { .. } => Some(rule::FILE_FLAGS),
            Error::DataOffsetMisaligned { .. } => Some(rule::DATA_PLACEMENT),
            Error::DescriptorLengthMismatch { .. } => Some(rule::DESCRIPTOR_LENGTH),
            Error::DataLengthMismatch { .. } => Some(rule::DATA_LENGTH),
            Error::DynamicDimension { .. } => Some(rule::DYNAMIC_DIMENSION),
            Error::AlignmentNotDelivered { .. } => Some(rule::ALIGNMENT_DELIVERED),
            Error::TornComposite { .. } => Some(rule::TORN_COMPOSITE),
            Error::Composite { .. } => Some(rule::COMPOSITE_VALIDATION),
            _ => None,
        }
    }
}

/// Spec references cited by errors, in one place so they stay consistent.
pub(crate) mod rule {
    pub const FILE_HEADER: &str = "file-format.md § File Header";
    pub const FILE_LAYOUT: &str = "file-format.md § File Layout";
    pub const FILE_FLAGS: &str = "file-format.md § File Header › File Flags";
    pub const INDEX_CRC: &str = "file-format.md § File Header › File Flags, HAS_INDEX_CRC32C";
    pub const UNIQUE_NAMES: &str = "file-format.md § Index Section › Index Encoding: names are unique";
    pub const UNIQUE_KEYS: &str =
        "file-format.md § KV Metadata Section › KV Section Encoding: a reader MUST reject duplicate keys";
    pub const DESCRIPTOR_LENGTH: &str = "file-format.md § Index Section › Index Encoding: they MUST agree";
    pub const DATA_LENGTH: &str = "file-format.md § Index Section › Index Encoding; NOTES.md 'data_length'";
    pub const TORN_COMPOSITE: &str = "file-format.md § Composite Tensors";
    pub const DYNAMIC_DIMENSION: &str = "data-model.md § Dynamic Dimensions";
    pub const ALIGNMENT_DELIVERED: &str = "buffer-protocol.md § Alignment; NOTES.md 'Declared alignment vs delivered'";
    pub const KV_FLAG: &str = "file-format.md § File Header › File Flags; NOTES.md 'HAS_KV_METADATA'";
    pub const TRAILER: &str = "file-format.md § Trailer";
    /// Where the index lies (its alignment); its fields are [`INDEX`].
    pub const INDEX_SECTION: &str = "file-format.md § Index Section";
    pub const INDEX: &str = "file-format.md § Index Section › Index Encoding";
    /// Where the KV section lies (its alignment); its entries are [`KV`].
    pub const KV_SECTION: &str = "file-format.md § KV Metadata Section";
    pub const KV: &str = "file-format.md § KV Metadata Section › KV Section Encoding";
    pub const KV_TYPES: &str = "file-format.md § KV Metadata Section › KV Value Types";
    pub const TENSOR_REGION: &str = "file-format.md § Tensor Region";
    pub const DESCRIPTOR_PLACEMENT: &str = "file-format.md § Tensor Region › Descriptor Placement";
    pub const DATA_PLACEMENT: &str = "file-format.md § Tensor Region › Data Buffer Placement";
    /// A buffer of the buffer table must lie in its tensor's data region.
    pub const DATA_REGION: &str =
        "file-format.md § Tensor Region › Data Buffer Placement; § Index Section › Index Encoding (data_length)";
    pub const LAYOUT_ORDER: &str =
        "file-format.md § File Layout; NOTES.md 'Padding after a tensor's last buffer' and 'Overlapping regions'";
    pub const FIXED_HEADER: &str = "metadata.md § Fixed Header";
    pub const FLAGS: &str = "metadata.md § Fixed Header › Flags";
    pub const BYTE_OFFSET: &str = "memory-layout.md § Common Fields › byte_offset";
    pub const BUFFER_TABLE: &str = "metadata.md § Buffer Table; memory-layout.md § Buffer Table";
    pub const HANDLE: &str = "buffer-protocol.md § Buffer Handle";
    pub const DEVICE_TAGS: &str = "buffer-protocol.md § Device Tags";
    pub const SYNC_MODE: &str = "buffer-protocol.md § Stream and Event Synchronisation";
    pub const MEMORY_CLASS: &str = "buffer-protocol.md § Memory Class";
    pub const PAGE_ALIGNMENT: &str = "buffer-protocol.md § Alignment › Page Alignment for GPU and IPC";
    pub const COLOCATION: &str = "buffer-protocol.md § Device Tags › Device Colocation";
    pub const TYPE_TAGS: &str = "element-types.md § Type Identifier Encoding";
    pub const LAYOUT_TAGS: &str = "memory-layout.md § Layout Taxonomy";
    pub const EXTENSION_LAYOUT: &str = "metadata.md § Layout-Specific Fields › Extension Layouts";
    pub const DESCRIPTOR_VERSION: &str = "metadata.md § Version Compatibility; versioning.md § Compatibility Matrix";
    pub const SCALAR: &str = "data-model.md § Scalar Tensors";
    pub const DENSE_SIZE: &str = "element-types.md § Buffer Size Calculation";
    pub const TYPE_ALIGNMENT: &str = "element-types.md § Type Properties Summary";
    /// A per-block (or NF4) quantized dense buffer holds its partial last
    /// block whole.
    pub const BLOCK_PADDING: &str = "quantization/per-block-affine.md § Padding";
    pub const ELEMENT_COUNT: &str = "data-model.md § Shape › Total Element Count";
    pub const QUANT: &str = "quantization.md § Descriptor Header";
    pub const QUANT_PLACEMENT: &str = "quantization.md § Buffer Table Placement Rules";
    pub const SHARD: &str = "metadata.md § Shard Section";
    pub const STATISTICS: &str = "metadata.md § Statistics Section";
    pub const STATISTICS_FIELDS: &str = "metadata.md § Statistics Section › Field Encoding";
    pub const EXTENSION_TYPE: &str = "metadata.md § Extension Type Section";
    pub const COMPOSITE_MEMBER: &str = "metadata.md § Composite Member Section";
    pub const COMPOSITE_HEAD: &str = "layouts/composite.md § Head Layout-Specific Fields";
    pub const COMPOSITE_HEAD_DESCRIPTOR: &str = "layouts/composite.md § Head Descriptor";
    pub const COMPOSITE_VALIDATION: &str = "layouts/composite.md § Validation";
    pub const COMPOSITE_BINDING: &str = "layouts/composite.md § Binding";
    pub const CSC_DESCRIPTION: &str = "layouts/csc.md § Description";
    pub const CSC_BUFFERS: &str = "layouts/csc.md § Buffer Table";
    pub const CSC_FIELDS: &str = "layouts/csc.md § Additional Descriptor Fields";
    pub const CSC_SIZE: &str = "layouts/csc.md § Buffer Size";
    pub const CSC_INV1: &str = "layouts/csc.md § Storage Invariants (1)";
    pub const CSC_INV2: &str = "layouts/csc.md § Storage Invariants (2)";
    pub const CSC_INV3: &str = "layouts/csc.md § Storage Invariants (3)";
    pub const CSC_INV4: &str = "layouts/csc.md § Storage Invariants (4)";
    pub const CSC_STATS: &str = "layouts/csc.md § Interaction with Statistics Section";
    pub const CSR_DESCRIPTION: &str = "layouts/csr.md § Description";
    pub const CSR_BUFFERS: &str = "layouts/csr.md § Buffer Table";
    pub const CSR_FIELDS: &str = "layouts/csr.md § Additional Descriptor Fields";
    pub const CSR_SIZE: &str = "layouts/csr.md § Buffer Size";
    pub const CSR_INV1: &str = "layouts/csr.md § Storage Invariants (1)";
    pub const CSR_INV2: &str = "layouts/csr.md § Storage Invariants (2)";
    pub const CSR_INV3: &str = "layouts/csr.md § Storage Invariants (3)";
    pub const CSR_INV4: &str = "layouts/csr.md § Storage Invariants (4)";
    pub const CSR_STATS: &str = "layouts/csr.md § Interaction with Statistics Section";
    pub const COO_BUFFERS: &str = "layouts/coo.md § Buffer Table";
    pub const COO_FIELDS: &str = "layouts/coo.md § Additional Descriptor Fields";
    pub const COO_SIZE: &str = "layouts/coo.md § Buffer Size";
    pub const COO_VALIDITY: &str = "layouts/coo.md § Validity Constraints";
    pub const COO_STATS: &str = "layouts/coo.md § Interaction with Statistics Section";
    pub const CSF_DESCRIPTION: &str = "layouts/csf.md § Description";
    pub const CSF_MODE_ORDER: &str = "layouts/csf.md § Mode Ordering";
    pub const CSF_BUFFERS: &str = "layouts/csf.md § Buffer Table";
    pub const CSF_FIELDS: &str = "layouts/csf.md § Additional Descriptor Fields";
    pub const CSF_INVARIANTS: &str = "layouts/csf.md § Storage Invariants";
    pub const CSF_STATS: &str = "layouts/csf.md § Interaction with Statistics Section";
    pub const CSF_SHARDING: &str = "layouts/csf.md § Sharding";
    pub const STRIDED: &str = "layouts/strided.md § Buffer Size";
    pub const TILED: &str = "layouts/tiled.md § Additional Descriptor Fields";
    pub const TILED_PADDING: &str = "layouts/tiled.md § Boundary Padding";
    pub const MORTON: &str = "layouts/morton.md § Dimension Size Constraints";
    pub const MORTON_SIZE: &str = "layouts/morton.md § Buffer Size";
    pub const HILBERT: &str = "layouts/hilbert.md § Validity Constraints";
    pub const HILBERT_SIZE: &str = "layouts/hilbert.md § Buffer Size";
    pub const BLOCK_PAGED_DESCRIPTION: &str = "layouts/block-paged.md § Description";
    pub const BLOCK_PAGED: &str = "layouts/block-paged.md § Additional Descriptor Fields";
    pub const BLOCK_PAGED_SHARDING: &str = "layouts/block-paged.md § Sharding";
    pub const BLOCK_PAGED_INV: &str = "layouts/block-paged.md § Storage Invariants";
}

/// What [`Error::PtrTooLarge`]'s entry is greater than: the smaller entry
/// right after it, if any, and `nnz`, which the last entry must equal
/// (`the entry after it, col_ptr[3] = 3 (must be non-decreasing), and than nnz = 5, ...`).
fn too_large(array: &str, position: u64, nnz: u64, last: u64, next: Option<u64>) -> String {
    let nnz = format!("nnz = {nnz}, which {array}[{last}] must equal");
    match next {
        Some(v) => format!(
            "the entry after it, {array}[{}] = {v} (must be non-decreasing), and than {nnz}",
            position.saturating_add(1)
        ),
        None => format!("{nnz}, so the array decreases after it (must be non-decreasing)"),
    }
}

/// What [`Error::Reserved`] found: a padding byte (`padding`), padding
/// bits (`buffer[0].padding bits`), or reserved bits or bytes, with the
/// value and, in a field of several reserved bytes, which byte.
fn not_zero(field: &Field, value: u64, byte: Option<u64>, offset: u64) -> String {
    let set = match byte {
        Some(i) => format!("its byte {i}, at offset {}, is 0x{value:02x}", offset.saturating_add(i)),
        None => format!("0x{value:02x}"),
    };
    match (field.name, field.member) {
        ("padding", None) => format!("a padding byte is {set}; padding must be 0x00"),
        (_, Some("padding bits")) => format!("padding bits are set ({set}); they must be zero"),
        _ => format!("reserved bits/bytes are set ({set}); they must be zero"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions past 2^32 (a 35 GB `row_indices`) keep their value in
    /// `field()`: it used to saturate at `u32::MAX`.
    #[test]
    fn field_of_a_position_past_u32() {
        let position = 5_000_000_000;
        let e = Error::IndexOutOfBounds {
            tensor: "A".into(),
            array: "row_indices",
            position,
            offset: 40_000_012_288,
            value: 7,
            bound: 4,
            bound_name: Field::new("nrows"),
            rule: rule::CSC_INV4,
        };
        let field = e.field().map(|f| f.to_string());
        assert_eq!(field.as_deref(), Some("row_indices[5000000000]"));
        assert!(
            e.to_string().contains("row_indices[5000000000] at offset 40000012288"),
            "{e}"
        );
    }

    #[test]
    fn accessors_name_offset_and_tensor() {
        let e = Error::PtrFirst {
            tensor: "A".into(),
            array: "col_ptr",
            offset: 12288,
            value: 1,
            rule: rule::CSC_INV1,
        };
        assert_eq!((e.offset(), e.tensor()), (Some(12288), Some("A")));
        assert_eq!(e.field(), Some(Field::at("col_ptr", 0)));
        assert_eq!(e.rule(), Some("layouts/csc.md § Storage Invariants (1)"));
        // A variant whose rule is fixed: the accessor and the message agree.
        let e = Error::DataOffsetMisaligned {
            tensor: "A".into(),
            position: 2,
            offset: 16500,
            data_offset: 4100,
            alignment: 4096,
        };
        assert_eq!(
            e.field().map(|f| f.to_string()).as_deref(),
            Some("index_entry[2].data_offset")
        );
        assert_eq!(e.rule(), Some("file-format.md § Tensor Region › Data Buffer Placement"));
        assert!(
            e.to_string()
                .ends_with("(file-format.md § Tensor Region › Data Buffer Placement)"),
            "{e}"
        );
        // Argument errors have no field, offset or rule.
        let e = Error::IndexArgument {
            tensor: "A".into(),
            what: "column",
            index: 9,
            bound: 5,
        };
        assert_eq!((e.field(), e.offset(), e.rule()), (None, None, None));
        // A long name is cut in the message (a 65535-byte name made a
        // 65 KB error line), and kept whole in the error.
        let long = "L".repeat(65535);
        let e = Error::IndexArgument {
            tensor: long.as_str().into(),
            what: "column",
            index: 9,
            bound: 5,
        };
        assert_eq!(
            e.to_string(),
            format!(
                "tensor '{}... (65535 bytes)': column 9 is out of range, the column count is 5",
                "L".repeat(64)
            )
        );
        assert_eq!(e.tensor(), Some(long.as_str()));
        let e = Error::Invalid {
            scope: Scope::Key(long.as_str().into()),
            field: Field::new("value"),
            offset: 7,
            value: 1,
            expected: "0",
            rule: "metadata.md",
        };
        assert!(
            e.to_string()
                .starts_with(&format!("KV key '{}... (65535 bytes)': ", "L".repeat(64))),
            "{e}"
        );
        let e = Error::Reserved {
            scope: Scope::File,
            field: Field::new("file_flags"),
            offset: 12,
            value: 8,
            byte: None,
            rule: rule::FILE_FLAGS,
        };
        assert_eq!((e.offset(), e.tensor()), (Some(12), None));
        assert_eq!(Error::NotFound { name: "x".into() }.offset(), None);
        assert_eq!(Error::NotFound { name: "x".into() }.tensor(), Some("x"));
        assert_eq!(e.to_string(), "file_flags at offset 12: reserved bits/bytes are set (0x08); they must be zero (file-format.md § File Header › File Flags)");
        // A field of reserved bytes: its offset, and which byte is set.
        let e = Error::Reserved {
            scope: Scope::File,
            field: Field::new("_reserved_header"),
            offset: 36,
            value: 1,
            byte: Some(4),
            rule: rule::FILE_HEADER,
        };
        assert_eq!(
            e.to_string(),
            "_reserved_header at offset 36: reserved bits/bytes are set (its byte 4, at offset 40, is 0x01); they must be zero (file-format.md § File Header)"
        );
    }
}
