//! Layout tags and names (`memory-layout.md` § Layout Taxonomy), and the
//! tags that appear inside layout-specific fields (`layouts/*.md`).

use std::fmt;

/// A memory layout tag, decoded (`memory-layout.md` § Layout Taxonomy › Named Layout Tags).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// 0x01, C order.
    RowMajor,
    /// 0x02, Fortran order.
    ColMajor,
    /// 0x03, explicit strides in elements.
    Strided,
    /// 0x04, uniform tiles, possibly nested.
    Tiled,
    /// 0x05, Z-order curve.
    Morton,
    /// 0x06, coordinate list.
    Coo,
    /// 0x07, compressed sparse row.
    Csr,
    /// 0x08, compressed sparse column.
    Csc,
    /// 0x09, compressed sparse fiber.
    Csf,
    /// 0x0A, paged KV cache.
    BlockPaged,
    /// 0x0B, composite head.
    Composite,
    /// 0x40, Hilbert curve.
    Hilbert,
    /// 0xF0–0xFE, implementation-private.
    Extension(u8),
    /// Any other tag; only kept in permissive mode.
    Unknown(u8),
}

impl Layout {
    /// Decodes a tag. `0x00`, `0xFF` and unassigned tags give `Unknown`.
    pub const fn from_tag(tag: u8) -> Self {
        match tag {
            0x01 => Layout::RowMajor,
            0x02 => Layout::ColMajor,
            0x03 => Layout::Strided,
            0x04 => Layout::Tiled,
            0x05 => Layout::Morton,
            0x06 => Layout::Coo,
            0x07 => Layout::Csr,
            0x08 => Layout::Csc,
            0x09 => Layout::Csf,
            0x0A => Layout::BlockPaged,
            0x0B => Layout::Composite,
            0x40 => Layout::Hilbert,
            0xF0..=0xFE => Layout::Extension(tag),
            other => Layout::Unknown(other),
        }
    }

    /// The wire tag.
    pub const fn tag(self) -> u8 {
        match self {
            Layout::RowMajor => 0x01,
            Layout::ColMajor => 0x02,
            Layout::Strided => 0x03,
            Layout::Tiled => 0x04,
            Layout::Morton => 0x05,
            Layout::Coo => 0x06,
            Layout::Csr => 0x07,
            Layout::Csc => 0x08,
            Layout::Csf => 0x09,
            Layout::BlockPaged => 0x0A,
            Layout::Composite => 0x0B,
            Layout::Hilbert => 0x40,
            Layout::Extension(t) | Layout::Unknown(t) => t,
        }
    }

    /// The name used by the interop manifest and the JSON output:
    /// `row_major`, `col_major`, `strided`, `tiled`, `morton`, `coo`, `csr`,
    /// `csc`, `csf`, `block_paged`, `composite`, `hilbert`, `extension`, `unknown`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Layout::RowMajor => "row_major",
            Layout::ColMajor => "col_major",
            Layout::Strided => "strided",
            Layout::Tiled => "tiled",
            Layout::Morton => "morton",
            Layout::Coo => "coo",
            Layout::Csr => "csr",
            Layout::Csc => "csc",
            Layout::Csf => "csf",
            Layout::BlockPaged => "block_paged",
            Layout::Composite => "composite",
            Layout::Hilbert => "hilbert",
            Layout::Extension(_) => "extension",
            Layout::Unknown(_) => "unknown",
        }
    }

    /// The stem of the layout's spec file (`layouts/row-major.md` is
    /// `row-major`): `row-major`, `column-major`, `strided`, `tiled`,
    /// `morton`, `coo`, `csr`, `csc`, `csf`, `block-paged`, `composite`,
    /// `hilbert`; `extension` and `unknown` otherwise.
    pub const fn spec_name(self) -> &'static str {
        match self {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "column-major",
            Layout::BlockPaged => "block-paged",
            other => other.as_str(),
        }
    }

    /// True for the layouts where every element exists at an address given
    /// by a formula (row-major, column-major, strided, tiled, Morton, Hilbert).
    pub const fn is_dense(self) -> bool {
        matches!(
            self,
            Layout::RowMajor | Layout::ColMajor | Layout::Strided | Layout::Tiled | Layout::Morton | Layout::Hilbert
        )
    }

    /// True for COO, CSR, CSC and CSF.
    pub const fn is_sparse(self) -> bool {
        matches!(self, Layout::Coo | Layout::Csr | Layout::Csc | Layout::Csf)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layout::Extension(t) | Layout::Unknown(t) => write!(f, "{}(0x{t:02x})", self.as_str()),
            other => f.write_str(other.as_str()),
        }
    }
}

/// `outer_layout` / `inner_layout` of a tiled level (`layouts/tiled.md` §
/// Additional Descriptor Fields): the layout tags they may hold.
pub mod tile_order {
    use super::Layout;

    /// Row-major order.
    pub const ROW_MAJOR: u8 = Layout::RowMajor.tag();
    /// Column-major order.
    pub const COLUMN_MAJOR: u8 = Layout::ColMajor.tag();
    /// Strided order (strides follow the fixed part).
    pub const STRIDED: u8 = Layout::Strided.tag();
    /// `inner_layout` only: each tile is tiled again (the next level follows).
    pub const TILED: u8 = Layout::Tiled.tag();
}

/// `composition_rule` and `combine_op` of a composite head
/// (`layouts/composite.md` § Head Layout-Specific Fields).
pub mod composite {
    /// Members exactly tile the head's index space.
    pub const PARTITION: u8 = 0x01;
    /// A base plus corrections.
    pub const OVERLAY: u8 = 0x02;
    /// Independent tensors under one identity.
    pub const GROUP: u8 = 0x03;
    /// Overlay `combine_op`: the last member wins.
    pub const COMBINE_REPLACE: u8 = 0x01;
    /// Overlay `combine_op`: members add.
    pub const COMBINE_ADD: u8 = 0x02;
}

/// Tags of the block-paged fields (`layouts/block-paged.md` § Additional
/// Descriptor Fields).
pub mod block_paged {
    /// `kv_role`: keys.
    pub const KV_ROLE_KEY: u8 = 0x00;
    /// `kv_role`: values.
    pub const KV_ROLE_VALUE: u8 = 0x01;
    /// `kv_role`: fused or generic.
    pub const KV_ROLE_FUSED: u8 = 0x02;
    /// `block_table_index_type`: `uint32` block table and `seq_ptr`.
    pub const INDEX_U32: u8 = 0x00;
    /// `block_table_index_type`: `uint64` block table and `seq_ptr`.
    pub const INDEX_U64: u8 = 0x01;
    /// `layer_index` of a cache that is not layer-scoped.
    pub const NO_LAYER: u32 = u32::MAX;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tag_round_trips() {
        for tag in 0u8..=0xFF {
            assert_eq!(Layout::from_tag(tag).tag(), tag);
        }
        assert_eq!(Layout::from_tag(0x0C), Layout::Unknown(0x0C));
        assert_eq!(Layout::from_tag(0xF3), Layout::Extension(0xF3));
        assert_eq!(Layout::BlockPaged.to_string(), "block_paged");
        assert_eq!(Layout::from_tag(0xF3).to_string(), "extension(0xf3)");
    }
}
