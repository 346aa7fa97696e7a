//! Reference loops measured next to the library, and local stand-ins for
//! library APIs that do not exist yet. Everything here uses only the public
//! slices of the views (`col_ptr()`, `row_indices()`, `values()`, ...).
//!
//! - Ceilings: [`sum_u64`] (one thread) and [`sum_u64_threads`] read the same
//!   bytes as the invariant scan and do the least possible work on them.
//! - [`naive_check`]: a straightforward element-by-element CSC/CSR invariant
//!   check with early exits (what the issue calls "a straightforward check").
//! - [`validate_threads`]: a two-thread validation from the public slices,
//!   written before the library had `validate_parallel` (a per-column fold,
//!   the index array split by position); kept as a comparison.
//! - [`spmv_csc_columns`]: `y = A·x` through the checked `column(j)` API,
//!   next to the library's `CscView::mul_vec` (which replaced the local
//!   slice kernels): the cost of a `Result` and a range check per column.
//! - [`spmv_csc_direct`]: `y = A·x` by the direct scatter, a copy of the
//!   path `CscView::mul_vec` takes for a `y` that fits in the L2 cache, to
//!   time it (and compare its result bit for bit) on the large inputs where
//!   `mul_vec` uses propagation blocking.

use std::ops::{AddAssign, Mul, Range};

use hurray_reader::{CscView, Element, Float, MappedFile, Options};
use zerocopy::{FromBytes, IntoBytes};

/// Benchmark 1's routine: `MappedFile::open` + `.file()` + `tensor("A")` +
/// `csc_unscanned::<f32>()` (no invariant scan); returns `nnz`.
///
/// # Panics
/// When the file is not one of `data::ensure_open_file`'s.
pub fn open_to_view(path: &std::path::Path) -> u64 {
    let mapped = MappedFile::open(path, Options::default()).expect("open");
    let file = mapped.file().expect("parse");
    let tensor = file.tensor(crate::data::TENSOR).expect("tensor");
    let view = tensor.csc_unscanned::<f32>().expect("view");
    view.nnz()
}

/// Benchmark 1's baseline: `File::open` + `mmap` (through
/// `MappedFile::open`, which does exactly that and parses nothing) + read
/// one `u64`.
///
/// # Panics
/// When the file cannot be mapped or is shorter than 8 bytes.
pub fn bare_mmap_read_u64(path: &std::path::Path) -> u64 {
    let map = MappedFile::open(path, Options::default()).expect("mmap");
    u64::from_le_bytes(map.bytes()[..8].try_into().expect("8 bytes"))
}

/// Wrapping sum of every `u64` of every slice, one thread.
#[inline(never)]
pub fn sum_u64(slices: &[&[u64]]) -> u64 {
    slices
        .iter()
        .map(|s| s.iter().fold(0u64, |a, &b| a.wrapping_add(b)))
        .fold(0, u64::wrapping_add)
}

/// [`sum_u64`] with a software prefetch of the line 16 KiB (2 Ki values)
/// ahead of each line it adds, as the library's scans do: the ceiling of a
/// loop that streams the bytes with the same hint (on the Intel host of
/// `docs/perf-log/run-i.md` the plain sum leaves bandwidth unused; the
/// hardware prefetcher alone keeps too few lines in flight).
#[inline(never)]
pub fn sum_u64_prefetched(slices: &[&[u64]]) -> u64 {
    const LINE: usize = 8;
    const AHEAD: usize = 2048;
    slices
        .iter()
        .map(|s| {
            let mut lanes = [0u64; LINE];
            let lines = s.chunks_exact(LINE);
            let rest = lines.remainder().iter().fold(0u64, |a, &b| a.wrapping_add(b));
            for (k, line) in lines.enumerate() {
                if let Some(later) = s.get(k * LINE + AHEAD) {
                    prefetch(later);
                }
                for (l, &v) in lanes.iter_mut().zip(line) {
                    *l = l.wrapping_add(v);
                }
            }
            lanes.iter().fold(rest, |a, &b| a.wrapping_add(b))
        })
        .fold(0, u64::wrapping_add)
}

