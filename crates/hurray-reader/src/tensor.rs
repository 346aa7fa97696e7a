//! A tensor resolved from its index entry: the parsed descriptor, every
//! buffer located in the file and checked against what the layout and the
//! element type require. No data byte is scanned here (two `u64`s at most,
//! for block-paged); the O(data) checks are the views' `validate`.

use crate::buffer::{Buffer, BufferRole};
use crate::cursor::{align_up, to_u64};
use crate::descriptor::{self, Descriptor, QuantScheme, DYNAMIC};
use crate::element_type::ElementType;
use crate::error::{rule, Error, Field, Result, Scope};
use crate::file::{EntryField, HurrayFile, IndexEntry, Options};
use crate::layout::plan::{count, storage, Placed, Plan};
use crate::layout::{Layout, LayoutFields};
use crate::raw;

/// Deepest nesting of composite heads accepted (`layouts/composite.md` § Binding).
pub const MAX_COMPOSITE_DEPTH: usize = 8;

/// The alignment a writer targeting GPU or IPC transport must declare
/// (`buffer-protocol.md` § Alignment › Page Alignment for GPU and IPC).
pub const PAGE_ALIGNMENT: u32 = 4096;

/// A buffer on a GPU (any device but the CPU) whose declared alignment is
/// below [`PAGE_ALIGNMENT`]: see [`Tensor::page_alignment_shortfall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageAlignmentShortfall {
    /// Position of the buffer in the buffer table.
    pub buffer: usize,
    /// Its declared `alignment`, in bytes (a power of two, at least 64).
    pub alignment: u32,
    /// Its `device_tag` (`0x01` CUDA ... `0x08` OpenCL).
    pub device_tag: u8,
    /// Absolute file offset of its `alignment` field.
    pub offset: u64,
}

impl std::fmt::Display for PageAlignmentShortfall {
    /// `buffer[1].alignment at offset 150: 64 on device_tag 0x01 (CUDA), below
    /// the 4096 a writer targeting GPU or IPC transport must declare
    /// (buffer-protocol.md § Alignment › Page Alignment for GPU and IPC)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "buffer[{}].alignment at offset {}: {} on device_tag 0x{:02x} ({}), below the {PAGE_ALIGNMENT} \
             a writer targeting GPU or IPC transport must declare ({})",
            self.buffer,
            self.offset,
            self.alignment,
            self.device_tag,
            device_name(self.device_tag),
            rule::PAGE_ALIGNMENT,
        )
    }
}

/// The devices of `device_tag` 0x00 to 0x08 (`buffer-protocol.md` § Device Tags).
pub(crate) const DEVICE_NAMES: [&str; 9] = [
    "CPU",
    "CUDA",
    "ROCm",
    "Metal",
    "Vulkan",
    "WebGPU",
    "Hexagon",
    "Level Zero",
    "OpenCL",
];

/// The device a `device_tag` names.
fn device_name(tag: u8) -> &'static str {
    match DEVICE_NAMES.get(usize::from(tag)) {
        Some(name) => name,
        None if (0xF0..=0xFE).contains(&tag) => "implementation-private",
        None => "reserved",
    }
}

/// A tensor: its index entry, descriptor and located buffers.
///
/// Obtained from [`HurrayFile::tensor`]. Everything here borrows the file's
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
    subtree_len: usize,
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

