//! Hilbert-curve tensors (`layouts/hilbert.md`, layout tag `0x40`): an
//! element's position along the curve through a `2^order` hypercube. The
//! buffer's size and every element's address.

use crate::cursor::to_u64;
use crate::descriptor::Descriptor;
use crate::error::{rule, Error, Field, Result, Scope};
use crate::layout::plan::overflow;
use crate::raw;

/// Elements a Hilbert buffer holds: `2^(rank × order)`, every dimension
/// `2^order` (`layouts/hilbert.md` § Validity Constraints).
pub(crate) fn hilbert_elements(d: &Descriptor<'_>, shape: &[u64], h: &raw::HilbertFields) -> Result<u64> {
    let o = d.offsets().layout_fields;
    let scope = || Scope::tensor(d.name);
    let order = h.hilbert_order.get();
    let rank = h.hilbert_rank.get();
    if order == 0 {
        return Err(Error::Invalid {
            scope: scope(),
            field: Field::new("hilbert_order"),
            offset: o,
            value: 0,
            expected: "greater than 0",
            rule: rule::HILBERT,
        });
    }
    if rank != d.rank() || rank < 2 {
        return Err(Error::Invalid {
            scope: scope(),
            field: Field::new("hilbert_rank"),
            offset: o + 4,
            value: u64::from(rank),
            expected: "equal to rank, at least 2",
            rule: rule::HILBERT,
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
            scope: scope(),
            field: Field::at("shape", to_u64(k)),
            offset: d.shape_offset(k),
            value: shape.get(k).copied().unwrap_or(0),
            expected: "2^hilbert_order in every dimension",
            rule: rule::HILBERT,
        });
    }
    Ok(1u64 << total_bits)
}
