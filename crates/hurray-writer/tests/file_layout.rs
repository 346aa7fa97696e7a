//! Layout of whole written files: header, placement and padding, index,
//! CRC, trailer, KV section; writer-level errors.

mod support {
    pub mod container;
}

use hurray_writer::{
    BufferData, BufferHandle, CompositeHead, Csc, Dense, ElementType, Error, FileWriter, KvArray, RawDescriptor,
    RawFileFields, RawTensor, Shard, TensorDescriptor, WriteSink, WriterOptions, HAS_INDEX_CRC32C, HAS_KV_METADATA,
    SORTED_INDEX,
};
use support::container::{parse, u32_at, u64_at, Kv};

fn round_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

fn csc_example() -> Csc<'static> {
    static V: [f32; 5] = [1.0, 4.0, 3.0, 2.0, 5.0];
    static R: [u64; 5] = [0, 2, 1, 0, 2];
    static P: [u64; 6] = [0, 1, 2, 3, 4, 5];
    Csc::new(4, 5, &V, &R, &P).unwrap()
}

/// Checks the placement rules for every tensor of a file whose buffer sizes
/// are given (in write order), and that every byte outside the described
/// regions is zero.
fn check_placement(bytes: &[u8], sizes: &[Vec<u64>], alignment: u64) {
    let p = parse(bytes);
    let mut used = vec![false; bytes.len()];
    let mut mark = |from: u64, len: u64| {
        for b in &mut used[from as usize..(from + len) as usize] {
            *b = true;
        }
    };
    mark(0, 64);
    let mut expected_next = p.header.first_descriptor_offset;
    for (entry, buffers) in p.entries.iter().zip(sizes) {
        assert_eq!(
            entry.descriptor_offset, expected_next,
            "{}: descriptor offset",
            entry.name
        );
        assert_eq!(entry.descriptor_offset % 8, 0);
        assert_eq!(entry.flags, 0);
        let d = entry.descriptor_offset as usize;
        assert_eq!(&bytes[d..d + 4], b"HRRY");
        assert_eq!(u32_at(bytes, d + 6), entry.descriptor_length);
        mark(entry.descriptor_offset, u64::from(entry.descriptor_length));
        let desc_end = entry.descriptor_offset + u64::from(entry.descriptor_length);
        if buffers.is_empty() {
            assert_eq!(
                entry.data_offset,
                round_up(desc_end, 8),
                "{}: head data_offset",
                entry.name
            );
            assert_eq!(entry.data_length, 0);
            expected_next = entry.data_offset;
            continue;
        }
        assert_eq!(
            entry.data_offset,
            round_up(desc_end, alignment),
            "{}: data_offset",
            entry.name
        );
        let mut at = entry.data_offset;
        let mut end = at;
        for (i, &size) in buffers.iter().enumerate() {
            if i > 0 {
                at = round_up(end, alignment);
            }
            assert_eq!(at % alignment, 0);
            mark(at, size);
            end = at + size;
        }
        assert_eq!(
            entry.data_length,
            end - entry.data_offset,
            "{}: data_length",
            entry.name
        );
        expected_next = round_up(round_up(end, alignment), 8);
    }
    let kv_start = if p.trailer.kv_offset != 0 {
        assert_eq!(p.trailer.kv_offset, expected_next, "kv section follows the last tensor");
        mark(p.trailer.kv_offset, u64::from(p.trailer.kv_length));
        round_up(p.trailer.kv_offset + u64::from(p.trailer.kv_length), 8)
    } else {
        expected_next
    };
    assert_eq!(p.trailer.index_offset, kv_start, "index follows");
    mark(p.trailer.index_offset, p.trailer.index_length);
    mark(bytes.len() as u64 - 40, 40);
    for (i, (&b, &u)) in bytes.iter().zip(&used).enumerate() {
        if !u {
            assert_eq!(b, 0, "padding byte at {i} is not zero");
        }
    }
}

