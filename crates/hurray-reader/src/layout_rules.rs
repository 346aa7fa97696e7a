//! What each layout requires of its descriptor fields and buffers
//! (`layouts/*.md` § Buffer Table, § Buffer Size, § Validity Constraints).
//!
//! Every size is computed with checked arithmetic; an overflow is an error
//! naming the field whose value causes it.

use zerocopy::little_endian::{I64, U32};

use crate::buffer::BufferRole;
use crate::cursor::to_u64;
use crate::descriptor::DYNAMIC;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Number, Result, Scope};
use crate::file::reserved_zero;
use crate::layout::{LayoutFields, TiledLevel};
use crate::raw;
use crate::tensor::{count, storage, Tensor};
use crate::view::dense::Origin;

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

    fn new(role: BufferRole, element_type: Option<ElementType>, len: u64, bytes: u64, rule: &'static str) -> Self {
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

fn overflow(t: &Tensor<'_>, field: Field, offset: u64, what: &'static str, rule: &'static str) -> Error {
    Error::Overflow {
        tensor: t.name().into(),
        field,
        offset,
        what,
        rule,
    }
}

/// The `values` buffer of a sparse layout: `nnz` elements of the tensor's type.
fn values_plan(t: &Tensor<'_>, nnz: u64, rule: &'static str) -> Result<Plan> {
    let Some(et) = t.element_type() else {
        return Ok(Plan::new(BufferRole::Values, None, nnz, 0, rule));
    };
    let bytes = storage(et, nnz).ok_or_else(|| {
        overflow(
            t,
            Field::new("nnz"),
            t.descriptor().offsets().layout_fields,
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
pub(crate) fn nnz_disagreement(t: &Tensor<'_>, sizes: [u64; 2]) -> Option<Error> {
    let d = t.descriptor();
    let (nnz, per_entry, buffers, rule) = match d.layout_fields() {
        LayoutFields::Csc(f) => (f.nnz.get(), 1, "values and row_indices", rule::CSC_SIZE),
        LayoutFields::Csr(f) => (f.nnz.get(), 1, "values and col_indices", rule::CSR_SIZE),
        LayoutFields::Coo(f) => (f.nnz.get(), u64::from(t.rank()), "values and indices", rule::COO_SIZE),
        _ => return None,
    };
    let width = t.element_type()?.byte_width()?;
    let index_width = per_entry.checked_mul(8).filter(|&w| w > 0)?;
    let [values, indices] = sizes;
    let held = values / width;
    let agree = values % width == 0 && indices % index_width == 0 && indices / index_width == held;
    (agree && held != nnz).then(|| Error::NnzMismatch {
        tensor: t.name().into(),
        offset: d.offsets().layout_fields,
        nnz,
        held,
        buffers,
        rule,
    })
}

/// A `uint64` index array of `len` elements.
fn u64_plan(t: &Tensor<'_>, role: BufferRole, len: u64, field: Field, offset: u64, rule: &'static str) -> Result<Plan> {
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
        .ok_or_else(|| overflow(t, field, offset, what, rule))?;
    Ok(Plan::new(role, Some(ElementType::Uint64), len, bytes, rule))
}

/// CSR and CSC share their structure; only names and the pointer axis differ.
struct Compressed {
    index_role: BufferRole,
    ptr_role: BufferRole,
    /// 1 for CSC (`ncols = shape[1]`), 0 for CSR (`nrows = shape[0]`).
    ptr_axis: usize,
    fields_rule: &'static str,
    size_rule: &'static str,
}

fn compressed_plans(t: &Tensor<'_>, f: &raw::CompressedFields, c: Compressed) -> Result<Vec<Plan>> {
    let d = t.descriptor();
    let fields_offset = d.offsets().layout_fields;
    reserved_zero(
        &f.reserved,
        Field::new("_reserved"),
        fields_offset + 8,
        c.fields_rule,
        Scope::tensor(t.name()),
    )?;
    let shape = t.static_shape()?;
    let nnz = f.nnz.get();
    let ptr_dim = shape.get(c.ptr_axis).copied().unwrap_or(0);
    let ptr_len = ptr_dim.checked_add(1).ok_or_else(|| {
        overflow(
            t,
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
        values_plan(t, nnz, c.size_rule)?,
        u64_plan(t, c.index_role, nnz, Field::new("nnz"), fields_offset, c.size_rule)?,
        u64_plan(
            t,
            c.ptr_role,
            ptr_len,
            Field::at("shape", to_u64(c.ptr_axis)),
            d.shape_offset(c.ptr_axis),
            c.size_rule,
        )?,
    ])
}

/// CSC (`layouts/csc.md`): `values` (nnz), `row_indices` (nnz u64),
/// `col_ptr` (ncols + 1 u64); reserved bytes zero.
pub(crate) fn csc_plans(t: &Tensor<'_>) -> Result<Vec<Plan>> {
    let LayoutFields::Csc(f) = t.descriptor().layout_fields() else {
        return Ok(Vec::new());
    };
    compressed_plans(
        t,
        f,
        Compressed {
            index_role: BufferRole::RowIndices,
            ptr_role: BufferRole::ColPtr,
            ptr_axis: 1,
            fields_rule: rule::CSC_FIELDS,
            size_rule: rule::CSC_SIZE,
        },
    )
}

/// CSR (`layouts/csr.md`): `values`, `col_indices`, `row_ptr` (nrows + 1).
pub(crate) fn csr_plans(t: &Tensor<'_>) -> Result<Vec<Plan>> {
    let LayoutFields::Csr(f) = t.descriptor().layout_fields() else {
        return Ok(Vec::new());
    };
    compressed_plans(
        t,
        f,
        Compressed {
            index_role: BufferRole::ColIndices,
            ptr_role: BufferRole::RowPtr,
            ptr_axis: 0,
            fields_rule: rule::CSR_FIELDS,
            size_rule: rule::CSR_SIZE,
        },
    )
}

/// COO (`layouts/coo.md`): `values` (nnz), `indices` (nnz × rank u64).
pub(crate) fn coo_plans(t: &Tensor<'_>) -> Result<Vec<Plan>> {
    let d = t.descriptor();
    let LayoutFields::Coo(f) = d.layout_fields() else {
        return Ok(Vec::new());
    };
    let fields_offset = d.offsets().layout_fields;
    let scope = || Scope::tensor(t.name());
    if f.is_sorted > 1 {
        return Err(Error::Invalid {
            scope: scope(),
            field: Field::new("is_sorted"),
            offset: fields_offset + 8,
            value: u64::from(f.is_sorted),
            expected: "0x00 or 0x01",
            rule: rule::COO_FIELDS,
        });
    }
    reserved_zero(
        &f.reserved,
        Field::new("_reserved"),
        fields_offset + 9,
        rule::COO_FIELDS,
        scope(),
    )?;
    t.static_shape()?;
    let nnz = f.nnz.get();
    let len = nnz.checked_mul(u64::from(t.rank())).ok_or_else(|| {
        overflow(
            t,
            Field::new("nnz"),
            fields_offset,
            "nnz x rank (indices length)",
            rule::COO_SIZE,
        )
    })?;
    Ok(vec![
        values_plan(t, nnz, rule::COO_SIZE)?,
        u64_plan(
            t,
            BufferRole::Indices,
            len,
            Field::new("nnz"),
            fields_offset,
            rule::COO_SIZE,
        )?,
    ])
}

/// CSF (`layouts/csf.md`): `values`, then a `pos_L`/`crd_L` pair per level.
/// Level sizes `n_L` come from the `crd_L` sizes; `pos_0` has 2 entries,
/// `pos_L` has `n_{L-1} + 1`, and the leaf level holds `nnz`.
pub(crate) fn csf_plans(t: &Tensor<'_>, handles: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let d = t.descriptor();
    let LayoutFields::Csf {
        nnz,
        mode_order,
        reserved,
    } = d.layout_fields()
    else {
        return Ok(Vec::new());
    };
    let scope = || Scope::tensor(t.name());
    let fields_offset = d.offsets().layout_fields;
    let rank = t.rank();
    check_permutation(t, mode_order, fields_offset + 8)?;
    let reserved_offset = fields_offset + 8 + 4 * u64::from(rank);
    reserved_zero(
        reserved.as_slice(),
        Field::new("_reserved"),
        reserved_offset,
        rule::CSF_FIELDS,
        scope(),
    )?;
    t.static_shape()?;
    let size_rule = "layouts/csf.md § Buffer Size";
    let mut plans = vec![values_plan(t, *nnz, size_rule)?];
    let mut parents: u64 = 1; // n_{-1}: the virtual root
    for level in 0..rank {
        let level_u8 = u8::try_from(level).unwrap_or(u8::MAX);
        let pos_len = parents.saturating_add(1);
        plans.push(u64_plan(
            t,
            BufferRole::Pos(level_u8),
            pos_len,
            Field::new("nnz"),
            fields_offset,
            size_rule,
        )?);
        // n_L: the leaf level stores nnz; other levels are sized by crd_L.
        let crd_index = usize::try_from(level)
            .ok()
            .and_then(|l| l.checked_mul(2))
            .and_then(|l| l.checked_add(2));
        let n_level = if level + 1 == rank {
            *nnz
        } else {
            crd_index
                .and_then(|i| handles.get(i))
                .map_or(0, |h| h.byte_size.get() / 8)
        };
        plans.push(u64_plan(
            t,
            BufferRole::Crd(level_u8),
            n_level,
            Field::new("nnz"),
            fields_offset,
            size_rule,
        )?);
        parents = n_level;
    }
    Ok(plans)
}

fn check_permutation(t: &Tensor<'_>, mode_order: &[U32], offset: u64) -> Result<()> {
    let rank = mode_order.len();
    let mut seen = [false; 64];
    for (i, m) in mode_order.iter().enumerate() {
        let v = m.get();
        let slot = usize::try_from(v)
            .ok()
            .filter(|&v| v < rank)
            .and_then(|v| seen.get_mut(v));
        match slot {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::Invalid {
                    scope: Scope::tensor(t.name()),
                    field: Field::at("mode_order", to_u64(i)),
                    offset: offset + 4 * to_u64(i),
                    value: u64::from(v),
                    expected: "a permutation of 0..rank-1",
                    rule: rule::CSF_MODE_ORDER,
                })
            }
        }
    }
    Ok(())
}

/// Block-paged (`layouts/block-paged.md`): `page_pool`
/// (`num_pages × page_size × num_heads × head_dim` elements), `block_table`
/// and `seq_ptr` (`num_seqs + 1`) of the index type. The block table length
/// is `seq_ptr[num_seqs]`, read here (one element).
pub(crate) fn block_paged_plans(t: &Tensor<'_>, handles: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let d = t.descriptor();
    let LayoutFields::BlockPaged(f) = d.layout_fields() else {
        return Ok(Vec::new());
    };
    let scope = || Scope::tensor(t.name());
    let o = d.offsets().layout_fields;
    let invalid = |field: &'static str, at: u64, value: u64, expected: &'static str| Error::Invalid {
        scope: scope(),
        field: Field::new(field),
        offset: o + at,
        value,
        expected,
        rule: rule::BLOCK_PAGED,
    };
    if f.page_size.get() == 0 {
        return Err(invalid("page_size", 0, 0, "at least 1"));
    }
    if f.paged_axis.get() != 0 {
        return Err(invalid("paged_axis", 12, u64::from(f.paged_axis.get()), "0"));
    }
    if f.kv_role > 2 {
        return Err(invalid("kv_role", 20, u64::from(f.kv_role), "0x00, 0x01 or 0x02"));
    }
    if f.block_table_index_type > 1 {
        return Err(invalid(
            "block_table_index_type",
            25,
            u64::from(f.block_table_index_type),
            "0x00 (uint32) or 0x01 (uint64)",
        ));
    }
    reserved_zero(&f.reserved, Field::new("_reserved"), o + 26, rule::BLOCK_PAGED, scope())?;
    let shape = t.static_shape()?;
    let size_rule = "layouts/block-paged.md § Storage Invariants (4)";
    let over = |what| overflow(t, Field::new("num_pages"), o + 4, what, size_rule);
    let pool_len = [
        f.num_pages.get(),
        u64::from(f.page_size.get()),
        shape.get(1).copied().unwrap_or(0),
        shape.get(2).copied().unwrap_or(0),
    ]
    .iter()
    .try_fold(1u64, |acc, &n| acc.checked_mul(n))
    .ok_or_else(|| over("num_pages x page_size x num_heads x head_dim"))?;
    let et = t.element_type();
    let pool_bytes = match et {
        Some(et) => storage(et, pool_len).ok_or_else(|| over("page_pool byte size"))?,
        None => 0,
    };
    let (index_type, width) = block_table_index(f);
    let seq_len = u64::from(f.num_seqs.get()) + 1;
    // The block table holds seq_ptr[num_seqs] entries, a value in the data
    // region: until the buffers are placed (block_table_plan) it is taken
    // at its declared size.
    let table_bytes = handles.get(1).map_or(0, |h| h.byte_size.get());
    let pages = table_bytes / width;
    Ok(vec![
        Plan::new(BufferRole::PagePool, et, pool_len, pool_bytes, size_rule),
        Plan::new(
            BufferRole::BlockTable,
            Some(index_type),
            pages,
            table_bytes,
            BLOCK_TABLE,
        ),
        Plan::new(
            BufferRole::SeqPtr,
            Some(index_type),
            seq_len,
            seq_len * width,
            "layouts/block-paged.md § Buffer Table",
        ),
    ])
}

/// `layouts/block-paged.md` § Buffer Table.
const BLOCK_TABLE: &str = "layouts/block-paged.md § Buffer Table";

/// The block table's element type and width in bytes.
fn block_table_index(f: &raw::BlockPagedFields) -> (ElementType, u64) {
    if f.block_table_index_type == 0 {
        (ElementType::Uint32, 4)
    } else {
        (ElementType::Uint64, 8)
    }
}

/// For a block-paged tensor whose buffers are placed (and sizes checked by
/// [`block_paged_plans`]): buffer 1, the block table, with the
/// `total_logical_pages = seq_ptr[num_seqs]` entries it must hold
/// (`layouts/block-paged.md` § Buffer Table). `None` for other layouts, or
/// when `seq_ptr` holds no such element (its size check failed first).
///
/// # Errors
/// [`Error::Overflow`] when that many entries do not fit in `u64` bytes.
pub(crate) fn block_table_plan(t: &Tensor<'_>, placed: &[crate::tensor::Placed<'_>]) -> Result<Option<(usize, Plan)>> {
    let LayoutFields::BlockPaged(f) = t.descriptor().layout_fields() else {
        return Ok(None);
    };
    let (index_type, width) = block_table_index(f);
    let last = u64::from(f.num_seqs.get());
    let Some(seq_ptr) = placed.get(2) else {
        return Ok(None);
    };
    let Some(crate::Value::UInt(pages)) = crate::value::decode(index_type, seq_ptr.bytes, last) else {
        return Ok(None);
    };
    let at = seq_ptr.offset.saturating_add(last.saturating_mul(width));
    let bytes = pages
        .checked_mul(width)
        .ok_or_else(|| overflow(t, Field::at("seq_ptr", last), at, "block_table byte size", BLOCK_TABLE))?;
    Ok(Some((
        1,
        Plan::new(BufferRole::BlockTable, Some(index_type), pages, bytes, BLOCK_TABLE),
    )))
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
    t: &Tensor<'_>,
    et: ElementType,
    origin: Origin,
    shape: &[u64],
    strides: &[I64],
) -> Result<(u64, u64)> {
    let d = t.descriptor();
    let byte_offset = d.byte_offset();
    if count(shape) == Some(0) {
        return Ok((0, byte_offset));
    }
    let too_large = || {
        overflow(
            t,
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
            scope: Scope::tensor(t.name()),
            field: Field::new("byte_offset"),
            offset: d.offsets().byte_offset,
            value: byte_offset,
            expected: "large enough that every element lies at or after byte 0",
            rule: rule::STRIDED,
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

/// Elements a tiled buffer holds (`layouts/tiled.md` § Boundary Padding):
/// whole tiles, `ceil(shape / tile)` per dimension, each tile laid out by the
/// next level when tiling recurses.
pub(crate) fn tiled_elements(t: &Tensor<'_>, shape: &[u64], levels: &[TiledLevel<'_>], depth: usize) -> Result<u64> {
    let Some(level) = levels.get(depth) else {
        return count(shape).ok_or_else(|| tiled_overflow(t));
    };
    let mut tiles = Vec::with_capacity(shape.len());
    let mut tile = Vec::with_capacity(shape.len());
    for (k, &n) in shape.iter().enumerate() {
        let size = level.tile_shape.get(k).map_or(0, |v| v.get());
        if size == 0 || size == DYNAMIC {
            return Err(Error::Invalid {
                scope: Scope::tensor(t.name()),
                field: Field::at("tile_shape", to_u64(k)),
                offset: level.offset + 8 * to_u64(k),
                value: size,
                expected: "greater than 0",
                rule: rule::TILED,
            });
        }
        tiles.push(n.div_ceil(size));
        tile.push(size);
    }
    let tile_elements = if level.inner_layout == 4 {
        tiled_elements(t, &tile, levels, depth + 1)?
    } else {
        count(&tile).ok_or_else(|| tiled_overflow(t))?
    };
    // Tiles do not overlap (`layouts/tiled.md` § Description): in-tile
    // strides keep every offset of a tile inside its own elements.
    if let (Some(strides), Some(_)) = (level.inner_strides, count(&tile).filter(|&n| n > 0)) {
        let (min, max) = offset_range(&tile, strides.iter().map(|s| s.get())).ok_or_else(|| tiled_overflow(t))?;
        if min < 0 || max >= i128::from(tile_elements) {
            let rank = to_u64(tile.len());
            let outer = if level.outer_strides.is_some() { 8 * rank } else { 0 };
            return Err(Error::Invalid {
                scope: Scope::tensor(t.name()),
                field: Field::new("inner_strides"),
                offset: level.offset.saturating_add(8 * rank + 4 + outer),
                value: u64::try_from(if min < 0 { min } else { max }).unwrap_or(0),
                expected: "in-tile strides whose offsets stay within the tile (0 to tile elements - 1)",
                rule: "layouts/tiled.md § Description",
            });
        }
    }
    let (slots, lowest) = grid_slots(level, &tiles).ok_or_else(|| tiled_overflow(t))?;
    if let (Some(strides), true) = (level.outer_strides, lowest < 0) {
        check_tiles_before(t, level, strides, depth, lowest, tile_elements)?;
    }
    slots.checked_mul(tile_elements).ok_or_else(|| tiled_overflow(t))
}

/// The tile slots a tiled level's tile grid (`grid`: tiles per dimension)
/// spans from slot 0, and its lowest slot (0, or below for negative
/// `outer_strides`): the tile count, or for a strided grid slot 0 to the
/// highest slot addressed (`layouts/tiled.md` § Additional Descriptor
/// Fields; gaps and shared slots included). `None` on overflow. The buffer
/// size ([`tiled_elements`]) and element addresses
/// ([`Addressing::position`](crate::Addressing::position)) both count tiles
/// this way.
pub(crate) fn grid_slots(level: &TiledLevel<'_>, grid: &[u64]) -> Option<(u64, i128)> {
    let tiles = count(grid)?;
    match level.outer_strides {
        Some(strides) if tiles != 0 => {
            let (min, max) = offset_range(grid, strides.iter().map(|s| s.get()))?;
            Some((u64::try_from(max.checked_add(1)?).ok()?, min))
        }
        _ => Some((tiles, 0)),
    }
}

/// A strided tile grid reaching `min < 0` tile slots before element
/// `[0, ..., 0]`'s: negative strides are valid (`layouts/strided.md`, in
/// tiles here), so at the top level `byte_offset` must leave those tiles'
/// elements at or after the buffer's first element, as for a strided
/// tensor. Below the top level the slots before a tile's first are the
/// previous tile's: tiles do not overlap (`layouts/tiled.md` § Description).
fn check_tiles_before(
    t: &Tensor<'_>,
    level: &TiledLevel<'_>,
    strides: &[I64],
    depth: usize,
    min: i128,
    tile_elements: u64,
) -> Result<()> {
    let d = t.descriptor();
    if depth > 0 {
        let rank = to_u64(strides.len());
        let (k, stride) = strides
            .iter()
            .enumerate()
            .find(|(_, s)| s.get() < 0)
            .map_or((0, 0), |(k, s)| (to_u64(k), s.get()));
        return Err(Error::InvalidNumber {
            scope: Scope::tensor(t.name()),
            field: Field::at("outer_strides", k),
            offset: level
                .offset
                .saturating_add(8 * rank + 4)
                .saturating_add(8 * k),
            value: Number::Int(stride),
            expected: "a non-negative tile-grid stride below the top tiling level (a slot before the tile's first belongs to the previous tile)",
            rule: "layouts/tiled.md § Description",
        });
    }
    let before = min.unsigned_abs().checked_mul(u128::from(tile_elements));
    let origin = d
        .element_type()
        .and_then(|et| crate::view::dense::element_origin(et, d.byte_offset()))
        .map_or(0, |o| o.elements);
    if before.is_some_and(|b| b <= u128::from(origin)) {
        return Ok(());
    }
    Err(Error::Invalid {
        scope: Scope::tensor(t.name()),
        field: Field::new("byte_offset"),
        offset: d.offsets().byte_offset,
        value: d.byte_offset(),
        expected: "large enough that the tiles negative outer_strides reach lie at or after byte 0",
        rule: rule::BYTE_OFFSET,
    })
}

fn tiled_overflow(t: &Tensor<'_>) -> Error {
    overflow(
        t,
        Field::new("tile_shape"),
        t.descriptor().offsets().layout_fields,
        "tiled buffer element count",
        rule::TILED,
    )
}

/// Elements a Morton buffer holds: `2^sum(morton_bits)`; each dimension must
/// fit its bits (`layouts/morton.md`).
pub(crate) fn morton_elements(t: &Tensor<'_>, shape: &[u64], bits: &[U32]) -> Result<u64> {
    let o = t.descriptor().offsets().layout_fields;
    let invalid = |k: usize, value: u64, expected: &'static str| Error::Invalid {
        scope: Scope::tensor(t.name()),
        field: Field::at("morton_bits", to_u64(k)),
        offset: o + 4 * to_u64(k),
        value,
        expected,
        rule: rule::MORTON,
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
            t,
            Field::new("morton_bits"),
            o,
            "2^sum(morton_bits)",
            "layouts/morton.md § Buffer Size",
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
                    scope: Scope::tensor(t.name()),
                    field: Field::at("morton_bits", to_u64(k)),
                    offset: o + 4 * to_u64(k),
                    value: bits.get(k).map_or(0, |b| u64::from(b.get())),
                    expected: "bits whose interleaved codes stay below 2^sum(morton_bits) (bit b of dimension k lands at b x rank + k)",
                    rule: "layouts/morton.md § Buffer Size",
                });
            }
        }
    }
    Ok(1u64 << total)
}

/// Elements a Hilbert buffer holds: `2^(rank × order)`, every dimension
/// `2^order` (`layouts/hilbert.md` § Validity Constraints).
pub(crate) fn hilbert_elements(t: &Tensor<'_>, shape: &[u64], h: &raw::HilbertFields) -> Result<u64> {
    let o = t.descriptor().offsets().layout_fields;
    let scope = || Scope::tensor(t.name());
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
    if rank != t.rank() || rank < 2 {
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
            t,
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
            offset: t.descriptor().shape_offset(k),
            value: shape.get(k).copied().unwrap_or(0),
            expected: "2^hilbert_order in every dimension",
            rule: rule::HILBERT,
        });
    }
    Ok(1u64 << total_bits)
}
