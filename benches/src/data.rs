//! Deterministic benchmark matrices, streamed into `.hry` files by
//! `hurray-writer` from generator callbacks (1 MiB chunks: memory use does
//! not grow with `nnz`), and cached by name in a folder.
//!
//! A matrix is a sequence of "outer" slices (columns of a CSC, rows of a
//! CSR, the first coordinate of a sorted COO) holding strictly increasing
//! "inner" indices. Slice `j` holds `count(j)` entries: the inner range
//! `[0, inner)` is cut into `count(j)` strata of equal width and one random
//! index is drawn in each, so indices are random, sorted and distinct
//! without any sorting. Values depend only on the position `p` and are
//! multiples of 1/1024 in [-1000/1024, 1000/1024] (exact in `f32` and `f64`).

use std::io;
use std::path::{Path, PathBuf};

use hurray_writer::{BufferData, ElementType, PathWriter, TensorDescriptor, WriterOptions};

use crate::mix;

/// Bump when the generated content changes: cached files carry it in their name.
pub const GENERATOR_VERSION: u32 = 1;

/// Name of the matrix tensor in every generated file.
pub const TENSOR: &str = "A";

/// How the non-zeros are spread over the outer slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Pattern {
    /// 0..=20 entries per slice (mean 10), square matrix.
    Random10,
    /// 0..=200 entries per slice (mean 100), square matrix: 100 M
    /// non-zeros are a 1 M × 1 M matrix.
    Random100,
    /// 0..=4 entries per slice (mean 2), square matrix: very short columns.
    Short2,
    /// A single outer slice holding every entry; inner bound `4 × nnz`.
    #[value(name = "onecol")]
    OneColumn,
}

impl Pattern {
    /// Short name used in file names and benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Random10 => "random10",
            Pattern::Random100 => "random100",
            Pattern::Short2 => "short2",
            Pattern::OneColumn => "onecol",
        }
    }

    /// Entries of slice `j` before the total is cut at `nnz`.
    #[inline]
    fn count(self, j: u64, nnz: u64) -> u64 {
        match self {
            Pattern::Random10 => mix(j ^ 0xC0_1A_B0_5E) % 21,
            Pattern::Random100 => mix(j ^ 0x0100_C01A) % 201,
            Pattern::Short2 => mix(j ^ 0x5_4017) % 5,
            Pattern::OneColumn => nnz,
        }
    }

    fn max_count(self, nnz: u64) -> u64 {
        match self {
            Pattern::Random10 => 20,
            Pattern::Random100 => 200,
            Pattern::Short2 => 4,
            Pattern::OneColumn => nnz,
        }
    }
}

/// Storage layout of a generated matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Format {
    /// CSC: outer slices are columns; buffers values, row_indices, col_ptr.
    Csc,
    /// CSR: outer slices are rows; buffers values, col_indices, row_ptr.
    Csr,
    /// COO, rank 2, `is_sorted = 1`: `(outer, inner)` pairs in CSR order.
    #[value(name = "coo")]
    CooSorted,
}

impl Format {
    /// Short name used in file names and benchmark ids.
    pub fn name(self) -> &'static str {
        match self {
            Format::Csc => "csc",
            Format::Csr => "csr",
            Format::CooSorted => "coo",
        }
    }
}

/// Element type of the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Values {
    /// `float32`.
    F32,
    /// `float64`.
    F64,
}

impl Values {
    /// `f32` / `f64`.
    pub fn name(self) -> &'static str {
        match self {
            Values::F32 => "f32",
            Values::F64 => "f64",
        }
    }

    fn element_type(self) -> ElementType {
        match self {
            Values::F32 => ElementType::Float32,
            Values::F64 => ElementType::Float64,
        }
    }

    fn width(self) -> usize {
        match self {
            Values::F32 => 4,
            Values::F64 => 8,
        }
    }
}

/// The value stored at position `p` (same number in `f32` and `f64`).
#[inline]
pub fn value_at(p: u64) -> f64 {
    ((mix(p ^ 0x7A1_0E5) % 2001) as f64 - 1000.0) / 1024.0
}

/// The dense vector `x` used by every SpMV (Rust and Python alike):
/// `x[i] = (i mod 1024) / 1024 - 0.5`, exact in `f32`.
#[inline]
pub fn x_at(i: u64) -> f64 {
    (i % 1024) as f64 / 1024.0 - 0.5
}

/// One generated matrix: what to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatrixSpec {
    /// Spread of the non-zeros.
    pub pattern: Pattern,
    /// Layout.
    pub format: Format,
    /// Element type.
    pub values: Values,
    /// Number of stored elements.
    pub nnz: u64,
    /// The bound of the inner indices (`nrows` of a CSC), when set
    /// ([`with_inner`](Self::with_inner)); otherwise the matrix is square
    /// (`onecol`: `4 × nnz` rows).
    pub inner: Option<u64>,
}

