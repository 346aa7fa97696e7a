//! Prints the tables of a run (kept in `docs/perf-log/runs/`, summed up in
//! `docs/performance.md`) from one run's results:
//! criterion's estimates (`target/criterion/**/new/*.json`), `heap.json` and
//! `peers.json` from the results folder. `benches/report.sh` runs everything
//! and then this.
//!
//! ```text
//! cargo run --release -p hurray-benches --bin report -- [--criterion DIR] [--results DIR]
//! ```

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// One criterion benchmark: median time and throughput.
#[derive(Debug, Clone)]
struct Bench {
    median_ns: f64,
    bytes: Option<f64>,
    elements: Option<f64>,
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// full_id -> bench, for every `new/benchmark.json` under `dir`.
fn criterion_results(dir: &Path) -> BTreeMap<String, Bench> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "new") {
                    if let (Some(b), Some(est)) = (
                        read_json(&p.join("benchmark.json")),
                        read_json(&p.join("estimates.json")),
                    ) {
                        let id = b["full_id"].as_str().unwrap_or_default().to_string();
                        out.insert(
                            id,
                            Bench {
                                median_ns: est["median"]["point_estimate"].as_f64().unwrap_or(f64::NAN),
                                bytes: b["throughput"]["Bytes"].as_f64(),
                                elements: b["throughput"]["Elements"].as_f64(),
                            },
                        );
                    }
                } else {
                    stack.push(p);
                }
            }
        }
    }
    out
}

fn time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn gbps(b: &Bench) -> f64 {
    b.bytes.unwrap_or(f64::NAN) / b.median_ns
}

fn met(ok: bool) -> &'static str {
    if ok {
        "yes"
    } else {
        "**no**"
    }
}

fn command_output(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn machine() {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("?")
        .trim()
        .to_string();
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|k| k.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0 / 1024.0);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    // HURRAY_BENCH_REV describes the source when it is not a git checkout.
    let source = std::env::var("HURRAY_BENCH_REV").unwrap_or_else(|_| {
        let head = command_output("git", &["-C", root, "rev-parse", "--short", "HEAD"]);
        let dirty = command_output("git", &["-C", root, "status", "--porcelain", "--", "crates"]);
        match (head.is_empty(), dirty.is_empty()) {
            (true, _) => "source: not a git checkout".to_string(),
            (false, true) => format!("git {head}, library crates clean"),
            (false, false) => format!("git {head}, library crates modified in the working tree"),
        }
    });
    println!(
        "Machine: {model}, {cpus} vCPU, {mem:.1} GiB RAM; {}; {}; {source}; release profile, loop heads aligned to 64 bytes (.cargo/config.toml), no target-cpu.",
        command_output("rustc", &["-V"]),
        command_output("uname", &["-sr"]),
    );
    println!();
}

fn open_table(c: &BTreeMap<String, Bench>) {
    println!("### 1. Open latency (`cargo bench -p hurray-benches --bench open`)");
    println!();
    println!("| file | open → unscanned view | open → first value | bare open + mmap + read u64 | view / bare | view / view@8MiB |");
    println!("|---|---:|---:|---:|---:|---:|");
    let sizes = ["8MiB", "256MiB", "2GiB", "8GiB"];
    let get = |f: &str, s: &str| c.get(&format!("open/{f}/{s}")).map(|b| b.median_ns);
    let small = get("hurray_open_unscanned", "8MiB");
    for s in sizes {
        let (Some(ours), Some(first), Some(bare)) = (
            get("hurray_open_unscanned", s),
            get("hurray_open_to_first_value", s),
            get("mmap_read_u64_baseline", s),
        ) else {
            continue;
        };
        let vs_small = small.map_or(f64::NAN, |m| ours / m);
        println!(
            "| {s} | {} | {} | {} | {:.2}x | {:.2}x |",
            time(ours),
            time(first),
            time(bare),
            ours / bare,
            vs_small
        );
    }
    if let (Some(big), Some(small), Some(bare)) = (
        get("hurray_open_unscanned", "8GiB"),
        small,
        get("mmap_read_u64_baseline", "8GiB"),
    ) {
        println!();
        println!(
            "Targets: 8 GiB within 1.5x of 8 MiB: {:.2}x, {}; within 3x of the bare mmap baseline: {:.2}x, {}.",
            big / small,
            met(big / small <= 1.5),
            big / bare,
            met(big / bare <= 3.0)
        );
    }
    println!();
}

/// The scan groups, in table order.
const SCAN_GROUPS: [&str; 5] = [
    "scan_csc_random10",
    "scan_csc_short2",
    "scan_csc_onecol",
    "scan_csr_random10",
    "scan_coo_random10",
];

