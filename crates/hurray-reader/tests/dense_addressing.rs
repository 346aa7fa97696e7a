//! Dense addressing where storage and logical shape differ: quantized
//! blocks padded along their axis (`quantization/per-block-affine.md` §
//! Padding) and a `byte_offset` before element `[0, ..., 0]`
//! (`memory-layout.md` § byte_offset). Both read the wrong elements, or
//! failed, before a review found them.

use hurray_reader::{AlignedBytes, HurrayFile, Options, Value};
use hurray_writer::quant::{PerBlockAffine, ScaleType};
use hurray_writer::{BufferData, BufferHandle, ElementType, FileWriter, Layout, TensorDescriptor, WriterOptions};

/// One tensor `t` written through the checked writer, as aligned bytes.
fn one_tensor(d: &TensorDescriptor, data: Vec<BufferData<'_>>) -> AlignedBytes {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("t", d, data).unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// int8 codes of `logical_shape` in blocks of `block` along `axis`, symmetric,
/// float32 scales of 1.0; `codes` is the padded storage.
fn per_block(layout: Layout, logical_shape: Vec<u64>, axis: u32, block: u32, codes: &[i8]) -> AlignedBytes {
    let blocks: u64 = logical_shape
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            if k == axis as usize {
                n.div_ceil(u64::from(block))
            } else {
                n
            }
        })
        .product();
    let payload = PerBlockAffine {
        axis,
        block_size: block,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
        scale_type: ScaleType::Float32,
    }
    .encode();
    let d = TensorDescriptor::new(ElementType::Int8, layout, logical_shape)
        .with_buffer(BufferHandle::new(codes.len() as u64))
        .with_buffer(BufferHandle::new(blocks * 4))
        .with_quantization(payload);
    let scales: Vec<u8> = (0..blocks).flat_map(|_| 1.0f32.to_le_bytes()).collect();
    let codes: Vec<u8> = codes.iter().map(|&c| c as u8).collect();
    one_tensor(&d, vec![BufferData::Bytes(&codes), BufferData::Bytes(&scales)])
}

/// Every element of a rank-2 tensor through `DenseView::get` and
/// `Tensor::dense_value`, row by row.
fn rows_i8(bytes: &AlignedBytes) -> Vec<Vec<i8>> {
    let file = HurrayFile::parse(bytes, Options::strict()).unwrap();
    let t = file.tensor("t").unwrap();
    let view = t.dense::<i8>().unwrap();
    let shape = view.addressing().shape().to_vec();
    (0..shape[0])
        .map(|i| {
            (0..shape[1])
                .map(|j| {
                    let got = *view.get(&[i, j]).unwrap();
                    assert_eq!(
                        t.dense_value(&[i, j]).unwrap(),
                        Value::Int(i64::from(got)),
                        "[{i}, {j}]"
                    );
                    got
                })
                .collect()
        })
        .collect()
}

#[test]
fn padded_quantized_blocks_are_skipped_row_major() {
    // int8 [2, 6], blocks of 4 along axis 1: storage [2, 8], each row's
    // second block padded with two zeros.
    let codes = [1, 2, 3, 4, 5, 6, 0, 0, 11, 12, 13, 14, 15, 16, 0, 0];
    let bytes = per_block(Layout::RowMajor, vec![2, 6], 1, 4, &codes);
    assert_eq!(rows_i8(&bytes), [[1, 2, 3, 4, 5, 6], [11, 12, 13, 14, 15, 16]]);
}

#[test]
fn padded_quantized_blocks_are_skipped_column_major() {
    // int8 [3, 2] column-major, blocks of 2 along axis 0: storage [4, 2],
    // each column padded with one zero.
    let codes = [1, 2, 3, 0, 4, 5, 6, 0];
    let bytes = per_block(Layout::ColumnMajor, vec![3, 2], 0, 2, &codes);
    assert_eq!(rows_i8(&bytes), [[1, 4], [2, 5], [3, 6]]);
}

