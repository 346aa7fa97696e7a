//! Tensor descriptors (`metadata.md`): the parsed [`Descriptor`], borrowed
//! from the bytes the index delimits, and the checks that need nothing but
//! the descriptor.
//!
//! - `parse`: the fixed header and every section in file
//!   order; it never reads past `descriptor_length`;
//! - `statistics`: the statistics block's field rules (§ Statistics Section);
//! - `extension`: the extension type section (§ Extension Type Section).
//!
//! The layout-specific fields are parsed by [`crate::layout::fields`], the
//! quantization section by [`crate::quantization`]. Rules that relate the
//! descriptor to its buffers and data live in [`crate::tensor`].

mod extension;
pub(crate) mod parse;
pub(crate) mod statistics;

use zerocopy::little_endian::U64;
use zerocopy::FromBytes;

use crate::cursor::to_u64;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::layout::fields::{Layout, LayoutFields};
use crate::raw;

pub use crate::layout::fields::MAX_TILED_DEPTH;
pub use crate::quantization::section::{QuantScheme, Quantization};

/// The field name of the descriptor bytes after the point where parsing
/// stopped (listed only when it stopped at an error).
pub(crate) const UNREAD: &str = "(unread)";

/// The field name of the descriptor bytes after its last known field that
/// a successful parse skipped.
pub(crate) const SKIPPED: &str = "(skipped)";

/// The descriptor major version this reader implements.
pub const DESCRIPTOR_VERSION_MAJOR: u8 = hurray_format::descriptor::DESCRIPTOR_VERSION_MAJOR;
/// The descriptor minor version this reader implements.
pub const DESCRIPTOR_VERSION_MINOR: u8 = hurray_format::descriptor::DESCRIPTOR_VERSION_MINOR;
/// Largest rank a descriptor may declare (`data-model.md` § Rank).
pub const MAX_RANK: u32 = hurray_format::descriptor::MAX_RANK;
/// The dynamic-dimension sentinel.
pub const DYNAMIC: u64 = hurray_format::descriptor::DYNAMIC;

pub use hurray_format::descriptor::flags;

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
                        at: Location {
                            scope: Scope::tensor(self.name),
                            field: Field::at("shape", to_u64(i)),
                            offset: d.shape_offset(i),
                            rule: rule::DYNAMIC_DIMENSION,
                        },
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
