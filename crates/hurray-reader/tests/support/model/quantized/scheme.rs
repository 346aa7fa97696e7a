//! The quantization schemes (`quantization/*.md`): tags, storage types,
//! each scheme's dequantization formula, and the layouts a quantized
//! tensor is stored in.

use hurray_reader::Value;
use hurray_writer::{TileInner, TileOrder, Tiled};

use super::super::basics::{column_major_strides, count, dot, morton, row_major_strides};
use super::types::Ty;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    PerTensor,
    PerChannel,
    PerBlock,
    Nf4,
    Mxfp,
}

impl Scheme {
    pub(crate) fn tag(self) -> u8 {
        match self {
            Scheme::PerTensor => 0x01,
            Scheme::PerChannel => 0x02,
            Scheme::PerBlock => 0x03,
            Scheme::Nf4 => 0x04,
            Scheme::Mxfp => 0x05,
        }
    }

    /// Each scheme's § Valid Storage Types.
    pub(crate) fn storage_types(self) -> Vec<Ty> {
        match self {
            Scheme::PerTensor | Scheme::PerChannel => vec![
                Ty::Int8,
                Ty::Uint8,
                Ty::Int16,
                Ty::Uint16,
                Ty::Int32,
                Ty::Uint32,
                Ty::Int4,
                Ty::Uint4,
                Ty::Int2,
                Ty::Uint2,
            ],
            Scheme::PerBlock => vec![Ty::Int8, Ty::Uint8, Ty::Int4, Ty::Uint4, Ty::Int2, Ty::Uint2],
            Scheme::Nf4 => vec![Ty::Uint4],
            Scheme::Mxfp => vec![
                Ty::Float8E4m3,
                Ty::Float8E5m2,
                Ty::Float4E2m1,
                Ty::Float6E2m3,
                Ty::Float6E3m2,
                Ty::Int8,
                Ty::Int4,
            ],
        }
    }

    pub(crate) fn blocked(self) -> bool {
        matches!(self, Scheme::PerBlock | Scheme::Nf4 | Scheme::Mxfp)
    }

    /// `quantization.md` § Partial Block Policy: per-block and NF4 store a
    /// partial last block whole; MXFP has none.
    pub(crate) fn pads(self) -> bool {
        matches!(self, Scheme::PerBlock | Scheme::Nf4)
    }
}

/// `quantization/nf4.md` § Lookup Table, as printed (each is the shortest
/// decimal of a float32: `nf4_table_is_float32`).
pub(crate) const NF4: [f64; 16] = [
    -1.0,
    -0.6961928009986877,
    -0.5250730514526367,
    -0.39491748809814453,
    -0.28444138169288635,
    -0.18477343022823334,
    -0.09105003625154495,
    0.0,
    0.07958029955625534,
    0.16093020141124725,
    0.24611230194568634,
    0.33791524171829224,
    0.44070982933044434,
    0.5626170039176941,
    0.7229568362236023,
    1.0,
];

/// The scheme's dequantization formula for one storage value `q` with
/// scale `s` (decoded; float16/bfloat16/float32 exact in `f32`) and zero
/// point `z` (0 when symmetric). See the module docs for the arithmetic.
pub(crate) fn dequantize(scheme: Scheme, q: &Value, s: f64, z: i64) -> f64 {
    let int = |q: &Value| match *q {
        Value::Int(v) => i128::from(v),
        Value::UInt(v) => i128::from(v),
        ref other => panic!("integer storage expected, got {other:?}"),
    };
    match scheme {
        Scheme::PerTensor | Scheme::PerChannel | Scheme::PerBlock => {
            let difference = (int(q) - i128::from(z)) as f32;
            f64::from(s as f32 * difference)
        }
        Scheme::Nf4 => f64::from(s as f32 * NF4[int(q) as usize] as f32),
        Scheme::Mxfp => {
            let v = match *q {
                Value::Float(v) => v,
                Value::Int(v) => v as f64,
                ref other => panic!("{other:?}"),
            };
            s * v
        }
    }
}

/// A dense layout of a quantized tensor.
#[derive(Debug, Clone)]
pub(crate) enum QLay {
    RowMajor,
    ColumnMajor,
    Strided(Vec<i64>),
    /// One tiled level; the tile grid and each tile row-major (`false`) or
    /// column-major (`true`).
    Tiled {
        tile: Vec<u64>,
        outer_col: bool,
        inner_col: bool,
    },
    Morton(Vec<u32>),
}

impl QLay {
    pub(crate) fn writer(&self) -> hurray_writer::Layout {
        use hurray_writer::Layout as W;
        match self {
            QLay::RowMajor => W::RowMajor,
            QLay::ColumnMajor => W::ColumnMajor,
            QLay::Strided(s) => W::Strided { strides: s.clone() },
            QLay::Tiled {
                tile,
                outer_col,
                inner_col,
            } => W::Tiled(Tiled {
                tile_shape: tile.clone(),
                outer: if *outer_col {
                    TileOrder::ColumnMajor
                } else {
                    TileOrder::RowMajor
                },
                inner: if *inner_col {
                    TileInner::ColumnMajor
                } else {
                    TileInner::RowMajor
                },
            }),
            QLay::Morton(bits) => W::Morton {
                morton_bits: bits.clone(),
            },
        }
    }

    /// Linear element offset of `index` from element `[0, ..., 0]`;
    /// `storage` is the shape the contiguous layouts lay out (padded blocks
    /// included).
    pub(crate) fn offset(&self, storage: &[u64], shape: &[u64], index: &[u64]) -> i128 {
        match self {
            QLay::RowMajor => dot(index, &row_major_strides(storage)),
            QLay::ColumnMajor => dot(index, &column_major_strides(storage)),
            QLay::Strided(s) => dot(index, &s.iter().map(|&s| i128::from(s)).collect::<Vec<_>>()),
            QLay::Tiled {
                tile,
                outer_col,
                inner_col,
            } => {
                // layouts/tiled.md § Element Address.
                let grid: Vec<u64> = shape.iter().zip(tile).map(|(&n, &t)| n.div_ceil(t)).collect();
                let at: Vec<u64> = index.iter().zip(tile).map(|(&i, &t)| i / t).collect();
                let within: Vec<u64> = index.iter().zip(tile).map(|(&i, &t)| i % t).collect();
                let order = |col: bool, s: &[u64]| {
                    if col {
                        column_major_strides(s)
                    } else {
                        row_major_strides(s)
                    }
                };
                dot(&at, &order(*outer_col, &grid)) * i128::from(count(tile)) + dot(&within, &order(*inner_col, tile))
            }
            QLay::Morton(bits) => i128::from(morton(index, bits)),
        }
    }

    /// (lowest offset, one past the highest slot) the buffer covers.
    pub(crate) fn extent(&self, storage: &[u64], shape: &[u64]) -> (i128, i128) {
        match self {
            QLay::RowMajor | QLay::ColumnMajor => (0, i128::from(count(storage))),
            QLay::Strided(strides) => shape.iter().zip(strides).fold((0, 1), |(lo, hi), (&n, &s)| {
                let r = i128::from(s) * (i128::from(n) - 1);
                (lo + r.min(0), hi + r.max(0))
            }),
            QLay::Tiled { tile, .. } => {
                let grid: u64 = shape.iter().zip(tile).map(|(&n, &t)| n.div_ceil(t)).product();
                (0, i128::from(grid * count(tile)))
            }
            QLay::Morton(bits) => (0, 1i128 << bits.iter().sum::<u32>()),
        }
    }
}
