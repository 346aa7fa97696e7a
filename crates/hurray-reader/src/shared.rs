//! An owned, reference-counted, parsed file: for programs that cannot hold
//! a borrow (a struct that keeps the file and hands out views, another
//! thread, a Python object).

use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::Arc;

use crate::aligned::AlignedBytes;
use crate::element_type::Element;
use crate::error::Result;
use crate::file::{HurrayFile, Options};
use crate::layout::csc::CscView;
use crate::layout::csr::CsrView;
#[cfg(feature = "mmap")]
use crate::mmap::MappedFile;
use crate::tensor::Tensor;

/// Where a [`SharedFile`]'s bytes live.
enum Storage {
    #[cfg(feature = "mmap")]
    Mapped(MappedFile),
    Memory(AlignedBytes),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            #[cfg(feature = "mmap")]
            Storage::Mapped(m) => m.bytes(),
            Storage::Memory(b) => b,
        }
    }
}

type Parsed<'data> = HurrayFile<'data>;

self_cell::self_cell!(
    /// The bytes and the container parsed from them, in one allocation
    /// (`self_cell` keeps the borrow sound: the bytes are never moved or
    /// dropped while the parsed file borrows them).
    struct Cell {
        owner: Storage,
        #[covariant]
        dependent: Parsed,
    }
);

/// A parsed Hurray file that owns its bytes (a mapping or an in-memory
/// copy) behind an [`Arc`]: clone it freely, keep it in a struct, send it
/// to another thread (`SharedFile` is `Send + Sync`).
///
/// [`file`](Self::file) gives the [`HurrayFile`], parsed once when the
/// `SharedFile` was made; tensors and views borrow the `SharedFile` they
/// came from. The bytes are unmapped (or freed) when the last clone is
/// dropped. [`open`](Self::open) maps the file and carries the mapping
/// hazard of [`MappedFile`]; [`read`](Self::read) reads it into memory.
///
/// ```
/// use hurray_reader::{Options, SharedFile};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
/// let shared = SharedFile::open(path, Options::default())?;
/// let worker = {
///     let shared = shared.clone();
///     std::thread::spawn(move || -> hurray_reader::Result<f32> {
///         let a = shared.file().tensor("A")?.csc::<f32>()?;
///         Ok(a.values().iter().sum())
///     })
/// };
/// assert_eq!(worker.join().unwrap()?, 15.0);
/// assert_eq!(shared.file().len(), 1);
/// # Ok::<(), hurray_reader::Error>(())
/// ```
#[derive(Clone)]
pub struct SharedFile {
    cell: Arc<Cell>,
}

impl SharedFile {
    /// Maps the file at `path` read-only and parses its container, as
    /// [`MappedFile::open`] followed by [`MappedFile::file`].
    ///
    /// # Errors
    /// As [`MappedFile::open`] and [`HurrayFile::parse`].
    #[cfg(feature = "mmap")]
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Self> {
        Self::new(Storage::Mapped(MappedFile::open(path, options)?), options)
    }

    /// Reads the file at `path` into memory ([`AlignedBytes::read`]) and
    /// parses its container: no mapping hazard, at the cost of reading every
    /// byte. A file that does not start with the file magic is rejected
    /// after its first 104 bytes, with the error [`open`](Self::open) gives.
    ///
    /// # Errors
    /// As [`AlignedBytes::read`] and [`HurrayFile::parse`].
    pub fn read(path: impl AsRef<Path>, options: Options) -> Result<Self> {
        Self::from_bytes(AlignedBytes::read(path)?, options)
    }

    /// Parses bytes already in memory.
    ///
    /// # Errors
    /// As [`HurrayFile::parse`].
    pub fn from_bytes(bytes: AlignedBytes, options: Options) -> Result<Self> {
        Self::new(Storage::Memory(bytes), options)
    }

    fn new(storage: Storage, options: Options) -> Result<Self> {
        let cell = Cell::try_new(storage, |s| HurrayFile::parse(s.bytes(), options))?;
        Ok(SharedFile { cell: Arc::new(cell) })
    }

    /// The parsed container; tensors and views from it borrow `self`.
    pub fn file(&self) -> &HurrayFile<'_> {
        self.cell.borrow_dependent()
    }

    /// The whole file's bytes.
    pub fn bytes(&self) -> &[u8] {
        self.cell.borrow_owner().bytes()
    }

    /// True when the bytes are a mapping of the file, false when they were
    /// read into memory.
    pub fn is_mapped(&self) -> bool {
        match self.cell.borrow_owner() {
            #[cfg(feature = "mmap")]
            Storage::Mapped(_) => true,
            Storage::Memory(_) => false,
        }
    }
}

