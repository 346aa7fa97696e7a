//! The structure shared by CSC and CSR: a pointer array over "outer" slices
//! (columns for CSC, rows for CSR) and the "inner" index of every stored
//! element. CSC of A and CSR of Aᵀ are the same bytes, so one type serves
//! both and `transpose` only changes the names.
//!
//! This module holds the type, its lookups and its slice iterator;
//! [`check`] checks the four storage invariants (the fast pass is
//! `kernels::scan`'s), and the products are `kernels::product`'s.

mod check;
pub(crate) mod plans;

pub use crate::kernels::product::Float;

use crate::cursor::to_u64;
use crate::error::{Error, Result};
use crate::kernels::{pairs, slice_ok, Arrays, Contiguous};

/// Names and rules of one orientation, for errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Names {
    pub(crate) ptr: &'static str,
    pub(crate) idx: &'static str,
    /// What an outer slice is called: `column` (CSC) or `row` (CSR).
    pub(crate) outer: &'static str,
    /// What an inner index is called: `row` (CSC) or `column` (CSR).
    pub(crate) inner: &'static str,
    /// The inner indices' bound: `nrows` (CSC) or `ncols` (CSR).
    pub(crate) bound: &'static str,
    pub(crate) inv1: &'static str,
    pub(crate) inv2: &'static str,
    pub(crate) inv3: &'static str,
    pub(crate) inv4: &'static str,
}

pub(crate) const CSC: Names = Names {
    ptr: "col_ptr",
    idx: "row_indices",
    outer: "column",
    inner: "row",
    bound: "nrows",
    inv1: crate::error::rule::CSC_INV1,
    inv2: crate::error::rule::CSC_INV2,
    inv3: crate::error::rule::CSC_INV3,
    inv4: crate::error::rule::CSC_INV4,
};

pub(crate) const CSR: Names = Names {
    ptr: "row_ptr",
    idx: "col_indices",
    outer: "row",
    inner: "column",
    bound: "ncols",
    inv1: crate::error::rule::CSR_INV1,
    inv2: crate::error::rule::CSR_INV2,
    inv3: crate::error::rule::CSR_INV3,
    inv4: crate::error::rule::CSR_INV4,
};

/// Pointer and index arrays of a compressed sparse matrix, borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Compressed<'data> {
    pub(crate) tensor: &'data str,
    pub(crate) names: Names,
    /// Number of outer slices (`ncols` for CSC); `ptr` has one more entry.
    pub(crate) outer_len: u64,
    /// Bound of the inner indices (`nrows` for CSC).
    pub(crate) inner_len: u64,
    pub(crate) nnz: u64,
    pub(crate) ptr: &'data [u64],
    pub(crate) idx: &'data [u64],
    /// File offsets of `ptr[0]` and `idx[0]`, for errors.
    pub(crate) ptr_offset: u64,
    pub(crate) idx_offset: u64,
    /// Whether the storage invariants were verified.
    pub(crate) scanned: bool,
    /// Read as the transpose of the file's layout (`CscView::transpose`,
    /// `CsrView::transpose`): errors about the file keep its names
    /// (`names`), argument errors name the view's rows and columns.
    pub(crate) transposed: bool,
    /// For a block of consecutive slices of the file's matrix
    /// ([`block`](Self::block)): which. `ptr` is then the block's window of
    /// the file's pointer array (`outer_len + 1` entries, positions in the
    /// file's `idx`), and `idx` and `nnz` stay the file's.
    pub(crate) window: Option<Window>,
}

/// Where a block of outer slices lies in the file's matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// The file's number of the block's first slice (`j0` of columns
    /// `j0..j1`).
    pub(crate) first: u64,
    /// The positions of `idx` (and of the values) the block's slices hold:
    /// `ptr[j0]..ptr[j1]`, checked to lie within `0..=nnz`.
    pub(crate) start: usize,
    pub(crate) end: usize,
}

impl<'data> Compressed<'data> {
    /// The same arrays read as the transposed layout (CSC as CSR and back):
    /// the file's names stay, the view's argument names swap.
    pub(crate) fn transposed(self) -> Self {
        Compressed {
            transposed: !self.transposed,
            ..self
        }
    }