/// Scan groups whose one-thread sum ran below 0.8 of the fastest group's
/// (GB/s): the memory path itself was slower while they ran (on this VM,
/// pages of an input paged out and faulted back in small folios), so
/// their scan / sum ratios do not compare with the others'. With the
/// fastest sum's GB/s.
fn slowed_ceilings(c: &BTreeMap<String, Bench>) -> (Vec<&'static str>, f64) {
    let sum = |g: &str| c.get(&format!("{g}/sum_1thread")).map(gbps);
    let best = SCAN_GROUPS.iter().filter_map(|g| sum(g)).fold(0f64, f64::max);
    let slowed = SCAN_GROUPS
        .into_iter()
        .filter(|g| sum(g).is_some_and(|v| v < 0.8 * best))
        .collect();
    (slowed, best)
}

/// The fastest one-thread sum this machine has given (GB/s), kept in
/// `results/ceiling.json` and raised when `run_best` beats it; `run_best`
/// when there is no record yet. A run whose fastest sum stays well below it
/// had a slower memory path throughout, which raises every scan / sum
/// ratio (the scan is partly compute-bound).
fn recorded_ceiling(results: &Path, run_best: f64) -> f64 {
    let path = results.join("ceiling.json");
    let recorded = read_json(&path).and_then(|v| v["best_sum_1thread_gbps"].as_f64());
    if recorded.is_none_or(|r| run_best > r) && run_best > 0.0 {
        let record = serde_json::json!({ "best_sum_1thread_gbps": run_best });
        if let Err(e) = std::fs::write(&path, format!("{record:#}\n")) {
            eprintln!("report: cannot write {}: {e}", path.display());
        }
    }
    recorded.map_or(run_best, |r| r.max(run_best))
}

/// The ceiling checks of one run, worked out once for the scan table and
/// the targets.
struct Ceilings {
    /// [`slowed_ceilings`]: the scan groups not judged, and the fastest
    /// one-thread sum of the run (GB/s).
    slowed: Vec<&'static str>,
    best: f64,
    /// [`recorded_ceiling`].
    record: f64,
}

impl Ceilings {
    fn of(c: &BTreeMap<String, Bench>, results: &Path) -> Ceilings {
        let (slowed, best) = slowed_ceilings(c);
        let record = recorded_ceiling(results, best);
        Ceilings { slowed, best, record }
    }

    /// Whether this run's fastest one-thread sum is below 0.9 of the record.
    fn low(&self) -> bool {
        self.best < 0.9 * self.record
    }
}

/// The cells of one scan group's rows: a benchmark's GB/s and median
/// (`cell(name)`), and the ratio of two benchmarks' GB/s (`ratio(num, den)`).
fn scan_cells<'a>(
    c: &'a BTreeMap<String, Bench>,
    group: &'a str,
) -> (impl Fn(&str) -> String + 'a, impl Fn(&str, &str) -> String + 'a) {
    let b = move |f: &str| c.get(&format!("{group}/{f}"));
    let cell = move |f: &str| {
        b(f).map_or("–".to_string(), |x| {
            format!("{:.1} GB/s ({})", gbps(x), time(x.median_ns))
        })
    };
    let ratio = move |num: &str, den: &str| match (b(num), b(den)) {
        (Some(n), Some(d)) => format!("{:.2}", gbps(n) / gbps(d)),
        _ => "–".to_string(),
    };
    (cell, ratio)
}

/// Benchmark 1 in rotation (`rotated.json`, `open`).
fn open_rotation(opens: Option<&Value>) {
    let Some(o) = opens else {
        println!("No `rotated.json`: the opens were not measured in rotation (`--bin rotated`).");
        println!();
        return;
    };
    let num = |key: &str| o.get(key).and_then(Value::as_u64).unwrap_or(0);
    println!(
        "In rotation (`cargo run --release -p hurray-benches --bin rotated`: {} rounds of {} calls of each; \
         ratios are medians over the rounds of each round's ratio):",
        num("rounds"),
        num("batch")
    );
    println!();
    println!("| file | open → unscanned view | bare open + mmap + read u64 | view / bare | view / view@8MiB |");
    println!("|---|---:|---:|---:|---:|");
    for v in o.get("sizes").and_then(Value::as_array).into_iter().flatten() {
        let f = |key: &str| v.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN);
        println!(
            "| {} | {} | {} | {:.2}x | {:.2}x |",
            v["size"].as_str().unwrap_or("?"),
            time(f("view_s") * 1e9),
            time(f("bare_s") * 1e9),
            f("view_over_bare"),
            f("view_over_view_smallest")
        );
    }
    println!();
}

