//! CSC and CSR matrices built from unsorted `(row, col, value)` triplets:
//! the arrays a [`Csc`] or [`Csr`] borrows, sorted, with the pointer array
//! built and repeated coordinates rejected or summed, as the caller
//! chooses.
//!
//! ```
//! use hurray_writer::{Duplicates, FileWriter, TripletCsc, WriterOptions};
//!
//! # fn main() -> Result<(), hurray_writer::Error> {
//! // (row, col, value) in any order; (1, 2) twice.
//! let triplets = [(2, 1, 4.0f32), (0, 0, 1.0), (1, 2, 1.0), (0, 3, 2.0), (1, 2, 2.0), (2, 4, 5.0)];
//! let a = TripletCsc::from_triplets(4, 5, &triplets, Duplicates::Sum)?;
//! assert_eq!(a.col_ptr(), [0, 1, 2, 3, 4, 5]);
//! assert_eq!(a.row_indices(), [0, 2, 1, 0, 2]);
//! assert_eq!(a.values(), [1.0, 4.0, 3.0, 2.0, 5.0]);
//! assert!(TripletCsc::from_triplets(4, 5, &triplets, Duplicates::Reject).is_err());
//!
//! let mut writer = FileWriter::new(Vec::new(), WriterOptions::default())?;
//! writer.write_csc("A", &a.csc()?)?;
//! # Ok(()) }
//! ```
//!
//! Memory: the result's arrays (`nnz` indices and values, `ncols + 1`
//! pointers for CSC, `nrows + 1` for CSR) and, while building, a scratch
//! of 16 bytes per triplet and 8 per pointer; every allocation is fallible
//! ([`Error::AllocationFailed`]), so no input (an `ncols` of `2^60`) can
//! abort the process. Time: O(`nnz` log `nnz` + pointers).

use crate::element_type::Element;
use crate::error::{Error, Result};
use crate::num::{len64, to_usize};
use crate::sparse::{Csc, Csr};

/// What to do with triplets that share a `(row, col)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// Refuse them: [`Error::DuplicateEntry`] names the first two.
    Reject,
    /// Add their values, in the order the triplets were given (so the sum
    /// does not depend on the sort); an integer sum that overflows is
    /// [`Error::SumOverflow`].
    Sum,
}

/// An element type whose values can be summed ([`Duplicates::Sum`]):
/// floats add as IEEE 754 does, integers with an overflow check.
pub trait Summable: Element {
    /// `self + other`, `None` when an integer sum overflows.
    fn checked_sum(self, other: Self) -> Option<Self>;
}

macro_rules! float_sum {
    ($($t:ty),*) => {$(
        impl Summable for $t {
            // Float addition neither panics nor wraps: an overflow is inf.
            #[allow(clippy::arithmetic_side_effects)]
            fn checked_sum(self, other: Self) -> Option<Self> {
                Some(self + other)
            }
        }
    )*};
}

macro_rules! integer_sum {
    ($($t:ty),*) => {$(
        impl Summable for $t {
            fn checked_sum(self, other: Self) -> Option<Self> {
                self.checked_add(other)
            }
        }
    )*};
}

float_sum!(f32, f64, half::f16, half::bf16);
integer_sum!(u8, u16, u32, u64, i8, i16, i32, i64);

/// The three arrays of a compressed matrix along `outer` slices (columns
/// for CSC, rows for CSR) of `inner` indices.
#[derive(Debug, Clone, PartialEq)]
struct Compressed<T> {
    ptr: Vec<u64>,
    idx: Vec<u64>,
    values: Vec<T>,
}

/// A `Vec` of `len` copies of `value`, or [`Error::AllocationFailed`].
fn filled<V: Clone>(len: usize, value: V, what: &'static str) -> Result<Vec<V>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::AllocationFailed {
        what,
        count: len64(len).unwrap_or(u64::MAX),
    })?;
    v.resize(len, value);
    Ok(v)
}

