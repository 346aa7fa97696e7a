//! Drawing quantized cases (small integers that shrink to simple cases).

use proptest::prelude::*;
use proptest::sample::Index;

use super::super::basics::{bits_needed, count};
use super::case::QCase;
use super::scheme::{QLay, Scheme};
use super::types::Ty;

/// Small integers the case is built from (shrinking them simplifies the
/// case: 0 is the simplest choice everywhere).
#[derive(Debug, Clone)]
pub(crate) struct Draw {
    pub(crate) storage: Index,
    pub(crate) rank: usize,
    pub(crate) axis: Index,
    pub(crate) block: u8,
    pub(crate) scale: u8,
    pub(crate) dims: [u8; 3],
    pub(crate) layout: u8,
    pub(crate) perm: u8,
    pub(crate) negative: [bool; 3],
    pub(crate) gaps: [u8; 3],
    pub(crate) tiles: [u8; 3],
    pub(crate) orders: (bool, bool),
    pub(crate) flags: (bool, bool, bool),
    pub(crate) extra_units: u64,
    pub(crate) seed: u64,
}

pub(crate) fn draws() -> impl Strategy<Value = Draw> {
    (
        (any::<Index>(), 1usize..=3, any::<Index>(), any::<u8>(), any::<u8>()),
        (
            any::<[u8; 3]>(),
            any::<u8>(),
            any::<u8>(),
            any::<[bool; 3]>(),
            any::<[u8; 3]>(),
        ),
        (
            any::<[u8; 3]>(),
            any::<(bool, bool)>(),
            any::<(bool, bool, bool)>(),
            prop_oneof![3 => Just(0u64), 1 => 1u64..=2],
            any::<u64>(),
        ),
    )
        .prop_map(
            |(
                (storage, rank, axis, block, scale),
                (dims, layout, perm, negative, gaps),
                (tiles, orders, flags, extra_units, seed),
            )| Draw {
                storage,
                rank,
                axis,
                block,
                scale,
                dims,
                layout,
                perm,
                negative,
                gaps,
                tiles,
                orders,
                flags,
                extra_units,
                seed,
            },
        )
}

pub(crate) fn pick<T: Copy>(options: &[T], k: u8) -> T {
    options[usize::from(k) % options.len()]
}

pub(crate) fn build(scheme: Scheme, d: Draw) -> QCase {
    let storage = *d.storage.get(&scheme.storage_types());
    let rank = d.rank;
    let axis = d.axis.index(rank);
    let block = match scheme {
        Scheme::PerBlock => pick(&[2u64, 4, 8], d.block),
        Scheme::Nf4 => pick(&[8u64, 16], d.block),
        Scheme::Mxfp => pick(&[16u64, 32], d.block),
        _ => 0,
    };
    let scale_ty = match scheme {
        Scheme::PerBlock => pick(&[Ty::Float32, Ty::Float16, Ty::Bfloat16], d.scale),
        Scheme::Mxfp => Ty::Float8E8m0,
        _ => Ty::Float32,
    };
    // The axis extent: partial last blocks (per-block, NF4), whole blocks
    // (MXFP), sometimes empty (an empty axis takes any block size).
    let axis_extent = |k: u8| -> u64 {
        match scheme {
            Scheme::PerTensor | Scheme::PerChannel => pick(&[1, 2, 3, 4, 5, 0], k),
            Scheme::PerBlock | Scheme::Nf4 => {
                let options: Vec<u64> = (block..=2 * block + 3).chain([0]).collect();
                pick(&options, k)
            }
            Scheme::Mxfp => pick(&[block, 2 * block], k),
        }
    };
    let other = |k: u8| -> u64 {
        match scheme {
            Scheme::Mxfp => pick(&[1, 2, 1, 2, 0], k),
            _ => pick(&[1, 2, 3, 1, 2, 3, 0], k),
        }
    };
    let shape: Vec<u64> = (0..rank)
        .map(|k| {
            if k == axis {
                axis_extent(d.dims[k])
            } else {
                other(d.dims[k])
            }
        })
        .collect();
    let empty = count(&shape) == 0;
    let layout = match pick(&[0u8, 0, 1, 1, 2, 2, 3, 4], d.layout) {
        // Empty tensors store nothing (row- and column-major only here).
        _ if empty && d.layout % 2 == 1 => QLay::ColumnMajor,
        _ if empty => QLay::RowMajor,
        0 => QLay::RowMajor,
        1 => QLay::ColumnMajor,
        2 => {
            // A permutation of dense strides, each dimension's extent
            // with a gap of 0-1 elements, some negative.
            let mut order: Vec<usize> = (0..rank).collect();
            let mut p = usize::from(d.perm);
            for i in (1..rank).rev() {
                order.swap(i, p % (i + 1));
                p /= i + 1;
            }
            let mut strides = vec![0i64; rank];
            let mut step = 1i64;
            for &k in order.iter().rev() {
                strides[k] = if d.negative[k] { -step } else { step };
                step *= (shape[k] + u64::from(d.gaps[k] % 2)) as i64;
            }
            QLay::Strided(strides)
        }
        3 => QLay::Tiled {
            tile: (0..rank).map(|k| 1 + u64::from(d.tiles[k] % 3)).collect(),
            outer_col: d.orders.0,
            inner_col: d.orders.1,
        },
        _ => {
            // The same bits for every dimension, so that every code fits
            // `2^sum(morton_bits)` (layouts/morton.md § Buffer Size).
            let bits = shape.iter().map(|&n| bits_needed(n)).max().unwrap_or(1);
            if bits * rank as u32 <= 12 {
                QLay::Morton(vec![bits; rank])
            } else {
                QLay::RowMajor
            }
        }
    };
    QCase {
        scheme,
        storage,
        shape,
        axis,
        block,
        scale_ty,
        symmetric: d.flags.0,
        shared: d.flags.1,
        swapped: d.flags.2,
        layout,
        extra_units: d.extra_units,
        seed: d.seed,
    }
}

pub(crate) fn qcases(scheme: Scheme) -> impl Strategy<Value = QCase> {
    draws().prop_map(move |d| build(scheme, d))
}