    /// What the caller's outer and inner arguments are called: the file's
    /// slice and index words; on a transposed view swapped and said to be
    /// the transpose's (`transpose's column`), since the tensor an error
    /// names has the other shape.
    fn argument_names(&self) -> (&'static str, &'static str) {
        if self.transposed {
            (of_transpose(self.names.inner), of_transpose(self.names.outer))
        } else {
            (self.names.outer, self.names.inner)
        }
    }

    /// The positions of `idx` (and of the values) this structure's slices
    /// hold: all of them, or a block's.
    pub(crate) fn positions(&self) -> std::ops::Range<usize> {
        match self.window {
            Some(w) => w.start..w.end,
            None => 0..self.idx.len(),
        }
    }

    /// The stored elements: `nnz`, or a block's share of them.
    pub(crate) fn stored(&self) -> u64 {
        match self.window {
            Some(w) => to_u64(w.end.saturating_sub(w.start)),
            None => self.nnz,
        }
    }

    /// The inner indices of this structure's elements: `idx`, or a block's part.
    pub(crate) fn indices(&self) -> &'data [u64] {
        self.idx.get(self.positions()).unwrap_or_default()
    }

    /// The file's number of slice `j` of this structure (a block's slices
    /// are numbered from 0 in its view, from `j0` in the file).
    pub(crate) fn file_slice(&self, j: u64) -> u64 {
        self.window.map_or(j, |w| w.first.saturating_add(j))
    }

    /// The slices `range` (of `0..outer_len`) as a structure of their own,
    /// over the same arrays: no copy. A block of a scanned structure is
    /// scanned; of an unscanned one, the pointers it starts and ends at are
    /// checked against the file's (`ptr[0] = 0`, `ptr[n] = nnz` and `ptr[j0]
    /// <= ptr[j1] <= nnz`, O(1)), and its own scan
    /// ([`validate`](Self::validate)) reads its slices alone.
    pub(crate) fn block(&self, range: std::ops::Range<u64>) -> Result<Compressed<'data>> {
        let (start, end) = (range.start, range.end);
        if start > end || end > self.outer_len {
            return Err(Error::BlockArgument {
                tensor: self.tensor.into(),
                what: self.argument_names().0,
                start,
                end,
                bound: self.outer_len,
            });
        }
        if !self.scanned {
            if self.window.is_none() {
                if self.ptr_entry(0) != 0 {
                    return Err(self.ptr_first());
                }
                self.check_last()?;
            }
            let (a, b) = (self.ptr_entry(start), self.ptr_entry(end));
            let bound = to_u64(self.positions().end);
            if a > bound || b > bound {
                return Err(self.ptr_too_large(if a > bound { start } else { end }));
            }
            if b < a {
                return Err(self.ptr_decreasing(end));
            }
        }
        let ptr = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .and_then(|(s, e)| self.ptr.get(s..=e))
            .unwrap_or_default();
        let position = |i: u64| usize::try_from(self.ptr_entry(i)).unwrap_or(usize::MAX);
        Ok(Compressed {
            outer_len: end - start,
            ptr,
            ptr_offset: self.ptr_at(start),
            window: Some(Window {
                first: self.file_slice(start),
                start: position(start),
                end: position(end),
            }),
            ..*self
        })
    }

    /// The arrays as the kernels read them.
    pub(crate) fn arrays(&self) -> Arrays<'data> {
        let positions = self.positions();
        Arrays {
            ptr: self.ptr,
            idx: self.idx,
            start: positions.start,
            end: positions.end,
            bound: self.inner_len,
        }
    }

    /// `y = M·x` read as CSC (`kernels::product`), on one thread. The caller
    /// has checked the lengths and the invariants.
    pub(crate) fn scatter<T: Float>(&self, values: &[T], x: &[T], y: &mut [T]) {
        self.arrays().scatter(values, x, y);
    }

    /// [`scatter`](Self::scatter) on up to `threads` threads.
    pub(crate) fn scatter_parallel<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        self.arrays().scatter_parallel(values, x, y, threads);
    }

    /// `y = M·x` read as CSR: dot products (`kernels::product`).
    pub(crate) fn dots<T: Float>(&self, values: &[T], x: &[T], y: &mut [T]) {
        self.arrays().dots(values, x, y);
    }

    /// [`dots`](Self::dots) on up to `threads` threads.
    pub(crate) fn dots_parallel<T: Float>(&self, values: &[T], x: &[T], y: &mut [T], threads: usize) {
        self.arrays().dots_parallel(values, x, y, threads);
    }

    /// Checks `x.len() = expected_x` and `y.len() = expected_y` for a
    /// product `y = M·x`. On a transposed view the error names the
    /// transpose's dimension (`nrows of the transpose`): the tensor it
    /// names has the other shape.
    pub(crate) fn check_lengths(
        &self,
        (x, x_name, expected_x): (usize, &'static str, u64),
        (y, y_name, expected_y): (usize, &'static str, u64),
    ) -> Result<()> {
        for (what, len, expected_name, expected) in [("x", x, x_name, expected_x), ("y", y, y_name, expected_y)] {
            if to_u64(len) != expected {
                let expected_name = if self.transposed {
                    of_transpose(expected_name)
                } else {
                    expected_name
                };
                return Err(Error::LengthMismatch {
                    tensor: self.tensor.into(),
                    what,
                    len: to_u64(len),
                    expected_name,
                    expected,
                });
            }
        }
        Ok(())
    }

    fn ptr_at(&self, i: u64) -> u64 {
        self.ptr_offset.saturating_add(i.saturating_mul(8))
    }

    fn idx_at(&self, i: u64) -> u64 {
        self.idx_offset.saturating_add(i.saturating_mul(8))
    }

    /// `ptr[i]`, 0 past the end (never a panic).
    fn ptr_entry(&self, i: u64) -> u64 {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.ptr.get(i))
            .copied()
            .unwrap_or(0)
    }
}

