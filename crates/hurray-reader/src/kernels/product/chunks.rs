//! The products where slices are short ([`short`]): each slice walked in
//! chunks of [`CHUNK`] elements, the steps past its end adding `+0.0`, so
//! that every slice of up to `CHUNK` elements takes one trip of the same
//! loop.
//!
//! The slice-by-slice loops (`scatter_direct_with`, `dots::dot_slices_with`)
//! stop at the end of every slice: where slices hold a few elements in
//! varying numbers, the CPU mispredicts most of those ends. Here the loop
//! over a chunk always runs `CHUNK` steps, and the loop over the chunks of
//! a slice ends after one trip (for every slice of `short2`, which hold 0
//! to 4). A step past the slice's end reads the element there, which
//! belongs to the next slice (whose own steps read it again, from the L1
//! cache), and adds its product's bits masked to `+0.0`
//! ([`Float::kept`]); past the arrays the dot products add `+0.0` and
//! the scatter skips the step.
//!
//! **The same bits as the slice loops**, in the default floating-point
//! environment, which Rust assumes (round to nearest, subnormals kept:
//! no flush-to-zero). A sum that starts at `+0.0` and adds products one
//! at a time is never `-0.0`: `a + b` is `-0.0` only when both are. And
//! `s + (+0.0)` is `s` for every other `s`, subnormals, infinities and
//! NaNs included. So the steps past the end change nothing: the dot
//! products start each slice at `+0.0` as the loop does; the scatter's
//! `y` is zeroed before the pass, and a step past the end reads a row of
//! the next slice and writes it back unchanged. (A host that sets
//! flush-to-zero would see `-0.0` or a subnormal sum come out `+0.0`.)
//! The masked products are still computed, so they may raise the CPU's
//! floating-point exception flags (`inf · 0`), which nothing here reads.
//! Tested against the loops bit for bit (`tests.rs`, with `-0.0`,
//! subnormals, infinities and NaNs among the values), but for which NaN
//! comes out where two NaNs meet (`tests::nan_sums_are_nan_on_every_path`).
//!
//! Measured on the Zen 4 host against the labelled blocks they replace
//! (four runs of slices side by side; issue #34, `docs/perf-log/run-t.md`),
//! `short2`, A B A B, the median of 20 rounds' ratios: Aᵀ·x took 0.85x the
//! time with `x` in L2 or in L3 on one thread, 0.85x and 0.76x on two; A·x
//! 0.91x with `y` in L3 (one thread and two) and, with `y` in L2, 1.00x and
//! 1.11x on one thread and 1.12x and 1.13x on two in two such comparisons
//! (its steps past a column's end read and write rows of `y` that the
//! labels did not touch; chunks of 2 for the scatter, with fewer such
//! steps, took 1.24x the labels' time). By the ratio of medians of 10 or 12
//! rounds: chunks of 2 took 0.95–1.13x the time of chunks of 4 and chunks
//! of 8 1.55–1.6x; where slices hold about 10 (`random10`), chunks of 4, 8
//! and 16 took 1.16–1.6x the slice loop's time; with `x` far beyond the
//! caches (`far-d2`, 128 MiB) chunks of 4 took 1.03x (1.07x on two
//! threads), so the slice loop and its prefetch stay there
//! ([`DOTS_MAX_X_BYTES`]).

use super::float::Float;
use super::{positions, same_length};
use crate::cursor::{to_u64, to_usize};
use crate::kernels::prefetch;

/// The steps of one trip over a slice: a slice of `CHUNK` elements or
/// fewer takes one trip.
pub(super) const CHUNK: usize = 4;
/// Slices holding this many elements on average or fewer go through the
/// chunks ([`short`]).
const SHORT_MEAN: u64 = 4;
/// The dot products go through the chunks only while `x` is at most this
/// large (bytes): far beyond the caches every step is a cache miss, and
/// the slice loop, which asks for `x` entries ahead, was faster.
pub(super) const DOTS_MAX_X_BYTES: usize = 16 << 20;

/// Whether the slices of the pointer window `ptr` hold at most
/// [`SHORT_MEAN`] elements on average (and there are any).
pub(super) fn short(ptr: &[u64]) -> bool {
    mean_within(ptr, SHORT_MEAN)
}

/// Whether the slices of `ptr` (one at least) hold `mean` elements or
/// fewer on average.
pub(super) fn mean_within(ptr: &[u64], mean: u64) -> bool {
    let slices = to_u64(ptr.len().saturating_sub(1));
    let stored = match (ptr.first(), ptr.last()) {
        (Some(&first), Some(&last)) => last.saturating_sub(first),
        _ => 0,
    };
    slices > 0 && stored <= slices.saturating_mul(mean)
}

