//! Tensor descriptors (`metadata.md`): parsing every field from the bytes
//! the index delimits, and the checks that need nothing but the descriptor.
//!
//! The parse never reads past `descriptor_length`. Rules that relate the
//! descriptor to its buffers and data live in [`crate::tensor`].

use zerocopy::little_endian::{I64, U32, U64};
use zerocopy::FromBytes;

use crate::cursor::{to_u64, Cursor, Span};
use crate::element_type::{ElementType, TagClass};
use crate::error::{rule, Error, Field, Result, Scope};
use crate::file::{reserved_zero, EntryField, IndexEntry, Options};
use crate::layout::{Layout, LayoutFields, TiledLevel};
use crate::raw;

/// The descriptor major version this reader implements.
pub const DESCRIPTOR_VERSION_MAJOR: u8 = 1;
/// The descriptor minor version this reader implements.
pub const DESCRIPTOR_VERSION_MINOR: u8 = 0;
/// Largest rank a descriptor may declare (`data-model.md` § Rank).
pub const MAX_RANK: u32 = 64;
/// Deepest nesting of tiled levels accepted (`layouts/tiled.md`).
pub const MAX_TILED_DEPTH: usize = 8;
/// The dynamic-dimension sentinel.
pub const DYNAMIC: u64 = u64::MAX;

/// Descriptor flag bits (`metadata.md` § Fixed Header › Flags).
pub mod flags {
    /// A quantization section is present.
    pub const HAS_QUANTIZATION: u32 = 1 << 0;
    /// A shard section is present.
    pub const HAS_SHARD: u32 = 1 << 1;
    /// An extension type section is present.
    pub const HAS_EXTENSION_TYPE: u32 = 1 << 2;
    /// A statistics section is present.
    pub const HAS_STATISTICS: u32 = 1 << 3;
    /// A composite member section is present.
    pub const HAS_COMPOSITE_MEMBER: u32 = 1 << 4;
    /// Every bit this version defines.
    pub const KNOWN: u32 = 0x1F;
    /// Names of the defined bits, in bit order.
    pub const NAMES: [(u32, &str); 5] = [
        (HAS_QUANTIZATION, "HAS_QUANTIZATION"),
        (HAS_SHARD, "HAS_SHARD"),
        (HAS_EXTENSION_TYPE, "HAS_EXTENSION_TYPE"),
        (HAS_STATISTICS, "HAS_STATISTICS"),
        (HAS_COMPOSITE_MEMBER, "HAS_COMPOSITE_MEMBER"),
    ];
}

/// Statistics `computed_mask` bits (`metadata.md` § Statistics Section › computed_mask).
pub mod statistics_mask {
    /// `nnz` is valid.
    pub const NNZ_VALID: u32 = 1 << 0;
    /// `sparsity_ratio` is valid.
    pub const SPARSITY_VALID: u32 = 1 << 1;
    /// `value_min`, `value_max`, `value_abs_max` are valid.
    pub const VALUE_RANGE_VALID: u32 = 1 << 2;
    /// `value_mean`, `value_stddev` are valid.
    pub const VALUE_STATS_VALID: u32 = 1 << 3;
    /// `nm_n`, `nm_m` are valid.
    pub const NM_SPARSITY_VALID: u32 = 1 << 4;
    /// `has_nan`, `has_inf` are valid.
    pub const NAN_INF_VALID: u32 = 1 << 5;
    /// Names of the defined bits, in bit order.
    pub const NAMES: [(u32, &str); 6] = [
        (NNZ_VALID, "NNZ_VALID"),
        (SPARSITY_VALID, "SPARSITY_VALID"),
        (VALUE_RANGE_VALID, "VALUE_RANGE_VALID"),
        (VALUE_STATS_VALID, "VALUE_STATS_VALID"),
        (NM_SPARSITY_VALID, "NM_SPARSITY_VALID"),
        (NAN_INF_VALID, "NAN_INF_VALID"),
    ];
}

