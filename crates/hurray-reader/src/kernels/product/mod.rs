//! `y = M·x` over the compressed structure: the scatter (CSC read as
//! such, `y[idx[k]] += v[k] · x[j]`), with propagation blocking when `y`
//! is large (for `f32` on CPUs with AVX-512, the version of [`avx512`]),
//! and the dot products (CSR read as such), each on one thread or
//! several.

use super::prefetch;
use super::threads::{self, cores, MAX_THREADS};
use super::{pairs, Arrays};
use crate::cursor::{to_u64, to_usize};

#[cfg(target_arch = "x86_64")]
mod avx512;
mod blocking;
mod chunks;
mod dots;
mod float;
mod split;
pub(crate) use blocking::Blocking;
pub use float::Float;

impl<'a> Arrays<'a> {
    /// `y = M·x` for this structure read as CSC (`y[idx[k]] += v[k] · x[j]`
    /// over slice `j`), `y` overwritten. When `y` is larger than
    /// [`Blocking::DIRECT_MAX_Y_BYTES`] (see [`Blocking::plan`]) the
    /// contributions go through
    /// [`scatter_blocked`](Self::scatter_blocked) (for `f32` on a CPU with
    /// AVX-512, through [`avx512::scatter`] where its plan applies),
    /// otherwise (or when the scratch cannot be allocated) straight into
    /// `y` ([`scatter_direct`](Self::scatter_direct)). All add the same
    /// products to each `y[i]` in the same order: the results are equal
    /// bit for bit. The caller has checked the lengths and the invariants;
    /// an index past `y` is skipped, never a panic.
    pub(crate) fn scatter<T: Float>(&self, values: &[T], x: &[T], y: &mut [T]) {
        self.scatter_rows(values, x, y, 0);
    }

