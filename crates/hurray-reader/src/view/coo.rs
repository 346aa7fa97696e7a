//! COO views (`layouts/coo.md`, layout tag `0x06`).

use std::cmp::Ordering;

use crate::cursor::to_u64;
use crate::element_type::Element;
use crate::error::{rule, Error, Result};
use crate::layout::{Layout, LayoutFields};
use crate::tensor::Tensor;

/// The coordinates of a COO tensor, without values: `nnz` tuples of `rank`
/// coordinates, stored row-major in `indices` (`nnz × rank` entries).
#[derive(Debug, Clone)]
pub struct CooStructure<'data> {
    tensor: &'data str,
    shape: Vec<u64>,
    nnz: u64,
    indices: &'data [u64],
    indices_offset: u64,
    is_sorted: bool,
    scanned: bool,
}

impl<'data> CooStructure<'data> {
    /// The tensor's shape.
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// All coordinates, `nnz × rank` entries, entry `i` at `[i*rank, (i+1)*rank)`.
    pub fn indices(&self) -> &'data [u64] {
        self.indices
    }

    /// Whether the descriptor claims lexicographic order (`is_sorted = 1`).
    pub fn is_sorted(&self) -> bool {
        self.is_sorted
    }

    /// True once the validity constraints have been verified.
    pub fn is_validated(&self) -> bool {
        self.scanned
    }

    /// Coordinates of stored element `i`, `rank` entries.
    pub fn coordinates(&self, i: u64) -> Option<&'data [u64]> {
        let rank = self.rank();
        let start = usize::try_from(i).ok()?.checked_mul(rank)?;
        self.indices.get(start..start.checked_add(rank)?)
    }

    fn error(&self, position: u64, what: &'static str, rule: &'static str) -> Error {
        let offset = self
            .indices_offset
            .saturating_add(position.saturating_mul(to_u64(self.rank())).saturating_mul(8));
        Error::CooOrder {
            tensor: self.tensor.into(),
            position,
            offset,
            what,
            rule,
        }
    }

    /// Verifies `layouts/coo.md` § Validity Constraints: every coordinate
    /// below its dimension, no duplicate tuples, and, when `is_sorted` is
    /// set, strictly increasing lexicographic order (NOTES.md: a false claim
    /// is an error). A sorted tensor is checked in one pass without
    /// allocating; an unsorted one sorts a permutation of `nnz` positions to
    /// find duplicates (the one allocation, bounded by the file size).
    ///
    /// # Errors
    /// [`Error::IndexOutOfBounds`], [`Error::CooOrder`].
    pub fn validate(&self) -> Result<()> {
        let rank = self.rank();
        for (k, &v) in self.indices.iter().enumerate() {
            let dim = k.checked_rem(rank).unwrap_or(0);
            let bound = self.shape.get(dim).copied().unwrap_or(0);
            if v >= bound {
                return Err(Error::IndexOutOfBounds {
                    tensor: self.tensor.into(),
                    array: "indices",
                    position: to_u64(k),
                    offset: self.indices_offset.saturating_add(to_u64(k).saturating_mul(8)),
                    value: v,
                    bound,
                    bound_name: "shape[d]",
                    rule: rule::COO_VALIDITY,
                });
            }
        }
        if self.is_sorted {
            for i in 1..self.nnz {
                if self.coordinates(i - 1).cmp(&self.coordinates(i)) != Ordering::Less {
                    return Err(self.error(
                        i,
                        "entries are not in strictly increasing lexicographic order although is_sorted = 1",
                        rule::COO_VALIDITY,
                    ));
                }
            }
            return Ok(());
        }
        let mut order: Vec<u64> = (0..self.nnz).collect();
        order.sort_unstable_by(|&a, &b| self.coordinates(a).cmp(&self.coordinates(b)).then(a.cmp(&b)));
        for pair in order.windows(2) {
            if let (Some(&a), Some(&b)) = (pair.first(), pair.get(1)) {
                if self.coordinates(a) == self.coordinates(b) {
                    return Err(self.error(a.max(b), "duplicate coordinates", rule::COO_VALIDITY));
                }
            }
        }
        Ok(())
    }

    /// This structure, verified.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn validated(mut self) -> Result<Self> {
        if !self.scanned {
            self.validate()?;
            self.scanned = true;
        }
        Ok(self)
    }

    /// Position of the element at `index` (`rank` coordinates): binary
    /// search when the order is claimed and verified, a linear scan
    /// otherwise (`layouts/coo.md` § Element Lookup); `None` is an implicit zero.
    ///
    /// # Errors
    /// [`Error::IndexArgument`] when `index` has the wrong length or lies
    /// outside the shape.
    pub fn position(&self, index: &[u64]) -> Result<Option<u64>> {
        if index.len() != self.rank() {
            return Err(Error::IndexArgument {
                tensor: self.tensor.into(),
                what: "coordinate count",
                index: to_u64(index.len()),
                bound: to_u64(self.rank()),
            });
        }
        for (k, (&i, &n)) in index.iter().zip(&self.shape).enumerate() {
            if i >= n {
                return Err(Error::IndexArgument {
                    tensor: self.tensor.into(),
                    what: if k == 0 { "index[0]" } else { "coordinate" },
                    index: i,
                    bound: n,
                });
            }
        }
        if self.is_sorted && self.scanned {
            let (mut lo, mut hi) = (0u64, self.nnz);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                match self.coordinates(mid).map(|c| c.cmp(index)) {
                    Some(Ordering::Less) => lo = mid + 1,
                    Some(Ordering::Greater) => hi = mid,
                    Some(Ordering::Equal) => return Ok(Some(mid)),
                    None => return Ok(None),
                }
            }
            return Ok(None);
        }
        Ok((0..self.nnz).find(|&i| self.coordinates(i) == Some(index)))
    }
}

