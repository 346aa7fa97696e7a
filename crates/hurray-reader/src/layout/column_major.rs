//! Column-major tensors (`layouts/column-major.md`, layout tag `0x02`): the
//! first index varies fastest.

use crate::descriptor::Descriptor;
use crate::error::Result;
use crate::layout::plan::Plan;
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

/// One data buffer holding every element of the shape.
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    Ok(vec![dense_plan(d, |s| s.contiguous(d))?])
}

/// The column-major step of each dimension, in elements
/// (`memory-layout.md` § Element Address Computation).
pub(crate) fn strides(shape: &[u64]) -> impl Iterator<Item = i128> + '_ {
    (0..shape.len()).map(|k| shape.iter().take(k).map(|&n| i128::from(n)).product())
}
