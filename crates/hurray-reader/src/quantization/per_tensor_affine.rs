//! Per-tensor affine quantization (`quantization/per-tensor-affine.md`,
//! scheme tag 0x01): one `scale` and one `zero_point` in the descriptor,
//! no parameter buffer.

use super::context::{integer_range, Context, INTEGER_STORAGE};
use crate::cursor::Cursor;
use crate::error::{rule, Error, Field, Location, Number, Result, Scope};
use crate::file::reserved_zero;
use crate::raw;

/// Reads the scheme's fixed fields (after the 4-byte header; `offset` is
/// the payload's).
pub(super) fn parse<'data>(q: &mut Cursor<'data>, offset: u64, scope: Scope) -> Result<&'data raw::PerTensorAffine> {
    let f = q.read_struct::<raw::PerTensorAffine>(Field::sub("quantization", "scale"), Some("quantization"))?;
    reserved_zero(
        &f.reserved,
        Field::sub("quantization", "_reserved"),
        offset + 12,
        rule::PER_TENSOR_AFFINE,
        scope,
    )?;
    Ok(f)
}

/// Checks the storage type, the scale and the zero point.
pub(super) fn check(f: &raw::PerTensorAffine, cx: &Context<'_>) -> Result<()> {
    cx.storage_in(&INTEGER_STORAGE, rule::PER_TENSOR_AFFINE_STORAGE)?;
    let scale = f.scale.get();
    if !scale.is_finite() || scale == 0.0 {
        return Err(Error::InvalidNumber {
            at: Location {
                scope: cx.scope(),
                field: Field::sub("quantization", "scale"),
                offset: cx.offset + 4,
                rule: rule::PER_TENSOR_AFFINE,
            },
            value: Number::float(f64::from(scale)),
            expected: "a finite, non-zero float32",
        });
    }
    let zp = i64::from(f.zero_point.get());
    if let Some((lo, hi)) = integer_range(cx.storage) {
        if zp < lo || zp > hi {
            return Err(Error::InvalidNumber {
                at: Location {
                    scope: cx.scope(),
                    field: Field::sub("quantization", "zero_point"),
                    offset: cx.offset + 8,
                    rule: rule::PER_TENSOR_AFFINE,
                },
                value: Number::Int(zp),
                expected: "a zero point within the storage type's range",
            });
        }
    }
    Ok(())
}