/// A COO tensor with values of type `T`.
#[derive(Debug, Clone)]
pub struct CooView<'data, T> {
    structure: CooStructure<'data>,
    values: &'data [T],
}

impl<'data, T: Element> CooView<'data, T> {
    /// The coordinates.
    pub fn structure(&self) -> &CooStructure<'data> {
        &self.structure
    }

    /// Stored values in storage order, `nnz` entries.
    pub fn values(&self) -> &'data [T] {
        self.values
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.structure.nnz
    }

    /// The value at `index`; `Ok(None)` is the implicit zero.
    ///
    /// # Errors
    /// As [`CooStructure::position`].
    pub fn get(&self, index: &[u64]) -> Result<Option<&'data T>> {
        Ok(self
            .structure
            .position(index)?
            .and_then(|p| usize::try_from(p).ok())
            .and_then(|p| self.values.get(p)))
    }

    /// Every stored element as `(coordinates, &value)`, in storage order.
    pub fn iter(&self) -> impl Iterator<Item = (&'data [u64], &'data T)> + '_ {
        (0..self.structure.nnz).filter_map(|i| {
            let value = self.values.get(usize::try_from(i).ok()?)?;
            Some((self.structure.coordinates(i)?, value))
        })
    }
}

impl<'data> Tensor<'data> {
    /// The COO coordinates without values; not validated.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`] unless the layout is COO, [`Error::Misaligned`].
    pub fn coo_structure(&self) -> Result<CooStructure<'data>> {
        self.ensure_layout(Layout::Coo)?;
        let LayoutFields::Coo(f) = self.descriptor().layout_fields() else {
            return Err(self.layout_mismatch(Layout::Coo));
        };
        let indices = self.buffer(1)?;
        Ok(CooStructure {
            tensor: self.name(),
            shape: self.static_shape()?,
            nnz: f.nnz.get(),
            indices: indices.as_slice::<u64>()?,
            indices_offset: indices.file_offset(),
            is_sorted: f.is_sorted == 1,
            scanned: false,
        })
    }

    /// The COO view with values `T`; strict mode verifies the constraints first.
    ///
    /// # Errors
    /// As [`coo_structure`](Self::coo_structure), [`Error::TypeMismatch`],
    /// and in strict mode [`CooStructure::validate`]'s errors.
    pub fn coo<T: Element>(&self) -> Result<CooView<'data, T>> {
        let mut structure = self.coo_structure()?;
        if self.options().is_strict() {
            structure = structure.validated()?;
        }
        let values = self.buffer(0)?.as_slice::<T>()?;
        Ok(CooView { structure, values })
    }
}
