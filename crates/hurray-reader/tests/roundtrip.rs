//! Writer → bytes → reader round trips, as property tests.
//!
//! Each case draws a random sparse matrix (a set of distinct `(row, col)`
//! positions with a value each; shapes include 0 rows, 0 columns, 0x0, no
//! stored elements, empty columns, a single full column, and thin matrices
//! such as 1x200 and 200x1) and writes the same matrix six times into ONE
//! file with `hurray-writer`: CSC, CSR, COO in sorted and in shuffled
//! storage order, dense row-major and dense column-major, plus a few random
//! KV entries. The bytes are parsed with `hurray-reader` and every view is
//! compared with the model, element by element. Float values (NaN payloads
//! and -0.0 included) are compared by bit pattern.
//!
//! Stored values may be zero (explicit zeros are allowed by the spec): a
//! sparse lookup answers `Some(v)` exactly for the stored positions and
//! `None` for the others, while the dense tensors hold the stored value or
//! the type's zero.

use std::collections::BTreeMap;
use std::fmt::{Debug, Display};

use hurray_reader::{AlignedBytes, HurrayFile, KvType, KvValue as RKv, Options};
use hurray_writer::{Coo, Csc, Csr, Dense, FileWriter, KvArray as WArr, KvValue as WKv, WriterOptions};
use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Cases per element type; four element types keep the file's debug-build
/// runtime well under ten seconds.
const CASES: u32 = 128;

// ---------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------

/// A value type both crates can write and view without conversion.
trait Val: hurray_writer::Element + hurray_reader::Element + Copy + Debug + Default + 'static {
    /// The spec name of the element type.
    const NAME: &'static str;
    /// The bit pattern, for exact comparison (NaN == NaN, -0.0 != 0.0).
    fn bits(self) -> u64;
    /// Values to draw, special ones included.
    fn strategy() -> BoxedStrategy<Self>;
}

impl Val for f32 {
    const NAME: &'static str = "float32";
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn strategy() -> BoxedStrategy<Self> {
        prop_oneof![
            4 => any::<f32>(),
            2 => any::<u32>().prop_map(f32::from_bits),
            1 => Just(f32::NAN),
            1 => Just(f32::from_bits(0xFF80_0001)), // negative signalling NaN with a payload
            1 => Just(-0.0f32),
            1 => Just(0.0f32),
            1 => Just(f32::INFINITY),
            1 => Just(f32::MIN_POSITIVE / 2.0), // subnormal
        ]
        .boxed()
    }
}

impl Val for f64 {
    const NAME: &'static str = "float64";
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn strategy() -> BoxedStrategy<Self> {
        prop_oneof![
            4 => any::<f64>(),
            2 => any::<u64>().prop_map(f64::from_bits),
            1 => Just(f64::NAN),
            1 => Just(f64::from_bits(0x7FF0_0000_0000_0001)), // signalling NaN
            1 => Just(-0.0f64),
            1 => Just(0.0f64),
            1 => Just(f64::NEG_INFINITY),
        ]
        .boxed()
    }
}

impl Val for i32 {
    const NAME: &'static str = "int32";
    fn bits(self) -> u64 {
        u64::from(self.cast_unsigned())
    }
    fn strategy() -> BoxedStrategy<Self> {
        prop_oneof![4 => any::<i32>(), 1 => Just(0), 1 => Just(i32::MIN), 1 => Just(-1)].boxed()
    }
}

impl Val for u8 {
    const NAME: &'static str = "uint8";
    fn bits(self) -> u64 {
        u64::from(self)
    }
    fn strategy() -> BoxedStrategy<Self> {
        prop_oneof![4 => any::<u8>(), 1 => Just(0), 1 => Just(u8::MAX)].boxed()
    }
}

fn bits<T: Val>(values: &[T]) -> Vec<u64> {
    values.iter().map(|v| v.bits()).collect()
}

// ---------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------

/// A sparse matrix: distinct positions, each with a value.
#[derive(Debug, Clone)]
struct Matrix<T> {
    nrows: u64,
    ncols: u64,
    /// Keyed by `(row, col)`, so iteration is row-major (the CSR order).
    entries: BTreeMap<(u64, u64), T>,
}

