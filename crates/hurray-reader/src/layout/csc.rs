//! CSC views (`layouts/csc.md`, layout tag `0x08`).

use crate::buffer::BufferRole;
use crate::cursor::to_u64;
use crate::descriptor::Descriptor;
use crate::element_type::Element;
use crate::error::{rule, Result};
use crate::layout::compressed::plans::{compressed_plans, Orientation};
use crate::layout::compressed::{Compressed, Float, Slices, CSC};
use crate::layout::fields::{Layout, LayoutFields};
use crate::layout::plan::Plan;
use crate::layout::spec::{BufferCount, LayoutSpec, RankRule};
use crate::raw;
use crate::tensor::Tensor;

/// The sparsity structure of a CSC matrix — `col_ptr` and `row_indices` —
/// without its values. Usable for every element type, packed ones included.
///
/// `layouts/csc.md` (layout tag `0x08`): buffer 2 `col_ptr` holds
/// `ncols + 1` `u64`, buffer 1 `row_indices` holds `nnz` `u64`. Every
/// position and length here counts elements of those arrays (and of
/// `values`), never bytes.
#[derive(Clone, Copy)]
pub struct CscStructure<'data> {
    pub(crate) inner: Compressed<'data>,
}

/// Shape, `nnz`, the first few entries of `col_ptr` and `row_indices`.
impl std::fmt::Debug for CscStructure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.debug::<()>(
            f,
            "CscStructure",
            (self.nrows(), self.ncols()),
            ("col_ptr", "row_indices"),
            None,
        )
    }
}

impl<'data> CscStructure<'data> {
    /// Number of rows, `shape[0]`.
    pub fn nrows(&self) -> u64 {
        self.inner.inner_len
    }

    /// Number of columns, `shape[1]`.
    pub fn ncols(&self) -> u64 {
        self.inner.outer_len
    }

    /// Number of stored elements (of a [`column_block`](Self::column_block):
    /// its columns').
    pub fn nnz(&self) -> u64 {
        self.inner.stored()
    }