impl<'data> HurrayFile<'data> {
    /// Reads and checks the descriptor of the tensor called `name` and
    /// locates its buffers.
    ///
    /// Checks every rule that needs only the descriptor and the container
    /// (`metadata.md`, `buffer-protocol.md`, the layout's buffer table and
    /// sizes, quantization, shard, statistics, composite membership), but
    /// does not scan the data: the sparse views' `validate` does that.
    ///
    /// # Errors
    /// [`Error::NotFound`], or the first rule the descriptor breaks.
    pub fn tensor(&self, name: &str) -> Result<Tensor<'data>> {
        let entry = *self.entry(name).ok_or_else(|| Error::NotFound { name: name.into() })?;
        self.resolve(entry, 0)
    }

    /// Like [`tensor`](Self::tensor), by position in the footer index.
    ///
    /// # Errors
    /// [`Error::PositionNotFound`] past the last entry, else as `tensor`.
    pub fn tensor_at(&self, position: usize) -> Result<Tensor<'data>> {
        self.resolve(self.entry_at(position)?, 0)
    }

    /// The descriptor of the tensor at `position` in the footer index,
    /// parsed and checked on its own (metadata.md): its buffers
    /// are not located, nor checked against the layout. For tools that
    /// show what a descriptor says when [`tensor_at`](Self::tensor_at)
    /// rejects the tensor (a buffer of the wrong size, a statistics block
    /// that disagrees).
    ///
    /// # Errors
    /// [`Error::PositionNotFound`] past the last entry, else the first rule the
    /// descriptor itself breaks.
    pub fn descriptor_at(&self, position: usize) -> Result<Descriptor<'data>> {
        self.descriptor_of(self.entry_at(position)?)
    }

    /// The index entry at `position`, or [`Error::PositionNotFound`].
    fn entry_at(&self, position: usize) -> Result<IndexEntry<'data>> {
        self.entries()
            .get(position)
            .copied()
            .ok_or_else(|| Error::PositionNotFound {
                position: to_u64(position),
                count: to_u64(self.len()),
            })
    }

    fn descriptor_of(&self, entry: IndexEntry<'data>) -> Result<Descriptor<'data>> {
        let name = entry.name();
        let bytes = descriptor::descriptor_bytes(self.data(), entry.descriptor_offset(), entry.descriptor_length())
            .ok_or_else(|| Error::OutOfRange {
                scope: Scope::tensor(name),
                field: Field::member("index_entry", to_u64(entry.position()), "descriptor_offset"),
                offset: entry.field_offset(EntryField::DescriptorOffset),
                start: entry.descriptor_offset(),
                end: u128::from(entry.descriptor_offset()) + u128::from(entry.descriptor_length()),
                lower: 0,
                upper: to_u64(self.data().len()),
                rule: rule::TENSOR_REGION,
            })?;
        descriptor::parse(entry, bytes, self.options())
    }

    fn resolve(&self, entry: IndexEntry<'data>, depth: usize) -> Result<Tensor<'data>> {
        self.resolve_parsed(entry, self.descriptor_of(entry)?, depth)
    }

    /// [`resolve`](Self::resolve) with `entry`'s descriptor already parsed
    /// (by [`descriptor_of`](Self::descriptor_of) or, recording its fields,
    /// by `dump_descriptor`).
    pub(crate) fn resolve_parsed(
        &self,
        entry: IndexEntry<'data>,
        descriptor: Descriptor<'data>,
        depth: usize,
    ) -> Result<Tensor<'data>> {
        let options = self.options();
        let name = entry.name();
        let mut tensor = Tensor {
            entry,
            descriptor,
            buffers: Vec::new(),
            options,
            not_viewable: None,
            members: Vec::new(),
            subtree_len: 0,
        };
        let Some(handles) = tensor.descriptor.buffers else {
            tensor.not_viewable = Some("its layout tag is not recognised (accepted in permissive mode); its data must not be interpreted (memory-layout.md § Layout Taxonomy)");
            return Ok(tensor);
        };
        check_handles(&tensor.descriptor, handles)?;
        // The layout's own rules (rank, buffer count and sizes) come before
        // the buffers are placed in the file, so that a wrong byte_size is
        // named as such, not as the buffer after it falling outside the
        // tensor's region; the one rule that reads a placed buffer comes
        // after (check_placed).
        let mut plans = tensor.plan_buffers(handles)?;
        let (placed, spans) = place_buffers(self, &tensor.descriptor, &entry, handles)?;
        tensor.check_placed(handles, &placed, &mut plans)?;
        check_data_length(name, &entry, spans)?;
        tensor.buffers = placed
            .iter()
            .zip(handles)
            .enumerate()
            .map(|(i, (p, handle))| {
                let plan = plans.get(i).copied().unwrap_or(Plan::unknown());
                Buffer {
                    tensor: name,
                    index: u8::try_from(i).unwrap_or(u8::MAX),
                    role: plan.role,
                    handle,
                    handle_offset: tensor.descriptor.handle_offset(i, 0),
                    file_offset: p.offset,
                    bytes: p.bytes,
                    element_type: plan.element_type,
                    len: plan.len,
                    element_start: plan.element_start,
                }
            })
            .collect();
        tensor.check_shard()?;
        tensor.check_statistics()?;
        if tensor.descriptor.element_type.is_none() {
            tensor.not_viewable = Some("its type tag is not recognised (accepted in permissive mode); its data must not be interpreted (element-types.md § Type Identifier Encoding)");
        } else if matches!(
            tensor.descriptor.quantization.map(|q| q.scheme),
            Some(QuantScheme::Unknown)
        ) {
            tensor.not_viewable = Some("its quantization scheme is not recognised (accepted in permissive mode); its data must not be dequantized (quantization.md § Descriptor Header)");
        } else if matches!(tensor.descriptor.layout, Layout::Extension(_)) {
            tensor.not_viewable = Some(
                "it uses an implementation-private layout (metadata.md § Layout-Specific Fields › Extension Layouts)",
            );
        } else if tensor.descriptor.layout == Layout::Composite {
            tensor.not_viewable = Some("it is a composite head, which owns no data: read its members");
            (tensor.members, tensor.subtree_len) = self.composite_members(&tensor, depth)?;
        }
        Ok(tensor)
    }

    /// The direct members of a composite head, checked per member and at
    /// close (`layouts/composite.md` § Validation), and how many index
    /// entries after the head its subtree spans.
    fn composite_members(&self, head: &Tensor<'data>, depth: usize) -> Result<(Vec<usize>, usize)> {
        let LayoutFields::Composite(fields) = head.descriptor.layout_fields else {
            return Ok((Vec::new(), 0));
        };
        let name = head.name();
        let head_offset = head.descriptor.offsets.layout_fields;
        if depth >= MAX_COMPOSITE_DEPTH {
            return Err(Error::Invalid {
                scope: Scope::tensor(name),
                field: Field::new("layout_tag"),
                offset: head.descriptor.offsets.descriptor + 15,
                value: u64::from(head.descriptor.layout.tag()),
                expected:
                    "a layout other than composite (0x0B) here: heads nest at most 8 deep, this one would be the 9th",
                rule: "layouts/composite.md § Binding",
            });
        }
        crate::layout::composite::check_head(head, fields)?;
        let member_count = u64::from(fields.member_count.get());
        let following = self.following(head.entry.position());
        let mut members = Vec::new();
        let mut members_tensors = Vec::new();
        let mut cursor = 0usize;
        for _ in 0..member_count {
            let Some(entry) = following.get(cursor).and_then(|&i| self.entries().get(i)).copied() else {
                return Err(Error::TornComposite {
                    tensor: name.into(),
                    offset: head_offset + 4,
                    member_count,
                    found: to_u64(members.len()),
                });
            };
            let member = self.resolve(entry, depth.saturating_add(1)).map_err(|e| match e {
                // A torn nested composite tears this one too.
                Error::TornComposite { .. } => Error::TornComposite {
                    tensor: name.into(),
                    offset: head_offset + 4,
                    member_count,
                    found: to_u64(members.len()),
                },
                other => other,
            })?;
            cursor = cursor.saturating_add(1).saturating_add(member.subtree_len);
            members.push(entry.position());
            members_tensors.push(member);
        }
        crate::layout::composite::check_members(head, fields, &members_tensors)?;
        Ok((members, cursor))
    }
}