/// float32 [4] after `byte_offset` 8 (two elements), row-major and
/// strided with stride 1: `get` reads from `byte_offset` on, and the buffer
/// counts every element from its first byte.
#[test]
fn byte_offset_moves_element_zero() {
    let stored: Vec<u8> = [9.0f32, 9.0, 1.0, 2.0, 3.0, 4.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    for layout in [Layout::RowMajor, Layout::Strided { strides: vec![1] }] {
        let d = TensorDescriptor::new(ElementType::Float32, layout.clone(), vec![4])
            .with_buffer(BufferHandle::new(24))
            .with_byte_offset(8);
        let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        let t = file.tensor("t").unwrap();
        assert_eq!(t.buffer(0).unwrap().len(), 6, "{layout:?}");
        let view = t.dense::<f32>().unwrap();
        assert_eq!(view.as_slice(), [9.0, 9.0, 1.0, 2.0, 3.0, 4.0], "{layout:?}");
        for i in 0..4u64 {
            let expected = (i + 1) as f32;
            assert_eq!(view.get(&[i]).unwrap(), &expected, "{layout:?} [{i}]");
            assert_eq!(
                t.dense_value(&[i]).unwrap(),
                Value::Float(f64::from(expected)),
                "{layout:?} [{i}]"
            );
        }
    }
}

/// float32 [4, 4] in 2 x 2 tiles, tile grid row-major, elements inside a
/// tile strided: `[1, 2]` (column-major in the tile) is read as such;
/// `[8, 1]` reaches offset 9 in a tile of 4 elements, into other tiles
/// (`[1, 0]` and `[2, 0]` both at position 8), and is rejected.
#[test]
fn tiled_inner_strides_stay_within_the_tile() {
    use hurray_writer::{TileInner, TileOrder, Tiled};
    let tiled = |inner_strides: Vec<i64>| {
        let layout = Layout::Tiled(Tiled {
            tile_shape: vec![2, 2],
            outer: TileOrder::RowMajor,
            inner: TileInner::Strided(inner_strides),
        });
        let d = TensorDescriptor::new(ElementType::Float32, layout, vec![4, 4]).with_buffer(BufferHandle::new(64));
        let stored: Vec<u8> = (0..16).flat_map(|v| (v as f32).to_le_bytes()).collect();
        one_tensor(&d, vec![BufferData::Bytes(&stored)])
    };
    let bytes = tiled(vec![1, 2]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let view = file.tensor("t").unwrap().dense::<f32>().unwrap();
    // Tile (0, 0) holds positions 0..4 column by column: [0, 1] is at 2.
    let first_rows: Vec<f32> = [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [2, 0]]
        .iter()
        .map(|i| *view.get(i).unwrap())
        .collect();
    assert_eq!(first_rows, [0.0, 1.0, 2.0, 3.0, 4.0, 8.0]);

    // The writer refuses [8, 1]: patch the strides of the valid file.
    let at = match file.tensor("t").unwrap().descriptor().layout_fields() {
        hurray_reader::LayoutFields::Tiled { levels } => levels[0].offset as usize + 2 * 8 + 4,
        other => panic!("{other:?}"),
    };
    let mut patched = bytes.to_vec();
    patched[at..at + 16].copy_from_slice(&[8i64.to_le_bytes(), 1i64.to_le_bytes()].concat());
    let bytes = AlignedBytes::from_slice(&patched);
    let e = HurrayFile::parse(&bytes, Options::strict())
        .and_then(|file| file.tensor("t").and_then(|t| t.dense::<f32>().map(|_| ())))
        .unwrap_err();
    assert_eq!(
        (e.field().map(|f| f.to_string()), e.rule()),
        (Some("inner_strides".to_owned()), Some("layouts/tiled.md § Description")),
        "{e}"
    );
}

/// float32 [3, 5] with `morton_bits = [2, 3]`: the buffer holds 2^5 = 32
/// elements (`layouts/morton.md` § Buffer Size), but bit 2 of the column
/// lands at 2 × 2 + 1 = 5, so `[0, 4]` has code 32. The writer refuses
/// the descriptor and the reader the file (it used to open it, then fail
/// on every lookup in column 4); `[3, 4]` with the same bits fits.
#[test]
fn morton_codes_must_fit_the_buffer() {
    use hurray_writer::RawTensor;
    let morton = |shape: Vec<u64>| {
        TensorDescriptor::new(
            ElementType::Float32,
            Layout::Morton {
                morton_bits: vec![2, 3],
            },
            shape,
        )
        .with_buffer(BufferHandle::new(128))
    };
    let stored: Vec<u8> = (0..32).flat_map(|v| (v as f32).to_le_bytes()).collect();
    let fits = one_tensor(&morton(vec![3, 4]), vec![BufferData::Bytes(&stored)]);
    let file = HurrayFile::parse(&fits, Options::strict()).unwrap();
    // [2, 3]: row bits 0 and 1 at 0 and 2, column bits 0 and 1 at 1 and 3.
    assert_eq!(
        file.tensor("t").unwrap().dense::<f32>().unwrap().get(&[2, 3]).unwrap(),
        &14.0
    );

    let d = morton(vec![3, 5]);
    assert!(matches!(
        d.validate(),
        Err(hurray_writer::Error::InvalidField {
            value: 3,
            rule: "layouts/morton.md § Buffer Size",
            ..
        })
    ));
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor_unchecked(RawTensor::new(
        "t",
        d.encode().unwrap(),
        vec![BufferData::Bytes(&stored)],
    ))
    .unwrap();
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    let e = HurrayFile::parse(&bytes, Options::strict())
        .and_then(|file| file.tensor("t").map(|_| ()))
        .unwrap_err();
    assert_eq!(
        (e.field().map(|f| f.to_string()), e.rule()),
        (
            Some("morton_bits[1]".to_owned()),
            Some("layouts/morton.md § Buffer Size")
        ),
        "{e}"
    );
}

/// float6 elements come in groups of four in three bytes, starting at
/// `byte_offset` (`memory-layout.md` § Sub-Byte Types): a `byte_offset`
/// that is not a multiple of 3 is not a whole number of elements from the
/// buffer's first byte. The reader does not address such a tensor and
/// says so (`not_viewable`; it used to read element 0 at byte 4, as if
/// 6-bit elements took one byte each, and print wrong values); a multiple
/// of 3 is read.
#[test]
fn float6_byte_offset_is_read_in_whole_groups() {
    // Codes 0x08, 0x0C, 0x30, 0x14 (1.0, 1.5, -2.0, 3.0 in float6_e2m3),
    // packed LSB-first into three bytes.
    let group = [
        0x08u8 | (0x0C << 6),
        (0x0C >> 2) | (0x30 << 4),
        (0x30 >> 4) | (0x14 << 2),
    ];
    let read = |byte_offset: u64| {
        let mut stored = vec![0u8; byte_offset as usize];
        stored.extend(group);
        let d = TensorDescriptor::new(ElementType::Float6E2M3, Layout::RowMajor, vec![4])
            .with_buffer(BufferHandle::new(stored.len() as u64))
            .with_byte_offset(byte_offset);
        let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        let t = file.tensor("t").unwrap();
        // Said up front, so `--validate` reports the data as not checked.
        assert_eq!(
            t.not_viewable().is_some(),
            !byte_offset.is_multiple_of(3),
            "byte_offset {byte_offset}"
        );
        (0..4u64)
            .map(|i| t.dense_value(&[i]))
            .collect::<Result<Vec<Value>, _>>()
    };
    let floats = |v: Vec<Value>| -> Vec<f64> {
        v.into_iter()
            .map(|x| match x {
                Value::Float(f) => f,
                other => panic!("{other:?}"),
            })
            .collect()
    };
    assert_eq!(floats(read(0).unwrap()), [1.0, 1.5, -2.0, 3.0]);
    assert_eq!(floats(read(3).unwrap()), [1.0, 1.5, -2.0, 3.0]);
    let e = read(4).unwrap_err();
    assert!(matches!(e, hurray_reader::Error::NotViewable { .. }), "{e}");
}