    /// Column pointers: `ncols + 1` entries; column `j` holds positions
    /// `col_ptr[j]..col_ptr[j + 1]` of `row_indices` and `values`. Of a
    /// [`column_block`](Self::column_block) `j0..j1`: the file's
    /// `col_ptr[j0..=j1]`, positions in the file's arrays, so its first
    /// entry is `col_ptr[j0]`, not 0 (subtract it for positions in the
    /// block's [`row_indices`](Self::row_indices)).
    #[doc(alias = "indptr")]
    pub fn col_ptr(&self) -> &'data [u64] {
        self.inner.ptr
    }

    /// Row index of each stored element, `nnz` entries (of a block: its
    /// columns' part of the file's `row_indices`).
    #[doc(alias = "indices")]
    pub fn row_indices(&self) -> &'data [u64] {
        self.inner.indices()
    }

    /// The columns `cols` (`j0..j1`) as a structure of their own, over the
    /// same arrays (no copy): `ncols = j1 - j0`, its column `j` the file's
    /// `j0 + j`. See [`CscView::column_block`].
    ///
    /// # Errors
    /// As [`CscView::column_block`].
    pub fn column_block(&self, cols: std::ops::Range<u64>) -> Result<Self> {
        Ok(CscStructure {
            inner: self.inner.block(cols)?,
        })
    }

    /// True once the storage invariants have been verified (by
    /// [`validate`](Self::validate), or by a strict [`Tensor::csc`]).
    pub fn is_validated(&self) -> bool {
        self.inner.scanned
    }

    /// Verifies the four storage invariants of `layouts/csc.md` § Storage
    /// Invariants in one allocation-free pass over `col_ptr` and
    /// `row_indices`: (1) `col_ptr[0] = 0`, `col_ptr[ncols] = nnz`; (2)
    /// `col_ptr` non-decreasing; (3) rows strictly increasing within each
    /// column; (4) every row `< nrows`.
    ///
    /// # Errors
    /// The first violation, naming the array entry (`col_ptr[j]` or
    /// `row_indices[i]`), its absolute file offset in bytes and the
    /// invariant: [`Error::PtrFirst`](crate::Error::PtrFirst),
    /// [`Error::PtrLast`](crate::Error::PtrLast) (1);
    /// [`Error::PtrDecreasing`](crate::Error::PtrDecreasing),
    /// [`Error::PtrTooLarge`](crate::Error::PtrTooLarge) (a pointer above
    /// `nnz` before the last) (2);
    /// [`Error::NotIncreasing`](crate::Error::NotIncreasing) (also naming
    /// the column) (3); [`Error::IndexOutOfBounds`](crate::Error::IndexOutOfBounds) (4).
    pub fn validate(&self) -> Result<()> {
        self.inner.validate()
    }

    /// [`validate`](Self::validate) split over `threads` threads
    /// (clamped to 1..=64; the calling thread and the library's pool, see
    /// [`Options::threads`](crate::Options::threads)): the index array is cut
    /// into `threads` ranges of equal length — a cut may fall inside a
    /// column, so one huge column is shared too — and each thread checks
    /// its range and the pointers of the columns starting in it. Same
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

    /// This structure, verified: [`validate`](Self::validate), then later
    /// lookups skip the per-column checks.
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

    /// Storage invariants (1) and (2) alone (`layouts/csc.md` §
    /// Storage Invariants): `col_ptr[0] = 0`, `col_ptr[ncols] = nnz`, and
    /// `col_ptr` non-decreasing. Reads the `ncols + 1` pointers and no index:
    /// what a lookup on an unvalidated structure does not check outside
    /// the slice it reads, at O(`ncols`).
    ///
    /// # Errors
    /// The first broken pointer, as [`validate`](Self::validate) names it.
    pub fn validate_pointers(&self) -> Result<()> {
        self.inner.check_pointer_array()
    }

    /// Positions (element indices, not bytes) of column `j`'s elements in
    /// `row_indices` / `values`: `col_ptr[j]..col_ptr[j + 1]`
    /// (`layouts/csc.md` § Column Iteration).
    ///
    /// # Errors
    /// [`Error::IndexArgument`](crate::Error::IndexArgument) if `j >= ncols`;
    /// on an unvalidated structure, the error of a damaged column.
    pub fn column_range(&self, j: u64) -> Result<std::ops::Range<usize>> {
        self.inner.slice_range(j)
    }

    /// Position (element index) of element (`row`, `col`) in `row_indices` /
    /// `values`, found by binary search in the column (`layouts/csc.md` §
    /// Element Lookup); `None` when it is an implicit zero.
    ///
    /// # Errors
    /// [`Error::IndexArgument`](crate::Error::IndexArgument) for a row or
    /// column out of range; on an unvalidated structure, the error of a
    /// damaged column `col` (its pointers, its rows). A decreasing pointer
    /// elsewhere, which can make two columns overlap, is seen only by
    /// [`validate`](Self::validate).
    pub fn position(&self, row: u64, col: u64) -> Result<Option<usize>> {
        self.inner.find(row, col)
    }
}

/// A CSC matrix with values of type `T`, borrowed from the file
/// (`layouts/csc.md`, layout tag `0x08`, rank 2).
///
/// Shapes: `nrows = shape[0]`, `ncols = shape[1]`; `values` (buffer 0,
/// the tensor's element type) and `row_indices` (buffer 1, `u64`) have
/// `nnz` entries, `col_ptr` (buffer 2, `u64`) has `ncols + 1`. Lengths,
/// positions and `col_ptr` entries count elements, not bytes. Lookups
/// return `Ok(None)` for the implicit zero of an unstored element. Errors
/// about the file name the field, its byte offset and the spec section
/// ([`Error::field`](crate::Error::field),
/// [`offset`](crate::Error::offset), [`rule`](crate::Error::rule)).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
/// use hurray_reader::{HurrayFile, Options};
/// let file = HurrayFile::parse(&bytes, Options::default())?;
/// let a = file.tensor("A")?.csc::<f32>()?;      // strict: invariants checked
/// assert_eq!((a.nrows(), a.ncols(), a.nnz()), (4, 5, 5));
/// assert_eq!(a.get(2, 1)?, Some(&4.0));          // stored
/// assert_eq!(a.get(3, 1)?, None);                // implicit zero
/// let col3: Vec<(u64, f32)> = a.column(3)?.map(|(r, v)| (r, *v)).collect();
/// assert_eq!(col3, [(0, 2.0)]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct CscView<'data, T> {
    pub(crate) structure: CscStructure<'data>,
    pub(crate) values: &'data [T],
}

