//! How CSC and CSR relate (`layouts/csc.md` § Relationship to CSR): the
//! CSC arrays of A are the CSR arrays of Aᵀ, so each transpose is the other
//! layout's view over the same slices, no copy; and A itself converted to
//! the other layout, owned.

use crate::cursor::to_u64;
use crate::element_type::Element;
use crate::error::Result;
use crate::layout::csc::{CscStructure, CscView};
use crate::layout::csr::{CsrMatrix, CsrStructure, CsrView};

impl<'data> CscStructure<'data> {
    /// The CSR structure of Aᵀ over the same arrays (`layouts/csc.md` §
    /// Relationship to CSR): no copy.
    pub fn transpose(&self) -> CsrStructure<'data> {
        CsrStructure {
            inner: self.inner.transposed(),
        }
    }
}

impl<'data> CsrStructure<'data> {
    /// The CSC structure of Aᵀ over the same arrays, no copy
    /// (`layouts/csc.md` § Relationship to CSR): `nrows` and `ncols` swap,
    /// `col_ptr` is this `row_ptr`, `row_indices` this `col_indices`.
    pub fn transpose(&self) -> CscStructure<'data> {
        CscStructure {
            inner: self.inner.transposed(),
        }
    }
}

impl<'data, T: Element> CscView<'data, T> {
    /// Aᵀ, viewed as CSR over the same slices: no copy (`layouts/csc.md` §
    /// Relationship to CSR). `nrows` and `ncols` swap, `row_ptr` is this
    /// `col_ptr`, `col_indices` this `row_indices`: `transpose().get(j, i)`
    /// is `get(i, j)`. Keeps this view's validation state. For A itself in
    /// CSR, see [`to_csr`](Self::to_csr).
    pub fn transpose(&self) -> CsrView<'data, T> {
        CsrView::from_parts(self.structure.transpose(), self.values)
    }

    /// A itself (not Aᵀ) as an owned CSR matrix: new `row_ptr`,
    /// `col_indices` and `values` (the pointer and index transposition of
    /// `layouts/csc.md` § Relationship to CSR; [`transpose`](Self::transpose)
    /// is Aᵀ without a copy). It is the one allocation of the crate that
    /// grows with the matrix (the products' scratch has a bound whatever
    /// the matrix: [`mul_vec`](Self::mul_vec);
    /// [`AlignedBytes::read`](crate::AlignedBytes::read) holds a whole
    /// file, at the caller's choice): `8 × (nrows + 1)` bytes for
    /// `row_ptr` plus `(8 + size_of::<T>()) × nnz`. `nrows` comes from the
    /// file's shape, which the file size does not bound: check
    /// [`nrows`](Self::nrows) before converting a file you do not trust.
    /// Verifies the invariants first if the view was not validated.
    ///
    /// # Errors
    /// On an unvalidated view, as [`validate`](Self::validate);
    /// [`Error::AllocationFailed`](crate::Error::AllocationFailed) when the
    /// allocator refuses the memory (never an abort).
    pub fn to_csr(&self) -> Result<CsrMatrix<T>> {
        let view = self.validated()?;
        let tensor = view.structure.inner.tensor;
        let nnz = view.values().len();
        let rows = view.nrows().checked_add(1);
        // row_ptr has nrows + 1 entries whatever nnz is, and nrows is not
        // bounded by the file size: allocate fallibly, never abort.
        let mut row_ptr: Vec<u64> = Vec::new();
        rows.and_then(|n| usize::try_from(n).ok())
            .and_then(|n| row_ptr.try_reserve_exact(n).ok().map(|()| n))
            .map(|n| row_ptr.resize(n, 0))
            .ok_or_else(|| allocation_failed(tensor, "row_ptr", rows, 8))?;
        let mut col_indices: Vec<u64> = Vec::new();
        let mut values: Vec<T> = Vec::new();
        if col_indices.try_reserve_exact(nnz).is_err() || values.try_reserve_exact(nnz).is_err() {
            return Err(allocation_failed(
                tensor,
                "col_indices and values",
                Some(to_u64(nnz)),
                8 + size_of::<T>(),
            ));
        }
        col_indices.resize(nnz, 0);
        values.extend_from_slice(view.values());
        // Count each row's entries at row_ptr[r + 1]; the running sum then
        // makes row_ptr[r] the start of row r.
        for &r in view.row_indices() {
            if let Some(slot) = usize::try_from(r)
                .ok()
                .and_then(|r| r.checked_add(1))
                .and_then(|r| row_ptr.get_mut(r))
            {
                *slot += 1;
            }
        }
        let mut sum = 0u64;
        for p in &mut row_ptr {
            sum += *p;
            *p = sum;
        }
        // Scatter column by column (so each row's columns come out sorted),
        // using row_ptr[r] as row r's next free slot...
        for j in 0..view.ncols() {
            // Positions in the file's arrays (a block's are too).
            let range = view.structure.column_range(j)?;
            let rows = view.structure.inner.idx.get(range.clone()).unwrap_or_default();
            let vals = view.values.get(range).unwrap_or_default();
            for (&r, v) in rows.iter().zip(vals) {
                let Some(slot) = usize::try_from(r).ok().and_then(|r| row_ptr.get_mut(r)) else {
                    continue;
                };
                let at = usize::try_from(*slot).unwrap_or(usize::MAX);
                *slot += 1;
                if let (Some(c), Some(dst)) = (col_indices.get_mut(at), values.get_mut(at)) {
                    *c = j;
                    *dst = *v;
                }
            }
        }
        // ...which leaves row_ptr[r] at the end of row r: shift right by one.
        let mut start = 0u64;
        for p in &mut row_ptr {
            std::mem::swap(p, &mut start);
        }
        Ok(CsrMatrix::from_validated(
            tensor,
            (view.nrows(), view.ncols()),
            row_ptr,
            col_indices,
            values,
        ))
    }
}

impl<'data, T: Element> CsrView<'data, T> {
    /// The CSC view of Aᵀ over the same slices, no copy (`layouts/csc.md`
    /// § Relationship to CSR): `nrows` and `ncols` swap.
    pub fn transpose(&self) -> CscView<'data, T> {
        CscView::from_parts(self.structure.transpose(), self.values)
    }
}

fn allocation_failed(tensor: &str, what: &'static str, count: Option<u64>, width: usize) -> crate::Error {
    crate::Error::AllocationFailed {
        tensor: tensor.into(),
        what,
        bytes: count.and_then(|c| c.checked_mul(to_u64(width))).unwrap_or(u64::MAX),
    }
}
