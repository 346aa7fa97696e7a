//! NF4 quantization (`quantization/nf4.md`, scheme tag 0x04): 4-bit codes
//! into a fixed table of 16 levels, a float32 scale per block of
//! `block_size` elements along `axis`.

use super::context::Context;
use super::context::Parameters;
use crate::element_type::ElementType;
use crate::error::{rule, Result};
use crate::raw;

/// The 16 NF4 levels, as § Lookup Table writes them (decimal expansions of
/// `float32` values, so more digits than an `f32` needs; each parses to
/// exactly that `float32`).
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
pub(super) const LEVELS: [f32; 16] = [
    -1.0,
    -0.6961928009986877,
    -0.5250730514526367,
    -0.39491748809814453,
    -0.28444138169288635,
    -0.18477343022823334,
    -0.09105003625154495,
    0.0,
    0.07958029955625534,
    0.16093020141124725,
    0.24611230194568634,
    0.33791524171829224,
    0.44070982933044434,
    0.5626170039176941,
    0.7229568362236023,
    1.0,
];

/// Checks the storage type and the block size; returns the parameter
/// buffer to plan.
pub(super) fn check(f: &raw::BlockScaled, cx: &Context<'_>) -> Result<Parameters> {
    cx.storage_in(&[ElementType::Uint4], rule::NF4_STORAGE)?;
    let bs = f.block_size.get();
    if !bs.is_power_of_two() || bs < 8 {
        return Err(cx.invalid("block_size", 8, u64::from(bs), "a power of two, at least 8", rule::NF4));
    }
    Ok(Parameters {
        axis: f.axis.get(),
        block_size: Some(bs),
        scale_index: f.scale_buffer_index.get(),
        zero_index: None,
        scale_type: ElementType::Float32,
        rule: rule::NF4,
        referenced_buffers: rule::NF4_BUFFERS,
        index_offsets: (12, 12),
    })
}
