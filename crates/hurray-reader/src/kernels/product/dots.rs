//! The dot products of `y = M·x` for a structure read as CSR (Aᵀ·x of a
//! CSC): `y[i]` is the dot product of slice `i` with `x`, summed in
//! storage order, like scipy's `csr_matvec`.
//!
//! Tried (issue #34): two consecutive slices summed in one loop, each in
//! its own accumulator (two independent chains of additions, the same
//! bits): 1.1–1.2x the CPU time of this loop on the 2-core AMD host, with
//! `y` in L2 and in L3; not kept. Short slices go through
//! `flat::dot_block`, four runs of slices side by side.

use super::flat::{self, Labels};
use super::float::Float;
use crate::cursor::to_usize;
use crate::kernels::prefetch;
use crate::kernels::{pairs, span};

/// `y[i]` = the dot product of slice `i` with `x`, over the slices of the
/// pointer window `ptr` (`ptr.len() - 1` slices, positions absolute in
/// `idx` and `values`), summed in storage order; an index past `x` reads 0.
/// Slices that [`pairs`] does not yield (data never validated) leave 0.
/// With `prefetch`, each element asks for the `x` entry of the element
/// [`prefetch::DISTANCE`] positions on. Where slices are short
/// ([`flat::short`]) and `x` within [`flat::DOTS_MAX_X_BYTES`], a block of
/// slices at a time ([`dots_in_blocks`]), the same sums bit for bit.
pub(super) fn dot_slices<T: Float>(ptr: &[u64], idx: &[u64], values: &[T], x: &[T], y: &mut [T], prefetch: bool) {
    let blocks = flat::short(ptr) && std::mem::size_of_val(x) <= flat::DOTS_MAX_X_BYTES;
    match (prefetch, blocks) {
        (true, true) => dots_in_blocks::<T, true>(ptr, idx, values, x, y, flat::DOTS_BLOCK),
        (false, true) => dots_in_blocks::<T, false>(ptr, idx, values, x, y, flat::DOTS_BLOCK),
        (true, false) => dot_slices_with::<T, true>(ptr, idx, values, x, y),
        (false, false) => dot_slices_with::<T, false>(ptr, idx, values, x, y),
    }
}

/// [`dot_slices`] a block of slices at a time, `block` elements at most
/// ([`flat::dot_block`]); a slice longer than a block (or pointers that
/// decrease) by [`dot_slices_with`]. The same result bit for bit.
pub(super) fn dots_in_blocks<T: Float, const PREFETCH: bool>(
    ptr: &[u64],
    idx: &[u64],
    values: &[T],
    x: &[T],
    y: &mut [T],
    block: usize,
) {
    let slices = ptr.len().saturating_sub(1).min(y.len());
    let ptr = ptr.get(..=slices).unwrap_or_default();
    let (done, rest) = y.split_at_mut(slices);
    rest.fill(T::default());
    Labels::new(block).blocks(ptr, |(from, to, labels)| {
        let window = ptr.get(from..=to).unwrap_or_default();
        let Some(y) = done.get_mut(from..to) else { return };
        let positions = span(window);
        match (labels, idx.get(positions.clone()), values.get(positions)) {
            (Some(labels), Some(idx), Some(values)) => {
                flat::dot_block::<T, PREFETCH>(window, labels, idx, values, x, y)
            }
            _ => dot_slices_with::<T, PREFETCH>(window, idx, values, x, y),
        }
    });
}

/// [`dot_slices`] with the prefetch as a constant: each element asks for
/// the `x` entry of the index [`prefetch::DISTANCE`] elements on.
#[inline(never)] // its own registers, as `scatter_direct_with`
pub(super) fn dot_slices_with<T: Float, const PREFETCH: bool>(
    ptr: &[u64],
    idx: &[u64],
    values: &[T],
    x: &[T],
    y: &mut [T],
) {
    let mut written = 0usize;
    let first = to_usize(ptr.first().copied().unwrap_or(0));
    let mut ahead = idx.get(first.saturating_add(prefetch::DISTANCE)..).unwrap_or_default();
    for ((cols, vals), yi) in pairs(ptr, idx, values).zip(y.iter_mut()) {
        *yi = cols
            .iter()
            .zip(vals)
            .enumerate()
            .fold(T::default(), |acc, (k, (&c, &v))| {
                if PREFETCH {
                    if let Some(later) = ahead.get(k).and_then(|&a| x.get(to_usize(a))) {
                        prefetch::prefetch(later);
                    }
                }
                acc + v * x.get(to_usize(c)).copied().unwrap_or_default()
            });
        if PREFETCH {
            ahead = ahead.get(cols.len()..).unwrap_or_default();
        }
        written = written.wrapping_add(1);
    }
    y.get_mut(written..).unwrap_or_default().fill(T::default());
}
