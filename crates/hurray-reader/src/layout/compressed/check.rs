//! The storage invariants of a compressed matrix, checked: the kernels'
//! fast pass ([`crate::kernels::scan`]) decides whether the arrays are
//! clean; when they are not, the exact passes here name the first
//! violation, with the file's names, positions and byte offsets.

use super::Compressed;
use crate::cursor::to_u64;
use crate::error::{Error, Field, Location, Result, Scope};
use crate::kernels::slice_ok;

impl<'data> Compressed<'data> {
    /// Verifies the four storage invariants in one pass over `ptr` and `idx`,
    /// without allocating. The fast pass only counts (`kernels::scan`); when it
    /// finds a problem, an exact pass names the first violation.
    pub(crate) fn validate(&self) -> Result<()> {
        self.validate_threads(1, &mut |_, _| {})
    }

    /// [`validate`](Self::validate) on `threads` threads (clamped to
    /// `1..=`[`MAX_THREADS`](crate::kernels::threads::MAX_THREADS)), each scanning a contiguous range of
    /// *positions* of `idx` (cut anywhere, inside a slice too) and the
    /// outer slices that start there (`kernels::threads::scope`; no
    /// allocation beyond the jobs' own). Same verdict and same first error as
    /// one thread: the exact pass that names the error is sequential.
    pub(crate) fn validate_parallel(&self, threads: usize) -> Result<()> {
        self.validate_threads(threads, &mut |_, _| {})
    }

    /// The scan as [`Options::threads`](crate::Options::threads) asks for
    /// it: at most `threads` threads, fewer when the arrays are small (each
    /// thread gets at least [`MIN_PER_THREAD`](crate::kernels::scan::MIN_PER_THREAD) entries of `ptr` + `idx`), and
    /// `progress(done, total)` (bytes of `ptr` and `idx` scanned) every few
    /// megabytes and at the end, always on the calling thread.
    pub(crate) fn validate_with(&self, threads: usize, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        self.validate_threads(self.arrays().threads_for(threads), progress)
    }

    fn validate_threads(&self, threads: usize, progress: &mut dyn FnMut(u64, u64)) -> Result<()> {
        let total = self.scan_bytes();
        let clean = self
            .arrays()
            .scan_clean(threads, &mut |done| progress(done.min(total), total));
        if self.ends_ok() && clean {
            progress(total, total);
            return Ok(());
        }
        self.check_pointer_array()?;
        self.exact_scan()
    }

    /// Bytes of `ptr` and `idx` a scan reads.
    pub(crate) fn scan_bytes(&self) -> u64 {
        to_u64(self.ptr.len().saturating_add(self.positions().len())).saturating_mul(8)
    }

    /// `ptr[0] = 0` and `ptr[n] = nnz = idx.len()` (invariant 1); for a
    /// block, that its window starts and ends where
    /// [`block`](Compressed::block) found it to (within `0..=nnz`).
    fn ends_ok(&self) -> bool {
        match self.window {
            None => {
                self.ptr.first() == Some(&0) && self.ptr.last() == Some(&self.nnz) && to_u64(self.idx.len()) == self.nnz
            }
            Some(w) => {
                self.ptr.first() == Some(&to_u64(w.start))
                    && self.ptr.last() == Some(&to_u64(w.end))
                    && w.end <= self.idx.len()
            }
        }
    }

    /// The exact pass: slice by slice, naming the first violation.
    fn exact_scan(&self) -> Result<()> {
        let mut start = self.positions().start;
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
        if self.ptr_entry(0) != 0 && self.window.is_none() {
            return Err(self.ptr_first());
        }
        // The first decrease names the broken pair, unless a pointer before
        // it is above nnz: that one is the damaged entry when the last is
        // nnz, else the last is (as lookups say). This runs only once the
        // fast pass has found a problem.
        let decrease = self.ptr.windows(2).position(|w| matches!(w, [a, b] if b < a));
        if let Some(d) = decrease {
            let ptrs = self.ptr.get(..=d).unwrap_or_default();
            if let Some(k) = ptrs.iter().position(|&p| p > self.nnz) {
                self.check_last()?;
                return Err(self.ptr_too_large(to_u64(k)));
            }
            return Err(self.ptr_decreasing(to_u64(d) + 1));
        }
        self.check_last()
    }

