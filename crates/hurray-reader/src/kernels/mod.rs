//! The hot loops, apart from the format: the storage-invariant scans
//! ([`scan`] for CSC/CSR, [`coo`] for sorted COO), the sparse products
//! ([`product`]), the cache hint they share ([`prefetch`]) and the split of
//! their work over threads ([`threads`]). They take slices and return a
//! verdict or fill an output; naming what is wrong (tensor, field, byte
//! offset, rule) is the format code's, which calls them (`layout::*`).
//!
//! The `unsafe` blocks outside `mmap.rs` are here, each with its SAFETY
//! argument: the prefetch hint, and the calls of the SIMD copies of the
//! scan and the scatter on a CPU found to have their instructions.

pub(crate) mod coo;
pub(crate) mod prefetch;
pub(crate) mod product;
pub(crate) mod scan;
pub(crate) mod scratch;
pub(crate) mod threads;

use crate::cursor::to_usize;

/// The arrays of a compressed sparse matrix (CSC, CSR, a CSF level) as the
/// kernels read them: `ptr` (one more entry than there are outer slices,
/// positions in `idx`), `idx` (the inner index of every stored element),
/// the positions `start..end` of `idx` the slices hold (all of it, or a
/// block's), and `bound`, which every inner index must stay below.
#[derive(Clone, Copy)]
pub(crate) struct Arrays<'a> {
    pub(crate) ptr: &'a [u64],
    pub(crate) idx: &'a [u64],
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) bound: u64,
}

impl Arrays<'_> {
    /// The positions of `idx` the slices hold.
    pub(crate) fn positions(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    /// How many elements the slices hold.
    pub(crate) fn stored(&self) -> u64 {
        crate::cursor::to_u64(self.end.saturating_sub(self.start))
    }
}

/// The positions of `idx` and `values` that the slices of the pointer
/// window `ptr` hold: `ptr[0]..ptr[last]` (`0..0` for no pointers).
pub(crate) fn span(ptr: &[u64]) -> std::ops::Range<usize> {
    ptr.first().map_or(0, |&p| to_usize(p))..ptr.last().map_or(0, |&p| to_usize(p))
}

/// The indices and values of each slice of the pointer window `ptr`
/// (`ptr.len() - 1` slices, positions absolute in `idx` and `values`), for
/// the products: [`Contiguous`].
pub(crate) fn pairs<'s, T>(ptr: &'s [u64], idx: &'s [u64], values: &'s [T]) -> Contiguous<'s, T> {
    let range = span(ptr);
    Contiguous {
        pointers: ptr.windows(2),
        rest: (
            idx.get(range.clone()).unwrap_or_default(),
            values.get(range).unwrap_or_default(),
        ),
    }
}

/// The slices of validated data, cut off the front (or the back) of `idx`
/// and `values` one after the other (validated slices are contiguous)
/// rather than taken by range (`get(start..end)` on both arrays): with
/// ranges LLVM may turn the two checks into `cmov`s that the slice's loads
/// wait for, which measured ~20% slower in the dot products on the 100 M
/// benchmark (`docs/perf-log/run-c.md` § 3), and whether it did changed from
/// one build to another. A pointer pair that does not fit (only in data
/// never validated) ends the iteration.
#[derive(Clone)]
pub(crate) struct Contiguous<'s, T> {
    pub(crate) pointers: std::slice::Windows<'s, u64>,
    pub(crate) rest: (&'s [u64], &'s [T]),
}

impl<'s, T> Iterator for Contiguous<'s, T> {
    type Item = (&'s [u64], &'s [T]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let &[a, b] = self.pointers.next()? else {
            return None; // unreachable: windows of two
        };
        let len = to_usize(b.wrapping_sub(a));
        let (indices, indices_rest) = self.rest.0.split_at_checked(len)?;
        let (values, values_rest) = self.rest.1.split_at_checked(len)?;
        self.rest = (indices_rest, values_rest);
        Some((indices, values))
    }
}

impl<T> DoubleEndedIterator for Contiguous<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let &[a, b] = self.pointers.next_back()? else {
            return None; // unreachable: windows of two
        };
        let len = to_usize(b.wrapping_sub(a));
        let (indices_rest, indices) = self.rest.0.split_at_checked(self.rest.0.len().checked_sub(len)?)?;
        let (values_rest, values) = self.rest.1.split_at_checked(self.rest.1.len().checked_sub(len)?)?;
        self.rest = (indices_rest, values_rest);
        Some((indices, values))
    }
}

/// True when `slice` is strictly increasing and its last (largest) entry is
/// below `bound`. Branch-free over the slice so the loop vectorises.
#[inline]
pub(crate) fn slice_ok(slice: &[u64], bound: u64) -> bool {
    let (Some(head), Some(tail)) = (slice.get(..slice.len().saturating_sub(1)), slice.get(1..)) else {
        return true;
    };
    let unsorted = head.iter().zip(tail).fold(false, |bad, (a, b)| bad | (b <= a));
    let last_ok = slice.last().is_none_or(|&v| v < bound);
    !unsorted && last_ok
}
