//! What the per-tensor commands (`--tensor`, `--head`, `--get`, `--column`,
//! `--row`) report, gathered from the library and rendered by `human` and
//! `json`. Every value, index and offset comes from a `hurray_reader`
//! accessor; this module only picks which ones to read, and reads no more
//! than it shows.

use std::borrow::Cow;
use std::ops::Range;

use hurray_reader::{
    logical_indices, shown_name, AnnotatedField, Buffer, BufferRole, Descriptor, ElementType, Error, HurrayFile,
    IndexEntry, Layout, Tensor, Value,
};

/// Why a command could not print what was asked.
#[derive(Debug)]
pub enum Failure {
    /// The file breaks a rule (exit 1).
    File(Error),
    /// The request does not fit the file (exit 2): unknown tensor, wrong
    /// layout for the command, coordinates outside the shape.
    Usage(String),
    /// The library handed out less than its own checks promise (exit 1).
    Internal(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::File(e)
    }
}

type Result<T> = std::result::Result<T, Failure>;

/// The tensor the per-tensor commands act on: the one named by `--tensor`,
/// or the file's only tensor.
///
/// # Errors
/// [`Failure::Usage`] when the name is unknown (or a cut name matches
/// several tensors), or when none is given and the file does not hold
/// exactly one tensor.
pub fn pick_tensor<'data>(file: &HurrayFile<'data>, name: Option<&str>, flag: &str) -> Result<&'data str> {
    let names = || {
        const SHOWN: usize = 8;
        let mut shown: Vec<String> = file
            .entries()
            .iter()
            .take(SHOWN)
            .map(|e| shown_name(e.name()))
            .collect();
        if file.len() > SHOWN {
            shown.push(format!("... ({} in all)", file.len()));
        }
        shown.join(", ")
    };
    // A name as the tool prints it (escaped: `a\0b`) finds the tensor too,
    // since a command line cannot carry a NUL or other control bytes.
    let printed = |name: &str| {
        file.entries()
            .iter()
            .find(|e| e.name().escape_debug().eq(name.chars()))
            .map(IndexEntry::name)
    };
    // A long name as the summary table or an error line cuts it
    // (`abc...`, `abc... (200 bytes)`) finds its tensor when no other is
    // cut the same way.
    let cut = |name: &str| -> Vec<&'data str> {
        if !name.contains("...") {
            return Vec::new();
        }
        file.entries()
            .iter()
            .filter(|e| crate::human::display_name(e.name()) == name || shown_name(e.name()) == name)
            .map(IndexEntry::name)
            .take(2)
            .collect()
    };
    match name {
        Some(name) => {
            if let Some(found) = file.entry(name).map(IndexEntry::name).or_else(|| printed(name)) {
                return Ok(found);
            }
            let cut = cut(name);
            let message = match cut[..] {
                [only] => return Ok(only),
                [] if file.is_empty() => format!("no tensor named '{}': the file holds no tensors", shown_name(name)),
                [] => format!(
                    "no tensor named '{}' in the index; it holds: {}",
                    shown_name(name),
                    names()
                ),
                _ => format!(
                    "--tensor '{}' is how several tensor names print cut; give the whole name, \
                     or the longer cut of an error line (64 characters and the name's size): {}",
                    shown_name(name),
                    names()
                ),
            };
            Err(Failure::Usage(message))
        }
        None => match file.entries() {
            [only] => Ok(only.name()),
            [] => Err(Failure::Usage(format!(
                "{flag} needs a tensor, and the file holds none"
            ))),
            _ => Err(Failure::Usage(format!(
                "{flag} needs --tensor NAME: the file holds {} tensors ({})",
                file.len(),
                names()
            ))),
        },
    }
}

/// The facts that head every per-tensor output.
#[derive(Debug, Clone)]
pub struct Header<'data> {
    pub name: &'data str,
    /// `None` for an unknown type tag kept in permissive mode.
    pub dtype: Option<ElementType>,
    pub layout: Layout,
    pub shape: Vec<u64>,
    /// Sparse layouts only.
    pub nnz: Option<u64>,
    /// The descriptor's `type_tag` (named when `dtype` is `None`).
    pub type_tag: u8,
}

impl<'data> Header<'data> {
    /// The element type's name, `unknown(0x..)` for an unknown tag.
    pub fn dtype_name(&self) -> String {
        crate::model::dtype_name(self.dtype, self.type_tag)
    }

