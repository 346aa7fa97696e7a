//! Pieces of the spec models shared by the property tests
//! (`file_format.rs`, `dense_layouts.rs`, `sparse_layouts.rs`,
//! `quantized.rs`, each declaring it under its `mod support`): minifloat
//! decoding from sign, exponent and mantissa (`element-types.md`), value
//! comparison, index walks, a seeded generator, row- and column-major
//! strides and Morton codes (`layouts/*.md`).
#![allow(dead_code)] // each test file uses its own subset

use std::fmt;

use hurray_reader::Value;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// A sign-exponent-mantissa value without special patterns: subnormal when
/// the exponent is 0 (`(m / 2^man) * 2^(1 - bias)`), normal otherwise.
pub(crate) fn minifloat(bits: u32, exp_bits: u32, man_bits: u32, bias: i32) -> f64 {
    let sign = if (bits >> (exp_bits + man_bits)) & 1 == 1 {
        -1.0
    } else {
        1.0
    };
    let e = (bits >> man_bits) & ((1 << exp_bits) - 1);
    let fraction = f64::from(bits & ((1 << man_bits) - 1)) / f64::from(1u32 << man_bits);
    let magnitude = if e == 0 {
        fraction * 2f64.powi(1 - bias)
    } else {
        (1.0 + fraction) * 2f64.powi(e as i32 - bias)
    };
    sign * magnitude
}

/// As [`minifloat`], with the IEEE all-ones exponent: infinity or NaN.
pub(crate) fn ieee_minifloat(bits: u32, exp_bits: u32, man_bits: u32, bias: i32) -> f64 {
    let e = (bits >> man_bits) & ((1 << exp_bits) - 1);
    if e == (1 << exp_bits) - 1 {
        let negative = (bits >> (exp_bits + man_bits)) & 1 == 1;
        return match (bits & ((1 << man_bits) - 1), negative) {
            (0, false) => f64::INFINITY,
            (0, true) => f64::NEG_INFINITY,
            _ => f64::NAN,
        };
    }
    minifloat(bits, exp_bits, man_bits, bias)
}

/// Equal values: floats by bit pattern (so -0.0 differs from 0.0), any NaN
/// equal to any NaN (a NaN's payload after widening to `f64` is not what
/// this test is about).
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => same_float(*x, *y),
        (Value::Complex { re: a, im: b }, Value::Complex { re: c, im: d }) => same_float(*a, *c) && same_float(*b, *d),
        _ => a == b,
    }
}

/// Equal floats as [`same`] compares them: by bit pattern, any NaN equal to
/// any NaN.
pub(crate) fn same_float(x: f64, y: f64) -> bool {
    x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
}

/// Every index of `shape`, last dimension fastest.
pub(crate) fn all_indices(shape: &[u64]) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    if count(shape) == 0 {
        return out;
    }
    let mut index = vec![0u64; shape.len()];
    loop {
        out.push(index.clone());
        let mut k = shape.len();
        loop {
            if k == 0 {
                return out;
            }
            k -= 1;
            index[k] += 1;
            if index[k] < shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

pub(crate) fn count(shape: &[u64]) -> u64 {
    shape.iter().product()
}

pub(crate) fn fail(what: impl fmt::Display) -> TestCaseError {
    TestCaseError::fail(what.to_string())
}

/// splitmix64: element values from the case's seed.
pub(crate) fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub(crate) fn permutation(rank: usize) -> impl Strategy<Value = Vec<usize>> {
    Just((0..rank).collect::<Vec<_>>()).prop_shuffle()
}

/// Cases per property: `PROPTEST_CASES` when set, else `default`.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// `layouts/row-major.md` § Implicit Strides.
pub(crate) fn row_major_strides(shape: &[u64]) -> Vec<i128> {
    let mut strides = vec![1i128; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = i128::from(shape[i + 1]) * strides[i + 1];
    }
    strides
}

/// `layouts/column-major.md` § Implicit Strides.
pub(crate) fn column_major_strides(shape: &[u64]) -> Vec<i128> {
    let mut strides = vec![1i128; shape.len()];
    for i in 1..shape.len() {
        strides[i] = i128::from(shape[i - 1]) * strides[i - 1];
    }
    strides
}

/// `sum(index[k] * strides[k])`.
pub(crate) fn dot(index: &[u64], strides: &[i128]) -> i128 {
    index.iter().zip(strides).map(|(&i, &s)| i128::from(i) * s).sum()
}

/// `layouts/morton.md` § Morton Index Computation.
pub(crate) fn morton(index: &[u64], bits: &[u32]) -> u64 {
    let rank = index.len() as u32;
    let mut code = 0u64;
    for b in 0..bits.iter().copied().max().unwrap_or(0) {
        for (d, (&i, &bd)) in index.iter().zip(bits).enumerate() {
            if b < bd {
                code |= ((i >> b) & 1) << (b * rank + d as u32);
            }
        }
    }
    code
}

/// Bits to hold `0..n` (at least 1).
pub(crate) fn bits_needed(n: u64) -> u32 {
    if n <= 1 {
        1
    } else {
        64 - (n - 1).leading_zeros()
    }
}