#[test]
fn whole_file_layout_and_kv_round_trip() {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.add_kv("name", "model").unwrap();
    w.add_kv("i", -5i64).unwrap();
    w.add_kv("u", 7u64).unwrap();
    w.add_kv("f", 0.5f64).unwrap();
    w.add_kv("b", true).unwrap();
    w.add_kv("bytes", vec![1u8, 2, 3]).unwrap();
    w.add_kv("arr_s", KvArray::String(vec!["x".into(), "yz".into()]))
        .unwrap();
    w.add_kv("arr_i", KvArray::Int64(vec![-1, 2])).unwrap();
    w.add_kv("arr_u", KvArray::UInt64(vec![9])).unwrap();
    w.add_kv("arr_f", KvArray::Float64(vec![1.5])).unwrap();
    w.add_kv("arr_b", KvArray::Bool(vec![true, false])).unwrap();
    w.add_kv("arr_bytes", KvArray::Bytes(vec![vec![], vec![0xFF]])).unwrap();

    w.write_csc("a", &csc_example()).unwrap();
    let v: Vec<f32> = (0..3).map(|x| x as f32).collect();
    w.write_dense("b", &Dense::row_major(&[3], &v).unwrap()).unwrap();
    let empty = TensorDescriptor::row_major(ElementType::Float32, vec![3, 0, 5]).unwrap();
    w.write_tensor("empty", &empty, [BufferData::Zeros(0)]).unwrap();
    let nnz0 = Csc::new(3, 4, &[] as &[f32], &[], &[0, 0, 0, 0, 0]).unwrap();
    w.write_csc("nnz0", &nnz0).unwrap();
    let big = vec![7u8; 5000];
    w.write_dense("big", &Dense::row_major(&[5000], &big).unwrap()).unwrap();
    let bytes = w.finish().unwrap();

    let p = parse(&bytes);
    assert_eq!(p.header.version, [1, 0]);
    assert_eq!(p.header.file_flags, HAS_INDEX_CRC32C | HAS_KV_METADATA);
    assert_eq!(p.header.data_buffer_alignment, 4096);
    assert_eq!(p.header.first_descriptor_offset, 64);
    assert_eq!(p.header.tensor_count_hint, u64::MAX);
    assert_eq!(
        p.entries.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
        ["a", "b", "empty", "nnz0", "big"]
    );
    check_placement(
        &bytes,
        &[vec![20, 40, 48], vec![12], vec![0], vec![0, 0, 40], vec![5000]],
        4096,
    );
    // Buffer contents.
    let a = &p.entries[0];
    assert_eq!(a.data_offset, 4096);
    assert_eq!(a.data_length, 8192 + 48);
    assert_eq!(f32::from_le_bytes(bytes[4096 + 4..4096 + 8].try_into().unwrap()), 4.0);
    assert_eq!(u64_at(&bytes, 8192 + 8), 2);
    assert_eq!(u64_at(&bytes, 12288 + 40), 5);
    // Empty tensor: descriptor padded to the alignment, no data.
    let e = &p.entries[2];
    assert_eq!(e.data_offset % 4096, 0);
    assert_eq!(e.data_length, 0);
    // nnz = 0: the empty buffers take no space, col_ptr sits at data_offset.
    let z = &p.entries[3];
    assert_eq!(z.data_length, 40);
    let big_entry = &p.entries[4];
    assert_eq!(big_entry.data_length, 5000);
    assert!(bytes[big_entry.data_offset as usize..][..5000].iter().all(|&b| b == 7));

    let kv: Vec<(&str, Kv)> = p.kv.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    assert_eq!(
        kv,
        vec![
            ("name", Kv::Str("model".into())),
            ("i", Kv::I64(-5)),
            ("u", Kv::U64(7)),
            ("f", Kv::F64(0.5f64.to_bits())),
            ("b", Kv::Bool(true)),
            ("bytes", Kv::Bytes(vec![1, 2, 3])),
            ("arr_s", Kv::Array(1, vec![Kv::Str("x".into()), Kv::Str("yz".into())])),
            ("arr_i", Kv::Array(2, vec![Kv::I64(-1), Kv::I64(2)])),
            ("arr_u", Kv::Array(3, vec![Kv::U64(9)])),
            ("arr_f", Kv::Array(4, vec![Kv::F64(1.5f64.to_bits())])),
            ("arr_b", Kv::Array(5, vec![Kv::Bool(true), Kv::Bool(false)])),
            (
                "arr_bytes",
                Kv::Array(6, vec![Kv::Bytes(vec![]), Kv::Bytes(vec![0xFF])])
            ),
        ]
    );
}

