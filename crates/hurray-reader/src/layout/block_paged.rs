//! Block-paged tensors (`layouts/block-paged.md`, layout tag `0x0A`): a
//! pool of fixed-size pages, a block table mapping each sequence's logical
//! pages to pool pages, and `seq_ptr`. Their buffer table and sizes; the
//! data checks are in [`check`].

use crate::buffer::BufferRole;
use crate::descriptor::Descriptor;
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::reserved_zero;
use crate::layout::plan::{overflow, storage, Plan};
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::layout::LayoutFields;
use crate::raw;

/// `layouts/block-paged.md`'s descriptor rules.
pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule {
        allows: |rank| rank == 3,
        expected: "3",
        rule: rule::BLOCK_PAGED_DESCRIPTION,
    },
    buffers: BufferCount {
        count: |_| Some(3),
        expected: "3 (page_pool, block_table, seq_ptr)",
        rule: rule::BUFFER_TABLE,
    },
    no_shard: Some(rule::BLOCK_PAGED_SHARDING),
    statistics: None,
    plans,
};

/// Block-paged (`layouts/block-paged.md`): `page_pool`
/// (`num_pages × page_size × num_heads × head_dim` elements), `block_table`
/// and `seq_ptr` (`num_seqs + 1`) of the index type. The block table length
/// is `seq_ptr[num_seqs]`, read here (one element).
fn plans(d: &Descriptor<'_>, handles: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::BlockPaged(f) = d.layout_fields() else {
        return Ok(Vec::new());
    };
    let scope = || Scope::tensor(d.name);
    let o = d.offsets().layout_fields;
    let invalid = |field: &'static str, at: u64, value: u64, expected: &'static str| Error::Invalid {
        at: Location {
            scope: scope(),
            field: Field::new(field),
            offset: o + at,
            rule: rule::BLOCK_PAGED,
        },
        value,
        expected,
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
    let shape = d.static_shape()?;
    let size_rule = rule::BLOCK_PAGED_INV4;
    let over = |what| overflow(d, Field::new("num_pages"), o + 4, what, size_rule);
    let pool_len = [
        f.num_pages.get(),
        u64::from(f.page_size.get()),
        shape.get(1).copied().unwrap_or(0),
        shape.get(2).copied().unwrap_or(0),
    ]
    .iter()
    .try_fold(1u64, |acc, &n| acc.checked_mul(n))
    .ok_or_else(|| over("num_pages x page_size x num_heads x head_dim"))?;
    let et = d.element_type;
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
            rule::BLOCK_PAGED_BUFFERS,
        ),
        Plan::new(
            BufferRole::SeqPtr,
            Some(index_type),
            seq_len,
            seq_len * width,
            rule::BLOCK_PAGED_BUFFERS,
        ),
    ])
}

/// The block table's element type and width in bytes.
fn block_table_index(f: &raw::BlockPagedFields) -> (ElementType, u64) {
    if f.block_table_index_type == 0 {
        (ElementType::Uint32, 4)
    } else {
        (ElementType::Uint64, 8)
    }
}

/// For a block-paged tensor whose buffers are placed (and sizes checked by
/// [`plans`]): buffer 1, the block table, with the
/// `total_logical_pages = seq_ptr[num_seqs]` entries it must hold
/// (`layouts/block-paged.md` § Buffer Table). `None` for other layouts, or
/// when `seq_ptr` holds no such element (its size check failed first).
///
/// # Errors
/// [`Error::Overflow`] when that many entries do not fit in `u64` bytes.
pub(crate) fn block_table_plan(
    d: &Descriptor<'_>,
    placed: &[crate::layout::plan::Placed<'_>],
) -> Result<Option<(usize, Plan)>> {
    let LayoutFields::BlockPaged(f) = d.layout_fields() else {
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
    let bytes = pages.checked_mul(width).ok_or_else(|| {
        overflow(
            d,
            Field::at("seq_ptr", last),
            at,
            "block_table byte size",
            rule::BLOCK_PAGED_BUFFERS,
        )
    })?;
    Ok(Some((
        1,
        Plan::new(
            BufferRole::BlockTable,
            Some(index_type),
            pages,
            bytes,
            rule::BLOCK_PAGED_BUFFERS,
        ),
    )))
}
