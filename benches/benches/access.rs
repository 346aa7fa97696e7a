//! Benchmark 3: access through the views.
//!
//! - `access_get`: random `get(row, col)` over a fixed batch of positions,
//!   half stored elements, half implicit zeros (lookups per second); on a
//!   validated view, on an unscanned one (each lookup checks its column),
//!   and through `transpose()` (CSR of Aᵀ, `get(col, row)`).
//! - `access_column_iter`: the sum of all values through `column(j)` for
//!   every column and through `columns()`, next to a plain sum of the
//!   values slice (the ceiling).
//! - `spmv_f32` / `spmv_f64`: `y = A·x` with the library's
//!   `CscView::mul_vec` (`csc_Ax_mul_vec`) and through `column(j)`
//!   (`csc_Ax_column_api`, a local loop: the checked per-column API), and
//!   `y = Aᵀ·x` with `CsrView::mul_vec` on `A.transpose()`, the CSR of Aᵀ
//!   on the same bytes (`csr_of_At_Atx_mul_vec`). `x` and `y` live in huge
//!   pages like numpy's arrays; `csc_Ax_mul_vec_vec_4k_pages` is the first
//!   one again with plain `Vec`s. `csc_Ax_direct_scatter` is the direct
//!   scatter (`kernels::spmv_csc_direct`), the path `mul_vec` takes for a
//!   `y` within the L2 cache; on these inputs `mul_vec` uses propagation
//!   blocking in `f32` (10 M rows; in `f64` it blocks only up to 4 M rows,
//!   so here both are the direct scatter), and the two results are checked
//!   equal bit for bit. `csc_Ax_mul_vec_parallel_2threads` is
//!   `CscView::mul_vec_parallel` on two threads, checked equal to
//!   `mul_vec` too; `csr_of_At_Atx_mul_vec_parallel_2threads` the same for
//!   Aᵀ·x.
//!
//! Input: the `random10` CSC of the scan benchmark (100 M non-zeros, 10 M ×
//! 10 M), with `float32` and with `float64` values.
//!
//! `cargo bench -p hurray-benches --bench access`; under `cargo test` it
//! runs once on tiny inputs in a tempdir.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use hurray_benches::data::{Format, MatrixSpec, Pattern, Values, TENSOR};
use hurray_benches::kernels::{
    column_sum, columns_sum, gather_sum, spmv_csc_columns, spmv_csc_direct, values_sum, x_vector, HugeVec, Real,
};
use hurray_benches::{mix, Ctx};
use hurray_reader::{CscView, MappedFile, Options};

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

fn slow(group: &mut Group<'_>, ctx: &Ctx) {
    if ctx.mode.is_full() {
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
    }
}

/// `n` positions: even entries stored elements, odd ones implicit zeros.
fn positions<T: Real>(a: &CscView<'_, T>, n: usize) -> Vec<(u64, u64)> {
    let col_ptr = a.col_ptr();
    let rows = a.row_indices();
    let mut out = Vec::with_capacity(n);
    let mut seed = 0u64;
    while out.len() < n {
        seed += 1;
        if out.len() % 2 == 0 {
            let p = mix(seed) % a.nnz();
            let col = col_ptr.partition_point(|&q| q <= p) as u64 - 1;
            out.push((rows[p as usize], col));
        } else {
            let (r, c) = (mix(seed ^ 0xF00D) % a.nrows(), mix(seed ^ 0xBEEF) % a.ncols());
            if a.get(r, c).expect("get").is_none() {
                out.push((r, c));
            }
        }
    }
    out
}

fn bench_get(c: &mut Criterion, ctx: &Ctx, a: &CscView<'_, f32>, unscanned: &CscView<'_, f32>) {
    let batch = positions(a, ctx.pick(4096, 64));
    let hits = batch
        .iter()
        .filter(|&&(r, c)| a.get(r, c).expect("get").is_some())
        .count();
    assert_eq!(hits, batch.len() / 2);
    let at = a.transpose();
    let mut group = c.benchmark_group("access_get");
    if ctx.mode.is_full() {
        group.measurement_time(Duration::from_secs(3));
    }
    group.throughput(Throughput::Elements(batch.len() as u64));
    group.bench_function("get_validated_view", |b| {
        b.iter(|| {
            batch
                .iter()
                .filter(|&&(r, c)| a.get(r, c).expect("get").is_some())
                .count()
        })
    });
    group.bench_function("get_unscanned_view", |b| {
        b.iter(|| {
            batch
                .iter()
                .filter(|&&(r, c)| unscanned.get(r, c).expect("get").is_some())
                .count()
        })
    });
    group.bench_function("transpose_get_validated_view", |b| {
        b.iter(|| {
            batch
                .iter()
                .filter(|&&(r, c)| at.get(c, r).expect("get").is_some())
                .count()
        })
    });
    group.finish();
}

fn bench_columns(c: &mut Criterion, ctx: &Ctx, a: &CscView<'_, f32>, unscanned: &CscView<'_, f32>) {
    let expected = values_sum(a.values());
    assert!((column_sum(a) - expected).abs() <= 1e-6 * a.nnz() as f64 + 1e-3);
    assert_eq!(columns_sum(a).to_bits(), column_sum(a).to_bits());
    let mut group = c.benchmark_group("access_column_iter");
    slow(&mut group, ctx);
    group.throughput(Throughput::Elements(a.nnz()));
    group.bench_function("column_iter_sum_validated_view", |b| {
        b.iter(|| column_sum(black_box(a)))
    });
    group.bench_function("columns_sum_validated_view", |b| b.iter(|| columns_sum(black_box(a))));
    group.bench_function("column_iter_sum_unscanned_view", |b| {
        b.iter(|| column_sum(black_box(unscanned)))
    });
    group.bench_function("values_slice_sum_ceiling", |b| {
        b.iter(|| values_sum(black_box(a.values())))
    });
    group.finish();
}

