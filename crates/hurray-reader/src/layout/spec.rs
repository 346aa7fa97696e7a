//! What one layout file of the spec (`layouts/*.md`) requires of a
//! descriptor before any buffer is read: a [`LayoutSpec`]. Each layout
//! module declares its own (`csc::SPEC`, `tiled::SPEC`, ...);
//! [`table`](super::table) finds it from the layout tag.

use crate::descriptor::Descriptor;
use crate::error::Result;
use crate::layout::plan::Plan;
use crate::raw;

/// A layout's descriptor rules, as data.
pub(crate) struct LayoutSpec {
    /// The ranks the layout allows.
    pub(crate) rank: RankRule,
    /// How many buffers the layout itself uses (the quantization scheme's
    /// come after them).
    pub(crate) buffers: BufferCount,
    /// The rule a `HAS_SHARD` flag breaks, for a layout that cannot be
    /// sharded; `None` when sharding is allowed.
    pub(crate) no_shard: Option<&'static str>,
    /// The rule a statistics `nnz` other than the descriptor's breaks (the
    /// sparse layouts, which have an `nnz`).
    pub(crate) statistics: Option<&'static str>,
    /// Checks the layout-specific fields and returns, per buffer of the
    /// layout, what it must hold (role, element type, length, size).
    pub(crate) plans: fn(&Descriptor<'_>, &[raw::BufferHandle]) -> Result<Vec<Plan>>,
}

/// Which ranks a layout allows, as an error states it.
pub(crate) struct RankRule {
    pub(crate) allows: fn(u32) -> bool,
    /// The allowed ranks, for [`Error::RankNotAllowed`](crate::Error::RankNotAllowed).
    pub(crate) expected: &'static str,
    pub(crate) rule: &'static str,
}

impl RankRule {
    /// Every rank, 0 (a scalar) included.
    pub(crate) const ANY: RankRule = RankRule {
        allows: |_| true,
        expected: "",
        rule: "",
    };
    /// Every rank but 0: only row-major stores scalars.
    pub(crate) const NOT_SCALAR: RankRule = RankRule {
        allows: |rank| rank >= 1,
        expected: "at least 1 (scalars are row-major only)",
        rule: crate::error::rule::SCALAR,
    };
}

/// How many buffers a layout uses, as an error states it.
pub(crate) struct BufferCount {
    /// The count for a rank; `None` when it overflows.
    pub(crate) count: fn(u32) -> Option<u64>,
    /// The count and what the buffers are, e.g. `3 (values, row_indices, col_ptr)`.
    pub(crate) expected: &'static str,
    pub(crate) rule: &'static str,
}

impl BufferCount {
    /// The one data buffer of a dense layout.
    pub(crate) const DENSE: BufferCount = BufferCount {
        count: |_| Some(1),
        expected: "1 for a dense layout",
        rule: crate::error::rule::BUFFER_TABLE,
    };
}
