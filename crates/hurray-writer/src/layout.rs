//! Memory layouts (`memory-layout.md`, `layouts/*.md`) and their
//! layout-specific descriptor fields.

use hurray_format::layout::{block_paged, composite, tile_order};

use crate::num::Enc;

/// A memory layout together with its layout-specific descriptor fields.
///
/// The variant selects the descriptor's `layout_tag`; its fields are encoded
/// right after `byte_offset` (`metadata.md` § Layout-Specific Fields).
#[derive(Debug, Clone, PartialEq)]
pub enum Layout {
    /// Row-major (C order), tag `0x01`; no fields.
    RowMajor,
    /// Column-major (Fortran order), tag `0x02`; no fields.
    ColumnMajor,
    /// Strided, tag `0x03`.
    Strided {
        /// Stride per dimension, in logical elements (length `rank`).
        strides: Vec<i64>,
    },
    /// Tiled / blocked, tag `0x04`.
    Tiled(Tiled),
    /// Morton (Z-order), tag `0x05`.
    Morton {
        /// Bits per dimension (length `rank`).
        morton_bits: Vec<u32>,
    },
    /// COO, tag `0x06`.
    Coo {
        /// Number of stored elements.
        nnz: u64,
        /// Whether entries are in strictly increasing lexicographic order.
        is_sorted: bool,
    },
    /// CSR, tag `0x07`.
    Csr {
        /// Number of stored elements.
        nnz: u64,
    },
    /// CSC, tag `0x08`.
    Csc {
        /// Number of stored elements.
        nnz: u64,
    },
    /// CSF, tag `0x09`.
    Csf {
        /// Number of stored elements.
        nnz: u64,
        /// Logical dimension stored at each tree level (length `rank`, a
        /// permutation of `0..rank`).
        mode_order: Vec<u32>,
    },
    /// Block-paged KV cache, tag `0x0A`.
    BlockPaged(BlockPaged),
    /// Composite head (virtual, no buffers), tag `0x0B`.
    Composite(CompositeHead),
    /// Hilbert curve, tag `0x40`.
    Hilbert {
        /// Curve order; every dimension is `2^hilbert_order`.
        hilbert_order: u32,
        /// Number of curve dimensions; equals `rank`.
        hilbert_rank: u32,
    },
    /// Implementation-private extension layout, tag `0xF0`–`0xFE`.
    Extension {
        /// The layout tag (`0xF0`–`0xFE` in a valid file).
        tag: u8,
        /// `extension_layout_id`.
        extension_layout_id: u64,
        /// Opaque `extension_data` (its `u32` length prefix is computed).
        extension_data: Vec<u8>,
    },
    /// Any tag with verbatim field bytes; refused by the checked path.
    Other {
        /// The layout tag.
        tag: u8,
        /// Layout-specific field bytes, written as given.
        fields: Vec<u8>,
    },
}

/// Fields of the tiled layout (`layouts/tiled.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct Tiled {
    /// Tile size per dimension (length `rank`, every entry > 0).
    pub tile_shape: Vec<u64>,
    /// Order of the tile grid.
    pub outer: TileOrder,
    /// Order of elements inside a tile (may recurse).
    pub inner: TileInner,
}

/// Order of the tile grid of a tiled layout.
#[derive(Debug, Clone, PartialEq)]
pub enum TileOrder {
    /// Row-major (`0x01`).
    RowMajor,
    /// Column-major (`0x02`).
    ColumnMajor,
    /// Strided (`0x03`), strides in tiles (length `rank`).
    Strided(Vec<i64>),
}

/// Order of elements inside one tile of a tiled layout.
#[derive(Debug, Clone, PartialEq)]
pub enum TileInner {
    /// Row-major (`0x01`).
    RowMajor,
    /// Column-major (`0x02`).
    ColumnMajor,
    /// Strided (`0x03`), strides in elements within a tile (length `rank`).
    Strided(Vec<i64>),
    /// Recursive tiling (`0x04`) of each tile.
    Tiled(Box<Tiled>),
}