/// [`sum_u64`] split over `threads` threads, the library's (each sums its
/// share of every slice).
pub fn sum_u64_threads(slices: &[&[u64]], threads: usize) -> u64 {
    sum_threads_with(slices, threads, sum_u64)
}

/// [`sum_u64_prefetched`] split over `threads` threads, the library's.
pub fn sum_u64_prefetched_threads(slices: &[&[u64]], threads: usize) -> u64 {
    sum_threads_with(slices, threads, sum_u64_prefetched)
}

fn sum_threads_with(slices: &[&[u64]], threads: usize, sum: fn(&[&[u64]]) -> u64) -> u64 {
    let threads = threads.max(1);
    let jobs: Vec<_> = (0..threads)
        .map(|t| {
            move || {
                let parts: Vec<&[u64]> = slices.iter().map(|s| share(s, t, threads)).collect();
                sum(&parts)
            }
        })
        .collect();
    hurray_reader::for_benches::run_all(jobs)
        .into_iter()
        .fold(0, u64::wrapping_add)
}

fn share(s: &[u64], t: usize, n: usize) -> &[u64] {
    &s[part(s.len(), t, n)]
}

/// The four storage invariants of a compressed matrix (CSC or CSR) checked
/// element by element with early exits: the "straightforward" check.
#[inline(never)]
pub fn naive_check(ptr: &[u64], idx: &[u64], inner_bound: u64) -> bool {
    let nnz = idx.len() as u64;
    if ptr.first() != Some(&0) || ptr.last() != Some(&nnz) {
        return false;
    }
    for w in ptr.windows(2) {
        let (s, e) = (w[0], w[1]);
        if e < s || e > nnz {
            return false;
        }
        let col = &idx[s as usize..e as usize];
        for k in 0..col.len() {
            if col[k] >= inner_bound {
                return false;
            }
            if k > 0 && col[k] <= col[k - 1] {
                return false;
            }
        }
    }
    true
}

/// The library's per-slice rule (strictly increasing, last below `bound`)
/// as a branch-free fold, the way `view/compressed/scan.rs` writes it.
#[inline]
fn slice_ok(slice: &[u64], bound: u64) -> bool {
    let Some(&last) = slice.last() else {
        return true;
    };
    let unsorted = slice.iter().zip(&slice[1..]).fold(false, |bad, (a, b)| bad | (b <= a));
    !unsorted && last < bound
}

/// Pointer array rule: `ptr[0] = 0`, non-decreasing, `ptr[n] = nnz`.
fn ptr_ok(ptr: &[u64], nnz: u64) -> bool {
    ptr.first() == Some(&0)
        && ptr.last() == Some(&nnz)
        && !ptr.iter().zip(&ptr[1..]).fold(false, |bad, (a, b)| bad | (b < a))
}

/// A parallel validation from the public slices (written as the stand-in
/// for `CscStructure::validate_parallel` before it existed): the
/// same invariants as `validate()` (pass/fail only, no error details),
/// split over `threads` scoped threads. The pointer array is split evenly;
/// the index array is split by position (not by slice), so one huge slice
/// is shared too: each thread checks the slices overlapping its range, with
/// one element of overlap at a cut inside a slice.
pub fn validate_threads(ptr: &[u64], idx: &[u64], inner_bound: u64, threads: usize) -> bool {
    let threads = threads.max(1);
    let nnz = idx.len() as u64;
    if ptr.first() != Some(&0) || ptr.last() != Some(&nnz) {
        return false;
    }
    // Pass 1: pointer array, each thread a share plus one element of overlap.
    let ptr_ok_all = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let a = ptr.len() * t / threads;
                    let b = (ptr.len() * (t + 1) / threads + 1).min(ptr.len());
                    let part = &ptr[a..b];
                    !part.iter().zip(&part[1..]).fold(false, |bad, (x, y)| bad | (y < x))
                })
            })
            .collect();
        handles.into_iter().all(|h| h.join().expect("ptr thread"))
    });
    if !ptr_ok_all {
        return false;
    }
    // Pass 2: index array by position.
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let a = (idx.len() * t / threads) as u64;
                    let b = (idx.len() * (t + 1) / threads) as u64;
                    if a == b {
                        return true;
                    }
                    // First slice overlapping [a, b): the last j with ptr[j] <= a.
                    let mut j = ptr.partition_point(|&p| p <= a).saturating_sub(1);
                    let mut ok = true;
                    while j + 1 < ptr.len() && ptr[j] < b {
                        let (s, e) = (ptr[j], ptr[j + 1]);
                        let lo = s.max(a);
                        let hi = e.min(b);
                        if lo < hi {
                            // Include the element before a cut inside the slice.
                            let from = if lo > s { lo - 1 } else { lo };
                            ok &= slice_ok(&idx[from as usize..hi as usize], inner_bound);
                        }
                        j += 1;
                    }
                    ok
                })
            })
            .collect();
        handles.into_iter().all(|h| h.join().expect("idx thread"))
    })
}

