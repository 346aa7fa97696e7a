//! Tensor descriptors (`metadata.md`): the typed [`TensorDescriptor`] with its
//! validation, and the byte-level [`RawDescriptor`] used to encode it (or to
//! build deliberately broken descriptors).

use hurray_format::descriptor::flags;

use crate::buffer::BufferHandle;
use crate::element_type::{ElementType, Packing};
use crate::error::{Error, Result};
use crate::layout::{BlockPaged, CompositeHead, CompositionRule, Layout, TileInner, TileOrder, Tiled};
use crate::num::{add, len64, mul, product, Enc};
use crate::quant::{self, QuantContext};
use crate::sections::{CompositeMember, ExtensionType, Shard, Statistics};
use crate::writer::BufferData;

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
    fn packing(&self) -> Result<Packing> {
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

    fn sizes(&self) -> Vec<u64> {
        self.buffers.iter().map(|b| b.byte_size).collect()
    }

    fn size_of(&self, index: usize) -> u64 {
        self.buffers.get(index).map_or(0, |b| b.byte_size)
    }

    /// Checks the layout-specific rules, buffer counts and sizes.
    fn validate_layout(&self, rank: u64, packing: Packing) -> Result<()> {
        let name = self.layout.name();
        let sizes = self.sizes();
        let dense = matches!(
            self.layout,
            Layout::RowMajor
                | Layout::ColumnMajor
                | Layout::Strided { .. }
                | Layout::Tiled(_)
                | Layout::Morton { .. }
                | Layout::Hilbert { .. }
        );
        let (layout_buffers, paged) = match &self.layout {
            Layout::Coo { .. } => (2, None),
            Layout::Csr { .. } | Layout::Csc { .. } => (3, None),
            Layout::Csf { .. } => (add(mul(rank, 2, "buffer count")?, 1, "buffer count")?, None),
            Layout::BlockPaged(b) => (3, Some((b.num_pages, b.page_size))),
            Layout::Composite(_) => (0, None),
            _ => (1, None),
        };

        // Buffer count and quantization parameters.
        let mut padded_axis = None;
        match &self.quantization {
            Some(_) if matches!(self.layout, Layout::Composite(_)) => {
                return Err(Error::SectionNotAllowed {
                    section: "quantization",
                    layout: name,
                    rule: "layouts/composite.md § Head Descriptor",
                })
            }
            Some(payload) => {
                let facts = quant::check(
                    payload,
                    &QuantContext {
                        element_type: self.element_type,
                        shape: &self.shape,
                        layout_buffers,
                        buffer_sizes: &sizes,
                        dense,
                        paged,
                    },
                )?;
                padded_axis = facts.padded_axis;
            }
            None => {
                let actual = len64(self.buffers.len())?;
                if matches!(self.layout, Layout::Extension { .. }) {
                    if actual < 1 {
                        return Err(Error::TooFewBuffers {
                            layout: name,
                            minimum: 1,
                            actual,
                            rule: "metadata.md § Buffer Table",
                        });
                    }
                } else if actual != layout_buffers {
                    return Err(Error::BufferCount {
                        layout: name,
                        expected: layout_buffers,
                        actual,
                        rule: buffer_count_rule(&self.layout),
                    });
                }
            }
        }

        if !dense && self.byte_offset != 0 && !matches!(self.layout, Layout::Extension { .. }) {
            return Err(Error::NonZeroByteOffset {
                layout: name,
                byte_offset: self.byte_offset,
                rule: "memory-layout.md § Common Fields › byte_offset",
            });
        }
        if dense {
            let b0 = self.size_of(0);
            if self.byte_offset > b0 {
                return Err(Error::ByteOffsetOutOfRange {
                    byte_offset: self.byte_offset,
                    buffer_size: b0,
                });
            }
        }
        if self.shard.is_some() && matches!(self.layout, Layout::Csf { .. } | Layout::BlockPaged(_)) {
            return Err(Error::SectionNotAllowed {
                section: "shard",
                layout: name,
                rule: "layouts/csf.md § Sharding, layouts/block-paged.md § Sharding",
            });
        }

        match &self.layout {
            Layout::RowMajor | Layout::ColumnMajor => {
                let count = storage_count(&self.shape, padded_axis)?;
                self.need_dense(add(self.byte_offset, packing.bytes_for(count)?, "buffer size")?, name)
            }
            Layout::Strided { strides } => {
                need_rank_at_least(name, rank, 1, "layouts/strided.md § Validity Constraints")?;
                field_len(
                    "strides",
                    strides.len(),
                    rank,
                    "layouts/strided.md § Additional Descriptor Fields",
                )?;
                match strided_extent(&self.shape, strides, packing, self.byte_offset)? {
                    Extent::Fits { end } => self.need_dense(end, name),
                    Extent::BeforeStart => Err(Error::InvalidField {
                        what: "byte_offset",
                        value: self.byte_offset,
                        rule: "layouts/strided.md § Element Address: negative strides must stay inside the buffer",
                    }),
                }
            }
            Layout::Tiled(t) => {
                need_rank_at_least(name, rank, 1, "layouts/tiled.md § Validity Constraints")?;
                check_tiled(t, rank, 1)?;
                let elements = tiled_storage(&self.shape, t, Some((self.byte_offset, packing)))?;
                self.need_dense(
                    add(self.byte_offset, packing.bytes_for(elements)?, "buffer size")?,
                    name,
                )
            }
            Layout::Morton { morton_bits } => {
                const RULE: &str = "layouts/morton.md § Dimension Size Constraints";
                need_rank_at_least(name, rank, 1, RULE)?;
                field_len(
                    "morton_bits",
                    morton_bits.len(),
                    rank,
                    "layouts/morton.md § Additional Descriptor Fields",
                )?;
                let mut total_bits = 0u64;
                for (&bits, &size) in morton_bits.iter().zip(&self.shape) {
                    if bits == 0 {
                        return Err(Error::InvalidField {
                            what: "morton_bits",
                            value: 0,
                            rule: "layouts/morton.md § Additional Descriptor Fields",
                        });
                    }
                    if let Some(cap) = 1u64.checked_shl(bits) {
                        if size > cap {
                            return Err(Error::InvalidField {
                                what: "shape (above 2^morton_bits)",
                                value: size,
                                rule: RULE,
                            });
                        }
                    }
                    total_bits = add(total_bits, u64::from(bits), "morton bit count")?;
                }
                let elements = 1u64
                    .checked_shl(u32::try_from(total_bits).map_err(|_| Error::overflow("morton buffer"))?)
                    .filter(|_| total_bits < 64)
                    .ok_or(Error::overflow("morton buffer elements"))?;
                // Bit b of dimension k lands at b × rank + k: with unequal
                // bits that can pass the 2^sum(morton_bits) elements the
                // buffer holds (the reader refuses such a file).
                if !self.shape.contains(&0) {
                    for (k, &size) in self.shape.iter().enumerate() {
                        let Some(top) = size.checked_sub(1).and_then(u64::checked_ilog2) else {
                            continue;
                        };
                        let position = u64::from(top).saturating_mul(rank).saturating_add(k as u64);
                        if position >= total_bits {
                            return Err(Error::InvalidField {
                                what: "morton_bits (interleaved codes past 2^sum(morton_bits))",
                                value: u64::from(morton_bits.get(k).copied().unwrap_or(0)),
                                rule: "layouts/morton.md § Buffer Size",
                            });
                        }
                    }
                }
                self.need_dense(
                    add(self.byte_offset, packing.bytes_for(elements)?, "buffer size")?,
                    name,
                )
            }
            Layout::Hilbert {
                hilbert_order,
                hilbert_rank,
            } => {
                const RULE: &str = "layouts/hilbert.md § Validity Constraints";
                need_rank_at_least(name, rank, 2, RULE)?;
                if u64::from(*hilbert_rank) != rank {
                    return Err(Error::InvalidField {
                        what: "hilbert_rank",
                        value: u64::from(*hilbert_rank),
                        rule: RULE,
                    });
                }
                let side = 1u64
                    .checked_shl(*hilbert_order)
                    .filter(|_| *hilbert_order > 0 && *hilbert_order < 64)
                    .ok_or(Error::InvalidField {
                        what: "hilbert_order",
                        value: u64::from(*hilbert_order),
                        rule: RULE,
                    })?;
                if let Some(&bad) = self.shape.iter().find(|&&s| s != side) {
                    return Err(Error::InvalidField {
                        what: "shape (must be 2^hilbert_order)",
                        value: bad,
                        rule: RULE,
                    });
                }
                let elements = product(&self.shape, "hilbert elements")?;
                self.need_dense(
                    add(self.byte_offset, packing.bytes_for(elements)?, "buffer size")?,
                    name,
                )
            }
            Layout::Coo { nnz, .. } => {
                need_rank_at_least(name, rank, 1, "layouts/coo.md § Validity Constraints")?;
                const RULE: &str = "layouts/coo.md § Buffer Size";
                self.need_exact(0, "values", packing.bytes_for(*nnz)?, RULE)?;
                let idx = mul(mul(*nnz, rank, "index count")?, 8, "indices size")?;
                self.need_exact(1, "indices", idx, RULE)
            }
            Layout::Csr { nnz } | Layout::Csc { nnz } => {
                let is_csc = matches!(self.layout, Layout::Csc { .. });
                let (rule_rank, rule_size, idx_name, ptr_name) = if is_csc {
                    (
                        "layouts/csc.md § Description: rank 2 only",
                        "layouts/csc.md § Buffer Size",
                        "row_indices",
                        "col_ptr",
                    )
                } else {
                    (
                        "layouts/csr.md § Description: rank 2 only",
                        "layouts/csr.md § Buffer Size",
                        "col_indices",
                        "row_ptr",
                    )
                };
                if rank != 2 {
                    return Err(Error::RankNotAllowed {
                        layout: name,
                        rank,
                        rule: rule_rank,
                    });
                }
                let outer = self.shape.get(if is_csc { 1 } else { 0 }).copied().unwrap_or(0);
                self.need_exact(0, "values", packing.bytes_for(*nnz)?, rule_size)?;
                self.need_exact(1, idx_name, mul(*nnz, 8, "index size")?, rule_size)?;
                let ptr = mul(add(outer, 1, "pointer length")?, 8, "pointer size")?;
                self.need_exact(2, ptr_name, ptr, rule_size)
            }
            Layout::Csf { nnz, mode_order } => {
                const RULE: &str = "layouts/csf.md § Buffer Size";
                if rank < 3 {
                    return Err(Error::RankNotAllowed {
                        layout: name,
                        rank,
                        rule: "layouts/csf.md § Description: rank >= 3",
                    });
                }
                field_len(
                    "mode_order",
                    mode_order.len(),
                    rank,
                    "layouts/csf.md § Additional Descriptor Fields",
                )?;
                check_permutation(mode_order)?;
                self.need_exact(0, "values", packing.bytes_for(*nnz)?, RULE)?;
                // pos_L is buffer 2L+1, crd_L is buffer 2L+2.
                let mut parents = 1u64;
                let levels = crate::num::to_usize(rank, "rank")?;
                for level in 0..levels {
                    let pos_index = level.saturating_mul(2).saturating_add(1);
                    let crd_index = pos_index.saturating_add(1);
                    let pos = mul(add(parents, 1, "pos length")?, 8, "pos size")?;
                    self.need_exact(pos_index, "pos", pos, RULE)?;
                    let crd = self.size_of(crd_index);
                    if !crd.is_multiple_of(8) {
                        return Err(Error::BufferSize {
                            buffer: len64(crd_index)?,
                            what: "crd",
                            expected: crd.saturating_sub(crd % 8),
                            actual: crd,
                            rule: RULE,
                        });
                    }
                    parents = crd / 8;
                }
                let leaf = levels.saturating_mul(2);
                self.need_exact(leaf, "crd (leaf level)", mul(*nnz, 8, "crd size")?, RULE)
            }
            Layout::BlockPaged(b) => self.validate_block_paged(b, rank, packing),
            Layout::Composite(head) => validate_head(head, self),
            Layout::Extension {
                tag, extension_data, ..
            } => {
                if !(0xF0..=0xFE).contains(tag) {
                    return Err(Error::UnknownLayout { tag: *tag });
                }
                u32::try_from(extension_data.len()).map_err(|_| Error::overflow("extension_data_length"))?;
                Ok(())
            }
            Layout::Other { tag, .. } => Err(Error::UnknownLayout { tag: *tag }),
        }
    }

    /// Buffer 0 of a dense layout must hold exactly `required` bytes:
    /// fewer cannot hold the elements; more is what the layouts allow as a
    /// minimum but strict readers reject (`NOTES.md`, "Buffer larger than
    /// required"), so the checked path refuses it too. A file with a
    /// larger buffer can still be written through the unchecked path.
    fn need_dense(&self, required: u64, layout: &'static str) -> Result<()> {
        let actual = self.size_of(0);
        let rule = match layout {
            "row-major" => "layouts/row-major.md § Buffer Size",
            "column-major" => "layouts/column-major.md § Buffer Size",
            "strided" => "layouts/strided.md § Buffer Size",
            "tiled" => "layouts/tiled.md § Boundary Padding",
            "morton" => "layouts/morton.md § Buffer Size",
            _ => "layouts/hilbert.md § Buffer Size",
        };
        if actual < required {
            return Err(Error::BufferTooSmall {
                buffer: 0,
                what: "data",
                minimum: required,
                actual,
                rule,
            });
        }
        if actual > required {
            return Err(Error::BufferSize {
                buffer: 0,
                what: "data",
                expected: required,
                actual,
                rule: "NOTES.md, Buffer larger than required: strict readers reject a dense buffer past its elements",
            });
        }
        Ok(())
    }

    fn need_exact(&self, index: usize, what: &'static str, expected: u64, rule: &'static str) -> Result<()> {
        let actual = self.size_of(index);
        if actual != expected {
            return Err(Error::BufferSize {
                buffer: len64(index)?,
                what,
                expected,
                actual,
                rule,
            });
        }
        Ok(())
    }

    fn validate_block_paged(&self, b: &BlockPaged, rank: u64, packing: Packing) -> Result<()> {
        const RULE: &str = "layouts/block-paged.md § Additional Descriptor Fields";
        const SIZE: &str = "layouts/block-paged.md § Storage Invariants";
        if rank != 3 {
            return Err(Error::RankNotAllowed {
                layout: "block-paged",
                rank,
                rule: "layouts/block-paged.md § Description: rank 3 only",
            });
        }
        let bad = |what, value: u64| {
            Err(Error::InvalidField {
                what,
                value,
                rule: RULE,
            })
        };
        if b.page_size == 0 {
            return bad("page_size", 0);
        }
        if b.paged_axis != 0 {
            return bad("paged_axis", u64::from(b.paged_axis));
        }
        if b.kv_role > 2 {
            return bad("kv_role", u64::from(b.kv_role));
        }
        let Some(width) = b.index_width() else {
            return bad("block_table_index_type", u64::from(b.block_table_index_type));
        };
        let heads = self.shape.get(1).copied().unwrap_or(0);
        let dim = self.shape.get(2).copied().unwrap_or(0);
        let elements = product(&[b.num_pages, u64::from(b.page_size), heads, dim], "page_pool elements")?;
        self.need_exact(0, "page_pool", packing.bytes_for(elements)?, SIZE)?;
        let table = self.size_of(1);
        let rem = table.checked_rem(width).unwrap_or(0);
        if rem != 0 {
            return Err(Error::BufferSize {
                buffer: 1,
                what: "block_table",
                expected: table.saturating_sub(rem),
                actual: table,
                rule: SIZE,
            });
        }
        let seq = mul(add(u64::from(b.num_seqs), 1, "seq_ptr length")?, width, "seq_ptr size")?;
        self.need_exact(2, "seq_ptr", seq, "layouts/block-paged.md § Buffer Table")
    }
}

