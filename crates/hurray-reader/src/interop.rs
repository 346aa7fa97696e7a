//! Hand-offs to Rust's array and sparse crates, each behind its cargo
//! feature: `sprs` ([`CscView::as_sprs`]), `faer` ([`CscView::as_faer`])
//! and `ndarray` ([`DenseView::as_ndarray`]). Every one borrows the file's
//! bytes: nothing is copied, a block's pointer window included.
//!
//! The sprs and faer constructors that skip their own O(nnz) structure
//! check are `unsafe`: they are called only on a view whose storage
//! invariants this crate's scan has verified (the view is validated first
//! if it was not), which are the invariants those constructors assume.
#![allow(unsafe_code)]

#[cfg(any(feature = "sprs", feature = "faer"))]
use crate::cursor::to_usize;
#[cfg(any(feature = "sprs", feature = "faer", feature = "ndarray"))]
use crate::element_type::Element;
#[cfg(any(feature = "sprs", feature = "faer", feature = "ndarray"))]
use crate::error::{Error, Result};
#[cfg(any(feature = "sprs", feature = "faer"))]
use crate::layout::csc::CscView;
#[cfg(any(feature = "sprs", feature = "faer"))]
use crate::layout::csr::CsrView;

/// Shapes the other crates index with `usize`: a dimension past it cannot
/// be handed over.
#[cfg(any(feature = "sprs", feature = "faer"))]
fn dims(tensor: &str, nrows: u64, ncols: u64, limit: u64) -> Result<(usize, usize)> {
    let fits = |n: u64| n <= limit && usize::try_from(n).is_ok();
    if fits(nrows) && fits(ncols) {
        Ok((to_usize(nrows), to_usize(ncols)))
    } else {
        Err(Error::NotViewable {
            tensor: tensor.into(),
            why: "a dimension is larger than the other crate's index type can hold",
        })
    }
}

#[cfg(feature = "sprs")]
mod sprs_views {
    use super::*;

    impl<'data, T: Element> CscView<'data, T> {
        /// This matrix as a sprs CSC view over the same arrays (`col_ptr`,
        /// `row_indices`, `values`; of a [`column_block`](Self::column_block),
        /// its window and parts, which sprs takes as they are): no copy.
        /// Validates the view first if it was not (this crate's scan, then
        /// sprs's unchecked constructor, whose invariants the scan proves).
        ///
        /// ```
        /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
        /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
        /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
        /// let a = file.tensor("A")?.csc::<f32>()?;
        /// let m = a.as_sprs()?; // sprs::CsMatViewI<'_, f32, u64>
        /// assert_eq!((m.rows(), m.cols(), m.nnz()), (4, 5, 5));
        /// assert_eq!(m.get(2, 1), Some(&4.0));
        /// # Ok(()) }
        /// ```
        ///
        /// # Errors
        /// As [`validate`](Self::validate); [`Error::NotViewable`] when a
        /// dimension does not fit in a `usize`.
        pub fn as_sprs(&self) -> Result<sprs::CsMatViewI<'data, T, u64>> {
            let view = self.validated()?;
            let shape = dims(view.structure.inner.tensor, view.nrows(), view.ncols(), u64::MAX)?;
            // SAFETY: `view` is validated, so its arrays hold what
            // `check_compressed_structure` checks: `col_ptr` has `ncols + 1`
            // non-decreasing entries whose last minus first is the length of
            // `row_indices` and `values` (the view's parts of the file's);
            // each column's rows are strictly increasing and below `nrows`;
            // every index fits in a `usize` (they are below dimensions that
            // do, checked just above).
            Ok(unsafe {
                sprs::CsMatViewI::new_unchecked(
                    sprs::CompressedStorage::CSC,
                    shape,
                    view.col_ptr(),
                    view.row_indices(),
                    view.values(),
                )
            })
        }
    }

    impl<'data, T: Element> CsrView<'data, T> {
        /// This matrix as a sprs CSR view over the same arrays: no copy. See
        /// [`CscView::as_sprs`].
        ///
        /// # Errors
        /// As [`CscView::as_sprs`].
        pub fn as_sprs(&self) -> Result<sprs::CsMatViewI<'data, T, u64>> {
            let view = self.validated()?;
            let shape = dims(view.structure.inner.tensor, view.nrows(), view.ncols(), u64::MAX)?;
            // SAFETY: as in `CscView::as_sprs`, with rows and columns swapped.
            Ok(unsafe {
                sprs::CsMatViewI::new_unchecked(
                    sprs::CompressedStorage::CSR,
                    shape,
                    view.row_ptr(),
                    view.col_indices(),
                    view.values(),
                )
            })
        }
    }
}

