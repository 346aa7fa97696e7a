//! `layouts/block-paged.md`.

use hurray_writer::quant::PerChannelAffine;
use hurray_writer::{BlockPaged, BufferHandle, ElementType as E, TensorDescriptor};

use super::bases::{paged, paged_fields, paged_with, pc};
use super::build::{single, Tn};
use super::bytes::{f32b, u32b, u64b};
use super::manifest::Corpus;

pub(super) fn block_paged(c: &mut Corpus) {
    let fields = "layouts/block-paged.md § Additional Descriptor Fields";
    let inv = "layouts/block-paged.md § Storage Invariants";
    c.add(
        "paged_rank_2",
        "a rank-2 block-paged tensor (must be [total_tokens, num_heads, head_dim])",
        "layouts/block-paged.md § Description",
        "tensor",
        "RankNotAllowed",
        "rank",
        single(paged().d(|d| d.shape = vec![4, 2])),
    );
    for (name, at, v, field, rule) in [
        ("page_size_0", 0usize, 0u8, "page_size", "page_size 0 (must be >= 1)"),
        ("paged_axis_1", 12, 1, "paged_axis", "paged_axis 1 (must be 0)"),
        ("kv_role_3", 20, 3, "kv_role", "kv_role 0x03 (must be 0x00-0x02)"),
        (
            "index_type_2",
            25,
            2,
            "block_table_index_type",
            "block_table_index_type 0x02 (must be 0x00 or 0x01)",
        ),
    ] {
        c.add(
            &format!("paged_{name}"),
            rule,
            fields,
            "tensor",
            "Invalid",
            field,
            single(paged().d(|d| d.layout_fields[at] = v)),
        );
    }
    c.add(
        "paged_reserved",
        "the 6 _reserved bytes are not zero",
        fields,
        "tensor",
        "Reserved",
        "_reserved",
        single(paged().d(|d| d.layout_fields[31] = 1)),
    );
    c.add(
        "paged_byte_offset",
        "byte_offset 4 (must be 0)",
        "memory-layout.md § Common Fields › byte_offset",
        "tensor",
        "Invalid",
        "byte_offset",
        single(paged().d(|d| d.byte_offset = 4)),
    );
    c.add(
        "paged_seq_ptr_first_nonzero",
        "seq_ptr[0] is 1, must be 0",
        inv,
        "data",
        "PtrFirst",
        "seq_ptr[0]",
        single(paged_with(1, &[0, 1], &[1, 2])),
    );
    c.add(
        "paged_seq_ptr_decreasing",
        "seq_ptr [0, 2, 1] decreases at position 2",
        inv,
        "data",
        "PtrDecreasing",
        "seq_ptr[2]",
        single(paged_with(2, &[0], &[0, 2, 1])),
    );
    c.add(
        "paged_page_id_out_of_bounds",
        "block_table[1] = 2 is not below num_pages = 2",
        inv,
        "data",
        "IndexOutOfBounds",
        "block_table[1]",
        single(paged_with(1, &[0, 2], &[0, 2])),
    );
    c.add(
        "paged_block_table_size",
        "a block_table of 3 entries where seq_ptr[num_seqs] = 2 (12 bytes, must be 8)",
        "layouts/block-paged.md § Buffer Table",
        "tensor",
        "BufferSize",
        "buffer[1].byte_size",
        single(paged_with(1, &[0, 1, 1], &[0, 2])),
    );
    // int8 pages, per-channel scales along the paged axis: one per token (4).
    let d = TensorDescriptor::block_paged(E::Int8, [4, 1, 2], paged_fields(1), 2)
        .unwrap()
        .to_raw();
    let channel = Tn::new("t", d, vec![(0..8).collect(), u32b(&[0, 1]), u32b(&[0, 2])]).d(|d| {
        d.buffers.push(BufferHandle::new(16));
        d.quantization = Some(
            PerChannelAffine {
                scale_buffer_index: 3,
                ..pc()
            }
            .encode(),
        );
    });
    c.add(
        "paged_quant_per_channel_axis_0",
        "per-channel quantization along the paged axis 0 (only num_heads or head_dim, axes 1 and 2)",
        "layouts/block-paged.md § Quantization Compatibility › Per-scheme composition",
        "tensor",
        "Invalid",
        "quantization.axis",
        single(channel.with(|t| t.bufs.push(f32b(&[0.5; 4])))),
    );
    // uint64 tables: seq_ptr[num_seqs] = 2^62 entries of 8 bytes do not fit
    // in a u64 byte size.
    let wide = BlockPaged {
        block_table_index_type: 1,
        ..paged_fields(1)
    };
    let d = TensorDescriptor::block_paged(E::Float32, [4, 1, 2], wide, 1)
        .unwrap()
        .to_raw();
    let pool: Vec<f32> = (0..8).map(|i| i as f32).collect();
    c.add(
        "paged_block_table_pages_overflow",
        "seq_ptr[num_seqs] = 2^62 uint64 block_table entries: the byte size overflows",
        "layouts/block-paged.md § Buffer Table",
        "tensor",
        "Overflow",
        "seq_ptr[1]",
        single(Tn::new("t", d, vec![f32b(&pool), u64b(&[0]), u64b(&[0, 1 << 62])])),
    );
}
