//! Writing a file (checked or unchecked) and a strict reader's first error.

use hurray_reader::{AlignedBytes, Error, HurrayFile, Options};
use hurray_writer::{BufferData, FileWriter, RawTensor, TensorDescriptor, WriterOptions};
use proptest::test_runner::TestCaseError;

use super::super::basics::fail;

/// Tensors written with the checked writer, as aligned bytes.
pub(crate) fn write_checked(
    tensors: Vec<(&str, &TensorDescriptor, Vec<BufferData<'_>>)>,
) -> Result<AlignedBytes, TestCaseError> {
    let refused = |e: hurray_writer::Error| fail(format!("the checked writer refuses: {e}"));
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).map_err(refused)?;
    for (name, d, data) in tensors {
        w.write_tensor(name, d, data).map_err(refused)?;
    }
    Ok(AlignedBytes::from_slice(&w.finish().map_err(refused)?))
}

/// One tensor `t` written through the unchecked path (descriptor encoded as
/// given, buffers written as given), as aligned bytes.
pub(crate) fn write_unchecked(d: &TensorDescriptor, buffers: &[Vec<u8>]) -> AlignedBytes {
    let data = buffers.iter().map(|b| BufferData::Bytes(b)).collect();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_tensor_unchecked(RawTensor::from_descriptor("t", d, data).unwrap())
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// The first error of a strict reader on `bytes`: open, resolve `t`, then
/// validate the whole file; `None` if it accepts everything.
pub(crate) fn strict_error(bytes: &AlignedBytes) -> Option<Error> {
    let file = match HurrayFile::parse(bytes, Options::strict()) {
        Ok(file) => file,
        Err(e) => return Some(e),
    };
    if let Err(e) = file.tensor("t") {
        return Some(e);
    }
    file.validate().err()
}
