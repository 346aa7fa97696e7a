//! `--head N`, `--column J`, `--row I`: a list of entries, each with its
//! coordinates, its position and its value. `--head` collects at most
//! [`MAX_LISTED`]; a column or a row is read as it is written.

use std::borrow::Cow;
use std::ops::Range;

use hurray_reader::{logical_indices, shown_name, Buffer, HurrayFile, Layout, Tensor, Value};

use crate::report::failure::{internal, to_u64, unsupported, value_at, Failure, Result};
use crate::report::header::Header;
use crate::shown::shape_text;

/// The order entries are listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// CSC: column by column, rows ascending within a column.
    Column,
    /// CSR: row by row.
    Row,
    /// COO: the order of the `indices` buffer.
    Storage,
    /// CSF: leaf order of the tree.
    Leaf,
    /// Dense: logical row-major order (last index fastest).
    Logical,
}

impl Order {
    pub fn as_str(self) -> &'static str {
        match self {
            Order::Column => "column",
            Order::Row => "row",
            Order::Storage => "storage",
            Order::Leaf => "leaf",
            Order::Logical => "logical",
        }
    }
}

/// Most entries `--head` lists: they are collected before printing (~100
/// bytes each); `--column`, `--row` and `--dump` stream any number.
pub const MAX_LISTED: u64 = 1 << 20;

/// One element: its logical coordinates, its position in buffer 0 and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub index: Vec<u64>,
    /// Element position in buffer 0 (`values` for sparse layouts).
    pub position: u64,
    pub value: Value,
    /// For a quantized tensor listed by `--head`, the real value
    /// (`Tensor::dequantize`).
    pub dequantized: Option<f64>,
}

/// The axis of a slice: a column of a CSC matrix or a row of a CSR one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Column,
    Row,
}

impl Axis {
    /// `column` or `row`.
    pub fn as_str(self) -> &'static str {
        match self {
            Axis::Column => "column",
            Axis::Row => "row",
        }
    }
}

/// `--column J` / `--row I`: which slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    /// `column` or `row`.
    pub axis: Axis,
    pub index: u64,
    /// Positions of its entries in the values and index buffers.
    pub positions: Range<u64>,
}

/// The entries a command lists.
#[derive(Debug, Clone)]
pub enum Listed<'data> {
    /// `--head N`: collected (at most [`MAX_LISTED`]).
    Collected(Vec<Entry>),
    /// `--column J` / `--row I`: read from the mapping as they are printed,
    /// so a column of any length is listed in constant memory.
    Slice {
        /// The slice's row indices (CSC) or column indices (CSR), checked
        /// increasing and in bounds by the library's lookup.
        inner: &'data [u64],
        /// The values buffer; its elements `first..first + inner.len()`
        /// were checked to decode.
        values: Buffer<'data>,
        /// Position of `inner[0]` in `values`.
        first: u64,
        /// The column (CSC) or row (CSR) index, and which of the two.
        index: u64,
        axis: Axis,
        /// The tensor, when it is quantized: each entry's dequantized value.
        quantized: Option<Box<Tensor<'data>>>,
    },
}

impl Listed<'_> {
    /// How many entries are listed.
    pub fn len(&self) -> usize {
        match self {
            Listed::Collected(entries) => entries.len(),
            Listed::Slice { inner, .. } => inner.len(),
        }
    }

    /// Entry `k` of the list: borrowed when collected, read when a slice.
    fn get(&self, k: usize) -> Option<Cow<'_, Entry>> {
        match *self {
            Listed::Collected(ref entries) => entries.get(k).map(Cow::Borrowed),
            Listed::Slice {
                inner,
                values,
                first,
                index,
                axis,
                ref quantized,
            } => {
                let i = *inner.get(k)?;
                let position = first.checked_add(to_u64(k))?;
                let index = slice_coordinates(i, index, axis);
                let value = values.value(position)?;
                // The parameters were checked at open; a failure here
                // would be the library's, and shows as no value.
                let dequantized = quantized.as_ref().and_then(|t| t.dequantize(&index, value).ok());
                Some(Cow::Owned(Entry {
                    index,
                    position,
                    value,
                    dequantized,
                }))
            }
        }
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = Cow<'_, Entry>> + '_ {
        (0..self.len()).map_while(|k| self.get(k))
    }

    /// The coordinates among which the widest printed ones are: every
    /// collected entry's, or a slice's last (its inner indices increase, so
    /// each has at least the digits of the one before).
    pub fn widest_candidates(&self) -> impl Iterator<Item = Cow<'_, [u64]>> + '_ {
        let (collected, last) = match *self {
            Listed::Collected(ref entries) => (entries.as_slice(), None),
            Listed::Slice { inner, index, axis, .. } => {
                (&[][..], inner.last().map(|&i| slice_coordinates(i, index, axis)))
            }
        };
        collected
            .iter()
            .map(|e| Cow::Borrowed(e.index.as_slice()))
            .chain(last.map(Cow::Owned))
    }
}