impl SharedFile {
    /// The tensor called `name`, resolved once ([`HurrayFile::tensor`]) and
    /// kept with a clone of this file: a handle that owns what it reads.
    ///
    /// # Errors
    /// As [`HurrayFile::tensor`].
    pub fn tensor(&self, name: &str) -> Result<SharedTensor> {
        let cell = TensorCell::try_new(self.clone(), |file| file.file().tensor(name))?;
        Ok(SharedTensor { cell: Arc::new(cell) })
    }
}

type Resolved<'data> = Tensor<'data>;

self_cell::self_cell!(
    /// A file and one of its tensors, resolved.
    struct TensorCell {
        owner: SharedFile,
        #[covariant]
        dependent: Resolved,
    }
);

/// A tensor that owns a share of its file ([`SharedFile::tensor`]): clone
/// it, keep it in a struct, send it to another thread. [`get`](Self::get)
/// gives the [`Tensor`]; [`csc`](Self::csc) and [`csr`](Self::csr) give
/// owned view handles, scanned once.
///
/// ```
/// use hurray_reader::{Options, SharedCsc, SharedFile};
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
/// struct Model {
///     a: SharedCsc<f32>, // no borrow: the struct owns its matrix
/// }
/// let model = Model { a: SharedFile::open(path, Options::default())?.tensor("A")?.csc()? };
/// let a = model.a.view()?;
/// let mut y = vec![0.0; 4];
/// a.mul_vec(&[1.0; 5], &mut y)?;
/// assert_eq!(y, [3.0, 3.0, 9.0, 0.0]);
/// # Ok::<(), hurray_reader::Error>(())
/// ```
#[derive(Clone)]
pub struct SharedTensor {
    cell: Arc<TensorCell>,
}

impl SharedTensor {
    /// The resolved tensor, borrowing this handle.
    pub fn get(&self) -> &Tensor<'_> {
        self.cell.borrow_dependent()
    }

    /// The file it belongs to.
    pub fn file(&self) -> &SharedFile {
        self.cell.borrow_owner()
    }

    /// An owned CSC view handle: the storage invariants are checked once,
    /// here, as [`Tensor::csc`] checks them (strict mode; permissive mode
    /// skips the scan as it does).
    ///
    /// # Errors
    /// As [`Tensor::csc`].
    pub fn csc<T: Element>(&self) -> Result<SharedCsc<T>> {
        let validated = self.get().csc::<T>()?.is_validated();
        Ok(SharedCsc {
            tensor: self.clone(),
            validated,
            block: None,
            values: PhantomData,
        })
    }

    /// An owned CSR view handle; see [`csc`](Self::csc).
    ///
    /// # Errors
    /// As [`Tensor::csr`].
    pub fn csr<T: Element>(&self) -> Result<SharedCsr<T>> {
        let validated = self.get().csr::<T>()?.is_validated();
        Ok(SharedCsr {
            tensor: self.clone(),
            validated,
            block: None,
            values: PhantomData,
        })
    }

    /// An owned CSC view handle with no scan, in either mode: its views
    /// are unvalidated, as [`Tensor::csc_unscanned`]'s are. For work on a
    /// block without a scan of the whole matrix:
    /// [`SharedCsc::column_block`] (or [`CscView::column_block`]), then
    /// `validated()` scans the block alone.
    ///
    /// # Errors
    /// As [`Tensor::csc_unscanned`].
    pub fn csc_unscanned<T: Element>(&self) -> Result<SharedCsc<T>> {
        self.get().csc_unscanned::<T>()?;
        Ok(SharedCsc {
            tensor: self.clone(),
            validated: false,
            block: None,
            values: PhantomData,
        })
    }

    /// An owned CSR view handle with no scan; see
    /// [`csc_unscanned`](Self::csc_unscanned) ([`SharedCsr::row_block`] or
    /// [`CsrView::row_block`] for a block).
    ///
    /// # Errors
    /// As [`Tensor::csr_unscanned`].
    pub fn csr_unscanned<T: Element>(&self) -> Result<SharedCsr<T>> {
        self.get().csr_unscanned::<T>()?;
        Ok(SharedCsr {
            tensor: self.clone(),
            validated: false,
            block: None,
            values: PhantomData,
        })
    }
}

