//! Per-block affine quantization (`quantization/per-block-affine.md`,
//! scheme tag 0x03): a scale (float16, bfloat16 or float32), and unless
//! SYMMETRIC an int32 zero point, per block of `block_size` elements along
//! `axis`.

use super::context::Context;
use super::context::Parameters;
use crate::cursor::Cursor;
use crate::element_type::ElementType;
use crate::error::{rule, Field, Result, Scope};
use crate::file::reserved_zero;
use crate::raw;

/// Reads the scheme's fixed fields (after the 4-byte header; `offset` is
/// the payload's).
pub(super) fn parse<'data>(q: &mut Cursor<'data>, offset: u64, scope: Scope) -> Result<&'data raw::PerBlockAffine> {
    let f = q.read_struct::<raw::PerBlockAffine>(Field::sub("quantization", "axis"), Some("quantization"))?;
    reserved_zero(
        &f.reserved,
        Field::sub("quantization", "_reserved"),
        offset + 21,
        rule::PER_BLOCK_AFFINE_ENCODING,
        scope,
    )?;
    Ok(f)
}

/// The scale type of `scale_type_tag` (§ Binary Encoding).
pub(super) fn scale_type(tag: u8) -> Option<ElementType> {
    match tag {
        0x01 => Some(ElementType::Float16),
        0x02 => Some(ElementType::Bfloat16),
        0x03 => Some(ElementType::Float32),
        _ => None,
    }
}

/// Checks the storage and scale types, the block size and the SYMMETRIC
/// rule; returns the parameter buffers to plan.
pub(super) fn check(f: &raw::PerBlockAffine, cx: &Context<'_>) -> Result<Parameters> {
    use ElementType::*;
    cx.storage_in(&[Int8, Uint8, Int4, Uint4, Int2, Uint2], rule::PER_BLOCK_AFFINE_STORAGE)?;
    let scale_type = scale_type(f.scale_type_tag).ok_or_else(|| {
        cx.invalid(
            "scale_type_tag",
            20,
            u64::from(f.scale_type_tag),
            "0x01 (float16), 0x02 (bfloat16) or 0x03 (float32)",
            rule::PER_BLOCK_AFFINE,
        )
    })?;
    let bs = f.block_size.get();
    if !bs.is_power_of_two() || bs < 2 {
        return Err(cx.invalid(
            "block_size",
            8,
            u64::from(bs),
            "a power of two, at least 2",
            rule::PER_BLOCK_AFFINE,
        ));
    }
    let zero_index = f.zero_point_buffer_index.get();
    cx.check_symmetric(zero_index, 16, rule::PER_BLOCK_AFFINE)?;
    Ok(Parameters {
        axis: f.axis.get(),
        block_size: Some(bs),
        scale_index: f.scale_buffer_index.get(),
        zero_index: (!cx.symmetric()).then_some(zero_index),
        scale_type,
        rule: rule::PER_BLOCK_AFFINE,
        referenced_buffers: rule::PER_BLOCK_AFFINE_BUFFERS,
        index_offsets: (12, 16),
    })
}