#[test]
fn zero_tensors_and_no_kv() {
    let bytes = FileWriter::new(Vec::new(), WriterOptions::default())
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(bytes.len(), 64 + 8 + 40);
    let p = parse(&bytes);
    assert_eq!(p.header.file_flags, HAS_INDEX_CRC32C);
    assert_eq!(p.trailer.index_offset, 64);
    assert_eq!(p.trailer.index_length, 8);
    assert_eq!((p.trailer.kv_offset, p.trailer.kv_length), (0, 0));
    assert!(p.entries.is_empty());
}

#[test]
fn kv_flag_rules() {
    // Announced but empty: an empty KV section is still written.
    let bytes = FileWriter::new(Vec::new(), WriterOptions::new().kv_metadata(true))
        .unwrap()
        .finish()
        .unwrap();
    let p = parse(&bytes);
    assert_eq!(p.header.file_flags & HAS_KV_METADATA, HAS_KV_METADATA);
    assert_eq!((p.trailer.kv_offset, p.trailer.kv_length), (64, 4));
    assert_eq!(p.trailer.index_offset, 72);

    // Announced, entries after the tensors.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::new().kv_metadata(true)).unwrap();
    w.write_csc("a", &csc_example()).unwrap();
    w.add_kv("late", 1u64).unwrap();
    let p = parse(&w.finish().unwrap());
    assert_eq!(p.kv, vec![("late".to_string(), Kv::U64(1))]);

    // Not announced: refused once the header is out.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_csc("a", &csc_example()).unwrap();
    assert!(matches!(w.add_kv("late", 1u64), Err(Error::KvMetadataNotDeclared)));
    // The writer stays usable.
    let p = parse(&w.finish().unwrap());
    assert_eq!(p.header.file_flags & HAS_KV_METADATA, 0);
}

#[test]
fn name_and_key_rules() {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    assert!(matches!(w.add_kv("", 1u64), Err(Error::EmptyKvKey { index: 0 })));
    w.add_kv("k", 1u64).unwrap();
    assert!(matches!(
        w.add_kv("k", 2u64),
        Err(Error::DuplicateKvKey {
            index: 1,
            first_index: 0
        })
    ));
    let long = "x".repeat(70_000);
    assert!(matches!(
        w.add_kv(&long, 1u64),
        Err(Error::NameTooLong { what: "kv key", .. })
    ));
    let csc = csc_example();
    assert!(matches!(
        w.write_csc("", &csc),
        Err(Error::EmptyTensorName { index: 0 })
    ));
    w.write_csc("t", &csc).unwrap();
    assert!(matches!(
        w.write_csc("t", &csc),
        Err(Error::DuplicateTensorName {
            index: 1,
            first_index: 0
        })
    ));
    assert!(matches!(w.write_csc(&long, &csc), Err(Error::NameTooLong { .. })));
    let p = parse(&w.finish().unwrap());
    assert_eq!(p.entries.len(), 1);
}

#[test]
fn sorted_index() {
    let names = ["zeta", "alpha", "Beta", "mid", "a.b", "é"];
    let mut w = FileWriter::new(Vec::new(), WriterOptions::new().sorted_index(true)).unwrap();
    for (i, n) in names.iter().enumerate() {
        let v = [i as i32];
        w.write_dense(n, &Dense::row_major(&[1], &v).unwrap()).unwrap();
    }
    let bytes = w.finish().unwrap();
    let p = parse(&bytes);
    assert_eq!(p.header.file_flags, HAS_INDEX_CRC32C | SORTED_INDEX);
    let got: Vec<&str> = p.entries.iter().map(|e| e.name.as_str()).collect();
    let mut want = names.to_vec();
    want.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    assert_eq!(got, want);
    // Tensors remain in write order in the tensor region.
    let mut by_offset = p.entries.clone();
    by_offset.sort_by_key(|e| e.descriptor_offset);
    assert_eq!(by_offset.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), names);
    for e in &p.entries {
        let i = names.iter().position(|n| *n == e.name).unwrap() as i32;
        assert_eq!(&bytes[e.data_offset as usize..][..4], &i.to_le_bytes());
    }
}

