//! The valid files each corpus file breaks one rule of: a tensor of each
//! layout, quantization scheme and composite kind.

use hurray_writer::quant::{Mxfp, Nf4, PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{
    BlockPaged, BufferHandle, CompositeHead, CompositeMember, ElementType, ElementType as E, ExtensionType, Layout,
    Shard, Statistics, TensorDescriptor, TileInner, TileOrder, Tiled, WriterOptions,
};

use super::build::{kv, single, str_payload, write, Kv, Tn};
use super::bytes::{f32b, u32b, u64b};

/// float32 `[2, 2]` row-major, values 1..4.
pub(super) fn dense() -> Tn {
    let d = TensorDescriptor::row_major(E::Float32, vec![2, 2]).unwrap().to_raw();
    Tn::new("t", d, vec![f32b(&[1.0, 2.0, 3.0, 4.0])])
}

pub(super) fn dense_of(ty: ElementType, shape: Vec<u64>, data: Vec<u8>) -> Tn {
    let d = TensorDescriptor::row_major(ty, shape).unwrap().to_raw();
    Tn::new("t", d, vec![data]).fit()
}

pub(super) fn with_layout(layout: Layout, shape: Vec<u64>, elements: usize) -> Tn {
    let d = TensorDescriptor::new(E::Float32, layout, shape)
        .with_buffer(BufferHandle::new(4 * elements as u64))
        .to_raw();
    let values: Vec<f32> = (0..elements).map(|i| i as f32).collect();
    Tn::new("t", d, vec![f32b(&values)])
}

/// The `layouts/csc.md` worked example: float32 `[4, 5]`, nnz 5.
const VALUES: [f32; 5] = [1.0, 4.0, 3.0, 2.0, 5.0];

pub(super) fn csc_with(rows: &[u64], ptr: &[u64]) -> Tn {
    let d = TensorDescriptor::csc(E::Float32, 4, 5, 5).unwrap().to_raw();
    Tn::new("t", d, vec![f32b(&VALUES), u64b(rows), u64b(ptr)])
}

pub(super) fn csc() -> Tn {
    csc_with(&[0, 2, 1, 0, 2], &[0, 1, 2, 3, 4, 5])
}

/// The same matrix as CSR.
pub(super) fn csr_with(cols: &[u64], ptr: &[u64]) -> Tn {
    let d = TensorDescriptor::csr(E::Float32, 4, 5, 5).unwrap().to_raw();
    Tn::new("t", d, vec![f32b(&[1.0, 2.0, 3.0, 4.0, 5.0]), u64b(cols), u64b(ptr)])
}

fn csr() -> Tn {
    csr_with(&[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5])
}

/// The same matrix as COO, `indices` row by row.
pub(super) fn coo_with(indices: &[u64], sorted: bool) -> Tn {
    let d = TensorDescriptor::coo(E::Float32, vec![4, 5], 5, sorted)
        .unwrap()
        .to_raw();
    Tn::new("t", d, vec![f32b(&[1.0, 2.0, 3.0, 4.0, 5.0]), u64b(indices)])
}

pub(super) const COO_SORTED: [u64; 10] = [0, 0, 0, 3, 1, 2, 2, 1, 2, 4];

/// CSF float32 `[2, 3, 4]`, points (0,0,1), (0,2,3), (1,1,0).
pub(super) fn csf_levels() -> Vec<Vec<u64>> {
    vec![
        vec![0, 2],       // pos_0
        vec![0, 1],       // crd_0
        vec![0, 2, 3],    // pos_1
        vec![0, 2, 1],    // crd_1
        vec![0, 1, 2, 3], // pos_2
        vec![1, 3, 0],    // crd_2
    ]
}

pub(super) fn csf_with(levels: Vec<Vec<u64>>) -> Tn {
    let d = TensorDescriptor::csf(E::Float32, vec![2, 3, 4], vec![0, 1, 2], &[2, 3, 3])
        .unwrap()
        .to_raw();
    let mut bufs = vec![f32b(&[1.0, 2.0, 3.0])];
    bufs.extend(levels.iter().map(|l| u64b(l)));
    Tn::new("t", d, bufs)
}

pub(super) fn csf() -> Tn {
    csf_with(csf_levels())
}

/// Block-paged float32 `[4, 1, 2]`: 2 pages of 2 tokens, `uint32` tables.
pub(super) fn paged_fields(num_seqs: u32) -> BlockPaged {
    BlockPaged {
        page_size: 2,
        num_pages: 2,
        paged_axis: 0,
        num_seqs,
        kv_role: 0,
        layer_index: 0,
        block_table_index_type: 0,
    }
}

pub(super) fn paged_with(num_seqs: u32, table: &[u32], seq_ptr: &[u32]) -> Tn {
    let d = TensorDescriptor::block_paged(E::Float32, [4, 1, 2], paged_fields(num_seqs), table.len() as u64)
        .unwrap()
        .to_raw();
    let pool: Vec<f32> = (0..8).map(|i| i as f32).collect();
    Tn::new("t", d, vec![f32b(&pool), u32b(table), u32b(seq_ptr)])
}

pub(super) fn paged() -> Tn {
    paged_with(1, &[0, 1], &[0, 2])
}

/// int8 `[2, 4]` row-major, values 0..8.
fn int8() -> Tn {
    dense_of(E::Int8, vec![2, 4], (0..8).collect())
}

pub(super) fn quantized(payload: Vec<u8>) -> Tn {
    int8().d(|d| d.quantization = Some(payload))
}

pub(super) fn per_tensor() -> PerTensorAffine {
    PerTensorAffine {
        scale: 0.5,
        zero_point: 0,
    }
}

/// int8 `[2, 4]` per-channel on axis 0: scales `[0.5, 0.25]` in buffer 1.
pub(super) fn per_channel_with(q: PerChannelAffine, scales: &[f32]) -> Tn {
    int8().with(|t| t.bufs.push(f32b(scales))).d(|d| {
        d.buffers.push(BufferHandle::new(4 * scales.len() as u64));
        d.quantization = Some(q.encode());
    })
}

pub(super) fn pc() -> PerChannelAffine {
    PerChannelAffine {
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
    }
}

/// int8 `[2, 4]` per-block on axis 1, block 2: 4 float32 scales in buffer 1.
pub(super) fn pb() -> PerBlockAffine {
    PerBlockAffine {
        axis: 1,
        block_size: 2,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
        scale_type: ScaleType::Float32,
    }
}

pub(super) fn per_block_with(q: PerBlockAffine, ty: ElementType) -> Tn {
    let bytes = ty_width(ty) * 8;
    let scales = 2 * 4usize.div_ceil(q.block_size.max(1) as usize);
    dense_of(ty, vec![2, 4], vec![1; bytes])
        .with(|t| t.bufs.push(f32b(&vec![0.5; scales])))
        .d(|d| {
            d.buffers.push(BufferHandle::new(4 * scales as u64));
            d.quantization = Some(q.encode());
        })
}

fn ty_width(ty: ElementType) -> usize {
    match ty {
        E::Int16 | E::UInt16 => 2,
        E::Float32 | E::Int32 => 4,
        _ => 1,
    }
}

/// uint4 `[1, 64]` NF4, block 64: one float32 absmax in buffer 1.
pub(super) fn nf4_with(ty: ElementType, block_size: u32) -> Tn {
    let q = Nf4 {
        axis: 1,
        block_size,
        scale_buffer_index: 1,
    };
    let blocks = 64usize.div_ceil(block_size as usize);
    dense_of(ty, vec![1, 64], vec![0x21; 32])
        .with(|t| t.bufs.push(f32b(&vec![1.0; blocks])))
        .d(|d| {
            d.buffers.push(BufferHandle::new(4 * blocks as u64));
            d.quantization = Some(q.encode());
        })
}

/// float8_e4m3 `[1, n]` MXFP on axis 1: `n / block_size` e8m0 scales (127).
pub(super) fn mxfp_with(ty: ElementType, n: u64, block_size: u32, scales: usize) -> Tn {
    let q = Mxfp {
        axis: 1,
        block_size,
        scale_buffer_index: 1,
    };
    let width = if ty == E::Float32 { 4 } else { 1 };
    dense_of(ty, vec![1, n], vec![0x38; width * n as usize])
        .with(|t| t.bufs.push(vec![127; scales]))
        .d(|d| {
            d.buffers.push(BufferHandle::new(scales as u64));
            d.quantization = Some(q.encode());
        })
}

/// A partition of float32 `[4, 2]` into two `[2, 2]` row blocks: the head
/// and its members.
pub(super) fn partition_head(members: u32) -> Tn {
    let d = TensorDescriptor::composite_head(E::Float32, vec![4, 2], CompositeHead::partition(members)).to_raw();
    Tn::new("head", d, vec![])
}

pub(super) fn member(name: &str, shape: Vec<u64>, offset: Vec<u64>) -> Tn {
    let n: u64 = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|i| i as f32).collect();
    dense_of(E::Float32, shape, f32b(&values))
        .named(name)
        .d(|d| d.shard = Some(Shard::new(vec![4, 2], offset)))
}

