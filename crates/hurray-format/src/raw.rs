//! On-disk structures, byte for byte.
//!
//! Every struct here is `#[repr(C)]`, has alignment 1 and accepts every bit
//! pattern, so `zerocopy` can view it straight from the mapped bytes at any
//! offset. Field names are the spec's. Nothing here is validated: the
//! friendly types of the crate decode and check these fields; this module is
//! the escape hatch for callers who want the raw values.

use zerocopy::little_endian::{F32, F64, I32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The fields of an on-disk struct in order: spec name and width in bytes.
/// Used to name every byte in annotated dumps.
pub trait Described {
    /// `(name, width)` for each field, in order; widths add up to the size.
    const FIELDS: &'static [(&'static str, usize)];
}

macro_rules! described {
    ($($t:ty => [$(($name:literal, $width:literal)),* $(,)?]),* $(,)?) => {$(
        impl Described for $t {
            const FIELDS: &'static [(&'static str, usize)] = &[$(($name, $width)),*];
        }
    )*};
}

described!(
    FileHeader => [("magic", 8), ("container_version_major", 1), ("container_version_minor", 1), ("_reserved", 2),
        ("file_flags", 4), ("data_buffer_alignment", 4), ("first_descriptor_offset", 8), ("tensor_count_hint", 8),
        ("_reserved_header", 28)],
    Trailer => [("index_offset", 8), ("index_length", 8), ("kv_offset", 8), ("kv_length", 4), ("index_crc32c", 4),
        ("_reserved", 4), ("trailer_magic", 4)],
    IndexEntryTail => [("descriptor_offset", 8), ("descriptor_length", 4), ("data_offset", 8), ("data_length", 8),
        ("flags", 4)],
    DescriptorHeader => [("magic", 4), ("version_major", 1), ("version_minor", 1), ("descriptor_length", 4),
        ("flags", 4), ("type_tag", 1), ("layout_tag", 1), ("rank", 4)],
    BufferHandle => [("byte_size", 8), ("alignment", 4), ("device_tag", 1), ("sync_mode", 1), ("memory_class", 1),
        ("_reserved", 1)],
    CompressedFields => [("nnz", 8), ("_reserved", 8)],
    CooFields => [("nnz", 8), ("is_sorted", 1), ("_reserved", 7)],
    TiledOrders => [("outer_layout", 1), ("inner_layout", 1), ("_reserved", 2)],
    HilbertFields => [("hilbert_order", 4), ("hilbert_rank", 4)],
    BlockPagedFields => [("page_size", 4), ("num_pages", 8), ("paged_axis", 4), ("num_seqs", 4), ("kv_role", 1),
        ("layer_index", 4), ("block_table_index_type", 1), ("_reserved", 6)],
    CompositeFields => [("composition_rule", 1), ("combine_op", 1), ("_reserved", 2), ("member_count", 4)],
    Statistics => [("computed_mask", 4), ("_reserved", 4), ("nnz", 8), ("sparsity_ratio", 8), ("value_min", 8),
        ("value_max", 8), ("value_abs_max", 8), ("value_mean", 8), ("value_stddev", 8), ("nm_n", 1), ("nm_m", 1),
        ("has_nan", 1), ("has_inf", 1), ("_reserved2", 4)],
    ExtensionType => [("bit_width", 4), ("packing_factor", 1), ("is_float", 1), ("is_signed", 1), ("sign_bits", 1),
        ("exponent_bits", 1), ("mantissa_bits", 1), ("_reserved", 2), ("exponent_bias", 4), ("has_nan", 1),
        ("has_inf", 1), ("_reserved2", 2)],
    CompositeMember => [("member_role", 1), ("_reserved", 15)],
    QuantizationHeader => [("scheme_tag", 1), ("scheme_version", 1), ("flags", 2)],
    PerTensorAffine => [("scale", 4), ("zero_point", 4), ("_reserved", 4)],
    PerChannelAffine => [("axis", 4), ("scale_buffer_index", 4), ("zero_point_buffer_index", 4), ("scale_type_tag", 1),
        ("_reserved", 3)],
    PerBlockAffine => [("axis", 4), ("block_size", 4), ("scale_buffer_index", 4), ("zero_point_buffer_index", 4),
        ("scale_type_tag", 1), ("_reserved", 3)],
    BlockScaled => [("axis", 4), ("block_size", 4), ("scale_buffer_index", 4)],
);