/// `[i, j]` of entry `inner` in column `index` (`column`) or row `index`.
fn slice_coordinates(inner: u64, index: u64, axis: Axis) -> Vec<u64> {
    match axis {
        Axis::Column => vec![inner, index],
        Axis::Row => vec![index, inner],
    }
}

/// `--head N`, `--column J`, `--row I`: a list of entries.
#[derive(Debug, Clone)]
pub struct Entries<'data> {
    pub header: Header<'data>,
    pub order: Order,
    pub entries: Listed<'data>,
    /// Stored entries (sparse) or elements (dense) of the whole tensor.
    pub total: u64,
    /// Set for `--column` and `--row`.
    pub slice: Option<Slice>,
}

/// The pointer and index arrays of a CSC or CSR matrix, with the library's
/// checked range of one outer slice (column or row).
struct Compressed<'a, 'data> {
    ptr: &'data [u64],
    idx: &'data [u64],
    outer_len: u64,
    inner_len: u64,
    nnz: u64,
    checked_range: &'a dyn Fn(u64) -> hurray_reader::Result<Range<usize>>,
    /// The library's check of the whole pointer array (invariants 1 and 2).
    check_pointers: &'a dyn Fn() -> hurray_reader::Result<()>,
}

impl Compressed<'_, '_> {
    /// Positions of outer slice `j`, of which only the first `take` are
    /// read. Fast path: reads `ptr[j]`, `ptr[j + 1]` and those `take`
    /// indices, and checks them as the library would (first pointer 0,
    /// last pointer nnz, pointers ordered, the indices read increasing and
    /// in bounds). Whenever something looks wrong, or could not be read,
    /// the library's checked range decides (and names the problem).
    fn range(&self, j: u64, take: u64) -> hurray_reader::Result<Range<usize>> {
        let at = |i: u64| usize::try_from(i).ok().and_then(|i| self.ptr.get(i)).copied();
        let fast = (|| {
            let (start, end) = (at(j)?, at(j.checked_add(1)?)?);
            let last = j.checked_add(1)? == self.outer_len;
            let plausible = start <= end && end <= self.nnz && (j != 0 || start == 0) && (!last || end == self.nnz);
            if !plausible {
                return None;
            }
            let start = usize::try_from(start).ok()?;
            let end = usize::try_from(end).ok()?;
            let read_end = start
                .saturating_add(usize::try_from(take).unwrap_or(usize::MAX))
                .min(end);
            let read = self.idx.get(start..read_end)?;
            let ordered = read.windows(2).all(|w| matches!(w, [a, b] if a < b));
            let in_bounds = read.iter().all(|&i| i < self.inner_len);
            (ordered && in_bounds).then_some(start..end)
        })();
        match fast {
            Some(range) => Ok(range),
            None => (self.checked_range)(j),
        }
    }

    /// The first `n` stored entries, slice by slice; `transpose` puts the
    /// outer index second (CSC: `(row, col)`).
    fn head(&self, t: &Tensor<'_>, values: &Buffer<'_>, n: u64, transpose: bool) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        let mut j = 0u64;
        while to_u64(out.len()) < n && j < self.outer_len {
            let remaining = n.saturating_sub(to_u64(out.len()));
            let range = self.range(j, remaining)?;
            for p in range.take(usize::try_from(remaining).unwrap_or(usize::MAX)) {
                let inner = *self
                    .idx
                    .get(p)
                    .ok_or_else(|| internal(t, &format!("index {p} cannot be read")))?;
                let index = if transpose { vec![inner, j] } else { vec![j, inner] };
                out.push(Entry {
                    index,
                    position: to_u64(p),
                    value: value_at(t, values, to_u64(p))?,
                    dequantized: None,
                });
            }
            j = j.saturating_add(1);
        }
        // A complete listing ("N of N") vouches for every slice, the empty
        // ones after the last entry included: check all the pointers.
        if to_u64(out.len()) >= self.nnz {
            (self.check_pointers)()?;
        }
        Ok(out)
    }
}

