//! MX floating-point quantization (`quantization/mxfp.md`, scheme tag
//! 0x05): a float8_e8m0 power-of-two scale per block of `block_size`
//! elements along `axis`; no partial blocks.

use super::context::Context;
use super::context::Parameters;
use crate::element_type::ElementType;
use crate::error::{rule, Result};
use crate::raw;

/// Checks the storage type and the block size; returns the parameter
/// buffer to plan.
pub(super) fn check(f: &raw::BlockScaled, cx: &Context<'_>) -> Result<Parameters> {
    use ElementType::*;
    cx.storage_in(
        &[Float8E4m3, Float8E5m2, Float4E2m1, Float6E2m3, Float6E3m2, Int8, Int4],
        rule::MXFP_STORAGE,
    )?;
    let bs = f.block_size.get();
    if !bs.is_power_of_two() || !(16..=2048).contains(&bs) {
        return Err(cx.invalid(
            "block_size",
            8,
            u64::from(bs),
            "a power of two in [16, 2048]",
            rule::MXFP,
        ));
    }
    Ok(Parameters {
        axis: f.axis.get(),
        block_size: Some(bs),
        scale_index: f.scale_buffer_index.get(),
        zero_index: None,
        scale_type: Float8E8m0,
        rule: rule::MXFP,
        referenced_buffers: rule::MXFP_BUFFERS,
        index_offsets: (12, 12),
    })
}
