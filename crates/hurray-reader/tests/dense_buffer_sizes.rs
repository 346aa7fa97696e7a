//! The checked writer and the strict reader agree on a dense buffer's size:
//! exactly what the layout computes (`NOTES.md`, "Buffer larger than
//! required": the dense layouts give a minimum, strict readers reject a
//! larger buffer). The writer used to accept a larger buffer — a file it
//! wrote could then fail `hurray-inspect --validate` — and skipped the size
//! check of tiled layouts with strided tile grids or strided tiles.

use hurray_reader::{AlignedBytes, Error, HurrayFile, Options};
use hurray_writer::{
    BufferData, BufferHandle, ElementType, FileWriter, Layout, RawTensor, TensorDescriptor, TileInner, TileOrder,
    Tiled, WriterOptions,
};

fn write(d: &TensorDescriptor, data: &[u8], checked: bool) -> Result<AlignedBytes, hurray_writer::Error> {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default())?;
    if checked {
        w.write_tensor("t", d, vec![BufferData::Bytes(data)])?;
    } else {
        w.write_tensor_unchecked(RawTensor::from_descriptor("t", d, vec![BufferData::Bytes(data)])?)?;
    }
    Ok(AlignedBytes::from_slice(&w.finish()?))
}

fn f32_bytes(n: usize) -> Vec<u8> {
    (0..n).flat_map(|v| (v as f32).to_le_bytes()).collect()
}

