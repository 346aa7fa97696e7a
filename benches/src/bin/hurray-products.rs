//! The reader's sparse products on one CSC file, timed on request, for
//! `benches/peers/products.py`, which times scipy and MKL in its own
//! process and asks this one for ours in turn (A B A B …), so that a slow
//! stretch of the machine hits every library alike.
//!
//! ```text
//! cargo run --release -p hurray-benches --bin hurray-products -- FILE.hry
//! ```
//!
//! Opens tensor `A` (float32 or float64 CSC, strict view: scanned once),
//! settles the file in the page cache (`data::settle_page_cache`), puts `x`
//! (`data::x_at`) and every `y` in huge pages as numpy does (`HugeVec`),
//! prints one JSON line (`{"routines": [...], "shape": ..}`) and then
//! answers one line per command read from standard input:
//!
//! - `run NAME REPS`: calls routine `NAME` `REPS` times in a row; prints
//!   `ok SECONDS CPU` (the total, `Instant`, and the CPU time of every
//!   thread of the process meanwhile: on a busy machine, the work done
//!   whatever the waiting);
//! - `check`: prints one JSON line: `sum(y)` of each product (in `f64`,
//!   for the cross-check with the peers) and whether the two-thread
//!   products equal the one-thread ones bit for bit;
//! - `quit` (or the end of the input).
//!
//! The routines: `ax1` (`CscView::mul_vec`), `ax2`
//! (`mul_vec_parallel(.., 2)`), `atx1` (`CsrView::mul_vec` on
//! `A.transpose()`), `atx2` (its `mul_vec_parallel(.., 2)`), and what bounds
//! them on this machine, the same bytes with less work:
//! `bound_sum1` / `bound_sum2`, the matrix's bytes (`col_ptr`,
//! `row_indices`, `values`) summed as `u64`s on one and two threads (the
//! memory path: no product streams the matrix faster);
//! `bound_scatter1` / `bound_scatter2`, `y[row] = value` for every stored
//! element in storage order, split by position over the threads, each
//! storing into a `y` of its own (as `mul_vec_parallel`'s column split
//! does; one shared `y` measured slower than MKL's whole product with `y`
//! in L2, the threads taking its lines from each other): the random
//! stores of A·x with no column walk, no multiply, no read of `y`
//! (relaxed atomic stores: plain `mov`s on x86-64);
//! `bound_dot1` / `bound_dot2`, `sum values[k] · x[row]` over every stored
//! element in four running sums (`kernels::dot_sum`): the reads and the
//! arithmetic of Aᵀ·x without its rows (no per-row sum, store or branch,
//! no single chain of additions), split by position over the threads,
//! asking for `x` entries as far ahead as runs it fastest (no hint, 64 or
//! 128 elements at every element, or 64 at one in 8: `Bench::calibrate`,
//! at start-up; the first line's `bound_prefetch` gives each bound's
//! `[distance, every]`);
//! `bound_ax1` / `bound_ax2` and `bound_atx1` / `bound_atx2`, the bounds
//! the targets are judged by: the bare stores and the dot without rows,
//! each moving too the rest of the bytes its product must, in step with
//! the elements (`kernels::steps`: every `STEP` elements, the step's even
//! share): A·x's `col_ptr` and `x` summed; Aᵀ·x's pointers (`col_ptr`)
//! summed and its `y` written. A product reads its pointers once per slice and, on the
//! shapes of about 2 a slice, they are half again the elements' bytes.
//! `bound_gather1` / `bound_gather2`: A·x without its stores, the dot
//! without rows over a vector of `y`'s length (the loads of `y` at the
//! row indices, each times its value, in four sums), with `col_ptr` and
//! `x` summed in step. On the Zen 5 host the bare stores took longer than
//! A·x itself with `y` in L2 and L3 (a store to a line not in L1 holds its
//! slot until the line arrives; A·x's load brings the line first): the
//! targets take the faster of the two as A·x's bound.

#![forbid(unsafe_code)]

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use hurray_benches::data::TENSOR;
use hurray_benches::kernels::{dot_sum, part, steps, sum_u64_prefetched_threads, x_vector, HugeVec, Real};
use hurray_reader::{for_benches, CscView, ElementType, MappedFile, Options};
use zerocopy::IntoBytes;