/// Fields of the block-paged layout (`layouts/block-paged.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockPaged {
    /// Tokens per page (>= 1).
    pub page_size: u32,
    /// Number of physical pages in `page_pool`.
    pub num_pages: u64,
    /// The paged axis; 0 in this version.
    pub paged_axis: u32,
    /// Number of sequences in the batch.
    pub num_seqs: u32,
    /// `0x00` key, `0x01` value, `0x02` fused / generic.
    pub kv_role: u8,
    /// Transformer layer; `0xFFFFFFFF` when not layer-scoped.
    pub layer_index: u32,
    /// `0x00` = `uint32` block table / seq_ptr, `0x01` = `uint64`.
    pub block_table_index_type: u8,
}

impl BlockPaged {
    /// Bytes per `block_table` / `seq_ptr` entry (4 or 8), or `None` for an
    /// unknown `block_table_index_type`.
    pub fn index_width(&self) -> Option<u64> {
        match self.block_table_index_type {
            block_paged::INDEX_U32 => Some(4),
            block_paged::INDEX_U64 => Some(8),
            _ => None,
        }
    }
}

/// Composition rule of a composite head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompositionRule {
    /// `0x01`: members exactly tile the head's index space.
    Partition,
    /// `0x02`: a base plus corrections.
    Overlay,
    /// `0x03`: independent tensors under one identity.
    Group,
    /// Any other byte (private `0xF0`–`0xFE` or invalid); refused by the
    /// checked path unless private.
    Other(u8),
}

impl CompositionRule {
    /// The wire byte.
    pub const fn tag(self) -> u8 {
        match self {
            CompositionRule::Partition => composite::PARTITION,
            CompositionRule::Overlay => composite::OVERLAY,
            CompositionRule::Group => composite::GROUP,
            CompositionRule::Other(t) => t,
        }
    }
}

/// Fields of a composite head (`layouts/composite.md` § Head Layout-Specific
/// Fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompositeHead {
    /// How the members combine.
    pub composition_rule: CompositionRule,
    /// Overlay only: `0x01` replace, `0x02` add; `0x00` otherwise.
    pub combine_op: u8,
    /// Number of member tensors that follow the head.
    pub member_count: u32,
}

impl CompositeHead {
    /// `combine_op` replace (last wins).
    pub const COMBINE_REPLACE: u8 = composite::COMBINE_REPLACE;
    /// `combine_op` add.
    pub const COMBINE_ADD: u8 = composite::COMBINE_ADD;

    /// A partition head with `member_count` members.
    pub const fn partition(member_count: u32) -> Self {
        Self {
            composition_rule: CompositionRule::Partition,
            combine_op: 0,
            member_count,
        }
    }

    /// A group head with `member_count` members.
    pub const fn group(member_count: u32) -> Self {
        Self {
            composition_rule: CompositionRule::Group,
            combine_op: 0,
            member_count,
        }
    }

    /// An overlay head with `combine_op` and `member_count` members.
    pub const fn overlay(combine_op: u8, member_count: u32) -> Self {
        Self {
            composition_rule: CompositionRule::Overlay,
            combine_op,
            member_count,
        }
    }
}

impl Layout {
    /// The layout in the shared vocabulary ([`hurray_format::Layout`]),
    /// which holds its tag and names.
    pub fn kind(&self) -> hurray_format::Layout {
        use hurray_format::Layout as F;
        match self {
            Layout::RowMajor => F::RowMajor,
            Layout::ColumnMajor => F::ColMajor,
            Layout::Strided { .. } => F::Strided,
            Layout::Tiled(_) => F::Tiled,
            Layout::Morton { .. } => F::Morton,
            Layout::Coo { .. } => F::Coo,
            Layout::Csr { .. } => F::Csr,
            Layout::Csc { .. } => F::Csc,
            Layout::Csf { .. } => F::Csf,
            Layout::BlockPaged(_) => F::BlockPaged,
            Layout::Composite(_) => F::Composite,
            Layout::Hilbert { .. } => F::Hilbert,
            Layout::Extension { tag, .. } | Layout::Other { tag, .. } => F::from_tag(*tag),
        }
    }