/// The 64-byte file header (`file-format.md` § File Header).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct FileHeader {
    /// `HRRYFILE`.
    pub magic: [u8; 8],
    /// Container format major version.
    pub container_version_major: u8,
    /// Container format minor version.
    pub container_version_minor: u8,
    /// Must be zero.
    pub reserved: [u8; 2],
    /// File-level flag bits.
    pub file_flags: U32,
    /// Alignment of every data buffer, in bytes.
    pub data_buffer_alignment: U32,
    /// Absolute offset of the first descriptor.
    pub first_descriptor_offset: U64,
    /// Number of tensors if known, else `u64::MAX`.
    pub tensor_count_hint: U64,
    /// Must be zero.
    pub reserved_header: [u8; 28],
}

/// The 40-byte trailer at the end of the file (`file-format.md` § Trailer).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Trailer {
    /// Absolute offset of the index section.
    pub index_offset: U64,
    /// Length of the index section in bytes.
    pub index_length: U64,
    /// Absolute offset of the KV section, 0 if none.
    pub kv_offset: U64,
    /// Length of the KV section in bytes, 0 if none.
    pub kv_length: U32,
    /// CRC-32C of the index bytes when `HAS_INDEX_CRC32C` is set, else 0.
    pub index_crc32c: U32,
    /// Must be zero.
    pub reserved: [u8; 4],
    /// `HRRY`.
    pub trailer_magic: [u8; 4],
}

/// The fixed entry part after an index entry's name (`file-format.md` §
/// Index Encoding): everything but `name_length` and `name`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct IndexEntryTail {
    /// Absolute offset of the tensor descriptor.
    pub descriptor_offset: U64,
    /// Length of the descriptor in bytes.
    pub descriptor_length: U32,
    /// Absolute offset of the first data buffer.
    pub data_offset: U64,
    /// Bytes from the first byte of buffer 0 to the last byte of the last buffer.
    pub data_length: U64,
    /// Must be zero.
    pub flags: U32,
}

/// The 20-byte fixed header of a tensor descriptor (`metadata.md` § Fixed Header).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct DescriptorHeader {
    /// `HRRY`.
    pub magic: [u8; 4],
    /// Descriptor format major version.
    pub version_major: u8,
    /// Descriptor format minor version.
    pub version_minor: u8,
    /// Total descriptor length in bytes, fixed header included.
    pub descriptor_length: U32,
    /// Descriptor flag bits (optional sections).
    pub flags: U32,
    /// Element type tag.
    pub type_tag: u8,
    /// Memory layout tag.
    pub layout_tag: u8,
    /// Number of dimensions.
    pub rank: U32,
}

/// A 16-byte buffer handle (`buffer-protocol.md` § Buffer Handle).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BufferHandle {
    /// Size of the buffer in bytes.
    pub byte_size: U64,
    /// Declared alignment of the buffer in bytes.
    pub alignment: U32,
    /// Device the buffer lives on.
    pub device_tag: u8,
    /// Producer-side synchronisation mode.
    pub sync_mode: u8,
    /// Memory access class.
    pub memory_class: u8,
    /// Must be zero.
    pub reserved: u8,
}

/// Layout fields shared by CSR (`0x07`) and CSC (`0x08`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CompressedFields {
    /// Number of stored elements.
    pub nnz: U64,
    /// Must be zero.
    pub reserved: [u8; 8],
}

/// COO (`0x06`) layout fields.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CooFields {
    /// Number of stored elements.
    pub nnz: U64,
    /// 1 if the entries are in lexicographic order, else 0.
    pub is_sorted: u8,
    /// Must be zero.
    pub reserved: [u8; 7],
}

/// The part of the tiled (`0x04`) fields that follows `tile_shape`.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TiledOrders {
    /// Layout of the tile grid: 0x01, 0x02 or 0x03.
    pub outer_layout: u8,
    /// Layout within a tile: 0x01, 0x02, 0x03 or 0x04 (recursive).
    pub inner_layout: u8,
    /// Must be zero.
    pub reserved: [u8; 2],
}