/// Compresses `entries` (`(row, col, value)`, any order, coordinates
/// already checked against the shape) into `outer_len` slices, `split`
/// giving each entry's `(outer, inner)`: `(col, row)` for CSC, `(row,
/// col)` for CSR.
fn compress<T: Summable>(
    outer_len: u64,
    entries: &[(u64, u64, T)],
    duplicates: Duplicates,
    split: impl Fn(u64, u64) -> (u64, u64),
) -> Result<Compressed<T>> {
    let slots = to_usize(outer_len, "pointer length")?
        .checked_add(1)
        .ok_or(Error::overflow("pointer length"))?;
    // Counting sort by outer index: stable, so within a slice the triplets
    // keep their input order until the sort by inner index below.
    let mut ptr: Vec<u64> = filled(slots, 0, "pointer array")?;
    for &(row, col, _) in entries {
        let slot = to_usize(split(row, col).0, "outer index")?;
        if let Some(count) = ptr.get_mut(slot.saturating_add(1)) {
            *count = count.saturating_add(1);
        }
    }
    let mut total = 0u64;
    for p in &mut ptr {
        total = total.saturating_add(*p);
        *p = total;
    }
    // `next[j]`: where the next entry of slice `j` goes.
    let mut next = ptr.clone();
    let mut order: Vec<(u64, usize)> = filled(entries.len(), (0, 0), "triplet order")?;
    for (i, &(row, col, _)) in entries.iter().enumerate() {
        let (outer, inner) = split(row, col);
        let slot = to_usize(outer, "outer index")?;
        if let Some(at) = next.get_mut(slot) {
            if let Some(o) = order.get_mut(to_usize(*at, "position")?) {
                *o = (inner, i);
            }
            *at = at.saturating_add(1);
        }
    }
    drop(next);

    let mut idx: Vec<u64> = filled(entries.len(), 0, "index array")?;
    let mut values: Vec<T> = Vec::new();
    values
        .try_reserve_exact(entries.len())
        .map_err(|_| Error::AllocationFailed {
            what: "values",
            count: len64(entries.len()).unwrap_or(u64::MAX),
        })?;
    let mut kept = 0usize; // entries written so far
    let mut start = 0usize;
    for j in 0..slots.saturating_sub(1) {
        let end = to_usize(ptr.get(j.saturating_add(1)).copied().unwrap_or(0), "position")?;
        let slice = order.get_mut(start..end).unwrap_or_default();
        // By inner index, then input position: equal coordinates stay in input order.
        slice.sort_unstable();
        let mut previous: Option<(u64, usize)> = None;
        for &(inner, i) in slice.iter() {
            let Some(&(row, col, value)) = entries.get(i) else {
                continue;
            };
            match previous {
                Some((p_inner, first)) if p_inner == inner => match duplicates {
                    Duplicates::Reject => {
                        return Err(Error::DuplicateEntry {
                            row,
                            col,
                            first: len64(first)?,
                            second: len64(i)?,
                        })
                    }
                    Duplicates::Sum => {
                        let last = values.last_mut().ok_or(Error::overflow("values"))?;
                        *last = last.checked_sum(value).ok_or(Error::SumOverflow { row, col })?;
                    }
                },
                _ => {
                    if let Some(slot) = idx.get_mut(kept) {
                        *slot = inner;
                    }
                    values.push(value);
                    kept = kept.saturating_add(1);
                    previous = Some((inner, i));
                }
            }
        }
        if let Some(p) = ptr.get_mut(j.saturating_add(1)) {
            *p = len64(kept)?;
        }
        start = end;
    }
    idx.truncate(kept);
    Ok(Compressed { ptr, idx, values })
}

/// Checks every triplet's coordinates against `[nrows, ncols]`.
fn check_bounds<T>(nrows: u64, ncols: u64, triplets: &[(u64, u64, T)], rule: &'static str) -> Result<()> {
    for (i, &(row, col, _)) in triplets.iter().enumerate() {
        let (array, value, bound) = if row >= nrows {
            ("row", row, nrows)
        } else if col >= ncols {
            ("col", col, ncols)
        } else {
            continue;
        };
        return Err(Error::IndexOutOfBounds {
            array,
            position: len64(i)?,
            value,
            bound,
            rule,
        });
    }
    Ok(())
}

/// A CSC matrix built from `(row, col, value)` triplets (`layouts/csc.md`):
/// owns `col_ptr`, `row_indices` and `values`, which
/// [`csc`](Self::csc) lends to a checked [`Csc`] for writing.
#[derive(Debug, Clone, PartialEq)]
pub struct TripletCsc<T> {
    nrows: u64,
    ncols: u64,
    arrays: Compressed<T>,
}