fn buffer_count_rule(layout: &Layout) -> &'static str {
    match layout {
        Layout::Coo { .. } => "layouts/coo.md § Buffer Table",
        Layout::Csr { .. } => "layouts/csr.md § Buffer Table",
        Layout::Csc { .. } => "layouts/csc.md § Buffer Table",
        Layout::Csf { .. } => "layouts/csf.md § Buffer Table",
        Layout::BlockPaged(_) => "layouts/block-paged.md § Buffer Table",
        Layout::Composite(_) => "layouts/composite.md § Head Descriptor: buffer_count 0",
        _ => "metadata.md § Buffer Table: one buffer for an unquantized dense tensor",
    }
}

fn need_rank_at_least(layout: &'static str, rank: u64, minimum: u64, rule: &'static str) -> Result<()> {
    if rank < minimum {
        return Err(Error::RankNotAllowed { layout, rank, rule });
    }
    Ok(())
}

fn field_len(what: &'static str, actual: usize, expected: u64, rule: &'static str) -> Result<()> {
    let actual = len64(actual)?;
    if actual != expected {
        return Err(Error::FieldLength {
            what,
            expected,
            actual,
            rule,
        });
    }
    Ok(())
}

/// Checks that `mode_order` is a permutation of `0..len`.
pub(crate) fn check_permutation(mode_order: &[u32]) -> Result<()> {
    let mut seen = vec![false; mode_order.len()];
    for (position, &value) in mode_order.iter().enumerate() {
        let slot = usize::try_from(value).ok().and_then(|v| seen.get_mut(v));
        match slot {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::ModeOrderNotPermutation {
                    position: len64(position)?,
                    value: u64::from(value),
                })
            }
        }
    }
    Ok(())
}

