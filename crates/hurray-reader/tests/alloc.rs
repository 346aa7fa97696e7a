//! Heap allocations of the reader, counted by a wrapping global allocator.
//!
//! Claim under test (crate docs: "nothing proportional to the data is
//! copied"; the invariant scan runs "without allocating"): opening a mapped
//! file, resolving a CSC tensor, taking the strict `csc::<f32>()` view (which
//! runs the O(nnz) invariant scan) and validating again costs the same,
//! small, number of heap allocations and bytes whatever nnz is; and lookups
//! (`get`, `column`, `iter`, `transpose().get`) allocate nothing.
//!
//! The files are written with `hurray-writer` into temporary files and
//! mapped with `MappedFile`, so the data never sits on the heap. Only the
//! measured windows are counted, with `stats_alloc`'s instrumented `System`
//! allocator (process-wide counters): the file holds a single `#[test]` that
//! runs the checks one after another, so no other test thread allocates
//! while a window is open.

use std::alloc::System;
use std::time::{Duration, Instant};

use hurray_reader::{MappedFile, Options};
use hurray_writer::{Csc, FileWriter, WriterOptions};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};
use tempfile::NamedTempFile;

/// `System`, counting every allocation.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// What one window allocated: allocation calls (`alloc`, `alloc_zeroed`,
/// `realloc`) and the bytes they requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Count {
    calls: u64,
    bytes: u64,
}

/// An open measurement window; counts until [`Window::close`].
struct Window {
    region: Region<'static, System>,
    start: Instant,
}

impl Window {
    fn open() -> Self {
        Window {
            region: Region::new(GLOBAL),
            start: Instant::now(),
        }
    }

    fn close(self) -> Count {
        self.close_timed().0
    }

    /// The count and the time spent inside the window.
    fn close_timed(self) -> (Count, Duration) {
        let elapsed = self.start.elapsed();
        let stats = self.region.change();
        let count = Count {
            calls: (stats.allocations + stats.reallocations) as u64,
            bytes: (stats.bytes_allocated as u64).saturating_add(stats.bytes_reallocated.max(0) as u64),
        };
        (count, elapsed)
    }
}

// ---------------------------------------------------------------------------
// Test data
// ---------------------------------------------------------------------------

const NROWS: u64 = 1 << 20;
/// At most this many elements per column; each column gets a pseudo-random
/// count in `0..MAX_PER_COLUMN`, so some columns are empty.
const MAX_PER_COLUMN: u64 = 32;

