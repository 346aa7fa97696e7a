//! Optional descriptor sections (`metadata.md` § Shard Section, § Statistics
//! Section, § Extension Type Section, § Composite Member Section).

use hurray_format::descriptor::{member_role, statistics_mask};

use crate::element_type::Packing;
use crate::error::{Error, Result};
use crate::num::Enc;

/// Shard section: where this tensor sits inside a larger parent tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    /// Shape of the parent tensor (length `rank`).
    pub parent_shape: Vec<u64>,
    /// Index of this shard's first element in the parent, per dimension
    /// (length `rank`).
    pub shard_offset: Vec<u64>,
}

impl Shard {
    /// A shard at `shard_offset` inside a parent of shape `parent_shape`.
    pub fn new(parent_shape: Vec<u64>, shard_offset: Vec<u64>) -> Self {
        Self {
            parent_shape,
            shard_offset,
        }
    }

    pub(crate) fn encode(&self, enc: &mut Enc) {
        enc.u64s(&self.parent_shape);
        enc.u64s(&self.shard_offset);
    }
}

/// Statistics section: 72 bytes of advisory facts about the data.
///
/// A field counts only when its bit is set in `computed_mask`; the setters
/// set the bit for you.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Statistics {
    /// Which fields are valid (bits 0–5; see the `*_VALID` constants).
    pub computed_mask: u32,
    /// Bytes 4–7; must be 0 in a valid file.
    pub reserved: u32,
    /// Number of non-zero elements.
    pub nnz: u64,
    /// Fraction of zero elements, in `[0, 1]`.
    pub sparsity_ratio: f64,
    /// Smallest value (as `f64`).
    pub value_min: f64,
    /// Largest value (as `f64`).
    pub value_max: f64,
    /// Largest absolute value.
    pub value_abs_max: f64,
    /// Mean of all elements.
    pub value_mean: f64,
    /// Population standard deviation (>= 0).
    pub value_stddev: f64,
    /// N of an N:M sparsity pattern.
    pub nm_n: u8,
    /// M of an N:M sparsity pattern (>= `nm_n`).
    pub nm_m: u8,
    /// `1` if a NaN is present.
    pub has_nan: u8,
    /// `1` if an infinity is present.
    pub has_inf: u8,
    /// Bytes 68–71; must be 0 in a valid file.
    pub reserved2: [u8; 4],
}

impl Statistics {
    /// Encoded size in bytes.
    pub const ENCODED_LEN: u64 = 72;
    /// `computed_mask` bit: `nnz` is valid.
    pub const NNZ_VALID: u32 = statistics_mask::NNZ_VALID;
    /// `computed_mask` bit: `sparsity_ratio` is valid.
    pub const SPARSITY_VALID: u32 = statistics_mask::SPARSITY_VALID;
    /// `computed_mask` bit: `value_min`, `value_max`, `value_abs_max` are valid.
    pub const VALUE_RANGE_VALID: u32 = statistics_mask::VALUE_RANGE_VALID;
    /// `computed_mask` bit: `value_mean`, `value_stddev` are valid.
    pub const VALUE_STATS_VALID: u32 = statistics_mask::VALUE_STATS_VALID;
    /// `computed_mask` bit: `nm_n`, `nm_m` are valid.
    pub const NM_SPARSITY_VALID: u32 = statistics_mask::NM_SPARSITY_VALID;
    /// `computed_mask` bit: `has_nan`, `has_inf` are valid.
    pub const NAN_INF_VALID: u32 = statistics_mask::NAN_INF_VALID;

    /// Sets `nnz` and marks it valid.
    #[must_use]
    pub fn with_nnz(mut self, nnz: u64) -> Self {
        self.nnz = nnz;
        self.computed_mask |= Self::NNZ_VALID;
        self
    }

    /// Sets `sparsity_ratio` and marks it valid.
    #[must_use]
    pub fn with_sparsity_ratio(mut self, ratio: f64) -> Self {
        self.sparsity_ratio = ratio;
        self.computed_mask |= Self::SPARSITY_VALID;
        self
    }

    /// Sets `value_min`, `value_max` and `value_abs_max` (derived) and marks
    /// them valid.
    #[must_use]
    pub fn with_value_range(mut self, min: f64, max: f64) -> Self {
        self.value_min = min;
        self.value_max = max;
        self.value_abs_max = min.abs().max(max.abs());
        self.computed_mask |= Self::VALUE_RANGE_VALID;
        self
    }

    /// Sets `value_mean` and `value_stddev` and marks them valid.
    #[must_use]
    pub fn with_value_stats(mut self, mean: f64, stddev: f64) -> Self {
        self.value_mean = mean;
        self.value_stddev = stddev;
        self.computed_mask |= Self::VALUE_STATS_VALID;
        self
    }