    /// `ptr[0]` is not 0 (invariant 1).
    pub(super) fn ptr_first(&self) -> Error {
        Error::PtrFirst {
            at: Location {
                scope: Scope::tensor(self.tensor),
                field: Field::at(self.names.ptr, 0),
                offset: self.ptr_offset,
                rule: self.names.inv1,
            },
            value: self.ptr_entry(0),
        }
    }

    /// `ptr[position]` is below the entry before it (invariant 2).
    pub(super) fn ptr_decreasing(&self, position: u64) -> Error {
        Error::PtrDecreasing {
            at: Location {
                scope: Scope::tensor(self.tensor),
                field: Field::at(self.names.ptr, self.file_slice(position)),
                offset: self.ptr_at(position),
                rule: self.names.inv2,
            },
            value: self.ptr_entry(position),
            previous: self.ptr_entry(position.saturating_sub(1)),
        }
    }

    /// Invariant 1's end: `ptr[n] = nnz` (a block's end was checked when
    /// it was made).
    pub(super) fn check_last(&self) -> Result<()> {
        if self.window.is_some() {
            return Ok(());
        }
        let last = self.ptr.last().copied().unwrap_or(0);
        if last != self.nnz {
            return Err(Error::PtrLast {
                at: Location {
                    scope: Scope::tensor(self.tensor),
                    field: Field::at(self.names.ptr, self.outer_len),
                    offset: self.ptr_at(self.outer_len),
                    rule: self.names.inv1,
                },
                value: last,
                expected_name: "nnz",
                expected: self.nnz,
            });
        }
        Ok(())
    }

    /// `ptr[position]` (before the last, which is nnz) is above nnz: the
    /// array decreases after it (invariant 2).
    pub(super) fn ptr_too_large(&self, position: u64) -> Error {
        let value = self.ptr_entry(position);
        let next = position.saturating_add(1);
        Error::PtrTooLarge {
            at: Location {
                scope: Scope::tensor(self.tensor),
                field: Field::at(self.names.ptr, self.file_slice(position)),
                offset: self.ptr_at(position),
                rule: self.names.inv2,
            },
            value,
            nnz: self.nnz,
            last: self.file_slice(self.outer_len),
            next: (next <= self.outer_len)
                .then(|| self.ptr_entry(next))
                .filter(|&next| next < value),
        }
    }