/// A quantization scheme with its fixed fields (`quantization.md`).
#[non_exhaustive]
#[derive(Debug, Clone, Copy)]
pub enum QuantScheme<'data> {
    /// 0x01.
    PerTensorAffine(&'data raw::PerTensorAffine),
    /// 0x02.
    PerChannelAffine(&'data raw::PerChannelAffine),
    /// 0x03.
    PerBlockAffine(&'data raw::PerBlockAffine),
    /// 0x04.
    Nf4(&'data raw::BlockScaled),
    /// 0x05.
    Mxfp(&'data raw::BlockScaled),
    /// A scheme this reader does not know (permissive mode only).
    Unknown,
}

impl QuantScheme<'_> {
    /// The scheme's name: `per_tensor_affine`, `per_channel_affine`,
    /// `per_block_affine`, `nf4`, `mxfp`, `unknown`.
    pub fn as_str(&self) -> &'static str {
        match self {
            QuantScheme::PerTensorAffine(_) => "per_tensor_affine",
            QuantScheme::PerChannelAffine(_) => "per_channel_affine",
            QuantScheme::PerBlockAffine(_) => "per_block_affine",
            QuantScheme::Nf4(_) => "nf4",
            QuantScheme::Mxfp(_) => "mxfp",
            QuantScheme::Unknown => "unknown",
        }
    }
}

/// The quantization section.
#[derive(Clone, Copy)]
pub struct Quantization<'data> {
    /// The 4-byte scheme header.
    pub header: &'data raw::QuantizationHeader,
    /// The decoded scheme.
    pub scheme: QuantScheme<'data>,
    /// The whole payload (`quantization_length` bytes, header included).
    pub payload: &'data [u8],
    /// Absolute offset of the payload.
    pub offset: u64,
}

/// The scheme and its fixed fields, the payload's length and first bytes.
impl std::fmt::Debug for Quantization<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Quantization")
            .field("header", self.header)
            .field("scheme", &self.scheme)
            .field("payload", &crate::debug::few(self.payload))
            .field("offset", &self.offset)
            .finish()
    }
}

/// The shard section: where this tensor sits in a larger parent.
#[derive(Clone, Copy)]
pub struct Shard<'data> {
    /// Shape of the parent, `rank` entries.
    pub parent_shape: &'data [U64],
    /// Start of this shard in the parent, `rank` entries.
    pub shard_offset: &'data [U64],
    /// Absolute offset of `parent_shape`.
    pub offset: u64,
}

/// The first few entries of each array, and their length.
impl std::fmt::Debug for Shard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard")
            .field("parent_shape", &numbers(self.parent_shape))
            .field("shard_offset", &numbers(self.shard_offset))
            .field("offset", &self.offset)
            .finish()
    }
}

/// The first few of `values`, as numbers.
fn numbers(values: &[U64]) -> impl std::fmt::Debug + '_ {
    crate::debug::few_of(values.iter().map(|v| v.get()), values.len())
}

/// Absolute offsets of a descriptor's parts, for error messages and tools.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offsets {
    /// The descriptor's first byte.
    pub descriptor: u64,
    /// `shape[0]`.
    pub shape: u64,
    /// `byte_offset`.
    pub byte_offset: u64,
    /// The first layout-specific field.
    pub layout_fields: u64,
    /// `buffer_count`.
    pub buffer_count: u64,
    /// The statistics section, when present.
    pub statistics: u64,
    /// The extension type section, when present.
    pub extension_type: u64,
    /// The composite member section, when present.
    pub composite_member: u64,
}

/// A parsed tensor descriptor, borrowed from the file.
#[derive(Clone)]
pub struct Descriptor<'data> {
    pub(crate) name: &'data str,
    pub(crate) bytes: &'data [u8],
    pub(crate) header: &'data raw::DescriptorHeader,
    pub(crate) element_type: Option<ElementType>,
    pub(crate) layout: Layout,
    pub(crate) shape: &'data [U64],
    pub(crate) byte_offset: u64,
    pub(crate) layout_fields: LayoutFields<'data>,
    /// `None` when an unknown layout hides the buffer table (permissive).
    pub(crate) buffers: Option<&'data [raw::BufferHandle]>,
    pub(crate) quantization: Option<Quantization<'data>>,
    pub(crate) shard: Option<Shard<'data>>,
    pub(crate) statistics: Option<&'data raw::Statistics>,
    pub(crate) extension_type: Option<&'data raw::ExtensionType>,
    pub(crate) composite_member: Option<&'data raw::CompositeMember>,
    pub(crate) offsets: Offsets,
}

/// What the descriptor says, arrays cut to their first few entries; not
/// its bytes.
impl std::fmt::Debug for Descriptor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Descriptor")
            .field("name", &crate::debug::Text(self.name))
            .field("offset", &self.offsets.descriptor)
            .field("descriptor_length", &self.bytes.len())
            .field("version", &self.version())
            .field("flags", &self.flags())
            .field("element_type", &self.element_type)
            .field("layout", &self.layout)
            .field("shape", &numbers(self.shape))
            .field("byte_offset", &self.byte_offset)
            .field("layout_fields", &self.layout_fields)
            .field("buffer_count", &self.buffers.map(<[raw::BufferHandle]>::len))
            .field("quantization", &self.quantization)
            .field("shard", &self.shard)
            .field("statistics", &self.statistics)
            .field("extension_type", &self.extension_type)
            .field("composite_member", &self.composite_member)
            .finish()
    }
}