#[test]
fn custom_alignment_and_first_descriptor_offset() {
    let opts = WriterOptions::new()
        .data_buffer_alignment(8192)
        .first_descriptor_offset(128)
        .tensor_count_hint(2);
    let mut w = FileWriter::new(Vec::new(), opts).unwrap();
    w.write_csc("a", &csc_example()).unwrap();
    w.write_csc("b", &csc_example()).unwrap();
    let bytes = w.finish().unwrap();
    let p = parse(&bytes);
    assert_eq!(p.header.data_buffer_alignment, 8192);
    assert_eq!(p.header.first_descriptor_offset, 128);
    assert_eq!(p.header.tensor_count_hint, 2);
    check_placement(&bytes, &[vec![20, 40, 48], vec![20, 40, 48]], 8192);

    for bad in [0u32, 2048, 4095, 6144, 4 << 20] {
        assert!(matches!(
            FileWriter::new(Vec::new(), WriterOptions::new().data_buffer_alignment(bad)),
            Err(Error::InvalidDataBufferAlignment { value }) if value == bad
        ));
    }
    assert!(FileWriter::new(Vec::new(), WriterOptions::new().data_buffer_alignment(2 << 20)).is_ok());
    for bad in [0u64, 63, 65, 100] {
        assert!(matches!(
            FileWriter::new(Vec::new(), WriterOptions::new().first_descriptor_offset(bad)),
            Err(Error::InvalidFirstDescriptorOffset { .. })
        ));
    }
}

#[test]
fn tensor_count_hint_mismatch() {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::new().tensor_count_hint(2)).unwrap();
    w.write_csc("a", &csc_example()).unwrap();
    assert!(matches!(
        w.finish(),
        Err(Error::TensorCountMismatch { hint: 2, actual: 1 })
    ));
}

#[test]
fn composite_head_is_not_padded() {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let head = TensorDescriptor::composite_head(ElementType::Float32, vec![8, 8], CompositeHead::partition(2));
    w.write_tensor("weight", &head, []).unwrap();
    let data = vec![0u8; 128];
    for (name, offset) in [("weight.left", 0), ("weight.right", 4)] {
        let d = TensorDescriptor::row_major(ElementType::Float32, vec![8, 4])
            .unwrap()
            .with_shard(Shard::new(vec![8, 8], vec![0, offset]));
        w.write_tensor(name, &d, [BufferData::from(&data)]).unwrap();
    }
    let bytes = w.finish().unwrap();
    let p = parse(&bytes);
    let head = &p.entries[0];
    assert_eq!(head.descriptor_offset, 64);
    assert_eq!(head.descriptor_length, 53);
    assert_eq!(head.data_offset, 120); // 64 + 53 = 117, 8-aligned
    assert_eq!(head.data_length, 0);
    assert_eq!(p.entries[1].descriptor_offset, 120);
    check_placement(&bytes, &[vec![], vec![128], vec![128]], 4096);
}

