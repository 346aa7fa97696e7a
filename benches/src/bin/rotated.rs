//! The ratio targets of issue #4 measured in rotation, so that a slow
//! stretch of the host hits a routine and its baseline alike. Criterion
//! times each routine for seconds and then the next; on the VM of
//! `docs/perf-log/run-i.md` slow stretches of a second or two moved a
//! scan / sum ratio by up to 0.4 and the open ratios by up to 0.6 between
//! runs of the same code. Each round runs every routine once (a batch, for
//! the opens), starting one further on every round (`timing::rotated`);
//! a ratio is the median over the rounds of that round's ratio.
//!
//! - `open`: benchmark 1's `open_to_view` on the four files of 8 MiB to
//!   8 GiB and the bare `mmap` + read of one `u64` on each (batches of
//!   200 calls): each size against 8 MiB, and 8 GiB against its bare
//!   baseline.
//! - `scan`: on each input of benchmark 2, `validate()`,
//!   `validate_parallel(2)` and the plain one- and two-thread sums over the
//!   same slices: `sum / validate` (one thread), `sum2 /
//!   validate_parallel(2)`.
//!
//! Writes `results/rotated.json` (for the `report` binary) and prints it.
//!
//! ```text
//! cargo run --release -p hurray-benches --bin rotated -- [--rounds 15] [--smoke]
//! ```
//! `--smoke` runs on tiny inputs in a tempdir and writes nothing.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Duration;

use hurray_benches::data::{ensure_open_file, Format, MatrixSpec, Pattern, Values, TENSOR};
use hurray_benches::kernels::{bare_mmap_read_u64, open_to_view, sum_u64, sum_u64_threads};
use hurray_benches::timing::{median, rotated};
use hurray_benches::{size_label, Ctx, RunMode};
use hurray_reader::{MappedFile, Options};

/// The ratio targets measured in rotation (see the module docs).
#[derive(clap::Parser)]
#[command(name = "rotated")]
struct Args {
    /// Timed rounds per input (after one untimed round); the opens take
    /// twice as many.
    #[arg(long, default_value_t = 15)]
    rounds: usize,
    /// Tiny inputs in a tempdir; nothing written.
    #[arg(long)]
    smoke: bool,
}