/// Every routine, in the order of the first line's list.
const ROUTINES: [&str; 16] = [
    "ax1",
    "ax2",
    "atx1",
    "atx2",
    "bound_sum1",
    "bound_sum2",
    "bound_scatter1",
    "bound_scatter2",
    "bound_dot1",
    "bound_dot2",
    "bound_ax1",
    "bound_ax2",
    "bound_atx1",
    "bound_atx2",
    "bound_gather1",
    "bound_gather2",
];

/// The products' inputs and outputs.
struct Bench<'a, T: Real> {
    a: CscView<'a, T>,
    x: HugeVec<T>,
    xt: HugeVec<T>,
    /// The `y` of `ax1` and `ax2` (one, as MKL's two share theirs).
    y: HugeVec<T>,
    /// The `y` of `atx1` and `atx2`.
    z: HugeVec<T>,
    /// The `y` of `bound_atx*` (as `z`).
    w: HugeVec<T>,
    /// The scatter bound's target: one slot of `T`'s width per row (the
    /// bits of `f32` values in `u32`s, of `f64` in `u64`s), so that it
    /// covers the cache lines `y` does.
    /// One `y` of slots a thread (two).
    stores: [Stores; 2],
    /// Each dot bound's hint, `(distance, every)` ([`Bench::calibrate`]).
    prefetch: Vec<(&'static str, (usize, usize))>,
}

/// The bounds with the dot without rows.
const DOT_BOUNDS: [&str; 6] = [
    "bound_dot1",
    "bound_dot2",
    "bound_atx1",
    "bound_atx2",
    "bound_gather1",
    "bound_gather2",
];

/// The hints a dot bound is tried with, `(distance, every)`: none, the
/// library's two distances at every element ([`hurray_reader`]'s
/// `prefetch::DISTANCE` and `FAR_DISTANCE`), and its sparse hint (64
/// ahead at one element in 8, `prefetch::SPARSE_EVERY`: since `4414b72`
/// the library's loops over long slices, which outran the other bounds
/// on the Intel host of run AE).
const DOT_PREFETCH: [(usize, usize); 4] = [(0, 1), (64, 1), (128, 1), (64, 8)];

/// How many times [`Bench::calibrate`] calls each dot bound with each
/// distance. With two calls in a row for each distance (run AC), the
/// choice changed from one start-up to the next where two distances
/// were close.
const CALIBRATION_ROUNDS: usize = 4;

