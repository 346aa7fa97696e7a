//! A tensor resolved from its index entry: the parsed descriptor, every
//! buffer located in the file and checked against what the layout and the
//! element type require ([`resolve`] does that, by the rules of [`rules`]).
//! No data byte is scanned here (two `u64`s at most, for block-paged); the
//! O(data) checks are the views' `validate`.

mod resolve;
mod rules;
mod warnings;

use crate::buffer::{Buffer, BufferRole};
use crate::buffer_protocol::{PageAlignmentShortfall, PAGE_ALIGNMENT};
use crate::cursor::to_u64;
use crate::descriptor::{self, Descriptor, DYNAMIC};
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Location, Result, Scope};
use crate::file::{IndexEntry, Options};
use crate::layout::fields::Layout;
use crate::layout::plan::count;

/// Deepest nesting of composite heads accepted (`layouts/composite.md` § Binding).
pub const MAX_COMPOSITE_DEPTH: usize = 8;

/// A tensor: its index entry, descriptor and located buffers.
///
/// Obtained from [`HurrayFile::tensor`](crate::HurrayFile::tensor). Everything here borrows the file's
/// bytes; nothing proportional to the data is copied.
#[derive(Clone)]
pub struct Tensor<'data> {
    pub(crate) entry: IndexEntry<'data>,
    pub(crate) descriptor: Descriptor<'data>,
    pub(crate) buffers: Vec<Buffer<'data>>,
    pub(crate) options: Options,
    /// Why the data may not be interpreted, if so.
    pub(crate) not_viewable: Option<&'static str>,
    /// Composite head: the index positions of its direct members.
    pub(crate) members: Vec<usize>,
    /// How many tensors after a composite head (in index order) belong to
    /// it, its members' subtrees included; 0 for anything else.
    pub(crate) subtree_len: usize,
}

/// Name, type, layout, shape, nnz, where it lies and its buffers (each
/// with its first few values); arrays cut to their first few entries.
impl std::fmt::Debug for Tensor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::debug::{few, few_of, Text};
        f.debug_struct("Tensor")
            .field("name", &Text(self.entry.name()))
            .field("position", &self.entry.position())
            .field("element_type", &self.descriptor.element_type())
            .field("layout", &self.descriptor.layout())
            .field(
                "shape",
                &few_of(
                    self.descriptor.shape.iter().map(|d| d.get()),
                    self.descriptor.shape.len(),
                ),
            )
            .field("nnz", &self.nnz())
            .field("descriptor_offset", &self.entry.descriptor_offset())
            .field("data_offset", &self.entry.data_offset())
            .field("data_length", &self.entry.data_length())
            .field("buffers", &few_of(self.buffers.iter().map(Brief), self.buffers.len()))
            .field("not_viewable", &self.not_viewable)
            .field("members", &few(&self.members))
            .finish()
    }
}

/// A buffer in one line of a tensor's `Debug`: `values float32 x 5 at 4096`.
struct Brief<'b, 'data>(&'b Buffer<'data>);

impl std::fmt::Debug for Brief<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.0;
        let element_type = b.element_type().map_or("unknown", |t| t.as_str());
        write!(f, "{} {element_type} x {} at {}", b.role(), b.len(), b.file_offset())
    }
}