/// Shape, `nnz`, the first few entries of each array: never the arrays.
impl<T: std::fmt::Debug> std::fmt::Debug for CscView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.structure;
        s.inner.debug(
            f,
            "CscView",
            (s.nrows(), s.ncols()),
            ("col_ptr", "row_indices"),
            Some(self.values),
        )
    }
}

impl<'data, T: Element> CscView<'data, T> {
    /// Number of rows, `shape[0]`.
    pub fn nrows(&self) -> u64 {
        self.structure.nrows()
    }

    /// Number of columns, `shape[1]`.
    pub fn ncols(&self) -> u64 {
        self.structure.ncols()
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.structure.nnz()
    }

    /// Stored values in column order, `nnz` entries (buffer 0; of a
    /// [`column_block`](Self::column_block), its columns' part).
    pub fn values(&self) -> &'data [T] {
        self.values.get(self.structure.inner.positions()).unwrap_or_default()
    }

    /// Row index of each value, `nnz` entries (buffer 1; of a block, its
    /// columns' part).
    pub fn row_indices(&self) -> &'data [u64] {
        self.structure.row_indices()
    }

    /// Column pointers, `ncols + 1` entries (buffer 2): column `j` holds
    /// positions `col_ptr[j]..col_ptr[j + 1]` of `row_indices` and `values`.
    /// Of a [`column_block`](Self::column_block) `j0..j1`, the file's
    /// `col_ptr[j0..=j1]`: positions in the file's arrays, starting at
    /// `col_ptr[j0]` (see [`CscStructure::col_ptr`]).
    #[doc(alias = "indptr")]
    pub fn col_ptr(&self) -> &'data [u64] {
        self.structure.col_ptr()
    }

    /// The sub-matrix of the columns `cols` (`A[:, j0..j1]`): a view of
    /// shape `nrows × (j1 - j0)` over the same bytes, no copy. Its column
    /// `j` is the file's column `j0 + j`; [`values`](Self::values) and
    /// [`row_indices`](Self::row_indices) are the block's contiguous part
    /// of the file's (positions `col_ptr[j0]..col_ptr[j1]`), and every
    /// method works on it (`get`, `column`, `columns`, `iter`, `mul_vec`,
    /// `transpose`, `to_csr`, and `column_block` again). An empty range is
    /// an empty view. The block of a validated view is validated; of an
    /// unvalidated one, [`validate`](Self::validate) scans the block's
    /// columns alone, and errors name the file's columns and positions.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// let a = file.tensor("A")?.csc::<f32>()?; // 4 × 5
    /// let b = a.column_block(2..4)?;            // columns 2 and 3
    /// assert_eq!((b.nrows(), b.ncols(), b.nnz()), (4, 2, 2));
    /// assert_eq!(b.get(0, 1)?, Some(&2.0));    // the file's A[0, 3]
    /// assert_eq!((b.values(), b.row_indices(), b.col_ptr()), (&[3.0, 2.0][..], &[1, 0][..], &[2, 3, 4][..]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::BlockArgument`](crate::Error::BlockArgument) for a
    /// reversed range or one past `ncols` (never a panic). On an
    /// unvalidated view, the error of a damaged pointer where the block
    /// starts or ends, or at the ends of the file's `col_ptr` (O(1) checks).
    pub fn column_block(&self, cols: std::ops::Range<usize>) -> Result<Self> {
        let cols = to_u64(cols.start)..to_u64(cols.end);
        Ok(CscView {
            structure: self.structure.column_block(cols)?,
            values: self.values,
        })
    }

    /// The structure without values.
    pub fn structure(&self) -> CscStructure<'data> {
        self.structure
    }

    /// True once the storage invariants have been verified.
    pub fn is_validated(&self) -> bool {
        self.structure.is_validated()
    }

    /// Verifies the storage invariants; see [`CscStructure::validate`].
    /// Takes `&self`, so the view is not marked: [`is_validated`](Self::is_validated)
    /// stays false and lookups keep their per-column checks. To keep the
    /// verdict, use [`validated`](Self::validated), which returns the
    /// verified view.
    ///
    /// # Errors
    /// As [`CscStructure::validate`].
    pub fn validate(&self) -> Result<()> {
        self.structure.validate()
    }

    /// This view, verified; see [`CscStructure::validated`].
    ///
    /// # Errors
    /// As [`CscStructure::validate`].
    pub fn validated(self) -> Result<Self> {
        self.validated_threads(1)
    }

    /// [`validated`](Self::validated) on up to `threads` threads.
    pub(crate) fn validated_threads(self, threads: usize) -> Result<Self> {
        Ok(CscView {
            structure: self.structure.validated_threads(threads)?,
            values: self.values,
        })
    }

    /// The value at (`row`, `col`), by binary search in column `col`
    /// (`layouts/csc.md` § Element Lookup); `Ok(None)` is the implicit zero.
    ///
    /// # Errors
    /// [`Error::IndexArgument`](crate::Error::IndexArgument) out of range;
    /// on an unvalidated view, the error of a damaged column.
    pub fn get(&self, row: u64, col: u64) -> Result<Option<&'data T>> {
        Ok(self.structure.position(row, col)?.and_then(|p| self.values.get(p)))
    }

    /// Column `j`'s stored elements as `(row, &value)`, rows ascending
    /// (`layouts/csc.md` § Column Iteration).
    ///
    /// # Errors
    /// As [`CscStructure::column_range`].
    pub fn column(&self, j: u64) -> Result<Column<'data, T>> {
        // Positions in the file's arrays (a block's are too).
        let range = self.structure.column_range(j)?;
        Ok(Column {
            rows: self.structure.inner.idx.get(range.clone()).unwrap_or_default().iter(),
            values: self.values.get(range).unwrap_or_default().iter(),
        })
    }

    /// Every column in order as `(j, rows, values)`: `rows` is
    /// `row_indices[col_ptr[j]..col_ptr[j + 1]]` (ascending) and `values`
    /// the same range of [`values`](Self::values), both borrowed from the
    /// file (`layouts/csc.md` § Column Iteration). `ncols` items, empty
    /// columns included. Unlike [`column`](Self::column) there is no
    /// `Result` and no check per column: on an unvalidated view the
    /// invariants are verified first, on every call (take
    /// [`validated`](Self::validated) once to skip it).
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// let a = file.tensor("A")?.csc::<f32>()?; // 4 × 5, 5 stored
    /// let sums: Vec<f32> = a.columns()?.map(|(_, _, values)| values.iter().sum()).collect();
    /// assert_eq!(sums, [1.0, 4.0, 3.0, 2.0, 5.0]);
    /// let (j, rows, values) = a.columns()?.nth(4).ok_or("no column 4")?;
    /// assert_eq!((j, rows, values), (4, &[2][..], &[5.0][..]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// On an unvalidated view, as [`validate`](Self::validate).
    pub fn columns(&self) -> Result<Slices<'data, T>> {
        let view = self.validated()?;
        Ok(Slices::new(&view.structure.inner, view.values))
    }

    /// Every stored element as `(row, col, &value)`, column by column. On an
    /// unvalidated view the invariants are verified first (one scan).
    ///
    /// # Errors
    /// On an unvalidated view, as [`validate`](Self::validate).
    pub fn iter(&self) -> Result<Entries<'data, T>> {
        Ok(Entries {
            columns: self.columns()?,
            col: 0,
            rows: [].iter(),
            values: [].iter(),
        })
    }
}

