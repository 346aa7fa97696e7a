//! Element types and quantization against models written from the spec.
//!
//! **Element types** (`element-types.md`). The model below decodes a bit
//! pattern of every type tag from the spec's text alone (sign / exponent /
//! mantissa fields, biases, the NaN and infinity rules of each float
//! format, two's complement, the packing rules); nothing of the reader's
//! decoding is called. Every type of at most 16 bits is checked over all
//! of its bit patterns, each at every position within its byte or 6-bit
//! group, with a last byte or group holding unused bits:
//! `every_pattern_of_every_narrow_type`. The wider ones (32, 64 and 128
//! bits, complex) are checked on patterns biased to the special exponent
//! and mantissa values, as a property: `wide_types_decode_as_the_spec`.
//! Files are written with the checked `FileWriter::write_tensor`, opened
//! with `Options::strict()`, validated whole, and every element read back
//! through `Tensor::dense_value`, `Buffer::value`, `Buffer::values`, the
//! typed slice (`Buffer::as_slice`) or the packed code
//! (`PackedView::code`), and the reader's public narrow-float conversions.
//!
//! **Quantization** (`quantization.md`, `quantization/*.md`). The reader
//! hands out the parts (the quantization payload's fields, the storage
//! codes through `dense_value`, the scale and zero-point buffers through
//! `Buffer::value`/`bytes`) and its own `Tensor::dense_dequantized`. Each
//! property draws storage codes and parameters, builds every buffer and the payload
//! from the spec (the payload also compared byte for byte with the writer's
//! encoders), computes each element's dequantized value with the scheme's
//! formula from the drawn values, and then computes it again from what the
//! reader returns — the code at the logical index, the scale and zero point
//! the reader's buffers hold at the block the reader's descriptor fields
//! give — and compares the two exactly, and with the reader's
//! `dense_dequantized` too. A wrong storage position (padded
//! blocks, layouts), a wrong block or channel, a scale misdecoded
//! (float16/bfloat16 widening, `float8_e8m0` exponents) or a misread payload
//! field shows up as a different value.
//!
//! Arithmetic, as the spec words it (the first two sides use the same
//! function, [`dequantize`]; the reader's is its own code and must agree
//! bit for bit; what they compute is a reading of the spec):
//! - per-tensor affine: `(q - zero_point)` as an exact integer, rounded to
//!   `float32`, times `scale` in `float32` (§ Dequantization Formula says
//!   "signed 32-bit integer arithmetic", which overflows for `uint32` codes
//!   above `i32::MAX` and for some `int32` differences; the model takes the
//!   exact difference);
//! - per-channel affine: the spec gives no precision; the model uses the
//!   per-tensor rule;
//! - per-block affine: the same, the float16/bfloat16 scale widened exactly;
//! - NF4: `scale * nf4[q]` in `float32`;
//! - MXFP: `2^(e - 127) * value(q)` in `float64` (exact: the spec says
//!   "float32 (or higher)"; in `float32`, codes near the float8 maxima times
//!   large exponents overflow to infinity, so implementations may differ).
//!
//! Layouts: row-major and column-major (per-block and NF4 store a partial
//! last block whole along the axis: `quantization/per-block-affine.md` §
//! Padding, the strides are the padded shape's), and strided, tiled and
//! Morton (which address the logical shape with their own formulas, no
//! padding: the spec does not say how a padded block sits in them; reader
//! and writer agree on this reading). `byte_offset` of 0 to 2 units.
//!
//! **Mutations** (`mutations_are_rejected_naming_the_rule`): one rule broken
//! at a time, written through the unchecked path, must be rejected by the
//! strict reader (open, resolve or `validate`) naming the rule
//! (`Error::rule`) and field. Disagreements found are `#[ignore]`d tests at
//! the end, each with the spec sentence it relies on.
//!
//! Left out: quantized sparse (COO, CSR, CSC, CSF) and block-paged tensors
//! (their per-page-slot scales), the Hilbert layout and tile grids with
//! strides (their addressing is `dense_layouts.rs`'s), a `byte_offset`
//! inside an element of a quantized tensor, private extension types and
//! schemes, and permissive mode.
//!
//! `PROPTEST_CASES` overrides the case counts, for a long run:
//! `PROPTEST_CASES=20000 cargo test --release --test quantized`.

mod support {
    pub mod model {
        pub mod basics;
    }
}

use std::fmt;

use hurray_reader::half::{bf16, f16};
use hurray_reader::{
    float4_e2m1_to_f32, float6_e2m3_to_f32, float6_e3m2_to_f32, float8_e4m3_to_f32, float8_e5m2_to_f32,
    float8_e8m0_to_f32, AlignedBytes, BufferRole, Complex, Element, ElementType, Error, Float8E4m3, Float8E5m2,
    Float8E8m0, HurrayFile, Options, QuantScheme, Tensor, Value,
};
use hurray_writer::quant::{Mxfp, Nf4, PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{
    BufferData, BufferHandle, FileWriter, RawTensor, TensorDescriptor, TileInner, TileOrder, Tiled, WriterOptions,
};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::TestCaseError;
use support::model::basics::*;

/// Cases of each quantization property (five of them); with the sizes below
/// the whole file runs in a few seconds in a debug build.
const QUANT_CASES: u32 = 1024;
/// Cases of the wide element type property (nine types, 48 patterns each).
const WIDE_CASES: u32 = 256;

/// splitmix64: values from a case's seed.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Tensors written with the checked writer, as aligned bytes.
fn write_checked(tensors: Vec<(&str, &TensorDescriptor, Vec<BufferData<'_>>)>) -> Result<AlignedBytes, TestCaseError> {
    let refused = |e: hurray_writer::Error| fail(format!("the checked writer refuses: {e}"));
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).map_err(refused)?;
    for (name, d, data) in tensors {
        w.write_tensor(name, d, data).map_err(refused)?;
    }
    Ok(AlignedBytes::from_slice(&w.finish().map_err(refused)?))
}

/// One tensor `t` written through the unchecked path (descriptor encoded as
/// given, buffers written as given), as aligned bytes.
fn write_unchecked(d: &TensorDescriptor, buffers: &[Vec<u8>]) -> AlignedBytes {
    let data = buffers.iter().map(|b| BufferData::Bytes(b)).collect();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor_unchecked(RawTensor::from_descriptor("t", d, data).unwrap())
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// The first error of a strict reader on `bytes`: open, resolve `t`, then
/// validate the whole file; `None` if it accepts everything.
fn strict_error(bytes: &AlignedBytes) -> Option<Error> {
    let file = match HurrayFile::parse(bytes, Options::strict()) {
        Ok(file) => file,
        Err(e) => return Some(e),
    };
    if let Err(e) = file.tensor("t") {
        return Some(e);
    }
    file.validate().err()
}

// ===========================================================================
// Element types (element-types.md)
// ===========================================================================

/// Every type of `element-types.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Float16,
    Bfloat16,
    Float32,
    Float64,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Bool,
    Float8E4m3,
    Float8E5m2,
    Float8E8m0,
    Float4E2m1,
    Float6E2m3,
    Float6E3m2,
    Float128,
    Int4,
    Uint4,
    Int2,
    Uint2,
    Complex64,
    Complex128,
}

/// `element-types.md` § Type Properties Summary: type, name, tag, bit width.
const TYPES: [(Ty, &str, u8, u32); 26] = [
    (Ty::Float16, "float16", 0x01, 16),
    (Ty::Bfloat16, "bfloat16", 0x02, 16),
    (Ty::Float32, "float32", 0x03, 32),
    (Ty::Float64, "float64", 0x04, 64),
    (Ty::Int8, "int8", 0x10, 8),
    (Ty::Uint8, "uint8", 0x11, 8),
    (Ty::Int16, "int16", 0x12, 16),
    (Ty::Uint16, "uint16", 0x13, 16),
    (Ty::Int32, "int32", 0x14, 32),
    (Ty::Uint32, "uint32", 0x15, 32),
    (Ty::Int64, "int64", 0x16, 64),
    (Ty::Uint64, "uint64", 0x17, 64),
    (Ty::Bool, "bool", 0x20, 1),
    (Ty::Float8E4m3, "float8_e4m3", 0x40, 8),
    (Ty::Float8E5m2, "float8_e5m2", 0x41, 8),
    (Ty::Float8E8m0, "float8_e8m0", 0x42, 8),
    (Ty::Float4E2m1, "float4_e2m1", 0x43, 4),
    (Ty::Float6E2m3, "float6_e2m3", 0x44, 6),
    (Ty::Float6E3m2, "float6_e3m2", 0x45, 6),
    (Ty::Float128, "float128", 0x46, 128),
    (Ty::Int4, "int4", 0x48, 4),
    (Ty::Uint4, "uint4", 0x49, 4),
    (Ty::Int2, "int2", 0x4A, 2),
    (Ty::Uint2, "uint2", 0x4B, 2),
    (Ty::Complex64, "complex64", 0x50, 64),
    (Ty::Complex128, "complex128", 0x51, 128),
];

/// How elements sit in bytes.
#[derive(Debug, Clone, Copy)]
enum Packing {
    /// `width` bytes per element, little-endian.
    Whole(u64),
    /// `per_byte` elements of `bits` bits in each byte, LSB first
    /// (`element-types.md` § Boolean Type, § 4-bit packing, § 2-bit packing).
    Sub { per_byte: u64, bits: u32 },
    /// Four 6-bit elements in every three bytes, LSB first (§ 6-bit packing).
    Six,
}

impl Packing {
    /// Bytes for `count` elements (§ Buffer Size Calculation; 6-bit types
    /// `ceil(N / 4) * 3`, NOTES.md 'float6 buffer size').
    fn bytes_for(self, count: u64) -> u64 {
        match self {
            Packing::Whole(w) => count * w,
            Packing::Sub { per_byte, .. } => count.div_ceil(per_byte),
            Packing::Six => count.div_ceil(4) * 3,
        }
    }

    /// Bytes taken by `elements` elements that start a buffer (a whole
    /// number of bytes or groups).
    fn bytes_of_units(self, elements: u64) -> u64 {
        match self {
            Packing::Whole(w) => elements * w,
            Packing::Sub { per_byte, .. } => elements / per_byte,
            Packing::Six => elements / 4 * 3,
        }
    }

    /// Elements per byte (or per 6-bit group); 1 for whole-byte types.
    fn group(self) -> u64 {
        match self {
            Packing::Whole(_) => 1,
            Packing::Sub { per_byte, .. } => per_byte,
            Packing::Six => 4,
        }
    }

    /// Puts the pattern `bits` of element `position` (counted from the
    /// buffer's first byte) into `buf`. 6-bit: element `j` of a group takes
    /// bits `6j .. 6j + 6` of its three bytes read as one little-endian
    /// 24-bit number (the table of § 6-bit packing).
    fn place(self, buf: &mut [u8], position: u64, bits: u128) {
        match self {
            Packing::Whole(w) => {
                let start = (position * w) as usize;
                buf[start..start + w as usize].copy_from_slice(&bits.to_le_bytes()[..w as usize]);
            }
            Packing::Sub { per_byte, bits: b } => {
                let byte = (position / per_byte) as usize;
                let shift = (position % per_byte) as u32 * b;
                let mask = ((1u16 << b) - 1) as u8;
                buf[byte] = buf[byte] & !(mask << shift) | (bits as u8 & mask) << shift;
            }
            Packing::Six => {
                let start = (position / 4 * 3) as usize;
                let j = (position % 4) as u32;
                let group = &mut buf[start..start + 3];
                let mut word = u32::from(group[0]) | u32::from(group[1]) << 8 | u32::from(group[2]) << 16;
                word = word & !(0x3F << (6 * j)) | (bits as u32 & 0x3F) << (6 * j);
                group.copy_from_slice(&word.to_le_bytes()[..3]);
            }
        }
    }
}

impl Ty {
    fn row(self) -> (Ty, &'static str, u8, u32) {
        TYPES.iter().copied().find(|r| r.0 == self).unwrap()
    }

    fn name(self) -> &'static str {
        self.row().1
    }

    fn tag(self) -> u8 {
        self.row().2
    }

    fn bits(self) -> u32 {
        self.row().3
    }

    fn from_tag(tag: u8) -> Option<Ty> {
        TYPES.iter().find(|r| r.2 == tag).map(|r| r.0)
    }

    fn packing(self) -> Packing {
        match self.bits() {
            6 => Packing::Six,
            b if b < 8 => Packing::Sub {
                per_byte: u64::from(8 / b),
                bits: b,
            },
            b => Packing::Whole(u64::from(b / 8)),
        }
    }

    fn writer(self) -> hurray_writer::ElementType {
        use hurray_writer::ElementType as W;
        match self {
            Ty::Float16 => W::Float16,
            Ty::Bfloat16 => W::BFloat16,
            Ty::Float32 => W::Float32,
            Ty::Float64 => W::Float64,
            Ty::Int8 => W::Int8,
            Ty::Uint8 => W::UInt8,
            Ty::Int16 => W::Int16,
            Ty::Uint16 => W::UInt16,
            Ty::Int32 => W::Int32,
            Ty::Uint32 => W::UInt32,
            Ty::Int64 => W::Int64,
            Ty::Uint64 => W::UInt64,
            Ty::Bool => W::Bool,
            Ty::Float8E4m3 => W::Float8E4M3,
            Ty::Float8E5m2 => W::Float8E5M2,
            Ty::Float8E8m0 => W::Float8E8M0,
            Ty::Float4E2m1 => W::Float4E2M1,
            Ty::Float6E2m3 => W::Float6E2M3,
            Ty::Float6E3m2 => W::Float6E3M2,
            Ty::Float128 => W::Float128,
            Ty::Int4 => W::Int4,
            Ty::Uint4 => W::UInt4,
            Ty::Int2 => W::Int2,
            Ty::Uint2 => W::UInt2,
            Ty::Complex64 => W::Complex64,
            Ty::Complex128 => W::Complex128,
        }
    }

    fn is_signed_int(self) -> bool {
        matches!(self, Ty::Int8 | Ty::Int16 | Ty::Int32 | Ty::Int64 | Ty::Int4 | Ty::Int2)
    }

    fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            Ty::Uint8 | Ty::Uint16 | Ty::Uint32 | Ty::Uint64 | Ty::Uint4 | Ty::Uint2
        )
    }

    /// Range of an integer type (two's complement for the signed ones).
    fn int_range(self) -> (i64, i64) {
        let b = self.bits();
        if self.is_signed_int() {
            (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1)
        } else {
            (0, if b == 64 { i64::MAX } else { (1i64 << b) - 1 })
        }
    }
}

