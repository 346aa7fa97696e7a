//! The README's snippets, compiled and run: "Write a file", "The
//! library in five lines" and "Owned handles, column blocks, other crates". The test reads the README's `rust` blocks and
//! checks that each is, line for line, the body of its function here
//! (between the markers, less four spaces of indent), then runs them from
//! the repository root, where the README's relative path points: the
//! first writes `first.hry` in the temporary directory, which is then read
//! back. One test in this binary: it alone changes the working directory.

use std::path::Path;

#[rustfmt::skip]
fn write_snippet() -> Result<(), hurray_writer::Error> {
    // README WRITE BEGIN
    use hurray_writer::{write_file, Duplicates, TripletCsc, WriterOptions};

    // (row, col, value) in any order; Duplicates::Sum would add repeated coordinates.
    let triplets = [(2, 1, 4.0f32), (0, 0, 1.0), (1, 2, 3.0), (0, 3, 2.0), (2, 4, 5.0)];
    let a = TripletCsc::from_triplets(4, 5, &triplets, Duplicates::Reject)?; // sorted, col_ptr built
    let path = std::env::temp_dir().join("first.hry");
    write_file(&path, WriterOptions::default(), |w| w.write_csc("A", &a.csc()?))?; // temp file, then rename
    // README WRITE END
    Ok(())
}

#[rustfmt::skip]
fn snippet() -> Result<(), hurray_reader::Error> {
    // README BEGIN
    use hurray_reader::{MappedFile, Options};

    let mapped = MappedFile::open("fixtures/csc_worked_example.hry", Options::default())?;
    let file = mapped.file()?;                        // header, trailer, index, KV: nothing else
    let a = file.tensor("A")?.csc::<f32>()?;          // strict: storage invariants checked once
    assert_eq!(a.get(2, 1)?, Some(&4.0));             // binary search; Ok(None) = implicit zero
    for (row, value) in a.column(3)? { println!("A[{row}, 3] = {value}"); }
    // README END
    Ok(())
}

#[rustfmt::skip]
fn blocks_snippet() -> Result<(), hurray_reader::Error> {
    // README BLOCKS BEGIN
    use hurray_reader::{Options, SharedFile};

    let file = SharedFile::open("fixtures/csc_worked_example.hry", Options::default())?; // owned, Arc inside
    let a = file.tensor("A")?.csc::<f32>()?;  // SharedCsc<f32>: scanned once; Send + Sync, keep it anywhere
    let b = a.view()?.column_block(1..3)?;    // columns 1 and 2: a CscView over the same bytes
    let m = b.as_sprs()?;                     // feature "sprs": a sprs::CsMatViewI<f32, u64>, no copy
    assert_eq!((m.rows(), m.cols(), m.nnz()), (4, 2, 2));
    // README BLOCKS END
    Ok(())
}

/// The lines of `text` strictly between the line equal to `begin` and the
/// line equal to `end` (compared trimmed), from the `nth` such `begin`.
fn between<'t>(text: &'t str, begin: &str, end: &str, nth: usize) -> Vec<&'t str> {
    let mut lines = text.lines();
    for _ in 0..=nth {
        lines
            .by_ref()
            .find(|l| l.trim() == begin)
            .unwrap_or_else(|| panic!("no line {begin:?} #{nth}"));
    }
    lines.take_while(|l| l.trim() != end).collect()
}

/// The body of the function between `// {begin}` and `// {end}` here.
fn here(begin: &str, end: &str) -> Vec<&'static str> {
    between(include_str!("readme.rs"), begin, end, 0)
        .into_iter()
        .map(|l| l.strip_prefix("    ").unwrap_or(l))
        .collect()
}

#[test]
fn readme_snippets_are_this_code_and_run() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let write = between(&readme, "```rust", "```", 0);
    let read = between(&readme, "```rust", "```", 1);
    assert_eq!(
        write,
        here("// README WRITE BEGIN", "// README WRITE END"),
        "README.md's first rust block and tests/readme.rs's write_snippet differ"
    );
    assert_eq!(
        read,
        here("// README BEGIN", "// README END"),
        "README.md's second rust block and tests/readme.rs's snippet differ"
    );
    let blocks = between(&readme, "```rust", "```", 2);
    assert_eq!(
        blocks,
        here("// README BLOCKS BEGIN", "// README BLOCKS END"),
        "README.md's third rust block and tests/readme.rs's blocks_snippet differ"
    );
    assert_eq!((write.len(), read.len(), blocks.len()), (7, 7, 7));
    std::env::set_current_dir(&root).unwrap();

    write_snippet().unwrap();
    let path = std::env::temp_dir().join("first.hry");
    let mapped = hurray_reader::MappedFile::open(&path, hurray_reader::Options::default()).unwrap();
    let file = mapped.file().unwrap();
    file.validate().unwrap();
    let a = file.tensor("A").unwrap().csc::<f32>().unwrap();
    assert_eq!((a.nrows(), a.ncols(), a.nnz()), (4, 5, 5));
    assert_eq!(a.structure().col_ptr(), [0, 1, 2, 3, 4, 5]);
    assert_eq!(a.structure().row_indices(), [0, 2, 1, 0, 2]);
    assert_eq!(a.values(), [1.0, 4.0, 3.0, 2.0, 5.0]);
    // The same bytes as the fixture, the worked example written by hand.
    assert_eq!(
        mapped.bytes(),
        std::fs::read(root.join("fixtures/csc_worked_example.hry")).unwrap()
    );
    // README: `transpose()` is Aᵀ over the same arrays, `to_csr()` A as an owned CSR.
    assert_eq!(a.transpose().get(3, 0).unwrap(), Some(&2.0));
    assert_eq!(a.get(0, 3).unwrap(), Some(&2.0));
    let owned = a.to_csr().unwrap();
    assert_eq!((owned.nrows(), owned.ncols()), (4, 5));
    assert_eq!(owned.view().get(0, 3).unwrap(), Some(&2.0));
    drop(mapped);
    std::fs::remove_file(&path).unwrap();

    snippet().unwrap();
    blocks_snippet().unwrap();
}
