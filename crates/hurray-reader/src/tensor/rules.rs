//! The descriptor rules every layout shares, each layout's part read from
//! its [`LayoutSpec`]: rank, `byte_offset`, buffer count, every buffer's
//! size, shard and statistics. Run by [`resolve`](super::resolve) before
//! and after the buffers are placed.

use crate::cursor::to_u64;
use crate::descriptor::{Descriptor, DYNAMIC};
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::Options;
use crate::layout::plan::{nnz_disagreement, Placed, Plan};
use crate::layout::spec::LayoutSpec;
use crate::layout::{block_paged, table};
use crate::raw;

/// Checks the layout's rules (rank, `byte_offset`, buffer count, every
/// buffer's size) and returns, per buffer, what it holds. An extension
/// layout's buffers are unknown: no rule applies.
pub(super) fn plan_buffers(d: &Descriptor<'_>, options: Options, handles: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let Some(spec) = table::spec(d.layout) else {
        return Ok(vec![Plan::unknown(); handles.len()]);
    };
    check_rank(d, spec)?;
    check_byte_offset(d, options, handles)?;
    let mut plans = (spec.plans)(d, handles)?;
    plans.extend(crate::quantization::plans::plans(d, handles, plans.len())?);
    let expected = to_u64(plans.len());
    if to_u64(handles.len()) != expected {
        let base = (spec.buffers.count)(d.rank()).unwrap_or(0);
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::new("buffer_count"),
                offset: d.offsets.buffer_count,
                rule: spec.buffers.rule,
            },
            value: to_u64(handles.len()),
            expected: if expected == base {
                spec.buffers.expected
            } else {
                "the layout's buffers plus the quantization scheme's parameter buffers"
            },
        });
    }
    for (i, plan) in plans.iter().enumerate() {
        check_size(d, options, handles, i, plan)?;
    }
    Ok(plans)
}

/// Checks buffer `i`'s `byte_size` against its plan: equal in strict
/// mode, at least in permissive mode — except the layout's own buffers
/// of a sparse tensor (CSC, CSR, COO, CSF), whose sizes `layouts/*.md`
/// § Buffer Size give exactly: equal in both modes (NOTES.md "Buffer
/// larger than required"). The values of an unknown element type
/// (permissive mode only) have no known size: any.
fn check_size(
    d: &Descriptor<'_>,
    options: Options,
    handles: &[raw::BufferHandle],
    i: usize,
    plan: &Plan,
) -> Result<()> {
    let Some(size) = handles.get(i).map(|h| h.byte_size.get()) else {
        return Ok(());
    };
    let layout_buffers = table::spec(d.layout).and_then(|spec| (spec.buffers.count)(d.rank()));
    let sparse = d.layout.is_sparse() && plan.element_type.is_some() && layout_buffers.is_some_and(|n| to_u64(i) < n);
    let exact = sparse || options.is_strict();
    let ok = if exact { size == plan.bytes } else { size >= plan.bytes };
    if ok {
        return Ok(());
    }
    let byte_size = |k: usize| handles.get(k).map_or(0, |h| h.byte_size.get());
    if exact {
        if let Some(e) = nnz_disagreement(d, [byte_size(0), byte_size(1)]) {
            return Err(e);
        }
    }
    Err(Error::BufferSize {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::member("buffer", u64::from(u8::try_from(i).unwrap_or(u8::MAX)), "byte_size"),
            offset: d.handle_offset(i, 0),
            rule: plan.rule,
        },
        role: plan.role.as_str(),
        byte_size: size,
        expected: plan.bytes,
        exact,
    })
}

/// The layout rules that read a placed buffer, after placement: the
/// block table of a block-paged tensor holds `seq_ptr[num_seqs]`
/// entries (`layouts/block-paged.md` § Buffer Table), so its plan is
/// completed and its size checked here.
pub(super) fn check_placed(
    d: &Descriptor<'_>,
    options: Options,
    handles: &[raw::BufferHandle],
    placed: &[Placed<'_>],
    plans: &mut [Plan],
) -> Result<()> {
    if let Some((i, plan)) = block_paged::block_table_plan(d, placed)? {
        check_size(d, options, handles, i, &plan)?;
        if let Some(slot) = plans.get_mut(i) {
            *slot = plan;
        }
    }
    Ok(())
}

fn check_rank(d: &Descriptor<'_>, spec: &LayoutSpec) -> Result<()> {
    let rank = d.rank();
    if (spec.rank.allows)(rank) {
        return Ok(());
    }
    Err(Error::RankNotAllowed {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::new("rank"),
            offset: d.offsets.descriptor + 16,
            rule: spec.rank.rule,
        },
        rank,
        layout: d.layout.as_str(),
        expected: spec.rank.expected,
    })
}