/// `--head N`: the first `n` stored entries (dense: elements in logical
/// row-major order). Reads O(n) elements, plus the pointers walked past
/// empty columns or rows; CSF lists its leaves through the library's
/// `entries()`, which scans the whole tree. What is listed is checked
/// first (the pointers walked, and the `n` entries among themselves:
/// in bounds, and in order, or for unsorted COO without duplicates), so a
/// damaged file gives an error, not a wrong list.
///
/// # Errors
/// The library's error for damaged data on the way; [`Failure::Usage`] for a
/// layout without entries (block-paged, composite head).
pub fn head<'data>(file: &HurrayFile<'data>, t: &Tensor<'data>, n: u64) -> Result<Entries<'data>> {
    let header = Header::of(t);
    let (order, mut entries, total) = match t.layout() {
        Layout::Csc => {
            let s = t.csc_structure()?;
            let range = |j| s.column_range(j);
            let pointers = || s.validate_pointers();
            let c = Compressed {
                ptr: s.col_ptr(),
                idx: s.row_indices(),
                outer_len: s.ncols(),
                inner_len: s.nrows(),
                nnz: s.nnz(),
                checked_range: &range,
                check_pointers: &pointers,
            };
            (Order::Column, c.head(t, t.buffer(0)?, n, true)?, s.nnz())
        }
        Layout::Csr => {
            let s = t.csr_structure()?;
            let range = |i| s.row_range(i);
            let pointers = || s.validate_pointers();
            let c = Compressed {
                ptr: s.row_ptr(),
                idx: s.col_indices(),
                outer_len: s.nrows(),
                inner_len: s.ncols(),
                nnz: s.nnz(),
                checked_range: &range,
                check_pointers: &pointers,
            };
            (Order::Row, c.head(t, t.buffer(0)?, n, false)?, s.nnz())
        }
        Layout::Coo => {
            let s = t.coo_structure()?;
            s.validate_prefix(n)?;
            let values = t.buffer(0)?;
            let mut entries = Vec::new();
            for i in 0..n.min(s.nnz()) {
                let coords = s
                    .coordinates(i)
                    .ok_or_else(|| internal(t, &format!("coordinates of entry {i} cannot be read")))?;
                entries.push(Entry {
                    index: coords.to_vec(),
                    position: i,
                    value: value_at(t, values, i)?,
                    dequantized: None,
                });
            }
            (Order::Storage, entries, s.nnz())
        }
        Layout::Csf => {
            let s = t.csf_structure()?;
            let values = t.buffer(0)?;
            let mut entries = Vec::new();
            for (index, leaf) in s.entries()?.take(usize::try_from(n).unwrap_or(usize::MAX)) {
                entries.push(Entry {
                    index,
                    position: leaf,
                    value: value_at(t, values, leaf)?,
                    dequantized: None,
                });
            }
            (Order::Leaf, entries, s.nnz())
        }
        l if l.is_dense() => {
            let addressing = t.addressing()?;
            let values = t.buffer(0)?;
            let total = t.element_count()?;
            let mut entries = Vec::new();
            for index in logical_indices(addressing.shape()).take(usize::try_from(n).unwrap_or(usize::MAX)) {
                let position = addressing.position(&index)?;
                let value = value_at(t, values, position)?;
                entries.push(Entry {
                    index,
                    position,
                    value,
                    dequantized: None,
                });
            }
            (Order::Logical, entries, total)
        }
        _ => return Err(unsupported(t, file, "--head")),
    };
    if t.descriptor().quantization().is_some() {
        for entry in &mut entries {
            entry.dequantized = Some(t.dequantize(&entry.index, entry.value)?);
        }
    }
    Ok(Entries {
        header,
        order,
        entries: Listed::Collected(entries),
        total,
        slice: None,
    })
}

/// `--column J` (CSC) or `--row I` (CSR): the stored entries of one slice,
/// all of them, read as they are printed.
///
/// # Errors
/// [`Failure::Usage`] for the other layouts and an index out of range; the
/// library's error for a damaged slice.
pub fn slice<'data>(t: &Tensor<'data>, axis: Axis, index: u64) -> Result<Entries<'data>> {
    let kind = axis.as_str();
    let header = Header::of(t);
    let name = shown_name(t.name());
    let (wanted, instead, shape_dim) = match axis {
        Axis::Column => (Layout::Csc, "--row I", 1),
        Axis::Row => (Layout::Csr, "--column J", 0),
    };
    if t.layout() != wanted {
        let hint = match t.layout() {
            Layout::Csc | Layout::Csr => format!("use {instead}, --head or --get"),
            _ => "use --head or --get".to_owned(),
        };
        return Err(Failure::Usage(format!(
            "--{kind} reads a {wanted} matrix; tensor '{name}' is {}: {hint}",
            t.layout(),
        )));
    }
    let bound = header.shape.get(shape_dim).copied().unwrap_or(0);
    if index >= bound {
        let allowed = if bound == 0 {
            "none to read".to_owned()
        } else {
            format!("must be < {bound}")
        };
        return Err(Failure::Usage(format!(
            "--{kind} {index}: tensor '{name}' of shape {} has {bound} {kind}s ({allowed})",
            shape_text(&header.shape),
        )));
    }
    let values = t.buffer(0)?;
    let (order, range, inner) = if axis == Axis::Column {
        let s = t.csc_structure()?;
        (Order::Column, s.column_range(index)?, s.row_indices())
    } else {
        let s = t.csr_structure()?;
        (Order::Row, s.row_range(index)?, s.col_indices())
    };
    let inner = inner
        .get(range.clone())
        .ok_or_else(|| internal(t, &format!("indices {}..{} cannot be read", range.start, range.end)))?;
    // The last element decodes, so every element before it does.
    if let Some(last) = range.clone().next_back() {
        value_at(t, values, to_u64(last))?;
    }
    let entries = Listed::Slice {
        inner,
        values: *values,
        first: to_u64(range.start),
        index,
        axis,
        quantized: t.descriptor().quantization().map(|_| Box::new(t.clone())),
    };
    Ok(Entries {
        total: header.nnz.unwrap_or(0),
        header,
        order,
        entries,
        slice: Some(Slice {
            axis,
            index,
            positions: to_u64(range.start)..to_u64(range.end),
        }),
    })
}
