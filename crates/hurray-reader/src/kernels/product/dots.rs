//! The dot products of `y = M·x` for a structure read as CSR (Aᵀ·x of a
//! CSC): `y[i]` is the dot product of slice `i` with `x`, summed in
//! storage order, like scipy's `csr_matvec`.
//!
//! On several threads ([`dot_slices_split`]) the elements are shared out
//! evenly and each thread takes the slices that start in its share. A cut
//! falls between two slices, unless no slice boundary lies within
//! 1/[`SPLIT_SLACK`] of a share (and [`MIN_SLACK`] elements) of the even
//! cut (a slice longer than that: one column of a matrix, a hub of a
//! graph): then the slice is cut too, each thread sums its part in
//! storage order from 0, and the parts are added in thread order, which
//! may round differently from one thread's sum
//! (`tests::long_slice_splits_over_threads`). Every other slice is summed
//! as on one thread: the same bits. The scatter's column split
//! (`split.rs`) cuts at [`cuts`] too, always at a slice boundary.
//!
//! Tried (issue #34): two consecutive slices summed in one loop, each in
//! its own accumulator (two independent chains of additions, the same
//! bits): 1.1–1.2x the CPU time of this loop on the 2-core AMD host, with
//! `y` in L2 and in L3; not kept. Short slices go through
//! `chunks::dots`, four steps a trip.

use super::chunks;
use super::float::Float;
use super::{positions, same_length, walk_hinted};
use crate::cursor::{to_u64, to_usize};
use crate::kernels::prefetch;
use crate::kernels::threads::{self, share};

/// A cut of [`dot_slices_split`] moves to a slice boundary within
/// `1 / SPLIT_SLACK` of a thread's share of the elements, or within
/// [`MIN_SLACK`] elements if that is more (the shares then differ by up
/// to twice that); with no boundary so near, it cuts the slice.
const SPLIT_SLACK: usize = 8;
/// The least a cut moves to reach a slice boundary: slices of this many
/// elements or fewer are never cut (summing one apart saves a thread
/// microseconds at most).
pub(super) const MIN_SLACK: usize = 4096;

/// `y[i]` = the dot product of slice `i` with `x`, over the slices of the
/// pointer window `ptr` (`ptr.len() - 1` slices, positions absolute in
/// `idx` and `values`), summed in storage order; an index past `x` reads 0.
/// A slice whose pointers decrease or pass the arrays (data never
/// validated), and every slice after it, gives 0.
/// With `prefetch` above 0 (the distance of
/// [`prefetch_distance`](super::prefetch_distance)), each element asks
/// for the `x` entry of the element [`prefetch::DISTANCE`] positions on
/// if that is the distance, [`prefetch::FAR_DISTANCE`] otherwise. Where slices
/// are short ([`chunks::short`]) and `x` within
/// [`chunks::DOTS_MAX_X_BYTES`], [`chunks::dots`], the same sums bit for
/// bit.
pub(super) fn dot_slices<T: Float>(ptr: &[u64], idx: &[u64], values: &[T], x: &[T], y: &mut [T], prefetch: usize) {
    const NEAR: usize = prefetch::DISTANCE;
    const FAR: usize = prefetch::FAR_DISTANCE;
    let short = chunks::short(ptr) && std::mem::size_of_val(x) <= chunks::DOTS_MAX_X_BYTES;
    match (prefetch, short, super::lookahead(ptr, x)) {
        (0, true, _) => chunks::dots::<T, 0>(ptr, idx, values, x, y),
        (NEAR, true, _) => chunks::dots::<T, NEAR>(ptr, idx, values, x, y),
        (0, false, false) => dot_slices_with::<T, 0, false>(ptr, idx, values, x, y),
        (0, false, true) => dot_slices_with::<T, 0, true>(ptr, idx, values, x, y),
        (NEAR, false, false) => dot_slices_with::<T, NEAR, false>(ptr, idx, values, x, y),
        (NEAR, false, true) => dot_slices_with::<T, NEAR, true>(ptr, idx, values, x, y),
        (_, true, _) => chunks::dots::<T, FAR>(ptr, idx, values, x, y),
        (_, false, true) => dot_slices_with::<T, FAR, true>(ptr, idx, values, x, y),
        (_, false, false) => dot_slices_with::<T, FAR, false>(ptr, idx, values, x, y),
    }
}