#[test]
fn composite_rules() {
    let head = |h| TensorDescriptor::composite_head(ElementType::Float32, vec![8, 8], h);
    let member = |shape: Vec<u64>, offset: Vec<u64>| {
        TensorDescriptor::row_major(ElementType::Float32, shape)
            .unwrap()
            .with_shard(Shard::new(vec![8, 8], offset))
    };
    // Torn composite.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("h", &head(CompositeHead::group(3)), []).unwrap();
    let m = TensorDescriptor::row_major(ElementType::Int8, vec![2]).unwrap();
    w.write_tensor("m0", &m, m.zero_data()).unwrap();
    assert!(matches!(
        w.finish(),
        Err(Error::TornComposite {
            head: 0,
            member_count: 3,
            written: 1
        })
    ));

    // Partition member without shard.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("h", &head(CompositeHead::partition(2)), []).unwrap();
    let bad = TensorDescriptor::row_major(ElementType::Float32, vec![8, 4]).unwrap();
    assert!(matches!(
        w.write_tensor("m0", &bad, bad.zero_data()),
        Err(Error::CompositeMember { head: 0, member: 1, .. })
    ));

    // Partition with overlapping members, and with a gap.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("h", &head(CompositeHead::partition(2)), []).unwrap();
    let a = member(vec![8, 5], vec![0, 0]);
    w.write_tensor("a", &a, a.zero_data()).unwrap();
    let b = member(vec![8, 4], vec![0, 4]);
    assert!(matches!(
        w.write_tensor("b", &b, b.zero_data()),
        Err(Error::PartitionOverlap {
            head: 0,
            first: 1,
            second: 2
        })
    ));
    let c = member(vec![8, 2], vec![0, 5]);
    assert!(matches!(
        w.write_tensor("c", &c, c.zero_data()),
        Err(Error::PartitionGap { .. })
    ));
    let d = member(vec![8, 3], vec![0, 5]);
    w.write_tensor("d", &d, d.zero_data()).unwrap();
    w.finish().unwrap();

    // Overlay: base first, spanning the whole space.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("h", &head(CompositeHead::overlay(1, 2)), []).unwrap();
    let partial = member(vec![4, 8], vec![0, 0]).with_composite_member(hurray_writer::CompositeMember::base());
    assert!(matches!(
        w.write_tensor("base", &partial, partial.zero_data()),
        Err(Error::CompositeMember { .. })
    ));
    let correction_first =
        member(vec![8, 8], vec![0, 0]).with_composite_member(hurray_writer::CompositeMember::correction());
    assert!(matches!(
        w.write_tensor("base", &correction_first, correction_first.zero_data()),
        Err(Error::CompositeMember { .. })
    ));

    // Invalid head fields.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    assert!(matches!(
        w.write_tensor("h", &head(CompositeHead::overlay(0, 2)), []),
        Err(Error::InvalidField { what: "combine_op", .. })
    ));
    assert!(matches!(
        w.write_tensor("h", &head(CompositeHead::group(u32::MAX)), []),
        Err(Error::InvalidField {
            what: "member_count",
            ..
        })
    ));

    // Nesting deeper than 8 levels.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    for i in 0..8 {
        w.write_tensor(&format!("g{i}"), &head(CompositeHead::group(1)), [])
            .unwrap();
    }
    assert!(matches!(
        w.write_tensor("g8", &head(CompositeHead::group(1)), []),
        Err(Error::CompositeTooDeep { depth: 9, .. })
    ));
    w.write_tensor("leaf", &m, m.zero_data()).unwrap();
    w.finish().unwrap();
}

#[test]
fn sources_are_checked_and_streamed() {
    let d = TensorDescriptor::row_major(ElementType::UInt8, vec![3_000_000]).unwrap();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    // Wrong count / wrong length: refused, writer still usable.
    assert!(matches!(
        w.write_tensor("x", &d, []),
        Err(Error::SourceCount { expected: 1, actual: 0 })
    ));
    assert!(matches!(
        w.write_tensor("x", &d, [BufferData::Zeros(5)]),
        Err(Error::SourceLength {
            buffer: 0,
            expected: 3_000_000,
            actual: 5
        })
    ));
    // A reader source.
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut reader = std::io::Cursor::new(data.clone());
    w.write_tensor("reader", &d, [BufferData::reader(&mut reader, 3_000_000)])
        .unwrap();
    // A generator source.
    let mut fill = |offset: u64, chunk: &mut [u8]| {
        for (i, b) in chunk.iter_mut().enumerate() {
            *b = ((offset + i as u64) % 251) as u8;
        }
        Ok(())
    };
    w.write_tensor("generated", &d, [BufferData::generate(3_000_000, &mut fill)])
        .unwrap();
    // A typed slice.
    let floats = [1.5f32; 4];
    let fd = TensorDescriptor::row_major(ElementType::Float32, vec![4]).unwrap();
    w.write_tensor("typed", &fd, [BufferData::from_slice(&floats)]).unwrap();
    let bytes = w.finish().unwrap();
    let p = parse(&bytes);
    for e in &p.entries[..2] {
        assert_eq!(e.data_length, 3_000_000);
        assert_eq!(&bytes[e.data_offset as usize..][..3_000_000], &data[..]);
    }
    assert_eq!(&bytes[p.entries[2].data_offset as usize..][..4], &1.5f32.to_le_bytes());

    // A short reader poisons the writer.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let mut short = std::io::Cursor::new(vec![1u8; 10]);
    let small = TensorDescriptor::row_major(ElementType::UInt8, vec![20]).unwrap();
    assert!(matches!(
        w.write_tensor("s", &small, [BufferData::reader(&mut short, 20)]),
        Err(Error::SourceTooShort {
            buffer: 0,
            expected: 20,
            actual: 10
        })
    ));
    assert!(matches!(w.write_csc("t", &csc_example()), Err(Error::Poisoned)));
    assert!(matches!(w.finish(), Err(Error::Poisoned)));
}