fn check_shard(shard: &Shard, shape: &[u64]) -> Result<()> {
    const RULE: &str = "metadata.md § Shard Section";
    let rank = len64(shape.len())?;
    field_len("parent_shape", shard.parent_shape.len(), rank, RULE)?;
    field_len("shard_offset", shard.shard_offset.len(), rank, RULE)?;
    for (d, ((&offset, &size), &parent)) in shard
        .shard_offset
        .iter()
        .zip(shape)
        .zip(&shard.parent_shape)
        .enumerate()
    {
        if offset.checked_add(size).is_none_or(|end| end > parent) {
            return Err(Error::ShardOutOfBounds {
                dimension: len64(d)?,
                shard_offset: offset,
                size,
                parent,
            });
        }
    }
    Ok(())
}

fn validate_head(head: &CompositeHead, d: &TensorDescriptor) -> Result<()> {
    const RULE: &str = "layouts/composite.md § Head Layout-Specific Fields";
    if d.composite_member.is_some() {
        return Err(Error::SectionNotAllowed {
            section: "composite member",
            layout: "composite",
            rule: "layouts/composite.md § Head Descriptor",
        });
    }
    let rule = head.composition_rule.tag();
    let rule_ok = matches!(rule, 0x01..=0x03) || (0xF0..=0xFE).contains(&rule);
    if !rule_ok {
        return Err(Error::InvalidField {
            what: "composition_rule",
            value: u64::from(rule),
            rule: RULE,
        });
    }
    let op_ok = match head.composition_rule {
        CompositionRule::Overlay => matches!(head.combine_op, 0x01 | 0x02),
        CompositionRule::Partition | CompositionRule::Group => head.combine_op == 0,
        CompositionRule::Other(_) => true,
    };
    if !op_ok {
        return Err(Error::InvalidField {
            what: "combine_op",
            value: u64::from(head.combine_op),
            rule: RULE,
        });
    }
    if head.member_count == u32::MAX {
        return Err(Error::InvalidField {
            what: "member_count",
            value: u64::from(head.member_count),
            rule: "layouts/composite.md § Head Layout-Specific Fields: 0xFFFFFFFF (open composite) is reserved",
        });
    }
    if head.composition_rule == CompositionRule::Overlay && head.member_count == 0 {
        return Err(Error::InvalidField {
            what: "member_count",
            value: 0,
            rule: "layouts/composite.md § Validation: an overlay needs a base member",
        });
    }
    Ok(())
}

