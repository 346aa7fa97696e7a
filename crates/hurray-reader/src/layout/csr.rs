//! CSR views (`layouts/csr.md`, layout tag `0x07`), the mirror of CSC.

use crate::buffer::BufferRole;
use crate::descriptor::Descriptor;
use crate::element_type::Element;
use crate::error::{rule, Result};
use crate::layout::compressed::plans::{compressed_plans, Orientation};
use crate::layout::compressed::{Compressed, Float, Slices, CSR};
use crate::layout::fields::{Layout, LayoutFields};
use crate::layout::plan::Plan;
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::raw;
use crate::tensor::Tensor;

/// The sparsity structure of a CSR matrix — `row_ptr` and `col_indices` —
/// without its values. Usable for every element type, packed ones included.
///
/// `layouts/csr.md` (layout tag `0x07`, rank 2): buffer 2 `row_ptr` holds
/// `nrows + 1` `u64` (`nrows = shape[0]`), buffer 1 `col_indices` holds
/// `nnz` `u64`, each below `ncols = shape[1]`. Every position and length
/// here counts elements of those arrays (and of `values`), never bytes. It
/// is the [`CscStructure`](crate::CscStructure) of Aᵀ over the same arrays
/// ([`transpose`](Self::transpose)).
#[derive(Clone, Copy)]
pub struct CsrStructure<'data> {
    pub(crate) inner: Compressed<'data>,
}

/// Shape, `nnz`, the first few entries of `row_ptr` and `col_indices`.
impl std::fmt::Debug for CsrStructure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.debug::<()>(
            f,
            "CsrStructure",
            (self.nrows(), self.ncols()),
            ("row_ptr", "col_indices"),
            None,
        )
    }
}

impl<'data> CsrStructure<'data> {
    /// Number of rows, `shape[0]`.
    pub fn nrows(&self) -> u64 {
        self.inner.outer_len
    }

    /// Number of columns, `shape[1]`.
    pub fn ncols(&self) -> u64 {
        self.inner.inner_len
    }

    /// Number of stored elements (of a [`row_block`](Self::row_block): its
    /// rows').
    pub fn nnz(&self) -> u64 {
        self.inner.stored()
    }