impl<'data> Compressed<'data> {
    /// The range of outer slice `j` in `idx`/values, checked: `j` in range,
    /// and (when not scanned) `ptr[j] <= ptr[j+1] <= nnz` and the slice's
    /// indices sorted and in bounds.
    pub(crate) fn slice_range(&self, j: u64) -> Result<std::ops::Range<usize>> {
        if j >= self.outer_len {
            return Err(Error::IndexArgument {
                tensor: self.tensor.into(),
                what: self.argument_names().0,
                index: j,
                bound: self.outer_len,
            });
        }
        let (start, end) = (self.ptr_entry(j), self.ptr_entry(j + 1));
        if !self.scanned {
            // The two pointers in array order, as the full check names
            // them: the first that is wrong, and for the same reason.
            if j == 0 && start != 0 && self.window.is_none() {
                return Err(self.ptr_first());
            }
            // A pointer above nnz: the array decreases after it when its last
            // entry is nnz (read here, O(1)), as the full check says; else
            // that last entry is the one to name.
            if start > self.nnz || end > self.nnz {
                self.check_last()?;
                return Err(self.ptr_too_large(if start > self.nnz { j } else { j + 1 }));
            }
            if end < start {
                return Err(self.ptr_decreasing(j + 1));
            }
            // The last slice ends at nnz (invariant 1): a last pointer below
            // it would hide the entries after it.
            if j + 1 == self.outer_len {
                self.check_last()?;
            }
        }
        let range = usize::try_from(start).unwrap_or(usize::MAX)..usize::try_from(end).unwrap_or(usize::MAX);
        if !self.scanned {
            let slice = self.idx.get(range.clone()).unwrap_or_default();
            if !slice_ok(slice, self.inner_len) {
                return Err(self.slice_error(j, range.start, slice));
            }
        }
        Ok(range)
    }

    /// Position in `idx`/values of the element at (`inner`, `outer`), by
    /// binary search in the outer slice; `None` for an implicit zero.
    pub(crate) fn find(&self, inner: u64, outer: u64) -> Result<Option<usize>> {
        let range = self.slice_range(outer)?;
        if inner >= self.inner_len {
            return Err(Error::IndexArgument {
                tensor: self.tensor.into(),
                what: self.argument_names().1,
                index: inner,
                bound: self.inner_len,
            });
        }
        let start = range.start;
        let slice = self.idx.get(range).unwrap_or_default();
        Ok(slice.binary_search(&inner).ok().map(|k| start + k))
    }
}

