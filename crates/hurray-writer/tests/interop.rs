//! Byte-exact checks of descriptor (and KV) encoding against files of the
//! independent reference writer in `$HURRAY_INTEROP_DIR`.
//!
//! Only descriptor bytes are compared: the reference writer pads to 8 bytes
//! after a tensor's last buffer (and after composite heads), where this
//! writer follows the Writer Protocol, so whole files differ in padding.

mod support {
    pub mod container;
    pub mod interop;
}

use hurray_writer::quant::{PerBlockAffine, PerTensorAffine, ScaleType};
use hurray_writer::{
    BlockPaged, BufferData, BufferHandle, CompositeHead, CompositeMember, Coo, Csc, Csf, CsfLevel, Csr, ElementType,
    FileWriter, KvArray, KvValue, Layout, Shard, Statistics, TensorDescriptor, TileInner, TileOrder, Tiled,
    WriterOptions,
};
use support::container::{descriptor_of, our_descriptor, parse};
use support::interop::{interop_dir, read_interop};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Compares our encoding of `desc` with tensor `name` of `file`, then writes
/// `desc` (zero-filled buffers) through the checked writer and compares the
/// bytes it placed in the file.
fn check(dir: &std::path::Path, file: &str, name: &str, desc: &TensorDescriptor) {
    let reference = read_interop(dir, file);
    let expected = descriptor_of(&reference, name);
    let ours = desc.encode().unwrap();
    assert_eq!(hex(&ours), hex(expected), "{file}: descriptor of {name}");

    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor(name, desc, desc.zero_data())
        .unwrap_or_else(|e| panic!("{file}: {name} refused: {e}"));
    let bytes = w.finish().unwrap();
    assert_eq!(hex(&our_descriptor(&bytes, name)), hex(expected));
}

#[test]
fn csc_spec_example() {
    let Some(dir) = interop_dir("csc_spec_example") else {
        return;
    };
    let values = [1.0f32, 4.0, 3.0, 2.0, 5.0];
    let rows = [0u64, 2, 1, 0, 2];
    let ptr = [0u64, 1, 2, 3, 4, 5];
    let csc = Csc::new(4, 5, &values, &rows, &ptr).unwrap();
    check(
        &dir,
        "csc_spec_example_f32.hry",
        "csc_example",
        &csc.descriptor().unwrap(),
    );

    // Written through the typed helper: same descriptor at offset 64, and
    // the buffer contents equal the reference file's buffers.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_csc("csc_example", &csc).unwrap();
    let ours = w.finish().unwrap();
    let reference = read_interop(&dir, "csc_spec_example_f32.hry");
    let len = support::container::u32_at(&reference, 64 + 6) as usize;
    assert_eq!(&ours[64..64 + len], &reference[64..64 + len]);
    for (offset, size) in [(4096usize, 20usize), (8192, 40), (12288, 48)] {
        assert_eq!(&ours[offset..offset + size], &reference[offset..offset + size]);
    }
}

#[test]
fn csc_variants() {
    let Some(dir) = interop_dir("csc_variants") else {
        return;
    };
    let stats = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5)
        .unwrap()
        .with_statistics(Statistics::default().with_nnz(5).with_sparsity_ratio(0.75));
    check(&dir, "csc_statistics_nnz_sparsity.hry", "csc_with_stats", &stats);

    let pinned = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5)
        .unwrap()
        .map_buffers(|b| b.with_memory_class(BufferHandle::MEMORY_HOST_PINNED));
    check(&dir, "csc_memory_class_host_pinned.hry", "pinned", &pinned);

    let quant = TensorDescriptor::csc(ElementType::Int8, 4, 5, 5)
        .unwrap()
        .with_quantization(
            PerTensorAffine {
                scale: 0.25,
                zero_point: -3,
            }
            .encode(),
        );
    check(&dir, "csc_quant_per_tensor_int8.hry", "q_csc", &quant);

    let empty = TensorDescriptor::csc(ElementType::Float32, 3, 4, 0)
        .unwrap()
        .map_buffers(|b| if b.byte_size == 0 { b.with_alignment(1) } else { b });
    check(&dir, "csc_empty_nnz0_3x4.hry", "empty_csc", &empty);
}