impl<'data> Descriptor<'data> {
    /// The descriptor's bytes (`descriptor_length` of them).
    pub fn bytes(&self) -> &'data [u8] {
        self.bytes
    }

    /// The raw fixed header.
    pub fn header(&self) -> &'data raw::DescriptorHeader {
        self.header
    }

    /// `(version_major, version_minor)`.
    pub fn version(&self) -> (u8, u8) {
        (self.header.version_major, self.header.version_minor)
    }

    /// The descriptor `flags`.
    pub fn flags(&self) -> u32 {
        self.header.flags.get()
    }

    /// The element type; `None` for an unknown tag kept in permissive mode.
    pub fn element_type(&self) -> Option<ElementType> {
        self.element_type
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Number of dimensions.
    pub fn rank(&self) -> u32 {
        self.header.rank.get()
    }

    /// The shape, `rank` entries (`u64::MAX` marks a dynamic dimension).
    pub fn shape(&self) -> impl ExactSizeIterator<Item = u64> + 'data {
        self.shape.iter().map(|d| d.get())
    }

    /// `byte_offset`, in bytes from the start of buffer 0.
    pub fn byte_offset(&self) -> u64 {
        self.byte_offset
    }

    /// The layout-specific fields.
    pub fn layout_fields(&self) -> &LayoutFields<'data> {
        &self.layout_fields
    }

    /// The buffer handles; `None` when an unknown layout hides them.
    pub fn buffer_handles(&self) -> Option<&'data [raw::BufferHandle]> {
        self.buffers
    }

    /// The quantization section, when present.
    pub fn quantization(&self) -> Option<&Quantization<'data>> {
        self.quantization.as_ref()
    }

    /// The shard section, when present.
    pub fn shard(&self) -> Option<&Shard<'data>> {
        self.shard.as_ref()
    }

    /// The statistics section, when present (advisory).
    pub fn statistics(&self) -> Option<&'data raw::Statistics> {
        self.statistics
    }

    /// The extension type section, when present.
    pub fn extension_type(&self) -> Option<&'data raw::ExtensionType> {
        self.extension_type
    }

    /// The composite member section, when present.
    pub fn composite_member(&self) -> Option<&'data raw::CompositeMember> {
        self.composite_member
    }

    /// Absolute offsets of the descriptor's parts.
    pub fn offsets(&self) -> Offsets {
        self.offsets
    }

    /// Absolute offset of `shape[i]`.
    /// The shape with every dimension checked not to be dynamic
    /// ([`Error::DynamicDimension`] names the first that is).
    pub(crate) fn static_shape(&self) -> Result<Vec<u64>> {
        let d = self;
        d.shape()
            .enumerate()
            .map(|(i, n)| {
                if n == DYNAMIC {
                    Err(Error::DynamicDimension {
                        tensor: self.name.into(),
                        field: Field::at("shape", to_u64(i)),
                        offset: d.shape_offset(i),
                    })
                } else {
                    Ok(n)
                }
            })
            .collect()
    }

    pub(crate) fn shape_offset(&self, i: usize) -> u64 {
        self.offsets.shape.saturating_add(to_u64(i).saturating_mul(8))
    }

    /// Absolute offset of field `at` (0 = `byte_size`, 8 = `alignment`, 12..16
    /// the tag bytes) of buffer handle `i`.
    pub(crate) fn handle_offset(&self, i: usize, at: u64) -> u64 {
        self.offsets
            .buffer_count
            .saturating_add(1)
            .saturating_add(to_u64(i).saturating_mul(16))
            .saturating_add(at)
    }
}

/// Parses a descriptor from the bytes its index entry delimits (`bytes`:
/// the entry's `descriptor_length` bytes at its `descriptor_offset`,
/// already known to lie inside the file).
pub(crate) fn parse<'data>(
    entry: IndexEntry<'data>,
    bytes: &'data [u8],
    options: Options,
) -> Result<Descriptor<'data>> {
    let mut c =
        Cursor::new(bytes, entry.descriptor_offset(), "descriptor", rule::FIXED_HEADER).for_tensor(entry.name());
    parse_from(&mut c, entry, bytes, options)
}

/// As [`parse`], also returning every field read (up to the first error).
pub(crate) fn parse_recorded<'data>(
    entry: IndexEntry<'data>,
    bytes: &'data [u8],
    options: Options,
) -> (Result<Descriptor<'data>>, Vec<Span<'data>>) {
    let mut c = Cursor::new(bytes, entry.descriptor_offset(), "descriptor", rule::FIXED_HEADER)
        .for_tensor(entry.name())
        .recording(true);
    let result = parse_from(&mut c, entry, bytes, options);
    let stopped = c.offset();
    let unread = bytes.get(c.position()..).unwrap_or_default();
    let mut spans = c.into_spans();
    // The bytes the parse did not read are listed too: where it stopped at
    // an error, so that an error pointing at them (a truncated field,
    // trailing bytes) points into a listed span; after a parse that
    // succeeded, the bytes it skipped (a newer minor version's fields, or
    // extra bytes permissive mode accepts).
    if !unread.is_empty() {
        let field = if result.is_err() {
            crate::annotate::UNREAD
        } else {
            crate::annotate::SKIPPED
        };
        spans.push(Span {
            field: Field::new(field),
            offset: stopped,
            bytes: unread,
        });
    }
    (result, spans)
}

