//! What the reader must expose for a model file: header and trailer
//! fields, index entries, KV entries, every descriptor field, every
//! buffer's offset, size and handle, and every element value.

use hurray_reader::{Error, HurrayFile, KvValue};
use proptest::test_runner::TestCaseError;
use zerocopy::IntoBytes;

use super::super::basics::{all_indices, dot, fail, row_major_strides, same};
use super::element::{with_type, Dt};
use super::encode::{DescMap, Enc};
use super::file::{Kv, MFile, HAS_INDEX_CRC32C};
use super::tensor::{Body, MTensor};

pub(crate) fn kv_equal(model: &Kv, read: &KvValue<'_>) -> bool {
    match (model, read) {
        (Kv::Str(a), KvValue::String(b)) => a == b,
        (Kv::I64(a), KvValue::Int64(b)) => a == b,
        (Kv::U64(a), KvValue::Uint64(b)) => a == b,
        (Kv::F64(a), KvValue::Float64(b)) => *a == b.to_bits(),
        (Kv::Bool(a), KvValue::Bool(b)) => a == b,
        (Kv::Bytes(a), KvValue::Bytes(b)) => a == b,
        (Kv::Array(tag, xs), KvValue::Array(arr)) => {
            arr.element_type().tag() == *tag
                && arr.len() as usize == xs.len()
                && xs.iter().zip(arr.iter()).all(|(x, y)| kv_equal(x, &y))
                && arr.iter().count() == xs.len()
        }
        _ => false,
    }
}

macro_rules! check {
    ($cond:expr, $($arg:tt)*) => {
        if !$cond {
            return Err(fail(format!($($arg)*)));
        }
    };
}
pub(crate) use check;

pub(crate) fn eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Result<(), TestCaseError> {
    check!(got == want, "{what}: reader {got:?}, model {want:?}");
    Ok(())
}

pub(crate) fn check_file(f: &MFile, enc: &Enc, file: &HurrayFile<'_>) -> Result<(), TestCaseError> {
    let h = file.header();
    eq("container_version", file.container_version(), (1, f.container_minor))?;
    eq("file_flags", file.file_flags(), f.flags)?;
    eq("data_buffer_alignment", file.data_buffer_alignment(), u64::from(f.dba))?;
    eq("first_descriptor_offset", h.first_descriptor_offset.get(), f.first)?;
    eq("tensor_count_hint", h.tensor_count_hint.get(), f.hint)?;
    let tr = file.trailer();
    eq("index_offset", tr.index_offset.get(), enc.index_offset)?;
    eq("index_length", tr.index_length.get(), enc.index_length)?;
    let (kv_offset, kv_length) = enc.kv_range.map_or((0, 0), |(s, e)| (s, e - s));
    eq("kv_offset", tr.kv_offset.get(), kv_offset)?;
    eq("kv_length", u64::from(tr.kv_length.get()), kv_length)?;
    let crc = if f.flags & HAS_INDEX_CRC32C != 0 {
        crc32c::crc32c(&enc.bytes[enc.index_offset as usize..enc.trailer as usize])
    } else {
        0
    };
    eq("index_crc32c", tr.index_crc32c.get(), crc)?;

    // The footer index, in index order, and the file order.
    eq("tensor count", file.len(), f.tensors.len())?;
    for (pos, (e, &i)) in file.entries().iter().zip(&enc.index_order).enumerate() {
        let (t, m) = (&f.tensors[i], &enc.desc[i]);
        eq("entry name", e.name(), t.name.as_str())?;
        eq("entry position", e.position(), pos)?;
        eq("entry offset", e.offset(), enc.entries[pos].at)?;
        eq("descriptor_offset", e.descriptor_offset(), m.start)?;
        eq("descriptor_length", e.descriptor_length(), m.len)?;
        eq("data_offset", e.data_offset(), m.data_offset)?;
        eq("data_length", e.data_length(), m.data_length)?;
        eq("entry flags", e.raw().flags.get(), 0)?;
        eq("lookup by name", file.entry(&t.name).map(|x| x.position()), Some(pos))?;
    }
    let file_order: Vec<&str> = file.entries_in_file_order().map(|e| e.name()).collect();
    let model_order: Vec<&str> = f.tensors.iter().map(|t| t.name.as_str()).collect();
    eq("file order", file_order, model_order)?;
    check!(file.entry("\u{0}absent").is_none(), "an absent name is found");
    check!(
        matches!(file.tensor("\u{0}absent"), Err(Error::NotFound { .. })),
        "an absent name is not NotFound"
    );

    // KV metadata, in file order.
    let kv = f.kv.as_deref().unwrap_or_default();
    eq("kv count", file.kv().len(), kv.len())?;
    for ((key, value), (entry, m)) in kv.iter().zip(file.kv().iter().zip(&enc.kv)) {
        eq("kv key", entry.key(), key.as_str())?;
        eq("kv entry offset", entry.offset(), m.at)?;
        check!(
            kv_equal(value, &entry.value()),
            "kv '{key}': reader {:?}, model {value:?}",
            entry.value()
        );
    }

    for (i, t) in f.tensors.iter().enumerate() {
        let pos = enc.index_order.iter().position(|&k| k == i).unwrap();
        check_tensor(t, &enc.desc[i], file, pos)?;
    }
    file.validate().map_err(|e| fail(format!("validate: {e}")))?;
    Ok(())
}