impl<'data> Tensor<'data> {
    /// The tensor's name.
    pub fn name(&self) -> &'data str {
        self.entry.name()
    }

    /// Its footer index entry.
    pub fn entry(&self) -> &IndexEntry<'data> {
        &self.entry
    }

    /// Its parsed descriptor.
    pub fn descriptor(&self) -> &Descriptor<'data> {
        &self.descriptor
    }

    /// The element type; `None` for an unknown tag kept in permissive mode.
    pub fn element_type(&self) -> Option<ElementType> {
        self.descriptor.element_type
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.descriptor.layout
    }

    /// For a dense tensor, the position of element `[0, …, 0]` in buffer 0,
    /// in elements counted from the buffer's first element, which starts at
    /// byte [`Buffer::element_start`] (`memory-layout.md` § Common Fields › byte_offset,
    /// § Element Address Computation): `byte_offset = element_start +
    /// element_origin × w` for elements of `w` bytes; for 6-bit types
    /// `element_origin` counts 4 per 3-byte group, for 1-, 2- and 4-bit
    /// types 8, 4 and 2 per byte. This is where
    /// [`Addressing::position`](crate::Addressing::position) starts.
    /// `None` for another layout or an unknown element type.
    pub fn element_origin(&self) -> Option<u64> {
        let t = self.descriptor.element_type?;
        if !self.descriptor.layout.is_dense() {
            return None;
        }
        crate::layout::storage::element_origin(t, self.descriptor.byte_offset).map(|o| o.elements)
    }

    /// Number of dimensions.
    pub fn rank(&self) -> u32 {
        self.descriptor.rank()
    }

    /// The shape, `rank` entries, read from the descriptor as they are
    /// needed: the file stores them as little-endian `u64`s at any
    /// alignment, so no `&[u64]` can borrow them. `shape().collect::<Vec<_>>()`
    /// makes a copy; CSC and CSR views also have `nrows()` and `ncols()`.
    pub fn shape(&self) -> impl ExactSizeIterator<Item = u64> + 'data {
        self.descriptor.shape()
    }

    /// Stored elements of a sparse tensor (COO, CSR, CSC, CSF).
    pub fn nnz(&self) -> Option<u64> {
        self.descriptor.layout_fields.nnz()
    }

    /// The located buffers, in buffer-table order.
    pub fn buffers(&self) -> &[Buffer<'data>] {
        &self.buffers
    }

    /// Buffer `i` of the buffer table.
    ///
    /// # Errors
    /// [`Error::IndexArgument`] past the last buffer.
    pub fn buffer(&self, i: usize) -> Result<&Buffer<'data>> {
        self.buffers.get(i).ok_or_else(|| Error::IndexArgument {
            tensor: self.name().into(),
            what: "buffer",
            index: to_u64(i),
            bound: to_u64(self.buffers.len()),
        })
    }

    /// The quantization scales (`quantization.md`): one per channel, block or
    /// group, of the scheme's scale type (float32 for per-channel affine and
    /// NF4, the tagged type for per-block affine, float8_e8m0 for MXFP), as
    /// a buffer of role [`BufferRole::Scales`] borrowing the file. When the
    /// scales share one buffer with the zero points (`[scales |
    /// zero_points]`, § Buffer Table Placement Rules) this is its first
    /// part: [`file_offset`](Buffer::file_offset),
    /// [`byte_size`](Buffer::byte_size) and [`bytes`](Buffer::bytes) are the
    /// part's, [`index`](Buffer::index) and [`handle`](Buffer::handle) the
    /// shared buffer's. `None` without a scale array (not quantized, per-tensor affine
    /// whose scale is in the descriptor, an unknown scheme or scale type).
    pub fn scales(&self) -> Option<Buffer<'data>> {
        self.quantization_array(BufferRole::Scales)
    }

    /// The quantization zero points: `int32`, as many as
    /// [`scales`](Self::scales), role [`BufferRole::ZeroPoints`]; the second
    /// part of a shared `[scales | zero_points]` buffer. `None` for a
    /// symmetric scheme (no zero points) and where `scales` is `None`.
    pub fn zero_points(&self) -> Option<Buffer<'data>> {
        self.quantization_array(BufferRole::ZeroPoints)
    }

    /// The buffer of `role` (scales or zero points), or that part of the
    /// shared buffer: scales from byte 0, zero points after them.
    fn quantization_array(&self, role: BufferRole) -> Option<Buffer<'data>> {
        if let Some(b) = self.buffers.iter().find(|b| b.role == role) {
            return Some(*b);
        }
        let shared = self
            .buffers
            .iter()
            .find(|b| b.role == BufferRole::ScalesAndZeroPoints)?;
        let scale_type = crate::quantization::plans::scale_type(&self.descriptor)?;
        let scale_bytes = usize::try_from(scale_type.storage_bytes(shared.len)?).ok()?;
        let (element_type, from) = match role {
            BufferRole::Scales => (scale_type, 0),
            _ => (ElementType::Int32, scale_bytes),
        };
        let width = usize::try_from(element_type.storage_bytes(shared.len)?).ok()?;
        let bytes = shared.bytes.get(from..from.checked_add(width)?)?;
        Some(Buffer {
            role,
            file_offset: shared.file_offset.checked_add(to_u64(from))?,
            bytes,
            element_type: Some(element_type),
            ..*shared
        })
    }

    /// Why this tensor's data may not be interpreted (unknown tags in
    /// permissive mode, composite heads, private layouts); `None` when views
    /// are available.
    pub fn not_viewable(&self) -> Option<&'static str> {
        self.not_viewable
    }

    /// A composite head's direct members, as footer index positions.
    pub fn composite_members(&self) -> &[usize] {
        &self.members
    }

    /// The options the file was opened with.
    pub fn options(&self) -> Options {
        self.options
    }

    /// Fails unless views may interpret the data.
    pub(crate) fn ensure_viewable(&self) -> Result<()> {
        match self.not_viewable {
            None => Ok(()),
            Some(why) => Err(Error::NotViewable {
                tensor: self.name().into(),
                why,
            }),
        }
    }

    /// A sparse layout's statistics section gives an `nnz` (its valid bit
    /// set) other than the descriptor's: returns `(statistics nnz,
    /// descriptor nnz)`. Strict mode rejects such a tensor
    /// ([`Error::StatisticsNnzMismatch`]), so this is only ever `Some` in
    /// permissive mode, which uses the descriptor's.
    pub fn statistics_nnz_mismatch(&self) -> Option<(u64, u64)> {
        statistics_nnz_mismatch(&self.descriptor)
    }

    /// The statistics block breaks a field rule of `metadata.md` §
    /// Statistics Section › Field Encoding: `value_stddev` below 0.0 or NaN
    /// with `VALUE_STATS_VALID` set, or `nm_n > nm_m` with
    /// `NM_SPARSITY_VALID` set. Returns the error strict mode gives
    /// ([`Error::InvalidNumber`] naming `statistics.value_stddev`,
    /// [`Error::Invalid`] naming `statistics.nm_n`), so this is only ever
    /// `Some` in permissive mode, which keeps the (advisory) block. A field
    /// whose `computed_mask` bit is clear is unknown and never checked.
    pub fn statistics_rule_violation(&self) -> Option<Error> {
        let stats = self.descriptor.statistics?;
        descriptor::statistics::statistics_value_violation(stats, self.descriptor.offsets.statistics, self.name())
    }

    /// A non-empty buffer on a device other than the CPU declares an
    /// `alignment` below 4096: the first such buffer. `buffer-protocol.md` §
    /// Alignment › Page Alignment for GPU and IPC requires at least 4096 of
    /// a writer *targeting* GPU or IPC transport, which a reader cannot
    /// know, so this is reported, never fatal, in both modes (NOTES.md
    /// 'GPU / IPC / RDMA page alignment'). `None` for a tensor whose buffer
    /// table is not known (an unknown layout, permissive).
    pub fn page_alignment_shortfall(&self) -> Option<PageAlignmentShortfall> {
        let handles = self.descriptor.buffers?;
        handles
            .iter()
            .enumerate()
            .find(|(_, h)| h.device_tag != 0 && h.byte_size.get() > 0 && h.alignment.get() < PAGE_ALIGNMENT)
            .map(|(i, h)| PageAlignmentShortfall {
                buffer: i,
                alignment: h.alignment.get(),
                device_tag: h.device_tag,
                offset: self.descriptor.handle_offset(i, 8),
            })
    }

    /// A sparse layout's stored-value count from `sparsity_ratio` disagrees
    /// with `nnz`: returns `(stored, expected)` ratios. Advisory only
    /// (`metadata.md` § Statistics Section): reported, never fatal.
    pub fn sparsity_ratio_mismatch(&self) -> Option<(f64, f64)> {
        let stats = self.descriptor.statistics?;
        if stats.computed_mask.get() & descriptor::statistics::statistics_mask::SPARSITY_VALID == 0 {
            return None;
        }
        let nnz = self.nnz()?;
        let total = self.element_count().ok()?;
        if total == 0 {
            return None;
        }
        let expected = 1.0 - nnz as f64 / total as f64;
        let stored = stats.sparsity_ratio.get();
        ((stored - expected).abs() > 1e-9).then_some((stored, expected))
    }

    /// Number of logical elements (product of the shape; 0 if any dimension
    /// is 0, even when the others would overflow; `data-model.md` § Shape ›
    /// Total Element Count).
    ///
    /// # Errors
    /// [`Error::DynamicDimension`]; [`Error::Overflow`] when the product
    /// does not fit in a `u64`. A dense tensor that large cannot exist
    /// ([`HurrayFile::tensor`](crate::HurrayFile::tensor)(crate::HurrayFile::tensor) rejects its buffer
    /// size), but a sparse one stores only its non-zeros and may: a valid
    /// CSC matrix of shape `[2^63, 4]` has no `u64` element count.
    pub fn element_count(&self) -> Result<u64> {
        element_count(&self.descriptor)
    }

    /// The shape with every dimension checked not to be dynamic.
    pub(crate) fn static_shape(&self) -> Result<Vec<u64>> {
        self.descriptor.static_shape()
    }

    /// Whether the descriptor has a flag bit set.
    pub(crate) fn has_flag(&self, bit: u32) -> bool {
        self.descriptor.flags() & bit != 0
    }
}

