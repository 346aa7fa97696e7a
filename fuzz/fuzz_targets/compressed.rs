//! Differential fuzzing of CSC and CSR against a naive model.
//!
//! The input describes a nearly valid matrix — columns of sorted row
//! indices, runs, empty stretches — and then a few edits to `col_ptr` and
//! `row_indices` that may break any storage invariant. The same arrays are
//! written as a CSC tensor `A` and as the CSR tensor `At` (the same bytes,
//! `layouts/csc.md` § Relationship to CSR). Then:
//!
//! * the reader accepts the arrays exactly when the naive check of the four
//!   invariants does, and a rejection names an invariant that is broken;
//! * single-threaded and parallel validation return the same result;
//! * before validation, a column's range is given only for a column that
//!   is sound by itself (pointers and rows), whatever the rest;
//! * on a valid matrix, `get`, `column`, `iter`, `transpose` and `to_csr`
//!   agree with linear search and a naive transposition, and `mul_vec`
//!   (A·x and Aᵀ·x) and both `mul_vec_parallel`s with the naive products, bit
//!   for bit.
#![no_main]

use hurray_reader::{AlignedBytes, CscView, HurrayFile, Options};
use hurray_writer::{BufferData, ElementType, FileWriter, TensorDescriptor, WriterOptions};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

/// Many blocks of the fast scan (256 positions each), kept small for speed.
const MAX_NNZ: usize = 1 << 14;
const MAX_NCOLS: usize = 1 << 14;

#[derive(Arbitrary, Debug)]
enum Column {
    /// Row indices, sorted and deduplicated (kept below `nrows` if it is not 0).
    Explicit(Vec<u16>),
    /// `start, start + step, …`: `len` rows or until `nrows`.
    Run { start: u32, len: u16, step: u8 },
    /// This many empty columns.
    Empty(u16),
}

/// A change to `col_ptr ++ row_indices` at position `at` (modulo its length).
#[derive(Arbitrary, Debug)]
enum Edit {
    Set { at: u32, value: u64 },
    Add { at: u32, delta: i8 },
    Swap { at: u32 },
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// `shape[0]`; `to_csr` is checked up to 2^16 rows.
    nrows: u32,
    columns: Vec<Column>,
    edits: Vec<Edit>,
    threads: u8,
}

/// `col_ptr` and `row_indices` built from `input`, edits applied.
fn arrays(input: &Input) -> (Vec<u64>, Vec<u64>) {
    let nrows = u64::from(input.nrows);
    let mut col_ptr = vec![0u64];
    let mut row_indices: Vec<u64> = Vec::new();
    for column in &input.columns {
        if row_indices.len() > MAX_NNZ || col_ptr.len() > MAX_NCOLS {
            break;
        }
        match column {
            Column::Explicit(rows) => {
                let mut rows: Vec<u64> = rows
                    .iter()
                    .map(|&r| if nrows == 0 { u64::from(r) } else { u64::from(r) % nrows })
                    .collect();
                rows.sort_unstable();
                rows.dedup();
                row_indices.extend(rows);
            }
            Column::Run { start, len, step } => {
                let step = u64::from(*step).max(1);
                let rows = (0..u64::from(*len))
                    .map(|k| u64::from(*start) + k * step)
                    .take_while(|&r| r < nrows);
                row_indices.extend(rows);
            }
            Column::Empty(n) => {
                col_ptr.extend(std::iter::repeat_n(row_indices.len() as u64, usize::from(*n)));
                continue;
            }
        }
        col_ptr.push(row_indices.len() as u64);
    }
    let total = col_ptr.len() + row_indices.len();
    let slot = |at: u32| usize::try_from(at).unwrap() % total;
    for edit in &input.edits {
        let (at, f): (usize, Box<dyn Fn(u64, u64) -> (u64, u64)>) = match *edit {
            Edit::Set { at, value } => (slot(at), Box::new(move |_, next| (value, next))),
            Edit::Add { at, delta } => (
                slot(at),
                Box::new(move |x, next| (x.wrapping_add_signed(i64::from(delta)), next)),
            ),
            Edit::Swap { at } => (slot(at), Box::new(|x, next| (next, x))),
        };
        let next = (at + 1) % total;
        let (x, y) = (get(&col_ptr, &row_indices, at), get(&col_ptr, &row_indices, next));
        let (x, y) = f(x, y);
        set(&mut col_ptr, &mut row_indices, at, x);
        set(&mut col_ptr, &mut row_indices, next, y);
    }
    (col_ptr, row_indices)
}

fn get(a: &[u64], b: &[u64], i: usize) -> u64 {
    if i < a.len() {
        a[i]
    } else {
        b[i - a.len()]
    }
}

fn set(a: &mut [u64], b: &mut [u64], i: usize, v: u64) {
    if i < a.len() {
        a[i] = v
    } else {
        b[i - a.len()] = v
    }
}

