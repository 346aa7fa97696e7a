//! The dense layouts: row- and column-major, strided, tiled, Morton and
//! Hilbert (`layouts/*.md`).

use hurray_writer::{ElementType as E, Layout, TensorDescriptor, TileInner};

use super::bases::{dense, dense_of, tiled, with_layout};
use super::build::{single, Tn};
use super::bytes::f32b;
use super::manifest::Corpus;

pub(super) fn dense_layouts(c: &mut Corpus) {
    let size = "element-types.md § Buffer Size Calculation";
    let bs = "buffer[0].byte_size";
    c.add(
        "dense_row_major_too_small",
        "row-major float32 [2, 2] buffer of 12 bytes (needs 16)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(dense().with(|t| t.bufs[0].truncate(12)).fit()),
    );
    c.add(
        "dense_row_major_too_large",
        "row-major float32 [2, 2] buffer of 20 bytes (strict: exactly 16)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(dense().with(|t| t.bufs[0].extend([0; 4])).fit()),
    );
    c.add(
        "dense_float16_too_small",
        "float16 [2, 2] buffer of 6 bytes (needs 8)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(
            dense_of(E::Float16, vec![2, 2], vec![0; 8])
                .d(|d| d.buffers[0].byte_size = 6)
                .with(|t| t.bufs[0].truncate(6)),
        ),
    );
    c.add(
        "dense_int4_too_small",
        "int4 [3] (sub-byte, 2 per byte) buffer of 1 byte (needs 2)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(
            dense_of(E::Int4, vec![3], vec![0x21; 2])
                .d(|d| d.buffers[0].byte_size = 1)
                .with(|t| t.bufs[0].truncate(1)),
        ),
    );
    c.add(
        "dense_float6_too_large",
        "float6_e2m3 [4] (4 elements per 3 bytes) buffer of 4 bytes (exactly 3)",
        size,
        "tensor",
        "BufferSize",
        bs,
        single(dense_of(E::Float6E2M3, vec![4], vec![0; 4])),
    );
    c.add(
        "dense_scalar_column_major",
        "a scalar (rank 0) with the column-major layout",
        "data-model.md § Scalar Tensors",
        "tensor",
        "RankNotAllowed",
        "rank",
        single(Tn::new(
            "t",
            TensorDescriptor::column_major(E::Float32, vec![]).unwrap().to_raw(),
            vec![f32b(&[1.0])],
        )),
    );
    c.add(
        "dense_byte_offset_past_buffer",
        "byte_offset 32 is past the end of the 16-byte buffer",
        "memory-layout.md § Common Fields › byte_offset",
        "tensor",
        "Invalid",
        "byte_offset",
        single(dense().d(|d| d.byte_offset = 32)),
    );
    let strided = |strides: Vec<i64>| Layout::Strided { strides };
    c.add(
        "strided_buffer_too_small",
        "strided [2, 2], strides [2, 1]: 12-byte buffer (needs 16)",
        "layouts/strided.md § Buffer Size",
        "tensor",
        "BufferSize",
        bs,
        single(with_layout(strided(vec![2, 1]), vec![2, 2], 3)),
    );
    c.add(
        "strided_negative_before_start",
        "strided [2, 2], strides [-2, 1] with byte_offset 0: element [1, 0] lies before byte 0",
        "layouts/strided.md § Buffer Size",
        "tensor",
        "Invalid",
        "byte_offset",
        single(with_layout(strided(vec![-2, 1]), vec![2, 2], 4)),
    );
    let tiled_file = |layout: Layout, edit: fn(&mut Vec<u8>)| {
        single(with_layout(layout, vec![4, 4], 16).d(|d| edit(&mut d.layout_fields)))
    };
    let rule = "layouts/tiled.md § Additional Descriptor Fields";
    c.add(
        "tiled_tile_shape_zero",
        "tile_shape[0] is 0",
        rule,
        "tensor",
        "Invalid",
        "tile_shape[0]",
        tiled_file(tiled(vec![0, 2], TileInner::RowMajor), |_| {}),
    );
    c.add(
        "tiled_outer_layout_4",
        "outer_layout 0x04 (only 0x01-0x03 order the tile grid)",
        rule,
        "tensor",
        "Invalid",
        "outer_layout",
        tiled_file(tiled(vec![2, 2], TileInner::RowMajor), |f| f[16] = 4),
    );
    c.add(
        "tiled_inner_layout_5",
        "inner_layout 0x05 (only 0x01-0x04)",
        rule,
        "tensor",
        "Invalid",
        "inner_layout",
        tiled_file(tiled(vec![2, 2], TileInner::RowMajor), |f| f[17] = 5),
    );
    c.add(
        "tiled_reserved",
        "a tiled level's _reserved bytes are not zero",
        rule,
        "tensor",
        "Reserved",
        "_reserved",
        tiled_file(tiled(vec![2, 2], TileInner::RowMajor), |f| f[19] = 1),
    );
    let mut nested = tiled(vec![1, 1], TileInner::RowMajor);
    for _ in 0..8 {
        let Layout::Tiled(t) = nested else { unreachable!() };
        nested = tiled(vec![1, 1], TileInner::Tiled(Box::new(t)));
    }
    c.add(
        "tiled_nine_levels",
        "9 nested tiling levels (the maximum is 8)",
        "layouts/tiled.md § Additional Descriptor Fields",
        "tensor",
        "Invalid",
        "inner_layout",
        tiled_file(nested, |_| {}),
    );
    let morton = |bits: Vec<u32>| Layout::Morton { morton_bits: bits };
    let mrule = "layouts/morton.md § Dimension Size Constraints";
    c.add(
        "morton_bits_zero",
        "morton_bits[0] is 0",
        mrule,
        "tensor",
        "Invalid",
        "morton_bits[0]",
        single(with_layout(morton(vec![0, 1]), vec![2, 2], 2)),
    );
    c.add(
        "morton_shape_exceeds_bits",
        "shape[0] = 4 exceeds 2^morton_bits[0] = 2",
        mrule,
        "tensor",
        "Invalid",
        "morton_bits[0]",
        single(with_layout(morton(vec![1, 1]), vec![4, 2], 4)),
    );
    c.add(
        "morton_bits_sum_64",
        "sum of morton_bits is 64: the buffer would need 2^64 elements",
        "layouts/morton.md § Buffer Size",
        "tensor",
        "Overflow",
        "morton_bits",
        single(with_layout(morton(vec![32, 32]), vec![2, 2], 4)),
    );
    let hilbert = |order: u32, rank: u32| Layout::Hilbert {
        hilbert_order: order,
        hilbert_rank: rank,
    };
    let hrule = "layouts/hilbert.md § Validity Constraints";
    c.add(
        "hilbert_order_zero",
        "hilbert_order is 0",
        hrule,
        "tensor",
        "Invalid",
        "hilbert_order",
        single(with_layout(hilbert(0, 2), vec![1, 1], 1)),
    );
    c.add(
        "hilbert_rank_mismatch",
        "hilbert_rank 3 differs from the tensor's rank 2",
        hrule,
        "tensor",
        "Invalid",
        "hilbert_rank",
        single(with_layout(hilbert(1, 3), vec![2, 2], 4)),
    );
    c.add(
        "hilbert_shape_not_power",
        "shape[1] = 4 is not 2^hilbert_order = 2",
        hrule,
        "tensor",
        "Invalid",
        "shape[1]",
        single(with_layout(hilbert(1, 2), vec![2, 4], 8)),
    );
    c.add(
        "hilbert_rank_1",
        "a rank-1 Hilbert tensor (hilbert_rank must be >= 2)",
        hrule,
        "tensor",
        "RankNotAllowed",
        "rank",
        single(with_layout(hilbert(1, 1), vec![2], 2)),
    );
}
