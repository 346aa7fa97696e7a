//! Geometry of the dense layouts (`layouts/strided.md`,
//! `layouts/tiled.md`): tiled levels, storage sizes, strided extents.

use crate::element_type::Packing;
use crate::error::{Error, Result};
use crate::layout::{TileInner, TileOrder, Tiled};
use crate::num::{mul, product};

use super::checks::field_len;
use super::tensor::MAX_TILING_DEPTH;
pub(super) fn check_tiled(t: &Tiled, rank: u64, depth: u32) -> Result<()> {
    const RULE: &str = "layouts/tiled.md § Additional Descriptor Fields";
    if depth > MAX_TILING_DEPTH {
        return Err(Error::InvalidField {
            what: "tiling depth",
            value: u64::from(depth),
            rule: "layouts/tiled.md § Recursive Tiling: at most 8 levels",
        });
    }
    field_len("tile_shape", t.tile_shape.len(), rank, RULE)?;
    if t.tile_shape.contains(&0) {
        return Err(Error::InvalidField {
            what: "tile_shape",
            value: 0,
            rule: RULE,
        });
    }
    if let TileOrder::Strided(s) = &t.outer {
        field_len("outer_strides", s.len(), rank, RULE)?;
    }
    match &t.inner {
        TileInner::Strided(s) => {
            field_len("inner_strides", s.len(), rank, RULE)?;
            inner_strides_within_tile(&t.tile_shape, s)
        }
        TileInner::Tiled(inner) => check_tiled(inner, rank, depth.saturating_add(1)),
        TileInner::RowMajor | TileInner::ColumnMajor => Ok(()),
    }
}

/// Tiles do not overlap (`layouts/tiled.md` § Description): every in-tile
/// offset `sum(e_k * inner_strides[k])` lies in `0..product(tile_shape)`.
pub(super) fn inner_strides_within_tile(tile_shape: &[u64], strides: &[i64]) -> Result<()> {
    let elements = tile_shape
        .iter()
        .try_fold(1i128, |acc, &n| acc.checked_mul(i128::from(n)));
    // An offset range past i128 is out of the tile too.
    let (min, max) = offset_range(tile_shape, strides).unwrap_or((-1, 0));
    if min < 0 || elements.is_some_and(|e| max >= e) {
        return Err(Error::InvalidField {
            what: "inner_strides",
            value: u64::try_from(if min < 0 { 0 } else { max }).unwrap_or(u64::MAX),
            rule: "layouts/tiled.md § Description: in-tile offsets stay within the tile",
        });
    }
    Ok(())
}

/// Storage elements of a tiled tensor of `shape` (full tiles, recursively,
/// padding included), from element `[0, ..., 0]`'s tile slot on. Strided
/// tile grids span from slot 0 to the highest slot they address; in-tile
/// strides stay within the tile (`check_tiled`), so a tile holds
/// `product(tile_shape)` elements whatever its inner order.
///
/// Negative grid strides reach slots before slot 0: at the top level
/// (`before` is `Some`: `byte_offset` and the element packing) the tiles
/// there must lie at or after byte 0, as for a strided tensor; below it they
/// would be the previous tile's slots (tiles do not overlap,
/// `layouts/tiled.md` § Description), and are refused. The reader agrees.
pub(super) fn tiled_storage(shape: &[u64], t: &Tiled, before: Option<(u64, Packing)>) -> Result<u64> {
    // An empty tensor stores nothing.
    if product(shape, "element count")? == 0 {
        return Ok(0);
    }
    let grid: Vec<u64> = shape
        .iter()
        .zip(&t.tile_shape)
        .map(|(&s, &k)| s.div_ceil(k.max(1)))
        .collect();
    let slots = match &t.outer {
        TileOrder::Strided(strides) => {
            let (lo, hi) = offset_range(&grid, strides).ok_or(Error::overflow("tile grid extent"))?;
            let slots = u64::try_from(hi.saturating_add(1)).map_err(|_| Error::overflow("tile grid extent"))?;
            (slots, u64::try_from(lo.unsigned_abs()).unwrap_or(u64::MAX))
        }
        TileOrder::RowMajor | TileOrder::ColumnMajor => (product(&grid, "tile count")?, 0),
    };
    let (slots, slots_before) = slots;
    let per_tile = match &t.inner {
        TileInner::Tiled(inner) => tiled_storage(&t.tile_shape, inner, None)?,
        TileInner::Strided(_) | TileInner::RowMajor | TileInner::ColumnMajor => {
            product(&t.tile_shape, "tile elements")?
        }
    };
    if slots_before > 0 {
        let Some((byte_offset, packing)) = before else {
            return Err(Error::InvalidField {
                what: "outer_strides (negative below the top tiling level: a slot of the previous tile)",
                value: slots_before,
                rule: "layouts/tiled.md § Description: tiles do not overlap",
            });
        };
        let needed = packing.bytes_for(mul(slots_before, per_tile, "tiled elements before [0, ..., 0]")?)?;
        if byte_offset < needed {
            return Err(Error::InvalidField {
                what: "byte_offset",
                value: byte_offset,
                rule: "memory-layout.md § Common Fields › byte_offset: negative outer_strides must leave every tile at or after byte 0",
            });
        }
    }
    mul(slots, per_tile, "tiled buffer elements")
}