/// The outer slices of a compressed matrix, in order: the columns of a CSC
/// view ([`CscView::columns`](crate::CscView::columns)) or the rows of a
/// CSR view ([`CsrView::rows`](crate::CsrView::rows)). Each item is
impl Compressed<'_> {
    /// The `Debug` of a CSC or CSR structure or view called `name`, whose
    /// arrays are called `ptr` and `idx` and whose shape is `(nrows,
    /// ncols)`, with `values` when it has them: the shape, `nnz`, the
    /// arrays' first few entries, never the arrays.
    pub(crate) fn debug<T: std::fmt::Debug>(
        &self,
        f: &mut std::fmt::Formatter<'_>,
        name: &str,
        (nrows, ncols): (u64, u64),
        (ptr, idx): (&str, &str),
        values: Option<&[T]>,
    ) -> std::fmt::Result {
        use crate::debug::{few, Text};
        let mut d = f.debug_struct(name);
        d.field("tensor", &Text(self.tensor))
            .field("nrows", &nrows)
            .field("ncols", &ncols)
            .field("nnz", &self.nnz)
            .field(ptr, &few(self.ptr))
            .field(idx, &few(self.idx));
        if let Some(values) = values {
            d.field("values", &few(values));
        }
        d.field("validated", &self.scanned)
            .field("transposed", &self.transposed)
            .finish()
    }
}

/// `(j, indices, values)`: `j` the column (row) number, `indices` its row
/// (column) indices, ascending, and `values` its values, both borrowed
/// from the file with `ptr[j + 1] - ptr[j]` entries (`layouts/csc.md` §
/// Column Iteration, `layouts/csr.md` § Row Iteration). No check and no
/// `Result` per slice: the view was validated before the iterator was
/// made. One item per slice, empty slices included (`ncols` items for CSC,
/// `nrows` for CSR), from either end.
#[derive(Clone)]
pub struct Slices<'data, T> {
    slices: Contiguous<'data, T>,
    next: u64,
}

/// The next slice's number and how many are left, not the arrays.
impl<T> std::fmt::Debug for Slices<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slices")
            .field("next", &self.next)
            .field("remaining", &self.slices.pointers.len())
            .finish()
    }
}

impl<'data, T> Slices<'data, T> {
    /// Over `values` and the arrays of `c`, whose invariants the caller
    /// has verified. (Were they broken, the iteration would end at the
    /// first slice that does not fit: never a panic.)
    pub(crate) fn new(c: &Compressed<'data>, values: &'data [T]) -> Self {
        Slices {
            slices: pairs(c.ptr, c.idx, values),
            next: 0,
        }
    }
}

impl<'data, T> Iterator for Slices<'data, T> {
    type Item = (u64, &'data [u64], &'data [T]);

    fn next(&mut self) -> Option<Self::Item> {
        let (indices, values) = self.slices.next()?;
        let j = self.next;
        self.next = j.saturating_add(1);
        Some((j, indices, values))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.slices.pointers.size_hint()
    }
}

impl<T> DoubleEndedIterator for Slices<'_, T> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let (indices, values) = self.slices.next_back()?;
        // The slices not yet yielded are next..next + len; this was the last.
        let j = self.next.saturating_add(to_u64(self.slices.pointers.len()));
        Some((j, indices, values))
    }
}

impl<T> ExactSizeIterator for Slices<'_, T> {}

impl<T> std::iter::FusedIterator for Slices<'_, T> {}

/// How errors about a transposed view name its rows, columns and their
/// counts (`transpose's row`, `nrows of the transpose`): the tensor they
/// name has the other shape. Other words are returned as they are.
fn of_transpose(word: &'static str) -> &'static str {
    match word {
        "row" => "transpose's row",
        "column" => "transpose's column",
        "nrows" => "nrows of the transpose",
        "ncols" => "ncols of the transpose",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn csc<'a>(ptr: &'a [u64], idx: &'a [u64], nrows: u64) -> Compressed<'a> {
        Compressed {
            tensor: "A",
            names: CSC,
            outer_len: to_u64(ptr.len()) - 1,
            inner_len: nrows,
            nnz: to_u64(idx.len()),
            ptr,
            idx,
            ptr_offset: 1000,
            idx_offset: 2000,
            scanned: false,
            transposed: false,
            window: None,
        }
    }

    #[test]
    fn slice_ok_checks_order_and_bound() {
        assert!(slice_ok(&[], 0));
        assert!(slice_ok(&[0, 2, 3], 4));
        assert!(!slice_ok(&[0, 2, 2], 4));
        assert!(!slice_ok(&[2, 0], 4));
        assert!(!slice_ok(&[0, 4], 4));
        assert!(!slice_ok(&[u64::MAX], 4));
    }
}
