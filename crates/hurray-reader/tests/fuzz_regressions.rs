//! Inputs the fuzzers (`fuzz/`, see `docs/fuzzing.md`) found to panic, each
//! rebuilt here as the smallest file that shows the bug, with the error the
//! fixed reader returns.

use hurray_reader::{AlignedBytes, Error, HurrayFile, Location, Options};
use hurray_writer::{
    BufferData, BufferHandle, ElementType, FileWriter, Layout, RawTensor, TensorDescriptor, WriterOptions,
};

/// A one-tensor file written through the writer's unchecked path.
fn file_with(descriptor: &TensorDescriptor, data: &[u8]) -> AlignedBytes {
    let mut writer = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let tensor = RawTensor::from_descriptor("t", descriptor, vec![BufferData::Bytes(data)]).unwrap();
    writer.write_tensor_unchecked(tensor).unwrap();
    AlignedBytes::from_slice(&writer.finish().unwrap())
}

/// Strided buffer size: `(highest offset + 1) × element width` overflowed
/// i128 (an arithmetic panic) for a stride of `i64::MAX` over `u64::MAX - 1`
/// elements, whose element count alone fits `u64`.
#[test]
fn strided_size_overflow_is_an_error() {
    let strides = vec![i64::MAX];
    let d = TensorDescriptor::new(ElementType::Float64, Layout::Strided { strides }, vec![u64::MAX - 1])
        .with_buffer(BufferHandle::new(8));
    let bytes = file_with(&d, &[0; 8]);
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();
    let err = file.tensor("t").unwrap_err();
    assert!(
        matches!(&err, Error::Overflow {
            at: Location { field, rule, .. },
            what: "strided buffer size",
            ..
        }
            if field.name == "strides" && rule.starts_with("layouts/strided.md")),
        "{err:?}"
    );
}
