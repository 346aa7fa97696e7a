//! Strided tensors (`layouts/strided.md`, layout tag `0x03`): an element's
//! position is `Σ index[k] × strides[k]` from element `[0, ..., 0]`,
//! strides negative or zero too. The buffer's size.

use zerocopy::little_endian::I64;

use crate::descriptor::Descriptor;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::layout::fields::LayoutFields;
use crate::layout::plan::{count, overflow, Plan};
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::layout::storage::{dense_plan, Origin, Stored};
use crate::raw;

pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule::NOT_SCALAR,
    buffers: BufferCount::DENSE,
    no_shard: None,
    statistics: None,
    plans,
};

/// One data buffer spanning the lowest to the highest addressed element.
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Strided { strides } = d.layout_fields() else {
        return Ok(Vec::new());
    };
    Ok(vec![dense_plan(d, |s| {
        let (elements, bytes) = strided_bytes(d, s.element_type, s.origin, s.shape, strides)?;
        Ok(Stored {
            elements,
            bytes,
            rule: rule::STRIDED,
            from_origin: false,
        })
    })?])
}

/// Strided (`layouts/strided.md` § Buffer Size): the buffer spans from the
/// lowest to the highest addressed element; `byte_offset` locates element
/// `[0, ..., 0]` and must leave the lowest one at or after byte 0.
/// Returns `(elements from byte origin.phase to the highest addressed,
/// bytes required)`.
///
/// Negative strides reach elements before `byte_offset`: at byte
/// `byte_offset + offset × w` for whole-byte types, in the byte
/// `byte_offset + floor(offset / P)` for 1-, 2- and 4-bit types, and in the
/// 3-byte group starting at `byte_offset + 3 × floor(offset / 4)` for 6-bit
/// types (`memory-layout.md` § Element Address Computation; the 6-bit types
/// are addressed by whole groups, as their packing requires).
pub(crate) fn strided_bytes(
    d: &Descriptor<'_>,
    et: ElementType,
    origin: Origin,
    shape: &[u64],
    strides: &[I64],
) -> Result<(u64, u64)> {
    let byte_offset = d.byte_offset();
    if count(shape) == Some(0) {
        return Ok((0, byte_offset));
    }
    let too_large = || {
        overflow(
            d,
            Field::new("strides"),
            d.offsets().layout_fields,
            "strided buffer size",
            rule::STRIDED,
        )
    };
    let (min, max) = offset_range(shape, strides.iter().map(|s| s.get())).ok_or_else(too_large)?;
    // Bytes from `byte_offset` to the first byte of the lowest element and
    // to one past the last byte of the highest one. i128 holds any offset
    // range of a shape whose product fits u64, but not necessarily that
    // range times the element width: checked.
    let (lowest_byte, end_byte): (Option<i128>, Option<i128>) = match (et.byte_width(), et.bit_width()) {
        (Some(w), _) => {
            let w = i128::from(w);
            (min.checked_mul(w), max.checked_add(1).and_then(|m| m.checked_mul(w)))
        }
        (None, 6) => (
            min.checked_div_euclid(4).and_then(|g| g.checked_mul(3)),
            max.checked_div_euclid(4)
                .and_then(|g| g.checked_add(1))
                .and_then(|g| g.checked_mul(3)),
        ),
        (None, bits) => {
            let per_byte = i128::from(8 / bits.max(1));
            (
                min.checked_div_euclid(per_byte),
                max.checked_div_euclid(per_byte).and_then(|m| m.checked_add(1)),
            )
        }
    };
    let (lowest_byte, end_byte) = lowest_byte.zip(end_byte).ok_or_else(too_large)?;
    let base = i128::from(byte_offset);
    if base + lowest_byte < 0 {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::new("byte_offset"),
                offset: d.offsets().byte_offset,
                rule: rule::STRIDED,
            },
            value: byte_offset,
            expected: "large enough that every element lies at or after byte 0",
        });
    }
    let bytes = base
        .checked_add(end_byte)
        .and_then(|b| u64::try_from(b).ok())
        .ok_or_else(too_large)?;
    // Elements from the buffer's first element (at byte `origin.phase`)
    // to the highest one reached. With every element at or after byte 0,
    // every position `origin.elements + offset` is at least 0.
    let len = i128::from(origin.elements)
        .checked_add(max)
        .and_then(|m| m.checked_add(1))
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or(u64::MAX);
    Ok((len, bytes))
}

/// Lowest and highest linear offsets reached by `sum(i_k * stride_k)` over
/// the shape (non-empty), in `i128` so no product can overflow.
pub(crate) fn offset_range(shape: &[u64], strides: impl Iterator<Item = i64>) -> Option<(i128, i128)> {
    let mut min = 0i128;
    let mut max = 0i128;
    for (&n, s) in shape.iter().zip(strides) {
        let reach = i128::from(s).checked_mul(i128::from(n) - 1)?;
        if reach < 0 {
            min = min.checked_add(reach)?;
        } else {
            max = max.checked_add(reach)?;
        }
    }
    Some((min, max))
}

/// `sum(index[k] * stride[k])` in `i128` (no overflow for u64 × i64 terms
/// summed over at most 64 dimensions).
pub(crate) fn dot(index: &[u64], strides: impl Iterator<Item = i128>) -> i128 {
    index.iter().zip(strides).map(|(&i, s)| i128::from(i) * s).sum()
}