    /// The `layout_tag` byte.
    pub fn tag(&self) -> u8 {
        self.kind().tag()
    }

    /// Short name used in error messages: the stem of the spec file
    /// (`"csc"`, `"row-major"`, ...), `"extension"` or `"other"`.
    pub fn name(&self) -> &'static str {
        match self {
            Layout::Extension { .. } => "extension",
            Layout::Other { .. } => "other",
            named => named.kind().spec_name(),
        }
    }

    /// `nnz` of a sparse layout (COO, CSR, CSC, CSF); `None` otherwise.
    pub fn nnz(&self) -> Option<u64> {
        match self {
            Layout::Coo { nnz, .. } | Layout::Csr { nnz } | Layout::Csc { nnz } | Layout::Csf { nnz, .. } => Some(*nnz),
            _ => None,
        }
    }

    /// The encoded layout-specific fields (empty for row- and column-major).
    pub fn encode_fields(&self) -> Vec<u8> {
        let mut enc = Enc::new();
        match self {
            Layout::RowMajor | Layout::ColumnMajor => {}
            Layout::Strided { strides } => enc.i64s(strides),
            Layout::Tiled(t) => encode_tiled(t, &mut enc),
            Layout::Morton { morton_bits } => enc.u32s(morton_bits),
            Layout::Coo { nnz, is_sorted } => {
                enc.u64(*nnz);
                enc.u8(u8::from(*is_sorted));
                enc.bytes(&[0; 7]);
            }
            Layout::Csr { nnz } | Layout::Csc { nnz } => {
                enc.u64(*nnz);
                enc.bytes(&[0; 8]);
            }
            Layout::Csf { nnz, mode_order } => {
                enc.u64(*nnz);
                enc.u32s(mode_order);
                enc.bytes(&[0; 8]);
            }
            Layout::BlockPaged(b) => {
                enc.u32(b.page_size);
                enc.u64(b.num_pages);
                enc.u32(b.paged_axis);
                enc.u32(b.num_seqs);
                enc.u8(b.kv_role);
                enc.u32(b.layer_index);
                enc.u8(b.block_table_index_type);
                enc.bytes(&[0; 6]);
            }
            Layout::Composite(c) => {
                enc.u8(c.composition_rule.tag());
                enc.u8(c.combine_op);
                enc.bytes(&[0; 2]);
                enc.u32(c.member_count);
            }
            Layout::Hilbert {
                hilbert_order,
                hilbert_rank,
            } => {
                enc.u32(*hilbert_order);
                enc.u32(*hilbert_rank);
            }
            Layout::Extension {
                extension_layout_id,
                extension_data,
                ..
            } => {
                enc.u64(*extension_layout_id);
                // Lengths beyond u32 cannot be encoded; the checked path
                // refuses them before getting here.
                enc.u32(u32::try_from(extension_data.len()).unwrap_or(u32::MAX));
                enc.bytes(extension_data);
            }
            Layout::Other { fields, .. } => enc.bytes(fields),
        }
        enc.buf
    }
}

fn encode_tiled(t: &Tiled, enc: &mut Enc) {
    enc.u64s(&t.tile_shape);
    enc.u8(match t.outer {
        TileOrder::RowMajor => tile_order::ROW_MAJOR,
        TileOrder::ColumnMajor => tile_order::COLUMN_MAJOR,
        TileOrder::Strided(_) => tile_order::STRIDED,
    });
    enc.u8(match t.inner {
        TileInner::RowMajor => tile_order::ROW_MAJOR,
        TileInner::ColumnMajor => tile_order::COLUMN_MAJOR,
        TileInner::Strided(_) => tile_order::STRIDED,
        TileInner::Tiled(_) => tile_order::TILED,
    });
    enc.bytes(&[0; 2]);
    if let TileOrder::Strided(s) = &t.outer {
        enc.i64s(s);
    }
    match &t.inner {
        TileInner::Strided(s) => enc.i64s(s),
        TileInner::Tiled(inner) => encode_tiled(inner, enc),
        TileInner::RowMajor | TileInner::ColumnMajor => {}
    }
}
