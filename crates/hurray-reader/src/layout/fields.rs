//! Layout tags and layout-specific descriptor fields
//! (`memory-layout.md`, `metadata.md` § Layout-Specific Fields, `layouts/*.md`).

use zerocopy::little_endian::{I64, U32, U64};

use crate::cursor::Cursor;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::reserved_zero;
use crate::raw;

/// Deepest nesting of tiled levels accepted (`layouts/tiled.md`).
pub const MAX_TILED_DEPTH: usize = hurray_format::descriptor::MAX_TILED_DEPTH as usize;

pub use hurray_format::Layout;

/// One level of a tiled layout (`layouts/tiled.md`).
#[derive(Clone, Copy)]
pub struct TiledLevel<'data> {
    /// Tile size per dimension, `rank` entries.
    pub tile_shape: &'data [U64],
    /// Layout of the tile grid: 0x01, 0x02 or 0x03.
    pub outer_layout: u8,
    /// Layout inside a tile: 0x01, 0x02, 0x03, or 0x04 (the next level).
    pub inner_layout: u8,
    /// Tile-grid strides in tiles, when `outer_layout` is strided.
    pub outer_strides: Option<&'data [I64]>,
    /// In-tile strides in elements, when `inner_layout` is strided.
    pub inner_strides: Option<&'data [I64]>,
    /// Absolute offset of this level's `tile_shape`.
    pub offset: u64,
}

/// Shapes and strides as their first few entries and their length.
impl std::fmt::Debug for TiledLevel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TiledLevel")
            .field("tile_shape", &u64s(self.tile_shape))
            .field("outer_layout", &self.outer_layout)
            .field("inner_layout", &self.inner_layout)
            .field("outer_strides", &self.outer_strides.map(i64s))
            .field("inner_strides", &self.inner_strides.map(i64s))
            .field("offset", &self.offset)
            .finish()
    }
}

/// The first few of `values`, as numbers.
fn u64s(values: &[U64]) -> impl std::fmt::Debug + '_ {
    crate::debug::few_of(values.iter().map(|v| v.get()), values.len())
}

/// The first few of `values`, as numbers.
fn i64s(values: &[I64]) -> impl std::fmt::Debug + '_ {
    crate::debug::few_of(values.iter().map(|v| v.get()), values.len())
}

