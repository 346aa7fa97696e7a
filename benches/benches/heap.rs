//! Benchmark 4: heap bytes allocated by open + validate + view, for 1 M,
//! 10 M and 100 M non-zeros (the `random10` CSC, `float32`), counted by
//! `stats_alloc`'s instrumented `System` allocator. The three counts must be equal: the
//! reader allocates nothing proportional to the data.
//!
//! `cargo bench -p hurray-benches --bench heap` (writes `heap.json` to the
//! results folder); under `cargo test` it runs on 64, 256 and 1024
//! non-zeros in a tempdir. Not a criterion benchmark: it counts, it does
//! not time.

#![forbid(unsafe_code)]

use std::alloc::System;

use hurray_benches::data::{Format, MatrixSpec, Pattern, Values, TENSOR};
use hurray_benches::{write_result, Ctx};
use hurray_reader::{MappedFile, Options};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

/// `System`, counting every allocation (`stats_alloc`).
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Count {
    calls: u64,
    bytes: u64,
}

fn counted<R>(f: impl FnOnce() -> R) -> (R, Count) {
    let region = Region::new(GLOBAL);
    let r = f();
    let stats = region.change();
    let count = Count {
        calls: (stats.allocations + stats.reallocations) as u64,
        bytes: stats.bytes_allocated as u64,
    };
    (r, count)
}

/// open + parse + resolve + strict view (scan) + explicit validate, one window.
fn open_validate_view(path: &std::path::Path) -> (u64, Count) {
    counted(|| {
        let mapped = MappedFile::open(path, Options::default()).expect("open");
        let file = mapped.file().expect("parse");
        let tensor = file.tensor(TENSOR).expect("tensor");
        let view = tensor.csc::<f32>().expect("strict view (scan)");
        view.validate().expect("validate");
        let first = view.values().first().copied().unwrap_or(0.0);
        std::hint::black_box(first);
        view.nnz()
    })
}

fn main() {
    let ctx = Ctx::from_args();
    let sizes: Vec<u64> = ctx.pick(vec![1_000_000, 10_000_000, 100_000_000], vec![64, 256, 1024]);
    let mut rows = Vec::new();
    for &nnz in &sizes {
        let spec = MatrixSpec::new(Pattern::Random10, Format::Csc, Values::F32, nnz);
        let path = spec.ensure(ctx.dir()).expect("generate");
        // Warm-up: first-use allocations of the runtime are not the reader's.
        open_validate_view(&path);
        let (seen, count) = open_validate_view(&path);
        assert_eq!(seen, nnz);
        let file_bytes = std::fs::metadata(&path).expect("metadata").len();
        println!(
            "heap: nnz = {nnz:>11} ({file_bytes} bytes): open + validate + view = {} allocations, {} bytes",
            count.calls, count.bytes
        );
        rows.push((nnz, file_bytes, count));
    }
    let first = rows[0].2;
    for (nnz, _, count) in &rows {
        assert_eq!(
            *count, first,
            "allocations at nnz = {nnz} differ from nnz = {}",
            rows[0].0
        );
    }
    println!(
        "heap: equal for all sizes: {} allocations, {} bytes",
        first.calls, first.bytes
    );
    if ctx.mode.is_full() {
        let json = serde_json::json!({
            "what": "open + file() + tensor(\"A\") + csc::<f32>() (strict, scans) + validate()",
            "sizes": rows.iter().map(|(nnz, file_bytes, c)| serde_json::json!({
                "nnz": nnz, "file_bytes": file_bytes, "allocations": c.calls, "bytes": c.bytes,
            })).collect::<Vec<_>>(),
            "equal": true,
        });
        let path = write_result("heap.json", &json);
        println!("heap: wrote {}", path.display());
    }
}