#[cfg(feature = "faer")]
mod faer_views {
    use super::*;
    use faer::sparse::{SparseColMatRef, SparseRowMatRef, SymbolicSparseColMatRef, SymbolicSparseRowMatRef};

    /// faer wants its dimensions below `I::Signed::MAX` (`i64::MAX` for `u64`).
    const LIMIT: u64 = i64::MAX as u64;

    impl<'data, T: Element> CscView<'data, T> {
        /// This matrix as a faer CSC view over the same arrays: no copy.
        /// faer takes a block's pointer window as it is, over the file's
        /// whole `row_indices` and `values`. Validates the view first if it
        /// was not (this crate's scan, then faer's unchecked constructor).
        ///
        /// ```
        /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
        /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
        /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
        /// let a = file.tensor("A")?.csc::<f32>()?;
        /// let m = a.as_faer()?; // faer::sparse::SparseColMatRef<'_, u64, f32>
        /// assert_eq!((m.nrows(), m.ncols(), m.compute_nnz()), (4, 5, 5));
        /// # Ok(()) }
        /// ```
        ///
        /// # Errors
        /// As [`validate`](Self::validate); [`Error::NotViewable`] when a
        /// dimension is `2^63` or more.
        pub fn as_faer(&self) -> Result<SparseColMatRef<'data, u64, T>> {
            let view = self.validated()?;
            let inner = &view.structure.inner;
            let (nrows, ncols) = dims(inner.tensor, view.nrows(), view.ncols(), LIMIT)?;
            // SAFETY: `view` is validated, so faer's invariants hold:
            // `nrows` and `ncols` are below `i64::MAX` (checked above);
            // `col_ptr` (the view's window of the file's pointers) has
            // `ncols + 1` non-decreasing entries, its last at most the
            // length of the file's `row_indices`, which is given whole; the
            // rows of each column are below `nrows` and strictly increasing
            // (faer's soft invariant too).
            let symbolic = unsafe { SymbolicSparseColMatRef::new_unchecked(nrows, ncols, inner.ptr, None, inner.idx) };
            faer_values(inner.tensor, symbolic.row_idx().len(), view.values)
                .map(|values| SparseColMatRef::new(symbolic, values))
        }
    }

    impl<'data, T: Element> CsrView<'data, T> {
        /// This matrix as a faer CSR view over the same arrays: no copy. See
        /// [`CscView::as_faer`].
        ///
        /// # Errors
        /// As [`CscView::as_faer`].
        pub fn as_faer(&self) -> Result<SparseRowMatRef<'data, u64, T>> {
            let view = self.validated()?;
            let inner = &view.structure.inner;
            let (nrows, ncols) = dims(inner.tensor, view.nrows(), view.ncols(), LIMIT)?;
            // SAFETY: as in `CscView::as_faer`, with rows and columns swapped.
            let symbolic = unsafe { SymbolicSparseRowMatRef::new_unchecked(nrows, ncols, inner.ptr, None, inner.idx) };
            faer_values(inner.tensor, symbolic.col_idx().len(), view.values)
                .map(|values| SparseRowMatRef::new(symbolic, values))
        }
    }

    /// The file's whole values buffer, which faer wants as long as the
    /// index array (they have the same `nnz` entries in a valid file).
    fn faer_values<'data, T>(tensor: &str, len: usize, values: &'data [T]) -> Result<&'data [T]> {
        values
            .get(..len)
            .filter(|v| v.len() == len)
            .ok_or_else(|| Error::NotViewable {
                tensor: tensor.into(),
                why: "values and indices differ in length",
            })
    }
}