/// `byte_offset` is 0 for the layouts that are not dense; for a dense one
/// it lies within buffer 0 and, in strict mode, is aligned as the element
/// type requires.
fn check_byte_offset(d: &Descriptor<'_>, options: Options, handles: &[raw::BufferHandle]) -> Result<()> {
    let must_be_zero = !d.layout.is_dense();
    let limit = if must_be_zero {
        0
    } else {
        handles.first().map_or(0, |h| h.byte_size.get())
    };
    if d.byte_offset > limit {
        return Err(Error::Invalid {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::new("byte_offset"),
                offset: d.offsets.byte_offset,
                rule: rule::BYTE_OFFSET,
            },
            value: d.byte_offset,
            expected: if must_be_zero {
                "0 for sparse, block-paged and composite layouts"
            } else {
                "at most the byte size of buffer 0"
            },
        });
    }
    // Every element of a dense tensor lies `byte_offset` plus a multiple
    // of its width into a buffer aligned to at least 64: aligned as its
    // type requires exactly when `byte_offset` is. Permissive mode
    // accepts a misaligned one (its elements decode; no typed slice).
    let alignment = d.element_type.and_then(ElementType::alignment).unwrap_or(1);
    if must_be_zero || !options.is_strict() || d.byte_offset.is_multiple_of(alignment) {
        return Ok(());
    }
    Err(Error::Invalid {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::new("byte_offset"),
            offset: d.offsets.byte_offset,
            rule: rule::TYPE_ALIGNMENT,
        },
        value: d.byte_offset,
        expected: "a multiple of the element type's alignment",
    })
}

/// The shard section (`metadata.md` § Shard Section): allowed by the
/// layout, and the shard lies within its parent.
pub(super) fn check_shard(d: &Descriptor<'_>) -> Result<()> {
    let Some(shard) = d.shard else {
        return Ok(());
    };
    let scope = || Scope::tensor(d.name);
    if let Some(rule) = table::spec(d.layout).and_then(|spec| spec.no_shard) {
        return Err(Error::Invalid {
            at: Location {
                scope: scope(),
                field: Field::new("flags"),
                offset: d.offsets.descriptor + 10,
                rule,
            },
            value: u64::from(d.flags()),
            expected: "no HAS_SHARD for CSF and block-paged tensors",
        });
    }
    let shape: Vec<u64> = d.shape().collect();
    for (k, n) in shape.iter().enumerate() {
        let parent = shard.parent_shape.get(k).map_or(0, |v| v.get());
        let start = shard.shard_offset.get(k).map_or(0, |v| v.get());
        let parent_offset = shard.offset.saturating_add(to_u64(k) * 8);
        let start_offset = parent_offset.saturating_add(to_u64(shape.len()) * 8);
        if parent == DYNAMIC || *n == DYNAMIC {
            return Err(Error::DynamicDimension {
                at: Location {
                    scope: Scope::tensor(d.name),
                    field: Field::at("parent_shape", to_u64(k)),
                    offset: parent_offset,
                    rule: rule::DYNAMIC_DIMENSION,
                },
            });
        }
        if start.checked_add(*n).is_none_or(|end| end > parent) {
            return Err(Error::Invalid {
                at: Location {
                    scope: scope(),
                    field: Field::at("shard_offset", to_u64(k)),
                    offset: start_offset,
                    rule: rule::SHARD,
                },
                value: start,
                expected: "shard_offset[k] + shape[k] <= parent_shape[k]",
            });
        }
    }
    Ok(())
}

/// Strict mode: a sparse layout's statistics `nnz` (its valid bit set)
/// equals the descriptor's.
pub(super) fn check_statistics(d: &Descriptor<'_>, options: Options) -> Result<()> {
    let Some((statistics_nnz, nnz)) = super::statistics_nnz_mismatch(d) else {
        return Ok(());
    };
    let Some(rule) = table::spec(d.layout).and_then(|spec| spec.statistics) else {
        return Ok(());
    };
    if !options.is_strict() {
        return Ok(());
    }
    Err(Error::StatisticsNnzMismatch {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::sub("statistics", "nnz"),
            offset: d.offsets.statistics + 8,
            rule,
        },
        statistics_nnz,
        nnz,
    })
}