/// One-thread pass/fail version of `validate()` with this module's folds, to
/// tell the scan's cost from the threading's.
pub fn validate_local(ptr: &[u64], idx: &[u64], inner_bound: u64) -> bool {
    if !ptr_ok(ptr, idx.len() as u64) {
        return false;
    }
    let mut ok = true;
    for w in ptr.windows(2) {
        ok &= slice_ok(&idx[w[0] as usize..w[1] as usize], inner_bound);
    }
    ok
}

/// Numbers the SpMV kernels work on.
pub trait Real:
    Element
    + Float
    + Copy
    + Default
    + Mul<Output = Self>
    + AddAssign
    + std::iter::Sum
    + PartialEq
    + zerocopy::FromBytes
    + zerocopy::IntoBytes
    + zerocopy::Immutable
    + zerocopy::KnownLayout
{
    /// From `f64` (exact for the generated data).
    fn from_f64(v: f64) -> Self;
    /// To `f64`.
    fn to_f64(self) -> f64;
}

impl Real for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
}

impl Real for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
}

/// The shared input vector `x` of length `n` ([`crate::data::x_at`]).
pub fn x_vector<T: Real>(n: u64) -> Vec<T> {
    (0..n).map(|i| T::from_f64(crate::data::x_at(i))).collect()
}

/// A dense vector in an anonymous mapping advised `MADV_HUGEPAGE`, like the
/// arrays numpy allocates (numpy advises huge pages for every allocation of
/// 4 MiB or more). SpMV gathers from `x` and scatters into `y` at random:
/// with 4 KiB pages a 40 MB vector misses the TLB on almost every access,
/// with 2 MiB pages it does not. Without this, the comparison with scipy
/// measures page sizes, not kernels.
pub struct HugeVec<T> {
    map: memmap2::MmapMut,
    len: usize,
    _elements: std::marker::PhantomData<T>,
}

impl<T: Real> HugeVec<T> {
    /// A copy of `values` in huge pages (where the kernel grants them).
    ///
    /// # Panics
    /// When the anonymous mapping fails.
    pub fn from_slice(values: &[T]) -> Self {
        let bytes = std::mem::size_of_val(values);
        let mut map = memmap2::MmapMut::map_anon(bytes.max(1)).expect("anonymous mapping");
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::HugePage);
        map[..bytes].copy_from_slice(values.as_bytes());
        HugeVec {
            map,
            len: values.len(),
            _elements: std::marker::PhantomData,
        }
    }

    /// `len` zeros in huge pages.
    ///
    /// # Panics
    /// When the anonymous mapping fails.
    pub fn zeroed(len: usize) -> Self {
        Self::from_slice(&vec![T::default(); len])
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        let bytes = self.len * std::mem::size_of::<T>();
        <[T]>::ref_from_bytes(&self.map[..bytes]).expect("page-aligned")
    }

    /// The elements, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        let bytes = self.len * std::mem::size_of::<T>();
        <[T]>::mut_from_bytes(&mut self.map[..bytes]).expect("page-aligned")
    }
}

/// `y = A·x` column by column through the checked API only: `column(j)`
/// per column (`y[row] += v * x[col]`), `y` overwritten.
///
/// # Panics
/// When `column` fails (the view is validated first by the caller).
#[inline(never)]
pub fn spmv_csc_columns<T: Real>(a: &CscView<'_, T>, x: &[T], y: &mut [T]) {
    y.fill(T::default());
    for (j, &xj) in (0..a.ncols()).zip(x) {
        for (r, &v) in a.column(j).expect("column") {
            y[r as usize] += v * xj;
        }
    }
}