/// Compressed arrays: values, inner indices, outer pointers.
struct Compressed<T> {
    values: Vec<T>,
    idx: Vec<u64>,
    ptr: Vec<u64>,
}

impl<T: Val> Matrix<T> {
    /// Later duplicates of a position replace earlier ones.
    fn from_triples(nrows: u64, ncols: u64, triples: impl IntoIterator<Item = (u64, u64, T)>) -> Self {
        let entries = triples.into_iter().map(|(r, c, v)| ((r, c), v)).collect();
        Matrix { nrows, ncols, entries }
    }

    fn nnz(&self) -> u64 {
        self.entries.len() as u64
    }

    fn cells(&self) -> impl Iterator<Item = (u64, u64)> {
        let (nrows, ncols) = (self.nrows, self.ncols);
        (0..nrows).flat_map(move |r| (0..ncols).map(move |c| (r, c)))
    }

    fn stored(&self, r: u64, c: u64) -> Option<u64> {
        self.entries.get(&(r, c)).map(|v| v.bits())
    }

    fn dense_bits(&self, r: u64, c: u64) -> u64 {
        self.stored(r, c).unwrap_or(T::default().bits())
    }

    /// Entries in column-major order: `(row, col, value)`.
    fn by_column(&self) -> Vec<(u64, u64, T)> {
        let mut all: Vec<(u64, u64, T)> = self.entries.iter().map(|(&(r, c), &v)| (r, c, v)).collect();
        all.sort_by_key(|&(r, c, _)| (c, r));
        all
    }

    fn csc(&self) -> Compressed<T> {
        let all = self.by_column();
        let mut ptr = vec![0u64; self.ncols as usize + 1];
        for &(_, c, _) in &all {
            ptr[c as usize + 1] += 1;
        }
        for j in 1..ptr.len() {
            ptr[j] += ptr[j - 1];
        }
        Compressed {
            values: all.iter().map(|e| e.2).collect(),
            idx: all.iter().map(|e| e.0).collect(),
            ptr,
        }
    }

    fn csr(&self) -> Compressed<T> {
        let mut ptr = vec![0u64; self.nrows as usize + 1];
        for &(r, _) in self.entries.keys() {
            ptr[r as usize + 1] += 1;
        }
        for i in 1..ptr.len() {
            ptr[i] += ptr[i - 1];
        }
        Compressed {
            values: self.entries.values().copied().collect(),
            idx: self.entries.keys().map(|&(_, c)| c).collect(),
            ptr,
        }
    }

    /// COO values and flattened coordinates, in lexicographic order.
    fn coo_sorted(&self) -> (Vec<T>, Vec<u64>) {
        let values = self.entries.values().copied().collect();
        let indices = self.entries.keys().flat_map(|&(r, c)| [r, c]).collect();
        (values, indices)
    }

    /// COO values and flattened coordinates, in a shuffled order.
    fn coo_shuffled(&self, seed: u64) -> (Vec<T>, Vec<u64>) {
        let mut all: Vec<(u64, u64, T)> = self.entries.iter().map(|(&(r, c), &v)| (r, c, v)).collect();
        // Fisher-Yates with a xorshift64* generator.
        let mut state = seed | 1;
        for i in (1..all.len()).rev() {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let j = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) % (i as u64 + 1)) as usize;
            all.swap(i, j);
        }
        let values = all.iter().map(|e| e.2).collect();
        let indices = all.iter().flat_map(|e| [e.0, e.1]).collect();
        (values, indices)
    }

    fn row_major(&self) -> Vec<T> {
        let mut out = vec![T::default(); (self.nrows * self.ncols) as usize];
        for (&(r, c), &v) in &self.entries {
            out[(r * self.ncols + c) as usize] = v;
        }
        out
    }

    fn col_major(&self) -> Vec<T> {
        let mut out = vec![T::default(); (self.nrows * self.ncols) as usize];
        for (&(r, c), &v) in &self.entries {
            out[(c * self.nrows + r) as usize] = v;
        }
        out
    }
}

// ---------------------------------------------------------------------------
// Strategies
// ---------------------------------------------------------------------------

