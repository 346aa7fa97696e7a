//! The structure shared by CSC and CSR: a pointer array over "outer" slices
//! (columns for CSC, rows for CSR) and the "inner" index of every stored
//! element. CSC of A and CSR of Aᵀ are the same bytes, so one type serves
//! both and `transpose` only changes the names.

use crate::cursor::to_u64;
use crate::error::{Error, Result};

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
#[derive(Debug, Clone, Copy)]
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
}

impl<'data> Compressed<'data> {
    fn ptr_at(&self, i: u64) -> u64 {
        self.ptr_offset.saturating_add(i.saturating_mul(8))
    }

    fn idx_at(&self, i: u64) -> u64 {
        self.idx_offset.saturating_add(i.saturating_mul(8))
    }

    /// Verifies the four storage invariants in one pass over `ptr` and
    /// `idx`, without allocating. The fast path only accumulates a "bad"
    /// flag; on failure a second, exact pass names the first violation.
    pub(crate) fn validate(&self) -> Result<()> {
        self.validate_with(&mut |_, _| {})
    }

    /// [`validate`](Self::validate), calling `progress(done, total)` (bytes
    /// of `ptr` and `idx` scanned) every few megabytes and at the end.
    pub(crate) fn validate_with(&self, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        const STEP: usize = 1 << 20; // elements between progress reports
        let total = to_u64(self.ptr.len().saturating_add(self.idx.len())).saturating_mul(8);
        self.check_pointer_array()?;
        let ptr_bytes = to_u64(self.ptr.len()).saturating_mul(8);
        progress(ptr_bytes, total);
        // ptr is now 0 = p0 <= p1 <= ... <= p_n = nnz = idx.len().
        let mut start = 0usize;
        let mut next_report = STEP;
        for (j, &end) in self.ptr.iter().skip(1).enumerate() {
            let end = usize::try_from(end).unwrap_or(usize::MAX);
            let slice = self.idx.get(start..end).unwrap_or_default();
            if !slice_ok(slice, self.inner_len) {
                return Err(self.slice_error(to_u64(j), start, slice));
            }
            start = end;
            if start >= next_report {
                progress(ptr_bytes.saturating_add(to_u64(start).saturating_mul(8)), total);
                next_report = start.saturating_add(STEP);
            }
        }
        progress(total, total);
        Ok(())
    }

    /// Invariants 1 and 2: `ptr[0] = 0`, `ptr[n] = nnz`, non-decreasing.
    pub(crate) fn check_pointer_array(&self) -> Result<()> {
        let first = self.ptr.first().copied().unwrap_or(0);
        if first != 0 {
            return Err(Error::PtrFirst {
                tensor: self.tensor.into(),
                array: self.names.ptr,
                offset: self.ptr_offset,
                value: first,
                rule: self.names.inv1,
            });
        }
        let pairs = self.ptr.iter().zip(self.ptr.iter().skip(1));
        let decreasing = pairs.clone().fold(false, |bad, (a, b)| bad | (b < a));
        if decreasing {
            if let Some((j, (a, b))) = pairs.enumerate().find(|(_, (a, b))| b < a) {
                let position = to_u64(j) + 1;
                return Err(Error::PtrDecreasing {
                    tensor: self.tensor.into(),
                    array: self.names.ptr,
                    position,
                    offset: self.ptr_at(position),
                    value: *b,
                    previous: *a,
                    rule: self.names.inv2,
                });
            }
        }
        let last = self.ptr.last().copied().unwrap_or(0);
        if last != self.nnz {
            return Err(Error::PtrLast {
                tensor: self.tensor.into(),
                array: self.names.ptr,
                position: self.outer_len,
                offset: self.ptr_at(self.outer_len),
                value: last,
                expected_name: "nnz",
                expected: self.nnz,
                rule: self.names.inv1,
            });
        }
        Ok(())
    }