fn check_tiled(t: &Tiled, rank: u64, depth: u32) -> Result<()> {
    const RULE: &str = "layouts/tiled.md § Additional Descriptor Fields";
    if depth > MAX_TILING_DEPTH {
        return Err(Error::InvalidField {
            what: "tiling depth",
            value: u64::from(depth),
            rule: "layouts/tiled.md § Recursive Tiling: at most 8 levels",
        });
    }
    field_len("tile_shape", t.tile_shape.len(), rank, RULE)?;
    if t.tile_shape.contains(&0) {
        return Err(Error::InvalidField {
            what: "tile_shape",
            value: 0,
            rule: RULE,
        });
    }
    if let TileOrder::Strided(s) = &t.outer {
        field_len("outer_strides", s.len(), rank, RULE)?;
    }
    match &t.inner {
        TileInner::Strided(s) => {
            field_len("inner_strides", s.len(), rank, RULE)?;
            inner_strides_within_tile(&t.tile_shape, s)
        }
        TileInner::Tiled(inner) => check_tiled(inner, rank, depth.saturating_add(1)),
        TileInner::RowMajor | TileInner::ColumnMajor => Ok(()),
    }
}

/// Tiles do not overlap (`layouts/tiled.md` § Description): every in-tile
/// offset `sum(e_k * inner_strides[k])` lies in `0..product(tile_shape)`.
fn inner_strides_within_tile(tile_shape: &[u64], strides: &[i64]) -> Result<()> {
    let elements = tile_shape
        .iter()
        .try_fold(1i128, |acc, &n| acc.checked_mul(i128::from(n)));
    // An offset range past i128 is out of the tile too.
    let (min, max) = offset_range(tile_shape, strides).unwrap_or((-1, 0));
    if min < 0 || elements.is_some_and(|e| max >= e) {
        return Err(Error::InvalidField {
            what: "inner_strides",
            value: u64::try_from(if min < 0 { 0 } else { max }).unwrap_or(u64::MAX),
            rule: "layouts/tiled.md § Description: in-tile offsets stay within the tile",
        });
    }
    Ok(())
}

