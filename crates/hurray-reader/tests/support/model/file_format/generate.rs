//! Random valid models: every choice the spec leaves open, drawn from a
//! seed.

use std::collections::BTreeSet;

use super::element::{Dt, Ext, BUILT_IN};
use super::file::{Kv, MFile, HAS_INDEX_CRC32C, HAS_KV_METADATA, SORTED_INDEX};
use super::rng::Rng;
use super::tensor::{Body, MTensor, Quant, Stats};

/// A valid `(device_tag, sync_mode, memory_class)` (buffer-protocol.md §
/// Per-Device Validity; a CPU buffer is SYNC_PRODUCER_SYNCED).
pub(crate) fn device(g: &mut Rng) -> (u8, u8, u8) {
    if g.chance(2) {
        return (0, 0, g.pick(&[0, 1, 2]));
    }
    let device = 1 + g.below(8) as u8;
    let classes: &[u8] = match device {
        1 | 2 | 4 | 7 => &[0, 1, 2, 3],
        3 | 6 | 8 => &[0, 1, 2],
        _ => &[0], // WebGPU
    };
    (device, g.below(3) as u8, g.pick(classes))
}

pub(crate) fn ext_type(g: &mut Rng) -> Ext {
    let bit_width = g.pick(&[8u32, 16, 24, 32, 64, 128]);
    let float = g.chance(2);
    Ext {
        tag: 0xF0 + g.below(15) as u8,
        bit_width,
        is_float: u8::from(float),
        is_signed: if float { 0 } else { g.below(2) as u8 },
        sign_bits: if float { 1 } else { 0 },
        exponent_bits: if float { 5 } else { 0 },
        mantissa_bits: if float { (bit_width - 6).min(255) as u8 } else { 0 },
        exponent_bias: if float { 15 } else { 0 },
        has_nan: if float { g.below(2) as u8 } else { 0 },
        has_inf: if float { g.below(2) as u8 } else { 0 },
    }
}

pub(crate) fn stats(g: &mut Rng, t: &MTensor) -> Stats {
    let mask = g.below(64) as u32;
    let nnz = t.nnz().unwrap_or_else(|| g.below(100));
    let total: u64 = t.shape().iter().product();
    let sparsity = if total == 0 {
        0.0
    } else {
        1.0 - nnz as f64 / total as f64
    };
    let (a, b) = (g.below(1000) as f64 - 500.0, g.below(1000) as f64 - 500.0);
    let (min, max) = (a.min(b), a.max(b));
    let n = g.below(5) as u8;
    Stats {
        mask,
        nnz,
        f: [
            sparsity,
            min,
            max,
            min.abs().max(max.abs()),
            (min + max) / 2.0,
            (max - min) / 3.0,
        ],
        nm: (n, n + g.below(4) as u8),
        nan_inf: (g.below(2) as u8, g.below(2) as u8),
    }
}

