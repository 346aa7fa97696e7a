//! Block-paged mutations: one rule broken at a time.

use hurray_reader::{AlignedBytes, HurrayFile, Options};
use hurray_writer::quant::PerBlockAffine;
use hurray_writer::{BlockPaged, BufferHandle, Layout, RawDescriptor, Shard, TensorDescriptor};
use proptest::prelude::*;
use proptest::sample::Index;

use super::block_paged::{BpCase, BpModel};
use super::damage::{buffer, expect, named, padding_bits, Expect, RawEdit, BP_FIELDS, BP_INV, BP_TABLE, BYTE_OFFSET};
use super::types::{le_index, write_raw, Quant, Ty};

#[derive(Debug, Clone)]
pub(crate) enum BpBreak {
    /// Invariant 1: `seq_ptr[0] != 0`.
    SeqPtrFirst { value: u64 },
    /// Invariant 2: `seq_ptr` decreases.
    SeqPtrDecreasing { pick: Index },
    /// Invariant 1 / § Buffer Table: `seq_ptr[num_seqs]` is not the block
    /// table's length.
    SeqPtrLast { up: bool },
    /// Invariant 3: a page id `>= num_pages`.
    PageOutOfBounds { pick: Index, extra: u64 },
    /// Invariant 4: `page_pool` one element longer or shorter.
    PoolLength { longer: bool },
    /// Invariant 4: `num_pages` one more or less than the pool holds.
    NumPages { up: bool },
    /// § Buffer Table: `seq_ptr` not `num_seqs + 1` entries.
    SeqPtrLength { longer: bool },
    /// Invariant 6 / § Additional Descriptor Fields: `paged_axis != 0`.
    PagedAxis { value: u32 },
    /// `page_size = 0`.
    PageSize0,
    /// `kv_role > 2`.
    KvRole { value: u8 },
    /// `block_table_index_type > 1`.
    IndexType { value: u8 },
    /// `block_table_index_type` of the other width than the buffers.
    IndexWidth,
    /// A non-zero `_reserved` byte.
    Reserved { byte: Index, value: u8 },
    /// § Description: rank 2 or 4.
    Rank { four: bool },
    /// § byte_offset.
    ByteOffset { value: u64 },
    /// § Sharding.
    Shard,
    /// § Buffer Table: 2 buffers.
    BufferCount,
    /// § Per-scheme composition: per-block `block_size != page_size`.
    QuantBlockSize,
    /// § Per-scheme composition: per-block `axis != 0`.
    QuantAxis { axis: u32 },
    /// § Scale-buffer size: one scale more than `num_pages * page_size`.
    QuantScaleCount,
    /// A zero scale (`quantization/*.md` § Validity Constraints).
    QuantScaleZero { pick: Index },
    /// A set padding bit after the pool's last packed element.
    PoolPadding,
    /// A buffer on another memory class than buffer 0 (§ Alignment: all
    /// buffers share `device_tag` and `memory_class`).
    Colocation { pick: Index },
}

pub(crate) struct BpParts {
    pub(crate) ty: Ty,
    pub(crate) shape: Vec<u64>,
    pub(crate) fields: BlockPaged,
    /// Bytes per `block_table` / `seq_ptr` entry as encoded.
    pub(crate) width: u64,
    pub(crate) page_pool: Vec<u8>,
    pub(crate) block_table: Vec<u64>,
    pub(crate) seq_ptr: Vec<u64>,
    pub(crate) quant: Option<(Vec<u8>, Vec<Vec<u8>>)>,
}

impl BpParts {
    pub(crate) fn buffers(&self) -> Vec<Vec<u8>> {
        let mut out = vec![
            self.page_pool.clone(),
            le_index(&self.block_table, self.width),
            le_index(&self.seq_ptr, self.width),
        ];
        if let Some((_, params)) = &self.quant {
            out.extend(params.iter().cloned());
        }
        out
    }

    pub(crate) fn raw(&self, buffers: &[Vec<u8>]) -> RawDescriptor {
        let mut d = TensorDescriptor::new(self.ty.writer(), Layout::BlockPaged(self.fields), self.shape.clone())
            .with_buffers(buffers.iter().map(|b| BufferHandle::new(b.len() as u64)).collect());
        d.quantization = self.quant.as_ref().map(|(payload, _)| payload.clone());
        d.to_raw()
    }
}

/// `num_pages` one more, or one less when there is one.
pub(crate) fn num_pages_after(num_pages: u64, up: bool) -> u64 {
    if up || num_pages == 0 {
        num_pages + 1
    } else {
        num_pages - 1
    }
}