/// A number of `rotated.json`'s `scan` (`group`, then a JSON pointer into it).
fn pair(pairs: Option<&Value>, group: &str, key: &str) -> Option<f64> {
    pairs?.get(group)?.pointer(key)?.as_f64()
}

/// The rotated groups whose one-thread sum ran below 0.8 of the fastest
/// rotated sum: not judged, as in [`slowed_ceilings`].
fn rotation_slowed(pairs: Option<&Value>, group: &str) -> bool {
    let sum = |g: &str| pair(pairs, g, "/sum_1thread/gbps");
    let best = SCAN_GROUPS
        .iter()
        .filter_map(|g| sum(g.trim_start_matches("scan_")))
        .fold(0f64, f64::max);
    sum(group).is_some_and(|v| v < 0.8 * best)
}

/// The scans and sums of `rotated` (rotated in every round).
fn rotation_table(pairs: Option<&Value>) {
    let Some(rounds) = pairs.and_then(|p| p.as_object()?.values().next()?.get("rounds")?.as_u64()) else {
        println!("No `rotated.json`: the scans were not measured in rotation (`--bin rotated`).");
        println!();
        return;
    };
    println!(
        "In rotation (`cargo run --release -p hurray-benches --bin rotated`: {rounds} rounds, each running \
         the four once, starting one further on each round; ratios are medians over the rounds of each \
         round's ratio):"
    );
    println!();
    println!("| input | validate | validate_parallel(2) | sum 1 thread | sum 2 threads | validate / sum 1t | parallel(2) / sum 2t |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for group in SCAN_GROUPS {
        let group = group.trim_start_matches("scan_");
        let cell = |key: &str| match (
            pair(pairs, group, &format!("/{key}/gbps")),
            pair(pairs, group, &format!("/{key}/median_s")),
        ) {
            (Some(g), Some(s)) => format!("{g:.1} GB/s ({})", time(s * 1e9)),
            _ => "–".to_string(),
        };
        let ratio = |key: &str| pair(pairs, group, &format!("/{key}")).map_or("–".to_string(), |r| format!("{r:.2}"));
        println!(
            "| {group} | {} | {} | {} | {} | {} | {} |",
            cell("validate"),
            cell("validate_parallel_2threads"),
            cell("sum_1thread"),
            cell("sum_2threads"),
            ratio("validate_over_sum_1thread"),
            ratio("parallel_over_sum_2threads"),
        );
    }
    println!();
}

fn scan_table(c: &BTreeMap<String, Bench>, ceilings: &Ceilings) {
    println!("### 2. Invariant scan (`cargo bench -p hurray-benches --bench scan`)");
    println!();
    println!("GB/s = (pointer + index bytes) / median time; 1 GB = 10⁹ B. Ratios: scan GB/s / ceiling GB/s.");
    println!();
    println!(
        "| input | bytes | validate | validate_parallel(2) | naive check | 2-thread local | sum 1 thread | sum 2 threads \
         | validate / sum 1t | parallel(2) / sum 2t |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for group in SCAN_GROUPS {
        let Some(v) = c.get(&format!("{group}/validate")) else {
            continue;
        };
        let (cell, ratio) = scan_cells(c, group);
        println!(
            "| {} | {:.2} GB | {} | {} | {} | {} | {} | {} | {} | {} |",
            group.trim_start_matches("scan_"),
            v.bytes.unwrap_or(f64::NAN) / 1e9,
            cell("validate"),
            cell("validate_parallel_2threads"),
            cell("naive_check"),
            cell("local_validate_2threads"),
            cell("sum_1thread"),
            cell("sum_2threads"),
            ratio("validate", "sum_1thread"),
            ratio("validate_parallel_2threads", "sum_2threads"),
        );
    }
    println!();
    println!(
        "Against the sums with the scans' prefetch (16 KiB ahead; the plain sums above are the issue's baseline, \
         these show how much of the bandwidth the scans use):"
    );
    println!();
    println!(
        "| input | prefetched sum 1 thread | prefetched sum 2 threads | plain / prefetched sum 1t \
         | validate / prefetched 1t | parallel(2) / prefetched 2t |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for group in SCAN_GROUPS {
        if !c.contains_key(&format!("{group}/validate")) {
            continue;
        }
        let (cell, ratio) = scan_cells(c, group);
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            group.trim_start_matches("scan_"),
            cell("sum_1thread_prefetched"),
            cell("sum_2threads_prefetched"),
            ratio("sum_1thread", "sum_1thread_prefetched"),
            ratio("validate", "sum_1thread_prefetched"),
            ratio("validate_parallel_2threads", "sum_2threads_prefetched"),
        );
    }
    let Ceilings { slowed, best, record } = ceilings;
    println!();
    if slowed.is_empty() {
        print!("Ceiling check: every input's one-thread sum within 0.8 of the fastest ({best:.1} GB/s).");
    } else {
        let names: Vec<&str> = slowed.iter().map(|g| g.trim_start_matches("scan_")).collect();
        print!(
            "Ceiling check: the one-thread sum of {} ran below 0.8 of the fastest ({best:.1} GB/s): the memory \
             path was slower during those groups, so their ratios are not judged against the targets; rerun.",
            names.join(", ")
        );
    }
    print!(
        " Fastest one-thread sum on this machine so far: {record:.1} GB/s (`results/ceiling.json`); this run's \
         fastest is {:.2} of it",
        best / record
    );
    if ceilings.low() {
        println!(
            ": below 0.9, the memory path was slower for the whole run, which raises every scan / sum ratio; \
             a scan target reached only at such a ceiling is marked \"not counted\"."
        );
    } else {
        println!(".");
    }
    println!();
}