    /// What a descriptor says (also on its own, when its tensor did not
    /// resolve).
    pub fn of_descriptor(name: &'data str, d: &Descriptor<'data>) -> Self {
        Header {
            name,
            dtype: d.element_type(),
            layout: d.layout(),
            shape: d.shape().collect(),
            nnz: d.layout_fields().nnz(),
            type_tag: d.header().type_tag,
        }
    }

    pub fn of(t: &Tensor<'data>) -> Self {
        Self::of_descriptor(t.name(), t.descriptor())
    }
}

/// One buffer of a resolved tensor.
#[derive(Debug, Clone, Copy)]
pub struct BufferDetail {
    pub index: u8,
    pub role: BufferRole,
    /// `None` when the layout or type is unknown.
    pub element_type: Option<ElementType>,
    /// Elements the layout says the buffer holds; `None` when its element
    /// type is unknown.
    pub count: Option<u64>,
    /// Absolute offset of the first byte.
    pub offset: u64,
    pub byte_size: u64,
    pub alignment: u64,
}

impl BufferDetail {
    fn of(b: &Buffer<'_>) -> Self {
        BufferDetail {
            index: b.index(),
            role: b.role(),
            element_type: b.element_type(),
            count: b.element_type().map(|_| b.len()),
            offset: b.file_offset(),
            byte_size: b.byte_size(),
            alignment: b.alignment(),
        }
    }

    /// One past the last byte (saturating; the library checked the range).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.byte_size)
    }
}

/// `--tensor NAME`: the index entry, the descriptor field by field, the
/// buffers, and with `--validate` the verdict on the data.
#[derive(Debug)]
pub struct TensorDetail<'data> {
    pub entry: IndexEntry<'data>,
    /// Every descriptor field read, in file order, up to the first problem.
    pub fields: Vec<AnnotatedField<'data>>,
    /// What the descriptor says; `None` when it is invalid (see `error`).
    pub header: Option<Header<'data>>,
    /// The tensor resolved: its buffers were located and checked (else
    /// `error` says why).
    pub resolved: bool,
    /// `None` when the buffers were not located: the tensor did not
    /// resolve, or its layout is unknown (permissive) and hides the table.
    pub buffers: Option<Vec<BufferDetail>>,
    /// Why the data is not interpreted (composite head, unknown tag, ...).
    pub not_viewable: Option<&'static str>,
    /// A composite head's direct members.
    pub members: Vec<&'data str>,
    /// The descriptor's first problem.
    pub error: Option<Error>,
    /// Strict mode (the default) or permissive.
    pub strict: bool,
    /// Whether `--validate` was given (the data check runs when the
    /// descriptor is valid).
    pub validated: bool,
    /// The data check's first problem.
    pub data_error: Option<Error>,
    /// With `--validate`: what the library accepted but reports
    /// (`crate::model::warnings`).
    pub warnings: Vec<String>,
}

impl TensorDetail<'_> {
    /// What makes the exit status 1.
    pub fn first_error(&self) -> Option<&Error> {
        self.error.as_ref().or(self.data_error.as_ref())
    }
}

/// Reads tensor `name`'s descriptor field by field; with `validate`, runs
/// the tensor's data checks, reporting `progress(done, total)` in bytes.
///
/// # Errors
/// [`Failure::Usage`] for an unknown name.
pub fn detail<'data>(
    file: &HurrayFile<'data>,
    name: &str,
    validate: bool,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<TensorDetail<'data>> {
    let dump = file.dump_descriptor(name).map_err(|e| match e {
        Error::NotFound { .. } => Failure::Usage(e.to_string()),
        other => Failure::File(other),
    })?;
    let mut detail = TensorDetail {
        entry: dump.entry,
        fields: dump.fields,
        header: dump
            .descriptor
            .as_ref()
            .map(|d| Header::of_descriptor(dump.entry.name(), d)),
        resolved: false,
        buffers: None,
        not_viewable: None,
        members: Vec::new(),
        error: dump.error,
        strict: file.options().is_strict(),
        validated: validate,
        data_error: None,
        warnings: Vec::new(),
    };
    if let Some(t) = dump.tensor {
        detail.resolved = true;
        detail.buffers = crate::model::located_buffers(&t).map(|b| b.iter().map(BufferDetail::of).collect());
        detail.not_viewable = t.not_viewable();
        detail.members = t
            .composite_members()
            .iter()
            .filter_map(|&p| file.entries().get(p).map(IndexEntry::name))
            .collect();
        if validate {
            detail.data_error = t.validate_data_with_progress(progress).err();
            detail.warnings = crate::model::warnings(&t);
        }
    }
    Ok(detail)
}

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

