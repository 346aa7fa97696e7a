//! The products over blocks of slices read as one run of elements, with
//! no branch at the end of each slice.
//!
//! The slice-by-slice loops (`scatter_direct_with`, `dots::dot_slices`)
//! stop at the end of every slice: where slices hold a few elements in
//! varying numbers, the CPU mispredicts nearly every one of those ends,
//! and the loops take 2–3x the time of their memory accesses (issue #34,
//! `short2` with `y` or `x` in L2 or L3). Here a block of consecutive
//! slices ([`SCATTER_BLOCK`] or [`DOTS_BLOCK`] elements at most) is first
//! **labelled**: each of its elements gets the number of its slice in the
//! block ([`Labels`]: a fixed store per slice, a loop only past [`RUN`]
//! elements). Then:
//!
//! - **the scatter** ([`scatter_block`]) adds `v[k] · x[label(k)]` to
//!   `y[idx[k]]` for every element in storage order: one loop, the same
//!   additions into each `y[i]` in the same order as the direct scatter;
//! - **the dot products** ([`dot_block`]) cut the block into [`STREAMS`]
//!   runs of whole slices and walk them side by side, one sum each: a sum
//!   restarts from 0 where the label changes and is stored into its
//!   slice's `y` at every element (the last store holds the slice's
//!   whole dot product). The runs' chains of additions overlap, where the
//!   slice-by-slice loop waits for each addition before the next. Each
//!   slice is still summed alone, from 0, in storage order.
//!
//! Both therefore equal the slice-by-slice loops bit for bit (tested in
//! `tests.rs` against them), but for which NaN comes out where two NaNs
//! meet in an addition: the compiler orders an addition's operands as it
//! likes (`p + sum` here, `sum + p` in the loop), and x86 keeps the first
//! operand's NaN (`tests::nan_sums_are_nan_on_every_path`). They are used where slices are short
//! ([`short`]); with longer slices the labels cost more than the
//! mispredictions they save.

use super::float::Float;
use crate::cursor::{to_u64, to_usize};
use crate::kernels::prefetch;

/// The most elements (and slices) a block of the scatter holds: its labels
/// stay in the L1 cache beside the block's stretch of `x`.
pub(super) const SCATTER_BLOCK: usize = 2048;
/// The most elements (and slices) a block of the dot products holds: the
/// runs are cut from a block, and the CPU's prefetcher gets ahead of a
/// run only after a while (blocks of 2 048 elements took about 1.1x the
/// time of blocks of 16 384, `short2` with `x` in L2).
pub(super) const DOTS_BLOCK: usize = 16384;
/// Slices holding this many elements on average or fewer go through the
/// blocks ([`short`]). Measured with `y` or `x` in L2 and L3 on the Zen 4
/// host (issue #34): about 2 a slice, 0.75–0.8x the time of the
/// slice-by-slice loops; about 10 a slice, 1.25–1.3x.
const SHORT_MEAN: u64 = 4;
/// The dot products go through the blocks only while `x` is at most this
/// large (bytes): with 8 MiB (in L3) they took 0.82x the time of the
/// slice-by-slice loop, with 128 MiB 1.1x (also with the prefetch
/// distance shared out among the four runs: each element a cache miss,
/// the loops wait on memory alike and the labels are extra work).
pub(super) const DOTS_MAX_X_BYTES: usize = 16 << 20;
/// A slice's label is written over this many positions however short the
/// slice (the next slice overwrites the excess): a fixed store, no loop
/// (one of 16 bytes). With runs of 16 `u32`s (four stores a slice) the
/// labelling took a third of the blocks' time on `short2`; 8 `u16`s
/// took 0.95x the time for the scatter, 0.88–0.93x for the dot products.
const RUN: usize = 8;
/// A slice's number within its block: blocks hold fewer than 2^16 slices
/// (half the bytes of a `u32` to store and to read).
type Label = u16;
const _: () = assert!(SCATTER_BLOCK < Label::MAX as usize);
const _: () = assert!(DOTS_BLOCK < Label::MAX as usize);
/// Runs of slices [`dot_block`] walks side by side.
const STREAMS: usize = 4;

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

/// The slices of a block, numbered from 0, one label per element.
pub(super) struct Labels {
    labels: Vec<Label>,
    /// The most elements and slices a block holds.
    block: usize,
}

/// What [`Labels::blocks`] hands its caller: the slices `from..to` of the
/// pointer window, and the labels of their elements (`None`: a slice of
/// more than `block` elements, or pointers that decrease: run the
/// slice-by-slice loop on them).
pub(super) type Visit<'l> = (usize, usize, Option<&'l [Label]>);

