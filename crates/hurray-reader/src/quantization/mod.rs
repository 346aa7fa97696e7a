//! Quantization (`quantization.md`), one module per scheme of
//! `quantization/*.md` with its fixed fields, its validity constraints and,
//! for NF4, its table of levels:
//!
//! - `section`: the descriptor's quantization section, parsed (each scheme
//!   reads its own fields);
//! - `plans`: each scheme checked against the tensor, and the parameter
//!   buffers (scales, zero points) it adds to the buffer table;
//! - `dequant`: an element's real value, by the scheme's formula.

pub(crate) mod context;
mod dequant;
mod mxfp;
mod nf4;
mod per_block_affine;
mod per_channel_affine;
mod per_tensor_affine;
pub(crate) mod plans;
pub(crate) mod section;