impl<T: Float> CscView<'_, T> {
    /// The product `y = A·x`: `x` has `ncols` entries, `y` has `nrows`,
    /// and `y` is overwritten (not accumulated into). The result is what
    /// scipy's `A @ x` computes, bit for bit (products and sums in `T`,
    /// in storage order), but for which NaN an entry that is NaN holds:
    /// where two NaNs meet in an addition, IEEE 754 leaves the sign and
    /// payload of the result to the implementation, and compilers, ours
    /// and scipy's, order an addition's operands as they like. Aᵀ·x is
    /// [`transpose()`](Self::transpose)`.mul_vec(x, y)`.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// let a = file.tensor("A")?.csc::<f32>()?; // 4 × 5
    /// let mut y = [0f32; 4];
    /// a.mul_vec(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut y)?;
    /// assert_eq!(y, [9.0, 9.0, 33.0, 0.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) when `x` or
    /// `y` has the wrong length (nothing is written); on an unvalidated
    /// view, as [`validate`](Self::validate).
    ///
    /// # Cost
    /// One pass over `col_ptr`, `row_indices` and `values`. On an
    /// unvalidated view the invariants are checked first, on every call
    /// (take [`validated`](Self::validated) once to skip that). A `y` above
    /// 16 MiB may be scattered through bins (*propagation blocking*),
    /// whose scratch takes at most 56 MiB (with AVX-512 and `y` of 64 to
    /// 128 MiB, 128 MiB), whatever `nnz`; the result is the same bit for
    /// bit. That scratch is kept for the next product (up to 256 MiB of
    /// each kind: the AVX-512 scatter's, the portable one's for `f32`, for
    /// `f64`), so that the next call does not fault its pages in afresh;
    /// [`release_scratch`](crate::release_scratch) frees it. Besides
    /// 8 bytes per bin and part (the portable scatter's heads), nothing
    /// else is allocated. How the scatter is planned, and when it allocates:
    /// `docs/design.md` § The sparse products.
    pub fn mul_vec(&self, x: &[T], y: &mut [T]) -> Result<()> {
        let inner = &self.structure.inner;
        inner.check_lengths((x.len(), "ncols", self.ncols()), (y.len(), "nrows", self.nrows()))?;
        let view = self.validated()?;
        view.structure.inner.scatter(view.values, x, y);
        Ok(())
    }

    /// [`mul_vec`](Self::mul_vec) on `threads` threads
    /// (0 counts as 1, and no more than 64 or the cores that
    /// [`std::thread::available_parallelism`] reports): the calling thread
    /// and the threads of the library's pool, started on first use and
    /// kept for the process (see [`Options::threads`](crate::Options::threads)). Below
    /// 2^16 stored elements, `mul_vec` on the calling thread. Otherwise the
    /// work is cut one of two ways, by the size of `y` (`nrows ×
    /// size_of::<T>()`):
    ///
    /// - **Up to 16 MiB: by columns.** The columns are cut into `threads`
    ///   ranges of consecutive columns, range `t` starting at the first
    ///   column whose `col_ptr` entry is at least `t/threads` of `nnz`.
    ///   The calling thread scatters the first range into `y`, each other
    ///   thread its range into a zeroed vector of `nrows` entries of its
    ///   own (allocated per call, freed before returning), and the parts
    ///   are added into `y` in range order: `y[i] = (y_0[i] + y_1[i]) +
    ///   ..`. Each thread reads only its share of the matrix. **Rounding:**
    ///   each part is summed as `mul_vec` sums it, but a row with elements
    ///   in more than one range gets its sum in that grouping, which may
    ///   differ from `mul_vec`'s in the last bits (with `f32`, `1 + 1e8 -
    ///   1e8` in three columns cut after the first is 1, where `mul_vec`
    ///   gives 0); a row whose elements all fall in one range gets
    ///   `mul_vec`'s bits. The same `threads` on the same machine gives
    ///   the same bits on every call.
    /// - **Above 16 MiB: by rows**, where the partial vectors would cost
    ///   more than the split saves. The rows are cut into `threads`
    ///   consecutive ranges of equal length and `y` split with them; each
    ///   thread reads all of `col_ptr`, `row_indices` and `values` and adds
    ///   the elements of its rows, planned as `mul_vec` plans a `y` of that
    ///   length (a thread whose range is blocked takes bins of its own:
    ///   as for `mul_vec`, kept for the next product). Every `y[row]`
    ///   receives the same products in the same order as from `mul_vec`:
    ///   the same bits, whatever `threads`.
    ///
    /// The calling thread takes a range too, and any range whose thread
    /// the OS refuses to start. Measured on two threads against `mul_vec`:
    /// `docs/performance.md`. On an unvalidated view the invariants are
    /// verified first, on every call.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let bytes = hurray_reader::AlignedBytes::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry"))?;
    /// # let file = hurray_reader::HurrayFile::parse(&bytes, hurray_reader::Options::default())?;
    /// let a = file.tensor("A")?.csc::<f32>()?; // 4 × 5
    /// let mut y = [0f32; 4];
    /// a.mul_vec_parallel(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut y, 2)?;
    /// assert_eq!(y, [9.0, 9.0, 33.0, 0.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`mul_vec`](Self::mul_vec).
    pub fn mul_vec_parallel(&self, x: &[T], y: &mut [T], threads: usize) -> Result<()> {
        let inner = &self.structure.inner;
        inner.check_lengths((x.len(), "ncols", self.ncols()), (y.len(), "nrows", self.nrows()))?;
        let view = self.validated()?;
        view.structure.inner.scatter_parallel(view.values, x, y, threads);
        Ok(())
    }
}