    /// Row pointers: `nrows + 1` entries; row `i` holds positions
    /// `row_ptr[i]..row_ptr[i + 1]` of `col_indices` and `values`. Of a
    /// [`row_block`](Self::row_block) `i0..i1`: the file's
    /// `row_ptr[i0..=i1]`, positions in the file's arrays, starting at
    /// `row_ptr[i0]`, not 0.
    #[doc(alias = "indptr")]
    pub fn row_ptr(&self) -> &'data [u64] {
        self.inner.ptr
    }

    /// Column index of each stored element, `nnz` entries (of a block: its
    /// rows' part of the file's `col_indices`).
    #[doc(alias = "indices")]
    pub fn col_indices(&self) -> &'data [u64] {
        self.inner.indices()
    }

    /// The rows `rows` (`i0..i1`) as a structure of their own, over the
    /// same arrays (no copy). See [`CsrView::row_block`].
    ///
    /// # Errors
    /// As [`CsrView::row_block`].
    pub fn row_block(&self, rows: std::ops::Range<u64>) -> Result<Self> {
        Ok(CsrStructure {
            inner: self.inner.block(rows)?,
        })
    }

    /// True once the storage invariants have been verified (by
    /// [`validated`](Self::validated), or by a strict [`Tensor::csr`]).
    pub fn is_validated(&self) -> bool {
        self.inner.scanned
    }

    /// Verifies the four storage invariants of `layouts/csr.md` § Storage
    /// Invariants in one allocation-free pass over `row_ptr` and
    /// `col_indices`: (1) `row_ptr[0] = 0`, `row_ptr[nrows] = nnz`; (2)
    /// `row_ptr` non-decreasing; (3) columns strictly increasing within each
    /// row; (4) every column `< ncols`.
    ///
    /// # Errors
    /// The first violation, naming the array entry (`row_ptr[i]` or
    /// `col_indices[j]`), its absolute file offset in bytes and the
    /// invariant (`layouts/csr.md § Storage Invariants (n)`):
    /// [`Error::PtrFirst`](crate::Error::PtrFirst),
    /// [`Error::PtrLast`](crate::Error::PtrLast) (1);
    /// [`Error::PtrDecreasing`](crate::Error::PtrDecreasing),
    /// [`Error::PtrTooLarge`](crate::Error::PtrTooLarge) (a pointer above
    /// `nnz` before the last) (2);
    /// [`Error::NotIncreasing`](crate::Error::NotIncreasing) (also naming
    /// the row) (3); [`Error::IndexOutOfBounds`](crate::Error::IndexOutOfBounds) (4).
    pub fn validate(&self) -> Result<()> {
        self.inner.validate()
    }

    /// [`validate`](Self::validate) split over `threads` threads
    /// (clamped to 1..=64; the calling thread and the library's pool, see
    /// [`Options::threads`](crate::Options::threads)): the index array is cut
    /// into `threads` ranges of equal length — a cut may fall inside a
    /// row, so one huge row is shared too — and each thread checks
    /// its range and the pointers of the rows starting in it. Same
    /// verdict and same error as the one-thread scan (a failure is named by
    /// the sequential exact pass); worth it from a few million elements.
    /// A range whose thread the OS refuses is scanned on the calling thread.
    /// [`Options::with_threads`](crate::Options::with_threads) applies it
    /// to strict views and `validate_data`.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn validate_parallel(&self, threads: usize) -> Result<()> {
        self.inner.validate_parallel(threads)
    }

    /// This structure, verified.
    ///
    /// # Errors
    /// As [`validate`](Self::validate).
    pub fn validated(self) -> Result<Self> {
        self.validated_threads(1)
    }

    /// [`validated`](Self::validated) with the scan on up to `threads`
    /// threads (fewer for small arrays), as [`Options::threads`](crate::Options::threads) says.
    pub(crate) fn validated_threads(mut self, threads: usize) -> Result<Self> {
        if !self.inner.scanned {
            self.inner.validate_with(threads, &mut |_, _| {})?;
            self.inner.scanned = true;
        }
        Ok(self)
    }

    /// Storage invariants (1) and (2) alone (`layouts/csr.md` §
    /// Storage Invariants): `row_ptr[0] = 0`, `row_ptr[nrows] = nnz`, and
    /// `row_ptr` non-decreasing. Reads the `nrows + 1` pointers and no index:
    /// what a lookup on an unvalidated structure does not check outside
    /// the slice it reads, at O(`nrows`).
    ///
    /// # Errors
    /// The first broken pointer, as [`validate`](Self::validate) names it.
    pub fn validate_pointers(&self) -> Result<()> {
        self.inner.check_pointer_array()
    }

    /// Positions (element indices, not bytes) of row `i`'s elements in
    /// `col_indices` / `values`: `row_ptr[i]..row_ptr[i + 1]`
    /// (`layouts/csr.md` § Row Iteration).
    ///
    /// # Errors
    /// [`Error::IndexArgument`](crate::Error::IndexArgument) if `i >= nrows`;
    /// on an unvalidated structure, the error of a damaged row.
    pub fn row_range(&self, i: u64) -> Result<std::ops::Range<usize>> {
        self.inner.slice_range(i)
    }

    /// Position (element index) of element (`row`, `col`) in `col_indices`
    /// / `values`, found by binary search in the row (`layouts/csr.md` §
    /// Element Lookup); `None` when it is an implicit zero.
    ///
    /// # Errors
    /// [`Error::IndexArgument`](crate::Error::IndexArgument) for a row or
    /// column out of range; on an unvalidated structure, the error of a
    /// damaged row `row` (its pointers, its columns). A decreasing pointer
    /// elsewhere is seen only by [`validate`](Self::validate).
    pub fn position(&self, row: u64, col: u64) -> Result<Option<usize>> {
        self.inner.find(col, row)
    }
}