/// Hilbert (`0x40`) layout fields.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct HilbertFields {
    /// Order of the curve (each dimension is `2^hilbert_order`).
    pub hilbert_order: U32,
    /// Number of curve dimensions; equals `rank`.
    pub hilbert_rank: U32,
}

/// Block-paged (`0x0A`) layout fields.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BlockPagedFields {
    /// Tokens per page.
    pub page_size: U32,
    /// Physical pages in the pool.
    pub num_pages: U64,
    /// The paged axis; 0 in this version.
    pub paged_axis: U32,
    /// Sequences in the batch.
    pub num_seqs: U32,
    /// 0 key, 1 value, 2 fused / generic.
    pub kv_role: u8,
    /// Transformer layer, `u32::MAX` when not layer-scoped.
    pub layer_index: U32,
    /// 0: `block_table`/`seq_ptr` are `u32`; 1: `u64`.
    pub block_table_index_type: u8,
    /// Must be zero.
    pub reserved: [u8; 6],
}

/// Composite head (`0x0B`) layout fields.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CompositeFields {
    /// 1 partition, 2 overlay, 3 group.
    pub composition_rule: u8,
    /// Overlay: 1 replace, 2 add; otherwise 0.
    pub combine_op: u8,
    /// Must be zero.
    pub reserved: [u8; 2],
    /// Number of member tensors that follow the head.
    pub member_count: U32,
}

/// The 72-byte statistics section (`metadata.md` § Statistics Section).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Statistics {
    /// Which fields are valid.
    pub computed_mask: U32,
    /// Must be zero.
    pub reserved: U32,
    /// Number of non-zero elements.
    pub nnz: U64,
    /// Fraction of zero elements.
    pub sparsity_ratio: F64,
    /// Minimum value.
    pub value_min: F64,
    /// Maximum value.
    pub value_max: F64,
    /// Maximum absolute value.
    pub value_abs_max: F64,
    /// Mean value.
    pub value_mean: F64,
    /// Population standard deviation.
    pub value_stddev: F64,
    /// N of an N:M sparsity pattern.
    pub nm_n: u8,
    /// M of an N:M sparsity pattern.
    pub nm_m: u8,
    /// 1 if a NaN is present.
    pub has_nan: u8,
    /// 1 if an infinity is present.
    pub has_inf: u8,
    /// Must be zero.
    pub reserved2: [u8; 4],
}

/// The 20-byte extension type section (`metadata.md` § Extension Type Section).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ExtensionType {
    /// Bits per element.
    pub bit_width: U32,
    /// Elements per byte (1 for whole-byte types).
    pub packing_factor: u8,
    /// 1 for a floating-point type.
    pub is_float: u8,
    /// 1 for a signed integer type.
    pub is_signed: u8,
    /// Sign bits of a float type.
    pub sign_bits: u8,
    /// Exponent bits of a float type.
    pub exponent_bits: u8,
    /// Mantissa bits of a float type.
    pub mantissa_bits: u8,
    /// Must be zero.
    pub reserved: [u8; 2],
    /// Exponent bias of a float type.
    pub exponent_bias: U32,
    /// 1 if NaN is representable.
    pub has_nan: u8,
    /// 1 if infinity is representable.
    pub has_inf: u8,
    /// Must be zero.
    pub reserved2: [u8; 2],
}

/// The 16-byte composite member section (`metadata.md` § Composite Member Section).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CompositeMember {
    /// 0 correction, 1 base.
    pub member_role: u8,
    /// Must be zero.
    pub reserved: [u8; 15],
}

/// The 4-byte header of every quantization descriptor (`quantization.md` §
/// Descriptor Header).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct QuantizationHeader {
    /// Which scheme.
    pub scheme_tag: u8,
    /// Version of the scheme's encoding.
    pub scheme_version: u8,
    /// Scheme-specific flags.
    pub flags: U16,
}

/// Per-tensor affine payload after the header (`quantization/per-tensor-affine.md`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct PerTensorAffine {
    /// Dequantization scale.
    pub scale: F32,
    /// Zero point.
    pub zero_point: I32,
    /// Must be zero.
    pub reserved: [u8; 4],
}

