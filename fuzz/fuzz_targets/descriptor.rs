//! One tensor descriptor in an otherwise valid container, so the fuzzer
//! spends its time in descriptor, layout and buffer-table parsing rather
//! than in the header, trailer and index CRC.
//!
//! Input: `[log2(data_buffer_alignment): u8][descriptor_length: u16 LE]
//! [descriptor][data region]` (`seed.py` writes seeds in this shape).
#![no_main]

use hurray_reader::{AlignedBytes, Options};
use hurray_writer::{BufferData, FileWriter, RawTensor, WriterOptions};
use libfuzzer_sys::fuzz_target;

#[path = "../../crates/hurray-reader/tests/support/exercise.rs"]
mod exercise;

fuzz_target!(|data: &[u8]| {
    let [log2, lo, hi, rest @ ..] = data else { return };
    let length = usize::from(u16::from_le_bytes([*lo, *hi])).min(rest.len());
    let (descriptor, region) = rest.split_at(length);
    let Some(alignment) = 1u32.checked_shl(u32::from(*log2 % 32)) else {
        return;
    };
    let Ok(mut writer) = FileWriter::new(Vec::new(), WriterOptions::new().data_buffer_alignment(alignment)) else {
        return;
    };
    let buffers = if region.is_empty() {
        vec![]
    } else {
        vec![BufferData::Bytes(region)]
    };
    if writer
        .write_tensor_unchecked(RawTensor::new("t", descriptor.to_vec(), buffers))
        .is_err()
    {
        return;
    }
    let Ok(file) = writer.finish() else { return };
    let bytes = AlignedBytes::from_slice(&file);
    for options in [Options::strict(), Options::permissive()] {
        exercise::exercise(&bytes, options);
    }
});