/// `y = A·x` by the direct scatter, `y[row] += v · x[col]` column by column
/// at random positions of `y`, `y` overwritten: the same loop as the
/// library's `Compressed::scatter_direct` (what `CscView::mul_vec` runs for
/// a `y` within the L2 cache, and the loop of scipy's `csc_matvec`).
#[inline(never)]
pub fn spmv_csc_direct<T: Real>(a: &CscView<'_, T>, x: &[T], y: &mut [T]) {
    y.fill(T::default());
    let (ptr, idx, values) = (a.col_ptr(), a.row_indices(), a.values());
    for (w, &xj) in ptr.windows(2).zip(x) {
        let &[start, end] = w else { continue };
        let range = usize::try_from(start).unwrap_or(usize::MAX)..usize::try_from(end).unwrap_or(0);
        let (Some(rows), Some(vals)) = (idx.get(range.clone()), values.get(range)) else {
            continue;
        };
        for (&r, &v) in rows.iter().zip(vals) {
            if let Some(yr) = y.get_mut(usize::try_from(r).unwrap_or(usize::MAX)) {
                *yr += v * xj;
            }
        }
    }
}

/// Sum of all values through `column(j)` for every column (the "full column
/// iteration" benchmark).
///
/// # Panics
/// When `column` fails.
#[inline(never)]
pub fn column_sum<T: Real>(a: &CscView<'_, T>) -> f64 {
    let mut total = 0f64;
    for j in 0..a.ncols() {
        let mut col = T::default();
        for (_, &v) in a.column(j).expect("column") {
            col += v;
        }
        total += col.to_f64();
    }
    total
}

/// [`column_sum`] through `CscView::columns()`: the same per-column sums,
/// with no `Result` and no check per column.
///
/// # Panics
/// When `columns` fails.
#[inline(never)]
pub fn columns_sum<T: Real>(a: &CscView<'_, T>) -> f64 {
    let mut total = 0f64;
    for (_, _, values) in a.columns().expect("columns") {
        let mut col = T::default();
        for &v in values {
            col += v;
        }
        total += col.to_f64();
    }
    total
}

/// Plain sum of the values slice: the ceiling of [`column_sum`].
#[inline(never)]
pub fn values_sum<T: Real>(values: &[T]) -> f64 {
    values.iter().copied().sum::<T>().to_f64()
}

/// How many elements ahead [`gather_sum`] asks for `x`: the library's
/// `prefetch::DISTANCE` ([`dot_sum`] takes its distance as a parameter).
const DISTANCE: usize = 64;

/// Sum of `x[idx[k]]` over every `k`: the reads of `x` that `y = Aᵀ·x`
/// (`CsrView::mul_vec` on `A.transpose()`) makes, in the same order, and
/// nothing else (no values, no per-row sums or stores, no pointer array).
/// With `PREFETCH`, each step also asks for `x[idx[k + DISTANCE]]`, as the
/// library's loop does for an `x` over 2 MiB or slices of about 10 (128
/// ahead over 8 MiB, and not at all for some slices:
/// `product::prefetch_distance`): the ceiling
/// of that product, as the plain sum is the scan's. Without it, the plain loop (scipy's,
/// less its arithmetic). Indices past `x` count as zero.
#[inline(never)]
pub fn gather_sum<T: Real, const PREFETCH: bool>(idx: &[u64], x: &[T]) -> T {
    let mut ahead = idx.get(DISTANCE..).unwrap_or_default().iter();
    idx.iter()
        .map(|&i| {
            if PREFETCH {
                if let Some(later) = ahead.next().and_then(|&a| entry(x, a)) {
                    prefetch(later);
                }
            }
            at(x, i)
        })
        .sum()
}