impl Labels {
    /// Room for blocks of at most `block` elements and slices.
    pub(super) fn new(block: usize) -> Self {
        Labels {
            labels: vec![0; block.saturating_add(RUN)],
            block,
        }
    }

    /// Walks the slices of the pointer window `ptr` in blocks of
    /// consecutive slices, at most `block` elements and `block` slices
    /// each, calling `visit` on each, in order.
    pub(super) fn blocks(&mut self, ptr: &[u64], mut visit: impl FnMut(Visit<'_>)) {
        let slices = ptr.len().saturating_sub(1);
        let mut from = 0;
        while from < slices {
            let window = ptr
                .get(from..=slices.min(from.saturating_add(self.block)))
                .unwrap_or_default();
            let (to, labelled) = match self.label(window) {
                (0, _) => (1, None),
                (to, labelled) => (to, labelled),
            };
            let to = from.saturating_add(to);
            visit((from, to, labelled));
            from = to;
        }
    }

    /// Labels the elements of the first slices of `ptr` that end within
    /// `block` elements of `ptr[0]`: `labels[k - ptr[0]] = j` for each
    /// element `k` of slice `j`. Returns how many slices, and their labels
    /// (`None` where the pointers decrease).
    fn label(&mut self, ptr: &[u64]) -> (usize, Option<&[Label]>) {
        let base = ptr.first().copied().unwrap_or(0);
        let mut end = 0;
        for (j, pair) in ptr.windows(2).enumerate() {
            let &[a, b] = pair else { break };
            let (a, b) = (to_usize(a.wrapping_sub(base)), to_usize(b.wrapping_sub(base)));
            if b > self.block {
                return (j, self.labels.get(..end));
            }
            if b < a {
                return (j.max(1), None);
            }
            // `j` < `block`: `blocks` passes no more slices.
            let label = Label::try_from(j).unwrap_or(Label::MAX);
            if let Some(run) = self.labels.get_mut(a..).and_then(<[Label]>::first_chunk_mut::<RUN>) {
                *run = [label; RUN];
            }
            if b - a > RUN {
                if let Some(rest) = self.labels.get_mut(a.saturating_add(RUN)..b) {
                    rest.fill(label);
                }
            }
            end = b;
        }
        (ptr.len().saturating_sub(1), self.labels.get(..end))
    }
}

/// `y[idx[k] - first] += v[k] · x[labels[k]]` for every element of a block
/// (`idx`, `values` and `labels` of the block's elements, `x` from the
/// block's first slice), in storage order; rows outside the window are
/// skipped. With `PREFETCH`, each element asks for the `y` entry of the
/// row `ahead` gives [`prefetch::DISTANCE`] elements on (`ahead`: the
/// rows from the block's start on, past its end: the next block's first
/// rows are requested too).
#[inline(never)] // its own registers, as `scatter_direct_with`
pub(super) fn scatter_block<T: Float, const PREFETCH: bool>(
    labels: &[Label],
    (idx, ahead): (&[u64], &[u64]),
    values: &[T],
    x: &[T],
    y: &mut [T],
    first: u64,
) {
    let slot = |r: u64| usize::try_from(r.wrapping_sub(first)).unwrap_or(usize::MAX);
    let last = y.len().saturating_sub(1);
    let mut ahead = ahead.get(prefetch::DISTANCE..).unwrap_or_default().iter();
    for ((&r, &v), &l) in idx.iter().zip(values).zip(labels) {
        if PREFETCH {
            if let Some(later) = ahead.next().and_then(|&a| y.get(slot(a).min(last))) {
                prefetch::prefetch(later);
            }
        }
        let xl = x.get(to_usize(u64::from(l))).copied().unwrap_or_default();
        if let Some(yr) = y.get_mut(slot(r)) {
            *yr = *yr + v * xl;
        }
    }
}

/// `y[j]` = the dot product of slice `j` of a block with `x` (`idx`,
/// `values` and `labels` of the block's elements; `ptr` the block's
/// pointers, positions from `ptr[0]`; `y` the block's slices), each summed
/// from 0 in storage order, [`STREAMS`] runs of slices side by side. With
/// `PREFETCH`, each element asks for the `x` entry of the index
/// [`prefetch::DISTANCE`] positions on in its run.
#[inline(never)]
pub(super) fn dot_block<T: Float, const PREFETCH: bool>(
    ptr: &[u64],
    labels: &[Label],
    idx: &[u64],
    values: &[T],
    x: &[T],
    y: &mut [T],
) {
    y.fill(T::default());
    let n = labels.len().min(idx.len()).min(values.len());
    let base = ptr.first().copied().unwrap_or(0);
    // Run `s` starts at the first slice starting at or after s/STREAMS of the elements.
    let mut cuts = [n; STREAMS + 1];
    for (s, cut) in cuts.iter_mut().enumerate().take(STREAMS) {
        let target = base.saturating_add(to_u64(n.saturating_mul(s) / STREAMS));
        let j = ptr.partition_point(|&p| p < target);
        *cut = ptr.get(j).map_or(n, |&p| to_usize(p.wrapping_sub(base)).min(n));
    }
    let mut runs: [Run<'_, T>; STREAMS] = Default::default();
    for (run, pair) in runs.iter_mut().zip(cuts.windows(2)) {
        if let &[from, to] = pair {
            let range = from..to.max(from);
            run.idx = idx.get(range.clone()).unwrap_or_default();
            run.values = values.get(range.clone()).unwrap_or_default();
            run.labels = labels.get(range).unwrap_or_default();
        }
    }
    let mut chains = [Chain::<T>::default(); STREAMS];
    // The runs side by side while all have elements, then each to its end.
    let common = runs.iter().map(Run::len).min().unwrap_or(0);
    let [a, b, c, d] = runs.each_ref().map(|run| run.elements(0, common));
    let [ca, cb, cc, cd] = &mut chains;
    for (i, (((ea, eb), ec), ed)) in a.zip(b).zip(c).zip(d).enumerate() {
        if PREFETCH {
            runs.iter().for_each(|run| run.prefetch(i, x));
        }
        ca.add(ea, x, y);
        cb.add(eb, x, y);
        cc.add(ec, x, y);
        cd.add(ed, x, y);
    }
    for (run, chain) in runs.iter().zip(&mut chains) {
        for (i, e) in run.elements(common, run.len()).enumerate() {
            if PREFETCH {
                run.prefetch(i.wrapping_add(common), x);
            }
            chain.add(e, x, y);
        }
    }
}

/// The elements of one of [`dot_block`]'s runs.
struct Run<'a, T> {
    idx: &'a [u64],
    values: &'a [T],
    labels: &'a [Label],
}

impl<T> Default for Run<'_, T> {
    fn default() -> Self {
        Run {
            idx: &[],
            values: &[],
            labels: &[],
        }
    }
}