pub(super) fn partition_parts() -> (Tn, Tn, Tn) {
    (
        partition_head(2),
        member("m0", vec![2, 2], vec![0, 0]),
        member("m1", vec![2, 2], vec![2, 0]),
    )
}

/// An overlay of float32 `[4, 2]`: a full base and one `[2, 2]` correction.
pub(super) fn overlay_parts() -> (Tn, Tn, Tn) {
    let d = TensorDescriptor::composite_head(
        E::Float32,
        vec![4, 2],
        CompositeHead::overlay(CompositeHead::COMBINE_REPLACE, 2),
    )
    .to_raw();
    let head = Tn::new("head", d, vec![]);
    let base = member("base", vec![4, 2], vec![0, 0]).d(|d| d.composite_member = Some(CompositeMember::base()));
    let fix = member("fix", vec![2, 2], vec![2, 0]).d(|d| d.composite_member = Some(CompositeMember::correction()));
    (head, base, fix)
}

pub(super) fn files(parts: (Tn, Tn, Tn)) -> Vec<u8> {
    write(WriterOptions::default(), &[], vec![parts.0, parts.1, parts.2])
}

/// A tiled layout, tiles row-major.
pub(super) fn tiled(tile: Vec<u64>, inner: TileInner) -> Layout {
    Layout::Tiled(Tiled {
        tile_shape: tile,
        outer: TileOrder::RowMajor,
        inner,
    })
}