/// Per-handle rules of `buffer-protocol.md` and device colocation.
fn check_handles(d: &Descriptor<'_>, handles: &[raw::BufferHandle]) -> Result<()> {
    let scope = || Scope::tensor(d.name);
    for (i, h) in handles.iter().enumerate() {
        let i64_ = to_u64(i);
        let alignment = h.alignment.get();
        let byte_size = h.byte_size.get();
        if !alignment.is_power_of_two() || (byte_size > 0 && alignment < 64) {
            return Err(Error::Invalid {
                scope: scope(),
                field: Field::member("buffer", i64_, "alignment"),
                offset: d.handle_offset(i, 8),
                value: u64::from(alignment),
                expected: "a power of two, at least 64 for a non-empty buffer",
                rule: rule::HANDLE,
            });
        }
        let device = h.device_tag;
        if !matches!(device, 0x00..=0x08) {
            return Err(Error::UnknownTag {
                scope: scope(),
                field: Field::member("buffer", i64_, "device_tag"),
                offset: d.handle_offset(i, 12),
                value: device,
                why: match device {
                    0xFF => "invalid",
                    0xF0..=0xFE => "implementation-private (not agreed out of band)",
                    _ => "reserved",
                },
                rule: rule::DEVICE_TAGS,
            });
        }
        let sync = h.sync_mode;
        if sync > 2 || (device == 0 && sync != 0) {
            return Err(Error::Invalid {
                scope: scope(),
                field: Field::member("buffer", i64_, "sync_mode"),
                offset: d.handle_offset(i, 13),
                value: u64::from(sync),
                expected: "0x00-0x02, and 0x00 (SYNC_PRODUCER_SYNCED) for a CPU buffer",
                rule: rule::SYNC_MODE,
            });
        }
        let class = h.memory_class;
        // buffer-protocol.md § Memory Class › Per-Device Validity: PEER is not valid on CPU,
        // Metal, Hexagon, OpenCL; WebGPU allows STANDARD only.
        let valid = match class {
            0x00 => true,
            0x01 | 0x02 => device != 0x05,
            0x03 => matches!(device, 0x01 | 0x02 | 0x04 | 0x07),
            _ => false,
        };
        if !valid {
            return Err(Error::Invalid {
                scope: scope(),
                field: Field::member("buffer", i64_, "memory_class"),
                offset: d.handle_offset(i, 14),
                value: u64::from(class),
                expected: "a memory class defined for the buffer's device",
                rule: rule::MEMORY_CLASS,
            });
        }
        if h.reserved != 0 {
            return Err(Error::Reserved {
                scope: scope(),
                field: Field::member("buffer", i64_, "_reserved"),
                offset: d.handle_offset(i, 15),
                value: u64::from(h.reserved),
                byte: None,
                rule: rule::HANDLE,
            });
        }
    }
    if let Some(first) = handles.first() {
        for (i, h) in handles.iter().enumerate().skip(1) {
            // The field that differs: the device first, then the class.
            let (member, at, value, expected) = if h.device_tag != first.device_tag {
                (
                    "device_tag",
                    12,
                    h.device_tag,
                    "buffer 0's device_tag (and memory_class)",
                )
            } else if h.memory_class != first.memory_class {
                (
                    "memory_class",
                    14,
                    h.memory_class,
                    "buffer 0's memory_class (and device_tag)",
                )
            } else {
                continue;
            };
            return Err(Error::Invalid {
                scope: scope(),
                field: Field::member("buffer", to_u64(i), member),
                offset: d.handle_offset(i, at),
                value: u64::from(value),
                expected,
                rule: rule::COLOCATION,
            });
        }
    }
    Ok(())
}

