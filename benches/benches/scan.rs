//! Benchmark 2: invariant scan throughput.
//!
//! The single-pass validation of an unscanned structure
//! (`CscStructure::validate()`, `CsrStructure::validate()`,
//! `CooStructure::validate()` on a sorted COO), in bytes of pointer + index
//! arrays per second, next to ceilings over the same `u64` slices measured
//! in the same run: a plain sum on one thread and on two (on the library's
//! pool of threads, as `validate_parallel`),
//! and the same sums prefetching 16 KiB ahead as the scans do.
//! Also the library's `validate_parallel(2)` (COO too), a naive element-by-element
//! check, and a two-thread validation built from the public slices only
//! (`kernels::validate_threads`, the stand-in written before the library
//! had `validate_parallel`).
//!
//! Inputs (100 M non-zeros, `float32` values, `u64` indices):
//! `random10` (~10 per column, random sorted rows, 10 M × 10 M),
//! `short2` (~2 per column, 50 M columns), `onecol` (all in one column),
//! as CSC; `random10` as CSR and as sorted COO.
//!
//! `cargo bench -p hurray-benches --bench scan`; under `cargo test` it runs
//! once on tiny inputs in a tempdir.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};
use hurray_benches::data::{Format, MatrixSpec, Pattern, Values, TENSOR};
use hurray_benches::kernels::{
    naive_check, sum_u64, sum_u64_prefetched, sum_u64_prefetched_threads, sum_u64_threads, validate_threads,
};
use hurray_benches::Ctx;
use hurray_reader::{MappedFile, Options};

fn configure(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, ctx: &Ctx) {
    if ctx.mode.is_full() {
        group
            .sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(4));
    }
}

/// The ceilings: plain sums over the scanned slices (the baseline)
/// and the same sums with the scans' software prefetch.
fn bench_sums(group: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, slices: &[&[u64]]) {
    group.bench_function("sum_1thread", |b| b.iter(|| sum_u64(black_box(slices))));
    group.bench_function("sum_2threads", |b| b.iter(|| sum_u64_threads(black_box(slices), 2)));
    group.bench_function("sum_1thread_prefetched", |b| {
        b.iter(|| sum_u64_prefetched(black_box(slices)))
    });
    group.bench_function("sum_2threads_prefetched", |b| {
        b.iter(|| sum_u64_prefetched_threads(black_box(slices), 2))
    });
}

fn bench_compressed(c: &mut Criterion, ctx: &Ctx, spec: MatrixSpec) {
    let path = ctx.matrix(spec);
    let mapped = MappedFile::open(&path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let tensor = file.tensor(TENSOR).expect("tensor");
    // Both orientations share one Compressed structure; keep the accessor the
    // layout names (csc_structure / csr_structure) on the measured path.
    let (ptr, idx, bound) = match spec.format {
        Format::Csc => {
            let s = tensor.csc_structure().expect("csc");
            (s.col_ptr(), s.row_indices(), s.nrows())
        }
        _ => {
            let s = tensor.csr_structure().expect("csr");
            (s.row_ptr(), s.col_indices(), s.ncols())
        }
    };
    let bytes = ((ptr.len() + idx.len()) * 8) as u64;
    let slices = [ptr, idx];
    // Warm the page cache and page tables; check every contender agrees.
    black_box(sum_u64(&slices));
    let validate = || match spec.format {
        Format::Csc => tensor.csc_structure().expect("csc").validate(),
        _ => tensor.csr_structure().expect("csr").validate(),
    };
    let validate_parallel = || match spec.format {
        Format::Csc => tensor.csc_structure().expect("csc").validate_parallel(2),
        _ => tensor.csr_structure().expect("csr").validate_parallel(2),
    };
    validate().expect("generated matrix is valid");
    validate_parallel().expect("generated matrix is valid (parallel)");
    assert!(naive_check(ptr, idx, bound));
    assert!(validate_threads(ptr, idx, bound, 2));

    let mut group = c.benchmark_group(format!("scan_{}_{}", spec.format.name(), spec.pattern.name()));
    configure(&mut group, ctx);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("validate", |b| b.iter(|| validate().expect("valid")));
    group.bench_function("validate_parallel_2threads", |b| {
        b.iter(|| validate_parallel().expect("valid"))
    });
    group.bench_function("naive_check", |b| b.iter(|| assert!(naive_check(ptr, idx, bound))));
    group.bench_function("local_validate_2threads", |b| {
        b.iter(|| assert!(validate_threads(ptr, idx, bound, 2)))
    });
    bench_sums(&mut group, &slices);
    group.finish();
}

fn bench_coo(c: &mut Criterion, ctx: &Ctx, spec: MatrixSpec) {
    let path = ctx.matrix(spec);
    let mapped = MappedFile::open(&path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let tensor = file.tensor(TENSOR).expect("tensor");
    let structure = tensor.coo_structure().expect("coo");
    assert!(structure.is_sorted());
    let idx = structure.indices();
    let slices = [idx];
    black_box(sum_u64(&slices));
    structure.validate().expect("generated COO is valid");
    structure
        .validate_parallel(2)
        .expect("generated COO is valid (parallel)");

    let mut group = c.benchmark_group(format!("scan_coo_{}", spec.pattern.name()));
    configure(&mut group, ctx);
    group.throughput(Throughput::Bytes((idx.len() * 8) as u64));
    group.bench_function("validate", |b| {
        b.iter(|| tensor.coo_structure().expect("coo").validate().expect("valid"))
    });
    group.bench_function("validate_parallel_2threads", |b| {
        b.iter(|| {
            tensor
                .coo_structure()
                .expect("coo")
                .validate_parallel(2)
                .expect("valid")
        })
    });
    bench_sums(&mut group, &slices);
    group.finish();
}

fn main() {
    let ctx = Ctx::from_args();
    let mut c = Criterion::default().configure_from_args();
    let nnz = ctx.pick(100_000_000, 512);
    for pattern in [Pattern::Random10, Pattern::Short2, Pattern::OneColumn] {
        bench_compressed(&mut c, &ctx, MatrixSpec::new(pattern, Format::Csc, Values::F32, nnz));
    }
    bench_compressed(
        &mut c,
        &ctx,
        MatrixSpec::new(Pattern::Random10, Format::Csr, Values::F32, nnz),
    );
    bench_coo(
        &mut c,
        &ctx,
        MatrixSpec::new(Pattern::Random10, Format::CooSorted, Values::F32, nnz),
    );
    c.final_summary();
}