fn shape() -> impl Strategy<Value = (u64, u64)> {
    prop_oneof![
        8 => (0u64..=12, 0u64..=12),
        1 => Just((0, 0)),
        1 => (1u64..=12).prop_map(|c| (0, c)),
        1 => (1u64..=12).prop_map(|r| (r, 0)),
        1 => Just((1, 200)),
        1 => Just((200, 1)),
        1 => (1u64..=3, 150u64..=200),
        1 => (150u64..=200, 1u64..=3),
    ]
}

fn matrix<T: Val>() -> impl Strategy<Value = Matrix<T>> {
    shape().prop_flat_map(|(nrows, ncols)| {
        let cells = (nrows * ncols) as usize;
        if cells == 0 {
            return Just(Matrix::from_triples(nrows, ncols, [])).boxed();
        }
        // Random positions, duplicates collapsed (so nnz <= drawn count).
        let triples = vec((0..nrows, 0..ncols, T::strategy()), 0..=cells.min(48))
            .prop_map(move |t| Matrix::from_triples(nrows, ncols, t));
        // Every cell stored with probability density/100 (0: empty, 100: full).
        let masked = (0u8..=100)
            .prop_flat_map(move |density| (Just(density), vec((0u8..100, T::strategy()), cells)))
            .prop_map(move |(density, cells)| {
                let kept = cells.into_iter().enumerate().filter(|(_, (p, _))| *p < density);
                let t = kept.map(|(k, (_, v))| (k as u64 / ncols, k as u64 % ncols, v));
                Matrix::from_triples(nrows, ncols, t)
            });
        // One full column, every other column empty.
        let full_column = (0..ncols, vec(T::strategy(), nrows as usize)).prop_map(move |(c, values)| {
            Matrix::from_triples(
                nrows,
                ncols,
                values.into_iter().enumerate().map(|(r, v)| (r as u64, c, v)),
            )
        });
        // Some rows of one column, every other column empty.
        let one_column = (0..ncols, vec((0..nrows, T::strategy()), 0..=(nrows as usize).min(24)))
            .prop_map(move |(c, rows)| Matrix::from_triples(nrows, ncols, rows.into_iter().map(|(r, v)| (r, c, v))));
        prop_oneof![
            4 => triples,
            3 => masked,
            1 => full_column,
            1 => one_column,
            1 => Just(Matrix::from_triples(nrows, ncols, [])),
        ]
        .boxed()
    })
}

fn kv_array() -> impl Strategy<Value = WArr> {
    prop_oneof![
        vec("\\PC{0,6}", 0..4).prop_map(WArr::String),
        vec(any::<i64>(), 0..5).prop_map(WArr::Int64),
        vec(any::<u64>(), 0..5).prop_map(WArr::UInt64),
        vec(any::<u64>().prop_map(f64::from_bits), 0..5).prop_map(WArr::Float64),
        vec(any::<bool>(), 0..5).prop_map(WArr::Bool),
        vec(vec(any::<u8>(), 0..6), 0..4).prop_map(WArr::Bytes),
    ]
}

fn kv_value() -> impl Strategy<Value = WKv> {
    prop_oneof![
        "\\PC{0,16}".prop_map(WKv::String),
        any::<i64>().prop_map(WKv::Int64),
        any::<u64>().prop_map(WKv::UInt64),
        any::<u64>().prop_map(|b| WKv::Float64(f64::from_bits(b))),
        prop_oneof![Just(f64::NAN), Just(-0.0), Just(f64::INFINITY)].prop_map(WKv::Float64),
        any::<bool>().prop_map(WKv::Bool),
        vec(any::<u8>(), 0..24).prop_map(WKv::Bytes),
        kv_array().prop_map(WKv::Array),
    ]
}

