//! The spec citations errors give as their rule, in one place so that they
//! stay consistent: a spec file, ` § ` and the heading path joined by
//! ` › `, sometimes followed by `: ` and the rule's own words or by
//! `; NOTES.md` and the decision rows concerned (the form
//! [`Error::rule`](crate::Error::rule) documents). The crate's tests check
//! each cited section against the spec's headings.

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

// Ranks, tags and the element types' packing.
pub const RANK: &str = "data-model.md § Rank";
pub const SCHEME_TAGS: &str = "quantization.md § Scheme Tag Space";
pub const FLOAT8_VARIANTS: &str = "element-types.md § Tier 2 -- Extended Types › Float8 Variants";
pub const BOOL_PADDING_BITS: &str =
    "element-types.md § Tier 1 -- Core Types › Boolean Type (the remaining high-order bits MUST be 0)";
pub const FP4_PADDING_BITS: &str = "element-types.md § Tier 2 -- Extended Types › Sub-Byte Floating-Point Types (the high nibble of the final byte MUST be 0)";
pub const FP6_PADDING_BITS: &str = "element-types.md § Tier 2 -- Extended Types › Sub-Byte Floating-Point Types › 6-bit packing (unused bits MUST be 0)";
pub const INT_PADDING_BITS: &str =
    "element-types.md § Tier 2 -- Extended Types › Sub-Byte Integer Types (unused bits MUST be 0)";
pub const PADDING: &str = "file-format.md § Alignment and Padding Summary (padding bytes are 0x00)";

// Layouts.
pub const CSF_SIZE: &str = "layouts/csf.md § Buffer Size";
pub const TILED_DESCRIPTION: &str = "layouts/tiled.md § Description";
pub const BLOCK_PAGED_BUFFERS: &str = "layouts/block-paged.md § Buffer Table";
pub const BLOCK_PAGED_INV4: &str = "layouts/block-paged.md § Storage Invariants (4)";
pub const BLOCK_PAGED_QUANT: &str = "layouts/block-paged.md § Quantization Compatibility › Per-scheme composition";
pub const BLOCK_PAGED_SCALES: &str = "layouts/block-paged.md § Quantization Compatibility › Scale-buffer size";

// Quantization schemes: each one's validity constraints, referenced buffers and storage types.
pub const PER_TENSOR_AFFINE: &str = "quantization/per-tensor-affine.md § Validity Constraints";
pub const PER_TENSOR_AFFINE_STORAGE: &str = "quantization/per-tensor-affine.md § Valid Storage Types";
pub const PER_CHANNEL_AFFINE: &str = "quantization/per-channel-affine.md § Validity Constraints";
pub const PER_CHANNEL_AFFINE_BUFFERS: &str = "quantization/per-channel-affine.md § Referenced Buffers";
pub const PER_CHANNEL_AFFINE_STORAGE: &str = "quantization/per-channel-affine.md § Valid Storage Types";
pub const PER_BLOCK_AFFINE: &str = "quantization/per-block-affine.md § Validity Constraints";
pub const PER_BLOCK_AFFINE_BUFFERS: &str = "quantization/per-block-affine.md § Referenced Buffers";
pub const PER_BLOCK_AFFINE_ENCODING: &str = "quantization/per-block-affine.md § Binary Encoding";
pub const PER_BLOCK_AFFINE_STORAGE: &str = "quantization/per-block-affine.md § Valid Storage Types";
pub const NF4: &str = "quantization/nf4.md § Validity Constraints";
pub const NF4_BUFFERS: &str = "quantization/nf4.md § Referenced Buffer";
pub const NF4_STORAGE: &str = "quantization/nf4.md § Valid Storage Types";
pub const MXFP: &str = "quantization/mxfp.md § Validity Constraints";
pub const MXFP_BUFFERS: &str = "quantization/mxfp.md § Referenced Buffer";
pub const MXFP_STORAGE: &str = "quantization/mxfp.md § Valid Storage Types";
