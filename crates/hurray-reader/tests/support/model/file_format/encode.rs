//! A model file laid out byte by byte (`file-format.md` § File Layout,
//! `metadata.md`), recording where every field lies.

use super::element::Dt;
use super::file::{Kv, MFile, HAS_INDEX_CRC32C};
use super::rng::align_up;
use super::tensor::MTensor;

/// Absolute positions of a descriptor's fields and of its data.
#[derive(Debug, Clone, Default)]
pub(crate) struct DescMap {
    pub(crate) start: u64,
    pub(crate) len: u64,
    pub(crate) shape: u64,
    pub(crate) byte_offset: u64,
    pub(crate) layout_fields: u64,
    pub(crate) buffer_count: u64,
    /// Offset of each handle.
    pub(crate) handles: Vec<u64>,
    /// The quantization payload (after `quantization_length`).
    pub(crate) quant: Option<u64>,
    pub(crate) shard: Option<u64>,
    pub(crate) stats: Option<u64>,
    pub(crate) ext: Option<u64>,
    /// Each buffer's `(offset, byte_size)`.
    pub(crate) buffers: Vec<(u64, u64)>,
    pub(crate) data_offset: u64,
    pub(crate) data_length: u64,
    /// Where the next region starts.
    pub(crate) region_end: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryMap {
    pub(crate) at: u64,
    pub(crate) tail: u64,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct KvMap {
    pub(crate) at: u64,
    pub(crate) key: u64,
    pub(crate) tag: u64,
    pub(crate) value: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Enc {
    pub(crate) bytes: Vec<u8>,
    /// Per tensor, in write order.
    pub(crate) desc: Vec<DescMap>,
    /// Tensor (write-order position) of each index entry.
    pub(crate) index_order: Vec<usize>,
    /// Per index entry.
    pub(crate) entries: Vec<EntryMap>,
    pub(crate) kv: Vec<KvMap>,
    pub(crate) kv_range: Option<(u64, u64)>,
    pub(crate) index_offset: u64,
    pub(crate) index_length: u64,
    pub(crate) trailer: u64,
}

pub(crate) fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}
pub(crate) fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
pub(crate) fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}
pub(crate) fn pad_to(b: &mut Vec<u8>, at: u64) {
    assert!(b.len() as u64 <= at);
    b.resize(at as usize, 0);
}

/// `metadata.md`: the descriptor of `t`, its field offsets relative to its
/// start.
pub(crate) fn descriptor(t: &MTensor) -> (Vec<u8>, DescMap) {
    let mut b = Vec::new();
    let mut m = DescMap::default();
    b.extend_from_slice(b"HRRY");
    b.push(1);
    b.push(t.version_minor);
    put_u32(&mut b, 0); // descriptor_length, patched below
    put_u32(&mut b, t.flags());
    b.push(t.dt.tag());
    b.push(t.layout_tag());
    put_u32(&mut b, t.rank() as u32);
    m.shape = b.len() as u64;
    for d in t.shape() {
        put_u64(&mut b, d);
    }
    m.byte_offset = b.len() as u64;
    put_u64(&mut b, t.byte_offset());
    m.layout_fields = b.len() as u64;
    if let Some(nnz) = t.nnz() {
        put_u64(&mut b, nnz); // nnz
        b.extend_from_slice(&[0; 8]); // _reserved
    }
    m.buffer_count = b.len() as u64;
    let buffers = t.buffers();
    b.push(buffers.len() as u8);
    let (device, sync, class) = t.device;
    for (buf, &align) in buffers.iter().zip(&t.aligns) {
        m.handles.push(b.len() as u64);
        put_u64(&mut b, buf.len() as u64);
        put_u32(&mut b, align);
        b.extend_from_slice(&[device, sync, class, 0]);
    }
    if let Some(q) = t.quant {
        put_u32(&mut b, 16 + q.pad as u32);
        m.quant = Some(b.len() as u64);
        b.extend_from_slice(&[0x01, 0x01, 0, 0]); // scheme_tag, scheme_version, flags
        b.extend_from_slice(&q.scale.to_le_bytes());
        b.extend_from_slice(&q.zero_point.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        b.resize(b.len() + q.pad, 0);
    }
    if let Some((parent, offset)) = &t.shard {
        m.shard = Some(b.len() as u64);
        parent.iter().chain(offset).for_each(|&v| put_u64(&mut b, v));
    }
    if let Some(s) = t.stats {
        m.stats = Some(b.len() as u64);
        put_u32(&mut b, s.mask);
        put_u32(&mut b, 0);
        put_u64(&mut b, s.nnz);
        s.f.iter().for_each(|v| put_u64(&mut b, v.to_bits()));
        b.extend_from_slice(&[s.nm.0, s.nm.1, s.nan_inf.0, s.nan_inf.1, 0, 0, 0, 0]);
    }
    if let Dt::Ext(e) = t.dt {
        m.ext = Some(b.len() as u64);
        put_u32(&mut b, e.bit_width);
        let packing = if e.bit_width >= 8 { 1 } else { (8 / e.bit_width) as u8 };
        b.extend_from_slice(&[
            packing,
            e.is_float,
            e.is_signed,
            e.sign_bits,
            e.exponent_bits,
            e.mantissa_bits,
            0,
            0,
        ]);
        put_u32(&mut b, e.exponent_bias);
        b.extend_from_slice(&[e.has_nan, e.has_inf, 0, 0]);
    }
    b.extend_from_slice(&t.trailing);
    let len = b.len() as u32;
    b[6..10].copy_from_slice(&len.to_le_bytes());
    m.len = u64::from(len);
    (b, m)
}

pub(crate) fn kv_payload(b: &mut Vec<u8>, v: &Kv) {
    match v {
        Kv::Str(s) => {
            put_u32(b, s.len() as u32);
            b.extend_from_slice(s.as_bytes());
        }
        Kv::I64(x) => b.extend_from_slice(&x.to_le_bytes()),
        Kv::U64(x) | Kv::F64(x) => put_u64(b, *x),
        Kv::Bool(x) => b.push(u8::from(*x)),
        Kv::Bytes(x) => {
            put_u32(b, x.len() as u32);
            b.extend_from_slice(x);
        }
        Kv::Array(tag, xs) => {
            b.push(*tag);
            put_u32(b, xs.len() as u32);
            xs.iter().for_each(|x| kv_payload(b, x));
        }
    }
}

/// `file-format.md` § File Layout, in write order.
pub(crate) fn encode(f: &MFile) -> Enc {
    let dba = u64::from(f.dba);
    let mut b = Vec::new();
    b.extend_from_slice(b"HRRYFILE");
    b.extend_from_slice(&[1, f.container_minor, 0, 0]);
    put_u32(&mut b, f.flags);
    put_u32(&mut b, f.dba);
    put_u64(&mut b, f.first);
    put_u64(&mut b, f.hint);
    b.extend_from_slice(&[0; 28]);
    assert_eq!(b.len(), 64);
    pad_to(&mut b, f.first);

    let mut desc = Vec::new();
    for t in &f.tensors {
        let start = b.len() as u64;
        assert_eq!(start % 8, 0);
        let (bytes, mut m) = descriptor(t);
        b.extend_from_slice(&bytes);
        for o in [
            &mut m.shape,
            &mut m.byte_offset,
            &mut m.layout_fields,
            &mut m.buffer_count,
        ] {
            *o += start;
        }
        m.handles.iter_mut().for_each(|h| *h += start);
        for o in [&mut m.quant, &mut m.shard, &mut m.stats, &mut m.ext]
            .into_iter()
            .flatten()
        {
            *o += start;
        }
        m.start = start;
        // § Data Buffer Placement: every buffer on a boundary.
        let data_offset = align_up(b.len() as u64, dba);
        let buffers = t.buffers();
        if t.empty_unpadded && buffers.iter().all(Vec::is_empty) {
            // Every buffer at `data_offset`, no byte written there.
            m.buffers = buffers.iter().map(|_| (data_offset, 0)).collect();
        } else {
            pad_to(&mut b, data_offset);
            for buf in buffers {
                let at = align_up(b.len() as u64, dba);
                pad_to(&mut b, at);
                m.buffers.push((b.len() as u64, buf.len() as u64));
                b.extend_from_slice(&buf);
            }
        }
        m.data_offset = data_offset;
        // NOTES.md 'data_length': to the last byte of the last buffer.
        m.data_length = (b.len() as u64).saturating_sub(data_offset);
        let mut end = b.len() as u64;
        if t.pad_to_dba {
            end = align_up(end, dba);
        }
        pad_to(&mut b, align_up(end, 8));
        m.region_end = b.len() as u64;
        desc.push(m);
    }

    let mut kv_map = Vec::new();
    let kv_range = f.kv.as_ref().map(|kv| {
        let start = b.len() as u64;
        put_u32(&mut b, kv.len() as u32);
        for (key, value) in kv {
            let at = b.len() as u64;
            put_u16(&mut b, key.len() as u16);
            let key_at = b.len() as u64;
            b.extend_from_slice(key.as_bytes());
            let tag = b.len() as u64;
            b.push(value.tag());
            kv_map.push(KvMap {
                at,
                key: key_at,
                tag,
                value: tag + 1,
            });
            kv_payload(&mut b, value);
        }
        b.extend_from_slice(&f.kv_extra);
        let end = b.len() as u64;
        pad_to(&mut b, align_up(end, 8));
        (start, end)
    });

    let mut index_order: Vec<usize> = (0..f.tensors.len()).collect();
    if f.index_sorted {
        index_order.sort_by(|&a, &b| f.tensors[a].name.as_bytes().cmp(f.tensors[b].name.as_bytes()));
    }
    let index_offset = b.len() as u64;
    put_u64(&mut b, index_order.len() as u64);
    let mut entries = Vec::new();
    for &i in &index_order {
        let (t, m) = (&f.tensors[i], &desc[i]);
        let at = b.len() as u64;
        put_u16(&mut b, t.name.len() as u16);
        b.extend_from_slice(t.name.as_bytes());
        let tail = b.len() as u64;
        put_u64(&mut b, m.start);
        put_u32(&mut b, m.len as u32);
        put_u64(&mut b, m.data_offset);
        put_u64(&mut b, m.data_length);
        put_u32(&mut b, 0);
        entries.push(EntryMap { at, tail });
    }
    b.extend_from_slice(&f.index_extra);
    let index_length = b.len() as u64 - index_offset;

    let trailer = b.len() as u64;
    put_u64(&mut b, index_offset);
    put_u64(&mut b, index_length);
    let (kv_offset, kv_length) = kv_range.map_or((0, 0), |(s, e)| (s, e - s));
    put_u64(&mut b, kv_offset);
    put_u32(&mut b, kv_length as u32);
    let crc = if f.flags & HAS_INDEX_CRC32C != 0 {
        crc32c::crc32c(&b[index_offset as usize..trailer as usize])
    } else {
        0
    };
    put_u32(&mut b, crc);
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(b"HRRY");
    Enc {
        bytes: b,
        desc,
        index_order,
        entries,
        kv: kv_map,
        kv_range,
        index_offset,
        index_length,
        trailer,
    }
}