/// Storage elements of a tiled tensor of `shape` (full tiles, recursively,
/// padding included), from element `[0, ..., 0]`'s tile slot on. Strided
/// tile grids span from slot 0 to the highest slot they address; in-tile
/// strides stay within the tile (`check_tiled`), so a tile holds
/// `product(tile_shape)` elements whatever its inner order.
///
/// Negative grid strides reach slots before slot 0: at the top level
/// (`before` is `Some`: `byte_offset` and the element packing) the tiles
/// there must lie at or after byte 0, as for a strided tensor; below it they
/// would be the previous tile's slots (tiles do not overlap,
/// `layouts/tiled.md` § Description), and are refused. The reader agrees.
fn tiled_storage(shape: &[u64], t: &Tiled, before: Option<(u64, Packing)>) -> Result<u64> {
    // An empty tensor stores nothing.
    if product(shape, "element count")? == 0 {
        return Ok(0);
    }
    let grid: Vec<u64> = shape
        .iter()
        .zip(&t.tile_shape)
        .map(|(&s, &k)| s.div_ceil(k.max(1)))
        .collect();
    let slots = match &t.outer {
        TileOrder::Strided(strides) => {
            let (lo, hi) = offset_range(&grid, strides).ok_or(Error::overflow("tile grid extent"))?;
            let slots = u64::try_from(hi.saturating_add(1)).map_err(|_| Error::overflow("tile grid extent"))?;
            (slots, u64::try_from(lo.unsigned_abs()).unwrap_or(u64::MAX))
        }
        TileOrder::RowMajor | TileOrder::ColumnMajor => (product(&grid, "tile count")?, 0),
    };
    let (slots, slots_before) = slots;
    let per_tile = match &t.inner {
        TileInner::Tiled(inner) => tiled_storage(&t.tile_shape, inner, None)?,
        TileInner::Strided(_) | TileInner::RowMajor | TileInner::ColumnMajor => {
            product(&t.tile_shape, "tile elements")?
        }
    };
    if slots_before > 0 {
        let Some((byte_offset, packing)) = before else {
            return Err(Error::InvalidField {
                what: "outer_strides (negative below the top tiling level: a slot of the previous tile)",
                value: slots_before,
                rule: "layouts/tiled.md § Description: tiles do not overlap",
            });
        };
        let needed = packing.bytes_for(mul(slots_before, per_tile, "tiled elements before [0, ..., 0]")?)?;
        if byte_offset < needed {
            return Err(Error::InvalidField {
                what: "byte_offset",
                value: byte_offset,
                rule: "memory-layout.md § Common Fields › byte_offset: negative outer_strides must leave every tile at or after byte 0",
            });
        }
    }
    mul(slots, per_tile, "tiled buffer elements")
}

