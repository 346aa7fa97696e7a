//! Per-channel affine quantization (`quantization/per-channel-affine.md`,
//! scheme tag 0x02): a float32 scale, and unless SYMMETRIC an int32 zero
//! point, per index along `axis`, in parameter buffers.

use super::context::Parameters;
use super::context::{Context, INTEGER_STORAGE};
use crate::cursor::Cursor;
use crate::element_type::ElementType;
use crate::error::{rule, Field, Result, Scope};
use crate::file::reserved_zero;
use crate::raw;

/// Reads the scheme's fixed fields (after the 4-byte header; `offset` is
/// the payload's).
pub(super) fn parse<'data>(q: &mut Cursor<'data>, offset: u64, scope: Scope) -> Result<&'data raw::PerChannelAffine> {
    let f = q.read_struct::<raw::PerChannelAffine>(Field::sub("quantization", "axis"), Some("quantization"))?;
    reserved_zero(
        &f.reserved,
        Field::sub("quantization", "_reserved"),
        offset + 17,
        rule::PER_CHANNEL_AFFINE,
        scope,
    )?;
    Ok(f)
}

/// Checks the storage and scale types and the SYMMETRIC rule; returns the
/// parameter buffers to plan.
pub(super) fn check(f: &raw::PerChannelAffine, cx: &Context<'_>) -> Result<Parameters> {
    cx.storage_in(&INTEGER_STORAGE, rule::PER_CHANNEL_AFFINE_STORAGE)?;
    if f.scale_type_tag != 0x03 {
        return Err(cx.invalid(
            "scale_type_tag",
            16,
            u64::from(f.scale_type_tag),
            "0x03 (float32)",
            rule::PER_CHANNEL_AFFINE,
        ));
    }
    let zero_index = f.zero_point_buffer_index.get();
    cx.check_symmetric(zero_index, 12, rule::PER_CHANNEL_AFFINE)?;
    Ok(Parameters {
        axis: f.axis.get(),
        block_size: None,
        scale_index: f.scale_buffer_index.get(),
        zero_index: (!cx.symmetric()).then_some(zero_index),
        scale_type: ElementType::Float32,
        rule: rule::PER_CHANNEL_AFFINE,
        referenced_buffers: rule::PER_CHANNEL_AFFINE_BUFFERS,
        index_offsets: (8, 12),
    })
}
