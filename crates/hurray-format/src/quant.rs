//! Quantization tags (`quantization.md`, `quantization/*.md`).

/// `scheme_tag` of per-tensor affine (`quantization/per-tensor-affine.md`).
pub const PER_TENSOR_AFFINE: u8 = 0x01;
/// `scheme_tag` of per-channel affine (`quantization/per-channel-affine.md`).
pub const PER_CHANNEL_AFFINE: u8 = 0x02;
/// `scheme_tag` of per-block affine (`quantization/per-block-affine.md`).
pub const PER_BLOCK_AFFINE: u8 = 0x03;
/// `scheme_tag` of NF4 (`quantization/nf4.md`).
pub const NF4: u8 = 0x04;
/// `scheme_tag` of MXFP (`quantization/mxfp.md`).
pub const MXFP: u8 = 0x05;

/// The scheme's name for a `scheme_tag`: `per_tensor_affine`,
/// `per_channel_affine`, `per_block_affine`, `nf4`, `mxfp`; `None` for
/// any other tag.
pub const fn scheme_name(scheme_tag: u8) -> Option<&'static str> {
    Some(match scheme_tag {
        PER_TENSOR_AFFINE => "per_tensor_affine",
        PER_CHANNEL_AFFINE => "per_channel_affine",
        PER_BLOCK_AFFINE => "per_block_affine",
        NF4 => "nf4",
        MXFP => "mxfp",
        _ => return None,
    })
}

/// The `flags` bit of per-channel and per-block affine meaning "no zero
/// points" (`quantization.md` § Descriptor Header).
pub const SYMMETRIC: u16 = 1 << 0;
/// The `scheme_version` this spec defines for every scheme.
pub const SCHEME_VERSION: u8 = 1;
/// `zero_point_buffer_index` meaning "no zero-point buffer".
pub const NO_ZERO_POINT_BUFFER: u32 = u32::MAX;

/// `scale_type_tag` values: the element type tags a scale may have
/// (`quantization/per-block-affine.md` § Binary Encoding).
pub mod scale_type {
    use crate::ElementType;

    /// `float16`.
    pub const FLOAT16: u8 = ElementType::Float16.tag();
    /// `bfloat16`.
    pub const BFLOAT16: u8 = ElementType::Bfloat16.tag();
    /// `float32`, the only scale type of per-channel affine.
    pub const FLOAT32: u8 = ElementType::Float32.tag();
}
