//! Atomic path-based writing and hole-punching file sinks.

mod support {
    pub mod container;
}

use std::io::{Read, Seek, SeekFrom};

use hurray_writer::{
    write_file, BufferData, CompositeHead, Csc, ElementType, Error, FileWriter, PathWriter, TensorDescriptor,
    WriterOptions,
};

fn csc() -> Csc<'static> {
    static V: [f32; 5] = [1.0, 4.0, 3.0, 2.0, 5.0];
    static R: [u64; 5] = [0, 2, 1, 0, 2];
    static P: [u64; 6] = [0, 1, 2, 3, 4, 5];
    Csc::new(4, 5, &V, &R, &P).unwrap()
}

fn dir_entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn success_leaves_the_complete_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("ok.hry");
    write_file(&target, WriterOptions::default(), |w| {
        w.write_csc("a", &csc())?;
        w.write_csc("b", &csc())
    })
    .unwrap();
    let bytes = std::fs::read(&target).unwrap();
    let p = support::container::parse(&bytes);
    assert_eq!(p.entries.len(), 2);
    assert_eq!(dir_entries(dir.path()), ["ok.hry"], "no temporary file left");

    // Same bytes as an in-memory write.
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_csc("a", &csc()).unwrap();
    w.write_csc("b", &csc()).unwrap();
    assert_eq!(w.finish().unwrap(), bytes);
}

#[test]
fn error_mid_way_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("bad.hry");
    let r = write_file(&target, WriterOptions::default(), |w| {
        w.write_csc("a", &csc())?;
        w.write_csc("a", &csc()) // duplicate name
    });
    assert!(matches!(r, Err(Error::DuplicateTensorName { .. })));
    assert!(!target.exists());
    assert!(dir_entries(dir.path()).is_empty(), "temporary file removed");
}

#[test]
fn failing_finish_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("torn.hry");
    let r = write_file(&target, WriterOptions::default(), |w| {
        let head = TensorDescriptor::composite_head(ElementType::Float32, vec![4], CompositeHead::group(2));
        w.write_tensor("head", &head, [])
    });
    assert!(matches!(r, Err(Error::TornComposite { .. })));
    assert!(!target.exists());
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn panic_mid_way_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("panic.hry");
    let t = target.clone();
    let r = std::panic::catch_unwind(move || {
        let _ = write_file(&t, WriterOptions::default(), |w| {
            w.write_csc("a", &csc())?;
            panic!("boom");
        });
    });
    assert!(r.is_err());
    assert!(!target.exists());
    assert!(dir_entries(dir.path()).is_empty());
}

#[test]
fn failed_rewrite_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("keep.hry");
    std::fs::write(&target, b"old contents").unwrap();
    let r = write_file(&target, WriterOptions::default(), |w| {
        w.write_csc("a", &csc())?;
        Err(Error::Poisoned)
    });
    assert!(r.is_err());
    assert_eq!(std::fs::read(&target).unwrap(), b"old contents");
    // A successful rewrite replaces it.
    let mut w = PathWriter::create(&target, WriterOptions::new().sync_on_commit(false)).unwrap();
    assert_eq!(w.target(), target.as_path());
    w.write_csc("a", &csc()).unwrap();
    w.commit().unwrap();
    assert_eq!(&std::fs::read(&target).unwrap()[..8], b"HRRYFILE");
    assert_eq!(dir_entries(dir.path()), ["keep.hry"]);
}

/// Reads the last 40 bytes and the index of a file without loading it.
fn tail_parse(path: &std::path::Path) -> (u64, Vec<support::container::Entry>) {
    let mut f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len();
    f.seek(SeekFrom::Start(len - 40)).unwrap();
    let mut t = [0u8; 40];
    f.read_exact(&mut t).unwrap();
    let trailer = support::container::trailer(&t);
    f.seek(SeekFrom::Start(trailer.index_offset)).unwrap();
    let mut index = vec![0u8; trailer.index_length as usize];
    f.read_exact(&mut index).unwrap();
    assert_eq!(crc32c::crc32c(&index), trailer.index_crc32c);
    (len, support::container::index(&index))
}

#[cfg(target_os = "linux")]
#[test]
fn one_gib_zero_buffer_becomes_a_hole() {
    use std::os::unix::fs::MetadataExt;

    const GIB: u64 = 1 << 30;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("zeros.hry");
    let start = std::time::Instant::now();
    write_file(&target, WriterOptions::new().sync_on_commit(false), |w| {
        let d = TensorDescriptor::row_major(ElementType::UInt8, vec![GIB])?;
        w.write_tensor("zeros", &d, [BufferData::Zeros(GIB)])?;
        let small = [1.0f32, 2.0];
        let d = TensorDescriptor::row_major(ElementType::Float32, vec![2])?;
        w.write_tensor("after", &d, [BufferData::from_slice(&small)])
    })
    .unwrap();
    let elapsed = start.elapsed();

    let meta = std::fs::metadata(&target).unwrap();
    let (len, entries) = tail_parse(&target);
    assert_eq!(meta.len(), len);
    assert!(len > GIB);
    assert_eq!(entries[0].data_offset, 4096);
    assert_eq!(entries[0].data_length, GIB);
    assert_eq!(entries[1].descriptor_offset, 4096 + GIB);
    let allocated = meta.blocks() * 512;
    assert!(
        allocated < 16 << 20,
        "1 GiB zero buffer allocated {allocated} bytes; expected a hole"
    );
    assert!(elapsed.as_secs() < 30, "took {elapsed:?}");

    // The hole reads back as zeros and the data after it is intact.
    let mut f = std::fs::File::open(&target).unwrap();
    let mut buf = [0xFFu8; 4096];
    f.seek(SeekFrom::Start(GIB / 2)).unwrap();
    f.read_exact(&mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 0));
    f.seek(SeekFrom::Start(entries[1].data_offset)).unwrap();
    let mut two = [0u8; 8];
    f.read_exact(&mut two).unwrap();
    assert_eq!(&two[..4], &1.0f32.to_le_bytes());
}

#[cfg(target_os = "linux")]
#[test]
fn file_sink_overwrites_old_content_with_real_zeros() {
    // A File sink over an existing, longer file: zero runs over old bytes
    // must be written, not skipped.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reuse.hry");
    std::fs::write(&path, vec![0xEE; 3 << 20]).unwrap();
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let mut w = FileWriter::new(f, WriterOptions::default()).unwrap();
    let d = TensorDescriptor::row_major(ElementType::UInt8, vec![2 << 20]).unwrap();
    w.write_tensor("z", &d, [BufferData::Zeros(2 << 20)]).unwrap();
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let p = support::container::parse(&bytes[..]);
    let e = &p.entries[0];
    assert!(bytes[e.data_offset as usize..][..(2 << 20)].iter().all(|&b| b == 0));
}
