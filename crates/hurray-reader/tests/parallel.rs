//! Threads never change an answer: `Options::with_threads(n)` and the
//! structures' `validate_parallel(n)` give the same verdict and the same
//! first error as one thread — on every file of the three corpora
//! (`HURRAY_INTEROP_DIR`, `HURRAY_CASES_DIR`, `fixtures/invalid/`), and on
//! matrices large enough for the options to really start threads, damaged
//! at the places where the ranges are cut (inside one huge column too).

mod support {
    pub mod corpus;
}

use std::path::{Path, PathBuf};

use hurray_reader::{AlignedBytes, ElementType, Error, Field, HurrayFile, Layout, Location, Options, Tensor};
use hurray_writer::{Coo, Csc, Csr, FileWriter, WriterOptions};

const THREADS: [usize; 4] = [2, 3, 4, 8];

/// Everything a strict reader checks, in the order `tests/invalid.rs` runs
/// it: open, resolve each tensor, the strict view of each sparse tensor,
/// `validate_data` of each, then `HurrayFile::validate`. The first error.
fn outcome(bytes: &[u8], options: Options) -> Result<(), Error> {
    let file = HurrayFile::parse(bytes, options)?;
    let mut tensors = Vec::new();
    for position in 0..file.len() {
        tensors.push(file.tensor_at(position)?);
    }
    for t in &tensors {
        strict_view(t)?;
    }
    for t in &tensors {
        t.validate_data()?;
    }
    file.validate()
}

/// The strict view of a sparse tensor (its invariant scan, on the options'
/// threads), values ignored.
fn strict_view(t: &Tensor<'_>) -> Result<(), Error> {
    if t.not_viewable().is_some() {
        return Ok(());
    }
    match (t.layout(), t.element_type()) {
        (Layout::Csc, Some(ElementType::Float32)) => t.csc::<f32>().map(drop),
        (Layout::Csc, Some(ElementType::Float64)) => t.csc::<f64>().map(drop),
        (Layout::Csr, Some(ElementType::Float32)) => t.csr::<f32>().map(drop),
        (Layout::Csr, Some(ElementType::Float64)) => t.csr::<f64>().map(drop),
        (Layout::Coo, Some(ElementType::Float32)) => t.coo::<f32>().map(drop),
        (Layout::Coo, Some(ElementType::Float64)) => t.coo::<f64>().map(drop),
        _ => Ok(()),
    }
}

/// One thread against several, on one tensor's structure: the scans called
/// directly, so the threads start even on tiny arrays.
fn structure_verdicts(t: &Tensor<'_>) -> Vec<String> {
    let mut problems = Vec::new();
    let mut compare = |what: &str, one: Result<(), Error>, many: &dyn Fn(usize) -> Result<(), Error>| {
        for n in THREADS {
            let got = many(n);
            if got != one {
                problems.push(format!("{what}: one thread {one:?}, {n} threads {got:?}"));
            }
        }
    };
    match t.layout() {
        Layout::Csc => {
            if let Ok(s) = t.csc_structure() {
                compare("csc", s.validate(), &|n| s.validate_parallel(n));
            }
        }
        Layout::Csr => {
            if let Ok(s) = t.csr_structure() {
                compare("csr", s.validate(), &|n| s.validate_parallel(n));
            }
        }
        Layout::Coo => {
            if let Ok(s) = t.coo_structure() {
                compare("coo", s.validate(), &|n| s.validate_parallel(n));
            }
        }
        _ => {}
    }
    problems
}

/// The `.hry` files of a folder, sorted.
fn hry_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hry"))
        .collect();
    files.sort();
    files
}