/// `--get`: one element.
#[derive(Debug, Clone)]
pub struct Lookup<'data> {
    pub header: Header<'data>,
    pub index: Vec<u64>,
    /// Position in buffer 0; `None` for a sparse tensor's implicit zero.
    pub position: Option<u64>,
    /// `None` for an implicit zero.
    pub value: Option<Value>,
    /// For a quantized tensor, the real value (`Tensor::dequantize`).
    pub dequantized: Option<f64>,
}

fn internal(t: &Tensor<'_>, what: &str) -> Failure {
    Failure::Internal(format!(
        "tensor '{}': {what} (the library's checks promised it)",
        shown_name(t.name())
    ))
}

/// Element `p` of buffer 0, decoded.
fn value_at(t: &Tensor<'_>, values: &Buffer<'_>, p: u64) -> Result<Value> {
    values
        .value(p)
        .ok_or_else(|| internal(t, &format!("element {p} of buffer 0 cannot be read")))
}

fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// A request the layout cannot answer, or a composite head (which owns no data).
fn unsupported(t: &Tensor<'_>, file: &HurrayFile<'_>, flag: &str) -> Failure {
    let name = shown_name(t.name());
    if t.layout() == Layout::Composite {
        let members: Vec<String> = t
            .composite_members()
            .iter()
            .filter_map(|&p| file.entries().get(p))
            .map(|e| shown_name(e.name()))
            .collect();
        return Failure::Usage(format!(
            "{flag}: tensor '{name}' is a composite head and owns no data; read its members: {}",
            members.join(", ")
        ));
    }
    Failure::Usage(format!(
        "{flag} reads csc, csr, coo, csf and dense tensors; tensor '{name}' is {} (try --dump)",
        t.layout()
    ))
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

/// `--get`: the element at `index`.
///
/// # Errors
/// [`Failure::Usage`] for coordinates that do not fit the shape or a layout
/// without elements; the library's error for damaged data on the way.
pub fn get<'data>(file: &HurrayFile<'data>, t: &Tensor<'data>, index: &[u64]) -> Result<Lookup<'data>> {
    let header = Header::of(t);
    let name = shown_name(t.name());
    let shape = shape_text(&header.shape);
    if index.len() != header.shape.len() {
        let given = index.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        return Err(Failure::Usage(format!(
            "--get '{}': tensor '{name}' of shape {shape} needs {} comma-separated coordinates, got {}",
            shown_name(&given),
            header.shape.len(),
            index.len()
        )));
    }
    if let Some((k, (&i, &n))) = index.iter().zip(&header.shape).enumerate().find(|(_, (&i, &n))| i >= n) {
        let allowed = if n == 0 {
            format!("dimension {k} is 0: the tensor has no elements")
        } else {
            format!("must be < {n}")
        };
        return Err(Failure::Usage(format!(
            "--get: coordinate {k} is {i}, outside tensor '{name}' of shape {shape} ({allowed})"
        )));
    }
    let stored = |position: Option<u64>| -> Result<(Option<u64>, Option<Value>)> {
        match position {
            Some(p) => Ok((Some(p), Some(value_at(t, t.buffer(0)?, p)?))),
            None => Ok((None, None)),
        }
    };
    let (position, value) = match (t.layout(), index) {
        (Layout::Csc, &[r, c]) => stored(t.csc_structure()?.position(r, c)?.map(to_u64))?,
        (Layout::Csr, &[r, c]) => stored(t.csr_structure()?.position(r, c)?.map(to_u64))?,
        (Layout::Coo, _) => stored(t.coo_structure()?.position(index)?)?,
        (Layout::Csf, _) => stored(t.csf_structure()?.position(index)?)?,
        (l, _) if l.is_dense() => {
            let p = t.addressing()?.position(index)?;
            stored(Some(p))?
        }
        _ => return Err(unsupported(t, file, "--get")),
    };
    // A quantized tensor's real value; an implicit zero's is 0.0
    // (docs/design.md, "Decisions where the spec leaves room").
    let dequantized = match (t.descriptor().quantization(), value) {
        (None, _) => None,
        (Some(_), Some(q)) => Some(t.dequantize(index, q)?),
        (Some(_), None) => Some(0.0),
    };
    Ok(Lookup {
        header,
        index: index.to_vec(),
        position,
        value,
        dequantized,
    })
}

/// `[4, 5]`.
pub fn shape_text(shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(", "))
}