/// Number of storage elements of a dense tensor, padding the blocked axis of
/// a per-block / NF4 quantized tensor up to whole blocks.
fn storage_count(shape: &[u64], padded_axis: Option<(usize, u64)>) -> Result<u64> {
    let mut total = 1u64;
    for (i, &s) in shape.iter().enumerate() {
        let s = match padded_axis {
            Some((axis, k)) if axis == i => mul(s.div_ceil(k.max(1)), k, "padded axis")?,
            _ => s,
        };
        total = mul(total, s, "element count")?;
    }
    Ok(total)
}

enum Extent {
    Fits { end: u64 },
    BeforeStart,
}

/// Lowest and highest element offsets `sum(i_k * strides[k])` reaches over
/// a non-empty `shape`, in `i128`; `None` on overflow.
fn offset_range(shape: &[u64], strides: &[i64]) -> Option<(i128, i128)> {
    shape
        .iter()
        .zip(strides)
        .try_fold((0i128, 0i128), |(lo, hi), (&n, &stride)| {
            let reach = i128::from(stride).checked_mul(i128::from(n).saturating_sub(1))?;
            Some(if reach < 0 {
                (lo.checked_add(reach)?, hi)
            } else {
                (lo, hi.checked_add(reach)?)
            })
        })
}

/// Byte extent of a strided tensor: the end offset (exclusive) of the last
/// addressable byte, or `BeforeStart` when a negative stride reaches before
/// byte 0.
fn strided_extent(shape: &[u64], strides: &[i64], packing: Packing, byte_offset: u64) -> Result<Extent> {
    if shape.contains(&0) {
        return Ok(Extent::Fits { end: byte_offset });
    }
    let (lo, hi) = offset_range(shape, strides).ok_or(Error::overflow("strided extent"))?;
    // Byte range [first, last_end) touched by element offsets lo..=hi.
    let base = i128::from(byte_offset);
    let (first, last_end) = match packing {
        Packing::Whole { bytes } => {
            let w = i128::from(bytes);
            let first = lo.checked_mul(w).and_then(|x| base.checked_add(x));
            let end = hi
                .checked_add(1)
                .and_then(|x| x.checked_mul(w))
                .and_then(|x| base.checked_add(x));
            (first, end)
        }
        Packing::SubByte { bits } => {
            let per = i128::from(8u32.checked_div(bits).unwrap_or(1));
            (
                lo.checked_div_euclid(per).and_then(|x| base.checked_add(x)),
                hi.checked_div_euclid(per)
                    .and_then(|x| x.checked_add(1))
                    .and_then(|x| base.checked_add(x)),
            )
        }
        Packing::SixBit => (
            lo.checked_div_euclid(4)
                .and_then(|g| g.checked_mul(3))
                .and_then(|x| base.checked_add(x)),
            hi.checked_div_euclid(4)
                .and_then(|g| g.checked_add(1))
                .and_then(|g| g.checked_mul(3))
                .and_then(|x| base.checked_add(x)),
        ),
    };
    let (Some(first), Some(last_end)) = (first, last_end) else {
        return Err(Error::overflow("strided extent"));
    };
    if first < 0 {
        return Ok(Extent::BeforeStart);
    }
    let end = u64::try_from(last_end).map_err(|_| Error::overflow("strided extent"))?;
    Ok(Extent::Fits { end })
}