/// A CSR matrix with values of type `T`, borrowed (from the file, or from a
/// [`CsrMatrix`]) (`layouts/csr.md`, layout tag `0x07`, rank 2).
///
/// Shapes: `nrows = shape[0]`, `ncols = shape[1]`; `values` (buffer 0,
/// the tensor's element type) and `col_indices` (buffer 1, `u64`) have
/// `nnz` entries, `row_ptr` (buffer 2, `u64`) has `nrows + 1`. Lengths,
/// positions and `row_ptr` entries count elements, not bytes. Lookups
/// return `Ok(None)` for the implicit zero of an unstored element. Errors
/// about the file name the field, its byte offset and the spec section
/// ([`Error::field`](crate::Error::field),
/// [`offset`](crate::Error::offset), [`rule`](crate::Error::rule)).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/sparse_formats.hry"))?;
/// use hurray_reader::{HurrayFile, Options};
/// let file = HurrayFile::parse(&bytes, Options::default())?;
/// let a = file.tensor("m.csr")?.csr::<f64>()?;  // strict: invariants checked
/// assert_eq!((a.nrows(), a.ncols(), a.nnz()), (5, 6, 12));
/// assert_eq!(a.row_ptr(), [0, 3, 5, 7, 10, 12]);
/// assert_eq!(a.get(0, 3)?, Some(&-2.0));          // stored
/// assert_eq!(a.get(1, 1)?, None);                 // implicit zero
/// let row1: Vec<(u64, f64)> = a.row(1)?.map(|(c, v)| (c, *v)).collect();
/// assert_eq!(row1, [(2, 3.25), (5, 11.0)]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct CsrView<'data, T> {
    pub(crate) structure: CsrStructure<'data>,
    pub(crate) values: &'data [T],
}

/// Shape, `nnz`, the first few entries of each array: never the arrays.
impl<T: std::fmt::Debug> std::fmt::Debug for CsrView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.structure;
        s.inner.debug(
            f,
            "CsrView",
            (s.nrows(), s.ncols()),
            ("row_ptr", "col_indices"),
            Some(self.values),
        )
    }
}

impl<'data, T: Element> CsrView<'data, T> {
    pub(crate) fn from_parts(structure: CsrStructure<'data>, values: &'data [T]) -> Self {
        CsrView { structure, values }
    }

    /// Number of rows.
    pub fn nrows(&self) -> u64 {
        self.structure.nrows()
    }

    /// Number of columns.
    pub fn ncols(&self) -> u64 {
        self.structure.ncols()
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.structure.nnz()
    }