/// `x * 2^e`, exact whenever the result is representable: scaled in steps
/// that stay normal.
fn ldexp(x: f64, e: i32) -> f64 {
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
fn sem(bits: u128, e_bits: u32, m_bits: u32, bias: i32) -> f64 {
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
fn ieee(bits: u128, e_bits: u32, m_bits: u32) -> f64 {
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
fn spec_value(ty: Ty, bits: u128) -> Option<Value> {
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

/// Equal floats: same bit pattern (so -0.0 differs from 0.0), or both NaN
/// (payloads are checked on the typed slices, not after widening).
/// Every pattern of `ty` the spec allows in data, each at every position of
/// its byte or group (the other positions 0), then one more element so the
/// last byte or group has unused bits.
fn narrow_sequence(ty: Ty) -> Vec<u128> {
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
fn dense_of(ty: Ty, seq: &[u128]) -> (TensorDescriptor, Vec<u8>) {
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
fn typed<T: Element + fmt::Debug>(t: &Tensor<'_>, seq: &[u128], bits: fn(&T) -> u128) -> Result<(), TestCaseError> {
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
fn check_decoded(file: &HurrayFile<'_>, name: &str, ty: Ty, seq: &[u128]) -> Result<(), TestCaseError> {
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
fn conversion(ty: Ty) -> Option<fn(u8) -> f32> {
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

#[test]
fn every_tag_of_the_type_table() {
    for (ty, name, tag, bits) in TYPES {
        let et = ElementType::from_tag(tag).unwrap_or_else(|| panic!("{name}: tag {tag:#04x} not known"));
        assert_eq!(et.as_str(), name);
        assert_eq!(et.tag(), tag);
        assert_eq!(et.bit_width(), bits, "{name}");
        assert_eq!(et.is_packed(), bits < 8, "{name}");
        for n in 0..=13u64 {
            assert_eq!(
                et.storage_bytes(n),
                Some(ty.packing().bytes_for(n)),
                "{name}: {n} elements"
            );
        }
    }
    // § Type Identifier Encoding: 0x00 and 0xFF invalid, 0x47 and
    // 0x80-0xEF reserved, 0xF0-0xFE private (not built-in types).
    for tag in 0..=255u8 {
        if Ty::from_tag(tag).is_none() {
            assert_eq!(ElementType::from_tag(tag), None, "tag {tag:#04x}");
        }
    }
}

#[test]
fn every_pattern_of_every_narrow_type() {
    let narrow: Vec<Ty> = TYPES.iter().map(|r| r.0).filter(|t| t.bits() <= 16).collect();
    let seqs: Vec<(Ty, Vec<u128>)> = narrow.iter().map(|&t| (t, narrow_sequence(t))).collect();
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
    )
    .unwrap();
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    file.validate().unwrap();
    for (ty, seq) in &seqs {
        check_decoded(&file, ty.name(), *ty, seq).unwrap();
        if let Some(convert) = conversion(*ty) {
            for bits in 0..1u128 << ty.bits() {
                let Some(Value::Float(expected)) = spec_value(*ty, bits) else {
                    continue;
                };
                let got = f64::from(convert(bits as u8));
                assert!(
                    same_float(got, expected),
                    "{} {bits:#x}: {got} vs {expected}",
                    ty.name()
                );
            }
        }
    }
}

/// A pattern of a float format biased to the special fields: exponent 0,
/// 1, max - 1, max; mantissa 0, 1, all ones, the quiet bit.
fn float_pattern(state: &mut u64, e_bits: u32, m_bits: u32) -> u128 {
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
fn wide_pattern(state: &mut u64, ty: Ty) -> u128 {
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

const WIDE: [Ty; 9] = [
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

fn check_wide(seed: u64) -> Result<(), TestCaseError> {
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(WIDE_CASES)))]

    /// 32-, 64- and 128-bit types and complex: the spec's decoding of
    /// patterns biased to zeros, subnormals, the largest finite values,
    /// infinities and NaNs (quiet and signalling), integer extremes.
    #[test]
    fn wide_types_decode_as_the_spec(seed in any::<u64>()) {
        check_wide(seed)?;
    }
}

/// The model against the spec's own numbers and examples, and against
/// Rust's IEEE conversions (an independent check of the model itself).
#[test]
fn model_follows_the_spec_examples() {
    let f = |ty: Ty, bits: u128| match spec_value(ty, bits) {
        Some(Value::Float(v)) => v,
        other => panic!("{other:?}"),
    };
    // § float8: e4m3 has no infinity; 0x7E is its largest value; 0x7F NaN.
    assert_eq!(f(Ty::Float8E4m3, 0x7E), 448.0);
    assert_eq!(f(Ty::Float8E4m3, 0x78), 256.0);
    assert!(f(Ty::Float8E4m3, 0x7F).is_nan() && f(Ty::Float8E4m3, 0xFF).is_nan());
    assert_eq!(f(Ty::Float8E4m3, 0x01), 2f64.powi(-9));
    assert_eq!(f(Ty::Float8E5m2, 0x7B), 57344.0);
    assert_eq!(f(Ty::Float8E5m2, 0x7C), f64::INFINITY);
    assert_eq!(f(Ty::Float8E5m2, 0xFC), f64::NEG_INFINITY);
    assert!(f(Ty::Float8E5m2, 0x7D).is_nan());
    assert_eq!(f(Ty::Float8E5m2, 0x01), 2f64.powi(-16));
    assert_eq!(f(Ty::Float8E8m0, 0x7F), 1.0);
    assert_eq!(f(Ty::Float8E8m0, 0x01), 2f64.powi(-126));
    assert_eq!(f(Ty::Float8E8m0, 0xFE), 2f64.powi(127));
    assert_eq!(spec_value(Ty::Float8E8m0, 0x00), None);
    assert_eq!(spec_value(Ty::Float8E8m0, 0xFF), None);
    // § float4_e2m1: the value map; maximum 1.5 * 2^2 = 6.0.
    let e2m1: Vec<f64> = (0..8).map(|b| f(Ty::Float4E2m1, b)).collect();
    assert_eq!(e2m1, [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
    assert_eq!(f(Ty::Float4E2m1, 0x8).to_bits(), (-0.0f64).to_bits());
    assert_eq!(f(Ty::Float4E2m1, 0xF), -6.0);
    // § float6: e3m2 maximum (1 + 3/4) * 2^(7-3) = 28.0; smallest
    // subnormals (1/8) * 2^0 and (1/4) * 2^-2.
    assert_eq!(f(Ty::Float6E3m2, 0x1F), 28.0);
    assert_eq!(f(Ty::Float6E2m3, 0x01), 0.125);
    assert_eq!(f(Ty::Float6E3m2, 0x01), 0.0625);
    assert_eq!(f(Ty::Float6E2m3, 0x20).to_bits(), (-0.0f64).to_bits());
    // The spec's text gives float6_e2m3's maximum as
    // `(1 + 7/8) * 2^(3-1) = 3.75`; the product is 7.5 (exponent field 3,
    // bias 1), which is the OCP MX value. The model follows the fields.
    assert_eq!((1.0 + 7.0 / 8.0) * 2f64.powi(3 - 1), 7.5);
    assert_eq!(f(Ty::Float6E2m3, 0x1F), 7.5);
    // IEEE formats, against Rust's own conversions.
    assert_eq!(f(Ty::Float16, 0x7BFF), 65504.0);
    assert_eq!(f(Ty::Float16, 0x0001), 2f64.powi(-24));
    assert_eq!(f(Ty::Bfloat16, 0x3F80), 1.0);
    for bits in 0..=u16::MAX {
        assert!(same_float(f(Ty::Float16, bits.into()), f16::from_bits(bits).to_f64()));
        assert!(same_float(f(Ty::Bfloat16, bits.into()), bf16::from_bits(bits).to_f64()));
    }
    let mut state = 7;
    for _ in 0..100_000 {
        let b32 = float_pattern(&mut state, 8, 23) as u32;
        assert!(
            same_float(f(Ty::Float32, b32.into()), f64::from(f32::from_bits(b32))),
            "{b32:#x}"
        );
        let b64 = float_pattern(&mut state, 11, 52) as u64;
        assert!(same_float(f(Ty::Float64, b64.into()), f64::from_bits(b64)), "{b64:#x}");
    }
    // § Sub-Byte Integer Types and § Boolean Type examples.
    let packed = |ty: Ty, seq: &[u128]| dense_of(ty, seq).1;
    assert_eq!(packed(Ty::Uint4, &[5, 12, 3]), [0xC5, 0x03]);
    assert_eq!(packed(Ty::Uint2, &[3, 1, 2]), [0x27]);
    assert_eq!(packed(Ty::Bool, &[1, 0, 1, 1, 0]), [0x0D]);
    assert_eq!(spec_value(Ty::Int2, 0b10), Some(Value::Int(-2)));
    assert_eq!(spec_value(Ty::Int4, 0x8), Some(Value::Int(-8)));
    // § 6-bit packing worked example.
    assert_eq!(packed(Ty::Float6E2m3, &[1, 2, 4, 8]), [0x81, 0x40, 0x20]);
    // The all-patterns sequences: every pattern at every slot.
    assert_eq!(narrow_sequence(Ty::Bool).len(), 2 * 8 * 8 + 1);
    assert_eq!(narrow_sequence(Ty::Float6E3m2).len(), 64 * 4 * 4 + 1);
    assert_eq!(narrow_sequence(Ty::Float8E8m0).len(), 254);
    assert_eq!(narrow_sequence(Ty::Uint16).len(), 65536);
}

/// `element-types.md` § Float8 Variants: "A reader encountering `0x00` or
/// `0xFF` in a `float8_e8m0` buffer MUST treat the containing descriptor as
/// invalid." The reader reads data only when asked: `validate` rejects.
#[test]
fn float8_e8m0_reserved_patterns_are_rejected() {
    for reserved in [0x00u128, 0xFF] {
        let (d, buf) = dense_of(Ty::Float8E8m0, &[0x7F, reserved, 0x80]);
        let bytes = write_checked(vec![("t", &d, vec![BufferData::Bytes(&buf)])]).unwrap();
        let e = strict_error(&bytes).expect("reserved float8_e8m0 accepted");
        assert_eq!(
            e.rule(),
            Some("element-types.md § Tier 2 -- Extended Types › Float8 Variants"),
            "{e}"
        );
        assert_eq!(e.field().map(|f| f.to_string()).as_deref(), Some("data[1]"), "{e}");
    }
}

/// The unused bits after the last packed element MUST be zero
/// (element-types.md: bool, 4-bit, 2-bit, 6-bit packing).
#[test]
fn packing_padding_bits_are_rejected() {
    for ty in [
        Ty::Bool,
        Ty::Int2,
        Ty::Uint2,
        Ty::Int4,
        Ty::Uint4,
        Ty::Float4E2m1,
        Ty::Float6E2m3,
        Ty::Float6E3m2,
    ] {
        let n = ty.packing().group() + 1;
        let (d, mut buf) = dense_of(ty, &vec![0; n as usize]);
        *buf.last_mut().unwrap() |= 0x80;
        let bytes = write_checked(vec![("t", &d, vec![BufferData::Bytes(&buf)])]).unwrap();
        let e = strict_error(&bytes).unwrap_or_else(|| panic!("{}: a padding bit set is accepted", ty.name()));
        let rule = e.rule().unwrap_or_default();
        assert!(rule.starts_with("element-types.md §"), "{}: {e}", ty.name());
        assert_eq!(
            e.field().map(|f| f.to_string()).as_deref(),
            Some("buffer[0].padding bits")
        );
    }
}

// ===========================================================================
// Quantization (quantization.md, quantization/*.md)
// ===========================================================================

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    PerTensor,
    PerChannel,
    PerBlock,
    Nf4,
    Mxfp,
}

impl Scheme {
    fn tag(self) -> u8 {
        match self {
            Scheme::PerTensor => 0x01,
            Scheme::PerChannel => 0x02,
            Scheme::PerBlock => 0x03,
            Scheme::Nf4 => 0x04,
            Scheme::Mxfp => 0x05,
        }
    }

    /// Each scheme's § Valid Storage Types.
    fn storage_types(self) -> Vec<Ty> {
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

    fn blocked(self) -> bool {
        matches!(self, Scheme::PerBlock | Scheme::Nf4 | Scheme::Mxfp)
    }

    /// `quantization.md` § Partial Block Policy: per-block and NF4 store a
    /// partial last block whole; MXFP has none.
    fn pads(self) -> bool {
        matches!(self, Scheme::PerBlock | Scheme::Nf4)
    }
}

/// `quantization/nf4.md` § Lookup Table, as printed (each is the shortest
/// decimal of a float32: `nf4_table_is_float32`).
const NF4: [f64; 16] = [
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
fn dequantize(scheme: Scheme, q: &Value, s: f64, z: i64) -> f64 {
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
enum QLay {
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
    fn writer(&self) -> hurray_writer::Layout {
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
    fn offset(&self, storage: &[u64], shape: &[u64], index: &[u64]) -> i128 {
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
    fn extent(&self, storage: &[u64], shape: &[u64]) -> (i128, i128) {
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

/// One quantized tensor: scheme, storage, shape, parameters, layout.
#[derive(Clone)]
struct QCase {
    scheme: Scheme,
    storage: Ty,
    shape: Vec<u64>,
    axis: usize,
    /// `block_size` (0 for per-tensor and per-channel).
    block: u64,
    /// `float32`, `float16`, `bfloat16` (per-block) or `float8_e8m0` (MXFP).
    scale_ty: Ty,
    /// SYMMETRIC (no zero points); per-tensor: zero point 0.
    symmetric: bool,
    /// Scales and zero points in one buffer, `[scales | zero_points]`.
    shared: bool,
    /// Zero points at buffer 1, scales at buffer 2.
    swapped: bool,
    layout: QLay,
    /// `byte_offset` in whole bytes or groups past the least one.
    extra_units: u64,
    seed: u64,
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
    fn has_zero_points(&self) -> bool {
        matches!(self.scheme, Scheme::PerChannel | Scheme::PerBlock) && !self.symmetric
    }

    fn is_shared(&self) -> bool {
        self.has_zero_points() && self.shared
    }

    fn scale_index(&self) -> u32 {
        if self.has_zero_points() && !self.shared && self.swapped {
            2
        } else {
            1
        }
    }

    fn zero_index(&self) -> Option<u32> {
        self.has_zero_points()
            .then_some(if self.shared || self.swapped { 1 } else { 2 })
    }

    /// Parameter entries: `shape[axis]` channels, or `num_blocks`
    /// (`quantization/per-block-affine.md` § Block Layout).
    fn entries(&self) -> u64 {
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
    fn storage_shape(&self) -> Vec<u64> {
        let mut s = self.shape.clone();
        if self.scheme.pads() && matches!(self.layout, QLay::RowMajor | QLay::ColumnMajor) {
            s[self.axis] = s[self.axis].div_ceil(self.block) * self.block;
        }
        s
    }

    /// The channel (per-channel) or block (`b = outer * num_blocks_per_axis
    /// + floor(i_axis / K)`, `outer` row-major over the other dimensions) of
    /// `index`.
    fn group(&self, index: &[u64]) -> u64 {
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
fn scale_pattern(state: &mut u64, ty: Ty, nf4: bool) -> u128 {
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
fn pick_in(state: &mut u64, lo: i64, hi: i64) -> i64 {
    match next(state) % 5 {
        0 => lo,
        1 => hi,
        _ => lo + (next(state) % ((hi - lo) as u64 + 1)) as i64,
    }
}

/// What the model says the file holds.
struct QModel {
    byte_offset: u64,
    /// Elements before element `[0, ..., 0]` in buffer 0.
    origin: u64,
    data: Vec<u8>,
    /// Buffers 1, 2, ... as the buffer table lists them.
    params: Vec<Vec<u8>>,
    payload: Vec<u8>,
    per_tensor: (f32, i32),
    /// Scale patterns (of `scale_ty`) and zero points per channel or block.
    scales: Vec<u128>,
    zeros: Vec<i32>,
    elements: Vec<QElement>,
}

struct QElement {
    index: Vec<u64>,
    /// Linear offset from element `[0, ..., 0]`.
    offset: i128,
    code: u128,
    group: u64,
    value: f64,
}

/// The quantization payload from the tables of each scheme's § Binary
/// Encoding.
fn spec_payload(c: &QCase, per_tensor: (f32, i32)) -> Vec<u8> {
    let symmetric = matches!(c.scheme, Scheme::PerChannel | Scheme::PerBlock) && c.symmetric;
    let mut p = vec![c.scheme.tag(), 0x01];
    p.extend(u16::from(symmetric).to_le_bytes());
    let axis = c.axis as u32;
    let zero = c.zero_index().unwrap_or(u32::MAX);
    match c.scheme {
        Scheme::PerTensor => {
            p.extend(per_tensor.0.to_le_bytes());
            p.extend(per_tensor.1.to_le_bytes());
            p.extend([0; 4]);
        }
        Scheme::PerChannel => {
            for v in [axis, c.scale_index(), zero] {
                p.extend(v.to_le_bytes());
            }
            p.extend([0x03, 0, 0, 0]);
        }
        Scheme::PerBlock => {
            for v in [axis, c.block as u32, c.scale_index(), zero] {
                p.extend(v.to_le_bytes());
            }
            p.extend([c.scale_ty.tag(), 0, 0, 0]);
        }
        Scheme::Nf4 | Scheme::Mxfp => {
            for v in [axis, c.block as u32, c.scale_index()] {
                p.extend(v.to_le_bytes());
            }
        }
    }
    p
}

/// The same payload from the writer's encoders.
fn writer_payload(c: &QCase, per_tensor: (f32, i32)) -> Vec<u8> {
    let axis = c.axis as u32;
    let block_size = c.block as u32;
    let scale_buffer_index = c.scale_index();
    match c.scheme {
        Scheme::PerTensor => PerTensorAffine {
            scale: per_tensor.0,
            zero_point: per_tensor.1,
        }
        .encode(),
        Scheme::PerChannel => PerChannelAffine {
            axis,
            scale_buffer_index,
            zero_point_buffer_index: c.zero_index(),
        }
        .encode(),
        Scheme::PerBlock => PerBlockAffine {
            axis,
            block_size,
            scale_buffer_index,
            zero_point_buffer_index: c.zero_index(),
            scale_type: match c.scale_ty {
                Ty::Float16 => ScaleType::Float16,
                Ty::Bfloat16 => ScaleType::BFloat16,
                _ => ScaleType::Float32,
            },
        }
        .encode(),
        Scheme::Nf4 => Nf4 {
            axis,
            block_size,
            scale_buffer_index,
        }
        .encode(),
        Scheme::Mxfp => Mxfp {
            axis,
            block_size,
            scale_buffer_index,
        }
        .encode(),
    }
}

fn float_of(v: Option<Value>) -> f64 {
    match v {
        Some(Value::Float(f)) => f,
        other => panic!("a float expected, got {other:?}"),
    }
}

fn qmodel(c: &QCase) -> QModel {
    let mut state = c.seed;
    let entries = c.entries();
    let scales: Vec<u128> = (0..entries)
        .map(|_| scale_pattern(&mut state, c.scale_ty, c.scheme == Scheme::Nf4))
        .collect();
    let zero_range = if c.storage.is_signed_int() || c.storage.is_unsigned_int() {
        let (lo, hi) = c.storage.int_range();
        // int32 zero points hold the storage range (uint32: its int32 part).
        (lo.max(i64::from(i32::MIN)), hi.min(i64::from(i32::MAX)))
    } else {
        (0, 0)
    };
    let zeros: Vec<i32> = if c.has_zero_points() {
        (0..entries)
            .map(|_| pick_in(&mut state, zero_range.0, zero_range.1) as i32)
            .collect()
    } else {
        Vec::new()
    };
    let per_tensor = if c.scheme == Scheme::PerTensor {
        let scale = f32::from_bits(scale_pattern(&mut state, Ty::Float32, false) as u32);
        let zp = if c.symmetric {
            0
        } else {
            pick_in(&mut state, zero_range.0, zero_range.1) as i32
        };
        (scale, zp)
    } else {
        (0.0, 0)
    };

    let packing = c.storage.packing();
    let unit = packing.group() as i128;
    let storage = c.storage_shape();
    let (lowest, end) = c.layout.extent(&storage, &c.shape);
    let origin = ((-lowest).max(0) + unit - 1) / unit * unit + i128::from(c.extra_units) * unit;
    let origin = origin as u64;
    let byte_offset = packing.bytes_of_units(origin);
    let size = packing.bytes_for(origin + end as u64);
    let mut data = vec![0u8; size as usize];
    let mut elements = Vec::new();
    for index in all_indices(&c.shape) {
        let offset = c.layout.offset(&storage, &c.shape, &index);
        let code =
            (u128::from(next(&mut state)) << 64 | u128::from(next(&mut state))) & ((1u128 << c.storage.bits()) - 1);
        packing.place(&mut data, (i128::from(origin) + offset) as u64, code);
        let group = c.group(&index);
        let (s, z) = match c.scheme {
            Scheme::PerTensor => (f64::from(per_tensor.0), i64::from(per_tensor.1)),
            _ => (
                float_of(spec_value(c.scale_ty, scales[group as usize])),
                zeros.get(group as usize).map_or(0, |&z| i64::from(z)),
            ),
        };
        let value = dequantize(c.scheme, &spec_value(c.storage, code).unwrap(), s, z);
        elements.push(QElement {
            index,
            offset,
            code,
            group,
            value,
        });
    }

    let width = c.scale_ty.packing().bytes_for(1) as usize;
    let scale_bytes: Vec<u8> = scales.iter().flat_map(|s| s.to_le_bytes()[..width].to_vec()).collect();
    let zero_bytes: Vec<u8> = zeros.iter().flat_map(|z| z.to_le_bytes()).collect();
    let params = match c.scheme {
        Scheme::PerTensor => Vec::new(),
        _ if !c.has_zero_points() => vec![scale_bytes],
        _ if c.is_shared() => vec![[scale_bytes, zero_bytes].concat()],
        _ if c.swapped => vec![zero_bytes, scale_bytes],
        _ => vec![scale_bytes, zero_bytes],
    };
    QModel {
        byte_offset,
        origin,
        data,
        params,
        payload: spec_payload(c, per_tensor),
        per_tensor,
        scales,
        zeros,
        elements,
    }
}

/// What the reader's descriptor says about the scheme.
#[derive(Debug)]
struct ReadScheme {
    tag: u8,
    axis: usize,
    block: u64,
    scale_index: usize,
    zero_index: Option<usize>,
    scale_ty: Ty,
    per_tensor: (f32, i32),
}

fn read_scheme(t: &Tensor<'_>) -> Result<ReadScheme, TestCaseError> {
    let q = t
        .descriptor()
        .quantization()
        .ok_or_else(|| fail("reader: no quantization section"))?;
    let symmetric = q.header.flags.get() & 1 != 0;
    let zero = |i: u32| (!symmetric).then_some(i as usize);
    let ty = |tag: u8| Ty::from_tag(tag).ok_or_else(|| fail(format!("scale_type_tag {tag:#04x}")));
    let base = ReadScheme {
        tag: q.header.scheme_tag,
        axis: 0,
        block: 0,
        scale_index: 0,
        zero_index: None,
        scale_ty: Ty::Float32,
        per_tensor: (0.0, 0),
    };
    Ok(match q.scheme {
        QuantScheme::PerTensorAffine(f) => ReadScheme {
            per_tensor: (f.scale.get(), f.zero_point.get()),
            ..base
        },
        QuantScheme::PerChannelAffine(f) => ReadScheme {
            axis: f.axis.get() as usize,
            scale_index: f.scale_buffer_index.get() as usize,
            zero_index: zero(f.zero_point_buffer_index.get()),
            scale_ty: ty(f.scale_type_tag)?,
            ..base
        },
        QuantScheme::PerBlockAffine(f) => ReadScheme {
            axis: f.axis.get() as usize,
            block: u64::from(f.block_size.get()),
            scale_index: f.scale_buffer_index.get() as usize,
            zero_index: zero(f.zero_point_buffer_index.get()),
            scale_ty: ty(f.scale_type_tag)?,
            ..base
        },
        QuantScheme::Nf4(f) => ReadScheme {
            axis: f.axis.get() as usize,
            block: u64::from(f.block_size.get()),
            scale_index: f.scale_buffer_index.get() as usize,
            ..base
        },
        QuantScheme::Mxfp(f) => ReadScheme {
            axis: f.axis.get() as usize,
            block: u64::from(f.block_size.get()),
            scale_index: f.scale_buffer_index.get() as usize,
            scale_ty: Ty::Float8E8m0,
            ..base
        },
        other => return Err(fail(format!("reader: scheme {}", other.as_str()))),
    })
}

/// Scale and zero point of channel or block `g` as the reader's buffers
/// hold them: `Buffer::value` for a buffer of its own; the bytes of a
/// shared `[scales | zero_points]` buffer (no typed access: the reader
/// gives it no element type), split at the reader's `len` scales.
fn read_params(t: &Tensor<'_>, r: &ReadScheme, g: u64) -> Result<(f64, i64), TestCaseError> {
    if r.tag == 0x01 {
        return Ok((f64::from(r.per_tensor.0), i64::from(r.per_tensor.1)));
    }
    let width = r.scale_ty.packing().bytes_for(1) as usize;
    let le = |bytes: &[u8], at: usize, n: usize| -> Result<u128, TestCaseError> {
        let b = bytes
            .get(at..at + n)
            .ok_or_else(|| fail(format!("reader: shared buffer has no bytes {at}..{}", at + n)))?;
        Ok(b.iter().rev().fold(0u128, |acc, &x| acc << 8 | u128::from(x)))
    };
    let buffer = |i: usize| t.buffer(i).map_err(|e| fail(format!("reader: buffer {i}: {e}")));
    let sb = buffer(r.scale_index)?;
    let s = match sb.role() {
        BufferRole::Scales => match sb.value(g) {
            Some(Value::Float(s)) => s,
            other => return Err(fail(format!("reader: scale {g} reads {other:?}"))),
        },
        BufferRole::ScalesAndZeroPoints => float_of(spec_value(r.scale_ty, le(sb.bytes(), g as usize * width, width)?)),
        other => return Err(fail(format!("reader: scale buffer role {other:?}"))),
    };
    let z = match r.zero_index {
        None => 0,
        Some(i) => {
            let zb = buffer(i)?;
            match zb.role() {
                BufferRole::ZeroPoints => match zb.value(g) {
                    Some(Value::Int(z)) => z,
                    other => return Err(fail(format!("reader: zero point {g} reads {other:?}"))),
                },
                BufferRole::ScalesAndZeroPoints => {
                    let at = zb.len() as usize * width + 4 * g as usize;
                    i64::from(le(zb.bytes(), at, 4)? as u32 as i32)
                }
                other => return Err(fail(format!("reader: zero point buffer role {other:?}"))),
            }
        }
    };
    Ok((s, z))
}

fn element_type_of(ty: Ty) -> ElementType {
    ElementType::from_tag(ty.tag()).unwrap()
}

fn qcheck(c: &QCase) -> Result<(), TestCaseError> {
    let m = qmodel(c);
    prop_assert_eq!(
        &writer_payload(c, m.per_tensor),
        &m.payload,
        "the writer's payload differs from the spec's table"
    );
    let mut d = TensorDescriptor::new(c.storage.writer(), c.layout.writer(), c.shape.clone())
        .with_buffer(BufferHandle::new(m.data.len() as u64))
        .with_byte_offset(m.byte_offset);
    for p in &m.params {
        d = d.with_buffer(BufferHandle::new(p.len() as u64));
    }
    let d = d.with_quantization(m.payload.clone());
    let mut data = vec![BufferData::Bytes(&m.data)];
    data.extend(m.params.iter().map(|p| BufferData::Bytes(p)));
    let bytes = write_checked(vec![("t", &d, data)])?;

    let file = HurrayFile::parse(&bytes, Options::strict()).map_err(|e| fail(format!("reader: parse: {e}")))?;
    file.validate().map_err(|e| fail(format!("reader: validate: {e}")))?;
    let t = file.tensor("t").map_err(|e| fail(format!("reader: tensor: {e}")))?;
    prop_assert_eq!(t.not_viewable(), None);
    let q = t
        .descriptor()
        .quantization()
        .ok_or_else(|| fail("reader: no quantization"))?;
    prop_assert_eq!(q.payload, &m.payload[..], "payload bytes");
    let r = read_scheme(&t)?;
    prop_assert_eq!(r.tag, c.scheme.tag());
    if c.scheme != Scheme::PerTensor {
        prop_assert_eq!(r.axis, c.axis, "axis");
        prop_assert_eq!(r.block, c.block, "block_size");
        prop_assert_eq!(r.scale_index, c.scale_index() as usize, "scale_buffer_index");
        prop_assert_eq!(
            r.zero_index,
            c.zero_index().map(|z| z as usize),
            "zero_point_buffer_index"
        );
        prop_assert_eq!(r.scale_ty, c.scale_ty, "scale type");
    } else {
        prop_assert_eq!(r.per_tensor.0.to_bits(), m.per_tensor.0.to_bits(), "scale");
        prop_assert_eq!(r.per_tensor.1, m.per_tensor.1, "zero_point");
    }

    // The buffers, where the model put them.
    prop_assert_eq!(t.buffers().len(), 1 + m.params.len(), "buffer count");
    let b0 = t.buffer(0).map_err(|e| fail(format!("reader: buffer 0: {e}")))?;
    prop_assert_eq!(b0.role(), BufferRole::Data);
    prop_assert_eq!(b0.bytes(), &m.data[..], "buffer 0");
    for (k, p) in m.params.iter().enumerate() {
        let b = t
            .buffer(k + 1)
            .map_err(|e| fail(format!("reader: buffer {}: {e}", k + 1)))?;
        prop_assert_eq!(b.bytes(), &p[..], "buffer {}", k + 1);
        prop_assert_eq!(b.len(), c.entries(), "buffer {} length", k + 1);
        let (role, et) = if c.is_shared() {
            (BufferRole::ScalesAndZeroPoints, None)
        } else if k + 1 == c.scale_index() as usize {
            (BufferRole::Scales, Some(element_type_of(c.scale_ty)))
        } else {
            (BufferRole::ZeroPoints, Some(ElementType::Int32))
        };
        prop_assert_eq!(b.role(), role, "buffer {} role", k + 1);
        prop_assert_eq!(b.element_type(), et, "buffer {} element type", k + 1);
    }
    if c.scheme != Scheme::PerTensor {
        for g in 0..c.entries() {
            let (s, z) = read_params(&t, &r, g)?;
            let expected = float_of(spec_value(c.scale_ty, m.scales[g as usize]));
            prop_assert!(same_float(s, expected), "scale {}: reader {}, model {}", g, s, expected);
            let expected_z = m.zeros.get(g as usize).map_or(0, |&z| i64::from(z));
            prop_assert_eq!(z, expected_z, "zero point {}", g);
            // The same through Tensor::scales / zero_points, which split a
            // shared buffer.
            match t.scales().and_then(|b| b.value(g)) {
                Some(Value::Float(s)) => prop_assert!(same_float(s, expected), "scales() {}: {}", g, s),
                other => return Err(fail(format!("reader: scales() {g} reads {other:?}"))),
            }
            let zero = t.zero_points().and_then(|b| b.value(g));
            match m.zeros.get(g as usize) {
                Some(&z) => prop_assert_eq!(zero, Some(Value::Int(i64::from(z))), "zero_points() {}", g),
                None => prop_assert_eq!(zero, None, "zero_points() {} of a symmetric scheme", g),
            }
        }
    } else {
        prop_assert!(
            t.scales().is_none() && t.zero_points().is_none(),
            "per-tensor: no scale buffer"
        );
    }

    // Every element: position, storage value, dequantized value.
    let addressing = t.addressing().map_err(|e| fail(format!("reader: addressing: {e}")))?;
    for e in &m.elements {
        let position = addressing
            .position(&e.index)
            .map_err(|err| fail(format!("reader: position({:?}): {err}", e.index)))?;
        prop_assert_eq!(
            i128::from(position),
            i128::from(m.origin) + e.offset,
            "position of {:?}",
            e.index
        );
        let q = t
            .dense_value(&e.index)
            .map_err(|err| fail(format!("reader: dense_value({:?}): {err}", e.index)))?;
        let spec = spec_value(c.storage, e.code).unwrap();
        prop_assert!(
            same(&q, &spec),
            "{:?}: code {:#x} reads {:?}, spec {:?}",
            e.index,
            e.code,
            q,
            spec
        );
        let g = match r.tag {
            0x01 => 0,
            0x02 => e.index[r.axis],
            _ => {
                let mut outer = 0u64;
                let shape: Vec<u64> = t.shape().collect();
                for (k, (&i, &n)) in e.index.iter().zip(&shape).enumerate() {
                    if k != r.axis {
                        outer = outer * n + i;
                    }
                }
                outer * shape[r.axis].div_ceil(r.block) + e.index[r.axis] / r.block
            }
        };
        prop_assert_eq!(g, e.group, "block of {:?}", e.index);
        let (s, z) = read_params(&t, &r, g)?;
        let x = dequantize(c.scheme, &q, s, z);
        prop_assert!(
            same_float(x, e.value),
            "{:?} (code {:#x}, group {}): from the reader {}, model {}",
            e.index,
            e.code,
            g,
            x,
            e.value
        );
        // The reader's own dequantization agrees bit for bit.
        let api = t
            .dense_dequantized(&e.index)
            .map_err(|err| fail(format!("reader: dense_dequantized({:?}): {err}", e.index)))?;
        prop_assert!(
            same_float(api, e.value),
            "{:?}: dense_dequantized {}, model {}",
            e.index,
            api,
            e.value
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

/// Small integers the case is built from (shrinking them simplifies the
/// case: 0 is the simplest choice everywhere).
#[derive(Debug, Clone)]
struct Draw {
    storage: Index,
    rank: usize,
    axis: Index,
    block: u8,
    scale: u8,
    dims: [u8; 3],
    layout: u8,
    perm: u8,
    negative: [bool; 3],
    gaps: [u8; 3],
    tiles: [u8; 3],
    orders: (bool, bool),
    flags: (bool, bool, bool),
    extra_units: u64,
    seed: u64,
}

fn draws() -> impl Strategy<Value = Draw> {
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

fn pick<T: Copy>(options: &[T], k: u8) -> T {
    options[usize::from(k) % options.len()]
}

fn build(scheme: Scheme, d: Draw) -> QCase {
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

fn qcases(scheme: Scheme) -> impl Strategy<Value = QCase> {
    draws().prop_map(move |d| build(scheme, d))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(QUANT_CASES)))]

    #[test]
    fn per_tensor_affine_matches_the_spec_model(c in qcases(Scheme::PerTensor)) {
        qcheck(&c)?;
    }

    #[test]
    fn per_channel_affine_matches_the_spec_model(c in qcases(Scheme::PerChannel)) {
        qcheck(&c)?;
    }

    #[test]
    fn per_block_affine_matches_the_spec_model(c in qcases(Scheme::PerBlock)) {
        qcheck(&c)?;
    }

    #[test]
    fn nf4_matches_the_spec_model(c in qcases(Scheme::Nf4)) {
        qcheck(&c)?;
    }

    #[test]
    fn mxfp_matches_the_spec_model(c in qcases(Scheme::Mxfp)) {
        qcheck(&c)?;
    }
}

/// `quantization/nf4.md` § Lookup Table: "float32 decimal expansions of
/// the exact levels ... MUST use these float32 values verbatim": each
/// printed decimal is a float32 exactly, symmetric ends ±1, 0 at code 7.
#[test]
fn nf4_table_is_float32() {
    for (q, &v) in NF4.iter().enumerate() {
        assert_eq!(f64::from(v as f32), v, "nf4[{q}] is not a float32");
    }
    assert!(NF4.windows(2).all(|w| w[0] < w[1]));
    assert_eq!((NF4[0], NF4[7], NF4[15]), (-1.0, 0.0, 1.0));
}

/// Fixed cases the properties may not draw: the spec's worked example's
/// payload bytes, the edges of the block rules.
#[test]
fn spec_examples_and_edges() {
    // quantization/per-channel-affine.md § Worked Example: 20 bytes.
    let worked = QCase {
        scheme: Scheme::PerChannel,
        storage: Ty::Int8,
        shape: vec![768, 1024],
        axis: 0,
        block: 0,
        scale_ty: Ty::Float32,
        symmetric: false,
        shared: false,
        swapped: false,
        layout: QLay::RowMajor,
        extra_units: 0,
        seed: 0,
    };
    let expected = [
        0x02, 0x01, 0x00, 0x00, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0x03, 0, 0, 0,
    ];
    assert_eq!(spec_payload(&worked, (0.0, 0)), expected);
    assert_eq!(writer_payload(&worked, (0.0, 0)), expected);
    let base = |scheme, storage, shape: Vec<u64>, axis, block| QCase {
        scheme,
        storage,
        shape,
        axis,
        block,
        scale_ty: if scheme == Scheme::Mxfp {
            Ty::Float8E8m0
        } else {
            Ty::Float32
        },
        symmetric: true,
        shared: false,
        swapped: false,
        layout: QLay::RowMajor,
        extra_units: 0,
        seed: 3,
    };
    let edges = [
        // block_size = shape[axis]: one block per outer position.
        base(Scheme::PerBlock, Ty::Int4, vec![3, 4], 1, 4),
        base(Scheme::Nf4, Ty::Uint4, vec![2, 8], 1, 8),
        // An empty axis waives block_size <= shape[axis]: no blocks, empty
        // parameter buffers (quantization/per-block-affine.md, nf4.md §
        // Validity Constraints).
        base(Scheme::PerBlock, Ty::Uint2, vec![2, 0], 1, 1024),
        base(Scheme::Nf4, Ty::Uint4, vec![0, 3], 0, 64),
        // MXFP at the largest block size, the canonical 32, axis 0.
        base(Scheme::Mxfp, Ty::Float4E2m1, vec![2048], 0, 2048),
        base(Scheme::Mxfp, Ty::Float6E3m2, vec![32, 3], 0, 32),
        // Rank 4, blocks along an inner axis, column-major padding.
        QCase {
            layout: QLay::ColumnMajor,
            symmetric: false,
            ..base(Scheme::PerBlock, Ty::Int2, vec![2, 3, 5, 2], 2, 4)
        },
        // Per-channel along the last axis, shared parameter buffer.
        QCase {
            symmetric: false,
            shared: true,
            ..base(Scheme::PerChannel, Ty::Uint32, vec![3, 4], 1, 0)
        },
    ];
    for c in &edges {
        qcheck(c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
    }
}

/// A shared `[scales | zero_points]` buffer (`quantization.md` § Buffer
/// Table Placement Rules) reads as its two arrays through `Tensor::scales`
/// and `Tensor::zero_points`: the scales from the buffer's first byte, the
/// zero points right after them, each with its own type, offset and size.
#[test]
fn a_shared_parameter_buffer_splits_into_scales_and_zero_points() {
    let payload = PerChannelAffine {
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: Some(1),
    }
    .encode();
    let d = TensorDescriptor::row_major(hurray_writer::ElementType::UInt8, vec![2, 3])
        .unwrap()
        .with_quantization(payload)
        .with_buffer(BufferHandle::new(16));
    let data = [1u8, 2, 3, 4, 5, 6];
    let params: Vec<u8> = [0.5f32, 0.25]
        .iter()
        .flat_map(|s| s.to_le_bytes())
        .chain([7i32, 200].iter().flat_map(|z| z.to_le_bytes()))
        .collect();
    let bytes = write_checked(vec![(
        "q",
        &d,
        vec![BufferData::Bytes(&data), BufferData::Bytes(&params)],
    )])
    .unwrap();
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    file.validate().unwrap();
    let t = file.tensor("q").unwrap();
    let shared = t.buffer(1).unwrap();
    assert_eq!(shared.role(), BufferRole::ScalesAndZeroPoints);
    assert_eq!(shared.byte_size(), 16);

    let scales = t.scales().unwrap();
    assert_eq!(scales.role(), BufferRole::Scales);
    assert_eq!(scales.element_type(), Some(ElementType::Float32));
    assert_eq!((scales.index(), scales.len(), scales.byte_size()), (1, 2, 8));
    assert_eq!(scales.file_offset(), shared.file_offset());
    assert_eq!(scales.as_slice::<f32>().unwrap(), &[0.5, 0.25]);

    let zero_points = t.zero_points().unwrap();
    assert_eq!(zero_points.role(), BufferRole::ZeroPoints);
    assert_eq!(zero_points.element_type(), Some(ElementType::Int32));
    assert_eq!(
        (zero_points.index(), zero_points.len(), zero_points.byte_size()),
        (1, 2, 8)
    );
    assert_eq!(zero_points.file_offset(), shared.file_offset() + 8);
    assert_eq!(zero_points.as_slice::<i32>().unwrap(), &[7, 200]);
    assert_eq!(
        zero_points.values().collect::<Vec<_>>(),
        [Value::Int(7), Value::Int(200)]
    );

    // Separate buffers are returned as they are; the data buffer is neither.
    assert_eq!(t.buffer(0).unwrap().role(), BufferRole::Data);
}

/// `Tensor::dequantize` on what it cannot dequantize: a tensor that is not
/// quantized, an index outside the shape, a value that is not a code of the
/// storage type.
#[test]
fn dequantize_refuses_what_it_cannot_read() {
    let quantized = TensorDescriptor::row_major(hurray_writer::ElementType::UInt8, vec![2])
        .unwrap()
        .with_quantization(
            PerTensorAffine {
                scale: 0.5,
                zero_point: 1,
            }
            .encode(),
        );
    let plain = TensorDescriptor::row_major(hurray_writer::ElementType::Float32, vec![1]).unwrap();
    let bytes = write_checked(vec![
        ("q", &quantized, vec![BufferData::Bytes(&[3, 0])]),
        ("f", &plain, vec![BufferData::Bytes(&1f32.to_le_bytes())]),
    ])
    .unwrap();
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let (q, f) = (file.tensor("q").unwrap(), file.tensor("f").unwrap());
    assert_eq!(q.dense_dequantized(&[0]).unwrap(), 1.0);
    assert_eq!(q.dense_dequantized(&[1]).unwrap(), -0.5);
    assert!(matches!(
        f.dense_dequantized(&[0]),
        Err(Error::NotViewable { why, .. }) if why.contains("not quantized")
    ));
    assert!(matches!(
        q.dense_dequantized(&[2]),
        Err(Error::CoordinateArgument {
            axis: 0,
            value: 2,
            bound: 2,
            ..
        })
    ));
    assert!(matches!(
        q.dequantize(&[0, 0], Value::UInt(3)),
        Err(Error::LengthMismatch {
            len: 2,
            expected: 1,
            ..
        })
    ));
    assert!(matches!(
        q.dequantize(&[0], Value::Float(3.0)),
        Err(Error::NotViewable { why, .. }) if why.contains("not a code")
    ));
}

// ===========================================================================
// Mutations: one rule broken, through the unchecked path
// ===========================================================================

const PT_VALID: &str = "quantization/per-tensor-affine.md § Validity Constraints";
const PC_VALID: &str = "quantization/per-channel-affine.md § Validity Constraints";
const PB_VALID: &str = "quantization/per-block-affine.md § Validity Constraints";
const NF4_VALID: &str = "quantization/nf4.md § Validity Constraints";
const MX_VALID: &str = "quantization/mxfp.md § Validity Constraints";
const PC_BUFFERS: &str = "quantization/per-channel-affine.md § Referenced Buffers";
const PB_BUFFERS: &str = "quantization/per-block-affine.md § Referenced Buffers";
const NF4_BUFFER: &str = "quantization/nf4.md § Referenced Buffer";
const MX_BUFFER: &str = "quantization/mxfp.md § Referenced Buffer";
const HEADER: &str = "quantization.md § Descriptor Header";
const TAGS: &str = "quantization.md § Scheme Tag Space";
const PLACEMENT: &str = "quantization.md § Buffer Table Placement Rules";

/// A quantized row-major tensor: storage type, shape, payload, buffers
/// (buffer 0 first); every handle declares its buffer's size.
#[derive(Clone)]
struct Raw {
    storage: hurray_writer::ElementType,
    shape: Vec<u64>,
    payload: Vec<u8>,
    buffers: Vec<Vec<u8>>,
    device_tags: Vec<(usize, u8)>,
    memory_classes: Vec<(usize, u8)>,
}

impl Raw {
    fn bytes(&self) -> AlignedBytes {
        let mut d = TensorDescriptor::new(self.storage, hurray_writer::Layout::RowMajor, self.shape.clone())
            .with_quantization(self.payload.clone());
        for (k, b) in self.buffers.iter().enumerate() {
            let mut h = BufferHandle::new(b.len() as u64);
            if let Some(&(_, tag)) = self.device_tags.iter().find(|(i, _)| *i == k) {
                h = h.with_device_tag(tag);
            }
            if let Some(&(_, class)) = self.memory_classes.iter().find(|(i, _)| *i == k) {
                h.memory_class = class;
            }
            d = d.with_buffer(h);
        }
        write_unchecked(&d, &self.buffers)
    }

    fn payload_at(mut self, at: usize, bytes: &[u8]) -> Self {
        self.payload[at..at + bytes.len()].copy_from_slice(bytes);
        self
    }

    fn buffer(mut self, k: usize, bytes: Vec<u8>) -> Self {
        self.buffers[k] = bytes;
        self
    }

    fn storage(mut self, t: hurray_writer::ElementType) -> Self {
        self.storage = t;
        self
    }

    fn shape(mut self, shape: Vec<u64>) -> Self {
        self.shape = shape;
        self
    }
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u16s(v: &[u16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// uint8 `[4]`, scale 0.5, zero point 3.
fn per_tensor_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::UInt8,
        shape: vec![4],
        payload: PerTensorAffine {
            scale: 0.5,
            zero_point: 3,
        }
        .encode(),
        buffers: vec![vec![1, 2, 3, 4]],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// int8 `[3, 4]` along axis 0, asymmetric: scales at 1, zero points at 2.
fn per_channel_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::Int8,
        shape: vec![3, 4],
        payload: PerChannelAffine {
            axis: 0,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
        }
        .encode(),
        buffers: vec![vec![0; 12], f32s(&[1.0, 2.0, 0.5]), i32s(&[0, -1, 5])],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// int4 `[2, 6]` in blocks of 4 along axis 1 (storage `[2, 8]`, 8 bytes), 4
/// blocks, float32 scales at 1, zero points at 2.
fn per_block_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::Int4,
        shape: vec![2, 6],
        payload: PerBlockAffine {
            axis: 1,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(2),
            scale_type: ScaleType::Float32,
        }
        .encode(),
        buffers: vec![
            vec![0x21, 0x43, 0x65, 0x00, 0x21, 0x43, 0x65, 0x00],
            f32s(&[1.0; 4]),
            i32s(&[0, 1, -1, 7]),
        ],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// The per-block base with float16 scales, symmetric.
fn per_block_f16_base() -> Raw {
    Raw {
        payload: PerBlockAffine {
            axis: 1,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: None,
            scale_type: ScaleType::Float16,
        }
        .encode(),
        buffers: vec![vec![0; 8], u16s(&[0x3C00; 4])],
        ..per_block_base()
    }
}

/// The per-block base with one shared `[scales | zero_points]` buffer.
fn per_block_shared_base() -> Raw {
    Raw {
        payload: PerBlockAffine {
            axis: 1,
            block_size: 4,
            scale_buffer_index: 1,
            zero_point_buffer_index: Some(1),
            scale_type: ScaleType::Float32,
        }
        .encode(),
        buffers: vec![vec![0; 8], [f32s(&[1.0; 4]), i32s(&[0, 1, -1, 7])].concat()],
        ..per_block_base()
    }
}

/// uint4 `[2, 16]`, NF4 blocks of 8 along axis 1, 4 absmax scales.
fn nf4_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::UInt4,
        shape: vec![2, 16],
        payload: Nf4 {
            axis: 1,
            block_size: 8,
            scale_buffer_index: 1,
        }
        .encode(),
        buffers: vec![vec![0x7F; 16], f32s(&[1.0, 0.0, 2.5, 1e-3])],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

/// float8_e4m3 `[2, 32]`, MXFP blocks of 16 along axis 1, 4 scales.
fn mxfp_base() -> Raw {
    Raw {
        storage: hurray_writer::ElementType::Float8E4M3,
        shape: vec![2, 32],
        payload: Mxfp {
            axis: 1,
            block_size: 16,
            scale_buffer_index: 1,
        }
        .encode(),
        buffers: vec![vec![0x38; 64], vec![0x7F, 0x01, 0xFE, 0x80]],
        device_tags: Vec::new(),
        memory_classes: Vec::new(),
    }
}

fn u32le(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// (what, file, expected rule, expected field).
fn mutations() -> Vec<(&'static str, Raw, &'static str, &'static str)> {
    use hurray_writer::ElementType as W;
    let pt = per_tensor_base;
    let pc = per_channel_base;
    let pb = per_block_base;
    let nf = nf4_base;
    let mx = mxfp_base;
    let pt_scale = |v: f32| pt().payload_at(4, &v.to_le_bytes());
    let pt_zero = |t: W, v: i32| pt().storage(t).payload_at(8, &v.to_le_bytes());
    // rustfmt leaves the table alone: `what: file => rule, field;`.
    macro_rules! table {
        ($($what:literal: $raw:expr => $rule:expr, $field:literal;)*) => {
            vec![$(($what, $raw, $rule, $field)),*]
        };
    }
    table! {
        // Parameter buffers of the wrong size (§ Referenced Buffers: "byte
        // size MUST be exactly").
        "per-channel scales one short": pc().buffer(1, f32s(&[1.0, 2.0]))
            => PC_BUFFERS, "buffer[1].byte_size";
        "per-channel zero points one long": pc().buffer(2, i32s(&[0, 0, 0, 0]))
            => PC_BUFFERS, "buffer[2].byte_size";
        "per-block float32 scales one short": pb().buffer(1, f32s(&[1.0; 3]))
            => PB_BUFFERS, "buffer[1].byte_size";
        "per-block zero points one long": pb().buffer(2, i32s(&[0; 5]))
            => PB_BUFFERS, "buffer[2].byte_size";
        "per-block float16 scales sized as float32": per_block_f16_base().buffer(1, f32s(&[1.0; 4]))
            => PB_BUFFERS, "buffer[1].byte_size";
        "per-block per-row scales (no partial block counted)": pb().buffer(1, f32s(&[1.0; 2])).buffer(2, i32s(&[0; 2]))
            => PB_BUFFERS, "buffer[1].byte_size";
        "shared [scales | zero points] one zero point short": per_block_shared_base().buffer(1, [f32s(&[1.0; 4]), i32s(&[0; 3])].concat())
            => PLACEMENT, "buffer[1].byte_size";
        "nf4 scales one short": nf().buffer(1, f32s(&[1.0; 3]))
            => NF4_BUFFER, "buffer[1].byte_size";
        "mxfp scales one long": mx().buffer(1, vec![0x7F; 5])
            => MX_BUFFER, "buffer[1].byte_size";
        // Zero points are int32 whatever the storage type (§ Referenced
        // Buffers): narrower ones show as a wrong size.
        "per-channel zero points as int16": pc().buffer(2, u16s(&[0, 0xFFFF, 5]))
            => PC_BUFFERS, "buffer[2].byte_size";
        "per-block int8 zero points for int8 storage": pb().storage(W::Int8).buffer(0, vec![0; 16]).buffer(2, vec![0, 1, 0xFF, 7])
            => PB_BUFFERS, "buffer[2].byte_size";
        // The data buffer: whole blocks along the axis (§ Padding).
        "per-block data without the padded block": pb().buffer(0, vec![0; 6])
            => "quantization/per-block-affine.md § Padding", "buffer[0].byte_size";
        "per-block data longer than the padded blocks": pb().buffer(0, vec![0; 9])
            => "quantization/per-block-affine.md § Padding", "buffer[0].byte_size";
        // Scale and zero-point types.
        "per-channel scale_type_tag float16": pc().payload_at(16, &[0x01])
            => PC_VALID, "quantization.scale_type_tag";
        "per-channel scale_type_tag bfloat16": pc().payload_at(16, &[0x02])
            => PC_VALID, "quantization.scale_type_tag";
        "per-block scale_type_tag float64": pb().payload_at(20, &[0x04])
            => PB_VALID, "quantization.scale_type_tag";
        "per-block scale_type_tag 0": pb().payload_at(20, &[0x00])
            => PB_VALID, "quantization.scale_type_tag";
        "per-block scale_type_tag float8_e8m0": pb().payload_at(20, &[0x42])
            => PB_VALID, "quantization.scale_type_tag";
        // Block sizes.
        "per-block block_size 0": pb().payload_at(8, &u32le(0))
            => PB_VALID, "quantization.block_size";
        "per-block block_size 3": pb().payload_at(8, &u32le(3))
            => PB_VALID, "quantization.block_size";
        "per-block block_size 1": pb().payload_at(8, &u32le(1))
            => PB_VALID, "quantization.block_size";
        "per-block block_size 8 > shape[axis] 6": pb().payload_at(8, &u32le(8))
            => PB_VALID, "quantization.block_size";
        "nf4 block_size 0": nf().payload_at(8, &u32le(0))
            => NF4_VALID, "quantization.block_size";
        "nf4 block_size 4": nf().payload_at(8, &u32le(4))
            => NF4_VALID, "quantization.block_size";
        "nf4 block_size 12": nf().payload_at(8, &u32le(12))
            => NF4_VALID, "quantization.block_size";
        "nf4 block_size 32 > shape[axis] 16": nf().payload_at(8, &u32le(32))
            => NF4_VALID, "quantization.block_size";
        "mxfp block_size 0": mx().payload_at(8, &u32le(0))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 8": mx().payload_at(8, &u32le(8))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 24": mx().payload_at(8, &u32le(24))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 4096": mx().payload_at(8, &u32le(4096))
            => MX_VALID, "quantization.block_size";
        "mxfp block_size 64 > shape[axis] 32": mx().payload_at(8, &u32le(64)).buffer(1, vec![0x7F; 2])
            => MX_VALID, "shape[1]";
        "mxfp shape[axis] 48 not a multiple of 32": mx().shape(vec![1, 48]) .payload_at(8, &u32le(32)) .buffer(0, vec![0; 48]) .buffer(1, vec![0x7F; 2])
            => MX_VALID, "shape[1]";
        "mxfp empty axis": mx().shape(vec![2, 0]).buffer(0, Vec::new()).buffer(1, Vec::new())
            => MX_VALID, "shape[1]";
        // Axis.
        "per-channel axis = rank": pc().payload_at(4, &u32le(2))
            => PC_VALID, "quantization.axis";
        "per-channel axis 0xFFFFFFFF": pc().payload_at(4, &u32le(u32::MAX))
            => PC_VALID, "quantization.axis";
        "per-block axis = rank": pb().payload_at(4, &u32le(2))
            => PB_VALID, "quantization.axis";
        "nf4 axis = rank": nf().payload_at(4, &u32le(2))
            => NF4_VALID, "quantization.axis";
        "mxfp axis = rank": mx().payload_at(4, &u32le(2))
            => MX_VALID, "quantization.axis";
        // Storage types (§ Valid Storage Types).
        "per-tensor float32 storage": pt().storage(W::Float32).buffer(0, vec![0; 16])
            => "quantization/per-tensor-affine.md § Valid Storage Types", "type_tag";
        "per-tensor int64 storage": pt().storage(W::Int64).buffer(0, vec![0; 32])
            => "quantization/per-tensor-affine.md § Valid Storage Types", "type_tag";
        "per-channel bool storage": pc().storage(W::Bool).buffer(0, vec![0; 2])
            => "quantization/per-channel-affine.md § Valid Storage Types", "type_tag";
        "per-channel float8_e4m3 storage": pc().storage(W::Float8E4M3)
            => "quantization/per-channel-affine.md § Valid Storage Types", "type_tag";
        "per-block int16 storage": pb().storage(W::Int16).buffer(0, vec![0; 32])
            => "quantization/per-block-affine.md § Valid Storage Types", "type_tag";
        "per-block uint32 storage": pb().storage(W::UInt32).buffer(0, vec![0; 64])
            => "quantization/per-block-affine.md § Valid Storage Types", "type_tag";
        "nf4 int4 storage": nf().storage(W::Int4)
            => "quantization/nf4.md § Valid Storage Types", "type_tag";
        "nf4 uint8 storage": nf().storage(W::UInt8).buffer(0, vec![0; 32])
            => "quantization/nf4.md § Valid Storage Types", "type_tag";
        "mxfp uint8 storage": mx().storage(W::UInt8)
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        "mxfp uint4 storage": mx().storage(W::UInt4).buffer(0, vec![0; 32])
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        "mxfp float8_e8m0 storage": mx().storage(W::Float8E8M0).buffer(0, vec![0x7F; 64])
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        "mxfp float16 storage": mx().storage(W::Float16).buffer(0, vec![0; 128])
            => "quantization/mxfp.md § Valid Storage Types", "type_tag";
        // Per-tensor scale and zero point.
        "per-tensor scale 0": pt_scale(0.0)
            => PT_VALID, "quantization.scale";
        "per-tensor scale -0": pt_scale(-0.0)
            => PT_VALID, "quantization.scale";
        "per-tensor scale NaN": pt_scale(f32::NAN)
            => PT_VALID, "quantization.scale";
        "per-tensor scale +inf": pt_scale(f32::INFINITY)
            => PT_VALID, "quantization.scale";
        "per-tensor scale -inf": pt_scale(f32::NEG_INFINITY)
            => PT_VALID, "quantization.scale";
        "per-tensor uint8 zero point 256": pt_zero(W::UInt8, 256)
            => PT_VALID, "quantization.zero_point";
        "per-tensor uint8 zero point -1": pt_zero(W::UInt8, -1)
            => PT_VALID, "quantization.zero_point";
        "per-tensor int8 zero point 128": pt_zero(W::Int8, 128)
            => PT_VALID, "quantization.zero_point";
        "per-tensor int4 zero point 8": pt_zero(W::Int4, 8).buffer(0, vec![0; 2])
            => PT_VALID, "quantization.zero_point";
        "per-tensor int2 zero point -3": pt_zero(W::Int2, -3).buffer(0, vec![0; 1])
            => PT_VALID, "quantization.zero_point";
        "per-tensor uint2 zero point 4": pt_zero(W::UInt2, 4).buffer(0, vec![0; 1])
            => PT_VALID, "quantization.zero_point";
        "per-tensor uint32 zero point -1": pt_zero(W::UInt32, -1).buffer(0, vec![0; 16])
            => PT_VALID, "quantization.zero_point";
        "per-tensor reserved byte": pt().payload_at(15, &[1])
            => PT_VALID, "quantization._reserved";
        // Header: flags, version, tag.
        "per-tensor flags 1": pt().payload_at(2, &[1, 0])
            => HEADER, "quantization.flags";
        "per-channel flags bit 1": pc().payload_at(2, &[2, 0])
            => HEADER, "quantization.flags";
        "per-block flags bit 15": pb().payload_at(2, &[0, 0x80])
            => HEADER, "quantization.flags";
        "nf4 flags 1 (SYMMETRIC is not defined for it)": nf().payload_at(2, &[1, 0])
            => HEADER, "quantization.flags";
        "mxfp flags 1": mx().payload_at(2, &[1, 0])
            => HEADER, "quantization.flags";
        "per-tensor scheme_version 2": pt().payload_at(1, &[2])
            => HEADER, "quantization.scheme_version";
        "per-block scheme_version 0": pb().payload_at(1, &[0])
            => HEADER, "quantization.scheme_version";
        "scheme_tag 0x00": pt().payload_at(0, &[0x00])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0xFF": pt().payload_at(0, &[0xFF])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0x06 (unassigned)": pt().payload_at(0, &[0x06])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0x60 (reserved nested)": pt().payload_at(0, &[0x60])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0x80 (reserved)": pt().payload_at(0, &[0x80])
            => TAGS, "quantization.scheme_tag";
        "scheme_tag 0xF0 (private, strict)": pt().payload_at(0, &[0xF0])
            => TAGS, "quantization.scheme_tag";
        "per-tensor payload truncated to 12 bytes": Raw { payload: pt().payload[..12].to_vec(), ..pt() }
            => HEADER, "quantization.scale";
        // Reserved bytes.
        "per-channel reserved byte": pc().payload_at(19, &[1])
            => PC_VALID, "quantization._reserved";
        "per-block reserved byte": pb().payload_at(22, &[1])
            => "quantization/per-block-affine.md § Binary Encoding", "quantization._reserved";
        // SYMMETRIC and zero_point_buffer_index.
        "per-channel SYMMETRIC with a zero-point index": pc().payload_at(2, &[1, 0])
            => PC_VALID, "quantization.zero_point_buffer_index";
        "per-block SYMMETRIC with a zero-point index": pb().payload_at(2, &[1, 0])
            => PB_VALID, "quantization.zero_point_buffer_index";
        // Buffer indices (§ Buffer Table Placement Rules, § Referenced Buffers).
        "per-channel scales in the data buffer": pc().payload_at(8, &u32le(0))
            => PLACEMENT, "quantization.scale_buffer_index";
        "per-channel zero points in the data buffer": pc().payload_at(12, &u32le(0))
            => PLACEMENT, "quantization.zero_point_buffer_index";
        "per-channel scale index = buffer_count": pc().payload_at(8, &u32le(3))
            => PLACEMENT, "quantization.scale_buffer_index";
        // Both metadata.md (buffer_count = 1 + the parameter buffers) and
        // per-channel-affine.md § Referenced Buffers (index >= buffer_count)
        // are broken; the reader names the first.
        "per-channel zero index past the table": Raw { buffers: pc().buffers[..2].to_vec(), ..pc() }
            => "metadata.md § Buffer Table; memory-layout.md § Buffer Table", "buffer_count";
        "per-block zero index 0xFFFFFFFE": pb().payload_at(16, &u32le(0xFFFF_FFFE))
            => PLACEMENT, "quantization.zero_point_buffer_index";
        "nf4 scales in the data buffer": nf().payload_at(12, &u32le(0))
            => PLACEMENT, "quantization.scale_buffer_index";
        "mxfp scale index 5": mx().payload_at(12, &u32le(5))
            => PLACEMENT, "quantization.scale_buffer_index";
        "an unused extra parameter buffer": Raw { buffers: [nf().buffers, vec![vec![0; 4]]].concat(), ..nf() }
            => "metadata.md § Buffer Table; memory-layout.md § Buffer Table", "buffer_count";
        "scales on another device": Raw { device_tags: vec![(1, 0x01)], ..nf() }
            => "buffer-protocol.md § Device Tags › Device Colocation", "buffer[1].device_tag";
        "scales in host-pinned memory, the data not": Raw { memory_classes: vec![(1, 0x01)], ..nf() }
            => "buffer-protocol.md § Device Tags › Device Colocation", "buffer[1].memory_class";
        // Parameter values (read by validate).
        "per-channel scale NaN": pc().buffer(1, f32s(&[1.0, f32::NAN, 1.0]))
            => PC_VALID, "scales[1]";
        "per-channel scale 0": pc().buffer(1, f32s(&[1.0, 1.0, 0.0]))
            => PC_VALID, "scales[2]";
        "per-channel scale -inf": pc().buffer(1, f32s(&[f32::NEG_INFINITY, 1.0, 1.0]))
            => PC_VALID, "scales[0]";
        "per-channel int8 zero point 128": pc().buffer(2, i32s(&[0, 128, 0]))
            => PC_VALID, "zero_points[1]";
        "per-channel uint8 zero point -1": pc().storage(W::UInt8).buffer(2, i32s(&[0, 0, -1]))
            => PC_VALID, "zero_points[2]";
        "per-block float32 scale +inf": pb().buffer(1, f32s(&[1.0, 1.0, 1.0, f32::INFINITY]))
            => PB_VALID, "scales[3]";
        "per-block float16 scale +inf": per_block_f16_base().buffer(1, u16s(&[0x3C00, 0x7C00, 0x3C00, 0x3C00]))
            => PB_VALID, "scales[1]";
        "per-block float16 scale NaN": per_block_f16_base().buffer(1, u16s(&[0x3C00, 0x3C00, 0x7E00, 0x3C00]))
            => PB_VALID, "scales[2]";
        "per-block float16 scale -0": per_block_f16_base().buffer(1, u16s(&[0x8000, 0x3C00, 0x3C00, 0x3C00]))
            => PB_VALID, "scales[0]";
        "nf4 scale -1": nf().buffer(1, f32s(&[1.0, -1.0, 1.0, 1.0]))
            => NF4_VALID, "scales[1]";
        "nf4 scale NaN": nf().buffer(1, f32s(&[1.0, 1.0, f32::NAN, 1.0]))
            => NF4_VALID, "scales[2]";
        "nf4 scale +inf": nf().buffer(1, f32s(&[1.0, 1.0, 1.0, f32::INFINITY]))
            => NF4_VALID, "scales[3]";
        "mxfp scale 0x00": mx().buffer(1, vec![0x7F, 0x00, 0x7F, 0x7F])
            => "element-types.md § Tier 2 -- Extended Types › Float8 Variants", "scales[1]";
        "mxfp scale 0xFF": mx().buffer(1, vec![0x7F, 0x7F, 0x7F, 0xFF])
            => "element-types.md § Tier 2 -- Extended Types › Float8 Variants", "scales[3]";
        // Packed storage: the bits after the last stored element.
        "per-tensor uint4 [3], the unused high nibble set": pt().storage(W::UInt4).shape(vec![3]).buffer(0, vec![0x00, 0x10])
            => "element-types.md § Tier 2 -- Extended Types › Sub-Byte Integer Types (unused bits MUST be 0)", "buffer[0].padding bits";
        "per-block int2 [1, 2] in one block of 2, unused bits set": pb().storage(W::Int2).shape(vec![1, 2]).payload_at(8, &u32le(2)).buffer(0, vec![0x40]).buffer(1, f32s(&[1.0])).buffer(2, i32s(&[0]))
            => "element-types.md § Tier 2 -- Extended Types › Sub-Byte Integer Types (unused bits MUST be 0)", "buffer[0].padding bits";
    }
}

#[test]
fn mutation_bases_are_valid() {
    for (name, raw) in [
        ("per-tensor", per_tensor_base()),
        ("per-channel", per_channel_base()),
        ("per-block", per_block_base()),
        ("per-block float16", per_block_f16_base()),
        ("per-block shared", per_block_shared_base()),
        ("nf4", nf4_base()),
        ("mxfp", mxfp_base()),
    ] {
        if let Some(e) = strict_error(&raw.bytes()) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn mutations_are_rejected_naming_the_rule() {
    let mut wrong = Vec::new();
    for (what, raw, rule, field) in mutations() {
        match strict_error(&raw.bytes()) {
            None => wrong.push(format!("{what}: accepted")),
            Some(e) => {
                let got_field = e.field().map(|f| f.to_string()).unwrap_or_default();
                if e.rule() != Some(rule) || got_field != field {
                    wrong.push(format!(
                        "{what}: rule {:?} field {got_field:?}, expected {rule:?} {field:?}: {e}",
                        e.rule()
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        mutations().len(),
        wrong.join("\n")
    );
}

/// `quantization.md` § Buffer Table Placement Rules: the two arrays may share
/// a buffer, `[scales | zero_points]`, and `quantization/*.md` § Validity
/// Constraints hold for them there as anywhere: "Every `scale` value MUST be
/// a finite, non-zero value" (per-block-affine.md), and for per-channel
/// affine the zero points "MUST lie within the representable range of the
/// storage type". Shared, they were not checked (`Tensor::validate_data`
/// skipped `ScalesAndZeroPoints` buffers) until this test found it.
/// Per-block affine states no range for its zero points (nor does
/// `quantization.md`): 8 for int4 storage is accepted, shared or not.
#[test]
fn shared_parameter_buffer_values_are_validated() {
    let nan_scale = per_block_shared_base().buffer(1, [f32s(&[1.0, f32::NAN, 1.0, 1.0]), i32s(&[0; 4])].concat());
    let e = strict_error(&nan_scale.bytes()).expect("a NaN scale in a shared buffer is accepted");
    assert_eq!(e.rule(), Some(PB_VALID), "{e}");
    assert_eq!(e.field().map(|f| f.to_string()), Some("scales[1]".to_owned()), "{e}");
    let zero_8 = per_block_shared_base().buffer(1, [f32s(&[1.0; 4]), i32s(&[0, 0, 8, 0])].concat());
    assert!(strict_error(&zero_8.bytes()).is_none());
    let own_buffer = per_block_base().buffer(2, i32s(&[0, -9, 0, 0]));
    assert!(strict_error(&own_buffer.bytes()).is_none());
}

/// `quantization/per-block-affine.md` § Padding: "the unused trailing
/// elements within the final block MUST be set to `0x00` bytes by the
/// writer. A reader MUST ignore these padding elements when dequantizing"
/// (NF4 takes the same rule, `quantization.md` § Partial Block Policy). The
/// reader ignores them when reading (the properties read every element
/// around zero padding); strict validation, which rejects non-zero packing
/// bits (`element-types.md`) and non-zero padding bytes between regions,
/// rejects them too (it accepted int4 `[2, 6]` in blocks of 4 with padding
/// element 7 set to 1, and uint4 NF4 `[1, 15]` with padding element 15 set
/// to 0xF, until this test found it). A spec reading: the sentence
/// addresses the writer, and the project's strict mode checks every rule
/// it can.
#[test]
fn padding_elements_of_a_partial_block_are_zero() {
    let per_block = per_block_base().buffer(0, vec![0x21, 0x43, 0x65, 0x10, 0x21, 0x43, 0x65, 0x00]);
    let e = strict_error(&per_block.bytes()).expect("per-block: a non-zero padding element is accepted");
    assert_eq!(e.rule(), Some("quantization/per-block-affine.md § Padding"), "{e}");
    let nf4 = nf4_base()
        .shape(vec![1, 15])
        .buffer(0, vec![0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0xF7])
        .buffer(1, f32s(&[1.0; 2]));
    let e = strict_error(&nf4.bytes()).expect("NF4: a non-zero padding element is accepted");
    assert_eq!(e.rule(), Some("quantization/per-block-affine.md § Padding"), "{e}");
}

/// A zero dimension after the quantization axis leaves no padding slot in
/// any line, and the 2^60 lines before it come from the shape alone, with
/// no byte behind them: the padding check must not walk them (it did, one
/// empty line at a time, and a 4 KB file kept `validate` busy for years).
#[test]
fn block_padding_check_is_bounded_by_the_data() {
    let empty = per_block_base()
        .shape(vec![1 << 60, 6, 0])
        .buffer(0, Vec::new())
        .buffer(1, Vec::new())
        .buffer(2, Vec::new());
    assert_eq!(strict_error(&empty.bytes()).map(|e| e.to_string()), None);
}

/// The unused bits of the last byte or group are required zero in each
/// type's own section of `element-types.md`: § Boolean Type (bool),
/// § Sub-Byte Floating-Point Types (float4_e2m1), § 6-bit packing (float6),
/// § Sub-Byte Integer Types (int2/uint2/int4/uint4). The reader rejects
/// them all (`packing_padding_bits_are_rejected`), citing each type's own
/// section (it cited § Sub-Byte Integer Types for every type).
#[test]
fn packing_padding_bits_cite_their_section() {
    for (ty, section) in [
        (Ty::Bool, "element-types.md § Tier 1 -- Core Types › Boolean Type"),
        (
            Ty::Float4E2m1,
            "element-types.md § Tier 2 -- Extended Types › Sub-Byte Floating-Point Types",
        ),
        (
            Ty::Float6E2m3,
            "element-types.md § Tier 2 -- Extended Types › Sub-Byte Floating-Point Types › 6-bit packing",
        ),
    ] {
        let n = ty.packing().group() + 1;
        let (d, mut buf) = dense_of(ty, &vec![0; n as usize]);
        *buf.last_mut().unwrap() |= 0x80;
        let bytes = write_checked(vec![("t", &d, vec![BufferData::Bytes(&buf)])]).unwrap();
        let e = strict_error(&bytes).unwrap();
        assert!(e.rule().unwrap_or_default().starts_with(section), "{}: {e}", ty.name());
    }
}

/// Readings of the spec the reader takes where the text leaves room; each
/// is asserted so that a change is noticed.
#[test]
fn spec_readings() {
    // quantization/nf4.md: "Every scale value MUST be a finite,
    // non-negative float32". -0.0 compares equal to 0 (IEEE 754), so the
    // reader accepts it, as it accepts +0.0.
    let minus_zero = nf4_base().buffer(1, f32s(&[1.0, -0.0, 0.0, 1.0]));
    assert!(strict_error(&minus_zero.bytes()).is_none());
    // quantization.md § Descriptor Header allows "trailing padding chosen by
    // the writer" after a scheme's fields; each scheme's § Binary Encoding
    // gives a "Total descriptor length". The reader accepts the padding, the
    // writer's checked path refuses it (exact length).
    let padded = Raw {
        payload: [per_tensor_base().payload, vec![0; 4]].concat(),
        ..per_tensor_base()
    };
    assert!(strict_error(&padded.bytes()).is_none());
    let d = TensorDescriptor::new(
        hurray_writer::ElementType::UInt8,
        hurray_writer::Layout::RowMajor,
        vec![4],
    )
    .with_buffer(BufferHandle::new(4))
    .with_quantization(padded.payload.clone());
    assert!(write_checked(vec![("t", &d, vec![BufferData::Bytes(&[0; 4])])]).is_err());
    // element-types.md § Tier 2 -- Extended Types › Float8 Variants: a reserved float8_e8m0 pattern
    // makes "the containing descriptor" invalid; the reader resolves the
    // descriptor (it reads no data then) and rejects in validate.
    let (d, buf) = dense_of(Ty::Float8E8m0, &[0x7F, 0xFF]);
    let bytes = write_checked(vec![("t", &d, vec![BufferData::Bytes(&buf)])]).unwrap();
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert!(file.tensor("t").is_ok());
    assert!(file.validate().is_err());
}