pub(crate) fn break_bp(c: &BpCase, m: &BpModel, b: &BpBreak) -> (AlignedBytes, Expect, String) {
    let mut p = BpParts {
        ty: c.ty,
        shape: m.shape.to_vec(),
        fields: c.fields(m),
        width: c.width(),
        page_pool: m.page_pool.clone(),
        block_table: m.block_table.clone(),
        seq_ptr: m.seq_ptr.clone(),
        quant: m.quant.as_ref().map(|q| (q.payload.clone(), q.buffers.clone())),
    };
    let num_seqs = c.tokens.len();
    let per_page = u64::from(c.page_size) * c.num_heads * c.head_dim;
    let per_block = matches!(c.quant, Some(Quant::Block { .. }));
    let quant_rules: &[&'static str] = &[
        "layouts/block-paged.md § Quantization Compatibility › Per-scheme composition",
        "layouts/block-paged.md § Quantization Compatibility",
        "quantization/per-block-affine.md § Validity Constraints",
    ];
    let block = |axis: u32, block_size: u32| {
        let Some(Quant::Block { scale, symmetric }) = c.quant else {
            unreachable!()
        };
        PerBlockAffine {
            axis,
            block_size,
            scale_buffer_index: 3,
            zero_point_buffer_index: (!symmetric).then_some(4),
            scale_type: scale,
        }
        .encode()
    };
    let mut raw_edit: Option<RawEdit> = None;
    let mut drop_seq_ptr = false;
    let (description, e) = match b {
        BpBreak::SeqPtrDecreasing { pick } if num_seqs >= 2 => {
            let k = 1 + pick.index(num_seqs - 1);
            let last = p.seq_ptr[num_seqs];
            p.seq_ptr[k] = last + 1;
            (
                format!("seq_ptr[{k}] = {} > seq_ptr[{num_seqs}]", last + 1),
                expect(&[BP_INV], named("seq_ptr")),
            )
        }
        BpBreak::PageOutOfBounds { pick, extra } if !p.block_table.is_empty() => {
            let k = pick.index(p.block_table.len());
            let max = if c.index_u64 { u64::MAX } else { u64::from(u32::MAX) };
            let value = m.num_pages.saturating_add(*extra).min(max);
            p.block_table[k] = value;
            (
                format!("block_table[{k}] = {value} (num_pages {})", m.num_pages),
                expect(&[BP_INV], named("block_table")),
            )
        }
        BpBreak::SeqPtrLast { up } => {
            let last = p.seq_ptr[num_seqs];
            p.seq_ptr[num_seqs] = if *up || last == 0 { last + 1 } else { last - 1 };
            (
                format!("seq_ptr[{num_seqs}] = {} for {last} pages", p.seq_ptr[num_seqs]),
                expect(&[BP_TABLE, BP_INV], buffer(&[1])),
            )
        }
        BpBreak::PoolLength { longer } => {
            if *longer || p.page_pool.is_empty() {
                let extra = c.ty.bytes_for(per_page * m.num_pages + 1) - c.ty.bytes_for(per_page * m.num_pages);
                p.page_pool.extend(std::iter::repeat_n(0, extra.max(1) as usize));
            } else {
                p.page_pool.pop();
            }
            (
                format!("page_pool {} bytes", p.page_pool.len()),
                expect(&[BP_INV], buffer(&[0])),
            )
        }
        // Only where the pool's byte size changes with it (packed types
        // may hold one more page in the same bytes).
        BpBreak::NumPages { up }
            if c.ty.bytes_for(per_page * num_pages_after(m.num_pages, *up))
                != c.ty.bytes_for(per_page * m.num_pages) =>
        {
            p.fields.num_pages = num_pages_after(m.num_pages, *up);
            (
                format!("num_pages {} for a pool of {}", p.fields.num_pages, m.num_pages),
                expect(&[BP_INV], buffer(&[0])),
            )
        }
        BpBreak::SeqPtrLength { longer } => {
            if *longer {
                p.seq_ptr.push(p.seq_ptr[num_seqs]);
            } else {
                p.seq_ptr.pop();
            }
            (
                format!("seq_ptr {} entries for {num_seqs} sequences", p.seq_ptr.len()),
                expect(&[BP_TABLE], buffer(&[2])),
            )
        }
        BpBreak::PagedAxis { value } => {
            p.fields.paged_axis = *value;
            (
                format!("paged_axis {value}"),
                expect(
                    &[BP_FIELDS, BP_INV, "layouts/block-paged.md § Logical Shape"],
                    named("paged_axis"),
                ),
            )
        }
        BpBreak::PageSize0 => {
            p.fields.page_size = 0;
            ("page_size 0".to_string(), expect(&[BP_FIELDS], named("page_size")))
        }
        BpBreak::KvRole { value } => {
            p.fields.kv_role = *value;
            (format!("kv_role {value}"), expect(&[BP_FIELDS], named("kv_role")))
        }
        BpBreak::IndexType { value } => {
            p.fields.block_table_index_type = *value;
            (
                format!("block_table_index_type {value}"),
                expect(&[BP_FIELDS], named("block_table_index_type")),
            )
        }
        BpBreak::IndexWidth => {
            p.fields.block_table_index_type ^= 1;
            (
                format!(
                    "block_table_index_type {} over {}-byte entries",
                    p.fields.block_table_index_type, p.width
                ),
                expect(&[BP_TABLE], buffer(&[2])),
            )
        }
        BpBreak::Reserved { byte, value } => {
            let at = 26 + byte.index(6);
            let value = *value;
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.layout_fields[at] = value));
            (
                format!("layout field byte {at} = {value:#x}"),
                expect(&[BP_FIELDS], named("_reserved")),
            )
        }
        BpBreak::Rank { four } => {
            if *four {
                p.shape.push(1);
            } else {
                p.shape.pop();
            }
            (
                format!("rank {}", p.shape.len()),
                expect(&["layouts/block-paged.md § Description"], named("rank")),
            )
        }
        BpBreak::ByteOffset { value } => {
            let value = *value;
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.byte_offset = value));
            (
                format!("byte_offset {value}"),
                expect(
                    &[BYTE_OFFSET, "layouts/block-paged.md § byte_offset"],
                    named("byte_offset"),
                ),
            )
        }
        BpBreak::Shard => {
            let shape = p.shape.clone();
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| {
                r.shard = Some(Shard::new(shape.clone(), vec![0; shape.len()]))
            }));
            (
                "a shard section".to_string(),
                expect(&["layouts/block-paged.md § Sharding"], None),
            )
        }
        BpBreak::BufferCount => {
            p.quant = None;
            drop_seq_ptr = true;
            (
                "2 buffers (no seq_ptr)".to_string(),
                expect(&[BP_TABLE, BUFFER_TABLE], named("buffer_count")),
            )
        }
        BpBreak::QuantBlockSize if per_block => {
            let block_size = c.page_size * 2;
            if let Some((payload, _)) = &mut p.quant {
                *payload = block(0, block_size);
            }
            (
                format!("per-block block_size {block_size}, page_size {}", c.page_size),
                expect(quant_rules, named("quantization")),
            )
        }
        BpBreak::QuantAxis { axis } if per_block => {
            if let Some((payload, _)) = &mut p.quant {
                *payload = block(*axis, c.page_size);
            }
            (
                format!("per-block axis {axis}"),
                expect(quant_rules, named("quantization")),
            )
        }
        BpBreak::QuantScaleCount if per_block => {
            let Some(Quant::Block { scale, .. }) = c.quant else {
                unreachable!()
            };
            if let Some((_, params)) = &mut p.quant {
                params[0].extend(std::iter::repeat_n(0x3C, scale.width() as usize));
            }
            (
                format!(
                    "{} scales for {} page slots",
                    m.num_pages * u64::from(c.page_size) + 1,
                    m.num_pages * u64::from(c.page_size)
                ),
                expect(
                    &[
                        "layouts/block-paged.md § Quantization Compatibility › Scale-buffer size",
                        "layouts/block-paged.md § Quantization Compatibility",
                        // What the reader cites (the size it expects is
                        // right): block_paged_scale_count_names_its_section.
                        "quantization/per-block-affine.md § Referenced Buffers",
                    ],
                    buffer(&[3]),
                ),
            )
        }
        BpBreak::QuantScaleZero { pick }
            if matches!(c.quant, Some(Quant::Block { .. } | Quant::Channel { .. }))
                && p.quant.as_ref().is_some_and(|(_, params)| !params[0].is_empty()) =>
        {
            let (width, rule) = match c.quant {
                Some(Quant::Block { scale, .. }) => (
                    scale.width() as usize,
                    "quantization/per-block-affine.md § Validity Constraints",
                ),
                _ => (4, "quantization/per-channel-affine.md § Validity Constraints"),
            };
            let Some((_, params)) = &mut p.quant else {
                unreachable!()
            };
            let k = pick.index(params[0].len() / width);
            params[0][k * width..(k + 1) * width].fill(0);
            (format!("scale {k} = 0"), expect(&[rule], named("scales")))
        }
        BpBreak::PoolPadding if padding_bits(c.ty, per_page * m.num_pages) => {
            *p.page_pool.last_mut().unwrap() |= 0x80;
            (
                "a padding bit set after the pool's last element".to_string(),
                expect(&["element-types.md"], named("buffer")),
            )
        }
        BpBreak::Colocation { pick } => {
            let i = 1 + pick.index(2 + p.quant.as_ref().map_or(0, |(_, params)| params.len()));
            raw_edit = Some(Box::new(move |r: &mut RawDescriptor| r.buffers[i].memory_class = 1));
            (
                format!("buffer {i} memory_class 0x01"),
                expect(
                    &[
                        "buffer-protocol.md § Device Tags › Device Colocation",
                        "layouts/block-paged.md § Alignment",
                    ],
                    named("buffer"),
                ),
            )
        }
        // SeqPtrFirst, and the fallback of the selectors that found no target.
        _ => {
            let value = match b {
                BpBreak::SeqPtrFirst { value } => *value,
                _ => 1,
            };
            let max = if c.index_u64 { u64::MAX } else { u64::from(u32::MAX) };
            let value = value.min(max);
            p.seq_ptr[0] = value;
            // With no sequence, seq_ptr[0] is also seq_ptr[num_seqs]: the
            // block table no longer has its length.
            let e = if num_seqs == 0 {
                expect(&[BP_TABLE, BP_INV], None)
            } else {
                expect(&[BP_INV], named("seq_ptr"))
            };
            (format!("seq_ptr[0] = {value}"), e)
        }
    };
    let mut buffers = p.buffers();
    if drop_seq_ptr {
        buffers.truncate(2);
    }
    let mut raw = p.raw(&buffers);
    if let Some(edit) = raw_edit {
        edit(&mut raw);
    }
    (write_raw(&raw, &buffers), e, description)
}