    /// [`scatter`](Self::scatter) into the rows `first..first + y.len()`
    /// of `M·x` (`y[i - first]` for row `i`); the others are skipped. The
    /// window must lie within `0..2^64` (`first + y.len()` does not
    /// overflow; callers pass windows of `0..nrows`), or a row below
    /// `first` could wrap into it.
    fn scatter_rows<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], first: u64) {
        // The window's share of the elements, for the plan (rows evenly filled).
        let stored = self.stored();
        let nnz = u128::from(stored)
            .saturating_mul(to_u64(y.len()).into())
            .checked_div(self.bound.into())
            .map_or(stored, |n| u64::try_from(n).unwrap_or(u64::MAX));
        #[cfg(target_arch = "x86_64")]
        if let (Some(values), Some(x), Some(y)) = (T::f32s(values), T::f32s(x), T::f32s_mut(y)) {
            if avx512::scatter((self.ptr, self.idx, values), x, y, first, (nnz, None)) {
                return;
            }
        }
        let done = Blocking::plan(y.len(), nnz, std::mem::size_of::<T>())
            .is_some_and(|blocking| self.scatter_blocked(values, x, y, first, blocking));
        if !done {
            self.scatter_direct(values, x, y, first);
        }
    }

    /// [`scatter`](Self::scatter) on up to `threads` threads, and no more
    /// than [`std::thread::available_parallelism`]. One thread for fewer
    /// than [`SPLIT_MIN_NNZ`] elements (handing a part to another thread
    /// costs more than it saves). Where `y` is scattered into directly (within
    /// [`Blocking::DIRECT_MAX_Y_BYTES`]) the columns are cut between the
    /// threads, each scattering into a `y` of its own, added at the end
    /// ([`scatter_columns`](Self::scatter_columns): the work divides by
    /// the threads; the rounding of a row whose elements fall to more
    /// than one thread may differ from one thread's, see `split.rs`).
    /// Where `y` is larger (or the private vectors cannot be allocated)
    /// the rows are cut, each thread running the scatter over the whole
    /// matrix for its own ([`scatter_threads`](Self::scatter_threads):
    /// equal to [`scatter`](Self::scatter) bit for bit).
    pub(crate) fn scatter_parallel<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        let threads = threads.clamp(1, MAX_THREADS).min(cores());
        if threads == 1 || self.stored() < SPLIT_MIN_NNZ {
            return self.scatter(values, x, y);
        }
        let small = std::mem::size_of_val(y) <= Blocking::DIRECT_MAX_Y_BYTES;
        if !(small && self.scatter_columns(values, x, y, threads)) {
            self.scatter_threads(values, x, y, threads);
        }
    }

    /// [`scatter`](Self::scatter) on `threads` threads ([`threads::scope`],
    /// clamped to `1..=`[`MAX_THREADS`] and to the rows of `y`): the rows
    /// are cut into `threads` consecutive ranges of equal length, `y`
    /// split with them, and each thread runs the scatter over the whole
    /// structure, skipping the rows outside its range; the calling thread
    /// takes the last range. Each `y[i]` receives the same products in the
    /// same order as from `scatter`: equal bit for bit, whatever `threads`.
    fn scatter_threads<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        let threads = threads.clamp(1, MAX_THREADS).min(y.len().max(1));
        if threads == 1 {
            return self.scatter(values, x, y);
        }
        let jobs = threads::cut_mut(y, threads)
            .into_iter()
            .map(|(from, part)| move || self.scatter_rows(values, x, part, to_u64(from)));
        threads::run_all(jobs.collect());
    }

    /// Each outer slice's indices and values, in order, for the blocked
    /// scatter (`blocking.rs`): [`pairs`] over the whole pointer array.
    /// Its walk ends where [`pairs`] does (a pointer pair that does not
    /// fit the arrays), not at [`positions`]' first bad pair as the direct
    /// and chunked loops do: on data never validated the paths may leave
    /// different rows, never a panic.
    fn slices<'s, T>(&'s self, values: &'s [T]) -> impl Iterator<Item = (&'s [u64], &'s [T])> + 's {
        pairs(self.ptr, self.idx, values)
    }

    /// The direct scatter into rows `first..first + y.len()`: one pass over
    /// `ptr`, `idx` and `values`, `y[idx[k] - first] += v[k] · x[j]` at
    /// random positions of `y`, prefetching as [`prefetch_distance`] says;
    /// where slices are short ([`chunks::short`]),
    /// [`chunks::scatter`], the same additions in the same order. Where
    /// [`lookahead`] follows the arrays ahead (slices of about 10) and `y`
    /// is within 8 MiB, `y` is not prefetched: on the Zen 5 host, with `y`
    /// in L3 (`l3-d10`), A·x took 0.73–0.80x the time without the hint on
    /// one thread and 0.82–0.95x on two (`docs/perf-log/run-y.md`; Aᵀ·x,
    /// which reads `x` there, took 1.18x without it and keeps it; with `y`
    /// of 64 and 512 KiB A·x took 1.25–1.38x with it, one thread and two,
    /// `docs/perf-log/run-ac.md`).
    /// From 8 to 16 MiB both hints run.
    pub(crate) fn scatter_direct<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], first: u64) {
        y.fill(T::default());
        let arrays = (self.ptr, self.idx, values);
        const NEAR: usize = prefetch::DISTANCE;
        const FAR: usize = prefetch::FAR_DISTANCE;
        match (
            prefetch_distance(self.ptr, y),
            chunks::short(self.ptr),
            lookahead(self.ptr, y),
        ) {
            (0, true, _) => chunks::scatter::<T, 0>(arrays, x, y, first),
            (NEAR, true, _) => chunks::scatter::<T, NEAR>(arrays, x, y, first),
            (_, true, _) => chunks::scatter::<T, FAR>(arrays, x, y, first),
            (0, false, false) => self.scatter_direct_with::<T, 0, false>(values, x, y, first),
            // Slices of about 10 and `y` within 8 MiB: the arrays followed
            // ahead, `y` not prefetched (the doc above).
            (0 | NEAR, false, true) => self.scatter_direct_with::<T, 0, true>(values, x, y, first),
            (NEAR, false, false) => self.scatter_direct_with::<T, NEAR, false>(values, x, y, first),
            // `y` beyond 8 MiB and within 16: prefetched far ahead, and
            // the arrays followed too (`LOOKAHEAD_MAX_VECTOR`).
            (_, false, true) => self.scatter_direct_with::<T, FAR, true>(values, x, y, first),
            (_, false, false) => self.scatter_direct_with::<T, FAR, false>(values, x, y, first),
        }
    }

    /// The additions of [`scatter_direct`](Self::scatter_direct) (`y` not
    /// zeroed first), slice by slice in storage order; the walk ends at a
    /// slice whose pointers decrease or pass the arrays (data never
    /// validated). With `PREFETCH` above 0, the `y` entry of the row that
    /// many elements on is requested while each element is added. With
    /// `AHEAD` (where [`lookahead`] holds), `idx` and `values` are
    /// followed ahead too ([`prefetch::arrays_ahead`]).
    ///
    /// Slices by position: a slice costs its two pointers' check and no
    /// slice bookkeeping, and the hints need no bounds check
    /// ([`prefetch::prefetch_at`]). On the Zen 3 host (issue #34), with
    /// about 10 elements a column and `y` in L2, 0.91x the time of the
    /// loop over [`pairs`]' sub-slices on one thread and 0.93x on two;
    /// about 100 a column, `y` in L3, 1.01–1.02x. Without either hint
    /// (long slices, [`prefetch_distance`] 0) each slice's elements are
    /// walked as sub-slices, `y` asked for once every
    /// [`prefetch::SPARSE_EVERY`] elements ([`walk_hinted`]; its figures
    /// are there): two position checks fewer an element, so more
    /// elements in the core's window at once. On the
    /// Zen 5 host, about 100 a column, A·x with `y` in L3 (`l3-d100`)
    /// took 0.83–0.96x the time on one thread and 0.81–0.86x on two, with
    /// `y` in L2 0.98–1.00x (A B A B, 30 rounds, two series;
    /// `docs/perf-log/run-ad.md`). With about 10 a slice, where the arrays
    /// are followed ahead, the same change took 1.12x: those keep the
    /// positions.
    // Its own registers: inlined beside its twin, the loop reloaded `y`
    // from the stack.
    #[inline(never)]
    pub(super) fn scatter_direct_with<T: Float, const PREFETCH: usize, const AHEAD: bool>(
        &self,
        values: &[T],
        x: &[T],
        y: &mut [T],
        first: u64,
    ) {
        let slot = |r: u64| usize::try_from(r.wrapping_sub(first)).unwrap_or(usize::MAX);
        // A row outside the window requests the window's last entry: a
        // branch on the window would be mispredicted for every other
        // element on two threads.
        let last = y.len().saturating_sub(1);
        let (idx, values) = same_length(self.idx, values);
        let len = idx.len();
        let base = y.as_ptr();
        let hint = |later: u64| prefetch::prefetch_from(base, slot(later).min(last));
        for (pair, &xj) in self.ptr.windows(2).zip(x) {
            let Some((from, to)) = positions(pair, len) else { break };
            if AHEAD {
                prefetch::arrays_ahead(idx, values, from);
            }
            let add = |y: &mut [T], r: u64, v: T| {
                if let Some(yr) = y.get_mut(slot(r)) {
                    *yr = *yr + v * xj;
                }
            };
            if PREFETCH == 0 && !AHEAD {
                walk_hinted((idx, values), (from, to), &hint, |r, v| add(y, r, v));
            } else {
                for at in from..to {
                    if PREFETCH > 0 {
                        if let Some(&later) = idx.get(at.wrapping_add(PREFETCH)) {
                            prefetch::prefetch_at(y, slot(later).min(last));
                        }
                    }
                    if let (Some(&r), Some(&v)) = (idx.get(at), values.get(at)) {
                        add(y, r, v);
                    }
                }
            }
        }
    }

    /// `y = M·x` for this structure read as CSR: `y[i]` is the dot product
    /// of slice `i` with `x`, summed in storage order. Same preconditions as
    /// [`scatter`](Self::scatter); an index past `x` reads 0.
    pub(crate) fn dots<T: Float>(&self, values: &[T], x: &[T], y: &mut [T]) {
        dots::dot_slices(self.ptr, self.idx, values, x, y, prefetch_distance(self.ptr, x));
    }

    /// [`dots`](Self::dots) on `threads` threads ([`threads::scope`],
    /// clamped to `1..=`[`MAX_THREADS`] and to [`cores`]; one thread for
    /// fewer than [`SPLIT_MIN_NNZ`] elements): the elements shared out
    /// evenly, each thread computing the dot products of the slices that
    /// start in its share ([`dots::dot_slices_split`]). Every `y[i]` equals
    /// `dots`' bit for bit, but for a slice holding more than 4 096
    /// elements and about 1/8 of a share, which may be cut between threads
    /// and its parts added (`dots.rs` says how).
    pub(crate) fn dots_parallel<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        let threads = threads.clamp(1, MAX_THREADS).min(cores());
        if threads == 1 || self.stored() < SPLIT_MIN_NNZ {
            return self.dots(values, x, y);
        }
        let split = (threads, dots::MIN_SLACK, prefetch_distance(self.ptr, x));
        dots::dot_slices_split(self.ptr, self.idx, values, x, y, split);
    }
}