#[test]
fn any_write_through_write_sink() {
    let build = |w: &mut FileWriter<_>| {
        w.write_csc("a", &csc_example()).unwrap();
    };
    let mut a = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    build(&mut a);
    let a = a.finish().unwrap();
    let mut b = FileWriter::new(WriteSink(Vec::new()), WriterOptions::default()).unwrap();
    b.write_csc("a", &csc_example()).unwrap();
    let b = b.finish().unwrap().into_inner();
    assert_eq!(a, b);
    let mut c = FileWriter::new(std::io::BufWriter::new(Vec::new()), WriterOptions::default()).unwrap();
    c.write_csc("a", &csc_example()).unwrap();
    assert_eq!(c.finish().unwrap().into_inner().unwrap(), a);
}

#[test]
fn unchecked_path_builds_invalid_files() {
    let csc = csc_example();
    let good = csc.descriptor().unwrap();

    // Every field overridable through RawDescriptor.
    let mut raw = good.to_raw();
    raw.byte_offset = 4;
    raw.flags = Some(1 << 5);
    raw.buffer_count = Some(2);
    raw.layout_fields[8] = 1; // _reserved[0] of the CSC fields
    raw.buffers[2].reserved = 1;
    let raw_bytes = raw.encode().unwrap();
    assert_eq!(&raw_bytes[10..14], &(1u32 << 5).to_le_bytes());

    // The checked path refuses such descriptors.
    let mut bad = good.clone();
    bad.byte_offset = 4;
    assert!(matches!(
        FileWriter::new(Vec::new(), WriterOptions::default())
            .unwrap()
            .write_tensor("x", &bad, csc.buffer_data()),
        Err(Error::NonZeroByteOffset { .. })
    ));

    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor_unchecked(RawTensor::new("t", raw_bytes.clone(), csc.buffer_data().into()))
        .unwrap();
    // Verbatim descriptor bytes, duplicate name, index overrides.
    let mut garbage = RawDescriptor {
        magic: *b"HRRX",
        ..good.to_raw()
    }
    .encode()
    .unwrap();
    garbage.extend_from_slice(&[0xAB; 3]);
    let mut t = RawTensor::new("t", garbage.clone(), vec![BufferData::Bytes(&[9; 10])]);
    t.index_flags = 1;
    t.index_descriptor_length = Some(7);
    t.index_data_length = Some(1 << 20);
    w.write_tensor_unchecked(t).unwrap();
    // A raw KV entry with a reserved tag.
    w.add_kv_raw(b"k", 0x08, &[1, 2]).unwrap();
    let bytes = w.finish().unwrap();

    // The KV section is invalid on purpose: read trailer and index only.
    let t = support::container::trailer(&bytes);
    let kv = &bytes[t.kv_offset as usize..][..t.kv_length as usize];
    assert_eq!(kv, &[1, 0, 0, 0, 1, 0, b'k', 0x08, 1, 2]);
    let entries = support::container::index(&bytes[t.index_offset as usize..][..t.index_length as usize]);
    assert_eq!(entries.len(), 2);
    let e0 = &entries[0];
    assert_eq!(
        &bytes[e0.descriptor_offset as usize..][..raw_bytes.len()],
        &raw_bytes[..]
    );
    let e1 = &entries[1];
    assert_eq!(e1.name, "t");
    assert_eq!(e1.flags, 1);
    assert_eq!(e1.descriptor_length, 7);
    assert_eq!(e1.data_length, 1 << 20);
    assert_eq!(e1.descriptor_offset % 8, 0);
    assert_eq!(&bytes[e1.descriptor_offset as usize..][..garbage.len()], &garbage[..]);
    assert_eq!(e1.data_offset % 4096, 0);
    assert_eq!(&bytes[e1.data_offset as usize..][..10], &[9; 10]);
}