    /// Sets the N:M pattern and marks it valid.
    #[must_use]
    pub fn with_nm_sparsity(mut self, n: u8, m: u8) -> Self {
        self.nm_n = n;
        self.nm_m = m;
        self.computed_mask |= Self::NM_SPARSITY_VALID;
        self
    }

    /// Sets `has_nan` / `has_inf` and marks them valid.
    #[must_use]
    pub fn with_nan_inf(mut self, has_nan: bool, has_inf: bool) -> Self {
        self.has_nan = u8::from(has_nan);
        self.has_inf = u8::from(has_inf);
        self.computed_mask |= Self::NAN_INF_VALID;
        self
    }

    pub(crate) fn encode(&self, enc: &mut Enc) {
        enc.u32(self.computed_mask);
        enc.u32(self.reserved);
        enc.u64(self.nnz);
        enc.f64(self.sparsity_ratio);
        enc.f64(self.value_min);
        enc.f64(self.value_max);
        enc.f64(self.value_abs_max);
        enc.f64(self.value_mean);
        enc.f64(self.value_stddev);
        enc.u8(self.nm_n);
        enc.u8(self.nm_m);
        enc.u8(self.has_nan);
        enc.u8(self.has_inf);
        enc.bytes(&self.reserved2);
    }

    /// Checks the section against `metadata.md` § Statistics Section.
    ///
    /// # Errors
    /// [`Error::InvalidField`] / [`Error::InvalidFloatField`] naming the field.
    pub fn validate(&self) -> Result<()> {
        const RULE: &str = "metadata.md § Statistics Section";
        let bad = |what, value: u64| {
            Err(Error::InvalidField {
                what,
                value,
                rule: RULE,
            })
        };
        if self.computed_mask & !0x3F != 0 {
            return bad("computed_mask", u64::from(self.computed_mask));
        }
        if self.reserved != 0 {
            return bad("statistics _reserved", u64::from(self.reserved));
        }
        if self.reserved2 != [0; 4] {
            return bad("statistics _reserved2", u64::from(u32::from_le_bytes(self.reserved2)));
        }
        if self.computed_mask & Self::SPARSITY_VALID != 0 && !(0.0..=1.0).contains(&self.sparsity_ratio) {
            return Err(Error::InvalidFloatField {
                what: "sparsity_ratio",
                value: self.sparsity_ratio,
                rule: RULE,
            });
        }
        if self.computed_mask & Self::VALUE_STATS_VALID != 0
            && self.value_stddev.partial_cmp(&0.0).is_none_or(|o| o.is_lt())
        {
            return Err(Error::InvalidFloatField {
                what: "value_stddev",
                value: self.value_stddev,
                rule: RULE,
            });
        }
        if self.computed_mask & Self::NM_SPARSITY_VALID != 0 && self.nm_n > self.nm_m {
            return bad("nm_n", u64::from(self.nm_n));
        }
        if self.computed_mask & Self::NAN_INF_VALID != 0 {
            if self.has_nan > 1 {
                return bad("has_nan", u64::from(self.has_nan));
            }
            if self.has_inf > 1 {
                return bad("has_inf", u64::from(self.has_inf));
            }
        }
        Ok(())
    }
}

/// Extension type section (20 bytes): how to size a private element type
/// (`type_tag` `0xF0`–`0xFE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExtensionType {
    /// Bits per element (> 0).
    pub bit_width: u32,
    /// Elements per byte: 1 when `bit_width >= 8`, else `8 / bit_width`.
    pub packing_factor: u8,
    /// `1` for a floating-point type.
    pub is_float: u8,
    /// `1` for a signed integer type.
    pub is_signed: u8,
    /// Sign bits of a float type (0 or 1).
    pub sign_bits: u8,
    /// Exponent bits of a float type.
    pub exponent_bits: u8,
    /// Mantissa bits of a float type.
    pub mantissa_bits: u8,
    /// Bytes 10–11; must be 0 in a valid file.
    pub reserved: [u8; 2],
    /// Exponent bias of a float type.
    pub exponent_bias: u32,
    /// `1` if NaN is representable.
    pub has_nan: u8,
    /// `1` if infinity is representable.
    pub has_inf: u8,
    /// Bytes 18–19; must be 0 in a valid file.
    pub reserved2: [u8; 2],
}

impl ExtensionType {
    /// Encoded size in bytes.
    pub const ENCODED_LEN: u64 = 20;

    /// An unsigned or signed integer extension type of `bit_width` bits
    /// (1, 2, 4 or a multiple of 8).
    pub fn integer(bit_width: u32, signed: bool) -> Self {
        Self {
            bit_width,
            packing_factor: if bit_width >= 8 {
                1
            } else {
                u8::try_from(8u32.checked_div(bit_width).unwrap_or(0)).unwrap_or(0)
            },
            is_signed: u8::from(signed),
            ..Self::default()
        }
    }