fn bench_spmv<T: Real>(c: &mut Criterion, ctx: &Ctx, a: &CscView<'_, T>, name: &str) {
    // x and y live in huge pages, as numpy's arrays do (see HugeVec).
    let x = HugeVec::from_slice(&x_vector::<T>(a.ncols()));
    let mut y = HugeVec::<T>::zeroed(a.nrows() as usize);
    let mut y2 = vec![T::default(); a.nrows() as usize];
    a.mul_vec(x.as_slice(), y.as_mut_slice()).expect("mul_vec");
    spmv_csc_columns(a, x.as_slice(), &mut y2);
    assert!(y.as_slice() == y2.as_slice(), "mul_vec and the column loop disagree");
    spmv_csc_direct(a, x.as_slice(), &mut y2);
    let bits = |v: &[T]| v.iter().map(|a| a.to_f64().to_bits()).collect::<Vec<u64>>();
    assert!(bits(y.as_slice()) == bits(&y2), "mul_vec and the direct scatter differ");
    a.mul_vec_parallel(x.as_slice(), &mut y2, 2).expect("mul_vec_parallel");
    assert!(
        bits(y.as_slice()) == bits(&y2),
        "mul_vec and mul_vec_parallel(2) differ"
    );
    let at = a.transpose();
    let xt = HugeVec::from_slice(&x_vector::<T>(at.ncols()));
    let mut z = HugeVec::<T>::zeroed(at.nrows() as usize);
    let x4k: Vec<T> = x_vector(a.ncols());

    let mut group = c.benchmark_group(format!("spmv_{name}"));
    slow(&mut group, ctx);
    group.throughput(Throughput::Elements(a.nnz()));
    group.bench_function("csc_Ax_mul_vec", |b| {
        b.iter(|| a.mul_vec(black_box(x.as_slice()), y.as_mut_slice()).expect("mul_vec"))
    });
    group.bench_function("csc_Ax_mul_vec_parallel_2threads", |b| {
        b.iter(|| {
            a.mul_vec_parallel(black_box(x.as_slice()), y.as_mut_slice(), 2)
                .expect("mul_vec_parallel")
        })
    });
    group.bench_function("csc_Ax_direct_scatter", |b| {
        b.iter(|| spmv_csc_direct(a, black_box(x.as_slice()), y.as_mut_slice()))
    });
    group.bench_function("csc_Ax_column_api", |b| {
        b.iter(|| spmv_csc_columns(a, black_box(x.as_slice()), y.as_mut_slice()))
    });
    group.bench_function("csr_of_At_Atx_mul_vec", |b| {
        b.iter(|| at.mul_vec(black_box(xt.as_slice()), z.as_mut_slice()).expect("mul_vec"))
    });
    group.bench_function("csr_of_At_Atx_mul_vec_parallel_2threads", |b| {
        b.iter(|| {
            at.mul_vec_parallel(black_box(xt.as_slice()), z.as_mut_slice(), 2)
                .expect("mul_vec_parallel")
        })
    });
    // Aᵀ·x's random reads of x alone: prefetched as the library's loop
    // (its ceiling), and in a plain loop (scipy's, less its arithmetic).
    group.bench_function("gather_x_at_row_indices_ceiling", |b| {
        b.iter(|| gather_sum::<T, true>(a.row_indices(), black_box(xt.as_slice())))
    });
    group.bench_function("gather_x_at_row_indices_plain", |b| {
        b.iter(|| gather_sum::<T, false>(a.row_indices(), black_box(xt.as_slice())))
    });
    if name == "f32" {
        // The same product with x and y in plain Vecs (4 KiB pages).
        group.bench_function("csc_Ax_mul_vec_vec_4k_pages", |b| {
            b.iter(|| a.mul_vec(black_box(&x4k), &mut y2).expect("mul_vec"))
        });
    }
    group.finish();
}

fn main() {
    let ctx = Ctx::from_args();
    let mut c = Criterion::default().configure_from_args();
    let nnz = ctx.pick(100_000_000, 512);

    let spec = MatrixSpec::new(Pattern::Random10, Format::Csc, Values::F32, nnz);
    let path = ctx.matrix(spec);
    let mapped = MappedFile::open(&path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let tensor = file.tensor(TENSOR).expect("tensor");
    let a = tensor.csc::<f32>().expect("strict view");
    let unscanned = tensor.csc_unscanned::<f32>().expect("view");
    bench_get(&mut c, &ctx, &a, &unscanned);
    bench_columns(&mut c, &ctx, &a, &unscanned);
    bench_spmv(&mut c, &ctx, &a, "f32");

    let spec = MatrixSpec::new(Pattern::Random10, Format::Csc, Values::F64, nnz);
    let path = ctx.matrix(spec);
    let mapped = MappedFile::open(&path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let a = file.tensor(TENSOR).expect("tensor").csc::<f64>().expect("strict view");
    bench_spmv(&mut c, &ctx, &a, "f64");
    c.final_summary();
}