    /// Stored values in row order, `nnz` entries (buffer 0; of a
    /// [`row_block`](Self::row_block), its rows' part).
    pub fn values(&self) -> &'data [T] {
        self.values.get(self.structure.inner.positions()).unwrap_or_default()
    }

    /// Column index of each value, `nnz` entries (buffer 1; of a block, its
    /// rows' part).
    pub fn col_indices(&self) -> &'data [u64] {
        self.structure.col_indices()
    }

    /// Row pointers, `nrows + 1` entries (buffer 2): row `i` holds
    /// positions `row_ptr[i]..row_ptr[i + 1]` of `col_indices` and `values`.
    /// Of a [`row_block`](Self::row_block) `i0..i1`, the file's
    /// `row_ptr[i0..=i1]` (see [`CsrStructure::row_ptr`]).
    #[doc(alias = "indptr")]
    pub fn row_ptr(&self) -> &'data [u64] {
        self.structure.row_ptr()
    }

    /// The sub-matrix of the rows `rows` (`A[i0..i1, :]`): a view of shape
    /// `(i1 - i0) × ncols` over the same bytes, no copy; what
    /// [`CscView::column_block`](crate::CscView::column_block) is for columns (on the transpose of a CSC
    /// view, its column block). Every method works on it.
    ///
    /// # Errors
    /// [`Error::BlockArgument`](crate::Error::BlockArgument) for a
    /// reversed range or one past `nrows`; on an unvalidated view, the
    /// error of a damaged pointer where the block starts or ends, or at the
    /// ends of the file's `row_ptr`.
    pub fn row_block(&self, rows: std::ops::Range<usize>) -> Result<Self> {
        let rows = crate::cursor::to_u64(rows.start)..crate::cursor::to_u64(rows.end);
        Ok(CsrView {
            structure: self.structure.row_block(rows)?,
            values: self.values,
        })
    }

    /// The structure without values.
    pub fn structure(&self) -> CsrStructure<'data> {
        self.structure
    }

    /// True once the storage invariants have been verified.
    pub fn is_validated(&self) -> bool {
        self.structure.is_validated()
    }

    /// Verifies the storage invariants; see [`CsrStructure::validate`].
    /// Takes `&self`, so the view is not marked: to keep the verdict, use
    /// [`validated`](Self::validated).
    ///
    /// # Errors
    /// As [`CsrStructure::validate`].
    pub fn validate(&self) -> Result<()> {
        self.structure.validate()
    }

    /// This view, verified.
    ///
    /// # Errors
    /// As [`CsrStructure::validate`].
    pub fn validated(self) -> Result<Self> {
        self.validated_threads(1)
    }

    /// [`validated`](Self::validated) on up to `threads` threads.
    pub(crate) fn validated_threads(self, threads: usize) -> Result<Self> {
        Ok(CsrView {
            structure: self.structure.validated_threads(threads)?,
            values: self.values,
        })
    }

    /// The value at (`row`, `col`), by binary search in row `row`
    /// (`layouts/csr.md` § Element Lookup); `Ok(None)` is the implicit zero.
    ///
    /// # Errors
    /// As [`CsrStructure::position`].
    pub fn get(&self, row: u64, col: u64) -> Result<Option<&'data T>> {
        Ok(self.structure.position(row, col)?.and_then(|p| self.values.get(p)))
    }

    /// Row `i`'s stored elements as `(col, &value)`, columns ascending
    /// (`layouts/csr.md` § Row Iteration).
    ///
    /// # Errors
    /// As [`CsrStructure::row_range`].
    pub fn row(&self, i: u64) -> Result<impl ExactSizeIterator<Item = (u64, &'data T)> + 'data> {
        let range = self.structure.row_range(i)?;
        // Positions in the file's arrays (a block's are too).
        let cols = self.structure.inner.idx.get(range.clone()).unwrap_or_default();
        let vals = self.values.get(range).unwrap_or_default();
        Ok(cols.iter().copied().zip(vals))
    }

    /// Every row in order as `(i, cols, values)`: `cols` is
    /// `col_indices[row_ptr[i]..row_ptr[i + 1]]` (ascending) and `values`
    /// the same range of [`values`](Self::values), both borrowed from the
    /// file (`layouts/csr.md` § Row Iteration). `nrows` items, empty rows
    /// included; no `Result` and no check per row: on an unvalidated view
    /// the invariants are verified first, on every call (take
    /// [`validated`](Self::validated) once to skip it). On
    /// [`CscView::transpose`](crate::CscView::transpose) these are the columns of the CSC matrix.
    ///
    /// # Errors
    /// On an unvalidated view, as [`validate`](Self::validate).
    pub fn rows(&self) -> Result<Slices<'data, T>> {
        let view = self.validated()?;
        Ok(Slices::new(&view.structure.inner, view.values))
    }

    /// Every stored element as `(row, col, &value)`, row by row. On an
    /// unvalidated view the invariants are verified first.
    ///
    /// # Errors
    /// On an unvalidated view, as [`validate`](Self::validate).
    pub fn iter(&self) -> Result<impl Iterator<Item = (u64, u64, &'data T)> + 'data> {
        Ok(self
            .rows()?
            .flat_map(|(i, cols, vals)| cols.iter().zip(vals).map(move |(&c, v)| (i, c, v))))
    }
}

