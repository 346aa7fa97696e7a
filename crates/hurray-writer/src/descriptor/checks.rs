//! Small rules shared by the layouts and sections: lengths of field
//! arrays, ranks, permutations, the shard section.

use crate::error::{Error, Result};
use crate::num::len64;
use crate::sections::Shard;
pub(super) fn need_rank_at_least(layout: &'static str, rank: u64, minimum: u64, rule: &'static str) -> Result<()> {
    if rank < minimum {
        return Err(Error::RankNotAllowed { layout, rank, rule });
    }
    Ok(())
}

pub(super) fn field_len(what: &'static str, actual: usize, expected: u64, rule: &'static str) -> Result<()> {
    let actual = len64(actual)?;
    if actual != expected {
        return Err(Error::FieldLength {
            what,
            expected,
            actual,
            rule,
        });
    }
    Ok(())
}

/// Checks that `mode_order` is a permutation of `0..len`.
pub(crate) fn check_permutation(mode_order: &[u32]) -> Result<()> {
    let mut seen = vec![false; mode_order.len()];
    for (position, &value) in mode_order.iter().enumerate() {
        let slot = usize::try_from(value).ok().and_then(|v| seen.get_mut(v));
        match slot {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::ModeOrderNotPermutation {
                    position: len64(position)?,
                    value: u64::from(value),
                })
            }
        }
    }
    Ok(())
}

pub(super) fn check_shard(shard: &Shard, shape: &[u64]) -> Result<()> {
    const RULE: &str = "metadata.md § Shard Section";
    let rank = len64(shape.len())?;
    field_len("parent_shape", shard.parent_shape.len(), rank, RULE)?;
    field_len("shard_offset", shard.shard_offset.len(), rank, RULE)?;
    for (d, ((&offset, &size), &parent)) in shard
        .shard_offset
        .iter()
        .zip(shape)
        .zip(&shard.parent_shape)
        .enumerate()
    {
        if offset.checked_add(size).is_none_or(|end| end > parent) {
            return Err(Error::ShardOutOfBounds {
                dimension: len64(d)?,
                shard_offset: offset,
                size,
                parent,
            });
        }
    }
    Ok(())
}
