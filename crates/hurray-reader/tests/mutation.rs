//! Exhaustive mutation: for every committed valid fixture, every truncation
//! and every single-byte change to 0x00, 0xFF, +1 and -1 at every offset is
//! parsed, every tensor looked up, viewed and validated. Nothing may panic;
//! every outcome is `Ok` or an `Err`. (A panic fails the test with the
//! fixture, offset and value in the message.)

use std::path::Path;

use hurray_reader::{logical_indices, HurrayFile, Layout, Options, Tensor};
use zerocopy::IntoBytes;

/// Exercises everything a reader of `bytes` might call.
fn exercise(bytes: &[u8], options: Options) -> usize {
    let Ok(file) = HurrayFile::parse(bytes, options) else {
        return 0;
    };
    let mut touched = file.kv().len();
    for entry in file.entries() {
        let _ = file.entry(entry.name());
        if let Ok(t) = file.tensor(entry.name()) {
            touched += touch(&t);
            let _ = t.validate_data();
        }
        if let Ok(dump) = file.dump_descriptor(entry.name()) {
            touched += dump.fields.len();
        }
    }
    touched
}

/// Reads a few elements through every view the tensor's layout offers.
fn touch(t: &Tensor<'_>) -> usize {
    let mut n = 0;
    for b in t.buffers() {
        n += b.values().take(4).count();
    }
    match t.layout() {
        Layout::Csc => {
            if let Ok(a) = t.csc_unscanned::<f32>() {
                for c in 0..a.ncols().min(6) {
                    n += a.column(c).map(|col| col.count()).unwrap_or(0);
                    for r in 0..a.nrows().min(6) {
                        n += usize::from(a.get(r, c).is_ok());
                    }
                }
                n += a.iter().map(|it| it.count()).unwrap_or(0);
                // to_csr allocates 8 x (nrows + 1) bytes: a caller checks
                // nrows first on files it does not trust, and so do we.
                if a.nrows() <= 1 << 20 {
                    n += a.to_csr().map(|m| m.values.len()).unwrap_or(0);
                }
                n += usize::from(a.transpose().get(0, 0).is_ok());
            }
            if let Ok(s) = t.csc_structure() {
                n += usize::from(s.position(0, 0).is_ok());
            }
        }
        Layout::Csr => {
            if let Ok(a) = t.csr_unscanned::<f64>() {
                for r in 0..a.nrows().min(6) {
                    n += a.row(r).map(|row| row.count()).unwrap_or(0);
                }
                n += a.iter().map(|it| it.count()).unwrap_or(0);
            }
            if let Ok(s) = t.csr_structure() {
                n += usize::from(s.position(0, 0).is_ok());
            }
        }
        Layout::Coo => {
            if let Ok(s) = t.coo_structure() {
                let _ = s.validate();
                n += usize::from(s.position(&vec![0; s.rank()]).is_ok());
            }
        }
        Layout::Csf => {
            if let Ok(s) = t.csf_structure() {
                n += s.entries().map(|e| e.len()).unwrap_or(0);
            }
        }
        l if l.is_dense() => {
            let shape: Vec<u64> = t.shape().collect();
            for index in logical_indices(&shape).take(8) {
                n += usize::from(t.dense_value(&index).is_ok());
            }
        }
        _ => {}
    }
    n
}

/// Runs every mutation of one file; returns how many inputs were tried.
fn mutate_all(name: &str, original: &[u8]) -> usize {
    // An 8-aligned working copy, mutated in place and restored.
    let mut words = vec![0u64; original.len().div_ceil(8)];
    let buf = &mut words.as_mut_bytes()[..original.len()];
    buf.copy_from_slice(original);
    let mut tried = 0;
    for len in 0..=buf.len() {
        let result = std::panic::catch_unwind(|| exercise(&buf[..len], Options::default()));
        assert!(result.is_ok(), "{name}: panic on truncation to {len} bytes");
        tried += 1;
    }
    for offset in 0..buf.len() {
        let old = buf[offset];
        let mut values = [0x00, 0xFF, old.wrapping_add(1), old.wrapping_sub(1)];
        values.sort_unstable();
        for (k, &value) in values.iter().enumerate() {
            if value == old || (k > 0 && values[k - 1] == value) {
                continue;
            }
            buf[offset] = value;
            for options in [Options::strict(), Options::permissive()] {
                let result = std::panic::catch_unwind(|| exercise(buf, options));
                assert!(
                    result.is_ok(),
                    "{name}: panic with byte {offset} = 0x{value:02x} ({options:?})"
                );
                tried += 1;
            }
            buf[offset] = old;
        }
    }
    tried
}

#[test]
fn no_mutation_of_any_fixture_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hry"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "the committed fixtures are missing");
    let mut total = 0;
    for path in names {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let tried = mutate_all(&name, &bytes);
        println!("{name}: {tried} mutated inputs, none panicked");
        total += tried;
    }
    println!("{total} inputs in all");
}