impl<T: Real> Bench<'_, T> {
    fn run(&mut self, name: &str) -> Result<f64, String> {
        let a = &self.a;
        let at = a.transpose();
        let ptr = a.col_ptr();
        let idx = a.row_indices();
        let values = a.values();
        let sink = match name {
            "ax1" => {
                a.mul_vec(self.x.as_slice(), self.y.as_mut_slice())
                    .map_err(|e| e.to_string())?;
                self.y.as_slice().first().map_or(0.0, |v| v.to_f64())
            }
            "ax2" => {
                a.mul_vec_parallel(self.x.as_slice(), self.y.as_mut_slice(), 2)
                    .map_err(|e| e.to_string())?;
                self.y.as_slice().first().map_or(0.0, |v| v.to_f64())
            }
            "atx1" => {
                at.mul_vec(self.xt.as_slice(), self.z.as_mut_slice())
                    .map_err(|e| e.to_string())?;
                self.z.as_slice().first().map_or(0.0, |v| v.to_f64())
            }
            "atx2" => {
                at.mul_vec_parallel(self.xt.as_slice(), self.z.as_mut_slice(), 2)
                    .map_err(|e| e.to_string())?;
                self.z.as_slice().first().map_or(0.0, |v| v.to_f64())
            }
            "bound_sum1" | "bound_sum2" => {
                let threads = if name == "bound_sum1" { 1 } else { 2 };
                sum_u64_prefetched_threads(&[ptr, idx, words(values.as_bytes())], threads) as f64
            }
            "bound_scatter1" | "bound_scatter2" | "bound_ax1" | "bound_ax2" => {
                let threads = if name.ends_with('1') { 1 } else { 2 };
                // The bare stores, or with the pointers and x: A·x's bytes.
                let arrays = if name.starts_with("bound_ax") {
                    (ptr, idx, values, self.x.as_slice())
                } else {
                    (&[][..], idx, values, &[][..])
                };
                let (pointers, xs) = match &self.stores {
                    [Stores::Narrow(a), Stores::Narrow(b)] => {
                        scatter_stores(arrays, &[a, b][..threads], |v| v.to_f64() as f32, f32::to_bits)
                    }
                    [Stores::Wide(a), Stores::Wide(b)] => {
                        scatter_stores(arrays, &[a, b][..threads], |v| v.to_f64(), f64::to_bits)
                    }
                    _ => return Err("stores of two widths".into()),
                };
                pointers as f64 + xs.to_f64()
            }
            dot if DOT_BOUNDS.contains(&dot) => {
                let prefetch = self
                    .prefetch
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or((0, 1), |&(_, d)| d);
                self.dot_bound(name, prefetch)
            }
            other => return Err(format!("no routine {other}")),
        };
        Ok(std::hint::black_box(sink))
    }

    /// The dot without rows of routine `name` (a `bound_dot*`,
    /// `bound_atx*` or `bound_gather*`), asking for `x` entries as
    /// `prefetch` says (one of [`DOT_PREFETCH`]).
    fn dot_bound(&mut self, name: &str, prefetch: (usize, usize)) -> f64 {
        let a = &self.a;
        let (ptr, idx, values) = (a.col_ptr(), a.row_indices(), a.values());
        let threads = if name.ends_with('1') { 1 } else { 2 };
        // The gather of an x of nrows entries (as A·x loads y's).
        let x = self.xt.as_slice();
        // The dot without rows; with the pointers and a y, Aᵀ·x's
        // bytes; with the pointers and x read, A·x's but its stores.
        let (ptr, moved) = match name {
            "bound_atx1" | "bound_atx2" => (ptr, (self.w.as_mut_slice(), &[][..])),
            "bound_gather1" | "bound_gather2" => (ptr, (&mut [][..], self.x.as_slice())),
            _ => (&[][..], (&mut [][..], &[][..])),
        };
        let (dot, pointers) = dot((ptr, idx, values, x), moved, threads, prefetch);
        dot.to_f64() + pointers as f64
    }

    /// Sets each dot bound's hint to the one of
    /// [`DOT_PREFETCH`] with the least of [`CALIBRATION_ROUNDS`] calls,
    /// the distances taken in turn each round (A B C A B C …, so that a
    /// slow stretch of the machine does not fall on one distance alone): a
    /// bound should be as fast as the bytes it moves allow, and which hint
    /// helps a loop without rows is not which helps the products' (with
    /// `x` in L2 and about 10 a row, the library's 64 ahead made the dot
    /// bound 1.19x slower than without, `docs/perf-log/run-ac.md`).
    fn calibrate(&mut self) {
        for name in DOT_BOUNDS {
            let mut best = [std::time::Duration::MAX; DOT_PREFETCH.len()];
            for _ in 0..CALIBRATION_ROUNDS {
                for (least, d) in best.iter_mut().zip(DOT_PREFETCH) {
                    let start = Instant::now();
                    std::hint::black_box(self.dot_bound(name, d));
                    *least = (*least).min(start.elapsed());
                }
            }
            let fastest = DOT_PREFETCH
                .into_iter()
                .zip(best)
                .min_by_key(|&(_, t)| t)
                .map_or((0, 1), |(d, _)| d);
            self.prefetch.push((name, fastest));
        }
    }

    fn check(&mut self) -> Result<serde_json::Value, String> {
        let sum = |v: &HugeVec<T>| v.as_slice().iter().map(|v| v.to_f64()).sum::<f64>();
        let bits = |v: &HugeVec<T>| v.as_slice().iter().map(|v| v.to_f64().to_bits()).collect::<Vec<u64>>();
        self.run("ax1")?;
        self.run("atx1")?;
        let (ax_sum_y, atx_sum_y) = (sum(&self.y), sum(&self.z));
        let (ax1, atx1) = (bits(&self.y), bits(&self.z));
        // A part the two-thread products left unwritten shows as a NaN.
        self.y.as_mut_slice().fill(T::from_f64(f64::NAN));
        self.z.as_mut_slice().fill(T::from_f64(f64::NAN));
        self.run("ax2")?;
        self.run("atx2")?;
        Ok(serde_json::json!({
            "ax_sum_y": ax_sum_y,
            "atx_sum_y": atx_sum_y,
            "ax2_same_bits": ax1 == bits(&self.y),
            "atx2_same_bits": atx1 == bits(&self.z),
        }))
    }
}

