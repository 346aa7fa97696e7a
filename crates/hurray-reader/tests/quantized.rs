//! Element types and quantization against models written from the spec.
//! The models, what the reader must return and the mutations are in
//! `support/model/quantized/`; this file holds the properties and the
//! tests.
//!
//! **Element types** (`element-types.md`). The model decodes a bit
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
        pub mod quantized;
    }
}

use hurray_reader::half::{bf16, f16};
use hurray_reader::{BufferRole, ElementType, Error, HurrayFile, Options, Value};
use hurray_writer::quant::{PerChannelAffine, PerTensorAffine};
use hurray_writer::{BufferData, BufferHandle, TensorDescriptor};
use proptest::prelude::*;
use support::model::basics::{cases, same_float};
use support::model::quantized::{
    check_decoded, check_wide, conversion, dense_of, f32s, float_pattern, i32s, mutations, mxfp_base, narrow_sequence,
    nf4_base, per_block_base, per_block_f16_base, per_block_shared_base, per_channel_base, per_tensor_base, qcases,
    qcheck, spec_payload, spec_value, strict_error, write_checked, writer_payload, QCase, QLay, Raw, Scheme, Ty, NF4,
    PB_VALID, TYPES,
};

/// Cases of each quantization property (five of them); with the sizes below
/// the whole file runs in a few seconds in a debug build.
const QUANT_CASES: u32 = 1024;
/// Cases of the wide element type property (nine types, 48 patterns each).
const WIDE_CASES: u32 = 256;

// ===========================================================================
// Element types (element-types.md)
// ===========================================================================

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