#[test]
fn other_sparse_layouts() {
    let Some(dir) = interop_dir("other_sparse_layouts") else {
        return;
    };
    let csr = Csr::new(4, 5, &[1.0f32, 2.0, 3.0, 4.0, 5.0], &[0, 3, 2, 1, 4], &[0, 2, 3, 5, 5]).unwrap();
    check(
        &dir,
        "csr_spec_example_f32.hry",
        "csr_example",
        &csr.descriptor().unwrap(),
    );

    let coo = Coo::new(&[4, 4], &[1.5f32, -0.5, 2.0], &[0, 1, 2, 0, 3, 3], true).unwrap();
    check(
        &dir,
        "coo_spec_example_sorted_f32.hry",
        "coo_example",
        &coo.descriptor().unwrap(),
    );

    let levels = [
        CsfLevel {
            pos: &[0, 2],
            crd: &[0, 1],
        },
        CsfLevel {
            pos: &[0, 2, 3],
            crd: &[0, 2, 1],
        },
        CsfLevel {
            pos: &[0, 1, 2, 4],
            crd: &[1, 3, 0, 2],
        },
    ];
    let csf = Csf::new(&[2, 3, 4], &[0, 1, 2], &[1.0f32, 2.0, 3.0, 4.0], &levels).unwrap();
    check(
        &dir,
        "csf_spec_example_rank3_f32.hry",
        "csf_example",
        &csf.descriptor().unwrap(),
    );
}

#[test]
fn block_paged() {
    let Some(dir) = interop_dir("block_paged") else {
        return;
    };
    let fields = BlockPaged {
        page_size: 4,
        num_pages: 5,
        paged_axis: 0,
        num_seqs: 2,
        kv_role: 0,
        layer_index: 3,
        block_table_index_type: 0,
    };
    let d = TensorDescriptor::block_paged(ElementType::Float16, [9, 2, 8], fields, 3).unwrap();
    let by_hand =
        TensorDescriptor::new(ElementType::Float16, Layout::BlockPaged(fields), vec![9, 2, 8]).with_buffers(vec![
            BufferHandle::new(640),
            BufferHandle::new(12),
            BufferHandle::new(12),
        ]);
    assert_eq!(d, by_hand);
    check(&dir, "block_paged_kv.hry", "kv.layer3.key", &d);
}

#[test]
fn tiled() {
    let Some(dir) = interop_dir("tiled") else {
        return;
    };
    let tiled = |inner| {
        Layout::Tiled(Tiled {
            tile_shape: vec![2, 4],
            outer: TileOrder::RowMajor,
            inner,
        })
    };
    let a = TensorDescriptor::new(ElementType::Float32, tiled(TileInner::RowMajor), vec![6, 8])
        .with_buffer(BufferHandle::new(192));
    check(&dir, "tiled_f32.hry", "tiled_6x8", &a);
    let b = TensorDescriptor::new(ElementType::Float32, tiled(TileInner::ColumnMajor), vec![5, 7])
        .with_buffer(BufferHandle::new(192));
    check(&dir, "tiled_f32.hry", "tiled_5x7_partial", &b);
}

#[test]
fn dense_curves_and_strides() {
    let Some(dir) = interop_dir("dense_curves_and_strides") else {
        return;
    };
    let f32d = |layout, shape: Vec<u64>, size| {
        TensorDescriptor::new(ElementType::Float32, layout, shape).with_buffer(BufferHandle::new(size))
    };
    check(
        &dir,
        "hilbert_f32_4x4.hry",
        "hilbert_4x4",
        &f32d(
            Layout::Hilbert {
                hilbert_order: 2,
                hilbert_rank: 2,
            },
            vec![4, 4],
            64,
        ),
    );
    check(
        &dir,
        "morton_f32.hry",
        "morton_3x5",
        &f32d(
            Layout::Morton {
                morton_bits: vec![3, 3],
            },
            vec![3, 5],
            256,
        ),
    );
    check(
        &dir,
        "strided_negative_stride_f32.hry",
        "reversed_rows",
        &f32d(Layout::Strided { strides: vec![-4, 1] }, vec![3, 4], 48).with_byte_offset(32),
    );
    check(
        &dir,
        "strided_negative_stride_f32.hry",
        "transposed_view",
        &f32d(Layout::Strided { strides: vec![1, 3] }, vec![3, 4], 48),
    );
    check(
        &dir,
        "sharded_f32.hry",
        "shard_bottom",
        &TensorDescriptor::row_major(ElementType::Float32, vec![4, 4])
            .unwrap()
            .with_shard(Shard::new(vec![8, 4], vec![4, 0])),
    );
    for (name, t) in [
        ("f32", ElementType::Float32),
        ("i64", ElementType::Int64),
        ("flag", ElementType::Bool),
        ("half", ElementType::Float16),
        ("nibble", ElementType::Int4),
        ("z", ElementType::Complex64),
    ] {
        check(
            &dir,
            "scalars.hry",
            name,
            &TensorDescriptor::row_major(t, vec![]).unwrap(),
        );
    }
}

