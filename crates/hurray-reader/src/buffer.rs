//! Data buffers: where each one lies in the file, what it holds, and typed
//! access to its bytes.

use std::fmt;

use zerocopy::FromBytes;

use crate::cursor::to_u64;
use crate::element_type::{Element, ElementType};
use crate::error::{Error, Result};
use crate::packed::PackedView;
use crate::raw;
use crate::value::{self, Value};

/// What a buffer holds, by the name the layout's spec gives it.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufferRole {
    /// The elements of a dense tensor.
    Data,
    /// Stored values of a sparse tensor.
    Values,
    /// CSC row index of each value.
    RowIndices,
    /// CSC column pointers, `ncols + 1` entries.
    ColPtr,
    /// CSR column index of each value.
    ColIndices,
    /// CSR row pointers, `nrows + 1` entries.
    RowPtr,
    /// COO coordinates, `nnz × rank` entries.
    Indices,
    /// CSF level-`L` pointer array.
    Pos(u8),
    /// CSF level-`L` coordinate array.
    Crd(u8),
    /// Block-paged page pool.
    PagePool,
    /// Block-paged block table.
    BlockTable,
    /// Block-paged sequence pointers.
    SeqPtr,
    /// Quantization scales.
    Scales,
    /// Quantization zero points.
    ZeroPoints,
    /// Scales and zero points sharing one buffer (`[scales | zero_points]`).
    ScalesAndZeroPoints,
    /// A buffer of a layout this reader cannot interpret.
    Unknown,
}

impl BufferRole {
    /// The role's name without a level number (`pos`, `crd` for CSF).
    pub fn as_str(self) -> &'static str {
        match self {
            BufferRole::Data => "data",
            BufferRole::Values => "values",
            BufferRole::RowIndices => "row_indices",
            BufferRole::ColPtr => "col_ptr",
            BufferRole::ColIndices => "col_indices",
            BufferRole::RowPtr => "row_ptr",
            BufferRole::Indices => "indices",
            BufferRole::Pos(_) => "pos",
            BufferRole::Crd(_) => "crd",
            BufferRole::PagePool => "page_pool",
            BufferRole::BlockTable => "block_table",
            BufferRole::SeqPtr => "seq_ptr",
            BufferRole::Scales => "scales",
            BufferRole::ZeroPoints => "zero_points",
            BufferRole::ScalesAndZeroPoints => "scales_and_zero_points",
            BufferRole::Unknown => "unknown",
        }
    }
}

impl fmt::Display for BufferRole {
    /// The spec's name: `values`, `row_indices`, `col_ptr`, `pos_1`, `crd_2`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferRole::Pos(l) => write!(f, "pos_{l}"),
            BufferRole::Crd(l) => write!(f, "crd_{l}"),
            other => f.write_str(other.as_str()),
        }
    }
}

/// One data buffer of a tensor: its handle, where it lies, and its bytes.
///
/// The bytes are exactly `byte_size` long and borrow the file.
#[derive(Clone, Copy)]
pub struct Buffer<'data> {
    pub(crate) tensor: &'data str,
    pub(crate) index: u8,
    pub(crate) role: BufferRole,
    pub(crate) handle: &'data raw::BufferHandle,
    pub(crate) handle_offset: u64,
    pub(crate) file_offset: u64,
    pub(crate) bytes: &'data [u8],
    /// Type of the elements, when the layout defines it.
    pub(crate) element_type: Option<ElementType>,
    /// Number of elements the layout says it holds, from `element_start`.
    pub(crate) len: u64,
    /// Byte at which element 0 starts (see [`Buffer::element_start`]).
    pub(crate) element_start: u64,
}

/// Where the buffer lies, its type and length, and its first few
/// elements decoded; not its bytes.
impl std::fmt::Debug for Buffer<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let first = crate::debug::first(self.len).filter_map(|i| self.value(i));
        f.debug_struct("Buffer")
            .field("tensor", &crate::debug::Text(self.tensor))
            .field("index", &self.index)
            .field("role", &self.role)
            .field("element_type", &self.element_type)
            .field("file_offset", &self.file_offset)
            .field("byte_size", &self.byte_size())
            .field("alignment", &self.alignment())
            .field("element_start", &self.element_start)
            .field("len", &self.len)
            .field("values", &crate::debug::few_of(first, crate::debug::count(self.len)))
            .finish()
    }
}

impl<'data> Buffer<'data> {
    /// Position in the buffer table.
    pub fn index(&self) -> u8 {
        self.index
    }

    /// What the buffer holds.
    pub fn role(&self) -> BufferRole {
        self.role
    }