/// Byte-level descriptor: every wire field settable, for building valid
/// descriptors from [`TensorDescriptor::to_raw`] or deliberately invalid ones.
///
/// Fields left `None` are computed by [`RawDescriptor::encode`]:
/// `descriptor_length` (actual length), `flags` (from the sections present),
/// `rank` (`shape.len()`), `buffer_count` (`buffers.len()`),
/// `quantization_length` (payload length).
#[derive(Debug, Clone, PartialEq)]
pub struct RawDescriptor {
    /// Bytes 0–3; `HRRY` in a valid descriptor.
    pub magic: [u8; 4],
    /// Byte 4.
    pub version_major: u8,
    /// Byte 5.
    pub version_minor: u8,
    /// Bytes 6–9 override; `None` = the encoded length.
    pub descriptor_length: Option<u32>,
    /// Bytes 10–13 override; `None` = derived from the sections present.
    pub flags: Option<u32>,
    /// Byte 14.
    pub type_tag: u8,
    /// Byte 15.
    pub layout_tag: u8,
    /// Bytes 16–19 override; `None` = `shape.len()`.
    pub rank: Option<u32>,
    /// Shape entries, written as given.
    pub shape: Vec<u64>,
    /// `byte_offset`.
    pub byte_offset: u64,
    /// Layout-specific field bytes, written as given.
    pub layout_fields: Vec<u8>,
    /// `buffer_count` override; `None` = `buffers.len()`.
    pub buffer_count: Option<u8>,
    /// Buffer handles, written as given.
    pub buffers: Vec<BufferHandle>,
    /// Quantization payload (written after its `u32` length).
    pub quantization: Option<Vec<u8>>,
    /// `quantization_length` override.
    pub quantization_length: Option<u32>,
    /// Shard section.
    pub shard: Option<Shard>,
    /// Statistics section.
    pub statistics: Option<Statistics>,
    /// Extension type section.
    pub extension_type: Option<ExtensionType>,
    /// Composite member section.
    pub composite_member: Option<CompositeMember>,
    /// Extra bytes appended after the last section.
    pub trailing_bytes: Vec<u8>,
}

impl RawDescriptor {
    /// Descriptor magic `HRRY`.
    pub const MAGIC: [u8; 4] = hurray_format::descriptor::DESCRIPTOR_MAGIC;

    /// Flags derived from which sections are present.
    pub fn derived_flags(&self) -> u32 {
        let mut flags = 0;
        if self.quantization.is_some() {
            flags |= HAS_QUANTIZATION;
        }
        if self.shard.is_some() {
            flags |= HAS_SHARD;
        }
        if self.extension_type.is_some() {
            flags |= HAS_EXTENSION_TYPE;
        }
        if self.statistics.is_some() {
            flags |= HAS_STATISTICS;
        }
        if self.composite_member.is_some() {
            flags |= HAS_COMPOSITE_MEMBER;
        }
        flags
    }

    /// Encodes the fields in wire order, without any validation.
    ///
    /// # Errors
    /// [`Error::Overflow`] when a computed length does not fit its wire field.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let mut e = Enc::new();
        e.bytes(&self.magic);
        e.u8(self.version_major);
        e.u8(self.version_minor);
        e.u32(0); // descriptor_length, patched below
        e.u32(self.flags.unwrap_or_else(|| self.derived_flags()));
        e.u8(self.type_tag);
        e.u8(self.layout_tag);
        let rank = match self.rank {
            Some(r) => r,
            None => u32::try_from(self.shape.len()).map_err(|_| Error::overflow("rank"))?,
        };
        e.u32(rank);
        e.u64s(&self.shape);
        e.u64(self.byte_offset);
        e.bytes(&self.layout_fields);
        let count = match self.buffer_count {
            Some(c) => c,
            None => u8::try_from(self.buffers.len()).map_err(|_| Error::TooManyBuffers {
                count: len64(self.buffers.len()).unwrap_or(u64::MAX),
            })?,
        };
        e.u8(count);
        for b in &self.buffers {
            b.encode(&mut e);
        }
        if let Some(q) = &self.quantization {
            let len = match self.quantization_length {
                Some(l) => l,
                None => u32::try_from(q.len()).map_err(|_| Error::overflow("quantization_length"))?,
            };
            e.u32(len);
            e.bytes(q);
        }
        if let Some(s) = &self.shard {
            s.encode(&mut e);
        }
        if let Some(s) = &self.statistics {
            s.encode(&mut e);
        }
        if let Some(x) = &self.extension_type {
            x.encode(&mut e);
        }
        if let Some(m) = &self.composite_member {
            m.encode(&mut e);
        }
        e.bytes(&self.trailing_bytes);
        let length = match self.descriptor_length {
            Some(l) => l,
            None => u32::try_from(e.buf.len()).map_err(|_| Error::overflow("descriptor_length"))?,
        };
        if let Some(slot) = e.buf.get_mut(6..10) {
            slot.copy_from_slice(&length.to_le_bytes());
        }
        Ok(e.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_worked_example() {
        // metadata.md § Worked Example: float32 [3, 4] row-major, 61 bytes.
        // The example declares a 192-byte buffer, more than the 48 bytes the
        // 12 elements need: the layouts allow it, strict readers reject it
        // (NOTES.md), so the checked path refuses it; the bytes still encode
        // (the unchecked path writes such a file).
        let mut d = TensorDescriptor::row_major(ElementType::Float32, vec![3, 4]).unwrap();
        assert_eq!(d.buffers[0].byte_size, 48);
        d.validate().unwrap();
        d.buffers[0].byte_size = 192;
        assert!(matches!(
            d.validate(),
            Err(Error::BufferSize {
                buffer: 0,
                expected: 48,
                actual: 192,
                ..
            })
        ));
        let b = d.encode().unwrap();
        let expected: Vec<u8> = [
            &b"HRRY"[..],
            &[1, 0, 0x3D, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x01, 2, 0, 0, 0],
            &3u64.to_le_bytes(),
            &4u64.to_le_bytes(),
            &0u64.to_le_bytes(),
            &[1],
            &192u64.to_le_bytes(),
            &64u32.to_le_bytes(),
            &[0, 0, 0, 0],
        ]
        .concat();
        assert_eq!(b, expected);
    }

    #[test]
    fn tiled_inner_strides_stay_within_the_tile() {
        let d = |inner_strides: Vec<i64>| {
            let tiled = Tiled {
                tile_shape: vec![2, 2],
                outer: TileOrder::RowMajor,
                inner: TileInner::Strided(inner_strides),
            };
            TensorDescriptor::new(ElementType::Float32, Layout::Tiled(tiled), vec![4, 4])
                .with_buffer(BufferHandle::new(64))
                .validate()
        };
        // Row-major and column-major in the tile: offsets 0..=3.
        assert!(d(vec![2, 1]).is_ok() && d(vec![1, 2]).is_ok());
        // [8, 1] reaches 9 in a 4-element tile; [-1, 2] reaches -1.
        for (strides, value) in [
            (vec![8, 1], 9),
            (vec![-1, 2], 0),
            (vec![i64::MAX, i64::MAX], u64::MAX - 1),
        ] {
            assert!(
                matches!(d(strides.clone()), Err(Error::InvalidField { what: "inner_strides", value: v, .. }) if v == value),
                "{strides:?}: {:?}",
                d(strides.clone())
            );
        }
    }

    #[test]
    fn sparse_byte_offset_refused() {
        let d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5)
            .unwrap()
            .with_byte_offset(4);
        assert!(matches!(d.validate(), Err(Error::NonZeroByteOffset { .. })));
    }