fn access_tables(c: &BTreeMap<String, Bench>, peers: Option<&Value>) {
    println!("### 3. Access (`cargo bench -p hurray-benches --bench access`)");
    println!();
    println!("| benchmark | median | rate |");
    println!("|---|---:|---:|");
    for (id, b) in c.iter().filter(|(id, _)| id.starts_with("access_")) {
        let rate = b.elements.map_or(String::new(), |n| {
            let per_s = n / b.median_ns * 1e9;
            if id.starts_with("access_get") {
                format!("{:.2} M lookups/s ({:.0} ns each)", per_s / 1e6, b.median_ns / n)
            } else {
                format!("{:.2} G elements/s", per_s / 1e9)
            }
        });
        println!("| `{id}` | {} | {rate} |", time(b.median_ns));
    }
    println!();
    println!(
        "| SpMV (100 M nnz, 10 M × 10 M, u64 indices) | median | G nnz/s | scipy int64 (same run, peers) \
         | scipy int64 / ours | scipy int32 | scipy int32 / ours |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (id, b) in c.iter().filter(|(id, _)| id.starts_with("spmv_")) {
        let rate = b.elements.map_or(f64::NAN, |n| n / b.median_ns);
        let key = match id.as_str() {
            "spmv_f32/csc_Ax_mul_vec"
            | "spmv_f32/csc_Ax_mul_vec_parallel_2threads"
            | "spmv_f32/csc_Ax_direct_scatter"
            | "spmv_f32/csc_Ax_column_api" => Some("spmv_Ax"),
            "spmv_f32/csr_of_At_Atx_mul_vec" => Some("spmv_Atx"),
            _ => None,
        };
        let scipy = |suffix: &str| {
            let s = peers
                .zip(key)
                .and_then(|(p, k)| p[format!("{k}{suffix}")]["median_s"].as_f64());
            s.map_or(("–".to_string(), "–".to_string()), |s| {
                (time(s * 1e9), format!("{:.2}x", s * 1e9 / b.median_ns))
            })
        };
        let ((s64, r64), (s32, r32)) = (scipy(""), scipy("_int32"));
        println!(
            "| `{id}` | {} | {rate:.2} | {s64} | {r64} | {s32} | {r32} |",
            time(b.median_ns)
        );
    }
    println!();
    // Aᵀ·x against its ceiling, as the scan is against the plain sum.
    let median = |id: &str| c.get(id).map(|b| b.median_ns);
    let scipy = peers.and_then(|p| p["spmv_Atx"]["median_s"].as_f64()).map(|s| s * 1e9);
    let against = |gather: &str, ty: &str, product: Option<f64>| {
        let r = median(&format!("spmv_{ty}/gather_x_at_row_indices_{gather}")).zip(product);
        r.map_or("–".to_owned(), |(g, p)| format!("{:.2}x", g / p))
    };
    let ours = |ty: &str| median(&format!("spmv_{ty}/csr_of_At_Atx_mul_vec"));
    println!(
        "Aᵀ·x against its reads of `x` alone (the sum of `x[row_indices[k]]` in the product's order; speed = \
         gather time / product time): against the prefetched gather, its ceiling (`gather_x_at_row_indices_ceiling`), \
         `CsrView::mul_vec` f32 {}, f64 {}; against the plain gather (`gather_x_at_row_indices_plain`), \
         `CsrView::mul_vec` f32 {}, f64 {}, scipy's `A.T @ x` (int64, f32, peers run) {}.",
        against("ceiling", "f32", ours("f32")),
        against("ceiling", "f64", ours("f64")),
        against("plain", "f32", ours("f32")),
        against("plain", "f64", ours("f64")),
        against("plain", "f32", scipy),
    );
    println!();
}

