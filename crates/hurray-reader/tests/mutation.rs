//! Exhaustive mutation: for every committed valid fixture, every truncation
//! and every single-byte change to 0x00, 0xFF, +1 and -1 at every offset is
//! parsed, every tensor looked up, viewed and validated. Nothing may panic;
//! every outcome is `Ok` or an `Err`. (A panic fails the test with the
//! fixture, offset and value in the message.)

use std::path::Path;

use hurray_reader::Options;
use zerocopy::IntoBytes;

mod support {
    pub mod exercise;
}

use support::exercise::exercise;

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