/// Sizes of a generated matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    /// Number of outer slices (`ncols` of a CSC, `nrows` of a CSR).
    pub outer: u64,
    /// Bound of the inner indices (`nrows` of a CSC, `ncols` of a CSR).
    pub inner: u64,
    /// Stored elements.
    pub nnz: u64,
}

impl MatrixSpec {
    /// A matrix spec.
    pub fn new(pattern: Pattern, format: Format, values: Values, nnz: u64) -> Self {
        MatrixSpec {
            pattern,
            format,
            values,
            nnz,
            inner: None,
        }
    }

    /// The same matrix with `inner` as the bound of its inner indices
    /// (`nrows` of a CSC: the length of `y = A·x`), raised where needed to
    /// the longest slice (every slice draws its indices from strata of at
    /// least one index). The outer count stays what `nnz` and the pattern
    /// make it, so the matrix is no longer square.
    pub fn with_inner(self, inner: u64) -> Self {
        MatrixSpec {
            inner: Some(inner),
            ..self
        }
    }

    /// `csc-random10-f32-nnz100000000` (`-rows131072` after it when
    /// [`inner`](Self::inner) is set).
    pub fn id(&self) -> String {
        let rows = self.inner.map(|r| format!("-rows{r}")).unwrap_or_default();
        format!(
            "{}-{}-{}-nnz{}{rows}",
            self.format.name(),
            self.pattern.name(),
            self.values.name(),
            self.nnz
        )
    }

    /// File name in the cache folder (carries [`GENERATOR_VERSION`]).
    pub fn file_name(&self) -> String {
        format!("{}-g{GENERATOR_VERSION}.hry", self.id())
    }

    /// The matrix's sizes (one pass over the slice counts: ~10 ms per 10 M slices).
    pub fn dims(&self) -> Dims {
        let nnz = self.nnz;
        let mut outer = 0u64;
        let mut total = 0u64;
        while total < nnz {
            total = total.saturating_add(self.pattern.count(outer, nnz));
            outer += 1;
        }
        let outer = outer.max(1);
        let longest = self.pattern.max_count(nnz).max(1);
        let inner = match (self.inner, self.pattern) {
            (Some(inner), _) => inner.max(longest),
            (None, Pattern::OneColumn) => nnz.saturating_mul(4).max(1),
            (None, _) => outer.max(longest),
        };
        Dims { outer, inner, nnz }
    }

    /// The file for this matrix in `dir`, written first if it is not there
    /// yet (atomically: a file under the final name is complete).
    ///
    /// # Errors
    /// I/O and writer errors.
    pub fn ensure(&self, dir: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
        let path = dir.join(self.file_name());
        if !path.exists() {
            let start = std::time::Instant::now();
            self.write(&path)?;
            eprintln!(
                "hurray-benches: generated {} ({} bytes) in {:.1?}",
                path.display(),
                std::fs::metadata(&path)?.len(),
                start.elapsed()
            );
        }
        Ok(path)
    }

    /// Writes this matrix as tensor [`TENSOR`] to `path`, streaming every buffer.
    ///
    /// # Errors
    /// I/O and writer errors.
    pub fn write(&self, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        let dims = self.dims();
        let et = self.values.element_type();
        let descriptor = match self.format {
            Format::Csc => TensorDescriptor::csc(et, dims.inner, dims.outer, dims.nnz)?,
            Format::Csr => TensorDescriptor::csr(et, dims.outer, dims.inner, dims.nnz)?,
            Format::CooSorted => TensorDescriptor::coo(et, vec![dims.outer, dims.inner], dims.nnz, true)?,
        };
        let values_len = dims.nnz * self.values.width() as u64;
        let width = self.values;
        let mut fill_values = move |offset: u64, chunk: &mut [u8]| -> io::Result<()> {
            let w = width.width();
            let first = offset / w as u64;
            for (i, slot) in chunk.chunks_exact_mut(w).enumerate() {
                let v = value_at(first + i as u64);
                match width {
                    Values::F32 => slot.copy_from_slice(&(v as f32).to_le_bytes()),
                    Values::F64 => slot.copy_from_slice(&v.to_le_bytes()),
                }
            }
            Ok(())
        };
        let mut entries = EntryStream::new(self.pattern, dims);
        let coo = self.format == Format::CooSorted;
        let mut fill_indices = move |_offset: u64, chunk: &mut [u8]| -> io::Result<()> {
            if coo {
                for pair in chunk.chunks_exact_mut(16) {
                    let (outer, inner) = entries.next_entry();
                    pair[..8].copy_from_slice(&outer.to_le_bytes());
                    pair[8..].copy_from_slice(&inner.to_le_bytes());
                }
            } else {
                for slot in chunk.chunks_exact_mut(8) {
                    slot.copy_from_slice(&entries.next_entry().1.to_le_bytes());
                }
            }
            Ok(())
        };
        let mut pointers = PtrStream::new(self.pattern, dims);
        let mut fill_ptr = move |_offset: u64, chunk: &mut [u8]| -> io::Result<()> {
            for slot in chunk.chunks_exact_mut(8) {
                slot.copy_from_slice(&pointers.next_ptr().to_le_bytes());
            }
            Ok(())
        };
        let index_len = dims.nnz * if coo { 16 } else { 8 };
        let mut data = vec![
            BufferData::generate(values_len, &mut fill_values),
            BufferData::generate(index_len, &mut fill_indices),
        ];
        if !coo {
            data.push(BufferData::generate((dims.outer + 1) * 8, &mut fill_ptr));
        }
        let mut w = PathWriter::create(path, WriterOptions::default().sync_on_commit(false))?;
        w.add_kv("producer", "hurray-benches")?;
        w.add_kv("matrix", self.id().as_str())?;
        w.write_tensor(TENSOR, &descriptor, data)?;
        w.commit()?;
        Ok(())
    }
}