impl<T: Float> CsrView<'_, T> {
    /// The product `y = A·x` (`y` overwritten): `y[i]` is the dot product
    /// of row `i` with `x`, products and sums in `T` in storage order (what
    /// scipy's `A @ x` computes for a CSR matrix, bit for bit, but for the
    /// sign and payload of a NaN entry, as [`CscView::mul_vec`](crate::CscView::mul_vec) says). `x` has
    /// `ncols` entries, `y` `nrows`. One pass over `row_ptr`,
    /// `col_indices` and `values`, the reads of `x` at random. Allocates
    /// nothing (how the rows are walked: `docs/design.md` § The sparse
    /// products).
    /// When `x` is larger than 2 MiB (`ncols × size_of::<T>()`, about what
    /// an L2 cache holds), or rows hold 5 to 32 elements on average
    /// whatever its size, each read asks the CPU to prefetch the entry of
    /// `x` that the element 64 positions on will read (128 beyond 8 MiB; a
    /// cache hint, x86-64 only; it changes no result), but where rows hold more than
    /// 32 elements on average and `x` is within 8 MiB, or rows are dense
    /// enough to read `x` as a stream (`docs/design.md`). On an unvalidated view the
    /// invariants are verified first, on every call. On
    /// [`CscView::transpose`](crate::CscView::transpose) this is Aᵀ·x for the CSC matrix A.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// let a = file.tensor("A")?.csc::<f32>()?; // 4 × 5
    /// let mut z = [0f32; 5];
    /// a.transpose().mul_vec(&[1.0, 2.0, 3.0, 4.0], &mut z)?; // Aᵀ·x
    /// assert_eq!(z, [1.0, 12.0, 6.0, 2.0, 15.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) when `x` or
    /// `y` has the wrong length (nothing is written); on an unvalidated
    /// view, as [`validate`](Self::validate).
    pub fn mul_vec(&self, x: &[T], y: &mut [T]) -> Result<()> {
        let inner = &self.structure.inner;
        inner.check_lengths((x.len(), "ncols", self.ncols()), (y.len(), "nrows", self.nrows()))?;
        let view = self.validated()?;
        view.structure.inner.dots(view.values, x, y);
        Ok(())
    }

    /// [`mul_vec`](Self::mul_vec) on `threads` threads
    /// (0 counts as 1, and no more than 64 or the cores that
    /// [`std::thread::available_parallelism`] reports; the calling thread
    /// and the library's pool, as in
    /// [`CscView::mul_vec_parallel`](crate::CscView::mul_vec_parallel)): the stored
    /// elements are cut into `threads` consecutive shares of about
    /// `nnz / threads`, and each thread computes the dot products of the
    /// rows that start in its share; the calling thread takes the last
    /// share, and any share whose thread the OS refuses to start; fewer
    /// than 2^16 stored elements run on the calling thread alone. A cut
    /// falls between two rows, moved by up to 1/8 of a share (and at least
    /// 4 096 elements) to reach one. **Rounding:** every row is summed
    /// exactly as by `mul_vec`, the same bits whatever `threads` (a NaN's
    /// sign and payload aside, as [`mul_vec`](Self::mul_vec) says), but for
    /// a row of more than 4 096 elements and 1/8 of a share with no row
    /// boundary that near the cut (one row of a one-column matrix, a hub
    /// of a graph): the cut splits it, each thread sums its part in
    /// storage order, and the parts are added in thread order, which may
    /// differ from `mul_vec`'s sum in the last bits (with `f32`,
    /// `1 + 1e8 - 1e8 + 1` cut in the middle is 0 where `mul_vec` gives
    /// 1). The same `threads` gives the same bits on every call on one
    /// machine; as `threads` is capped at its cores, a machine with fewer
    /// cores may cut such a row elsewhere. Allocates a few vectors of `threads + 1`
    /// entries, the threads' own, and as [`mul_vec`](Self::mul_vec) does,
    /// per thread. Worth it from about 10^5 stored elements
    /// (each call starts `threads - 1` threads); two threads ran the
    /// 100 M-element Aᵀ·x of `docs/perf-log/run-c.md` (§ 5) about 2x as
    /// fast as one. On an unvalidated view the invariants are verified
    /// first, on every call.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// let at = file.tensor("A")?.csc::<f32>()?.transpose(); // 5 × 4
    /// let mut z = [0f32; 5];
    /// at.mul_vec_parallel(&[1.0, 2.0, 3.0, 4.0], &mut z, 2)?;
    /// assert_eq!(z, [1.0, 12.0, 6.0, 2.0, 15.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`mul_vec`](Self::mul_vec).
    pub fn mul_vec_parallel(&self, x: &[T], y: &mut [T], threads: usize) -> Result<()> {
        let inner = &self.structure.inner;
        inner.check_lengths((x.len(), "ncols", self.ncols()), (y.len(), "nrows", self.nrows()))?;
        let view = self.validated()?;
        view.structure.inner.dots_parallel(view.values, x, y, threads);
        Ok(())
    }
}