/// The whole `u64`s of `bytes`, in place (a tensor's buffers start on the
/// file's data alignment, at least 4096 bytes); none if misaligned.
fn words(bytes: &[u8]) -> &[u64] {
    let whole = bytes.get(..bytes.len() / 8 * 8).unwrap_or_default();
    <[u64] as zerocopy::FromBytes>::ref_from_bytes(whole).unwrap_or_default()
}

/// One slot a row for [`scatter_stores`], of the values' width.
enum Stores {
    Narrow(Vec<AtomicU32>),
    Wide(Vec<AtomicU64>),
}

/// An atomic slot [`scatter_stores`] can store bits into.
trait Slot: Sync {
    /// The slot's bits.
    type Bits: Copy + Send;
    /// A relaxed store (a plain `mov` on x86-64).
    fn put(&self, bits: Self::Bits);
}

impl Slot for AtomicU32 {
    type Bits = u32;
    fn put(&self, bits: u32) {
        self.store(bits, Ordering::Relaxed);
    }
}

impl Slot for AtomicU64 {
    type Bits = u64;
    fn put(&self, bits: u64) {
        self.store(bits, Ordering::Relaxed);
    }
}

/// `stores[t][idx[k]] = bits of values[k]` for every `k`, the positions cut
/// into `stores.len()` equal parts, part `t` on thread `t`. With `ptr` and
/// `x` not empty (the pointers and the `x` of A·x), each thread also sums
/// its even share of both, in step with its elements ([`steps`]): every
/// byte A·x reads but `y`.
/// Returns those sums (for use).
fn scatter_stores<T: Real, V: Copy, S: Slot>(
    (ptr, idx, values, x): (&[u64], &[u64], &[T], &[T]),
    stores: &[&Vec<S>],
    to: impl Fn(T) -> V + Copy + Send,
    bits: impl Fn(V) -> S::Bits + Copy + Send,
) -> (u64, T) {
    let threads = stores.len();
    let jobs = stores.iter().enumerate().map(|(t, &stores)| {
        let range = part(idx.len(), t, threads);
        let (rows, vals) = (&idx[range.clone()], &values[range]);
        let (ptr, x) = (&ptr[part(ptr.len(), t, threads)], &x[part(x.len(), t, threads)]);
        move || {
            let (mut pointers, mut xs) = (0u64, T::default());
            for step in steps(rows.len()) {
                let elements = step.elements.clone();
                for (&r, &v) in rows[elements.clone()].iter().zip(&vals[elements]) {
                    if let Some(slot) = stores.get(usize::try_from(r).unwrap_or(usize::MAX)) {
                        slot.put(bits(to(v)));
                    }
                }
                pointers = ptr[step.share(ptr.len())]
                    .iter()
                    .fold(pointers, |s, &p| s.wrapping_add(p));
                xs = x[step.share(x.len())].iter().fold(xs, |s, &v| s + v);
            }
            (pointers, xs)
        }
    });
    for_benches::run_all(jobs.collect())
        .into_iter()
        .fold((0, T::default()), |(p, s), (q, r)| (p.wrapping_add(q), s + r))
}