/// [`Tensor::element_count`] of a descriptor.
pub(crate) fn element_count(d: &Descriptor<'_>) -> Result<u64> {
    let shape: Vec<u64> = d.shape().collect();
    if let Some(i) = shape.iter().position(|&n| n == DYNAMIC) {
        return Err(Error::DynamicDimension {
            at: Location {
                scope: Scope::tensor(d.name),
                field: Field::at("shape", to_u64(i)),
                offset: d.shape_offset(i),
                rule: rule::DYNAMIC_DIMENSION,
            },
        });
    }
    count(&shape).ok_or_else(|| Error::Overflow {
        at: Location {
            scope: Scope::tensor(d.name),
            field: Field::new("shape"),
            offset: d.offsets.shape,
            rule: rule::ELEMENT_COUNT,
        },
        what: "element count (product of shape)",
    })
}

/// [`Tensor::statistics_nnz_mismatch`] of a descriptor.
pub(crate) fn statistics_nnz_mismatch(d: &Descriptor<'_>) -> Option<(u64, u64)> {
    let stats = d.statistics?;
    let nnz = d.layout_fields.nnz()?;
    let valid = stats.computed_mask.get() & descriptor::statistics::statistics_mask::NNZ_VALID != 0;
    (valid && stats.nnz.get() != nnz).then_some((stats.nnz.get(), nnz))
}