fn heap_table(results: &Path) {
    println!("### 4. Heap (`cargo bench -p hurray-benches --bench heap`)");
    println!();
    let Some(h) = read_json(&results.join("heap.json")) else {
        println!("(no heap.json)");
        println!();
        return;
    };
    println!("| nnz | file bytes | allocations | bytes allocated |");
    println!("|---:|---:|---:|---:|");
    let sizes = h["sizes"].as_array().cloned().unwrap_or_default();
    for s in &sizes {
        println!(
            "| {} | {} | {} | {} |",
            s["nnz"], s["file_bytes"], s["allocations"], s["bytes"]
        );
    }
    let equal = sizes
        .windows(2)
        .all(|w| w[0]["allocations"] == w[1]["allocations"] && w[0]["bytes"] == w[1]["bytes"]);
    println!();
    println!(
        "Window: {}. Equal for all sizes: {}.",
        h["what"].as_str().unwrap_or("?"),
        met(equal)
    );
    println!();
}

fn peers_table(p: &Value) {
    println!("### 5. Peers (`benches/peers/run.sh`)");
    println!();
    let ours = &p["ours"];
    let med = |v: &Value| v["median_s"].as_f64().unwrap_or(f64::NAN) * 1e9;
    println!(
        "{} × {}, {} non-zeros, {}, .hry {} bytes, .npz {} bytes (uncompressed); numpy {}, scipy {}, Python {}; \
         load_npz returns `{}` indices.",
        p["shape"][0],
        p["shape"][1],
        p["nnz"],
        p["values"].as_str().unwrap_or("?"),
        p["hry_bytes"],
        p["npz_bytes"],
        p["numpy"].as_str().unwrap_or("?"),
        p["scipy"].as_str().unwrap_or("?"),
        p["python"].as_str().unwrap_or("?"),
        p["load_npz_index_dtype"].as_str().unwrap_or("?"),
    );
    println!();
    println!("| what | ours | median | scipy | median | scipy / ours | target | met |");
    println!("|---|---|---:|---|---:|---:|---|---|");
    let process = &p["process"];
    // (what, ours, our time, scipy, scipy time, target ratio)
    type Row<'a> = (&'a str, &'a str, f64, &'a str, f64, Option<f64>);
    let rows: [Row<'_>; 19] = [
        (
            "validation",
            "`CscStructure::validate()`",
            med(&ours["validate"]),
            "`check_format(full_check=True)` + `has_canonical_format`, int64",
            med(&p["checks_both"]),
            Some(3.0),
        ),
        (
            "validation, 2 threads",
            "`CscStructure::validate_parallel(2)`",
            med(&ours["validate_parallel_2threads"]),
            "same two checks, int64",
            med(&p["checks_both"]),
            None,
        ),
        (
            "validation, 2 threads (bench stand-in)",
            "`kernels::validate_threads(.., 2)`",
            med(&ours["validate_2threads_local"]),
            "same two checks, int64",
            med(&p["checks_both"]),
            None,
        ),
        (
            "validation (scipy int32)",
            "`CscStructure::validate()`",
            med(&ours["validate"]),
            "same two checks, int32 (`load_npz`'s matrix)",
            med(&p["checks_both_int32"]),
            None,
        ),
        (
            "open to first value",
            "open + `csc_unscanned` + first value",
            med(&ours["open_to_first_value"]),
            "`load_npz` + first value",
            med(&p["load_npz_to_first_value"]),
            Some(1000.0),
        ),
        (
            "open to validated view",
            "open + strict `csc::<f32>()`",
            med(&ours["open_to_validated_view"]),
            "`load_npz` + both checks (int32)",
            med(&p["load_npz"]) + med(&p["checks_both_int32"]),
            None,
        ),
        (
            "whole-process validate",
            "`hurray-inspect --validate` (threads: all available)",
            med(&process["hurray-inspect --validate"]),
            "`python -c` load_npz + both checks",
            med(&process["python load_npz + checks"]),
            Some(20.0),
        ),
        (
            "whole-process validate, 1 thread",
            "`hurray-inspect --validate --threads 1`",
            med(&process["hurray-inspect --validate --threads 1"]),
            "`python -c` load_npz + both checks",
            med(&process["python load_npz + checks"]),
            None,
        ),
        (
            "whole-process validate (Python int64)",
            "`hurray-inspect --validate`",
            med(&process["hurray-inspect --validate"]),
            "`python -c` np.load (int64, no downcast) + both checks",
            med(&process["python int64 + checks"]),
            None,
        ),
        (
            "(python start + import scipy.sparse)",
            "",
            f64::NAN,
            "`python -c 'import scipy.sparse'`",
            med(&process["python import scipy.sparse only"]),
            None,
        ),
        (
            "SpMV y = A·x",
            "`CscView::mul_vec`",
            med(&ours["spmv_csc_Ax"]),
            "`A @ x`, int64",
            med(&p["spmv_Ax"]),
            Some(1.5),
        ),
        (
            "SpMV y = A·x, 2 threads",
            "`CscView::mul_vec_parallel(.., 2)`",
            med(&ours["spmv_csc_Ax_2threads"]),
            "`A @ x`, int64 (scipy: one thread)",
            med(&p["spmv_Ax"]),
            None,
        ),
        (
            "SpMV y = A·x, direct scatter",
            "`kernels::spmv_csc_direct` (`mul_vec`'s path for a small `y`)",
            med(&ours["spmv_csc_Ax_direct"]),
            "`A @ x`, int64",
            med(&p["spmv_Ax"]),
            None,
        ),
        (
            "SpMV y = Aᵀ·x",
            "`CsrView::mul_vec` on `A.transpose()`",
            med(&ours["spmv_csr_of_At_Atx"]),
            "`A.T @ x`, int64",
            med(&p["spmv_Atx"]),
            // The issue's SpMV target is the CSC product (A·x); this one is
            // measured beside it (docs/perf-log/run-k.md).
            None,
        ),
        (
            "SpMV y = Aᵀ·x, 2 threads",
            "`CsrView::mul_vec_parallel(.., 2)` on `A.transpose()`",
            med(&ours["spmv_csr_of_At_Atx_2threads"]),
            "`A.T @ x`, int64 (scipy: one thread)",
            med(&p["spmv_Atx"]),
            None,
        ),
        (
            "SpMV y = A·x (scipy int32)",
            "`CscView::mul_vec`",
            med(&ours["spmv_csc_Ax"]),
            "`A @ x`, int32",
            med(&p["spmv_Ax_int32"]),
            None,
        ),
        (
            "SpMV y = Aᵀ·x (scipy int32)",
            "`CsrView::mul_vec` on `A.transpose()`",
            med(&ours["spmv_csr_of_At_Atx"]),
            "`A.T @ x`, int32",
            med(&p["spmv_Atx_int32"]),
            None,
        ),
        (
            "SpMV y = A·x, 4 KiB pages",
            "`CscView::mul_vec`, x and y in `Vec`s",
            med(&ours["spmv_csc_Ax_vec_4k_pages"]),
            "`A @ x`, int64",
            med(&p["spmv_Ax"]),
            None,
        ),
        (
            "SpMV y = Aᵀ·x, 4 KiB pages",
            "`CsrView::mul_vec`, x and y in `Vec`s",
            med(&ours["spmv_csr_of_At_Atx_vec_4k_pages"]),
            "`A.T @ x`, int64",
            med(&p["spmv_Atx"]),
            None,
        ),
    ];
    for (what, o, ot, s, st, target) in rows {
        let ratio = st / ot;
        let (t, m) = target.map_or(("–".to_string(), "–"), |t| (format!("≥ {t}x"), met(ratio >= t)));
        let ot_s = if ot.is_nan() { "–".to_string() } else { time(ot) };
        let r = if ratio.is_nan() {
            "–".to_string()
        } else {
            times(ratio)
        };
        println!("| {what} | {o} | {ot_s} | {s} | {} | {r} | {t} | {m} |", time(st));
    }
    println!();
    println!(
        "Whole processes timed with {} ({} CPUs available). SpMV cross-check, |Σy(scipy) − Σy(ours)| / |Σy|: \
         {:.1e} (A·x), {:.1e} (Aᵀ·x); scipy int32 and int64 give identical y: {}; `mul_vec` (blocked) and the \
         direct scatter give identical y, bit for bit: {}; `mul_vec_parallel` on two threads and `mul_vec`, \
         bit for bit: {} (A·x), {} (Aᵀ·x).",
        process["hurray-inspect --validate"]["tool"].as_str().unwrap_or("?"),
        p["threads_available"],
        p["sum_y_rel_diff"].as_f64().unwrap_or(f64::NAN),
        p["sum_z_rel_diff"].as_f64().unwrap_or(f64::NAN),
        p["spmv_int32_same_y"],
        ours["spmv_csc_Ax_direct_same_bits"],
        ours["spmv_csc_Ax_2threads_same_bits"],
        ours["spmv_csr_of_At_Atx_2threads_same_bits"],
    );
    println!();
}

