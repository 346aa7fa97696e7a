//! Dense addressing where storage and logical shape differ: quantized
//! blocks padded along their axis (`quantization/per-block-affine.md` §
//! Padding) and a `byte_offset` before element `[0, ..., 0]`
//! (`memory-layout.md` § byte_offset), also one that is not a whole number
//! of elements (complex halves, 6-bit groups). All read the wrong elements,
//! or failed, before reviews found them.

use hurray_reader::{AlignedBytes, Complex, HurrayFile, Location, Options, Value};
use hurray_writer::quant::{PerBlockAffine, ScaleType};
use hurray_writer::{BufferData, BufferHandle, ElementType, FileWriter, Layout, TensorDescriptor, WriterOptions};

/// One tensor `t` written through the checked writer, as aligned bytes.
fn one_tensor(d: &TensorDescriptor, data: Vec<BufferData<'_>>) -> AlignedBytes {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor("t", d, data).unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// One tensor `t` written through the writer's unchecked path (for
/// descriptors the checked path refuses), as aligned bytes.
fn one_unchecked(d: &TensorDescriptor, data: Vec<BufferData<'_>>) -> AlignedBytes {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor_unchecked(hurray_writer::RawTensor::new("t", d.encode().unwrap(), data))
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// The error resolving tensor `t` of `bytes` (strict), as (field, rule).
fn resolve_error(bytes: &AlignedBytes) -> (Option<String>, Option<&'static str>) {
    let e = HurrayFile::parse(bytes, Options::strict())
        .and_then(|file| file.tensor("t").map(|_| ()))
        .unwrap_err();
    (e.field().map(|f| f.to_string()), e.rule())
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

/// Codes of 6-bit elements packed LSB first, four to three bytes
/// (`element-types.md` § 6-bit packing); the last group's unused bits 0.
fn pack6(codes: &[u8]) -> Vec<u8> {
    codes
        .chunks(4)
        .flat_map(|c| {
            let word = c
                .iter()
                .enumerate()
                .fold(0u32, |w, (k, &code)| w | u32::from(code) << (6 * k));
            word.to_le_bytes()[..3].to_vec()
        })
        .collect()
}

/// The float of a decoded value.
fn float(v: Value) -> f64 {
    match v {
        Value::Float(f) => f,
        other => panic!("{other:?}"),
    }
}

/// float6_e2m3 codes of 1.0, 1.5, -2.0, 3.0, 0.5 (`packed.rs` checks the
/// decoding): the values every float6 test below reads back.
const F6_CODES: [u8; 5] = [0x08, 0x0C, 0x30, 0x14, 0x04];
const F6_VALUES: [f64; 5] = [1.0, 1.5, -2.0, 3.0, 0.5];

/// float6 elements come in groups of four in three bytes starting at
/// `byte_offset` (`memory-layout.md` § Sub-Byte Types, § Element Address
/// Computation): any `byte_offset` is valid. The groups are read from byte
/// `byte_offset mod 3` (`Buffer::element_start`), `byte_offset div 3`
/// groups before element `[0]` (`Tensor::element_origin`, 4 per group).
/// An offset off a multiple of 3 used to be refused (`not_viewable`), and
/// before that read as if 6-bit elements took one byte each.
#[test]
fn float6_byte_offset_is_read_in_whole_groups() {
    for byte_offset in 0u64..=7 {
        // Bytes before `byte_offset` all ones: code 0x3F, -7.5.
        let mut stored = vec![0xFFu8; byte_offset as usize];
        stored.extend(pack6(&F6_CODES));
        let d = TensorDescriptor::new(ElementType::Float6E2M3, Layout::RowMajor, vec![5])
            .with_buffer(BufferHandle::new(stored.len() as u64))
            .with_byte_offset(byte_offset);
        let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        file.validate().unwrap();
        let t = file.tensor("t").unwrap();
        assert_eq!(t.not_viewable(), None, "byte_offset {byte_offset}");
        let b = t.buffer(0).unwrap();
        let origin = byte_offset / 3 * 4;
        assert_eq!(
            (b.element_start(), t.element_origin(), b.len()),
            (byte_offset % 3, Some(origin), origin + 5),
            "byte_offset {byte_offset}"
        );
        let read: Vec<f64> = (0..5u64).map(|i| float(t.dense_value(&[i]).unwrap())).collect();
        assert_eq!(read, F6_VALUES, "byte_offset {byte_offset}");
        // The buffer's own elements: the whole groups before element [0]
        // (all code 0x3F, -7.5), then the tensor.
        let packed: Vec<f64> = b.packed().unwrap().iter().map(float).collect();
        let mut expected = vec![-7.5; origin as usize];
        expected.extend(F6_VALUES);
        assert_eq!(packed, expected, "byte_offset {byte_offset}");
        let addressing = t.addressing().unwrap();
        assert_eq!(addressing.position(&[4]).unwrap(), origin + 4);
    }
}

/// A non-zero bit after the last float6 element is found where the groups
/// lie, `byte_offset mod 3` bytes into the buffer.
#[test]
fn float6_padding_bits_are_checked_from_the_phase() {
    let mut stored = vec![0u8];
    stored.extend(pack6(&F6_CODES));
    // Element 4 takes bits 0..6 of its group; bit 7 of the group's first
    // byte (buffer byte 4) is padding.
    stored[4] |= 0x80;
    let d = TensorDescriptor::new(ElementType::Float6E2M3, Layout::RowMajor, vec![5])
        .with_buffer(BufferHandle::new(7))
        .with_byte_offset(1);
    let bytes = one_unchecked(&d, vec![BufferData::Bytes(&stored)]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let t = file.tensor("t").unwrap();
    let e = t.validate_data().unwrap_err();
    assert!(
        matches!(e, hurray_reader::Error::Reserved {
            at: Location { offset, .. },
            value: 0x80,
            ..
        } if offset == t.buffer(0).unwrap().file_offset() + 4),
        "{e}"
    );
}

/// float6 strided with negative strides (`layouts/strided.md` § Stride
/// Semantics: negative strides MUST be supported): offsets below 0 fall in
/// the groups before `byte_offset`, group `floor(offset / 4)`. Used to be
/// refused ("non-negative strides for 6-bit types").
#[test]
fn float6_strided_negative_strides_read_earlier_groups() {
    // [6] reversed, stride -1: offsets 0..-5 from byte_offset 7 (phase 1,
    // two groups before element [0]): element [i] is buffer element 8 - i.
    // Buffer elements 3..=8 hold 0.5, 3.0, -2.0, 1.5, 1.0, 6.0 (code 0x1C).
    let codes = [0, 0, 0, 0x04, 0x14, 0x30, 0x0C, 0x08, 0x1C];
    let mut stored = vec![0u8];
    stored.extend(pack6(&codes));
    let d = TensorDescriptor::new(ElementType::Float6E2M3, Layout::Strided { strides: vec![-1] }, vec![6])
        .with_buffer(BufferHandle::new(10))
        .with_byte_offset(7);
    let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    file.validate().unwrap();
    let t = file.tensor("t").unwrap();
    assert_eq!((t.buffer(0).unwrap().element_start(), t.element_origin()), (1, Some(8)));
    let read: Vec<f64> = (0..6u64).map(|i| float(t.dense_value(&[i]).unwrap())).collect();
    assert_eq!(read, [6.0, 1.0, 1.5, -2.0, 3.0, 0.5]);

    // [2, 3] with strides [-3, 1] from byte_offset 4 (phase 1, one group
    // before): row 0 at offsets 0..2 (buffer elements 4..6), row 1 at
    // -3..-1 (buffer elements 1..3), across two groups.
    let codes = [0, 0x04, 0x14, 0x30, 0x08, 0x0C, 0x1C];
    let mut stored = vec![0u8];
    stored.extend(pack6(&codes));
    let d = TensorDescriptor::new(
        ElementType::Float6E2M3,
        Layout::Strided { strides: vec![-3, 1] },
        vec![2, 3],
    )
    .with_buffer(BufferHandle::new(7))
    .with_byte_offset(4);
    let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    file.validate().unwrap();
    let t = file.tensor("t").unwrap();
    let rows: Vec<Vec<f64>> = (0..2u64)
        .map(|i| (0..3u64).map(|j| float(t.dense_value(&[i, j]).unwrap())).collect())
        .collect();
    assert_eq!(rows, [[1.0, 1.5, 6.0], [0.5, 3.0, -2.0]]);

    // byte_offset 2 with stride -1 over [2]: offset -1 lies in the group
    // starting at byte -1, before the buffer.
    let d = TensorDescriptor::new(ElementType::Float6E2M3, Layout::Strided { strides: vec![-1] }, vec![2])
        .with_buffer(BufferHandle::new(5))
        .with_byte_offset(2);
    assert!(d.validate().is_err());
    let bytes = one_unchecked(&d, vec![BufferData::Bytes(&[0; 5])]);
    assert_eq!(
        resolve_error(&bytes),
        (Some("byte_offset".to_owned()), Some("layouts/strided.md § Buffer Size"))
    );
}

fn complex64_bytes(values: &[(f32, f32)]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&(re, im)| [re.to_le_bytes(), im.to_le_bytes()].concat())
        .collect()
}

/// complex64 (8-byte elements, 4-byte alignment, `element-types.md`
/// § Type Properties Summary) may start half an element into the buffer:
/// `byte_offset` 4 and 12. Elements are read from byte 4
/// (`Buffer::element_start`), typed (`Complex<f32>`) and decoded. Used to
/// be `not_viewable`.
#[test]
fn complex64_byte_offset_inside_an_element() {
    let values = [(1.0f32, -2.0f32), (3.5, 0.25), (-0.5, 8.0)];
    for byte_offset in [4u64, 12] {
        let mut stored = vec![0xABu8; byte_offset as usize];
        stored.extend(complex64_bytes(&values));
        let d = TensorDescriptor::new(ElementType::Complex64, Layout::RowMajor, vec![3])
            .with_buffer(BufferHandle::new(stored.len() as u64))
            .with_byte_offset(byte_offset);
        // The writer's checked path accepts it.
        let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        file.validate().unwrap();
        let t = file.tensor("t").unwrap();
        assert_eq!(t.not_viewable(), None);
        let origin = byte_offset / 8;
        let b = t.buffer(0).unwrap();
        assert_eq!(
            (b.element_start(), t.element_origin(), b.len()),
            (4, Some(origin), origin + 3)
        );
        let view = t.dense::<Complex<f32>>().unwrap();
        assert_eq!(view.as_slice().len() as u64, origin + 3);
        for (i, &(re, im)) in values.iter().enumerate() {
            let i = i as u64;
            assert_eq!(view.get(&[i]).unwrap(), &Complex { re, im }, "[{i}]");
            assert_eq!(view.as_slice()[(origin + i) as usize], Complex { re, im });
            assert_eq!(
                t.dense_value(&[i]).unwrap(),
                Value::Complex {
                    re: f64::from(re),
                    im: f64::from(im)
                },
                "[{i}]"
            );
        }
        assert!(view.get(&[3]).is_err());
    }
}

/// complex128 (16-byte elements, 8-byte alignment) at `byte_offset` 8.
#[test]
fn complex128_byte_offset_inside_an_element() {
    let values = [(1.5f64, -2.25f64), (1e300, -0.0), (f64::MIN_POSITIVE, 7.0)];
    let mut stored = vec![0xCDu8; 8];
    for &(re, im) in &values {
        stored.extend(re.to_le_bytes());
        stored.extend(im.to_le_bytes());
    }
    let d = TensorDescriptor::new(ElementType::Complex128, Layout::ColumnMajor, vec![3])
        .with_buffer(BufferHandle::new(56))
        .with_byte_offset(8);
    let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    file.validate().unwrap();
    let t = file.tensor("t").unwrap();
    assert_eq!((t.buffer(0).unwrap().element_start(), t.element_origin()), (8, Some(0)));
    let view = t.dense::<Complex<f64>>().unwrap();
    assert_eq!(view.as_slice().len(), 3);
    for (i, &(re, im)) in values.iter().enumerate() {
        let i = i as u64;
        let got = view.get(&[i]).unwrap();
        assert_eq!(
            (got.re.to_bits(), got.im.to_bits()),
            (re.to_bits(), im.to_bits()),
            "[{i}]"
        );
        assert_eq!(t.dense_value(&[i]).unwrap(), Value::Complex { re, im }, "[{i}]");
    }
}

/// A negative stride from a `byte_offset` inside an element: complex64 [2]
/// reversed from byte_offset 12, element [1] at bytes 4..12.
#[test]
fn complex64_negative_stride_from_a_phase() {
    let mut stored = vec![0u8; 4];
    stored.extend(complex64_bytes(&[(5.0, 6.0), (7.0, -8.0)]));
    let d = TensorDescriptor::new(ElementType::Complex64, Layout::Strided { strides: vec![-1] }, vec![2])
        .with_buffer(BufferHandle::new(20))
        .with_byte_offset(12);
    let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let t = file.tensor("t").unwrap();
    let view = t.dense::<Complex<f32>>().unwrap();
    assert_eq!(view.get(&[0]).unwrap(), &Complex { re: 7.0, im: -8.0 });
    assert_eq!(view.get(&[1]).unwrap(), &Complex { re: 5.0, im: 6.0 });
    assert_eq!(t.dense_value(&[1]).unwrap(), Value::Complex { re: 5.0, im: 6.0 });
    // byte_offset 4: element [1] would start at byte -4.
    let d = TensorDescriptor::new(ElementType::Complex64, Layout::Strided { strides: vec![-1] }, vec![2])
        .with_buffer(BufferHandle::new(12))
        .with_byte_offset(4);
    assert!(d.validate().is_err());
    let bytes = one_unchecked(&d, vec![BufferData::Bytes(&stored[..12])]);
    assert_eq!(
        resolve_error(&bytes),
        (Some("byte_offset".to_owned()), Some("layouts/strided.md § Buffer Size"))
    );
}

/// float32 at `byte_offset` 2 breaks the type's 4-byte alignment
/// (`element-types.md` § Type Properties Summary: "the minimum alignment
/// requirement ... of an individual element within a contiguous buffer"):
/// the checked writer refuses it, strict mode rejects it at resolve naming
/// `byte_offset` and that section. Permissive mode reads it: the values
/// decode (`dense_value`, `Buffer::value`), while a `&[f32]` cannot be
/// borrowed from an address 2 bytes off (`NotViewable`, not `Misaligned`,
/// which blames the caller's bytes).
#[test]
fn misaligned_byte_offset_is_strictly_rejected_and_permissively_decoded() {
    let mut stored = vec![0u8; 2];
    stored.extend([1.25f32, -3.0].iter().flat_map(|v| v.to_le_bytes()));
    let d = TensorDescriptor::new(ElementType::Float32, Layout::RowMajor, vec![2])
        .with_buffer(BufferHandle::new(10))
        .with_byte_offset(2);
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let e = w.write_tensor("t", &d, vec![BufferData::Bytes(&stored)]).unwrap_err();
    assert!(
        matches!(e, hurray_writer::Error::InvalidField { value: 2, rule, .. } if rule == "element-types.md § Type Properties Summary"),
        "{e}"
    );
    let raw = hurray_writer::RawTensor::from_descriptor("t", &d, vec![BufferData::Bytes(&stored)]).unwrap();
    w.write_tensor_unchecked(raw).unwrap();
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());

    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let e = file.tensor("t").map(|_| ()).unwrap_err();
    assert_eq!(
        (e.field().map(|f| f.to_string()), e.rule()),
        (
            Some("byte_offset".to_owned()),
            Some("element-types.md § Type Properties Summary")
        ),
        "{e}"
    );

    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let t = file.tensor("t").unwrap();
    assert_eq!(t.dense_value(&[0]).unwrap(), Value::Float(1.25));
    assert_eq!(t.dense_value(&[1]).unwrap(), Value::Float(-3.0));
    assert_eq!(t.buffer(0).unwrap().value(1), Some(Value::Float(-3.0)));
    let e = t.dense::<f32>().unwrap_err();
    assert!(matches!(e, hurray_reader::Error::NotViewable { .. }), "{e}");
}

/// A packed type's unused bits after its last element must be 0
/// (`element-types.md` § 6-bit packing: "When the total number of elements
/// is not a multiple of 4, the unused high-order bits in the final group
/// ... MUST be set to 0x0"): a rule about a packed array. The data buffer
/// of a strided tensor is a set of slots; those no index reaches — gaps,
/// and the slot past the last one reached — are undefined. float6_e2m3
/// `[4]` with stride 2 fills slots 0, 2, 4, 6 of 8 (two groups): the gaps
/// and slot 7 may hold anything. `--validate` used to reject slot 7 (as
/// padding bits) but not the gaps.
#[test]
fn strided_packed_slots_past_the_last_element_are_not_padding() {
    let mut slots = [0x3Fu8; 8]; // -7.5 where no index reaches
    for (k, &code) in F6_CODES.iter().take(4).enumerate() {
        slots[2 * k] = code;
    }
    let stored = pack6(&slots);
    let layout = Layout::Strided { strides: vec![2] };
    let d = TensorDescriptor::new(ElementType::Float6E2M3, layout, vec![4])
        .with_buffer(BufferHandle::new(stored.len() as u64));
    let bytes = one_tensor(&d, vec![BufferData::Bytes(&stored)]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert_eq!(file.validate(), Ok(()));
    let t = file.tensor("t").unwrap();
    let read: Vec<f64> = (0..4u64).map(|i| float(t.dense_value(&[i]).unwrap())).collect();
    assert_eq!(read, F6_VALUES[..4]);
}

/// `Addressing::positions` walks the logical indices in row-major order and
/// agrees with `position` for every dense tensor of the fixtures and, when
/// `HURRAY_INTEROP_DIR` is set, of the interop corpus (row-major,
/// column-major, strided with negative and zero strides, tiled, Morton,
/// Hilbert); `strides` is given exactly for the linear layouts.
#[test]
fn positions_agree_with_position_on_every_dense_tensor() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures");
    let mut paths: Vec<std::path::PathBuf> = ["dtypes.hry", "sparse_formats.hry", "empty.hry"]
        .iter()
        .map(|f| std::path::Path::new(root).join(f))
        .collect();
    if let Some(dir) = std::env::var_os("HURRAY_INTEROP_DIR") {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
        for entry in std::fs::read_dir(&dir).expect("HURRAY_INTEROP_DIR is set but cannot be read") {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".hry") && !name.starts_with("invalid_") {
                paths.push(path);
            }
        }
    }
    let (mut tensors, mut linear) = (0, 0);
    for path in &paths {
        let bytes = AlignedBytes::read(path).unwrap();
        let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
        for entry in file.entries() {
            let t = file.tensor(entry.name()).unwrap();
            if !t.layout().is_dense() || t.not_viewable().is_some() {
                continue;
            }
            let a = t.addressing().unwrap();
            let walked: Vec<u64> = a.positions().collect();
            let each: Vec<u64> = hurray_reader::logical_indices(a.shape())
                .map(|i| a.position(&i).unwrap())
                .collect();
            assert_eq!(walked, each, "{}: {}", path.display(), entry.name());
            let count = usize::try_from(t.element_count().unwrap()).unwrap();
            assert_eq!(walked.len(), count, "{}", entry.name());
            let is_linear = matches!(t.layout().as_str(), "row_major" | "col_major" | "strided");
            assert_eq!(a.strides().is_some(), is_linear, "{}", entry.name());
            if let Some(strides) = a.strides() {
                let origin = i128::from(t.element_origin().unwrap());
                for (index, p) in hurray_reader::logical_indices(a.shape()).zip(&walked) {
                    let dot: i128 = index
                        .iter()
                        .zip(&strides)
                        .map(|(&i, &s)| i128::from(i) * i128::from(s))
                        .sum();
                    assert_eq!(origin + dot, i128::from(*p));
                }
                linear += 1;
            }
            tensors += 1;
        }
    }
    assert!(
        tensors >= 14 && linear >= 12,
        "{tensors} dense tensors, {linear} linear"
    );
}

#[test]
fn strides_of_the_linear_layouts() {
    let file = |d: &TensorDescriptor, bytes: &[u8]| one_tensor(d, vec![BufferData::Bytes(bytes)]);
    let row = file(
        &TensorDescriptor::row_major(ElementType::Int8, vec![2, 3, 4]).unwrap(),
        &[0; 24],
    );
    let col = file(
        &TensorDescriptor::column_major(ElementType::Int8, vec![2, 3, 4]).unwrap(),
        &[0; 24],
    );
    // The first positions in logical order: [0, 0, 0], [0, 0, 1], [0, 0, 2].
    for (bytes, strides, first) in [(&row, [12, 4, 1], [0, 1, 2]), (&col, [1, 2, 6], [0, 6, 12])] {
        let f = HurrayFile::parse(bytes, Options::strict()).unwrap();
        let a = f.tensor("t").unwrap().addressing().unwrap();
        assert_eq!(a.strides(), Some(strides.to_vec()));
        assert_eq!(a.positions().take(3).collect::<Vec<_>>(), first);
    }
}
