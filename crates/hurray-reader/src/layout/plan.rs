//! What a layout requires of one buffer ([`Plan`]), and the helpers the
//! layouts' size rules share (`layouts/*.md` § Buffer Table, § Buffer
//! Size). Every size is computed with checked arithmetic; an overflow is an
//! error naming the field whose value causes it.

use crate::buffer::BufferRole;
use crate::descriptor::Descriptor;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::layout::LayoutFields;

/// What the layout expects one buffer to be.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) role: BufferRole,
    pub(crate) element_type: Option<ElementType>,
    /// Elements the buffer holds.
    pub(crate) len: u64,
    /// Required `byte_size`: exact in strict mode, a minimum in permissive.
    pub(crate) bytes: u64,
    /// Byte at which element 0 starts ([`crate::Buffer::element_start`]).
    pub(crate) element_start: u64,
    pub(crate) rule: &'static str,
}

impl Plan {
    pub(crate) fn unknown() -> Self {
        Plan {
            role: BufferRole::Unknown,
            element_type: None,
            len: 0,
            bytes: 0,
            element_start: 0,
            rule: "",
        }
    }

    pub(crate) fn new(
        role: BufferRole,
        element_type: Option<ElementType>,
        len: u64,
        bytes: u64,
        rule: &'static str,
    ) -> Self {
        Plan {
            role,
            element_type,
            len,
            bytes,
            element_start: 0,
            rule,
        }
    }
}

pub(crate) fn overflow(d: &Descriptor<'_>, field: Field, offset: u64, what: &'static str, rule: &'static str) -> Error {
    Error::Overflow {
        at: Location {
            scope: Scope::tensor(d.name),
            field,
            offset,
            rule,
        },
        what,
    }
}

/// The `values` buffer of a sparse layout: `nnz` elements of the tensor's type.
pub(crate) fn values_plan(d: &Descriptor<'_>, nnz: u64, rule: &'static str) -> Result<Plan> {
    let Some(et) = d.element_type else {
        return Ok(Plan::new(BufferRole::Values, None, nnz, 0, rule));
    };
    let bytes = storage(et, nnz).ok_or_else(|| {
        overflow(
            d,
            Field::new("nnz"),
            d.offsets().layout_fields,
            "nnz x element width (values byte size)",
            rule,
        )
    })?;
    Ok(Plan::new(BufferRole::Values, Some(et), nnz, bytes, rule))
}

/// The diagnosis of a sparse tensor (CSC, CSR, COO) that fails the strict
/// size check while its `values` and index buffers agree with each other on
/// an entry count other than the descriptor's `nnz`: then `nnz` is the
/// field that is wrong (§ Buffer Size derives both sizes from it, and it is
/// authoritative). `sizes` are the `byte_size`s of the first two buffers;
/// `None` when they do not point at `nnz`, for packed value types and for
/// other layouts.
pub(crate) fn nnz_disagreement(d: &Descriptor<'_>, sizes: [u64; 2]) -> Option<Error> {
    let (nnz, per_entry, buffers, rule) = match d.layout_fields() {
        LayoutFields::Csc(f) => (f.nnz.get(), 1, "values and row_indices", rule::CSC_SIZE),
        LayoutFields::Csr(f) => (f.nnz.get(), 1, "values and col_indices", rule::CSR_SIZE),
        LayoutFields::Coo(f) => (f.nnz.get(), u64::from(d.rank()), "values and indices", rule::COO_SIZE),
        _ => return None,
    };
    let width = d.element_type?.byte_width()?;
    let index_width = per_entry.checked_mul(8).filter(|&w| w > 0)?;
    let [values, indices] = sizes;
    let held = values / width;
    let agree = values % width == 0 && indices % index_width == 0 && indices / index_width == held;
    (agree && held != nnz).then(|| Error::NnzMismatch {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::new("nnz"),
            offset: d.offsets().layout_fields,
            rule,
        },
        nnz,
        held,
        buffers,
    })
}

/// A `uint64` index array of `len` elements.
pub(crate) fn u64_plan(
    d: &Descriptor<'_>,
    role: BufferRole,
    len: u64,
    field: Field,
    offset: u64,
    rule: &'static str,
) -> Result<Plan> {
    let what = match role {
        BufferRole::ColPtr => "(ncols + 1) x 8 (col_ptr byte size)",
        BufferRole::RowPtr => "(nrows + 1) x 8 (row_ptr byte size)",
        BufferRole::RowIndices => "nnz x 8 (row_indices byte size)",
        BufferRole::ColIndices => "nnz x 8 (col_indices byte size)",
        BufferRole::Indices => "nnz x rank x 8 (indices byte size)",
        _ => "element count x 8 (index buffer byte size)",
    };
    let bytes = len
        .checked_mul(8)
        .ok_or_else(|| overflow(d, field, offset, what, rule))?;
    Ok(Plan::new(role, Some(ElementType::Uint64), len, bytes, rule))
}

/// A buffer's position and bytes in the file.
pub(crate) struct Placed<'data> {
    pub(crate) offset: u64,
    pub(crate) bytes: &'data [u8],
}

/// Product of the dimensions; 0 as soon as any dimension is 0 (so
/// `[2^63, 4, 0]` is empty, not an overflow); `None` on overflow.
pub(crate) fn count(shape: &[u64]) -> Option<u64> {
    if shape.contains(&0) {
        return Some(0);
    }
    shape.iter().try_fold(1u64, |acc, &n| acc.checked_mul(n))
}

pub(crate) fn storage(t: ElementType, n: u64) -> Option<u64> {
    t.storage_bytes(n)
}