fn targets(
    c: &BTreeMap<String, Bench>,
    peers: Option<&Value>,
    (opens, pairs): (Option<&Value>, Option<&Value>),
    results: &Path,
    ceilings: &Ceilings,
) {
    println!("### Targets of issue #4");
    println!();
    println!("| target | measured | met |");
    println!("|---|---:|---|");
    let get = |id: &str| c.get(id).map(|b| b.median_ns);
    let row = |name: &str, value: Option<f64>, ok: &dyn Fn(f64) -> bool| match value {
        Some(v) => println!("| {name} | {} | {} |", times(v), met(ok(v))),
        None => println!("| {name} | not measured | – |"),
    };
    let big = get("open/hurray_open_unscanned/8GiB");
    let ratio = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
    // Judged on the rotated measurement when there is one.
    let largest = opens.and_then(|o| o.get("sizes")?.as_array()?.last());
    let open_row = |name: &str, criterion: Option<f64>, key: &str, bound: f64| match largest
        .filter(|l| l["size"] == "8GiB")
        .and_then(|l| l[key].as_f64())
    {
        Some(r) => {
            let criterion = criterion.map_or("–".to_string(), times);
            println!(
                "| {name} | {} in rotation (criterion {criterion}) | {} |",
                times(r),
                met(r <= bound)
            );
        }
        None => row(name, criterion, &|v| v <= bound),
    };
    open_row(
        "open → view, 8 GiB within 1.5x of 8 MiB",
        ratio(big, get("open/hurray_open_unscanned/8MiB")),
        "view_over_view_smallest",
        1.5,
    );
    open_row(
        "open → view, 8 GiB within 3x of bare open + mmap + read u64",
        ratio(big, get("open/mmap_read_u64_baseline/8GiB")),
        "view_over_bare",
        3.0,
    );
    let med = |p: &Value, key: &str| p[key]["median_s"].as_f64();
    let ours = |key: &str| peers.and_then(|p| med(&p["ours"], key));
    let scipy = |key: &str| peers.and_then(|p| med(p, key));
    // The scan against its ceilings, per input: judged on the rotated
    // measurement when there is one (criterion's shown beside it).
    let scan = |group: &str, f: &str| c.get(&format!("scan_{group}/{f}")).map(gbps);
    let judged = |group: &str, name: &str, value: Option<f64>, rotated: Option<f64>| {
        if let Some(r) = rotated {
            let criterion = value.map_or("–".to_string(), |v| format!("{v:.2}x"));
            // The same rules as for criterion's figures: a group whose sum
            // ran slow is not judged, and a target reached in a run whose
            // memory path was slow throughout is not counted.
            let verdict = if rotation_slowed(pairs, group) {
                "not judged (its sum ran slow, see section 2)"
            } else if ceilings.low() && r >= 0.8 {
                "not counted (low ceiling, see section 2)"
            } else {
                met(r >= 0.8)
            };
            println!("| {name} | {r:.2}x in rotation (criterion {criterion}) | {verdict} |");
        } else if ceilings.slowed.iter().any(|g| g.trim_start_matches("scan_") == group) {
            match value {
                Some(v) => println!("| {name} | {v:.2}x | not judged (ceiling slowed, see section 2) |"),
                None => println!("| {name} | not measured | – |"),
            }
        } else if ceilings.low() && value.is_some_and(|v| v >= 0.8) {
            println!(
                "| {name} | {:.2}x | not counted (low ceiling, see section 2) |",
                value.unwrap_or_default()
            );
        } else {
            row(name, value, &|v| v >= 0.8);
        }
    };
    for (group, what) in [
        ("csc_random10", "random10, ~10 per column"),
        ("csc_short2", "short2, ~2 per column"),
        ("csc_onecol", "onecol, one huge column"),
        ("csr_random10", "CSR random10"),
        ("coo_random10", "sorted COO random10"),
    ] {
        judged(
            group,
            &format!("{what}: validate ≥ 0.8x one-thread sum"),
            ratio(scan(group, "validate"), scan(group, "sum_1thread")),
            pair(pairs, group, "/validate_over_sum_1thread"),
        );
        judged(
            group,
            &format!("{what}: validate_parallel(2) ≥ 0.8x two-thread sum"),
            ratio(scan(group, "validate_parallel_2threads"), scan(group, "sum_2threads")),
            pair(pairs, group, "/parallel_over_sum_2threads"),
        );
    }
    row(
        "validation ≥ 3x faster than scipy check_format(full) + has_canonical_format (int64)",
        ratio(scipy("checks_both"), ours("validate")),
        &|v| v >= 3.0,
    );
    row(
        "(same, with validate_parallel(2))",
        ratio(scipy("checks_both"), ours("validate_parallel_2threads")),
        &|v| v >= 3.0,
    );
    row(
        "open to first value ≥ 1000x faster than load_npz (1.28 GB file)",
        ratio(scipy("load_npz_to_first_value"), ours("open_to_first_value")),
        &|v| v >= 1000.0,
    );
    let process = |key: &str| peers.and_then(|p| p["process"][key]["median_s"].as_f64());
    row(
        "whole-process validate ≥ 20x faster than the Python equivalent (default threads)",
        ratio(
            process("python load_npz + checks"),
            process("hurray-inspect --validate"),
        ),
        &|v| v >= 20.0,
    );
    row(
        "(same, --threads 1)",
        ratio(
            process("python load_npz + checks"),
            process("hurray-inspect --validate --threads 1"),
        ),
        &|v| v >= 20.0,
    );
    row(
        "SpMV A·x ≥ 1.5x faster than scipy (int64)",
        ratio(scipy("spmv_Ax"), ours("spmv_csc_Ax")),
        &|v| v >= 1.5,
    );
    // The issue's SpMV target is the CSC product; Aᵀ·x is shown beside it.
    let aside = "(SpMV Aᵀ·x through the CSR transpose: no target, the issue's is the CSC product)";
    match ratio(scipy("spmv_Atx"), ours("spmv_csr_of_At_Atx")) {
        Some(v) => println!("| {aside} | {} | – |", times(v)),
        None => println!("| {aside} | not measured | – |"),
    }
    let heap_equal = read_json(&results.join("heap.json")).and_then(|h| {
        let sizes = h["sizes"].as_array()?.clone();
        Some(
            sizes
                .windows(2)
                .all(|w| w[0]["bytes"] == w[1]["bytes"] && w[0]["allocations"] == w[1]["allocations"]),
        )
    });
    match heap_equal {
        Some(eq) => println!(
            "| heap: equal allocations for 1 M, 10 M, 100 M nnz | {} | {} |",
            if eq { "equal" } else { "differ" },
            met(eq)
        ),
        None => println!("| heap: equal allocations for 1 M, 10 M, 100 M nnz | not measured | – |"),
    }
    println!();
}

