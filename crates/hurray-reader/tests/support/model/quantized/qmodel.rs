//! What the model says a quantized file holds (payload, buffers, each
//! element's dequantized value) and the check against the reader: the
//! value computed again from what the reader returns.

use hurray_reader::{BufferRole, ElementType, HurrayFile, Options, QuantScheme, Tensor, Value};
use hurray_writer::quant::{Mxfp, Nf4, PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{BufferData, BufferHandle, TensorDescriptor};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::super::basics::{all_indices, fail, next, same, same_float};
use super::case::{pick_in, scale_pattern, QCase};
use super::decode::spec_value;
use super::files::write_checked;
use super::scheme::{dequantize, Scheme};
use super::types::Ty;

/// What the model says the file holds.
pub(crate) struct QModel {
    pub(crate) byte_offset: u64,
    /// Elements before element `[0, ..., 0]` in buffer 0.
    pub(crate) origin: u64,
    pub(crate) data: Vec<u8>,
    /// Buffers 1, 2, ... as the buffer table lists them.
    pub(crate) params: Vec<Vec<u8>>,
    pub(crate) payload: Vec<u8>,
    pub(crate) per_tensor: (f32, i32),
    /// Scale patterns (of `scale_ty`) and zero points per channel or block.
    pub(crate) scales: Vec<u128>,
    pub(crate) zeros: Vec<i32>,
    pub(crate) elements: Vec<QElement>,
}

pub(crate) struct QElement {
    pub(crate) index: Vec<u64>,
    /// Linear offset from element `[0, ..., 0]`.
    pub(crate) offset: i128,
    pub(crate) code: u128,
    pub(crate) group: u64,
    pub(crate) value: f64,
}

/// The quantization payload from the tables of each scheme's § Binary
/// Encoding.
pub(crate) fn spec_payload(c: &QCase, per_tensor: (f32, i32)) -> Vec<u8> {
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
pub(crate) fn writer_payload(c: &QCase, per_tensor: (f32, i32)) -> Vec<u8> {
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

pub(crate) fn float_of(v: Option<Value>) -> f64 {
    match v {
        Some(Value::Float(f)) => f,
        other => panic!("a float expected, got {other:?}"),
    }
}

pub(crate) fn qmodel(c: &QCase) -> QModel {
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
pub(crate) struct ReadScheme {
    pub(crate) tag: u8,
    pub(crate) axis: usize,
    pub(crate) block: u64,
    pub(crate) scale_index: usize,
    pub(crate) zero_index: Option<usize>,
    pub(crate) scale_ty: Ty,
    pub(crate) per_tensor: (f32, i32),
}

pub(crate) fn read_scheme(t: &Tensor<'_>) -> Result<ReadScheme, TestCaseError> {
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
pub(crate) fn read_params(t: &Tensor<'_>, r: &ReadScheme, g: u64) -> Result<(f64, i64), TestCaseError> {
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

pub(crate) fn element_type_of(ty: Ty) -> ElementType {
    ElementType::from_tag(ty.tag()).unwrap()
}

pub(crate) fn qcheck(c: &QCase) -> Result<(), TestCaseError> {
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