    /// Names the first element of `slice` (outer slice `j`, starting at
    /// `start` in `idx`) that breaks invariant 3 or 4.
    fn slice_error(&self, j: u64, start: usize, slice: &[u64]) -> Error {
        let mut previous: Option<u64> = None;
        for (k, &v) in slice.iter().enumerate() {
            let position = to_u64(start.saturating_add(k));
            if let Some(p) = previous {
                if v <= p {
                    return Error::NotIncreasing {
                        tensor: self.tensor.into(),
                        array: self.names.idx,
                        slice: self.names.outer,
                        slice_index: j,
                        position,
                        offset: self.idx_at(position),
                        value: v,
                        previous: p,
                        rule: self.names.inv3,
                    };
                }
            }
            if v >= self.inner_len {
                return Error::IndexOutOfBounds {
                    tensor: self.tensor.into(),
                    array: self.names.idx,
                    position,
                    offset: self.idx_at(position),
                    value: v,
                    bound: self.inner_len,
                    bound_name: self.names.bound,
                    rule: self.names.inv4,
                };
            }
            previous = Some(v);
        }
        // Unreachable when slice_ok failed; keep a truthful fallback.
        Error::NotIncreasing {
            tensor: self.tensor.into(),
            array: self.names.idx,
            slice: self.names.outer,
            slice_index: j,
            position: to_u64(start),
            offset: self.idx_at(to_u64(start)),
            value: 0,
            previous: 0,
            rule: self.names.inv3,
        }
    }

    /// The range of outer slice `j` in `idx`/values, checked: `j` in range,
    /// and (when not scanned) `ptr[j] <= ptr[j+1] <= nnz` and the slice's
    /// indices sorted and in bounds.
    pub(crate) fn slice_range(&self, j: u64) -> Result<std::ops::Range<usize>> {
        if j >= self.outer_len {
            return Err(Error::IndexArgument {
                tensor: self.tensor.into(),
                what: self.names.outer,
                index: j,
                bound: self.outer_len,
            });
        }
        let at = |i: u64| {
            usize::try_from(i)
                .ok()
                .and_then(|i| self.ptr.get(i))
                .copied()
                .unwrap_or(0)
        };
        let (start, end) = (at(j), at(j + 1));
        if !self.scanned {
            if end < start {
                return Err(Error::PtrDecreasing {
                    tensor: self.tensor.into(),
                    array: self.names.ptr,
                    position: j + 1,
                    offset: self.ptr_at(j + 1),
                    value: end,
                    previous: start,
                    rule: self.names.inv2,
                });
            }
            if end > self.nnz || (j == 0 && start != 0) {
                return Err(Error::PtrLast {
                    tensor: self.tensor.into(),
                    array: self.names.ptr,
                    position: j + 1,
                    offset: self.ptr_at(j + 1),
                    value: end,
                    expected_name: "at most nnz",
                    expected: self.nnz,
                    rule: self.names.inv1,
                });
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
                what: self.names.inner,
                index: inner,
                bound: self.inner_len,
            });
        }
        let start = range.start;
        let slice = self.idx.get(range).unwrap_or_default();
        Ok(slice.binary_search(&inner).ok().map(|k| start + k))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn csc<'a>(ptr: &'a [u64], idx: &'a [u64], nrows: u64) -> Compressed<'a> {
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

    #[test]
    fn errors_name_position_and_offset() {
        let e = csc(&[0, 2, 3], &[2, 0, 1], 3).validate().unwrap_err();
        assert_eq!(
            e,
            Error::NotIncreasing {
                tensor: "A".into(),
                array: "row_indices",
                slice: "column",
                slice_index: 0,
                position: 1,
                offset: 2008,
                value: 0,
                previous: 2,
                rule: crate::error::rule::CSC_INV3,
            }
        );
        let e = csc(&[0, 2, 1, 3], &[0, 1, 2], 3).validate().unwrap_err();
        assert!(matches!(
            e,
            Error::PtrDecreasing {
                position: 2,
                offset: 1016,
                value: 1,
                previous: 2,
                ..
            }
        ));
    }
}