    /// The raw 16-byte handle.
    pub fn handle(&self) -> &'data raw::BufferHandle {
        self.handle
    }

    /// Absolute file offset of the handle in the descriptor.
    pub fn handle_offset(&self) -> u64 {
        self.handle_offset
    }

    /// Absolute file offset of the buffer's first byte.
    pub fn file_offset(&self) -> u64 {
        self.file_offset
    }

    /// `byte_size`, in bytes: the length of [`bytes`](Self::bytes) (for a
    /// part of a shared buffer, see [`Tensor::scales`](crate::Tensor::scales),
    /// the part's).
    pub fn byte_size(&self) -> u64 {
        to_u64(self.bytes.len())
    }

    /// Declared alignment, in bytes.
    pub fn alignment(&self) -> u64 {
        u64::from(self.handle.alignment.get())
    }

    /// The buffer's bytes, all `byte_size` of them (from byte 0, not from
    /// [`element_start`](Self::element_start)).
    pub fn bytes(&self) -> &'data [u8] {
        self.bytes
    }

    /// Type of the elements (`uint64` for index arrays, the tensor's type
    /// for values, the scale type for scales); `None` if unknown.
    pub fn element_type(&self) -> Option<ElementType> {
        self.element_type
    }

    /// Number of elements the layout says this buffer holds (a minimum for
    /// dense buffers in permissive mode). Counted from the buffer's first
    /// element, at byte [`element_start`](Self::element_start): for a dense
    /// tensor with `byte_offset > 0`, the whole elements before element
    /// `[0, ..., 0]` are counted too; quantized blocks count their padding.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Byte of the buffer at which its element 0 starts, and from which
    /// [`len`](Self::len), [`as_slice`](Self::as_slice),
    /// [`packed`](Self::packed), [`value`](Self::value) and
    /// [`values`](Self::values) count elements (`memory-layout.md`
    /// § Element Address Computation).
    ///
    /// 0 for every buffer but the data buffer of a dense tensor whose
    /// `byte_offset` is not a whole number of elements from byte 0 (a
    /// `complex64` at byte 4, a 6-bit type off a 3-byte group): there it is
    /// `byte_offset mod w` bytes, `w` the element width (3, one group of
    /// four elements, for 6-bit types), less than `w`; element
    /// `[0, ..., 0]` is then element
    /// [`Tensor::element_origin`](crate::Tensor::element_origin) from here.
    /// The bytes before it belong to no element.
    pub fn element_start(&self) -> u64 {
        self.element_start
    }

    /// The bytes from [`element_start`](Self::element_start) on.
    pub(crate) fn element_bytes(&self) -> &'data [u8] {
        usize::try_from(self.element_start)
            .ok()
            .and_then(|s| self.bytes.get(s..))
            .unwrap_or_default()
    }

    /// True when the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements as `&[T]`, borrowed from the file; exactly [`len`](Self::len)
    /// elements, from byte [`element_start`](Self::element_start).
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] when `T` is not the buffer's element type,
    /// [`Error::NotViewable`] for an unknown type or an `element_start`
    /// that is not a multiple of `T`'s alignment (a `byte_offset` that
    /// breaks the type's alignment, `element-types.md` § Type Properties
    /// Summary, accepted in permissive mode only: [`value`](Self::value)
    /// decodes those elements),
    /// [`Error::Misaligned`] when the bytes given to `parse` are not
    /// aligned for `T`.
    pub fn as_slice<T: Element>(&self) -> Result<&'data [T]> {
        match self.element_type {
            Some(t) if t == T::ELEMENT_TYPE => {}
            Some(t) => {
                return Err(Error::TypeMismatch {
                    tensor: self.tensor.into(),
                    requested: T::ELEMENT_TYPE.as_str(),
                    actual: t.as_str(),
                })
            }
            None => return Err(Error::NotViewable {
                tensor: self.tensor.into(),
                why: "the buffer's element type is not known (unknown type or layout tag accepted in permissive mode)",
            }),
        }
        if !self
            .element_start
            .is_multiple_of(crate::cursor::to_u64(align_of::<T>()))
        {
            return Err(Error::NotViewable {
                tensor: self.tensor.into(),
                why: "its elements start at a byte_offset that is not a multiple of the element type's alignment (element-types.md § Type Properties Summary): they cannot be borrowed as a typed slice; decode them (Tensor::dense_value, Buffer::value)",
            });
        }
        let elements = self.element_bytes();
        let len = usize::try_from(self.len).unwrap_or(usize::MAX);
        let need = len.saturating_mul(size_of::<T>());
        let bytes = elements.get(..need).unwrap_or(elements);
        <[T]>::ref_from_bytes(bytes).map_err(|_| Error::Misaligned {
            tensor: self.tensor.into(),
            buffer: self.index,
            role: self.role.as_str(),
            offset: self.file_offset,
            align: crate::cursor::to_u64(align_of::<T>()),
        })
    }

    /// The elements of a packed sub-byte type (`bool`, 2-, 4-, 6-bit types),
    /// [`len`](Self::len) of them from byte [`element_start`](Self::element_start).
    ///
    /// # Errors
    /// [`Error::TypeMismatch`] when the buffer's type is not packed.
    pub fn packed(&self) -> Result<PackedView<'data>> {
        let t = self.element_type.ok_or_else(|| Error::NotViewable {
            tensor: self.tensor.into(),
            why: "the buffer's element type is not known",
        })?;
        PackedView::new(self.element_bytes(), self.len, t).ok_or_else(|| Error::TypeMismatch {
            tensor: self.tensor.into(),
            requested: "a packed sub-byte type",
            actual: t.as_str(),
        })
    }

    /// Element `i` (counted from byte [`element_start`](Self::element_start))
    /// decoded to a [`Value`], whatever the element type;
    /// `None` past the end, for an unknown type, or for an extension type
    /// wider than 128 bits (see [`Value::Bits`]; [`bytes`](Self::bytes)
    /// has them). For printing and comparing, not for hot loops (use
    /// [`as_slice`](Self::as_slice)).
    pub fn value(&self, i: u64) -> Option<Value> {
        if i >= self.len {
            return None;
        }
        value::decode(self.element_type?, self.element_bytes(), i)
    }

    /// All elements decoded, in storage order.
    pub fn values(&self) -> impl Iterator<Item = Value> + 'data {
        let copy = *self;
        (0..self.len).map_while(move |i| copy.value(i))
    }
}