/// Per-channel affine payload after the header (`quantization/per-channel-affine.md`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct PerChannelAffine {
    /// The quantized axis.
    pub axis: U32,
    /// Buffer holding the scales.
    pub scale_buffer_index: U32,
    /// Buffer holding the zero points (`u32::MAX` when symmetric).
    pub zero_point_buffer_index: U32,
    /// Element type of the scales (0x03 float32).
    pub scale_type_tag: u8,
    /// Must be zero.
    pub reserved: [u8; 3],
}

/// Per-block affine payload after the header (`quantization/per-block-affine.md`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct PerBlockAffine {
    /// The blocked axis.
    pub axis: U32,
    /// Logical elements per block.
    pub block_size: U32,
    /// Buffer holding the scales.
    pub scale_buffer_index: U32,
    /// Buffer holding the zero points (`u32::MAX` when symmetric).
    pub zero_point_buffer_index: U32,
    /// Element type of the scales (float16, bfloat16 or float32).
    pub scale_type_tag: u8,
    /// Must be zero.
    pub reserved: [u8; 3],
}

/// NF4 and MXFP payload after the header (`quantization/nf4.md`, `quantization/mxfp.md`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BlockScaled {
    /// The blocked axis.
    pub axis: U32,
    /// Logical elements per block.
    pub block_size: U32,
    /// Buffer holding the per-block scales.
    pub scale_buffer_index: U32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described_size<T: Described>() -> usize {
        T::FIELDS.iter().map(|&(_, w)| w).sum()
    }

    #[test]
    fn field_tables_cover_every_byte() {
        assert_eq!(described_size::<FileHeader>(), size_of::<FileHeader>());
        assert_eq!(described_size::<Trailer>(), size_of::<Trailer>());
        assert_eq!(described_size::<IndexEntryTail>(), size_of::<IndexEntryTail>());
        assert_eq!(described_size::<DescriptorHeader>(), size_of::<DescriptorHeader>());
        assert_eq!(described_size::<BufferHandle>(), size_of::<BufferHandle>());
        assert_eq!(described_size::<CompressedFields>(), size_of::<CompressedFields>());
        assert_eq!(described_size::<CooFields>(), size_of::<CooFields>());
        assert_eq!(described_size::<TiledOrders>(), size_of::<TiledOrders>());
        assert_eq!(described_size::<HilbertFields>(), size_of::<HilbertFields>());
        assert_eq!(described_size::<BlockPagedFields>(), size_of::<BlockPagedFields>());
        assert_eq!(described_size::<CompositeFields>(), size_of::<CompositeFields>());
        assert_eq!(described_size::<Statistics>(), size_of::<Statistics>());
        assert_eq!(described_size::<ExtensionType>(), size_of::<ExtensionType>());
        assert_eq!(described_size::<CompositeMember>(), size_of::<CompositeMember>());
        assert_eq!(described_size::<QuantizationHeader>(), size_of::<QuantizationHeader>());
        assert_eq!(described_size::<PerTensorAffine>(), size_of::<PerTensorAffine>());
        assert_eq!(described_size::<PerChannelAffine>(), size_of::<PerChannelAffine>());
        assert_eq!(described_size::<PerBlockAffine>(), size_of::<PerBlockAffine>());
        assert_eq!(described_size::<BlockScaled>(), size_of::<BlockScaled>());
    }

    #[test]
    fn sizes_match_the_spec() {
        assert_eq!(size_of::<FileHeader>(), 64);
        assert_eq!(size_of::<Trailer>(), 40);
        assert_eq!(size_of::<IndexEntryTail>(), 32);
        assert_eq!(size_of::<DescriptorHeader>(), 20);
        assert_eq!(size_of::<BufferHandle>(), 16);
        assert_eq!(size_of::<CompressedFields>(), 16);
        assert_eq!(size_of::<CooFields>(), 16);
        assert_eq!(size_of::<BlockPagedFields>(), 32);
        assert_eq!(size_of::<CompositeFields>(), 8);
        assert_eq!(size_of::<Statistics>(), 72);
        assert_eq!(size_of::<ExtensionType>(), 20);
        assert_eq!(size_of::<CompositeMember>(), 16);
        assert_eq!(size_of::<PerTensorAffine>(), 12);
        assert_eq!(size_of::<PerChannelAffine>(), 16);
        assert_eq!(size_of::<PerBlockAffine>(), 20);
        assert_eq!(size_of::<BlockScaled>(), 12);
    }
}