/// `sum values[k] · x[idx[k]]` over every `k`, in four running sums (`k`
/// modulo 4): the reads and the arithmetic of `y = Aᵀ·x`
/// (`CsrView::mul_vec` on `A.transpose()`), without its rows: no sum
/// restarted or stored per row, no branch at a row's end, and no single
/// chain of additions (the four sums overlap). With `AHEAD` above 0, each
/// step also asks for `x[idx[k + AHEAD]]`, as the library's loops do (64
/// or 128 ahead, by the size of `x`): at every element with `EVERY` 1, at
/// one in `EVERY` (8: as the library's loops over long slices,
/// `prefetch::SPARSE_EVERY`). Indices past `x` count as zero.
///
/// With `ptr`, `y` and `reads` empty, that is all (the dot without rows).
/// With the pointers a product reads and the `y` it writes, the pass moves
/// their bytes too, in step with the elements: after every [`STEP`]
/// elements, the step's even share of `ptr` is summed (as `u64`s) and of
/// `y` set to the sum so far; every byte of `Aᵀ·x`, read or written once,
/// with none of its rows' work. The step's share of `reads` is summed
/// too (the `x` of A·x, whose loads of `y` at the row indices are this
/// gather with `x` as that `y`). Returns the dot (plus the sum of
/// `reads`) and the pointers' sum.
#[inline(never)]
pub fn dot_sum<T: Real, const AHEAD: usize, const EVERY: usize>(
    (idx, values, x): (&[u64], &[T], &[T]),
    ptr: &[u64],
    y: &mut [T],
    reads: &[T],
) -> (T, u64) {
    let n = idx.len().min(values.len());
    let mut sums = [T::default(); 4];
    let (mut pointers, mut read) = (0u64, T::default());
    for step in steps(n) {
        let elements = step.elements.clone();
        let ahead = idx.get(elements.start + AHEAD..).unwrap_or_default();
        add_quads::<T, AHEAD, EVERY>(&mut sums, &idx[elements.clone()], &values[elements], x, ahead);
        pointers = ptr[step.share(ptr.len())]
            .iter()
            .fold(pointers, |s, &p| s.wrapping_add(p));
        read = reads[step.share(reads.len())].iter().fold(read, |s, &v| s + v);
        let [a, b, c, d] = sums;
        let mine = step.share(y.len());
        y[mine].fill((a + b) + (c + d));
    }
    let [a, b, c, d] = sums;
    let tail = (n / 4 * 4..n).map(|k| values[k] * at(x, idx[k]));
    (tail.fold((a + b) + (c + d), |sum, p| sum + p) + read, pointers)
}

/// How many elements a step of [`steps`] takes (a multiple of 4, for
/// [`dot_sum`]'s quads).
pub const STEP: usize = 2048;

/// One step of [`steps`]: its elements, and which share of any array moved
/// in step with them is its own ([`Step::share`]).
pub struct Step {
    /// The step's positions among the elements.
    pub elements: Range<usize>,
    index: usize,
    count: usize,
}

impl Step {
    /// The step's even share of `len` entries ([`part`]).
    pub fn share(&self, len: usize) -> Range<usize> {
        part(len, self.index, self.count)
    }
}

/// The steps of a pass over `n` elements that moves other arrays in step
/// (the pointers, and `x` or `y`, of the bounds of the products):
/// [`STEP`] elements each (the last fewer), and at least one, so that with
/// no elements the other arrays still move.
pub fn steps(n: usize) -> impl Iterator<Item = Step> {
    let count = n.div_ceil(STEP).max(1);
    (0..count).map(move |index| Step {
        elements: index * STEP..((index + 1) * STEP).min(n),
        index,
        count,
    })
}

/// Adds `values[k] · x[idx[k]]` to `sums[k % 4]` for every `k` in the
/// whole quads of `idx` (a tail of fewer than 4 is left); with `AHEAD`
/// above 0, asks for `x[ahead[k]]` meanwhile: for every `k` with `EVERY`
/// 1, for one `k` in `EVERY` (a multiple of 4) otherwise.
#[inline(always)]
fn add_quads<T: Real, const AHEAD: usize, const EVERY: usize>(
    sums: &mut [T; 4],
    idx: &[u64],
    values: &[T],
    x: &[T],
    ahead: &[u64],
) {
    let mut ahead = ahead.chunks(4);
    for (q, (quad, vals)) in idx.chunks_exact(4).zip(values.chunks_exact(4)).enumerate() {
        if AHEAD > 0 {
            let later = ahead.next().unwrap_or_default();
            if EVERY <= 1 {
                later.iter().filter_map(|&a| entry(x, a)).for_each(prefetch);
            } else if q % (EVERY / 4).max(1) == 0 {
                later.first().and_then(|&a| entry(x, a)).map(prefetch);
            }
        }
        for ((sum, &i), &v) in sums.iter_mut().zip(quad).zip(vals) {
            *sum += v * at(x, i);
        }
    }
}