/// The entries of a matrix in storage order, one at a time.
#[derive(Debug, Clone)]
pub struct EntryStream {
    pattern: Pattern,
    dims: Dims,
    /// Current outer slice, its full count (for the strata), its effective
    /// count (cut at nnz) and the next entry in it.
    j: u64,
    full: u64,
    count: u64,
    k: u64,
    /// Entries before slice `j`.
    before: u64,
}

impl EntryStream {
    /// Starts at entry 0.
    pub fn new(pattern: Pattern, dims: Dims) -> Self {
        let mut s = EntryStream {
            pattern,
            dims,
            j: 0,
            full: 0,
            count: 0,
            k: 0,
            before: 0,
        };
        s.load(0);
        s
    }

    fn load(&mut self, j: u64) {
        self.j = j;
        self.full = self.pattern.count(j, self.dims.nnz);
        self.count = self.full.min(self.dims.nnz.saturating_sub(self.before));
        self.k = 0;
    }

    /// The next `(outer, inner)` pair; past the end it keeps returning `(outer, 0)`.
    #[inline]
    pub fn next_entry(&mut self) -> (u64, u64) {
        while self.k >= self.count {
            if self.j + 1 >= self.dims.outer {
                return (self.j, 0);
            }
            self.before += self.count;
            self.load(self.j + 1);
        }
        let stride = self.dims.inner / self.full;
        let k = self.k;
        self.k += 1;
        let jitter = mix(self.j.wrapping_mul(0x1_0000_0001) ^ k.wrapping_mul(0x9E37)) % stride;
        (self.j, k * stride + jitter)
    }
}

/// The pointer array of a matrix, one entry at a time (`outer + 1` entries).
#[derive(Debug, Clone)]
pub struct PtrStream {
    pattern: Pattern,
    dims: Dims,
    j: u64,
    total: u64,
}

impl PtrStream {
    /// Starts at `ptr[0] = 0`.
    pub fn new(pattern: Pattern, dims: Dims) -> Self {
        PtrStream {
            pattern,
            dims,
            j: 0,
            total: 0,
        }
    }

    /// The next pointer.
    #[inline]
    pub fn next_ptr(&mut self) -> u64 {
        let p = self.total.min(self.dims.nnz);
        let last = self.j + 1 >= self.dims.outer;
        self.total = if last {
            self.dims.nnz
        } else {
            self.total.saturating_add(self.pattern.count(self.j, self.dims.nnz))
        };
        self.j += 1;
        p
    }
}

/// The element type of tensor [`TENSOR`] in the file at `path` (`None`
/// for an extension type), read through a mapping dropped on return.
///
/// # Errors
/// The reader's, opening the file or finding the tensor.
pub fn tensor_element_type(path: &Path) -> Result<Option<hurray_reader::ElementType>, hurray_reader::Error> {
    let mapped = hurray_reader::MappedFile::open(path, hurray_reader::Options::default())?;
    let file = mapped.file()?;
    let element_type = file.tensor(TENSOR)?.element_type();
    Ok(element_type)
}

/// Puts `path` into the page cache the way a sequential read leaves it:
/// flush it, drop its cached pages (`POSIX_FADV_DONTNEED`) and read it
/// front to back. Files just written by the writer sit in the page cache in
/// small folios and, on the benchmark VM, read 1.5–1.8x slower through a
/// mapping than the same file read back (large folios); settling every
/// input first makes runs comparable. Costs one read of the file.
///
/// # Errors
/// I/O errors.
pub fn settle_page_cache(path: &Path) -> io::Result<()> {
    let mut file = std::fs::File::open(path)?;
    file.sync_all()?;
    // Drop the file's pages from the page cache; a failure only means they
    // stay as they are.
    #[cfg(target_os = "linux")]
    let _ = rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed);
    io::copy(&mut file, &mut io::sink())?;
    Ok(())
}