/// Distinct non-empty keys (ASCII and any printable Unicode).
fn kv_entries() -> impl Strategy<Value = BTreeMap<String, WKv>> {
    btree_map("[a-z][a-z0-9_.]{0,11}|\\PC{1,6}", kv_value(), 0..6)
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// Turns a reader or writer error into a test failure naming the step.
trait Ctx<T> {
    fn ctx(self, what: &str) -> Result<T, TestCaseError>;
}

impl<T, E: Display> Ctx<T> for Result<T, E> {
    fn ctx(self, what: &str) -> Result<T, TestCaseError> {
        self.map_err(|e| TestCaseError::fail(format!("{what}: {e}")))
    }
}

fn opt_bits<T: Val>(v: Option<&T>) -> Option<u64> {
    v.map(|v| v.bits())
}

/// A KV value read back, compared with the one written (floats by bits).
fn kv_equal(written: &WKv, read: &RKv<'_>) -> bool {
    match (written, read) {
        (WKv::String(a), RKv::String(b)) => a == b,
        (WKv::Int64(a), RKv::Int64(b)) => a == b,
        (WKv::UInt64(a), RKv::Uint64(b)) => a == b,
        (WKv::Float64(a), RKv::Float64(b)) => a.to_bits() == b.to_bits(),
        (WKv::Bool(a), RKv::Bool(b)) => a == b,
        (WKv::Bytes(a), RKv::Bytes(b)) => a == b,
        (WKv::Array(a), RKv::Array(b)) => {
            let (ty, written): (KvType, Vec<WKv>) = match a {
                WArr::String(v) => (KvType::String, v.iter().cloned().map(WKv::String).collect()),
                WArr::Int64(v) => (KvType::Int64, v.iter().copied().map(WKv::Int64).collect()),
                WArr::UInt64(v) => (KvType::Uint64, v.iter().copied().map(WKv::UInt64).collect()),
                WArr::Float64(v) => (KvType::Float64, v.iter().copied().map(WKv::Float64).collect()),
                WArr::Bool(v) => (KvType::Bool, v.iter().copied().map(WKv::Bool).collect()),
                WArr::Bytes(v) => (KvType::Bytes, v.iter().cloned().map(WKv::Bytes).collect()),
            };
            let read: Vec<RKv<'_>> = b.iter().collect();
            b.element_type() == ty
                && b.len() as usize == written.len()
                && b.is_empty() == written.is_empty()
                && read.len() == written.len()
                && written.iter().zip(&read).all(|(w, r)| kv_equal(w, r))
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// The round trip
// ---------------------------------------------------------------------------

/// Writes `m` in six layouts plus `kv` into one file; returns the bytes.
fn write_file<T: Val>(m: &Matrix<T>, kv: &BTreeMap<String, WKv>, seed: u64) -> Result<Vec<u8>, TestCaseError> {
    let (nrows, ncols) = (m.nrows, m.ncols);
    let csc = m.csc();
    let csr = m.csr();
    let (coo_values, coo_indices) = m.coo_sorted();
    let (shuffled_values, shuffled_indices) = m.coo_shuffled(seed);
    let row_major = m.row_major();
    let col_major = m.col_major();

    let mut w = FileWriter::new(Vec::new(), WriterOptions::default()).ctx("FileWriter::new")?;
    for (key, value) in kv {
        w.add_kv(key, value.clone()).ctx("add_kv")?;
    }
    let a = Csc::new(nrows, ncols, &csc.values, &csc.idx, &csc.ptr).ctx("Csc::new")?;
    w.write_csc("csc", &a).ctx("write_csc")?;
    let a = Csr::new(nrows, ncols, &csr.values, &csr.idx, &csr.ptr).ctx("Csr::new")?;
    w.write_csr("csr", &a).ctx("write_csr")?;
    let a = Coo::new(&[nrows, ncols], &coo_values, &coo_indices, true).ctx("Coo::new sorted")?;
    w.write_coo("coo_sorted", &a).ctx("write_coo sorted")?;
    let a = Coo::new(&[nrows, ncols], &shuffled_values, &shuffled_indices, false).ctx("Coo::new unsorted")?;
    w.write_coo("coo_unsorted", &a).ctx("write_coo unsorted")?;
    let a = Dense::row_major(&[nrows, ncols], &row_major).ctx("Dense::row_major")?;
    w.write_dense("dense_rm", &a).ctx("write_dense row-major")?;
    let a = Dense::column_major(&[nrows, ncols], &col_major).ctx("Dense::column_major")?;
    w.write_dense("dense_cm", &a).ctx("write_dense column-major")?;
    w.finish().ctx("finish")
}

fn check_container<T: Val>(
    file: &HurrayFile<'_>,
    m: &Matrix<T>,
    kv: &BTreeMap<String, WKv>,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(file.len(), 6);
    let names: Vec<&str> = file.entries().iter().map(|e| e.name()).collect();
    prop_assert_eq!(
        names,
        ["csc", "csr", "coo_sorted", "coo_unsorted", "dense_rm", "dense_cm"]
    );
    file.validate().ctx("HurrayFile::validate")?;

    // KV: same entries, same order (the writer keeps insertion order).
    prop_assert_eq!(file.kv().len(), kv.len());
    for (entry, (key, value)) in file.kv().iter().zip(kv) {
        prop_assert_eq!(entry.key(), key.as_str());
        prop_assert!(
            kv_equal(value, &entry.value()),
            "KV {:?}: wrote {:?}, read {:?}",
            key,
            value,
            entry.value()
        );
    }

    let expected_layouts = [
        ("csc", "csc", Some(m.nnz())),
        ("csr", "csr", Some(m.nnz())),
        ("coo_sorted", "coo", Some(m.nnz())),
        ("coo_unsorted", "coo", Some(m.nnz())),
        ("dense_rm", "row_major", None),
        ("dense_cm", "col_major", None),
    ];
    for (name, layout, nnz) in expected_layouts {
        let t = file.tensor(name).ctx(name)?;
        prop_assert_eq!(t.layout().as_str(), layout, "{}", name);
        prop_assert_eq!(t.element_type().map(|e| e.as_str()), Some(T::NAME), "{}", name);
        prop_assert_eq!(t.rank(), 2, "{}", name);
        prop_assert_eq!(t.shape().collect::<Vec<_>>(), vec![m.nrows, m.ncols], "{}", name);
        prop_assert_eq!(t.nnz(), nnz, "{}", name);
        t.validate_data().ctx(name)?;
    }
    Ok(())
}

fn check_csc<T: Val>(file: &HurrayFile<'_>, m: &Matrix<T>) -> Result<(), TestCaseError> {
    let csc = m.csc();
    let csr = m.csr();
    let a = file.tensor("csc").ctx("tensor csc")?.csc::<T>().ctx("csc view")?;
    prop_assert!(a.is_validated());
    a.validate().ctx("CscView::validate")?;
    prop_assert_eq!((a.nrows(), a.ncols(), a.nnz()), (m.nrows, m.ncols, m.nnz()));
    prop_assert_eq!(a.col_ptr(), &csc.ptr[..]);
    prop_assert_eq!(a.row_indices(), &csc.idx[..]);
    prop_assert_eq!(bits(a.values()), bits(&csc.values));

    // get over the whole grid.
    for (r, c) in m.cells() {
        prop_assert_eq!(
            opt_bits(a.get(r, c).ctx("csc get")?),
            m.stored(r, c),
            "get({}, {})",
            r,
            c
        );
        let p = a.structure().position(r, c).ctx("position")?;
        prop_assert_eq!(p.is_some(), m.stored(r, c).is_some());
    }
    prop_assert!(a.get(m.nrows, 0).is_err());
    prop_assert!(a.get(0, m.ncols).is_err());

    // column(j).
    for j in 0..m.ncols {
        let col = a.column(j).ctx("column")?;
        let expected: Vec<(u64, u64)> = m
            .entries
            .iter()
            .filter(|(&(_, c), _)| c == j)
            .map(|(&(r, _), v)| (r, v.bits()))
            .collect();
        prop_assert_eq!(col.len(), expected.len());
        let got: Vec<(u64, u64)> = col.map(|(r, v)| (r, v.bits())).collect();
        prop_assert_eq!(got, expected, "column {}", j);
        let range = a.structure().column_range(j).ctx("column_range")?;
        prop_assert_eq!(range, csc.ptr[j as usize] as usize..csc.ptr[j as usize + 1] as usize);
    }
    // columns(): every column, empty ones too, the same as column(j), and
    // the same from the back.
    let forward: Vec<_> = a.columns().ctx("columns")?.collect();
    let mut backward: Vec<_> = a.columns().ctx("columns")?.rev().collect();
    backward.reverse();
    prop_assert_eq!(forward.len(), backward.len());
    prop_assert!(forward
        .iter()
        .zip(&backward)
        .all(|(f, b)| f.0 == b.0 && f.1 == b.1 && bits(f.2) == bits(b.2)));
    let columns = a.columns().ctx("columns")?;
    prop_assert_eq!(columns.len() as u64, m.ncols);
    for (k, (j, rows, values)) in columns.enumerate() {
        prop_assert_eq!(j, k as u64);
        let got: Vec<(u64, u64)> = rows.iter().zip(values).map(|(&r, v)| (r, v.bits())).collect();
        let want: Vec<(u64, u64)> = a.column(j).ctx("column")?.map(|(r, v)| (r, v.bits())).collect();
        prop_assert_eq!(got, want, "columns() item {}", j);
    }
    prop_assert!(a.column(m.ncols).is_err());

    // iter(): column by column.
    let got: Vec<(u64, u64, u64)> = a.iter().ctx("iter")?.map(|(r, c, v)| (r, c, v.bits())).collect();
    let expected: Vec<(u64, u64, u64)> = m.by_column().into_iter().map(|(r, c, v)| (r, c, v.bits())).collect();
    prop_assert_eq!(got, expected);

    // transpose(): the CSR view of Aᵀ over the same slices.
    let at = a.transpose();
    prop_assert_eq!((at.nrows(), at.ncols(), at.nnz()), (m.ncols, m.nrows, m.nnz()));
    prop_assert_eq!(at.row_ptr().as_ptr(), a.col_ptr().as_ptr());
    prop_assert_eq!(at.col_indices().as_ptr(), a.row_indices().as_ptr());
    prop_assert_eq!(at.values().as_ptr(), a.values().as_ptr());
    for (r, c) in m.cells() {
        prop_assert_eq!(
            opt_bits(at.get(c, r).ctx("transpose get")?),
            m.stored(r, c),
            "Aᵀ({}, {})",
            c,
            r
        );
    }
    for j in 0..m.ncols {
        let row: Vec<(u64, u64)> = at.row(j).ctx("transpose row")?.map(|(i, v)| (i, v.bits())).collect();
        let col: Vec<(u64, u64)> = a.column(j).ctx("column")?.map(|(i, v)| (i, v.bits())).collect();
        prop_assert_eq!(row, col);
    }
    let tt = at.transpose();
    for (r, c) in m.cells() {
        prop_assert_eq!(opt_bits(tt.get(r, c).ctx("transpose twice get")?), m.stored(r, c));
    }

    // to_csr(): the same matrix A in CSR, equal to the CSR written directly.
    let owned = a.to_csr().ctx("to_csr")?;
    prop_assert_eq!((owned.nrows(), owned.ncols()), (m.nrows, m.ncols));
    prop_assert_eq!(owned.row_ptr(), &csr.ptr[..]);
    prop_assert_eq!(owned.col_indices(), &csr.idx[..]);
    prop_assert_eq!(bits(owned.values()), bits(&csr.values));
    let v = owned.view();
    prop_assert!(v.is_validated());
    for (r, c) in m.cells() {
        prop_assert_eq!(opt_bits(v.get(r, c).ctx("to_csr get")?), m.stored(r, c));
    }
    let direct = file.tensor("csr").ctx("tensor csr")?.csr::<T>().ctx("csr view")?;
    prop_assert_eq!(owned.row_ptr(), direct.row_ptr());
    prop_assert_eq!(owned.col_indices(), direct.col_indices());
    prop_assert_eq!(bits(owned.values()), bits(direct.values()));
    Ok(())
}

fn check_csr<T: Val>(file: &HurrayFile<'_>, m: &Matrix<T>) -> Result<(), TestCaseError> {
    let csr = m.csr();
    let a = file.tensor("csr").ctx("tensor csr")?.csr::<T>().ctx("csr view")?;
    prop_assert!(a.is_validated());
    a.validate().ctx("CsrView::validate")?;
    prop_assert_eq!((a.nrows(), a.ncols(), a.nnz()), (m.nrows, m.ncols, m.nnz()));
    prop_assert_eq!(a.row_ptr(), &csr.ptr[..]);
    prop_assert_eq!(a.col_indices(), &csr.idx[..]);
    prop_assert_eq!(bits(a.values()), bits(&csr.values));
    for (r, c) in m.cells() {
        prop_assert_eq!(
            opt_bits(a.get(r, c).ctx("csr get")?),
            m.stored(r, c),
            "get({}, {})",
            r,
            c
        );
    }
    prop_assert!(a.get(m.nrows, 0).is_err());
    prop_assert!(a.get(0, m.ncols).is_err());
    for i in 0..m.nrows {
        let row = a.row(i).ctx("row")?;
        let expected: Vec<(u64, u64)> = m
            .entries
            .range((i, 0)..(i + 1, 0))
            .map(|(&(_, c), v)| (c, v.bits()))
            .collect();
        prop_assert_eq!(row.len(), expected.len());
        let got: Vec<(u64, u64)> = row.map(|(c, v)| (c, v.bits())).collect();
        prop_assert_eq!(got, expected, "row {}", i);
    }
    // rows(): every row, empty ones too, the same as row(i).
    let rows = a.rows().ctx("rows")?;
    prop_assert_eq!(rows.len() as u64, m.nrows);
    for (k, (i, cols, values)) in rows.enumerate() {
        prop_assert_eq!(i, k as u64);
        let got: Vec<(u64, u64)> = cols.iter().zip(values).map(|(&c, v)| (c, v.bits())).collect();
        let want: Vec<(u64, u64)> = a.row(i).ctx("row")?.map(|(c, v)| (c, v.bits())).collect();
        prop_assert_eq!(got, want, "rows() item {}", i);
    }
    prop_assert!(a.row(m.nrows).is_err());
    let got: Vec<(u64, u64, u64)> = a.iter().ctx("csr iter")?.map(|(r, c, v)| (r, c, v.bits())).collect();
    let expected: Vec<(u64, u64, u64)> = m.entries.iter().map(|(&(r, c), v)| (r, c, v.bits())).collect();
    prop_assert_eq!(got, expected);
    // The CSC view of Aᵀ.
    let at = a.transpose();
    prop_assert_eq!((at.nrows(), at.ncols()), (m.ncols, m.nrows));
    for (r, c) in m.cells() {
        prop_assert_eq!(opt_bits(at.get(c, r).ctx("csr transpose get")?), m.stored(r, c));
    }
    Ok(())
}

fn check_coo<T: Val>(file: &HurrayFile<'_>, m: &Matrix<T>, seed: u64) -> Result<(), TestCaseError> {
    for (name, sorted, (values, indices)) in [
        ("coo_sorted", true, m.coo_sorted()),
        ("coo_unsorted", false, m.coo_shuffled(seed)),
    ] {
        let a = file.tensor(name).ctx(name)?.coo::<T>().ctx(name)?;
        let s = a.structure();
        prop_assert_eq!(s.shape(), &[m.nrows, m.ncols][..]);
        prop_assert_eq!(s.rank(), 2);
        prop_assert_eq!(a.nnz(), m.nnz());
        prop_assert_eq!(s.is_sorted(), sorted);
        prop_assert!(s.is_validated());
        s.validate().ctx("CooStructure::validate")?;
        prop_assert_eq!(s.indices(), &indices[..]);
        prop_assert_eq!(bits(a.values()), bits(&values));
        for (r, c) in m.cells() {
            prop_assert_eq!(
                opt_bits(a.get(&[r, c]).ctx("coo get")?),
                m.stored(r, c),
                "{} get([{}, {}])",
                name,
                r,
                c
            );
        }
        prop_assert!(a.get(&[m.nrows, 0]).is_err());
        prop_assert!(a.get(&[0, m.ncols]).is_err());
        prop_assert!(a.get(&[0]).is_err());
        let got: Vec<(Vec<u64>, u64)> = a.iter().ctx("coo iter")?.map(|(i, v)| (i.to_vec(), v.bits())).collect();
        let expected: Vec<(Vec<u64>, u64)> = indices
            .chunks_exact(2)
            .map(<[u64]>::to_vec)
            .zip(values.iter().map(|v| v.bits()))
            .collect();
        prop_assert_eq!(got, expected);
    }
    Ok(())
}

fn check_dense<T: Val>(file: &HurrayFile<'_>, m: &Matrix<T>) -> Result<(), TestCaseError> {
    for (name, storage) in [("dense_rm", m.row_major()), ("dense_cm", m.col_major())] {
        let a = file.tensor(name).ctx(name)?.dense::<T>().ctx(name)?;
        prop_assert_eq!(a.shape(), &[m.nrows, m.ncols][..]);
        prop_assert_eq!(bits(a.as_slice()), bits(&storage), "{} storage", name);
        for (r, c) in m.cells() {
            let got = a.get(&[r, c]).ctx("dense get")?.bits();
            prop_assert_eq!(got, m.dense_bits(r, c), "{} get([{}, {}])", name, r, c);
        }
        prop_assert!(a.get(&[m.nrows, 0]).is_err());
        prop_assert!(a.get(&[0, m.ncols]).is_err());
    }
    Ok(())
}

/// Permissive mode: the unscanned views answer the same lookups.
fn check_permissive<T: Val>(bytes: &[u8], m: &Matrix<T>) -> Result<(), TestCaseError> {
    let file = HurrayFile::parse(bytes, Options::permissive()).ctx("parse permissive")?;
    let a = file.tensor("csc").ctx("tensor csc")?.csc::<T>().ctx("csc view")?;
    prop_assert!(!a.is_validated());
    let r = file
        .tensor("csr")
        .ctx("tensor csr")?
        .csr_unscanned::<T>()
        .ctx("csr view")?;
    prop_assert!(!r.is_validated());
    for (row, col) in m.cells() {
        prop_assert_eq!(opt_bits(a.get(row, col).ctx("unscanned csc get")?), m.stored(row, col));
        prop_assert_eq!(opt_bits(r.get(row, col).ctx("unscanned csr get")?), m.stored(row, col));
    }
    let owned = a.to_csr().ctx("unscanned to_csr")?;
    let csr = m.csr();
    prop_assert_eq!(owned.row_ptr(), &csr.ptr[..]);
    prop_assert_eq!(owned.col_indices(), &csr.idx[..]);
    prop_assert_eq!(bits(owned.values()), bits(&csr.values));
    Ok(())
}

fn roundtrip<T: Val>(m: &Matrix<T>, kv: &BTreeMap<String, WKv>, seed: u64) -> Result<(), TestCaseError> {
    let bytes = write_file(m, kv, seed)?;
    let aligned = AlignedBytes::from_slice(&bytes);
    prop_assert_eq!(&aligned[..], &bytes[..]);
    let file = HurrayFile::parse(&aligned, Options::default()).ctx("HurrayFile::parse")?;
    check_container(&file, m, kv)?;
    check_csc(&file, m)?;
    check_csr(&file, m)?;
    check_coo(&file, m, seed)?;
    check_dense(&file, m)?;
    check_permissive(&aligned, m)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn roundtrip_f32(m in matrix::<f32>(), kv in kv_entries(), seed in any::<u64>()) {
        roundtrip(&m, &kv, seed)?;
    }

    #[test]
    fn roundtrip_f64(m in matrix::<f64>(), kv in kv_entries(), seed in any::<u64>()) {
        roundtrip(&m, &kv, seed)?;
    }

    #[test]
    fn roundtrip_i32(m in matrix::<i32>(), kv in kv_entries(), seed in any::<u64>()) {
        roundtrip(&m, &kv, seed)?;
    }

    #[test]
    fn roundtrip_u8(m in matrix::<u8>(), kv in kv_entries(), seed in any::<u64>()) {
        roundtrip(&m, &kv, seed)?;
    }
}

/// The fixed corner shapes, each once, whatever the random draw covers.
#[test]
fn roundtrip_corner_shapes() {
    let none = BTreeMap::new();
    let shapes: [(u64, u64); 8] = [(0, 0), (0, 7), (7, 0), (1, 1), (1, 200), (200, 1), (12, 12), (3, 5)];
    for (nrows, ncols) in shapes {
        // No stored element.
        let empty = Matrix::<f32>::from_triples(nrows, ncols, []);
        roundtrip(&empty, &none, 1).unwrap();
        if nrows * ncols == 0 {
            continue;
        }
        // Every cell stored, with special floats among them.
        let specials = [f32::NAN, -0.0, 0.0, f32::INFINITY, f32::from_bits(0xFF80_0001), 1.5];
        let full = Matrix::from_triples(
            nrows,
            ncols,
            (0..nrows * ncols).map(|k| (k / ncols, k % ncols, specials[(k % 6) as usize])),
        );
        roundtrip(&full, &none, 2).unwrap();
        // One full column (the last), the others empty.
        let column = Matrix::from_triples(nrows, ncols, (0..nrows).map(|r| (r, ncols - 1, r as i32 - 3)));
        roundtrip(&column, &none, 3).unwrap();
    }
}
