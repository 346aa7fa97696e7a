//! The mutations of a model file, one broken rule each, with the error
//! strict mode must give and what permissive mode does: the container's
//! rules here (`file-format.md`), one tensor's in `descriptor_mutations`.

use super::descriptor_mutations::descriptor_mutations;
use super::encode::{encode, Enc};
use super::file::{Kv, MFile, HAS_INDEX_CRC32C, HAS_KV_METADATA, SORTED_INDEX};
use super::mutator::{set, Mutation, Mutator, Perm};
use super::rng::Rng;

/// Every mutation that applies to the model file, choices drawn from `g`.
pub(crate) fn mutations(f: &MFile, enc: &Enc, g: &mut Rng) -> Vec<Mutation> {
    use Perm::*;
    let mut m = Mutator {
        f,
        enc,
        out: Vec::new(),
    };
    let tr = enc.trailer;
    let dba = u64::from(f.dba);
    let has_crc = f.flags & HAS_INDEX_CRC32C != 0;

    // file-format.md § File Header.
    let b = m.patch(|b| b[g.below(8) as usize] ^= 0x20);
    m.rejects("header magic is HRRYFILE", b, "BadMagic", "magic", Rejects);
    let v = 2 + g.below(254) as u8;
    let b = m.patch(|b| b[8] = v);
    m.rejects(
        "container_version_major above the supported one",
        b,
        "UnsupportedVersion",
        "container_version_major",
        Rejects,
    );
    let at = 10 + g.below(2);
    let b = m.patch(|b| b[at as usize] = 1);
    m.rejects("header _reserved is zero", b, "Reserved", "_reserved", Rejects);
    let bit = 1u32 << (3 + g.below(29));
    let b = m.patch(|b| set(b, 12, (f.flags | bit).to_le_bytes()));
    m.rejects("reserved file flag bits are zero", b, "Reserved", "file_flags", Rejects);
    let v = g.pick(&[0u32, 2048, 6144, 4 << 20, 4097]);
    let b = m.patch(|b| set(b, 16, v.to_le_bytes()));
    m.rejects(
        "data_buffer_alignment is a power of two in [4096, 2 MiB]",
        b,
        "Invalid",
        "data_buffer_alignment",
        Rejects,
    );
    let v = g.pick(&[0u64, 56, f.first + 4]);
    let b = m.patch(|b| set(b, 20, v.to_le_bytes()));
    m.rejects(
        "first_descriptor_offset is 8-aligned and at least 64",
        b,
        "Invalid",
        "first_descriptor_offset",
        Rejects,
    );
    if !f.tensors.is_empty() {
        // Past where the tensor region ends (the KV section, else the index):
        // no descriptor fits, and the header field is named, not an entry.
        let end = enc.kv_range.map_or(enc.index_offset, |(start, _)| start);
        let v = (end + 8).next_multiple_of(8) + 8 * g.below(4);
        let b = m.patch(|b| set(b, 20, v.to_le_bytes()));
        m.rejects(
            "first_descriptor_offset lies within the tensor region",
            b,
            "Layout",
            "first_descriptor_offset",
            Rejects,
        );
    }
    let at = 36 + g.below(28);
    let b = m.patch(|b| b[at as usize] = 0x80);
    m.rejects("_reserved_header is zero", b, "Reserved", "_reserved_header", Rejects);

    // file-format.md § Trailer.
    let at = tr + 36 + g.below(4);
    let b = m.patch(|b| b[at as usize] = b'x');
    m.rejects("trailer_magic is HRRY", b, "BadMagic", "trailer_magic", Rejects);
    let b = m.patch(|b| b.push(0));
    m.rejects(
        "the trailer is the file's last 40 bytes",
        b,
        "BadMagic",
        "trailer_magic",
        Rejects,
    );
    let at = tr + 32 + g.below(4);
    let b = m.patch(|b| b[at as usize] = 1);
    m.rejects("trailer _reserved is zero", b, "Reserved", "trailer._reserved", Rejects);
    let mut b = enc.bytes.clone();
    if has_crc {
        b[tr as usize + 28 + g.below(4) as usize] ^= 1 << g.below(8);
        m.rejects(
            "HAS_INDEX_CRC32C: the CRC matches",
            b,
            "IndexCrcMismatch",
            "index_crc32c",
            Rejects,
        );
    } else {
        set(&mut b, tr + 28, (1 + g.below(u64::from(u32::MAX)) as u32).to_le_bytes());
        m.rejects(
            "index_crc32c is 0 when HAS_INDEX_CRC32C is clear",
            b,
            "Invalid",
            "index_crc32c",
            Rejects,
        );
    }
    let b = m.patch(|b| set(b, tr + 8, (enc.index_length + 8).to_le_bytes()));
    m.rejects(
        "the index ends before the trailer",
        b,
        "SectionRange",
        "index_offset",
        Rejects,
    );
    let b = m.patch(|b| set(b, tr + 8, g.below(8).to_le_bytes()));
    m.rejects(
        "the index holds index_entry_count",
        b,
        "Invalid",
        "index_length",
        Rejects,
    );
    let b = m.patch(|b| {
        set(b, tr, (enc.index_offset - 4).to_le_bytes());
        set(b, tr + 8, (enc.index_length + 4).to_le_bytes());
    });
    if enc.index_offset - 4 >= 64 {
        m.rejects("the index is 8-aligned", b, "Invalid", "index_offset", Rejects);
    } else {
        m.rejects(
            "the index lies after the header",
            b,
            "SectionRange",
            "index_offset",
            Rejects,
        );
    }
    match enc.kv_range {
        Some((start, end)) => {
            let b = m.patch(|b| set(b, tr + 16, (1u64 << 40).to_le_bytes()));
            m.rejects(
                "the KV section lies before the index",
                b,
                "SectionRange",
                "kv_offset",
                Rejects,
            );
            let b = m.patch(|b| {
                set(b, tr + 16, (start - 4).to_le_bytes());
                set(b, tr + 24, ((end - start + 4) as u32).to_le_bytes());
            });
            if start - 4 >= 64 {
                m.rejects("the KV section is 8-aligned", b, "Invalid", "kv_offset", Rejects);
            } else {
                m.rejects(
                    "the KV section lies after the header",
                    b,
                    "SectionRange",
                    "kv_offset",
                    Rejects,
                );
            }
        }
        None => {
            let b = m.patch(|b| set(b, 12, (f.flags | HAS_KV_METADATA).to_le_bytes()));
            m.rejects("HAS_KV_METADATA means a KV section", b, "Invalid", "kv_offset", Rejects);
            let b = m.patch(|b| set(b, tr + 24, 8u32.to_le_bytes()));
            m.rejects(
                "kv_offset is 0 only without a KV section",
                b,
                "SectionRange",
                "kv_offset",
                Rejects,
            );
        }
    }

    // file-format.md § Index Section.
    let b = m.patch(|b| set(b, enc.index_offset, (u64::MAX / 2).to_le_bytes()));
    m.rejects(
        "index_entry_count fits the index",
        b,
        "CountTooLarge",
        "index_entry_count",
        Rejects,
    );
    let b = m.model(|f| f.index_extra = vec![0; 8]);
    m.rejects(
        "nothing follows the last index entry",
        b,
        "TrailingBytes",
        "index",
        Accepts,
    );
    let minor = 1 + g.below(255) as u8;
    let b = m.model(|f| {
        f.index_extra = vec![0xA5; 8];
        f.container_minor = minor;
    });
    m.accepts(
        "a newer container minor version's content after the last index entry is skipped",
        b,
    );
    if !f.tensors.is_empty() {
        let p = g.below(f.tensors.len() as u64) as usize;
        let (e, i) = (enc.entries[p], enc.index_order[p]);
        let (t, d) = (&f.tensors[i], &enc.desc[i]);
        let name = t.name.as_str();
        let entry = |field: &str| format!("index_entry[{p}].{field}");
        let b = m.patch(|b| set(b, e.at, 0u16.to_le_bytes()));
        m.rejects("name_length is at least 1", b, "Invalid", entry("name_length"), Rejects);
        let b = m.patch(|b| b[e.at as usize + 2] = 0xFF);
        m.rejects("names are UTF-8", b, "InvalidUtf8", entry("name"), Rejects);
        let v = 1u32 << g.below(32);
        let b = m.patch(|b| set(b, e.tail + 28, v.to_le_bytes()));
        m.rejects_in(
            "index entry flags are zero",
            b,
            "Reserved",
            entry("flags"),
            name,
            Rejects,
        );
        let b = m.patch(|b| set(b, e.tail, (d.start + 4).to_le_bytes()));
        m.rejects_in(
            "descriptors are 8-aligned",
            b,
            "Invalid",
            entry("descriptor_offset"),
            name,
            Rejects,
        );
        let b = m.patch(|b| set(b, e.tail, (1u64 << 40).to_le_bytes()));
        m.rejects_in(
            "descriptors lie in the tensor region",
            b,
            "OutOfRange",
            entry("descriptor_offset"),
            name,
            Rejects,
        );
        // Not for an empty tensor without padding: a shorter region may
        // misplace the next one, which is reported first.
        if (d.start + d.len - 1) % dba != 0 && d.region_end >= d.data_offset {
            let b = m.patch(|b| set(b, e.tail + 8, (d.len as u32 - 1).to_le_bytes()));
            m.rejects_in(
                "the index's descriptor_length equals the descriptor's",
                b,
                "DescriptorLengthMismatch",
                entry("descriptor_length"),
                name,
                Rejects,
            );
        }
        if d.data_length > 0 && d.start + d.len + 8 <= d.data_offset {
            let b = m.patch(|b| set(b, e.tail + 12, (d.data_offset - 8).to_le_bytes()));
            m.rejects_in(
                "data starts on a data_buffer_alignment boundary",
                b,
                "DataOffsetMisaligned",
                entry("data_offset"),
                name,
                Rejects,
            );
        }
        // data_length covering the next region: an overlap.
        let b = m.patch(|b| set(b, e.tail + 20, (d.data_length + dba).to_le_bytes()));
        let area_end = enc.kv_range.map_or(enc.index_offset, |r| r.0);
        if d.data_offset > area_end {
            // An empty tensor's boundary past the tensor area: data there
            // starts outside it.
            m.rejects_in(
                "data lies in the tensor region",
                b,
                "OutOfRange",
                entry("data_offset"),
                name,
                Rejects,
            );
        } else if d.data_offset + d.data_length + dba > area_end {
            m.rejects_in(
                "data lies in the tensor region",
                b,
                "OutOfRange",
                entry("data_length"),
                name,
                Rejects,
            );
        } else if i + 1 < f.tensors.len() {
            let q = enc.index_order.iter().position(|&k| k == i + 1).unwrap();
            let next = &f.tensors[i + 1].name;
            let field = format!("index_entry[{q}].descriptor_offset");
            m.rejects_in("regions do not overlap", b, "Layout", field, next, Rejects);
        } else {
            let field = if enc.kv_range.is_some() {
                "kv_offset"
            } else {
                "index_offset"
            };
            m.rejects("regions do not overlap", b, "Layout", field, Rejects);
        }
        // The padding between a descriptor and its data (or, for an empty
        // tensor without it, the next region) is zero.
        let gap_end = d.data_offset.min(d.region_end);
        if d.start + d.len < gap_end {
            let at = d.start + d.len + g.below(gap_end - d.start - d.len);
            let b = m.patch(|b| b[at as usize] = 1 + g.below(255) as u8);
            m.rejects("padding bytes are zero", b, "Reserved", "padding", Accepts);
        }
    }
    if f.first > 64 {
        let at = 64 + g.below(f.first - 64);
        let b = m.patch(|b| b[at as usize] = 0xFF);
        m.rejects("padding bytes are zero", b, "Reserved", "padding", Accepts);
    }
    if f.tensors.len() >= 2 {
        // The entry of the second tensor in file order made to point at the
        // first one's region (its descriptor and data): two entries, one
        // region. Rejected in both modes: permissive reading allows gaps,
        // never overlaps (an aliased region would be scanned per entry).
        let (pa, pb) = (
            enc.index_order.iter().position(|&k| k == 0).unwrap(),
            enc.index_order.iter().position(|&k| k == 1).unwrap(),
        );
        let (from, to) = (enc.entries[pa].tail as usize, enc.entries[pb].tail as usize);
        let b = m.patch(|b| {
            let tail: Vec<u8> = b[from..from + 32].to_vec();
            b[to..to + 32].copy_from_slice(&tail);
        });
        // Of two entries at one offset, the later index position comes second.
        let q = pa.max(pb);
        let name = &f.tensors[enc.index_order[q]].name;
        let field = format!("index_entry[{q}].descriptor_offset");
        m.rejects_in("regions do not overlap", b, "Layout", field, name, Rejects);
    }
    if f.tensors.len() >= 2 {
        let i = g.below(f.tensors.len() as u64 - 1) as usize;
        let j = i + 1 + g.below((f.tensors.len() - i - 1) as u64) as usize;
        let b = m.model(|f| f.tensors[j].name = f.tensors[i].name.clone());
        // Equal names: the one at the later index position is the duplicate.
        let dup = {
            let mut f2 = f.clone();
            f2.tensors[j].name = f.tensors[i].name.clone();
            let e2 = encode(&f2);
            let pi2 = e2.index_order.iter().position(|&k| k == i).unwrap();
            let pj2 = e2.index_order.iter().position(|&k| k == j).unwrap();
            pi2.max(pj2)
        };
        m.rejects(
            "tensor names are unique",
            b,
            "DuplicateName",
            format!("index_entry[{dup}].name"),
            Rejects,
        );
        let names: Vec<&[u8]> = enc.index_order.iter().map(|&k| f.tensors[k].name.as_bytes()).collect();
        if let Some(p) = (1..names.len()).find(|&p| names[p - 1] >= names[p]) {
            let b = m.patch(|b| set(b, 12, (f.flags | SORTED_INDEX).to_le_bytes()));
            m.rejects(
                "SORTED_INDEX is set only when the index is sorted",
                b,
                "IndexNotSorted",
                format!("index_entry[{p}].name"),
                Rejects,
            );
        }
    }

    // file-format.md § KV Metadata Section, § KV Value Types.
    if let (Some(kv), Some((start, _))) = (&f.kv, enc.kv_range) {
        let b = m.model(|f| f.kv_extra = vec![0; 4]);
        m.rejects(
            "nothing follows the last KV entry",
            b,
            "TrailingBytes",
            "KV section",
            Accepts,
        );
        let minor = 1 + g.below(255) as u8;
        let b = m.model(|f| {
            f.kv_extra = vec![0xA5; 4];
            f.container_minor = minor;
        });
        m.accepts(
            "a newer container minor version's content after the last KV entry is skipped",
            b,
        );
        let b = m.patch(|b| set(b, start, u32::MAX.to_le_bytes()));
        m.rejects("kv_count fits the KV section", b, "CountTooLarge", "kv_count", Rejects);
        if !kv.is_empty() {
            let i = g.below(kv.len() as u64) as usize;
            let (e, entry) = (enc.kv[i], |field: &str| format!("kv_entry[{i}].{field}"));
            let b = m.patch(|b| set(b, e.at, 0u16.to_le_bytes()));
            m.rejects("key_length is at least 1", b, "Invalid", entry("key_length"), Rejects);
            let b = m.patch(|b| b[e.key as usize] = 0xFF);
            m.rejects("keys are UTF-8", b, "InvalidUtf8", entry("key"), Rejects);
            let tag = g.pick(&[0x00u8, 0x08, 0x42, 0xEF, 0xF0, 0xFE, 0xFF]);
            let b = m.patch(|b| b[e.tag as usize] = tag);
            m.rejects("value tags are 0x01-0x07", b, "UnknownTag", entry("value_tag"), Rejects);
            match &kv[i].1 {
                Kv::Bool(_) => {
                    let v = 2 + g.below(254) as u8;
                    let b = m.patch(|b| b[e.value as usize] = v);
                    m.rejects("a bool is 0x00 or 0x01", b, "Invalid", entry("bool value"), Rejects);
                }
                Kv::Array(..) => {
                    let b = m.patch(|b| b[e.value as usize] = 0x07);
                    m.rejects("arrays do not nest", b, "Invalid", entry("element_tag"), Rejects);
                    let tag = g.pick(&[0x00u8, 0x08, 0xFF]);
                    let b = m.patch(|b| b[e.value as usize] = tag);
                    m.rejects(
                        "array element tags are 0x01-0x06",
                        b,
                        "UnknownTag",
                        entry("element_tag"),
                        Rejects,
                    );
                }
                Kv::Str(s) => {
                    if !s.is_empty() {
                        let b = m.patch(|b| b[e.value as usize + 4] = 0xFF);
                        m.rejects("strings are UTF-8", b, "InvalidUtf8", entry("string bytes"), Rejects);
                    }
                    let b = m.patch(|b| set(b, e.value, u32::MAX.to_le_bytes()));
                    m.rejects(
                        "a string fits the KV section",
                        b,
                        "CountTooLarge",
                        entry("string length"),
                        Rejects,
                    );
                }
                _ => {}
            }
        }
        if kv.len() >= 2 {
            let i = g.below(kv.len() as u64 - 1) as usize;
            let j = i + 1 + g.below((kv.len() - i - 1) as u64) as usize;
            let b = m.model(|f| {
                let kv = f.kv.as_mut().unwrap();
                kv[j].0 = kv[i].0.clone();
            });
            m.rejects(
                "KV keys are unique",
                b,
                "DuplicateKey",
                format!("kv_entry[{j}].key"),
                Rejects,
            );
        }
    }

    // Things a reader must not depend on.
    let hint = g.u64();
    let b = m.patch(|b| set(b, 28, hint.to_le_bytes()));
    m.accepts("readers do not rely on tensor_count_hint", b);
    let minor = 1 + g.below(255) as u8;
    let b = m.patch(|b| b[9] = minor);
    m.accepts("a newer container minor version is read", b);

    if !f.tensors.is_empty() {
        let i = g.below(f.tensors.len() as u64) as usize;
        descriptor_mutations(&mut m, g, i);
    }
    m.out
}