fn parse_from<'data>(
    c: &mut Cursor<'data>,
    entry: IndexEntry<'data>,
    bytes: &'data [u8],
    options: Options,
) -> Result<Descriptor<'data>> {
    let (name, offset) = (entry.name(), entry.descriptor_offset());
    let strict = options.is_strict();
    let scope = || Scope::tensor(name);

    // The first ten bytes say what this is and how long it is; they are read
    // one field at a time so a too-short descriptor is reported as such.
    let magic = c.take(4, Field::new("magic"))?;
    if magic != b"HRRY" {
        return Err(Error::BadMagic {
            scope: scope(),
            field: Field::new("magic"),
            offset,
            expected: "HRRY",
            found: magic.escape_ascii().to_string(),
            rule: rule::FIXED_HEADER,
        });
    }
    let version_major = c.u8(Field::new("version_major"))?;
    if version_major != DESCRIPTOR_VERSION_MAJOR {
        return Err(Error::UnsupportedVersion {
            scope: scope(),
            field: Field::new("version_major"),
            offset: offset + 4,
            found: version_major,
            supported: DESCRIPTOR_VERSION_MAJOR,
            rule: rule::DESCRIPTOR_VERSION,
        });
    }
    let version_minor = c.u8(Field::new("version_minor"))?;
    let descriptor_length = u64::from(c.u32(Field::new("descriptor_length"))?);
    if descriptor_length < 20 {
        return Err(Error::Invalid {
            scope: scope(),
            field: Field::new("descriptor_length"),
            offset: offset + 6,
            value: descriptor_length,
            expected: "at least 20",
            rule: rule::FIXED_HEADER,
        });
    }
    if descriptor_length != entry.descriptor_length() {
        return Err(Error::DescriptorLengthMismatch {
            tensor: name.into(),
            position: to_u64(entry.position()),
            offset: entry.field_offset(EntryField::DescriptorLength),
            descriptor_offset: offset + 6,
            index_value: entry.descriptor_length(),
            descriptor_value: descriptor_length,
        });
    }
    let flags = c.u32(Field::new("flags"))?;
    let type_tag = c.u8(Field::new("type_tag"))?;
    let layout_tag = c.u8(Field::new("layout_tag"))?;
    let rank = c.u32(Field::new("rank"))?;
    // The same 20 bytes as a struct, for raw access (they are all present).
    let header = raw::DescriptorHeader::ref_from_prefix(bytes)
        .map(|(h, _)| h)
        .map_err(|_| Error::Truncated {
            scope: scope(),
            field: Field::new("descriptor fixed header"),
            offset,
            need: 20,
            have: to_u64(bytes.len()),
            section: "descriptor",
            rule: rule::FIXED_HEADER,
        })?;
    if flags & !flags::KNOWN != 0 {
        return Err(Error::Reserved {
            scope: scope(),
            field: Field::new("flags"),
            offset: offset + 10,
            value: u64::from(flags & !flags::KNOWN),
            byte: None,
            rule: rule::FLAGS,
        });
    }
    let has = |bit: u32| flags & bit != 0;

    let element_class = ElementType::classify(type_tag);
    let is_extension_type = matches!(element_class, TagClass::Extension);
    if is_extension_type != has(flags::HAS_EXTENSION_TYPE) {
        return Err(Error::Invalid {
            scope: scope(),
            field: Field::new("flags"),
            offset: offset + 10,
            value: u64::from(flags),
            expected: "HAS_EXTENSION_TYPE set exactly when type_tag is in 0xF0-0xFE",
            rule: rule::FLAGS,
        });
    }
    let mut element_type = match element_class {
        TagClass::Known(t) => Some(t),
        TagClass::Extension => None, // resolved from the extension section below
        TagClass::Unknown { why } => {
            if strict || why == "invalid" {
                return Err(Error::UnknownTag {
                    scope: scope(),
                    field: Field::new("type_tag"),
                    offset: offset + 14,
                    value: type_tag,
                    why,
                    rule: rule::TYPE_TAGS,
                });
            }
            None
        }
    };

    let layout = Layout::from_tag(layout_tag);
    match layout {
        Layout::Unknown(tag) if strict || tag == 0x00 || tag == 0xFF => {
            return Err(Error::UnknownTag {
                scope: scope(),
                field: Field::new("layout_tag"),
                offset: offset + 15,
                value: tag,
                why: if tag == 0x00 || tag == 0xFF {
                    "invalid"
                } else {
                    "not recognised"
                },
                rule: rule::LAYOUT_TAGS,
            });
        }
        _ => {}
    }

    if rank > MAX_RANK {
        return Err(Error::Invalid {
            scope: scope(),
            field: Field::new("rank"),
            offset: offset + 16,
            value: u64::from(rank),
            expected: "at most 64",
            rule: "data-model.md § Rank",
        });
    }
    let rank_u64 = u64::from(rank);

    let shape_offset = c.offset();
    let shape = c.slice::<U64>(rank_u64, Field::new("shape"))?;
    let byte_offset_offset = c.offset();
    let byte_offset = c.u64(Field::new("byte_offset"))?;

    let layout_fields_offset = c.offset();
    let layout_fields = parse_layout_fields(c, layout, rank_u64, name)?;
    if let LayoutFields::Extension {
        extension_layout_id, ..
    } = layout_fields
    {
        if strict && !options.recognises_extension_layout(extension_layout_id) {
            return Err(Error::Invalid {
                scope: scope(),
                field: Field::new("extension_layout_id"),
                offset: layout_fields_offset,
                value: extension_layout_id,
                expected: "an id the reader recognises (none by default; permissive mode accepts any, without interpreting the data)",
                rule: rule::EXTENSION_LAYOUT,
            });
        }
    }

    let mut offsets = Offsets {
        descriptor: offset,
        shape: shape_offset,
        byte_offset: byte_offset_offset,
        layout_fields: layout_fields_offset,
        ..Offsets::default()
    };

    let mut descriptor = Descriptor {
        name,
        bytes,
        header,
        element_type,
        layout,
        shape,
        byte_offset,
        layout_fields,
        buffers: None,
        quantization: None,
        shard: None,
        statistics: None,
        extension_type: None,
        composite_member: None,
        offsets,
    };
    if matches!(descriptor.layout_fields, LayoutFields::Unknown) {
        // Permissive: an unknown layout's fields cannot be delimited, so
        // nothing after them can be located. Keep what was read.
        return Ok(descriptor);
    }

    offsets.buffer_count = c.offset();
    let buffer_count = c.u8(Field::new("buffer_count"))?;
    descriptor.buffers = Some(c.slice_struct::<raw::BufferHandle>(u64::from(buffer_count), Field::new("buffer"))?);

    if has(flags::HAS_QUANTIZATION) {
        descriptor.quantization = Some(parse_quantization(c, name, strict)?);
    }
    if has(flags::HAS_SHARD) {
        let shard_offset = c.offset();
        descriptor.shard = Some(Shard {
            parent_shape: c.slice::<U64>(rank_u64, Field::new("parent_shape"))?,
            shard_offset: c.slice::<U64>(rank_u64, Field::new("shard_offset"))?,
            offset: shard_offset,
        });
    }
    if has(flags::HAS_STATISTICS) {
        offsets.statistics = c.offset();
        let stats = c.read_struct::<raw::Statistics>(Field::new("statistics"), Some("statistics"))?;
        check_statistics(stats, offsets.statistics, name)?;
        // NOTES.md 'value_stddev, nm_n/nm_m': strict only; permissive mode
        // keeps the advisory block and reports it
        // (Tensor::statistics_rule_violation).
        if let (true, Some(e)) = (strict, statistics_value_violation(stats, offsets.statistics, name)) {
            return Err(e);
        }
        descriptor.statistics = Some(stats);
    }
    if has(flags::HAS_EXTENSION_TYPE) {
        offsets.extension_type = c.offset();
        let ext = c.read_struct::<raw::ExtensionType>(Field::new("extension_type"), Some("extension_type"))?;
        let bit_width = check_extension_type(ext, offsets.extension_type, name)?;
        element_type = Some(ElementType::Extension {
            tag: type_tag,
            bit_width,
        });
        descriptor.element_type = element_type;
        descriptor.extension_type = Some(ext);
    }
    if has(flags::HAS_COMPOSITE_MEMBER) {
        offsets.composite_member = c.offset();
        let member = c.read_struct::<raw::CompositeMember>(Field::new("composite_member"), Some("composite_member"))?;
        if member.member_role > 1 {
            return Err(Error::Invalid {
                scope: scope(),
                field: Field::sub("composite_member", "member_role"),
                offset: offsets.composite_member,
                value: u64::from(member.member_role),
                expected: "0x00 (correction) or 0x01 (base)",
                rule: rule::COMPOSITE_MEMBER,
            });
        }
        reserved_zero(
            &member.reserved,
            Field::sub("composite_member", "_reserved"),
            offsets.composite_member + 1,
            rule::COMPOSITE_MEMBER,
            scope(),
        )?;
        descriptor.composite_member = Some(member);
    }
    descriptor.offsets = offsets;

    // Bytes after the last section: a newer minor version may add fields we
    // must skip; in our own version they are an error unless permissive
    // (versioning.md § Compatibility Matrix, NOTES.md 'Extra bytes').
    let newer_minor = version_minor > DESCRIPTOR_VERSION_MINOR;
    if c.remaining() != 0 && strict && !newer_minor {
        return Err(Error::TrailingBytes {
            scope: scope(),
            section: "descriptor",
            offset: c.offset(),
            count: to_u64(c.remaining()),
            rule: rule::DESCRIPTOR_VERSION,
        });
    }
    Ok(descriptor)
}

