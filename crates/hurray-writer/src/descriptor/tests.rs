use crate::buffer::BufferHandle;
use crate::element_type::ElementType;
use crate::error::Error;
use crate::layout::{Layout, TileInner, TileOrder, Tiled};

use super::checks::*;
use super::*;

#[test]
fn metadata_worked_example() {
    // metadata.md § Worked Example: float32 [3, 4] row-major, 61 bytes.
    // The example declares a 192-byte buffer, more than the 48 bytes the
    // 12 elements need: the layouts allow it, strict readers reject it
    // (NOTES.md), so the checked path refuses it; the bytes still encode
    // (the unchecked path writes such a file).
    let mut d = TensorDescriptor::row_major(ElementType::Float32, vec![3, 4]).unwrap();
    assert_eq!(d.buffers[0].byte_size, 48);
    d.validate().unwrap();
    d.buffers[0].byte_size = 192;
    assert!(matches!(
        d.validate(),
        Err(Error::BufferSize {
            buffer: 0,
            expected: 48,
            actual: 192,
            ..
        })
    ));
    let b = d.encode().unwrap();
    let expected: Vec<u8> = [
        &b"HRRY"[..],
        &[1, 0, 0x3D, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x01, 2, 0, 0, 0],
        &3u64.to_le_bytes(),
        &4u64.to_le_bytes(),
        &0u64.to_le_bytes(),
        &[1],
        &192u64.to_le_bytes(),
        &64u32.to_le_bytes(),
        &[0, 0, 0, 0],
    ]
    .concat();
    assert_eq!(b, expected);
}

#[test]
fn tiled_inner_strides_stay_within_the_tile() {
    let d = |inner_strides: Vec<i64>| {
        let tiled = Tiled {
            tile_shape: vec![2, 2],
            outer: TileOrder::RowMajor,
            inner: TileInner::Strided(inner_strides),
        };
        TensorDescriptor::new(ElementType::Float32, Layout::Tiled(tiled), vec![4, 4])
            .with_buffer(BufferHandle::new(64))
            .validate()
    };
    // Row-major and column-major in the tile: offsets 0..=3.
    assert!(d(vec![2, 1]).is_ok() && d(vec![1, 2]).is_ok());
    // [8, 1] reaches 9 in a 4-element tile; [-1, 2] reaches -1.
    for (strides, value) in [
        (vec![8, 1], 9),
        (vec![-1, 2], 0),
        (vec![i64::MAX, i64::MAX], u64::MAX - 1),
    ] {
        assert!(
            matches!(d(strides.clone()), Err(Error::InvalidField { what: "inner_strides", value: v, .. }) if v == value),
            "{strides:?}: {:?}",
            d(strides.clone())
        );
    }
}

#[test]
fn sparse_byte_offset_refused() {
    let d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5)
        .unwrap()
        .with_byte_offset(4);
    assert!(matches!(d.validate(), Err(Error::NonZeroByteOffset { .. })));
}

#[test]
fn csc_rank_and_buffers() {
    let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap();
    d.shape = vec![1, 4, 5];
    assert!(matches!(d.validate(), Err(Error::RankNotAllowed { rank: 3, .. })));
    let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap();
    d.buffers.pop();
    assert!(matches!(
        d.validate(),
        Err(Error::BufferCount {
            expected: 3,
            actual: 2,
            ..
        })
    ));
    let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 7).unwrap();
    d.buffers[0].byte_size = 24;
    assert!(matches!(
        d.validate(),
        Err(Error::BufferSize {
            buffer: 0,
            expected: 28,
            actual: 24,
            ..
        })
    ));
}

#[test]
fn dense_sizes() {
    let d = TensorDescriptor::row_major(ElementType::Float6E2M3, vec![5]).unwrap();
    assert_eq!(d.buffers[0].byte_size, 6);
    d.validate().unwrap();
    let mut d = TensorDescriptor::row_major(ElementType::Int4, vec![3, 3]).unwrap();
    assert_eq!(d.buffers[0].byte_size, 5);
    d.buffers[0].byte_size = 4;
    assert!(matches!(d.validate(), Err(Error::BufferTooSmall { minimum: 5, .. })));
    let d = TensorDescriptor::column_major(ElementType::Float32, vec![]).unwrap();
    assert!(matches!(d.validate(), Err(Error::RankNotAllowed { rank: 0, .. })));
}

#[test]
fn strided_extent_checks() {
    // layouts/strided.md example: [3, 4], strides [-4, 1], byte_offset 32.
    let d = TensorDescriptor::new(
        ElementType::Float32,
        Layout::Strided { strides: vec![-4, 1] },
        vec![3, 4],
    )
    .with_buffer(BufferHandle::new(48))
    .with_byte_offset(32);
    d.validate().unwrap();
    let d2 = d.clone().with_byte_offset(16);
    assert!(d2.validate().is_err());
}

#[test]
fn tiled_partial() {
    let t = Tiled {
        tile_shape: vec![2, 4],
        outer: TileOrder::RowMajor,
        inner: TileInner::ColumnMajor,
    };
    let d =
        TensorDescriptor::new(ElementType::Float32, Layout::Tiled(t), vec![5, 7]).with_buffer(BufferHandle::new(192));
    d.validate().unwrap();
    let mut small = d.clone();
    small.buffers[0].byte_size = 188;
    assert!(matches!(
        small.validate(),
        Err(Error::BufferTooSmall { minimum: 192, .. })
    ));
}

#[test]
fn permutation() {
    assert!(check_permutation(&[2, 0, 1]).is_ok());
    assert!(matches!(
        check_permutation(&[0, 1, 1]),
        Err(Error::ModeOrderNotPermutation { position: 2, value: 1 })
    ));
    assert!(matches!(
        check_permutation(&[0, 3, 1]),
        Err(Error::ModeOrderNotPermutation { position: 1, value: 3 })
    ));
}