/// Per corpus: (files, files rejected, structures compared).
fn check_corpus(dir: &Path) -> (usize, usize, usize) {
    let mut problems = Vec::new();
    let (mut files, mut rejected, mut structures) = (0, 0, 0);
    for path in hry_files(dir) {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = support::corpus::bytes_of(&path);
        files += 1;
        let one = outcome(&bytes, Options::strict());
        rejected += usize::from(one.is_err());
        for n in THREADS {
            let many = outcome(&bytes, Options::strict().with_threads(n));
            if many != one {
                problems.push(format!("{name}: one thread {one:?}, {n} threads {many:?}"));
            }
        }
        // The scans on their own, threads forced, in both modes (the
        // permissive one resolves tensors a strict open would refuse).
        for options in [Options::strict(), Options::permissive()] {
            let Ok(file) = HurrayFile::parse(&bytes, options) else {
                continue;
            };
            for position in 0..file.len() {
                let Ok(t) = file.tensor_at(position) else { continue };
                if matches!(t.layout(), Layout::Csc | Layout::Csr | Layout::Coo) {
                    structures += 1;
                }
                problems.extend(
                    structure_verdicts(&t)
                        .into_iter()
                        .map(|p| format!("{name}: {}: {p}", t.name())),
                );
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    (files, rejected, structures)
}

#[test]
fn invalid_corpus_same_verdicts_with_threads() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/invalid");
    let (files, rejected, structures) = check_corpus(&dir);
    assert!(files >= 100, "{files} files");
    assert_eq!(rejected, files, "every file of fixtures/invalid breaks a rule");
    assert!(structures >= 20, "{structures} sparse structures");
}

#[test]
fn interop_corpus_same_verdicts_with_threads() {
    let Some((dir, _)) = support::corpus::corpus("HURRAY_INTEROP_DIR") else {
        return;
    };
    let (files, rejected, structures) = check_corpus(&dir);
    assert!(
        files > 10 && rejected > 5 && structures > 10,
        "{files} {rejected} {structures}"
    );
}

#[test]
fn cases_corpus_same_verdicts_with_threads() {
    let Some((dir, _)) = support::corpus::corpus("HURRAY_CASES_DIR") else {
        return;
    };
    let (files, rejected, structures) = check_corpus(&dir);
    assert!(
        files > 10 && rejected > 5 && structures > 0,
        "{files} {rejected} {structures}"
    );
}

// ---------------------------------------------------------------------------
// Matrices big enough for `Options::with_threads` to start threads (at least
// 256 Ki entries per thread), damaged where the ranges are cut.
// ---------------------------------------------------------------------------

/// `n` rows per column: `ncols` columns of `per_col` rows each, rows
/// `0, 3, 6, ...` (valid), values `1.0`.
fn csc_file(ncols: u64, per_col: u64) -> (Vec<u8>, u64) {
    let nnz = ncols * per_col;
    let rows: Vec<u64> = (0..nnz).map(|k| (k % per_col) * 3).collect();
    let ptr: Vec<u64> = (0..=ncols).map(|j| j * per_col).collect();
    let values = vec![1f32; nnz as usize];
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_csc("A", &Csc::new(per_col * 3, ncols, &values, &rows, &ptr).unwrap())
        .unwrap();
    w.write_csr("B", &Csr::new(ncols, per_col * 3, &values, &rows, &ptr).unwrap())
        .unwrap();
    (w.finish().unwrap(), nnz)
}

/// File offsets of tensor `name`'s buffer `i`.
fn buffer_offset(bytes: &[u8], name: &str, i: usize) -> usize {
    let file = HurrayFile::parse(bytes, Options::default()).unwrap();
    file.tensor(name).unwrap().buffer(i).unwrap().file_offset() as usize
}

fn put_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Every check, one thread and `threads`: the strict views and
/// `validate_data` of both tensors.
fn verdicts(bytes: &[u8], threads: usize) -> [Result<(), Error>; 4] {
    let options = Options::strict().with_threads(threads);
    let file = HurrayFile::parse(bytes, options).unwrap();
    let (a, b) = (file.tensor("A").unwrap(), file.tensor("B").unwrap());
    [
        a.csc::<f32>().map(drop),
        b.csr::<f32>().map(drop),
        a.validate_data(),
        b.validate_data(),
    ]
}

/// Damage at `position` of the index arrays (both tensors), and the error
/// the one-thread scan names; the same with 2, 3, 4 and 8 threads.
fn same_errors(bytes: &[u8], position: usize, value: u64) -> Error {
    let mut damaged = bytes.to_vec();
    for name in ["A", "B"] {
        let at = buffer_offset(bytes, name, 1) + 8 * position;
        put_u64(&mut damaged, at, value);
    }
    let damaged = AlignedBytes::from_slice(&damaged);
    let one = verdicts(&damaged, 1);
    for n in THREADS {
        assert_eq!(
            verdicts(&damaged, n),
            one,
            "damage at {position} = {value}, {n} threads"
        );
    }
    one[0].clone().unwrap_err()
}

#[test]
fn one_huge_column_damaged_at_every_cut() {
    // One column of 1.5 Mi rows: 4 threads cut it at 3 places.
    let nnz = 3 << 19;
    let (bytes, _) = csc_file(1, nnz);
    let bytes = AlignedBytes::from_slice(&bytes);
    for n in [1, 2, 4, 8] {
        assert_eq!(verdicts(&bytes, n), [Ok(()), Ok(()), Ok(()), Ok(())]);
    }
    let nnz = nnz as usize;
    for cut in [nnz / 4, nnz / 3, nnz / 2, 2 * nnz / 3, 3 * nnz / 4] {
        for position in [cut - 1, cut, cut + 1] {
            // A repeated row: the previous one.
            let e = same_errors(&bytes, position, 3 * (position as u64 - 1));
            assert!(
                matches!(e, Error::NotIncreasing {
                    at: Location { field: Field { index: Some(p), .. }, .. },
                    slice_index: 0,
                    ..
                } if p == position as u64),
                "{e:?}"
            );
        }
    }
    // Out of bounds at the very end, a descent at the very start.
    let e = same_errors(&bytes, nnz - 1, 3 * nnz as u64);
    assert!(matches!(e, Error::IndexOutOfBounds {
        at: Location { field: Field { index: Some(p), .. }, .. },
        ..
    } if p == nnz as u64 - 1));
    let e = same_errors(&bytes, 0, 7);
    assert!(matches!(
        e,
        Error::NotIncreasing {
            at: Location {
                field: Field { index: Some(1), .. },
                ..
            },
            value: 3,
            previous: 7,
            ..
        }
    ));
}

#[test]
fn short_columns_damaged_at_every_cut() {
    // 600 Ki columns of 2 rows (rows 0 and 3).
    let ncols = 600 << 10;
    let (bytes, nnz) = csc_file(ncols, 2);
    let bytes = AlignedBytes::from_slice(&bytes);
    for n in [1, 2, 4, 8] {
        assert_eq!(verdicts(&bytes, n), [Ok(()), Ok(()), Ok(()), Ok(())]);
    }
    let nnz = nnz as usize;
    for cut in [nnz / 4, nnz / 3, nnz / 2, 3 * nnz / 4] {
        for position in cut - 2..cut + 2 {
            // The second row of a column equal to the first: not increasing;
            // the first row of a column at 4 (above the second, 3): not
            // increasing at the next position.
            let (value, at) = if position % 2 == 1 {
                (0, position)
            } else {
                (4, position + 1)
            };
            let e = same_errors(&bytes, position, value);
            let column = (position / 2) as u64;
            assert!(
                matches!(e, Error::NotIncreasing {
                    at: Location { field: Field { index: Some(p), .. }, .. },
                    slice_index: j,
                    ..
                } if j == column && p == at as u64),
                "damage at {position}: {e:?}"
            );
        }
    }
    // A row out of bounds (nrows = 6).
    let e = same_errors(&bytes, nnz / 2 + 1, 6);
    assert!(matches!(e, Error::IndexOutOfBounds { value: 6, bound: 6, .. }));
}

#[test]
fn damaged_pointers_same_error_with_threads() {
    let ncols = 600 << 10;
    let (bytes, nnz) = csc_file(ncols, 2);
    for j in [1, ncols as usize / 4, ncols as usize / 2 + 1, ncols as usize - 1] {
        let mut damaged = bytes.clone();
        for name in ["A", "B"] {
            // ptr[j] = ptr[j] + 3: column j - 1 ends after column j does.
            let at = buffer_offset(&bytes, name, 2) + 8 * j;
            put_u64(&mut damaged, at, 2 * j as u64 + 3);
        }
        let damaged = AlignedBytes::from_slice(&damaged);
        let one = verdicts(&damaged, 1);
        for n in THREADS {
            assert_eq!(verdicts(&damaged, n), one, "ptr[{j}] damaged, {n} threads");
        }
        // ptr[j] above nnz (the last column's start) is named itself.
        let named = if 2 * j as u64 + 3 > nnz {
            matches!(&one[0], Err(Error::PtrTooLarge {
                at: Location { field: Field { index: Some(position), .. }, .. },
                ..
            }) if *position == j as u64)
        } else {
            matches!(&one[0], Err(Error::PtrDecreasing {
                at: Location { field: Field { index: Some(position), .. }, .. },
                ..
            }) if *position == j as u64 + 1)
        };
        assert!(named, "ptr[{j}]: {:?}", one[0]);
    }
    assert_eq!(nnz, 2 * ncols);
}

#[test]
fn progress_with_threads_rises_to_the_total() {
    let (bytes, nnz) = csc_file(1, 3 << 19);
    let bytes = AlignedBytes::from_slice(&bytes);
    for threads in [1, 4] {
        let file = HurrayFile::parse(&bytes, Options::default().with_threads(threads)).unwrap();
        let t = file.tensor("A").unwrap();
        let mut calls: Vec<(u64, u64)> = Vec::new();
        t.validate_data_with_progress(&mut |done, total| calls.push((done, total)))
            .unwrap();
        let total = (nnz + 2) * 8;
        assert!(calls.len() >= 2, "{calls:?}");
        assert!(calls.iter().all(|&(_, t)| t == total));
        assert!(calls.windows(2).all(|w| w[0].0 <= w[1].0), "{calls:?}");
        assert_eq!(calls.last(), Some(&(total, total)));
    }
}

#[test]
fn sorted_coo_same_errors_with_threads() {
    // 700 Ki entries (i, 2i mod 5) of a 1 Mi × 5 matrix: sorted.
    let n: u64 = 700 << 10;
    let indices: Vec<u64> = (0..n).flat_map(|i| [i, (2 * i) % 5]).collect();
    let values = vec![1f32; n as usize];
    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).unwrap();
    w.write_coo("C", &Coo::new(&[1 << 20, 5], &values, &indices, true).unwrap())
        .unwrap();
    let bytes = w.finish().unwrap();
    let offset = buffer_offset(&bytes, "C", 1);
    let check = |bytes: &[u8]| {
        let run = |threads: usize| {
            let file = HurrayFile::parse(bytes, Options::strict().with_threads(threads)).unwrap();
            let t = file.tensor("C").unwrap();
            [t.coo::<f32>().map(drop), t.validate_data()]
        };
        let one = run(1);
        for threads in THREADS {
            assert_eq!(run(threads), one, "{threads} threads");
        }
        one[0].clone()
    };
    assert_eq!(check(&AlignedBytes::from_slice(&bytes)), Ok(()));
    for entry in [1, n / 4, n / 2, n / 2 + 1, n - 1] {
        // Entry `entry` repeats its predecessor's row and column.
        let mut damaged = bytes.clone();
        let e = entry as usize;
        put_u64(&mut damaged, offset + 16 * e, entry - 1);
        put_u64(&mut damaged, offset + 16 * e + 8, (2 * (entry - 1)) % 5);
        let err = check(&AlignedBytes::from_slice(&damaged)).unwrap_err();
        assert!(
            matches!(err, Error::CooOrder { position, .. } if position == entry),
            "{err:?}"
        );
    }
    // A column out of bounds.
    let mut damaged = bytes.clone();
    put_u64(&mut damaged, offset + 16 * (n as usize / 3) + 8, 5);
    let err = check(&AlignedBytes::from_slice(&damaged)).unwrap_err();
    assert!(
        matches!(err, Error::IndexOutOfBounds {
            at: Location { field: Field { index: Some(position), .. }, .. },
            value: 5,
            bound: 5,
            ..
        } if position == 2 * (n / 3) + 1),
        "{err:?}"
    );
}
