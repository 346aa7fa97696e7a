//! The scatter of `y = M·x` split by columns over threads: each thread
//! scatters a consecutive range of columns (about `nnz / threads`
//! elements) into a `y` of its own, and the partial results are added.
//!
//! Every thread reads only its share of the matrix and runs the
//! one-thread loop on it, so the work divides by the threads; the price is
//! a private `y` per thread but the first (zeroed, `nrows` entries) and
//! the merge, one pass over them, which costs little where `y` is small
//! beside the matrix (within [`Blocking::DIRECT_MAX_Y_BYTES`], where
//! [`Arrays::scatter_parallel`](super::Arrays) uses it).
//!
//! **Rounding.** Thread `t`'s partial `y_t[i]` is the one-thread sum over
//! its columns, in storage order; the result is `(y_0[i] + y_1[i]) + ..`,
//! in thread order. Where a row has elements in the columns of more than
//! one thread, that is a different order of additions from the one-thread
//! product's, and the last bits may differ (an `f32` example:
//! `tests::split_scatter_rounds_per_part`); where its elements are all in
//! one thread's columns, the result is the same bit for bit. Deterministic:
//! the same `threads` gives the same bits, whatever the OS does with the
//! threads.

use super::dots;
use super::float::Float;
use crate::cursor::to_usize;
use crate::kernels::threads::{self, MAX_THREADS};
use crate::kernels::Arrays;

/// Below this many rows the partial results are added on the calling
/// thread (handing half to another thread would cost more).
const MERGE_ALONE_ROWS: usize = 1 << 16;

impl Arrays<'_> {
    /// `y = M·x` on `threads` threads (clamped to `1..=`[`MAX_THREADS`])
    /// as the module describes: columns cut into ranges of about equal
    /// element counts ([`column_cuts`](Self::column_cuts)), the first
    /// range scattered into `y` by the calling thread, the others into
    /// zeroed vectors of their own, then added into `y` in thread order.
    /// Returns `false`, with `y` untouched, when the private vectors cannot
    /// be allocated.
    pub(crate) fn scatter_columns<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) -> bool {
        let threads = threads.clamp(1, MAX_THREADS);
        let cuts = self.column_cuts(threads);
        let mut partials: Vec<Vec<T>> = Vec::new();
        if partials.try_reserve_exact(threads.saturating_sub(1)).is_err() {
            return false;
        }
        for _ in 1..threads {
            let mut p = Vec::new();
            if p.try_reserve_exact(y.len()).is_err() {
                return false;
            }
            partials.push(p);
        }
        threads::scope(|scope| {
            let mut jobs = Vec::with_capacity(partials.len());
            for (t, p) in partials.iter_mut().enumerate() {
                let range = (cuts.get(t.wrapping_add(1)), cuts.get(t.wrapping_add(2)));
                let (&from, &to) = match range {
                    (Some(from), Some(to)) => (from, to),
                    _ => (&0, &0),
                };
                let rows = y.len();
                jobs.push(scope.spawn(move || {
                    p.resize(rows, T::default());
                    self.columns(from, to)
                        .scatter(values, x.get(from..).unwrap_or_default(), p);
                }));
            }
            let to = cuts.get(1).copied().unwrap_or(0);
            self.columns(0, to).scatter(values, x, y);
            threads::join_all(jobs);
        });
        merge(y, &partials, threads);
        true
    }

    /// The columns `from..to` of this structure (`ptr` cut to them; `idx`
    /// whole: positions stay absolute).
    pub(super) fn columns(&self, from: usize, to: usize) -> Arrays<'_> {
        let ptr = self.ptr.get(from..=to).unwrap_or_default();
        Arrays {
            ptr,
            start: ptr.first().map_or(self.start, |&p| to_usize(p)),
            end: ptr.last().map_or(self.start, |&p| to_usize(p)),
            ..*self
        }
    }

    /// Where each thread's columns start: `threads + 1` cuts from 0 to the
    /// number of columns, non-decreasing; cut `t` is the first column
    /// starting at or after `t / threads` of the elements (the dot
    /// products' [`cuts`](dots::cuts), moved to a column boundary however
    /// far).
    pub(crate) fn column_cuts(&self, threads: usize) -> Vec<usize> {
        dots::first_slices(self.ptr, &dots::cuts(self.ptr, threads, usize::MAX))
    }
}

/// `y[i] = ((y[i] + partials[0][i]) + partials[1][i]) + ..`, the rows cut
/// over `threads` threads when there are many.
fn merge<T: Float>(y: &mut [T], partials: &[Vec<T>], threads: usize) {
    let add = |y: &mut [T], from: usize| {
        for p in partials {
            let p = p.get(from..).unwrap_or_default();
            for (yi, &pi) in y.iter_mut().zip(p) {
                *yi = *yi + pi;
            }
        }
    };
    if partials.is_empty() {
        return;
    }
    if y.len() < MERGE_ALONE_ROWS || threads < 2 {
        return add(y, 0);
    }
    let jobs = threads::cut_mut(y, threads)
        .into_iter()
        .map(|(from, part)| move || add(part, from));
    threads::run_all(jobs.collect());
}
