//! Element types and quantization as `quantized.rs` models them, from the
//! spec text alone (nothing of the reader's decoding or dequantization is
//! called; the writer only writes the bytes the model gives it).
//!
//! - `types`, `decode`: the element types and each one's value from its
//!   bits; `readback`: patterns, files of them, and the check against the
//!   reader;
//! - `scheme`, `case`, `qmodel`, `strategies`: the quantization schemes, a
//!   quantized tensor, what the model says it holds and the check against
//!   the reader, and drawing cases;
//! - `mutations`: valid bases with one rule broken each;
//! - `files`: writing files, a strict reader's first error.

pub(crate) mod case;
pub(crate) mod decode;
pub(crate) mod files;
pub(crate) mod mutations;
pub(crate) mod qmodel;
pub(crate) mod readback;
pub(crate) mod scheme;
pub(crate) mod strategies;
pub(crate) mod types;

pub(crate) use case::QCase;
pub(crate) use decode::spec_value;
pub(crate) use files::{strict_error, write_checked};
pub(crate) use mutations::{
    f32s, i32s, mutations, mxfp_base, nf4_base, per_block_base, per_block_f16_base, per_block_shared_base,
    per_channel_base, per_tensor_base, Raw, PB_VALID,
};
pub(crate) use qmodel::{qcheck, spec_payload, writer_payload};
pub(crate) use readback::{check_decoded, check_wide, conversion, dense_of, float_pattern, narrow_sequence};
pub(crate) use scheme::{QLay, Scheme, NF4};
pub(crate) use strategies::qcases;
pub(crate) use types::{Ty, TYPES};
