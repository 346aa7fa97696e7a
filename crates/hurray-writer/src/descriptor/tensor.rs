//! The typed [`TensorDescriptor`]: its fields, constructors, encoding and
//! the checks of the fixed header and optional sections (`metadata.md`).

use hurray_format::descriptor::flags;

use crate::buffer::BufferHandle;
use crate::data::BufferData;
use crate::element_type::{ElementType, Packing};
use crate::error::{Error, Result};
use crate::layout::{BlockPaged, CompositeHead, Layout};
use crate::num::{add, len64, mul, product};
use crate::sections::{CompositeMember, ExtensionType, Shard, Statistics};

use super::checks::check_shard;
use super::raw::RawDescriptor;

/// Descriptor flag bit 0: a quantization section is present.
pub const HAS_QUANTIZATION: u32 = flags::HAS_QUANTIZATION;
/// Descriptor flag bit 1: a shard section is present.
pub const HAS_SHARD: u32 = flags::HAS_SHARD;
/// Descriptor flag bit 2: an extension type section is present.
pub const HAS_EXTENSION_TYPE: u32 = flags::HAS_EXTENSION_TYPE;
/// Descriptor flag bit 3: a statistics section is present.
pub const HAS_STATISTICS: u32 = flags::HAS_STATISTICS;
/// Descriptor flag bit 4: a composite member section is present.
pub const HAS_COMPOSITE_MEMBER: u32 = flags::HAS_COMPOSITE_MEMBER;

/// Highest rank a descriptor may have (`data-model.md` § Rank).
pub const MAX_RANK: u64 = hurray_format::descriptor::MAX_RANK as u64;
/// Deepest recursive tiling the checked path accepts (`layouts/tiled.md`).
pub const MAX_TILING_DEPTH: u32 = hurray_format::descriptor::MAX_TILED_DEPTH;

/// A typed description of one tensor, from which the writer encodes the
/// descriptor bytes (`descriptor_length` and `flags` are computed).
///
/// Build one with a constructor ([`TensorDescriptor::row_major`],
/// [`TensorDescriptor::csc`], ...) or [`TensorDescriptor::new`] plus the
/// `with_*` methods, or fill the public fields directly.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDescriptor {
    /// Element (storage) type: the `type_tag`.
    pub element_type: ElementType,
    /// Layout tag and layout-specific fields.
    pub layout: Layout,
    /// Size of each dimension, in elements (length = `rank`).
    pub shape: Vec<u64>,
    /// Offset in bytes from the start of buffer 0 to element `[0, ..., 0]`
    /// (0 for sparse, indirect and composite layouts).
    pub byte_offset: u64,
    /// Buffer table, in order.
    pub buffers: Vec<BufferHandle>,
    /// Quantization payload (scheme header + fields, see
    /// [`crate::quant`]); its `u32` length prefix is added by the encoder.
    pub quantization: Option<Vec<u8>>,
    /// Shard section.
    pub shard: Option<Shard>,
    /// Statistics section.
    pub statistics: Option<Statistics>,
    /// Extension type section (required exactly for type tags `0xF0`–`0xFE`).
    pub extension_type: Option<ExtensionType>,
    /// Composite member section (overlay members only).
    pub composite_member: Option<CompositeMember>,
}

impl TensorDescriptor {
    /// A descriptor with no buffers, `byte_offset` 0 and no optional
    /// sections.
    pub fn new(element_type: ElementType, layout: Layout, shape: Vec<u64>) -> Self {
        Self {
            element_type,
            layout,
            shape,
            byte_offset: 0,
            buffers: Vec::new(),
            quantization: None,
            shard: None,
            statistics: None,
            extension_type: None,
            composite_member: None,
        }
    }

    /// A contiguous row-major tensor with one buffer of the packed size of
    /// `product(shape)` elements.
    ///
    /// # Errors
    /// [`Error::UnknownElementType`] for [`ElementType::Other`],
    /// [`Error::Overflow`] when the size does not fit `u64`.
    pub fn row_major(element_type: ElementType, shape: Vec<u64>) -> Result<Self> {
        Self::dense(element_type, Layout::RowMajor, shape)
    }