/// `sum values[k] · x[idx[k]]` ([`dot_sum`]) over every `k`, the positions
/// cut into `threads` equal parts, one thread each, each asking for `x`
/// as `prefetch` says (`(distance, every)`, one of [`DOT_PREFETCH`];
/// distance 0: not at all); with `ptr` and `y` not empty (the
/// pointers Aᵀ·x reads and a `y` of its length), each thread also moves
/// its even share of them, in step with its elements: every byte Aᵀ·x
/// reads and writes;
/// with `reads` (A·x's `x`), its share of those summed too. Returns the
/// dot (plus the sum of `reads`) and the pointers' sum.
fn dot<T: Real>(
    (ptr, idx, values, x): (&[u64], &[u64], &[T], &[T]),
    (y, reads): (&mut [T], &[T]),
    threads: usize,
    prefetch: (usize, usize),
) -> (T, u64) {
    let (ylen, mut rest) = (y.len(), y);
    let mut jobs = Vec::new();
    for t in 0..threads {
        let range = part(idx.len(), t, threads);
        let (rows, vals, ptr) = (&idx[range.clone()], &values[range], &ptr[part(ptr.len(), t, threads)]);
        let (mine, others) = std::mem::take(&mut rest).split_at_mut(part(ylen, t, threads).len());
        let reads = &reads[part(reads.len(), t, threads)];
        rest = others;
        jobs.push(move || match prefetch {
            (0, _) => dot_sum::<T, 0, 1>((rows, vals, x), ptr, mine, reads),
            (64, 1) => dot_sum::<T, 64, 1>((rows, vals, x), ptr, mine, reads),
            (64, _) => dot_sum::<T, 64, 8>((rows, vals, x), ptr, mine, reads),
            _ => dot_sum::<T, 128, 1>((rows, vals, x), ptr, mine, reads),
        });
    }
    for_benches::run_all(jobs)
        .into_iter()
        .fold((T::default(), 0), |(s, p), (r, q)| (s + r, p.wrapping_add(q)))
}

fn serve<T: Real>(path: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    let mapped = MappedFile::open(path, Options::default())?;
    let file = mapped.file()?;
    let a = file.tensor(TENSOR)?.csc::<T>()?;
    let (nrows, ncols) = (a.nrows(), a.ncols());
    let rows = usize::try_from(nrows)?;
    let cols = usize::try_from(ncols)?;
    let mut bench = Bench {
        x: HugeVec::from_slice(&x_vector::<T>(ncols)),
        xt: HugeVec::from_slice(&x_vector::<T>(nrows)),
        y: HugeVec::zeroed(rows),
        z: HugeVec::zeroed(cols),
        w: HugeVec::zeroed(cols),
        stores: [(); 2].map(|()| {
            if std::mem::size_of::<T>() == 4 {
                Stores::Narrow((0..rows).map(|_| AtomicU32::new(0)).collect())
            } else {
                Stores::Wide((0..rows).map(|_| AtomicU64::new(0)).collect())
            }
        }),
        a,
        prefetch: Vec::new(),
    };
    bench.calibrate();
    let mut out = std::io::stdout().lock();
    let hello = serde_json::json!({
        "routines": ROUTINES,
        "shape": [nrows, ncols],
        "nnz": bench.a.nnz(),
        "values": std::any::type_name::<T>(),
        "bound_scatter_width_bytes": std::mem::size_of::<T>(),
        "bound_prefetch": bench.prefetch.iter().copied().collect::<std::collections::BTreeMap<_, _>>(),
    });
    writeln!(out, "{hello}")?;
    out.flush()?;
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            ["run", name, reps] => {
                let reps: usize = reps.parse()?;
                let (start, cpu) = (Instant::now(), cpu_seconds());
                let mut result = Ok(0.0);
                for _ in 0..reps.max(1) {
                    result = bench.run(name);
                    if result.is_err() {
                        break;
                    }
                }
                let elapsed = start.elapsed().as_secs_f64();
                let cpu = cpu_seconds() - cpu;
                match result {
                    Ok(_) => format!("ok {elapsed:.9} {cpu:.9}"),
                    Err(e) => format!("error {e}"),
                }
            }
            ["check"] => match bench.check() {
                Ok(v) => v.to_string(),
                Err(e) => format!("error {e}"),
            },
            ["quit"] => break,
            _ => format!("error unknown command {line:?}"),
        };
        writeln!(out, "{reply}")?;
        out.flush()?;
    }
    Ok(())
}