/// The tables of a run (`docs/perf-log/runs/`) from criterion's results and the JSON
/// of the other benchmarks.
#[derive(clap::Parser)]
#[command(name = "report")]
struct Args {
    /// criterion's output folder [default: $CARGO_TARGET_DIR/criterion,
    /// else the workspace's target/criterion].
    #[arg(long)]
    criterion: Option<PathBuf>,
    /// The folder of heap.json, peers.json, hurray-time.json [default: the
    /// cache folder's results/].
    #[arg(long)]
    results: Option<PathBuf>,
    /// Only list the scan groups whose one-thread sum ran slow (for
    /// benches/report.sh, which measures them again).
    #[arg(long)]
    slowed: bool,
}

fn main() {
    let args: Args = clap::Parser::parse();
    let criterion = args.criterion.unwrap_or_else(|| {
        std::env::var_os("CARGO_TARGET_DIR")
            .map_or_else(
                || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target")),
                PathBuf::from,
            )
            .join("criterion")
    });
    let results = args.results.unwrap_or_else(hurray_benches::results_dir);
    let slowed_only = args.slowed;
    let c = criterion_results(&criterion);
    if slowed_only {
        // For benches/report.sh: the scan groups to measure again.
        for group in slowed_ceilings(&c).0 {
            println!("{group}");
        }
        return;
    }
    let peers = read_json(&results.join("peers.json"));
    let rotated = read_json(&results.join("rotated.json"));
    let pairs = rotated.as_ref().and_then(|r| r.get("scan"));
    let opens = rotated.as_ref().and_then(|r| r.get("open"));
    let ceilings = Ceilings::of(&c, &results);
    machine();
    open_table(&c);
    open_rotation(opens);
    scan_table(&c, &ceilings);
    rotation_table(pairs);
    access_tables(&c, peers.as_ref());
    heap_table(&results);
    match &peers {
        Some(p) => peers_table(p),
        None => println!("### 5. Peers: no peers.json (run benches/peers/run.sh)\n"),
    }
    targets(&c, peers.as_ref(), (opens, pairs), &results, &ceilings);
}

/// A ratio: two decimals near the targets (1.45x is not "1.5x"), none for
/// the large ones of open to first value.
fn times(ratio: f64) -> String {
    if ratio < 100.0 {
        format!("{ratio:.2}x")
    } else {
        format!("{ratio:.0}x")
    }
}
