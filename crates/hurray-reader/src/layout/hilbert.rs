//! Hilbert-curve tensors (`layouts/hilbert.md`, layout tag `0x40`): an
//! element's position along the curve through a `2^order` hypercube. The
//! buffer's size and every element's address.

use crate::cursor::to_u64;
use crate::descriptor::Descriptor;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::layout::fields::LayoutFields;
use crate::layout::plan::{overflow, Plan};
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::layout::storage::dense_plan;
use crate::raw;

pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule {
        allows: |rank| rank >= 2,
        expected: "at least 2",
        rule: rule::HILBERT,
    },
    buffers: BufferCount::DENSE,
    no_shard: None,
    statistics: None,
    plans,
};

/// One data buffer of `2^(rank × order)` elements.
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Hilbert(h) = d.layout_fields() else {
        return Ok(Vec::new());
    };
    Ok(vec![dense_plan(d, |s| {
        let n = hilbert_elements(d, s.shape, h)?;
        s.stored(d, n, "Hilbert buffer size", rule::HILBERT_SIZE)
    })?])
}

/// Elements a Hilbert buffer holds: `2^(rank × order)`, every dimension
/// `2^order` (`layouts/hilbert.md` § Validity Constraints).
pub(crate) fn hilbert_elements(d: &Descriptor<'_>, shape: &[u64], h: &raw::HilbertFields) -> Result<u64> {
    let o = d.offsets().layout_fields;
    let scope = || Scope::tensor(d.name);
    let order = h.hilbert_order.get();
    let rank = h.hilbert_rank.get();
    if order == 0 {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("hilbert_order"),
                offset: o,
                rule: rule::HILBERT,
            },
            value: 0,
            expected: "greater than 0",
        });
    }
    if rank != d.rank() || rank < 2 {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("hilbert_rank"),
                offset: o + 4,
                rule: rule::HILBERT,
            },
            value: u64::from(rank),
            expected: "equal to rank, at least 2",
        });
    }
    let total_bits = order.checked_mul(rank).filter(|&b| b < 64);
    let (Some(total_bits), true) = (total_bits, order < 64) else {
        return Err(overflow(
            d,
            Field::new("hilbert_order"),
            o,
            "2^(rank x order)",
            rule::HILBERT,
        ));
    };
    let side = 1u64 << order;
    if let Some(k) = shape.iter().position(|&n| n != side) {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::at("shape", to_u64(k)),
                offset: d.shape_offset(k),
                rule: rule::HILBERT,
            },
            value: shape.get(k).copied().unwrap_or(0),
            expected: "2^hilbert_order in every dimension",
        });
    }
    Ok(1u64 << total_bits)
}

/// `layouts/hilbert.md` § Normative Index Mapping, `CoordsToHilbert`.
pub(crate) fn hilbert_index(coords: &[u64], order: u32) -> u64 {
    let r = coords.len();
    let mut x: Vec<u64> = coords.to_vec();
    if order == 0 || r == 0 || order > 63 {
        return 0;
    }
    let m = 1u64 << (order - 1);
    let mut q = m;
    while q > 1 {
        let p = q - 1;
        for i in 0..r {
            let xi = x.get(i).copied().unwrap_or(0);
            let x0 = x.first().copied().unwrap_or(0);
            if xi & q != 0 {
                if let Some(v) = x.first_mut() {
                    *v ^= p;
                }
            } else {
                let t = (x0 ^ xi) & p;
                if let Some(v) = x.first_mut() {
                    *v ^= t;
                }
                if let Some(v) = x.get_mut(i) {
                    *v ^= t;
                }
            }
        }
        q >>= 1;
    }
    for i in 1..r {
        let prev = x.get(i - 1).copied().unwrap_or(0);
        if let Some(v) = x.get_mut(i) {
            *v ^= prev;
        }
    }
    let mut t = 0u64;
    let last = x.last().copied().unwrap_or(0);
    let mut q = m;
    while q > 1 {
        if last & q != 0 {
            t ^= q - 1;
        }
        q >>= 1;
    }
    for v in &mut x {
        *v ^= t;
    }
    let mut h = 0u64;
    let r64 = to_u64(r);
    for b in 0..u64::from(order) {
        for (d, &v) in x.iter().enumerate() {
            let shift = b * r64 + (r64 - 1 - to_u64(d));
            if shift < 64 {
                h |= ((v >> b) & 1) << shift;
            }
        }
    }
    h
}