/// An owned handle of a CSC view ([`SharedTensor::csc`]): `Send + Sync`,
/// cheap to clone; [`view`](Self::view) gives the [`CscView`], borrowing
/// the handle, with no second scan.
pub struct SharedCsc<T> {
    tensor: SharedTensor,
    validated: bool,
    /// The columns `start..end` of the tensor it views
    /// ([`column_block`](Self::column_block)); `None`: all of them.
    block: Option<(usize, usize)>,
    values: PhantomData<fn() -> T>,
}

impl<T: Element> SharedCsc<T> {
    /// The view (validated when the handle's scan ran): no parse, no scan.
    ///
    /// # Errors
    /// None for a handle [`SharedTensor::csc`] made (the checks it repeats,
    /// layout, element type and alignment, passed then); the `Result` is
    /// that of [`Tensor::csc_unscanned`].
    pub fn view(&self) -> Result<CscView<'_, T>> {
        let mut view = self.tensor.get().csc_unscanned::<T>()?;
        if let Some((start, end)) = self.block {
            view = view.column_block(start..end)?;
        }
        view.structure.inner.scanned = self.validated;
        Ok(view)
    }

    /// The handle of the columns `cols` of this handle's view (`A[:,
    /// j0..j1]`, as [`CscView::column_block`] cuts it): validated if this
    /// one is, else [`validated`](Self::validated) scans the block alone
    /// and its views then skip the scan. What a program keeps to multiply
    /// one block of a matrix it never scans whole, again and again.
    ///
    /// # Errors
    /// As [`CscView::column_block`].
    pub fn column_block(&self, cols: std::ops::Range<usize>) -> Result<Self> {
        self.view()?.column_block(cols.clone())?;
        let first = self.block.map_or(0, |(start, _)| start);
        Ok(SharedCsc {
            tensor: self.tensor.clone(),
            validated: self.validated,
            block: Some((first.saturating_add(cols.start), first.saturating_add(cols.end))),
            values: PhantomData,
        })
    }

    /// This handle, validated: the storage invariants are scanned now
    /// (as [`CscView::validate`], on up to
    /// [`Options::threads`](crate::Options::threads) threads) unless they
    /// were when the handle was made (strict mode); the views it then gives
    /// skip the scan, in any mode. For permissive-mode programs that want
    /// [`CscView::mul_vec`] without a scan a call.
    ///
    /// # Errors
    /// As [`CscView::validate`].
    pub fn validated(self) -> Result<Self> {
        let threads = self.tensor.get().options().threads();
        let validated = self.view()?.validated_threads(threads)?.is_validated();
        Ok(SharedCsc { validated, ..self })
    }

    /// The tensor handle it came from.
    pub fn tensor(&self) -> &SharedTensor {
        &self.tensor
    }
}

/// An owned handle of a CSR view ([`SharedTensor::csr`]); see [`SharedCsc`].
pub struct SharedCsr<T> {
    tensor: SharedTensor,
    validated: bool,
    /// The rows `start..end` of the tensor it views
    /// ([`row_block`](Self::row_block)); `None`: all of them.
    block: Option<(usize, usize)>,
    values: PhantomData<fn() -> T>,
}

impl<T: Element> SharedCsr<T> {
    /// The view; see [`SharedCsc::view`].
    ///
    /// # Errors
    /// As [`SharedCsc::view`].
    pub fn view(&self) -> Result<CsrView<'_, T>> {
        let mut view = self.tensor.get().csr_unscanned::<T>()?;
        if let Some((start, end)) = self.block {
            view = view.row_block(start..end)?;
        }
        view.structure.inner.scanned = self.validated;
        Ok(view)
    }

    /// The handle of the rows `rows` of this handle's view; see
    /// [`SharedCsc::column_block`].
    ///
    /// # Errors
    /// As [`CsrView::row_block`].
    pub fn row_block(&self, rows: std::ops::Range<usize>) -> Result<Self> {
        self.view()?.row_block(rows.clone())?;
        let first = self.block.map_or(0, |(start, _)| start);
        Ok(SharedCsr {
            tensor: self.tensor.clone(),
            validated: self.validated,
            block: Some((first.saturating_add(rows.start), first.saturating_add(rows.end))),
            values: PhantomData,
        })
    }

    /// This handle, validated; see [`SharedCsc::validated`].
    ///
    /// # Errors
    /// As [`CsrView::validate`].
    pub fn validated(self) -> Result<Self> {
        let threads = self.tensor.get().options().threads();
        let validated = self.view()?.validated_threads(threads)?.is_validated();
        Ok(SharedCsr { validated, ..self })
    }

    /// The tensor handle it came from.
    pub fn tensor(&self) -> &SharedTensor {
        &self.tensor
    }
}