#[test]
fn raw_file_fields() {
    let raw = RawFileFields {
        omit_index_crc: true,
        ..RawFileFields::default()
    };
    let mut w = FileWriter::new(Vec::new(), WriterOptions::new().raw(raw)).unwrap();
    w.write_csc("a", &csc_example()).unwrap();
    let bytes = w.finish().unwrap();
    let p = parse(&bytes);
    assert_eq!(p.header.file_flags & HAS_INDEX_CRC32C, 0);
    assert_eq!(p.trailer.index_crc32c, 0);

    let raw = RawFileFields {
        container_version: Some([2, 0]),
        file_flags: Some(0x0C),
        index_crc32c: Some(0xDEAD_BEEF),
        trailer_magic: Some(*b"HRRZ"),
        header_data_buffer_alignment: Some(6144),
        trailer_index_offset: Some(1 << 40),
        trailer_kv_length: Some(9),
        ..RawFileFields::default()
    };
    let bytes = FileWriter::new(Vec::new(), WriterOptions::new().raw(raw))
        .unwrap()
        .finish()
        .unwrap();
    assert_eq!(&bytes[8..10], &[2, 0]);
    assert_eq!(u32_at(&bytes, 12), 0x0C);
    assert_eq!(u32_at(&bytes, 16), 6144);
    let t = &bytes[bytes.len() - 40..];
    assert_eq!(u32_at(t, 28), 0xDEAD_BEEF);
    assert_eq!(u64_at(t, 0), 1 << 40);
    assert_eq!(u32_at(t, 24), 9);
    assert_eq!(&t[36..], b"HRRZ");
}

#[test]
fn descriptor_rules_refused_by_checked_path() {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let shard = TensorDescriptor::row_major(ElementType::Float32, vec![4, 4])
        .unwrap()
        .with_shard(Shard::new(vec![8, 4], vec![5, 0]));
    assert!(matches!(
        w.write_tensor("s", &shard, shard.zero_data()),
        Err(Error::ShardOutOfBounds {
            dimension: 0,
            shard_offset: 5,
            size: 4,
            parent: 8
        })
    ));
    let stats = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5)
        .unwrap()
        .with_statistics(hurray_writer::Statistics::default().with_nnz(6));
    assert!(matches!(
        w.write_tensor("st", &stats, stats.zero_data()),
        Err(Error::StatisticsNnzMismatch {
            statistics_nnz: 6,
            nnz: 5,
            ..
        })
    ));
    let reserved_type = TensorDescriptor::new(ElementType::Other(0x47), hurray_writer::Layout::RowMajor, vec![1])
        .with_buffer(BufferHandle::new(1));
    assert!(matches!(
        w.write_tensor("r", &reserved_type, reserved_type.zero_data()),
        Err(Error::UnknownElementType { tag: 0x47 })
    ));
    let private = TensorDescriptor::new(ElementType::Other(0xF0), hurray_writer::Layout::RowMajor, vec![3])
        .with_buffer(BufferHandle::new(2));
    assert!(matches!(
        w.write_tensor("p", &private, private.zero_data()),
        Err(Error::ExtensionTypeSection {
            type_tag: 0xF0,
            present: false
        })
    ));
    let private = private.with_extension_type(hurray_writer::ExtensionType::integer(4, false));
    w.write_tensor("p", &private, private.zero_data()).unwrap();
    let too_deep = TensorDescriptor::row_major(ElementType::UInt8, vec![1; 65]).unwrap();
    assert!(matches!(
        w.write_tensor("deep", &too_deep, too_deep.zero_data()),
        Err(Error::RankTooLarge { rank: 65 })
    ));
    let handle = TensorDescriptor::row_major(ElementType::UInt8, vec![4])
        .unwrap()
        .map_buffers(|b| b.with_alignment(32));
    assert!(matches!(
        w.write_tensor("h", &handle, handle.zero_data()),
        Err(Error::InvalidHandle {
            buffer: 0,
            what: "alignment",
            ..
        })
    ));
    let over = TensorDescriptor::row_major(ElementType::UInt8, vec![4])
        .unwrap()
        .map_buffers(|b| b.with_alignment(8192));
    assert!(matches!(
        w.write_tensor("over", &over, over.zero_data()),
        Err(Error::InvalidHandle {
            buffer: 0,
            what: "alignment",
            value: 8192,
            ..
        })
    ));
    let page = over.clone().map_buffers(|b| b.with_alignment(4096));
    w.write_tensor("page", &page, page.zero_data()).unwrap();
    w.finish().unwrap();
}