fn parse_layout_fields<'data>(
    c: &mut Cursor<'data>,
    layout: Layout,
    rank: u64,
    name: &'data str,
) -> Result<LayoutFields<'data>> {
    let scope = || Scope::tensor(name);
    Ok(match layout {
        Layout::RowMajor | Layout::ColMajor => LayoutFields::None,
        Layout::Strided => LayoutFields::Strided {
            strides: c.slice::<I64>(rank, Field::new("strides"))?,
        },
        Layout::Tiled => {
            let mut levels = Vec::new();
            // Where the previous level's inner_layout (tiled again) is.
            let mut nested_at = 0;
            loop {
                if levels.len() >= MAX_TILED_DEPTH {
                    return Err(Error::Invalid {
                        scope: scope(),
                        field: Field::new("inner_layout"),
                        offset: nested_at,
                        value: 4,
                        expected: "at most 8 nested tiled levels",
                        rule: rule::TILED,
                    });
                }
                let level_offset = c.offset();
                let tile_shape = c.slice::<U64>(rank, Field::new("tile_shape"))?;
                let orders_offset = c.offset();
                let orders = c.read_struct::<raw::TiledOrders>(Field::new("outer_layout"), None)?;
                if !matches!(orders.outer_layout, 1..=3) {
                    return Err(Error::Invalid {
                        scope: scope(),
                        field: Field::new("outer_layout"),
                        offset: orders_offset,
                        value: u64::from(orders.outer_layout),
                        expected: "0x01, 0x02 or 0x03",
                        rule: rule::TILED,
                    });
                }
                nested_at = orders_offset + 1;
                if !matches!(orders.inner_layout, 1..=4) {
                    return Err(Error::Invalid {
                        scope: scope(),
                        field: Field::new("inner_layout"),
                        offset: nested_at,
                        value: u64::from(orders.inner_layout),
                        expected: "0x01, 0x02, 0x03 or 0x04",
                        rule: rule::TILED,
                    });
                }
                reserved_zero(
                    &orders.reserved,
                    Field::new("_reserved"),
                    orders_offset + 2,
                    rule::TILED,
                    scope(),
                )?;
                let outer_strides = if orders.outer_layout == 3 {
                    Some(c.slice::<I64>(rank, Field::new("outer_strides"))?)
                } else {
                    None
                };
                let inner_strides = if orders.inner_layout == 3 {
                    Some(c.slice::<I64>(rank, Field::new("inner_strides"))?)
                } else {
                    None
                };
                levels.push(TiledLevel {
                    tile_shape,
                    outer_layout: orders.outer_layout,
                    inner_layout: orders.inner_layout,
                    outer_strides,
                    inner_strides,
                    offset: level_offset,
                });
                if orders.inner_layout != 4 {
                    break;
                }
            }
            LayoutFields::Tiled { levels }
        }
        Layout::Morton => LayoutFields::Morton {
            morton_bits: c.slice::<U32>(rank, Field::new("morton_bits"))?,
        },
        Layout::Coo => LayoutFields::Coo(c.read_struct(Field::new("nnz"), None)?),
        Layout::Csr => LayoutFields::Csr(c.read_struct(Field::new("nnz"), None)?),
        Layout::Csc => LayoutFields::Csc(c.read_struct(Field::new("nnz"), None)?),
        Layout::Csf => {
            let nnz = c.u64(Field::new("nnz"))?;
            let mode_order = c.slice::<U32>(rank, Field::new("mode_order"))?;
            let reserved = c.read::<[u8; 8]>(Field::new("_reserved"))?;
            LayoutFields::Csf {
                nnz,
                mode_order,
                reserved,
            }
        }
        Layout::BlockPaged => LayoutFields::BlockPaged(c.read_struct(Field::new("page_size"), None)?),
        Layout::Composite => LayoutFields::Composite(c.read_struct(Field::new("composition_rule"), None)?),
        Layout::Hilbert => LayoutFields::Hilbert(c.read_struct(Field::new("hilbert_order"), None)?),
        Layout::Extension(_) => {
            let extension_layout_id = c.u64(Field::new("extension_layout_id"))?;
            let length = c.u32(Field::new("extension_data_length"))?;
            let extension_data = c.take(u64::from(length), Field::new("extension_data"))?;
            LayoutFields::Extension {
                extension_layout_id,
                extension_data,
            }
        }
        Layout::Unknown(_) => LayoutFields::Unknown,
    })
}