    #[test]
    fn csc_rank_and_buffers() {
        let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap();
        d.shape = vec![1, 4, 5];
        assert!(matches!(d.validate(), Err(Error::RankNotAllowed { rank: 3, .. })));
        let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap();
        d.buffers.pop();
        assert!(matches!(
            d.validate(),
            Err(Error::BufferCount {
                expected: 3,
                actual: 2,
                ..
            })
        ));
        let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 7).unwrap();
        d.buffers[0].byte_size = 24;
        assert!(matches!(
            d.validate(),
            Err(Error::BufferSize {
                buffer: 0,
                expected: 28,
                actual: 24,
                ..
            })
        ));
    }

    #[test]
    fn dense_sizes() {
        let d = TensorDescriptor::row_major(ElementType::Float6E2M3, vec![5]).unwrap();
        assert_eq!(d.buffers[0].byte_size, 6);
        d.validate().unwrap();
        let mut d = TensorDescriptor::row_major(ElementType::Int4, vec![3, 3]).unwrap();
        assert_eq!(d.buffers[0].byte_size, 5);
        d.buffers[0].byte_size = 4;
        assert!(matches!(d.validate(), Err(Error::BufferTooSmall { minimum: 5, .. })));
        let d = TensorDescriptor::column_major(ElementType::Float32, vec![]).unwrap();
        assert!(matches!(d.validate(), Err(Error::RankNotAllowed { rank: 0, .. })));
    }

    #[test]
    fn strided_extent_checks() {
        // layouts/strided.md example: [3, 4], strides [-4, 1], byte_offset 32.
        let d = TensorDescriptor::new(
            ElementType::Float32,
            Layout::Strided { strides: vec![-4, 1] },
            vec![3, 4],
        )
        .with_buffer(BufferHandle::new(48))
        .with_byte_offset(32);
        d.validate().unwrap();
        let d2 = d.clone().with_byte_offset(16);
        assert!(d2.validate().is_err());
    }

    #[test]
    fn tiled_partial() {
        let t = Tiled {
            tile_shape: vec![2, 4],
            outer: TileOrder::RowMajor,
            inner: TileInner::ColumnMajor,
        };
        let d = TensorDescriptor::new(ElementType::Float32, Layout::Tiled(t), vec![5, 7])
            .with_buffer(BufferHandle::new(192));
        d.validate().unwrap();
        let mut small = d.clone();
        small.buffers[0].byte_size = 188;
        assert!(matches!(
            small.validate(),
            Err(Error::BufferTooSmall { minimum: 192, .. })
        ));
    }

    #[test]
    fn permutation() {
        assert!(check_permutation(&[2, 0, 1]).is_ok());
        assert!(matches!(
            check_permutation(&[0, 1, 1]),
            Err(Error::ModeOrderNotPermutation { position: 2, value: 1 })
        ));
        assert!(matches!(
            check_permutation(&[0, 3, 1]),
            Err(Error::ModeOrderNotPermutation { position: 1, value: 3 })
        ));
    }
}
