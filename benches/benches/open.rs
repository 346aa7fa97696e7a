//! Benchmark 1: open latency against file size.
//!
//! `MappedFile::open` + `.file()` + `tensor("A")` + `csc_unscanned::<f32>()`
//! (no invariant scan) on files of 8 MiB, 256 MiB, 2 GiB and 8 GiB — a big
//! dense zero tensor written as a hole, then a small CSC at the end — next to
//! a bare `File::open` + `mmap` + read-one-`u64` baseline in the same run.
//! Also open-to-first-value (the same, then the first stored value of
//! column 0).
//!
//! `cargo bench -p hurray-benches --bench open`; under `cargo test` it runs
//! once on two tiny files in a tempdir.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use hurray_benches::data::{ensure_open_file, TENSOR};
use hurray_benches::kernels::{bare_mmap_read_u64, open_to_view};
use hurray_benches::{size_label, Ctx};
use hurray_reader::{MappedFile, Options};

fn hurray_first_value(path: &std::path::Path) -> f32 {
    let mapped = MappedFile::open(path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let view = file
        .tensor(TENSOR)
        .expect("tensor")
        .csc_unscanned::<f32>()
        .expect("view");
    let first = (0..view.ncols())
        .find_map(|j| view.column(j).expect("column").next())
        .map_or(0.0, |(_, v)| *v);
    first
}

fn main() {
    let ctx = Ctx::from_args();
    let mut c = Criterion::default().configure_from_args();
    let sizes: Vec<u64> = ctx.pick(vec![8 << 20, 256 << 20, 2 << 30, 8 << 30], vec![16 << 10, 64 << 10]);
    let mut group = c.benchmark_group("open");
    if ctx.mode.is_full() {
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(100);
    }
    for &size in &sizes {
        let path = ensure_open_file(ctx.dir(), size).expect("generate open file");
        let label = size_label(size);
        assert_eq!(open_to_view(&path), 1024);
        group.bench_with_input(BenchmarkId::new("hurray_open_unscanned", &label), &path, |b, p| {
            b.iter(|| open_to_view(black_box(p)));
        });
        group.bench_with_input(BenchmarkId::new("hurray_open_to_first_value", &label), &path, |b, p| {
            b.iter(|| hurray_first_value(black_box(p)));
        });
        group.bench_with_input(BenchmarkId::new("mmap_read_u64_baseline", &label), &path, |b, p| {
            b.iter(|| bare_mmap_read_u64(black_box(p)));
        });
    }
    group.finish();
    c.final_summary();
}
