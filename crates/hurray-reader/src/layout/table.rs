//! The layouts the reader knows, by tag: the one place that lists them.
//! Adding a layout means a module under `layout/` with its `SPEC`, a
//! variant of [`Layout`], and a line here.

use crate::layout::fields::Layout;
use crate::layout::spec::LayoutSpec;
use crate::layout::{
    block_paged, column_major, composite, coo, csc, csf, csr, hilbert, morton, row_major, strided, tiled,
};

/// The rules of `layout`; `None` for an extension or unknown layout,
/// whose buffers the reader cannot interpret.
pub(crate) fn spec(layout: Layout) -> Option<&'static LayoutSpec> {
    Some(match layout {
        Layout::RowMajor => &row_major::SPEC,
        Layout::ColMajor => &column_major::SPEC,
        Layout::Strided => &strided::SPEC,
        Layout::Tiled => &tiled::SPEC,
        Layout::Morton => &morton::SPEC,
        Layout::Coo => &coo::SPEC,
        Layout::Csr => &csr::SPEC,
        Layout::Csc => &csc::SPEC,
        Layout::Csf => &csf::SPEC,
        Layout::BlockPaged => &block_paged::SPEC,
        Layout::Composite => &composite::SPEC,
        Layout::Hilbert => &hilbert::SPEC,
        Layout::Extension(_) | Layout::Unknown(_) => return None,
        // A tag `hurray_format::Layout` (non-exhaustive) names that has no
        // module here yet: its buffers cannot be interpreted either.
        _ => return None,
    })
}
