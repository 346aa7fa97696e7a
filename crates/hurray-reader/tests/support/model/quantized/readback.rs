//! Element types read back: bit patterns (all of a narrow type's, biased
//! ones of a wide type's), a file of them, and every element through each
//! way the reader offers, against `decode`.

use std::fmt;

use hurray_reader::half::{bf16, f16};
use hurray_reader::{
    float4_e2m1_to_f32, float6_e2m3_to_f32, float6_e3m2_to_f32, float8_e4m3_to_f32, float8_e5m2_to_f32,
    float8_e8m0_to_f32, Complex, Element, Float8E4m3, Float8E5m2, Float8E8m0, HurrayFile, Options, Tensor, Value,
};
use hurray_writer::{BufferData, BufferHandle, TensorDescriptor};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::super::basics::{fail, next, same};
use super::decode::spec_value;
use super::files::write_checked;
use super::types::Ty;

/// Equal floats: same bit pattern (so -0.0 differs from 0.0), or both NaN
/// (payloads are checked on the typed slices, not after widening).
/// Every pattern of `ty` the spec allows in data, each at every position of
/// its byte or group (the other positions 0), then one more element so the
/// last byte or group has unused bits.
pub(crate) fn narrow_sequence(ty: Ty) -> Vec<u128> {
    let patterns: Vec<u128> = (0..1u128 << ty.bits())
        .filter(|&b| spec_value(ty, b).is_some())
        .collect();
    let group = ty.packing().group();
    let mut seq = Vec::new();
    for &p in &patterns {
        for slot in 0..group {
            seq.extend((0..group).map(|k| if k == slot { p } else { 0 }));
        }
    }
    if group > 1 {
        seq.push(*patterns.last().unwrap());
    }
    seq
}

/// A row-major `[n]` tensor holding `seq`, and its buffer.
pub(crate) fn dense_of(ty: Ty, seq: &[u128]) -> (TensorDescriptor, Vec<u8>) {
    let packing = ty.packing();
    let mut buf = vec![0u8; packing.bytes_for(seq.len() as u64) as usize];
    for (i, &bits) in seq.iter().enumerate() {
        packing.place(&mut buf, i as u64, bits);
    }
    let d = TensorDescriptor::new(ty.writer(), hurray_writer::Layout::RowMajor, vec![seq.len() as u64])
        .with_buffer(BufferHandle::new(buf.len() as u64));
    (d, buf)
}

/// The typed slice of buffer 0, bit for bit.
pub(crate) fn typed<T: Element + fmt::Debug>(
    t: &Tensor<'_>,
    seq: &[u128],
    bits: fn(&T) -> u128,
) -> Result<(), TestCaseError> {
    let slice = t
        .buffer(0)
        .and_then(|b| b.as_slice::<T>())
        .map_err(|e| fail(format!("reader: as_slice::<{}>: {e}", std::any::type_name::<T>())))?;
    prop_assert_eq!(slice.len(), seq.len());
    for (i, (v, &expected)) in slice.iter().zip(seq).enumerate() {
        prop_assert_eq!(bits(v), expected, "element {} reads {:?} in the typed slice", i, v);
    }
    Ok(())
}