impl<'a, T: Float> Run<'a, T> {
    fn len(&self) -> usize {
        self.labels.len().min(self.idx.len()).min(self.values.len())
    }

    /// Asks for the `x` entry of the element [`prefetch::DISTANCE`] after
    /// element `k` of the run.
    #[inline(always)]
    fn prefetch(&self, k: usize, x: &[T]) {
        if let Some(later) = self
            .idx
            .get(k.wrapping_add(prefetch::DISTANCE))
            .and_then(|&a| x.get(to_usize(a)))
        {
            prefetch::prefetch(later);
        }
    }

    /// The run's `(index, value, label)`s from element `from` to `to`.
    fn elements(&self, from: usize, to: usize) -> impl Iterator<Item = (u64, T, Label)> + 'a {
        let range = from..to.max(from);
        let idx = self.idx.get(range.clone()).unwrap_or_default();
        let values = self.values.get(range.clone()).unwrap_or_default();
        let labels = self.labels.get(range).unwrap_or_default();
        idx.iter().zip(values).zip(labels).map(|((&r, &v), &l)| (r, v, l))
    }
}

/// A run's sum of its current slice, and that slice's label.
#[derive(Clone, Copy)]
struct Chain<T> {
    sum: T,
    last: Label,
}

impl<T: Float> Default for Chain<T> {
    fn default() -> Self {
        Chain {
            sum: T::default(),
            last: Label::MAX,
        }
    }
}

impl<T: Float> Chain<T> {
    /// Adds `v · x[r]` to the sum of slice `l` (restarted from 0 if `l`
    /// is not the last element's slice), and stores the sum in `y[l]`.
    #[inline(always)]
    fn add(&mut self, (r, v, l): (u64, T, Label), x: &[T], y: &mut [T]) {
        // `kept` masks the bits: a branch here would be mispredicted at
        // nearly every slice's start.
        self.sum = self.sum.kept(l == self.last) + v * x.get(to_usize(r)).copied().unwrap_or_default();
        self.last = l;
        if let Some(yl) = y.get_mut(to_usize(u64::from(l))) {
            *yl = self.sum;
        }
    }
}