/// The invariants (bit k-1 for invariant k) the arrays break, by the book.
fn violations(nrows: u64, col_ptr: &[u64], row_indices: &[u64]) -> u8 {
    let nnz = row_indices.len() as u64;
    let mut broken = 0;
    if col_ptr.first() != Some(&0) || col_ptr.last() != Some(&nnz) {
        broken |= 1;
    }
    if col_ptr.windows(2).any(|w| w[0] > w[1]) {
        broken |= 2;
    }
    if broken != 0 {
        return broken;
    }
    for w in col_ptr.windows(2) {
        let column = &row_indices[w[0] as usize..w[1] as usize];
        if column.windows(2).any(|p| p[0] >= p[1]) {
            broken |= 4;
        }
        if column.iter().any(|&r| r >= nrows) {
            broken |= 8;
        }
    }
    broken
}

/// Asserts that `result` agrees with the model: `Ok` iff nothing is broken,
/// else an error citing one of the broken invariants of `layout`.
fn check<T: std::fmt::Debug>(result: &Result<T, hurray_reader::Error>, broken: u8, layout: &str) {
    match result {
        Ok(_) => assert_eq!(broken, 0, "{layout}: accepted, but invariants {broken:04b} are broken"),
        Err(e) => {
            let message = e.to_string();
            let named = (1..=4).any(|k| {
                broken & (1 << (k - 1)) != 0
                    && message.contains(&format!("layouts/{layout}.md § Storage Invariants ({k})"))
            });
            assert!(
                named,
                "{layout}: rejected with {message:?}, but the broken invariants are {broken:04b}"
            );
        }
    }
}

/// On any matrix, before validation: a column's range is given only when
/// the column is sound by itself (its pointers: the first 0, the last
/// nnz, in order, within nnz; its rows increasing and below `nrows`), and
/// is then exactly its pointers'.
fn check_unscanned_columns(s: &hurray_reader::CscStructure<'_>, col_ptr: &[u64], row_indices: &[u64], nrows: u64) {
    const SAMPLES: usize = 64;
    let (ncols, nnz) = (col_ptr.len() - 1, row_indices.len() as u64);
    let step = (ncols / SAMPLES).max(1);
    for j in (0..ncols).step_by(step).chain(ncols.checked_sub(1)) {
        let (start, end) = (col_ptr[j], col_ptr[j + 1]);
        let pointers = (j != 0 || start == 0) && (j + 1 != ncols || end == nnz) && start <= end && end <= nnz;
        let sound = pointers && {
            let rows = &row_indices[start as usize..end as usize];
            rows.windows(2).all(|w| w[0] < w[1]) && rows.iter().all(|&r| r < nrows)
        };
        match s.column_range(j as u64) {
            Ok(range) => {
                assert!(sound, "column {j} ({start}..{end}) answered though not sound");
                assert_eq!(range, start as usize..end as usize, "column {j}");
            }
            Err(e) => assert!(!sound, "column {j} ({start}..{end}) is sound, but: {e}"),
        }
    }
}

/// On a valid matrix: lookups and conversions against the naive model
/// (every entry of up to `SAMPLES` columns, spread over the matrix).
fn check_views(a: &CscView<'_, f32>, col_ptr: &[u64], row_indices: &[u64]) {
    const SAMPLES: u64 = 256;
    let (nrows, ncols) = (a.nrows(), a.ncols());
    let range = |j: u64| col_ptr[j as usize] as usize..col_ptr[j as usize + 1] as usize;
    let step = (ncols / SAMPLES).max(1) as usize;
    for j in (0..ncols).step_by(step).chain(ncols.checked_sub(1)) {
        let expected: Vec<(u64, f32)> = range(j).map(|p| (row_indices[p], p as f32)).collect();
        let column: Vec<(u64, f32)> = a.column(j).unwrap().map(|(r, &v)| (r, v)).collect();
        assert_eq!(column, expected, "column {j}");
        for &(r, v) in expected.iter().take(SAMPLES as usize) {
            assert_eq!(a.get(r, j).unwrap(), Some(&v), "get({r}, {j})");
            assert_eq!(a.transpose().get(j, r).unwrap(), Some(&v), "transpose get({j}, {r})");
        }
        for r in [0, 1, nrows / 2, nrows.saturating_sub(1)] {
            if r < nrows {
                let linear = expected.iter().find(|&&(row, _)| row == r).map(|(_, v)| v);
                assert_eq!(a.get(r, j).unwrap(), linear, "get({r}, {j})");
            }
        }
    }
    assert!(a.get(nrows, 0).is_err() && a.get(0, ncols).is_err());
    let entries: Vec<(u64, u64, f32)> = (0..ncols)
        .flat_map(|j| range(j).map(move |p| (row_indices[p], j, p as f32)))
        .collect();
    let iterated: Vec<(u64, u64, f32)> = a.iter().unwrap().map(|(r, c, &v)| (r, c, v)).collect();
    assert_eq!(iterated, entries);
    let from_columns: Vec<(u64, u64, f32)> = a
        .columns()
        .unwrap()
        .flat_map(|(j, rows, values)| rows.iter().zip(values).map(move |(&r, &v)| (r, j, v)))
        .collect();
    assert_eq!(from_columns, entries);
    if nrows <= 1 << 16 {
        let csr = a.to_csr().unwrap();
        let mut by_row = entries.clone();
        by_row.sort_by_key(|&(r, c, _)| (r, c));
        assert_eq!(csr.col_indices(), by_row.iter().map(|e| e.1).collect::<Vec<_>>());
        assert_eq!(csr.values(), by_row.iter().map(|e| e.2).collect::<Vec<_>>());
        let mut row_ptr = vec![0u64; nrows as usize + 1];
        for &(r, _, _) in &entries {
            row_ptr[r as usize + 1] += 1;
        }
        for i in 0..nrows as usize {
            row_ptr[i + 1] += row_ptr[i];
        }
        assert_eq!(csr.row_ptr(), row_ptr);
    }
}