#[test]
fn quantized() {
    let Some(dir) = interop_dir("quantized") else {
        return;
    };
    let q = TensorDescriptor::row_major(ElementType::Int4, vec![4, 8])
        .unwrap()
        .with_buffer(BufferHandle::new(16))
        .with_quantization(
            PerBlockAffine {
                axis: 1,
                block_size: 4,
                scale_buffer_index: 1,
                zero_point_buffer_index: None,
                scale_type: ScaleType::Float16,
            }
            .encode(),
        );
    check(&dir, "quant_per_block_int4.hry", "q_int4_blocks", &q);

    let q = TensorDescriptor::row_major(ElementType::UInt8, vec![4, 6])
        .unwrap()
        .with_quantization(
            PerTensorAffine {
                scale: 0.05,
                zero_point: 128,
            }
            .encode(),
        );
    check(&dir, "quant_per_tensor_uint8.hry", "q_uint8", &q);
}

fn overlay_parts() -> [(&'static str, TensorDescriptor); 3] {
    let head = TensorDescriptor::composite_head(
        ElementType::Float32,
        vec![4, 4],
        CompositeHead::overlay(CompositeHead::COMBINE_ADD, 2),
    );
    let base = TensorDescriptor::row_major(ElementType::Float32, vec![4, 4])
        .unwrap()
        .with_shard(Shard::new(vec![4, 4], vec![0, 0]))
        .with_composite_member(CompositeMember::base());
    let correction = TensorDescriptor::coo(ElementType::Float32, vec![2, 2], 2, true)
        .unwrap()
        .with_shard(Shard::new(vec![4, 4], vec![2, 2]))
        .with_composite_member(CompositeMember::correction());
    [("fixed", head), ("fixed.base", base), ("fixed.correction", correction)]
}

#[test]
fn composite_overlay() {
    let Some(dir) = interop_dir("composite_overlay") else {
        return;
    };
    let reference = read_interop(&dir, "composite_overlay.hry");
    let parts = overlay_parts();
    for (name, d) in &parts {
        assert_eq!(
            hex(&d.encode().unwrap()),
            hex(descriptor_of(&reference, name)),
            "descriptor of {name}"
        );
    }
    // The whole composite through the checked writer.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for (name, d) in &parts {
        w.write_tensor(name, d, d.zero_data()).unwrap();
    }
    let ours = w.finish().unwrap();
    for (name, _) in &parts {
        assert_eq!(hex(&our_descriptor(&ours, name)), hex(descriptor_of(&reference, name)));
    }
}

#[test]
fn kv_all_types() {
    let Some(dir) = interop_dir("kv_all_types") else {
        return;
    };
    let reference = read_interop(&dir, "kv_all_types.hry");
    let rp = parse(&reference);
    let ko = rp.trailer.kv_offset as usize;
    let expected = &reference[ko..ko + rp.trailer.kv_length as usize];

    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let entries: Vec<(&str, KvValue)> = vec![
        ("general.name", "hurray interop corpus".into()),
        ("general.empty_string", "".into()),
        ("unicode.text", "Grüße, 世界 🙂".into()),
        ("int64.negative", (-42i64).into()),
        ("int64.min", i64::MIN.into()),
        ("int64.max", i64::MAX.into()),
        ("uint64.zero", 0u64.into()),
        ("uint64.max", u64::MAX.into()),
        ("float64.pi", std::f64::consts::PI.into()),
        ("float64.negative_zero", (-0.0f64).into()),
        ("float64.smallest_subnormal", f64::from_bits(1).into()),
        ("float64.nan", f64::from_bits(0x7ff8_0000_0000_0000).into()),
        ("float64.neg_infinity", f64::NEG_INFINITY.into()),
        ("bool.true", true.into()),
        ("bool.false", false.into()),
        ("bytes.small", vec![0u8, 1, 127, 128, 255].into()),
        ("bytes.empty", Vec::<u8>::new().into()),
        ("array.int64", KvArray::Int64(vec![1, -2, 3]).into()),
        (
            "array.string",
            KvArray::String(vec!["a".into(), "".into(), "ü".into()]).into(),
        ),
    ];
    for (k, v) in entries {
        w.add_kv(k, v).unwrap();
    }
    let d = TensorDescriptor::row_major(ElementType::UInt8, vec![2]).unwrap();
    w.write_tensor("payload", &d, [BufferData::Bytes(&[1, 2])]).unwrap();
    let ours = w.finish().unwrap();
    let p = parse(&ours);
    let ko = p.trailer.kv_offset as usize;
    assert_eq!(hex(&ours[ko..ko + p.trailer.kv_length as usize]), hex(expected));
    assert_eq!(
        hex(&our_descriptor(&ours, "payload")),
        hex(descriptor_of(&reference, "payload"))
    );
    assert_eq!(p.kv, rp.kv);
    assert_eq!(p.header.file_flags & 1, 1, "HAS_KV_METADATA set");
}
