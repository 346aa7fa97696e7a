//! Tiled tensors (`layouts/tiled.md`, layout tag `0x04`): tiles of a
//! fixed shape, laid out by an outer layout, each tile by an inner one,
//! recursively. The buffer's size and every element's address.

use zerocopy::little_endian::I64;

use crate::cursor::to_u64;
use crate::descriptor::{Descriptor, DYNAMIC};
use crate::error::{rule, Error, Field, Location, Number, Result, Scope};
use crate::layout::fields::{LayoutFields, TiledLevel};
use crate::layout::plan::{count, overflow, Plan};
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::layout::storage::dense_plan;
use crate::layout::strided::offset_range;
use crate::layout::{column_major, row_major, strided};
use crate::raw;

pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule::NOT_SCALAR,
    buffers: BufferCount::DENSE,
    no_shard: None,
    statistics: None,
    plans,
};

/// One data buffer of whole tiles.
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Tiled { levels } = d.layout_fields() else {
        return Ok(Vec::new());
    };
    Ok(vec![dense_plan(d, |s| {
        let n = tiled_elements(d, s.shape, levels, 0)?;
        s.stored(d, n, "tiled buffer size", rule::TILED_PADDING)
    })?])
}

/// Elements a tiled buffer holds (`layouts/tiled.md` § Boundary Padding):
/// whole tiles, `ceil(shape / tile)` per dimension, each tile laid out by the
/// next level when tiling recurses.
pub(crate) fn tiled_elements(
    d: &Descriptor<'_>,
    shape: &[u64],
    levels: &[TiledLevel<'_>],
    depth: usize,
) -> Result<u64> {
    let Some(level) = levels.get(depth) else {
        return count(shape).ok_or_else(|| tiled_overflow(d));
    };
    let mut tiles = Vec::with_capacity(shape.len());
    let mut tile = Vec::with_capacity(shape.len());
    for (k, &n) in shape.iter().enumerate() {
        let size = level.tile_shape.get(k).map_or(0, |v| v.get());
        if size == 0 || size == DYNAMIC {
            return Err(Error::Invalid {
                at: Location {
                    scope: Scope::tensor(d.name),
                    field: Field::at("tile_shape", to_u64(k)),
                    offset: level.offset + 8 * to_u64(k),
                    rule: rule::TILED,
                },
                value: size,
                expected: "greater than 0",
            });
        }
        tiles.push(n.div_ceil(size));
        tile.push(size);
    }
    let tile_elements = if level.inner_layout == 4 {
        tiled_elements(d, &tile, levels, depth + 1)?
    } else {
        count(&tile).ok_or_else(|| tiled_overflow(d))?
    };
    // Tiles do not overlap (`layouts/tiled.md` § Description): in-tile
    // strides keep every offset of a tile inside its own elements.
    if let (Some(strides), Some(_)) = (level.inner_strides, count(&tile).filter(|&n| n > 0)) {
        let (min, max) = offset_range(&tile, strides.iter().map(|s| s.get())).ok_or_else(|| tiled_overflow(d))?;
        if min < 0 || max >= i128::from(tile_elements) {
            let rank = to_u64(tile.len());
            let outer = if level.outer_strides.is_some() { 8 * rank } else { 0 };
            return Err(Error::Invalid {
                at: Location {
                    scope: Scope::tensor(d.name),
                    field: Field::new("inner_strides"),
                    offset: level.offset.saturating_add(8 * rank + 4 + outer),
                    rule: rule::TILED_DESCRIPTION,
                },
                value: u64::try_from(if min < 0 { min } else { max }).unwrap_or(0),
                expected: "in-tile strides whose offsets stay within the tile (0 to tile elements - 1)",
            });
        }
    }
    let (slots, lowest) = grid_slots(level, &tiles).ok_or_else(|| tiled_overflow(d))?;
    if let (Some(strides), true) = (level.outer_strides, lowest < 0) {
        check_tiles_before(d, level, strides, depth, lowest, tile_elements)?;
    }
    slots.checked_mul(tile_elements).ok_or_else(|| tiled_overflow(d))
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
    d: &Descriptor<'_>,
    level: &TiledLevel<'_>,
    strides: &[I64],
    depth: usize,
    min: i128,
    tile_elements: u64,
) -> Result<()> {
    if depth > 0 {
        let rank = to_u64(strides.len());
        let (k, stride) = strides
            .iter()
            .enumerate()
            .find(|(_, s)| s.get() < 0)
            .map_or((0, 0), |(k, s)| (to_u64(k), s.get()));
        return Err(Error::InvalidNumber {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::at("outer_strides", k),
                offset: level
                .offset
                .saturating_add(8 * rank + 4)
                .saturating_add(8 * k),
                rule: rule::TILED_DESCRIPTION,
            },
            value: Number::Int(stride),
            expected: "a non-negative tile-grid stride below the top tiling level (a slot before the tile's first belongs to the previous tile)",
        });
    }
    let before = min.unsigned_abs().checked_mul(u128::from(tile_elements));
    let origin = d
        .element_type()
        .and_then(|et| crate::layout::storage::element_origin(et, d.byte_offset()))
        .map_or(0, |o| o.elements);
    if before.is_some_and(|b| b <= u128::from(origin)) {
        return Ok(());
    }
    Err(Error::Invalid {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::new("byte_offset"),
            offset: d.offsets().byte_offset,
            rule: rule::BYTE_OFFSET,
        },
        value: d.byte_offset(),
        expected: "large enough that the tiles negative outer_strides reach lie at or after byte 0",
    })
}