/// The CPU time of this process so far (every thread's, in seconds).
fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Times the reader's products on request (see the module's description).
#[derive(clap::Parser)]
#[command(name = "hurray-products")]
struct Args {
    /// The file (tensor `A`, float32 or float64 CSC), e.g. written by `gen`.
    file: PathBuf,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Args { file: path } = clap::Parser::parse();
    hurray_benches::data::settle_page_cache(&path)?;
    let element_type = hurray_benches::data::tensor_element_type(&path)?;
    match element_type {
        Some(ElementType::Float32) => serve::<f32>(&path),
        Some(ElementType::Float64) => serve::<f64>(&path),
        other => Err(format!("tensor A has element type {other:?}; want float32 or float64").into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hurray_benches::kernels::STEP;

    #[test]
    fn scatter_stores_puts_each_value_in_its_rows_slot_and_sums_the_rest() {
        // Rows k mod 7, values k: each slot ends with its row's last value.
        let n = 2 * STEP + 5;
        let idx: Vec<u64> = (0..n as u64).map(|k| k % 7).collect();
        let values: Vec<f32> = (0..n).map(|k| k as f32).collect();
        let (ptr, x): (Vec<u64>, Vec<f32>) = ((0..=10).collect(), vec![0.5; 10]);
        for threads in 1..=2 {
            let stores: Vec<Vec<AtomicU32>> = (0..threads)
                .map(|_| (0..7).map(|_| AtomicU32::new(0)).collect())
                .collect();
            let targets: Vec<&Vec<AtomicU32>> = stores.iter().collect();
            let sums = scatter_stores((&ptr, &idx, &values, &x), &targets, |v: f32| v, f32::to_bits);
            assert_eq!(sums, (55, 5.0));
            let last = stores
                .last()
                .map(|s| s.iter().map(|a| f32::from_bits(a.load(Ordering::Relaxed))));
            let expected = (0..7).map(|r| ((n - 7..n).find(|k| k % 7 == r).unwrap_or(0)) as f32);
            assert!(last.unwrap().eq(expected), "threads {threads}");
            // Without pointers or x: the bare stores, nothing summed.
            assert_eq!(
                scatter_stores((&[], &idx, &values, &[]), &targets, |v: f32| v, f32::to_bits),
                (0, 0.0)
            );
            // No elements: the pointers and x are still summed.
            assert_eq!(
                scatter_stores((&ptr, &[], &[], &x), &targets, |v: f32| v, f32::to_bits),
                (55, 5.0)
            );
        }
    }

    #[test]
    fn dot_moves_the_pointers_and_writes_all_of_y() {
        // 3 steps and 1: every value 1 at x[1] = 0.5, so 0.5 an element.
        let n = 3 * STEP + 1;
        let (idx, values, x) = (vec![1u64; n], vec![1.0f64; n], [0.0, 0.5]);
        let ptr: Vec<u64> = (0..=100).collect();
        for (threads, hint) in (1..=2).flat_map(|t| DOT_PREFETCH.map(|h| (t, h))) {
            let mut y = vec![-1.0f64; 100];
            assert_eq!(
                dot((&ptr, &idx, &values, &x), (&mut y, &[]), threads, hint),
                (0.5 * n as f64, 5050)
            );
            // Each share of y holds the sum so far of its thread.
            assert!(
                y.iter().all(|&v| v >= 0.5 * 1024.0),
                "threads {threads}, {hint:?}: {y:?}"
            );
        }
        let mut y = vec![-1.0f64; 100];
        dot((&ptr, &idx, &values, &x), (&mut y, &[]), 1, (0, 1));
        assert_eq!(
            (y[0], y[24], y[25], y[74], y[75], y[99]),
            (1024.0, 1024.0, 2048.0, 3072.0, 3072.0, 3072.0)
        );
        assert_eq!(
            dot((&[], &idx, &values, &x), (&mut [], &[]), 2, (0, 1)),
            (0.5 * n as f64, 0)
        );
        // x of A·x read in step, its sum added: 0.25 · 64.
        let reads = vec![0.25f64; 64];
        for threads in 1..=2 {
            let got = dot((&ptr, &idx, &values, &x), (&mut [], &reads), threads, (128, 1));
            assert_eq!(got, (0.5 * n as f64 + 16.0, 5050), "threads {threads}");
        }
        // More threads than elements: every entry of y is still written.
        let mut y = vec![-1.0f64; 100];
        assert_eq!(
            dot((&ptr, &idx[..1], &values[..1], &x), (&mut y, &[]), 2, (0, 1)),
            (0.5, 5050)
        );
        // Each thread's y holds its sums before the tail: none here.
        assert_eq!(y, vec![0.0; 100]);
    }
}