    /// A contiguous column-major tensor with one buffer of the packed size of
    /// `product(shape)` elements.
    ///
    /// # Errors
    /// As [`TensorDescriptor::row_major`].
    pub fn column_major(element_type: ElementType, shape: Vec<u64>) -> Result<Self> {
        Self::dense(element_type, Layout::ColumnMajor, shape)
    }

    fn dense(element_type: ElementType, layout: Layout, shape: Vec<u64>) -> Result<Self> {
        let size = element_type.buffer_size(product(&shape, "element count")?)?;
        Ok(Self::new(element_type, layout, shape).with_buffers(vec![BufferHandle::new(size)]))
    }

    /// A CSC matrix `[nrows, ncols]` with `nnz` stored elements and its three
    /// buffers sized (`values`, `row_indices`, `col_ptr`).
    ///
    /// # Errors
    /// As [`TensorDescriptor::row_major`].
    pub fn csc(element_type: ElementType, nrows: u64, ncols: u64, nnz: u64) -> Result<Self> {
        Self::compressed(element_type, Layout::Csc { nnz }, nrows, ncols, ncols, nnz)
    }

    /// A CSR matrix `[nrows, ncols]` with `nnz` stored elements and its three
    /// buffers sized (`values`, `col_indices`, `row_ptr`).
    ///
    /// # Errors
    /// As [`TensorDescriptor::row_major`].
    pub fn csr(element_type: ElementType, nrows: u64, ncols: u64, nnz: u64) -> Result<Self> {
        Self::compressed(element_type, Layout::Csr { nnz }, nrows, ncols, nrows, nnz)
    }

    fn compressed(
        element_type: ElementType,
        layout: Layout,
        nrows: u64,
        ncols: u64,
        outer: u64,
        nnz: u64,
    ) -> Result<Self> {
        let values = element_type.buffer_size(nnz)?;
        let indices = mul(nnz, 8, "index buffer size")?;
        let ptr = mul(add(outer, 1, "pointer length")?, 8, "pointer buffer size")?;
        Ok(Self::new(element_type, layout, vec![nrows, ncols]).with_buffers(vec![
            BufferHandle::new(values),
            BufferHandle::new(indices),
            BufferHandle::new(ptr),
        ]))
    }

    /// A COO tensor with `nnz` stored elements and its two buffers sized
    /// (`values`, `indices` of `nnz × rank` `u64`).
    ///
    /// # Errors
    /// As [`TensorDescriptor::row_major`].
    pub fn coo(element_type: ElementType, shape: Vec<u64>, nnz: u64, is_sorted: bool) -> Result<Self> {
        let values = element_type.buffer_size(nnz)?;
        let indices = mul(mul(nnz, len64(shape.len())?, "index count")?, 8, "index buffer size")?;
        Ok(Self::new(element_type, Layout::Coo { nnz, is_sorted }, shape)
            .with_buffers(vec![BufferHandle::new(values), BufferHandle::new(indices)]))
    }

    /// A CSF tensor whose level `L` stores `level_counts[L]` nodes
    /// (`level_counts` has length `rank`; its last entry is `nnz`), with its
    /// `2 × rank + 1` buffers sized.
    ///
    /// # Errors
    /// As [`TensorDescriptor::row_major`].
    pub fn csf(element_type: ElementType, shape: Vec<u64>, mode_order: Vec<u32>, level_counts: &[u64]) -> Result<Self> {
        let nnz = level_counts.last().copied().unwrap_or(0);
        let mut buffers = vec![BufferHandle::new(element_type.buffer_size(nnz)?)];
        let mut parents = 1u64;
        for &n in level_counts {
            buffers.push(BufferHandle::new(mul(add(parents, 1, "pos length")?, 8, "pos size")?));
            buffers.push(BufferHandle::new(mul(n, 8, "crd size")?));
            parents = n;
        }
        Ok(Self::new(element_type, Layout::Csf { nnz, mode_order }, shape).with_buffers(buffers))
    }

