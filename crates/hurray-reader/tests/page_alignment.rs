//! `buffer-protocol.md` § Alignment › Page Alignment for GPU and IPC:
//! "Writers targeting GPU or IPC transport MUST set `alignment` to at least
//! `4096`." A reader cannot know what the writer targeted, so a non-empty
//! buffer on a device other than the CPU that declares less is reported
//! (`Tensor::page_alignment_shortfall`), never rejected, in both modes
//! (NOTES.md 'GPU / IPC / RDMA page alignment').

use hurray_reader::{AlignedBytes, HurrayFile, Options, PageAlignmentShortfall, PAGE_ALIGNMENT};
use hurray_writer::{BufferData, ElementType, FileWriter, RawTensor, TensorDescriptor, WriterOptions};

/// The `layouts/csc.md` worked example (`A`, float32 `[4, 5]`, nnz 5),
/// each buffer handle given `(device_tag, alignment)`. The handles start at
/// 125 (descriptor at 64, + 20 + 16 shape + 8 byte_offset + 16 CSC fields
/// + 1), 16 bytes each; `alignment` is a handle's byte 8.
fn csc_on(handles: [(u8, u32); 3]) -> AlignedBytes {
    let mut d = TensorDescriptor::csc(ElementType::Float32, 4, 5, 5).unwrap().to_raw();
    for (h, (device_tag, alignment)) in d.buffers.iter_mut().zip(handles) {
        h.device_tag = device_tag;
        h.alignment = alignment;
    }
    let values: Vec<u8> = [1.0f32, 4.0, 3.0, 2.0, 5.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let rows: Vec<u8> = [0u64, 2, 1, 0, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
    let ptr: Vec<u8> = [0u64, 1, 2, 3, 4, 5].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let buffers = vec![
        BufferData::Bytes(&values),
        BufferData::Bytes(&rows),
        BufferData::Bytes(&ptr),
    ];
    w.write_tensor_unchecked(RawTensor::new("A", d.encode().unwrap(), buffers))
        .unwrap();
    AlignedBytes::from_slice(&w.finish().unwrap())
}

/// What both modes report for the file (the same), after checking that
/// each accepts it whole.
fn reported(bytes: &AlignedBytes) -> Option<PageAlignmentShortfall> {
    let mut found = Vec::new();
    for options in [Options::strict(), Options::permissive()] {
        let file = HurrayFile::parse(bytes, options).unwrap();
        file.validate().unwrap();
        found.push(file.tensor("A").unwrap().page_alignment_shortfall());
    }
    assert_eq!(found[0], found[1], "both modes report the same");
    found[0]
}

#[test]
fn a_gpu_buffer_below_4096_is_reported_not_rejected() {
    assert_eq!(PAGE_ALIGNMENT, 4096);
    let s = reported(&csc_on([(0x01, 64); 3])).expect("reported");
    assert_eq!((s.buffer, s.alignment, s.device_tag, s.offset), (0, 64, 0x01, 133));
    assert_eq!(
        s.to_string(),
        "buffer[0].alignment at offset 133: 64 on device_tag 0x01 (CUDA), below the 4096 a writer targeting \
         GPU or IPC transport must declare (buffer-protocol.md § Alignment › Page Alignment for GPU and IPC)"
    );
    // The first buffer below 4096 is named: here row_indices, buffer 1.
    let s = reported(&csc_on([(0x08, 4096), (0x08, 2048), (0x08, 64)])).expect("reported");
    assert_eq!((s.buffer, s.alignment, s.device_tag, s.offset), (1, 2048, 0x08, 149));
    assert_eq!(
        s.to_string(),
        "buffer[1].alignment at offset 149: 2048 on device_tag 0x08 (OpenCL), below the 4096 a writer \
         targeting GPU or IPC transport must declare (buffer-protocol.md § Alignment › Page Alignment for GPU \
         and IPC)"
    );
}

#[test]
fn cpu_buffers_and_page_aligned_gpu_buffers_are_not_reported() {
    assert_eq!(reported(&csc_on([(0x00, 64); 3])), None, "CPU");
    assert_eq!(reported(&csc_on([(0x02, 4096); 3])), None, "ROCm at 4096");
    assert_eq!(reported(&csc_on([(0x05, 4096); 3])), None, "WebGPU at 4096");
}

/// An empty buffer has no bytes to align (§ Empty Buffers): a GPU buffer
/// with `byte_size = 0` declaring alignment 1 is not reported.
#[test]
fn an_empty_gpu_buffer_is_not_reported() {
    // An empty 0 × 0 CSC matrix: values and row_indices empty, col_ptr [0].
    let mut d = TensorDescriptor::csc(ElementType::Float32, 0, 0, 0).unwrap().to_raw();
    for h in &mut d.buffers {
        h.device_tag = 0x01;
        h.alignment = if h.byte_size == 0 { 1 } else { 4096 };
    }
    let ptr = 0u64.to_le_bytes();
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    let buffers = vec![BufferData::Bytes(&[]), BufferData::Bytes(&[]), BufferData::Bytes(&ptr)];
    w.write_tensor_unchecked(RawTensor::new("A", d.encode().unwrap(), buffers))
        .unwrap();
    let bytes = AlignedBytes::from_slice(&w.finish().unwrap());
    assert_eq!(reported(&bytes), None);
}