/// `x[i]`, or zero past its end.
#[inline(always)]
fn at<T: Real>(x: &[T], i: u64) -> T {
    entry(x, i).copied().unwrap_or_default()
}

/// `&x[i]`, or none past its end.
#[inline(always)]
fn entry<T>(x: &[T], i: u64) -> Option<&T> {
    x.get(usize::try_from(i).unwrap_or(usize::MAX))
}

/// Part `k` of `len` entries shared out evenly into `n` parts: from
/// `len · k / n` to `len · (k + 1) / n`, rounded down (empty at `len` for
/// `k >= n`).
pub fn part(len: usize, k: usize, n: usize) -> Range<usize> {
    let start = |k: usize| {
        if k >= n {
            return len;
        }
        usize::try_from(len as u128 * k as u128 / n as u128).unwrap_or(len)
    };
    start(k)..start(k + 1)
}

/// Asks the CPU to bring the cache line holding `value` into its caches
/// (`_mm_prefetch`, T0); a no-op off x86-64.
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a hint: it reads and writes nothing the program can
        // observe and never faults; SSE is in the x86-64 baseline.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast::<i8>()) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_sum_reads_x_at_each_index() {
        let x = [1.0f32, 10.0, 100.0];
        assert_eq!(gather_sum::<f32, false>(&[2, 0, 2, 9], &x), 201.0);
        let idx: Vec<u64> = (0..100).map(|k| k % 4).collect();
        assert_eq!(gather_sum::<f32, true>(&idx, &x), 25.0 * 111.0);
    }

    #[test]
    fn dot_sum_multiplies_each_value_by_x_at_its_index() {
        let x = [1.0f32, 10.0, 100.0];
        // Six elements: one quad and a tail of two; index 9 reads 0.
        let (idx, values) = ([2, 0, 1, 9, 2, 1], [1.0f32, 2.0, 3.0, 4.0, 0.5, 0.25]);
        let (dot, _) = dot_sum::<f32, 0, 1>((&idx, &values, &x), &[], &mut [], &[]);
        assert_eq!(dot, 100.0 + 2.0 + 30.0 + 50.0 + 2.5);
        let idx: Vec<u64> = (0..103).map(|k| k % 3).collect();
        let values = vec![2.0f64; 103];
        let x = [1.0f64, 10.0, 100.0];
        // 35 of index 0, 34 of 1 and 34 of 2, each value 2.
        let (dot, _) = dot_sum::<f64, 64, 1>((&idx, &values, &x), &[], &mut [], &[]);
        assert_eq!(dot, 2.0 * (35.0 + 340.0 + 3400.0));
        // The sparse hint (one element in 8) asks for less, adds the same.
        let (dot, _) = dot_sum::<f64, 64, 8>((&idx, &values, &x), &[], &mut [], &[]);
        assert_eq!(dot, 2.0 * (35.0 + 340.0 + 3400.0));
    }

    #[test]
    fn dot_sum_moves_the_pointers_and_y_in_step() {
        // Three steps and a tail of 3: 3 · STEP + 3 elements, every value
        // 1, every index 0, x[0] = 2: the dot is 2 per element.
        let n = 3 * STEP + 3;
        let (idx, values, x) = (vec![0u64; n], vec![1.0f32; n], [2.0f32]);
        let ptr: Vec<u64> = (0..10).collect();
        let mut y = vec![-1.0f32; 7];
        let (dot, pointers) = dot_sum::<f32, 128, 1>((&idx, &values, &x), &ptr, &mut y, &[]);
        assert_eq!(dot, 2.0 * n as f32);
        assert_eq!(pointers, 45);
        // Four steps (the last one of 3 elements, its quads none): y's 7
        // entries shared 1, 2, 2, 2 and set to the dot after each step.
        let s = 2.0 * STEP as f32;
        assert_eq!(y, [s, 2.0 * s, 2.0 * s, 3.0 * s, 3.0 * s, 3.0 * s, 3.0 * s]);
        assert_eq!((part(7, 0, 4), part(7, 1, 4), part(7, 3, 4)), (0..1, 1..3, 5..7));
        assert_eq!((part(7, 4, 4), part(7, 9, 4)), (7..7, 7..7));
        // No elements: still every pointer read and every entry of y written.
        let mut y = vec![-1.0f32; 3];
        assert_eq!(dot_sum::<f32, 0, 1>((&[], &[], &x), &ptr, &mut y, &[]), (0.0, 45));
        assert_eq!(y, [0.0; 3]);
        // Reads summed in step and added to the dot: 0.5 · 100 read.
        let reads = vec![0.5f32; 100];
        let (dot, _) = dot_sum::<f32, 0, 1>((&idx, &values, &x), &[], &mut [], &reads);
        assert_eq!(dot, 2.0 * n as f32 + 50.0);
    }

    #[test]
    fn checks_agree() {
        let ptr = [0u64, 2, 2, 5];
        let idx = [1u64, 3, 0, 2, 4];
        for threads in 1..5 {
            assert!(validate_threads(&ptr, &idx, 5, threads));
            assert!(!validate_threads(&ptr, &idx, 4, threads));
            assert!(!validate_threads(&ptr, &[1, 3, 0, 2, 2], 5, threads));
            assert!(!validate_threads(&[0, 3, 2, 5], &idx, 5, threads));
        }
        // A cut inside one huge slice must still see the pair across the cut.
        let one = [0u64, 4];
        assert!(!validate_threads(&one, &[0, 5, 4, 6], 10, 2));
        assert!(validate_threads(&one, &[0, 4, 5, 6], 10, 2));
        assert!(naive_check(&ptr, &idx, 5));
        assert!(!naive_check(&ptr, &[1, 3, 0, 2, 2], 5));
        assert!(validate_local(&ptr, &idx, 5));
        assert_eq!(sum_u64(&[&ptr, &idx]), sum_u64_threads(&[&ptr, &idx], 2));
    }

    #[test]
    fn prefetched_sums_equal_the_plain_sum() {
        // Long enough for the prefetch to run, with a remainder after the lines.
        let long: Vec<u64> = (0..5003u64).map(|i| i * 7 + (i >> 3)).collect();
        let expected: u64 = long.iter().sum::<u64>() + 17;
        for slices in [&[&long[..], &[17u64][..]][..], &[&[17u64][..], &long[..]][..]] {
            assert_eq!(sum_u64(slices), expected);
            assert_eq!(sum_u64_prefetched(slices), expected);
            for threads in 1..4 {
                assert_eq!(sum_u64_prefetched_threads(slices, threads), expected);
            }
        }
    }

    #[test]
    fn spmv_agree() {
        // A = [[1, 0], [2, 3], [0, 4]] in CSC, written and read back.
        let (ptr, rows, vals) = ([0u64, 2, 4], [0u64, 1, 1, 2], [1f64, 2., 3., 4.]);
        let csc = hurray_writer::Csc::new(3, 2, &vals[..], &rows, &ptr).unwrap();
        let mut w = hurray_writer::FileWriter::new(Vec::new(), hurray_writer::WriterOptions::default()).unwrap();
        w.write_csc("A", &csc).unwrap();
        let bytes = hurray_reader::AlignedBytes::from_slice(&w.finish().unwrap());
        let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default()).unwrap();
        let a = file.tensor("A").unwrap().csc::<f64>().unwrap();
        let (mut y, mut y2) = ([0f64; 3], [0f64; 3]);
        spmv_csc_columns(&a, &[1., 10.], &mut y);
        a.mul_vec(&[1., 10.], &mut y2).unwrap();
        assert_eq!((y, y2), ([1., 32., 40.], [1., 32., 40.]));
    }
}