/// A vector up to this size (bytes) stays in an L2 cache of 2 MiB (the
/// Intel host of `docs/perf-log/run-c.md`), or mostly in L2 and L3 (1 MiB of
/// L2 on the AMD host). Products whose random accesses go to it are bound
/// by the CPU: they do not prefetch (measured on the AMD host, § Run G:
/// with the hint, 0.7–0.86x with 80 KB and 2 MB vectors, 1.1–1.4x from 4
/// MB), but for slices of about 10 ([`prefetch_distance`]).
pub(crate) const CACHED_BYTES: usize = 2 << 20;

/// Whether a product walking the slices of `ptr` slice by slice, with
/// `vector` read or written at random, follows its index and value
/// arrays ahead ([`prefetch::arrays_ahead`]): where slices hold
/// [`LOOKAHEAD_MAX_MEAN`] elements or fewer on average and `vector` is
/// within [`LOOKAHEAD_MAX_VECTOR`].
pub(super) fn lookahead<T>(ptr: &[u64], vector: &[T]) -> bool {
    std::mem::size_of_val(vector) <= LOOKAHEAD_MAX_VECTOR && chunks::mean_within(ptr, LOOKAHEAD_MAX_MEAN)
}

/// The longest slices, on average, that [`lookahead`] follows ahead. On
/// the Zen 4 host (`docs/perf-log/run-r.md`), with about 10 elements a
/// slice, A·x and Aᵀ·x took 0.94–0.97x the time with `y` or `x` in L2
/// and 0.86–0.90x in L3; with about 100, the same in L2 and 1.03–1.05x in
/// L3.
const LOOKAHEAD_MAX_MEAN: u64 = 32;

