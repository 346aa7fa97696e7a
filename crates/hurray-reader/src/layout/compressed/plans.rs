//! The buffer table and sizes CSC and CSR share (`layouts/csc.md`,
//! `layouts/csr.md` § Buffer Table, § Buffer Size): values, an index per
//! stored element, a pointer per outer slice plus one.

use crate::buffer::BufferRole;
use crate::cursor::to_u64;
use crate::descriptor::Descriptor;
use crate::error::{Field, Result, Scope};
use crate::file::reserved_zero;
use crate::layout::plan::{overflow, u64_plan, values_plan, Plan};
use crate::raw;

/// CSR and CSC share their structure; only names and the pointer axis
/// differ (each layout module gives its own).
pub(crate) struct Orientation {
    pub(crate) index_role: BufferRole,
    pub(crate) ptr_role: BufferRole,
    /// 1 for CSC (`ncols = shape[1]`), 0 for CSR (`nrows = shape[0]`).
    pub(crate) ptr_axis: usize,
    pub(crate) fields_rule: &'static str,
    pub(crate) size_rule: &'static str,
}

pub(crate) fn compressed_plans(d: &Descriptor<'_>, f: &raw::CompressedFields, c: Orientation) -> Result<Vec<Plan>> {
    let fields_offset = d.offsets().layout_fields;
    reserved_zero(
        &f.reserved,
        Field::new("_reserved"),
        fields_offset + 8,
        c.fields_rule,
        Scope::tensor(d.name),
    )?;
    let shape = d.static_shape()?;
    let nnz = f.nnz.get();
    let ptr_dim = shape.get(c.ptr_axis).copied().unwrap_or(0);
    let ptr_len = ptr_dim.checked_add(1).ok_or_else(|| {
        overflow(
            d,
            Field::at("shape", to_u64(c.ptr_axis)),
            d.shape_offset(c.ptr_axis),
            if c.ptr_axis == 1 {
                "ncols + 1 (col_ptr length)"
            } else {
                "nrows + 1 (row_ptr length)"
            },
            c.size_rule,
        )
    })?;
    Ok(vec![
        values_plan(d, nnz, c.size_rule)?,
        u64_plan(d, c.index_role, nnz, Field::new("nnz"), fields_offset, c.size_rule)?,
        u64_plan(
            d,
            c.ptr_role,
            ptr_len,
            Field::at("shape", to_u64(c.ptr_axis)),
            d.shape_offset(c.ptr_axis),
            c.size_rule,
        )?,
    ])
}
