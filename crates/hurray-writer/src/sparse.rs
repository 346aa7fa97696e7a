//! Checked typed helpers: sparse (CSC, CSR, COO, CSF) and dense (row- and
//! column-major) tensors built from in-memory arrays.
//!
//! Each constructor validates the layout's storage invariants and refuses a
//! broken tensor with an error naming the rule (spec file + section), the
//! array position and the values involved. The resulting value yields a
//! [`TensorDescriptor`] (buffer sizes computed) and the buffer sources; the
//! `FileWriter::write_*` methods do both in one call.

use crate::data::BufferData;
use crate::descriptor::{check_permutation, TensorDescriptor, MAX_RANK};
use crate::element_type::Values;
use crate::error::{Error, Result};
use crate::layout::Layout;
use crate::num::{len64, mul, product, to_usize};
use crate::sink::Sink;
use crate::writer::FileWriter;

/// Spec names used in the errors of one compressed layout.
struct Compressed {
    ptr: &'static str,
    idx: &'static str,
    table: &'static str,
    inv1: &'static str,
    inv2: &'static str,
    inv3: &'static str,
    inv4: &'static str,
}

const CSC: Compressed = Compressed {
    ptr: "col_ptr",
    idx: "row_indices",
    table: "layouts/csc.md § Buffer Table",
    inv1: "layouts/csc.md § Storage Invariants (1)",
    inv2: "layouts/csc.md § Storage Invariants (2)",
    inv3: "layouts/csc.md § Storage Invariants (3)",
    inv4: "layouts/csc.md § Storage Invariants (4)",
};

const CSR: Compressed = Compressed {
    ptr: "row_ptr",
    idx: "col_indices",
    table: "layouts/csr.md § Buffer Table",
    inv1: "layouts/csr.md § Storage Invariants (1)",
    inv2: "layouts/csr.md § Storage Invariants (2)",
    inv3: "layouts/csr.md § Storage Invariants (3)",
    inv4: "layouts/csr.md § Storage Invariants (4)",
};

/// Checks a pointer array: length, start 0, non-decreasing, end = `count`.
#[allow(clippy::too_many_arguments)]
fn check_pointer(
    ptr: &[u64],
    expected_len: u64,
    count: u64,
    name: &'static str,
    rule_len: &'static str,
    rule_start: &'static str,
    rule_end: &'static str,
    rule_monotone: &'static str,
) -> Result<()> {
    let actual = len64(ptr.len())?;
    if actual != expected_len {
        return Err(Error::PointerLength {
            array: name,
            expected: expected_len,
            actual,
            rule: rule_len,
        });
    }
    if let Some(&first) = ptr.first() {
        if first != 0 {
            return Err(Error::PointerStart {
                array: name,
                value: first,
                rule: rule_start,
            });
        }
    }
    for (position, pair) in ptr.windows(2).enumerate() {
        if let [value, next] = *pair {
            if value > next {
                return Err(Error::PointerDecreasing {
                    array: name,
                    position: len64(position)?,
                    value,
                    next,
                    rule: rule_monotone,
                });
            }
        }
    }
    if let Some(&last) = ptr.last() {
        if last != count {
            return Err(Error::PointerEnd {
                array: name,
                position: actual.saturating_sub(1),
                value: last,
                expected: count,
                rule: rule_end,
            });
        }
    }
    Ok(())
}

/// Checks that indices are strictly increasing within each slice delimited
/// by a (valid) pointer array, and below `bound`.
fn check_slices(
    ptr: &[u64],
    indices: &[u64],
    bound: u64,
    name: &'static str,
    rule_sorted: &'static str,
    rule_bounds: &'static str,
) -> Result<()> {
    for pair in ptr.windows(2) {
        let [start, end] = *pair else { continue };
        let (s, e) = (to_usize(start, "slice start")?, to_usize(end, "slice end")?);
        let slice = indices.get(s..e).unwrap_or_default();
        let mut previous: Option<u64> = None;
        for (offset, &value) in slice.iter().enumerate() {
            let position = len64(s.saturating_add(offset))?;
            if value >= bound {
                return Err(Error::IndexOutOfBounds {
                    array: name,
                    position,
                    value,
                    bound,
                    rule: rule_bounds,
                });
            }
            if let Some(prev) = previous {
                if value <= prev {
                    return Err(Error::IndicesNotIncreasing {
                        array: name,
                        position,
                        previous: prev,
                        value,
                        rule: rule_sorted,
                    });
                }
            }
            previous = Some(value);
        }
    }
    Ok(())
}