    /// Names the first element of `slice` (outer slice `j`, starting at
    /// `start` in `idx`) that breaks invariant 3 or 4.
    pub(super) fn slice_error(&self, j: u64, start: usize, slice: &[u64]) -> Error {
        let mut previous: Option<u64> = None;
        for (k, &v) in slice.iter().enumerate() {
            let position = to_u64(start.saturating_add(k));
            if let Some(p) = previous {
                if v <= p {
                    return Error::NotIncreasing {
                        at: Location {
                            scope: Scope::tensor(self.tensor),
                            field: Field::at(self.names.idx, position),
                            offset: self.idx_at(position),
                            rule: self.names.inv3,
                        },
                        slice: self.names.outer,
                        slice_index: self.file_slice(j),
                        value: v,
                        previous: p,
                    };
                }
            }
            if v >= self.inner_len {
                return Error::IndexOutOfBounds {
                    at: Location {
                        scope: Scope::tensor(self.tensor),
                        field: Field::at(self.names.idx, position),
                        offset: self.idx_at(position),
                        rule: self.names.inv4,
                    },
                    value: v,
                    bound: self.inner_len,
                    bound_name: Field::new(self.names.bound),
                };
            }
            previous = Some(v);
        }
        // Unreachable when slice_ok failed; keep a truthful fallback.
        Error::NotIncreasing {
            at: Location {
                scope: Scope::tensor(self.tensor),
                field: Field::at(self.names.idx, to_u64(start)),
                offset: self.idx_at(to_u64(start)),
                rule: self.names.inv3,
            },
            slice: self.names.outer,
            slice_index: self.file_slice(j),
            value: 0,
            previous: 0,
        }
    }
}
#[cfg(test)]
mod tests {
    use crate::error::{Error, Field, Location, Scope};
    use crate::kernels::scan::tests::{arrays, damaged, damages, long_matrix, reference, DAMAGE_AT};
    use crate::kernels::threads::tests::refusing;
    use crate::layout::compressed::tests::csc;
    use crate::layout::compressed::Compressed;

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(1000))]
        /// The checked verdict is the definition's, the same on any number
        /// of threads (refused ones too), and names the same first error.
        #[test]
        fn validate_is_the_definition_on_any_threads(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![8 => 0u64..12, 1 => 0u64..300],
                0..40,
            ),
            rows in proptest::collection::vec(0u64..16, 0..400),
            nrows in proptest::prop_oneof![0u64..18, 300u64..320, proptest::prelude::Just(1u64 << 63)],
            damage in proptest::option::of((0usize..3000, proptest::prelude::any::<u64>())),
            small_damage in proptest::option::of((0usize..3000, 0u64..20)),
            ptr_damage in proptest::option::of((0usize..41, 0u64..3000)),
        ) {
            let (ptr, idx, nnz) = damaged(&lengths, &rows, damage, small_damage, ptr_damage);
            let c = Compressed { nnz: nnz as u64, ..csc(&ptr, &idx, nrows) };
            let one = c.validate();
            proptest::prop_assert_eq!(one.is_ok(), reference(&arrays(&ptr, &idx, nrows)));
            for threads in [2, 3, 5, 64] {
                proptest::prop_assert_eq!(&c.validate_parallel(threads), &one);
            }
            // Threads the OS refuses: their parts run on this thread.
            proptest::prop_assert_eq!(&refusing(|| c.validate_parallel(3)), &one);
        }
    }

    /// The long matrix of `kernels::scan`'s test, damaged one way at a time:
    /// the error names the damaged position, on seven threads.
    #[test]
    fn errors_name_each_damaged_position_of_a_long_matrix() {
        let (ptr, idx, nrows) = long_matrix();
        csc(&ptr, &idx, nrows).validate_parallel(7).unwrap();
        for &at in &DAMAGE_AT {
            let at = at.min(idx.len() - 1);
            for (what, d) in &damages(&ptr, &idx, nrows, at) {
                let e = csc(&ptr, d, nrows).validate_parallel(7).unwrap_err();
                assert!(
                    matches!(e, Error::NotIncreasing { .. } | Error::IndexOutOfBounds { .. }),
                    "{what} at {at}: {e:?}"
                );
                assert_eq!(e.field().and_then(|f| f.index), Some(at as u64), "{what}");
            }
        }
    }

    /// One long column, each position damaged in turn: the error names it.
    #[test]
    fn errors_inside_one_long_column() {
        let ptr = [0u64, 0, 100, 100];
        let valid: Vec<u64> = (0..100).map(|i| 3 * i + 1).collect();
        for bad in 1..100 {
            let mut idx = valid.clone();
            idx[bad] = idx[bad - 1]; // a repeated row at position `bad`
            let e = csc(&ptr, &idx, 300).validate_parallel(7).unwrap_err();
            assert!(matches!(e, Error::NotIncreasing { slice_index: 1, .. }), "{e}");
            assert_eq!(e.field().and_then(|f| f.index), Some(bad as u64));
        }
        let mut idx = valid.clone();
        idx[99] = 300; // out of bounds, last position
        assert!(matches!(
            csc(&ptr, &idx, 300).validate_parallel(2),
            Err(Error::IndexOutOfBounds {
                at: Location {
                    field: Field { index: Some(99), .. },
                    ..
                },
                value: 300,
                bound: 300,
                ..
            })
        ));
    }

    #[test]
    fn errors_name_position_and_offset() {
        let e = csc(&[0, 2, 3], &[2, 0, 1], 3).validate().unwrap_err();
        assert_eq!(
            e,
            Error::NotIncreasing {
                at: Location {
                    scope: Scope::Tensor("A".into()),
                    field: Field::at("row_indices", 1),
                    offset: 2008,
                    rule: crate::error::rule::CSC_INV3,
                },
                slice: "column",
                slice_index: 0,
                value: 0,
                previous: 2,
            }
        );
        let e = csc(&[0, 2, 1, 3], &[0, 1, 2], 3).validate().unwrap_err();
        assert!(matches!(
            e,
            Error::PtrDecreasing {
                at: Location {
                    field: Field { index: Some(2), .. },
                    offset: 1016,
                    ..
                },
                value: 1,
                previous: 2,
                ..
            }
        ));
    }
}