    pub(crate) fn encode(&self, enc: &mut Enc) {
        enc.u32(self.bit_width);
        enc.u8(self.packing_factor);
        enc.u8(self.is_float);
        enc.u8(self.is_signed);
        enc.u8(self.sign_bits);
        enc.u8(self.exponent_bits);
        enc.u8(self.mantissa_bits);
        enc.bytes(&self.reserved);
        enc.u32(self.exponent_bias);
        enc.u8(self.has_nan);
        enc.u8(self.has_inf);
        enc.bytes(&self.reserved2);
    }

    /// Packing implied by `bit_width`: whole bytes (`ceil(bit_width / 8)` per
    /// element) from 8 bits up, else `8 / bit_width` per byte.
    pub fn packing(&self) -> Packing {
        if self.bit_width >= 8 {
            Packing::Whole {
                bytes: u64::from(self.bit_width.div_ceil(8)),
            }
        } else {
            Packing::SubByte { bits: self.bit_width }
        }
    }

    /// Checks the section against `metadata.md` § Extension Type Section.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the field.
    pub fn validate(&self) -> Result<()> {
        const RULE: &str = "metadata.md § Extension Type Section";
        let bad = |what, value: u64| {
            Err(Error::InvalidField {
                what,
                value,
                rule: RULE,
            })
        };
        let width = self.bit_width;
        if width == 0 || (width < 8 && !matches!(width, 1 | 2 | 4)) {
            return bad("bit_width", u64::from(width));
        }
        let factor_ok = if width >= 8 {
            self.packing_factor == 1
        } else {
            u32::from(self.packing_factor).checked_mul(width) == Some(8)
        };
        if !factor_ok {
            return bad("packing_factor", u64::from(self.packing_factor));
        }
        if self.is_float > 1 {
            return bad("is_float", u64::from(self.is_float));
        }
        if self.is_float == 1 {
            if self.is_signed != 0 {
                return bad("is_signed", u64::from(self.is_signed));
            }
            if self.sign_bits > 1 {
                return bad("sign_bits", u64::from(self.sign_bits));
            }
        } else {
            if self.is_signed > 1 {
                return bad("is_signed", u64::from(self.is_signed));
            }
            for (what, value) in [
                ("sign_bits", self.sign_bits),
                ("exponent_bits", self.exponent_bits),
                ("mantissa_bits", self.mantissa_bits),
            ] {
                if value != 0 {
                    return bad(what, u64::from(value));
                }
            }
            if self.exponent_bias != 0 {
                return bad("exponent_bias", u64::from(self.exponent_bias));
            }
        }
        if self.reserved != [0; 2] {
            return bad("extension _reserved", u64::from(u16::from_le_bytes(self.reserved)));
        }
        if self.reserved2 != [0; 2] {
            return bad("extension _reserved2", u64::from(u16::from_le_bytes(self.reserved2)));
        }
        Ok(())
    }
}

/// Composite member section (16 bytes), carried by overlay members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompositeMember {
    /// `0x00` correction, `0x01` base.
    pub member_role: u8,
    /// Bytes 1–15; must be 0 in a valid file.
    pub reserved: [u8; 15],
}

impl CompositeMember {
    /// Encoded size in bytes.
    pub const ENCODED_LEN: u64 = 16;
    /// `member_role` of a correction member.
    pub const CORRECTION: u8 = member_role::CORRECTION;
    /// `member_role` of the base member.
    pub const BASE: u8 = member_role::BASE;

    /// The section of an overlay's base member.
    pub const fn base() -> Self {
        Self {
            member_role: Self::BASE,
            reserved: [0; 15],
        }
    }

    /// The section of an overlay correction member.
    pub const fn correction() -> Self {
        Self {
            member_role: Self::CORRECTION,
            reserved: [0; 15],
        }
    }

    pub(crate) fn encode(&self, enc: &mut Enc) {
        enc.u8(self.member_role);
        enc.bytes(&self.reserved);
    }

    /// Checks the section against `metadata.md` § Composite Member Section.
    ///
    /// # Errors
    /// [`Error::InvalidField`] naming the field.
    pub fn validate(&self) -> Result<()> {
        const RULE: &str = "metadata.md § Composite Member Section";
        if self.member_role > 1 {
            return Err(Error::InvalidField {
                what: "member_role",
                value: u64::from(self.member_role),
                rule: RULE,
            });
        }
        if let Some(&b) = self.reserved.iter().find(|&&b| b != 0) {
            return Err(Error::InvalidField {
                what: "composite member _reserved",
                value: u64::from(b),
                rule: RULE,
            });
        }
        Ok(())
    }
}