/// Locates each buffer: buffer 0 at `data_offset`, each next one at the
/// first `data_buffer_alignment` boundary after the previous one's end (an
/// empty buffer takes no space). Checks that the buffers lie in the data
/// region and start at their declared alignment; returns them with their
/// [`Spans`] (see [`check_data_length`]).
fn place_buffers<'data>(
    file: &HurrayFile<'data>,
    d: &Descriptor<'data>,
    entry: &IndexEntry<'data>,
    handles: &'data [raw::BufferHandle],
) -> Result<(Vec<Placed<'data>>, Spans)> {
    let scope = || Scope::tensor(d.name);
    let dba = file.data_buffer_alignment();
    let data_start = entry.data_offset();
    let data_end = entry.data_end();
    if !handles.is_empty() && !data_start.is_multiple_of(dba) {
        return Err(Error::DataOffsetMisaligned {
            tensor: d.name.into(),
            position: to_u64(entry.position()),
            offset: entry.field_offset(EntryField::DataOffset),
            data_offset: data_start,
            alignment: dba,
        });
    }
    let mut placed = Vec::with_capacity(handles.len());
    let mut at = data_start;
    let mut last_end = data_start;
    let mut max_nonempty_end = data_start;
    for (i, h) in handles.iter().enumerate() {
        if i > 0 {
            at = align_up(last_end, dba).unwrap_or(u64::MAX);
        }
        let size = h.byte_size.get();
        let end = at.checked_add(size);
        // An empty buffer may sit at a data offset past the file's end
        // (`IndexEntry::region_end`): its bytes are the empty slice at the
        // file's start, which is aligned for any typed view.
        let bytes = end.filter(|&end| end <= data_end).and_then(|end| match size {
            0 => file.data().get(..0),
            _ => descriptor::descriptor_bytes(file.data(), at, end - at),
        });
        let Some(bytes) = bytes else {
            return Err(Error::OutOfRange {
                scope: scope(),
                field: Field::member("buffer", to_u64(i), "byte_size"),
                offset: d.handle_offset(i, 0),
                start: at,
                end: u128::from(at) + u128::from(size),
                lower: data_start,
                upper: data_end,
                rule: rule::DATA_REGION,
            });
        };
        let alignment = u64::from(h.alignment.get());
        if size > 0 && !at.is_multiple_of(alignment) {
            return Err(Error::AlignmentNotDelivered {
                tensor: d.name.into(),
                buffer: u8::try_from(i).unwrap_or(u8::MAX),
                offset: d.handle_offset(i, 8),
                alignment,
                file_offset: at,
            });
        }
        last_end = at.saturating_add(size);
        if size > 0 {
            max_nonempty_end = last_end;
        }
        placed.push(Placed { offset: at, bytes });
    }
    let spans = Spans {
        all: last_end - data_start,
        nonempty: max_nonempty_end - data_start,
    };
    Ok((placed, spans))
}