impl<T: Summable> TripletCsc<T> {
    /// Sorts `triplets` (any order) by column, then row, builds `col_ptr`
    /// (`ncols + 1` entries), and rejects or sums triplets at the same
    /// `(row, col)` as `duplicates` says. An empty list gives an empty
    /// matrix (`col_ptr` all zeros).
    ///
    /// # Errors
    /// [`Error::IndexOutOfBounds`] for a row `>= nrows` or a column `>=
    /// ncols` (`array` is `row` or `col`, `position` the triplet's);
    /// [`Error::DuplicateEntry`] (with [`Duplicates::Reject`]);
    /// [`Error::SumOverflow`] (an integer sum, with [`Duplicates::Sum`]);
    /// [`Error::AllocationFailed`] / [`Error::Overflow`] when `ncols + 1`
    /// pointers or the arrays do not fit in memory.
    pub fn from_triplets(nrows: u64, ncols: u64, triplets: &[(u64, u64, T)], duplicates: Duplicates) -> Result<Self> {
        check_bounds(nrows, ncols, triplets, "layouts/csc.md § Storage Invariants (4)")?;
        let arrays = compress(ncols, triplets, duplicates, |row, col| (col, row))?;
        Ok(TripletCsc { nrows, ncols, arrays })
    }

    /// The checked view that [`FileWriter::write_csc`](crate::FileWriter::write_csc) writes.
    ///
    /// # Errors
    /// None in practice (the arrays were built to hold every invariant);
    /// [`Csc::new`]'s errors otherwise.
    pub fn csc(&self) -> Result<Csc<'_>> {
        let a = &self.arrays;
        Csc::new(self.nrows, self.ncols, &a.values[..], &a.idx, &a.ptr)
    }
}

impl<T> TripletCsc<T> {
    /// `[nrows, ncols]`.
    pub fn shape(&self) -> [u64; 2] {
        [self.nrows, self.ncols]
    }

    /// Stored entries (after summing duplicates).
    pub fn nnz(&self) -> usize {
        self.arrays.values.len()
    }

    /// `ncols + 1` entries: column `j` is positions `col_ptr[j]..col_ptr[j + 1]`.
    pub fn col_ptr(&self) -> &[u64] {
        &self.arrays.ptr
    }

    /// The row of each stored entry, increasing within each column.
    pub fn row_indices(&self) -> &[u64] {
        &self.arrays.idx
    }

    /// The value of each stored entry.
    pub fn values(&self) -> &[T] {
        &self.arrays.values
    }
}

/// A CSR matrix built from `(row, col, value)` triplets (`layouts/csr.md`):
/// owns `row_ptr`, `col_indices` and `values`, which [`csr`](Self::csr)
/// lends to a checked [`Csr`] for writing.
#[derive(Debug, Clone, PartialEq)]
pub struct TripletCsr<T> {
    nrows: u64,
    ncols: u64,
    arrays: Compressed<T>,
}

impl<T: Summable> TripletCsr<T> {
    /// As [`TripletCsc::from_triplets`], by row then column: builds
    /// `row_ptr` (`nrows + 1` entries).
    ///
    /// # Errors
    /// As [`TripletCsc::from_triplets`].
    pub fn from_triplets(nrows: u64, ncols: u64, triplets: &[(u64, u64, T)], duplicates: Duplicates) -> Result<Self> {
        check_bounds(nrows, ncols, triplets, "layouts/csr.md § Storage Invariants (4)")?;
        let arrays = compress(nrows, triplets, duplicates, |row, col| (row, col))?;
        Ok(TripletCsr { nrows, ncols, arrays })
    }

    /// The checked view that [`FileWriter::write_csr`](crate::FileWriter::write_csr) writes.
    ///
    /// # Errors
    /// As [`TripletCsc::csc`].
    pub fn csr(&self) -> Result<Csr<'_>> {
        let a = &self.arrays;
        Csr::new(self.nrows, self.ncols, &a.values[..], &a.idx, &a.ptr)
    }
}

impl<T> TripletCsr<T> {
    /// `[nrows, ncols]`.
    pub fn shape(&self) -> [u64; 2] {
        [self.nrows, self.ncols]
    }

    /// Stored entries (after summing duplicates).
    pub fn nnz(&self) -> usize {
        self.arrays.values.len()
    }

    /// `nrows + 1` entries: row `i` is positions `row_ptr[i]..row_ptr[i + 1]`.
    pub fn row_ptr(&self) -> &[u64] {
        &self.arrays.ptr
    }

    /// The column of each stored entry, increasing within each row.
    pub fn col_indices(&self) -> &[u64] {
        &self.arrays.idx
    }

    /// The value of each stored entry.
    pub fn values(&self) -> &[T] {
        &self.arrays.values
    }
}