/// [`dot_slices`] with the prefetch as a constant: with `PREFETCH` above
/// 0, each element asks for the `x` entry of the index that many
/// elements on. With `AHEAD` (where [`lookahead`](super::lookahead)
/// holds), `idx` and `values` are followed ahead too
/// ([`prefetch::arrays_ahead`]). Slices
/// by position, as `scatter_direct_with` walks them: on the Zen 3 host
/// (issue #34), 0.92x the time of the loop over [`pairs`](crate::kernels::pairs)'
/// sub-slices with about 2 elements a slice and `x` far beyond the caches
/// (0.95x on two threads), 0.92x with about 10 and `x` in L2 (0.90x on
/// two), the same with about 100 and `x` in L3. Without either hint, each
/// slice as sub-slices, `x` asked for once every
/// [`SPARSE_EVERY`](prefetch::SPARSE_EVERY) elements
/// ([`walk_hinted`]), as there: on the Zen 5 host (before that sparse
/// hint), about 100 a slice,
/// 0.93–0.96x the time with `x` in L3 on one thread, 0.96–0.97x on two,
/// 0.97–0.98x with `x` in L2 on one thread, 0.99–1.00x on two
/// (`docs/perf-log/run-ad.md`). Where NaNs meet, which NaN comes out may
/// differ from the loop by position (its sign and payload: Rust fixes
/// neither; `tests::nan_sums_are_nan_on_every_path`).
#[inline(never)] // its own registers, as `scatter_direct_with`
pub(super) fn dot_slices_with<T: Float, const PREFETCH: usize, const AHEAD: bool>(
    ptr: &[u64],
    idx: &[u64],
    values: &[T],
    x: &[T],
    y: &mut [T],
) {
    let (idx, values) = same_length(idx, values);
    let len = idx.len();
    let mut written = 0usize;
    let hint = |later: u64| prefetch::prefetch_at(x, to_usize(later));
    for (pair, yi) in ptr.windows(2).zip(y.iter_mut()) {
        let Some((from, to)) = positions(pair, len) else { break };
        if AHEAD {
            prefetch::arrays_ahead(idx, values, from);
        }
        let term = |c: u64, v: T| v * x.get(to_usize(c)).copied().unwrap_or_default();
        let mut sum = T::default();
        if PREFETCH == 0 && !AHEAD {
            // Sub-slices, `x` asked for sparsely, as `scatter_direct_with`.
            walk_hinted((idx, values), (from, to), &hint, |c, v| sum = sum + term(c, v));
        } else {
            for at in from..to {
                if PREFETCH > 0 {
                    if let Some(&later) = idx.get(at.wrapping_add(PREFETCH)) {
                        prefetch::prefetch_at(x, to_usize(later));
                    }
                }
                if let (Some(&c), Some(&v)) = (idx.get(at), values.get(at)) {
                    sum = sum + term(c, v);
                }
            }
        }
        *yi = sum;
        written = written.wrapping_add(1);
    }
    y.get_mut(written..).unwrap_or_default().fill(T::default());
}

