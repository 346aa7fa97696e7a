//! One quantized tensor: scheme, storage, shape, parameters, layout; and
//! the parameter patterns drawn for it.

use std::fmt;

use super::super::basics::next;
use super::readback::float_pattern;
use super::scheme::{QLay, Scheme};
use super::types::Ty;

/// One quantized tensor: scheme, storage, shape, parameters, layout.
#[derive(Clone)]
pub(crate) struct QCase {
    pub(crate) scheme: Scheme,
    pub(crate) storage: Ty,
    pub(crate) shape: Vec<u64>,
    pub(crate) axis: usize,
    /// `block_size` (0 for per-tensor and per-channel).
    pub(crate) block: u64,
    /// `float32`, `float16`, `bfloat16` (per-block) or `float8_e8m0` (MXFP).
    pub(crate) scale_ty: Ty,
    /// SYMMETRIC (no zero points); per-tensor: zero point 0.
    pub(crate) symmetric: bool,
    /// Scales and zero points in one buffer, `[scales | zero_points]`.
    pub(crate) shared: bool,
    /// Zero points at buffer 1, scales at buffer 2.
    pub(crate) swapped: bool,
    pub(crate) layout: QLay,
    /// `byte_offset` in whole bytes or groups past the least one.
    pub(crate) extra_units: u64,
    pub(crate) seed: u64,
}

impl fmt::Debug for QCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} {} shape {:?} {:?}",
            self.scheme,
            self.storage.name(),
            self.shape,
            self.layout
        )?;
        if self.scheme != Scheme::PerTensor {
            write!(f, " axis {}", self.axis)?;
        }
        if self.scheme.blocked() {
            write!(f, " block {} scales {}", self.block, self.scale_ty.name())?;
        }
        if self.is_shared() {
            write!(f, " shared [scales | zero points] buffer 1")?;
        } else if self.has_zero_points() {
            write!(
                f,
                " scale buffer {} zero buffer {}",
                self.scale_index(),
                self.zero_index().unwrap()
            )?;
        } else if self.scheme != Scheme::PerTensor {
            write!(f, " symmetric")?;
        }
        write!(f, " extra_units {} seed {:#x}", self.extra_units, self.seed)
    }
}

impl QCase {
    pub(crate) fn has_zero_points(&self) -> bool {
        matches!(self.scheme, Scheme::PerChannel | Scheme::PerBlock) && !self.symmetric
    }

    pub(crate) fn is_shared(&self) -> bool {
        self.has_zero_points() && self.shared
    }

    pub(crate) fn scale_index(&self) -> u32 {
        if self.has_zero_points() && !self.shared && self.swapped {
            2
        } else {
            1
        }
    }

    pub(crate) fn zero_index(&self) -> Option<u32> {
        self.has_zero_points()
            .then_some(if self.shared || self.swapped { 1 } else { 2 })
    }

    /// Parameter entries: `shape[axis]` channels, or `num_blocks`
    /// (`quantization/per-block-affine.md` § Block Layout).
    pub(crate) fn entries(&self) -> u64 {
        match self.scheme {
            Scheme::PerTensor => 0,
            Scheme::PerChannel => self.shape[self.axis],
            _ => {
                let others: u64 = (0..self.shape.len())
                    .filter(|&k| k != self.axis)
                    .map(|k| self.shape[k])
                    .product();
                self.shape[self.axis].div_ceil(self.block) * others
            }
        }
    }

    /// The shape the contiguous layouts store: `shape[axis]` rounded up to
    /// whole blocks for per-block and NF4 (§ Padding).
    pub(crate) fn storage_shape(&self) -> Vec<u64> {
        let mut s = self.shape.clone();
        if self.scheme.pads() && matches!(self.layout, QLay::RowMajor | QLay::ColumnMajor) {
            s[self.axis] = s[self.axis].div_ceil(self.block) * self.block;
        }
        s
    }

    /// The channel (per-channel) or block (`b = outer * num_blocks_per_axis
    /// + floor(i_axis / K)`, `outer` row-major over the other dimensions) of
    /// `index`.
    pub(crate) fn group(&self, index: &[u64]) -> u64 {
        match self.scheme {
            Scheme::PerTensor => 0,
            Scheme::PerChannel => index[self.axis],
            _ => {
                let mut outer = 0u64;
                for (k, (&i, &n)) in index.iter().zip(&self.shape).enumerate() {
                    if k != self.axis {
                        outer = outer * n + i;
                    }
                }
                outer * self.shape[self.axis].div_ceil(self.block) + index[self.axis] / self.block
            }
        }
    }
}

/// A finite float pattern of the format (non-zero; for NF4 non-negative,
/// +0.0 allowed: `quantization/nf4.md` § Validity Constraints).
pub(crate) fn scale_pattern(state: &mut u64, ty: Ty, nf4: bool) -> u128 {
    if ty == Ty::Float8E8m0 {
        // 0x01..=0xFE, often the extremes.
        return match next(state) % 6 {
            0 => 0x01,
            1 => 0xFE,
            2 => 0x7F,
            _ => 1 + u128::from(next(state) % 254),
        };
    }
    let (e_bits, m_bits) = match ty {
        Ty::Float32 => (8, 23),
        Ty::Float16 => (5, 10),
        Ty::Bfloat16 => (8, 7),
        _ => unreachable!(),
    };
    let sign = 1u128 << (e_bits + m_bits);
    loop {
        let mut p = float_pattern(state, e_bits, m_bits);
        if (p >> m_bits) & ((1 << e_bits) - 1) == (1 << e_bits) - 1 {
            continue;
        }
        if nf4 {
            p &= !sign;
        }
        if p & !sign == 0 && !nf4 {
            continue;
        }
        return p;
    }
}

/// A value in `[lo, hi]`, often an end.
pub(crate) fn pick_in(state: &mut u64, lo: i64, hi: i64) -> i64 {
    match next(state) % 5 {
        0 => lo,
        1 => hi,
        _ => lo + (next(state) % ((hi - lo) as u64 + 1)) as i64,
    }
}