fn tiled_overflow(d: &Descriptor<'_>) -> Error {
    overflow(
        d,
        Field::new("tile_shape"),
        d.offsets().layout_fields,
        "tiled buffer element count",
        rule::TILED,
    )
}

/// `layouts/tiled.md` § Element Address, applied level by level.
pub(crate) fn tiled_offset(levels: &[TiledLevel<'_>], depth: usize, shape: &[u64], index: &[u64]) -> i128 {
    let Some(level) = levels.get(depth) else {
        return strided::dot(index, row_major::strides(shape));
    };
    let tile: Vec<u64> = level.tile_shape.iter().map(|t| t.get().max(1)).collect();
    let grid: Vec<u64> = shape.iter().zip(&tile).map(|(&n, &t)| n.div_ceil(t)).collect();
    let tile_index: Vec<u64> = index.iter().zip(&tile).map(|(&i, &t)| i / t).collect();
    let inner_index: Vec<u64> = index.iter().zip(&tile).map(|(&i, &t)| i % t).collect();
    let tile_linear = match (level.outer_layout, level.outer_strides) {
        (3, Some(strides)) => strided::dot(&tile_index, strides.iter().map(|s| i128::from(s.get()))),
        (2, _) => strided::dot(&tile_index, column_major::strides(&grid)),
        _ => strided::dot(&tile_index, row_major::strides(&grid)),
    };
    let tile_elements = if level.inner_layout == 4 {
        padded_elements(levels, depth + 1, &tile)
    } else {
        tile.iter().map(|&t| i128::from(t)).product()
    };
    let inner = match (level.inner_layout, level.inner_strides) {
        (3, Some(strides)) => strided::dot(&inner_index, strides.iter().map(|s| i128::from(s.get()))),
        (2, _) => strided::dot(&inner_index, column_major::strides(&tile)),
        (4, _) => tiled_offset(levels, depth + 1, &tile, &inner_index),
        _ => strided::dot(&inner_index, row_major::strides(&tile)),
    };
    tile_linear * tile_elements + inner
}

/// Elements of `shape` laid out by tiled levels from `depth` on, padding
/// included: the tile slots the level's grid spans
/// ([`grid_slots`](grid_slots), as the buffer size
/// counts them) times the elements of one tile.
pub(crate) fn padded_elements(levels: &[TiledLevel<'_>], depth: usize, shape: &[u64]) -> i128 {
    let Some(level) = levels.get(depth) else {
        return shape.iter().map(|&n| i128::from(n)).product();
    };
    let tile: Vec<u64> = level.tile_shape.iter().map(|t| t.get().max(1)).collect();
    let grid: Vec<u64> = shape.iter().zip(&tile).map(|(&n, &t)| n.div_ceil(t)).collect();
    let slots = grid_slots(level, &grid).map_or(0, |(slots, _)| slots);
    let per_tile = if level.inner_layout == 4 {
        padded_elements(levels, depth + 1, &tile)
    } else {
        tile.iter().map(|&t| i128::from(t)).product()
    };
    i128::from(slots).saturating_mul(per_tile)
}