fn check_compressed(
    c: &Compressed,
    outer: u64,
    inner: u64,
    values: &Values<'_>,
    indices: &[u64],
    ptr: &[u64],
) -> Result<u64> {
    let nnz = len64(indices.len())?;
    if values.count() != nnz {
        return Err(Error::ValueCount {
            what: "values (one per stored index)",
            expected: nnz,
            actual: values.count(),
            rule: c.table,
        });
    }
    let ptr_len = outer.checked_add(1).ok_or(Error::overflow("pointer length"))?;
    check_pointer(ptr, ptr_len, nnz, c.ptr, c.table, c.inv1, c.inv1, c.inv2)?;
    check_slices(ptr, indices, inner, c.idx, c.inv3, c.inv4)?;
    Ok(nnz)
}

/// A checked CSC matrix (`layouts/csc.md`).
#[derive(Debug, Clone, Copy)]
pub struct Csc<'a> {
    nrows: u64,
    ncols: u64,
    nnz: u64,
    values: Values<'a>,
    row_indices: &'a [u64],
    col_ptr: &'a [u64],
}

impl<'a> Csc<'a> {
    /// A CSC matrix of shape `[nrows, ncols]`: `values` and `row_indices`
    /// hold one entry per stored element (`nnz` = `row_indices.len()`),
    /// `col_ptr` has `ncols + 1` entries.
    ///
    /// # Errors
    /// - [`Error::ValueCount`]: `values` has not `nnz` elements (§ Buffer Table);
    /// - [`Error::PointerLength`]: `col_ptr` length is not `ncols + 1`;
    /// - [`Error::PointerStart`] / [`Error::PointerEnd`]: `col_ptr[0] != 0` or
    ///   `col_ptr[ncols] != nnz` (§ Storage Invariants (1));
    /// - [`Error::PointerDecreasing`]: `col_ptr` decreases (2);
    /// - [`Error::IndicesNotIncreasing`]: rows unsorted or repeated within a
    ///   column (3);
    /// - [`Error::IndexOutOfBounds`]: a row `>= nrows` (4).
    pub fn new(
        nrows: u64,
        ncols: u64,
        values: impl Into<Values<'a>>,
        row_indices: &'a [u64],
        col_ptr: &'a [u64],
    ) -> Result<Self> {
        let values = values.into();
        let nnz = check_compressed(&CSC, ncols, nrows, &values, row_indices, col_ptr)?;
        Ok(Self {
            nrows,
            ncols,
            nnz,
            values,
            row_indices,
            col_ptr,
        })
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// The descriptor (layout `0x08`, 3 buffers sized, default handles).
    ///
    /// # Errors
    /// [`Error::Overflow`] for sizes beyond `u64`.
    pub fn descriptor(&self) -> Result<TensorDescriptor> {
        TensorDescriptor::csc(self.values.element_type(), self.nrows, self.ncols, self.nnz)
    }

    /// Sources for `values`, `row_indices`, `col_ptr`.
    pub fn buffer_data(&self) -> [BufferData<'a>; 3] {
        [
            BufferData::Bytes(self.values.bytes()),
            BufferData::from_slice(self.row_indices),
            BufferData::from_slice(self.col_ptr),
        ]
    }
}

/// A checked CSR matrix (`layouts/csr.md`).
#[derive(Debug, Clone, Copy)]
pub struct Csr<'a> {
    nrows: u64,
    ncols: u64,
    nnz: u64,
    values: Values<'a>,
    col_indices: &'a [u64],
    row_ptr: &'a [u64],
}