/// Number of storage elements of a dense tensor, padding the blocked axis of
/// a per-block / NF4 quantized tensor up to whole blocks.
pub(super) fn storage_count(shape: &[u64], padded_axis: Option<(usize, u64)>) -> Result<u64> {
    let mut total = 1u64;
    for (i, &s) in shape.iter().enumerate() {
        let s = match padded_axis {
            Some((axis, k)) if axis == i => mul(s.div_ceil(k.max(1)), k, "padded axis")?,
            _ => s,
        };
        total = mul(total, s, "element count")?;
    }
    Ok(total)
}

pub(super) enum Extent {
    Fits { end: u64 },
    BeforeStart,
}

/// Lowest and highest element offsets `sum(i_k * strides[k])` reaches over
/// a non-empty `shape`, in `i128`; `None` on overflow.
pub(super) fn offset_range(shape: &[u64], strides: &[i64]) -> Option<(i128, i128)> {
    shape
        .iter()
        .zip(strides)
        .try_fold((0i128, 0i128), |(lo, hi), (&n, &stride)| {
            let reach = i128::from(stride).checked_mul(i128::from(n).saturating_sub(1))?;
            Some(if reach < 0 {
                (lo.checked_add(reach)?, hi)
            } else {
                (lo, hi.checked_add(reach)?)
            })
        })
}

/// Byte extent of a strided tensor: the end offset (exclusive) of the last
/// addressable byte, or `BeforeStart` when a negative stride reaches before
/// byte 0.
pub(super) fn strided_extent(shape: &[u64], strides: &[i64], packing: Packing, byte_offset: u64) -> Result<Extent> {
    if shape.contains(&0) {
        return Ok(Extent::Fits { end: byte_offset });
    }
    let (lo, hi) = offset_range(shape, strides).ok_or(Error::overflow("strided extent"))?;
    // Byte range [first, last_end) touched by element offsets lo..=hi.
    let base = i128::from(byte_offset);
    let (first, last_end) = match packing {
        Packing::Whole { bytes } => {
            let w = i128::from(bytes);
            let first = lo.checked_mul(w).and_then(|x| base.checked_add(x));
            let end = hi
                .checked_add(1)
                .and_then(|x| x.checked_mul(w))
                .and_then(|x| base.checked_add(x));
            (first, end)
        }
        Packing::SubByte { bits } => {
            let per = i128::from(8u32.checked_div(bits).unwrap_or(1));
            (
                lo.checked_div_euclid(per).and_then(|x| base.checked_add(x)),
                hi.checked_div_euclid(per)
                    .and_then(|x| x.checked_add(1))
                    .and_then(|x| base.checked_add(x)),
            )
        }
        Packing::SixBit => (
            lo.checked_div_euclid(4)
                .and_then(|g| g.checked_mul(3))
                .and_then(|x| base.checked_add(x)),
            hi.checked_div_euclid(4)
                .and_then(|g| g.checked_add(1))
                .and_then(|g| g.checked_mul(3))
                .and_then(|x| base.checked_add(x)),
        ),
    };
    let (Some(first), Some(last_end)) = (first, last_end) else {
        return Err(Error::overflow("strided extent"));
    };
    if first < 0 {
        return Ok(Extent::BeforeStart);
    }
    let end = u64::try_from(last_end).map_err(|_| Error::overflow("strided extent"))?;
    Ok(Extent::Fits { end })
}