/// A file of about `total_bytes` for the open-latency benchmark: a
/// `float32` dense tensor `"zeros"` written as [`BufferData::Zeros`] (a hole
/// on disk), then a small CSC tensor [`TENSOR`] (1024 non-zeros) at the end.
///
/// # Errors
/// I/O and writer errors.
pub fn ensure_open_file(dir: &Path, total_bytes: u64) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let path = dir.join(format!(
        "open-{}-g{GENERATOR_VERSION}.hry",
        crate::size_label(total_bytes)
    ));
    if path.exists() {
        return Ok(path);
    }
    let small = MatrixSpec::new(Pattern::Random10, Format::Csc, Values::F32, 1024);
    let dims = small.dims();
    let small_bytes = 3 * 4096 + 4096 * 2;
    let zeros = total_bytes.saturating_sub(small_bytes) / 4;
    let mut w = PathWriter::create(&path, WriterOptions::default().sync_on_commit(false))?;
    let dense = TensorDescriptor::row_major(ElementType::Float32, vec![zeros.max(1)])?;
    w.write_tensor("zeros", &dense, [BufferData::Zeros(zeros.max(1) * 4)])?;
    let values: Vec<f32> = (0..dims.nnz).map(|p| value_at(p) as f32).collect();
    let mut entries = EntryStream::new(small.pattern, dims);
    let rows: Vec<u64> = (0..dims.nnz).map(|_| entries.next_entry().1).collect();
    let mut ptrs = PtrStream::new(small.pattern, dims);
    let col_ptr: Vec<u64> = (0..=dims.outer).map(|_| ptrs.next_ptr()).collect();
    let csc = hurray_writer::Csc::new(dims.inner, dims.outer, values.as_slice(), &rows, &col_ptr)?;
    w.write_csc(TENSOR, &csc)?;
    w.commit()?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arrays(spec: MatrixSpec) -> (Dims, Vec<u64>, Vec<u64>) {
        let dims = spec.dims();
        let mut e = EntryStream::new(spec.pattern, dims);
        let idx: Vec<u64> = (0..dims.nnz).map(|_| e.next_entry().1).collect();
        let mut p = PtrStream::new(spec.pattern, dims);
        let ptr: Vec<u64> = (0..=dims.outer).map(|_| p.next_ptr()).collect();
        (dims, idx, ptr)
    }

    #[test]
    fn generated_structures_are_valid() {
        for pattern in [
            Pattern::Random10,
            Pattern::Random100,
            Pattern::Short2,
            Pattern::OneColumn,
        ] {
            for nnz in [1, 7, 100, 1000, 4097] {
                let square = MatrixSpec::new(pattern, Format::Csc, Values::F32, nnz);
                for spec in [square, square.with_inner(3), square.with_inner(5000)] {
                    let (dims, idx, ptr) = arrays(spec);
                    if let Some(inner) = spec.inner {
                        assert_eq!(dims.inner, inner.max(pattern.max_count(nnz)), "{spec:?}");
                    }
                    let values: Vec<f32> = (0..nnz).map(|p| value_at(p) as f32).collect();
                    hurray_writer::Csc::new(dims.inner, dims.outer, values.as_slice(), &idx, &ptr)
                        .unwrap_or_else(|e| panic!("{spec:?}: {e}"));
                }
            }
        }
    }

    #[test]
    fn written_files_read_back() {
        let dir = tempfile::tempdir().unwrap();
        for format in [Format::Csc, Format::Csr, Format::CooSorted] {
            for values in [Values::F32, Values::F64] {
                let spec = MatrixSpec::new(Pattern::Random10, format, values, 3000);
                let path = spec.ensure(dir.path()).unwrap();
                let mapped = hurray_reader::MappedFile::open(&path, hurray_reader::Options::default()).unwrap();
                let file = mapped.file().unwrap();
                file.validate().unwrap();
                let t = file.tensor(TENSOR).unwrap();
                match format {
                    Format::Csc => t.csc_structure().unwrap().validate().unwrap(),
                    Format::Csr => t.csr_structure().unwrap().validate().unwrap(),
                    Format::CooSorted => t.coo_structure().unwrap().validate().unwrap(),
                }
            }
        }
        let open = ensure_open_file(dir.path(), 64 << 10).unwrap();
        let mapped = hurray_reader::MappedFile::open(&open, hurray_reader::Options::default()).unwrap();
        mapped.file().unwrap().validate().unwrap();
    }
}