impl<'a> Csr<'a> {
    /// A CSR matrix of shape `[nrows, ncols]`: `values` and `col_indices`
    /// hold one entry per stored element, `row_ptr` has `nrows + 1` entries.
    ///
    /// # Errors
    /// As [`Csc::new`], with rows and columns swapped and the rules of
    /// `layouts/csr.md`.
    pub fn new(
        nrows: u64,
        ncols: u64,
        values: impl Into<Values<'a>>,
        col_indices: &'a [u64],
        row_ptr: &'a [u64],
    ) -> Result<Self> {
        let values = values.into();
        let nnz = check_compressed(&CSR, nrows, ncols, &values, col_indices, row_ptr)?;
        Ok(Self {
            nrows,
            ncols,
            nnz,
            values,
            col_indices,
            row_ptr,
        })
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// The descriptor (layout `0x07`, 3 buffers sized, default handles).
    ///
    /// # Errors
    /// [`Error::Overflow`] for sizes beyond `u64`.
    pub fn descriptor(&self) -> Result<TensorDescriptor> {
        TensorDescriptor::csr(self.values.element_type(), self.nrows, self.ncols, self.nnz)
    }

    /// Sources for `values`, `col_indices`, `row_ptr`.
    pub fn buffer_data(&self) -> [BufferData<'a>; 3] {
        [
            BufferData::Bytes(self.values.bytes()),
            BufferData::from_slice(self.col_indices),
            BufferData::from_slice(self.row_ptr),
        ]
    }
}

/// A checked COO tensor (`layouts/coo.md`).
#[derive(Debug, Clone)]
pub struct Coo<'a> {
    shape: Vec<u64>,
    nnz: u64,
    is_sorted: bool,
    values: Values<'a>,
    indices: &'a [u64],
}

impl<'a> Coo<'a> {
    /// A COO tensor: `values` holds `nnz` elements, `indices` the `nnz × rank`
    /// coordinates in row-major order (`indices[i * rank + d]`).
    ///
    /// # Errors
    /// - [`Error::RankNotAllowed`]: rank 0 (§ Validity Constraints) or above 64;
    /// - [`Error::IndexLength`]: `indices` is not `nnz × rank` long (§ Buffer Table);
    /// - [`Error::IndexOutOfBounds`]: a coordinate `>= shape[d]` (constraint 1);
    /// - [`Error::DuplicateCoordinate`]: two entries share coordinates (2);
    /// - [`Error::CoordinatesNotSorted`]: `is_sorted` but an entry is smaller
    ///   than its predecessor (3).
    pub fn new(shape: &[u64], values: impl Into<Values<'a>>, indices: &'a [u64], is_sorted: bool) -> Result<Self> {
        let values = values.into();
        let rank = len64(shape.len())?;
        if rank == 0 || rank > MAX_RANK {
            return Err(Error::RankNotAllowed {
                layout: "coo",
                rank,
                rule: "layouts/coo.md § Validity Constraints",
            });
        }
        let nnz = values.count();
        let expected = mul(nnz, rank, "indices length")?;
        let actual = len64(indices.len())?;
        if actual != expected {
            return Err(Error::IndexLength {
                array: "indices",
                expected,
                actual,
                rule: "layouts/coo.md § Buffer Table: nnz × rank entries",
            });
        }
        let r = to_usize(rank, "rank")?;
        for (entry, coords) in indices.chunks_exact(r).enumerate() {
            for (d, (&value, &bound)) in coords.iter().zip(shape).enumerate() {
                if value >= bound {
                    let position = len64(entry.saturating_mul(r).saturating_add(d))?;
                    return Err(Error::IndexOutOfBounds {
                        array: "indices",
                        position,
                        value,
                        bound,
                        rule: "layouts/coo.md § Validity Constraints (1)",
                    });
                }
            }
        }
        let entry = |i: usize| {
            indices
                .get(i.saturating_mul(r)..i.saturating_add(1).saturating_mul(r))
                .unwrap_or_default()
        };
        let n = indices.len().checked_div(r).unwrap_or(0);
        if is_sorted {
            for i in 1..n {
                let prev = i.saturating_sub(1);
                match entry(i).cmp(entry(prev)) {
                    std::cmp::Ordering::Greater => {}
                    std::cmp::Ordering::Equal => {
                        return Err(Error::DuplicateCoordinate {
                            first: len64(prev)?,
                            second: len64(i)?,
                        })
                    }
                    std::cmp::Ordering::Less => return Err(Error::CoordinatesNotSorted { position: len64(i)? }),
                }
            }
        } else {
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_unstable_by(|&a, &b| entry(a).cmp(entry(b)).then(a.cmp(&b)));
            for pair in order.windows(2) {
                if let [a, b] = *pair {
                    if entry(a) == entry(b) {
                        return Err(Error::DuplicateCoordinate {
                            first: len64(a.min(b))?,
                            second: len64(a.max(b))?,
                        });
                    }
                }
            }
        }
        Ok(Self {
            shape: shape.to_vec(),
            nnz,
            is_sorted,
            values,
            indices,
        })
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.nnz
    }