/// The stored elements of one column, `(row, &value)`.
#[derive(Clone)]
pub struct Column<'data, T> {
    rows: std::slice::Iter<'data, u64>,
    values: std::slice::Iter<'data, T>,
}

/// The first few rows and values left, and how many.
impl<T: std::fmt::Debug> std::fmt::Debug for Column<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Column")
            .field("rows", &crate::debug::few(self.rows.as_slice()))
            .field("values", &crate::debug::few(self.values.as_slice()))
            .finish()
    }
}

impl<'data, T> Iterator for Column<'data, T> {
    type Item = (u64, &'data T);

    fn next(&mut self) -> Option<Self::Item> {
        Some((*self.rows.next()?, self.values.next()?))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.rows.size_hint()
    }
}

impl<T> ExactSizeIterator for Column<'_, T> {}

/// Every stored element of a validated CSC view, `(row, col, &value)`,
/// column by column ([`CscView::columns`], flattened).
#[derive(Clone)]
pub struct Entries<'data, T> {
    columns: Slices<'data, T>,
    /// The column `rows` and `values` belong to.
    col: u64,
    rows: std::slice::Iter<'data, u64>,
    values: std::slice::Iter<'data, T>,
}

/// The current column, the first few of its rows and values left, and
/// the columns after it.
impl<T: std::fmt::Debug> std::fmt::Debug for Entries<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entries")
            .field("col", &self.col)
            .field("rows", &crate::debug::few(self.rows.as_slice()))
            .field("values", &crate::debug::few(self.values.as_slice()))
            .field("columns", &self.columns)
            .finish()
    }
}