/// An owned CSR matrix, built by [`CscView::to_csr`](crate::CscView::to_csr): the same matrix as
/// the CSC view it came from, `nrows × ncols`, with `row_ptr` (`nrows + 1`
/// entries), `col_indices` and `values` (`nnz` each). Its structure
/// (shape, `row_ptr`, `col_indices`) is read-only, so that
/// [`view`](Self::view) can hand out a view that needs no scan: those
/// arrays are the ones `to_csr` built from validated data.
/// [`values_mut`](Self::values_mut) lets the values change, and
/// [`into_parts`](Self::into_parts) gives the vectors away. Two copies are
/// equal (`==`) when their shapes and arrays are, whatever tensors they
/// came from.
#[derive(Clone)]
pub struct CsrMatrix<T> {
    tensor: Box<str>,
    nrows: u64,
    ncols: u64,
    row_ptr: Vec<u64>,
    col_indices: Vec<u64>,
    values: Vec<T>,
}

/// Shape and the first few entries of each array: never the arrays.
impl<T: std::fmt::Debug> std::fmt::Debug for CsrMatrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::debug::{few, Text};
        f.debug_struct("CsrMatrix")
            .field("tensor", &Text(&self.tensor))
            .field("nrows", &self.nrows)
            .field("ncols", &self.ncols)
            .field("row_ptr", &few(&self.row_ptr))
            .field("col_indices", &few(&self.col_indices))
            .field("values", &few(&self.values))
            .finish()
    }
}

impl<T> CsrMatrix<T> {
    /// Built by `to_csr` from the validated view of `tensor`.
    pub(crate) fn from_validated(
        tensor: &str,
        (nrows, ncols): (u64, u64),
        row_ptr: Vec<u64>,
        col_indices: Vec<u64>,
        values: Vec<T>,
    ) -> Self {
        CsrMatrix {
            tensor: tensor.into(),
            nrows,
            ncols,
            row_ptr,
            col_indices,
            values,
        }
    }

    /// The name of the tensor this is a copy of; errors from
    /// [`view`](Self::view) name it too.
    pub fn tensor(&self) -> &str {
        &self.tensor
    }

    /// Number of rows.
    pub fn nrows(&self) -> u64 {
        self.nrows
    }

    /// Number of columns.
    pub fn ncols(&self) -> u64 {
        self.ncols
    }

    /// Row pointers, `nrows + 1` entries (element positions).
    pub fn row_ptr(&self) -> &[u64] {
        &self.row_ptr
    }

    /// Column index of each value, `nnz` entries.
    pub fn col_indices(&self) -> &[u64] {
        &self.col_indices
    }

    /// Values in row order, `nnz` entries.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The values, to change in place (scaling them, say); the structure
    /// that [`view`](Self::view) relies on stays as `to_csr` built it.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// The shape and the three arrays, `((nrows, ncols), row_ptr,
    /// col_indices, values)`, without a copy.
    pub fn into_parts(self) -> ((u64, u64), Vec<u64>, Vec<u64>, Vec<T>) {
        ((self.nrows, self.ncols), self.row_ptr, self.col_indices, self.values)
    }
}