#[cfg(feature = "ndarray")]
mod ndarray_views {
    use super::*;
    use crate::layout::dense::DenseView;
    use ndarray::ShapeBuilder;

    impl<'data, T: Element> DenseView<'data, T> {
        /// This tensor as an `ndarray` view of its shape over buffer 0, no
        /// copy: row-major, column-major and strided tensors (a strided
        /// tensor's negative strides too, by inverting those axes). Tiled,
        /// Morton and Hilbert tensors have no strides, and ndarray cannot
        /// view a zero stride or strides under which two indices share an
        /// element: those are [`Error::NotViewable`] (read them with
        /// [`get`](Self::get)).
        ///
        /// ```
        /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
        /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/sparse_formats.hry"))?;
        /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
        /// let d = file.tensor("m.dense_col_major")?.dense::<f64>()?;
        /// let a = d.as_ndarray()?; // ndarray::ArrayViewD<'_, f64>, shape [5, 6]
        /// assert_eq!(a.shape(), [5, 6]);
        /// assert_eq!(a[[4, 5]], *d.get(&[4, 5])?);
        /// # Ok(()) }
        /// ```
        ///
        /// # Errors
        /// [`Error::NotViewable`] as above, or when a dimension or a step
        /// does not fit in a `usize`.
        pub fn as_ndarray(&self) -> Result<ndarray::ArrayViewD<'data, T>> {
            let a = self.addressing();
            let tensor = a.tensor;
            let not = |why: &'static str| Error::NotViewable {
                tensor: tensor.into(),
                why,
            };
            let strides = a
                .strides()
                .ok_or_else(|| not("ndarray views only strided layouts (row-major, column-major, strided)"))?;
            let shape: Vec<usize> = a
                .shape()
                .iter()
                .map(|&n| usize::try_from(n))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| not("a dimension does not fit in a usize"))?;
            if shape.contains(&0) {
                return ndarray::ArrayViewD::from_shape(shape, &[]).map_err(|_| not("an empty view"));
            }
            if strides.contains(&0) && shape.iter().zip(&strides).any(|(&n, &s)| s == 0 && n > 1) {
                return Err(not("ndarray cannot view a zero stride"));
            }
            // The element with the lowest position: every negative step taken
            // to its axis' end.
            let origin = a.origin;
            let lowest = shape
                .iter()
                .zip(&strides)
                .filter(|(_, &s)| s < 0)
                .map(|(&n, &s)| i128::from(s) * (i128::try_from(n).unwrap_or(0) - 1))
                .sum::<i128>()
                + origin;
            let start = usize::try_from(lowest).map_err(|_| not("an element lies before the buffer"))?;
            let steps: Vec<usize> = strides
                .iter()
                .map(|&s| usize::try_from(s.unsigned_abs()))
                .collect::<std::result::Result<_, _>>()
                .map_err(|_| not("a step does not fit in a usize"))?;
            let elements = self
                .elements
                .get(start..)
                .ok_or_else(|| not("an element lies past the buffer"))?;
            let mut view = ndarray::ArrayViewD::from_shape(
                ndarray::IxDyn(&shape).strides(ndarray::IxDyn(&steps)),
                elements,
            )
            .map_err(|_| {
                not("ndarray cannot view these strides (two indices share an element, or one lies past the buffer)")
            })?;
            for (k, &s) in strides.iter().enumerate() {
                if s < 0 {
                    view.invert_axis(ndarray::Axis(k));
                }
            }
            Ok(view)
        }
    }
}