fn parse_quantization<'data>(c: &mut Cursor<'data>, name: &'data str, strict: bool) -> Result<Quantization<'data>> {
    let length = c.u32(Field::new("quantization_length"))?;
    let offset = c.offset();
    let payload = c.take_quiet(u64::from(length), Field::new("quantization_descriptor"))?;
    let mut q = c.sub(payload, offset, "quantization descriptor", rule::QUANT);
    let result = parse_scheme(&mut q, payload, offset, name, strict);
    c.absorb(q);
    result
}

/// The scheme header and fields inside the quantization payload.
fn parse_scheme<'data>(
    q: &mut Cursor<'data>,
    payload: &'data [u8],
    offset: u64,
    name: &'data str,
    strict: bool,
) -> Result<Quantization<'data>> {
    let scope = || Scope::tensor(name);
    let header =
        q.read_struct::<raw::QuantizationHeader>(Field::sub("quantization", "scheme_tag"), Some("quantization"))?;
    let tag = header.scheme_tag;
    let known = matches!(tag, 0x01..=0x05);
    if !known {
        let why = match tag {
            0x00 | 0xFF => "invalid",
            0x60..=0xEF => "reserved",
            _ => "not recognised",
        };
        if strict || why == "invalid" {
            return Err(Error::UnknownTag {
                scope: scope(),
                field: Field::sub("quantization", "scheme_tag"),
                offset,
                value: tag,
                why,
                rule: "quantization.md § Scheme Tag Space",
            });
        }
        return Ok(Quantization {
            header,
            scheme: QuantScheme::Unknown,
            payload,
            offset,
        });
    }
    if header.scheme_version != 1 {
        return Err(Error::UnsupportedVersion {
            scope: scope(),
            field: Field::sub("quantization", "scheme_version"),
            offset: offset + 1,
            found: header.scheme_version,
            supported: 1,
            rule: rule::QUANT,
        });
    }
    // Only the SYMMETRIC bit of per-channel and per-block schemes is defined.
    let allowed_flags: u16 = if matches!(tag, 0x02 | 0x03) { 1 } else { 0 };
    let qflags = header.flags.get();
    if qflags & !allowed_flags != 0 {
        return Err(Error::Reserved {
            scope: scope(),
            field: Field::sub("quantization", "flags"),
            offset: offset + 2,
            value: u64::from(qflags & !allowed_flags),
            byte: None,
            rule: rule::QUANT,
        });
    }
    // Trailing padding after the scheme's fields is allowed
    // (quantization.md § Descriptor Header).
    let scheme = match tag {
        0x01 => {
            let f = q.read_struct::<raw::PerTensorAffine>(Field::sub("quantization", "scale"), Some("quantization"))?;
            reserved_zero(
                &f.reserved,
                Field::sub("quantization", "_reserved"),
                offset + 12,
                "quantization/per-tensor-affine.md § Validity Constraints",
                scope(),
            )?;
            QuantScheme::PerTensorAffine(f)
        }
        0x02 => {
            let f = q.read_struct::<raw::PerChannelAffine>(Field::sub("quantization", "axis"), Some("quantization"))?;
            reserved_zero(
                &f.reserved,
                Field::sub("quantization", "_reserved"),
                offset + 17,
                "quantization/per-channel-affine.md § Validity Constraints",
                scope(),
            )?;
            QuantScheme::PerChannelAffine(f)
        }
        0x03 => {
            let f = q.read_struct::<raw::PerBlockAffine>(Field::sub("quantization", "axis"), Some("quantization"))?;
            reserved_zero(
                &f.reserved,
                Field::sub("quantization", "_reserved"),
                offset + 21,
                "quantization/per-block-affine.md § Binary Encoding",
                scope(),
            )?;
            QuantScheme::PerBlockAffine(f)
        }
        0x04 => QuantScheme::Nf4(
            q.read_struct::<raw::BlockScaled>(Field::sub("quantization", "axis"), Some("quantization"))?,
        ),
        _ => QuantScheme::Mxfp(
            q.read_struct::<raw::BlockScaled>(Field::sub("quantization", "axis"), Some("quantization"))?,
        ),
    };
    Ok(Quantization {
        header,
        scheme,
        payload,
        offset,
    })
}

