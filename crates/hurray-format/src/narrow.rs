//! Scalar decoding of the narrow float formats (`element-types.md` §
//! Tier 2 -- Extended Types › Sub-Byte Floating-Point Types and § 8-bit
//! Floating-Point Types): one code (the element's bits, in the low bits of
//! a byte) to the `f32` it encodes.

/// Value of a small float with the given exponent and mantissa fields:
/// `(1 + m / 2^mbits) * 2^(e - bias)` for normal numbers and
/// `(m / 2^mbits) * 2^(1 - bias)` when `e = 0` (subnormal).
fn small_float(sign: bool, exponent: u8, mantissa: u8, mantissa_bits: u32, bias: i32) -> f32 {
    let scale = f32::from(1u16 << mantissa_bits);
    let m = f32::from(mantissa) / scale;
    let magnitude = if exponent == 0 {
        m * 2f32.powi(1 - bias)
    } else {
        (1.0 + m) * 2f32.powi(i32::from(exponent) - bias)
    };
    if sign {
        -magnitude
    } else {
        magnitude
    }
}

/// `float4_e2m1`: 1 sign, 2 exponent, 1 mantissa bit, bias 1; no NaN or infinity.
pub fn float4_e2m1_to_f32(code: u8) -> f32 {
    small_float(code & 0x8 != 0, (code >> 1) & 0x3, code & 0x1, 1, 1)
}

/// `float6_e2m3`: 1 sign, 2 exponent, 3 mantissa bits, bias 1.
pub fn float6_e2m3_to_f32(code: u8) -> f32 {
    small_float(code & 0x20 != 0, (code >> 3) & 0x3, code & 0x7, 3, 1)
}

/// `float6_e3m2`: 1 sign, 3 exponent, 2 mantissa bits, bias 3.
pub fn float6_e3m2_to_f32(code: u8) -> f32 {
    small_float(code & 0x20 != 0, (code >> 2) & 0x7, code & 0x3, 2, 3)
}

/// `float8_e4m3` (OCP OFP8): bias 7, NaN at `0x7F`/`0xFF`, no infinity.
pub fn float8_e4m3_to_f32(code: u8) -> f32 {
    if code & 0x7F == 0x7F {
        return f32::NAN;
    }
    small_float(code & 0x80 != 0, (code >> 3) & 0xF, code & 0x7, 3, 7)
}

/// `float8_e5m2` (OCP OFP8): bias 15, IEEE-style infinities and NaNs.
pub fn float8_e5m2_to_f32(code: u8) -> f32 {
    let sign = code & 0x80 != 0;
    let exponent = (code >> 2) & 0x1F;
    let mantissa = code & 0x3;
    match (exponent, mantissa) {
        (0x1F, 0) if sign => f32::NEG_INFINITY,
        (0x1F, 0) => f32::INFINITY,
        (0x1F, _) => f32::NAN,
        _ => small_float(sign, exponent, mantissa, 2, 15),
    }
}

/// `float8_e8m0`: `2^(bits - 127)`; the reserved patterns `0x00` and `0xFF` are NaN.
pub fn float8_e8m0_to_f32(code: u8) -> f32 {
    match code {
        0x00 | 0xFF => f32::NAN,
        _ => 2f32.powi(i32::from(code) - 127),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_floats_decode() {
        // float6_e2m3 codes from the bug13g case: [1.0, 1.5, -2.0, 3.0, 0.5].
        let got: Vec<f32> = [0x08, 0x0C, 0x30, 0x14, 0x04].map(float6_e2m3_to_f32).to_vec();
        assert_eq!(got, vec![1.0, 1.5, -2.0, 3.0, 0.5]);
        assert_eq!(float6_e2m3_to_f32(0x1F), 7.5);
        assert_eq!(float6_e3m2_to_f32(0x1F), 28.0);
        assert_eq!(float4_e2m1_to_f32(0x7), 6.0);
        assert_eq!(float4_e2m1_to_f32(0x1), 0.5);
        assert_eq!(float4_e2m1_to_f32(0xF), -6.0);
        assert_eq!(float8_e4m3_to_f32(0x7E), 448.0);
        assert!(float8_e4m3_to_f32(0xFF).is_nan());
        assert_eq!(float8_e5m2_to_f32(0x7C), f32::INFINITY);
        assert_eq!(float8_e5m2_to_f32(0x7B), 57344.0);
        assert_eq!(float8_e8m0_to_f32(127), 1.0);
        assert!(float8_e8m0_to_f32(0).is_nan());
    }
}