    /// The descriptor (layout `0x06`, 2 buffers sized, default handles).
    ///
    /// # Errors
    /// [`Error::Overflow`] for sizes beyond `u64`.
    pub fn descriptor(&self) -> Result<TensorDescriptor> {
        TensorDescriptor::coo(self.values.element_type(), self.shape.clone(), self.nnz, self.is_sorted)
    }

    /// Sources for `values`, `indices`.
    pub fn buffer_data(&self) -> [BufferData<'a>; 2] {
        [
            BufferData::Bytes(self.values.bytes()),
            BufferData::from_slice(self.indices),
        ]
    }
}

/// One level of a CSF tree: its `pos` and `crd` arrays (`layouts/csf.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsfLevel<'a> {
    /// Pointer array: `n_{L-1} + 1` entries (2 for level 0).
    pub pos: &'a [u64],
    /// Coordinates along dimension `mode_order[L]`: `n_L` entries.
    pub crd: &'a [u64],
}

const POS_NAMES: [&str; 16] = [
    "pos_0", "pos_1", "pos_2", "pos_3", "pos_4", "pos_5", "pos_6", "pos_7", "pos_8", "pos_9", "pos_10", "pos_11",
    "pos_12", "pos_13", "pos_14", "pos_15",
];
const CRD_NAMES: [&str; 16] = [
    "crd_0", "crd_1", "crd_2", "crd_3", "crd_4", "crd_5", "crd_6", "crd_7", "crd_8", "crd_9", "crd_10", "crd_11",
    "crd_12", "crd_13", "crd_14", "crd_15",
];

/// A checked CSF tensor (`layouts/csf.md`).
#[derive(Debug, Clone)]
pub struct Csf<'a> {
    shape: Vec<u64>,
    mode_order: Vec<u32>,
    values: Values<'a>,
    levels: Vec<CsfLevel<'a>>,
}