#[test]
fn row_major_buffer_past_its_elements() {
    // metadata.md § Worked Example: float32 [3, 4] with a 192-byte buffer.
    let d = |size: u64| {
        TensorDescriptor::new(ElementType::Float32, Layout::RowMajor, vec![3, 4]).with_buffer(BufferHandle::new(size))
    };
    let exact = write(&d(48), &f32_bytes(12), true).unwrap();
    let file = HurrayFile::parse(&exact, Options::strict()).unwrap();
    assert_eq!(
        file.tensor("t").unwrap().dense::<f32>().unwrap().get(&[2, 3]),
        Ok(&11.0)
    );

    let e = write(&d(192), &f32_bytes(48), true).unwrap_err();
    assert!(
        matches!(
            e,
            hurray_writer::Error::BufferSize {
                buffer: 0,
                expected: 48,
                actual: 192,
                ..
            }
        ),
        "{e}"
    );
    // Written anyway (unchecked): strict rejects it naming the rule, permissive reads it.
    let larger = write(&d(192), &f32_bytes(48), false).unwrap();
    let e = HurrayFile::parse(&larger, Options::strict())
        .and_then(|f| f.tensor("t").map(|_| ()))
        .unwrap_err();
    assert!(
        matches!(
            e,
            Error::BufferSize {
                byte_size: 192,
                expected: 48,
                exact: true,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.rule(), Some("element-types.md § Buffer Size Calculation"));
    let file = HurrayFile::parse(&larger, Options::permissive()).unwrap();
    assert_eq!(
        file.tensor("t").unwrap().dense::<f32>().unwrap().get(&[2, 3]),
        Ok(&11.0)
    );
}

/// float32 [4, 4] in 2 × 2 tiles; the tile grid [2, 2] placed by `outer`
/// strides, each tile's elements by `inner`.
fn tiled(outer: Vec<i64>, inner: TileInner, size: u64) -> TensorDescriptor {
    let layout = Layout::Tiled(Tiled {
        tile_shape: vec![2, 2],
        outer: TileOrder::Strided(outer),
        inner,
    });
    TensorDescriptor::new(ElementType::Float32, layout, vec![4, 4]).with_buffer(BufferHandle::new(size))
}

#[test]
fn strided_tile_grid_spans_to_its_highest_slot() {
    // Strides [3, 1] over the grid [2, 2]: slots 0, 1, 3, 4 — five slots of
    // four elements, 80 bytes (slot 2 unused).
    let exact = write(&tiled(vec![3, 1], TileInner::RowMajor, 80), &f32_bytes(20), true).unwrap();
    let file = HurrayFile::parse(&exact, Options::strict()).unwrap();
    let view = file.tensor("t").unwrap().dense::<f32>().unwrap();
    // Tile (0, 1) sits in slot 1 (elements 4..8), (1, 0) in slot 3, (1, 1) in slot 4.
    let got: Vec<f32> = [[0, 0], [0, 3], [2, 0], [3, 1], [2, 2], [3, 3]]
        .iter()
        .map(|i| *view.get(i).unwrap())
        .collect();
    assert_eq!(got, [0.0, 5.0, 12.0, 15.0, 16.0, 19.0]);

    for (size, data) in [(64, 16), (96, 24)] {
        let e = write(&tiled(vec![3, 1], TileInner::RowMajor, size), &f32_bytes(data), true).unwrap_err();
        let refused = match e {
            hurray_writer::Error::BufferTooSmall { minimum, actual, .. } => (minimum, actual),
            hurray_writer::Error::BufferSize { expected, actual, .. } => (expected, actual),
            other => panic!("{other}"),
        };
        assert_eq!(refused, (80, size));
        // The reader says the same of the file written unchecked.
        let bytes = write(&tiled(vec![3, 1], TileInner::RowMajor, size), &f32_bytes(data), false).unwrap();
        let e = HurrayFile::parse(&bytes, Options::strict())
            .and_then(|f| f.tensor("t").map(|_| ()))
            .unwrap_err();
        assert!(matches!(e, Error::BufferSize { expected: 80, .. }), "{e}");
    }
}

#[test]
fn strided_tiles_hold_whole_tiles() {
    // In-tile strides [1, 2] (column-major within each tile), grid strides
    // [2, 1]: four slots of four elements, 64 bytes.
    let inner = || TileInner::Strided(vec![1, 2]);
    let exact = write(&tiled(vec![2, 1], inner(), 64), &f32_bytes(16), true).unwrap();
    let file = HurrayFile::parse(&exact, Options::strict()).unwrap();
    let view = file.tensor("t").unwrap().dense::<f32>().unwrap();
    assert_eq!(view.get(&[0, 1]), Ok(&2.0));
    assert_eq!(view.get(&[3, 2]), Ok(&13.0));
    let e = write(&tiled(vec![2, 1], inner(), 128), &f32_bytes(32), true).unwrap_err();
    assert!(
        matches!(
            e,
            hurray_writer::Error::BufferSize {
                expected: 64,
                actual: 128,
                ..
            }
        ),
        "{e}"
    );
}

/// Negative tile-grid strides are valid (strides in tiles,
/// `layouts/tiled.md` § Additional Descriptor Fields; "Negative and zero
/// strides are valid", `layouts/strided.md`) when `byte_offset` leaves the
/// tiles they reach at or after byte 0, as for a strided tensor. Both sides
/// used to refuse them.
#[test]
fn negative_tile_grid_strides_need_a_byte_offset() {
    // Strides [-2, 1] over the grid [2, 2]: tile (1, 0) at slot -2, (1, 1)
    // at -1, (0, 0) at 0, (0, 1) at 1. Two slots of 4 float32 before slot 0:
    // byte_offset 32, then slots 0..2: 64 bytes in all.
    let d = tiled(vec![-2, 1], TileInner::RowMajor, 64).with_byte_offset(32);
    let bytes = write(&d, &f32_bytes(16), true).unwrap();
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    assert_eq!(file.validate(), Ok(()));
    let view = file.tensor("t").unwrap().dense::<f32>().unwrap();
    let got: Vec<f32> = [[0, 0], [1, 1], [2, 0], [3, 3], [2, 2], [0, 3]]
        .iter()
        .map(|i| *view.get(i).unwrap())
        .collect();
    // (0, 0) in slot 0 = elements 8..12; (1, 0) in slot -2 = 0..4;
    // (1, 1) in slot -1 = 4..8; (0, 1) in slot 1 = 12..16.
    assert_eq!(got, [8.0, 11.0, 0.0, 7.0, 4.0, 13.0]);

    // byte_offset 16 leaves tile (1, 0) half before byte 0: both refuse.
    let short = tiled(vec![-2, 1], TileInner::RowMajor, 48).with_byte_offset(16);
    let e = write(&short, &f32_bytes(12), true).unwrap_err();
    assert!(
        matches!(
            e,
            hurray_writer::Error::InvalidField {
                what: "byte_offset",
                value: 16,
                ..
            }
        ),
        "{e}"
    );
    let bytes = write(&short, &f32_bytes(12), false).unwrap();
    let e = HurrayFile::parse(&bytes, Options::strict())
        .and_then(|f| f.tensor("t").map(|_| ()))
        .unwrap_err();
    assert_eq!(
        (e.field().map(|f| f.to_string()), e.rule()),
        (
            Some("byte_offset".to_owned()),
            Some("memory-layout.md § Common Fields › byte_offset")
        ),
        "{e}"
    );
}

/// Below the top tiling level a slot before a tile's first belongs to the
/// previous tile (tiles do not overlap, `layouts/tiled.md` § Description):
/// refused by both sides, the reader naming the stride and its offset.
#[test]
fn negative_nested_tile_grid_strides_are_refused() {
    let nested = |strides: Vec<i64>| {
        let layout = Layout::Tiled(Tiled {
            tile_shape: vec![2],
            outer: TileOrder::RowMajor,
            inner: TileInner::Tiled(Box::new(Tiled {
                tile_shape: vec![1],
                outer: TileOrder::Strided(strides),
                inner: TileInner::RowMajor,
            })),
        });
        TensorDescriptor::new(ElementType::Float32, layout, vec![4]).with_buffer(BufferHandle::new(16))
    };
    let e = write(&nested(vec![-1]), &f32_bytes(4), true).unwrap_err();
    assert!(
        matches!(e, hurray_writer::Error::InvalidField { what, .. } if what.starts_with("outer_strides")),
        "{e}"
    );
    let bytes = write(&nested(vec![-1]), &f32_bytes(4), false).unwrap();
    let file = HurrayFile::parse(&bytes, Options::permissive()).unwrap();
    let e = file.tensor("t").map(|_| ()).unwrap_err();
    // Level 1's tile_shape (8 bytes) then 4 bytes of orders: its
    // outer_strides[0] follows.
    let level1 = match HurrayFile::parse(
        &write(&nested(vec![1]), &f32_bytes(4), false).unwrap(),
        Options::permissive(),
    )
    .unwrap()
    .tensor("t")
    .unwrap()
    .descriptor()
    .layout_fields()
    {
        hurray_reader::LayoutFields::Tiled { levels } => levels[1].offset,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        (e.field().map(|f| f.to_string()), e.offset(), e.rule()),
        (
            Some("outer_strides[0]".to_owned()),
            Some(level1 + 8 + 4),
            Some("layouts/tiled.md § Description")
        ),
        "{e}"
    );
}