    /// A block-paged KV-cache snapshot of shape
    /// `[total_tokens, num_heads, head_dim]` with its three buffers sized:
    /// `page_pool` (`num_pages × page_size × num_heads × head_dim` elements),
    /// `block_table` (`total_logical_pages` entries) and `seq_ptr`
    /// (`num_seqs + 1` entries), index entries 4 or 8 bytes wide per
    /// `block_table_index_type`.
    ///
    /// # Errors
    /// [`Error::InvalidField`] for an unknown `block_table_index_type`,
    /// otherwise as [`TensorDescriptor::row_major`].
    pub fn block_paged(
        element_type: ElementType,
        shape: [u64; 3],
        fields: BlockPaged,
        total_logical_pages: u64,
    ) -> Result<Self> {
        let width = fields.index_width().ok_or(Error::InvalidField {
            what: "block_table_index_type",
            value: u64::from(fields.block_table_index_type),
            rule: "layouts/block-paged.md § Additional Descriptor Fields",
        })?;
        let [_, heads, dim] = shape;
        let pool = product(
            &[fields.num_pages, u64::from(fields.page_size), heads, dim],
            "page_pool elements",
        )?;
        let seqs = add(u64::from(fields.num_seqs), 1, "seq_ptr length")?;
        Ok(
            Self::new(element_type, Layout::BlockPaged(fields), shape.to_vec()).with_buffers(vec![
                BufferHandle::new(element_type.buffer_size(pool)?),
                BufferHandle::new(mul(total_logical_pages, width, "block_table size")?),
                BufferHandle::new(mul(seqs, width, "seq_ptr size")?),
            ]),
        )
    }

    /// A composite head (no buffers) presenting `shape` and `element_type`.
    pub fn composite_head(element_type: ElementType, shape: Vec<u64>, head: CompositeHead) -> Self {
        Self::new(element_type, Layout::Composite(head), shape)
    }

    /// Replaces the buffer table.
    #[must_use]
    pub fn with_buffers(mut self, buffers: Vec<BufferHandle>) -> Self {
        self.buffers = buffers;
        self
    }

    /// Appends a buffer handle.
    #[must_use]
    pub fn with_buffer(mut self, buffer: BufferHandle) -> Self {
        self.buffers.push(buffer);
        self
    }

    /// Sets `byte_offset` (bytes).
    #[must_use]
    pub fn with_byte_offset(mut self, byte_offset: u64) -> Self {
        self.byte_offset = byte_offset;
        self
    }

    /// Sets the quantization payload (see [`crate::quant`]).
    #[must_use]
    pub fn with_quantization(mut self, payload: Vec<u8>) -> Self {
        self.quantization = Some(payload);
        self
    }

    /// Sets the shard section.
    #[must_use]
    pub fn with_shard(mut self, shard: Shard) -> Self {
        self.shard = Some(shard);
        self
    }

    /// Sets the statistics section.
    #[must_use]
    pub fn with_statistics(mut self, statistics: Statistics) -> Self {
        self.statistics = Some(statistics);
        self
    }

    /// Sets the extension type section.
    #[must_use]
    pub fn with_extension_type(mut self, extension_type: ExtensionType) -> Self {
        self.extension_type = Some(extension_type);
        self
    }

    /// Sets the composite member section.
    #[must_use]
    pub fn with_composite_member(mut self, member: CompositeMember) -> Self {
        self.composite_member = Some(member);
        self
    }

    /// Applies `f` to every buffer handle (e.g. to change the declared
    /// alignment or memory class of all buffers at once).
    #[must_use]
    pub fn map_buffers(mut self, f: impl Fn(BufferHandle) -> BufferHandle) -> Self {
        for b in &mut self.buffers {
            *b = f(*b);
        }
        self
    }

