//! Layout tags and layout-specific descriptor fields
//! (`memory-layout.md`, `metadata.md` § Layout-Specific Fields, `layouts/*.md`).

use std::fmt;

use zerocopy::little_endian::{I64, U32, U64};

use crate::raw;

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
    pub fn from_tag(tag: u8) -> Self {
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
    pub fn tag(self) -> u8 {
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
    pub fn as_str(self) -> &'static str {
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

    /// True for the layouts where every element exists at an address given
    /// by a formula (row-major, column-major, strided, tiled, Morton, Hilbert).
    pub fn is_dense(self) -> bool {
        matches!(
            self,
            Layout::RowMajor | Layout::ColMajor | Layout::Strided | Layout::Tiled | Layout::Morton | Layout::Hilbert
        )
    }

    /// True for COO, CSR, CSC and CSF.
    pub fn is_sparse(self) -> bool {
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

/// One level of a tiled layout (`layouts/tiled.md`).
#[derive(Debug, Clone, Copy)]
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

/// The layout-specific fields of a descriptor, borrowed from the file.
#[non_exhaustive]
#[derive(Debug, Clone)]
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
