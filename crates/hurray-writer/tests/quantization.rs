//! Quantization payload helpers and the checks the writer applies to them.

use hurray_writer::quant::{Mxfp, Nf4, PerBlockAffine, PerChannelAffine, PerTensorAffine, ScaleType};
use hurray_writer::{
    BlockPaged, BufferHandle, ElementType, Error, FileWriter, Layout, TensorDescriptor, WriterOptions,
};

fn write(d: &TensorDescriptor) -> Result<(), Error> {
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default())?;
    w.write_tensor("q", d, d.zero_data())?;
    w.finish().map(|_| ())
}

fn dense(t: ElementType, shape: Vec<u64>, extra: &[u64], payload: Vec<u8>) -> TensorDescriptor {
    let mut d = TensorDescriptor::row_major(t, shape)
        .unwrap()
        .with_quantization(payload);
    for &size in extra {
        d = d.with_buffer(BufferHandle::new(size));
    }
    d
}

#[test]
fn per_tensor() {
    let ok = PerTensorAffine {
        scale: 0.05,
        zero_point: 128,
    }
    .encode();
    write(&dense(ElementType::UInt8, vec![4, 6], &[], ok.clone())).unwrap();
    let zero = PerTensorAffine {
        scale: 0.0,
        zero_point: 0,
    }
    .encode();
    assert!(matches!(
        write(&dense(ElementType::UInt8, vec![4], &[], zero)),
        Err(Error::InvalidFloatField { what: "scale", .. })
    ));
    let out_of_range = PerTensorAffine {
        scale: 1.0,
        zero_point: -1,
    }
    .encode();
    assert!(matches!(
        write(&dense(ElementType::UInt8, vec![4], &[], out_of_range)),
        Err(Error::InvalidField { what: "zero_point", .. })
    ));
    assert!(matches!(
        write(&dense(ElementType::Float32, vec![4], &[], ok)),
        Err(Error::InvalidField {
            what: "type_tag (quantization storage type)",
            ..
        })
    ));
}

#[test]
fn per_channel() {
    let asym = PerChannelAffine {
        axis: 0,
        scale_buffer_index: 1,
        zero_point_buffer_index: Some(2),
    }
    .encode();
    write(&dense(ElementType::Int8, vec![4, 3], &[16, 16], asym.clone())).unwrap();
    assert!(matches!(
        write(&dense(ElementType::Int8, vec![4, 3], &[16], asym.clone())),
        Err(Error::InvalidField {
            what: "quantization parameter buffer index",
            ..
        })
    ));
    assert!(matches!(
        write(&dense(ElementType::Int8, vec![4, 3], &[12, 16], asym)),
        Err(Error::BufferSize {
            buffer: 1,
            expected: 16,
            actual: 12,
            ..
        })
    ));
    let sym = PerChannelAffine {
        axis: 1,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
    }
    .encode();
    write(&dense(ElementType::Int4, vec![4, 3], &[12], sym.clone())).unwrap();
    assert!(matches!(
        write(&dense(ElementType::Int4, vec![4, 3], &[12, 12], sym)),
        Err(Error::BufferCount {
            expected: 2,
            actual: 3,
            ..
        })
    ));
    let bad_axis = PerChannelAffine {
        axis: 2,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
    }
    .encode();
    assert!(matches!(
        write(&dense(ElementType::Int8, vec![4, 3], &[12], bad_axis)),
        Err(Error::InvalidField { what: "axis", .. })
    ));
}

#[test]
fn per_block_pads_the_data_buffer() {
    let pba = PerBlockAffine {
        axis: 1,
        block_size: 4,
        scale_buffer_index: 1,
        zero_point_buffer_index: None,
        scale_type: ScaleType::Float16,
    };
    let p = pba.encode();
    // int4 [4, 6], blocks of 4 along axis 1: 2 blocks per row (the second
    // partial), storage for 4 x 8 elements = 16 bytes, 8 float16 scales.
    let mut d = dense(ElementType::Int4, vec![4, 6], &[16], p.clone());
    assert_eq!(d.buffers[0].byte_size, 12);
    assert!(matches!(
        write(&d),
        Err(Error::BufferTooSmall {
            minimum: 16,
            actual: 12,
            ..
        })
    ));
    d.buffers[0].byte_size = 16;
    write(&d).unwrap();
    let big_block = PerBlockAffine { block_size: 8, ..pba }.encode();
    assert!(matches!(
        write(&dense(ElementType::Int4, vec![4, 6], &[8], big_block)),
        Err(Error::InvalidField {
            what: "block_size",
            value: 8,
            ..
        })
    ));
}

#[test]
fn nf4_and_mxfp() {
    let nf4 = Nf4 {
        axis: 1,
        block_size: 64,
        scale_buffer_index: 1,
    }
    .encode();
    write(&dense(ElementType::UInt4, vec![2, 128], &[16], nf4.clone())).unwrap();
    assert!(matches!(
        write(&dense(ElementType::Int4, vec![2, 128], &[16], nf4)),
        Err(Error::InvalidField { .. })
    ));
    let mx = Mxfp {
        axis: 1,
        block_size: 32,
        scale_buffer_index: 1,
    }
    .encode();
    write(&dense(ElementType::Float4E2M1, vec![2, 64], &[4], mx.clone())).unwrap();
    assert!(matches!(
        write(&dense(ElementType::Float4E2M1, vec![2, 48], &[4], mx)),
        Err(Error::InvalidField {
            what: "shape[axis]",
            value: 48,
            ..
        })
    ));
}

#[test]
fn block_paged_per_page_slot_scales() {
    let layout = Layout::BlockPaged(BlockPaged {
        page_size: 4,
        num_pages: 5,
        paged_axis: 0,
        num_seqs: 2,
        kv_role: 1,
        layer_index: 0,
        block_table_index_type: 1,
    });
    let base = TensorDescriptor::new(ElementType::Int8, layout, vec![9, 2, 8]).with_buffers(vec![
        BufferHandle::new(5 * 4 * 2 * 8),
        BufferHandle::new(3 * 8),
        BufferHandle::new(3 * 8),
    ]);
    write(&base).unwrap();
    let q = |block_size| {
        PerBlockAffine {
            axis: 0,
            block_size,
            scale_buffer_index: 3,
            zero_point_buffer_index: None,
            scale_type: ScaleType::Float32,
        }
        .encode()
    };
    // 20 page slots, one float32 scale each.
    write(&base.clone().with_buffer(BufferHandle::new(80)).with_quantization(q(4))).unwrap();
    assert!(matches!(
        write(&base.clone().with_buffer(BufferHandle::new(80)).with_quantization(q(2))),
        Err(Error::InvalidField { what: "block_size", .. })
    ));
    let mut bad = base.clone();
    bad.buffers[2].byte_size = 16;
    assert!(matches!(
        write(&bad),
        Err(Error::BufferSize {
            buffer: 2,
            what: "seq_ptr",
            ..
        })
    ));
}