impl<T> Clone for SharedCsc<T> {
    fn clone(&self) -> Self {
        SharedCsc {
            tensor: self.tensor.clone(),
            validated: self.validated,
            block: self.block,
            values: PhantomData,
        }
    }
}

impl<T> Clone for SharedCsr<T> {
    fn clone(&self) -> Self {
        SharedCsr {
            tensor: self.tensor.clone(),
            validated: self.validated,
            block: self.block,
            values: PhantomData,
        }
    }
}

impl fmt::Debug for SharedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.get();
        f.debug_struct("SharedTensor")
            .field("name", &t.name())
            .field("layout", &t.layout().as_str())
            .field("element_type", &t.element_type().map(|e| e.as_str()))
            .field("nnz", &t.nnz())
            .finish()
    }
}

impl<T> fmt::Debug for SharedCsc<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedCsc")
            .field("tensor", &self.tensor)
            .field("validated", &self.validated)
            .field("block", &self.block)
            .finish()
    }
}

impl<T> fmt::Debug for SharedCsr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedCsr")
            .field("tensor", &self.tensor)
            .field("validated", &self.validated)
            .field("block", &self.block)
            .finish()
    }
}

impl fmt::Debug for SharedFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.file();
        f.debug_struct("SharedFile")
            .field("bytes", &self.bytes().len())
            .field("mapped", &self.is_mapped())
            .field("tensors", &file.len())
            .field("kv_entries", &file.kv().len())
            .field("options", &file.options())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn shared_handles_are_send_and_sync() {
        assert_send_sync::<SharedFile>();
        assert_send_sync::<SharedTensor>();
        assert_send_sync::<SharedCsc<f32>>();
        assert_send_sync::<SharedCsr<f64>>();
    }

    #[test]
    fn owned_views_outlive_the_file_handle_and_skip_the_second_scan() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
        let a: SharedCsc<f32> = SharedFile::open(path, Options::default())
            .unwrap()
            .tensor("A")
            .unwrap()
            .csc()
            .unwrap();
        let worker = std::thread::spawn({
            let a = a.clone();
            move || a.view().unwrap().values().to_vec()
        });
        assert_eq!(worker.join().unwrap(), [1.0, 4.0, 3.0, 2.0, 5.0]);
        let view = a.view().unwrap();
        assert!(view.is_validated());
        assert_eq!(view.get(2, 1).unwrap(), Some(&4.0));
        let t = a.tensor().csr::<f32>().unwrap_err();
        assert!(matches!(t, crate::Error::LayoutMismatch { .. }), "{t:?}");
        assert_eq!(
            format!("{:?}", a.tensor()),
            r#"SharedTensor { name: "A", layout: "csc", element_type: Some("float32"), nnz: Some(5) }"#
        );
        // A permissive file's handle is not scanned, and says so.
        let p = SharedFile::read(path, Options::permissive())
            .unwrap()
            .tensor("A")
            .unwrap();
        assert!(!p.csc::<f32>().unwrap().view().unwrap().is_validated());
        // ... until `validated`, after which its views skip the scan.
        let checked = p.csc::<f32>().unwrap().validated().unwrap();
        assert!(checked.view().unwrap().is_validated());
        assert!(checked.clone().view().unwrap().is_validated());
        let mut y = [0f32; 4];
        checked
            .view()
            .unwrap()
            .mul_vec(&[1.0, 2.0, 3.0, 4.0, 5.0], &mut y)
            .unwrap();
        assert_eq!(y, [9.0, 9.0, 33.0, 0.0]);
        // A broken matrix fails there, naming the rule.
        let broken = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/invalid/csc_indices_unsorted.hry"
        );
        let file = SharedFile::read(broken, Options::permissive()).unwrap();
        let name = file.file().entries_in_file_order().next().unwrap().name().to_owned();
        let e = file
            .tensor(&name)
            .unwrap()
            .csc::<f32>()
            .unwrap()
            .validated()
            .unwrap_err();
        assert_eq!(e.rule(), Some("layouts/csc.md § Storage Invariants (3)"), "{e}");
        let e = SharedFile::read(path, Options::default())
            .unwrap()
            .tensor("B")
            .unwrap_err();
        assert_eq!(e.to_string(), "no tensor named 'B' in the index");
    }

    /// Tensor `t` of the fixture whose first column (`"csc"`) or row
    /// (`"csr"`) has its indices out of order, opened strictly.
    fn unsorted(layout: &str) -> SharedTensor {
        let path = format!(
            "{}/../../fixtures/invalid/{layout}_indices_unsorted.hry",
            env!("CARGO_MANIFEST_DIR")
        );
        SharedFile::read(path, Options::default()).unwrap().tensor("t").unwrap()
    }

    #[test]
    fn an_unscanned_handle_scans_a_block_alone() {
        // Column 0 of this 4 × 5 matrix has its rows out of order.
        let t = unsorted("csc");
        let rule = Some("layouts/csc.md § Storage Invariants (3)");
        assert_eq!(t.csc::<f32>().unwrap_err().rule(), rule);
        let a = t.csc_unscanned::<f32>().unwrap();
        assert!(!a.view().unwrap().is_validated());
        let rest = a.view().unwrap().column_block(1..5).unwrap().validated().unwrap();
        let mut y = [9f32; 4];
        rest.mul_vec(&[1.0, 1.0, 1.0, 1.0], &mut y).unwrap();
        assert_eq!(y, [2.0, 3.0, 5.0, 0.0]);
        let first = a.view().unwrap().column_block(0..1).unwrap();
        assert_eq!(first.validated().unwrap_err().rule(), rule);
        // The CSR twin: row 0 of this one is broken.
        let t = unsorted("csr");
        assert!(t.csr::<f32>().is_err());
        let a = t.csr_unscanned::<f32>().unwrap();
        assert!(a.view().unwrap().row_block(1..4).unwrap().validated().is_ok());
        assert!(a.view().unwrap().row_block(0..1).unwrap().validated().is_err());
        assert!(t.csc_unscanned::<f32>().is_err(), "a CSR tensor has no CSC handle");
    }

    #[test]
    fn a_block_handle_is_scanned_once() {
        let t = unsorted("csc");
        let a = t.csc_unscanned::<f32>().unwrap();
        // Columns 1..4 of columns 1..5: the file's 2..5 (ncols 3).
        let rest = a.column_block(1..5).unwrap().column_block(1..4).unwrap();
        assert!(!rest.view().unwrap().is_validated());
        let rest = rest.validated().unwrap();
        let view = rest.view().unwrap();
        assert!(view.is_validated());
        assert_eq!((view.ncols(), view.col_ptr()), (3, &[2, 3, 4, 5][..]));
        let mut y = [9f32; 4];
        view.mul_vec(&[1.0, 1.0, 1.0], &mut y).unwrap();
        assert_eq!(y, [2.0, 3.0, 5.0, 0.0]);
        assert!(
            format!("{rest:?}").ends_with("validated: true, block: Some((2, 5)) }"),
            "{rest:?}"
        );
        // A block of a validated block is validated; the broken column is not.
        assert!(rest.column_block(0..2).unwrap().view().unwrap().is_validated());
        let first = a.column_block(0..1).unwrap();
        assert_eq!(
            first.validated().unwrap_err().rule(),
            Some("layouts/csc.md § Storage Invariants (3)")
        );
        assert!(a.column_block(4..6).is_err(), "past ncols");
        // The CSR twin, row 0 broken.
        let t = unsorted("csr");
        let rows = t
            .csr_unscanned::<f32>()
            .unwrap()
            .row_block(1..4)
            .unwrap()
            .validated()
            .unwrap();
        assert_eq!(rows.view().unwrap().row_ptr(), [2, 3, 5, 5]);
        assert!(rows.view().unwrap().is_validated());
    }

    #[test]
    fn views_outlive_other_clones() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
        for shared in [
            SharedFile::open(path, Options::default()).unwrap(),
            SharedFile::read(path, Options::default()).unwrap(),
        ] {
            let keep = shared.clone();
            drop(shared);
            let a = keep.file().tensor("A").unwrap().csc::<f32>().unwrap();
            assert_eq!(a.values(), [1.0, 4.0, 3.0, 2.0, 5.0]);
            assert_eq!(a.row_indices(), [0, 2, 1, 0, 2]);
            assert_eq!(keep.bytes().len(), std::fs::metadata(path).unwrap().len() as usize);
        }
    }

    #[test]
    fn debug_is_a_summary() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/csc_worked_example.hry");
        let shared = SharedFile::read(path, Options::default()).unwrap();
        let shown = format!("{shared:?}");
        assert!(shown.starts_with("SharedFile { bytes: 16467, "), "{shown}");
        assert!(shown.contains("mapped: false, tensors: 1, kv_entries: 0"), "{shown}");
    }
}