fn mix(x: u64) -> u64 {
    // splitmix64 finaliser: a deterministic pseudo-random hash.
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A deterministic CSC matrix of `NROWS` rows and exactly `nnz` stored
/// `f32` elements: `(ncols, values, row_indices, col_ptr)`.
fn csc_arrays(nnz: u64) -> (u64, Vec<f32>, Vec<u64>, Vec<u64>) {
    let stride = NROWS / MAX_PER_COLUMN;
    let mut values = Vec::with_capacity(nnz as usize);
    let mut rows = Vec::with_capacity(nnz as usize);
    let mut col_ptr = vec![0u64];
    let mut j = 0u64;
    while (rows.len() as u64) < nnz {
        let h = mix(j);
        let count = (h % MAX_PER_COLUMN).min(nnz - rows.len() as u64);
        for k in 0..count {
            // Slot k of the column, shifted by a per-column offset: rows
            // strictly increase within the column and stay below NROWS.
            rows.push(k * stride + (h >> 32) % stride);
            values.push((mix(j ^ (k << 40)) % 2001) as f32 * 0.25 - 250.0);
        }
        col_ptr.push(rows.len() as u64);
        j += 1;
    }
    (j, values, rows, col_ptr)
}

/// Writes one CSC tensor `A` of `nnz` elements into a temporary file.
fn write_csc_file(nnz: u64) -> (NamedTempFile, u64) {
    let (ncols, values, rows, col_ptr) = csc_arrays(nnz);
    let csc = Csc::new(NROWS, ncols, &values, &rows, &col_ptr).expect("valid CSC");
    let tmp = NamedTempFile::new().expect("temporary file");
    let mut w = FileWriter::new(tmp, WriterOptions::default()).expect("writer");
    w.write_csc("A", &csc).expect("write_csc");
    (w.finish().expect("finish"), ncols)
}

// ---------------------------------------------------------------------------
// Measurements
// ---------------------------------------------------------------------------

/// What opening and validating one file cost.
#[derive(Debug)]
struct OpenCost {
    /// Per step: `MappedFile::open`, `file()`, `tensor("A")`,
    /// `csc::<f32>()` (strict: invariant scan), `CscView::validate()`.
    steps: [Count; 5],
    /// The whole open→validate window.
    open_to_validate: Count,
    /// Time inside the open→validate windows.
    time: Duration,
    /// `HurrayFile::validate()` afterwards (whole-file validation, padding
    /// bytes included).
    file_validate: Count,
    file_validate_time: Duration,
}

fn open_and_validate(tmp: &NamedTempFile, nnz: u64, ncols: u64) -> OpenCost {
    // Each step in its own window; the whole window is their sum (nothing
    // runs between the windows).
    let w = Window::open();
    let mapped = MappedFile::open(tmp.path(), Options::default()).expect("map");
    let map = w.close_timed();
    let w = Window::open();
    let file = mapped.file().expect("parse");
    let parse = w.close_timed();
    let w = Window::open();
    let tensor = file.tensor("A").expect("resolve A");
    let resolve = w.close_timed();
    let w = Window::open();
    let a = tensor.csc::<f32>().expect("strict CSC view (invariant scan)");
    let view = w.close_timed();
    let w = Window::open();
    a.validate().expect("validate again");
    let validate = w.close_timed();
    let time = [map, parse, resolve, view, validate].iter().map(|s| s.1).sum();
    let [map, parse, resolve, view, validate] = [map.0, parse.0, resolve.0, view.0, validate.0];
    let steps = [map, parse, resolve, view, validate];
    let open_to_validate = Count {
        calls: steps.iter().map(|c| c.calls).sum(),
        bytes: steps.iter().map(|c| c.bytes).sum(),
    };

    // Outside the windows: the view really covers the whole data.
    assert!(a.is_validated());
    assert_eq!((a.nrows(), a.ncols(), a.nnz()), (NROWS, ncols, nnz));
    assert_eq!(a.values().len() as u64, nnz);
    assert_eq!(a.col_ptr().len() as u64, ncols + 1);

    let w = Window::open();
    file.validate().expect("HurrayFile::validate");
    let (file_validate, file_validate_time) = w.close_timed();
    OpenCost {
        steps,
        open_to_validate,
        time,
        file_validate,
        file_validate_time,
    }
}

/// All checks, one after another (see the module docs).
#[test]
fn allocations() {
    counter_sees_allocations();
    open_resolve_scan_validate_allocations_do_not_grow_with_nnz();
    lookups_do_not_allocate();
    blocked_product_keeps_its_scratch_until_released();
}

/// The allocator sees allocations (guards against a counter that is never
/// enabled, which would make every "zero allocations" claim vacuous).
fn counter_sees_allocations() {
    let w = Window::open();
    let v: Vec<u64> = Vec::with_capacity(100);
    let count = w.close();
    drop(v);
    assert_eq!(count, Count { calls: 1, bytes: 800 });
}

fn open_resolve_scan_validate_allocations_do_not_grow_with_nnz() {
    const SIZES: [u64; 2] = [1 << 20, 1 << 22]; // 1 Mi and 4 Mi non-zeros
    let mut costs = Vec::new();
    for nnz in SIZES {
        let (tmp, ncols) = write_csc_file(nnz);
        let size = tmp.as_file().metadata().expect("metadata").len();
        // Warm-up: first-use allocations of the runtime (e.g. thread-local
        // state) must not be charged to the first size only.
        let cold = open_and_validate(&tmp, nnz, ncols);
        let cost = open_and_validate(&tmp, nnz, ncols);
        println!(
            "nnz = {nnz} ({size} bytes, {ncols} columns): open..validate {:?} in {:?} \
             (first run {:?}); steps map/parse/resolve/csc/validate {:?}; file.validate() {:?} in {:?}",
            cost.open_to_validate,
            cost.time,
            cold.open_to_validate,
            cost.steps,
            cost.file_validate,
            cost.file_validate_time
        );
        costs.push(cost);
    }
    let (small, large) = (&costs[0], &costs[1]);
    assert_eq!(
        small.open_to_validate, large.open_to_validate,
        "open→validate allocations depend on nnz"
    );
    assert_eq!(small.steps, large.steps, "a step's allocations depend on nnz");
    // The O(nnz) invariant scan itself allocates nothing.
    assert_eq!(
        small.steps[4],
        Count { calls: 0, bytes: 0 },
        "CscView::validate allocated"
    );
    assert_eq!(
        small.file_validate, large.file_validate,
        "HurrayFile::validate allocations depend on nnz"
    );
    assert!(
        small.open_to_validate.calls < 64,
        "open→validate made {} allocations",
        small.open_to_validate.calls
    );
    assert!(
        small.open_to_validate.bytes < 16 * 1024,
        "open→validate allocated {} bytes",
        small.open_to_validate.bytes
    );
    assert!(
        small.file_validate.calls < 64,
        "file.validate made {} allocations",
        small.file_validate.calls
    );
}

fn lookups_do_not_allocate() {
    const NNZ: u64 = 1 << 20;
    let (tmp, ncols) = write_csc_file(NNZ);
    let mapped = MappedFile::open(tmp.path(), Options::default()).expect("map");
    let file = mapped.file().expect("parse");
    let a = file.tensor("A").expect("resolve A").csc::<f32>().expect("CSC view");
    let (_, values, rows, col_ptr) = csc_arrays(NNZ);

    // Lookups at stored positions and at implicit zeros, spread over the matrix.
    const LOOKUPS: u64 = 100_000;
    let probe = |i: u64| (mix(i) % NROWS, mix(i ^ 0xABCD) % ncols);

    let window = Window::open();
    let mut found = 0u64;
    let mut sum = 0f64;
    for i in 0..LOOKUPS {
        // A stored element: its row at a pseudo-random position.
        let p = (mix(i) % NNZ) as usize;
        let col = col_ptr.partition_point(|&q| q <= p as u64) as u64 - 1;
        if let Some(v) = a.get(rows[p], col).expect("get") {
            found += 1;
            sum += f64::from(*v);
        }
        // Mostly implicit zeros.
        let (r, c) = probe(i);
        if a.get(r, c).expect("get").is_some() {
            found += 1;
        }
    }
    let get = window.close();

    let window = Window::open();
    let mut column_entries = 0u64;
    let mut column_sum = 0f64;
    for j in 0..ncols {
        for (r, v) in a.column(j).expect("column") {
            column_entries += 1;
            column_sum += f64::from(*v) + r as f64;
        }
    }
    let column = window.close();

    let window = Window::open();
    let mut iter_entries = 0u64;
    let mut iter_col_sum = 0u64;
    for (r, c, v) in a.iter().expect("iter") {
        iter_entries += 1;
        iter_col_sum += c;
        column_sum -= f64::from(*v) + r as f64;
    }
    let iter = window.close();

    let window = Window::open();
    let at = a.transpose();
    let mut t_found = 0u64;
    for i in 0..LOOKUPS {
        let p = (mix(i) % NNZ) as usize;
        let col = col_ptr.partition_point(|&q| q <= p as u64) as u64 - 1;
        if at.get(col, rows[p]).expect("transpose get").is_some() {
            t_found += 1;
        }
        let (r, c) = probe(i);
        let _ = at.get(c, r).expect("transpose get");
    }
    let transpose = window.close();

    // Positive control: `to_csr` is the crate's one documented O(nnz + nrows)
    // allocation, and the counter sees it.
    let window = Window::open();
    let owned = a.to_csr().expect("to_csr");
    let to_csr = window.close();
    assert_eq!(owned.values().len() as u64, NNZ);
    assert!(to_csr.bytes >= NNZ * (8 + 4) + (NROWS + 1) * 8, "to_csr: {to_csr:?}");
    drop(owned);

    println!(
        "to_csr: {to_csr:?}; {LOOKUPS} get pairs: {get:?}; column(j) over {ncols} columns: {column:?}; iter: {iter:?}; \
         {LOOKUPS} transpose().get pairs: {transpose:?}"
    );
    // Every stored element was found, each column yielded its entries.
    assert!(found >= LOOKUPS);
    assert!(sum.is_finite());
    assert_eq!(t_found, LOOKUPS);
    assert_eq!(column_entries, NNZ);
    assert_eq!(iter_entries, NNZ);
    // Same elements in the same order (the sums are exact: quarter-integers
    // and rows below 2^20).
    assert_eq!(column_sum, 0.0);
    let expected_col_sum: u64 = (0..ncols)
        .map(|j| j * (col_ptr[j as usize + 1] - col_ptr[j as usize]))
        .sum();
    assert_eq!(iter_col_sum, expected_col_sum);
    assert_eq!(values.len() as u64, NNZ);

    let zero = Count { calls: 0, bytes: 0 };
    assert_eq!(get, zero, "get allocated");
    assert_eq!(column, zero, "column(j) iteration allocated");
    assert_eq!(iter, zero, "iter() allocated");
    assert_eq!(transpose, zero, "transpose().get allocated");
}

/// A `y` over 16 MiB (2^22 + 3 `f32` rows, 2 Mi non-zeros: the blocked
/// scatter) allocates its bins on the first product and keeps them: the
/// second allocates under 1 MiB; `release_scratch` gives back what the
/// first allocated beyond that, and the next product allocates it again.
fn blocked_product_keeps_its_scratch_until_released() {
    const ROWS: u64 = (1 << 22) + 3;
    let nnz = 2u64 << 20;
    let ncols = nnz / 2;
    let rows: Vec<u64> = (0..nnz).map(|k| (k % 2) * (ROWS / 2) + mix(k) % (ROWS / 2)).collect();
    let values: Vec<f32> = (0..nnz).map(|k| (k % 7) as f32).collect();
    let col_ptr: Vec<u64> = (0..=ncols).map(|j| 2 * j).collect();
    let csc = Csc::new(ROWS, ncols, &values, &rows, &col_ptr).expect("valid CSC");
    let tmp = NamedTempFile::new().expect("temporary file");
    let mut w = FileWriter::new(tmp, WriterOptions::default()).expect("writer");
    w.write_csc("A", &csc).expect("write_csc");
    let tmp = w.finish().expect("finish");
    let mapped = MappedFile::open(tmp.path(), Options::default()).expect("open");
    let file = mapped.file().expect("file");
    let a = file.tensor("A").expect("tensor").csc::<f32>().expect("csc");
    let x = vec![1f32; ncols as usize];
    let mut y = vec![f32::NAN; ROWS as usize];

    hurray_reader::release_scratch();
    let product = |y: &mut [f32]| {
        let window = Window::open();
        a.mul_vec(&x, y).expect("mul_vec");
        window.close()
    };
    let (first, second) = (product(&mut y), product(&mut y));
    let kept = hurray_reader::release_scratch() as u64;
    let third = product(&mut y);
    println!("blocked product: first {first:?}, second {second:?}, kept {kept} bytes, after release {third:?}");
    assert!(kept >= 16 << 20, "kept {kept}");
    assert!(second.bytes < 1 << 20, "second product: {second:?}");
    assert!(
        first.bytes >= kept && first.bytes - kept < 1 << 20,
        "first {first:?}, kept {kept}"
    );
    assert_eq!(third.bytes, first.bytes);
    assert_eq!(hurray_reader::release_scratch() as u64, kept);
    assert_eq!(hurray_reader::release_scratch(), 0);
    // Every row got its column's values: the sum of all of them.
    let sum: f64 = y.iter().map(|&v| f64::from(v)).sum();
    assert_eq!(sum, values.iter().map(|&v| f64::from(v)).sum::<f64>());
}
