//! Element types (`element-types.md`; `metadata.md` § Extension Type
//! Section): tags, widths, and each element's value decoded as the spec
//! defines it.

use hurray_reader::Value;

/// The extension type section, field by field (20 bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ext {
    pub(crate) tag: u8,
    pub(crate) bit_width: u32,
    pub(crate) is_float: u8,
    pub(crate) is_signed: u8,
    pub(crate) sign_bits: u8,
    pub(crate) exponent_bits: u8,
    pub(crate) mantissa_bits: u8,
    pub(crate) exponent_bias: u32,
    pub(crate) has_nan: u8,
    pub(crate) has_inf: u8,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Dt {
    F32,
    F64,
    Bf16,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Ext(Ext),
}

pub(crate) const BUILT_IN: [Dt; 11] = [
    Dt::F32,
    Dt::F64,
    Dt::Bf16,
    Dt::I8,
    Dt::U8,
    Dt::I16,
    Dt::U16,
    Dt::I32,
    Dt::U32,
    Dt::I64,
    Dt::U64,
];

impl Dt {
    pub(crate) fn tag(self) -> u8 {
        match self {
            Dt::Bf16 => 0x02,
            Dt::F32 => 0x03,
            Dt::F64 => 0x04,
            Dt::I8 => 0x10,
            Dt::U8 => 0x11,
            Dt::I16 => 0x12,
            Dt::U16 => 0x13,
            Dt::I32 => 0x14,
            Dt::U32 => 0x15,
            Dt::I64 => 0x16,
            Dt::U64 => 0x17,
            Dt::Ext(e) => e.tag,
        }
    }

    /// Bytes per element.
    pub(crate) fn width(self) -> usize {
        match self {
            Dt::I8 | Dt::U8 => 1,
            Dt::Bf16 | Dt::I16 | Dt::U16 => 2,
            Dt::F32 | Dt::I32 | Dt::U32 => 4,
            Dt::F64 | Dt::I64 | Dt::U64 => 8,
            Dt::Ext(e) => (e.bit_width / 8) as usize,
        }
    }

    /// One element's little-endian bytes, decoded as the spec defines the type.
    pub(crate) fn decode(self, b: &[u8]) -> Value {
        let mut le = [0u8; 16];
        le[..b.len()].copy_from_slice(b);
        let u = u128::from_le_bytes(le);
        match self {
            Dt::F32 => Value::Float(f64::from(f32::from_bits(u as u32))),
            Dt::F64 => Value::Float(f64::from_bits(u as u64)),
            // bfloat16: the high half of a binary32.
            Dt::Bf16 => Value::Float(f64::from(f32::from_bits((u as u32) << 16))),
            Dt::I8 => Value::Int(i64::from(u as u8 as i8)),
            Dt::I16 => Value::Int(i64::from(u as u16 as i16)),
            Dt::I32 => Value::Int(i64::from(u as u32 as i32)),
            Dt::I64 => Value::Int(u as u64 as i64),
            Dt::U8 | Dt::U16 | Dt::U32 | Dt::U64 => Value::UInt(u as u64),
            // A private type: the reader hands out its raw bits.
            Dt::Ext(_) => Value::Bits(u),
        }
    }

    pub(crate) fn is_quantizable(self) -> bool {
        // quantization/per-tensor-affine.md § Valid Storage Types (whole-byte ones).
        matches!(self, Dt::I8 | Dt::U8 | Dt::I16 | Dt::U16 | Dt::I32 | Dt::U32)
    }

    pub(crate) fn range(self) -> (i64, i64) {
        match self {
            Dt::I8 => (-128, 127),
            Dt::U8 => (0, 255),
            Dt::I16 => (-32768, 32767),
            Dt::U16 => (0, 65535),
            Dt::I32 => (i64::from(i32::MIN), i64::from(i32::MAX)),
            _ => (0, i64::from(i32::MAX)),
        }
    }
}

/// Runs `$body` with `$T` the Rust element type of a built-in `Dt`
/// (`None` for extension types).
macro_rules! with_type {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            Dt::F32 => {
                type $T = f32;
                Some($body)
            }
            Dt::F64 => {
                type $T = f64;
                Some($body)
            }
            Dt::Bf16 => {
                type $T = hurray_reader::half::bf16;
                Some($body)
            }
            Dt::I8 => {
                type $T = i8;
                Some($body)
            }
            Dt::U8 => {
                type $T = u8;
                Some($body)
            }
            Dt::I16 => {
                type $T = i16;
                Some($body)
            }
            Dt::U16 => {
                type $T = u16;
                Some($body)
            }
            Dt::I32 => {
                type $T = i32;
                Some($body)
            }
            Dt::U32 => {
                type $T = u32;
                Some($body)
            }
            Dt::I64 => {
                type $T = i64;
                Some($body)
            }
            Dt::U64 => {
                type $T = u64;
                Some($body)
            }
            Dt::Ext(_) => None,
        }
    };
}
pub(crate) use with_type;