impl<'data, T> Iterator for Entries<'data, T> {
    type Item = (u64, u64, &'data T);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let (Some(&row), Some(value)) = (self.rows.next(), self.values.next()) {
                return Some((row, self.col, value));
            }
            let (col, rows, values) = self.columns.next()?;
            (self.col, self.rows, self.values) = (col, rows.iter(), values.iter());
        }
    }
}

impl<'data> Tensor<'data> {
    /// The CSC structure (`col_ptr`, `row_indices`) without values, for
    /// any element type; not validated.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch) unless the
    /// layout is CSC; [`Error::NotViewable`](crate::Error::NotViewable);
    /// [`Error::Misaligned`](crate::Error::Misaligned).
    pub fn csc_structure(&self) -> Result<CscStructure<'data>> {
        Ok(CscStructure {
            inner: self.compressed(Layout::Csc, CSC)?,
        })
    }

    /// The CSC view with values `T`. In strict mode (the default) the
    /// storage invariants are verified first, in one pass on up to
    /// [`Options::threads`](crate::Options::threads) threads; in permissive
    /// mode they are not (lookups still never panic nor answer wrongly:
    /// damaged columns give errors).
    ///
    /// `T` is the Rust type of the tensor's element type (`f32` for
    /// `float32`, [`half::f16`] for `float16`, [`Complex<f64>`](crate::Complex)
    /// for `complex128`; see [`Element`]). Packed types (`bool`, `int4`,
    /// `float4_e2m1`, ...) have no typed view: read the structure with
    /// [`csc_structure`](Self::csc_structure) and the values with
    /// `self.buffer(0)?.packed()` ([`Buffer::packed`](crate::Buffer::packed)).
    /// A quantized tensor's view holds the stored codes, not the values:
    /// [`Descriptor::quantization`](crate::Descriptor::quantization) gives
    /// the scheme and its parameters.
    ///
    /// # Errors
    /// [`Error::LayoutMismatch`](crate::Error::LayoutMismatch),
    /// [`Error::TypeMismatch`](crate::Error::TypeMismatch) (`T` is not the
    /// element type, or it is packed),
    /// [`Error::NotViewable`](crate::Error::NotViewable) (an element type
    /// unknown to this reader, permissive mode),
    /// [`Error::Misaligned`](crate::Error::Misaligned), and in strict mode
    /// any invariant error of [`CscStructure::validate`]. The descriptor's
    /// rules (rank 2, three buffers of their exact sizes, `byte_offset` 0,
    /// zero reserved bytes, statistics `nnz`) were checked when the tensor
    /// was resolved ([`HurrayFile::tensor`](crate::HurrayFile::tensor)).
    pub fn csc<T: Element>(&self) -> Result<CscView<'data, T>> {
        let view = self.csc_unscanned()?;
        if self.options().is_strict() {
            view.validated_threads(self.options().threads())
        } else {
            Ok(view)
        }
    }

    /// The CSC view without the O(nnz) invariant scan, in any mode; every
    /// size and offset is still checked. Validate it later with
    /// [`CscView::validate`].
    ///
    /// # Errors
    /// As [`csc`](Self::csc), without the invariant errors.
    pub fn csc_unscanned<T: Element>(&self) -> Result<CscView<'data, T>> {
        let structure = self.csc_structure()?;
        let values = self.buffer(0)?.as_slice::<T>()?;
        Ok(CscView { structure, values })
    }
}