/// Every element of tensor `name` (holding `seq`) read every way the reader
/// offers, against the spec's value.
pub(crate) fn check_decoded(file: &HurrayFile<'_>, name: &str, ty: Ty, seq: &[u128]) -> Result<(), TestCaseError> {
    let t = file.tensor(name).map_err(|e| fail(format!("reader: tensor: {e}")))?;
    let et = t.element_type().ok_or_else(|| fail("reader: no element type"))?;
    prop_assert_eq!(et.tag(), ty.tag());
    let buffer = *t.buffer(0).map_err(|e| fail(format!("reader: buffer 0: {e}")))?;
    prop_assert_eq!(buffer.len(), seq.len() as u64, "{} buffer length", ty.name());
    let values: Vec<Value> = buffer.values().collect();
    prop_assert_eq!(values.len(), seq.len(), "{} Buffer::values", ty.name());
    let packed = ty.bits() < 8;
    let codes = if packed {
        Some(buffer.packed().map_err(|e| fail(format!("reader: packed: {e}")))?)
    } else {
        None
    };
    for (i, &bits) in seq.iter().enumerate() {
        let expected = spec_value(ty, bits).unwrap();
        let i64_ = i as u64;
        let got = t
            .dense_value(&[i64_])
            .map_err(|e| fail(format!("reader: dense_value([{i}]): {e}")))?;
        prop_assert!(
            same(&got, &expected),
            "{} pattern {:#x} at [{}]: dense_value {:?}, spec {:?}",
            ty.name(),
            bits,
            i,
            got,
            expected
        );
        let by_buffer = buffer
            .value(i64_)
            .ok_or_else(|| fail(format!("reader: Buffer::value({i}) is None")))?;
        prop_assert!(
            same(&by_buffer, &expected),
            "{} pattern {:#x}: Buffer::value {:?}",
            ty.name(),
            bits,
            by_buffer
        );
        prop_assert!(
            same(&values[i], &expected),
            "{} pattern {:#x}: Buffer::values {:?}",
            ty.name(),
            bits,
            values[i]
        );
        if let Some(codes) = &codes {
            prop_assert_eq!(
                codes.code(i64_).map(u128::from),
                Some(bits),
                "{} packed code at {}",
                ty.name(),
                i
            );
        }
    }
    match ty {
        Ty::Float16 => typed::<f16>(&t, seq, |v| u128::from(v.to_bits())),
        Ty::Bfloat16 => typed::<bf16>(&t, seq, |v| u128::from(v.to_bits())),
        Ty::Float32 => typed::<f32>(&t, seq, |v| u128::from(v.to_bits())),
        Ty::Float64 => typed::<f64>(&t, seq, |v| u128::from(v.to_bits())),
        Ty::Int8 => typed::<i8>(&t, seq, |v| u128::from(*v as u8)),
        Ty::Uint8 => typed::<u8>(&t, seq, |v| u128::from(*v)),
        Ty::Int16 => typed::<i16>(&t, seq, |v| u128::from(*v as u16)),
        Ty::Uint16 => typed::<u16>(&t, seq, |v| u128::from(*v)),
        Ty::Int32 => typed::<i32>(&t, seq, |v| u128::from(*v as u32)),
        Ty::Uint32 => typed::<u32>(&t, seq, |v| u128::from(*v)),
        Ty::Int64 => typed::<i64>(&t, seq, |v| u128::from(*v as u64)),
        Ty::Uint64 => typed::<u64>(&t, seq, |v| u128::from(*v)),
        Ty::Float8E4m3 => typed::<Float8E4m3>(&t, seq, |v| u128::from(v.0)),
        Ty::Float8E5m2 => typed::<Float8E5m2>(&t, seq, |v| u128::from(v.0)),
        Ty::Float8E8m0 => typed::<Float8E8m0>(&t, seq, |v| u128::from(v.0)),
        Ty::Complex64 => typed::<Complex<f32>>(&t, seq, |v| {
            u128::from(v.re.to_bits()) | u128::from(v.im.to_bits()) << 32
        }),
        Ty::Complex128 => typed::<Complex<f64>>(&t, seq, |v| {
            u128::from(v.re.to_bits()) | u128::from(v.im.to_bits()) << 64
        }),
        // No Element for float128: its bytes, 16 per element.
        Ty::Float128 => {
            for (i, &bits) in seq.iter().enumerate() {
                prop_assert_eq!(&buffer.bytes()[16 * i..16 * i + 16], &bits.to_le_bytes()[..]);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The reader's public narrow-float conversions, for every pattern.
pub(crate) fn conversion(ty: Ty) -> Option<fn(u8) -> f32> {
    Some(match ty {
        Ty::Float8E4m3 => float8_e4m3_to_f32,
        Ty::Float8E5m2 => float8_e5m2_to_f32,
        Ty::Float8E8m0 => float8_e8m0_to_f32,
        Ty::Float4E2m1 => float4_e2m1_to_f32,
        Ty::Float6E2m3 => float6_e2m3_to_f32,
        Ty::Float6E3m2 => float6_e3m2_to_f32,
        _ => return None,
    })
}
/// A pattern of a float format biased to the special fields: exponent 0,
/// 1, max - 1, max; mantissa 0, 1, all ones, the quiet bit.
pub(crate) fn float_pattern(state: &mut u64, e_bits: u32, m_bits: u32) -> u128 {
    let e_max = (1u128 << e_bits) - 1;
    let m_mask = (1u128 << m_bits) - 1;
    let random = u128::from(next(state)) << 64 | u128::from(next(state));
    let e = match next(state) % 6 {
        0 => 0,
        1 => 1,
        2 => e_max - 1,
        3 => e_max,
        _ => random & e_max,
    };
    let random = u128::from(next(state)) << 64 | u128::from(next(state));
    let m = match next(state) % 5 {
        0 => 0,
        1 => 1,
        2 => m_mask,
        3 => 1 << (m_bits - 1),
        _ => random & m_mask,
    };
    u128::from(next(state) & 1) << (e_bits + m_bits) | e << m_bits | m
}

/// A pattern of a wide type: floats by [`float_pattern`], integers biased
/// to 0, 1, -1 / max, min and max of the signed reading.
pub(crate) fn wide_pattern(state: &mut u64, ty: Ty) -> u128 {
    match ty {
        Ty::Float32 => float_pattern(state, 8, 23),
        Ty::Float64 => float_pattern(state, 11, 52),
        Ty::Float128 => float_pattern(state, 15, 112),
        Ty::Complex64 => float_pattern(state, 8, 23) | float_pattern(state, 8, 23) << 32,
        Ty::Complex128 => float_pattern(state, 11, 52) | float_pattern(state, 11, 52) << 64,
        _ => {
            let bits = ty.bits();
            let mask = (1u128 << bits) - 1;
            match next(state) % 6 {
                0 => 0,
                1 => 1,
                2 => mask,
                3 => 1 << (bits - 1),
                4 => mask >> 1,
                _ => (u128::from(next(state)) << 64 | u128::from(next(state))) & mask,
            }
        }
    }
}

pub(crate) const WIDE: [Ty; 9] = [
    Ty::Float32,
    Ty::Float64,
    Ty::Float128,
    Ty::Int32,
    Ty::Uint32,
    Ty::Int64,
    Ty::Uint64,
    Ty::Complex64,
    Ty::Complex128,
];

pub(crate) fn check_wide(seed: u64) -> Result<(), TestCaseError> {
    let mut state = seed;
    let seqs: Vec<(Ty, Vec<u128>)> = WIDE
        .iter()
        .map(|&t| (t, (0..48).map(|_| wide_pattern(&mut state, t)).collect()))
        .collect();
    let built: Vec<(Ty, TensorDescriptor, Vec<u8>)> = seqs
        .iter()
        .map(|(t, seq)| {
            let (d, buf) = dense_of(*t, seq);
            (*t, d, buf)
        })
        .collect();
    let bytes = write_checked(
        built
            .iter()
            .map(|(t, d, buf)| (t.name(), d, vec![BufferData::Bytes(buf)]))
            .collect(),
    )?;
    let file = HurrayFile::parse(&bytes, Options::strict()).map_err(|e| fail(format!("reader: parse: {e}")))?;
    file.validate().map_err(|e| fail(format!("reader: validate: {e}")))?;
    for (ty, seq) in &seqs {
        check_decoded(&file, ty.name(), *ty, seq)?;
    }
    Ok(())
}