/// Bytes from `data_offset` to the end of the last buffer, and of the last
/// non-empty one: what `data_length` may say.
#[derive(Debug, Clone, Copy)]
struct Spans {
    all: u64,
    nonempty: u64,
}

/// `data_length` equals the buffers' span. Checked after the layout's
/// buffer sizes, so that a wrong `byte_size` is reported as such rather
/// than as an index that disagrees with it.
fn check_data_length(name: &str, entry: &IndexEntry<'_>, spans: Spans) -> Result<()> {
    if entry.data_length() != spans.all && entry.data_length() != spans.nonempty {
        return Err(Error::DataLengthMismatch {
            tensor: name.into(),
            position: to_u64(entry.position()),
            offset: entry.field_offset(EntryField::DataLength),
            index_value: entry.data_length(),
            expected: spans.all,
        });
    }
    Ok(())
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
        crate::layout::dense::element_origin(t, self.descriptor.byte_offset).map(|o| o.elements)
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
        let scale_type = crate::quant::scale_type(&self.descriptor)?;
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
        let stats = self.descriptor.statistics?;
        let nnz = self.nnz()?;
        let valid = stats.computed_mask.get() & descriptor::statistics_mask::NNZ_VALID != 0;
        (valid && stats.nnz.get() != nnz).then_some((stats.nnz.get(), nnz))
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
        descriptor::statistics_value_violation(stats, self.descriptor.offsets.statistics, self.name())
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
        if stats.computed_mask.get() & descriptor::statistics_mask::SPARSITY_VALID == 0 {
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
    /// ([`HurrayFile::tensor`](crate::HurrayFile::tensor) rejects its buffer
    /// size), but a sparse one stores only its non-zeros and may: a valid
    /// CSC matrix of shape `[2^63, 4]` has no `u64` element count.
    pub fn element_count(&self) -> Result<u64> {
        element_count(&self.descriptor)
    }

    /// Number of buffers the layout itself uses (before quantization buffers).
    fn layout_buffer_count(&self) -> Option<u64> {
        Some(match self.descriptor.layout {
            Layout::Csr | Layout::Csc => 3,
            Layout::Coo => 2,
            Layout::Csf => u64::from(self.rank()).checked_mul(2)?.checked_add(1)?,
            Layout::BlockPaged => 3,
            Layout::Composite => 0,
            l if l.is_dense() => 1,
            _ => return None,
        })
    }

    /// Checks the layout's rules (rank, `byte_offset`, buffer count, every
    /// buffer's size) and returns, per buffer, what it holds.
    fn plan_buffers(&self, handles: &[raw::BufferHandle]) -> Result<Vec<Plan>> {
        let d = &self.descriptor;
        let layout = d.layout;
        if matches!(layout, Layout::Extension(_)) {
            return Ok(vec![Plan::unknown(); handles.len()]);
        }
        self.check_rank()?;
        self.check_byte_offset(handles)?;
        let mut plans = match layout {
            Layout::Csc => crate::layout::csc::csc_plans(&self.descriptor)?,
            Layout::Csr => crate::layout::csr::csr_plans(&self.descriptor)?,
            Layout::Coo => crate::layout::coo::coo_plans(&self.descriptor)?,
            Layout::Csf => crate::layout::csf::csf_plans(&self.descriptor, handles)?,
            Layout::BlockPaged => crate::layout::block_paged::block_paged_plans(&self.descriptor, handles)?,
            Layout::Composite => Vec::new(),
            _ => vec![self.dense_plan()?],
        };
        plans.extend(crate::quant::plans(&self.descriptor, handles)?);
        let expected = to_u64(plans.len());
        if to_u64(handles.len()) != expected {
            let base = self.layout_buffer_count().unwrap_or(0);
            return Err(Error::Invalid {
                scope: Scope::tensor(self.name()),
                field: Field::new("buffer_count"),
                offset: d.offsets.buffer_count,
                value: to_u64(handles.len()),
                expected: if expected == base {
                    match layout {
                        Layout::Csc => "3 (values, row_indices, col_ptr)",
                        Layout::Csr => "3 (values, col_indices, row_ptr)",
                        Layout::Coo => "2 (values, indices)",
                        Layout::Csf => "2 x rank + 1",
                        Layout::BlockPaged => "3 (page_pool, block_table, seq_ptr)",
                        Layout::Composite => "0 for a composite head",
                        _ => "1 for a dense layout",
                    }
                } else {
                    "the layout's buffers plus the quantization scheme's parameter buffers"
                },
                rule: match layout {
                    Layout::Csc => rule::CSC_BUFFERS,
                    Layout::Csr => rule::CSR_BUFFERS,
                    Layout::Coo => rule::COO_BUFFERS,
                    Layout::Csf => rule::CSF_BUFFERS,
                    Layout::Composite => rule::COMPOSITE_HEAD_DESCRIPTOR,
                    _ => rule::BUFFER_TABLE,
                },
            });
        }
        for (i, plan) in plans.iter().enumerate() {
            self.check_size(handles, i, plan)?;
        }
        Ok(plans)
    }

    /// Checks buffer `i`'s `byte_size` against its plan: equal in strict
    /// mode, at least in permissive mode — except the layout's own buffers
    /// of a sparse tensor (CSC, CSR, COO, CSF), whose sizes `layouts/*.md`
    /// § Buffer Size give exactly: equal in both modes (NOTES.md "Buffer
    /// larger than required"). The values of an unknown element type
    /// (permissive mode only) have no known size: any.
    fn check_size(&self, handles: &[raw::BufferHandle], i: usize, plan: &Plan) -> Result<()> {
        let Some(size) = handles.get(i).map(|h| h.byte_size.get()) else {
            return Ok(());
        };
        let sparse = self.descriptor.layout.is_sparse()
            && plan.element_type.is_some()
            && self.layout_buffer_count().is_some_and(|n| to_u64(i) < n);
        let exact = sparse || self.options.is_strict();
        let ok = if exact { size == plan.bytes } else { size >= plan.bytes };
        if ok {
            return Ok(());
        }
        let byte_size = |k: usize| handles.get(k).map_or(0, |h| h.byte_size.get());
        if exact {
            if let Some(e) = crate::layout::plan::nnz_disagreement(&self.descriptor, [byte_size(0), byte_size(1)]) {
                return Err(e);
            }
        }
        Err(Error::BufferSize {
            tensor: self.name().into(),
            buffer: u8::try_from(i).unwrap_or(u8::MAX),
            role: plan.role.as_str(),
            offset: self.descriptor.handle_offset(i, 0),
            byte_size: size,
            expected: plan.bytes,
            exact,
            rule: plan.rule,
        })
    }

    /// The layout rules that read a placed buffer, after placement: the
    /// block table of a block-paged tensor holds `seq_ptr[num_seqs]`
    /// entries (`layouts/block-paged.md` § Buffer Table), so its plan is
    /// completed and its size checked here.
    fn check_placed(&self, handles: &[raw::BufferHandle], placed: &[Placed<'data>], plans: &mut [Plan]) -> Result<()> {
        if let Some((i, plan)) = crate::layout::block_paged::block_table_plan(&self.descriptor, placed)? {
            self.check_size(handles, i, &plan)?;
            if let Some(slot) = plans.get_mut(i) {
                *slot = plan;
            }
        }
        Ok(())
    }

    fn check_rank(&self) -> Result<()> {
        let d = &self.descriptor;
        let rank = d.rank();
        let (ok, expected, rule_text) = match d.layout {
            Layout::Csc => (rank == 2, "2", rule::CSC_DESCRIPTION),
            Layout::Csr => (rank == 2, "2", rule::CSR_DESCRIPTION),
            Layout::Csf => (rank >= 3, "at least 3", rule::CSF_DESCRIPTION),
            Layout::BlockPaged => (rank == 3, "3", "layouts/block-paged.md § Description"),
            Layout::Hilbert => (rank >= 2, "at least 2", rule::HILBERT),
            Layout::RowMajor | Layout::Composite => (true, "", ""),
            _ => (rank >= 1, "at least 1 (scalars are row-major only)", rule::SCALAR),
        };
        if ok {
            return Ok(());
        }
        Err(Error::RankNotAllowed {
            tensor: self.name().into(),
            offset: d.offsets.descriptor + 16,
            rank,
            layout: d.layout.as_str(),
            expected,
            rule: rule_text,
        })
    }

    fn check_byte_offset(&self, handles: &[raw::BufferHandle]) -> Result<()> {
        let d = &self.descriptor;
        let must_be_zero = !d.layout.is_dense();
        let limit = if must_be_zero {
            0
        } else {
            handles.first().map_or(0, |h| h.byte_size.get())
        };
        if d.byte_offset > limit {
            return Err(Error::Invalid {
                scope: Scope::tensor(self.name()),
                field: Field::new("byte_offset"),
                offset: d.offsets.byte_offset,
                value: d.byte_offset,
                expected: if must_be_zero {
                    "0 for sparse, block-paged and composite layouts"
                } else {
                    "at most the byte size of buffer 0"
                },
                rule: rule::BYTE_OFFSET,
            });
        }
        // Every element of a dense tensor lies `byte_offset` plus a multiple
        // of its width into a buffer aligned to at least 64: aligned as its
        // type requires exactly when `byte_offset` is. Permissive mode
        // accepts a misaligned one (its elements decode; no typed slice).
        let alignment = d.element_type.and_then(ElementType::alignment).unwrap_or(1);
        if must_be_zero || !self.options.is_strict() || d.byte_offset.is_multiple_of(alignment) {
            return Ok(());
        }
        Err(Error::Invalid {
            scope: Scope::tensor(self.name()),
            field: Field::new("byte_offset"),
            offset: d.offsets.byte_offset,
            value: d.byte_offset,
            expected: "a multiple of the element type's alignment",
            rule: "element-types.md § Type Properties Summary",
        })
    }

    /// The data buffer of a dense layout: its element count in storage
    /// (padding of tiled, Morton and Hilbert layouts included) and bytes.
    fn dense_plan(&self) -> Result<Plan> {
        let d = &self.descriptor;
        let name = self.name();
        let Some(t) = d.element_type else {
            return Ok(Plan {
                role: BufferRole::Data,
                ..Plan::unknown()
            });
        };
        let overflow = |what| Error::Overflow {
            tensor: name.into(),
            field: Field::new("shape"),
            offset: d.offsets.shape,
            what,
            rule: rule::DENSE_SIZE,
        };
        let shape = self.static_shape()?;
        let padded = crate::quant::padded_shape(&self.descriptor, &shape);
        // The last block along the quantization axis is partial: storage
        // holds it whole.
        let block_padded = padded.as_ref().is_some_and(|p| *p != shape);
        let shape = padded.as_deref().unwrap_or(&shape);
        let origin = crate::layout::dense::element_origin(t, d.byte_offset).ok_or_else(|| Error::Overflow {
            tensor: name.into(),
            field: Field::new("byte_offset"),
            offset: d.offsets.byte_offset,
            what: "byte_offset in elements",
            rule: rule::BYTE_OFFSET,
        })?;
        let (storage_elements, bytes) = match &d.layout_fields {
            LayoutFields::Strided { strides } => {
                crate::layout::strided::strided_bytes(&self.descriptor, t, origin, shape, strides)?
            }
            LayoutFields::Tiled { levels } => {
                let n = crate::layout::tiled::tiled_elements(&self.descriptor, shape, levels, 0)?;
                (n, storage(t, n).ok_or_else(|| overflow("tiled buffer size"))?)
            }
            LayoutFields::Morton { morton_bits } => {
                let n = crate::layout::morton::morton_elements(&self.descriptor, shape, morton_bits)?;
                (n, storage(t, n).ok_or_else(|| overflow("Morton buffer size"))?)
            }
            LayoutFields::Hilbert(h) => {
                let n = crate::layout::hilbert::hilbert_elements(&self.descriptor, shape, h)?;
                (n, storage(t, n).ok_or_else(|| overflow("Hilbert buffer size"))?)
            }
            _ => {
                let n = count(shape).ok_or_else(|| overflow("element count (product of shape)"))?;
                (
                    n,
                    storage(t, n).ok_or_else(|| overflow("buffer size (element count x width)"))?,
                )
            }
        };
        // Elements are counted from byte `origin.phase` of the buffer, the
        // whole ones before `byte_offset` too (strided: already).
        let (bytes, len) = if matches!(d.layout_fields, LayoutFields::Strided { .. }) {
            (bytes, storage_elements)
        } else {
            (
                bytes
                    .checked_add(d.byte_offset)
                    .ok_or_else(|| overflow("byte_offset + buffer size"))?,
                storage_elements.saturating_add(origin.elements),
            )
        };
        Ok(Plan {
            role: BufferRole::Data,
            element_type: Some(t),
            len,
            bytes,
            element_start: origin.phase,
            rule: match d.layout {
                Layout::Strided => rule::STRIDED,
                Layout::Tiled => "layouts/tiled.md § Boundary Padding",
                Layout::Morton => "layouts/morton.md § Buffer Size",
                Layout::Hilbert => "layouts/hilbert.md § Buffer Size",
                _ if block_padded => rule::BLOCK_PADDING,
                _ => rule::DENSE_SIZE,
            },
        })
    }

    /// The shape with every dimension checked not to be dynamic.
    pub(crate) fn static_shape(&self) -> Result<Vec<u64>> {
        self.descriptor.static_shape()
    }

    fn check_shard(&self) -> Result<()> {
        let d = &self.descriptor;
        let Some(shard) = d.shard else {
            return Ok(());
        };
        let scope = || Scope::tensor(self.name());
        if matches!(d.layout, Layout::Csf | Layout::BlockPaged) {
            return Err(Error::Invalid {
                scope: scope(),
                field: Field::new("flags"),
                offset: d.offsets.descriptor + 10,
                value: u64::from(d.flags()),
                expected: "no HAS_SHARD for CSF and block-paged tensors",
                rule: if d.layout == Layout::Csf {
                    rule::CSF_SHARDING
                } else {
                    "layouts/block-paged.md § Sharding"
                },
            });
        }
        let shape: Vec<u64> = d.shape().collect();
        for (k, n) in shape.iter().enumerate() {
            let parent = shard.parent_shape.get(k).map_or(0, |v| v.get());
            let start = shard.shard_offset.get(k).map_or(0, |v| v.get());
            let parent_offset = shard.offset.saturating_add(to_u64(k) * 8);
            let start_offset = parent_offset.saturating_add(to_u64(shape.len()) * 8);
            if parent == DYNAMIC || *n == DYNAMIC {
                return Err(Error::DynamicDimension {
                    tensor: self.name().into(),
                    field: Field::at("parent_shape", to_u64(k)),
                    offset: parent_offset,
                });
            }
            if start.checked_add(*n).is_none_or(|end| end > parent) {
                return Err(Error::Invalid {
                    scope: scope(),
                    field: Field::at("shard_offset", to_u64(k)),
                    offset: start_offset,
                    value: start,
                    expected: "shard_offset[k] + shape[k] <= parent_shape[k]",
                    rule: rule::SHARD,
                });
            }
        }
        Ok(())
    }

    fn check_statistics(&self) -> Result<()> {
        let d = &self.descriptor;
        let Some((statistics_nnz, nnz)) = self.statistics_nnz_mismatch() else {
            return Ok(());
        };
        if !self.options.is_strict() {
            return Ok(());
        }
        Err(Error::StatisticsNnzMismatch {
            tensor: self.name().into(),
            offset: d.offsets.statistics + 8,
            statistics_nnz,
            nnz,
            rule: match d.layout {
                Layout::Csc => rule::CSC_STATS,
                Layout::Csr => rule::CSR_STATS,
                Layout::Coo => rule::COO_STATS,
                _ => rule::CSF_STATS,
            },
        })
    }

    /// Whether the descriptor has a flag bit set.
    pub(crate) fn has_flag(&self, bit: u32) -> bool {
        self.descriptor.flags() & bit != 0
    }
}

pub(crate) fn element_count(d: &Descriptor<'_>) -> Result<u64> {
    let shape: Vec<u64> = d.shape().collect();
    if let Some(i) = shape.iter().position(|&n| n == DYNAMIC) {
        return Err(Error::DynamicDimension {
            tensor: d.name.into(),
            field: Field::at("shape", to_u64(i)),
            offset: d.shape_offset(i),
        });
    }
    count(&shape).ok_or_else(|| Error::Overflow {
        tensor: d.name.into(),
        field: Field::new("shape"),
        offset: d.offsets.shape,
        what: "element count (product of shape)",
        rule: rule::ELEMENT_COUNT,
    })
}
