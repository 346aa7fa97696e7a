//! Each type's value decoded from its bits as `element-types.md` defines
//! it: sign, exponent and mantissa fields, biases, NaN and infinity rules,
//! two's complement. Nothing of the reader's decoding is called.

use hurray_reader::Value;

use super::types::Ty;

/// `x * 2^e`, exact whenever the result is representable: scaled in steps
/// that stay normal.
pub(crate) fn ldexp(x: f64, e: i32) -> f64 {
    let (mut x, mut e) = (x, e);
    while e > 1000 {
        x *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        x *= 2f64.powi(-1000);
        e += 1000;
    }
    x * 2f64.powi(e)
}

/// A sign-exponent-mantissa value without special patterns: subnormal
/// `(m / 2^M) * 2^(1 - bias)` when the exponent field is 0, normal
/// `(1 + m / 2^M) * 2^(E - bias)` otherwise; the sign applies to zero too
/// (-0.0).
pub(crate) fn sem(bits: u128, e_bits: u32, m_bits: u32, bias: i32) -> f64 {
    let m = (bits & ((1u128 << m_bits) - 1)) as u64;
    let e = ((bits >> m_bits) & ((1u128 << e_bits) - 1)) as i32;
    let negative = (bits >> (e_bits + m_bits)) & 1 == 1;
    let magnitude = if e == 0 {
        ldexp(m as f64, 1 - bias - m_bits as i32)
    } else {
        ldexp((m | 1u64 << m_bits) as f64, e - bias - m_bits as i32)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// An IEEE 754 binary format (bias `2^(E-1) - 1`): the all-ones exponent
/// is infinity (mantissa 0) or NaN.
pub(crate) fn ieee(bits: u128, e_bits: u32, m_bits: u32) -> f64 {
    let e = (bits >> m_bits) & ((1u128 << e_bits) - 1);
    if e == (1u128 << e_bits) - 1 {
        let negative = (bits >> (e_bits + m_bits)) & 1 == 1;
        return match (bits & ((1u128 << m_bits) - 1) == 0, negative) {
            (true, false) => f64::INFINITY,
            (true, true) => f64::NEG_INFINITY,
            _ => f64::NAN,
        };
    }
    sem(bits, e_bits, m_bits, (1 << (e_bits - 1)) - 1)
}

/// The value of bit pattern `bits` of `ty`, from `element-types.md`;
/// `None` for the patterns it reserves (`float8_e8m0` `0x00` and `0xFF`).
pub(crate) fn spec_value(ty: Ty, bits: u128) -> Option<Value> {
    let width = ty.bits();
    let signed = || ((bits << (128 - width)) as i128 >> (128 - width)) as i64;
    Some(match ty {
        // § float16: 1-5-10, IEEE binary16.
        Ty::Float16 => Value::Float(ieee(bits, 5, 10)),
        // § bfloat16: 1-8-7, the exponent range of float32.
        Ty::Bfloat16 => Value::Float(ieee(bits, 8, 7)),
        Ty::Float32 => Value::Float(ieee(bits, 8, 23)),
        Ty::Float64 => Value::Float(ieee(bits, 11, 52)),
        _ if ty.is_signed_int() => Value::Int(signed()),
        _ if ty.is_unsigned_int() => Value::UInt(bits as u64),
        // § Boolean Type: 1 true, 0 false.
        Ty::Bool => Value::Bool(bits == 1),
        // § Float8 Variants: bias 7, NaN 0x7F and 0xFF, no infinities (the
        // exponent 1111 is a normal binade up to 0x7E = 448).
        Ty::Float8E4m3 => Value::Float(if bits & 0x7F == 0x7F {
            f64::NAN
        } else {
            sem(bits, 4, 3, 7)
        }),
        // Bias 15, infinities 0x7C / 0xFC, NaN exponent all ones and
        // mantissa non-zero.
        Ty::Float8E5m2 => Value::Float(ieee(bits, 5, 2)),
        // 2^(bits - 127) for 0x01..=0xFE; 0x00 and 0xFF reserved.
        Ty::Float8E8m0 => match bits {
            0x00 | 0xFF => return None,
            b => Value::Float(ldexp(1.0, b as i32 - 127)),
        },
        // § Sub-Byte Floating-Point Types: bias 1, 3 and 1; no NaN or
        // infinity in any of them.
        Ty::Float4E2m1 => Value::Float(sem(bits, 2, 1, 1)),
        Ty::Float6E2m3 => Value::Float(sem(bits, 2, 3, 1)),
        Ty::Float6E3m2 => Value::Float(sem(bits, 3, 2, 3)),
        // No f64 holds a binary128; the reader hands out the raw bits.
        Ty::Float128 => Value::Bits(bits),
        // § Complex Types: real part first.
        Ty::Complex64 => Value::Complex {
            re: ieee(bits & 0xFFFF_FFFF, 8, 23),
            im: ieee((bits >> 32) & 0xFFFF_FFFF, 8, 23),
        },
        Ty::Complex128 => Value::Complex {
            re: ieee(bits & u128::from(u64::MAX), 11, 52),
            im: ieee(bits >> 64, 11, 52),
        },
        _ => unreachable!("{ty:?}"),
    })
}