/// Calls `step(at)` for the positions `from..to` of one slice and the
/// steps past its end: [`CHUNK`] positions a trip, as many trips as the
/// slice needs and at least one (an empty slice too), so that every
/// slice of up to `CHUNK` elements takes one trip of the same loop. The
/// step adds nothing where `at >= to`. `trip(k)` is called before each
/// trip, with its first position.
#[inline(always)]
fn walk(from: usize, to: usize, mut trip: impl FnMut(usize), mut step: impl FnMut(usize)) {
    let mut k = from;
    loop {
        trip(k);
        for at in (0..CHUNK).map(|s| k.wrapping_add(s)) {
            step(at);
        }
        k = k.wrapping_add(CHUNK);
        if k >= to {
            break;
        }
    }
}

/// `y[i]` = the dot product of slice `i` with `x`, over the slices of the
/// pointer window `ptr` (positions absolute in `idx` and `values`), each
/// summed from `+0.0` in storage order, [`CHUNK`] steps a trip (the
/// module's description): the same bits as `dots::dot_slices_with`. An
/// index past `x` reads 0; a slice whose pointers decrease or pass the
/// arrays, and every slice after it, gives 0, as does any `y` past the
/// slices. With `PREFETCH` above 0, each step asks for the `x` entry of
/// the element that many positions on.
#[inline(never)] // its own registers, as `dot_slices_with`
pub(super) fn dots<T: Float, const PREFETCH: usize>(ptr: &[u64], idx: &[u64], values: &[T], x: &[T], y: &mut [T]) {
    let (idx, values) = same_length(idx, values);
    let len = idx.len();
    let mut written = 0usize;
    for (pair, yi) in ptr.windows(2).zip(y.iter_mut()) {
        let Some((from, to)) = positions(pair, len) else { break };
        let mut sum = T::default();
        walk(
            from,
            to,
            |_| (),
            |at| {
                if PREFETCH > 0 {
                    if let Some(&later) = idx.get(at.wrapping_add(PREFETCH)) {
                        prefetch::prefetch_at(x, to_usize(later));
                    }
                }
                let product = match (idx.get(at), values.get(at)) {
                    (Some(&c), Some(&v)) => v * x.get(to_usize(c)).copied().unwrap_or_default(),
                    _ => T::default(),
                };
                sum = sum + product.kept(at < to);
            },
        );
        *yi = sum;
        written = written.wrapping_add(1);
    }
    y.get_mut(written..).unwrap_or_default().fill(T::default());
}

/// `y[idx[k] - first] += v[k] · x[j]` for every element `k` of slice `j`
/// of `ptr`, in storage order, [`CHUNK`] steps a trip (the module's
/// description): the same additions as `scatter_direct_with`, into a `y`
/// that holds no `-0.0` (the caller zeroes it). Rows outside the window
/// `first..first + y.len()` are skipped; the walk ends at a slice whose
/// pointers decrease or pass the arrays. With `PREFETCH` above 0, each
/// trip asks for the `y` entry of the row that many elements after its
/// first step: once a trip, not a step as the dot products ask (most
/// steps past a slice's end asked again for a row the next slice's
/// steps ask for). On the Intel host of issue #34's run AE
/// (`docs/perf-log/run-ae.md`), A B A B, about 2 a column, `y` in L3
/// (8 MiB): A·x took 0.79x the time on one thread and 0.87x on two; the
/// dot products took 1.03–1.09x with a hint a trip and keep theirs.
#[inline(never)] // its own registers, as `scatter_direct_with`
pub(super) fn scatter<T: Float, const PREFETCH: usize>(
    (ptr, idx, values): (&[u64], &[u64], &[T]),
    x: &[T],
    y: &mut [T],
    first: u64,
) {
    let slot = |r: u64| usize::try_from(r.wrapping_sub(first)).unwrap_or(usize::MAX);
    // A row outside the window requests the window's last entry, as in
    // `scatter_direct_with`.
    let last = y.len().saturating_sub(1);
    let (idx, values) = same_length(idx, values);
    let len = idx.len();
    let base = y.as_ptr();
    let trip = |k: usize| {
        if PREFETCH > 0 {
            if let Some(&later) = idx.get(k.wrapping_add(PREFETCH)) {
                prefetch::prefetch_from(base, slot(later).min(last));
            }
        }
    };
    for (pair, &xj) in ptr.windows(2).zip(x) {
        let Some((from, to)) = positions(pair, len) else { break };
        walk(from, to, &trip, |at| {
            if let (Some(&r), Some(&v)) = (idx.get(at), values.get(at)) {
                if let Some(yr) = y.get_mut(slot(r)) {
                    *yr = *yr + (v * xj).kept(at < to);
                }
            }
        });
    }
}
