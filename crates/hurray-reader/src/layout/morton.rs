//! Morton (Z-order) tensors (`layouts/morton.md`, layout tag `0x05`): an
//! element's position interleaves the bits of its coordinates. The
//! buffer's size and every element's address.

use zerocopy::little_endian::U32;

use crate::cursor::to_u64;
use crate::descriptor::Descriptor;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::layout::fields::LayoutFields;
use crate::layout::plan::{count, overflow, Plan};
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::layout::storage::dense_plan;
use crate::raw;

pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule::NOT_SCALAR,
    buffers: BufferCount::DENSE,
    no_shard: None,
    statistics: None,
    plans,
};

/// One data buffer of `2^sum(morton_bits)` elements.
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Morton { morton_bits } = d.layout_fields() else {
        return Ok(Vec::new());
    };
    Ok(vec![dense_plan(d, |s| {
        let n = morton_elements(d, s.shape, morton_bits)?;
        s.stored(d, n, "Morton buffer size", rule::MORTON_SIZE)
    })?])
}

/// Elements a Morton buffer holds: `2^sum(morton_bits)`; each dimension must
/// fit its bits (`layouts/morton.md`).
pub(crate) fn morton_elements(d: &Descriptor<'_>, shape: &[u64], bits: &[U32]) -> Result<u64> {
    let o = d.offsets().layout_fields;
    let invalid = |k: usize, value: u64, expected: &'static str| Error::Invalid {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::at("morton_bits", to_u64(k)),
            offset: o + 4 * to_u64(k),
            rule: rule::MORTON,
        },
        value,
        expected,
    };
    let mut total: u32 = 0;
    for (k, (&n, b)) in shape.iter().zip(bits).enumerate() {
        let b = b.get();
        if b == 0 {
            return Err(invalid(k, 0, "greater than 0"));
        }
        if b < 64 && n > 1u64 << b {
            return Err(invalid(k, u64::from(b), "bits with shape[k] <= 2^morton_bits[k]"));
        }
        total = total.saturating_add(b);
    }
    if total >= 64 {
        return Err(overflow(
            d,
            Field::new("morton_bits"),
            o,
            "2^sum(morton_bits)",
            rule::MORTON_SIZE,
        ));
    }
    // With unequal bits the round-robin interleaving (§ Morton Index
    // Computation) places bit b of dimension k at b × rank + k, which can
    // lie past the 2^sum(morton_bits) elements § Buffer Size provides: such
    // a file cannot hold its elements, and is refused here rather than at
    // the first lookup. (Codes only grow with each coordinate, so the
    // highest bit of shape[k] - 1 decides.)
    if count(shape) != Some(0) {
        let rank = to_u64(shape.len());
        for (k, &n) in shape.iter().enumerate() {
            let Some(top) = n.checked_sub(1).and_then(|m| m.checked_ilog2()) else {
                continue;
            };
            let position = u64::from(top).saturating_mul(rank).saturating_add(to_u64(k));
            if position >= u64::from(total) {
                return Err(Error::Invalid {
                    at: Location {
                        scope: Scope::tensor(d.name),
                        field: Field::at("morton_bits", to_u64(k)),
                        offset: o + 4 * to_u64(k),
                        rule: rule::MORTON_SIZE,
                    },
                    value: bits.get(k).map_or(0, |b| u64::from(b.get())),
                    expected: "bits whose interleaved codes stay below 2^sum(morton_bits) (bit b of dimension k lands at b x rank + k)",
                });
            }
        }
    }
    Ok(1u64 << total)
}

/// `layouts/morton.md` § Morton Index Computation.
pub(crate) fn morton_code(index: &[u64], bits: &[U32]) -> u64 {
    let rank = to_u64(index.len());
    let max_bits = bits.iter().map(|b| b.get()).max().unwrap_or(0);
    let mut code = 0u64;
    for b in 0..u64::from(max_bits.min(64)) {
        for (d, (&i, bd)) in index.iter().zip(bits).enumerate() {
            let shift = b.saturating_mul(rank).saturating_add(to_u64(d));
            if b < u64::from(bd.get()) && shift < 64 && b < 64 {
                code |= ((i >> b) & 1) << shift;
            }
        }
    }
    code
}