/// [`dot_slices`] on `threads` threads, as the module describes: the
/// elements shared out at [`cuts`] (`min_slack`: [`MIN_SLACK`] but in
/// tests), thread `t` computing `y` for the slices that start in its
/// share ([`first_slices`]; the last one only up to the next cut) and the
/// part of the slice it starts within, added to that slice's `y` in
/// thread order once every thread is done. The calling thread takes the
/// last share, then any share no thread of the pool has started.
pub(super) fn dot_slices_split<T: Float>(
    ptr: &[u64],
    idx: &[u64],
    values: &[T],
    x: &[T],
    y: &mut [T],
    (threads, min_slack, prefetch): (usize, usize, usize),
) {
    let slices = ptr.len().saturating_sub(1).min(y.len());
    let ptr = ptr.get(..=slices).unwrap_or_default();
    let (y, rest) = y.split_at_mut(slices);
    rest.fill(T::default());
    let cuts = cuts(ptr, threads, min_slack);
    let shares = cuts.len().saturating_sub(1);
    let firsts = first_slices(ptr, &cuts);
    // Share `t`'s dot products into `y` (its slices); returns the part of
    // the slice it starts within, if it does.
    let share_of = |t: usize, y: &mut [T]| -> Option<(usize, T)> {
        let next = t.wrapping_add(1);
        let (&from, &to, &first, &last) = (cuts.get(t)?, cuts.get(next)?, firsts.get(t)?, firsts.get(next)?);
        let part = |a: u64, b: u64| dot_part(a, b, (idx, values, x), prefetch);
        // The end of the share's last slice: past `to`, the rest is the next share's.
        let end = ptr.get(last).copied().unwrap_or(to);
        match last.checked_sub(1) {
            Some(cut) if last > first && end > to => {
                let (whole, tail) = y.split_at_mut(y.len().saturating_sub(1));
                dot_slices(
                    ptr.get(first..=cut).unwrap_or_default(),
                    idx,
                    values,
                    x,
                    whole,
                    prefetch,
                );
                if let (Some(yt), Some(&start)) = (tail.first_mut(), ptr.get(cut)) {
                    *yt = part(start, to);
                }
            }
            _ => dot_slices(ptr.get(first..=last).unwrap_or_default(), idx, values, x, y, prefetch),
        }
        let head_end = ptr.get(first).copied().unwrap_or(to).min(to);
        let within = first.checked_sub(1).filter(|_| from < head_end)?;
        Some((within, part(from, head_end)))
    };
    let share_of = &share_of;
    let (mut rest, mut at) = (&mut *y, 0usize);
    let jobs: Vec<_> = (0..shares)
        .map(|t| {
            let end = firsts.get(t.wrapping_add(1)).copied().unwrap_or(slices);
            let len = end.saturating_sub(at).min(rest.len());
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(len);
            (rest, at) = (tail, end);
            move || share_of(t, mine)
        })
        .collect();
    let carries = threads::run_all(jobs);
    for (slice, sum) in carries.into_iter().flatten() {
        if let Some(ys) = y.get_mut(slice) {
            *ys = *ys + sum;
        }
    }
}

/// The dot product of the elements at positions `from..to` with `x`,
/// summed in storage order from 0 ([`dot_slices`] on one slice).
fn dot_part<T: Float>(from: u64, to: u64, (idx, values, x): (&[u64], &[T], &[T]), prefetch: usize) -> T {
    let mut one = [T::default()];
    dot_slices(&[from, to], idx, values, x, &mut one, prefetch);
    let [sum] = one;
    sum
}

/// Where the shares of [`dot_slices_split`] start and end: `threads + 1`
/// positions from `ptr[0]` to the last pointer, non-decreasing. Cut `t`
/// aims at `t / threads` of the elements; it moves to the first slice
/// boundary at or after that, or else the last one before it, if either
/// lies within `1 / SPLIT_SLACK` of a share (or `min_slack` elements:
/// [`MIN_SLACK`] but in tests); otherwise it stays, inside a slice.
pub(super) fn cuts(ptr: &[u64], threads: usize, min_slack: usize) -> Vec<u64> {
    let threads = threads.max(1);
    let first = ptr.first().copied().unwrap_or(0);
    let last = ptr.last().copied().unwrap_or(first).max(first);
    let total = to_usize(last.wrapping_sub(first));
    let slack = to_u64((total / threads / SPLIT_SLACK).max(min_slack));
    let mut floor = first;
    (0..=threads)
        .map(|t| {
            let target = first.saturating_add(to_u64(share(total, t, threads)));
            let j = ptr.partition_point(|&p| p < target);
            let after = ptr.get(j).copied().unwrap_or(last);
            let before = j.checked_sub(1).and_then(|i| ptr.get(i)).copied().unwrap_or(first);
            let cut = if after.saturating_sub(target) <= slack {
                after
            } else if target.saturating_sub(before) <= slack {
                before
            } else {
                target
            };
            floor = cut.clamp(floor, last);
            floor
        })
        .collect()
}

/// The first slice of each share of `cuts` (positions from [`cuts`]): the
/// first slice starting at or after the cut, 0 for the first share and
/// the number of slices at the last cut (empty slices at the end go to
/// the last share), non-decreasing. Share `t` takes the slices
/// `firsts[t]..firsts[t + 1]`.
pub(super) fn first_slices(ptr: &[u64], cuts: &[u64]) -> Vec<usize> {
    let slices = ptr.len().saturating_sub(1);
    let shares = cuts.len().saturating_sub(1);
    let mut floor = 0;
    (cuts.iter().enumerate())
        .map(|(t, &c)| {
            let first = match t {
                0 => 0,
                t if t == shares => slices,
                _ => ptr.partition_point(|&p| p < c),
            };
            floor = first.clamp(floor, slices);
            floor
        })
        .collect()
}