/// The layout-specific fields of a descriptor, borrowed from the file.
#[non_exhaustive]
#[derive(Clone)]
pub enum LayoutFields<'data> {
    /// Row-major and column-major have none.
    None,
    /// Strided: one stride per dimension, in elements.
    Strided {
        /// `strides[rank]`.
        strides: &'data [I64],
    },
    /// Tiled: the outermost level first; at most 8 levels.
    Tiled {
        /// The levels, outermost first.
        levels: Vec<TiledLevel<'data>>,
    },
    /// Morton: bits per dimension.
    Morton {
        /// `morton_bits[rank]`.
        morton_bits: &'data [U32],
    },
    /// COO.
    Coo(&'data raw::CooFields),
    /// CSR.
    Csr(&'data raw::CompressedFields),
    /// CSC.
    Csc(&'data raw::CompressedFields),
    /// CSF.
    Csf {
        /// Stored elements.
        nnz: u64,
        /// `mode_order[rank]`.
        mode_order: &'data [U32],
        /// Must be zero.
        reserved: &'data [u8; 8],
    },
    /// Block-paged.
    BlockPaged(&'data raw::BlockPagedFields),
    /// Composite head.
    Composite(&'data raw::CompositeFields),
    /// Hilbert.
    Hilbert(&'data raw::HilbertFields),
    /// Implementation-private layout.
    Extension {
        /// Implementation-defined identifier.
        extension_layout_id: u64,
        /// Opaque metadata.
        extension_data: &'data [u8],
    },
    /// An unknown layout (permissive mode): its fields cannot be delimited,
    /// so the buffer table and later sections are not available.
    Unknown,
}

/// Fixed fields as they are; arrays as their first few entries and their
/// length (`extension_data` may be as long as the descriptor).
impl std::fmt::Debug for LayoutFields<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::debug::{few, few_of};
        match self {
            LayoutFields::None => f.write_str("None"),
            LayoutFields::Strided { strides } => f.debug_struct("Strided").field("strides", &i64s(strides)).finish(),
            LayoutFields::Tiled { levels } => f.debug_struct("Tiled").field("levels", &few(levels)).finish(),
            LayoutFields::Morton { morton_bits } => f
                .debug_struct("Morton")
                .field(
                    "morton_bits",
                    &few_of(morton_bits.iter().map(|b| b.get()), morton_bits.len()),
                )
                .finish(),
            LayoutFields::Coo(c) => f.debug_tuple("Coo").field(c).finish(),
            LayoutFields::Csr(c) => f.debug_tuple("Csr").field(c).finish(),
            LayoutFields::Csc(c) => f.debug_tuple("Csc").field(c).finish(),
            LayoutFields::Csf { nnz, mode_order, .. } => f
                .debug_struct("Csf")
                .field("nnz", nnz)
                .field(
                    "mode_order",
                    &few_of(mode_order.iter().map(|m| m.get()), mode_order.len()),
                )
                .finish_non_exhaustive(),
            LayoutFields::BlockPaged(b) => f.debug_tuple("BlockPaged").field(b).finish(),
            LayoutFields::Composite(c) => f.debug_tuple("Composite").field(c).finish(),
            LayoutFields::Hilbert(h) => f.debug_tuple("Hilbert").field(h).finish(),
            LayoutFields::Extension {
                extension_layout_id,
                extension_data,
            } => f
                .debug_struct("Extension")
                .field("extension_layout_id", extension_layout_id)
                .field("extension_data", &few(extension_data))
                .finish(),
            LayoutFields::Unknown => f.write_str("Unknown"),
        }
    }
}

impl LayoutFields<'_> {
    /// The `nnz` field of a sparse layout.
    pub fn nnz(&self) -> Option<u64> {
        match self {
            LayoutFields::Coo(f) => Some(f.nnz.get()),
            LayoutFields::Csr(f) | LayoutFields::Csc(f) => Some(f.nnz.get()),
            LayoutFields::Csf { nnz, .. } => Some(*nnz),
            _ => None,
        }
    }
}

/// Parses the layout-specific fields of `layout` (`metadata.md` §
/// Layout-Specific Fields) for a tensor of `rank` dimensions.
pub(crate) fn parse<'data>(
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
            let invalid = |field, offset, value, expected| Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::new(field),
                    offset,
                    rule: rule::TILED,
                },
                value,
                expected,
            };
            loop {
                if levels.len() >= MAX_TILED_DEPTH {
                    return Err(invalid("inner_layout", nested_at, 4, "at most 8 nested tiled levels"));
                }
                let level_offset = c.offset();
                let tile_shape = c.slice::<U64>(rank, Field::new("tile_shape"))?;
                let orders_offset = c.offset();
                let orders = c.read_struct::<raw::TiledOrders>(Field::new("outer_layout"), None)?;
                if !matches!(orders.outer_layout, 1..=3) {
                    let value = u64::from(orders.outer_layout);
                    return Err(invalid("outer_layout", orders_offset, value, "0x01, 0x02 or 0x03"));
                }
                nested_at = orders_offset + 1;
                if !matches!(orders.inner_layout, 1..=4) {
                    let value = u64::from(orders.inner_layout);
                    return Err(invalid("inner_layout", nested_at, value, "0x01, 0x02, 0x03 or 0x04"));
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
        // `Layout::Unknown`, and any layout `hurray_format::Layout`
        // (non-exhaustive) adds later.
        _ => LayoutFields::Unknown,
    })
}