impl<'a> Csf<'a> {
    /// A CSF tensor of rank >= 3 with one `(pos, crd)` pair per level, outer
    /// level first; `values` holds one element per leaf.
    ///
    /// # Errors
    /// - [`Error::RankNotAllowed`]: rank below 3 (§ Description) or above 64;
    /// - [`Error::FieldLength`]: `mode_order` or `levels` not of length `rank`;
    /// - [`Error::ModeOrderNotPermutation`] (§ Mode Ordering);
    /// - [`Error::PointerLength`]: `pos_L` not `n_{L-1} + 1` long (§ Buffer Table);
    /// - [`Error::PointerStart`] (§ Storage Invariants (1)),
    ///   [`Error::PointerDecreasing`] (2), [`Error::PointerEnd`] (3; and
    ///   `pos_0 = [0, 0]` when `values` is empty);
    /// - [`Error::IndicesNotIncreasing`]: siblings unsorted or repeated (4);
    /// - [`Error::IndexOutOfBounds`]: `crd_L[i] >= shape[mode_order[L]]` (5);
    /// - [`Error::ValueCount`]: `values` count differs from the leaf count.
    pub fn new(
        shape: &[u64],
        mode_order: &[u32],
        values: impl Into<Values<'a>>,
        levels: &[CsfLevel<'a>],
    ) -> Result<Self> {
        const TABLE: &str = "layouts/csf.md § Buffer Table";
        const FIELDS: &str = "layouts/csf.md § Additional Descriptor Fields";
        let values = values.into();
        let rank = len64(shape.len())?;
        if !(3..=MAX_RANK).contains(&rank) {
            return Err(Error::RankNotAllowed {
                layout: "csf",
                rank,
                rule: "layouts/csf.md § Description: rank >= 3",
            });
        }
        let order_len = len64(mode_order.len())?;
        if order_len != rank {
            return Err(Error::FieldLength {
                what: "mode_order",
                expected: rank,
                actual: order_len,
                rule: FIELDS,
            });
        }
        check_permutation(mode_order)?;
        let level_count = len64(levels.len())?;
        if level_count != rank {
            return Err(Error::FieldLength {
                what: "levels (pos/crd pairs)",
                expected: rank,
                actual: level_count,
                rule: TABLE,
            });
        }
        let mut parents = 1u64;
        for (l, (level, &dim)) in levels.iter().zip(mode_order).enumerate() {
            let pos_name = POS_NAMES.get(l).copied().unwrap_or("pos_L");
            let crd_name = CRD_NAMES.get(l).copied().unwrap_or("crd_L");
            let n = len64(level.crd.len())?;
            let pos_len = parents.checked_add(1).ok_or(Error::overflow("pos length"))?;
            check_pointer(
                level.pos,
                pos_len,
                n,
                pos_name,
                TABLE,
                "layouts/csf.md § Storage Invariants (1)",
                "layouts/csf.md § Storage Invariants (3)",
                "layouts/csf.md § Storage Invariants (2)",
            )?;
            let bound = usize::try_from(dim)
                .ok()
                .and_then(|d| shape.get(d).copied())
                .unwrap_or(0);
            check_slices(
                level.pos,
                level.crd,
                bound,
                crd_name,
                "layouts/csf.md § Storage Invariants (4)",
                "layouts/csf.md § Storage Invariants (5)",
            )?;
            parents = n;
        }
        // An empty tensor has no nodes at any level: `pos_0 = [0, 0]`
        // (§ Storage Invariants, empty tensor; the levels below follow).
        if values.count() == 0 {
            if let Some(&n0) = levels.first().and_then(|l| l.pos.get(1)).filter(|&&n| n != 0) {
                return Err(Error::PointerEnd {
                    array: "pos_0",
                    position: 1,
                    value: n0,
                    expected: 0,
                    rule: "layouts/csf.md § Storage Invariants: an empty tensor (nnz = 0) has pos_0 = [0, 0]",
                });
            }
        }
        if values.count() != parents {
            return Err(Error::ValueCount {
                what: "values (one per leaf crd entry)",
                expected: parents,
                actual: values.count(),
                rule: "layouts/csf.md § Storage Invariants (3): n_{rank-1} = nnz",
            });
        }
        Ok(Self {
            shape: shape.to_vec(),
            mode_order: mode_order.to_vec(),
            values,
            levels: levels.to_vec(),
        })
    }

    /// Number of stored elements.
    pub fn nnz(&self) -> u64 {
        self.values.count()
    }

    /// The descriptor (layout `0x09`, `2 × rank + 1` buffers sized).
    ///
    /// # Errors
    /// [`Error::Overflow`] for sizes beyond `u64`.
    pub fn descriptor(&self) -> Result<TensorDescriptor> {
        let counts = self
            .levels
            .iter()
            .map(|l| len64(l.crd.len()))
            .collect::<Result<Vec<u64>>>()?;
        TensorDescriptor::csf(
            self.values.element_type(),
            self.shape.clone(),
            self.mode_order.clone(),
            &counts,
        )
    }

    /// Sources for `values`, then `pos_L`, `crd_L` per level.
    pub fn buffer_data(&self) -> Vec<BufferData<'a>> {
        let mut out = vec![BufferData::Bytes(self.values.bytes())];
        for level in &self.levels {
            out.push(BufferData::from_slice(level.pos));
            out.push(BufferData::from_slice(level.crd));
        }
        out
    }
}