    /// One zero-run source per buffer, each `byte_size` bytes: the data of
    /// an all-zero tensor (holes on a `File` sink for long runs).
    pub fn zero_data(&self) -> Vec<BufferData<'static>> {
        self.buffers.iter().map(|b| BufferData::Zeros(b.byte_size)).collect()
    }

    /// The byte-level form of this descriptor, with computed length and
    /// flags; edit it to build invalid descriptors.
    pub fn to_raw(&self) -> RawDescriptor {
        RawDescriptor {
            magic: RawDescriptor::MAGIC,
            version_major: 1,
            version_minor: 0,
            descriptor_length: None,
            flags: None,
            type_tag: self.element_type.tag(),
            layout_tag: self.layout.tag(),
            rank: None,
            shape: self.shape.clone(),
            byte_offset: self.byte_offset,
            layout_fields: self.layout.encode_fields(),
            buffer_count: None,
            buffers: self.buffers.clone(),
            quantization: self.quantization.clone(),
            quantization_length: None,
            shard: self.shard.clone(),
            statistics: self.statistics,
            extension_type: self.extension_type,
            composite_member: self.composite_member,
            trailing_bytes: Vec::new(),
        }
    }

    /// The encoded descriptor bytes (no validation).
    ///
    /// # Errors
    /// [`Error::Overflow`] when a length does not fit its wire field.
    pub fn encode(&self) -> Result<Vec<u8>> {
        self.to_raw().encode()
    }

    /// Packing of the element type, taking an extension type section into
    /// account.
    pub(super) fn packing(&self) -> Result<Packing> {
        match (self.element_type, &self.extension_type) {
            (ElementType::Other(tag), Some(ext)) if (0xF0..=0xFE).contains(&tag) => {
                ext.validate()?;
                Ok(ext.packing())
            }
            (ElementType::Other(tag), None) if (0xF0..=0xFE).contains(&tag) => Err(Error::ExtensionTypeSection {
                type_tag: tag,
                present: false,
            }),
            (ElementType::Other(tag), _) => Err(Error::UnknownElementType { tag }),
            (named, Some(_)) => Err(Error::ExtensionTypeSection {
                type_tag: named.tag(),
                present: true,
            }),
            (named, None) => named.packing().ok_or(Error::UnknownElementType { tag: named.tag() }),
        }
    }

    /// Checks the descriptor against the format rules that do not depend on
    /// buffer contents: tags, rank, layout fields, buffer counts and sizes,
    /// handle fields, optional sections.
    ///
    /// Buffer *contents* (sparse index invariants, scale values) are not
    /// looked at; the typed helpers in [`crate::sparse`] check those.
    ///
    /// # Errors
    /// The first rule found broken, as the matching [`Error`] variant.
    pub fn validate(&self) -> Result<()> {
        let rank = len64(self.shape.len())?;
        if rank > MAX_RANK {
            return Err(Error::RankTooLarge { rank });
        }
        let packing = self.packing()?;
        // Every element lies `byte_offset` plus a multiple of its width into
        // a 64-aligned buffer: aligned as its type requires exactly when
        // `byte_offset` is (strict readers reject it otherwise).
        if let Some(alignment) = self.element_type.alignment() {
            if !self.byte_offset.is_multiple_of(alignment) {
                return Err(Error::InvalidField {
                    what: "byte_offset (not a multiple of the element type's alignment)",
                    value: self.byte_offset,
                    rule: "element-types.md § Type Properties Summary",
                });
            }
        }
        for (d, &s) in self.shape.iter().enumerate() {
            if s == u64::MAX {
                return Err(Error::DynamicDimension { dimension: len64(d)? });
            }
        }
        let count = len64(self.buffers.len())?;
        if count > 255 {
            return Err(Error::TooManyBuffers { count });
        }
        for (i, h) in self.buffers.iter().enumerate() {
            h.validate(len64(i)?)?;
        }
        if let Some(first) = self.buffers.first() {
            for (i, h) in self.buffers.iter().enumerate() {
                if h.device_tag != first.device_tag || h.memory_class != first.memory_class {
                    return Err(Error::MixedDevices { buffer: len64(i)? });
                }
            }
        }
        if let Some(stats) = &self.statistics {
            stats.validate()?;
        }
        if let Some(member) = &self.composite_member {
            member.validate()?;
        }
        if let Some(shard) = &self.shard {
            check_shard(shard, &self.shape)?;
        }
        if rank == 0 && self.layout != Layout::RowMajor {
            return Err(Error::RankNotAllowed {
                layout: self.layout.name(),
                rank,
                rule: "data-model.md § Scalar Tensors: only row-major",
            });
        }
        if let (Some(stats), Some(nnz)) = (&self.statistics, self.layout.nnz()) {
            if stats.computed_mask & Statistics::NNZ_VALID != 0 && stats.nnz != nnz {
                return Err(Error::StatisticsNnzMismatch {
                    statistics_nnz: stats.nnz,
                    nnz,
                    rule: "layouts/*.md § Interaction with Statistics Section",
                });
            }
        }
        self.validate_layout(rank, packing)
    }

    pub(super) fn sizes(&self) -> Vec<u64> {
        self.buffers.iter().map(|b| b.byte_size).collect()
    }

    pub(super) fn size_of(&self, index: usize) -> u64 {
        self.buffers.get(index).map_or(0, |b| b.byte_size)
    }
}
