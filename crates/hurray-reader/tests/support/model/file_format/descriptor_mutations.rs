//! Mutations of one tensor: `metadata.md`, `buffer-protocol.md` and the
//! layouts' rules.

use super::element::Dt;
use super::mutator::{set, Mutator, Perm};
use super::rng::Rng;
use super::tensor::Body;

/// metadata.md, buffer-protocol.md and the layouts, on tensor `i`.
pub(crate) fn descriptor_mutations(m: &mut Mutator<'_>, g: &mut Rng, i: usize) {
    use Perm::*;
    let (f, enc) = (m.f, m.enc);
    let (t, d) = (&f.tensors[i], &enc.desc[i]);
    let name = t.name.as_str();
    let p = enc.index_order.iter().position(|&k| k == i).unwrap();
    let e = enc.entries[p];
    let dba = u64::from(f.dba);
    let ext = matches!(t.dt, Dt::Ext(_));
    let w = t.dt.width() as u64;

    let at = d.start + g.below(4);
    let b = m.patch(|b| b[at as usize] ^= 0x01);
    m.rejects_in("descriptor magic is HRRY", b, "BadMagic", "magic", name, Rejects);
    let b = m.patch(|b| b[d.start as usize + 4] = 2 + g.below(254) as u8);
    m.rejects_in(
        "version_major above the supported one",
        b,
        "UnsupportedVersion",
        "version_major",
        name,
        Rejects,
    );
    // Only where the next region does not start right after the
    // descriptor (an empty tensor without padding): there a shorter
    // descriptor misplaces the next region, which is reported first.
    if (d.start + 16).div_ceil(dba) * dba == d.data_offset && d.region_end >= d.data_offset {
        let b = m.patch(|b| {
            set(b, d.start + 6, 16u32.to_le_bytes());
            set(b, e.tail + 8, 16u32.to_le_bytes());
        });
        m.rejects_in(
            "descriptor_length is at least 20",
            b,
            "Invalid",
            "descriptor_length",
            name,
            Rejects,
        );
    }
    let bit = 1u32 << (5 + g.below(27));
    let b = m.patch(|b| set(b, d.start + 10, (t.flags() | bit).to_le_bytes()));
    m.rejects_in(
        "reserved descriptor flag bits are zero",
        b,
        "Reserved",
        "flags",
        name,
        Rejects,
    );
    let b = m.patch(|b| set(b, d.start + 10, (t.flags() ^ 4).to_le_bytes()));
    m.rejects_in(
        "HAS_EXTENSION_TYPE iff a private type tag",
        b,
        "Invalid",
        "flags",
        name,
        Rejects,
    );
    if !ext {
        let tag = g.pick(&[0x00u8, 0xFF]);
        let b = m.patch(|b| b[d.start as usize + 14] = tag);
        m.rejects_in(
            "type tags 0x00 and 0xFF are invalid",
            b,
            "UnknownTag",
            "type_tag",
            name,
            Rejects,
        );
        if t.quant.is_none() {
            let tag = g.pick(&[0x05u8, 0x30, 0x47, 0x52, 0x7F, 0x80, 0xEF]);
            let b = m.patch(|b| b[d.start as usize + 14] = tag);
            m.rejects_in(
                "unknown type tags (permissive: kept, not interpreted)",
                b,
                "UnknownTag",
                "type_tag",
                name,
                Accepts,
            );
        }
    }
    let tag = g.pick(&[0x0Cu8, 0x20, 0x3F, 0x41, 0x80, 0xEF]);
    let b = m.patch(|b| b[d.start as usize + 15] = tag);
    m.rejects_in(
        "unknown layout tags (permissive: kept, not interpreted)",
        b,
        "UnknownTag",
        "layout_tag",
        name,
        Accepts,
    );
    let tag = g.pick(&[0x00u8, 0xFF]);
    let b = m.patch(|b| b[d.start as usize + 15] = tag);
    m.rejects_in(
        "layout tags 0x00 and 0xFF are invalid",
        b,
        "UnknownTag",
        "layout_tag",
        name,
        Rejects,
    );
    let rank = 65 + g.below(1000) as u32;
    let b = m.patch(|b| set(b, d.start + 16, rank.to_le_bytes()));
    m.rejects_in("rank is at most 64", b, "Invalid", "rank", name, Rejects);
    let bytes_trailing = m.model(|f| {
        f.tensors[i].version_minor = 0;
        f.tensors[i].trailing = vec![0; 1 + g.below(8) as usize];
    });
    m.rejects_in(
        "no bytes after the last section at version 1.0",
        bytes_trailing,
        "TrailingBytes",
        "descriptor",
        name,
        Accepts,
    );
    let b = m.patch(|b| b[d.start as usize + 5] = 2 + g.below(254) as u8);
    m.accepts("a newer descriptor minor version is read", b);

    // buffer-protocol.md § Buffer Handle.
    let k = g.below(d.handles.len() as u64) as usize;
    let h = d.handles[k];
    let buf = |field: &str| format!("buffer[{k}].{field}");
    let (size, device) = (d.buffers[k].1, t.device.0);
    let v = if size > 0 {
        g.pick(&[0u32, 96, 32, 1])
    } else {
        g.pick(&[0u32, 96, 3])
    };
    let b = m.patch(|b| set(b, h + 8, v.to_le_bytes()));
    m.rejects_in(
        "alignment is a power of two, at least 64 when non-empty",
        b,
        "Invalid",
        buf("alignment"),
        name,
        Rejects,
    );
    let v = g.pick(&[0x09u8, 0xEF, 0xF0, 0xFF]);
    let b = m.patch(|b| b[h as usize + 12] = v);
    m.rejects_in(
        "device tags are defined",
        b,
        "UnknownTag",
        buf("device_tag"),
        name,
        Rejects,
    );
    let v = if device == 0 && g.chance(2) {
        1 + g.below(2) as u8
    } else {
        3 + g.below(253) as u8
    };
    let b = m.patch(|b| b[h as usize + 13] = v);
    m.rejects_in(
        "sync_mode is defined (0 on CPU)",
        b,
        "Invalid",
        buf("sync_mode"),
        name,
        Rejects,
    );
    let v = if device == 0 && g.chance(2) {
        3
    } else {
        g.pick(&[0x04u8, 0xEF, 0xF0, 0xFF])
    };
    let b = m.patch(|b| b[h as usize + 14] = v);
    m.rejects_in(
        "memory_class is defined for the device",
        b,
        "Invalid",
        buf("memory_class"),
        name,
        Rejects,
    );
    let b = m.patch(|b| b[h as usize + 15] = 1 + g.below(255) as u8);
    m.rejects_in(
        "the handle's reserved byte is zero",
        b,
        "Reserved",
        buf("_reserved"),
        name,
        Rejects,
    );
    if d.handles.len() > 1 {
        let k = 1 + g.below(d.handles.len() as u64 - 1) as usize;
        let others: Vec<u8> = [1u8, 2, 4, 7].into_iter().filter(|&x| x != device).collect();
        let v = g.pick(&others);
        let b = m.patch(|b| b[d.handles[k] as usize + 12] = v);
        m.rejects_in(
            "all buffers share device_tag and memory_class",
            b,
            "Invalid",
            format!("buffer[{k}].device_tag"),
            name,
            Rejects,
        );
    }

    // Layouts, buffer sizes, byte_offset.
    match &t.body {
        Body::Dense { shape, .. } => {
            let b = m.model(|f| {
                f.tensors[i].extra[0] = vec![0; w as usize];
                f.tensors[i].aligns[0] = f.tensors[i].aligns[0].max(64);
            });
            m.rejects_in(
                "a dense buffer has the computed size (permissive: at least)",
                b,
                "BufferSize",
                "buffer[0].byte_size",
                name,
                Accepts,
            );
            let v = d.buffers[0].1 + w;
            let b = m.patch(|b| set(b, d.byte_offset, v.to_le_bytes()));
            m.rejects_in(
                "byte_offset is at most buffer 0's size",
                b,
                "Invalid",
                "byte_offset",
                name,
                Rejects,
            );
            if !ext && w >= 2 {
                let b = m.model(|f| {
                    let Body::Dense { byte_offset, buf, .. } = &mut f.tensors[i].body else {
                        unreachable!()
                    };
                    *byte_offset += 1;
                    buf.insert(0, 0);
                    f.tensors[i].aligns[0] = f.tensors[i].aligns[0].max(64);
                });
                m.rejects_in(
                    "byte_offset keeps elements aligned (permissive: decoded)",
                    b,
                    "Invalid",
                    "byte_offset",
                    name,
                    Accepts,
                );
            }
            if !shape.is_empty() {
                let k = g.below(shape.len() as u64) as usize;
                let b = m.patch(|b| set(b, d.shape + 8 * k as u64, u64::MAX.to_le_bytes()));
                m.rejects_in(
                    "a stored tensor has no dynamic dimension",
                    b,
                    "DynamicDimension",
                    format!("shape[{k}]"),
                    name,
                    Rejects,
                );
                let rest: u64 = shape[1..].iter().product();
                if shape.iter().all(|&s| s > 0) && rest * w >= 4 {
                    let b = m.patch(|b| set(b, d.shape, (1u64 << 62).to_le_bytes()));
                    m.rejects_in("sizes do not overflow", b, "Overflow", "shape", name, Rejects);
                }
            }
        }
        Body::Csc { nrows, ncols, cells } => {
            let nnz = cells.len() as u64;
            let b = m.model(|f| f.tensors[i].extra[2] = vec![0; 8]);
            m.rejects_in(
                "sparse buffers have exactly the listed size",
                b,
                "BufferSize",
                "buffer[2].byte_size",
                name,
                Rejects,
            );
            let b = m.patch(|b| set(b, d.layout_fields, (nnz + 1).to_le_bytes()));
            m.rejects_in("nnz agrees with the buffers", b, "NnzMismatch", "nnz", name, Rejects);
            let at = d.layout_fields + 8 + g.below(8);
            let b = m.patch(|b| b[at as usize] = 1);
            m.rejects_in("CSC _reserved is zero", b, "Reserved", "_reserved", name, Rejects);
            let b = m.patch(|b| set(b, d.byte_offset, 8u64.to_le_bytes()));
            m.rejects_in("a CSC byte_offset is 0", b, "Invalid", "byte_offset", name, Rejects);
            // layouts/csc.md § Storage Invariants: strict views scan, permissive ones do not.
            let (rows_at, ptr_at) = (d.buffers[1].0, d.buffers[2].0);
            let ptr = t.col_ptr();
            let b = m.patch(|b| set(b, ptr_at, (1 + g.below(5)).to_le_bytes()));
            m.rejects_in("col_ptr[0] = 0", b, "PtrFirst", "col_ptr[0]", name, Accepts);
            if *ncols > 0 {
                let b = m.patch(|b| set(b, ptr_at + 8 * ncols, (nnz + 1).to_le_bytes()));
                m.rejects_in(
                    "col_ptr[ncols] = nnz",
                    b,
                    "PtrLast",
                    format!("col_ptr[{ncols}]"),
                    name,
                    Accepts,
                );
            }
            if *ncols > 1 {
                let j = 1 + g.below(ncols - 1);
                let b = m.patch(|b| set(b, ptr_at + 8 * j, (nnz + 1).to_le_bytes()));
                m.rejects_in(
                    "col_ptr is non-decreasing",
                    b,
                    "PtrTooLarge",
                    format!("col_ptr[{j}]"),
                    name,
                    Accepts,
                );
            }
            let dup: Vec<usize> = (0..*ncols as usize).filter(|&j| ptr[j + 1] - ptr[j] >= 2).collect();
            if !dup.is_empty() {
                let j = g.pick(&dup);
                let q = ptr[j] + g.below(ptr[j + 1] - ptr[j] - 1) + 1;
                let prev = cells[q as usize - 1].0;
                let b = m.patch(|b| set(b, rows_at + 8 * q, (prev - g.below(prev + 1)).to_le_bytes()));
                m.rejects_in(
                    "rows strictly increase within a column",
                    b,
                    "NotIncreasing",
                    format!("row_indices[{q}]"),
                    name,
                    Accepts,
                );
            }
            let filled: Vec<usize> = (0..*ncols as usize).filter(|&j| ptr[j + 1] > ptr[j]).collect();
            if !filled.is_empty() {
                let j = g.pick(&filled);
                let q = ptr[j + 1] - 1;
                let b = m.patch(|b| set(b, rows_at + 8 * q, (nrows + g.below(3)).to_le_bytes()));
                m.rejects_in(
                    "row indices are below nrows",
                    b,
                    "IndexOutOfBounds",
                    format!("row_indices[{q}]"),
                    name,
                    Accepts,
                );
            }
        }
    }

    // Optional sections.
    if let Some(q) = d.quant {
        let v = g.pick(&[0.0f32, -0.0, f32::NAN, f32::INFINITY]);
        let b = m.patch(|b| set(b, q + 4, v.to_le_bytes()));
        m.rejects_in(
            "a per-tensor scale is finite and non-zero",
            b,
            "InvalidNumber",
            "quantization.scale",
            name,
            Rejects,
        );
        let (lo, hi) = t.dt.range();
        if t.dt != Dt::I32 {
            let v = if g.chance(2) { lo - 1 } else { hi + 1 } as i32;
            let b = m.patch(|b| set(b, q + 8, v.to_le_bytes()));
            m.rejects_in(
                "the zero point fits the storage type",
                b,
                "InvalidNumber",
                "quantization.zero_point",
                name,
                Rejects,
            );
        }
        let b = m.patch(|b| b[q as usize + 1] = 2 + g.below(254) as u8);
        m.rejects_in(
            "scheme_version is defined",
            b,
            "UnsupportedVersion",
            "quantization.scheme_version",
            name,
            Rejects,
        );
        let b = m.patch(|b| set(b, q + 2, (1u16 << g.below(16)).to_le_bytes()));
        m.rejects_in(
            "per-tensor flags are zero",
            b,
            "Reserved",
            "quantization.flags",
            name,
            Rejects,
        );
        let at = q + 12 + g.below(4);
        let b = m.patch(|b| b[at as usize] = 1);
        m.rejects_in(
            "per-tensor _reserved is zero",
            b,
            "Reserved",
            "quantization._reserved",
            name,
            Rejects,
        );
        let tag = g.pick(&[0x06u8, 0x20, 0x5F, 0xF0]);
        let b = m.patch(|b| b[q as usize] = tag);
        m.rejects_in(
            "unknown schemes (permissive: kept, not dequantized)",
            b,
            "UnknownTag",
            "quantization.scheme_tag",
            name,
            Accepts,
        );
        let tag = g.pick(&[0x00u8, 0xFF]);
        let b = m.patch(|b| b[q as usize] = tag);
        m.rejects_in(
            "scheme tags 0x00 and 0xFF are invalid",
            b,
            "UnknownTag",
            "quantization.scheme_tag",
            name,
            Rejects,
        );
    }
    if let (Some(s), Some((parent, _))) = (d.shard, &t.shard) {
        if !parent.is_empty() {
            let k = g.below(parent.len() as u64) as usize;
            let shape = t.shape();
            let v = parent[k] - shape[k] + 1 + g.below(3);
            let b = m.patch(|b| set(b, s + 8 * (parent.len() + k) as u64, v.to_le_bytes()));
            m.rejects_in(
                "shard_offset + shape <= parent_shape",
                b,
                "Invalid",
                format!("shard_offset[{k}]"),
                name,
                Rejects,
            );
        }
    }
    if let (Some(s), Some(st)) = (d.stats, t.stats) {
        let bit = 1u32 << (6 + g.below(26));
        let b = m.patch(|b| set(b, s, (st.mask | bit).to_le_bytes()));
        m.rejects_in(
            "reserved computed_mask bits are zero",
            b,
            "Reserved",
            "statistics.computed_mask",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[s as usize + 4 + g.below(4) as usize] = 1);
        m.rejects_in(
            "statistics _reserved is zero",
            b,
            "Reserved",
            "statistics._reserved",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[s as usize + 68 + g.below(4) as usize] = 1);
        m.rejects_in(
            "statistics _reserved2 is zero",
            b,
            "Reserved",
            "statistics._reserved2",
            name,
            Rejects,
        );
        // metadata.md § Statistics Section › Field Encoding: checked only
        // under their computed_mask bit (NOTES.md 'value_stddev, nm_n/nm_m':
        // strict; permissive keeps the advisory block).
        let stddev = g.pick(&[-1.0f64, -f64::MIN_POSITIVE, f64::NEG_INFINITY, f64::NAN]);
        let b = m.patch(|b| set(b, s + 56, stddev.to_le_bytes()));
        if st.mask & 8 != 0 {
            m.rejects_in(
                "value_stddev >= 0.0 under VALUE_STATS_VALID",
                b,
                "InvalidNumber",
                "statistics.value_stddev",
                name,
                Accepts,
            );
        } else {
            m.accepts("value_stddev is unknown without VALUE_STATS_VALID", b);
        }
        let n = 1 + g.below(255) as u8;
        let below_n = g.below(u64::from(n)) as u8;
        let b = m.patch(|b| {
            b[s as usize + 64] = n;
            b[s as usize + 65] = below_n;
        });
        if st.mask & 16 != 0 {
            m.rejects_in(
                "nm_n <= nm_m under NM_SPARSITY_VALID",
                b,
                "Invalid",
                "statistics.nm_n",
                name,
                Accepts,
            );
        } else {
            m.accepts("nm_n and nm_m are unknown without NM_SPARSITY_VALID", b);
        }
        if t.nnz().is_some() && st.mask & 1 != 0 {
            let b = m.patch(|b| set(b, s + 8, (st.nnz + 1 + g.below(9)).to_le_bytes()));
            m.rejects_in(
                "statistics nnz equals the CSC nnz (permissive: the descriptor's wins)",
                b,
                "StatisticsNnzMismatch",
                "statistics.nnz",
                name,
                Accepts,
            );
        }
    }
    if let Some(x) = d.ext {
        let b = m.patch(|b| b[x as usize + 4] = 2 + g.below(6) as u8);
        m.rejects_in(
            "packing_factor is 1 for whole-byte types",
            b,
            "Invalid",
            "extension_type.packing_factor",
            name,
            Rejects,
        );
        let v = g.pick(&[0u32, 3, 5, 7, 12]);
        let b = m.patch(|b| set(b, x, v.to_le_bytes()));
        m.rejects_in(
            "bit_width is 1, 2, 4 or whole bytes",
            b,
            "Invalid",
            "extension_type.bit_width",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[x as usize + 10 + g.below(2) as usize] = 1);
        m.rejects_in(
            "extension _reserved is zero",
            b,
            "Reserved",
            "extension_type._reserved",
            name,
            Rejects,
        );
        let b = m.patch(|b| b[x as usize + 18 + g.below(2) as usize] = 1);
        m.rejects_in(
            "extension _reserved2 is zero",
            b,
            "Reserved",
            "extension_type._reserved2",
            name,
            Rejects,
        );
    }
}