/// The largest vector for which [`lookahead`] follows the arrays ahead:
/// half of the Zen 5 host's L3 cache. There, with about 10 elements a
/// slice and a vector of 16 MiB (`float64` with 2 Mi rows, `float32` with
/// 4 Mi), the vector prefetched [`prefetch::FAR_DISTANCE`] ahead, Aᵀ·x
/// took 0.85–0.92x and 0.75–0.77x the time with the arrays followed too
/// (two threads 0.78–0.95x and 0.75–0.76x), A·x 0.95–0.96x and 0.98x;
/// with 32 MiB or more, 0.98–1.05x (A B A B, two or three series:
/// `docs/perf-log/run-aa.md`). (On the Zen 4 host,
/// with the vector 64 ahead, the hints had slowed a `float64` vector of
/// 16 MiB to 1.1–1.25x the time: `docs/perf-log/run-r.md`.)
const LOOKAHEAD_MAX_VECTOR: usize = 16 << 20;

/// The largest vector [`prefetch_distance`] asks for
/// [`prefetch::DISTANCE`] ahead (and not at all for long slices): a
/// quarter of the Zen 4 host's L3 cache; beyond it,
/// [`prefetch::FAR_DISTANCE`].
const NEAR_MAX_VECTOR: usize = 8 << 20;