/// The inputs of `benches/scan.rs`, with their group names there.
fn inputs(nnz: u64) -> [(&'static str, MatrixSpec); 5] {
    let spec = |pattern, format| MatrixSpec::new(pattern, format, Values::F32, nnz);
    [
        ("csc_random10", spec(Pattern::Random10, Format::Csc)),
        ("csc_short2", spec(Pattern::Short2, Format::Csc)),
        ("csc_onecol", spec(Pattern::OneColumn, Format::Csc)),
        ("csr_random10", spec(Pattern::Random10, Format::Csr)),
        ("coo_random10", spec(Pattern::Random10, Format::CooSorted)),
    ]
}

/// Calls of each open routine per round (one call takes 10–40 µs).
const OPEN_BATCH: u32 = 200;

/// Benchmark 1 in rotation: per size, the median time of one call of
/// `open_to_view` and of the bare baseline, and the median ratios.
fn measure_open(ctx: &Ctx, rounds: usize) -> serde_json::Value {
    let sizes: Vec<u64> = ctx.pick(vec![8 << 20, 256 << 20, 2 << 30, 8 << 30], vec![16 << 10, 64 << 10]);
    let paths: Vec<_> = sizes
        .iter()
        .map(|&size| ensure_open_file(ctx.dir(), size).expect("generate open file"))
        .collect();
    let batch = |f: fn(&std::path::Path) -> u64, path: &std::path::Path| {
        for _ in 0..OPEN_BATCH {
            black_box(f(black_box(path)));
        }
    };
    let mut routines: Vec<Box<dyn FnMut()>> = Vec::new();
    for path in &paths {
        routines.push(Box::new(move || batch(open_to_view, path)));
        routines.push(Box::new(move || batch(bare_mmap_read_u64, path)));
    }
    let mut refs: Vec<&mut dyn FnMut()> = routines.iter_mut().map(|r| &mut **r as &mut dyn FnMut()).collect();
    let times = rotated(rounds, &mut refs);
    let call = |i: usize| -> Vec<f64> {
        times[i]
            .iter()
            .map(|t| t.as_secs_f64() / f64::from(OPEN_BATCH))
            .collect()
    };
    let per_round = |a: usize, b: usize| median(call(a).iter().zip(call(b)).map(|(x, y)| x / y).collect());
    let (view, bare) = (|k: usize| 2 * k, |k: usize| 2 * k + 1);
    let out: Vec<serde_json::Value> = sizes
        .iter()
        .enumerate()
        .map(|(k, &size)| {
            serde_json::json!({
                "size": size_label(size),
                "view_s": median(call(view(k))),
                "bare_s": median(call(bare(k))),
                "view_over_view_smallest": per_round(view(k), view(0)),
                "view_over_bare": per_round(view(k), bare(k)),
            })
        })
        .collect();
    serde_json::json!({
        "rounds": rounds,
        "batch": OPEN_BATCH,
        "sizes": out,
    })
}

fn measure(ctx: &Ctx, spec: MatrixSpec, rounds: usize) -> serde_json::Value {
    let path = ctx.matrix(spec);
    let mapped = MappedFile::open(&path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let tensor = file.tensor(TENSOR).expect("tensor");
    let slices: Vec<&[u64]> = match spec.format {
        Format::Csc => {
            let s = tensor.csc_structure().expect("csc");
            vec![s.col_ptr(), s.row_indices()]
        }
        Format::Csr => {
            let s = tensor.csr_structure().expect("csr");
            vec![s.row_ptr(), s.col_indices()]
        }
        Format::CooSorted => vec![tensor.coo_structure().expect("coo").indices()],
    };
    let validate = |threads: usize| match spec.format {
        Format::Csc => tensor.csc_structure().expect("csc").validate_parallel(threads),
        Format::Csr => tensor.csr_structure().expect("csr").validate_parallel(threads),
        Format::CooSorted => tensor.coo_structure().expect("coo").validate_parallel(threads),
    };
    let times = rotated(
        rounds,
        &mut [
            &mut || validate(1).expect("generated matrix is valid"),
            &mut || validate(2).expect("generated matrix is valid"),
            &mut || {
                black_box(sum_u64(black_box(&slices)));
            },
            &mut || {
                black_box(sum_u64_threads(black_box(&slices), 2));
            },
        ],
    );
    let bytes = slices.iter().map(|s| s.len() * 8).sum::<usize>() as f64;
    let secs = |i: usize| times[i].iter().map(Duration::as_secs_f64).collect::<Vec<f64>>();
    let ratios = |scan: usize, sum: usize| median(secs(scan).iter().zip(secs(sum)).map(|(s, c)| c / s).collect());
    let summary = |i: usize| {
        let m = median(secs(i));
        serde_json::json!({ "median_s": m, "gbps": bytes / m / 1e9 })
    };
    serde_json::json!({
        "file": path,
        "bytes": bytes,
        "rounds": rounds,
        "validate": summary(0),
        "validate_parallel_2threads": summary(1),
        "sum_1thread": summary(2),
        "sum_2threads": summary(3),
        "validate_over_sum_1thread": ratios(0, 2),
        "parallel_over_sum_2threads": ratios(1, 3),
    })
}

fn main() {
    let args: Args = clap::Parser::parse();
    let ctx = Ctx::new(if args.smoke { RunMode::Smoke } else { RunMode::Full });
    let open = measure_open(&ctx, args.rounds.saturating_mul(2));
    if let Some(largest) = open["sizes"].as_array().and_then(|s| s.last()) {
        eprintln!(
            "rotated: open {}: {:.2}x of the smallest, {:.2}x of the bare mmap",
            largest["size"].as_str().unwrap_or_default(),
            largest["view_over_view_smallest"].as_f64().unwrap_or(f64::NAN),
            largest["view_over_bare"].as_f64().unwrap_or(f64::NAN),
        );
    }
    let nnz = ctx.pick(100_000_000, 512);
    let mut scan = serde_json::Map::new();
    for (group, spec) in inputs(nnz) {
        let result = measure(&ctx, spec, args.rounds);
        eprintln!(
            "rotated: scan {group}: validate / sum 1t {:.2}, parallel(2) / sum 2t {:.2}",
            result["validate_over_sum_1thread"].as_f64().unwrap_or(f64::NAN),
            result["parallel_over_sum_2threads"].as_f64().unwrap_or(f64::NAN),
        );
        scan.insert(group.to_string(), result);
    }
    let all = serde_json::json!({ "open": open, "scan": scan });
    if !args.smoke {
        hurray_benches::write_result("rotated.json", &all);
    }
    println!("{}", serde_json::to_string_pretty(&all).expect("serialise"));
}