/// The rule the reader gives a block-paged buffer count: it ends with
/// `memory-layout.md § Buffer Table`, which states `buffer_count >= 3` for
/// indirect layouts, as `layouts/block-paged.md` § Buffer Table does.
pub(crate) const BUFFER_TABLE: &str = "metadata.md § Buffer Table; memory-layout.md § Buffer Table";

/// Everything a program may touch on a damaged block-paged file, strict and
/// permissive: no panic.
pub(crate) fn damaged_bp_reads(bytes: &AlignedBytes) {
    for options in [Options::strict(), Options::permissive()] {
        let Ok(file) = HurrayFile::parse(bytes, options) else {
            continue;
        };
        let _ = file.validate();
        let Ok(t) = file.tensor("t") else { continue };
        let _ = t.validate_data();
        let _ = t.addressing();
        let _ = t.dense_value(&[0, 0, 0]);
        for b in t.buffers() {
            let _ = b.values().count();
            let _ = b.as_slice::<u32>();
            let _ = b.as_slice::<u64>();
        }
    }
}

pub(crate) fn bp_break() -> impl Strategy<Value = BpBreak> {
    prop_oneof![
        1 => prop_oneof![Just(1u64), 1u64..=100, Just(u64::MAX)].prop_map(|value| BpBreak::SeqPtrFirst { value }),
        1 => any::<Index>().prop_map(|pick| BpBreak::SeqPtrDecreasing { pick }),
        1 => any::<bool>().prop_map(|up| BpBreak::SeqPtrLast { up }),
        1 => (any::<Index>(), prop_oneof![Just(0u64), 1u64..=10, Just(u64::MAX)])
            .prop_map(|(pick, extra)| BpBreak::PageOutOfBounds { pick, extra }),
        1 => any::<bool>().prop_map(|longer| BpBreak::PoolLength { longer }),
        1 => any::<bool>().prop_map(|up| BpBreak::NumPages { up }),
        1 => any::<bool>().prop_map(|longer| BpBreak::SeqPtrLength { longer }),
        1 => prop_oneof![Just(1u32), 2u32..=3, Just(u32::MAX)].prop_map(|value| BpBreak::PagedAxis { value }),
        1 => Just(BpBreak::PageSize0),
        1 => (3u8..=255).prop_map(|value| BpBreak::KvRole { value }),
        1 => (2u8..=255).prop_map(|value| BpBreak::IndexType { value }),
        1 => Just(BpBreak::IndexWidth),
        1 => (any::<Index>(), 1u8..=255).prop_map(|(byte, value)| BpBreak::Reserved { byte, value }),
        1 => any::<bool>().prop_map(|four| BpBreak::Rank { four }),
        1 => prop_oneof![Just(8u64), 1u64..=4096].prop_map(|value| BpBreak::ByteOffset { value }),
        1 => Just(BpBreak::Shard),
        1 => Just(BpBreak::BufferCount),
        2 => Just(BpBreak::QuantBlockSize),
        2 => (1u32..=2).prop_map(|axis| BpBreak::QuantAxis { axis }),
        2 => Just(BpBreak::QuantScaleCount),
        2 => any::<Index>().prop_map(|pick| BpBreak::QuantScaleZero { pick }),
        1 => Just(BpBreak::PoolPadding),
        1 => any::<Index>().prop_map(|pick| BpBreak::Colocation { pick }),
    ]
}