fuzz_target!(|input: Input| {
    let (col_ptr, row_indices) = arrays(&input);
    let (nrows, ncols, nnz) = (
        u64::from(input.nrows),
        col_ptr.len() as u64 - 1,
        row_indices.len() as u64,
    );
    let values: Vec<f32> = (0..row_indices.len()).map(|p| p as f32).collect();
    let mut writer = FileWriter::new(Vec::new(), WriterOptions::new()).unwrap();
    let data = || {
        [
            BufferData::from_slice(&values),
            BufferData::from_slice(&row_indices),
            BufferData::from_slice(&col_ptr),
        ]
    };
    let csc = TensorDescriptor::csc(ElementType::Float32, nrows, ncols, nnz).unwrap();
    let csr = TensorDescriptor::csr(ElementType::Float32, ncols, nrows, nnz).unwrap();
    writer.write_tensor("A", &csc, data()).unwrap();
    writer.write_tensor("At", &csr, data()).unwrap();
    let bytes = AlignedBytes::from_slice(&writer.finish().unwrap());
    let file = HurrayFile::parse(&bytes, Options::strict()).unwrap();

    let broken = violations(nrows, &col_ptr, &row_indices);
    let a = file.tensor("A").unwrap().csc::<f32>();
    check(&a, broken, "csc");
    check(&file.tensor("At").unwrap().csr::<f32>(), broken, "csr");
    let structure = file.tensor("A").unwrap().csc_structure().unwrap();
    let threads = usize::from(input.threads % 8).max(1);
    assert_eq!(
        structure.validate().map_err(|e| e.to_string()),
        structure.validate_parallel(threads).map_err(|e| e.to_string()),
        "validate vs validate_parallel({threads})"
    );
    check_unscanned_columns(&structure, &col_ptr, &row_indices, nrows);
    if let Ok(a) = a {
        check_views(&a, &col_ptr, &row_indices);
        check_products(&a, &col_ptr, &row_indices, threads);
    }
});

/// On a valid matrix with at most 2^16 rows (`y` is dense): `y = A·x` and
/// `z = Aᵀ·x'` against the naive loops, and both `mul_vec_parallel`s
/// against them, bit for bit (A·x's on one thread: its `y` is under 2 MiB;
/// the library's proptests cover the split by rows).
fn check_products(a: &CscView<'_, f32>, col_ptr: &[u64], row_indices: &[u64], threads: usize) {
    let (nrows, ncols) = (a.nrows() as usize, a.ncols() as usize);
    if nrows > 1 << 16 {
        return;
    }
    let x: Vec<f32> = (0..ncols).map(|j| 1.0 / (j as f32 + 1.5)).collect();
    let xt: Vec<f32> = (0..nrows).map(|i| 1.0 / (i as f32 + 2.5)).collect();
    let (mut y_model, mut z_model) = (vec![0f32; nrows], vec![0f32; ncols]);
    for j in 0..ncols {
        for p in col_ptr[j] as usize..col_ptr[j + 1] as usize {
            let r = row_indices[p] as usize;
            y_model[r] = y_model[r] + p as f32 * x[j];
            z_model[j] = z_model[j] + p as f32 * xt[r];
        }
    }
    let bits = |v: &[f32]| v.iter().map(|a| a.to_bits()).collect::<Vec<u32>>();
    let mut y = vec![f32::NAN; nrows];
    a.mul_vec(&x, &mut y).unwrap();
    assert_eq!(bits(&y), bits(&y_model), "A·x");
    let mut y = vec![f32::NAN; nrows];
    a.mul_vec_parallel(&x, &mut y, threads).unwrap();
    assert_eq!(bits(&y), bits(&y_model), "A·x on {threads} threads");
    let mut z = vec![f32::NAN; ncols];
    a.transpose().mul_vec(&xt, &mut z).unwrap();
    assert_eq!(bits(&z), bits(&z_model), "Aᵀ·x");
    let mut z = vec![f32::NAN; ncols];
    a.transpose().mul_vec_parallel(&xt, &mut z, threads).unwrap();
    assert_eq!(bits(&z), bits(&z_model), "Aᵀ·x on {threads} threads");
}