/// Below this many stored elements the products run on one thread: the
/// product takes about as long as handing a part to another thread (tens
/// of µs: starting one, as this was measured, or waking one of the pool).
pub(crate) const SPLIT_MIN_NNZ: u64 = 1 << 16;

/// The positions `from..to` of one slice (`pair`: its two pointers), if
/// they lie within `0..len` in order; `None` ends a walk (data never
/// validated). The products walk slices from it, by position (a slice
/// costs the check of its two pointers, and the steps past its end of
/// [`chunks`] read elements of the next slice) or as the sub-slices of
/// [`slice_parts`].
#[inline(always)]
pub(super) fn positions(pair: &[u64], len: usize) -> Option<(usize, usize)> {
    let &[from, to] = pair else { return None };
    let (from, to) = (to_usize(from), to_usize(to));
    (from <= to && to <= len).then_some((from, to))
}

/// The indices and values of one slice, `from..to` as [`positions`] gave
/// it (within both arrays, `from <= to`; empty otherwise, which it never
/// is): walked as sub-slices, a step checks no position.
#[inline(always)]
pub(super) fn slice_parts<'a, T>(
    (idx, values): (&'a [u64], &'a [T]),
    (from, to): (usize, usize),
) -> (&'a [u64], &'a [T]) {
    (
        idx.get(from..to).unwrap_or_default(),
        values.get(from..to).unwrap_or_default(),
    )
}

/// Calls `each(index, value)` for the elements `from..to` of one slice
/// ([`positions`]), in order, walked as sub-slices ([`slice_parts`]), and
/// `hint(index)` with the index of the element [`prefetch::DISTANCE`] on,
/// once every [`prefetch::SPARSE_EVERY`] elements (where there is one):
/// the slice loops where no hint an element runs (long and dense slices,
/// [`prefetch_distance`] 0, the arrays not followed ahead).
#[inline(always)]
pub(super) fn walk_hinted<T: Copy>(
    (idx, values): (&[u64], &[T]),
    (from, to): (usize, usize),
    mut hint: impl FnMut(u64),
    mut each: impl FnMut(u64, T),
) {
    const EVERY: usize = prefetch::SPARSE_EVERY;
    let (slice_idx, slice_values) = slice_parts((idx, values), (from, to));
    let mut indices = slice_idx.chunks_exact(EVERY);
    let mut group_values = slice_values.chunks_exact(EVERY);
    let mut ahead = from.wrapping_add(prefetch::DISTANCE);
    for (i8, v8) in (&mut indices).zip(&mut group_values) {
        if let Some(&later) = idx.get(ahead) {
            hint(later);
        }
        ahead = ahead.wrapping_add(EVERY);
        for (&i, &v) in i8.iter().zip(v8) {
            each(i, v);
        }
    }
    for (&i, &v) in indices.remainder().iter().zip(group_values.remainder()) {
        each(i, v);
    }
}

/// `idx` and `values` cut to the shorter's length: one bounds check a
/// step for both.
pub(super) fn same_length<'a, T>(idx: &'a [u64], values: &'a [T]) -> (&'a [u64], &'a [T]) {
    let len = idx.len().min(values.len());
    (
        idx.get(..len).unwrap_or_default(),
        values.get(..len).unwrap_or_default(),
    )
}