/// A checked contiguous dense tensor (row- or column-major).
#[derive(Debug, Clone)]
pub struct Dense<'a> {
    layout: Layout,
    shape: Vec<u64>,
    values: Values<'a>,
}

impl<'a> Dense<'a> {
    /// A row-major tensor; `values` holds `product(shape)` elements (one for
    /// a scalar, `shape = []`).
    ///
    /// # Errors
    /// [`Error::ValueCount`] when the element count differs,
    /// [`Error::Overflow`] for an overflowing shape product.
    pub fn row_major(shape: &[u64], values: impl Into<Values<'a>>) -> Result<Self> {
        Self::new(
            Layout::RowMajor,
            shape,
            values.into(),
            "layouts/row-major.md § Buffer Size",
        )
    }

    /// A column-major tensor (first dimension fastest); `values` holds
    /// `product(shape)` elements in storage order.
    ///
    /// # Errors
    /// As [`Dense::row_major`].
    pub fn column_major(shape: &[u64], values: impl Into<Values<'a>>) -> Result<Self> {
        Self::new(
            Layout::ColumnMajor,
            shape,
            values.into(),
            "layouts/column-major.md § Buffer Size",
        )
    }

    fn new(layout: Layout, shape: &[u64], values: Values<'a>, rule: &'static str) -> Result<Self> {
        let expected = product(shape, "element count")?;
        if values.count() != expected {
            return Err(Error::ValueCount {
                what: "values (product of shape)",
                expected,
                actual: values.count(),
                rule,
            });
        }
        Ok(Self {
            layout,
            shape: shape.to_vec(),
            values,
        })
    }

    /// The descriptor (one buffer of the packed size).
    ///
    /// # Errors
    /// [`Error::Overflow`] for sizes beyond `u64`.
    pub fn descriptor(&self) -> Result<TensorDescriptor> {
        match self.layout {
            Layout::ColumnMajor => TensorDescriptor::column_major(self.values.element_type(), self.shape.clone()),
            _ => TensorDescriptor::row_major(self.values.element_type(), self.shape.clone()),
        }
    }

    /// The single data source.
    pub fn buffer_data(&self) -> [BufferData<'a>; 1] {
        [BufferData::Bytes(self.values.bytes())]
    }
}

impl<S: Sink> FileWriter<S> {
    /// Writes a checked CSC matrix with default buffer handles.
    ///
    /// # Errors
    /// As [`FileWriter::write_tensor`].
    pub fn write_csc(&mut self, name: &str, csc: &Csc<'_>) -> Result<()> {
        let d = csc.descriptor()?;
        self.write_tensor(name, &d, csc.buffer_data())
    }

    /// Writes a checked CSR matrix with default buffer handles.
    ///
    /// # Errors
    /// As [`FileWriter::write_tensor`].
    pub fn write_csr(&mut self, name: &str, csr: &Csr<'_>) -> Result<()> {
        let d = csr.descriptor()?;
        self.write_tensor(name, &d, csr.buffer_data())
    }

    /// Writes a checked COO tensor with default buffer handles.
    ///
    /// # Errors
    /// As [`FileWriter::write_tensor`].
    pub fn write_coo(&mut self, name: &str, coo: &Coo<'_>) -> Result<()> {
        let d = coo.descriptor()?;
        self.write_tensor(name, &d, coo.buffer_data())
    }

    /// Writes a checked CSF tensor with default buffer handles.
    ///
    /// # Errors
    /// As [`FileWriter::write_tensor`].
    pub fn write_csf(&mut self, name: &str, csf: &Csf<'_>) -> Result<()> {
        let d = csf.descriptor()?;
        self.write_tensor(name, &d, csf.buffer_data())
    }

    /// Writes a checked dense tensor with a default buffer handle.
    ///
    /// # Errors
    /// As [`FileWriter::write_tensor`].
    pub fn write_dense(&mut self, name: &str, dense: &Dense<'_>) -> Result<()> {
        let d = dense.descriptor()?;
        self.write_tensor(name, &d, dense.buffer_data())
    }
}
