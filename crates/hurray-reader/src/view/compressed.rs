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

    /// Verifies the four storage invariants in one pass over `ptr` and `idx`,
    /// without allocating. The fast pass only counts (see [`Scan`]); when it
    /// finds a problem, an exact pass names the first violation.
    pub(crate) fn validate(&self) -> Result<()> {
        self.validate_with(&mut |_, _| {})
    }

    /// [`validate`](Self::validate), calling `progress(done, total)` (bytes
    /// of `ptr` and `idx` scanned) every few megabytes and at the end.
    pub(crate) fn validate_with(&self, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        let total = self.scan_bytes();
        let scan = self.scan(0, self.outer_count(), &mut |done| progress(done, total));
        if self.ends_ok() && scan.is_clean() {
            progress(total, total);
            return Ok(());
        }
        self.check_pointer_array()?;
        self.exact_scan()
    }

    /// [`validate`](Self::validate) on `threads` threads, each scanning a
    /// contiguous range of outer slices holding about the same number of
    /// stored elements (`std::thread::scope`; no allocation beyond the
    /// threads themselves).
    pub(crate) fn validate_parallel(&self, threads: usize) -> Result<()> {
        let threads = threads.clamp(1, 64);
        let outer = self.outer_count();
        let mut splits = [0usize; 65];
        let nnz = to_u64(self.idx.len());
        for (t, split) in splits.iter_mut().enumerate().take(threads + 1).skip(1) {
            let target = nnz / to_u64(threads) * to_u64(t);
            let point = self
                .ptr
                .get(..outer)
                .unwrap_or_default()
                .partition_point(|&p| p < target);
            *split = if t == threads { outer } else { point.min(outer) };
        }
        for t in 1..=threads {
            let previous = splits.get(t - 1).copied().unwrap_or(0);
            if let Some(s) = splits.get_mut(t) {
                *s = (*s).max(previous);
            }
        }
        let scan = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let (from, to) = (
                        splits.get(t).copied().unwrap_or(0),
                        splits.get(t + 1).copied().unwrap_or(0),
                    );
                    scope.spawn(move || self.scan(from, to, &mut |_| {}))
                })
                .collect();
            workers.into_iter().fold(Scan::default(), |mut all, w| {
                match w.join() {
                    Ok(part) => all.add(part),
                    Err(_) => all.failed = true,
                }
                all
            })
        });
        if self.ends_ok() && scan.is_clean() {
            return Ok(());
        }
        self.check_pointer_array()?;
        self.exact_scan()
    }

    /// Number of outer slices (`ptr` has one more entry).
    fn outer_count(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// Bytes of `ptr` and `idx` a scan reads.
    pub(crate) fn scan_bytes(&self) -> u64 {
        to_u64(self.ptr.len().saturating_add(self.idx.len())).saturating_mul(8)
    }

    /// `ptr[0] = 0` and `ptr[n] = nnz = idx.len()` (invariant 1).
    fn ends_ok(&self) -> bool {
        self.ptr.first() == Some(&0) && self.ptr.last() == Some(&self.nnz) && to_u64(self.idx.len()) == self.nnz
    }

    /// The fast pass over outer slices `from..to`, block by block: a block
    /// is a run of slices holding about [`BLOCK`] indices. For each block it
    /// checks that `ptr` does not decrease, counts the descents of `idx`
    /// over the block (streaming, vectorised), then reads each slice's
    /// first and last index — now in cache — to count the descents that
    /// fall on slice boundaries (allowed) and check the bound. `idx` and
    /// `ptr` are each read from memory once. Never panics on damaged data.
    fn scan(&self, from: usize, to: usize, progress: &mut dyn FnMut(u64)) -> Scan {
        const BLOCK: u64 = 8 * 1024; // indices per block: 64 KiB, cache-resident
        const MAX_SLICES: usize = 8 * 1024; // slices per block, for long runs of empty slices
        const REPORT: u64 = 1 << 21; // indices between progress reports
        let at_ptr = |j: usize| self.ptr.get(j).copied().unwrap_or(0);
        let mut scan = Scan::default();
        let mut next_report = at_ptr(from).saturating_add(REPORT);
        let mut j0 = from;
        while j0 < to {
            let start = at_ptr(j0);
            let limit = to.min(j0.saturating_add(MAX_SLICES));
            let window = self.ptr.get(j0.saturating_add(1)..=limit).unwrap_or_default();
            let k = window.partition_point(|&p| p < start.saturating_add(BLOCK));
            let j1 = j0.saturating_add(1).saturating_add(k).min(limit);
            let end = at_ptr(j1);
            // Invariant 2 on this block's pointers (see `descents` for the trick).
            let ptrs = self.ptr.get(j0..=j1).unwrap_or_default();
            let (pa, pb) = (
                ptrs.get(..ptrs.len().saturating_sub(1)).unwrap_or_default(),
                ptrs.get(1..).unwrap_or_default(),
            );
            scan.high |= pa
                .iter()
                .zip(pb)
                .fold(0u64, |acc, (&a, &b)| acc | b.wrapping_sub(a) | b);
            // Invariant 3 over the block's indices, boundaries included...
            let first = usize::try_from(start.max(1)).unwrap_or(usize::MAX);
            let last = usize::try_from(end).unwrap_or(usize::MAX).min(self.idx.len());
            let d = descents(self.idx, first, last);
            scan.descents = scan.descents.wrapping_add(d.count);
            scan.high |= d.high;
            // ...minus those at boundaries, and invariant 4.
            let o = self.outer_pass(j0, j1);
            scan.boundary_descents = scan.boundary_descents.wrapping_add(o.count);
            scan.out_of_bounds |= o.out_of_bounds;
            scan.high |= o.high;
            if end >= next_report {
                progress(to_u64(j1).saturating_add(end).saturating_mul(8));
                next_report = end.saturating_add(REPORT);
            }
            j0 = j1.max(j0.saturating_add(1));
        }
        scan
    }

    /// Over the outer slices `from..to`: counts the descents at slice
    /// boundaries (the first index of a non-empty slice not above the last
    /// index of the previous non-empty slice — allowed, and counted so the
    /// caller can subtract them) and flags a slice whose last (largest)
    /// index is out of bounds. Two loads per slice, no branch on the data;
    /// the previous slice's last index is carried, not re-read.
    fn outer_pass(&self, from: usize, to: usize) -> Outer {
        let Some(max) = self.idx.len().checked_sub(1) else {
            return Outer::default(); // nnz = 0: every slice is empty
        };
        let starts = self.ptr.get(from..to).unwrap_or_default();
        let ends = self
            .ptr
            .get(from.saturating_add(1)..to.saturating_add(1))
            .unwrap_or_default();
        let at = |p: u64| {
            self.idx
                .get(usize::try_from(p).unwrap_or(max).min(max))
                .copied()
                .unwrap_or(0)
        };
        // The last index of the slice before `from`, when there is one.
        let before = starts.first().and_then(|&s| s.checked_sub(1));
        let mut prev_last = before.map_or(0, at);
        let mut has_prev = u64::from(before.is_some());
        let (mut count, mut out_of_bounds, mut high) = (0u64, 0u64, 0u64);
        for (&s, &e) in starts.iter().zip(ends) {
            let non_empty = u64::from(s < e);
            let first = at(s);
            let last = at(e.wrapping_sub(1));
            count = count.wrapping_add(non_empty & has_prev & u64::from(first <= prev_last));
            out_of_bounds |= non_empty & u64::from(last >= self.inner_len);
            high |= (first | last) & non_empty.wrapping_neg();
            prev_last = if non_empty == 1 { last } else { prev_last };
            has_prev |= non_empty;
        }
        Outer {
            count,
            out_of_bounds: out_of_bounds != 0,
            high,
        }
    }

    /// The exact pass: slice by slice, naming the first violation.
    fn exact_scan(&self) -> Result<()> {
        let mut start = 0usize;
        for (j, &end) in self.ptr.iter().skip(1).enumerate() {
            let end = usize::try_from(end).unwrap_or(usize::MAX);
            let slice = self.idx.get(start..end).unwrap_or_default();
            if !slice_ok(slice, self.inner_len) {
                return Err(self.slice_error(to_u64(j), start, slice));
            }
            start = end;
        }
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
        // Non-decreasing: for values below 2^63, `b < a` exactly when
        // `b - a` (wrapping) has its top bit set; the OR of the values
        // themselves flags the rare huge ones, which take the exact path.
        let (previous, current) = (
            self.ptr.get(..self.ptr.len().saturating_sub(1)).unwrap_or_default(),
            self.ptr.get(1..).unwrap_or_default(),
        );
        let flags = previous
            .iter()
            .zip(current)
            .fold(0u64, |acc, (&a, &b)| acc | b.wrapping_sub(a) | b);
        if flags >> 63 != 0 {
            if let Some((j, (a, b))) = previous.iter().zip(current).enumerate().find(|(_, (a, b))| b < a) {
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

/// What the fast pass found. Clean when every descent of `idx` falls on a
/// slice boundary, no slice's last index is out of bounds, no value was too
/// large for the subtraction trick, and `ptr` never decreased.
#[derive(Debug, Default, Clone, Copy)]
struct Scan {
    descents: u64,
    boundary_descents: u64,
    out_of_bounds: bool,
    /// OR of pointer differences and values: a set top bit means a pointer
    /// decreased or a value is >= 2^63 (the exact pass decides).
    high: u64,
    /// A scanning thread panicked (cannot happen; then the exact pass decides).
    failed: bool,
}

impl Scan {
    fn add(&mut self, other: Scan) {
        self.descents = self.descents.wrapping_add(other.descents);
        self.boundary_descents = self.boundary_descents.wrapping_add(other.boundary_descents);
        self.out_of_bounds |= other.out_of_bounds;
        self.high |= other.high;
        self.failed |= other.failed;
    }

    fn is_clean(&self) -> bool {
        self.descents == self.boundary_descents && !self.out_of_bounds && self.high >> 63 == 0 && !self.failed
    }
}

/// Boundary descents and bound violations of a range of outer slices.
#[derive(Debug, Default, Clone, Copy)]
struct Outer {
    count: u64,
    out_of_bounds: bool,
    /// OR of the indices read, to detect values >= 2^63 (see [`descents`]).
    high: u64,
}

/// Descents counted over a range of `idx`.
#[derive(Debug, Default, Clone, Copy)]
struct Descents {
    count: u64,
    high: u64,
}

/// Counts the positions `i` in `start..end` (`start >= 1`) where
/// `idx[i] <= idx[i - 1]`, and ORs the values together.
///
/// For `a, b < 2^63`, `b <= a` exactly when `b - a - 1` (wrapping) has its
/// top bit set: a subtraction and a shift, which SSE2 vectorises (it has no
/// 64-bit compare). When any value has its top bit set (`high`), the count is
/// not trusted and the caller runs the exact pass.
fn descents(idx: &[u64], start: usize, end: usize) -> Descents {
    let previous = idx
        .get(start.saturating_sub(1)..end.saturating_sub(1))
        .unwrap_or_default();
    let current = idx.get(start..end).unwrap_or_default();
    let mut count = 0u64;
    let mut high = 0u64;
    for (&a, &b) in previous.iter().zip(current) {
        count = count.wrapping_add(b.wrapping_sub(a).wrapping_sub(1) >> 63);
        high |= b;
    }
    if let Some(&first) = previous.first() {
        high |= first;
    }
    Descents { count, high }
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

    /// The fast pass's verdict must equal the exact pass's on any input,
    /// valid or damaged (the fast pass decides alone when it is clean).
    fn fast_verdict(c: &Compressed<'_>) -> bool {
        c.ends_ok() && c.scan(0, c.outer_count(), &mut |_| {}).is_clean()
    }

    fn exact_verdict(c: &Compressed<'_>) -> bool {
        c.check_pointer_array().is_ok() && c.exact_scan().is_ok()
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]
        #[test]
        fn fast_and_exact_passes_agree(
            lengths in proptest::collection::vec(0u64..12, 0..40),
            rows in proptest::collection::vec(0u64..16, 0..400),
            nrows in 0u64..18,
            damage in proptest::option::of((0usize..400, proptest::prelude::any::<u64>())),
            ptr_damage in proptest::option::of((0usize..41, 0u64..500)),
        ) {
            let mut ptr = vec![0u64];
            for l in &lengths {
                let last = *ptr.last().unwrap();
                ptr.push(last + l);
            }
            let nnz = *ptr.last().unwrap() as usize;
            // Rows sorted within each slice (valid) unless damaged below.
            let mut idx: Vec<u64> = (0..nnz).map(|i| rows.get(i).copied().unwrap_or(0)).collect();
            for w in ptr.windows(2) {
                let slice = &mut idx[w[0] as usize..w[1] as usize];
                slice.sort_unstable();
                for k in 1..slice.len() {
                    if slice[k] <= slice[k - 1] {
                        slice[k] = slice[k - 1] + 1;
                    }
                }
            }
            if let Some((at, v)) = damage {
                if let Some(x) = idx.get_mut(at) { *x = v; }
            }
            if let Some((at, v)) = ptr_damage {
                if let Some(x) = ptr.get_mut(at) { *x = v; }
            }
            let c = Compressed { nnz: nnz as u64, ..csc(&ptr, &idx, nrows) };
            proptest::prop_assert_eq!(fast_verdict(&c), exact_verdict(&c));
            proptest::prop_assert_eq!(c.validate().is_ok(), exact_verdict(&c));
            proptest::prop_assert_eq!(c.validate_parallel(2).is_ok(), exact_verdict(&c));
            proptest::prop_assert_eq!(c.validate_parallel(3).is_ok(), exact_verdict(&c));
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
