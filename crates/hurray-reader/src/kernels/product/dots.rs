//! The dot products of `y = M·x` for a structure read as CSR (Aᵀ·x of a
//! CSC): `y[i]` is the dot product of slice `i` with `x`, summed in
//! storage order, like scipy's `csr_matvec`.
//!
//! Tried (issue #34): two consecutive slices summed in one loop, each in
//! its own accumulator (two independent chains of additions, the same
//! bits): 1.1–1.2x the CPU time of this loop on the 2-core AMD host, with
//! `y` in L2 and in L3; not kept.

use super::float::Float;
use crate::cursor::to_usize;
use crate::kernels::pairs;
use crate::kernels::prefetch;

/// `y[i]` = the dot product of slice `i` with `x`, over the slices of the
/// pointer window `ptr` (`ptr.len() - 1` slices, positions absolute in
/// `idx` and `values`), summed in storage order; an index past `x` reads 0.
/// Slices that [`pairs`] does not yield (data never validated) leave 0.
/// With `prefetch`, each element asks for the `x` entry of the element
/// [`prefetch::DISTANCE`] positions on.
pub(super) fn dot_slices<T: Float>(ptr: &[u64], idx: &[u64], values: &[T], x: &[T], y: &mut [T], prefetch: bool) {
    if prefetch {
        dot_slices_with::<T, true>(ptr, idx, values, x, y);
    } else {
        dot_slices_with::<T, false>(ptr, idx, values, x, y);
    }
}

/// [`dot_slices`] with the prefetch as a constant: each element asks for
/// the `x` entry of the index [`prefetch::DISTANCE`] elements on.
#[inline(never)] // its own registers, as `scatter_direct_with`
fn dot_slices_with<T: Float, const PREFETCH: bool>(ptr: &[u64], idx: &[u64], values: &[T], x: &[T], y: &mut [T]) {
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
