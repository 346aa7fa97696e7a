//! Offsets beyond 4 GiB (BUG-16 of the bug-class cases): a sparse file whose
//! first tensor is a 4 GiB hole, so the second tensor, the index and the
//! trailer all lie past 2^32. A reader that truncates an offset to 32 bits
//! lands inside the hole. The test builds the file itself (it is not in the
//! cases folder) and, when `HURRAY_CASES_DIR` is set, checks it against the
//! manifest's `not_in_folder` entry.

mod support {
    pub mod corpus;
}

use hurray_reader::{MappedFile, Options};
use hurray_writer::{BufferData, Csc, ElementType, FileWriter, TensorDescriptor, WriterOptions};

const GIB4: u64 = 1 << 32;

#[test]
fn tensors_beyond_four_gib_open_and_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bug16a_offsets_beyond_4gib.hry");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = FileWriter::new(file, WriterOptions::default().tensor_count_hint(2)).unwrap();
    let pad = TensorDescriptor::row_major(ElementType::UInt8, vec![GIB4]).unwrap();
    // A run of zeros: a hole on disk, not 4 GiB of writes.
    w.write_tensor("pad", &pad, [BufferData::Zeros(GIB4)]).unwrap();
    let (values, rows, ptr) = ([1.0f32, 4.0, 3.0, 2.0, 5.0], [0u64, 2, 1, 0, 2], [0u64, 1, 2, 3, 4, 5]);
    w.write_csc("far", &Csc::new(4, 5, &values, &rows, &ptr).unwrap())
        .unwrap();
    w.finish().unwrap();

    let mapped = MappedFile::open(&path, Options::default()).unwrap();
    assert_eq!(mapped.bytes().len() as u64, 4_294_987_898);
    let file = mapped.file().unwrap();
    let far = file.entry("far").unwrap();
    assert_eq!(far.descriptor_offset(), 0x1_0000_1000);
    assert_eq!(far.data_offset(), 0x1_0000_2000);
    assert_eq!(file.trailer().index_offset.get(), 0x1_0000_5000);

    let t = file.tensor("far").unwrap();
    let offsets: Vec<u64> = t.buffers().iter().map(|b| b.file_offset()).collect();
    assert_eq!(offsets, [0x1_0000_2000, 0x1_0000_3000, 0x1_0000_4000]);
    let a = t.csc::<f32>().unwrap();
    let dense = [
        [1.0, 0.0, 0.0, 2.0, 0.0],
        [0.0, 0.0, 3.0, 0.0, 0.0],
        [0.0, 4.0, 0.0, 0.0, 5.0],
        [0.0; 5],
    ];
    for (r, row) in dense.iter().enumerate() {
        for (c, &want) in row.iter().enumerate() {
            assert_eq!(
                a.get(r as u64, c as u64).unwrap().copied().unwrap_or(0.0),
                want,
                "({r}, {c})"
            );
        }
    }
    // The hole reads as a valid, all-zero uint8 tensor (the resolve does not
    // touch its pages; one element is read to check).
    let pad = file.tensor("pad").unwrap();
    assert_eq!(pad.buffer(0).unwrap().byte_size(), GIB4);
    assert_eq!(pad.dense_value(&[GIB4 - 1]).unwrap(), hurray_reader::Value::UInt(0));

    if let Some((_, manifest)) = support::corpus::corpus("HURRAY_CASES_DIR") {
        let want = &manifest["not_in_folder"][0];
        assert_eq!(want["size_bytes"].as_u64(), Some(mapped.bytes().len() as u64));
        let mut problems = support::corpus::compare_container(&file, want);
        for t in want["tensors"].as_array().unwrap() {
            problems.extend(support::corpus::compare_tensor(&file, t));
        }
        assert!(problems.is_empty(), "{problems:#?}");
    }
}