/// How many elements ahead a product walking the slices of `ptr`, with
/// `vector` read or written at the positions its indices give, asks for
/// those entries at every element (0: not at every element; the slice
/// loops then ask once every [`prefetch::SPARSE_EVERY`],
/// [`walk_hinted`], and the chunks not at all): [`prefetch::DISTANCE`]
/// where `vector` is over [`CACHED_BYTES`] or the slices hold about 10,
/// [`prefetch::FAR_DISTANCE`] beyond [`NEAR_MAX_VECTOR`]; not at all for
/// two kinds of slices the core follows alone. (The direct scatter drops
/// it where [`lookahead`] holds and `vector` is within
/// [`NEAR_MAX_VECTOR`]: see [`Arrays::scatter_direct`].)
/// On the Zen 5 host (issue #34, `docs/perf-log/run-v.md`), A B A B:
///
/// - **Slices of about 10, `vector` within [`CACHED_BYTES`]**: more than
///   [`chunks::short`]'s and within [`lookahead`]'s mean. The dot
///   products (Aᵀ·x) took 0.85–0.89x the time with the hint, `x` of 8
///   KiB to 2 MiB, `f32` and `f64`, one thread and two
///   (`docs/perf-log/run-ac.md`; likely because each slice's loads,
///   started late after the mispredicted end of the slice before, then
///   find their lines in L1). With
///   about 2 a slice (the chunks) the hint cost 1.07–1.09x, with about
///   100 1.02–1.03x.
/// - **Long slices, `vector` in L3**: more than [`LOOKAHEAD_MAX_MEAN`]
///   elements a slice on average and `vector` within
///   [`NEAR_MAX_VECTOR`]. A slice's loop then runs without a
///   mispredicted end for long stretches and the core's window keeps
///   enough L3 accesses in flight: without the hint, about 100 a slice
///   and 8 MiB, A·x and Aᵀ·x took 0.72–0.74x the time on one thread,
///   0.90–0.96x and 0.67–0.80x on two. With about 10 it was mixed
///   (without: 0.92–1.00x on one thread, 0.90–0.95x for Aᵀ·x on two,
///   1.19–1.25x for A·x on two) and with 2 the hint paid (1.12–1.7x the
///   time without); with about 100 and 16 MiB too (1.08–2.1x). On the
///   Zen 4 host the hint paid on every `l3` shape (without: 1.15–1.57x
///   the CPU time, `docs/perf-log/run-l.md`).
/// - **Dense slices**: slices that hold, on average, more than one element
///   for every [`DENSE_GAP`] entries of `vector`. Their sorted indices then
///   step through `vector` a cache line (`f32`) or two (`f64`) apart or
///   less, a stream the
///   hardware prefetcher follows: one column of 8 M elements over 32 Mi
///   rows (`onecol`), A·x took 0.80x the time without the hint.
pub(crate) fn prefetch_distance<T>(ptr: &[u64], vector: &[T]) -> usize {
    let bytes = std::mem::size_of_val(vector);
    let about_ten = lookahead(ptr, vector) && !chunks::short(ptr);
    let long_in_l3 = bytes <= NEAR_MAX_VECTOR && !chunks::mean_within(ptr, LOOKAHEAD_MAX_MEAN);
    let dense = !chunks::mean_within(ptr, to_u64(vector.len() / DENSE_GAP));
    if (bytes <= CACHED_BYTES && !about_ten) || long_in_l3 || dense {
        0
    } else if bytes <= NEAR_MAX_VECTOR {
        prefetch::DISTANCE
    } else {
        prefetch::FAR_DISTANCE
    }
}

/// Slices whose indices lie less than this many entries of the vector
/// apart on average are dense, for [`prefetch_distance`]: a cache line of
/// `f32`s, two of `f64`s (measured with `f32` only).
const DENSE_GAP: usize = 16;

#[cfg(test)]
mod tests;