fn check_statistics(s: &raw::Statistics, offset: u64, name: &str) -> Result<()> {
    let scope = || Scope::tensor(name);
    let mask = s.computed_mask.get();
    if mask >> 6 != 0 {
        return Err(Error::Reserved {
            scope: scope(),
            field: Field::sub("statistics", "computed_mask"),
            offset,
            value: u64::from(mask & !0x3F),
            byte: None,
            rule: rule::STATISTICS,
        });
    }
    if s.reserved.get() != 0 {
        return Err(Error::Reserved {
            scope: scope(),
            field: Field::sub("statistics", "_reserved"),
            offset: offset + 4,
            value: u64::from(s.reserved.get()),
            byte: None,
            rule: rule::STATISTICS,
        });
    }
    reserved_zero(
        &s.reserved2,
        Field::sub("statistics", "_reserved2"),
        offset + 68,
        rule::STATISTICS,
        scope(),
    )
}

/// The field-level MUSTs of the statistics block beyond its reserved bits
/// and bytes (`metadata.md` § Statistics Section › Field Encoding), for
/// the fields whose `computed_mask` bit is set (a field whose bit is clear
/// is unknown, whatever it holds): `value_stddev >= 0.0` (a NaN is not)
/// under `VALUE_STATS_VALID`, `nm_n <= nm_m` under `NM_SPARSITY_VALID`.
/// `offset` is the block's first byte.
pub(crate) fn statistics_value_violation(s: &raw::Statistics, offset: u64, name: &str) -> Option<Error> {
    let mask = s.computed_mask.get();
    let stddev = s.value_stddev.get();
    // A NaN is not >= 0.0; -0.0 is (it compares equal to 0.0).
    if mask & statistics_mask::VALUE_STATS_VALID != 0 && (stddev < 0.0 || stddev.is_nan()) {
        return Some(Error::InvalidNumber {
            scope: Scope::tensor(name),
            field: Field::sub("statistics", "value_stddev"),
            offset: offset + 56,
            value: crate::error::Number::float(stddev),
            expected: "a standard deviation >= 0.0 (not NaN)",
            rule: rule::STATISTICS_FIELDS,
        });
    }
    if mask & statistics_mask::NM_SPARSITY_VALID != 0 && s.nm_n > s.nm_m {
        return Some(Error::Invalid {
            scope: Scope::tensor(name),
            field: Field::sub("statistics", "nm_n"),
            offset: offset + 64,
            value: u64::from(s.nm_n),
            expected: "at most nm_m (the next byte)",
            rule: rule::STATISTICS_FIELDS,
        });
    }
    None
}