/// A file of `dense()` and the KV `entries`.
pub(super) fn kv_file(entries: &[Kv]) -> Vec<u8> {
    write(WriterOptions::default(), entries, vec![dense()])
}

// The valid bases, unbroken: a reader test opens each one and expects no
// error at any stage, so every corpus file breaks only what it says.

/// Each valid base file the corpus starts from, by name.
pub(super) fn bases() -> Vec<(&'static str, Vec<u8>)> {
    let int = || 7i64.to_le_bytes().to_vec();
    let mut nested: Vec<Tn> = (0..8)
        .map(|i| {
            let d = TensorDescriptor::composite_head(E::Float32, vec![2, 2], CompositeHead::group(1)).to_raw();
            Tn::new(&format!("g{i}"), d, vec![])
        })
        .collect();
    nested.push(dense().named("leaf"));
    let mut tiled8 = tiled(vec![1, 1], TileInner::RowMajor);
    for _ in 0..7 {
        let Layout::Tiled(t) = tiled8 else { unreachable!() };
        tiled8 = tiled(vec![1, 1], TileInner::Tiled(Box::new(t)));
    }
    let ext = |x: ExtensionType, bytes: usize| {
        single(dense_of(E::UInt8, vec![4], vec![1; bytes]).d(|d| {
            d.type_tag = 0xF0;
            d.extension_type = Some(x);
        }))
    };
    vec![
        ("dense", single(dense())),
        (
            "two_tensors",
            write(
                WriterOptions::default(),
                &[],
                vec![dense().named("a"), dense().named("b")],
            ),
        ),
        (
            "sorted_index",
            write(
                WriterOptions::default().sorted_index(true),
                &[],
                vec![dense().named("b"), dense().named("a")],
            ),
        ),
        (
            "first_descriptor_offset_4088",
            write(
                WriterOptions::default().first_descriptor_offset(4088),
                &[],
                vec![dense()],
            ),
        ),
        ("kv_int", kv_file(&[kv("kk", 0x02, int())])),
        (
            "kv_types",
            kv_file(&[
                kv("s", 0x01, str_payload(2, b"ab")),
                kv("b", 0x05, vec![1]),
                kv("y", 0x06, str_payload(2, &[0xFF, 0xFE])),
                kv("a", 0x07, [&[0x02u8][..], &1u32.to_le_bytes(), &int()].concat()),
            ]),
        ),
        ("float16", single(dense_of(E::Float16, vec![2, 2], vec![0; 8]))),
        ("int4", single(dense_of(E::Int4, vec![3], vec![0x21, 0x03]))),
        ("float6", single(dense_of(E::Float6E2M3, vec![4], vec![0; 3]))),
        ("bool", single(dense_of(E::Bool, vec![3], vec![0x05]))),
        ("float8_e8m0", single(dense_of(E::Float8E8M0, vec![4], vec![127; 4]))),
        ("scalar", single(dense_of(E::Float32, vec![], f32b(&[1.0])))),
        ("rank_64", single(dense_of(E::Float32, vec![1; 64], f32b(&[1.0])))),
        (
            "strided",
            single(with_layout(Layout::Strided { strides: vec![2, 1] }, vec![2, 2], 4)),
        ),
        (
            "strided_negative",
            single(with_layout(Layout::Strided { strides: vec![-2, 1] }, vec![2, 2], 4).d(|d| d.byte_offset = 8)),
        ),
        (
            "tiled",
            single(with_layout(tiled(vec![2, 2], TileInner::RowMajor), vec![4, 4], 16)),
        ),
        ("tiled_8_levels", single(with_layout(tiled8, vec![4, 4], 16))),
        (
            "morton",
            single(with_layout(
                Layout::Morton {
                    morton_bits: vec![1, 1],
                },
                vec![2, 2],
                4,
            )),
        ),
        (
            "hilbert",
            single(with_layout(
                Layout::Hilbert {
                    hilbert_order: 1,
                    hilbert_rank: 2,
                },
                vec![2, 2],
                4,
            )),
        ),
        ("csc", single(csc())),
        ("csr", single(csr())),
        ("coo_sorted", single(coo_with(&COO_SORTED, true))),
        ("coo_unsorted", single(coo_with(&[2, 4, 0, 0, 0, 3, 1, 2, 2, 1], false))),
        ("csf", single(csf())),
        ("block_paged", single(paged())),
        ("block_paged_two_seqs", single(paged_with(2, &[0, 1], &[0, 1, 2]))),
        ("partition", files(partition_parts())),
        ("overlay", files(overlay_parts())),
        ("group_nested_8", write(WriterOptions::default(), &[], nested)),
        ("per_tensor", single(quantized(per_tensor().encode()))),
        ("per_channel", single(per_channel_with(pc(), &[0.5, 0.25]))),
        ("per_block", single(per_block_with(pb(), E::Int8))),
        ("nf4", single(nf4_with(E::UInt4, 64))),
        ("mxfp", single(mxfp_with(E::Float8E4M3, 32, 32, 1))),
        ("extension_8", ext(ExtensionType::integer(8, false), 4)),
        ("extension_4", ext(ExtensionType::integer(4, false), 2)),
        (
            "shard",
            single(dense().d(|d| d.shard = Some(Shard::new(vec![4, 2], vec![2, 0])))),
        ),
        (
            "statistics",
            single(csc().d(|d| d.statistics = Some(Statistics::default().with_nnz(5)))),
        ),
    ]
}