impl<'data, T> CscView<'data, T> {
    /// Assembles a view; used by [`CsrView::transpose`].
    pub(crate) fn from_parts(structure: CscStructure<'data>, values: &'data [T]) -> Self {
        CscView { structure, values }
    }
}

/// `layouts/csc.md`'s descriptor rules.
pub(crate) const SPEC: LayoutSpec = LayoutSpec {
    rank: RankRule {
        allows: |rank| rank == 2,
        expected: "2",
        rule: rule::CSC_DESCRIPTION,
    },
    buffers: BufferCount {
        count: |_| Some(3),
        expected: "3 (values, row_indices, col_ptr)",
        rule: rule::CSC_BUFFERS,
    },
    no_shard: None,
    statistics: Some(rule::CSC_STATS),
    plans,
};

/// CSC (`layouts/csc.md`): `values` (nnz), `row_indices` (nnz u64),
/// `col_ptr` (ncols + 1 u64); reserved bytes zero.
fn plans(d: &Descriptor<'_>, _: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
    let LayoutFields::Csc(f) = d.layout_fields() else {
        return Ok(Vec::new());
    };
    compressed_plans(
        d,
        f,
        Orientation {
            index_role: BufferRole::RowIndices,
            ptr_role: BufferRole::ColPtr,
            ptr_axis: 1,
            fields_rule: rule::CSC_FIELDS,
            size_rule: rule::CSC_SIZE,
        },
    )
}
