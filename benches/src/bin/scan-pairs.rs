//! The scan targets measured in rotation: on each input of the scan
//! benchmark, every round runs `validate()`, `validate_parallel(2)` and
//! the plain one- and two-thread sums over the same slices once each,
//! starting one further on every round (`timing::rotated`), so that a slow
//! stretch of the host hits the scan and its ceiling alike. Criterion
//! times each routine for seconds and then the next; on the VM of
//! `docs/performance.md` § Run I slow stretches of a second or two moved a
//! scan / sum ratio by up to 0.4 between runs of the same code.
//!
//! Writes `results/scan-pairs.json` (for the `report` binary) and prints
//! it: per input, the median time of each routine and the median over
//! rounds of `sum / validate` (one thread) and `sum2 / validate_parallel(2)`.
//!
//! ```text
//! cargo run --release -p hurray-benches --bin scan-pairs -- [--rounds 15] [--smoke]
//! ```
//! `--smoke` runs on tiny inputs in a tempdir and writes nothing.

#![forbid(unsafe_code)]

use std::hint::black_box;
use std::time::Duration;

use hurray_benches::data::{Format, MatrixSpec, Pattern, Values, TENSOR};
use hurray_benches::kernels::{sum_u64, sum_u64_threads};
use hurray_benches::timing::{median, rotated};
use hurray_benches::{Ctx, RunMode};
use hurray_reader::{MappedFile, Options};

/// The scan targets measured in rotation (see the module docs).
#[derive(clap::Parser)]
#[command(name = "scan-pairs")]
struct Args {
    /// Timed rounds per input (after one untimed round).
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
    let nnz = ctx.pick(100_000_000, 512);
    let mut all = serde_json::Map::new();
    for (group, spec) in inputs(nnz) {
        let result = measure(&ctx, spec, args.rounds);
        eprintln!(
            "scan-pairs: {group}: validate / sum 1t {:.2}, parallel(2) / sum 2t {:.2}",
            result["validate_over_sum_1thread"].as_f64().unwrap_or(f64::NAN),
            result["parallel_over_sum_2threads"].as_f64().unwrap_or(f64::NAN),
        );
        all.insert(group.to_string(), result);
    }
    let all = serde_json::Value::Object(all);
    if !args.smoke {
        hurray_benches::write_result("scan-pairs.json", &all);
    }
    println!("{}", serde_json::to_string_pretty(&all).expect("serialise"));
}