pub(crate) fn tensor(seed: u64) -> MTensor {
    let g = &mut Rng(seed);
    let csc = g.chance(3);
    let dt = if !csc && g.chance(6) {
        Dt::Ext(ext_type(g))
    } else {
        g.pick(&BUILT_IN)
    };
    let w = dt.width() as u64;
    let body = if csc {
        let (nrows, ncols) = (g.below(7), g.below(7));
        let mut cells = Vec::new();
        for c in 0..ncols {
            for r in 0..nrows {
                if g.chance(3) {
                    cells.push((r, c, g.bytes(w as usize)));
                }
            }
        }
        Body::Csc { nrows, ncols, cells }
    } else {
        let rank = g.below(4) as usize;
        let shape: Vec<u64> = (0..rank)
            .map(|_| if g.chance(8) { 0 } else { 1 + g.below(5) })
            .collect();
        let n: u64 = shape.iter().product();
        // A multiple of the element's alignment (its width here).
        let byte_offset = if g.chance(2) { 0 } else { w * g.below(4) };
        Body::Dense {
            byte_offset,
            buf: g.bytes((byte_offset + n * w) as usize),
            shape,
        }
    };
    let mut t = MTensor {
        name: String::new(),
        dt,
        version_minor: 0,
        trailing: Vec::new(),
        body,
        quant: None,
        shard: None,
        stats: None,
        device: device(g),
        aligns: Vec::new(),
        extra: Vec::new(),
        pad_to_dba: g.chance(3),
        empty_unpadded: g.chance(2),
    };
    if !csc && dt.is_quantizable() && g.chance(2) {
        let (lo, hi) = dt.range();
        let scale = loop {
            let s = f32::from_bits(g.u64() as u32);
            if s.is_finite() && s != 0.0 {
                break s;
            }
        };
        t.quant = Some(Quant {
            scale,
            zero_point: (lo + g.below((hi - lo) as u64 + 1) as i64) as i32,
            pad: g.pick(&[0, 0, 4, 8]),
        });
    }
    if g.chance(3) {
        let shape = t.shape();
        let extra: Vec<u64> = shape.iter().map(|_| g.below(4)).collect();
        let parent = shape.iter().zip(&extra).map(|(s, e)| s + e).collect();
        let offset = extra.iter().map(|&e| g.below(e + 1)).collect();
        t.shard = Some((parent, offset));
    }
    if g.chance(3) {
        t.stats = Some(stats(g, &t));
    }
    if g.chance(5) {
        // A newer minor version's trailing fields: skipped by a 1.0 reader.
        t.version_minor = 1;
        let n = g.below(12) as usize;
        t.trailing = g.bytes(n);
    }
    let sizes: Vec<usize> = t.buffers().iter().map(Vec::len).collect();
    t.aligns = sizes
        .iter()
        .map(|&s| {
            if s == 0 && g.chance(2) {
                1 << g.below(13) // any power of two for an empty buffer
            } else {
                64 << g.below(7) // 64 ..= 4096, delivered by the 4096 grid
            }
        })
        .collect();
    t.extra = vec![Vec::new(); sizes.len()];
    t
}

pub(crate) fn kv_value(g: &mut Rng, tag: u8) -> Kv {
    match tag {
        1 => Kv::Str(if g.chance(5) { String::new() } else { g.text(1, 6) }),
        2 => Kv::I64(g.u64() as i64),
        3 => Kv::U64(g.u64()),
        4 => Kv::F64(if g.chance(4) {
            g.pick(&[
                f64::NAN.to_bits(),
                (-0.0f64).to_bits(),
                f64::INFINITY.to_bits(),
                0x7FF0_0000_0000_0001,
            ])
        } else {
            g.u64()
        }),
        5 => Kv::Bool(g.chance(2)),
        6 => {
            let n = g.below(6) as usize;
            Kv::Bytes(g.bytes(n))
        }
        _ => {
            let element = 1 + g.below(6) as u8;
            let n = g.below(4);
            Kv::Array(element, (0..n).map(|_| kv_value(g, element)).collect())
        }
    }
}

pub(crate) fn file_model(tensor_seeds: &[u64], kv_seeds: Option<&[u64]>, seed: u64) -> MFile {
    let g = &mut Rng(seed);
    let mut names = BTreeSet::new();
    let mut tensors = Vec::new();
    for &s in tensor_seeds {
        let mut t = tensor(s);
        let mut name = Rng(s ^ 0x5EED).text(1, 8);
        while !names.insert(name.clone()) {
            name.push('#');
        }
        t.name = name;
        tensors.push(t);
    }
    let kv = kv_seeds.map(|seeds| {
        let mut keys = BTreeSet::new();
        seeds
            .iter()
            .map(|&s| {
                let g = &mut Rng(s);
                let mut key = g.text(1, 6);
                while !keys.insert(key.clone()) {
                    key.push('~');
                }
                let tag = 1 + g.below(7) as u8;
                (key, kv_value(g, tag))
            })
            .collect()
    });
    let index_sorted = g.chance(2);
    let mut flags = 0;
    if index_sorted && g.chance(2) {
        flags |= SORTED_INDEX;
    }
    if !g.chance(4) {
        flags |= HAS_INDEX_CRC32C;
    }
    // NOTES.md 'HAS_KV_METADATA': the trailer decides; the flag is optional.
    if kv.is_some() && g.chance(2) {
        flags |= HAS_KV_METADATA;
    }
    let n = tensors.len() as u64;
    MFile {
        container_minor: 0,
        flags,
        dba: g.pick(&[4096, 4096, 8192]),
        first: 64 + 8 * g.pick(&[0, 0, 1, 3]),
        hint: if g.chance(2) { n } else { u64::MAX },
        tensors,
        index_sorted,
        kv,
        kv_extra: Vec::new(),
        index_extra: Vec::new(),
    }
}