pub(crate) fn check_tensor(t: &MTensor, m: &DescMap, file: &HurrayFile<'_>, pos: usize) -> Result<(), TestCaseError> {
    let name = &t.name;
    let r = file.tensor(name).map_err(|e| fail(format!("tensor '{name}': {e}")))?;
    let by_pos = file
        .tensor_at(pos)
        .map_err(|e| fail(format!("tensor_at({pos}): {e}")))?;
    eq("tensor_at name", by_pos.name(), name.as_str())?;
    let d = r.descriptor();
    eq("descriptor bytes", d.bytes().len() as u64, m.len)?;
    eq("version", d.version(), (1, t.version_minor))?;
    eq("flags", d.flags(), t.flags())?;
    eq("type_tag", d.header().type_tag, t.dt.tag())?;
    eq("element type tag", r.element_type().map(|e| e.tag()), Some(t.dt.tag()))?;
    eq("layout_tag", r.layout().tag(), t.layout_tag())?;
    eq("rank", r.rank() as usize, t.rank())?;
    eq("shape", r.shape().collect::<Vec<_>>(), t.shape())?;
    eq("byte_offset", d.byte_offset(), t.byte_offset())?;
    eq("nnz", r.nnz(), t.nnz())?;
    let o = d.offsets();
    eq("offsets.descriptor", o.descriptor, m.start)?;
    eq("offsets.shape", o.shape, m.shape)?;
    eq("offsets.byte_offset", o.byte_offset, m.byte_offset)?;
    eq("offsets.layout_fields", o.layout_fields, m.layout_fields)?;
    eq("offsets.buffer_count", o.buffer_count, m.buffer_count)?;
    if let Some(s) = m.stats {
        eq("offsets.statistics", o.statistics, s)?;
    }
    if let Some(s) = m.ext {
        eq("offsets.extension_type", o.extension_type, s)?;
    }

    // Buffers: offsets, sizes, handles.
    let model = t.buffers();
    eq("buffer count", r.buffers().len(), model.len())?;
    for (k, (b, bytes)) in r.buffers().iter().zip(&model).enumerate() {
        eq("buffer index", usize::from(b.index()), k)?;
        eq("buffer file_offset", b.file_offset(), m.buffers[k].0)?;
        eq("buffer byte_size", b.byte_size(), bytes.len() as u64)?;
        eq("buffer alignment", b.alignment(), u64::from(t.aligns[k]))?;
        eq("buffer handle_offset", b.handle_offset(), m.handles[k])?;
        let h = b.handle();
        eq(
            "buffer handle",
            (h.device_tag, h.sync_mode, h.memory_class, h.reserved),
            {
                let (dv, s, c) = t.device;
                (dv, s, c, 0)
            },
        )?;
        check!(b.bytes() == &bytes[..], "buffer {k} bytes differ");
    }

    // Optional sections.
    match (d.quantization(), t.quant) {
        (None, None) => {}
        (Some(q), Some(mq)) => {
            eq("quantization offset", q.offset, m.quant.unwrap())?;
            eq("quantization payload", q.payload.len(), 16 + mq.pad)?;
            eq(
                "scheme",
                (q.header.scheme_tag, q.header.scheme_version, q.header.flags.get()),
                (1, 1, 0),
            )?;
            let hurray_reader::QuantScheme::PerTensorAffine(p) = q.scheme else {
                return Err(fail(format!("scheme {}", q.scheme.as_str())));
            };
            eq("scale", p.scale.get().to_bits(), mq.scale.to_bits())?;
            eq("zero_point", p.zero_point.get(), mq.zero_point)?;
        }
        (got, want) => return Err(fail(format!("quantization: reader {got:?}, model {want:?}"))),
    }
    match (d.shard(), &t.shard) {
        (None, None) => {}
        (Some(s), Some((parent, offset))) => {
            eq("shard offset", s.offset, m.shard.unwrap())?;
            eq(
                "parent_shape",
                s.parent_shape.iter().map(|v| v.get()).collect(),
                parent.clone(),
            )?;
            eq(
                "shard_offset",
                s.shard_offset.iter().map(|v| v.get()).collect(),
                offset.clone(),
            )?;
        }
        (got, want) => return Err(fail(format!("shard: reader {got:?}, model {want:?}"))),
    }
    match (d.statistics(), t.stats) {
        (None, None) => {}
        (Some(s), Some(ms)) => {
            let got = (s.computed_mask.get(), s.reserved.get(), s.nnz.get());
            eq("statistics", got, (ms.mask, 0, ms.nnz))?;
            let floats = [
                s.sparsity_ratio.get(),
                s.value_min.get(),
                s.value_max.get(),
                s.value_abs_max.get(),
                s.value_mean.get(),
                s.value_stddev.get(),
            ];
            eq("statistics floats", floats.map(f64::to_bits), ms.f.map(f64::to_bits))?;
            eq(
                "nm",
                (s.nm_n, s.nm_m, s.has_nan, s.has_inf),
                (ms.nm.0, ms.nm.1, ms.nan_inf.0, ms.nan_inf.1),
            )?;
            eq("sparsity_ratio_mismatch", r.sparsity_ratio_mismatch(), None)?;
        }
        (got, want) => return Err(fail(format!("statistics: reader {got:?}, model {want:?}"))),
    }
    match (d.extension_type(), t.dt) {
        (None, Dt::Ext(_)) => return Err(fail("no extension type section")),
        (Some(_), dt) if !matches!(dt, Dt::Ext(_)) => return Err(fail("an extension type section")),
        (Some(x), Dt::Ext(e)) => {
            eq("bit_width", x.bit_width.get(), e.bit_width)?;
            let got = (
                x.packing_factor,
                x.is_float,
                x.is_signed,
                x.sign_bits,
                x.exponent_bits,
                x.mantissa_bits,
            );
            eq(
                "extension fields",
                got,
                (
                    1,
                    e.is_float,
                    e.is_signed,
                    e.sign_bits,
                    e.exponent_bits,
                    e.mantissa_bits,
                ),
            )?;
            eq(
                "extension bias",
                (x.exponent_bias.get(), x.has_nan, x.has_inf),
                (e.exponent_bias, e.has_nan, e.has_inf),
            )?;
        }
        _ => {}
    }
    check!(d.composite_member().is_none(), "a composite member section");
    eq("not_viewable", r.not_viewable(), None)?;

    // Every element value.
    let shape = t.shape();
    let wants_bytes = |index: &[u64]| -> Option<Vec<u8>> {
        let w = t.dt.width();
        match &t.body {
            Body::Dense {
                shape,
                byte_offset,
                buf,
            } => {
                let linear = dot(index, &row_major_strides(shape)) as usize;
                let at = *byte_offset as usize + linear * w;
                Some(buf[at..at + w].to_vec())
            }
            Body::Csc { cells, .. } => cells
                .iter()
                .find(|(r, c, _)| *r == index[0] && *c == index[1])
                .map(|(_, _, v)| v.clone()),
        }
    };
    match &t.body {
        Body::Dense { .. } => {
            eq(
                "element_count",
                r.element_count().ok(),
                Some(shape.iter().product::<u64>()),
            )?;
            let indices = if shape.is_empty() {
                vec![vec![]]
            } else {
                all_indices(&shape)
            };
            for index in &indices {
                let got = r.dense_value(index).map_err(|e| fail(format!("dense_value: {e}")))?;
                let want = t.value(index).unwrap();
                check!(same(&got, &want), "'{name}'{index:?}: reader {got:?}, model {want:?}");
            }
            with_type!(t.dt, T => {
                let view = r.dense::<T>().map_err(|e| fail(format!("dense view: {e}")))?;
                for index in &indices {
                    let got = view.get(index).map_err(|e| fail(format!("dense get: {e}")))?;
                    check!(got.as_bytes() == &wants_bytes(index).unwrap()[..], "'{name}'{index:?}: typed view");
                }
                Ok::<(), TestCaseError>(())
            })
            .transpose()?;
        }
        Body::Csc { cells, .. } => {
            with_type!(t.dt, T => {
                let view = r.csc::<T>().map_err(|e| fail(format!("csc view: {e}")))?;
                eq("col_ptr", view.col_ptr().to_vec(), t.col_ptr())?;
                eq("row_indices", view.row_indices().to_vec(), cells.iter().map(|c| c.0).collect())?;
                let values: Vec<u8> = cells.iter().flat_map(|c| c.2.clone()).collect();
                check!(view.values().as_bytes() == &values[..], "'{name}': values differ");
                for index in all_indices(&shape) {
                    let got = view.get(index[0], index[1]).map_err(|e| fail(format!("csc get: {e}")))?;
                    eq("csc get", got.map(|v| v.as_bytes().to_vec()), wants_bytes(&index))?;
                }
                Ok::<(), TestCaseError>(())
            })
            .transpose()?;
        }
    }
    Ok(())
}