/// Shapes and arrays, not the source tensor's name.
impl<T: PartialEq> PartialEq for CsrMatrix<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.nrows, self.ncols) == (other.nrows, other.ncols)
            && self.row_ptr == other.row_ptr
            && self.col_indices == other.col_indices
            && self.values == other.values
    }
}

impl<T: Element> CsrMatrix<T> {
    /// A validated view of this matrix (no scan: `to_csr` built it from a
    /// validated view). Its errors name the tensor it was copied from.
    pub fn view(&self) -> CsrView<'_, T> {
        CsrView {
            structure: CsrStructure {
                inner: Compressed {
                    tensor: &self.tensor,
                    names: CSR,
                    outer_len: self.nrows,
                    inner_len: self.ncols,
                    nnz: crate::cursor::to_u64(self.values.len()),
                    ptr: &self.row_ptr,
                    idx: &self.col_indices,
                    ptr_offset: 0,
                    idx_offset: 0,
                    scanned: true,
                    transposed: false,
                    window: None,
                },
            },
            values: &self.values,
        }
    }
}

impl<'data> Tensor<'data> {
    /// The CSR structure (`row_ptr`, `col_indices`) without values, for
    /// any element type; not validated.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) unless the
    /// layout is CSR; [`Error::NotViewable`](crate::Error::NotViewable);
    /// [`Error::Misaligned`](crate::Error::Misaligned).
    pub fn csr_structure(&self) -> Result<CsrStructure<'data>> {
        Ok(CsrStructure {
            inner: self.compressed(Layout::Csr, CSR)?,
        })
    }

    /// The CSR view with values `T`; strict mode verifies the invariants
    /// first (on up to [`Options::threads`](crate::Options::threads) threads),
    /// permissive mode does not (damaged rows then give errors on lookup).
    /// `T` as for [`Tensor::csc`]; packed values have no typed view.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch),
    /// [`Error::TypeMismatch`](crate::Error::TypeMismatch),
    /// [`Error::NotViewable`](crate::Error::NotViewable),
    /// [`Error::Misaligned`](crate::Error::Misaligned), and in strict mode
    /// any invariant error of [`CsrStructure::validate`]. The descriptor's
    /// rules (rank 2, three buffers of their exact sizes, `byte_offset` 0,
    /// zero reserved bytes, statistics `nnz`) were checked when the tensor
    /// was resolved ([`HurrayFile::tensor`](crate::HurrayFile::tensor)).
    pub fn csr<T: Element>(&self) -> Result<CsrView<'data, T>> {
        let view = self.csr_unscanned()?;
        if self.options().is_strict() {
            view.validated_threads(self.options().threads())
        } else {
            Ok(view)
        }
    }

    /// The CSR view without the invariant scan.
    ///
    /// # Errors
    /// As [`csr`](Self::csr), without the invariant errors.
    pub fn csr_unscanned<T: Element>(&self) -> Result<CsrView<'data, T>> {
        let structure = self.csr_structure()?;
        let values = self.buffer(0)?.as_slice::<T>()?;
        Ok(CsrView { structure, values })
    }
}

/// `layouts/csr.md`'s descriptor rules.
pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule {
        allows: |rank| rank == 2,
        expected: "2",
        rule: rule::CSR_DESCRIPTION,
    },
    buffers: BufferCount {
        count: |_| Some(3),
        expected: "3 (values, col_indices, row_ptr)",
        rule: rule::CSR_BUFFERS,
    },
    no_shard: None,
    statistics: Some(rule::CSR_STATS),
    plans,
};

/// CSR (`layouts/csr.md`): `values`, `col_indices`, `row_ptr` (nrows + 1).
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Csr(f) = d.layout_fields() else {
        return Ok(Vec::new());
    };
    compressed_plans(
        d,
        f,
        Orientation {
            index_role: BufferRole::ColIndices,
            ptr_role: BufferRole::RowPtr,
            ptr_axis: 0,
            fields_rule: rule::CSR_FIELDS,
            size_rule: rule::CSR_SIZE,
        },
    )
}