/// Checks an extension type section and returns its bit width.
fn check_extension_type(e: &raw::ExtensionType, offset: u64, name: &str) -> Result<u32> {
    let scope = || Scope::tensor(name);
    let invalid = |field: &'static str, at: u64, value: u64, expected: &'static str| Error::Invalid {
        scope: scope(),
        field: Field::sub("extension_type", field),
        offset: offset + at,
        value,
        expected,
        rule: rule::EXTENSION_TYPE,
    };
    let bits = e.bit_width.get();
    match bits {
        0 => return Err(invalid("bit_width", 0, 0, "greater than 0")),
        1 | 2 | 4 => {
            if u32::from(e.packing_factor) != 8 / bits {
                return Err(invalid(
                    "packing_factor",
                    4,
                    u64::from(e.packing_factor),
                    "8 / bit_width",
                ));
            }
        }
        b if b >= 8 && b % 8 == 0 => {
            if e.packing_factor != 1 {
                return Err(invalid(
                    "packing_factor",
                    4,
                    u64::from(e.packing_factor),
                    "1 for whole-byte types",
                ));
            }
        }
        other => {
            return Err(invalid(
                "bit_width",
                0,
                u64::from(other),
                "1, 2, 4 or a whole number of bytes",
            ))
        }
    }
    if e.is_float > 1 {
        return Err(invalid("is_float", 5, u64::from(e.is_float), "0 or 1"));
    }
    if e.is_float == 1 {
        if e.is_signed != 0 {
            return Err(invalid("is_signed", 6, u64::from(e.is_signed), "0 for float types"));
        }
        if e.sign_bits > 1 {
            return Err(invalid("sign_bits", 7, u64::from(e.sign_bits), "0 or 1"));
        }
    } else {
        let float_fields = [
            ("sign_bits", 7, u64::from(e.sign_bits)),
            ("exponent_bits", 8, u64::from(e.exponent_bits)),
            ("mantissa_bits", 9, u64::from(e.mantissa_bits)),
            ("exponent_bias", 12, u64::from(e.exponent_bias.get())),
        ];
        for (field, at, value) in float_fields {
            if value != 0 {
                return Err(invalid(field, at, value, "0 for integer types"));
            }
        }
        if e.is_signed > 1 {
            return Err(invalid("is_signed", 6, u64::from(e.is_signed), "0 or 1"));
        }
    }
    reserved_zero(
        &e.reserved,
        Field::sub("extension_type", "_reserved"),
        offset + 10,
        rule::EXTENSION_TYPE,
        scope(),
    )?;
    reserved_zero(
        &e.reserved2,
        Field::sub("extension_type", "_reserved2"),
        offset + 18,
        rule::EXTENSION_TYPE,
        scope(),
    )?;
    Ok(bits)
}

/// Reads a descriptor's bytes given its absolute range (already checked to
/// lie inside `data`).
pub(crate) fn descriptor_bytes(data: &[u8], offset: u64, length: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(length).ok()?)?;
    data.get(start..end)
}

/// Convenience for tests and tools: the fixed header of a descriptor.
pub fn fixed_header(bytes: &[u8]) -> Option<&raw::DescriptorHeader> {
    raw::DescriptorHeader::ref_from_prefix(bytes).ok().map(|(h, _)| h)
}
